import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.decomposition import FactorAnalysis as SkFactorAnalysis

from mathlearn.decomposition import FactorAnalysis
from mathlearn.exceptions import ConvergenceWarning


@pytest.fixture
def fa_data(rng):
    Z = rng.normal(size=(400, 2))
    W = rng.normal(size=(2, 6))
    psi = rng.uniform(0.1, 1.0, 6)
    return Z @ W + rng.normal(size=(400, 6)) * np.sqrt(psi) + 3.0


def test_matches_sklearn_likelihood(fa_data):
    # Both run to a tight tolerance, so they meet at the same maximum of the likelihood
    # (ours: EM; scikit-learn: its SVD-based iteration); what is left is the stopping error.
    ours = FactorAnalysis(n_components=2, tol=1e-13, max_iter=5000).fit(fa_data)
    ref = SkFactorAnalysis(n_components=2, tol=1e-11, max_iter=5000, svd_method="lapack")
    ref.fit(fa_data)
    assert ours.score(fa_data) == pytest.approx(ref.score(fa_data), abs=1e-10)
    np.testing.assert_allclose(ours.get_covariance(), ref.get_covariance(), atol=2e-6)
    np.testing.assert_allclose(ours.noise_variance_, ref.noise_variance_, atol=5e-6)
    # W E[z | x] does not depend on the rotation of W.
    np.testing.assert_allclose(
        ours.transform(fa_data) @ ours.components_,
        ref.transform(fa_data) @ ref.components_,
        atol=2e-5,
    )


def test_loglike_monotone_and_scipy(fa_data):
    fa = FactorAnalysis(n_components=2).fit(fa_data)
    assert np.all(np.diff(fa.loglike_) >= -1e-9)
    ref = multivariate_normal(fa.mean_, fa.get_covariance()).logpdf(fa_data)
    np.testing.assert_allclose(fa.score_samples(fa_data), ref, rtol=1e-10)
    assert fa.loglike_[-1] == pytest.approx(ref.sum(), rel=1e-10)


def test_constant_feature(fa_data):
    X = np.c_[fa_data, np.full(len(fa_data), 2.0)]
    fa = FactorAnalysis(n_components=2).fit(X)
    assert np.all(np.isfinite(fa.score_samples(X)))
    assert fa.noise_variance_[-1] == pytest.approx(1e-12)


def test_convergence_warning(fa_data):
    with pytest.warns(ConvergenceWarning):
        FactorAnalysis(n_components=2, max_iter=2).fit(fa_data)


def test_bad_input(fa_data):
    with pytest.raises(ValueError, match="n_components"):
        FactorAnalysis(n_components=7).fit(fa_data)
    with pytest.raises(ValueError, match="at least 2 samples"):
        FactorAnalysis().fit(fa_data[:1])
    with pytest.raises(ValueError, match="NaN"):
        FactorAnalysis().fit(np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="noise_variance_init"):
        FactorAnalysis(n_components=1, noise_variance_init=[1.0, -1.0]).fit(fa_data[:, :2])


def test_wide_route_equals_scatter_route(rng):
    # Stacking X twice leaves the mean and S unchanged, hence the mean log-likelihood of
    # every (W, Psi): the wide fit (N = 30 < D = 40, through the N x N Gram matrix) and the
    # fit of the stacked data (N = 60 >= D, through S) run the same iteration and must
    # agree to rounding, amplified by the EM steps (a few hundred iterations at most).
    X = rng.normal(size=(30, 3)) @ rng.normal(size=(3, 40)) + 0.5 * rng.normal(size=(30, 40))
    wide = FactorAnalysis(n_components=3, tol=1e-10).fit(X)
    tall = FactorAnalysis(n_components=3, tol=1e-10).fit(np.vstack([X, X]))
    assert wide.n_iter_ == tall.n_iter_
    np.testing.assert_allclose(wide.lower_bounds_, tall.lower_bounds_, rtol=1e-10)
    np.testing.assert_allclose(wide.noise_variance_, tall.noise_variance_, rtol=1e-8)
    np.testing.assert_allclose(wide.get_covariance(), tall.get_covariance(), atol=1e-8)
    # The recorded bound is the exact mean log-likelihood at the fitted parameters.
    ref = multivariate_normal(wide.mean_, wide.get_covariance()).logpdf(X)
    assert wide.lower_bound_ == pytest.approx(ref.mean(), rel=1e-10)


def test_wide_matches_sklearn(rng):
    # More components than samples allow: k = 12 > N = 10 gives zero rows beyond N.
    X = rng.normal(size=(10, 2)) @ rng.normal(size=(2, 25)) + 0.3 * rng.normal(size=(10, 25))
    ours = FactorAnalysis(n_components=12, tol=1e-12, max_iter=5000).fit(X)
    assert np.all(ours.components_[10:] == 0.0)
    ref = SkFactorAnalysis(n_components=2, tol=1e-11, max_iter=5000, svd_method="lapack").fit(X)
    fa2 = FactorAnalysis(n_components=2, tol=1e-13, max_iter=5000).fit(X)
    # Both stop within ~1e-11 of the same maximum; near a non-degenerate maximum the
    # likelihood is quadratic, so the parameters differ by about the square root of that.
    assert fa2.score(X) == pytest.approx(ref.score(X), abs=1e-8)
    np.testing.assert_allclose(fa2.get_covariance(), ref.get_covariance(), atol=1e-5)


@pytest.mark.parametrize("max_iter", [1, 2, 3, 5, 8])
def test_stopped_early_bound_never_below_the_recorded_ones(fa_data, max_iter):
    # The Psi step is over-relaxed with a check at the next E-step (a proposal that lowers
    # the likelihood falls back to the EM update): the fit's final likelihood is checked the
    # same way, so wherever the run stops it is at least every recorded bound, and it is
    # the exact log-likelihood of the returned parameters.
    with pytest.warns(ConvergenceWarning):
        fa = FactorAnalysis(n_components=2, max_iter=max_iter, tol=0.0).fit(fa_data)
    assert np.all(np.diff(fa.lower_bounds_) >= -1e-12 * np.abs(fa.lower_bounds_[1:]))
    assert fa.lower_bound_ >= fa.lower_bounds_.max() - 1e-12 * abs(fa.lower_bound_)
    ref = multivariate_normal(fa.mean_, fa.get_covariance()).logpdf(fa_data)
    assert fa.lower_bound_ == pytest.approx(ref.mean(), rel=1e-10)
