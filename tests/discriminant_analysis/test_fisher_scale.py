"""FisherLDA on bad hyperparameters, badly scaled data, degenerate classes and extreme rows."""

import numpy as np
import pytest
from sklearn.datasets import load_iris

from mathlearn.discriminant_analysis import FisherLDA
from mathlearn.exceptions import InvalidParameterError


@pytest.fixture
def iris():
    return load_iris(return_X_y=True)


@pytest.mark.parametrize(
    "params, name",
    [({"tol": -1.0}, "tol"), ({"tol": 1.0}, "tol"), ({"tol": "abc"}, "tol"),
     ({"tol": np.nan}, "tol"), ({"n_components": 0}, "n_components"),
     ({"scatter": "weighted"}, "scatter")],
)  # fmt: skip
def test_bad_hyperparameters(iris, params, name):
    with pytest.raises(InvalidParameterError, match=rf"The '{name}' parameter of FisherLDA"):
        FisherLDA(**params).fit(*iris)


@pytest.mark.parametrize("solver", ["auto", "eigen", "simultaneous"])
def test_tol_zero_is_valid(iris, solver):
    # tol=0 (no eigenvalue of S_w treated as zero) used to divide by zero; on well-posed data
    # it gives the default fit.
    ref = FisherLDA(solver=solver).fit(*iris)
    lda = FisherLDA(solver=solver, tol=0.0).fit(*iris)
    np.testing.assert_allclose(lda.scalings_, ref.scalings_, rtol=1e-12)


@pytest.mark.parametrize("solver", ["auto", "eigen", "simultaneous", "pca"])
def test_a_feature_in_large_units(iris, solver):
    # Rescaling a feature by D leaves the Fisher criterion, its ratios and the classifier's
    # posteriors unchanged and maps the directions to D^{-1} W. The fit works in units of
    # the within-class standard deviation, where the two problems differ only by the
    # rounding of the scaled data (relative eps), amplified by cond(S_w) ~ 1e2 on iris.
    X, y = iris
    Xs = X.copy()
    Xs[:, 0] *= 1e8
    ref = FisherLDA(solver=solver).fit(X, y)
    lda = FisherLDA(solver=solver).fit(Xs, y)
    assert lda.solver_ == ref.solver_
    np.testing.assert_allclose(lda.eigenvalues_, ref.eigenvalues_, rtol=1e-10)
    W = lda.scalings_.copy()
    W[0] *= 1e8
    np.testing.assert_allclose(W, ref.scalings_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lda.predict_proba(Xs), ref.predict_proba(X), atol=1e-10)
    np.testing.assert_array_equal(lda.predict(Xs), ref.predict(X))


def test_identical_rows_and_degenerate_classes():
    with pytest.raises(ValueError, match="within-class scatter is zero"):
        FisherLDA().fit(np.ones((10, 3)), np.arange(10) % 2)
    # Every class a single repeated point.
    X = np.repeat([[0.0, 0.0], [1.0, 2.0], [3.0, 1.0]], 4, axis=0)
    with pytest.raises(ValueError, match="within-class scatter is zero"):
        FisherLDA().fit(X, np.repeat([0, 1, 2], 4))
    # Within-class spread along one axis only: S_w has rank 1 < n_components = 2.
    rng = np.random.default_rng(0)
    X = np.repeat([[0.0, 0.0], [1.0, 2.0], [3.0, 1.0]], 5, axis=0)
    X[:, 0] += rng.normal(size=15)
    with pytest.raises(ValueError, match="rank 1 < n_components=2"):
        FisherLDA(solver="simultaneous").fit(X, np.repeat([0, 1, 2], 5))


def test_extreme_rows(iris):
    X, y = iris
    lda = FisherLDA().fit(X, y)
    rng = np.random.default_rng(1)
    V = rng.normal(size=(5, 4))
    for c in (1e150, 1e300, 1e307):
        # The projection is linear: (c v - xbar) W = c (v W) - xbar W.
        Z = lda.transform(c * V)
        np.testing.assert_allclose(Z, c * (V @ lda.scalings_), rtol=1e-10)
        P = lda.predict_proba(c * V)
        assert np.all(np.isfinite(P))
        np.testing.assert_allclose(P.sum(axis=1), 1.0)
        # So far out the linear class scores c v^T coef_c decide alone, and the posterior
        # is (to rounding) one-hot at their argmax.
        scores = V @ lda.coef_.T
        np.testing.assert_array_equal(lda.predict(c * V), lda.classes_[scores.argmax(1)])
        np.testing.assert_allclose(P.max(axis=1), 1.0)
