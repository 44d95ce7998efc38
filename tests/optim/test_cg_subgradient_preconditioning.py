"""Conjugate gradients, preconditioned gradient descent and its stable step, and the
subgradient method, against direct solves and their convergence theorems."""

import numpy as np
import pytest

from mathlearn import optim
from mathlearn.optim import conjugate_gradient, max_stable_step, precondition, subgradient_method

EPS = np.finfo(float).eps


def _spd(rng, n, cond):
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (Q * np.geomspace(1.0, cond, n)) @ Q.T


def test_cg_solves_and_terminates_in_distinct_eigenvalue_steps(rng):
    Q, _ = np.linalg.qr(rng.normal(size=(30, 30)))
    A = (Q * np.repeat([1.0, 3.0, 10.0], 10)) @ Q.T  # three distinct eigenvalues
    b = rng.normal(size=30)
    res = conjugate_gradient(A, b, tol=1e-12)
    assert res.success and res.nit <= 4  # 3 in exact arithmetic; one more for rounding
    x = np.linalg.solve(A, b)
    # Backward-stable: the error is bounded by kappa * tol-level relative residual.
    assert np.linalg.norm(res.x - x) <= 10 * 10.0 * 1e-12 * np.linalg.norm(x)


def test_cg_rate_bound_and_jacobi_preconditioning(rng):
    n, kappa = 60, 1e3
    A = _spd(rng, n, kappa)
    b = rng.normal(size=n)
    x = np.linalg.solve(A, b)
    res = conjugate_gradient(A, b, tol=1e-10)
    assert res.success
    # ||e_k||_A <= 2 ((sqrt k - 1)/(sqrt k + 1))^k ||e_0||_A: iterations needed for 1e-10
    # of the A-norm error (the residual test is within a factor sqrt(kappa) of it).
    rho = (np.sqrt(kappa) - 1) / (np.sqrt(kappa) + 1)
    bound = int(np.ceil(np.log(1e-10 / (2 * np.sqrt(kappa))) / np.log(rho))) + 1
    assert res.nit <= bound
    assert np.linalg.norm(res.x - x) <= 1e-8 * kappa * np.linalg.norm(x)
    # A badly scaled diagonal: Jacobi preconditioning undoes it.
    d = np.geomspace(1e-3, 1e3, n)
    B = d[:, None] * _spd(rng, n, 10.0) * d[None, :]
    plain = conjugate_gradient(B, b, tol=1e-8, max_iter=5000)
    jac = conjugate_gradient(B, b, tol=1e-8, preconditioner=np.diag(B))
    assert jac.success and jac.nit < plain.nit
    np.testing.assert_allclose(B @ jac.x, b, atol=1e-6 * np.linalg.norm(b))
    # a matrix preconditioner and a callable one give the same iterates as the diagonal one
    mat = conjugate_gradient(B, b, tol=1e-8, preconditioner=np.diag(np.diag(B)))
    fun = conjugate_gradient(B, b, tol=1e-8, preconditioner=lambda r: r / np.diag(B))
    assert mat.nit == jac.nit == fun.nit


def test_cg_bad_input(rng):
    with pytest.raises(ValueError, match="not positive definite"):
        conjugate_gradient(np.diag([1.0, -1.0]), np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match="must be"):
        conjugate_gradient(np.eye(3), np.ones(2))
    with pytest.raises(ValueError, match="NaN"):
        conjugate_gradient(np.eye(2), np.array([np.nan, 1.0]))
    with pytest.raises(ValueError, match="diagonal preconditioner"):
        conjugate_gradient(np.eye(2), np.ones(2), preconditioner=np.array([1.0, 0.0]))


def test_stable_step_is_sharp_for_least_squares(rng):
    # Imperial MML: gamma < 2 sigma^2 / lambda_max(X^T X). Just below: the iterates converge;
    # just above: the component along the top eigenvector grows.
    X = rng.normal(size=(40, 5))
    y = rng.normal(size=40)
    s2 = 0.5
    H = X.T @ X / s2
    g_max = max_stable_step(H)
    assert g_max == pytest.approx(2 * s2 / np.linalg.eigvalsh(X.T @ X)[-1], rel=1e-12)
    theta_star = np.linalg.lstsq(X, y, rcond=None)[0]

    def run(gamma, steps=400):
        opt = optim.sgd(gamma)
        th = np.zeros(5)
        st = opt.init(th)
        for _ in range(steps):
            u, st = opt.update(X.T @ (X @ th - y) / s2, st)
            th = optim.apply_updates(th, u)
        return np.linalg.norm(th - theta_star)

    assert run(0.98 * g_max) < run(0.98 * g_max, steps=10)
    assert run(1.02 * g_max) > 1e3 * run(1.02 * g_max, steps=10) or run(1.02 * g_max) > 1e6


def test_preconditioned_gd_with_the_hessian_is_one_newton_step(rng):
    X = rng.normal(size=(30, 4))
    y = rng.normal(size=30)
    H = X.T @ X
    theta_star = np.linalg.solve(H, X.T @ y)
    opt = optim.chain(precondition(H), optim.sgd(1.0))
    th = np.zeros(4)
    u, _ = opt.update(H @ th - X.T @ y, opt.init(th))
    th = optim.apply_updates(th, u)
    np.testing.assert_allclose(th, theta_star, rtol=1e-10)
    # and the stable step of P^{-1} H = I is 2
    assert max_stable_step(H, preconditioner=H) == pytest.approx(2.0, rel=1e-10)
    d = np.diag(H)
    expected = 2 / np.linalg.eigvalsh(H / np.sqrt(np.outer(d, d)))[-1]
    assert max_stable_step(H, preconditioner=d) == pytest.approx(expected, rel=1e-12)
    assert max_stable_step(np.zeros((2, 2))) == np.inf


def test_preconditioning_bad_input():
    with pytest.raises(ValueError, match="positive definite"):
        precondition(np.diag([1.0, -1.0]))
    with pytest.raises(ValueError, match="semi-definite"):
        max_stable_step(np.diag([1.0, -1.0]))
    opt = precondition(np.ones(3))
    with pytest.raises(ValueError, match="one parameter vector"):
        opt.update(np.ones(2), opt.init(None))


def test_subgradient_method_meets_its_bound(rng):
    # f(x) = ||A x - b||_1, convex, non-smooth. G bounds ||A^T sign(.)||; R = ||x0 - x*||.
    A = rng.normal(size=(20, 3))
    x_true = np.array([1.0, -2.0, 0.5])
    b = A @ x_true  # f* = 0 at x_true
    G = np.linalg.norm(np.abs(A).sum(0))

    def f(x):
        r = A @ x - b
        return np.abs(r).sum(), A.T @ np.sign(r)

    g0, K = 0.05, 3000
    res = subgradient_method(f, np.zeros(3), g0, max_iter=K)
    gammas = g0 / np.sqrt(np.arange(K) + 1.0)
    R = np.linalg.norm(x_true)
    bound = (R**2 + G**2 * np.sum(gammas**2)) / (2 * np.sum(gammas))
    assert res.fun <= bound
    assert np.all(np.diff(res.best_history) <= 0)
    assert res.fun == pytest.approx(f(res.x)[0])
    assert res.fun < 1e-2 * f(np.zeros(3))[0]


def test_subgradient_bad_input():
    with pytest.raises(ValueError, match="finite"):
        subgradient_method(lambda x: (np.nan, x), [1.0])
    with pytest.raises(ValueError, match="vector"):
        subgradient_method(lambda x: (0.0, x), [[1.0]])
