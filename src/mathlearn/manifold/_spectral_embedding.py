"""Laplacian eigenmaps: the bottom eigenvectors of a graph Laplacian as coordinates."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from ..base import BaseEstimator, _fit_context
from ..cluster._spectral import bottom_eigenpairs, dense_route, knn_rows
from ..utils._param_validation import Interval, StrOptions
from ..utils.graph import knn_graph, laplacian, rbf_affinity
from ..utils.validation import validate_data

__all__ = ["SpectralEmbedding"]

_LAPLACIANS = ("unnormalized", "symmetric", "random_walk")


class SpectralEmbedding(BaseEstimator):
    """Spectral embedding (Laplacian eigenmaps, Belkin & Niyogi 2003).

    Parameters
    ----------
    n_components : int, default=2
    affinity : {"rbf", "nearest_neighbors", "precomputed"}, default="rbf"
        ``"rbf"``: fully connected ``W_ij = exp(-gamma ||x_i - x_j||^2)``;
        ``"nearest_neighbors"``: the symmetric kNN connectivity graph; ``"precomputed"``:
        ``X`` is the affinity matrix.
    gamma : float or None, default=None
        RBF width; ``None``: ``1 / n_features``.
    n_neighbors : int or None, default=None
        kNN graph size; ``None``: ``max(n_samples // 10, 1)``.
    laplacian : {"random_walk", "symmetric", "unnormalized"}, default="random_walk"
        ``"unnormalized"``: eigenvectors of ``L = D - W`` (RatioCut relaxation);
        ``"symmetric"``: eigenvectors ``u`` of ``L_sym = I - D^{-1/2} W D^{-1/2}``;
        ``"random_walk"``: ``D^{-1/2} u``, the eigenvectors of ``L_rw = I - D^{-1} W``
        (the generalised problem ``L v = lambda D v`` of Laplacian eigenmaps; NCut).
    drop_first : bool, default=True
        Drop the bottom eigenvector (constant for a connected graph).

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components)
        Signs fixed so that each column's largest-magnitude entry is positive.
    eigenvalues_ : ndarray of shape (n_components,)
        The Laplacian eigenvalues of the kept eigenvectors (increasing).
    affinity_matrix_ : ndarray or sparse matrix of shape (n_samples, n_samples)
    n_features_in_ : int

    See Also
    --------
    mathlearn.cluster.SpectralClustering
        k-means on this embedding.
    sklearn.manifold.SpectralEmbedding
        scikit-learn's equivalent.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" ch. 4 and
    Stuttgart "Introduction to Machine Learning" §6.1 (slides 6:22-6:25): minimising
    ``sum_ij W_ij ||z_i - z_j||^2 = 2 tr(Z^T L Z)`` under an orthogonality constraint gives
    the bottom eigenvectors of the Laplacian; ``f^T L f = 0.5 sum w_ij (f_i - f_j)^2`` shows
    ``L`` is PSD with the constant vector in its kernel, hence ``drop_first``. The
    random-walk eigenvectors are computed through the symmetric ``L_sym`` (stable, real
    spectrum) and mapped back with ``D^{-1/2}`` (for numerical stability). The
    graph helpers are :mod:`mathlearn.utils.graph`, shared with spectral clustering.

    Complexity: the RBF affinity ``O(N^2 D)`` time and ``O(N^2)`` memory; the k-NN graph
    ``O(N log N)`` time by the compiled kd-tree above 2 000 points in at most 12 dimensions,
    otherwise ``O(N^2 D)`` (BLAS distances in blocks of about ``2^16`` entries), and
    ``O(N n_neighbors)`` memory (the default ``n_neighbors = N / 10`` makes it ``O(N^2 / 10)``).
    Above 500
    points the bottom ``n_components + 1`` eigenpairs come from shift-invert Lanczos on the
    Laplacian as stored (dense LU ``O(N^3 / 3)``, or the sparse LU of the k-NN Laplacian);
    below, from LAPACK's dense ``eigh``. The two agree to the eigensolver tolerance.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.manifold import SpectralEmbedding
    >>> X = np.r_[np.zeros((5, 2)), np.ones((5, 2))] + 0.01 * np.arange(10)[:, None]
    >>> SpectralEmbedding(n_components=1, gamma=1.0).fit_transform(X).shape
    (10, 1)
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "affinity": [StrOptions({"rbf", "nearest_neighbors", "precomputed"})],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "laplacian": [StrOptions(set(_LAPLACIANS))],
        "drop_first": ["boolean"],
    }

    def __init__(
        self,
        n_components: int = 2,
        *,
        affinity: str = "rbf",
        gamma: float | None = None,
        n_neighbors: int | None = None,
        laplacian: str = "random_walk",
        drop_first: bool = True,
    ):
        self.n_components = n_components
        self.affinity = affinity
        self.gamma = gamma
        self.n_neighbors = n_neighbors
        self.laplacian = laplacian
        self.drop_first = drop_first

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.affinity == "precomputed"
        return tags

    def _affinity(self, X):
        n = X.shape[0]
        if self.affinity == "rbf":
            gamma = 1.0 / X.shape[1] if self.gamma is None else float(self.gamma)
            return rbf_affinity(X, gamma)
        if self.affinity == "nearest_neighbors":
            nn = max(n // 10, 1) if self.n_neighbors is None else int(self.n_neighbors)
            if nn >= n:
                raise ValueError(f"n_neighbors={nn} must be an int in [1, {n - 1}].")
            rows = (
                knn_rows(n) if dense_route(n, self.n_components + int(self.drop_first)) else None
            )
            return knn_graph(X, nn, mode="connectivity", max_chunk_rows=rows)
        # "precomputed"
        if X.shape[0] != X.shape[1]:
            raise ValueError(f"precomputed affinity must be square; got {X.shape}.")
        if not np.allclose(X, X.T):
            raise ValueError("precomputed affinity matrix is not symmetric.")
        if np.any(X < 0):
            raise ValueError("precomputed affinity matrix has negative entries.")
        W = np.array(X, dtype=float)
        np.fill_diagonal(W, 0.0)  # self-loops do not enter a Laplacian
        return W

    @_fit_context
    def fit(self, X, y=None):
        """Compute the embedding of ``X``; returns self."""
        self.fit_transform(X)
        return self

    @_fit_context
    def fit_transform(self, X, y=None):
        """Compute and return the embedding, shape (n_samples, n_components)."""
        X = validate_data(self, X, dtype=np.float64)
        n = X.shape[0]
        if n < 2:
            raise ValueError(f"SpectralEmbedding needs at least 2 samples; got n_samples = {n}.")
        k = int(self.n_components)
        if k > n - int(bool(self.drop_first)):
            raise ValueError(
                f"n_components={k} must be an int in [1, n_samples - drop_first = "
                f"{n - int(bool(self.drop_first))}]."
            )
        W = self._affinity(X)
        self.affinity_matrix_ = W
        kind = "unnormalized" if self.laplacian == "unnormalized" else "symmetric"
        first = int(bool(self.drop_first))
        m = k + first
        try:
            # dense (and in LAPACK's order) where the dense eigensolver will take it
            L, deg = laplacian(W, kind, dense=dense_route(n, m))
        except ValueError as err:
            if "isolated" not in str(err):
                raise
            raise ValueError(
                f"{err} Use a smaller gamma (a wider RBF) or more n_neighbors, or "
                "laplacian='unnormalized'."
            ) from None
        # Shift-invert Lanczos above 500 points for few vectors, dense LAPACK otherwise.
        w, V = bottom_eigenpairs(L, m, np.random.default_rng(0), laplacian=True, overwrite=True)
        del L
        w, V = w[first:], V[:, first:]
        if self.laplacian == "random_walk":
            V = V / np.sqrt(deg)[:, None]
        idx = np.argmax(np.abs(V), axis=0)
        signs = np.sign(V[idx, np.arange(k)])
        signs[signs == 0] = 1.0
        self.embedding_ = V * signs
        self.eigenvalues_ = w
        return self.embedding_
