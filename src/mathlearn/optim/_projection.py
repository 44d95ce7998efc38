"""Inequality constraints: projected gradient descent and the KKT conditions.

Projected gradient descent minimises over a convex set through Euclidean projections; the KKT
conditions (stationarity, primal and dual feasibility, complementary slackness;
Imperial "Mathematics for Machine Learning" lecture 13) are checked on its result.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import OptimizeResult, nnls

from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, validate_params
from ._arrays import _as_2d

__all__ = ["KKTResult", "check_kkt", "project_box", "project_l2_ball", "projected_gradient"]


def project_box(lower: ArrayLike, upper: ArrayLike) -> Callable[[np.ndarray], np.ndarray]:
    """Euclidean projection onto ``{x : lower <= x <= upper}`` (entrywise clipping).

    Parameters
    ----------
    lower, upper : float or array-like
        The bounds (broadcasting against ``x``), ``lower <= upper``.

    Returns
    -------
    callable
        ``x -> clip(x, lower, upper)``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.optim import project_box
    >>> project_box(0.0, 1.0)(np.array([-0.5, 0.3, 2.0]))
    array([0. , 0.3, 1. ])
    """
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    if np.any(lower > upper):
        raise ValueError("project_box: lower must not exceed upper.")
    return lambda x: np.clip(x, lower, upper)


@validate_params(
    {
        "radius": [Interval(Real, 0, None, closed="left")],
    }
)
def project_l2_ball(radius: float, center: ArrayLike = 0.0) -> Callable[[np.ndarray], np.ndarray]:
    """Euclidean projection onto ``{x : ||x - center|| <= radius}``.

    Parameters
    ----------
    radius : float
        Radius of the ball, non-negative.
    center : float or array-like, default=0.0
        Its centre.

    Returns
    -------
    callable
        ``x -> center + (x - center) min(1, radius / ||x - center||)``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.optim import project_l2_ball
    >>> project_l2_ball(1.0)(np.array([3.0, 4.0]))
    array([0.6, 0.8])
    """

    def project(x):
        d = x - center
        norm = np.linalg.norm(d)
        return x if norm <= radius else center + d * (radius / norm)

    return project


@validate_params(
    {
        "fun_and_grad": [callable],
        "project": [callable],
        "step": [Interval(Real, 0, None, closed="neither"), None],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }
)
def projected_gradient(
    fun_and_grad: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x0: ArrayLike,
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
    >>> fg = lambda x: (float(x[0] ** 2 - x[0] - 2), np.array([2 * x[0] - 1]))  # lecture 12
    >>> res = optim.projected_gradient(fg, [1.5], optim.project_box(1.0, 1.7))
    >>> res.x, optim.check_kkt(res.jac, ineq=[1.0 - res.x[0]], ineq_jac=[[-1.0]]).ok
    (array([1.]), True)
    """
    x = project(np.array(x0, dtype=float))
    f, g = fun_and_grad(x)
    gamma = 1.0 if step is None else float(step)
    history, nit = [float(f)], 0

    def stationary(x, f, g) -> bool:
        # x is optimal iff x = P_C(x - grad f(x)): the natural residual measures
        # stationarity; a non-finite objective or gradient is never a solution.
        return bool(np.isfinite(f) and np.linalg.norm(x - project(x - g)) <= tol)

    success = stationary(x, f, g)
    while not success and nit < max_iter and np.isfinite(f) and np.all(np.isfinite(g)):
        for _ in range(100):
            x_new = project(x - gamma * g)
            f_new, g_new = fun_and_grad(x_new)
            d = x_new - x
            # Accept when gamma is below the inverse of the local Lipschitz constant of the
            # gradient, ||g(x+) - g(x)|| <= ||x+ - x|| / gamma: that implies the sufficient
            # decrease f(x+) <= f(x) + g^T d + ||d||^2 / (2 gamma) (exactly so on quadratics)
            # and, unlike comparing function values, is not defeated by round-off near the
            # solution.
            # A non-finite objective at the trial point also shrinks the step.
            if step is not None or (
                np.isfinite(f_new) and gamma * np.linalg.norm(g_new - g) <= np.linalg.norm(d)
            ):
                break
            gamma *= 0.5
        nit += 1
        x, f, g = x_new, f_new, g_new
        history.append(float(f))
        success = stationary(x, f, g)
        if step is None:
            gamma *= 2.0  # let the step grow back: backtracking alone only shrinks it
    if not success:
        if not (np.isfinite(f) and np.all(np.isfinite(g))):
            reason = f"the objective or its gradient became non-finite (f = {float(f)})"
        else:
            reason = f"max_iter = {max_iter} reached"
        warnings.warn(
            f"projected_gradient: {reason} before the natural residual fell below tol = {tol:g}.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return OptimizeResult(
        x=x, fun=float(f), jac=g, nit=nit, success=success, history=np.asarray(history)
    )


@dataclass(frozen=True)
class KKTResult:
    """The KKT conditions evaluated at a candidate point.

    As listed in Imperial "Mathematics for Machine Learning" lecture 13.

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

    See Also
    --------
    mathlearn.optim.check_kkt
        The function that returns it.

    Examples
    --------
    >>> from mathlearn.optim import check_kkt
    >>> res = check_kkt([-2.0], ineq=[0.0], ineq_jac=[[1.0]])
    >>> res.stationarity, res.ok
    (0.0, True)
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


@validate_params(
    {
        "tol": [Interval(Real, 0, None, closed="left")],
        "active_tol": [Interval(Real, 0, None, closed="left"), None],
    }
)
def check_kkt(
    grad: ArrayLike,
    *,
    ineq: ArrayLike | None = None,
    ineq_jac: ArrayLike | None = None,
    eq: ArrayLike | None = None,
    eq_jac: ArrayLike | None = None,
    ineq_multipliers: ArrayLike | None = None,
    eq_multipliers: ArrayLike | None = None,
    tol: float = 1e-6,
    active_tol: float | None = None,
) -> KKTResult:
    """Check the KKT conditions of ``min f(x)`` subject to ``g(x) <= 0, h(x) = 0`` at a point.

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
    (Imperial "Mathematics for Machine Learning" lecture 13): stationarity ``grad_x L = 0``; primal
    feasibility ``g <= 0``, ``h = 0``; dual feasibility ``lambda >= 0``; complementary slackness
    ``lambda_i g_i = 0``.

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
