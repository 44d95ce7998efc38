"""Determinants and inverses by expansion and by blocks.

* Laplace (cofactor) expansion along column ``k`` (Imperial "Mathematics for Inference and
  Machine Learning", Appendix, eq. A.34): ``det A = sum_j (-1)^{j+k} a_jk det(A_jk)``, with
  ``A_jk`` the matrix without row ``j`` and column ``k``. It costs ``O(n!)`` and is here to
  teach and to check; a determinant in practice comes from an LU or Cholesky factorisation
  (:func:`mathlearn.utils.linalg.logdet`). Integer (or fraction) entries give the exact
  determinant: the expansion only adds and multiplies.
* The block determinant and the block inverse through the Schur complement
  ``S = D - C A^{-1} B`` of the leading block (Appendix, eqs. A.35-A.36):
  ``det [[A, B], [C, D]] = det(A) det(S)`` and

      [[A, B], [C, D]]^{-1} = [[A^{-1} + A^{-1} B S^{-1} C A^{-1}, -A^{-1} B S^{-1}],
                               [-S^{-1} C A^{-1},                   S^{-1}]],

  computed from LU factorisations of ``A`` and ``S`` (solves, never an explicit ``A^{-1}``).
"""

from __future__ import annotations

from fractions import Fraction
from numbers import Integral

import numpy as np
import scipy.linalg as sla
from numpy.typing import ArrayLike

from ..utils._param_validation import Interval, validate_params
from ._lu import lu_or_raise

__all__ = ["block_determinant", "block_inverse", "cofactor_determinant"]

_MAX_COFACTOR_N = 10  # 10! = 3.6 million terms: about a second in Python


def _square(A, name: str) -> np.ndarray:
    A = np.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be a square 2-D matrix; got shape {A.shape}.")
    if A.size == 0:
        raise ValueError(f"{name} is empty.")
    if A.dtype.kind not in "iufO":
        raise ValueError(f"{name} must hold numbers; got dtype {A.dtype}.")
    if A.dtype.kind in "fc" and not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return A


def _expand(rows: list, cols: tuple, k: int):
    if len(cols) == 1:
        return rows[0][cols[0]]
    col = cols[k]
    rest = cols[:k] + cols[k + 1 :]
    total = 0
    for j, row in enumerate(rows):
        a = row[col]
        if a == 0:
            continue
        minor = rows[:j] + rows[j + 1 :]
        term = a * _expand(minor, rest, 0)
        total = total - term if (j + k) % 2 else total + term
    return total


@validate_params({"A": ["array-like"], "column": [Interval(Integral, 0, None, closed="left")]})
def cofactor_determinant(A: ArrayLike, column: int = 0):
    """Determinant by Laplace expansion along one column (then the first column of each minor).

    Parameters
    ----------
    A : array-like of shape (n, n)
        Square matrix of numbers, ``n <= 10``. Python or NumPy integers and
        :class:`fractions.Fraction` entries give the exact determinant.
    column : int, default=0
        The column ``k`` of the first expansion.

    Returns
    -------
    int, Fraction or float
        The determinant, in the arithmetic of the entries.

    Raises
    ------
    ValueError
        A non-square matrix, NaN/inf entries, ``column`` out of range, or ``n > 10`` (the
        expansion has ``n!`` terms; use :func:`mathlearn.utils.linalg.logdet` or
        :func:`numpy.linalg.slogdet`).

    See Also
    --------
    block_determinant

    Examples
    --------
    The worked example of the Imperial notes (Appendix, eq. A.35), expanded along the second
    column:

    >>> from mathlearn.linalg import cofactor_determinant
    >>> cofactor_determinant([[-2, 2, -3], [-1, 1, 3], [2, 0, -1]], column=1)
    18
    """
    A = _square(A, "A")
    n = A.shape[0]
    if n > _MAX_COFACTOR_N:
        raise ValueError(
            f"cofactor expansion of a {n}x{n} matrix has {n}! terms; it is limited to "
            f"n <= {_MAX_COFACTOR_N}. Use mathlearn.utils.linalg.logdet or numpy.linalg.slogdet."
        )
    if column >= n:
        raise ValueError(f"column must be in [0, {n - 1}]; got {column}.")

    def scalar(v):
        if isinstance(v, np.integer):
            return int(v)
        if isinstance(v, np.floating):
            return float(v)
        if isinstance(v, (int, float, Fraction)):
            return v
        raise ValueError(f"A must hold numbers; got an entry of type {type(v).__name__}.")

    rows = [tuple(scalar(v) for v in row) for row in A]
    return _expand(rows, tuple(range(n)), column)


def _blocks(A, B, C, D):
    A = np.asarray(A, dtype=float)
    D = np.asarray(D, dtype=float)
    for name, M in (("A", A), ("D", D)):
        _square(M, name)
    p, q = A.shape[0], D.shape[0]
    B = np.asarray(B, dtype=float).reshape(p, q) if np.size(B) == p * q else np.asarray(B)
    C = np.asarray(C, dtype=float).reshape(q, p) if np.size(C) == p * q else np.asarray(C)
    if B.shape != (p, q) or C.shape != (q, p):
        raise ValueError(
            f"blocks do not fit: A is {A.shape}, D is {D.shape}, so B must be {(p, q)} and C "
            f"{(q, p)}; got B {np.shape(B)} and C {np.shape(C)}."
        )
    for name, M in (("B", B), ("C", C)):
        if not np.all(np.isfinite(M)):
            raise ValueError(f"{name} contains NaN or infinity.")
    lu_A = lu_or_raise(
        A,
        "the leading block A",
        " The Schur complement D - C A^{-1} B does not exist: reorder the blocks so that the "
        "leading one is invertible.",
    )
    AiB = sla.lu_solve(lu_A, B, check_finite=False)
    S = D - C @ AiB
    return A, B, C, D, lu_A, AiB, S


@validate_params(
    {"A": ["array-like"], "B": ["array-like"], "C": ["array-like"], "D": ["array-like"]}
)
def block_determinant(A: ArrayLike, B: ArrayLike, C: ArrayLike, D: ArrayLike) -> float:
    """``det [[A, B], [C, D]] = det(A) det(D - C A^{-1} B)`` for an invertible block ``A``.

    Parameters
    ----------
    A : array-like of shape (p, p)
        Invertible leading block.
    B : array-like of shape (p, q)
        Upper-right block.
    C : array-like of shape (q, p)
        Lower-left block.
    D : array-like of shape (q, q)
        Trailing block.

    Returns
    -------
    float

    Raises
    ------
    numpy.linalg.LinAlgError
        If ``A`` is singular.

    See Also
    --------
    block_inverse, cofactor_determinant

    Examples
    --------
    >>> from mathlearn.linalg import block_determinant
    >>> float(block_determinant([[2.0]], [[1.0]], [[1.0]], [[3.0]]))  # det [[2, 1], [1, 3]]
    5.0
    """
    Am, _, _, _, lu_A, _, S = _blocks(A, B, C, D)
    sign_a = (-1.0) ** np.sum(lu_A[1] != np.arange(Am.shape[0]))
    det_a = sign_a * np.prod(np.diag(lu_A[0]))
    return float(det_a * np.linalg.det(S))


@validate_params(
    {"A": ["array-like"], "B": ["array-like"], "C": ["array-like"], "D": ["array-like"]}
)
def block_inverse(A: ArrayLike, B: ArrayLike, C: ArrayLike, D: ArrayLike) -> np.ndarray:
    """The inverse of ``[[A, B], [C, D]]`` through the Schur complement ``S = D - C A^{-1} B``.

    Parameters
    ----------
    A : array-like of shape (p, p)
        Invertible leading block.
    B : array-like of shape (p, q)
        Upper-right block.
    C : array-like of shape (q, p)
        Lower-left block.
    D : array-like of shape (q, q)
        Trailing block; the Schur complement must be invertible too.

    Returns
    -------
    ndarray of shape (p + q, p + q)

    Raises
    ------
    numpy.linalg.LinAlgError
        If ``A`` or the Schur complement is singular.

    See Also
    --------
    block_determinant, mathlearn.linalg.woodbury_solve

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linalg import block_inverse
    >>> M = block_inverse([[2.0]], [[1.0]], [[1.0]], [[3.0]])
    >>> bool(np.allclose(M @ [[2.0, 1.0], [1.0, 3.0]], np.eye(2)))
    True
    """
    Am, _, Cm, Dm, lu_A, AiB, S = _blocks(A, B, C, D)
    lu_S = lu_or_raise(S, "the Schur complement D - C A^{-1} B")
    p, q = Am.shape[0], Dm.shape[0]
    S_inv_C_Ai = sla.lu_solve(lu_S, sla.lu_solve(lu_A, Cm.T, trans=1, check_finite=False).T)
    out = np.empty((p + q, p + q))
    out[p:, p:] = sla.lu_solve(lu_S, np.eye(q), check_finite=False)
    out[p:, :p] = -S_inv_C_Ai
    out[:p, p:] = -AiB @ out[p:, p:]
    out[:p, :p] = sla.lu_solve(lu_A, np.eye(p), check_finite=False) + AiB @ S_inv_C_Ai
    return out
