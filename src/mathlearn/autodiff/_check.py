"""Finite-difference gradient checking.

The derivative is a limit (Imperial "Mathematics for Machine Learning" lectures 1.2–1.3): ``df/dx_i
= lim (f(x + h e_i) - f(x)) / h``. The central difference ``(f(x + h e_i) - f(x - h e_i)) / 2h``
has error ``O(h^2)`` instead of ``O(h)``; with ``h ~ 1e-6`` (relative to ``|x_i|``) the truncation
and the round-off errors are both around ``1e-10`` relative, far below any real mistake in a
gradient.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..utils._tree import tree_ravel
from ._functional import grad as _ad_grad

__all__ = ["GradCheckResult", "check_grad", "numerical_grad"]


@dataclass(frozen=True)
class GradCheckResult:
    """Outcome of :func:`check_grad`.

    Attributes
    ----------
    analytic, numerical : array or tree of arrays
        The gradient under test and its central-difference estimate, in ``x``'s structure.
    rel_error : float
        ``||analytic - numerical|| / max(||analytic||, ||numerical||, tiny)`` over all entries.
    max_abs_error : float
        Largest entrywise ``|analytic - numerical|``.
    worst_index : int
        Position (in the flattened parameters) of the largest discrepancy.
    rtol : float
        Tolerance used for ``ok``.

    See Also
    --------
    mathlearn.autodiff.check_grad
        Compare a gradient with finite differences.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.autodiff import check_grad
    >>> f = lambda x: float(np.sum(x**3))
    >>> res = check_grad(f, np.array([2.0]), grad=lambda x: 2 * x)  # wrong: d x^3 = 3 x^2
    >>> res.ok, round(res.rel_error, 3)  # |4 - 12| / 12
    (False, 0.667)
    """

    analytic: Any
    numerical: Any
    rel_error: float
    max_abs_error: float
    worst_index: int
    rtol: float

    @property
    def ok(self) -> bool:
        """Whether the relative error is within ``rtol``."""
        return self.rel_error <= self.rtol

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        verdict = "ok" if self.ok else "MISMATCH"
        return (
            f"gradient check {verdict}: relative error {self.rel_error:.3g} (rtol {self.rtol:g}), "
            f"max abs error {self.max_abs_error:.3g} at flat index {self.worst_index}"
        )


def numerical_grad(f: Callable, x: Any, *, eps: float = 1e-6) -> Any:
    """Central-difference gradient of a scalar function, in ``x``'s structure.

    Parameters
    ----------
    f : callable
        ``f(x) -> float``; ``x`` is an array or a dict (list, tuple) of arrays.
    x : array or tree of arrays
    eps : float, default=1e-6
        Step, scaled by ``max(1, |x_i|)`` for each entry.

    Returns
    -------
    array or tree of arrays
        Same structure and shapes as ``x``, in float64.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.autodiff import numerical_grad
    >>> g = numerical_grad(lambda x: float(np.sum(x**2)), np.array([1.0, -2.0]))
    >>> np.allclose(g, [2.0, -4.0], rtol=1e-9)
    True
    """
    flat, unravel = tree_ravel(x)
    out = np.empty_like(flat)
    for i in range(flat.size):
        h = eps * max(1.0, abs(flat[i]))
        xp, xm = flat.copy(), flat.copy()
        xp[i] += h
        xm[i] -= h
        fp = float(np.asarray(_value(f(unravel(xp)))))
        fm = float(np.asarray(_value(f(unravel(xm)))))
        out[i] = (fp - fm) / (2 * h)
    return unravel(out)


def _value(y):
    return getattr(y, "value", y)


def check_grad(
    f: Callable,
    x: Any,
    grad: Callable | None = None,
    *,
    eps: float = 1e-6,
    rtol: float = 1e-6,
) -> GradCheckResult:
    """Compare a gradient with central finite differences.

    Parameters
    ----------
    f : callable
        Scalar function ``f(x)``. Without ``grad`` it must be written with
        :mod:`mathlearn.autodiff` operations, and autodiff's gradient is checked.
    x : array or dict (list, tuple) of arrays
        Point at which to check.
    grad : callable, optional
        A hand-derived gradient ``grad(x)`` (same structure as ``x``) to check instead.
    eps : float, default=1e-6
        Relative finite-difference step.
    rtol : float, default=1e-6
        Relative error below which the check passes.

    Returns
    -------
    GradCheckResult
        Truthy when the check passes; ``str(result)`` is a one-line report.

    Notes
    -----
    Central differences (not in the notes; a standard refinement of the limit) are exact for
    quadratics up to round-off, and have ``O(eps^2)`` truncation error in general.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.autodiff import check_grad
    >>> f = lambda x: float(np.sum(np.sin(x)))
    >>> check_grad(f, np.array([0.1, 0.2]), grad=np.cos).ok
    True
    """
    analytic = (grad or _ad_grad(f))(x)
    numerical = numerical_grad(f, x, eps=eps)
    a = tree_ravel(analytic)[0]
    n = tree_ravel(numerical)[0]
    if a.shape != n.shape:
        raise ValueError(f"gradient has {a.size} entries but x has {n.size}.")
    diff = np.abs(a - n)
    scale = max(np.linalg.norm(a), np.linalg.norm(n), np.finfo(float).tiny)
    worst = int(np.argmax(diff)) if diff.size else 0
    return GradCheckResult(
        analytic=analytic,
        numerical=numerical,
        rel_error=float(np.linalg.norm(a - n) / scale),
        max_abs_error=float(diff.max()) if diff.size else 0.0,
        worst_index=worst,
        rtol=rtol,
    )
