"""BayesianLogisticRegression: the MAP against logistic regression, the Laplace posterior and
evidence against independent numpy formulas, the evidence maximum, the predictive."""

import math
import warnings

import numpy as np
import pytest
from scipy import integrate, optimize, stats
from scipy.special import expit
from sklearn.linear_model import LogisticRegression as SkLogisticRegression

from mathlearn.exceptions import ConvergenceWarning
from mathlearn.inference import probit_approximation
from mathlearn.linear_model import BayesianLogisticRegression


def _data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    y = (X @ [1.0, -2.0, 0.5] + 0.3 + rng.logistic(size=n) > 0).astype(int)
    return X, y


def test_map_and_laplace_posterior_against_independent_formulas():
    X, y = _data()
    alpha = 0.8
    m = BayesianLogisticRegression(prior_precision=alpha, tol=1e-12).fit(X, y)
    # The MAP is the L2-penalised estimate with every weight penalised, i.e. scikit-learn's
    # logistic regression on [X, 1] without its own intercept and C = 1 / alpha.
    Xt = np.hstack([X, np.ones((len(X), 1))])
    ref = SkLogisticRegression(
        C=1 / alpha, fit_intercept=False, tol=1e-12, solver="newton-cholesky"
    )
    ref.fit(Xt, y)
    w = np.r_[m.coef_[0], m.intercept_]
    # Both stop at (mean) gradient ~1e-12 and the Hessian's smallest eigenvalue is >= alpha.
    np.testing.assert_allclose(w, ref.coef_[0], rtol=0, atol=1e-9)
    p = expit(Xt @ w)
    H = (Xt.T * (p * (1 - p))) @ Xt + alpha * np.eye(4)
    np.testing.assert_allclose(m.coef_cov_, np.linalg.inv(H), rtol=1e-10, atol=1e-14)
    log_joint = np.sum(stats.bernoulli.logpmf(y, p)) + stats.multivariate_normal(
        np.zeros(4), np.eye(4) / alpha
    ).logpdf(w)
    laplace = log_joint + 2 * math.log(2 * math.pi) - 0.5 * np.linalg.slogdet(H)[1]
    assert m.log_evidence_ == pytest.approx(laplace, abs=1e-10)
    assert m.effective_params_ == pytest.approx(4 - alpha * np.trace(np.linalg.inv(H)), rel=1e-10)
    mean, var = m.predict_latent(X[:5])
    np.testing.assert_allclose(mean, Xt[:5] @ w, rtol=1e-12)
    np.testing.assert_allclose(
        var, np.einsum("ij,jk,ik->i", Xt[:5], np.linalg.inv(H), Xt[:5]), rtol=1e-10
    )


def test_evidence_maximisation_finds_the_maximum_of_the_laplace_evidence():
    X, y = _data()
    m = BayesianLogisticRegression(tol=1e-12).fit(X, y)

    def evidence(log_alpha):
        return (
            BayesianLogisticRegression(prior_precision=math.exp(log_alpha), tol=1e-12)
            .fit(X, y)
            .log_evidence_
        )

    la = math.log(m.prior_precision_)
    assert m.log_evidence_ == pytest.approx(evidence(la), abs=1e-10)
    # Central difference in log alpha: truncation h^2 |f'''| / 6 ~ 1e-8, rounding
    # 1e-14 / h ~ 1e-10; the derivative at the fixed point is zero up to those.
    h = 1e-4
    deriv = (evidence(la + h) - evidence(la - h)) / (2 * h)
    assert abs(deriv) < 1e-7
    # And the curvature says it is a maximum.
    assert evidence(la + 0.1) < m.log_evidence_ and evidence(la - 0.1) < m.log_evidence_
    # A bounded scalar search on the same function lands on the same alpha.
    r = optimize.minimize_scalar(lambda t: -evidence(t), bracket=(la - 1, la, la + 1), tol=1e-8)
    assert math.exp(r.x) == pytest.approx(m.prior_precision_, rel=1e-5)


def test_probit_worked_example():
    # Stuttgart notes: f* = 2, s^2 = 4 gives sigma(2 / sqrt(1 + pi / 2)) = 0.77684.
    assert round(float(probit_approximation(2.0, 4.0)), 5) == 0.77684
    assert float(probit_approximation(2.0, 4.0)) == pytest.approx(
        1 / (1 + math.exp(-2 / math.sqrt(1 + math.pi / 2))), rel=1e-15
    )


def _exact_predictive(mu, s2):
    s = math.sqrt(s2)
    return integrate.quad(
        lambda f: expit(f) * stats.norm.pdf(f, mu, s), mu - 40 * s, mu + 40 * s, epsabs=1e-14
    )[0]


def test_mc_and_probit_predictive_against_the_integral():
    X, y = _data(n=30, seed=1)
    m = BayesianLogisticRegression(prior_precision=0.5, n_mc_samples=20000, random_state=0).fit(
        X, y
    )
    Xq = np.vstack([X[:4], 5 * np.random.default_rng(2).standard_normal((4, 3))])
    mean, var = m.predict_latent(Xq)
    exact = np.array([_exact_predictive(a, b) for a, b in zip(mean, var, strict=True)])
    mc = m.predict_proba_with(Xq, "mc")[:, 1]
    # MC: a mean of 20000 draws of sigma(f) in [0, 1]; its standard error is at most
    # sqrt(Var sigma(f) / M); 5 standard errors.
    se = np.sqrt(
        np.array(
            [
                integrate.quad(
                    lambda f, a=a, b=b, e=e: (
                        (expit(f) - e) ** 2 * stats.norm.pdf(f, a, math.sqrt(b))
                    ),
                    a - 40 * math.sqrt(b),
                    a + 40 * math.sqrt(b),
                )[0]
                for a, b, e in zip(mean, var, exact, strict=True)
            ]
        )
        / 20000
    )
    assert np.all(np.abs(mc - exact) <= 5 * se + 1e-12)
    # Probit: the integrand's sigma is replaced by Phi(sqrt(pi/8) f); averaging over a density
    # cannot increase the sup-norm error of that replacement.
    grid = np.linspace(-20, 20, 400001)
    sup = np.max(np.abs(expit(grid) - stats.norm.cdf(math.sqrt(math.pi / 8) * grid)))
    probit = m.predict_proba(Xq)[:, 1]
    assert np.all(np.abs(probit - exact) <= sup)
    np.testing.assert_allclose(probit, probit_approximation(mean, var), rtol=1e-12)


def test_predictive_is_less_confident_than_the_map_plugin_and_wider_far_from_data():
    X, y = _data(n=40, seed=3)
    m = BayesianLogisticRegression(prior_precision=1.0).fit(X, y)
    Xq = np.random.default_rng(4).standard_normal((50, 3)) * np.linspace(0.1, 10, 50)[:, None]
    p_map = m.predict_proba_with(Xq, "map")[:, 1]
    p_bayes = m.predict_proba(Xq)[:, 1]
    # sigma(kappa mu) with 0 < kappa <= 1 is between 1/2 and sigma(mu).
    assert np.all(np.abs(p_bayes - 0.5) <= np.abs(p_map - 0.5) + 1e-15)
    np.testing.assert_array_equal(m.predict(Xq), (p_map > 0.5).astype(int))
    _, var = m.predict_latent(np.array([[0.0, 0, 0], [10.0, 10, 10]]))
    assert var[1] > var[0]


def test_bad_inputs():
    X, y = _data(n=30)
    with pytest.raises(ValueError, match="at least 2 classes"):
        BayesianLogisticRegression().fit(X, np.ones(30))
    with pytest.raises(ValueError, match="Only binary"):
        BayesianLogisticRegression().fit(X, np.arange(30) % 3)
    Xn = X.copy()
    Xn[1, 1] = np.inf
    with pytest.raises(ValueError, match=r"infinity|NaN"):
        BayesianLogisticRegression().fit(Xn, y)
    with pytest.raises(ValueError, match="non-zero"):
        BayesianLogisticRegression().fit(X, y, sample_weight=np.zeros(30))
    with pytest.raises(ValueError, match="Rescale X"):
        BayesianLogisticRegression().fit(X * 1e300, y)
    names = np.array(["no", "yes"])[y]
    a = BayesianLogisticRegression(prior_precision=1.0).fit(X, names)
    b = BayesianLogisticRegression(prior_precision=1.0).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), np.array(["no", "yes"])[b.predict(X)])


def test_separable_data():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    t = np.array([0, 0, 1, 1])
    # With a prior the posterior exists and is finite.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = BayesianLogisticRegression(prior_precision=0.1).fit(X, t)
    assert np.all(np.isfinite(m.coef_cov_)) and np.isfinite(m.log_evidence_)
    np.testing.assert_array_equal(m.predict(X), t)
    # The evidence has no finite maximiser here: a warning says so.
    with pytest.warns(ConvergenceWarning, match="no finite"):
        BayesianLogisticRegression(max_iter=30).fit(X, t)
