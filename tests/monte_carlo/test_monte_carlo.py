"""Monte Carlo estimators: estimates within a few standard errors of exact values, standard
errors that match the spread over replications, the envelope check, acceptance rates, ESS."""

import numpy as np
import pytest
import scipy.stats as st

from mathlearn.distributions import (
    Beta,
    Empirical,
    Exponential,
    Gamma,
    Normal,
    StudentT,
    Uniform,
)
from mathlearn.exceptions import ConvergenceWarning
from mathlearn.monte_carlo import (
    effective_sample_size,
    importance_sampling,
    inverse_cdf_sample,
    mc_expectation,
    rejection_sample,
)


def test_mc_expectation_and_its_standard_error():
    # E[x^2] under N(1, 2) is 3; Var[x^2] = 2 var^2 + 4 mu^2 var = 16.
    r = mc_expectation(lambda x: x**2, Normal(1.0, 2.0), 10_000, rng=0)
    assert abs(r.estimate - 3.0) < 5 * r.std_error
    assert r.std_error == pytest.approx(4.0 / 100, rel=0.1)
    lo, hi = r.confidence_interval(0.95)
    assert lo < r.estimate < hi
    # The reported standard error matches the spread of the estimate over replications.
    rng = np.random.default_rng(1)
    reps = [mc_expectation(np.sin, Uniform(0, np.pi), 400, rng=rng) for _ in range(300)]
    est = np.array([r.estimate for r in reps])
    se = np.mean([r.std_error for r in reps])
    assert est.std(ddof=1) == pytest.approx(se, rel=0.15)
    assert abs(est.mean() - 2 / np.pi) < 5 * est.std(ddof=1) / np.sqrt(len(est))
    # A callable sampler and vector-valued f.
    r2 = mc_expectation(
        lambda x: np.stack([x, x**2], 1), lambda n, g: g.standard_normal(n), 5000, rng=2
    )
    assert r2.estimate.shape == (2,)
    assert np.all(np.abs(r2.estimate - [0.0, 1.0]) < 5 * r2.std_error)


def test_rejection_sampling_matches_target_and_acceptance_rate():
    target = Beta(2.5, 4.0)
    mode = 1.5 / 4.5
    log_m = float(target.logpdf(mode))  # p <= M * U(0, 1)
    r = rejection_sample(target.logpdf, Uniform(0, 1), log_m, 5000, rng=3)
    assert r.samples.shape == (5000,)
    # Normalised target: acceptance probability 1 / M (binomial standard error).
    p_acc = np.exp(-log_m)
    assert abs(r.acceptance_rate - p_acc) < 5 * np.sqrt(p_acc * (1 - p_acc) / r.n_proposed)
    assert st.kstest(r.samples, target.cdf).pvalue > 1e-3
    # Unnormalised target: the rate is Z / M.
    z = 7.0
    r2 = rejection_sample(
        lambda x: target.logpdf(x) + np.log(z), Uniform(0, 1), log_m + np.log(z), 2000, rng=4
    )
    assert abs(r2.acceptance_rate - p_acc) < 5 * np.sqrt(p_acc * (1 - p_acc) / r2.n_proposed)


def test_rejection_sampling_checks_the_envelope():
    # N(0, 1) under a Student-t(3) proposal needs M >= max p/q ~ 1.2; 1.0 is too small.
    with pytest.raises(ValueError, match="envelope"):
        rejection_sample(Normal(0, 1).logpdf, StudentT(3.0), 0.0, 500, rng=5)
    with pytest.raises(ValueError, match="finite"):
        rejection_sample(Normal(0, 1).logpdf, StudentT(3.0), np.inf, 5, rng=5)
    with pytest.raises(RuntimeError, match="proposals"):
        rejection_sample(Normal(0, 1).logpdf, StudentT(3.0), 20.0, 50, rng=5, max_proposals=100)
    with pytest.raises(ValueError, match="size"):
        rejection_sample(Normal(0, 1).logpdf, StudentT(3.0), 1.0, 0)
    # A bare sampler cannot be a proposal: its density is needed too.
    with pytest.raises(TypeError, match="proposal must be a distribution"):
        rejection_sample(Normal(0, 1).logpdf, lambda n, g: g.normal(size=n), 1.0, 5, rng=0)
    with pytest.raises(TypeError, match="proposal must be a distribution"):
        importance_sampling(None, Normal(0, 1), lambda n, g: g.normal(size=n), 5, rng=0)


def test_importance_sampling_normalised_and_self_normalised():
    p = Normal(1.0, 0.5)
    q = StudentT(4.0, 0.0, 2.0)
    f = lambda x: x**2  # noqa: E731
    exact = 1.0 + 0.5
    r = importance_sampling(f, p.logpdf, q, 20_000, rng=6, self_normalised=False)
    assert abs(r.estimate - exact) < 5 * r.std_error
    # Standard error of log Z-hat (delta method): the relative standard error of the mean
    # weight, sqrt((n / ESS - 1) / n).
    n = r.n_samples
    se_log_z = np.sqrt((n / r.ess - 1) / n)
    assert abs(r.log_normaliser) < 5 * se_log_z
    # Unnormalised target (Z = e^3): the self-normalised estimator still works, and the
    # estimated log normaliser recovers log Z.
    r2 = importance_sampling(f, lambda x: p.logpdf(x) + 3.0, q, 20_000, rng=7)
    assert abs(r2.estimate - exact) < 5 * r2.std_error
    assert abs(r2.log_normaliser - 3.0) < 5 * np.sqrt((n / r2.ess - 1) / n)
    np.testing.assert_allclose(r2.weights.sum(), 1.0)
    assert r2.ess == pytest.approx(effective_sample_size(np.exp(r2.log_weights)))
    assert 0 < r2.ess < 20_000
    # The self-normalised standard error matches the spread over replications.
    rng = np.random.default_rng(8)
    reps = [importance_sampling(f, p.logpdf, q, 500, rng=rng) for _ in range(300)]
    est = np.array([r.estimate for r in reps])
    assert est.std(ddof=1) == pytest.approx(np.mean([r.std_error for r in reps]), rel=0.2)
    particles = r2.particles()
    assert isinstance(particles, Empirical)
    assert particles.mean == pytest.approx(r2.samples @ r2.weights)


def test_importance_sampling_with_the_target_as_proposal_has_full_ess():
    p = Gamma(3.0, 2.0)
    r = importance_sampling(None, p, p, 1000, rng=9)
    assert r.ess == pytest.approx(1000)
    np.testing.assert_allclose(r.weights, 1 / 1000)
    with pytest.raises(ValueError, match="zero"):
        importance_sampling(None, lambda x: np.full(x.shape, -np.inf), p, 10, rng=0)


def test_effective_sample_size():
    assert effective_sample_size([1.0, 0.0, 0.0]) == 1.0
    assert effective_sample_size(np.log([2.0, 2.0]), log=True) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="non-negative"):
        effective_sample_size([1.0, -1.0])


def test_inverse_cdf_sampling():
    # Closed-form ppf: Exponential(rate 2).
    x = inverse_cdf_sample(20_000, rng=10, ppf=lambda u: -np.log1p(-u) / 2.0)
    assert st.kstest(x, st.expon(scale=0.5).cdf).pvalue > 1e-3
    # Numerical inversion of a cdf by bisection: Beta(2, 5) on [0, 1].
    b = Beta(2.0, 5.0)
    y = inverse_cdf_sample((4000,), rng=11, cdf=b.cdf, bounds=(0.0, 1.0))
    assert st.kstest(y, b.cdf).pvalue > 1e-3
    u = np.random.default_rng(11).random(4000)
    np.testing.assert_allclose(y, b.ppf(u), atol=1e-9)
    # Wide bounds: |x| ~ 1e5 has a resolution (1.5e-11) coarser than tol; the bisection
    # stops there instead of running out its iterations, and agrees with the exact ppf.
    e = Exponential(1e-5)
    z = inverse_cdf_sample(50, rng=12, cdf=e.cdf, bounds=(0.0, 2e6))
    np.testing.assert_allclose(z, e.ppf(np.random.default_rng(12).random(50)), rtol=1e-9)
    with pytest.warns(ConvergenceWarning, match="max_iter=5"):
        inverse_cdf_sample(10, rng=0, cdf=b.cdf, bounds=(0.0, 1.0), max_iter=5)
    with pytest.raises(ValueError, match="exactly one"):
        inverse_cdf_sample(3)
    with pytest.raises(ValueError, match="bounds"):
        inverse_cdf_sample(3, cdf=Normal(0, 1).cdf)
    with pytest.raises(ValueError, match="miss"):
        inverse_cdf_sample(3, cdf=Normal(0, 1).cdf, bounds=(-1.0, 1.0))


@pytest.mark.parametrize("scale", [1e300, 1e-300, 1.0])
def test_effective_sample_size_is_scale_free(scale):
    # Kish's ESS is invariant to the scale of the weights; (sum w)^2 overflows for 1e300.
    w = np.array([1.0, 2.0, 3.0, 4.0])
    ref = w.sum() ** 2 / np.sum(w**2)
    assert effective_sample_size(w * scale) == pytest.approx(ref, rel=1e-15)
    assert effective_sample_size(np.log(w) + np.log(scale), log=True) == pytest.approx(
        ref, rel=1e-13
    )


def test_random_generator_argument_is_named():
    with pytest.raises(ValueError, match="'rng' parameter"):
        mc_expectation(None, Normal(0, 1), 10, rng=-1)
    with pytest.raises(ValueError, match="rng must be"):
        Normal(0, 1).sample(3, rng=-1)
