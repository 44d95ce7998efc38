import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.linear_model import BayesianRidge

from mathlearn.datasets import make_sinusoidal
from mathlearn.distributions import MultivariateNormal
from mathlearn.exceptions import ConvergenceWarning
from mathlearn.linear_model import BayesianLinearRegression, Ridge
from mathlearn.preprocessing import PolynomialBasis

X4 = np.array([[0.0], [1.0], [2.0], [3.0]])
Y4 = np.array([1.0, 3.0, 2.0, 5.0])
PHI4 = np.hstack([np.ones((4, 1)), X4])


def _sin_design(n=25, degree=5, seed=0):
    X, y = make_sinusoidal(n, random_state=seed)
    return PolynomialBasis(degree=degree).fit_transform(X), y


def _direct_log_evidence(Phi, t, alpha, beta):
    """ln N(t | 0, I/beta + Phi Phi^T / alpha) (Imperial "Mathematics for Inference and Machine
    Learning" eq. 1.205–1.207)."""
    cov = np.eye(len(t)) / beta + Phi @ Phi.T / alpha
    return multivariate_normal(np.zeros(len(t)), cov).logpdf(t)


def test_worked_example_spec_001_T8_T9():
    m = BayesianLinearRegression(
        fit_intercept=False, prior_precision=1.0, noise_precision=1.0
    ).fit(PHI4, Y4)
    np.testing.assert_allclose(m.coef_cov_, [[5 / 13, -2 / 13], [-2 / 13, 5 / 39]], rtol=1e-12)
    np.testing.assert_allclose(m.coef_, [11 / 13, 44 / 39], rtol=1e-12)
    mean, std = m.predict(np.array([[1.0, 1.5]]), return_std=True)
    assert mean[0] == pytest.approx(99 / 39, rel=1e-12)
    assert std[0] ** 2 == pytest.approx(1 + 8.25 / 39, rel=1e-12)
    assert m.log_evidence_ == pytest.approx(-7.94343239178095, rel=1e-12)
    assert m.log_evidence_ == pytest.approx(_direct_log_evidence(PHI4, Y4, 1.0, 1.0), rel=1e-12)
    # MAP = ridge with lambda = alpha / beta (PRML §3.3.1)
    r = Ridge(alpha=1.0, fit_intercept=False).fit(PHI4, Y4)
    np.testing.assert_allclose(m.coef_, r.coef_, rtol=1e-12)


def test_worked_example_spec_001_T10_fixed_point():
    # a tolerance of 1e-6 would do; the values are converged to |delta| < 1e-14, and so are ours
    m = BayesianLinearRegression(fit_intercept=False, tol=1e-14).fit(PHI4, Y4)
    assert m.prior_precision_ == pytest.approx(0.7538380327536456, rel=1e-10)
    assert m.noise_precision_ == pytest.approx(0.8681942296599582, rel=1e-10)
    assert m.effective_params_ == pytest.approx(1.528985605605064, rel=1e-10)
    assert m.log_evidence_ == pytest.approx(-7.896722564573633, rel=1e-10)


@pytest.mark.parametrize("shape", [(30, 4), (6, 9)])
def test_posterior_completing_the_square(shape):
    rng = np.random.default_rng(0)
    Phi = rng.normal(size=shape)
    t = rng.normal(size=shape[0])
    alpha, beta = 0.7, 3.0
    m = BayesianLinearRegression(
        fit_intercept=False, prior_precision=alpha, noise_precision=beta
    ).fit(Phi, t)
    # Imperial "Mathematics for Inference and Machine Learning" eq. 1.243
    A = alpha * np.eye(shape[1]) + beta * Phi.T @ Phi
    S = np.linalg.inv(A)
    np.testing.assert_allclose(m.coef_cov_, S, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(m.coef_, beta * S @ Phi.T @ t, rtol=1e-10)
    assert m.log_evidence_ == pytest.approx(_direct_log_evidence(Phi, t, alpha, beta), rel=1e-11)
    gamma = np.sum(
        np.linalg.eigvalsh(beta * Phi.T @ Phi) / (alpha + np.linalg.eigvalsh(beta * Phi.T @ Phi))
    )
    assert m.effective_params_ == pytest.approx(gamma, rel=1e-10)


@pytest.mark.parametrize("shape", [(40, 6), (7, 12)])
def test_evidence_maximisation_is_a_stationary_point(shape):
    rng = np.random.default_rng(1)
    Phi = rng.normal(size=shape)
    t = Phi @ rng.normal(size=shape[1]) + 0.5 * rng.normal(size=shape[0])
    m = BayesianLinearRegression(fit_intercept=False, tol=1e-12, max_iter=10000).fit(Phi, t)
    a, b = m.prior_precision_, m.noise_precision_
    assert m.log_evidence_ == pytest.approx(_direct_log_evidence(Phi, t, a, b), rel=1e-10)
    # PRML §3.5.2: d ln p / d ln alpha = d ln p / d ln beta = 0 at the fixed point
    h = 1e-5
    for da, db in ((h, 0), (0, h)):
        up = _direct_log_evidence(Phi, t, a * np.exp(da), b * np.exp(db))
        down = _direct_log_evidence(Phi, t, a * np.exp(-da), b * np.exp(-db))
        assert abs(up - down) / (2 * h) < 1e-5
    # the estimate with a fixed posterior agrees with a fixed-precision fit
    fixed = BayesianLinearRegression(
        fit_intercept=False, prior_precision=a, noise_precision=b
    ).fit(Phi, t)
    np.testing.assert_allclose(fixed.coef_, m.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fixed.coef_cov_, m.coef_cov_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_same_fixed_point_as_sklearn_bayesian_ridge(fit_intercept):
    Phi, y = _sin_design(30, 5, seed=2)
    Phi = Phi[:, 1:] if fit_intercept else Phi
    ours = BayesianLinearRegression(fit_intercept=fit_intercept, tol=1e-12).fit(Phi, y)
    tiny = 1e-12
    ref = BayesianRidge(
        fit_intercept=fit_intercept,
        alpha_1=tiny,
        alpha_2=tiny,
        lambda_1=tiny,
        lambda_2=tiny,
        tol=1e-10,
        max_iter=100000,
        compute_score=True,
    ).fit(Phi, y)
    # sklearn: alpha_ is the noise precision, lambda_ the prior precision. Its Gamma
    # hyperpriors (1e-12) and its stopping rule move the fixed point by ~1e-12 relatively.
    assert ours.noise_precision_ == pytest.approx(ref.alpha_, rel=1e-9)
    assert ours.prior_precision_ == pytest.approx(ref.lambda_, rel=1e-9)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-9, atol=1e-8)
    assert ours.intercept_ == pytest.approx(ref.intercept_, rel=1e-9, abs=1e-8)
    mo, so = ours.predict(Phi, return_std=True)
    mr, sr = ref.predict(Phi, return_std=True)
    np.testing.assert_allclose(mo, mr, rtol=1e-9)
    np.testing.assert_allclose(so, sr, rtol=1e-9)
    # sklearn's score differs from the log evidence by its (negligible) gamma priors; with
    # an intercept both are the evidence of the centred data
    assert ours.log_evidence_ == pytest.approx(ref.scores_[-1], rel=1e-9)


def test_sequential_equals_batch():
    Phi, y = _sin_design(20, 4, seed=3)
    batch = BayesianLinearRegression(
        fit_intercept=False, prior_precision=2.0, noise_precision=11.0
    ).fit(Phi, y)
    seq = BayesianLinearRegression(fit_intercept=False, prior_precision=2.0, noise_precision=11.0)
    for chunk in np.split(np.arange(20), [1, 2, 10, 13]):
        seq.partial_fit(Phi[chunk], y[chunk])
    np.testing.assert_allclose(seq.coef_, batch.coef_, rtol=1e-9)
    np.testing.assert_allclose(seq.coef_cov_, batch.coef_cov_, rtol=1e-9, atol=1e-14)
    assert seq.log_evidence_ == pytest.approx(batch.log_evidence_, rel=1e-10)
    assert seq.effective_params_ == pytest.approx(batch.effective_params_, rel=1e-9)


def test_predictive_variance_shrinks_with_data():
    # PRML §3.3.2: sigma_N^2(x) >= 1/beta and non-increasing as data arrive
    Phi, y = _sin_design(15, 3, seed=4)
    grid = PolynomialBasis(degree=3).fit_transform(np.linspace(0, 1, 7)[:, None])
    m = BayesianLinearRegression(fit_intercept=False, prior_precision=1.0, noise_precision=25.0)
    prev = np.inf
    for i in range(15):
        m.partial_fit(Phi[i : i + 1], y[i : i + 1])
        _, std = m.predict(grid, return_std=True)
        assert np.all(std**2 >= 1 / 25.0)
        assert np.all(std <= prev + 1e-12)
        prev = std


def test_predict_distribution_and_sample_y():
    Phi, y = _sin_design(25, 3, seed=5)
    m = BayesianLinearRegression(fit_intercept=False).fit(Phi, y)
    Q = Phi[:4]
    dist = m.predict_distribution(Q)
    assert isinstance(dist, MultivariateNormal)
    cov = Q @ m.coef_cov_ @ Q.T + np.eye(4) / m.noise_precision_
    np.testing.assert_allclose(dist.mean, m.predict(Q), rtol=1e-12)
    np.testing.assert_allclose(dist.cov, cov, rtol=1e-10)
    _, std = m.predict(Q, return_std=True)
    np.testing.assert_allclose(np.sqrt(np.diag(dist.cov)), std, rtol=1e-10)
    point = y[:4]
    assert dist.logpdf(point) == pytest.approx(
        multivariate_normal(dist.mean, cov).logpdf(point), rel=1e-10
    )
    # noise-free function draws: mean Q m_N, covariance Q S_N Q^T
    draws = m.sample_y(Q, n_samples=20000, random_state=0)
    assert draws.shape == (4, 20000)
    latent = Q @ m.coef_cov_ @ Q.T
    se = np.sqrt(np.diag(latent) / 20000)
    assert np.all(np.abs(draws.mean(axis=1) - m.predict(Q)) < 5 * se)
    np.testing.assert_allclose(np.cov(draws), latent, rtol=0.05, atol=0.05 * latent.max())


def test_one_precision_fixed():
    Phi, y = _sin_design(30, 4, seed=6)
    m = BayesianLinearRegression(fit_intercept=False, noise_precision=10.0, tol=1e-12).fit(Phi, y)
    assert m.noise_precision_ == 10.0
    a = m.prior_precision_
    h = 1e-5
    d = _direct_log_evidence(Phi, y, a * np.exp(h), 10.0) - _direct_log_evidence(
        Phi, y, a * np.exp(-h), 10.0
    )
    assert abs(d / (2 * h)) < 1e-5


def test_convergence_warning():
    Phi, y = _sin_design(30, 4, seed=7)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        BayesianLinearRegression(fit_intercept=False, max_iter=1).fit(Phi, y)


def test_bad_input():
    Phi, y = _sin_design(10, 2)
    for kw in ({"prior_precision": -1.0}, {"noise_precision": 0.0}, {"prior_precision": np.inf}):
        with pytest.raises(ValueError, match="precision"):
            BayesianLinearRegression(fit_intercept=False, **kw).fit(Phi, y)
    with pytest.raises(ValueError, match="max_iter"):
        BayesianLinearRegression(fit_intercept=False, max_iter=0).fit(Phi, y)
    bad = Phi.copy()
    bad[0, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        BayesianLinearRegression(fit_intercept=False).fit(bad, y)
    with pytest.raises(ValueError, match="inconsistent"):
        BayesianLinearRegression(fit_intercept=False).fit(Phi, y[:3])
    with pytest.raises(ValueError, match="fit_intercept"):
        BayesianLinearRegression(fit_intercept=True).partial_fit(Phi, y)
    m = BayesianLinearRegression(fit_intercept=False).fit(Phi, y)
    with pytest.raises(ValueError, match="features"):
        m.partial_fit(Phi[:, :2], y)
    with pytest.raises(ValueError, match="features"):
        m.predict(Phi[:, :2])


@pytest.mark.parametrize("shape", [(200, 5), (15, 4)])
def test_well_conditioned_designs_with_intercept_match_bayesian_ridge(shape):
    # random designs take the Gram eigen-decomposition route, centred without a copy
    rng = np.random.default_rng(8)
    X = rng.normal(size=shape) + 5.0
    y = X @ rng.normal(size=shape[1]) + 3.0 + 0.5 * rng.normal(size=shape[0])
    ours = BayesianLinearRegression(fit_intercept=True, tol=1e-12, max_iter=10000).fit(X, y)
    tiny = 1e-12
    ref = BayesianRidge(
        alpha_1=tiny, alpha_2=tiny, lambda_1=tiny, lambda_2=tiny, tol=1e-12, max_iter=100000
    ).fit(X, y)
    assert ours.noise_precision_ == pytest.approx(ref.alpha_, rel=1e-9)
    assert ours.prior_precision_ == pytest.approx(ref.lambda_, rel=1e-9)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-9)
    np.testing.assert_allclose(
        ours.predict(X, return_std=True)[1], ref.predict(X, return_std=True)[1], rtol=1e-9
    )


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_degenerate_targets_clip_without_overflow(fit_intercept):
    # A zero target (m_N = 0) or an exactly fitted one (rss = 0) makes the re-estimated
    # precisions diverge: they must stop at the clipping bound, with no overflow warning.
    rng = np.random.default_rng(9)
    X = rng.normal(size=(50, 10))
    w = np.arange(10.0)
    targets = [np.zeros(50), X @ w]
    if fit_intercept:
        targets.insert(1, np.full(50, 3.0))  # zero after centring
    for y in targets:
        m = BayesianLinearRegression(fit_intercept=fit_intercept).fit(X, y)
        assert np.isfinite(m.log_evidence_)
        assert np.all(np.isfinite(m.coef_cov_))
        assert m.noise_precision_ == 1e15
    # the exact fit recovers the weights (its prior precision stays finite)
    np.testing.assert_allclose(m.coef_, w, atol=1e-8)
    assert m.prior_precision_ < 1.0


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_sample_y_draws_functions_of_the_model(fit_intercept):
    # Posterior functions are phi(x)^T w: on many query points every draw minus the mean
    # lies in the span of the (centred) features, with covariance Q S_N Q^T.
    Phi, y = _sin_design(25, 3, seed=10)
    Phi = Phi[:, 1:] if fit_intercept else Phi
    m = BayesianLinearRegression(fit_intercept=fit_intercept).fit(Phi, y)
    grid = PolynomialBasis(degree=3).fit_transform(np.linspace(-0.2, 1.2, 300)[:, None])
    Q = grid[:, 1:] if fit_intercept else grid
    draws = m.sample_y(Q, n_samples=4000, random_state=1)
    assert draws.shape == (300, 4000)
    dev = draws - m.predict(Q)[:, None]
    Qc = Q - Phi.mean(axis=0) if fit_intercept else Q
    coef, *_ = np.linalg.lstsq(Qc, dev, rcond=None)
    assert np.max(np.abs(Qc @ coef - dev)) <= 1e-10 * np.max(np.abs(dev))
    # whitened by S_N = L L^T, the implied weight deviations are standard normal
    # (entries of the sample covariance of 4000 draws have standard error <= 0.025)
    white = np.linalg.solve(np.linalg.cholesky(m.coef_cov_), coef)
    np.testing.assert_allclose(np.cov(white), np.eye(Q.shape[1]), atol=0.1)
    np.testing.assert_array_equal(
        m.sample_y(Q, 3, random_state=5), m.sample_y(Q, 3, random_state=5)
    )
    with pytest.raises(ValueError, match="n_samples"):
        m.sample_y(Q, n_samples=0)


@pytest.mark.parametrize("alpha", [1.0, 1e-6])
def test_fixed_precisions_on_ill_conditioned_design_mpmath(alpha):
    # raw degree-10 monomials on [-9, -3]: alpha I + beta Phi^T Phi has cond up to ~1e28, so
    # a Cholesky solve of the normal equations has no correct digit (it had 5e-2 relative
    # error at alpha = 1 and none at alpha = 1e-6). The factorised route keeps ~1e-6.
    import mpmath

    rng = np.random.default_rng(0)
    x = rng.uniform(-9, -3, 50)
    Phi = np.vander(x, 11, increasing=True)
    y = np.sin(x) + 0.1 * rng.normal(size=50)
    beta = 100.0
    m = BayesianLinearRegression(
        fit_intercept=False, prior_precision=alpha, noise_precision=beta
    ).fit(Phi, y)
    with mpmath.workdps(100):
        M = mpmath.matrix(Phi.tolist())
        # Imperial "Mathematics for Inference and Machine Learning" eq. 1.243
        A = alpha * mpmath.eye(11) + beta * (M.T * M)
        ref = mpmath.lu_solve(A, beta * (M.T * mpmath.matrix(y.tolist())))
        ref = np.array([float(v) for v in ref])
    np.testing.assert_allclose(m.coef_, ref, rtol=1e-4)
    assert m.n_iter_ == 0


def test_evidence_supremum_near_a_boundary_is_reached():
    # N < M, no intercept: the data can be interpolated and the evidence keeps rising, ever
    # more slowly, as beta grows. The fixed point crawled (ConvergenceWarning after max_iter)
    # and could stop below scikit-learn's evidence; the O(M)-gradient polish finishes.
    rng = np.random.default_rng(125)
    n, m = int(rng.integers(2, 40)), int(rng.integers(1, 30))  # a random case: 19 x 25
    X = rng.normal(size=(n, m)) * rng.uniform(0.1, 10, m) + rng.normal(size=m) * 3
    y = X @ (rng.normal(size=m) * (rng.random(m) < 0.5)) + rng.normal(size=n)
    ours = BayesianLinearRegression(fit_intercept=False).fit(X, y)  # warnings are errors here
    a, b = ours.prior_precision_, ours.noise_precision_
    assert ours.log_evidence_ == pytest.approx(_direct_log_evidence(X, y, a, b), rel=1e-9)
    tiny = 1e-12
    ref = BayesianRidge(
        fit_intercept=False,
        alpha_1=tiny,
        alpha_2=tiny,
        lambda_1=tiny,
        lambda_2=tiny,
        tol=1e-12,
        max_iter=100000,
        compute_score=True,
    ).fit(X, y)
    assert ours.log_evidence_ >= ref.scores_[-1] - 1e-9 * abs(ref.scores_[-1])
    # stationary in log alpha (beta may sit anywhere on the flat ridge towards infinity)
    h = 1e-4
    d = _direct_log_evidence(X, y, a * np.exp(h), b) - _direct_log_evidence(
        X, y, a * np.exp(-h), b
    )
    assert abs(d / (2 * h)) < 1e-5
