"""Inner products, the norms, distances, angles and projections they induce.

A symmetric positive definite matrix ``M`` defines the inner product
``<x, y>_M = x^T M y`` (Imperial "Mathematics for Inference and Machine Learning", Appendix,
Definitions 9-12 and Theorem 5); ``M = I`` is the dot product. It induces

* the norm ``||x|| = sqrt(<x, x>)`` and the distance ``d(x, y) = ||x - y||``;
* the angle ``omega in [0, pi]`` with ``cos omega = <x, y> / (||x|| ||y||)`` (the notes print
  ``[0, pi)``; antiparallel vectors have ``omega = pi``);
* the projection of ``y`` onto the line of ``x``, ``<x, y> / ||x||^2 x`` (eq. A.6, with the
  square the notes omit), and onto the span of the columns of ``B``,
  ``B (B^T M B)^{-1} B^T M y``.

The angle is computed as ``2 atan2(||u - v||, ||u + v||)`` for the unit vectors ``u, v``
(Kahan's formula) rather than as ``arccos`` of the cosine, which loses half the digits near
0 and pi: ``arccos(1 - d)`` changes by ``sqrt(2 d)``, so a cosine rounded to ``eps`` gives an
angle wrong by about ``1e-8``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..utils.linalg import cho_solve, cholesky
from ..utils.validation import check_symmetric_psd

__all__ = ["InnerProduct"]


class InnerProduct:
    """The inner product ``<x, y> = x^T M y`` of a symmetric positive definite ``M``.

    Parameters
    ----------
    metric : array-like of shape (d, d) or int
        The Gram matrix ``M`` of the inner product (symmetric positive definite; checked), or
        the dimension ``d`` for the dot product (``M = I``).

    Attributes
    ----------
    metric : ndarray of shape (d, d)
        ``M``.
    dim : int
        ``d``.

    See Also
    --------
    mathlearn.kernels : kernels are inner products of feature maps.

    Examples
    --------
    The non-standard inner product ``x1 y1 - (x1 y2 + x2 y1) + 2 x2 y2`` of the Imperial notes
    (Appendix, Definition 9):

    >>> import numpy as np
    >>> from mathlearn.linalg import InnerProduct
    >>> beta = InnerProduct([[1.0, -1.0], [-1.0, 2.0]])
    >>> float(beta([1.0, 0.0], [0.0, 1.0]))
    -1.0
    >>> round(float(beta.angle([1.0, 0.0], [0.0, 1.0])), 6)   # 3 pi / 4: not orthogonal here
    2.356194
    >>> bool(InnerProduct(2).norm([1.0, 2.0]) == np.sqrt(5.0))   # ||(1, 2)|| = sqrt(5)
    True
    """

    def __init__(self, metric: ArrayLike | int):
        if isinstance(metric, (int, np.integer)) and not isinstance(metric, bool):
            if metric < 1:
                raise ValueError(f"the dimension must be >= 1; got {metric}.")
            self.metric = np.eye(int(metric))
            self._identity = True
        else:
            self.metric = check_symmetric_psd(metric, "the metric M of an inner product")
            self._identity = bool(np.array_equal(self.metric, np.eye(self.metric.shape[0])))
        self.dim = self.metric.shape[0]

    def _vec(self, x, name: str) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.shape[-1:] != (self.dim,):
            raise ValueError(
                f"{name} must have {self.dim} entries in its last axis; got shape {x.shape}."
            )
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} contains NaN or infinity.")
        return x

    def _apply(self, y: np.ndarray) -> np.ndarray:
        return y if self._identity else y @ self.metric  # M symmetric: (M y^T)^T = y M

    def __call__(self, x: ArrayLike, y: ArrayLike) -> np.ndarray:
        """``<x, y> = x^T M y`` (broadcast over leading axes).

        Parameters
        ----------
        x, y : array-like of shape (..., d)
            Vectors.

        Returns
        -------
        ndarray or float
        """
        x, y = self._vec(x, "x"), self._vec(y, "y")
        return np.sum(x * self._apply(y), axis=-1)

    def norm(self, x: ArrayLike) -> np.ndarray:
        """``||x|| = sqrt(<x, x>)``, scaled so that no square overflows or underflows.

        Parameters
        ----------
        x : array-like of shape (..., d)
            Vectors.

        Returns
        -------
        ndarray or float
        """
        x = self._vec(x, "x")
        scale = np.max(np.abs(x), axis=-1, keepdims=True)
        # Rescale only where a square could overflow or underflow; elsewhere the plain sum
        # keeps the result correctly rounded for exact inputs (||(1, 2)|| = sqrt(5)).
        safe = np.where((scale > 1e-150) & (scale < 1e150) | (scale == 0), 1.0, scale)
        u = x / safe
        return np.sqrt(np.maximum(np.sum(u * self._apply(u), axis=-1), 0.0)) * safe[..., 0]

    def distance(self, x: ArrayLike, y: ArrayLike) -> np.ndarray:
        """``d(x, y) = ||x - y||``.

        Parameters
        ----------
        x, y : array-like of shape (..., d)
            Vectors.

        Returns
        -------
        ndarray or float
        """
        return self.norm(self._vec(x, "x") - self._vec(y, "y"))

    def angle(self, x: ArrayLike, y: ArrayLike) -> np.ndarray:
        """The angle ``omega in [0, pi]`` between ``x`` and ``y``.

        Parameters
        ----------
        x, y : array-like of shape (..., d)
            Non-zero vectors.

        Returns
        -------
        ndarray or float
            In radians.

        Raises
        ------
        ValueError
            If either vector is zero (its angle is undefined).
        """
        x, y = self._vec(x, "x"), self._vec(y, "y")
        nx, ny = self.norm(x), self.norm(y)
        if np.any(nx == 0) or np.any(ny == 0):
            raise ValueError("the angle with a zero vector is undefined.")
        u = x / np.asarray(nx)[..., None]
        v = y / np.asarray(ny)[..., None]
        return 2.0 * np.arctan2(self.norm(u - v), self.norm(u + v))

    def project(self, y: ArrayLike, onto: ArrayLike) -> np.ndarray:
        """Orthogonal projection of ``y`` onto the line of a vector or the span of columns.

        Parameters
        ----------
        y : array-like of shape (d,)
            The vector to project.
        onto : array-like of shape (d,) or (d, k)
            A non-zero vector ``x`` (projection ``<x, y> / ||x||^2 x``) or a matrix ``B`` of
            linearly independent columns (projection ``B (B^T M B)^{-1} B^T M y``).

        Returns
        -------
        ndarray of shape (d,)
            The projection; ``y`` minus it is orthogonal to ``onto`` in this inner product.

        Raises
        ------
        ValueError
            A zero vector, or columns that are linearly dependent.
        """
        y = self._vec(y, "y")
        B = np.asarray(onto, dtype=float)
        if B.ndim == 1:
            B = B[:, None]
        if B.ndim != 2 or B.shape[0] != self.dim:
            raise ValueError(f"onto must have {self.dim} rows; got shape {np.shape(onto)}.")
        if not np.all(np.isfinite(B)):
            raise ValueError("onto contains NaN or infinity.")
        MB = B if self._identity else self.metric @ B
        G = B.T @ MB
        try:
            L = cholesky(G, jitter=None, name="B^T M B")
        except np.linalg.LinAlgError:
            raise ValueError(
                "cannot project onto a zero vector or onto linearly dependent columns."
            ) from None
        return B @ cho_solve(L, MB.T @ y)
