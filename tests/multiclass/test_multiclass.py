"""One-vs-rest and one-vs-one against scikit-learn's meta-estimators on the same base
estimator, the vote computed by hand, and bad inputs."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.multiclass import OneVsOneClassifier as SkOvO
from sklearn.multiclass import OneVsRestClassifier as SkOvR
from sklearn.naive_bayes import GaussianNB as SkGaussianNB

from mathlearn.linear_model import LogisticRegression
from mathlearn.multiclass import OneVsOneClassifier, OneVsRestClassifier
from mathlearn.naive_bayes import GaussianNB


def _data(n_classes, n=150, seed=0):
    X, y = make_classification(
        n,
        4,
        n_informative=3,
        n_redundant=0,
        n_classes=n_classes,
        n_clusters_per_class=1,
        random_state=seed,
    )
    return X, y


BASE = LogisticRegression(C=0.5, solver="newton", tol=1e-10)


@pytest.mark.parametrize("n_classes", [2, 3, 4])
@pytest.mark.parametrize("meta", ["ovr", "ovo"])
def test_same_as_sklearn_with_the_same_base(meta, n_classes):
    # The same base estimator object (ours) inside both meta-estimators: the strategies
    # must agree to the base estimator's own rounding.
    X, y = _data(n_classes)
    ours_cls, ref_cls = (
        (OneVsRestClassifier, SkOvR) if meta == "ovr" else (OneVsOneClassifier, SkOvO)
    )
    ours = ours_cls(BASE).fit(X, y)
    ref = ref_cls(BASE).fit(X, y)
    assert len(ours.estimators_) == len(ref.estimators_)
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=1e-9)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    if meta == "ovr":
        np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-12)


def test_ovo_with_probability_only_base_matches_sklearn():
    # GaussianNB has no decision_function: the confidences are P(class j | x).
    X, y = _data(4, seed=1)
    ours = OneVsOneClassifier(GaussianNB()).fit(X, y)
    ref = SkOvO(SkGaussianNB()).fit(X, y)
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=1e-9)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


def test_ovo_vote_by_hand():
    X, y = _data(3, seed=2)
    clf = OneVsOneClassifier(BASE).fit(X, y)
    votes = np.zeros((len(X), 3))
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        m = (y == i) | (y == j)
        w = LogisticRegression(C=0.5, solver="newton", tol=1e-10).fit(X[m], y[m] == j)
        win_j = w.predict(X)
        votes[win_j, j] += 1
        votes[~win_j, i] += 1
    # Votes are the integer part of the decision function (the tie-break is in (-1/3, 1/3)).
    np.testing.assert_array_equal(np.round(clf.decision_function(X)), votes)
    clear = np.sort(votes, axis=1)[:, -1] > np.sort(votes, axis=1)[:, -2]
    np.testing.assert_array_equal(clf.predict(X)[clear], votes[clear].argmax(1))


def test_pairs_see_only_their_classes_and_weights():
    X, y = _data(3, seed=3)
    sw = np.random.default_rng(0).uniform(0.5, 2, len(y))
    clf = OneVsOneClassifier(BASE).fit(X, y, sample_weight=sw)
    m = (y == 0) | (y == 2)
    ref = LogisticRegression(C=0.5, solver="newton", tol=1e-10).fit(
        X[m], (y[m] == 2).astype(int), sample_weight=sw[m]
    )
    np.testing.assert_allclose(clf.estimators_[1].coef_, ref.coef_, rtol=1e-9, atol=1e-12)


def test_string_labels_and_default_estimator():
    X, y = _data(3, seed=4)
    labels = np.array(["ant", "bee", "cat"])[y]
    for meta in (OneVsOneClassifier(), OneVsRestClassifier()):
        meta.fit(X, labels)
        assert set(meta.predict(X)) <= set(labels)
        assert (meta.predict(X) == labels).mean() > 0.8


@pytest.mark.parametrize("meta", [OneVsOneClassifier, OneVsRestClassifier])
def test_bad_inputs(meta):
    X, y = _data(3, n=30)
    with pytest.raises(ValueError, match="at least 2 classes"):
        meta().fit(X, np.zeros(30))
    Xn = X.copy()
    Xn[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        meta().fit(Xn, y)
    with pytest.raises(ValueError, match="Unknown label type"):
        meta().fit(X, np.linspace(0, 1, 30))
    with pytest.raises(ValueError):
        meta(estimator="not an estimator").fit(X, y)
