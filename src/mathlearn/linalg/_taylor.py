"""Taylor polynomials of a function by automatic differentiation.

Imperial "Mathematics for Inference and Machine Learning" §1.4.1.2 (eqs. 1.83-1.88): the
degree-``n`` Taylor polynomial of ``f`` at ``x0`` is

    T_n(x) = sum_{k=0}^{n} D^k f(x0)[h, ..., h] / k!,     h = x - x0,

where ``D^k f(x0)[h, ..., h] = d^k/dt^k f(x0 + t h) |_{t=0}`` is the ``k``-th derivative along
``h``. Each of them is computed exactly (to rounding) by reverse-mode differentiation applied
``k`` times to the scalar function ``t -> f(x0 + t h)``
(:func:`mathlearn.autodiff.backward` with ``create_graph=True``); no finite differences.
``n = 1`` is the linearisation ``f(x0) + grad f(x0) (x - x0)`` (eq. 1.83).
"""

from __future__ import annotations

from collections.abc import Callable
from math import factorial
from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike

from ..autodiff import Tensor, backward
from ..utils._param_validation import Interval, validate_params

__all__ = ["taylor_polynomial"]


def _directional_derivatives(f, x0: np.ndarray, h: np.ndarray, order: int) -> list[float]:
    t = Tensor(np.zeros(()), requires_grad=True)
    out = f(x0 + t * h)
    values = [float(np.asarray(out.value if isinstance(out, Tensor) else out))]
    current = out
    for _ in range(order):
        if not (isinstance(current, Tensor) and current.requires_grad):
            values.append(0.0)  # a polynomial of lower degree: the rest vanish
            current = None
            continue
        g = backward(current, create_graph=True).get(id(t))
        if g is None:
            values.append(0.0)
            current = None
            continue
        current = g[1]
        values.append(float(np.asarray(current.value if isinstance(current, Tensor) else current)))
    return values


@validate_params(
    {"f": [callable], "x0": ["array-like"], "order": [Interval(Integral, 0, None, closed="left")]}
)
def taylor_polynomial(f: Callable, x0: ArrayLike, order: int = 2) -> Callable[[ArrayLike], float]:
    """The degree-``order`` Taylor polynomial of a scalar function at ``x0``, as a function.

    Parameters
    ----------
    f : callable
        Scalar function of one vector, written with :mod:`mathlearn.autodiff` operations (or
        plain arithmetic and indexing, which :class:`~mathlearn.autodiff.Tensor` supports).
    x0 : array-like of shape (d,)
        Expansion point.
    order : int, default=2
        Degree ``n`` of the polynomial (1: the linearisation).

    Returns
    -------
    callable
        ``x -> T_n(x)`` (a float). Each evaluation differentiates ``f`` ``n`` times along
        ``x - x0``.

    See Also
    --------
    mathlearn.autodiff.hessian

    Examples
    --------
    The worked example of the Imperial notes (§1.4.1.2, eqs. 1.89-1.103, corrected):
    ``f(x, y) = x^2 + 2 x y + y^3`` at ``(1, 2)``; a cubic equals its degree-3 expansion.

    >>> from mathlearn.linalg import taylor_polynomial
    >>> f = lambda v: v[0] ** 2 + 2 * v[0] * v[1] + v[1] ** 3
    >>> T3 = taylor_polynomial(f, [1.0, 2.0], order=3)
    >>> round(T3([0.3, -1.7]), 10)
    -5.843
    >>> round(taylor_polynomial(f, [1.0, 2.0], order=1)([1.1, 2.0]), 12)   # 13 + 6 * 0.1
    13.6
    """
    x0 = np.asarray(x0, dtype=float)
    if x0.ndim != 1 or x0.size == 0:
        raise ValueError(f"x0 must be a non-empty vector; got shape {x0.shape}.")
    if not np.all(np.isfinite(x0)):
        raise ValueError("x0 contains NaN or infinity.")

    def T(x: ArrayLike) -> float:
        x = np.asarray(x, dtype=float)
        if x.shape != x0.shape:
            raise ValueError(f"x must have shape {x0.shape}; got {x.shape}.")
        derivs = _directional_derivatives(f, x0, x - x0, order)
        return float(sum(d / factorial(k) for k, d in enumerate(derivs)))

    return T
