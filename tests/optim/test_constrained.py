"""Constrained optimisation: Lagrange/KKT systems, projected gradient, constrained LS = ridge."""

import numpy as np
import pytest
from scipy.optimize import minimize as scipy_minimize
from sklearn.linear_model import Ridge

from mathlearn import optim
from mathlearn.exceptions import ConvergenceWarning

# --- equality constraints ---------------------------------------------------------------------


def test_equality_qp_closest_point_on_a_line():
    x, nu = optim.solve_equality_qp(np.eye(2), np.zeros(2), [[1.0, 1.0]], [1.0])
    np.testing.assert_allclose(x, [0.5, 0.5])
    # -grad f = nu grad h (level set tangent, Imperial "Mathematics for Machine Learning" lecture
    # 12)
    np.testing.assert_allclose(nu, [-0.5])


def test_equality_qp_against_closed_form_and_slsqp(rng):
    n, p = 5, 2
    M = rng.standard_normal((n, n))
    Q = M @ M.T + np.eye(n)
    c = rng.standard_normal(n)
    A = rng.standard_normal((p, n))
    b = rng.standard_normal(p)
    x, nu = optim.solve_equality_qp(Q, c, A, b)
    # Stationarity and feasibility hold.
    np.testing.assert_allclose(Q @ x + c + A.T @ nu, 0, atol=1e-12)
    np.testing.assert_allclose(A @ x, b, atol=1e-12)
    # Closed form by eliminating x: nu = -(A Q^-1 A^T)^-1 (b + A Q^-1 c).
    Qi_c, Qi_At = np.linalg.solve(Q, c), np.linalg.solve(Q, A.T)
    nu_ref = -np.linalg.solve(A @ Qi_At, b + A @ Qi_c)
    np.testing.assert_allclose(nu, nu_ref, rtol=1e-10)
    ref = scipy_minimize(
        lambda x: 0.5 * x @ Q @ x + c @ x,
        np.zeros(n),
        jac=lambda x: Q @ x + c,
        constraints={"type": "eq", "fun": lambda x: A @ x - b, "jac": lambda x: A},
        method="SLSQP",
        options={"ftol": 1e-14},
    )
    np.testing.assert_allclose(x, ref.x, atol=1e-7)
    kkt = optim.check_kkt(Q @ x + c, eq=A @ x - b, eq_jac=A, tol=1e-10)
    assert kkt.ok
    np.testing.assert_allclose(kkt.eq_multipliers, nu, rtol=1e-8)


def test_equality_qp_bad_input():
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        optim.solve_equality_qp(np.eye(2), np.zeros(2), [[1.0, 1.0], [2.0, 2.0]], [1.0, 2.0])
    with pytest.raises(ValueError, match="symmetric"):
        optim.solve_equality_qp([[1.0, 2.0], [0.0, 1.0]], np.zeros(2), [[1.0, 0.0]], [1.0])
    # Q = diag(1, -1) is negative along the constraint x1 = 1: the KKT point (1, 0) is the
    # maximiser of f on that line; f is unbounded below there.
    with pytest.raises(ValueError, match="saddle"):
        optim.solve_equality_qp(np.diag([1.0, -1.0]), np.zeros(2), [[1.0, 0.0]], [1.0])
    # An indefinite Q that is positive definite on the null space of A is fine.
    x, _ = optim.solve_equality_qp(np.diag([-1.0, 1.0]), np.zeros(2), [[1.0, 0.0]], [1.0])
    np.testing.assert_allclose(x, [1.0, 0.0])
    with pytest.raises(ValueError, match="columns"):
        optim.solve_equality_qp(np.eye(2), np.zeros(2), [[1.0, 0.0, 1.0]], [1.0])
    with pytest.raises(ValueError, match="NaN"):
        optim.solve_equality_qp(np.eye(2), np.zeros(2), [[np.nan, 0.0]], [1.0])
    with pytest.raises(ValueError, match="shape"):
        optim.solve_equality_qp(np.eye(2), np.zeros(3), [[1.0, 0.0]], [1.0])


# --- inequality constraints: lecture 12's examples and projected gradient
# -----------------------------------


def _f(x):  # f(x) = x^2 - x - 2 (Imperial "Mathematics for Machine Learning" lecture 12)
    return float(x[0] ** 2 - x[0] - 2), np.array([2 * x[0] - 1])


def test_t26_t27_inactive_constraints():
    # On [-1, 1.7]: the minimiser 0.5 is interior, both multipliers are 0, f = -2.25.
    res = optim.projected_gradient(_f, [1.5], optim.project_box(-1.0, 1.7), tol=1e-12)
    np.testing.assert_allclose(res.x, [0.5], atol=1e-10)
    assert res.fun == pytest.approx(-2.25)
    x = res.x[0]
    kkt = optim.check_kkt(_f(res.x)[1], ineq=[x - 1.7, -x - 1], ineq_jac=[[1.0], [-1.0]])
    assert kkt.ok
    np.testing.assert_array_equal(kkt.ineq_multipliers, [0.0, 0.0])


def test_active_constraint_has_positive_multiplier():
    # On [1, 1.7]: the lower bound is active at x = 1 with lambda = f'(1) = 1.
    res = optim.projected_gradient(_f, [1.5], optim.project_box(1.0, 1.7), tol=1e-12)
    np.testing.assert_allclose(res.x, [1.0])
    x = res.x[0]
    kkt = optim.check_kkt(_f(res.x)[1], ineq=[x - 1.7, 1.0 - x], ineq_jac=[[1.0], [-1.0]])
    assert kkt.ok
    np.testing.assert_allclose(kkt.ineq_multipliers, [0.0, 1.0])


def test_check_kkt_flags_violations():
    # A non-stationary interior point.
    bad = optim.check_kkt(np.array([1.0]), ineq=[-0.5], ineq_jac=[[1.0]])
    assert not bad.ok and bad.stationarity == pytest.approx(1.0)
    # A multiplier of the wrong sign, and one on an inactive constraint.
    wrong = optim.check_kkt(
        np.array([1.0]), ineq=[0.0, -1.0], ineq_jac=[[-1.0], [1.0]],
        ineq_multipliers=[-1.0, 0.0], eq_multipliers=[],
    )  # fmt: skip
    assert wrong.dual_feasibility == pytest.approx(1.0) and not wrong.ok
    slack = optim.check_kkt(
        np.array([0.0]), ineq=[-1.0], ineq_jac=[[1.0]], ineq_multipliers=[2.0], eq_multipliers=[]
    )
    assert slack.complementary_slackness == pytest.approx(2.0) and not slack.ok
    infeasible = optim.check_kkt(np.array([0.0]), ineq=[0.3], ineq_jac=[[1.0]])
    assert infeasible.primal_feasibility == pytest.approx(0.3) and not infeasible.ok
    with pytest.raises(ValueError, match="row"):
        optim.check_kkt(np.zeros(2), ineq=[0.0, 1.0], ineq_jac=[[1.0, 0.0]])
    with pytest.raises(ValueError, match="grad contains NaN"):
        optim.check_kkt(np.array([np.nan]), ineq=[0.0], ineq_jac=[[1.0]])
    with pytest.raises(ValueError, match="ineq contains NaN"):
        optim.check_kkt(np.array([1.0]), ineq=[np.nan], ineq_jac=[[1.0]])


def test_projected_gradient_box_qp_matches_lbfgsb(rng):
    n = 6
    M = rng.standard_normal((n, n))
    Q = M @ M.T + 0.5 * np.eye(n)
    c = 3 * rng.standard_normal(n)
    fg = lambda x: (0.5 * x @ Q @ x + c @ x, Q @ x + c)  # noqa: E731
    res = optim.projected_gradient(fg, np.zeros(n), optim.project_box(-1.0, 1.0), tol=1e-10)
    ref = scipy_minimize(
        lambda x: fg(x), np.zeros(n), jac=True, method="L-BFGS-B",
        bounds=[(-1, 1)] * n, options={"gtol": 1e-12, "ftol": 1e-15},
    )  # fmt: skip
    np.testing.assert_allclose(res.x, ref.x, atol=1e-7)
    G = np.concatenate([res.x - 1, -1 - res.x])
    JG = np.vstack([np.eye(n), -np.eye(n)])
    kkt = optim.check_kkt(fg(res.x)[1], ineq=G, ineq_jac=JG, tol=1e-7)
    assert kkt.ok and np.any(kkt.ineq_multipliers > 0)
    # A fixed step 1/L works too.
    L = np.linalg.eigvalsh(Q).max()
    res_fixed = optim.projected_gradient(
        fg, np.zeros(n), optim.project_box(-1.0, 1.0), step=1 / L, max_iter=20000, tol=1e-10
    )
    np.testing.assert_allclose(res_fixed.x, res.x, atol=1e-7)
    with pytest.warns(ConvergenceWarning):
        optim.projected_gradient(fg, np.zeros(n), optim.project_box(-1.0, 1.0), max_iter=2)
    with pytest.raises(ValueError, match="step"):
        optim.projected_gradient(fg, np.zeros(n), optim.project_box(-1.0, 1.0), step=-0.1)
    with pytest.raises(ValueError, match="max_iter"):
        optim.projected_gradient(fg, np.zeros(n), optim.project_box(-1.0, 1.0), max_iter=-1)


def test_projections():
    p = optim.project_l2_ball(2.0)
    np.testing.assert_allclose(p(np.array([3.0, 4.0])), [1.2, 1.6])
    np.testing.assert_array_equal(p(np.array([1.0, 1.0])), [1.0, 1.0])
    np.testing.assert_array_equal(optim.project_box(0, 1)(np.array([-1.0, 0.5, 2.0])), [0, 0.5, 1])
    with pytest.raises(ValueError):
        optim.project_box(1, 0)
    with pytest.raises(ValueError):
        optim.project_l2_ball(-1.0)


# --- norm-constrained least squares <-> ridge ---------------------------------------------------


def test_t28_binding_and_redundant():
    # X = I, y = [3, 4], sigma^2 = 1 (derived for Imperial "Mathematics for Machine Learning"
    # lecture 13): delta = 6.25 binds with lambda = 0.5 (lambda' = 1) and theta = [1.5, 2]; delta =
    # 30 is redundant.
    res = optim.norm_constrained_least_squares(np.eye(2), [3.0, 4.0], 6.25)
    np.testing.assert_allclose(res.coef, [1.5, 2.0], rtol=1e-12)
    assert res.binding
    assert res.lagrange_multiplier == pytest.approx(0.5, rel=1e-12)
    assert res.ridge_alpha == pytest.approx(1.0, rel=1e-12)
    free = optim.norm_constrained_least_squares(np.eye(2), [3.0, 4.0], 30.0)
    np.testing.assert_array_equal(free.coef, [3.0, 4.0])
    assert not free.binding and free.lagrange_multiplier == 0.0
    # sigma^2 rescales the multiplier only: lambda' = 2 sigma^2 lambda.
    res2 = optim.norm_constrained_least_squares(np.eye(2), [3.0, 4.0], 6.25, noise_var=2.0)
    assert res2.lagrange_multiplier == pytest.approx(0.25)
    np.testing.assert_allclose(res2.coef, res.coef)


def test_constrained_ls_is_ridge_and_matches_slsqp(rng):
    X = rng.standard_normal((30, 4))
    y = X @ np.array([2.0, -1.0, 0.5, 3.0]) + 0.1 * rng.standard_normal(30)
    delta = 4.0
    res = optim.norm_constrained_least_squares(X, y, delta)
    assert res.binding
    assert res.coef @ res.coef == pytest.approx(delta, rel=1e-10)
    ridge = Ridge(alpha=res.ridge_alpha, fit_intercept=False, solver="cholesky").fit(X, y)
    np.testing.assert_allclose(res.coef, ridge.coef_, rtol=1e-8)
    assert optim.ridge_squared_norm(X, y, res.ridge_alpha) == pytest.approx(delta, rel=1e-10)
    ref = scipy_minimize(
        lambda t: 0.5 * np.sum((y - X @ t) ** 2),
        np.zeros(4),
        jac=lambda t: -X.T @ (y - X @ t),
        constraints={"type": "ineq", "fun": lambda t: delta - t @ t, "jac": lambda t: -2 * t},
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    np.testing.assert_allclose(res.coef, ref.x, atol=1e-6)
    # KKT with the notes' Lagrangian: grad f + lambda grad(||theta||^2 - delta) = 0.
    grad_f = -X.T @ (y - X @ res.coef)
    kkt = optim.check_kkt(
        grad_f,
        ineq=[res.coef @ res.coef - delta],
        ineq_jac=[2 * res.coef],
        ineq_multipliers=[res.lagrange_multiplier],
        eq_multipliers=[],
        tol=1e-8,
    )
    assert kkt.ok
    # Projected gradient onto the ball finds the same point.
    pg = optim.projected_gradient(
        lambda t: (0.5 * np.sum((y - X @ t) ** 2), -X.T @ (y - X @ t)),
        np.zeros(4),
        optim.project_l2_ball(np.sqrt(delta)),
        tol=1e-10,
    )
    np.testing.assert_allclose(pg.x, res.coef, atol=1e-8)


def test_ridge_path_is_monotone(rng):
    X = rng.standard_normal((20, 3))
    y = rng.standard_normal(20)
    norms = [optim.ridge_squared_norm(X, y, a) for a in np.geomspace(1e-3, 1e3, 20)]
    assert np.all(np.diff(norms) < 0)
    for delta in (0.01, 0.1, float(norms[5])):
        res = optim.norm_constrained_least_squares(X, y, delta)
        assert res.coef @ res.coef == pytest.approx(delta, rel=1e-9)


def test_constrained_ls_bad_input():
    with pytest.raises(ValueError, match="radius_sq"):
        optim.norm_constrained_least_squares(np.eye(2), [1.0, 1.0], 0.0)
    with pytest.raises(ValueError, match="noise_var"):
        optim.norm_constrained_least_squares(np.eye(2), [1.0, 1.0], 1.0, noise_var=-1)
    with pytest.raises(ValueError, match="shape"):
        optim.norm_constrained_least_squares(np.eye(2), [1.0, 1.0, 1.0], 1.0)
    with pytest.raises(ValueError, match="NaN"):
        optim.norm_constrained_least_squares(np.eye(2), [np.nan, 1.0], 1.0)
    with pytest.raises(ValueError, match="NaN"):
        optim.norm_constrained_least_squares([[np.inf, 0.0], [0.0, 1.0]], [1.0, 1.0], 1.0)
    with pytest.raises(ValueError, match="alpha"):
        optim.ridge_squared_norm(np.eye(2), [1.0, 1.0], -1.0)
    with pytest.raises(ValueError, match="at least one sample"):
        optim.norm_constrained_least_squares(np.zeros((0, 2)), np.zeros(0), 1.0)
    with pytest.raises(ValueError, match="2-D"):
        optim.norm_constrained_least_squares(np.ones(3), np.ones(3), 1.0)
