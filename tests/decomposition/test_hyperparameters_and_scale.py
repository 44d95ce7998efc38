"""Bad hyperparameters, badly scaled data and extreme rows in the decomposition family.

Each case comes from a battery of bad and extreme inputs: a hyperparameter outside its
range must raise an error naming it (not an UnboundLocalError or a SystemError from
ARPACK); valid data in awkward units or far from the origin must be fitted as accurately as
their conditioning allows; rows near the float64 overflow threshold must give the
(representable) answer or a clear error, never NaN.
"""

import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.datasets import load_iris
from sklearn.decomposition import PCA as SkPCA

from mathlearn.decomposition import (
    PCA,
    FactorAnalysis,
    FastICA,
    KernelPCA,
    PLSRegression,
    ProbabilisticPCA,
)
from mathlearn.discriminant_analysis import FisherLDA
from mathlearn.exceptions import InvalidParameterError

EPS = np.finfo(float).eps


@pytest.fixture
def iris():
    return load_iris().data


def _fit(est, X):
    if isinstance(est, PLSRegression):
        return est.fit(X, X[:, 0] + X[:, 1])
    return est.fit(X)


@pytest.mark.parametrize(
    "est, name",
    [
        (FactorAnalysis(max_iter=0), "max_iter"),
        (ProbabilisticPCA(method="em", max_iter=0), "max_iter"),
        (PLSRegression(max_iter=0), "max_iter"),
        (FactorAnalysis(max_iter="10"), "max_iter"),
        (FactorAnalysis(max_iter=np.nan), "max_iter"),
        (FactorAnalysis(tol="abc"), "tol"),
        (FactorAnalysis(tol=np.nan), "tol"),
        (ProbabilisticPCA(method="em", tol="1e-3"), "tol"),
        (FastICA(max_iter=np.nan), "max_iter"),
        (FastICA(tol=-1.0), "tol"),
        (KernelPCA(tol="abc", eigen_solver="arpack"), "tol"),
        (KernelPCA(max_iter=0, eigen_solver="arpack"), "max_iter"),
        (PCA(n_components=1.5), "n_components"),
        (PCA(n_components=True), "n_components"),
        (PCA(iterated_power=-1), "iterated_power"),
        (PLSRegression(n_components=0), "n_components"),
    ],
    ids=repr,
)
def test_bad_hyperparameters_name_the_parameter(iris, est, name):
    with pytest.raises(InvalidParameterError, match=rf"The '{name}' parameter of"):
        _fit(est, iris)


@pytest.mark.parametrize("offset", [1e6, 1e8])
@pytest.mark.parametrize("solver", ["full", "covariance", "gram", "randomized", "auto"])
def test_pca_on_offset_data_is_as_accurate_as_on_centred_data(iris, offset, solver):
    # iris + offset, and the exact reference: for these values X + offset lies in the binade
    # of offset, so (X + offset) - offset is exact (Sterbenz) and the reference below is the
    # SVD of the same float64 data, centred where they are of order one.
    X_off = iris + offset
    Y = X_off - offset
    Yc = Y - Y.mean(axis=0)
    s = np.linalg.svd(Yc, compute_uv=False)
    n, d = iris.shape
    ref = s**2 / (n - 1)
    pca = PCA(n_components=4, svd_solver=solver, random_state=0).fit(X_off)
    assert pca.solver_ == solver if solver != "auto" else pca.solver_ == "covariance"
    # The centred copy differs from the exact centred data by one constant row delta (the
    # rounding of the mean, |delta_j| <= ulp(offset)), which adds n delta delta^T to the
    # scatter (the cross terms vanish as the exact centred columns sum to zero): at most
    # d ulp(offset)^2 n / (n - 1) on an eigenvalue. A backward-stable eigensolver or SVD adds
    # a few d eps lambda_max; the reference's own error is of the same size.
    ulp = np.spacing(offset)
    atol = 2 * d * ulp**2 * n / (n - 1) + 20 * d * EPS * ref[0]
    np.testing.assert_allclose(pca.explained_variance_, ref, rtol=0, atol=atol)
    np.testing.assert_allclose(pca.mean_, Y.mean(axis=0) + offset, rtol=0, atol=ulp)


def test_ppca_and_fastica_fit_a_feature_in_large_units(iris):
    # One column in units of 1e8: the data are of full rank, and the singular values of the
    # centred data resolve the small directions to eps * s_max, relative error about
    # eps * s_max / s_min ~ 1e-7 here.
    X = iris.copy()
    X[:, 0] *= 1e8
    n = len(X)
    m = ProbabilisticPCA(n_components=2).fit(X)
    sk = SkPCA(n_components=2, svd_solver="full").fit(X)
    s = np.linalg.svd(X - X.mean(0), compute_uv=False)
    rtol = 10 * EPS * s[0] / s[-1]
    # PPCA's sigma^2 is the mean discarded eigenvalue of the 1/N covariance; scikit-learn's
    # noise_variance_ the same with 1/(N - 1).
    assert m.noise_variance_ == pytest.approx(sk.noise_variance_ * (n - 1) / n, rel=rtol)
    np.testing.assert_allclose(m.explained_variance_, sk.explained_variance_ * (n - 1) / n)
    # FastICA is invariant to rescaling a feature (the whitening absorbs it): the sources
    # found on the rescaled data are those found on the original ones.
    ica = FastICA(random_state=0, max_iter=1000, tol=1e-8).fit(X)
    ref = FastICA(random_state=0, max_iter=1000, tol=1e-8).fit(iris)
    C = np.abs(np.corrcoef(ica.transform(X).T, ref.transform(iris).T)[:4, 4:])
    assert np.all(np.sort(C.max(axis=1)) > 1 - 1e-6)


def test_kernel_pca_degenerate_clusters_of_eigenvalues():
    # The centred Gram matrix of np.eye(45) under the linear kernel is H = I - 11^T / 45:
    # eigenvalue 1 with multiplicity 44 and 0 once. Every solver must return those
    # eigenpairs, not "all points coincide".
    n = 45
    H = np.eye(n) - 1.0 / n
    full = KernelPCA(kernel="linear").fit(np.eye(n))
    assert full.n_components_ == n - 1
    np.testing.assert_allclose(full.eigenvalues_, 1.0, atol=100 * n * EPS)
    Z = full.X_transformed_fit_
    np.testing.assert_allclose(Z @ Z.T, H, atol=100 * n * EPS)
    for k in (1, 5, 11):  # the subset (syevx) route
        kp = KernelPCA(kernel="linear", n_components=k, eigen_solver="dense").fit(np.eye(n))
        np.testing.assert_allclose(kp.eigenvalues_, 1.0, atol=100 * n * EPS)
        V = kp.eigenvectors_
        np.testing.assert_allclose(V.T @ V, np.eye(k), atol=100 * n * EPS)
        np.testing.assert_allclose(H @ V, V, atol=100 * n * EPS)


def test_kernel_pca_rbf_with_a_feature_in_large_units(rng):
    # With one feature in units of 1e8 (no two values equal) every RBF affinity off the
    # diagonal underflows to 0: K = I, whose centred matrix has eigenvalue 1 (N - 1 times).
    # A valid (if uninformative) fit, not "coincident points".
    X = rng.normal(size=(40, 3))
    X[:, 0] *= 1e8
    kp = KernelPCA(kernel="rbf", n_components=5).fit(X)
    np.testing.assert_allclose(kp.eigenvalues_, 1.0, atol=100 * 40 * EPS)
    assert np.all(np.isfinite(kp.transform(X)))


@pytest.fixture
def fa_data(rng):
    Z = rng.normal(size=(300, 2))
    return Z @ rng.normal(size=(2, 5)) + 0.3 * rng.normal(size=(300, 5)) + 2.0


@pytest.mark.parametrize("Est", [FactorAnalysis, ProbabilisticPCA, PCA])
def test_extreme_rows_transform_by_linearity(fa_data, rng, Est):
    est = Est(n_components=2).fit(fa_data)
    V = rng.normal(size=(3, 5))
    base = est.transform(np.zeros((1, 5)))  # the image of the origin, -B mean
    lin = est.transform(V) - base  # B v
    for c in (1e150, 1e300, 1e307):
        Z = est.transform(c * V)
        assert np.all(np.isfinite(Z))
        # B (c v - mean) = c B v - B mean; the mean term is below rounding at this size.
        np.testing.assert_allclose(Z, c * lin, rtol=1e-10)


@pytest.mark.parametrize("Est", [FactorAnalysis, ProbabilisticPCA, PCA])
def test_extreme_rows_score_samples_never_nan(fa_data, rng, Est):
    est = Est(n_components=2).fit(fa_data)
    ref = multivariate_normal(est.mean_, est.get_covariance())
    V = rng.normal(size=(3, 5))
    # At 1e150 the log-density (about -1e300) is representable: it must match the dense
    # density, whose eigen-decomposition form has no cancellation.
    np.testing.assert_allclose(est.score_samples(1e150 * V), ref.logpdf(1e150 * V), rtol=1e-10)
    # At 1e300 it is below -1e600: -inf, the correctly rounded value, never NaN.
    assert np.all(est.score_samples(1e300 * V) == -np.inf)


def test_pca_whitened_projection_beyond_float64_is_an_error(fa_data):
    pca = PCA(n_components=2, whiten=True).fit(fa_data * 1e-3)
    with pytest.raises(ValueError, match="exceeds the float64 range"):
        pca.transform(np.full((1, 5), 1e307))


@pytest.mark.parametrize("c", [2.0**-700, 2.0**-300, 2.0**700])
def test_fastica_and_fisher_lda_at_extreme_scales(iris, c):
    # Both are invariant to the units of X: scaled by a power of two (exact), the sources and
    # the class posteriors are those of the original data, and the fitted maps scale by 1/c.
    ica = FastICA(random_state=0, max_iter=1000, tol=1e-8).fit(c * iris)
    ref = FastICA(random_state=0, max_iter=1000, tol=1e-8).fit(iris)
    np.testing.assert_allclose(ica.transform(c * iris), ref.transform(iris), rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(ica.components_ * c, ref.components_, rtol=1e-8)
    np.testing.assert_allclose(ica.mixing_ / c, ref.mixing_, rtol=1e-8)
    X, y = load_iris(return_X_y=True)
    lda = FisherLDA().fit(c * X, y)
    ref_lda = FisherLDA().fit(X, y)
    np.testing.assert_allclose(lda.predict_proba(c * X), ref_lda.predict_proba(X), atol=1e-10)
    np.testing.assert_allclose(lda.scalings_ * c, ref_lda.scalings_, rtol=1e-10)
