"""Variational Gaussian mixture: scikit-learn's from the same initial responsibilities (bound
with its dropped constants restored, parameters), the full ELBO term by term (PRML eq.
10.71-10.77, re-implemented here), monotone bounds on random problems, emptied components,
the predictive density, bad input."""

import warnings

import numpy as np
import pytest
from scipy import integrate
from scipy.special import betaln, digamma, gammaln
from sklearn.mixture import BayesianGaussianMixture as SkBGM

import mathlearn.mixture._base as mixture_base
from mathlearn.exceptions import InvalidParameterError
from mathlearn.mixture import BayesianGaussianMixture, GaussianMixture

LOG2PI = np.log(2 * np.pi)


def _data(seed=0, n1=80, n2=70, d=3):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(d, d))
    return np.vstack([rng.normal(-3, 1, (n1, d)), rng.normal(3, 0.5, (n2, d)) @ A])


@pytest.fixture
def fixed_init(monkeypatch):
    """Make every mixture start from given responsibilities (the initialisation is shared
    with GaussianMixture: the hook is its `_initial_responsibilities`)."""

    def install(resp):
        monkeypatch.setattr(
            mixture_base._BaseMixture,
            "_initial_responsibilities",
            lambda self, X, rng, sw=None: resp,
        )

    return install


def _sk_constant(sk, n, d, k, prior_type):
    """The terms scikit-learn's bound leaves out: -N D/2 log 2 pi - K log Z_NW(prior)
    - log Z_pi(prior), with log Z_NW = -D/2 log beta + nu D/2 log 2 + nu/2 log|W| +
    sum_i log Gamma((nu + 1 - i)/2)."""
    b0, nu0 = sk.mean_precision_prior_, sk.degrees_of_freedom_prior_
    i = np.arange(1, d + 1)
    log_z0 = (
        -d / 2 * np.log(b0)
        + nu0 * d / 2 * np.log(2)
        - nu0 / 2 * np.linalg.slogdet(np.atleast_2d(sk.covariance_prior_))[1]
        + gammaln((nu0 + 1 - i) / 2).sum()
    )
    a0 = sk.weight_concentration_prior_
    w0 = (
        -k * np.log(a0) if prior_type == "dirichlet_process" else k * gammaln(a0) - gammaln(k * a0)
    )
    return -n * d / 2 * LOG2PI - k * log_z0 - w0


@pytest.mark.parametrize("prior_type", ["dirichlet_process", "dirichlet_distribution"])
def test_matches_sklearn_from_same_initialisation(prior_type, fixed_init):
    X = _data()
    n, d = X.shape
    k = 4
    rng = np.random.default_rng(1)
    resp0 = rng.uniform(size=(n, k))
    resp0 /= resp0.sum(axis=1, keepdims=True)
    sk = SkBGM(
        n_components=k,
        weight_concentration_prior_type=prior_type,
        reg_covar=0.0,
        tol=0.0,
        max_iter=15,
    )
    sk._initialize_parameters = lambda X, *args, **kw: sk._initialize(X, resp0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk.fit(X)
    fixed_init(resp0)
    ours = BayesianGaussianMixture(
        n_components=k, weight_concentration_prior_type=prior_type, tol=0.0, max_iter=15
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning: max_iter is the point
        ours.fit(X)
    m = len(ours.lower_bounds_)
    assert m >= 10
    expected = np.asarray(sk.lower_bounds_[:m]) + _sk_constant(sk, n, d, k, prior_type)
    np.testing.assert_allclose(ours.lower_bounds_, expected, rtol=1e-6)
    if m == 15:
        np.testing.assert_allclose(ours.means_, sk.means_, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(ours.weights_, sk.weights_, rtol=1e-6, atol=1e-12)
        np.testing.assert_allclose(ours.covariances_, sk.covariances_, rtol=1e-6)
        np.testing.assert_allclose(ours.precisions_, sk.precisions_, rtol=1e-6)
        np.testing.assert_allclose(ours.degrees_of_freedom_, sk.degrees_of_freedom_, rtol=1e-6)
        np.testing.assert_allclose(ours.mean_precision_, sk.mean_precision_, rtol=1e-6)
        np.testing.assert_array_equal(ours.predict(X), sk.predict(X))


def _elbo_terms_full(X, bgm, r):
    """PRML eq. 10.70-10.77 (Dirichlet weights) term by term at responsibilities r and the
    fitted q(theta)."""
    d = X.shape[1]
    k = bgm.n_components
    alpha = bgm.weight_concentration_
    beta, m, nu = bgm.mean_precision_, bgm.means_, bgm.degrees_of_freedom_
    W = bgm.precisions_ / nu[:, None, None]
    a0, b0, nu0 = (
        bgm.weight_concentration_prior_,
        bgm.mean_precision_prior_,
        bgm.degrees_of_freedom_prior_,
    )
    m0, W0inv = bgm.mean_prior_, bgm.covariance_prior_
    i = np.arange(1, d + 1)

    def log_b(Winv_logdet, v):  # log B(W, nu), B.79, from log|W^-1|
        return (
            v / 2 * Winv_logdet
            - v * d / 2 * np.log(2)
            - d * (d - 1) / 4 * np.log(np.pi)
            - gammaln((v + 1 - i) / 2).sum()
        )

    e_log_pi = digamma(alpha) - digamma(alpha.sum())
    e_logdet = np.array(
        [
            digamma((nu[j] + 1 - i) / 2).sum() + d * np.log(2) + np.linalg.slogdet(W[j])[1]
            for j in range(k)
        ]
    )
    nk = r.sum(0)
    xbar = (r.T @ X) / nk[:, None]
    lik = pz = pmu = qmu = 0.0
    for j in range(k):
        diff = X - xbar[j]
        S = (r[:, j] * diff.T) @ diff / nk[j]
        dx = xbar[j] - m[j]
        lik += (
            0.5
            * nk[j]
            * (
                e_logdet[j]
                - d / beta[j]
                - nu[j] * np.trace(S @ W[j])
                - nu[j] * dx @ W[j] @ dx
                - d * LOG2PI
            )
        )
        dm = m[j] - m0
        pmu += 0.5 * (
            d * np.log(b0 / (2 * np.pi))
            + e_logdet[j]
            - d * b0 / beta[j]
            - b0 * nu[j] * dm @ W[j] @ dm
        )
        pmu += (nu0 - d - 1) / 2 * e_logdet[j] - 0.5 * nu[j] * np.trace(W0inv @ W[j])
        pmu += log_b(np.linalg.slogdet(W0inv)[1], nu0)
        h_wishart = (
            -log_b(-np.linalg.slogdet(W[j])[1], nu[j])
            - (nu[j] - d - 1) / 2 * e_logdet[j]
            + nu[j] * d / 2
        )
        qmu += 0.5 * e_logdet[j] + d / 2 * np.log(beta[j] / (2 * np.pi)) - d / 2 - h_wishart
    pz = float(nk @ e_log_pi)
    ppi = gammaln(k * a0) - k * gammaln(a0) + (a0 - 1) * e_log_pi.sum()
    qpi = gammaln(alpha.sum()) - gammaln(alpha).sum() + ((alpha - 1) * e_log_pi).sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        qz = np.nansum(r * np.log(r))
    return lik + pz + ppi + pmu - qz - qpi - qmu


def test_bound_is_prml_elbo_term_by_term():
    # At a converged fit q(theta) is a fixed point of its update given r = predict_proba(X),
    # and L is stationary there, so the recorded bound equals the term-by-term ELBO at
    # (r, q(theta)) up to second order in the last change (tol = 1e-14 relative).
    X = _data(3)
    bgm = BayesianGaussianMixture(
        n_components=3,
        weight_concentration_prior_type="dirichlet_distribution",
        weight_concentration_prior=0.7,
        mean_precision_prior=0.5,
        degrees_of_freedom_prior=4.0,
        tol=1e-14,
        max_iter=2000,
        random_state=0,
    ).fit(X)
    r = bgm.predict_proba(X)
    assert _elbo_terms_full(X, bgm, r) == pytest.approx(bgm.lower_bound_, rel=1e-8)


def _elbo_terms_diag(X, bgm, r):
    """The mean-field bound with a Normal-Gamma factor per coordinate and DP weights."""
    a_w, b_w = bgm.weight_concentration_
    g0 = bgm.weight_concentration_prior_
    beta, m, nu = bgm.mean_precision_, bgm.means_, bgm.degrees_of_freedom_
    a = nu / 2
    b = bgm.covariances_ * a[:, None]
    b0c, a0, bb0 = (
        bgm.mean_precision_prior_,
        bgm.degrees_of_freedom_prior_ / 2,
        bgm.covariance_prior_ / 2,
    )
    m0 = bgm.mean_prior_
    e_lam, e_loglam = a[:, None] / b, digamma(a)[:, None] - np.log(b)
    dsum = digamma(a_w + b_w)
    e_logv, e_log1mv = digamma(a_w) - dsum, digamma(b_w) - dsum
    e_log_pi = e_logv + np.concatenate([[0], np.cumsum(e_log1mv)[:-1]])
    e_quad = 1 / beta[None, :, None] + e_lam[None] * (X[:, None, :] - m[None]) ** 2  # (n,k,d)
    lik = np.sum(r[:, :, None] * 0.5 * (e_loglam[None] - LOG2PI - e_quad))
    pz = np.sum(r * e_log_pi)
    pv = np.sum(np.log(g0) + (g0 - 1) * e_log1mv)
    qv = np.sum((a_w - 1) * e_logv + (b_w - 1) * e_log1mv - betaln(a_w, b_w))
    e_quad0 = 1 / beta[:, None] + e_lam * (m - m0) ** 2
    pth = np.sum(0.5 * (np.log(b0c) + e_loglam - LOG2PI - b0c * e_quad0))
    pth += np.sum(a0 * np.log(bb0) - gammaln(a0) + (a0 - 1) * e_loglam - bb0 * e_lam)
    h_mu = np.sum(0.5 * (1 + LOG2PI - np.log(beta)[:, None] - e_loglam))
    h_lam = np.sum(
        a[:, None] - np.log(b) + gammaln(a)[:, None] + (1 - a)[:, None] * digamma(a)[:, None]
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        qz = np.nansum(r * np.log(r))
    return lik + pz + pv + pth - qz - qv + h_mu + h_lam


def test_diag_bound_is_mean_field_elbo_term_by_term():
    X = _data(4, d=2)
    bgm = BayesianGaussianMixture(
        n_components=3,
        covariance_type="diag",
        weight_concentration_prior=2.0,
        tol=1e-14,
        max_iter=2000,
        random_state=0,
    ).fit(X)
    r = bgm.predict_proba(X)
    assert _elbo_terms_diag(X, bgm, r) == pytest.approx(bgm.lower_bound_, rel=1e-8)


@pytest.mark.parametrize("seed", range(6))
def test_bound_monotone_on_random_problems(seed):
    # filterwarnings=error turns the driver's decrease warning into a failure.
    rng = np.random.default_rng(seed)
    d = int(rng.integers(1, 5))
    n = int(rng.integers(20, 120))
    centres = rng.normal(0, 4, size=(3, d))
    X = centres[rng.integers(0, 3, n)] + rng.normal(size=(n, d)) * rng.uniform(0.2, 2, d)
    bgm = BayesianGaussianMixture(
        n_components=int(rng.integers(1, 7)),
        covariance_type=["full", "diag"][seed % 2],
        weight_concentration_prior_type=["dirichlet_process", "dirichlet_distribution"][seed // 3],
        weight_concentration_prior=float(rng.uniform(0.01, 5)),
        init_params=["kmeans", "random", "k-means++", "random_from_data"][seed % 4],
        tol=1e-10,
        max_iter=300,
        random_state=seed,
    )
    bgm.fit(X)
    lb = bgm.lower_bounds_
    assert np.all(np.diff(lb) >= -1e-9 * np.abs(lb[1:]))
    assert np.all(np.isfinite(bgm.score_samples(X)))


@pytest.mark.parametrize("prior_type", ["dirichlet_process", "dirichlet_distribution"])
def test_superfluous_components_are_emptied(prior_type):
    rng = np.random.default_rng(5)
    X = np.vstack([rng.normal(-6, 1, (150, 2)), rng.normal(6, 1, (150, 2))])
    bgm = BayesianGaussianMixture(
        n_components=8,
        weight_concentration_prior_type=prior_type,
        weight_concentration_prior=1e-3,
        max_iter=1000,
        tol=1e-10,
        random_state=0,
    ).fit(X)
    # Effective counts N_k (alpha_k - alpha_0, or a_k - 1 for the sticks): two clusters hold
    # every point, the other components none.
    wc = bgm.weight_concentration_
    nk = wc[0] - 1.0 if prior_type == "dirichlet_process" else wc - 1e-3
    nk = np.sort(nk)[::-1]
    # (Under the sticks an unused component keeps its broad prior, which takes a few
    # hundredths of a point from the outermost points: a fixed point, not slow convergence.)
    np.testing.assert_allclose(nk[:2], [150, 150], atol=0.1)
    assert nk[2:].sum() < 0.1
    # E[pi_k] of an empty component: alpha_0 / (K alpha_0 + N) under the Dirichlet; under the
    # sticks 1 / (1 + gamma_0 + N_after) times the stick left (a DP's prior share of the rest).
    if prior_type == "dirichlet_distribution":
        assert np.all(np.sort(bgm.weights_)[:-2] < 1e-5)
    # the two active components recover the clusters' means
    active = np.argsort(bgm.weights_)[-2:]
    np.testing.assert_allclose(np.sort(bgm.means_[active][:, 0]), [-6, 6], atol=0.3)


def test_predictive_density_integrates_to_one_and_approaches_ml():
    rng = np.random.default_rng(6)
    X = np.concatenate([rng.normal(-2, 0.5, 60), rng.normal(1, 1.0, 40)])[:, None]
    for ct in ("full", "diag"):
        bgm = BayesianGaussianMixture(n_components=3, covariance_type=ct, random_state=0).fit(X)
        total, _ = integrate.quad(
            lambda x, bgm=bgm: np.exp(bgm.score_samples([[x]]))[0], -np.inf, np.inf, limit=400
        )
        assert total == pytest.approx(1.0, abs=1e-7)
    # With many points the posterior concentrates: the predictive density tends to the
    # maximum-likelihood mixture's (differences O(1/N)).
    X = np.concatenate([rng.normal(-2, 0.5, 6000), rng.normal(1, 1.0, 4000)])[:, None]
    bgm = BayesianGaussianMixture(
        n_components=2,
        weight_concentration_prior_type="dirichlet_distribution",
        tol=1e-10,
        max_iter=500,
        random_state=0,
    ).fit(X)
    gm = GaussianMixture(2, tol=1e-10, max_iter=500, random_state=0).fit(X)
    # Within 3 standard deviations of the components: the Student t's log-density differs
    # from the Gaussian's by ~z^4 / (4 nu) < 0.01 there, the parameters by O(1/N).
    grid = np.linspace(-3, 3, 7)[:, None]
    np.testing.assert_allclose(bgm.score_samples(grid), gm.score_samples(grid), atol=1e-2)


def test_equivariant_to_shift_and_extreme_scale():
    X = _data(7, d=2)
    base = BayesianGaussianMixture(n_components=3, random_state=0, tol=1e-10, max_iter=300).fit(X)
    for scale, shift in [(2.0**250, 0.0), (2.0**-250, 0.0), (1.0, 1e9)]:
        Y = X * scale + shift
        other = BayesianGaussianMixture(
            n_components=3, random_state=0, tol=1e-10, max_iter=300
        ).fit(Y)
        np.testing.assert_array_equal(other.predict(Y), base.predict(X))
        n, d = X.shape
        assert other.lower_bound_ == pytest.approx(
            base.lower_bound_ - n * d * np.log(scale), rel=1e-6, abs=1e-6
        )


@pytest.mark.parametrize(
    "params, match",
    [
        ({"weight_concentration_prior": 0.0}, "weight_concentration_prior"),
        ({"weight_concentration_prior": -1.0}, "weight_concentration_prior"),
        ({"mean_precision_prior": 0.0}, "mean_precision_prior"),
        ({"covariance_prior": -1.0}, "covariance_prior"),
        ({"covariance_type": "tied"}, "covariance_type"),
    ],
)
def test_invalid_priors_rejected(params, match):
    with pytest.raises(InvalidParameterError, match=match):
        BayesianGaussianMixture(**params).fit(_data())


def test_bad_input():
    X = _data()
    with pytest.raises(ValueError, match="degrees_of_freedom_prior must be > n_features - 1"):
        BayesianGaussianMixture(degrees_of_freedom_prior=1.5).fit(X)
    with pytest.raises(ValueError, match="positive definite"):
        BayesianGaussianMixture(covariance_prior=-np.eye(3)).fit(X)
    with pytest.raises(ValueError, match=r"shape \(3, 3\)"):
        BayesianGaussianMixture(covariance_prior=np.eye(2)).fit(X)
    with pytest.raises(ValueError, match="positive"):
        BayesianGaussianMixture(covariance_type="diag", covariance_prior=[1.0, 0.0, 1.0]).fit(X)
    with pytest.raises(ValueError, match=r"mean_prior must have shape \(3,\)"):
        BayesianGaussianMixture(mean_prior=[0.0, 0.0]).fit(X)
    with pytest.raises(ValueError, match="n_components"):
        BayesianGaussianMixture(n_components=5).fit(X[:4])
    with pytest.raises(ValueError, match=r"zero .*variance"):
        BayesianGaussianMixture(covariance_type="diag").fit(np.c_[X[:, :2], np.ones(len(X))])
    with pytest.raises(ValueError, match="NaN"):
        BayesianGaussianMixture().fit(np.where(np.eye(len(X), 3, dtype=bool), np.nan, X))
    # a constant feature is fine when the prior is given
    Y = np.c_[X[:, :2], np.ones(len(X))]
    bgm = BayesianGaussianMixture(n_components=2, covariance_prior=np.eye(3), random_state=0).fit(
        Y
    )
    assert np.all(np.isfinite(bgm.score_samples(Y)))


@pytest.mark.parametrize("covariance_type", ["full", "diag"])
def test_sample_moments_match_the_fitted_mixture(covariance_type):
    rng = np.random.default_rng(0)
    X = np.vstack(
        [rng.normal(size=(200, 2)) + np.array([4.0, 0.0]), rng.normal(size=(200, 2)) * 0.5]
    )
    m = BayesianGaussianMixture(
        n_components=2, covariance_type=covariance_type, random_state=0
    ).fit(X)
    n = 40_000
    S, labels = m.sample(n, random_state=1)
    assert S.shape == (n, 2) and labels.shape == (n,)
    w = m.weights_ / m.weights_.sum()
    mean = w @ m.means_
    # The mixture mean; each coordinate's sample mean has standard error sd / sqrt(n).
    sd = np.sqrt(np.var(S, axis=0))
    np.testing.assert_array_less(np.abs(S.mean(0) - mean), 5 * sd / np.sqrt(n))
    for k in range(2):
        frac = np.mean(labels == k)
        assert abs(frac - w[k]) <= 5 * np.sqrt(w[k] * (1 - w[k]) / n)
