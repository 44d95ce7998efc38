"""The Rayleigh quotient and the condition number.

Imperial "Mathematics for Machine Learning" (the Rayleigh quotient and the condition number
of a symmetric positive definite matrix): ``R(A, x) = x^T A x / x^T x`` lies between the
smallest and the largest eigenvalue of a symmetric ``A`` and reaches them at the
corresponding eigenvectors; ``kappa(A) = lambda_max / lambda_min`` for SPD ``A``, in general
``kappa_2(A) = sigma_max / sigma_min`` (infinite for a singular matrix). ``kappa`` bounds how
much a relative error in ``b`` can be amplified in the solution of ``A x = b``; about
``log10 kappa`` digits are lost.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..utils._param_validation import validate_params

__all__ = ["condition_number", "rayleigh_quotient"]


@validate_params({"A": ["array-like"], "x": ["array-like"]})
def rayleigh_quotient(A: ArrayLike, x: ArrayLike) -> float:
    """``R(A, x) = x^T A x / x^T x``.

    Parameters
    ----------
    A : array-like of shape (n, n)
        Square matrix (symmetric for the eigenvalue bounds to hold).
    x : array-like of shape (n,)
        Non-zero vector.

    Returns
    -------
    float

    See Also
    --------
    condition_number

    Examples
    --------
    >>> from mathlearn.linalg import rayleigh_quotient
    >>> rayleigh_quotient([[2.0, 0.0], [0.0, 5.0]], [0.0, 3.0])   # an eigenvector: lambda = 5
    5.0
    """
    A = np.asarray(A, dtype=float)
    x = np.asarray(x, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or x.shape != (A.shape[0],):
        raise ValueError(f"A must be (n, n) and x (n,); got {A.shape} and {x.shape}.")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(x))):
        raise ValueError("A and x must be finite.")
    scale = np.max(np.abs(x))
    if scale == 0:
        raise ValueError("the Rayleigh quotient of the zero vector is undefined.")
    u = x / scale  # scale-free: no overflow or underflow in x^T x
    return float(u @ A @ u / (u @ u))


@validate_params({"A": ["array-like"]})
def condition_number(A: ArrayLike) -> float:
    """The 2-norm condition number ``sigma_max / sigma_min`` (``lambda_max / lambda_min`` for SPD).

    Parameters
    ----------
    A : array-like of shape (m, n)
        Finite matrix.

    Returns
    -------
    float
        ``inf`` when the smallest singular value is zero.

    See Also
    --------
    rayleigh_quotient, mathlearn.linalg.matrix_rank

    Examples
    --------
    >>> from mathlearn.linalg import condition_number
    >>> condition_number([[4.0, 0.0], [0.0, 0.5]])
    8.0
    """
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.size == 0:
        raise ValueError(f"A must be a non-empty 2-D matrix; got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError("A contains NaN or infinity.")
    s = np.linalg.svd(A, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else float("inf")
