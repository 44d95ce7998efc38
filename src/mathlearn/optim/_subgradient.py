"""The subgradient method for convex functions that are not differentiable.

Named among the optimisers of Imperial "Mathematics for Inference and Machine Learning" §1.6.4;
the method of Shor (1962; the notes cite Shor 1985). For convex ``f`` and any subgradient
``g_k in df(x_k)``,

    x_{k+1} = x_k - gamma_k g_k.

It is not a descent method (``f`` may increase along ``-g``), so the best point so far is
kept. With ``||g|| <= G`` and ``||x_0 - x*|| <= R``,

    f_best^k - f* <= (R^2 + G^2 sum_{i<=k} gamma_i^2) / (2 sum_{i<=k} gamma_i),

which tends to 0 for steps with ``sum gamma = inf`` and ``sum gamma^2 < inf`` (the default
``gamma_k = gamma_0 / sqrt(k + 1)`` gives ``O(log k / sqrt k)``); a constant step converges
only to within ``G^2 gamma / 2``.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import OptimizeResult

from ..utils._param_validation import Interval, validate_params

__all__ = ["subgradient_method"]


@validate_params(
    {
        "fun_and_subgrad": [callable],
        "x0": ["array-like"],
        "learning_rate": [Interval(Real, 0, None, closed="neither"), callable],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "callback": [callable, None],
    }
)
def subgradient_method(
    fun_and_subgrad: Callable,
    x0: ArrayLike,
    learning_rate: float | Callable[[int], float] = 1.0,
    *,
    max_iter: int = 1000,
    callback: Callable | None = None,
) -> OptimizeResult:
    """Minimise a convex function from its values and subgradients.

    Parameters
    ----------
    fun_and_subgrad : callable
        ``x -> (f(x), g)`` with ``g`` any subgradient of ``f`` at ``x``.
    x0 : array-like of shape (n,)
        Starting point.
    learning_rate : float or callable, default=1.0
        ``gamma_0`` of the diminishing steps ``gamma_0 / sqrt(k + 1)``, or a schedule
        ``k -> gamma_k``.
    max_iter : int, default=1000
        Number of steps.
    callback : callable, optional
        ``callback(k, x, f)`` after each evaluation; a truthy return stops.

    Returns
    -------
    scipy.optimize.OptimizeResult
        ``x`` (the best point found), ``fun`` (its value), ``nit``, ``fun_history`` (the value
        at every iterate) and ``best_history`` (the best value so far).

    Raises
    ------
    ValueError
        A value or subgradient that is NaN or infinite.

    See Also
    --------
    mathlearn.optim.minimize : gradient methods for differentiable objectives.

    Examples
    --------
    ``f(x) = |x_1| + 2 |x_2 - 1|``, minimised at ``(0, 1)``:

    >>> import numpy as np
    >>> from mathlearn.optim import subgradient_method
    >>> f = lambda x: (abs(x[0]) + 2 * abs(x[1] - 1),
    ...                np.array([np.sign(x[0]), 2 * np.sign(x[1] - 1)]))
    >>> res = subgradient_method(f, [3.0, -2.0], 1.0, max_iter=2000)
    >>> bool(res.fun < 0.05)
    True
    """
    x = np.array(x0, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"x0 must be a non-empty vector; got shape {x.shape}.")
    schedule = (
        learning_rate
        if callable(learning_rate)
        else (lambda k, g0=float(learning_rate): g0 / np.sqrt(k + 1.0))
    )
    best_x, best_f = x.copy(), np.inf
    values, bests = [], []
    k = 0
    for k in range(int(max_iter)):
        f, g = fun_and_subgrad(x)
        f = float(f)
        g = np.asarray(g, dtype=float)
        if not np.isfinite(f) or not np.all(np.isfinite(g)) or g.shape != x.shape:
            raise ValueError(
                f"at step {k} the value is {f} and the subgradient has shape {g.shape}: both "
                f"must be finite, the subgradient of shape {x.shape}."
            )
        if f < best_f:
            best_f, best_x = f, x.copy()
        values.append(f)
        bests.append(best_f)
        if callback is not None and callback(k, x, f):
            break
        x = x - float(schedule(k)) * g
    return OptimizeResult(
        x=best_x,
        fun=best_f,
        nit=k + 1,
        success=True,
        fun_history=np.asarray(values),
        best_history=np.asarray(bests),
        message="best point after the steps taken (the subgradient method has no stopping test)",
    )
