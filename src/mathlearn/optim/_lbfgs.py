"""A bridge to SciPy's L-BFGS-B for smooth problems with bound constraints.

SciPy runs the algorithm (Byrd, Lu, Nocedal and Zhu, 1995); this wrapper accepts the
library's parameter trees (an array of any shape or a dict of arrays), records the objective
history, and reports non-convergence with a ``ConvergenceWarning`` like the other optimisers.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.optimize import Bounds, OptimizeResult
from scipy.optimize import minimize as _scipy_minimize

from ..autodiff import tree_flatten, tree_unflatten
from ..exceptions import ConvergenceWarning

__all__ = ["lbfgs"]


def _flatten(tree) -> tuple[np.ndarray, Callable[[np.ndarray], Any]]:
    leaves, treedef = tree_flatten(tree)
    arrays = [np.asarray(leaf, dtype=float) for leaf in leaves]
    shapes = [a.shape for a in arrays]
    flat = np.concatenate([a.ravel() for a in arrays])

    def unflatten(v: np.ndarray) -> Any:
        out, start = [], 0
        for s in shapes:
            n = int(np.prod(s))
            out.append(v[start : start + n].reshape(s))
            start += n
        return tree_unflatten(treedef, out)

    return flat, unflatten


def lbfgs(
    fun_and_grad: Callable[[Any], tuple[float, Any]],
    x0: Any,
    *,
    bounds=None,
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
        SciPy's ``gtol``: stop when the largest projected-gradient entry is at most ``tol``.
    memory : int, default=10
        Number of correction pairs kept (SciPy's ``maxcor``).
    ftol : float, optional
        SciPy's ``ftol``: also stop when the relative decrease of the objective is at most
        ``ftol`` (SciPy's default, about 2.2e-9, when not given). A few machine epsilons
        make the gradient test the one that stops.

    Returns
    -------
    scipy.optimize.OptimizeResult
        SciPy's result with ``x`` in ``x0``'s structure, ``jac`` likewise, and ``history``
        (objective at ``x0`` and after each iteration).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad, optim
    >>> f = ad.value_and_grad(lambda x: ad.sum((x - 2.0) ** 2))
    >>> optim.lbfgs(f, np.zeros(2), bounds=(0.0, 1.0)).x
    array([1., 1.])
    """
    x_flat, unflatten = _flatten(x0)
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

    def f(v):
        value, g = fun_and_grad(unflatten(v))
        g_flat, _ = _flatten(g)
        return float(value), g_flat

    history = [f(np.clip(x_flat, *(bounds.lb, bounds.ub)) if bounds is not None else x_flat)[0]]

    def record(intermediate_result):
        history.append(float(intermediate_result.fun))

    res = _scipy_minimize(
        f,
        x_flat,
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        callback=record,
        options={"maxiter": max_iter, "gtol": tol, "maxcor": memory}
        | ({} if ftol is None else {"ftol": ftol}),
    )
    if not res.success:
        warnings.warn(
            f"L-BFGS-B did not converge: {res.message}", ConvergenceWarning, stacklevel=2
        )
    res.x = unflatten(res.x)
    res.jac = unflatten(res.jac)
    res.history = np.asarray(history)
    return res
