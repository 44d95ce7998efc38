"""The general EM driver (protocol, monotonicity check) and the Bernoulli mixture, against
scipy.stats densities, finite differences and hand-computed EM steps."""

import numpy as np
import pytest
from scipy.stats import bernoulli

from mathlearn.exceptions import ConvergenceWarning, NumericalWarning
from mathlearn.mixture import BernoulliMixture, EMResult, GaussianMixture, em


class _SoftKMeans:
    """Isotropic mixture with known sigma^2, only pi and mu learned.

    Oxford "Advanced Topics in Statistical Machine Learning" §5.1 and §5.4. A model written outside
    the library that plugs into the driver through the protocol.
    """

    def __init__(self, means, sigma2):
        self.means = np.asarray(means, dtype=float)
        self.weights = np.full(len(means), 1.0 / len(means))
        self.sigma2 = sigma2

    def _e_step(self, X):
        d = X.shape[1]
        sq = ((X[:, None, :] - self.means[None]) ** 2).sum(-1)
        logp = -0.5 * sq / self.sigma2 - 0.5 * d * np.log(2 * np.pi * self.sigma2)
        wlp = logp + np.log(self.weights)
        norm = np.logaddexp.reduce(wlp, axis=1)
        return float(norm.mean()), wlp - norm[:, None]

    def _m_step(self, X, log_resp):
        Q = np.exp(log_resp)
        nk = Q.sum(0)
        self.weights = nk / nk.sum()  # eq. 5.14
        self.means = (Q.T @ X) / nk[:, None]  # eq. 5.16


def test_driver_runs_a_plugged_in_model_to_the_spherical_gmm_fixed_point():
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(size=(100, 2)), rng.normal(size=(100, 2)) + 4]
    model = _SoftKMeans(X[[0, 150]], sigma2=1.0)
    seen = []
    res = em(model, X, max_iter=500, tol=1e-12, callback=lambda m, t, b: seen.append((t, b)))
    assert isinstance(res, EMResult) and res.converged
    assert [t for t, _ in seen] == list(range(1, res.n_iter + 1))
    np.testing.assert_allclose([b for _, b in seen], res.lower_bounds)
    assert np.all(np.diff(res.lower_bounds) >= -1e-14)
    # Independent check of the fixed point (eq. 5.15): mu_k is the responsibility-weighted
    # mean under its own responsibilities, and the bound equals the log-likelihood computed
    # directly with scipy.
    _, log_resp = model._e_step(X)
    Q = np.exp(log_resp)
    np.testing.assert_allclose(model.means, (Q.T @ X) / Q.sum(0)[:, None], atol=1e-8)
    from scipy.stats import multivariate_normal

    dens = sum(
        w * multivariate_normal(m, np.eye(2)).pdf(X)
        for w, m in zip(model.weights, model.means, strict=True)
    )
    assert res.lower_bound == pytest.approx(np.log(dens).mean(), abs=1e-9)


def test_driver_flags_a_decreasing_bound():
    class Bad:
        def __init__(self):
            self.value = 0.0

        def _e_step(self, X):
            return self.value, None

        def _m_step(self, X, post):
            self.value -= 1.0  # an "M-step" that makes things worse

    with pytest.warns(NumericalWarning, match="decreased"):
        res = em(Bad(), None, max_iter=3, tol=0.0)
    assert not res.converged and res.n_iter == 3


def test_gmm_uses_the_driver_bound():
    X = np.array([[-2.0], [-1.0], [0.0], [4.0], [5.0], [6.0]])
    gm = GaussianMixture(
        2,
        means_init=[[-1.0], [1.0]],
        weights_init=[0.5, 0.5],
        precisions_init=[[[1.0]], [[1.0]]],
        reg_covar=0.0,
    )
    gm._initialize(X, np.random.default_rng(0))
    res = em(gm, X, max_iter=3, tol=0.0)
    # Hand-computed example (PRML §9.2): start and one-step log-likelihoods.
    np.testing.assert_allclose(res.lower_bounds[:2] * 6, [-34.83390221360139, -13.277798214206276])


def _bernoulli_loglik(X, weights, means):
    """log p(X) computed with scipy.stats, point by point."""
    total = 0.0
    for x in X:
        p = sum(w * np.prod(bernoulli.pmf(x, mu)) for w, mu in zip(weights, means, strict=True))
        total += np.log(p)
    return total


def test_bernoulli_one_em_step_by_hand():
    X = np.array([[1, 0, 1], [1, 1, 1], [0, 0, 1], [0, 1, 0], [1, 1, 0]], dtype=float)
    w0 = np.array([0.4, 0.6])
    mu0 = np.array([[0.7, 0.2, 0.6], [0.3, 0.6, 0.5]])
    bm = BernoulliMixture(2, alpha=0.0, weights_init=w0, means_init=mu0, max_iter=1)
    with pytest.warns(ConvergenceWarning):
        bm.fit(X)
    # Hand E-step with scipy.stats, then the M-step formulas of Bishop (9.57)-(9.60).
    lik = np.array(
        [[w * np.prod(bernoulli.pmf(x, m)) for w, m in zip(w0, mu0, strict=True)] for x in X]
    )
    R = lik / lik.sum(1, keepdims=True)
    np.testing.assert_allclose(bm.weights_, R.sum(0) / 5, rtol=1e-12)
    np.testing.assert_allclose(bm.means_, (R.T @ X) / R.sum(0)[:, None], rtol=1e-12)
    assert bm.lower_bounds_[0] == pytest.approx(_bernoulli_loglik(X, w0, mu0) / 5, rel=1e-12)


def test_bernoulli_map_stationary_point_by_finite_differences():
    rng = np.random.default_rng(1)
    mu_true = np.array([[0.9, 0.8, 0.1, 0.2, 0.7], [0.1, 0.3, 0.9, 0.8, 0.4]])
    y = rng.integers(2, size=400)
    X = (rng.random((400, 5)) < mu_true[y]).astype(float)
    alpha = 0.5
    bm = BernoulliMixture(2, alpha=alpha, tol=1e-13, max_iter=2000, random_state=0).fit(X)

    def objective(mu_flat):
        mu = mu_flat.reshape(2, 5)
        return _bernoulli_loglik(X, bm.weights_, mu) + alpha * np.sum(np.log(mu) + np.log1p(-mu))

    mu = bm.means_.ravel()
    h = 1e-6
    grad = [(objective(mu + h * e) - objective(mu - h * e)) / (2 * h) for e in np.eye(mu.size)]
    np.testing.assert_allclose(grad, 0.0, atol=1e-4)
    # The recorded bound is the MAP objective per sample.
    assert bm.score(X) * 400 + alpha * np.sum(np.log(mu) + np.log1p(-mu)) == pytest.approx(
        objective(mu), rel=1e-10
    )
    assert np.all(np.diff(bm.lower_bounds_) >= -1e-14)


def test_bernoulli_recovers_parameters_and_samples():
    rng = np.random.default_rng(2)
    mu_true = rng.uniform(0.05, 0.95, (3, 15))
    w_true = np.array([0.2, 0.3, 0.5])
    y = rng.choice(3, size=6000, p=w_true)
    X = (rng.random((6000, 15)) < mu_true[y]).astype(float)
    bm = BernoulliMixture(3, n_init=3, random_state=0, tol=1e-6, max_iter=500).fit(X)
    order = [int(np.argmin(np.abs(bm.means_ - m).sum(1))) for m in mu_true]
    assert sorted(order) == [0, 1, 2]
    np.testing.assert_allclose(bm.means_[order], mu_true, atol=0.06)
    np.testing.assert_allclose(bm.weights_[order], w_true, atol=0.03)
    S, _ = bm.sample(50_000, random_state=0)
    assert set(np.unique(S)) <= {0.0, 1.0}
    np.testing.assert_allclose(S.mean(0), bm.weights_ @ bm.means_, atol=0.01)


def test_bernoulli_bad_input():
    X = np.array([[0.0, 1.0], [1.0, 1.0], [0.5, 0.0]])
    with pytest.raises(ValueError, match="binary"):
        BernoulliMixture(2, binarize=None).fit(X)
    with pytest.raises(ValueError, match="NaN"):
        BernoulliMixture(2).fit(np.array([[0.0, np.nan], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="n_components"):
        BernoulliMixture(4).fit(X)
    with pytest.raises(ValueError, match="alpha"):
        BernoulliMixture(2, alpha=-1.0).fit(X)
    with pytest.raises(ValueError, match="means_init"):
        BernoulliMixture(2, means_init=[[0.5, 1.5], [0.1, 0.1]]).fit(X)
    with pytest.raises(
        ValueError,
        match=r"'binarize' parameter of BernoulliMixture must be a float in the range "
        r"\(-inf, inf\) or None\. Got nan",
    ):
        BernoulliMixture(2, binarize=np.nan).fit(X)
    # The default threshold binarises: 0.5 -> 0, so the data above equal this binary set.
    a = BernoulliMixture(2, random_state=0).fit(X)
    b = BernoulliMixture(2, random_state=0, binarize=None).fit((X > 0.5).astype(float))
    np.testing.assert_allclose(a.means_, b.means_)


@pytest.mark.parametrize("alpha", [0.0, 1.0, 2.5])
def test_bernoulli_single_component_closed_form(alpha):
    # K = 1: the MAP estimate is (sum_n x_nd + alpha) / (N + 2 alpha), reached in one M-step,
    # and the log-likelihood is sum_d [n1_d log mu_d + n0_d log(1 - mu_d)].
    rng = np.random.default_rng(3)
    X = (rng.random((50, 6)) < np.linspace(0.1, 0.9, 6)).astype(float)
    bm = BernoulliMixture(1, alpha=alpha, tol=1e-12, max_iter=10, random_state=0).fit(X)
    mu = (X.sum(0) + alpha) / (50 + 2 * alpha)
    np.testing.assert_allclose(bm.means_[0], mu, rtol=1e-12)
    np.testing.assert_allclose(bm.weights_, [1.0])
    loglik = (X.sum(0) * np.log(mu) + (50 - X.sum(0)) * np.log1p(-mu)).sum()
    assert bm.score(X) * 50 == pytest.approx(loglik, rel=1e-12)
    assert bm.bic(X) == pytest.approx(-2 * loglik + 6 * np.log(50), rel=1e-12)


def test_driver_takes_the_public_hooks_and_stops_on_a_non_finite_bound():
    class Model:
        def __init__(self, bounds):
            self.bounds = iter(bounds)
            self.m_steps = 0

        def e_step(self, X):
            return next(self.bounds), None

        def m_step(self, X, posterior):
            self.m_steps += 1

    res = em(Model([-3.0, -2.0, -2.0]), None, max_iter=10, tol=1e-12)
    assert res.converged and res.n_iter == 3
    # Issue 10: a NaN bound was recorded silently. It now stops the run with a clear error,
    # before the M-step of that iteration.
    for bad in (np.nan, -np.inf):
        model = Model([-3.0, bad, -1.0])
        with pytest.raises(ValueError, match=r"lower bound is (nan|-inf) at iteration 2"):
            em(model, None, max_iter=10)
        assert model.m_steps == 1
    with pytest.raises(TypeError, match="e_step"):
        em(object(), None)


def test_mixtures_implement_the_protocol_publicly():
    X = np.array([[-2.0], [-1.0], [0.0], [4.0], [5.0], [6.0]])
    gm = GaussianMixture(2, reg_covar=0.0, **{k: v for k, v in _T22.items()})
    gm.fit(X)
    bound, log_resp = gm.e_step(X)
    np.testing.assert_allclose(np.exp(log_resp), gm.predict_proba(X), rtol=1e-14)
    assert bound == pytest.approx(gm.score(X), rel=1e-14)
    assert gm._e_step(X)[0] == bound  # the former name still works


_T22 = dict(
    means_init=[[-1.0], [1.0]], weights_init=[0.5, 0.5], precisions_init=[[[1.0]], [[1.0]]]
)


def test_bernoulli_integer_weights_equal_repeated_rows():
    rng = np.random.default_rng(4)
    X = (rng.random((60, 5)) < np.linspace(0.2, 0.8, 5)).astype(float)
    w = rng.integers(0, 4, size=60)
    start = dict(weights_init=[0.4, 0.6], means_init=[[0.3] * 5, [0.7] * 5])
    kw = dict(alpha=1.0, tol=1e-12, max_iter=500, **start)
    weighted = BernoulliMixture(2, **kw).fit(X, sample_weight=w)
    repeated = BernoulliMixture(2, **kw).fit(np.repeat(X, w, axis=0))
    np.testing.assert_allclose(weighted.means_, repeated.means_, rtol=1e-10)
    np.testing.assert_allclose(weighted.weights_, repeated.weights_, rtol=1e-10)
    assert weighted.lower_bound_ == pytest.approx(repeated.lower_bound_, rel=1e-12)


def test_sample_draws_from_the_fitted_components():
    # sample() is the base class's: component counts from a multinomial on pi, then each
    # subclass draws from its components. Means of 40 000 draws are within 5 standard errors.
    X = np.array([[-2.0], [-1.0], [0.0], [4.0], [5.0], [6.0]])
    gm = GaussianMixture(2, reg_covar=0.0, **_T22).fit(X)
    S, y = gm.sample(40_000, random_state=0)
    assert S.shape == (40_000, 1) and np.all(np.diff(y) >= 0)
    for k in range(2):
        sd = np.sqrt(gm.covariances_[k, 0, 0] / np.count_nonzero(y == k))
        assert abs(S[y == k, 0].mean() - gm.means_[k, 0]) < 5 * sd
    assert abs(np.mean(y == 1) - gm.weights_[1]) < 5 * np.sqrt(0.25 / 40_000)
