"""``vec``: a matrix as the vector of its stacked columns, and its inverse.

Imperial "Mathematics for Machine Learning" (matrix calculus): ``vec [[a, b], [c, d]] =
[a, c, b, d]^T`` (column-major order), the convention under which
``vec(A X B) = (B^T kron A) vec(X)``.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike

from ..utils._param_validation import validate_params

__all__ = ["unvec", "vec"]


@validate_params({"A": ["array-like"]})
def vec(A: ArrayLike) -> np.ndarray:
    """Stack the columns of ``A`` into one vector.

    Parameters
    ----------
    A : array-like of shape (m, n)
        Matrix.

    Returns
    -------
    ndarray of shape (m * n,)

    See Also
    --------
    unvec

    Examples
    --------
    >>> from mathlearn.linalg import vec
    >>> vec([[1, 2], [3, 4]])
    array([1, 3, 2, 4])
    """
    A = np.asarray(A)
    if A.ndim != 2:
        raise ValueError(f"vec takes a 2-D matrix; got shape {A.shape}.")
    return A.reshape(-1, order="F")


@validate_params({"v": ["array-like"], "shape": [tuple]})
def unvec(v: ArrayLike, shape: tuple[int, int]) -> np.ndarray:
    """The matrix of shape ``shape`` whose ``vec`` is ``v``.

    Parameters
    ----------
    v : array-like of shape (m * n,)
        Vector of stacked columns.
    shape : tuple of int
        ``(m, n)``.

    Returns
    -------
    ndarray of shape (m, n)

    See Also
    --------
    vec

    Examples
    --------
    >>> from mathlearn.linalg import unvec
    >>> unvec([1, 3, 2, 4], (2, 2))
    array([[1, 2],
           [3, 4]])
    """
    v = np.asarray(v)
    if len(shape) != 2 or not all(isinstance(k, Integral) and k >= 0 for k in shape):
        raise ValueError(f"shape must be two non-negative integers; got {shape}.")
    if v.ndim != 1 or v.shape[0] != shape[0] * shape[1]:
        raise ValueError(f"v must be a vector of {shape[0] * shape[1]} entries; got {v.shape}.")
    return v.reshape(shape, order="F")
