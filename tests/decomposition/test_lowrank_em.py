"""The low-rank-plus-diagonal Gaussian and the EM bookkeeping that FA and PPCA share."""

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from mathlearn.decomposition import FactorAnalysis, ProbabilisticPCA


@pytest.fixture
def data(rng):
    Z = rng.normal(size=(250, 2))
    return Z @ rng.normal(size=(2, 6)) + 0.4 * rng.normal(size=(250, 6)) - 1.0


@pytest.mark.parametrize("psi_scale", [1.0, 1e-4, 1e-8])
def test_fa_density_matches_dense_gaussian(data, rng, psi_scale):
    # Set W and Psi by hand (small Psi: the regime where x^T Psi^-1 x - ... would cancel) and
    # compare with the dense N(mu, W W^T + Psi) of scipy, which factorises C itself. The
    # dense density's own error grows with cond(C) ~ |W|^2 / min(Psi), so the tolerance is
    # relative to the quadratic form with that factor.
    fa = FactorAnalysis(n_components=2).fit(data)
    W = rng.normal(size=(6, 2))
    psi = psi_scale * rng.uniform(0.5, 2.0, 6)
    fa.components_, fa.noise_variance_ = W.T, psi
    C = W @ W.T + np.diag(psi)
    X = fa.mean_ + rng.multivariate_normal(np.zeros(6), C, size=20)
    ref = multivariate_normal(fa.mean_, C).logpdf(X)
    cond = np.linalg.cond(C)
    np.testing.assert_allclose(
        fa.score_samples(X), ref, rtol=0, atol=100 * np.finfo(float).eps * cond * np.abs(ref).max()
    )


def test_ppca_density_matches_dense_gaussian(data):
    m = ProbabilisticPCA(n_components=2).fit(data)
    ref = multivariate_normal(m.mean_, m.get_covariance()).logpdf(data)
    np.testing.assert_allclose(m.score_samples(data), ref, rtol=1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda: FactorAnalysis(n_components=2, tol=1e-8),
        lambda: ProbabilisticPCA(n_components=2, method="em", init="random", random_state=0),
    ],
    ids=["FactorAnalysis", "ProbabilisticPCA-em"],
)
def test_em_history_naming(data, make):
    est = make().fit(data)
    assert est.converged_
    assert est.n_iter_ == len(est.lower_bounds_) >= 2
    # Each bound is the mean log-likelihood at the start of its iteration: never decreasing,
    # and lower_bound_ is the mean log-likelihood at the fitted parameters.
    assert np.all(np.diff(est.lower_bounds_) >= -1e-12 * np.abs(est.lower_bounds_).max())
    assert est.lower_bound_ == pytest.approx(est.score(data), rel=1e-12)
    assert est.lower_bound_ >= est.lower_bounds_[-1] - 1e-12 * abs(est.lower_bound_)
    assert est.lower_bound_ - est.lower_bounds_[-1] < est.tol


def test_em_with_missing_values_records_the_observed_likelihood(data, rng):
    X = data.copy()
    X[rng.random(X.shape) < 0.1] = np.nan
    m = ProbabilisticPCA(n_components=2, method="em", tol=1e-9).fit(X)
    assert m.converged_
    assert m.lower_bound_ == pytest.approx(m.score(X), rel=1e-12)
    assert np.all(np.diff(m.lower_bounds_) >= -1e-12 * np.abs(m.lower_bounds_).max())


def test_closed_form_bookkeeping(data):
    m = ProbabilisticPCA(n_components=2).fit(data)
    assert m.n_iter_ == 0 and m.converged_ and m.lower_bounds_.shape == (0,)
    assert m.lower_bound_ == pytest.approx(m.score(data), rel=1e-12)


@pytest.mark.parametrize("c", [2.0**-27, 2.0**-500, 2.0**100])
def test_fa_is_scale_equivariant(data, c):
    # x -> c x maps (W, Psi, mu) to (c W, c^2 Psi, c mu) and shifts the mean log-likelihood by
    # -D ln c. With c a power of two every step scales exactly, so the fits agree to rounding.
    ref = FactorAnalysis(n_components=2).fit(data)
    fa = FactorAnalysis(n_components=2).fit(c * data)
    assert fa.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(fa.components_, c * ref.components_, rtol=1e-12)
    np.testing.assert_allclose(fa.noise_variance_, c * c * ref.noise_variance_, rtol=1e-12)
    assert fa.lower_bound_ == pytest.approx(ref.lower_bound_ - 6 * np.log(c), rel=1e-12)


def test_fa_variances_beyond_float64_are_an_error(data):
    with pytest.raises(ValueError, match="overflows float64"):
        FactorAnalysis(n_components=2).fit(1e200 * data)
    with pytest.raises(ValueError, match="below the normal float64 range"):
        FactorAnalysis(n_components=2).fit(1e-160 * data)
