"""The coordinate-ascent driver: bookkeeping, convergence rules, monotonicity checks, and CAVI
for the Gaussian with unknown mean and precision (PRML §10.1.3) against the exact evidence."""

import numpy as np
import pytest
from scipy.special import digamma, gammaln

from mathlearn.distributions import NormalGammaModel
from mathlearn.exceptions import NumericalWarning
from mathlearn.inference import (
    BoundDecreaseError,
    CoordinateAscentResult,
    coordinate_ascent,
)
from mathlearn.mixture import EMResult, em


class Scripted:
    """A model whose sweeps return a fixed sequence of bounds."""

    def __init__(self, bounds):
        self.bounds = list(bounds)
        self.calls = 0

    def update(self, X):
        self.calls += 1

    def elbo(self, X):
        return self.bounds[self.calls - 1]


class GaussianCAVI:
    """q(mu) q(tau) for x_i ~ N(mu, 1/tau), mu | tau ~ N(m0, 1/(l0 tau)), tau ~ Gam(a0, b0).

    The bound uses the full (non-factorised) prior p(mu | tau) p(tau), PRML eq. 10.23-10.30.
    """

    def __init__(self, m0=0.0, l0=1.0, a0=1.0, b0=1.0):
        self.m0, self.l0, self.a0, self.b0 = m0, l0, a0, b0
        self.m, self.lam, self.a, self.b = m0, l0, a0, b0

    def _moments(self, x):
        n = len(x)
        e_sq = ((x - self.m) ** 2).sum() + n / self.lam
        e_sq0 = (self.m - self.m0) ** 2 + 1 / self.lam
        return n, e_sq, e_sq0

    def update(self, x):
        n, e_tau = len(x), self.a / self.b
        self.m = (self.l0 * self.m0 + x.sum()) / (self.l0 + n)
        self.lam = (self.l0 + n) * e_tau
        n, e_sq, e_sq0 = self._moments(x)
        self.a = self.a0 + (n + 1) / 2
        self.b = self.b0 + 0.5 * (e_sq + self.l0 * e_sq0)

    def elbo(self, x):
        n, e_sq, e_sq0 = self._moments(x)
        e_tau, e_log_tau = self.a / self.b, digamma(self.a) - np.log(self.b)
        log2pi = np.log(2 * np.pi)
        lik = 0.5 * n * (e_log_tau - log2pi) - 0.5 * e_tau * e_sq
        p_mu = 0.5 * (np.log(self.l0) + e_log_tau - log2pi) - 0.5 * self.l0 * e_tau * e_sq0
        p_tau = (
            self.a0 * np.log(self.b0)
            - gammaln(self.a0)
            + (self.a0 - 1) * e_log_tau
            - self.b0 * e_tau
        )
        h_mu = 0.5 * (1 + np.log(2 * np.pi / self.lam))
        h_tau = self.a - np.log(self.b) + gammaln(self.a) + (1 - self.a) * digamma(self.a)
        return lik + p_mu + p_tau + h_mu + h_tau


def test_cavi_bound_is_monotone_and_below_exact_evidence():
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = rng.normal(rng.normal(), rng.uniform(0.3, 3), size=rng.integers(2, 30))
        m0, l0, a0, b0 = (
            rng.normal(),
            rng.uniform(0.1, 3),
            rng.uniform(0.5, 3),
            rng.uniform(0.5, 3),
        )
        model = GaussianCAVI(m0, l0, a0, b0)
        res = coordinate_ascent(model, x, tol=1e-13, max_iter=500, on_decrease="raise")
        assert res.converged
        evidence = NormalGammaModel(m0, l0, a0, b0).log_marginal_likelihood(x)
        # L(q) = log p(x) - KL(q || posterior) and the factorised q cannot be exact
        # (the posterior couples mu and tau), so the bound is strictly below.
        assert res.lower_bound < evidence
        # ... but close: the gap is the KL of the best factorised q, O(1/N) small here.
        assert evidence - res.lower_bound < 1.0
        assert np.all(np.diff(res.lower_bounds) >= -1e-12 * np.abs(res.lower_bounds[1:]))


def test_cavi_fixed_point_matches_closed_form():
    # At convergence E[tau] = a_N / b_N solves the scalar fixed point of PRML eq. 10.26-10.30;
    # m_N does not depend on tau: (l0 m0 + sum x) / (l0 + N).
    x = np.array([0.3, 1.7, 2.2, -0.4, 1.1, 0.9])
    model = GaussianCAVI(0.5, 2.0, 1.5, 0.7)
    coordinate_ascent(model, x, tol=1e-15, max_iter=1000)
    n = len(x)
    assert model.m == pytest.approx((2.0 * 0.5 + x.sum()) / (2.0 + n), rel=1e-14)
    e_tau = model.a / model.b
    lam = (2.0 + n) * e_tau
    b = 0.7 + 0.5 * (((x - model.m) ** 2).sum() + n / lam + 2.0 * ((model.m - 0.5) ** 2 + 1 / lam))
    # The bound is stationary at the fixed point, so a change below 1e-15 relative pins the
    # parameters only to ~sqrt(1e-15) ~ 3e-8 relative.
    assert model.b == pytest.approx(b, rel=1e-6)


def test_records_bounds_and_stops_on_relative_change():
    bounds = [-100.0, -10.0, -9.0, -8.99, -8.9899, -8.98989]
    res = coordinate_ascent(Scripted(bounds), None, tol=1e-3)
    # changes 90, 1, 0.01 (relative 1.1e-3 > 1e-3), 1e-4 (relative 1.1e-5): stops at 5
    assert res.n_iter == 5 and res.converged
    np.testing.assert_array_equal(res.lower_bounds, bounds[:5])
    assert res.elbo_history is res.lower_bounds
    assert res.lower_bound == bounds[4]
    res = coordinate_ascent(Scripted(bounds), None, tol=0.05, criterion="absolute")
    assert res.n_iter == 4 and res.converged
    res = coordinate_ascent(Scripted(bounds), None, tol=1e-9, max_iter=3)
    assert res.n_iter == 3 and not res.converged
    assert isinstance(res, CoordinateAscentResult)


def test_zero_change_converges_with_zero_tol():
    res = coordinate_ascent(Scripted([-1.0, -1.0, -1.0]), None, tol=0.0)
    assert res.n_iter == 2 and res.converged


def test_decrease_warns_once_or_raises():
    bounds = [-3.0, -2.0, -2.5, -1.0, -1.5, -1.5]
    with pytest.warns(NumericalWarning, match="decreased at iteration 3") as caught:
        res = coordinate_ascent(Scripted(bounds), None, tol=0.0)
    assert len([w for w in caught if "decreased" in str(w.message)]) == 1
    assert res.n_iter == 6
    with pytest.raises(BoundDecreaseError, match=r"CAVI lower bound decreased at iteration 3"):
        coordinate_ascent(Scripted(bounds), None, name="CAVI", on_decrease="raise")
    # rounding-sized decreases are allowed
    res = coordinate_ascent(Scripted([-1.0, -1.0 - 1e-12, -1.0]), None, on_decrease="raise")
    assert res.converged
    coordinate_ascent(Scripted(bounds), None, on_decrease="ignore", tol=0.0)


@pytest.mark.parametrize("bad", [np.nan, -np.inf, np.inf])
def test_non_finite_bound_raises(bad):
    with pytest.raises(ValueError, match=r"lower bound is (nan|-inf|inf) at iteration 2"):
        coordinate_ascent(Scripted([-1.0, bad, -0.5]), None)


def test_step_form_and_callback():
    class Stepper:
        def __init__(self):
            self.k = 0

        def step(self, X):
            self.k += 1
            return -(2.0**-self.k)

    seen = []
    res = coordinate_ascent(
        Stepper(),
        None,
        tol=1e-3,
        criterion="absolute",
        callback=lambda m, t, b: seen.append((t, b)),
    )
    assert res.n_iter == 10 and res.converged  # 2^-10 < 1e-3 <= 2^-9
    assert seen == [(t, -(2.0**-t)) for t in range(1, 11)]


def test_model_without_hooks_and_bad_params():
    with pytest.raises(TypeError, match="no elbo"):
        coordinate_ascent(type("M", (), {"update": lambda self, X: None})(), None)
    with pytest.raises(ValueError, match="on_decrease"):
        coordinate_ascent(Scripted([-1.0]), None, on_decrease="shout")
    with pytest.raises(ValueError, match="max_iter"):
        coordinate_ascent(Scripted([-1.0]), None, max_iter=0)


def test_em_is_an_adapter_on_the_driver():
    class Fixed:
        # a "model" whose E-step reports the scripted bounds; the M-step counts its calls
        def __init__(self):
            self.m = 0

        def e_step(self, X):
            return [-2.0, -1.5, -1.4999][self.m], None

        def m_step(self, X, posterior):
            self.m += 1

    model = Fixed()
    res = em(model, None, tol=1e-3)
    assert isinstance(res, EMResult) and isinstance(res, CoordinateAscentResult)
    assert res.n_iter == 3 and res.converged and model.m == 3
