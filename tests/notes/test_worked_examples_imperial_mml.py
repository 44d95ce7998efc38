"""Worked examples of Imperial "Mathematics for Machine Learning" not tested elsewhere.

Lecture 2 (normal equations for quadratic features), lecture 3 (a die and two coins), lecture 9
(the maximum-likelihood heights and the coin posterior), lecture 10 (the bandit example and the
independent joint Gaussian) and lecture 11 (the one-parameter Bayesian linear regression toy).
Each against the numbers the notes give or derive, in exact fractions where they are exact.
"""

import numpy as np
import pytest

from mathlearn import autodiff as ad
from mathlearn.distributions import (
    BetaBernoulliModel,
    Categorical,
    MultivariateNormal,
    Normal,
    NormalKnownVarianceModel,
    ProbabilityTable,
)
from mathlearn.linear_model import BayesianLinearRegression, LinearRegression, Ridge
from mathlearn.preprocessing import PolynomialBasis


def test_normal_equations_for_quadratic_features(rng):
    # Lecture 2: L(theta) = 1/2 ||y - Phi theta||^2 with phi(x) = [1, x, x^2];
    # dL/dtheta = -(y - Phi theta)^T Phi = 0  <=>  theta^T Phi^T Phi = y^T Phi.
    x = rng.uniform(-2, 2, 15)
    y = 0.5 - x + 2 * x**2 + 0.1 * rng.standard_normal(15)
    Phi = PolynomialBasis(degree=2).fit_transform(x[:, None])
    np.testing.assert_allclose(Phi, np.column_stack([np.ones(15), x, x**2]), rtol=1e-15)
    theta = LinearRegression(fit_intercept=False).fit(Phi, y).coef_
    np.testing.assert_allclose(theta @ Phi.T @ Phi, y @ Phi, rtol=1e-11)
    loss = lambda th: 0.5 * ad.sum((y - Phi @ th) ** 2)  # noqa: E731
    assert np.linalg.norm(ad.grad(loss)(theta)) <= 1e-11 * np.linalg.norm(Phi.T @ y)


def test_die_event_value_above_three():
    # Lecture 3: Omega = {1, ..., 6}, each face 1/6; the event "value > 3" is {4, 5, 6}.
    die = Categorical(np.full(6, 1 / 6))
    faces = np.arange(1, 7)
    event = faces > 3
    np.testing.assert_array_equal(faces[event], [4, 5, 6])
    assert die.pmf(faces - 1)[event].sum() == pytest.approx(0.5, rel=1e-15)


def test_two_coins_number_of_heads():
    # Lecture 3: Omega = {HT, TH, HH, TT}, X = number of heads: X(TT) = 0, X(HT) = X(TH) = 1,
    # X(HH) = 2, so P(X) = (1/4, 1/2, 1/4); the coins are independent and fair.
    table = ProbabilityTable(np.full((2, 2), 0.25), names=("first", "second"))  # 0 = T, 1 = H
    heads = np.add.outer([0, 1], [0, 1])
    p_x = [table.probs[heads == k].sum() for k in range(3)]
    np.testing.assert_allclose(p_x, [0.25, 0.5, 0.25], rtol=1e-15)
    np.testing.assert_allclose(table.marginal("first").probs, [0.5, 0.5])
    np.testing.assert_allclose(table.condition(second=1).probs, table.marginal("first").probs)


def test_heights_maximum_likelihood():
    # Lecture 9: h = [1.6, 1.7, 1.8]: mu_ML = 1.7, sigma^2_ML = 0.02 / 3 = 0.0066667 (1/N, biased);
    # the unbiased estimate divides by N - 1.
    h = [1.6, 1.7, 1.8]
    fit = Normal.fit(h)
    assert float(fit.mean) == pytest.approx(1.7, rel=1e-15)
    assert float(fit.var) == pytest.approx(0.02 / 3, rel=1e-12)
    assert float(Normal.fit(h, unbiased=True).var) == pytest.approx(0.01, rel=1e-12)


def test_coin_posterior_peaks_at_two_thirds():
    # Lecture 9: s = [1, 1, 0], uniform prior: p(h | s) = 12 h^2 (1 - h) = Beta(3, 2), zero at
    # both ends, mode 2/3 (the MLE), mean 3/5.
    model = BetaBernoulliModel(1.0, 1.0)
    post = model.posterior([1, 1, 0])
    grid = np.linspace(0.0, 1.0, 301)
    np.testing.assert_allclose(post.pdf(grid), 12 * grid**2 * (1 - grid), atol=1e-12)
    assert float(post.mean) == pytest.approx(3 / 5, rel=1e-15)
    assert float(model.map_estimate([1, 1, 0])) == pytest.approx(2 / 3, rel=1e-15)
    assert float(model.ml_estimate([1, 1, 0])) == pytest.approx(2 / 3, rel=1e-15)


@pytest.mark.parametrize("mu, tau, sigma2", [(0.0, 1.0, 1.0), (5.0, 4.0, 1.0), (2.0, 0.5, 3.0)])
def test_bandit_posterior_and_joint(mu, tau, sigma2):
    # Lecture 10: p(x | r) = N(x; r, sigma^2), p(r) = N(r; mu, tau) (tau a variance), x = 10.
    # The MLE is r = 10; the posterior mean is mu + tau / (tau + sigma^2) (x - mu) and the
    # posterior variance tau - tau^2 / (tau + sigma^2) (the corrected form). The same comes
    # from the joint N([mu, mu], [[tau, tau], [tau, tau + sigma^2]]) conditioned on x.
    x = 10.0
    model = NormalKnownVarianceModel(prior_mean=mu, prior_var=tau, noise_var=sigma2)
    assert float(model.ml_estimate([x])) == x
    post = model.posterior([x])
    mean = mu + tau / (tau + sigma2) * (x - mu)
    var = tau - tau**2 / (tau + sigma2)
    assert float(post.mean) == pytest.approx(mean, rel=1e-14)
    assert float(post.var) == pytest.approx(var, rel=1e-14)
    joint = MultivariateNormal([mu, mu], [[tau, tau], [tau, tau + sigma2]])
    cond = joint.condition([1], [x])
    assert float(np.ravel(cond.mean)[0]) == pytest.approx(mean, rel=1e-14)
    assert float(np.ravel(cond.cov)[0]) == pytest.approx(var, rel=1e-13)
    if (mu, tau, sigma2) == (0.0, 4.0, 1.0):
        assert (mean, var) == pytest.approx((8.0, 0.8))


def test_independent_joint_gaussian(rng):
    # Lecture 10: independent heights N(h; mu, sigma^2) and tea strength N(s; m, v) form the
    # joint Gaussian with covariance diag(sigma^2, v): its density is the product.
    mu, sigma2, m, v = 1.7, 0.01, 3.0, 0.5
    joint = MultivariateNormal([mu, m], np.diag([sigma2, v]))
    pts = rng.standard_normal((10, 2)) * [0.1, 0.7] + [mu, m]
    np.testing.assert_allclose(
        joint.logpdf(pts),
        Normal(mu, sigma2).logpdf(pts[:, 0]) + Normal(m, v).logpdf(pts[:, 1]),
        rtol=1e-13,
    )
    np.testing.assert_allclose(joint.marginal([1]).cov, [[v]])


def test_one_parameter_bayesian_linear_regression():
    # Lecture 11 (derived example): Phi = [[1], [1]], y = [1, 2], sigma^2 = 1, prior N(0, 1):
    # posterior Sigma = 1/3, mu = 1; predictive at phi(x*) = 1 has mean 1 and variance 4/3;
    # the posterior mean equals ridge with lambda = sigma^2 / prior variance = 1.
    Phi, y = np.array([[1.0], [1.0]]), np.array([1.0, 2.0])
    blr = BayesianLinearRegression(prior_precision=1.0, noise_precision=1.0, fit_intercept=False)
    blr.fit(Phi, y)
    np.testing.assert_allclose(blr.coef_, [1.0], rtol=1e-14)
    np.testing.assert_allclose(blr.coef_cov_, [[1 / 3]], rtol=1e-14)
    mean, std = blr.predict(np.array([[1.0]]), return_std=True)
    np.testing.assert_allclose(mean, [1.0], rtol=1e-14)
    np.testing.assert_allclose(std**2, [4 / 3], rtol=1e-14)
    ridge = Ridge(alpha=1.0, fit_intercept=False).fit(Phi, y)
    np.testing.assert_allclose(ridge.coef_, blr.coef_, rtol=1e-14)


def test_least_squares_and_ridge_derived_numbers():
    # Lecture 5 and lecture 7 (derived example): X = [[1, 0], [1, 1], [1, 2]], y = [1, 2, 2]:
    # theta* = [7/6, 1/2]; eig(X^T X) = 4 -+ sqrt(10), so gradient descent is stable for step
    # sizes below 2 / (4 + sqrt 10) = 0.2792408; ridge with sigma^2 lambda = 1 (intercept column
    # penalised) gives [0.8, 0.6].
    X, y = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]]), np.array([1.0, 2.0, 2.0])
    np.testing.assert_allclose(
        LinearRegression(fit_intercept=False).fit(X, y).coef_, [7 / 6, 1 / 2], rtol=1e-14
    )
    np.testing.assert_allclose(np.linalg.eigvalsh(X.T @ X), [4 - 10**0.5, 4 + 10**0.5], rtol=1e-14)
    assert 2 / (4 + 10**0.5) == pytest.approx(0.2792408, abs=5e-8)
    np.testing.assert_allclose(
        Ridge(alpha=1.0, fit_intercept=False).fit(X, y).coef_, [0.8, 0.6], rtol=1e-14
    )
