"""BayesianLinearRegression with a general Gaussian prior N(m0, S0) and the latent variance.

Reference: the posterior of PRML eq. 3.49-3.51 / Imperial "Mathematics for Inference and
Machine Learning" eq. 1.213-1.215 computed densely in the test (explicit inverses of small,
well-conditioned matrices), and the evidence as the Gaussian density N(t | Phi m0, Phi S0
Phi^T + I / beta) from scipy.
"""

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from mathlearn.linear_model import BayesianLinearRegression


def _problem(seed=0, n=30, m=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, m))
    w = rng.standard_normal(m)
    y = X @ w + 0.3 * rng.standard_normal(n)
    A = rng.standard_normal((m, m))
    S0 = A @ A.T / m + 0.5 * np.eye(m)
    m0 = rng.standard_normal(m)
    return X, y, m0, S0


def _dense_posterior(X, y, m0, S0, beta):
    SN = np.linalg.inv(np.linalg.inv(S0) + beta * X.T @ X)
    mN = SN @ (np.linalg.solve(S0, m0) + beta * X.T @ y)
    return mN, SN


def test_posterior_matches_dense_formulas():
    X, y, m0, S0 = _problem()
    beta = 8.0
    model = BayesianLinearRegression(
        fit_intercept=False, noise_precision=beta, prior_mean=m0, prior_covariance=S0
    ).fit(X, y)
    mN, SN = _dense_posterior(X, y, m0, S0, beta)
    # cond(S_N^{-1}) ~ 1e2 here: explicit inverses lose ~1e-14 relative.
    np.testing.assert_allclose(model.coef_, mN, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.coef_cov_, SN, rtol=1e-10, atol=1e-14)
    evidence = multivariate_normal.logpdf(y, X @ m0, X @ S0 @ X.T + np.eye(len(y)) / beta)
    assert model.log_evidence_ == pytest.approx(evidence, rel=1e-10)
    gamma = X.shape[1] - np.trace(np.linalg.solve(S0, SN))
    assert model.effective_params_ == pytest.approx(gamma, rel=1e-10)
    assert model.prior_precision_ is None


def test_isotropic_limit_equals_fixed_alpha():
    X, y, _, _ = _problem(1)
    alpha = 2.5
    for fit_intercept in (False, True):
        general = BayesianLinearRegression(
            fit_intercept=fit_intercept, prior_covariance=np.eye(4) / alpha
        ).fit(X, y)
        iso = BayesianLinearRegression(fit_intercept=fit_intercept, prior_precision=alpha).fit(
            X, y
        )
        # Same model, beta estimated in both: the same fixed point to its tolerance 1e-8.
        assert general.noise_precision_ == pytest.approx(iso.noise_precision_, rel=1e-7)
        np.testing.assert_allclose(general.coef_, iso.coef_, rtol=1e-7)
        np.testing.assert_allclose(general.coef_cov_, iso.coef_cov_, rtol=1e-6)
        assert general.log_evidence_ == pytest.approx(iso.log_evidence_, rel=1e-9)
        assert general.intercept_ == pytest.approx(iso.intercept_, rel=1e-7, abs=1e-9)


def test_prior_mean_with_evidence_maximisation():
    X, y, m0, _ = _problem(2)
    model = BayesianLinearRegression(fit_intercept=False, prior_mean=m0).fit(X, y)
    alpha, beta = model.prior_precision_, model.noise_precision_
    mN, SN = _dense_posterior(X, y, m0, np.eye(4) / alpha, beta)
    np.testing.assert_allclose(model.coef_, mN, rtol=1e-10)
    # At the evidence maximum the MacKay conditions hold with m_N - m_0 in place of m_N.
    gamma = 4 - alpha * np.trace(SN)
    assert alpha == pytest.approx(gamma / np.sum((mN - m0) ** 2), rel=1e-6)
    assert beta == pytest.approx((len(y) - gamma) / np.sum((y - X @ mN) ** 2), rel=1e-6)


def test_prediction_with_intercept():
    X, y, m0, S0 = _problem(3)
    y = y + 5.0
    beta = 4.0
    model = BayesianLinearRegression(noise_precision=beta, prior_mean=m0, prior_covariance=S0).fit(
        X, y
    )
    # Centred model: the prior is on the weights of the centred features.
    xm, ym = X.mean(0), y.mean()
    mN, SN = _dense_posterior(X - xm, y - ym, m0, S0, beta)
    np.testing.assert_allclose(model.coef_, mN, rtol=1e-10)
    assert model.intercept_ == pytest.approx(ym - xm @ mN, rel=1e-10)
    Xq = np.random.default_rng(9).standard_normal((5, 4))
    mean, std = model.predict(Xq, return_std=True)
    latent = model.predict(Xq, return_std=True, noisy=False)[1]
    D = Xq - xm
    np.testing.assert_allclose(mean, Xq @ mN + ym - xm @ mN, rtol=1e-10)
    np.testing.assert_allclose(latent**2, np.einsum("ij,jk,ik->i", D, SN, D), rtol=1e-9)
    np.testing.assert_allclose(std**2 - latent**2, 1 / beta, rtol=1e-10)


def test_latent_variance_isotropic():
    X, y, _, _ = _problem(4)
    model = BayesianLinearRegression().fit(X, y)
    noisy = model.predict(X, return_std=True)[1]
    latent = model.predict(X, return_std=True, noisy=False)[1]
    np.testing.assert_allclose(noisy**2 - latent**2, 1 / model.noise_precision_, rtol=1e-10)
    assert np.all(latent < noisy)


def test_sequential_equals_batch_with_general_prior():
    X, y, m0, S0 = _problem(5, n=40)
    kw = dict(fit_intercept=False, noise_precision=5.0, prior_mean=m0, prior_covariance=S0)
    batch = BayesianLinearRegression(**kw).fit(X, y)
    seq = BayesianLinearRegression(**kw)
    for i in range(0, 40, 10):
        seq.partial_fit(X[i : i + 10], y[i : i + 10])
    np.testing.assert_allclose(seq.coef_, batch.coef_, rtol=1e-9)
    np.testing.assert_allclose(seq.coef_cov_, batch.coef_cov_, rtol=1e-9)
    assert seq.log_evidence_ == pytest.approx(batch.log_evidence_, rel=1e-10)
    assert seq.effective_params_ == pytest.approx(batch.effective_params_, rel=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(prior_covariance=np.diag([1.0, 1.0, -1.0, 1.0])), "not positive definite"),
        (dict(prior_covariance=np.eye(3)), r"shape \(4, 4\)"),
        (dict(prior_covariance=np.triu(np.ones((4, 4)))), "symmetric"),
        (dict(prior_covariance=np.full((4, 4), np.nan)), "finite"),
        (dict(prior_mean=np.zeros(5)), r"shape \(4,\)"),
        (dict(prior_mean=[0.0, np.inf, 0.0, 0.0]), "finite"),
        (dict(prior_covariance=np.eye(4), prior_precision=1.0), "give one of them"),
    ],
)
def test_bad_priors(kwargs, match):
    X, y, _, _ = _problem()
    with pytest.raises(ValueError, match=match):
        BayesianLinearRegression(**kwargs).fit(X, y)


@pytest.mark.parametrize("scale", [1e-150, 1e150])
def test_extreme_scales(scale):
    # y -> s y with m0 -> s m0 and S0 -> s^2 S0 is the same model in other units.
    X, y, m0, S0 = _problem(6)
    beta = 10.0
    ref = BayesianLinearRegression(
        fit_intercept=False, noise_precision=beta, prior_mean=m0, prior_covariance=S0
    ).fit(X, y)
    model = BayesianLinearRegression(
        fit_intercept=False,
        noise_precision=beta / scale**2,
        prior_mean=m0 * scale,
        prior_covariance=S0 * scale**2,
    ).fit(X, y * scale)
    np.testing.assert_allclose(model.coef_ / scale, ref.coef_, rtol=1e-10)
    np.testing.assert_allclose(model.coef_cov_ / scale**2, ref.coef_cov_, rtol=1e-10)
    std = model.predict(X[:3], return_std=True, noisy=False)[1]
    np.testing.assert_allclose(
        std / scale, ref.predict(X[:3], return_std=True, noisy=False)[1], rtol=1e-10
    )


def test_sample_weights_and_feature_names():
    pd = pytest.importorskip("pandas")
    X, y, m0, S0 = _problem(7)
    w = np.random.default_rng(1).integers(1, 4, len(y)).astype(float)
    kw = dict(fit_intercept=False, noise_precision=6.0, prior_mean=m0, prior_covariance=S0)
    weighted = BayesianLinearRegression(**kw).fit(X, y, sample_weight=w)
    # An integer weight is the same as repeating the sample.
    repeated = BayesianLinearRegression(**kw).fit(
        np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int))
    )
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-10)
    np.testing.assert_allclose(weighted.coef_cov_, repeated.coef_cov_, rtol=1e-10)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    model = BayesianLinearRegression(**kw).fit(frame, y)
    assert list(model.feature_names_in_) == ["a", "b", "c", "d"]
