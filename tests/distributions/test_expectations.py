"""Expected sufficient statistics of the conjugate families (the inputs of variational
updates): exact values (the notes' digamma example, rational digamma differences, mpmath)
and Monte Carlo means with a tolerance of a few standard errors."""

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from mathlearn.distributions import Dirichlet, Gamma, NormalGamma, NormalWishart, Wishart

N_MC = 200_000
Z = 5.0  # standard errors: |MC - exact| > 5 SE has probability < 1e-6 per comparison


def assert_mc(samples, exact, axis=0):
    """MC mean of ``samples`` (draws on ``axis``) within Z standard errors of ``exact``."""
    mean = samples.mean(axis=axis)
    se = samples.std(axis=axis, ddof=1) / np.sqrt(samples.shape[axis])
    assert np.all(np.abs(mean - exact) <= Z * se + 1e-12), (mean, exact, se)


def test_dirichlet_expected_log_notes_example():
    # alpha = (1, 2, 3): psi(k) - psi(6) = -(H_5 - H_{k-1}), rationals -137/60, -77/60, -47/60.
    exact = [-Fraction(137, 60), -Fraction(77, 60), -Fraction(47, 60)]
    got = Dirichlet([1.0, 2.0, 3.0]).expected_log()
    np.testing.assert_allclose(got, [float(v) for v in exact], rtol=1e-14)
    np.testing.assert_allclose(np.round(got, 6), [-2.283333, -1.283333, -0.783333])


def test_dirichlet_expected_log_batched_mpmath_and_mc():
    rng = np.random.default_rng(0)
    alpha = rng.uniform(0.05, 20.0, size=(3, 4))
    got = Dirichlet(alpha).expected_log()
    assert got.shape == (3, 4)
    for b in range(3):
        a0 = mpmath.mpf(float(alpha[b].sum()))
        ref = [float(mpmath.digamma(mpmath.mpf(float(a))) - mpmath.digamma(a0)) for a in alpha[b]]
        np.testing.assert_allclose(got[b], ref, rtol=1e-13, atol=1e-14)
    draws = Dirichlet(alpha[0] + 0.5).sample(N_MC, rng)
    assert_mc(np.log(draws), Dirichlet(alpha[0] + 0.5).expected_log())


@pytest.mark.parametrize("shape, rate", [(0.3, 2.0), (1.0, 1.0), (7.5, 0.01)])
def test_gamma_expected_log(shape, rate):
    ref = float(mpmath.digamma(shape) - mpmath.log(rate))
    assert Gamma(shape, rate).expected_log() == pytest.approx(ref, rel=1e-13, abs=1e-14)
    x = Gamma(shape, rate).sample(N_MC, np.random.default_rng(1))
    assert_mc(np.log(x), ref)
    assert_mc(x, Gamma(shape, rate).mean)


def test_gamma_expected_log_batched():
    g = Gamma(np.array([0.5, 2.0, 10.0]), np.array([1.0, 3.0, 0.5]))
    ref = [
        float(mpmath.digamma(a) - mpmath.log(b)) for a, b in [(0.5, 1.0), (2.0, 3.0), (10.0, 0.5)]
    ]
    np.testing.assert_allclose(g.expected_log(), ref, rtol=1e-13)


def test_wishart_expected_logdet():
    # d = 1: Wishart(nu, w) = w chi^2_nu, E log = psi(nu/2) + log 2 + log w.
    ref = float(mpmath.digamma(1.5) + mpmath.log(2) + mpmath.log(0.7))
    assert Wishart(3.0, [[0.7]]).expected_logdet() == pytest.approx(ref, rel=1e-13)
    rng = np.random.default_rng(2)
    A = rng.normal(size=(3, 3))
    W = A @ A.T + 0.5 * np.eye(3)
    wi = Wishart(4.5, W)
    L = wi.sample(N_MC // 4, rng)
    assert_mc(np.linalg.slogdet(L)[1], wi.expected_logdet())


def test_normal_gamma_expectations_mc():
    ng = NormalGamma(0.7, 2.5, 3.0, 1.7)
    s = ng.sample(N_MC, np.random.default_rng(3))
    mu, tau = s[:, 0], s[:, 1]
    assert_mc(np.log(tau), ng.expected_log_precision())
    x = np.array([-1.0, 0.7, 4.0])
    quad = tau[:, None] * (x - mu[:, None]) ** 2
    assert_mc(quad, ng.expected_quadratic(x))
    loglik = 0.5 * (np.log(tau[:, None]) - np.log(2 * np.pi)) - 0.5 * quad
    assert_mc(loglik, ng.expected_log_likelihood(x))
    assert ng.expected_log_precision() == pytest.approx(Gamma(3.0, 1.7).expected_log())


def test_normal_wishart_expectations_mc():
    rng = np.random.default_rng(4)
    d = 3
    A = rng.normal(size=(d, d))
    W = A @ A.T / d + 0.3 * np.eye(d)
    m = rng.normal(size=d)
    nw = NormalWishart(m, 1.7, 5.0, W)
    mus, Lams = nw.sample(N_MC // 4, rng)
    assert_mc(Lams.reshape(len(Lams), -1), nw.expected_precision().ravel())
    assert_mc(np.linalg.slogdet(Lams)[1], nw.expected_logdet_precision())
    x = rng.normal(size=(4, d)) * 2
    dev = x[None, :, :] - mus[:, None, :]
    quad = np.einsum("snd,sde,sne->sn", dev, Lams, dev)
    assert_mc(quad, nw.expected_quadratic(x))
    assert nw.expected_quadratic(x[0]) == pytest.approx(nw.expected_quadratic(x)[0], rel=1e-14)
    logdet = np.linalg.slogdet(Lams)[1]
    loglik = 0.5 * (logdet[:, None] - d * np.log(2 * np.pi) - quad)
    assert_mc(loglik, nw.expected_log_likelihood(x))
    with pytest.raises(ValueError, match="last dimension 3"):
        nw.expected_quadratic(np.zeros((2, 2)))
