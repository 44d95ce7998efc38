"""KL divergences: closed forms against Monte Carlo estimates (tolerance from the standard
error), against scipy where it has them, and the error for unregistered pairs."""

import numpy as np
import pytest
import scipy.stats as st

from mathlearn.distributions import (
    Bernoulli,
    Beta,
    Categorical,
    ChiSquared,
    Dirichlet,
    Exponential,
    Gamma,
    Laplace,
    MultivariateNormal,
    Normal,
    kl_divergence,
    register_kl,
)
from mathlearn.monte_carlo import mc_expectation

PAIRS = [
    (Normal(0.5, 2.0), Normal(-1.0, 0.7)),
    (
        MultivariateNormal([0.0, 1.0, -1.0], [[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]]),
        MultivariateNormal([1.0, 0.0, 0.0], [[1.0, -0.2, 0.0], [-0.2, 2.0, 0.3], [0.0, 0.3, 1.5]]),
    ),
    (Bernoulli(0.3), Bernoulli(0.6)),
    (Categorical([0.2, 0.5, 0.3]), Categorical([0.4, 0.4, 0.2])),
    (Beta(2.0, 3.0), Beta(4.0, 1.5)),
    (Gamma(3.0, 2.0), Gamma(2.0, 0.5)),
    (Exponential(2.0), Exponential(0.5)),
    (ChiSquared(3.0), Gamma(2.0, 0.7)),
    (Dirichlet([1.5, 2.0, 3.0]), Dirichlet([2.0, 1.0, 1.0])),
]


@pytest.mark.parametrize(("p", "q"), PAIRS, ids=[type(p).__name__ for p, _ in PAIRS])
def test_closed_form_matches_monte_carlo(p, q):
    kl = kl_divergence(p, q)
    r = mc_expectation(lambda x: p.logpdf(x) - q.logpdf(x), p, 40_000, rng=11)
    assert kl >= 0
    assert abs(kl - r.estimate) < 5 * r.std_error + 1e-12


def test_against_scipy_and_identities():
    # Categorical: scipy.stats.entropy(p, q) is the KL.
    p, q = np.array([0.2, 0.5, 0.3]), np.array([0.4, 0.4, 0.2])
    assert kl_divergence(Categorical(p), Categorical(q)) == pytest.approx(st.entropy(p, q))
    # Bernoulli as a two-category categorical.
    assert kl_divergence(Bernoulli(0.3), Bernoulli(0.6)) == pytest.approx(
        st.entropy([0.7, 0.3], [0.4, 0.6])
    )
    # 1-D MVN equals Normal; KL(p || p) = 0; Exponential = Gamma(1, rate).
    assert kl_divergence(
        MultivariateNormal([0.5], [[2.0]]), MultivariateNormal([-1.0], [[0.7]])
    ) == pytest.approx(kl_divergence(Normal(0.5, 2.0), Normal(-1.0, 0.7)))
    for a, _ in PAIRS:
        assert kl_divergence(a, a) == pytest.approx(0.0, abs=1e-12)
    assert kl_divergence(Exponential(2.0), Exponential(0.5)) == pytest.approx(
        kl_divergence(Gamma(1.0, 2.0), Gamma(1.0, 0.5))
    )
    # Exponential and chi-squared are Gammas: mixed pairs use the Gamma closed form.
    assert kl_divergence(Exponential(2.0), Gamma(3.0, 0.5)) == pytest.approx(
        kl_divergence(Gamma(1.0, 2.0), Gamma(3.0, 0.5)), rel=1e-14
    )
    assert kl_divergence(Gamma(3.0, 0.5), ChiSquared(4.0)) == pytest.approx(
        kl_divergence(Gamma(3.0, 0.5), Gamma(2.0, 0.5)), rel=1e-14
    )
    assert kl_divergence(ChiSquared(3.0), Exponential(1.5)) == pytest.approx(
        kl_divergence(Gamma(1.5, 0.5), Gamma(1.0, 1.5)), rel=1e-14
    )
    # Dirichlet with two categories equals Beta.
    assert kl_divergence(Dirichlet([2.0, 3.0]), Dirichlet([4.0, 1.5])) == pytest.approx(
        kl_divergence(Beta(2.0, 3.0), Beta(4.0, 1.5))
    )
    # Batched parameters broadcast.
    np.testing.assert_allclose(
        kl_divergence(Normal([0.0, 1.0], 1.0), Normal(0.0, 1.0)), [0.0, 0.5]
    )


def test_unregistered_pair_raises_clearly_and_registry_extends():
    with pytest.raises(NotImplementedError, match=r"\(Laplace, Normal\)"):
        kl_divergence(Laplace(0.0, 1.0), Normal(0.0, 1.0))

    class MyNormal(Normal):
        pass

    # Subclasses inherit their parents' closed forms.
    assert kl_divergence(MyNormal(0.0, 1.0), Normal(1.0, 1.0)) == pytest.approx(0.5)

    @register_kl(Laplace, Laplace)
    def _kl_laplace(p, q):  # closed form for equal locations
        b1, b2 = p._p["scale"], q._p["scale"]
        return np.log(b2 / b1) + b1 / b2 - 1

    assert kl_divergence(Laplace(0.0, 1.0), Laplace(0.0, 2.0)) == pytest.approx(
        np.log(2) + 0.5 - 1
    )


def test_kl_of_batched_multivariate_normals_is_refused():
    from mathlearn.distributions import MultivariateNormal, kl_divergence

    p = MultivariateNormal(np.zeros((2, 2)), np.eye(2))  # a batch of two
    q = MultivariateNormal(np.zeros(2), np.eye(2))
    with pytest.raises(ValueError, match="batching is not supported"):
        kl_divergence(p, q)
    with pytest.raises(ValueError, match="batching is not supported"):
        kl_divergence(q, p)
