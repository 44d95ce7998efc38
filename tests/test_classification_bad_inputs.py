"""The classification issue's bad inputs for each of its classifiers: one class, labels that
are strings, perfectly separable data without a penalty, and sample weights of zero.

Expected behaviour: one class is refused with an error naming the classes; string labels
give the same model as their integer codes; separable data without a penalty either warns
(a ConvergenceWarning) or gives a finite model, and never NaN/inf, and classifies the
training data correctly; all-zero weights are refused and zero weights equal removing
those samples.
"""

import inspect
import warnings

import numpy as np
import pytest

from mathlearn.discriminant_analysis import (
    FisherLDA,
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)
from mathlearn.exceptions import ConvergenceWarning
from mathlearn.linear_model import (
    BayesianLogisticRegression,
    KernelLogisticRegression,
    LeastSquaresClassifier,
    LogisticRegression,
)
from mathlearn.multiclass import OneVsOneClassifier, OneVsRestClassifier
from mathlearn.naive_bayes import BernoulliNB, GaussianNB, MultinomialNB
from mathlearn.structured import LinearChainCRF

# name -> (factory with a tight tolerance where it has one, the unpenalised variant or None
# where the estimator has no penalty to remove, binary only?)
CLASSIFIERS = {
    "LogisticRegression-lbfgs": (
        lambda: LogisticRegression(tol=1e-8, max_iter=1000),
        lambda: LogisticRegression(penalty=None, max_iter=1000),
        False,
    ),
    "LogisticRegression-newton": (
        lambda: LogisticRegression(solver="newton", tol=1e-10),
        lambda: LogisticRegression(solver="newton", penalty=None),
        False,
    ),
    "KernelLogisticRegression": (
        lambda: KernelLogisticRegression(tol=1e-8),
        # Always penalised (an RKHS norm); the weakest penalty stands in for none.
        lambda: KernelLogisticRegression(C=1e8, max_iter=1000),
        False,
    ),
    "BayesianLogisticRegression": (
        lambda: BayesianLogisticRegression(prior_precision=1.0, tol=1e-10),
        lambda: BayesianLogisticRegression(prior_precision=1e-8),
        True,
    ),
    "LeastSquaresClassifier": (LeastSquaresClassifier, LeastSquaresClassifier, False),
    "LinearDiscriminantAnalysis": (
        LinearDiscriminantAnalysis,
        LinearDiscriminantAnalysis,
        False,
    ),
    "QuadraticDiscriminantAnalysis": (
        QuadraticDiscriminantAnalysis,
        QuadraticDiscriminantAnalysis,
        False,
    ),
    "FisherLDA": (FisherLDA, FisherLDA, False),
    "GaussianNB": (GaussianNB, GaussianNB, False),
    "MultinomialNB": (MultinomialNB, lambda: MultinomialNB(alpha=0.0), False),
    "BernoulliNB": (BernoulliNB, lambda: BernoulliNB(alpha=0.0), False),
    "LinearChainCRF": (
        LinearChainCRF,
        lambda: LinearChainCRF(alpha=0.0),
        False,
    ),
    "OneVsRestClassifier": (
        lambda: OneVsRestClassifier(LogisticRegression(tol=1e-8)),
        lambda: OneVsRestClassifier(LogisticRegression(penalty=None)),
        False,
    ),
    "OneVsOneClassifier": (
        lambda: OneVsOneClassifier(LogisticRegression(tol=1e-8)),
        lambda: OneVsOneClassifier(LogisticRegression(penalty=None)),
        False,
    ),
}
COUNTS = {"MultinomialNB", "BernoulliNB"}


def _data(name, n=60, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    binary = CLASSIFIERS[name][2]
    k = 2 if binary else n_classes
    y = np.arange(n) % k
    if name in COUNTS:
        X = rng.poisson(1.0 + y[:, None] * np.array([1.0, 0.0, 2.0, 0.5]), (n, 4)).astype(float)
    else:
        X = rng.standard_normal((n, 4)) + 1.2 * np.eye(4)[y]
    return X, y


def _separable(name, n=40, seed=1):
    rng = np.random.default_rng(seed)
    k = 2 if CLASSIFIERS[name][2] else 3
    y = np.arange(n) % k
    if name in COUNTS:
        # Each class owns its own words: perfectly separable counts.
        X = np.zeros((n, k * 2))
        for c in range(k):
            X[y == c, 2 * c : 2 * c + 2] = rng.integers(1, 4, ((y == c).sum(), 2))
    else:
        centres = 6.0 * np.eye(3)[:k, :2] - 2.0
        X = centres[y] + 0.3 * rng.standard_normal((n, 2))
    return X, y


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_one_class_is_refused(name):
    X, _ = _data(name)
    with pytest.raises(ValueError, match="class"):
        CLASSIFIERS[name][0]().fit(X, np.full(len(X), 3))


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_string_labels_give_the_integer_model(name):
    X, y = _data(name)
    names = np.array(["ant", "bee", "cat"])
    ints = CLASSIFIERS[name][0]().fit(X, y)
    strs = CLASSIFIERS[name][0]().fit(X, names[y])
    np.testing.assert_array_equal(strs.classes_, names[: len(np.unique(y))])
    np.testing.assert_array_equal(strs.predict(X), names[ints.predict(X)])
    if hasattr(ints, "predict_proba"):
        # The same computation on the same indices: identical up to rounding.
        np.testing.assert_allclose(strs.predict_proba(X), ints.predict_proba(X), atol=1e-12)


@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_separable_data_without_penalty(name):
    X, y = _separable(name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("error")
        warnings.simplefilter("always", ConvergenceWarning)
        est = CLASSIFIERS[name][1]().fit(X, y)
        pred = est.predict(X)
        proba = est.predict_proba(X) if hasattr(est, "predict_proba") else None
    # Either a warning naming the problem or a model that is simply right: never silent NaN.
    for w in caught:
        assert issubclass(w.category, ConvergenceWarning)
    np.testing.assert_array_equal(pred, y)
    for key, value in vars(est).items():
        if key.endswith("_") and isinstance(value, np.ndarray) and value.dtype.kind == "f":
            assert np.all(np.isfinite(value) | np.isneginf(value)), key
    if proba is not None:
        assert np.all(np.isfinite(proba)) and np.all((proba >= 0) & (proba <= 1))
        np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-12)


WEIGHTED = sorted(
    name
    for name in CLASSIFIERS
    if "sample_weight" in inspect.signature(CLASSIFIERS[name][0]().fit).parameters
)


@pytest.mark.parametrize("name", WEIGHTED)
def test_zero_sample_weights(name):
    X, y = _data(name)
    with pytest.raises(ValueError, match="zero"):
        CLASSIFIERS[name][0]().fit(X, y, sample_weight=np.zeros(len(y)))
    sw = np.ones(len(y))
    sw[:9] = 0.0
    full = CLASSIFIERS[name][0]().fit(X, y, sample_weight=sw)
    sub = CLASSIFIERS[name][0]().fit(X[9:], y[9:])
    if hasattr(full, "predict_proba"):
        np.testing.assert_allclose(full.predict_proba(X), sub.predict_proba(X), atol=1e-8)
    else:
        np.testing.assert_allclose(full.decision_function(X), sub.decision_function(X), atol=1e-8)
