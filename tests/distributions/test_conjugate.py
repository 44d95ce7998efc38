"""Conjugate models: posteriors, predictives and evidences against brute-force numerical
integration on a grid / by quadrature; sequential = batch updating; Bayes factors."""

from math import comb, factorial

import numpy as np
import pytest
from scipy import integrate
from scipy.special import gammaln

from mathlearn.distributions import (
    Bernoulli,
    Beta,
    BetaBernoulliModel,
    BetaBinomialModel,
    Categorical,
    Dirichlet,
    DirichletCategoricalModel,
    DirichletMultinomialModel,
    Gamma,
    GammaPrecisionModel,
    MultivariateNormal,
    Normal,
    NormalGammaModel,
    NormalKnownVarianceModel,
    NormalWishartModel,
    bayes_factor,
    log_marginal_likelihood,
)

FLIPS = np.array([1, 0, 1, 1, 1, 0, 1, 1])
X = np.array([0.8, 1.9, 1.2, 2.6, 0.4, 1.5])


def test_beta_bernoulli_against_grid():
    model = BetaBernoulliModel(2.0, 3.0)
    h, t = FLIPS.sum(), FLIPS.size - FLIPS.sum()
    mu = np.linspace(1e-6, 1 - 1e-6, 20_001)
    unnorm = Beta(2.0, 3.0).pdf(mu) * mu**h * (1 - mu) ** t
    z = integrate.trapezoid(unnorm, mu)
    post = model.posterior(FLIPS)
    np.testing.assert_allclose(post.pdf(mu[::500]), (unnorm / z)[::500], rtol=1e-6, atol=1e-8)
    assert np.exp(model.log_marginal_likelihood(FLIPS)) == pytest.approx(z, rel=1e-7)
    # Posterior predictive P(x=1 | D) = posterior mean of mu.
    pred = model.update(FLIPS).predictive()
    assert pred.p == pytest.approx(integrate.trapezoid(mu * unnorm, mu) / z, rel=1e-7)
    # Imperial "Mathematics for Inference and Machine Learning" §1.2.4, eq. 1.56: posterior Beta(h
    # + a, t + b).
    assert (post.a, post.b) == (2.0 + h, 3.0 + t)
    # MAP = posterior mode; ML = fraction of ones; uniform prior makes them equal.
    assert model.map_estimate(FLIPS) == pytest.approx(mu[np.argmax(unnorm)], abs=1e-4)
    assert BetaBernoulliModel(1, 1).map_estimate(FLIPS) == pytest.approx(
        BetaBernoulliModel.ml_estimate(FLIPS)
    )
    # ... also when every flip is heads: the posterior Beta(h + 1, 1) peaks at mu = 1.
    heads = np.ones(4)
    assert (
        BetaBernoulliModel(1, 1).map_estimate(heads)
        == 1.0
        == BetaBernoulliModel.ml_estimate(heads)
    )
    assert BetaBernoulliModel(1, 1).map_estimate(1 - heads) == 0.0
    with pytest.raises(ValueError, match="mode"):
        BetaBernoulliModel(1, 1).map_estimate([])  # flat: no unique mode
    with pytest.raises(ValueError, match="mode"):
        BetaBernoulliModel(0.5, 0.5).map_estimate([1])  # unbounded at mu = 0


def test_beta_binomial_model_against_quadrature():
    model = BetaBinomialModel(5, 1.5, 2.5)
    k = np.array([3, 1, 4])

    def integrand(mu):
        return Beta(1.5, 2.5).pdf(mu) * np.prod(
            [comb(5, int(j)) * mu**j * (1 - mu) ** (5 - j) for j in k]
        )

    z, _ = integrate.quad(integrand, 0, 1, epsabs=1e-14)
    assert np.exp(model.log_marginal_likelihood(k)) == pytest.approx(z, rel=1e-8)
    post = model.posterior(k)
    assert (post.a, post.b) == (1.5 + 8, 2.5 + 7)
    # The predictive count distribution sums the binomial over the posterior.
    pred = model.update(k).predictive()
    for j in range(6):
        ref, _ = integrate.quad(
            lambda mu, j=j: post.pdf(mu) * comb(5, j) * mu**j * (1 - mu) ** (5 - j), 0, 1
        )
        assert pred.pmf(j) == pytest.approx(ref, rel=1e-7)
    assert model.ml_estimate(k) == pytest.approx(8 / 15)


def test_dirichlet_models_against_quadrature():
    alpha = np.array([1.5, 2.0, 1.0])
    data = np.array([0, 2, 1, 1, 0, 1])
    model = DirichletCategoricalModel(alpha)
    counts = np.bincount(data, minlength=3)

    def joint(p1, p0):
        p = np.array([p0, p1, 1 - p0 - p1])
        return Dirichlet(alpha).pdf(p) * np.prod(p**counts)

    z, _ = integrate.dblquad(joint, 0, 1, lambda _: 0, lambda p0: 1 - p0, epsabs=1e-13)
    assert np.exp(model.log_marginal_likelihood(data)) == pytest.approx(z, rel=1e-6)
    np.testing.assert_allclose(model.posterior(data).alpha, alpha + counts)
    np.testing.assert_allclose(model.update(data).predictive().probs, (alpha + counts) / 10.5)
    np.testing.assert_allclose(model.ml_estimate(data), counts / 6)
    np.testing.assert_allclose(model.map_estimate(data), (alpha + counts - 1) / (10.5 - 3))
    # Uniform prior: MAP = ML, also for a category never seen (mode on the boundary).
    uniform = DirichletCategoricalModel([1.0, 1.0, 1.0])
    np.testing.assert_allclose(uniform.map_estimate([0, 0, 1]), [2 / 3, 1 / 3, 0.0])
    with pytest.raises(ValueError, match="mode"):
        DirichletCategoricalModel([0.5, 1.0, 1.0]).map_estimate([1, 2])
    np.testing.assert_allclose(
        model.update_counts(counts).prior.alpha, model.update(data).prior.alpha
    )
    # Multinomial counts: evidence = categorical evidence x multinomial coefficients.
    M = np.array([[2, 1, 0], [0, 2, 1]])
    mm = DirichletMultinomialModel(3, alpha)
    seq = np.repeat(np.arange(3), M.sum(0))
    coef = np.sum(gammaln(4) - gammaln(M + 1).sum(1))
    assert mm.log_marginal_likelihood(M) == pytest.approx(
        coef + model.log_marginal_likelihood(seq), rel=1e-12
    )
    assert mm.update(M).predictive().pmf([1, 1, 1]) > 0


def test_normal_known_variance_against_grid():
    model = NormalKnownVarianceModel(0.5, 2.0, 0.7)
    mu = np.linspace(-8, 10, 40_001)
    unnorm = Normal(0.5, 2.0).pdf(mu) * np.prod(Normal(mu[:, None], 0.7).pdf(X), axis=1)
    z = integrate.trapezoid(unnorm, mu)
    post = model.posterior(X)
    np.testing.assert_allclose(post.pdf(mu[::1000]), (unnorm / z)[::1000], rtol=1e-6, atol=1e-12)
    assert np.exp(model.log_marginal_likelihood(X)) == pytest.approx(z, rel=1e-7)
    # Evidence equals log N(x | m0 1, sigma^2 I + v0 1 1^T) computed directly.
    n = X.size
    direct = MultivariateNormal(np.full(n, 0.5), 0.7 * np.eye(n) + 2.0 * np.ones((n, n)))
    assert model.log_marginal_likelihood(X) == pytest.approx(direct.logpdf(X), rel=1e-12)
    pred = model.update(X).predictive()
    assert pred.var == pytest.approx(post.var + 0.7)
    # MAP -> ML as the prior variance grows (Imperial
    # "Mathematics for Inference and Machine Learning" §1.5.4).
    assert NormalKnownVarianceModel(0.0, 1e12, 0.7).map_estimate(X) == pytest.approx(X.mean())


def test_gamma_precision_against_quadrature():
    model = GammaPrecisionModel(1.0, 2.0, 1.5)

    def unnorm(tau):
        return Gamma(2.0, 1.5).pdf(tau) * np.prod(Normal(1.0, 1 / tau).pdf(X))

    z, _ = integrate.quad(unnorm, 0, np.inf, epsabs=1e-15)
    assert np.exp(model.log_marginal_likelihood(X)) == pytest.approx(z, rel=1e-7)
    post = model.posterior(X)
    for tau in (0.3, 1.0, 2.5):
        assert post.pdf(tau) == pytest.approx(unnorm(tau) / z, rel=1e-7)
    # The predictive Student t integrates the Gaussian against the posterior.
    pred = model.update(X).predictive()
    for x in (-1.0, 1.0, 4.0):
        ref, _ = integrate.quad(
            lambda tau, x=x: post.pdf(tau) * Normal(1.0, 1 / tau).pdf(x), 0, np.inf
        )
        assert pred.pdf(x) == pytest.approx(ref, rel=1e-7)
    assert model.ml_estimate(X) == pytest.approx(1 / np.mean((X - 1.0) ** 2))


def test_normal_gamma_against_grid():
    model = NormalGammaModel(0.0, 0.5, 2.0, 1.0)
    prior = model.prior
    mu = np.linspace(-4.0, 6.0, 1201)[:, None]
    tau = np.linspace(1e-8, 12.0, 1501)[None, :]
    # Gaussian log-likelihood through its sufficient statistics.
    n, ss = X.size, ((X[None, :] - mu) ** 2).sum(1, keepdims=True)
    loglik = 0.5 * n * np.log(tau / (2 * np.pi)) - 0.5 * tau * ss
    unnorm = prior.pdf(mu, tau) * np.exp(loglik)
    z = integrate.trapezoid(integrate.trapezoid(unnorm, tau[0], axis=1), mu[:, 0])
    assert np.exp(model.log_marginal_likelihood(X)) == pytest.approx(z, rel=1e-5)
    post = model.posterior(X)
    i, j = np.unravel_index(np.argsort(unnorm, axis=None)[-50:], unnorm.shape)
    np.testing.assert_allclose(post.pdf(mu[i, 0], tau[0, j]), unnorm[i, j] / z, rtol=1e-5)
    pred = model.update(X).predictive()
    dens = post.pdf(mu, tau)
    for x in (0.0, 1.4, 3.0):
        inner = dens * np.sqrt(tau / (2 * np.pi)) * np.exp(-0.5 * tau * (x - mu) ** 2)
        ref = integrate.trapezoid(integrate.trapezoid(inner, tau[0], axis=1), mu[:, 0])
        assert pred.pdf(x) == pytest.approx(ref, rel=1e-4)
    # ML estimate uses the biased 1/N variance.
    m, t = NormalGammaModel.ml_estimate(X)
    assert m == pytest.approx(X.mean()) and t == pytest.approx(1 / X.var())
    # MAP = the joint posterior mode, which the grid locates.
    mu_map, tau_map = model.map_estimate(X)
    k, ell = np.unravel_index(np.argmax(unnorm), unnorm.shape)
    assert mu_map == pytest.approx(mu[k, 0], abs=0.01)
    assert tau_map == pytest.approx(tau[0, ell], abs=0.01)


def test_normal_wishart_reduces_to_normal_gamma_and_chain_rule(rng):
    nw = NormalWishartModel([0.2], 0.5, 3.0, [[0.8]])
    ng = NormalGammaModel(0.2, 0.5, 1.5, 1 / 1.6)
    assert nw.log_marginal_likelihood(X[:, None]) == pytest.approx(
        ng.log_marginal_likelihood(X), rel=1e-12
    )
    assert nw.update(X[:, None]).predictive().logpdf([1.0]) == pytest.approx(
        ng.update(X).predictive().logpdf(1.0), rel=1e-12
    )
    # 2-D: log p(D) = sum_i log p(x_i | x_<i) with the predictive Student t.
    model = NormalWishartModel([0.0, 1.0], 1.0, 4.0, [[1.0, 0.2], [0.2, 0.5]])
    D = rng.normal(size=(5, 2)) + np.array([0.5, 1.0])
    total, m = 0.0, model
    for x in D:
        total += m.predictive().logpdf(x)
        m = m.update(x[None])
    assert model.log_marginal_likelihood(D) == pytest.approx(total, rel=1e-10)
    # Evidence against a Monte Carlo average of the likelihood over the prior.
    mus, lams = model.prior.sample(20_000, rng=1)
    # log N(D | mu, Lambda^-1) for every prior draw at once.
    dev = D[None, :, :] - mus[:, None, :]
    quad = np.einsum("snd,sde,sne->s", dev, lams, dev)
    logdet = np.linalg.slogdet(lams)[1]
    lik = np.exp(0.5 * D.shape[0] * (logdet - 2 * np.log(2 * np.pi)) - 0.5 * quad)
    se = lik.std(ddof=1) / np.sqrt(lik.size)
    assert abs(lik.mean() - np.exp(model.log_marginal_likelihood(D))) < 5 * se
    _, S = model.ml_estimate(D)
    np.testing.assert_allclose(S, np.cov(D.T, bias=True))
    assert model.map_estimate(D)[1].shape == (2, 2)


def test_normal_wishart_posterior_is_prior_times_likelihood_over_evidence(rng):
    """Bayes' rule pointwise in 2-D: log p(mu, Lambda | D) - log p(mu, Lambda)
    - log p(D | mu, Lambda) = -log p(D) at every (mu, Lambda). This checks the posterior
    parameters and the evidence against the prior density and the Gaussian likelihood
    alone (the parameter space is 5-dimensional, too large for a grid)."""
    model = NormalWishartModel([0.3, -0.2], 0.7, 4.5, [[0.6, 0.1], [0.1, 0.4]])
    D = rng.normal(size=(7, 2)) @ np.array([[1.0, 0.4], [0.0, 0.8]]) + [1.0, 0.5]
    post = model.posterior(D)
    log_z = model.log_marginal_likelihood(D)
    mus, lams = model.prior.sample(12, rng=2)
    for mu, lam in zip(mus, lams, strict=True):
        lik = MultivariateNormal.from_precision(mu, lam).logpdf(D).sum()
        lhs = post.logpdf(mu, lam) - model.prior.logpdf(mu, lam) - lik
        assert lhs == pytest.approx(-log_z, abs=1e-9)


def test_normal_wishart_entropy_against_monte_carlo():
    from mathlearn.distributions import NormalWishart

    nw = NormalWishart([0.3, -0.2], 0.7, 4.5, [[0.6, 0.1], [0.1, 0.4]])
    mus, lams = nw.sample(20_000, rng=3)
    # log p(mu, Lambda) = log N(mu | m, (kappa Lambda)^-1) + log W(Lambda), vectorised.
    m, kappa = nw.params[0], nw.params[1]
    dev = mus - m
    logdet = np.linalg.slogdet(lams)[1]
    log_n = 0.5 * (2 * np.log(kappa / (2 * np.pi)) + logdet) - 0.5 * kappa * np.einsum(
        "si,sij,sj->s", dev, lams, dev
    )
    lp = -(log_n + nw.marginal_precision().logpdf(lams))
    assert -lp[0] == pytest.approx(nw.logpdf(mus[0], lams[0]), rel=1e-12)
    assert abs(lp.mean() - nw.entropy()) < 5 * lp.std(ddof=1) / np.sqrt(lp.size)


@pytest.mark.parametrize(
    ("model", "data"),
    [
        (BetaBernoulliModel(2.0, 1.0), FLIPS),
        (BetaBinomialModel(4, 1.0, 2.0), np.array([1, 3, 4, 0, 2])),
        (DirichletCategoricalModel([1.0, 2.0, 0.5]), np.array([0, 2, 2, 1, 0, 1])),
        (DirichletMultinomialModel(2, [1.0, 1.0]), np.array([[1, 1], [2, 0], [0, 2]])),
        (NormalKnownVarianceModel(0.0, 3.0, 0.5), X),
        (GammaPrecisionModel(1.0, 2.0, 2.0), X),
        (NormalGammaModel(0.0, 1.0, 2.0, 2.0), X),
        (NormalWishartModel([0.0, 0.0], 1.0, 3.0, np.eye(2)), X.reshape(3, 2)),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, np.ndarray) else "",
)
def test_sequential_equals_batch_and_chain_rule(model, data):
    """Updating in two batches equals one batch (PRML §2.1.1); the evidence factorises into the
    one-step predictives, log p(D) = sum_i log p(x_i | x_<i)."""
    split = len(data) // 2
    batch = model.update(data)
    seq = model.update(data[:split]).update(data[split:])
    for (k1, v1), (k2, v2) in zip(batch._params().items(), seq._params().items(), strict=True):
        assert k1 == k2
        np.testing.assert_allclose(v1, v2, rtol=1e-12)
    total, m = 0.0, model
    for x in data:
        xi = np.asarray([x])
        total += m.log_marginal_likelihood(xi)
        m = m.update(xi)
    assert model.log_marginal_likelihood(data) == pytest.approx(total, rel=1e-10)
    # The one-step evidence is the predictive density of that observation.
    first = np.asarray([data[0]])
    pred = model.predictive()
    assert model.log_marginal_likelihood(first) == pytest.approx(
        float(np.sum(pred.logpdf(data[0]))), rel=1e-10
    )


@pytest.mark.parametrize(("heads", "n"), [(9, 10), (5, 10), (2, 3), (50, 100)])
def test_bayes_factor_fair_coin_against_unknown_bias(heads, n):
    flips = np.r_[np.ones(heads), np.zeros(n - heads)]
    # Uniform prior: p(D | unknown bias) = h! t! / (n + 1)!.
    exact = 0.5**n * factorial(n + 1) / (factorial(heads) * factorial(n - heads))
    assert bayes_factor(Bernoulli(0.5), BetaBernoulliModel(1, 1), flips) == pytest.approx(
        exact, rel=1e-10
    )
    assert bayes_factor(
        Bernoulli(0.5), BetaBernoulliModel(1, 1), flips, log=True
    ) == pytest.approx(np.log(exact), rel=1e-10)
    assert log_marginal_likelihood(Bernoulli(0.5), flips) == pytest.approx(n * np.log(0.5))


def test_models_are_immutable_and_validate_data():
    m = BetaBernoulliModel(1, 1)
    m2 = m.update([1, 1])
    assert m.prior.a == 1.0 and m2.prior.a == 3.0
    with pytest.raises(AttributeError, match="immutable"):
        m.prior = Beta(2, 2)
    with pytest.raises(ValueError, match="0 or 1"):
        m.update([0, 2])
    with pytest.raises(ValueError, match="NaN"):
        NormalGammaModel().update([1.0, np.nan])
    with pytest.raises(ValueError, match="integers in"):
        DirichletCategoricalModel([1, 1]).update([0, 3])
    with pytest.raises(ValueError, match="shape"):
        NormalWishartModel([0.0, 0.0], 1.0, 3.0, np.eye(2)).update(np.ones((3, 3)))
    with pytest.raises(ValueError, match="summing to 3"):
        DirichletMultinomialModel(3, [1, 1]).update([[1, 1]])
    with pytest.raises(ValueError, match="var"):
        NormalKnownVarianceModel(0.0, -1.0, 1.0)
    with pytest.raises(ValueError, match="n_trials"):
        BetaBinomialModel(0)
    assert isinstance(DirichletCategoricalModel([1, 1]).predictive(), Categorical)


@pytest.mark.parametrize(
    ("model", "empty"),
    [
        (BetaBernoulliModel(), []),
        (BetaBinomialModel(3), []),
        (DirichletCategoricalModel([1.0, 1.0]), []),
        (DirichletMultinomialModel(2, [1.0, 1.0]), np.zeros((0, 2))),
        (NormalKnownVarianceModel(), []),
        (GammaPrecisionModel(), []),
        (NormalGammaModel(), []),
        (NormalWishartModel([0.0, 0.0], 1.0, 3.0, np.eye(2)), np.zeros((0, 2))),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, np.ndarray | list) else "",
)
def test_ml_estimate_without_data_is_a_clear_error(model, empty):
    # Without a prior there is nothing to estimate from: an error, not a NaN (or a warning).
    with pytest.raises(ValueError, match="at least"):
        model.ml_estimate(empty)
    # The Bayesian quantities are still defined: the posterior is the prior.
    assert repr(model.update(empty)) == repr(model)


def test_ml_precision_of_data_equal_to_the_mean_is_a_clear_error():
    with pytest.raises(ValueError, match="infinite"):
        GammaPrecisionModel(1.0).ml_estimate([1.0, 1.0])


@pytest.mark.parametrize(
    ("ctor", "message"),
    [
        (lambda: BetaBernoulliModel([1.0, 2.0], 1.0), "a must be a scalar"),
        (lambda: BetaBinomialModel(np.nan), "n_trials must be finite"),
        (lambda: BetaBinomialModel(2.5), "n_trials must be an integer"),
        (lambda: DirichletCategoricalModel([[1.0, 1.0], [2.0, 2.0]]), "1-D"),
        (lambda: DirichletMultinomialModel(0, [1.0, 1.0]), "n_trials must be >= 1"),
        (lambda: NormalKnownVarianceModel([0.0, 1.0], 1.0, 1.0), "prior_mean must be a scalar"),
        (lambda: NormalKnownVarianceModel(0.0, 1.0, 0.0), "noise_var"),
        (lambda: GammaPrecisionModel(0.0, -1.0, 1.0), "shape"),
        (lambda: NormalGammaModel([0.0, 1.0]), "mean must be a scalar"),
        (lambda: NormalWishartModel([0.0], [1.0, 2.0], 3.0, [[1.0]]), "kappa must be a scalar"),
        (lambda: NormalWishartModel([0.0], 1.0, np.nan, [[1.0]]), "df must be finite"),
    ],
)
def test_bad_model_parameters_raise_clearly(ctor, message):
    # Conjugate models hold one prior (no batch): arrays and NaN get a message naming the
    # parameter, not a TypeError from float() or int().
    with pytest.raises(ValueError, match=message):
        ctor()
