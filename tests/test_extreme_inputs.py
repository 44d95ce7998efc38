"""Extreme-scale and bad-input battery over every public estimator.

Rule: for any input, an estimator gives either the right answer or a clear error naming the
problem; never NaN, inf or a wrong answer in silence. Concretely, for every estimator found
by ``all_estimators`` and every case below, ``fit`` and each prediction method either

* succeed with finite outputs, without a ``RuntimeWarning`` (overflow, invalid value,
  division by zero are the symptoms of arithmetic that did not survive the input's range), or
* raise ``ValueError`` (``InvalidParameterError`` included) or ``LinAlgError`` with a message,
  never an ``IndexError``, ``ZeroDivisionError``, ``UnboundLocalError`` or ``TypeError`` from
  deep inside.

Where the mathematics makes the answer invariant (least squares and its predictions under a
rescaling of the features; clusterings under a rescaling or a shift of the data; explained
variance ratios), the battery also checks that the answer did not change.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score
from sklearn.utils import get_tags

from mathlearn.exceptions import ConvergenceWarning, NumericalWarning
from mathlearn.utils import all_estimators

ESTIMATORS = {name: cls for name, cls in all_estimators()}
_OUTPUT_METHODS = ("predict", "transform", "predict_proba", "decision_function", "score_samples")
_FITTED_OUTPUTS = ("labels_", "embedding_", "coef_", "components_", "cluster_centers_")


def _make(name):
    cls = ESTIMATORS[name]
    return cls(**getattr(cls, "_common_test_params", {}))


def _data(est):
    X, labels = make_blobs(n_samples=60, n_features=3, centers=3, random_state=0)
    tags = get_tags(est)
    if tags.input_tags.positive_only:
        X = np.abs(X)
    if tags.estimator_type == "regressor":
        rng = np.random.default_rng(0)
        y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.standard_normal(60)
    else:
        y = labels
    return X, y


def _run(est, X, y, X_query):
    """Fit and collect every output; turn warnings except the informative ones into errors."""
    outputs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", NumericalWarning)
        est.fit(X, y)
        for attr in _FITTED_OUTPUTS:
            if hasattr(est, attr):
                outputs[attr] = np.asarray(getattr(est, attr))
        for method in _OUTPUT_METHODS:
            if hasattr(est, method):
                outputs[method] = np.asarray(getattr(est, method)(X_query))
    return outputs


def _finite_or_clear_error(est, X, y, X_query=None):
    X_query = X if X_query is None else X_query
    try:
        outputs = _run(est, X, y, X_query)
    except (ValueError, np.linalg.LinAlgError) as exc:
        assert str(exc).strip(), f"{type(est).__name__} raised {type(exc).__name__} silently"
        return None
    for key, value in outputs.items():
        if np.issubdtype(value.dtype, np.number):
            assert np.all(np.isfinite(value)), f"{type(est).__name__}.{key} is not finite"
    return outputs


CASES = {
    "scaled_1e300": lambda X: X * 1e300,
    "scaled_1e-300": lambda X: X * 1e-300,
    "offset_1e8": lambda X: X + 1e8,
    "one_column_1e8": lambda X: X * np.array([1e8, 1.0, 1.0]),
}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_extreme_training_data(name, case):
    est = _make(name)
    X, y = _data(est)
    _finite_or_clear_error(est, CASES[case](X), y)


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_extreme_query_rows(name):
    """Fitted on ordinary data, queried far outside it: finite or a clear error."""
    est = _make(name)
    X, y = _data(est)
    X_query = np.vstack([X[:3] * 1e150, X[:3] * 1e300, X[:3] + 1e8])
    if get_tags(est).input_tags.positive_only:
        X_query = np.abs(X_query)
    _finite_or_clear_error(est, X, y, X_query)


# Estimators whose result is invariant under X -> s X (scale) or X -> X + c (shift).
_SCALE_INVARIANT_CLUSTERINGS = ["AgglomerativeClustering", "GaussianMixture", "KMeans", "KMedoids"]


@pytest.mark.parametrize("case", ["scaled_1e300", "scaled_1e-300", "offset_1e8"])
@pytest.mark.parametrize("name", _SCALE_INVARIANT_CLUSTERINGS)
def test_clusterings_invariant_to_scale_and_shift(name, case):
    est = _make(name)
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    X, _ = _data(est)
    reference = clone(est).fit(X)
    moved = _finite_or_clear_error(clone(est), CASES[case](X), None)
    assert moved is not None, f"{name} refused data that it fits at unit scale"
    labels = moved.get("labels_", moved.get("predict"))
    ref_labels = getattr(reference, "labels_", None)
    if ref_labels is None:
        ref_labels = reference.predict(X)
    assert adjusted_rand_score(ref_labels, labels) == 1.0


@pytest.mark.parametrize("scale", [1e300, 1e-300, 1e150, 1e-150])
@pytest.mark.parametrize("name", ["LinearRegression", "Ridge"])
def test_least_squares_predictions_invariant_to_feature_scale(name, scale):
    """``min ||y - X w||`` has ``w(sX) = w(X)/s`` and the same predictions (Ridge: alpha=0)."""
    est = _make(name)
    if name == "Ridge":
        est.set_params(alpha=0.0)
    X, y = _data(est)
    expected = clone(est).fit(X, y).predict(X)
    outputs = _finite_or_clear_error(clone(est), X * scale, y)
    assert outputs is not None, f"{name} refused a rescaled design"
    # The design is well conditioned (cond ~ 10), so the predictions agree to a few ulps of
    # |y| times the condition number; 1e-12 leaves a margin of 100 over that.
    np.testing.assert_allclose(outputs["predict"], expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", ["scaled_1e300", "scaled_1e-300", "offset_1e8"])
def test_pca_explained_variance_ratio_invariant(case):
    est = _make("PCA")
    X, _ = _data(est)
    expected = clone(est).fit(X).explained_variance_ratio_
    got = clone(est).fit(CASES[case](X)).explained_variance_ratio_
    # The shift by 1e8 costs log10(1e8 / spread) ~ 7 digits in the data itself (each entry
    # is rounded to 1e8 * eps ~ 1.5e-8 absolute), which bounds what any method can recover.
    rtol = 1e-6 if case == "offset_1e8" else 1e-12
    np.testing.assert_allclose(got, expected, rtol=rtol)
