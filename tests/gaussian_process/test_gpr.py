"""GaussianProcessRegressor against the notes' numbers, scikit-learn, finite differences and
closed-form identities; a battery of awkward fits; bad input."""

import warnings

import numpy as np
import pytest
import sklearn.gaussian_process as skgp
import sklearn.gaussian_process.kernels as skk

from mathlearn.exceptions import InvalidParameterError, NumericalWarning
from mathlearn.gaussian_process import GaussianProcessRegressor
from mathlearn.gaussian_process._common import clip_variance
from mathlearn.kernels import (
    RBF,
    ConstantKernel,
    ExpSineSquared,
    GammaExponential,
    Matern,
    RationalQuadratic,
    WhiteKernel,
)

# The notes print six decimals: agreement to half a unit in the last place.
SIX = 5.01e-7
EPS = np.finfo(float).eps


def _data(rng, n=30, d=2, noise=0.1):
    X = rng.uniform(-2, 2, size=(n, d))
    y = np.sin(X).sum(axis=1) + noise * rng.standard_normal(n)
    return X, y


# ----------------------------------------------------------------------------- notes' numbers
def test_oxford_d10_values():
    X, y = np.array([[0.0], [1.0]]), np.array([1.0, -1.0])
    gp = GaussianProcessRegressor(RBF(1.0, "fixed"), noise_variance=0.1, optimizer=None)
    gp.fit(X, y)
    np.testing.assert_allclose(gp.alpha_, [2.026468, -2.026468], atol=SIX)
    mean, std = gp.predict(np.array([[0.5], [2.0]]), return_std=True)
    np.testing.assert_allclose(mean, [0.0, -0.954863], atol=SIX)
    np.testing.assert_allclose(std**2, [0.087270, 0.613784], atol=SIX)
    assert gp.log_marginal_likelihood_value_ == pytest.approx(-3.778429, abs=SIX)
    assert gp.jitter_ == 0.0
    # The noisy predictive adds sigma^2 = 0.1 to the latent variance.
    _, std_y = gp.predict(np.array([[0.5], [2.0]]), return_std=True, noisy=True)
    np.testing.assert_allclose(std_y**2, std**2 + 0.1, rtol=1e-14)


@pytest.mark.parametrize(
    ("gamma", "mean", "sd_f", "sd_y"),
    [
        (
            2.0,
            [5.73e-4, 0.297030, 3.82e-4, -0.020753, -0.099010, -1.91e-4],
            [0.999998, 0.099504, 0.999996, 0.978007, 0.099504, 0.999998],
            [1.004986, 0.141071, 1.004984, 0.983106, 0.141071, 1.004986],
        ),
        (
            1.0,
            [0.024381, 0.297023, 0.016147, -0.021935, -0.098990, -0.008126],
            [0.996659, 0.099504, 0.993351, 0.958262, 0.099504, 0.996659],
            [1.001663, 0.141071, 0.998372, 0.963465, 0.141071, 1.001663],
        ),
    ],
)
def test_stuttgart_exercise_11_3(gamma, mean, sd_f, sd_y):
    kernel = GammaExponential(0.2, gamma=gamma, length_scale_bounds="fixed", gamma_bounds="fixed")
    gp = GaussianProcessRegressor(kernel, noise_variance=0.01, optimizer=None)
    gp.fit(np.array([[-0.5], [0.5]]), np.array([0.3, -0.1]))
    Xs = np.array([-1.0, -0.5, 0.0, 0.25, 0.5, 1.0])[:, None]
    m, s = gp.predict(Xs, return_std=True)
    _, sy = gp.predict(Xs, return_std=True, noisy=True)
    # mean entries printed with three significant digits are still exact to 5e-7
    np.testing.assert_allclose(m, mean, atol=SIX)
    np.testing.assert_allclose(s, sd_f, atol=SIX)
    np.testing.assert_allclose(sy, sd_y, atol=SIX)


@pytest.mark.parametrize("lam", [0.01, 0.3, 4.0])
def test_kernel_bayesian_ridge_is_a_scaled_gp(rng, lam):
    # Stuttgart slide 8:10: kernel Bayesian ridge with prior N(0, sigma^2 / lambda) has mean
    # kappa (K + lambda I)^{-1} y and variance (sigma^2 / lambda)(k(x, x) - kappa (K + lambda
    # I)^{-1} kappa^T); with lambda = sigma^2 it is the GP. For any lambda it is the GP with
    # kernel (sigma^2 / lambda) k and noise sigma^2 -- written out here in NumPy.
    s2 = 0.04
    X = rng.uniform(-1, 1, size=(12, 1))
    y = np.sin(3 * X[:, 0]) + 0.2 * rng.normal(size=12)
    Xs = np.linspace(-1.2, 1.2, 7)[:, None]
    k = RBF(0.4, "fixed")
    K, kap, kss = k(X), k(Xs, X), np.diag(k(Xs))
    A = K + lam * np.eye(12)
    mean = kap @ np.linalg.solve(A, y)
    var = (s2 / lam) * (kss - np.einsum("ij,ji->i", kap, np.linalg.solve(A, kap.T)))
    gp = GaussianProcessRegressor(
        ConstantKernel(s2 / lam, "fixed") * k, noise_variance=s2, optimizer=None
    ).fit(X, y)
    m, sd = gp.predict(Xs, return_std=True)
    cond = np.linalg.cond(A)
    np.testing.assert_allclose(m, mean, rtol=0, atol=100 * cond * EPS * np.abs(y).max())
    np.testing.assert_allclose(sd**2, var, rtol=0, atol=100 * cond * EPS * s2 / lam)


# ----------------------------------------------------------------------------- scikit-learn
def _pair(d):
    ours = ConstantKernel(1.3) * RBF(np.linspace(0.7, 1.5, d))
    peer = skk.ConstantKernel(1.3) * skk.RBF(np.linspace(0.7, 1.5, d))
    return ours, peer


# n = 300 takes the gradient's LAPACK potri route (half of K^{-1}), n = 40 the full inverse.
@pytest.mark.parametrize("n", [40, 300])
def test_lml_and_gradient_match_sklearn(rng, n):
    X, y = _data(rng, n=n, d=3)
    ours_k, peer_k = _pair(3)
    # Our noise is a likelihood parameter; scikit-learn's learnable one is a WhiteKernel.
    ours = GaussianProcessRegressor(
        ours_k, noise_variance=0.05, noise_variance_bounds=(1e-5, 1e2), optimizer=None
    ).fit(X, y)
    peer = skgp.GaussianProcessRegressor(
        peer_k + skk.WhiteKernel(0.05, (1e-5, 1e2)), alpha=0.0, optimizer=None
    ).fit(X, y)
    for theta in (ours.theta_, ours.theta_ + rng.normal(scale=0.3, size=ours.theta_.shape)):
        lml, grad = ours.log_marginal_likelihood(theta, eval_gradient=True)
        lml_p, grad_p = peer.log_marginal_likelihood(theta, eval_gradient=True)
        # Both are sums of n terms of size O(1) computed in a different order.
        assert lml == pytest.approx(lml_p, rel=1e-10)
        np.testing.assert_allclose(grad, grad_p, rtol=1e-8, atol=1e-10)
    Xs = rng.uniform(-2, 2, size=(7, 3))
    m, s = ours.predict(Xs, return_std=True)
    mp, sp = peer.predict(Xs, return_std=True)
    # scikit-learn's std includes the WhiteKernel, i.e. it is the noisy predictive.
    _, s_noisy = ours.predict(Xs, return_std=True, noisy=True)
    np.testing.assert_allclose(m, mp, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s_noisy, sp, rtol=1e-9)
    assert np.all(s < s_noisy)


def test_fixed_noise_predictions_match_sklearn_alpha(rng):
    X, y = _data(rng, n=25, d=2)
    ours_k, peer_k = _pair(2)
    ours = GaussianProcessRegressor(ours_k, noise_variance=1e-2, optimizer=None).fit(X, y)
    peer = skgp.GaussianProcessRegressor(peer_k, alpha=1e-2, optimizer=None).fit(X, y)
    Xs = rng.uniform(-2, 2, size=(9, 2))
    m, cov = ours.predict(Xs, return_cov=True)
    mp, covp = peer.predict(Xs, return_cov=True)
    np.testing.assert_allclose(m, mp, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(cov, covp, rtol=1e-8, atol=1e-12)
    assert ours.log_marginal_likelihood_value_ == pytest.approx(
        peer.log_marginal_likelihood_value_, rel=1e-10
    )


@pytest.mark.parametrize("n", [40, 300])
def test_multi_output_lml_gradient_is_the_sum_over_outputs(rng, n):
    # Outputs share the kernel and are independent given it: the LML and its gradient are
    # the sums of the single-output ones (on both routes of the gradient).
    X, y = _data(rng, n=n, d=2)
    Y = np.column_stack([y, np.cos(X[:, 0]), X[:, 1] ** 2 / 4])
    kernel = ConstantKernel(0.8) * RBF([0.6, 1.4])

    def gp(target):
        return GaussianProcessRegressor(
            kernel, noise_variance=0.1, noise_variance_bounds=(1e-5, 10.0), optimizer=None
        ).fit(X, target)

    theta = gp(Y).theta_ + 0.2
    lml, grad = gp(Y).log_marginal_likelihood(theta, eval_gradient=True)
    parts = [gp(Y[:, j]).log_marginal_likelihood(theta, eval_gradient=True) for j in range(3)]
    # Sums of n terms in another order: rounding of order n eps relative.
    assert lml == pytest.approx(sum(p[0] for p in parts), rel=1e-10)
    np.testing.assert_allclose(grad, sum(p[1] for p in parts), rtol=1e-9, atol=1e-9)


def test_optimum_no_worse_than_sklearn(rng):
    X, y = _data(rng, n=50, d=2, noise=0.2)
    ours_k, peer_k = _pair(2)
    ours = GaussianProcessRegressor(
        ours_k,
        noise_variance=0.1,
        noise_variance_bounds=(1e-6, 10.0),
        n_restarts=3,
        random_state=0,
    ).fit(X, y)
    peer = skgp.GaussianProcessRegressor(
        peer_k + skk.WhiteKernel(0.1, (1e-6, 10.0)),
        alpha=0.0,
        n_restarts_optimizer=3,
        random_state=0,
    ).fit(X, y)
    # Both stop L-BFGS-B by the same tests (projected gradient <= 1e-5, or one iteration
    # raising the LML by <= 1e7 eps max(|LML|, 1), about 1e-7 at the tens of nats here):
    # each is then within a small multiple of that of a local optimum; both found the same
    # basin or ours is better.
    assert ours.log_marginal_likelihood_value_ >= peer.log_marginal_likelihood_value_ - 1e-6
    assert len(ours.optimizer_trace_) == 4
    best = max(t["log_marginal_likelihood"] for t in ours.optimizer_trace_)
    assert best == pytest.approx(ours.log_marginal_likelihood_value_, rel=1e-9)
    for t in ours.optimizer_trace_:
        lo, hi = np.log(1e-5), np.log(1e5)
        assert np.all(t["theta"][:3] >= lo) and np.all(t["theta"][:3] <= hi)
        assert t["history"][-1] >= t["history"][0] - 1e-9


# ----------------------------------------------------------------------------- gradients
@pytest.mark.parametrize(
    ("kernel", "d"),
    [
        (ConstantKernel(0.8) * RBF([0.6, 1.4]), 2),
        (Matern(0.9, nu=2.5) + WhiteKernel(0.05), 2),
        (RationalQuadratic(1.1, alpha=0.7) * ConstantKernel(2.0), 2),
        # the periodic kernel of a Euclidean distance is PSD in one dimension only
        (ExpSineSquared(1.0, periodicity=2.5) + RBF(2.0), 1),
        (GammaExponential(1.2, gamma=1.5), 2),
    ],
)
@pytest.mark.parametrize("multi", [False, True])
def test_lml_gradient_finite_differences(rng, kernel, d, multi):
    X, y = _data(rng, n=20, d=d)
    if multi:
        y = np.column_stack([y, np.cos(X[:, 0]), X[:, -1]])
    gp = GaussianProcessRegressor(
        kernel, noise_variance=0.1, noise_variance_bounds=(1e-5, 10.0), optimizer=None
    ).fit(X, y)
    theta = gp.theta_
    _, grad = gp.log_marginal_likelihood(theta, eval_gradient=True)
    # Central differences: truncation O(h^2), rounding O(eps |lml| / h); h = 1e-5 balances
    # them near 1e-8 relative to the LML's size.
    h = 1e-5
    fd = np.array(
        [
            (gp.log_marginal_likelihood(theta + h * e) - gp.log_marginal_likelihood(theta - h * e))
            / (2 * h)
            for e in np.eye(theta.size)
        ]
    )
    scale = 1.0 + abs(gp.log_marginal_likelihood(theta))
    np.testing.assert_allclose(grad, fd, atol=1e-7 * scale)


# ----------------------------------------------------------------------------- identities
def test_krr_closed_form_equals_gp_mean(rng):
    X, y = _data(rng, n=30, d=2)
    Xs = rng.uniform(-2, 2, size=(8, 2))
    kernel = Matern(0.8, nu=1.5, length_scale_bounds="fixed")
    lam = 0.3
    gp = GaussianProcessRegressor(kernel, noise_variance=lam, optimizer=None).fit(X, y)
    # Kernel ridge: minimise sum (y - f(x))^2 + lam ||f||_H^2  =>  f = k_* (K + lam I)^{-1} y
    coef = np.linalg.solve(kernel(X) + lam * np.eye(30), y)
    np.testing.assert_allclose(gp.predict(Xs), kernel(Xs, X) @ coef, rtol=1e-10, atol=1e-12)


def test_return_std_cov_consistency_and_distribution(rng):
    X, y = _data(rng, n=15, d=1)
    gp = GaussianProcessRegressor(RBF(0.7, "fixed"), noise_variance=0.04, optimizer=None)
    gp.fit(X, y)
    Xs = np.linspace(-3, 3, 11)[:, None]
    m, s = gp.predict(Xs, return_std=True)
    m2, cov = gp.predict(Xs, return_cov=True)
    np.testing.assert_allclose(m, m2)
    np.testing.assert_allclose(np.diag(cov), s**2, rtol=1e-10, atol=1e-14)
    dist = gp.predict_distribution(Xs)
    np.testing.assert_allclose(dist.mean, m)
    np.testing.assert_allclose(dist.cov, cov + 0.04 * np.eye(11), atol=1e-14)
    with pytest.raises(ValueError, match="return_std and return_cov"):
        gp.predict(Xs, return_std=True, return_cov=True)


def test_sample_y_moments(rng):
    X, y = _data(rng, n=6, d=1)
    gp = GaussianProcessRegressor(RBF(1.0, "fixed"), noise_variance=0.1, optimizer=None)
    gp.fit(X, y)
    Xs = np.array([[-1.0], [0.3], [2.5]])
    n = 40_000
    draws = gp.sample_y(Xs, n_samples=n, random_state=1)
    assert draws.shape == (3, n)
    m, cov = gp.predict(Xs, return_cov=True)
    se = np.sqrt(np.diag(cov) / n)
    # Five standard errors: a false alarm has probability below 1e-6 per entry.
    np.testing.assert_array_less(np.abs(draws.mean(axis=1) - m), 5 * se + 1e-12)
    # Sample variance: standard error sqrt(2/n) sigma^2 for a Gaussian.
    np.testing.assert_array_less(
        np.abs(draws.var(axis=1) - np.diag(cov)), 5 * np.sqrt(2 / n) * np.diag(cov) + 1e-12
    )


def test_normalize_y_equals_scaled_kernel_and_mean(rng):
    X, y = _data(rng, n=20, d=2)
    y = 50.0 + 30.0 * y
    Xs = rng.uniform(-2, 2, size=(5, 2))
    k = RBF([0.9, 1.3], "fixed")
    a = GaussianProcessRegressor(k, noise_variance=0.05, normalize_y=True, optimizer=None)
    a.fit(X, y)
    mu, sd = y.mean(), y.std()
    # Same model written out: prior mean mu, kernel sd^2 k, noise sd^2 * 0.05.
    b = GaussianProcessRegressor(
        ConstantKernel(sd**2, "fixed") * k,
        noise_variance=0.05 * sd**2,
        mean=lambda Z: np.full(Z.shape[0], mu),
        optimizer=None,
    ).fit(X, y)
    ma, sa = a.predict(Xs, return_std=True)
    mb, sb = b.predict(Xs, return_std=True)
    np.testing.assert_allclose(ma, mb, rtol=1e-10)
    np.testing.assert_allclose(sa, sb, rtol=1e-9)
    assert a.log_marginal_likelihood_value_ == pytest.approx(
        b.log_marginal_likelihood_value_, rel=1e-10
    )


def test_mean_function_and_constant_mean(rng):
    X, y = _data(rng, n=20, d=1)
    y = y + 3.0 * X[:, 0]
    Xs = np.linspace(-3, 3, 7)[:, None]
    k = RBF(1.0, "fixed")
    gp = GaussianProcessRegressor(k, noise_variance=0.1, mean=lambda Z: 3.0 * Z[:, 0])
    gp.set_params(optimizer=None).fit(X, y)
    ref = GaussianProcessRegressor(k, noise_variance=0.1, optimizer=None).fit(X, y - 3 * X[:, 0])
    np.testing.assert_allclose(gp.predict(Xs), ref.predict(Xs) + 3 * Xs[:, 0], rtol=1e-12)
    c = GaussianProcessRegressor(k, noise_variance=0.1, mean="constant", optimizer=None)
    c.fit(X, y)
    ref = GaussianProcessRegressor(k, noise_variance=0.1, optimizer=None).fit(X, y - y.mean())
    np.testing.assert_allclose(c.predict(Xs), ref.predict(Xs) + y.mean(), rtol=1e-12)


def test_multi_output_shares_kernel(rng):
    X, y = _data(rng, n=18, d=2)
    Y = np.column_stack([y, 5 * np.cos(X[:, 0]) + 2])
    Xs = rng.uniform(-2, 2, size=(4, 2))
    k = ConstantKernel(1.5, "fixed") * RBF(1.1, "fixed")
    gp = GaussianProcessRegressor(k, noise_variance=0.1, normalize_y=True, optimizer=None)
    gp.fit(X, Y)
    m, s = gp.predict(Xs, return_std=True)
    _, cov = gp.predict(Xs, return_cov=True)
    assert m.shape == s.shape == (4, 2) and cov.shape == (4, 4, 2)
    total = 0.0
    for j in range(2):
        single = GaussianProcessRegressor(k, noise_variance=0.1, normalize_y=True, optimizer=None)
        single.fit(X, Y[:, j])
        mj, sj = single.predict(Xs, return_std=True)
        np.testing.assert_allclose(m[:, j], mj, rtol=1e-10)
        np.testing.assert_allclose(s[:, j], sj, rtol=1e-10)
        total += single.log_marginal_likelihood_value_
    assert gp.log_marginal_likelihood_value_ == pytest.approx(total, rel=1e-12)
    assert gp.sample_y(Xs, 3, random_state=0).shape == (4, 2, 3)
    with pytest.raises(ValueError, match="single output"):
        gp.predict_distribution(Xs)


def test_learned_noise_recovers_truth(rng):
    X = rng.uniform(-3, 3, size=(300, 1))
    y = np.sin(2 * X[:, 0]) + 0.3 * rng.standard_normal(300)
    gp = GaussianProcessRegressor(
        RBF(1.0), noise_variance=1.0, noise_variance_bounds=(1e-6, 10.0), random_state=0
    ).fit(X, y)
    # The ML estimate of sigma^2 = 0.09 from 300 points has relative sd about sqrt(2/300).
    assert gp.noise_variance_ == pytest.approx(0.09, rel=5 * np.sqrt(2 / 300))


# ----------------------------------------------------------------------------- robustness
def test_two_hundred_awkward_fits():
    """Random data scales, duplicated inputs, noise-free targets, length scales at bounds."""
    rng = np.random.default_rng(12345)
    for i in range(200):
        n = int(rng.integers(2, 12))
        d = int(rng.integers(1, 3))
        x_scale = 10.0 ** rng.uniform(-3, 3)
        y_scale = 10.0 ** rng.uniform(-6, 6)
        X = x_scale * rng.standard_normal((n, d)) + 10.0 ** rng.uniform(0, 4)
        if i % 3 == 0:
            X[: n // 2 + 1] = X[0]  # duplicated inputs
        y = y_scale * np.sin(X.sum(axis=1) / x_scale)
        if i % 2 == 0:
            y = y + 0.01 * y_scale * rng.standard_normal(n)
        ls_bounds = (1e-2, 1e2) if i % 4 else (1.0, 1.0 + 1e-9)
        ls0 = ls_bounds[int(rng.integers(0, 2))]  # start at a bound
        kernel = ConstantKernel(1.0, (1e-3, 1e3)) * RBF(ls0, ls_bounds)
        noise_bounds = "fixed" if i % 5 == 0 else (1e-8, 1e2)
        gp = GaussianProcessRegressor(
            kernel,
            noise_variance=1e-8,
            noise_variance_bounds=noise_bounds,
            normalize_y=bool(i % 2),
            n_restarts=int(i % 10 == 0),
            random_state=i,
        )
        Xs = np.vstack([X[:2], x_scale * rng.standard_normal((3, d))])
        with warnings.catch_warnings():
            # Jitter, and an optimiser stopped at a bound, may be reported; neither is an error.
            warnings.simplefilter("ignore")
            gp.fit(X, y)
            m, s = gp.predict(Xs, return_std=True)
            _, cov = gp.predict(Xs, return_cov=True)
            draws = gp.sample_y(Xs, 2, random_state=0)
        for a in (m, s, cov, draws, gp.log_marginal_likelihood_value_):
            assert np.all(np.isfinite(a)), i
        assert np.all(s >= 0) and np.all(np.diag(cov) >= 0), i


def test_jitter_reported_not_added_to_noise():
    X = np.zeros((4, 1))  # four identical inputs, noise-free: K is singular
    y = np.ones(4)
    gp = GaussianProcessRegressor(RBF(1.0, "fixed"), noise_variance=1e-300, optimizer=None)
    with pytest.warns(NumericalWarning, match="jitter"):
        gp.fit(X, y)
    assert gp.jitter_ > 0
    assert gp.noise_variance_ == 1e-300
    _, s = gp.predict(X, return_std=True)
    assert np.all(s >= 0) and np.all(np.isfinite(s))


def test_negative_variances_clipped_only_within_the_rounding_bound(rng):
    # Within the bound gamma_{n+2} (trace + k(x, x)) a negative variance is rounding: clipped
    # to 0 silently. Beyond it the factor does not match the kernel: still clipped (no NaN
    # reaches the user) but a NumericalWarning names the value. A factor shrunk by 1/1.1
    # makes |L^{-1} k|^2 about 1.21 k(x, x) at the training inputs (noise 1e-2): variances
    # near -0.2, fourteen orders beyond the bound.
    bound = np.full(3, 1e-16)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        np.testing.assert_array_equal(
            clip_variance(np.array([-1e-17, 0.0, 0.5]), bound, "x"), [0.0, 0.0, 0.5]
        )
    X, y = _data(rng, n=10, d=1)
    gp = GaussianProcessRegressor(RBF(1.0, "fixed"), noise_variance=1e-2, optimizer=None)
    gp.fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalWarning)
        assert np.all(gp.predict(X, return_std=True)[1] > 0)
    gp.L_ = gp.L_ / 1.1
    with pytest.warns(NumericalWarning, match=r"negative predictive variance -0\.[12]"):
        _, s = gp.predict(X, return_std=True)
    np.testing.assert_array_equal(s, 0.0)


# ----------------------------------------------------------------------------- bad input
def test_bad_input(rng):
    X, y = _data(rng, n=10, d=1)
    with pytest.raises(ValueError, match="nothing to optimise"):
        GaussianProcessRegressor(RBF(1.0, "fixed")).fit(X, y)
    with pytest.raises(ValueError, match="low < high"):
        GaussianProcessRegressor(RBF(1.0, (2.0, 2.0))).fit(X, y)
    with pytest.raises(ValueError, match="low <= high"):
        GaussianProcessRegressor(RBF(1.0, (3.0, 2.0))).fit(X, y)
    with pytest.raises(ValueError, match="noise_variance_bounds"):
        GaussianProcessRegressor(RBF(1.0), noise_variance_bounds=(1.0, 0.1)).fit(X, y)
    y_nan = y.copy()
    y_nan[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        GaussianProcessRegressor().fit(X, y_nan)
    with pytest.raises(InvalidParameterError, match="kernel"):
        GaussianProcessRegressor(kernel="rbf").fit(X, y)
    with pytest.raises(InvalidParameterError, match="noise_variance"):
        GaussianProcessRegressor(noise_variance=0.0).fit(X, y)
    gp = GaussianProcessRegressor(RBF(1.0, "fixed"), optimizer=None).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        gp.predict(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="entries"):
        gp.log_marginal_likelihood(np.zeros(3))
