"""Isomap: classical MDS of geodesic distances along a nearest-neighbour graph."""

from __future__ import annotations

from numbers import Integral
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components, shortest_path

from ..base import (
    BaseEstimator,
    ComponentNamesMixin,
    TransformerMixin,
    _fit_context,
    check_is_fitted,
)
from ..utils._param_validation import Interval, StrOptions
from ..utils._rowscale import InUnits, unit_of
from ..utils.extmath import squared_distances
from ..utils.graph import geodesic_distances, kneighbors
from ..utils.validation import validate_data
from ._mds import classical_mds

__all__ = ["Isomap"]


class Isomap(ComponentNamesMixin, TransformerMixin, BaseEstimator):
    """Isomap embedding (Tenenbaum, de Silva & Langford, 2000).

    Parameters
    ----------
    n_neighbors : int, default=5
        Neighbours per point in the graph (symmetrised: an edge when either point is among
        the other's nearest).
    n_components : int, default=2
    path_method : {"D", "FW", "auto"}, default="D"
        Shortest paths by Dijkstra (:func:`mathlearn.utils.graph.geodesic_distances`,
        compiled, the sources split over threads) or by ``scipy.sparse.csgraph``'s
        Floyd-Warshall or automatic choice.
    disconnected : {"connect", "raise"}, default="connect"
        What to do when the neighbour graph falls apart: ``"connect"`` joins every pair of
        components by an edge between their closest points (so geodesics stay finite, as
        scikit-learn does); ``"raise"`` raises a ``ValueError``.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components)
    dist_matrix_ : ndarray of shape (n_samples, n_samples)
        Geodesic (graph shortest-path) distances.
    eigenvalues_ : ndarray of shape (n_components,)
    n_connected_components_ : int
        Connected components of the neighbour graph before any joining.
    X_fit_ : ndarray of shape (n_samples, n_features)
    n_features_in_ : int

    See Also
    --------
    mathlearn.manifold.MDS
        Classical scaling of the geodesic distances.
    sklearn.manifold.Isomap
        scikit-learn's equivalent.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" §6.1 (slide 6:29): build the k-nearest-neighbour
    graph with Euclidean edge lengths (:func:`mathlearn.utils.graph.kneighbors`), replace distances
    by graph geodesics, then run classical MDS (kernel PCA of ``-0.5 H G^2 H``). A disconnected
    graph has infinite geodesics (the pitfall the notes name): by default the components are joined
    by their shortest inter-component edges, or an error asks for more neighbours. New
    points are embedded through their ``n_neighbors`` nearest training points,
    ``g(x, j) = min_i (||x - x_i|| + G_ij)``, and the kernel-PCA projection with the training
    centring.

    Complexity: the neighbour graph costs ``O(N log N)`` by the compiled kd-tree above 2 000
    points in at most 12 dimensions, otherwise ``O(N^2 D)`` in blocks of about ``2^16``
    distances; Dijkstra from every point (compiled, with a binary heap: ``O(N^2 k log N)``
    time at worst, the sources split over threads) and the ``N x N`` geodesic matrix; the
    double-centred matrix is formed in place of the squared geodesics (one more ``N x N``
    array) and its top eigenpairs are found by Lanczos, ``O(N^2)`` per product (dense
    ``O(N^3)`` only for small ``N``). Memory ``O(N^2)``: two ``N x N`` arrays.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.manifold import Isomap
    >>> t = np.linspace(0, 3 * np.pi, 60)
    >>> X = np.c_[t * np.cos(t), t * np.sin(t)]  # a spiral: its geodesic unrolls it
    >>> Isomap(n_neighbors=4, n_components=1).fit_transform(X).shape
    (60, 1)
    """

    _n_features_out_attr = "embedding_"
    _n_features_out_axis = 1

    _parameter_constraints: ClassVar[dict] = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "path_method": [StrOptions({"D", "FW", "auto"})],
        "disconnected": [StrOptions({"connect", "raise"})],
    }

    def __init__(
        self,
        n_neighbors: int = 5,
        *,
        n_components: int = 2,
        path_method: str = "D",
        disconnected: str = "connect",
    ):
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.path_method = path_method
        self.disconnected = disconnected

    @_fit_context
    def fit(self, X, y=None):
        """Compute the embedding of ``X``; returns self."""
        X = validate_data(self, X, dtype=np.float64)
        n = X.shape[0]
        if n < 2:
            raise ValueError(f"Isomap needs at least 2 samples; got n_samples = {n}.")
        k = int(self.n_components)
        if k > n:
            raise ValueError(f"n_components={k} must be an int in [1, n_samples={n}].")
        nn = int(self.n_neighbors)
        if nn >= n:
            raise ValueError(f"n_neighbors={nn} must be an int in [1, n_samples - 1 = {n - 1}].")
        # Scale equivariant: data of extreme magnitude are embedded in units of a power of two
        # (exact; 1.0 for ordinary data), geodesics and embedding mapped back and the
        # eigenvalues read in the data's units (InUnits); squared geodesics of 1e300 are not
        # floats. Distances are translation invariant: centring first keeps the digits of
        # data far from the origin, whatever route the distance helper takes.
        self._unit = unit = unit_of(X)
        Xu = X / unit if unit != 1.0 else X
        self._center = Xu.mean(axis=0)
        Xc = Xu - self._center
        # Each point's nn nearest as a directed graph: the shortest paths below follow an
        # edge either way (the shorter where both are stored), so symmetrising first would
        # only double the edges Dijkstra scans.
        dist, ind = kneighbors(Xc, nn)
        G = sp.csr_matrix((dist.ravel(), ind.ravel(), np.arange(0, n * nn + 1, nn)), (n, n))
        n_comp, labels = connected_components(G, directed=False)
        self.n_connected_components_ = int(n_comp)
        if n_comp > 1:
            if self.disconnected == "raise":
                raise ValueError(
                    f"the {nn}-nearest-neighbour graph has {n_comp} connected components, so "
                    "some geodesic distances are infinite; increase n_neighbors."
                )
            G = self._connect(G.tolil(), Xc, labels, n_comp).tocsr()
        if self.path_method == "D":
            geodesics = geodesic_distances(G)
        else:
            geodesics = shortest_path(G, method=self.path_method, directed=False)
        self.dist_matrix_ = geodesics
        emb, w, V, col_means, grand = classical_mds(geodesics**2, k, overwrite=True)
        self.embedding_ = emb
        self.eigenvalues_ = w
        with np.errstate(divide="ignore"):
            self._proj = np.where(w > 0, V / np.sqrt(np.where(w > 0, w, 1.0)), 0.0)
        self._col_means, self._grand_mean = col_means, grand
        self.X_fit_ = X.copy()  # later changes to the caller's array must not leak in
        return self

    # Fitted in units of a power of two (1.0 for ordinary data); see fit.
    _unit = 1.0
    dist_matrix_ = InUnits(1)
    embedding_ = InUnits(1)
    eigenvalues_ = InUnits(2)

    @staticmethod
    def _connect(G, X, labels, n_comp):
        """Join each pair of components by the edge between their closest points."""
        members = [np.flatnonzero(labels == c) for c in range(n_comp)]
        for a in range(n_comp):
            for b in range(a + 1, n_comp):
                D = squared_distances(X[members[a]], X[members[b]])
                i, j = np.unravel_index(np.argmin(D), D.shape)
                u, v = members[a][i], members[b][j]
                # A tiny positive length keeps duplicate points connected in a sparse graph.
                dist = max(float(np.sqrt(D[i, j])), np.finfo(float).tiny)
                G[u, v] = G[v, u] = dist
        return G

    @_fit_context
    def fit_transform(self, X, y=None):
        """Compute and return the embedding, shape (n_samples, n_components)."""
        return self.fit(X).embedding_

    def transform(self, X):
        """Embed new points through their nearest training points' geodesics.

        With ``x_0`` the nearest training point, ``d_0 = ||x - x_0||`` and ``delta_t =
        ||x - x_t|| - d_0 = (x_0 - x_t)^T (2 x - x_t - x_0) / (||x - x_t|| + d_0)`` (a
        difference of squares without cancellation), the geodesics are
        ``g_j = d_0 + h_j`` with ``h_j = min_t (delta_t + G_tj)``, and the row-centred
        ``-g^2 / 2`` is ``-d_0 (h - mean h) - (h^2 - mean h^2) / 2``: the ``d_0^2`` that
        would cancel for points far from the training data never appears.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        nn = int(self.n_neighbors)
        unit = self._unit
        F = (self.X_fit_ / unit if unit != 1.0 else self.X_fit_) - self._center
        with np.errstate(over="ignore", invalid="ignore"):
            Xc = (X / unit if unit != 1.0 else X) - self._center
            D2 = squared_distances(Xc, F)
        bad = ~np.all(np.isfinite(D2), axis=1)
        if bad.any():
            raise ValueError(
                f"row {np.flatnonzero(bad)[0]} of X is too far from the training data: its "
                "squared distances to them exceed the float64 range."
            )
        geodesics = type(self).dist_matrix_.fitted(self)
        rows = np.arange(X.shape[0])[:, None]
        ind = np.argpartition(D2, nn - 1, axis=1)[:, :nn]
        ind = ind[rows, np.argsort(D2[rows, ind], axis=1)]  # column 0: the nearest
        d_nb = np.sqrt(D2[rows, ind])  # (N, nn)
        x0 = F[ind[:, 0]]  # (N, D)
        Fn = F[ind]  # (N, nn, D)
        num = np.einsum(
            "ntd,ntd->nt", x0[:, None, :] - Fn, 2.0 * Xc[:, None, :] - Fn - x0[:, None]
        )
        den = d_nb + d_nb[:, :1]
        delta = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
        H = np.full((X.shape[0], F.shape[0]), np.inf)
        for t in range(nn):
            np.minimum(H, delta[:, t : t + 1] + geodesics[ind[:, t]], out=H)
        K = -d_nb[:, :1] * (H - H.mean(axis=1, keepdims=True))
        H2 = H**2
        K -= 0.5 * (H2 - H2.mean(axis=1, keepdims=True))
        K -= self._col_means[None, :]
        K += self._grand_mean
        emb = K @ self._proj
        return emb * unit if unit != 1.0 else emb
