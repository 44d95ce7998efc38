"""A bridge to SciPy's L-BFGS-B for smooth problems with bound constraints.

SciPy runs the algorithm (Byrd, Lu, Nocedal and Zhu, 1995); this wrapper accepts the
library's parameter trees (an array of any shape or a dict of arrays), records the objective
history, and reports non-convergence with a ``ConvergenceWarning`` like the other optimisers.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy.optimize import Bounds, OptimizeResult
from scipy.optimize import minimize as _scipy_minimize

from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, validate_params
from ..utils._tree import tree_ravel

__all__ = ["lbfgs"]


@validate_params(
    {
        "fun_and_grad": [callable],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "memory": [Interval(Integral, 1, None, closed="left")],
    }
)
def lbfgs(
    fun_and_grad: Callable[[Any], tuple[float, Any]],
    x0: Any,
    *,
    bounds: Any = None,
    max_iter: int = 1000,
    tol: float = 1e-6,
    memory: int = 10,
    ftol: float | None = None,
) -> OptimizeResult:
    """Minimise with SciPy's L-BFGS-B, optionally subject to ``lower <= x <= upper``.

    Parameters
    ----------
    fun_and_grad : callable
        ``fun_and_grad(params) -> (f, grad)`` with ``grad`` in ``params``' structure.
    x0 : array or dict (list, tuple) of arrays
    bounds : (lower, upper) or scipy.optimize.Bounds, optional
        For array ``x0``: ``lower`` and ``upper`` are scalars or arrays of ``x0``'s shape
        (``-np.inf``/``np.inf`` or ``None`` for no bound). Not supported for dict ``x0``.
    max_iter : int, default=1000
    tol : float, default=1e-6
        Stop when the largest projected-gradient entry is at most ``tol`` (SciPy's ``gtol``).
        By default this is the only stopping rule besides ``max_iter``: SciPy's
        relative-decrease rule (``ftol``) is switched off, since it would otherwise stop
        first and leave the gradient far above ``tol``. ``success`` is true only when the
        gradient rule holds at the returned point and the objective there is finite.
    memory : int, default=10
        Number of correction pairs kept (SciPy's ``maxcor``).
    ftol : float, optional
        Also stop when the relative decrease of the objective is at most ``ftol`` (SciPy's
        rule; off when not given). A few machine epsilons stop only where rounding leaves no
        further decrease to find; ``success`` still requires the gradient rule.

    Returns
    -------
    scipy.optimize.OptimizeResult
        SciPy's result with ``x`` in ``x0``'s structure, ``jac`` likewise, ``history``
        (objective at ``x0`` and after each iteration) and ``projected_grad_norm`` (largest
        projected-gradient entry at ``x``).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad, optim
    >>> f = ad.value_and_grad(lambda x: ad.sum((x - 2.0) ** 2))
    >>> optim.lbfgs(f, np.zeros(2), bounds=(0.0, 1.0)).x
    array([1., 1.])
    """
    x_flat, unflatten = tree_ravel(x0)
    if bounds is not None and not isinstance(bounds, Bounds):
        if isinstance(x0, dict | list | tuple):
            raise ValueError("bounds are only supported for an array x0.")
        lower, upper = bounds
        shape = np.shape(x0)
        lower = np.broadcast_to(-np.inf if lower is None else lower, shape).ravel()
        upper = np.broadcast_to(np.inf if upper is None else upper, shape).ravel()
        if np.any(lower > upper):
            raise ValueError("bounds: lower must not exceed upper.")
        bounds = Bounds(lower, upper)

    history: list[float] = []

    def f(v):
        value, g = fun_and_grad(unflatten(v))
        g_flat = tree_ravel(g)[0]
        if not history:
            # SciPy's first evaluation is at x0 (clipped to the bounds): the start of the
            # history, without a separate evaluation there.
            history.append(float(value))
        return float(value), g_flat

    def record(intermediate_result):
        history.append(float(intermediate_result.fun))

    res = _scipy_minimize(
        f,
        x_flat,
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        callback=record,
        options={
            "maxiter": max_iter,
            "gtol": tol,
            "ftol": 0.0 if ftol is None else ftol,
            "maxcor": memory,
        },
    )
    # Judge convergence here, by the rule asked for: the projected gradient
    # P(x - g) - x (P the projection onto the box) has no entry above tol.
    x_end, g_end = np.asarray(res.x, dtype=float), np.asarray(res.jac, dtype=float)
    step = x_end - g_end
    if bounds is not None:
        step = np.clip(step, bounds.lb, bounds.ub)
    pg = float(np.max(np.abs(step - x_end), initial=0.0))
    res.projected_grad_norm = pg
    if not np.isfinite(res.fun):
        res.success = False
        res.message = f"the objective is not finite ({res.fun}) at the returned point."
    elif not pg <= tol:
        res.success = False
        res.message = f"largest projected-gradient entry {pg:.3g} > tol = {tol:g} ({res.message})."
    else:
        res.success = True
    if not res.success:
        warnings.warn(
            f"L-BFGS-B did not converge: {res.message}", ConvergenceWarning, stacklevel=2
        )
    res.x = unflatten(res.x)
    res.jac = unflatten(res.jac)
    res.history = np.asarray(history)
    return res
