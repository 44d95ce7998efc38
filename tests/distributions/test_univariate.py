"""Univariate and scalar discrete families: densities against scipy.stats or closed forms,
sample moments against mean/var, bad parameters, broadcasting, worked examples."""

import numpy as np
import pytest
import scipy.stats as st
from scipy.special import gammaln
from sklearn.base import BaseEstimator

from mathlearn.distributions import (
    Bernoulli,
    Beta,
    BetaBinomial,
    Binomial,
    ChiSquared,
    Exponential,
    Gamma,
    Laplace,
    Normal,
    StudentT,
    Uniform,
)

# (our distribution, the scipy reference built independently, points to evaluate)
CASES = [
    (Uniform(0.5, 2.0), st.uniform(0.5, 1.5), [0.4, 0.6, 1.9, 2.1]),
    (Normal(1.0, 4.0), st.norm(1.0, 2.0), [-3.0, 0.0, 2.5]),
    (Beta(2.0, 5.0), st.beta(2.0, 5.0), [0.01, 0.3, 0.9]),
    (Gamma(3.0, 2.0), st.gamma(3.0, scale=0.5), [0.1, 1.0, 4.0]),
    (Exponential(1.5), st.expon(scale=1 / 1.5), [0.0, 0.3, 2.0]),
    (Laplace(0.5, 2.0), st.laplace(0.5, 2.0), [-2.0, 0.5, 3.0]),
    (StudentT(7.0, 1.0, 2.0), st.t(7.0, 1.0, 2.0), [-4.0, 1.0, 6.0]),
    (ChiSquared(5.0), st.chi2(5.0), [0.5, 4.0, 11.0]),
    (Bernoulli(0.3), st.bernoulli(0.3), [0, 1]),
    (Binomial(12, 0.35), st.binom(12, 0.35), [0, 4, 12]),
    (BetaBinomial(9, 2.0, 3.0), st.betabinom(9, 2.0, 3.0), [0, 3, 9]),
]
IDS = [type(c[0]).__name__ for c in CASES]


@pytest.mark.parametrize(("dist", "ref", "x"), CASES, ids=IDS)
def test_density_cdf_moments_entropy_match_scipy(dist, ref, x):
    x = np.asarray(x)
    ref_logp = ref.logpmf(x) if hasattr(ref, "logpmf") else ref.logpdf(x)
    np.testing.assert_allclose(dist.logpdf(x), ref_logp, rtol=1e-12)
    np.testing.assert_allclose(dist.pdf(x), np.exp(ref_logp), rtol=1e-12)
    np.testing.assert_allclose(dist.cdf(x), ref.cdf(x), rtol=1e-12)
    assert dist.mean == pytest.approx(ref.mean(), rel=1e-12)
    assert dist.var == pytest.approx(ref.var(), rel=1e-12)
    assert dist.entropy() == pytest.approx(ref.entropy(), rel=1e-10)


@pytest.mark.parametrize(("dist", "ref", "x"), CASES, ids=IDS)
def test_sample_moments_within_five_standard_errors(dist, ref, x):
    n = 20_000
    s = dist.sample(n, rng=np.random.default_rng(1))
    assert s.shape == (n,)
    mean, var = dist.mean, dist.var
    # Standard error of the sample mean, and of the sample variance from the kurtosis:
    # Var[s^2] ~ var^2 (excess_kurtosis + 2) / n.
    assert abs(s.mean() - mean) < 5 * np.sqrt(var / n)
    kurt = float(ref.stats(moments="k"))
    se_var = var * np.sqrt((kurt + 2) / n)
    assert abs(s.var(ddof=1) - var) < 5 * se_var


def test_closed_forms_of_the_notes():
    # Gamma in the RATE parametrisation: mean a/b, var a/b^2 (Imperial
    # "Mathematics for Inference and Machine Learning" eq. 1.50-1.51).
    g = Gamma(shape=3.0, rate=2.0)
    assert g.mean == 1.5 and g.var == 0.75
    tau = 0.7
    closed = 3.0 * np.log(2.0) - gammaln(3.0) + 2.0 * np.log(tau) - 2.0 * tau
    assert g.logpdf(tau) == pytest.approx(closed, rel=1e-13)
    # Beta mean/var (1.33) and mode (Stuttgart "Introduction to Machine Learning" slide 9:22).
    b = Beta(3.0, 5.0)
    assert b.mean == pytest.approx(3 / 8)
    assert b.var == pytest.approx(15 / (64 * 9))
    assert b.mode == pytest.approx(2 / 6)
    # Binomial mean/var (1.30-1.31); Bernoulli (1.27-1.28).
    assert Binomial(10, 0.3).var == pytest.approx(2.1)
    assert Bernoulli(0.3).var == pytest.approx(0.21)
    # Exponential = Gamma(1, rate); chi-squared = Gamma(k/2, rate 1/2) (Remark 4).
    x = np.linspace(0.1, 5, 7)
    np.testing.assert_allclose(Exponential(2.0).logpdf(x), Gamma(1.0, 2.0).logpdf(x))
    np.testing.assert_allclose(ChiSquared(3.0).logpdf(x), Gamma(1.5, 0.5).logpdf(x))
    # Laplace (Stuttgart "Introduction to Machine Learning" slide 9:49).
    assert Laplace(1.0, 2.0).pdf(2.0) == pytest.approx(np.exp(-0.5) / 4)


def test_worked_examples_spec_000_tv08_and_001_t2():
    # Imperial "Mathematics for Inference and Machine Learning" §1.2.3.1, Fig. 1.2: U[0.5, 1] and
    # U[0, 2] have densities 2 and 0.5; mean/var 0.75/(1/48), 1/(1/3).
    u1, u2 = Uniform(0.5, 1.0), Uniform(0.0, 2.0)
    assert u1.pdf(0.7) == pytest.approx(2.0)
    assert u2.pdf(1.3) == pytest.approx(0.5)
    assert (u1.mean, u1.var) == pytest.approx((0.75, 1 / 48))
    assert (u2.mean, u2.var) == pytest.approx((1.0, 1 / 3))
    # Derived values for PRML §1.2.4: Gaussian pdf values.
    assert Normal(0.0, 1.0).pdf(0.0) == pytest.approx(0.3989422804014327, rel=1e-12)
    assert Normal(0.0, 1.0).pdf(1.0) == pytest.approx(0.24197072451914337, rel=1e-12)
    assert Normal(1.0, 4.0).pdf(2.0) == pytest.approx(0.17603266338214976, rel=1e-12)


def test_ml_fit_and_the_bias_of_the_ml_variance():
    # Derived example for PRML §1.2.4: x = 1..5 -> mu 3, sigma^2_ML 2, unbiased 2.5.
    fit = Normal.fit([1, 2, 3, 4, 5])
    assert (fit.mean, fit.var) == (3.0, 2.0)
    assert Normal.fit([1, 2, 3, 4, 5], unbiased=True).var == pytest.approx(2.5, rel=1e-15)
    # E[sigma^2_ML] = (N-1)/N sigma^2 (PRML §1.2.4): Monte Carlo over many samples.
    rng = np.random.default_rng(3)
    N, reps, sigma2 = 5, 40_000, 2.0
    X = rng.normal(0.0, np.sqrt(sigma2), size=(reps, N))
    ml = X.var(axis=1)  # 1/N, as Normal.fit
    assert Normal.fit(X[0]).var == pytest.approx(ml[0])
    se = ml.std(ddof=1) / np.sqrt(reps)
    assert abs(ml.mean() - (N - 1) / N * sigma2) < 5 * se
    assert abs(ml.mean() - sigma2) > 10 * se  # the bias is visible, not noise
    assert Bernoulli.fit([1, 0, 1, 1]).p == 0.75
    assert Exponential.fit([0.5, 1.5]).rate == 1.0


@pytest.mark.parametrize(
    ("ctor", "message"),
    [
        (lambda: Normal(0.0, -1.0), "var"),
        (lambda: Normal(np.nan, 1.0), "mean"),
        (lambda: Beta(0.0, 1.0), "a"),
        (lambda: Gamma(1.0, -2.0), "rate"),
        (lambda: Gamma(-1.0, 2.0), "shape"),
        (lambda: Uniform(1.0, 1.0), "high"),
        (lambda: Exponential(0.0), "rate"),
        (lambda: Laplace(0.0, -1.0), "scale"),
        (lambda: StudentT(-1.0), "df"),
        (lambda: ChiSquared(0.0), "df"),
        (lambda: Bernoulli(1.5), "p"),
        (lambda: Binomial(3.5, 0.5), "n"),
        (lambda: Binomial(-1, 0.5), "n"),
        (lambda: BetaBinomial(3, 1.0, 0.0), "b"),
    ],
)
def test_bad_parameters_raise_at_construction(ctor, message):
    with pytest.raises(ValueError, match=message):
        ctor()


def test_batch_parameters_broadcast():
    g = Gamma(shape=[[1.0], [2.0]], rate=[1.0, 2.0, 4.0])
    assert g.batch_shape == (2, 3)
    np.testing.assert_allclose(g.mean, np.array([[1.0], [2.0]]) / np.array([1.0, 2.0, 4.0]))
    assert g.sample(5, rng=0).shape == (5, 2, 3)
    np.testing.assert_allclose(
        Normal([0.0, 1.0], 1.0).logpdf([[0.0], [1.0]]),
        st.norm([0.0, 1.0], 1.0).logpdf([[0.0], [1.0]]),
    )


def test_parameters_are_readable_as_attributes():
    # Every family exposes the parameters it was built with, under their constructor names.
    t = StudentT(7.0, 1.0, 2.0)
    assert (t.df, t.loc, t.scale) == (7.0, 1.0, 2.0)
    assert (Laplace(0.5, 2.0).loc, Laplace(0.5, 2.0).scale) == (0.5, 2.0)
    assert ChiSquared(5.0).df == 5.0
    b = Binomial(12, 0.35)
    assert (b.n, b.p) == (12, 0.35) and isinstance(b.n, int)
    bb = BetaBinomial(9, 2.0, 3.0)
    assert (bb.n, bb.a, bb.b) == (9, 2.0, 3.0)
    np.testing.assert_array_equal(Binomial([3, 4], 0.5).n, [3, 4])
    np.testing.assert_array_equal(StudentT([1.0, 5.0], 0.0, 2.0).scale, [2.0, 2.0])


@pytest.mark.parametrize(
    "ctor",
    [
        lambda m, v: Normal(m, v),
        lambda m, v: Gamma(v, v),
        lambda m, v: StudentT(v, m, v),
        lambda m, v: Laplace(m, v),
        lambda m, v: Beta(v, v),
        lambda m, v: Uniform(m, m + v),
    ],
)
def test_changing_the_callers_arrays_does_not_change_the_distribution(ctor):
    m, v = np.array([0.0, 1.0]), np.array([1.0, 2.0])
    d = ctor(m, v)
    x = np.array([0.3, 0.9])
    before = (d.logpdf(x), d.cdf(x), d.sample(3, rng=0), d.mean)
    m[:] = 5.0
    v[:] = 100.0
    after = (d.logpdf(x), d.cdf(x), d.sample(3, rng=0), d.mean)
    for b, a in zip(before, after, strict=True):
        np.testing.assert_array_equal(a, b)


def test_immutable_and_reproducible():
    n = Normal(0.0, 1.0)
    with pytest.raises(AttributeError, match="immutable"):
        n.mean = 3.0
    assert not isinstance(n, BaseEstimator)
    np.testing.assert_array_equal(n.sample(4, rng=7), n.sample(4, rng=7))
    np.testing.assert_array_equal(n.sample(4, rng=np.random.RandomState(0)).shape, (4,))
    assert "Normal(mean=0.0, var=1.0)" == repr(n)
