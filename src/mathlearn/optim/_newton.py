"""Newton's method with a backtracking line search.

Preconditioned gradient descent with the Hessian as preconditioner (Imperial
"Mathematics for Machine Learning" lecture 6: "P = Hessian makes this a Newton step"):
``theta_{t+1} = theta_t - gamma_t H(theta_t)^{-1} grad L(theta_t)``, ``gamma_t`` from an Armijo
backtracking search starting at the full step ``gamma = 1``. On a quadratic the full step
lands on the minimiser in one iteration; near a minimiser with positive definite Hessian the
convergence is quadratic.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import OptimizeResult

from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, validate_params
from ..utils.linalg import cho_solve, cholesky

# A predicted decrease below this many epsilons of |f| is within the rounding of f itself
# (a sum of many terms carries errors of several epsilons of its size).
_ROUNDING = 256 * np.finfo(float).eps

__all__ = ["newton"]


def _newton_direction(H: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, float]:
    """Solve ``(H + tau I) d = -g`` with the smallest ``tau >= 0`` (tried) that is PD.

    Far from a minimiser the Hessian may be indefinite and ``-H^{-1} g`` not a descent
    direction; adding ``tau I`` (Levenberg-Marquardt style) interpolates towards gradient
    descent until the Cholesky factorisation succeeds: ``tau = 0`` first, then
    ``1e-8 max|diag H|`` doubling (the library's :func:`~mathlearn.utils.linalg.cholesky`).
    """
    scale = max(float(np.max(np.abs(np.diag(H)))), 1e-12)
    try:
        L, tau = cholesky(
            H,
            jitter=1e-8 * scale,
            growth=2.0,
            max_tries=59,
            warn=False,
            name="Hessian",
            return_jitter=True,
        )
    except np.linalg.LinAlgError:
        return -g, np.inf
    return -cho_solve(L, g), tau


@validate_params(
    {
        "fun": [callable],
        "grad": [callable, None],
        "hess": [callable, None],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "line_search": ["boolean"],
        "c": [Interval(Real, 0, 1, closed="neither")],
        "shrink": [Interval(Real, 0, 1, closed="neither")],
        "callback": [callable, None],
    }
)
def newton(
    fun: Callable[[np.ndarray], float],
    x0: ArrayLike,
    *,
    grad: Callable[[np.ndarray], np.ndarray] | None = None,
    hess: Callable[[np.ndarray], np.ndarray] | None = None,
    max_iter: int = 100,
    tol: float = 1e-8,
    line_search: bool = True,
    c: float = 1e-4,
    shrink: float = 0.5,
    callback: Callable[[int, np.ndarray, float], bool | None] | None = None,
) -> OptimizeResult:
    """Minimise ``fun`` by Newton's method with a backtracking line search.

    Parameters
    ----------
    fun : callable
        ``fun(x) -> float`` for a 1-D array ``x``. Without ``grad``/``hess`` it must be written
        with :mod:`mathlearn.autodiff` operations, which then supply them.
    x0 : array-like of shape (n,)
    grad, hess : callable, optional
        ``grad(x) -> (n,)`` and ``hess(x) -> (n, n)``.
    max_iter : int, default=100
    tol : float, default=1e-8
        Stop when ``||grad|| <= tol``.
    line_search : bool, default=True
        Backtrack from the full step until Armijo's condition
        ``f(x + gamma d) <= f(x) + c gamma g^T d`` holds; ``False`` always takes ``gamma = 1``.
        Where the predicted decrease ``-g^T d`` is below the rounding of ``f`` (256 machine
        epsilons of ``|f|``), the test would compare rounding errors: the full step is then
        taken if it reduces ``||grad||``, and the backtracking runs only if it does not.
    c, shrink : float
        Armijo constant and backtracking ratio.
    callback : callable, optional
        ``callback(iteration, x, f)``; a truthy return stops.

    Returns
    -------
    scipy.optimize.OptimizeResult
        ``x``, ``fun``, ``jac``, ``nit``, ``success``, ``message``, ``history`` (objective at
        every iterate), ``grad_norms``, ``n_regularised`` (iterations where the Hessian had to
        be shifted to be positive definite).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad, optim
    >>> Q = np.array([[3.0, 1.0], [1.0, 2.0]]); b = np.array([1.0, -1.0])
    >>> res = optim.newton(lambda x: 0.5 * x @ Q @ x - b @ x, np.zeros(2))
    >>> res.nit, np.allclose(res.x, np.linalg.solve(Q, b))
    (1, True)
    """
    x = np.array(x0, dtype=float)
    if x.ndim > 1:
        raise ValueError(f"x0 must be a 1-D array (or a scalar); got shape {x.shape}.")
    x = x.ravel()
    if grad is None or hess is None:
        # Only then is automatic differentiation needed: optim itself does not depend on it.
        from .. import autodiff

        grad = grad if grad is not None else autodiff.grad(fun)
        hess = hess if hess is not None else autodiff.hessian(fun)
    f, g = float(fun(x)), np.asarray(grad(x), dtype=float)
    history, grad_norms = [f], [float(np.linalg.norm(g))]
    nit, success, message, n_reg = 0, False, "", 0
    while True:
        if not np.isfinite(f):
            message = f"the objective became non-finite after {nit} iterations."
            break
        if grad_norms[-1] <= tol:
            success, message = True, f"gradient norm {grad_norms[-1]:.3g} <= tol = {tol:g}."
            break
        if nit >= max_iter:
            message = f"max_iter = {max_iter} reached; gradient norm {grad_norms[-1]:.3g}."
            break
        d, tau = _newton_direction(np.asarray(hess(x), dtype=float).reshape(x.size, x.size), g)
        n_reg += tau > 0
        step, slope = 1.0, float(g @ d)
        g_new = None
        if line_search and -slope <= _ROUNDING * max(abs(f), 1.0):
            # The predicted decrease is below the rounding of f: Armijo's test would compare
            # rounding errors (and its outcome depend on the BLAS's order of summation). The
            # full step is then judged by the gradient, which it must shrink (near a strict
            # minimum Newton's step does, quadratically); else the backtracking below.
            g_new = np.asarray(grad(x + d), dtype=float)
            if not float(np.linalg.norm(g_new)) < grad_norms[-1]:
                g_new = None
        if line_search and g_new is None:
            for _ in range(60):
                if float(fun(x + step * d)) <= f + c * step * slope:
                    break
                step *= shrink
        x = x + step * d
        nit += 1
        f = float(fun(x))
        g = g_new if g_new is not None else np.asarray(grad(x), dtype=float)
        history.append(f)
        grad_norms.append(float(np.linalg.norm(g)))
        if callback is not None and callback(nit, x, f):
            message = f"stopped by the callback after {nit} iterations."
            break
    if not success and not message.startswith("stopped"):
        warnings.warn(f"newton did not converge: {message}", ConvergenceWarning, stacklevel=2)
    return OptimizeResult(
        x=x,
        fun=f,
        jac=g,
        nit=nit,
        success=success,
        message=message,
        history=np.asarray(history),
        grad_norms=np.asarray(grad_norms),
        n_regularised=int(n_reg),
    )
