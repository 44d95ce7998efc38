"""Expected utility, certainty equivalents and Bayes decisions against closed forms
(Stuttgart "Introduction to Machine Learning", appendix A.3, slide 9:41)."""

import numpy as np
import pytest

from mathlearn.stats import bayes_decision, expected_utility


def test_log_utility_certainty_equivalent_is_the_geometric_mean(rng):
    x = rng.uniform(1.0, 100.0, size=6)
    p = rng.dirichlet(np.ones(6))
    eu = expected_utility(np.log, x, p)
    assert eu.expected_utility == pytest.approx(p @ np.log(x), rel=1e-14)
    assert eu.certainty_equivalent == pytest.approx(np.exp(p @ np.log(x)), rel=1e-13)
    assert eu.risk_premium >= 0  # Jensen: a concave utility is risk averse
    assert eu.std_error == 0.0


@pytest.mark.parametrize(("a", "mu", "sigma"), [(0.5, 1.0, 2.0), (2.0, -3.0, 0.3)])
def test_exponential_utility_gaussian_gamble(a, mu, sigma):
    # CE = mu - a sigma^2 / 2 exactly; Gauss-Hermite with 60 nodes integrates exp(-a x)
    # against the Gaussian to rounding for these a sigma.
    x, w = np.polynomial.hermite_e.hermegauss(60)
    eu = expected_utility(lambda v: -np.exp(-a * v), mu + sigma * x, w / w.sum())
    assert eu.certainty_equivalent == pytest.approx(mu - a * sigma**2 / 2, abs=1e-10)
    assert eu.risk_premium == pytest.approx(a * sigma**2 / 2, abs=1e-10)


def test_risk_neutral_and_risk_seeking(rng):
    x, p = rng.normal(size=5), rng.dirichlet(np.ones(5))
    neutral = expected_utility(lambda v: 3.0 * v + 1.0, x, p)
    assert neutral.risk_premium == pytest.approx(0.0, abs=1e-14)
    seeking = expected_utility(np.exp, x, p)  # convex
    assert seeking.risk_premium < 0


def test_samples_give_a_monte_carlo_standard_error(rng):
    s = rng.normal(size=4000)
    eu = expected_utility(lambda v: -np.exp(-v), s)
    exact = -np.exp(0.5)
    assert abs(eu.expected_utility - exact) <= 5 * eu.std_error
    assert eu.std_error == pytest.approx(np.std(-np.exp(-s), ddof=1) / np.sqrt(4000))


def test_bayes_decision(rng):
    U = rng.normal(size=(4, 3))
    p = rng.dirichlet(np.ones(3))
    a, expected = bayes_decision(U, p)
    np.testing.assert_allclose(expected, U @ p, rtol=1e-14)
    assert a == int(np.argmax(U @ p))
    b, _ = bayes_decision(-U, p, loss=True)
    assert b == a


def test_bad_input():
    with pytest.raises(ValueError, match="sum to one"):
        expected_utility(np.log, [1.0, 2.0], [0.5, 0.6])
    with pytest.raises(ValueError, match="increasing"):
        expected_utility(lambda v: -v, [1.0, 2.0], [0.5, 0.5])
    with pytest.raises(ValueError, match="finite"):
        expected_utility(np.log, [-1.0, 2.0], [0.5, 0.5])
    with pytest.raises(ValueError, match="n_actions"):
        bayes_decision([[1.0, 2.0]], [1.0])
