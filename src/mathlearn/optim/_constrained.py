"""Constrained optimisation as the notes teach it (notes 003 L1718-2046, spec 003 §2.4 37-40).

- Equality constraints by Lagrange multipliers: for a quadratic objective with linear
  constraints, stationarity of the Lagrangian and feasibility form one linear system (the
  KKT system), solved directly.
- Inequality constraints by projected gradient descent, with the KKT conditions (stationarity,
  primal and dual feasibility, complementary slackness) checked on the result.
- Norm-constrained least squares and its correspondence with ridge regression: the
  multiplier ``lambda`` for a given radius is found by a one-dimensional root search.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from scipy.optimize import OptimizeResult, brentq, nnls

from ..exceptions import ConvergenceWarning

__all__ = [
    "KKTResult",
    "NormConstrainedResult",
    "check_kkt",
    "norm_constrained_least_squares",
    "project_box",
    "project_l2_ball",
    "projected_gradient",
    "ridge_squared_norm",
    "solve_equality_qp",
]


def _as_2d(a, name: str, n: int | None = None) -> np.ndarray:
    a = np.atleast_2d(np.asarray(a, dtype=float))
    if a.ndim != 2:
        raise ValueError(f"{name} must be 2-D; got shape {a.shape}.")
    if n is not None and a.shape[1] != n:
        raise ValueError(f"{name} must have {n} columns; got shape {a.shape}.")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return a


def solve_equality_qp(Q, c, A, b) -> tuple[np.ndarray, np.ndarray]:
    """Minimise ``1/2 x^T Q x + c^T x`` subject to ``A x = b`` by Lagrange multipliers.

    Parameters
    ----------
    Q : array-like of shape (n, n)
        Symmetric; positive definite on the null space of ``A`` for a unique minimiser.
    c : array-like of shape (n,)
    A : array-like of shape (p, n)
        Constraint matrix with linearly independent rows.
    b : array-like of shape (p,)

    Returns
    -------
    x : ndarray of shape (n,)
        The minimiser.
    nu : ndarray of shape (p,)
        Lagrange multipliers of the Lagrangian ``1/2 x^T Q x + c^T x + nu^T (A x - b)``.

    Notes
    -----
    Setting the gradients of the Lagrangian to zero (notes 003 L1791-1833: stationarity
    ``Q x + c + A^T nu = 0`` and primal feasibility ``A x = b``) gives the KKT system

    ``[[Q, A^T], [A, 0]] [x; nu] = [-c; b]``,

    symmetric and indefinite, solved by an LDL^T factorisation. Its inertia (``n`` positive
    and ``p`` negative eigenvalues) certifies that the solution is a minimiser.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.optim import solve_equality_qp
    >>> x, nu = solve_equality_qp(np.eye(2), np.zeros(2), [[1.0, 1.0]], [1.0])
    >>> x, nu  # closest point to the origin on x1 + x2 = 1
    (array([0.5, 0.5]), array([-0.5]))
    """
    Q = _as_2d(Q, "Q")
    n = Q.shape[0]
    if Q.shape != (n, n):
        raise ValueError(f"Q must be square; got shape {Q.shape}.")
    if not np.allclose(Q, Q.T, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(Q).max())):
        raise ValueError("Q must be symmetric.")
    A = _as_2d(A, "A", n)
    c = np.asarray(c, dtype=float).reshape(-1)
    b = np.asarray(b, dtype=float).reshape(-1)
    if c.shape != (n,) or b.shape != (A.shape[0],):
        raise ValueError(
            f"c must have shape ({n},) and b shape ({A.shape[0]},); got {c.shape}, {b.shape}."
        )
    p = A.shape[0]
    K = np.block([[Q, A.T], [A, np.zeros((p, p))]])
    rhs = np.concatenate([-c, b])
    # Inertia of the KKT matrix: it is nonsingular with exactly n positive and p negative
    # eigenvalues iff A has full row rank and Q is positive definite on the null space of A
    # (Gould 1985); only then is the stationary point of the Lagrangian a minimiser rather
    # than a saddle of f on the constraint set.
    eig = np.linalg.eigvalsh(K)
    small = np.abs(eig) <= eig.size * np.finfo(float).eps * max(np.abs(eig).max(), 1e-300)
    if np.any(small):
        raise np.linalg.LinAlgError(
            "the KKT matrix is singular: the constraints are linearly dependent or Q is not "
            "positive definite on the null space of A."
        )
    if np.count_nonzero(eig > 0) != n:
        raise ValueError(
            "Q is not positive definite on the null space of A: the stationary point of the "
            "Lagrangian is a saddle, not a minimiser, of the objective on the constraint set."
        )
    sol = sla.solve(K, rhs, assume_a="sym", check_finite=False)
    return sol[:n], sol[n:]


def project_box(lower, upper) -> Callable[[np.ndarray], np.ndarray]:
    """Euclidean projection onto ``{x : lower <= x <= upper}`` (entrywise clipping)."""
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    if np.any(lower > upper):
        raise ValueError("project_box: lower must not exceed upper.")
    return lambda x: np.clip(x, lower, upper)


def project_l2_ball(radius: float, center=0.0) -> Callable[[np.ndarray], np.ndarray]:
    """Euclidean projection onto ``{x : ||x - center|| <= radius}``."""
    if not radius >= 0:
        raise ValueError(f"radius must be non-negative; got {radius}.")

    def project(x):
        d = x - center
        norm = np.linalg.norm(d)
        return x if norm <= radius else center + d * (radius / norm)

    return project


def projected_gradient(
    fun_and_grad: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x0,
    project: Callable[[np.ndarray], np.ndarray],
    *,
    step: float | None = None,
    max_iter: int = 1000,
    tol: float = 1e-8,
) -> OptimizeResult:
    """Minimise ``f`` over a convex set ``C`` by projected gradient descent.

    ``x_{t+1} = P_C(x_t - gamma_t grad f(x_t))``.

    Parameters
    ----------
    fun_and_grad : callable
        ``fun_and_grad(x) -> (f, grad)`` for a 1-D array ``x``.
    x0 : array-like of shape (n,)
    project : callable
        Euclidean projection onto ``C`` (``project_box``, ``project_l2_ball``, ...).
    step : float, optional
        Fixed step ``gamma`` (converges for ``gamma <= 1/Lipschitz(grad f)``). By default the
        step is found by backtracking until ``gamma ||grad f(x+) - grad f(x)|| <= ||x+ - x||``
        (``gamma`` below the local inverse Lipschitz constant), and doubled after each step.
    max_iter : int, default=1000
    tol : float, default=1e-8
        Stop when the natural residual ``||x - P_C(x - grad f(x))||`` is at most ``tol`` (it
        vanishes exactly at the constrained minimisers of a convex problem).

    Returns
    -------
    scipy.optimize.OptimizeResult
        ``x``, ``fun``, ``jac`` (unconstrained gradient at ``x``), ``nit``, ``success``,
        ``history``. Check the KKT conditions of the result with :func:`check_kkt`.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import optim
    >>> fg = lambda x: (float(x[0] ** 2 - x[0] - 2), np.array([2 * x[0] - 1]))  # notes L1720
    >>> res = optim.projected_gradient(fg, [1.5], optim.project_box(1.0, 1.7))
    >>> res.x, optim.check_kkt(res.jac, ineq=[1.0 - res.x[0]], ineq_jac=[[-1.0]]).ok
    (array([1.]), True)
    """
    if step is not None and not step > 0:
        raise ValueError(f"step must be positive or None; got {step}.")
    if max_iter < 0:
        raise ValueError(f"max_iter must be non-negative; got {max_iter}.")
    x = project(np.array(x0, dtype=float))
    f, g = fun_and_grad(x)
    gamma = 1.0 if step is None else float(step)
    history, nit = [float(f)], 0
    success = bool(np.linalg.norm(x - project(x - g)) <= tol)
    while not success and nit < max_iter:
        for _ in range(100):
            x_new = project(x - gamma * g)
            f_new, g_new = fun_and_grad(x_new)
            d = x_new - x
            # Accept when gamma is below the inverse of the local Lipschitz constant of the
            # gradient, ||g(x+) - g(x)|| <= ||x+ - x|| / gamma: that implies the sufficient
            # decrease f(x+) <= f(x) + g^T d + ||d||^2 / (2 gamma) (exactly so on quadratics)
            # and, unlike comparing function values, is not defeated by round-off near the
            # solution.
            if step is not None or gamma * np.linalg.norm(g_new - g) <= np.linalg.norm(d):
                break
            gamma *= 0.5
        nit += 1
        x, f, g = x_new, f_new, g_new
        history.append(float(f))
        # x is optimal iff x = P_C(x - grad f(x)): the natural residual measures stationarity.
        success = bool(np.linalg.norm(x - project(x - g)) <= tol)
        if step is None:
            gamma *= 2.0  # let the step grow back: backtracking alone only shrinks it
    if not success:
        warnings.warn(
            f"projected_gradient: max_iter = {max_iter} reached before the natural residual "
            f"fell below tol = {tol:g}.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return OptimizeResult(
        x=x, fun=float(f), jac=g, nit=nit, success=success, history=np.asarray(history)
    )


@dataclass(frozen=True)
class KKTResult:
    """The KKT conditions evaluated at a candidate point (spec 003 §2.4 item 39).

    Attributes
    ----------
    ineq_multipliers : ndarray of shape (m,)
        ``lambda_i >= 0`` for constraints ``g_i(x) <= 0`` (zero for inactive ones).
    eq_multipliers : ndarray of shape (p,)
        ``nu_j`` for constraints ``h_j(x) = 0``.
    stationarity : float
        ``||grad f + sum lambda_i grad g_i + sum nu_j grad h_j||_inf``.
    primal_feasibility : float
        ``max(max_i g_i(x), max_j |h_j(x)|, 0)``.
    dual_feasibility : float
        ``max(-min_i lambda_i, 0)``.
    complementary_slackness : float
        ``max_i |lambda_i g_i(x)|``.
    tol : float
    """

    ineq_multipliers: np.ndarray
    eq_multipliers: np.ndarray
    stationarity: float
    primal_feasibility: float
    dual_feasibility: float
    complementary_slackness: float
    tol: float

    @property
    def ok(self) -> bool:
        """Whether all four conditions hold within ``tol``."""
        return (
            max(
                self.stationarity,
                self.primal_feasibility,
                self.dual_feasibility,
                self.complementary_slackness,
            )
            <= self.tol
        )


def check_kkt(
    grad,
    *,
    ineq=None,
    ineq_jac=None,
    eq=None,
    eq_jac=None,
    ineq_multipliers=None,
    eq_multipliers=None,
    tol: float = 1e-6,
    active_tol: float | None = None,
) -> KKTResult:
    """Check the KKT conditions of ``min f(x) s.t. g(x) <= 0, h(x) = 0`` at a point.

    Parameters
    ----------
    grad : array-like of shape (n,)
        ``grad f(x)``.
    ineq, ineq_jac : array-like of shapes (m,) and (m, n), optional
        Values ``g_i(x)`` and gradients ``grad g_i(x)`` (rows) of the inequality constraints.
    eq, eq_jac : array-like of shapes (p,) and (p, n), optional
        Values and gradients of the equality constraints.
    ineq_multipliers, eq_multipliers : array-like, optional
        Multipliers to check. By default they are estimated: the best ``lambda >= 0`` on the
        active constraints (``g_i >= -active_tol``, zero elsewhere) and free ``nu`` minimising
        the stationarity residual, by non-negative least squares.
    tol : float, default=1e-6
    active_tol : float, optional
        Default ``sqrt(tol)``.

    Returns
    -------
    KKTResult

    Notes
    -----
    Lagrangian ``L(x; lambda, nu) = f(x) + sum_i lambda_i g_i(x) + sum_j nu_j h_j(x)``
    (notes 003 L1945-1983): stationarity ``grad_x L = 0``; primal feasibility ``g <= 0``,
    ``h = 0``; dual feasibility ``lambda >= 0``; complementary slackness ``lambda_i g_i = 0``.

    Examples
    --------
    >>> from mathlearn.optim import check_kkt
    >>> # min (x - 2)^2 s.t. x - 1 <= 0 at x = 1: grad f = -2, the multiplier is 2.
    >>> res = check_kkt([-2.0], ineq=[0.0], ineq_jac=[[1.0]])
    >>> res.ok, res.ineq_multipliers
    (True, array([2.]))
    """
    grad = np.asarray(grad, dtype=float).ravel()
    n = grad.size
    G = np.zeros(0) if ineq is None else np.asarray(ineq, dtype=float).ravel()
    JG = np.zeros((0, n)) if ineq_jac is None else _as_2d(ineq_jac, "ineq_jac", n)
    H = np.zeros(0) if eq is None else np.asarray(eq, dtype=float).ravel()
    JH = np.zeros((0, n)) if eq_jac is None else _as_2d(eq_jac, "eq_jac", n)
    if JG.shape[0] != G.size or JH.shape[0] != H.size:
        raise ValueError("each constraint needs one row in its Jacobian.")
    for name, value in (("grad", grad), ("ineq", G), ("eq", H)):
        if not np.all(np.isfinite(value)):
            raise ValueError(f"{name} contains NaN or infinity.")
    active_tol = np.sqrt(tol) if active_tol is None else active_tol
    if ineq_multipliers is None or eq_multipliers is None:
        active = np.flatnonzero(G >= -active_tol)
        # Unknowns [lambda_active >= 0, nu+ >= 0, nu- >= 0]: min ||grad + M^T u||.
        M = np.vstack([JG[active], JH, -JH]).T
        u = nnls(M, -grad)[0] if M.shape[1] else np.zeros(0)
        lam = np.zeros(G.size)
        lam[active] = u[: active.size]
        nu = u[active.size : active.size + H.size] - u[active.size + H.size :]
        lam = lam if ineq_multipliers is None else np.asarray(ineq_multipliers, float).ravel()
        nu = nu if eq_multipliers is None else np.asarray(eq_multipliers, float).ravel()
    else:
        lam = np.asarray(ineq_multipliers, dtype=float).ravel()
        nu = np.asarray(eq_multipliers, dtype=float).ravel()
    residual = grad + JG.T @ lam + JH.T @ nu
    return KKTResult(
        ineq_multipliers=lam,
        eq_multipliers=nu,
        stationarity=float(np.max(np.abs(residual))) if n else 0.0,
        primal_feasibility=float(max(np.max(G, initial=0.0), np.max(np.abs(H), initial=0.0))),
        dual_feasibility=float(max(-np.min(lam, initial=0.0), 0.0)),
        complementary_slackness=float(np.max(np.abs(lam * G), initial=0.0)),
        tol=tol,
    )


def _svd_parts(X, y):
    if np.ndim(X) != 2:
        raise ValueError(f"X must be a 2-D array; got shape {np.shape(X)}.")
    X = _as_2d(X, "X")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X needs at least one sample and one feature; got shape {X.shape}.")
    y = np.asarray(y, dtype=float).ravel()
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},); got {y.shape}.")
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity.")
    U, s, Vt = sla.svd(X, full_matrices=False, check_finite=False)
    return s, U.T @ y, Vt


def _ridge_from_svd(s, z, Vt, alpha):
    # theta(alpha) = V diag(s / (s^2 + alpha)) U^T y; alpha = 0 gives the minimum-norm OLS.
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(s > s.max(initial=0) * 1e-12, s / (s**2 + alpha), 0.0)
    return Vt.T @ (w * z)


def ridge_squared_norm(X, y, alpha: float) -> float:
    """``||theta_ridge(alpha)||^2`` with ``theta_ridge = (X^T X + alpha I)^{-1} X^T y``.

    The radius ``delta`` at which the norm constraint ``||theta||^2 <= delta`` is solved by
    ridge with this ``alpha`` (notes 003 L1943); decreasing in ``alpha``.
    """
    if not alpha >= 0:
        raise ValueError(f"alpha must be non-negative; got {alpha}.")
    s, z, Vt = _svd_parts(X, y)
    return float(np.sum(_ridge_from_svd(s, z, Vt, alpha) ** 2))


@dataclass(frozen=True)
class NormConstrainedResult:
    """Solution of norm-constrained least squares.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
        ``theta*``.
    lagrange_multiplier : float
        ``lambda >= 0`` of the notes' Lagrangian (zero when the constraint is redundant).
    ridge_alpha : float
        ``2 sigma^2 lambda``: the ridge penalty ``alpha`` in ``||y - X theta||^2 +
        alpha ||theta||^2`` with the same solution (the notes' ``lambda'``).
    binding : bool
        Whether the constraint is active (``||theta*||^2 = delta``).
    """

    coef: np.ndarray
    lagrange_multiplier: float
    ridge_alpha: float
    binding: bool


def norm_constrained_least_squares(
    X, y, radius_sq: float, *, noise_var: float = 1.0
) -> NormConstrainedResult:
    """``min_theta ||y - X theta||^2 / (2 sigma^2)`` subject to ``||theta||^2 <= delta``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    radius_sq : float
        ``delta``, the bound on the squared norm.
    noise_var : float, default=1.0
        ``sigma^2``; only rescales the multiplier.

    Returns
    -------
    NormConstrainedResult

    Notes
    -----
    Notes 003 L1835-1943 (spec 003 §2.3 item 29, §3 T28): with the Lagrangian
    ``||y - X theta||^2 / (2 sigma^2) + lambda (||theta||^2 - delta)``, stationarity gives
    ``theta*(lambda) = (X^T X + 2 sigma^2 lambda I)^{-1} X^T y``: ridge regression with
    ``lambda' = 2 sigma^2 lambda`` (errata 6.1 item 47 on the factor 2). If the unconstrained
    (minimum-norm) least-squares solution satisfies the constraint it is redundant and
    ``lambda = 0``; otherwise complementary slackness requires ``||theta*(lambda)||^2 =
    delta``, a monotone equation in ``lambda`` solved by Brent's method on ``log lambda'``
    after one SVD of ``X`` (each evaluation is then ``O(n_features)``).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.optim import norm_constrained_least_squares
    >>> res = norm_constrained_least_squares(np.eye(2), [3.0, 4.0], 6.25)
    >>> res.coef, round(res.lagrange_multiplier, 12)
    (array([1.5, 2. ]), 0.5)
    """
    if not radius_sq > 0:
        raise ValueError(f"radius_sq must be positive; got {radius_sq}.")
    if not noise_var > 0:
        raise ValueError(f"noise_var must be positive; got {noise_var}.")
    s, z, Vt = _svd_parts(X, y)
    theta0 = _ridge_from_svd(s, z, Vt, 0.0)
    if theta0 @ theta0 <= radius_sq:
        return NormConstrainedResult(theta0, 0.0, 0.0, False)

    def excess(log_alpha):
        theta = _ridge_from_svd(s, z, Vt, np.exp(log_alpha))
        return np.log(theta @ theta) - np.log(radius_sq)

    # ||theta(alpha)||^2 ~ ||X^T y||^2 / alpha^2 for large alpha: bracket the root.
    hi = np.log(max(np.linalg.norm(s * z) / np.sqrt(radius_sq), 1e-300)) + 1.0
    lo = hi - 5.0
    while excess(lo) < 0:
        lo -= 5.0
    while excess(hi) > 0:
        hi += 5.0
    alpha = float(np.exp(brentq(excess, lo, hi, xtol=1e-14, rtol=1e-14)))
    coef = _ridge_from_svd(s, z, Vt, alpha)
    return NormConstrainedResult(coef, alpha / (2 * noise_var), alpha, True)
