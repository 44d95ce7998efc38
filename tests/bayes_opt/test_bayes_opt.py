"""Acquisitions against the Oxford notes' numbers, mpmath and their limits; the BO loop."""

import mpmath
import numpy as np
import pytest

from mathlearn.bayes_opt import (
    BayesianOptimizer,
    expected_improvement,
    expected_positive_part,
    log_expected_improvement,
    log_probability_of_improvement,
    lower_confidence_bound,
    minimize,
    noisy_expected_improvement,
    noisy_probability_of_improvement,
    probability_of_improvement,
)

SIX = 5.01e-7


def test_oxford_d6_lemma_24():
    got = expected_positive_part([1.0, 0.0, -1.0], [1.0, 1.0, 2.0])
    np.testing.assert_allclose(got, [1.083315, 0.398942, 0.395593], atol=SIX)


def test_oxford_d7_acquisitions():
    assert float(probability_of_improvement(0.5, 1.0, 0.0)) == pytest.approx(0.308538, abs=SIX)
    assert float(expected_improvement(0.5, 1.0, 0.0)) == pytest.approx(0.197797, abs=SIX)
    assert float(lower_confidence_bound(0.5, 1.0, alpha=0.05)) == pytest.approx(-1.144854, abs=SIX)


def test_sigma_zero_limits():
    mu = np.array([-1.0, 0.5, 0.0])
    sd = np.zeros(3)
    np.testing.assert_array_equal(expected_improvement(mu, sd, 0.0), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(probability_of_improvement(mu, sd, 0.0), [1.0, 0.0, 0.0])
    le = log_expected_improvement(mu, sd, 0.0)
    assert le[0] == 0.0 and le[1] == -np.inf
    # continuity: tiny sigma approaches the limit
    np.testing.assert_allclose(
        expected_improvement(mu, np.full(3, 1e-12), 0.0), [1, 0, 0], atol=1e-12
    )


def _log_ei_mp(mu, sigma, y):
    mpmath.mp.dps = 60
    g = (mpmath.mpf(y) - mu) / sigma
    h = g * mpmath.ncdf(g) + mpmath.npdf(g)
    return float(mpmath.log(sigma) + mpmath.log(h))


@pytest.mark.parametrize("gamma", [3.0, 0.5, -0.9, -1.0, -2.0, -10.0, -40.0, -1e3, -1e6, -1e9])
def test_log_ei_matches_mpmath_far_in_the_tail(gamma):
    sigma = 0.7
    mu = -gamma * sigma  # y_best = 0
    got = log_expected_improvement(mu, sigma, 0.0)
    want = _log_ei_mp(mu, sigma, 0.0)
    # log h is O(gamma^2); relative accuracy a few eps times the condition of the pieces.
    assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert np.isfinite(got)
    if gamma > -30:
        assert np.exp(got) == pytest.approx(float(expected_improvement(mu, sigma, 0.0)), rel=1e-10)


def test_log_pi_is_log_ndtr_in_the_tail():
    lp = log_probability_of_improvement(50.0, 1.0, 0.0)
    mpmath.mp.dps = 50
    assert float(lp) == pytest.approx(float(mpmath.log(mpmath.ncdf(-50))), rel=1e-12)


def test_noisy_variants_reduce_to_lemma_24():
    mu, mu_best, rho = np.array([0.2, -0.3]), 0.1, np.array([0.5, 2.0])
    np.testing.assert_allclose(
        noisy_expected_improvement(mu, mu_best, rho), expected_positive_part(mu_best - mu, rho)
    )
    np.testing.assert_allclose(
        noisy_probability_of_improvement(mu, mu_best, rho),
        probability_of_improvement(mu, rho, mu_best),
    )


def test_bad_input():
    with pytest.raises(ValueError, match="sigma"):
        expected_improvement(0.0, -1.0, 0.0)
    with pytest.raises(ValueError, match="NaN"):
        probability_of_improvement(np.nan, 1.0, 0.0)
    with pytest.raises(ValueError, match="alpha"):
        lower_confidence_bound(0.0, 1.0, alpha=1.5)
    with pytest.raises(ValueError, match="low < high"):
        BayesianOptimizer([(1.0, 1.0)])
    with pytest.raises(ValueError, match="acquisition"):
        BayesianOptimizer([(0.0, 1.0)], acquisition="ucb")
    opt = BayesianOptimizer([(0.0, 1.0)])
    with pytest.raises(ValueError, match="finite"):
        opt.tell([0.5], np.nan)
    with pytest.raises(ValueError, match="No evaluation"):
        opt.best()


@pytest.mark.parametrize("acquisition", ["hedge", "ei", "log_ei", "pi", "lcb", "noisy_ei"])
def test_minimize_finds_quadratic_minimum(acquisition):
    # A smooth 1-D bowl: after the 4-point design the surrogate interpolates it well and
    # every acquisition samples near the minimiser (the box is [-1, 2]).
    res = minimize(
        lambda x: (x[0] - 0.3) ** 2,
        [(-1.0, 2.0)],
        n_calls=10,
        n_initial=4,
        acquisition=acquisition,
        random_state=1,
    )
    assert abs(res.x[0] - 0.3) < 0.1
    assert res.x_iters.shape == (10, 1) and res.func_vals.shape == (10,)
    assert res.fun == res.func_vals.min()
    assert np.all((res.x_iters >= -1.0) & (res.x_iters <= 2.0))
    assert res.surrogate is not None
