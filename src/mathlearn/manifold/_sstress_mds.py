"""Multidimensional scaling by minimising the squared-distance stress (S-stress).

Stuttgart "Introduction to Machine Learning" §6 (slide 6:28, non-metric MDS): for any
dissimilarities ``d_ij`` (not necessarily Euclidean distances) find ``z_1, ..., z_n`` in
``R^k`` minimising

    S(z) = sum_{i != j} (d_ij^2 - ||z_i - z_j||^2)^2,

whose gradient (both ``(i, j)`` and ``(j, i)`` counted) is

    dS/dz_i = -8 sum_{j != i} (d_ij^2 - ||z_i - z_j||^2) (z_i - z_j),

or, with ``E_ij = d_ij^2 - ||z_i - z_j||^2`` (``E_ii = 0``), ``grad = -8 (diag(E 1) - E) Z``.
This is the S-stress of Takane, Young and de Leeuw (1977). Classical MDS (the double-centred
eigendecomposition, :class:`MDS`) minimises a different criterion (strain); it is the
starting point here, and for Euclidean distances in ``k`` dimensions both reach ``S = 0``.
For other dissimilarities S-stress fits the large dissimilarities most closely (they enter
squared). The minimisation is by L-BFGS on the exact gradient, in units of the largest
dissimilarity; ``S`` is not convex, so the result is a local minimum near the classical
embedding.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from ..base import BaseEstimator, _fit_context
from ..optim import lbfgs
from ..utils._param_validation import Interval, StrOptions
from ..utils.extmath import squared_distances
from ..utils.validation import check_array, validate_data
from ._mds import classical_mds

__all__ = ["SStressMDS", "sstress"]


def sstress(D2: np.ndarray, Z: np.ndarray) -> tuple[float, np.ndarray]:
    """``S(Z) = sum_{i != j} (D2_ij - ||z_i - z_j||^2)^2`` and its gradient.

    Parameters
    ----------
    D2 : ndarray of shape (n, n)
        Squared dissimilarities (symmetric, zero diagonal).
    Z : ndarray of shape (n, k)
        Embedding.

    Returns
    -------
    value : float
    grad : ndarray of shape (n, k)

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.manifold import sstress
    >>> Z = np.array([[0.0], [1.0], [3.0]])
    >>> D2 = (Z - Z.T) ** 2
    >>> sstress(D2, Z)[0]
    0.0
    """
    sq = np.sum(Z * Z, axis=1)
    E = D2 - (sq[:, None] + sq[None, :] - 2.0 * Z @ Z.T)
    np.fill_diagonal(E, 0.0)
    value = float(np.sum(E * E))
    grad = -8.0 * (E.sum(axis=1)[:, None] * Z - E @ Z)
    return value, grad


class SStressMDS(BaseEstimator):
    """Embedding of dissimilarities by minimising the squared-distance stress (S-stress).

    Parameters
    ----------
    n_components : int, default=2
        Dimension ``k`` of the embedding.
    dissimilarity : {"euclidean", "precomputed"}, default="euclidean"
        Distances between the rows of ``X``, or ``X`` is the (n, n) dissimilarity matrix.
    max_iter : int, default=500
        L-BFGS iterations.
    tol : float, default=1e-6
        L-BFGS stops when the largest gradient entry is below ``tol * n * max(1, sqrt(S_0))``
        (dissimilarities in units of the largest one, ``S_0`` the starting stress); not
        reaching it within ``max_iter`` warns. Values under about 1e-7 are below what
        rounding lets the objective resolve.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components)
        The points ``z_i``.
    stress_ : float
        ``S`` at the embedding, for the dissimilarities divided by the largest one (a
        scale-free number: multiply by ``max(d)^4`` for the stress in the data's units).
    initial_stress_ : float
        The same at the classical-MDS start.
    n_iter_ : int
        L-BFGS iterations run.
    n_features_in_ : int
        Number of features (or samples, when precomputed) seen in ``fit``.

    See Also
    --------
    MDS : classical (Torgerson) scaling, the starting point.

    Notes
    -----
    Complexity: for ``N`` samples with ``D`` features and ``k`` components, the squared
    dissimilarities cost ``O(N^2 D)`` time (``O(N^2)`` for precomputed ones) and the
    classical-MDS start ``O(N^2)`` per Lanczos product or ``O(N^3)`` dense (see
    :class:`MDS`). Each evaluation of the stress and its gradient then costs ``O(N^2 k)``
    (the Gram matrix ``Z Z^T``, the residuals ``E`` and the product ``E Z``), with about one
    to a few evaluations per L-BFGS iteration, so ``O(T N^2 k)`` for ``T`` iterations.
    Memory: the ``N x N`` squared dissimilarities, a copy of them for the start, and a few
    ``N x N`` temporaries per evaluation (the Gram matrix, ``E``, ``E * E``), plus ``O(N k)``
    for the embedding and L-BFGS's 10 correction pairs. There is no out-of-sample
    ``transform``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.manifold import SStressMDS
    >>> D = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    >>> mds = SStressMDS(n_components=1, dissimilarity="precomputed").fit(D)
    >>> bool(mds.stress_ < 1e-12)                  # points on a line: an exact embedding
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "dissimilarity": [StrOptions({"euclidean", "precomputed"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        n_components: int = 2,
        *,
        dissimilarity: str = "euclidean",
        max_iter: int = 500,
        tol: float = 1e-6,
    ):
        self.n_components = n_components
        self.dissimilarity = dissimilarity
        self.max_iter = max_iter
        self.tol = tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.dissimilarity == "precomputed"
        return tags

    @_fit_context
    def fit(self, X, y=None):
        """Compute the embedding.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            Data, or dissimilarities when ``dissimilarity="precomputed"``.
        y : None
            Ignored.

        Returns
        -------
        self : SStressMDS
        """
        self.fit_transform(X)
        return self

    @_fit_context
    def fit_transform(self, X, y=None):
        """Compute and return the embedding.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            Data, or dissimilarities when ``dissimilarity="precomputed"``.
        y : None
            Ignored.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        X = validate_data(self, X, dtype=np.float64)
        n = X.shape[0]
        if n < 2:
            raise ValueError(f"MDS needs at least 2 samples; got n_samples = {n}.")
        k = int(self.n_components)
        if k > n:
            raise ValueError(f"n_components={k} must be an int in [1, n_samples={n}].")
        if self.dissimilarity == "euclidean":
            Xc = X - X.mean(axis=0)
            scale = float(np.max(np.abs(Xc)))
            D2 = squared_distances(Xc / scale) if scale > 0 else np.zeros((n, n))
        else:
            D = check_array(X, dtype=np.float64)
            if D.shape[0] != D.shape[1]:
                raise ValueError(f"precomputed dissimilarities must be square; got {D.shape}.")
            if np.any(D < 0):
                raise ValueError("dissimilarities must be non-negative.")
            scale = float(D.max())
            if not np.allclose(D, D.T, rtol=0, atol=1e-10 * max(scale, 1e-300)):
                raise ValueError("dissimilarity matrix is not symmetric.")
            if np.any(np.diag(D) != 0):
                raise ValueError("dissimilarity matrix must have a zero diagonal.")
            Du = 0.5 * (D + D.T) / scale if scale > 0 else np.zeros((n, n))
            D2 = Du * Du
        if scale == 0:  # every point the same: the embedding is the origin
            self.embedding_ = np.zeros((n, k))
            self.stress_ = self.initial_stress_ = 0.0
            self.n_iter_ = 0
            return self.embedding_
        Z0 = classical_mds(D2.copy(), k)[0]
        s0, _ = sstress(D2, Z0)
        self.initial_stress_ = float(s0)
        # Rounding floor of S for an exact embedding: each of the n^2 residuals is about
        # eps (in units of the largest dissimilarity).
        if s0 > (n * n * np.finfo(float).eps) ** 2:

            def fun(z):
                v, g = sstress(D2, z.reshape(n, k))
                return v, g.ravel()

            # The gradient's entries are sums of n terms of the residuals' size, about
            # sqrt(S) / n each: tol * n * sqrt(S) is tol relative to that. (Near a minimum the
            # decrease g^2 / (2 L) of S drowns in its rounding eps S once g is below about
            # sqrt(eps S L): tolerances under 1e-7 cannot be met.)
            gtol = float(self.tol) * n * max(1.0, np.sqrt(s0))
            res = lbfgs(fun, Z0.ravel(), max_iter=int(self.max_iter), tol=gtol)
            Z = res.x.reshape(n, k)
            s, _ = sstress(D2, Z)
            if s > s0:  # a descent method cannot end above its start; kept as a guard
                Z, s = Z0, s0
            self.n_iter_ = int(res.nit)
        else:
            Z, s, self.n_iter_ = Z0, s0, 0
        self.stress_ = float(s)
        self.embedding_ = Z * scale
        return self.embedding_
