"""LDA and QDA against scikit-learn's on the same data, and against the Gaussian formulas."""

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import make_blobs, make_classification
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as SkQDA

from mathlearn.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)
from mathlearn.exceptions import InvalidParameterError

# Well-conditioned data (cond(Σ) < 1e2): posteriors agree to a few hundred ulps.
ATOL = 1e-12


def _data(n_classes, seed=0):
    return make_classification(
        200, 5, n_informative=3, n_redundant=0, n_classes=n_classes, random_state=seed
    )


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("shrinkage", [None, 0.3])
def test_lda_matches_sklearn(n_classes, shrinkage):
    X, y = _data(n_classes)
    ours = LinearDiscriminantAnalysis(shrinkage=shrinkage).fit(X, y)
    ref = SkLDA(solver="lsqr", shrinkage=shrinkage).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=ATOL)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-10, atol=ATOL)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-10, atol=ATOL)
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=1e-10)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("reg_param", [0.0, 0.2])
def test_qda_matches_sklearn(n_classes, reg_param):
    X, y = _data(n_classes, seed=1)
    ours = QuadraticDiscriminantAnalysis(reg_param=reg_param).fit(X, y)
    ref = SkQDA(reg_param=reg_param, store_covariance=True).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=ATOL)
    np.testing.assert_allclose(ours.covariance_, np.array(ref.covariance_), atol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


def test_posteriors_are_bayes_rule_with_gaussian_densities():
    X, y = _data(3, seed=2)
    priors = np.array([0.2, 0.5, 0.3])
    for est in (
        LinearDiscriminantAnalysis(priors=priors),
        QuadraticDiscriminantAnalysis(priors=priors),
    ):
        est.fit(X, y)
        covs = (
            [est.covariance_] * 3
            if isinstance(est, LinearDiscriminantAnalysis)
            else list(est.covariance_)
        )
        joint = np.column_stack(
            [
                priors[k] * stats.multivariate_normal(est.means_[k], covs[k]).pdf(X)
                for k in range(3)
            ]
        )
        np.testing.assert_allclose(
            est.predict_proba(X), joint / joint.sum(axis=1, keepdims=True), atol=1e-12
        )
        # Class means and the ML covariances.
        np.testing.assert_allclose(est.means_[1], X[y == 1].mean(axis=0), rtol=1e-12)
    Xk = X[y == 0] - X[y == 0].mean(axis=0)
    np.testing.assert_allclose(
        QuadraticDiscriminantAnalysis().fit(X, y).covariance_[0], Xk.T @ Xk / len(Xk), atol=1e-12
    )


def test_string_labels_and_bad_inputs():
    X, y = _data(2, seed=3)
    names = np.array(["neg", "pos"])[y]
    for cls in (LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis):
        est = cls().fit(X, names)
        np.testing.assert_array_equal(
            est.predict(X), np.array(["neg", "pos"])[cls().fit(X, y).predict(X)]
        )
        with pytest.raises(ValueError, match="at least 2 classes"):
            cls().fit(X, np.zeros(len(X)))
        Xn = X.copy()
        Xn[3, 2] = np.nan
        with pytest.raises(ValueError, match="NaN"):
            cls().fit(Xn, y)
        with pytest.raises(ValueError, match="sum to 1"):
            cls(priors=[0.5, 0.6]).fit(X, y)
        with pytest.raises(ValueError, match="one entry per class"):
            cls(priors=[1.0]).fit(X, y)
    with pytest.raises(InvalidParameterError, match="shrinkage"):
        LinearDiscriminantAnalysis(shrinkage=2.0).fit(X, y)
    # Three samples of class 1 in five dimensions: its covariance is singular.
    Xs = np.vstack([X[y == 0], X[y == 1][:3]])
    ys = np.r_[np.zeros((y == 0).sum()), np.ones(3)]
    with pytest.raises(ValueError, match=r"class 1\.0.*reg_param"):
        QuadraticDiscriminantAnalysis().fit(Xs, ys)
    QuadraticDiscriminantAnalysis(reg_param=0.1).fit(Xs, ys)  # regularised: fine
    with pytest.raises(ValueError, match="at least 2 samples"):
        QuadraticDiscriminantAnalysis().fit(np.vstack([X, X[:1]]), np.r_[y, 7])


def test_lda_transform_is_fishers_projection_and_matches_sklearn():
    from sklearn.datasets import load_iris

    from mathlearn.discriminant_analysis import FisherLDA

    X, y = load_iris(return_X_y=True)
    ours = LinearDiscriminantAnalysis().fit(X, y)
    ref = SkLDA(solver="svd").fit(X, y)
    Z, Zr = ours.transform(X), ref.transform(X)
    signs = np.sign(np.sum(Z * Zr, axis=0))
    np.testing.assert_allclose(Z * signs, Zr, atol=1e-10)
    np.testing.assert_allclose(
        ours.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=1e-10
    )
    # One implementation: FisherLDA's projection is the same, and its classifier is this
    # estimator fitted to the projections (with C - 1 directions, the same posteriors).
    fisher = FisherLDA().fit(X, y)
    np.testing.assert_array_equal(fisher.transform(X), Z)
    assert isinstance(fisher.classifier_, LinearDiscriminantAnalysis)
    np.testing.assert_allclose(fisher.predict_proba(X), ours.predict_proba(X), atol=1e-10)
    one = LinearDiscriminantAnalysis(n_components=1).fit(X, y)
    np.testing.assert_allclose(one.transform(X), Z[:, :1], rtol=1e-12, atol=1e-12)
    assert one.get_feature_names_out().tolist() == ["lineardiscriminantanalysis0"]
    with pytest.raises(ValueError, match="n_components"):
        LinearDiscriminantAnalysis(n_components=3).fit(X, y)


@pytest.mark.parametrize("e", [997, -997])
def test_lda_transform_in_extreme_units(e):
    X, y = make_blobs(n_samples=60, n_features=3, centers=3, random_state=0)
    c = 2.0**e
    ref = LinearDiscriminantAnalysis().fit(X, y)
    got = LinearDiscriminantAnalysis().fit(X * c, y)
    # The projection is invariant under the (exact) power-of-two rescaling of the data.
    np.testing.assert_allclose(got.transform(X * c), ref.transform(X), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("n", "d"), [(7, 3), (20000, 4), (300, 60)])
def test_class_moments_by_sorted_blocks_equal_the_masked_formulas(n, d):
    # QDA's moments visit each class in gathered blocks of rows (one block, or several at
    # 20 000 rows, where a class is gathered twice: sums, then residuals)
    from mathlearn.discriminant_analysis._gaussian import _class_moments

    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d)) + 100.0  # far from the origin: residuals, not raw moments
    y = rng.integers(0, 3, n)
    y[:3] = np.arange(3)
    counts, means, S = _class_moments(X, y, 3)
    ref_means = np.array([X[y == k].mean(0) for k in range(3)])
    ref = np.array([(X[y == k] - ref_means[k]).T @ (X[y == k] - ref_means[k]) for k in range(3)])
    np.testing.assert_array_equal(counts, np.bincount(y))
    # means of n terms ~100 (relative rounding n eps); scatters: sums of n products of
    # residuals of order 1 (absolute rounding n eps)
    np.testing.assert_allclose(means, ref_means, rtol=1e-12)
    np.testing.assert_allclose(S, ref, atol=1e-12 * n)
