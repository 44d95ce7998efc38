"""Rank, null space, range and pseudo-inverse from the singular value decomposition.

With ``U^T A V = Sigma = diag(sigma_1, ..., sigma_p)``, ``sigma_1 >= ... >= sigma_p >= 0``
(Imperial "Mathematics for Inference and Machine Learning" §2.1.3, eqs. 2.20-2.25):
the rank is the number ``r`` of non-zero singular values, ``null(A) = span{v_{r+1}, ...,
v_n}``, ``ran(A) = span{u_1, ..., u_r}``, and the pseudo-inverse is
``A^+ = V_r Sigma_r^{-1} U_r^T``. For a matrix of full column rank ``A^+`` equals the left
inverse ``(A^T A)^{-1} A^T``, for full row rank the right inverse ``A^T (A A^T)^{-1}``
(Appendix, eqs. A.38-A.39); computing it from the SVD does not square the condition number
as those normal-equation forms do.

"Non-zero" is decided in floating point: singular values at or below
``tol = max(m, n) eps sigma_1`` (the size of the rounding error of a backward-stable SVD) are
treated as zero, the convention of NumPy's ``matrix_rank``.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from numpy.typing import ArrayLike

from ..utils._param_validation import Interval, validate_params

__all__ = ["matrix_rank", "null_space", "pinv", "range_space"]

_TOL = [Interval(Real, 0, None, closed="left"), None]


def _matrix(A, name: str = "A") -> np.ndarray:
    A = np.asarray(A, dtype=float)
    if A.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix; got shape {A.shape}.")
    if A.size == 0:
        raise ValueError(f"{name} is empty (shape {A.shape}).")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return A


def _svd_rank(A: np.ndarray, tol: float | None, full: bool = False):
    U, s, Vt = np.linalg.svd(A, full_matrices=full)
    cutoff = max(A.shape) * np.finfo(float).eps * s[0] if tol is None else tol
    return U, s, Vt, int(np.sum(s > cutoff))


@validate_params({"A": ["array-like"], "tol": _TOL})
def matrix_rank(A: ArrayLike, tol: float | None = None) -> int:
    """Numerical rank: the number of singular values above ``tol``.

    Parameters
    ----------
    A : array-like of shape (m, n)
        A finite matrix.
    tol : float, optional
        Threshold below which a singular value counts as zero (default
        ``max(m, n) eps sigma_1``).

    Returns
    -------
    int

    See Also
    --------
    null_space, range_space

    Examples
    --------
    >>> from mathlearn.linalg import matrix_rank
    >>> matrix_rank([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]])
    1
    """
    return _svd_rank(_matrix(A), tol)[3]


@validate_params({"A": ["array-like"], "tol": _TOL})
def null_space(A: ArrayLike, tol: float | None = None) -> np.ndarray:
    """Orthonormal basis of ``null(A) = {x : A x = 0}``: the right singular vectors
    ``v_{r+1}, ..., v_n``.

    Parameters
    ----------
    A : array-like of shape (m, n)
        A finite matrix.
    tol : float, optional
        Singular values at or below it count as zero (default ``max(m, n) eps sigma_1``).

    Returns
    -------
    ndarray of shape (n, n - r)
        Orthonormal columns; ``n - r`` of them (rank-nullity).

    See Also
    --------
    range_space, matrix_rank

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linalg import null_space
    >>> N = null_space([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    >>> N.shape, bool(np.allclose(np.abs(N[:, 0]), [2 ** -0.5, 2 ** -0.5, 0.0]))
    ((3, 1), True)
    """
    A = _matrix(A)
    _, _, Vt, r = _svd_rank(A, tol, full=True)
    return Vt[r:].T.copy()


@validate_params({"A": ["array-like"], "tol": _TOL})
def range_space(A: ArrayLike, tol: float | None = None) -> np.ndarray:
    """Orthonormal basis of the column space ``ran(A)``: the left singular vectors
    ``u_1, ..., u_r``.

    Parameters
    ----------
    A : array-like of shape (m, n)
        A finite matrix.
    tol : float, optional
        Singular values at or below it count as zero (default ``max(m, n) eps sigma_1``).

    Returns
    -------
    ndarray of shape (m, r)

    See Also
    --------
    null_space, matrix_rank

    Examples
    --------
    >>> from mathlearn.linalg import range_space
    >>> range_space([[1.0, 2.0], [2.0, 4.0]]).shape
    (2, 1)
    """
    A = _matrix(A)
    U, _, _, r = _svd_rank(A, tol)
    return U[:, :r].copy()


@validate_params({"A": ["array-like"], "tol": _TOL})
def pinv(A: ArrayLike, tol: float | None = None) -> np.ndarray:
    """Moore-Penrose pseudo-inverse ``A^+ = V_r Sigma_r^{-1} U_r^T``.

    Parameters
    ----------
    A : array-like of shape (m, n)
        A finite matrix.
    tol : float, optional
        Singular values at or below it count as zero and are not inverted (default
        ``max(m, n) eps sigma_1``).

    Returns
    -------
    ndarray of shape (n, m)
        The left inverse ``(A^T A)^{-1} A^T`` for full column rank, the right inverse
        ``A^T (A A^T)^{-1}`` for full row rank, ``A^{-1}`` for an invertible square matrix.

    See Also
    --------
    matrix_rank
    mathlearn.utils.linalg.lstsq : least-squares solutions without forming ``A^+``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linalg import pinv
    >>> A = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    >>> pinv(A)
    array([[1. , 0. , 0. ],
           [0. , 0.5, 0. ]])
    """
    A = _matrix(A)
    U, s, Vt, r = _svd_rank(A, tol)
    return (Vt[:r].T / s[:r]) @ U[:, :r].T
