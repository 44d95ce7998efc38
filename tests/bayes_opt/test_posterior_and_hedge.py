"""The surrogate's fast posterior (values against the GP, gradients against central
differences), GP-Hedge's gains, the recommendation and the ``noise`` parameter."""

import mpmath
import numpy as np
import pytest
from scipy.stats import norm

from mathlearn.bayes_opt import BayesianOptimizer
from mathlearn.bayes_opt._posterior import Posterior
from mathlearn.gaussian_process import GaussianProcessRegressor
from mathlearn.kernels import RBF, ConstantKernel, Matern, RationalQuadratic


def _gp(kernel, seed=0, n=12, d=3):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 - 0.5 * X[:, 2] + 0.01 * rng.standard_normal(n)
    gp = GaussianProcessRegressor(kernel, noise_variance=1e-3, normalize_y=True, optimizer=None)
    return gp.fit(X, y), rng


KERNELS = [
    ConstantKernel(2.0) * Matern([0.3, 0.5, 0.8], nu=2.5),
    ConstantKernel(0.7) * Matern([0.3, 0.5, 0.8], nu=1.5),
    Matern(0.4, nu=0.5),
    RBF([0.4, 0.6, 0.9]) * ConstantKernel(1.5),
    ConstantKernel(1.2) * RationalQuadratic(0.5, 2.0),  # no closed form: differences
]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: type(k).__name__)
def test_posterior_matches_the_gp_and_its_gradients_match_differences(kernel):
    gp, rng = _gp(kernel)
    post = Posterior(gp)
    Z = rng.random((6, 3))
    mu, sd = post.mean_std(Z)
    m_ref, s_ref = gp.predict(Z, return_std=True)
    np.testing.assert_allclose(mu, m_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sd, s_ref, rtol=1e-8, atol=1e-10)
    z0 = gp.X_train_[2]
    _, C = gp.predict(np.vstack([z0[None, :], Z]), return_cov=True)
    rho_ref = np.sqrt(C[0, 0] + np.diag(C)[1:] - 2 * C[0, 1:])
    closed = post.spec is not None
    # Closed forms: the central difference's own error, O(h^2) with h = 1e-5; the
    # fallback's differences carry O(eps^(2/3)) relative error.
    tol = 1e-6 if closed else 1e-4
    h = 1e-5
    for z in Z[:3]:
        for anchor in (None, z0):
            _, s, dm, ds = post.mean_std_grad(z, anchor)
            if anchor is None:
                assert s == pytest.approx(gp.predict(z[None, :], return_std=True)[1][0])
            else:
                i = int(np.flatnonzero((Z == z).all(axis=1))[0])
                assert s == pytest.approx(rho_ref[i], rel=1e-8)
            fd_m, fd_s = [], []
            for j in range(3):
                e = np.zeros(3)
                e[j] = h
                a, b = post.mean_std_grad(z + e, anchor), post.mean_std_grad(z - e, anchor)
                fd_m.append((a[0] - b[0]) / (2 * h))
                fd_s.append((a[1] - b[1]) / (2 * h))
            np.testing.assert_allclose(dm, fd_m, rtol=tol, atol=tol)
            np.testing.assert_allclose(ds, fd_s, rtol=tol, atol=tol)


@pytest.mark.parametrize("kind", ["lcb", "ei", "pi", "log_ei", "noisy_ei", "noisy_pi"])
def test_scalar_acquisition_gradient_matches_vector_form(kind):
    from mathlearn.bayes_opt._optimizer import _acq_scalar

    opt = BayesianOptimizer([(0.0, 1.0)], acquisition=kind)
    z = 1.6448536269514722  # z_{0.95}
    for mu, sd, t in [(0.3, 0.2, 0.1), (-0.5, 1.3, 0.0), (2.0, 0.1, 0.0), (0.0, 0.0, 0.5)]:
        v, a, b = _acq_scalar(kind, mu, sd, t, z)
        ref = float(opt._acq(kind, np.array([mu]), np.array([sd]), t)[0])
        assert v == pytest.approx(ref, rel=1e-12, abs=1e-300)
        if sd > 0:
            h = 1e-6
            fm = [opt._acq(kind, np.array([mu + s * h]), np.array([sd]), t)[0] for s in (1, -1)]
            fs = [opt._acq(kind, np.array([mu]), np.array([sd + s * h]), t)[0] for s in (1, -1)]
            assert a == pytest.approx((fm[0] - fm[1]) / (2 * h), rel=1e-6, abs=1e-9)
            assert b == pytest.approx((fs[0] - fs[1]) / (2 * h), rel=1e-6, abs=1e-9)


def test_hedge_gains_are_minus_the_posterior_mean_at_each_nominee():
    f = lambda x: float((x[0] - 0.3) ** 2 + (x[1] - 0.6) ** 2)  # noqa: E731
    opt = BayesianOptimizer(
        [(0.0, 1.0)] * 2, n_initial=5, noise=0.0, random_state=0, n_candidates=64, n_starts=1
    )
    for _ in range(6):
        x = opt.ask()
        opt.tell(x, f(x))
    # One nominee per member: LCB, EI, PI and the posterior mean.
    assert opt._nominees is not None and opt._nominees.shape == (4, 2)
    nominees, gains = opt._nominees.copy(), opt._gains.copy()
    opt.ask()  # refits the surrogate on every evaluation, then updates the gains
    gp = opt.surrogate_
    expected = gains - gp.predict(nominees) / gp._y_scale[0]
    np.testing.assert_allclose(opt._gains, expected, rtol=1e-10)


def test_recommend_is_the_smallest_posterior_mean_and_noise_is_validated():
    rng = np.random.default_rng(3)
    opt = BayesianOptimizer([(0.0, 1.0)], n_initial=6, random_state=0, n_candidates=64)
    for _ in range(8):
        x = opt.ask()
        opt.tell(x, float((x[0] - 0.4) ** 2 + 0.05 * rng.standard_normal()))
    x_rec, m_rec = opt.recommend()
    gp = opt.surrogate_
    assert gp.X_train_.shape[0] == 8
    mu = gp.predict(gp.X_train_)
    assert m_rec == pytest.approx(mu.min(), rel=1e-10)
    assert x_rec[0] == pytest.approx(opt.X[int(np.argmin(mu)), 0])
    exact = BayesianOptimizer([(0.0, 1.0)], noise=0.0)
    exact.tell([0.2], 1.0)
    exact.tell([0.7], -1.0)
    assert exact.recommend()[1] == -1.0 and exact.recommend()[0][0] == 0.7
    for bad in ("poisson", -1.0, np.nan, True):
        with pytest.raises(ValueError, match="noise"):
            BayesianOptimizer([(0.0, 1.0)], noise=bad)


@pytest.mark.parametrize("xi", [0.05, 0.5])
def test_xi_margin_shifts_the_target_of_noisy_pi(xi):
    # The proposal maximises Phi((mu(x~) - xi s_y - mu(x)) / rho(x, x~)) of the fitted
    # surrogate (x~ the evaluated point of smallest posterior mean): no point of a fine grid
    # scores higher, up to the grid's own O(h^2) resolution.
    rng = np.random.default_rng(1)
    f = lambda x: float(np.sin(5 * x[0]) + x[0] + 0.05 * rng.standard_normal())  # noqa: E731
    opt = BayesianOptimizer(
        [(0.0, 2.0)], acquisition="noisy_pi", xi=xi, n_initial=6, random_state=0
    )
    for _ in range(6):
        x = opt.ask()
        opt.tell(x, f(x))
    x_new = opt.ask()
    gp = opt.surrogate_
    mu_data = gp.predict(gp.X_train_)
    z_inc = gp.X_train_[int(np.argmin(mu_data))]
    target = mu_data.min() - xi * np.std(opt.y)

    def pi(z):  # z: points of the unit interval (the surrogate's inputs)
        mu, cov = gp.predict(np.vstack([z_inc[None, :], z]), return_cov=True)
        rho = np.sqrt(np.maximum(cov[0, 0] + np.diag(cov)[1:] - 2 * cov[0, 1:], 0.0))
        return norm.cdf((target - mu[1:]) / np.maximum(rho, 1e-300))

    grid = np.linspace(0.0, 1.0, 2001)[:, None]
    best_grid = max(float(pi(chunk).max()) for chunk in np.array_split(grid, 8))
    got = float(pi(np.array([[x_new[0] / 2.0]]))[0])
    assert got >= best_grid - 1e-4


def test_mean_proposes_the_minimiser_of_the_posterior_mean_and_pi_gets_the_margin():
    # Exact evaluations: "mean" proposes the minimiser of the fitted surrogate's posterior
    # mean, PI the maximiser of Phi((y_best - xi s_y - mu(x)) / sd(x)); no point of a fine
    # grid does better, up to the grid's own O(h^2) resolution.
    f = lambda x: float(np.sin(5 * x[0]) + x[0])  # noqa: E731
    grid = np.linspace(0.0, 1.0, 2001)[:, None]
    for acquisition, xi in (("mean", 0.01), ("pi", 0.05), ("pi", 0.5)):
        opt = BayesianOptimizer(
            [(0.0, 2.0)], acquisition=acquisition, xi=xi, noise=0.0, n_initial=6, random_state=0
        )
        for _ in range(6):
            x = opt.ask()
            opt.tell(x, f(x))
        x_new = opt.ask()
        gp = opt.surrogate_
        z_new = np.array([[x_new[0] / 2.0]])
        if acquisition == "mean":
            assert gp.predict(z_new)[0] <= gp.predict(grid).min() + 1e-6
            continue
        target = opt.y.min() - xi * np.std(opt.y)

        def pi(z, gp=gp, target=target):
            mu, sd = gp.predict(z, return_std=True)
            return norm.cdf((target - mu) / np.maximum(sd, 1e-300))

        assert float(pi(z_new)[0]) >= float(pi(grid).max()) - 1e-4


def test_xi_is_validated():
    for bad in (-0.1, np.inf, np.nan, True, "0.1"):
        with pytest.raises(ValueError, match="xi"):
            BayesianOptimizer([(0.0, 1.0)], xi=bad)


def test_refit_leaves_a_degenerate_warm_start():
    # A previous surrogate at the white-noise optimum (every length scale at its lower bound,
    # where the likelihood's gradient in them vanishes) must not trap the next fit: the cold
    # and Sobol starts find the smooth model of a smooth function.
    rng = np.random.default_rng(0)
    d = 5
    opt = BayesianOptimizer([(-1.0, 1.0)] * d, n_initial=2, random_state=0)
    X = rng.uniform(-1, 1, (30, d))
    y = np.sum((X - 0.2) ** 2, axis=1) + 0.01 * rng.standard_normal(30)
    for x, v in zip(X, y, strict=True):
        opt.tell(x, float(v))
    Z = (X + 1) / 2
    degenerate = GaussianProcessRegressor(
        ConstantKernel(1.0, (1e-3, 1e3)) * Matern(np.full(d, 1e-2), (1e-2, 1e1), nu=2.5),
        noise_variance=1e-8,
        noise_variance_bounds=(1e-8, 1.0),
        normalize_y=True,
    ).fit(Z, y)
    assert np.allclose(np.exp(degenerate.kernel_.theta[1:]), 1e-2)  # stays there alone
    opt.surrogate_ = degenerate
    opt.ask()
    gp = opt.surrogate_
    assert gp.log_marginal_likelihood_value_ > degenerate.log_marginal_likelihood_value_ + 10
    assert np.all(np.exp(gp.kernel_.theta[1:]) > 0.1)


def test_posterior_variance_is_accurate_when_the_gram_matrix_is_ill_conditioned():
    # Exact evaluations (noise 1e-10) clustered against long length scales: cond(K) ~ 1e12,
    # as late in a Bayesian-optimisation run. Reference: the posterior variances of the same
    # floating-point inputs in 50-digit arithmetic. The fast view solves with the Cholesky
    # factor L, so its error is bounded to first order by (i) forward substitution (Higham,
    # "Accuracy and Stability of Numerical Algorithms", Thm 8.5: the computed u solves
    # (L + dL) u = w, |dL| <= gamma |L|), with the rounding of w and of prior - |u|^2, and
    # (ii) the factorisation (L L^T = K + E, |E| <= gamma |L||L^T|, Thm 10.3), which moves
    # the variance by b^T E b with b = K^{-1} w. (An explicit K^{-1}, whose error is of order
    # eps c cond(K), gave variances of 0.06-0.13 here instead of 1e-8-1e-5.)
    rng = np.random.default_rng(0)
    X = np.vstack([rng.random((6, 2)), 0.5 + 0.03 * rng.standard_normal((10, 2))])
    y = (X[:, 1] - 0.5) ** 2 + 0.3 * np.sin(3 * X[:, 0])
    c, ls, noise = 1000.0, np.array([2.0, 7.0]), 1e-10
    gp = GaussianProcessRegressor(
        ConstantKernel(c) * Matern(ls, nu=2.5), noise_variance=noise, optimizer=None
    ).fit(X, y)
    assert gp.jitter_ == 0.0 and float(gp._y_scale[0]) == 1.0
    post = Posterior(gp)
    n, eps = X.shape[0], np.finfo(float).eps
    gamma = (n + 2) * eps / (1 - (n + 2) * eps)
    L = gp.L_
    L_inv = np.linalg.inv(L)

    mpmath.mp.dps = 50

    def k_mp(a, b):
        r2 = sum(((mpmath.mpf(a[j]) - mpmath.mpf(b[j])) / ls[j]) ** 2 for j in range(2))
        s = mpmath.sqrt(5 * r2)
        return c * (1 + s + s * s / 3) * mpmath.exp(-s)

    K_mp = mpmath.matrix(n, n)
    for i in range(n):
        for j in range(n):
            K_mp[i, j] = k_mp(X[i], X[j]) + (noise if i == j else 0)
    K_inv = K_mp**-1

    def bound(w, w_abs, prior):
        """First-order rounding bound on ``prior - |L^{-1} w|^2`` from the computed ``w``
        (entrywise error <= 4 eps w_abs) and ``prior`` (a sum of terms of size <= prior)."""
        u = np.linalg.solve(L, w)
        b = np.linalg.solve(L.T, u)
        subst = np.abs(u) @ (np.abs(L_inv) @ (gamma * np.abs(L) @ np.abs(u) + 4 * eps * w_abs))
        return 2 * subst + 2 * gamma * prior + gamma * np.sum((np.abs(L.T) @ np.abs(b)) ** 2)

    z0 = X[8]
    k0 = gp.kernel_(z0[None, :], X)[0]
    k0_mp = mpmath.matrix([k_mp(z0, x) for x in X])
    for t in (1e-2, 3e-2, 1e-1):
        z = z0 + t * np.array([0.6, 0.8])
        kz = gp.kernel_(z[None, :], X)[0]
        kz_mp = mpmath.matrix([k_mp(z, x) for x in X])
        exact = float(c - (kz_mp.T * K_inv * kz_mp)[0])
        tol = bound(kz, np.abs(kz), c)
        assert tol < 0.1 * exact  # the bound resolves the variance
        assert abs(post.mean_std(z[None, :])[1][0] ** 2 - exact) <= tol
        assert abs(post.mean_std_grad(z)[1] ** 2 - exact) <= tol
        # The variance of f(z0) - f(z), the noise-aware acquisitions' rho^2.
        w_mp = kz_mp - k0_mp
        exact = float(2 * c - 2 * k_mp(z, z0) - (w_mp.T * K_inv * w_mp)[0])
        tol = bound(kz - k0, np.abs(kz) + np.abs(k0), 2 * c)
        assert tol < 0.1 * exact
        assert abs(post.diff_std(z[None, :], z0)[0] ** 2 - exact) <= tol
        assert abs(post.mean_std_grad(z, z0)[1] ** 2 - exact) <= tol
