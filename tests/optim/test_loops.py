"""The optimisation loops: minimize, minibatch SGD, Newton, and the L-BFGS-B bridge."""

import itertools
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize as scipy_minimize

from mathlearn import autodiff as ad
from mathlearn import optim
from mathlearn.exceptions import ConvergenceWarning


def rosenbrock(x):
    return ad.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


# --- minimize -------------------------------------------------------------------------------


def test_minimize_records_history_and_does_not_modify_x0():
    fg = ad.value_and_grad(lambda x: ad.sum((x - 1.0) ** 2))
    x0 = np.zeros(3)
    res = optim.minimize(fg, x0, optim.sgd(0.25), max_iter=100, tol=1e-8)
    assert res.success and res.nit == len(res.history) - 1
    np.testing.assert_array_equal(x0, 0.0)
    # f(x_t) = 3 * (1/2)^(2t): GD with step 1/4 halves the error each update.
    np.testing.assert_allclose(res.history, 3 * 0.25 ** np.arange(res.nit + 1), rtol=1e-12)
    assert res.grad_norms[-1] <= 1e-8
    np.testing.assert_allclose(res.x, 1.0, atol=1e-8)


def test_minimize_warns_at_max_iter_and_on_divergence():
    fg = ad.value_and_grad(lambda x: ad.sum(x**2))
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        res = optim.minimize(fg, np.ones(2), optim.sgd(0.01), max_iter=3)
    assert not res.success and res.nit == 3
    with pytest.warns(ConvergenceWarning, match="non-finite"), np.errstate(over="ignore"):
        res = optim.minimize(fg, np.ones(2), optim.sgd(1e3), max_iter=10_000)
    assert not np.isfinite(res.fun)


def test_minimize_callback_stops():
    fg = ad.value_and_grad(lambda x: ad.sum(x**2))
    seen = []

    def callback(t, x, f, g):
        seen.append(t)
        return t == 4

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = optim.minimize(fg, np.ones(2), optim.sgd(0.01), callback=callback)
    assert seen == [1, 2, 3, 4] and res.nit == 4 and "callback" in res.message


def test_minimize_with_autodiff_on_a_tanh_network(rng):
    # A one-hidden-layer tanh net (Imperial "Mathematics for Machine Learning" lecture 2) trained
    # with Adam through autodiff.
    X = rng.uniform(-2, 2, size=(64, 1))
    y = np.sin(2 * X[:, 0])
    params = {"A": rng.standard_normal((1, 16)), "b": rng.standard_normal(16), "w": np.zeros(16)}

    def loss(p):
        return ad.mean((ad.tanh(X @ p["A"] + p["b"]) @ p["w"] - y) ** 2)

    with pytest.warns(ConvergenceWarning):
        res = optim.minimize(ad.value_and_grad(loss), params, optim.adam(0.05), max_iter=600)
    assert res.history[-1] < 0.02 * res.history[0]


# --- minibatch SGD --------------------------------------------------------------------------


def _ls_problem(rng, n=40, d=3):
    X = rng.standard_normal((n, d))
    theta = rng.standard_normal(d)
    y = X @ theta + 0.1 * rng.standard_normal(n)

    def fun_and_grad_sum(w, idx):
        r = y[idx] - X[idx] @ w
        return 0.5 * r @ r, -X[idx].T @ r

    return X, y, fun_and_grad_sum


def test_minibatch_estimator_is_unbiased_with_the_notes_variance(rng):
    # Exact enumeration of the with-replacement scheme: each of the N^M index tuples has
    # probability N^-M (Imperial "Mathematics for Machine Learning" lecture 6). E[g_hat] = grad L
    # and V[g_hat] = N^2/M V_m[grad L_m] (ibid.).
    N, M = 5, 3
    _, _, fgs = _ls_problem(rng, n=N)
    w = rng.standard_normal(3)
    per_sample = np.array([fgs(w, np.array([n]))[1] for n in range(N)])
    full = per_sample.sum(0)
    ests = []
    for tup in itertools.product(range(N), repeat=M):
        idx = np.array(tup)
        ests.append(N / M * fgs(w, idx)[1])
    ests = np.array(ests)
    np.testing.assert_allclose(ests.mean(0), full, rtol=1e-12)
    np.testing.assert_allclose(ests.var(0), N**2 / M * per_sample.var(0), rtol=1e-12)
    # minibatch_gradient applies exactly that scaling to the indices it draws.
    g_hat, idx = optim.minibatch_gradient(
        lambda w, i: fgs(w, i)[1], w, N, M, np.random.default_rng(1)
    )
    np.testing.assert_allclose(g_hat, N / M * fgs(w, idx)[1])
    # and draws uniformly: the Monte Carlo mean is within 4 standard errors of grad L.
    draws = np.array(
        [optim.minibatch_gradient(lambda w, i: fgs(w, i)[1], w, N, M, rng)[0] for _ in range(4000)]
    )
    se = np.sqrt(N**2 / M * per_sample.var(0) / 4000)
    assert np.all(np.abs(draws.mean(0) - full) < 4 * se)


def test_minibatch_without_replacement_and_errors(rng):
    _, _, fgs = _ls_problem(rng, n=10)
    _, idx = optim.minibatch_gradient(
        lambda w, i: fgs(w, i)[1], np.zeros(3), 10, 10, rng, replace=False
    )
    assert sorted(idx) == list(range(10))
    with pytest.raises(ValueError, match="batch_size"):
        optim.minibatch_gradient(lambda w, i: 0, np.zeros(3), 10, 0, rng)
    with pytest.raises(ValueError, match="without replacement"):
        optim.minibatch_gradient(lambda w, i: 0, np.zeros(3), 10, 11, rng, replace=False)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"batch_size": 0}, "batch_size"),
        ({"n_samples": 0}, "n_samples"),
        ({"max_iter": -1}, "max_iter"),
        ({"record_every": 0}, "record_every"),
        ({"batch_size": 11, "replace": False}, "without replacement"),
    ],
)
def test_minimize_stochastic_bad_arguments(kwargs, match, rng):
    _, _, fgs = _ls_problem(rng, n=10)
    kw = {"n_samples": 10, "fun": lambda w: 0.0, **kwargs}
    n = kw.pop("n_samples")
    with pytest.raises(ValueError, match=match):
        optim.minimize_stochastic(fgs, np.zeros(3), n, optim.sgd(0.1), **kw)


def test_full_batch_stochastic_equals_gradient_descent(rng):
    _, y, fgs = _ls_problem(rng)
    n = len(y)
    res = optim.minimize_stochastic(
        fgs, np.zeros(3), n, optim.sgd(0.005), batch_size=n, replace=False, max_iter=50
    )
    with pytest.warns(ConvergenceWarning):
        ref = optim.minimize(
            lambda w: fgs(w, np.arange(n)), np.zeros(3), optim.sgd(0.005), max_iter=50
        )
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-12)


def test_sgd_with_robbins_monro_schedule_converges(rng):
    X, y, fgs = _ls_problem(rng, n=200)
    theta_star = np.linalg.lstsq(X, y, rcond=None)[0]
    full = lambda w: fgs(w, np.arange(200))[0]  # noqa: E731
    res = optim.minimize_stochastic(
        fgs,
        np.zeros(3),
        200,
        optim.sgd(optim.robbins_monro(1e-3, t0=100.0)),
        batch_size=10,
        max_iter=3000,
        random_state=0,
        fun=full,
        record_every=100,
    )
    np.testing.assert_allclose(res.x, theta_star, atol=0.02)
    assert res.full_history[-1] < 1.01 * full(theta_star)
    assert len(res.history) == 3000 and res.full_history_iters[-1] == 3000
    # Same seed, same path.
    res2 = optim.minimize_stochastic(
        fgs, np.zeros(3), 200, optim.sgd(optim.robbins_monro(1e-3, t0=100.0)),
        batch_size=10, max_iter=3000, random_state=0,
    )  # fmt: skip
    np.testing.assert_array_equal(res.x, res2.x)


# --- Newton ---------------------------------------------------------------------------------


def test_newton_one_step_on_a_quadratic(rng):
    M = rng.standard_normal((4, 4))
    Q = M @ M.T + np.eye(4)
    b = rng.standard_normal(4)
    res = optim.newton(lambda x: 0.5 * x @ Q @ x - b @ x, np.ones(4), tol=1e-10)
    assert res.nit == 1
    np.testing.assert_allclose(res.x, np.linalg.solve(Q, b), rtol=1e-10)


def test_newton_on_rosenbrock_converges_quadratically():
    res = optim.newton(rosenbrock, np.array([-1.2, 1.0]), tol=1e-10)
    np.testing.assert_allclose(res.x, [1.0, 1.0], atol=1e-8)
    assert res.nit < 30
    # Quadratic convergence: the gradient norm at least squares (up to a constant) at the end.
    gn = res.grad_norms[-4:]
    assert gn[-1] < 1e-3 * gn[-2]
    # Hand-written derivatives give the same path as autodiff's.
    res_hand = optim.newton(
        rosenbrock,
        np.array([-1.2, 1.0]),
        grad=ad.grad(rosenbrock),
        hess=ad.hessian(rosenbrock),
        tol=1e-10,
    )
    np.testing.assert_allclose(res_hand.history, res.history)


def test_newton_regularises_an_indefinite_hessian():
    # Start where the Rosenbrock Hessian is indefinite (x1 > x0^2 + 1/200 at x0 = 0).
    x0 = np.array([0.0, 1.0])
    assert np.linalg.eigvalsh(ad.hessian(rosenbrock)(x0)).min() < 0
    res = optim.newton(rosenbrock, x0, tol=1e-10)
    assert res.n_regularised >= 1
    np.testing.assert_allclose(res.x, [1.0, 1.0], atol=1e-8)
    assert np.all(np.diff(res.history) <= 0)  # the line search keeps it monotone


def test_newton_warns_at_max_iter():
    with pytest.warns(ConvergenceWarning):
        res = optim.newton(rosenbrock, np.array([-1.2, 1.0]), max_iter=2)
    assert not res.success
    with pytest.raises(ValueError, match="1-D"):
        optim.newton(rosenbrock, np.ones((2, 1)))


# --- L-BFGS-B bridge --------------------------------------------------------------------------


def test_lbfgs_matches_scipy_directly():
    fg = ad.value_and_grad(rosenbrock)
    x0 = np.array([-1.2, 1.0, 0.5, -0.3])
    ours = optim.lbfgs(fg, x0, tol=1e-10)
    # The same stopping rule: the gradient tolerance alone (SciPy's default relative-decrease
    # rule would stop here with a gradient of 7e-5, far above the tol asked for).
    ref = scipy_minimize(
        lambda x: tuple(fg(x)),
        x0,
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-10, "ftol": 0.0},
    )
    np.testing.assert_array_equal(ours.x, ref.x)
    assert ours.nit == ref.nit
    np.testing.assert_allclose(ours.x, 1.0, atol=1e-6)
    assert len(ours.history) == ours.nit + 1 and ours.history[-1] == pytest.approx(ours.fun)


def test_lbfgs_bounds_match_scipy():
    fg = ad.value_and_grad(rosenbrock)
    x0 = np.array([-1.2, 1.0])
    lower, upper = np.array([-2.0, -2.0]), np.array([0.5, 2.0])
    ours = optim.lbfgs(fg, x0, bounds=(lower, upper), tol=1e-10)
    ref = scipy_minimize(
        lambda x: tuple(fg(x)),
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=list(zip(lower, upper, strict=True)),
        options={"gtol": 1e-10},
    )
    np.testing.assert_allclose(ours.x, ref.x, rtol=1e-10)
    assert ours.x[0] == pytest.approx(0.5)  # the bound is active
    # Its KKT conditions: gradient pushes against the active upper bound x0 <= 0.5.
    g = ad.grad(rosenbrock)(ours.x)
    kkt = optim.check_kkt(
        g, ineq=[ours.x[0] - 0.5], ineq_jac=[[1.0, 0.0]], tol=1e-6
    )  # fmt: skip
    assert kkt.ok and kkt.ineq_multipliers[0] > 0


def test_lbfgs_dict_parameters_and_warning(rng):
    target = {"a": rng.standard_normal(3), "B": rng.standard_normal((2, 2))}

    def loss(p):
        return ad.sum((p["a"] - target["a"]) ** 2) + 3 * ad.sum((p["B"] - target["B"]) ** 2)

    res = optim.lbfgs(ad.value_and_grad(loss), {"a": np.zeros(3), "B": np.zeros((2, 2))})
    np.testing.assert_allclose(res.x["a"], target["a"], atol=1e-6)
    assert res.x["B"].shape == (2, 2) and res.jac["B"].shape == (2, 2)
    with pytest.warns(ConvergenceWarning):
        optim.lbfgs(ad.value_and_grad(rosenbrock), np.array([-1.2, 1.0]), max_iter=2)
    with pytest.raises(ValueError, match="array x0"):
        optim.lbfgs(
            ad.value_and_grad(loss), {"a": np.zeros(3), "B": np.zeros((2, 2))}, bounds=(0, 1)
        )
    with pytest.raises(ValueError, match="lower"):
        optim.lbfgs(ad.value_and_grad(rosenbrock), np.zeros(2), bounds=(1.0, 0.0))


def test_newton_full_step_where_the_decrease_is_below_the_rounding_of_f():
    # f = 1e4 + x^T A x / 2 plus a perturbation of 1e-10 near the minimiser (below the
    # rounding of f, 256 eps * 1e4 = 5.7e-10, the kind a different order of summation
    # gives). From x0 = 1e-6 (1, 1) the predicted decrease, g^T A^-1 g = 1.1e-11, is under
    # that level: Armijo's test would compare the perturbations and refuse the exact step;
    # the gradient shows it is right, so Newton takes it and stops at the minimiser.
    A = np.diag([1.0, 10.0])

    def fun(x):
        bump = 1e-10 if np.all(np.abs(x) < 1e-9) else 0.0
        return 1e4 + 0.5 * float(x @ A @ x) + bump

    res = optim.newton(fun, np.full(2, 1e-6), grad=lambda x: A @ x, hess=lambda x: A, tol=1e-12)
    assert res.success and res.nit == 1
    # x1 = x0 - A^-1 (A x0): the solve through sqrt(10) rounds, a few eps of |x0| at most
    np.testing.assert_allclose(res.x, np.zeros(2), rtol=0, atol=8 * np.finfo(float).eps * 1e-6)
    # A full step that does not shrink the gradient goes to the backtracking: with the
    # Hessian a quarter of the true one the step is -4 x (the gradient triples), and
    # Armijo's test halves it twice (at -2 x, f is unchanged), to x1 = x0 - x0 = 0 (exact
    # in binary arithmetic).
    res = optim.newton(
        lambda x: 0.5 * float(x @ x), np.full(2, 1e-8), grad=lambda x: x,
        hess=lambda x: np.eye(2) / 4, tol=1e-30, max_iter=1,
    )  # fmt: skip
    assert res.success and res.nit == 1
    np.testing.assert_array_equal(res.x, np.zeros(2))
