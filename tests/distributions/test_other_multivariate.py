"""Wishart, multivariate Student t, Normal-Gamma, Normal-Wishart and the particle
distribution: densities against scipy or closed forms, sample moments, bad parameters."""

import numpy as np
import pytest
import scipy.stats as st
from scipy import integrate

from mathlearn.distributions import (
    Empirical,
    Gamma,
    MultivariateNormal,
    MultivariateStudentT,
    NormalGamma,
    NormalWishart,
    StudentT,
    Wishart,
)

W = np.array([[1.0, 0.3], [0.3, 0.5]])


def test_wishart_against_scipy_and_moments():
    w = Wishart(5.0, W)
    ref = st.wishart(df=5.0, scale=W)
    X = np.array([[4.0, 1.0], [1.0, 3.0]])
    assert w.logpdf(X) == pytest.approx(ref.logpdf(X), rel=1e-12)
    assert w.entropy() == pytest.approx(ref.entropy())
    np.testing.assert_allclose(w.mean, ref.mean())
    np.testing.assert_allclose(w.var, ref.var())
    n = 20_000
    S = w.sample(n, rng=4)
    assert S.shape == (n, 2, 2)
    assert np.all(np.abs(S.mean(0) - w.mean) < 5 * np.sqrt(w.var / n))
    np.testing.assert_allclose(w.logpdf(S[:3]), ref.logpdf(np.moveaxis(S[:3], 0, -1)))
    # 1-D Wishart(nu, w) is Gamma(nu/2, rate 1/(2w)).
    assert Wishart(3.0, [[2.0]]).logpdf([[1.3]]) == pytest.approx(Gamma(1.5, 0.25).logpdf(1.3))
    # Outside the support (symmetric, not positive definite) the density is zero.
    assert w.logpdf([[1.0, 2.0], [2.0, 1.0]]) == -np.inf
    batch = np.stack([X, -np.eye(2), X]).reshape(3, 1, 2, 2)
    lp = w.logpdf(batch)
    assert lp.shape == (3, 1)
    assert lp[0, 0] == lp[2, 0] == pytest.approx(ref.logpdf(X)) and lp[1, 0] == -np.inf
    with pytest.raises(ValueError, match="symmetric"):
        w.logpdf([[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ValueError, match="NaN"):
        w.logpdf([[1.0, np.nan], [np.nan, 1.0]])
    with pytest.raises(ValueError, match="trailing shape"):
        w.logpdf(np.eye(3))
    with pytest.raises(ValueError, match="df"):
        Wishart(0.5, W)
    with pytest.raises(ValueError, match="df must be a scalar"):
        Wishart([3.0, 4.0], W)
    with pytest.raises(ValueError, match="positive definite"):
        Wishart(3.0, [[1.0, 2.0], [2.0, 1.0]])


def test_multivariate_student_t():
    loc, shape = np.array([1.0, -1.0]), W
    t = MultivariateStudentT(6.0, loc, shape)
    ref = st.multivariate_t(loc, shape, df=6.0)
    x = np.array([[0.0, 0.0], [2.0, -3.0], [1.0, -1.0]])
    np.testing.assert_allclose(t.logpdf(x), ref.logpdf(x), rtol=1e-12)
    np.testing.assert_allclose(t.cov, 6.0 / 4.0 * shape)
    # 1-D case equals the univariate Student t.
    assert MultivariateStudentT(3.0, [0.5], [[4.0]]).logpdf([1.0]) == pytest.approx(
        StudentT(3.0, 0.5, 2.0).logpdf(1.0)
    )
    n = 40_000
    X = t.sample(n, rng=5)
    assert np.all(np.abs(X.mean(0) - loc) < 5 * np.sqrt(np.diag(t.cov) / n))
    with pytest.raises(ValueError, match="df"):
        MultivariateStudentT(0.0, loc, shape)
    with pytest.raises(ValueError, match="df must be a scalar"):
        MultivariateStudentT([3.0, 4.0], loc, shape)
    with pytest.raises(ValueError, match="NaN"):
        t.logpdf([np.nan, 0.0])
    with pytest.raises(ValueError, match="infinite"):
        MultivariateStudentT(2.0, loc, shape).cov


def test_normal_gamma_density_marginals_and_moments():
    ng = NormalGamma(1.0, 2.0, 3.0, 1.5)
    # Normalised: integrates to one over (mu, tau).
    total, _ = integrate.dblquad(
        lambda mu, tau: ng.pdf(mu, tau), 1e-9, 20.0, lambda _: -15.0, lambda _: 17.0
    )
    assert total == pytest.approx(1.0, abs=1e-6)
    # Marginal of mu by integrating tau out equals the Student t.
    for mu in (-0.5, 1.0, 2.7):
        m, _ = integrate.quad(lambda tau, mu=mu: ng.pdf(mu, tau), 0, np.inf)
        assert m == pytest.approx(ng.marginal_mean().pdf(mu), rel=1e-7)
    n = 20_000
    S = ng.sample(n, rng=6)
    var = ng.var
    assert np.all(np.abs(S.mean(0) - ng.mean) < 5 * np.sqrt(var / n))
    # Entropy against a Monte Carlo estimate of -E log p.
    lp = -ng.logpdf(S)
    assert abs(lp.mean() - ng.entropy()) < 5 * lp.std() / np.sqrt(n)
    with pytest.raises(ValueError, match="kappa"):
        NormalGamma(0.0, -1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="rate"):
        NormalGamma(0.0, 1.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="mean must be a scalar"):
        NormalGamma([0.0, 1.0])


def test_normal_wishart():
    nw = NormalWishart(np.array([0.5, -0.5]), 2.0, 4.0, W)
    mu, Lam = nw.sample(3000, rng=7)
    assert mu.shape == (3000, 2) and Lam.shape == (3000, 2, 2)
    m, L = nw.mean
    n = mu.shape[0]
    mt = nw.marginal_mean()
    assert np.all(np.abs(mu.mean(0) - m) < 5 * np.sqrt(np.diag(mt.cov) / n))
    assert np.all(np.abs(Lam.mean(0) - L) < 5 * np.sqrt(nw.marginal_precision().var / n))
    # Given Lambda, mu ~ N(m, (kappa Lambda)^-1): whitened by R^T with kappa Lambda = R R^T
    # the deviations are standard normal, independent of Lambda. Var of the sample
    # covariance entry (i, j) of N(0, I) is (1 + [i = j]) / n.
    R = np.linalg.cholesky(2.0 * Lam)
    zs = np.einsum("sji,sj->si", R, mu - m)
    assert np.all(np.abs(zs.mean(0)) < 5 / np.sqrt(n))
    assert np.all(np.abs(np.cov(zs.T, bias=True) - np.eye(2)) < 5 * np.sqrt((1 + np.eye(2)) / n))
    # 1-D Normal-Wishart is the Normal-Gamma with a = nu/2, b = 1/(2W).
    nw1 = NormalWishart([0.3], 1.5, 3.0, [[0.8]])
    ng1 = NormalGamma(0.3, 1.5, 1.5, 1 / 1.6)
    assert nw1.logpdf([0.1], [[1.2]]) == pytest.approx(ng1.logpdf(0.1, 1.2), rel=1e-12)
    assert nw1.entropy() == pytest.approx(ng1.entropy(), rel=1e-12)
    assert nw.logpdf([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]]) == -np.inf
    # Batched evaluation equals the chain rule N(mu | m, (kappa Lambda)^-1) W(Lambda),
    # built point by point from MultivariateNormal and scipy's Wishart.
    lp = nw.logpdf(mu[:5], Lam[:5])
    assert lp.shape == (5,)
    ref_w = st.wishart(df=4.0, scale=W)
    for i in range(5):
        ref = MultivariateNormal.from_precision(m, 2.0 * Lam[i]).logpdf(mu[i]) + ref_w.logpdf(
            Lam[i]
        )
        assert lp[i] == pytest.approx(ref, rel=1e-12)
    assert nw.logpdf(mu[:3, None], Lam[:2]).shape == (3, 2)  # broadcast batch shapes
    with pytest.raises(ValueError, match="df"):
        NormalWishart([0.0, 0.0], 1.0, 0.5, W)


def test_empirical():
    x = np.array([0.0, 1.0, 3.0])
    w = np.array([1.0, 2.0, 1.0])
    e = Empirical(x, w)
    assert e.mean == pytest.approx(1.25)
    assert e.var == pytest.approx(np.sum(w / 4 * (x - 1.25) ** 2))
    assert e.ess == pytest.approx(16 / 6)
    np.testing.assert_allclose(e.cdf([-1.0, 0.0, 2.0, 3.0]), [0.0, 0.25, 0.75, 1.0])
    s = e.sample(20_000, rng=8)
    freq = np.array([(s == v).mean() for v in x])
    np.testing.assert_array_less(np.abs(freq - w / 4), 5 * np.sqrt(0.25 / 20_000))
    X = np.random.default_rng(0).normal(size=(50, 2))
    np.testing.assert_allclose(Empirical(X).cov, np.cov(X.T, bias=True))
    with pytest.raises(ValueError, match="weights"):
        Empirical(x, [1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        Empirical([np.nan, 1.0])
    with pytest.raises(ValueError, match="non-empty"):
        Empirical([])
