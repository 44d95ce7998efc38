"""The matrix inversion identities as solvers (no inverse is formed).

Imperial "Mathematics for Inference and Machine Learning", Appendix, eqs. A.66-A.68, and
Imperial "Mathematics for Machine Learning" (the Woodbury identity, in its corrected form):

* Woodbury: ``(Z + U W V^T)^{-1} = Z^{-1} - Z^{-1} U (W^{-1} + V^T Z^{-1} U)^{-1} V^T Z^{-1}``.
  For ``Z`` of size ``p`` that is cheap to solve with (diagonal: ``O(p)``) and a rank-``q``
  update with ``q << p``, solving ``(Z + U W V^T) x = b`` costs ``O(p q^2 + q^3)`` instead of
  ``O(p^3)``.
* Kailath: ``(A + B C)^{-1} = A^{-1} - A^{-1} B (I + C A^{-1} B)^{-1} C A^{-1}``, Woodbury with
  ``W = I``; it needs no inverse of ``W``, which the notes call numerically a bit more stable.
* Searle: ``(A^{-1} + B^{-1})^{-1} = A (A + B)^{-1} B = B (A + B)^{-1} A``, which needs
  neither ``A^{-1}`` nor ``B^{-1}`` to exist (the precision-sum that combines two Gaussians).

Accuracy: each formula is exact; in floating point the Woodbury solve is backward stable when
``Z`` and the capacitance matrix ``W^{-1} + V^T Z^{-1} U`` are well conditioned. It loses
accuracy by cancellation when ``Z + U W V^T`` is much better conditioned than ``Z``: then solve
the full system directly.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from numpy.typing import ArrayLike

from ..utils._param_validation import validate_params
from ._lu import lu_or_raise as _lu

__all__ = ["kailath_solve", "searle", "woodbury_solve"]


def _finite(M, name):
    M = np.asarray(M, dtype=float)
    if M.size == 0:
        raise ValueError(f"{name} is empty.")
    if not np.all(np.isfinite(M)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return M


def _solver(Z, p):
    """``R -> Z^{-1} R`` for a square ``Z`` or a diagonal given as a vector."""
    if Z.ndim == 1:
        if Z.shape[0] != p:
            raise ValueError(f"the diagonal Z must have {p} entries; got {Z.shape[0]}.")
        if np.any(Z == 0):
            raise np.linalg.LinAlgError("the diagonal Z has a zero entry: it is singular.")
        return lambda R: R / (Z if R.ndim == 1 else Z[:, None])
    if Z.shape != (p, p):
        raise ValueError(f"Z must be ({p}, {p}); got {Z.shape}.")
    lu = _lu(Z, "Z")
    return lambda R: sla.lu_solve(lu, R, check_finite=False)


@validate_params(
    {
        "Z": ["array-like"],
        "U": ["array-like"],
        "W": ["array-like"],
        "V": ["array-like"],
        "b": ["array-like"],
    }
)
def woodbury_solve(Z: ArrayLike, U: ArrayLike, W: ArrayLike, V: ArrayLike, b: ArrayLike):
    """Solve ``(Z + U W V^T) x = b`` through the Woodbury identity.

    Parameters
    ----------
    Z : array-like of shape (p, p) or (p,)
        Invertible matrix, or its diagonal.
    U : array-like of shape (p, q)
        Left factor of the update.
    W : array-like of shape (q, q)
        Invertible core of the update.
    V : array-like of shape (p, q)
        Right factor of the update (``V^T`` appears in the update).
    b : array-like of shape (p,) or (p, k)
        Right-hand side(s).

    Returns
    -------
    x : ndarray of the shape of ``b``

    Raises
    ------
    numpy.linalg.LinAlgError
        If ``Z``, ``W`` or the capacitance matrix ``W^{-1} + V^T Z^{-1} U`` is singular.

    See Also
    --------
    kailath_solve, searle

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linalg import woodbury_solve
    >>> rng = np.random.default_rng(0)
    >>> d, U, b = np.arange(1.0, 6.0), rng.normal(size=(5, 2)), np.ones(5)
    >>> x = woodbury_solve(d, U, np.eye(2), U, b)
    >>> bool(np.allclose((np.diag(d) + U @ U.T) @ x, b))
    True
    """
    Zm, Um, Wm, Vm, bm = (_finite(M, n) for M, n in zip((Z, U, W, V, b), "ZUWVb", strict=True))
    if Um.ndim != 2 or Vm.shape != Um.shape:
        raise ValueError(f"U and V must both be (p, q); got {Um.shape} and {Vm.shape}.")
    p, q = Um.shape
    if Wm.shape != (q, q):
        raise ValueError(f"W must be ({q}, {q}); got {Wm.shape}.")
    if bm.shape[0] != p:
        raise ValueError(f"b must have {p} rows; got shape {bm.shape}.")
    solve_z = _solver(Zm, p)
    lu_w = _lu(Wm, "W")
    ZiU = solve_z(Um)
    capacitance = sla.lu_solve(lu_w, np.eye(q), check_finite=False) + Vm.T @ ZiU
    Zib = solve_z(bm)
    return Zib - ZiU @ sla.lu_solve(_lu(capacitance, "the capacitance matrix"), Vm.T @ Zib)


@validate_params(
    {"A": ["array-like"], "B": ["array-like"], "C": ["array-like"], "b": ["array-like"]}
)
def kailath_solve(A: ArrayLike, B: ArrayLike, C: ArrayLike, b: ArrayLike):
    """Solve ``(A + B C) x = b`` through the Kailath variant of the Woodbury identity.

    Parameters
    ----------
    A : array-like of shape (p, p) or (p,)
        Invertible matrix, or its diagonal.
    B : array-like of shape (p, q)
        Left factor of the update.
    C : array-like of shape (q, p)
        Right factor of the update.
    b : array-like of shape (p,) or (p, k)
        Right-hand side(s).

    Returns
    -------
    x : ndarray of the shape of ``b``

    Raises
    ------
    numpy.linalg.LinAlgError
        If ``A`` or ``I + C A^{-1} B`` is singular.

    See Also
    --------
    woodbury_solve

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linalg import kailath_solve
    >>> A, B, C = np.diag([2.0, 3.0]), np.array([[1.0], [0.0]]), np.array([[0.0, 1.0]])
    >>> x = kailath_solve(A, B, C, [1.0, 1.0])
    >>> bool(np.allclose((A + B @ C) @ x, [1.0, 1.0]))
    True
    """
    Am, Bm, Cm, bm = (_finite(M, n) for M, n in zip((A, B, C, b), "ABCb", strict=True))
    if Bm.ndim != 2 or Cm.ndim != 2 or Cm.shape != Bm.shape[::-1]:
        raise ValueError(f"B must be (p, q) and C (q, p); got {Bm.shape} and {Cm.shape}.")
    p, q = Bm.shape
    if bm.shape[0] != p:
        raise ValueError(f"b must have {p} rows; got shape {bm.shape}.")
    solve_a = _solver(Am, p)
    AiB = solve_a(Bm)
    Aib = solve_a(bm)
    inner = _lu(np.eye(q) + Cm @ AiB, "I + C A^{-1} B")
    return Aib - AiB @ sla.lu_solve(inner, Cm @ Aib, check_finite=False)


@validate_params({"A": ["array-like"], "B": ["array-like"]})
def searle(A: ArrayLike, B: ArrayLike) -> np.ndarray:
    """``(A^{-1} + B^{-1})^{-1}`` computed as ``A (A + B)^{-1} B``.

    Parameters
    ----------
    A : array-like of shape (p, p)
        Square matrix; need not be invertible.
    B : array-like of shape (p, p)
        Square matrix with ``A + B`` invertible; need not be invertible itself.

    Returns
    -------
    ndarray of shape (p, p)

    Raises
    ------
    numpy.linalg.LinAlgError
        If ``A + B`` is singular.

    See Also
    --------
    woodbury_solve

    Examples
    --------
    Two Gaussian covariances combined (the "parallel sum"), with one of them singular:

    >>> import numpy as np
    >>> from mathlearn.linalg import searle
    >>> searle(np.diag([2.0, 0.0]), np.diag([2.0, 1.0]))
    array([[1., 0.],
           [0., 0.]])
    """
    Am, Bm = _finite(A, "A"), _finite(B, "B")
    if Am.ndim != 2 or Am.shape[0] != Am.shape[1] or Bm.shape != Am.shape:
        raise ValueError(f"A and B must be square of the same size; got {Am.shape}, {Bm.shape}.")
    lu = _lu(Am + Bm, "A + B")
    return Am @ sla.lu_solve(lu, Bm, check_finite=False)
