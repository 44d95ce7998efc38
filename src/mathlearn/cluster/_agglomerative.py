"""Agglomerative hierarchical clustering.

Stuttgart "Introduction to Machine Learning" slides 6:43-6:44.

Ward, complete and average linkage use the nearest-neighbour chain algorithm with the
Lance-Williams updates on the condensed distance matrix (``O(N^2)`` time and memory); single
linkage uses Prim's minimum spanning tree, computing distances on the fly (``O(N)`` memory).
Both give the merges in some order; they are then sorted by height and relabelled with a
union-find, which yields exactly the dendrogram ``scipy.cluster.hierarchy.linkage`` returns.
"""

from __future__ import annotations

import ctypes
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from .. import _ext
from ..base import BaseEstimator, ClusterMixin, _fit_context
from ..utils._param_validation import Interval, StrOptions, validate_params
from ..utils.validation import check_array, validate_data

__all__ = ["AgglomerativeClustering", "linkage_tree"]

_LINKAGES = {"single": 0, "complete": 1, "average": 2, "ward": 3}


# The dendrogram is built by the compiled helper mathlearn._ext._linkage (condensed
# distances, O(N^2) memory in one vector). Where it was not built: from this many samples on
# by the numba kernels of ._agglomerative_kernels (the same computations), below by the NumPy
# routes here on the square distance matrix, which need no compilation.
_KERNEL_MIN_SAMPLES = 2000


def _compiled_linkage():
    """The C helper ``_ext._linkage`` with its signatures set, or None where not built."""
    lib = _ext.load("_linkage")
    if lib is None:
        return None
    if lib.linkage_nn_chain.argtypes is None:
        i64, ptr = ctypes.c_int64, ctypes.c_void_p
        lib.linkage_condensed_euclidean.restype = None
        lib.linkage_condensed_euclidean.argtypes = [i64, i64, ptr, ptr]
        lib.linkage_nn_chain.restype = None
        lib.linkage_nn_chain.argtypes = [i64, ptr, ctypes.c_int, ptr, ptr, ptr]
        lib.linkage_mst_single.restype = None
        lib.linkage_mst_single.argtypes = [i64, i64, ptr, ptr, ptr, ptr]
        lib.linkage_relabel.restype = None
        lib.linkage_relabel.argtypes = [i64, ptr, ptr, ptr]
    return lib


def _linkage_compiled(lib, X, method):
    """The sorted, relabelled merges by the C helper (``X`` row-ordered float64)."""
    n, d = X.shape
    Z = np.zeros((n - 1, 4))
    if method == 0:
        best, merged = np.empty(n), np.empty(n, dtype=np.uint8)
        lib.linkage_mst_single(n, d, X.ctypes.data, Z.ctypes.data, best.ctypes.data,
                               merged.ctypes.data)  # fmt: skip
    else:
        D = np.empty(n * (n - 1) // 2)
        lib.linkage_condensed_euclidean(n, d, X.ctypes.data, D.ctypes.data)
        size, chain = np.empty(n), np.empty(n, dtype=np.int64)
        lib.linkage_nn_chain(n, D.ctypes.data, method, Z.ctypes.data, size.ctypes.data,
                             chain.ctypes.data)  # fmt: skip
        del D
    Z = Z[np.argsort(Z[:, 2], kind="mergesort")]
    parent, sizes = np.empty(2 * n - 1, dtype=np.int64), np.empty(2 * n - 1)
    lib.linkage_relabel(n, Z.ctypes.data, parent.ctypes.data, sizes.ctypes.data)
    return Z


def _square_euclidean(X):
    """Euclidean distances by differences, the squares summed feature by feature in order
    (the same rounding as the compiled kernel); ``inf`` on the diagonal."""
    n, d = X.shape
    D2 = np.zeros((n, n))
    for k in range(d):
        diff = X[:, k, None] - X[None, :, k]
        diff *= diff
        D2 += diff
    D = np.sqrt(D2, out=D2)
    np.fill_diagonal(D, np.inf)
    return D


def _nn_chain_numpy(D, n, method):
    """Nearest-neighbour chain on the square distances ``D`` (overwritten; ``inf`` marks the
    diagonal and the clusters merged away). The same merges, in the same order, as the
    compiled kernel: ties go to the previous chain element, then to the lowest index."""
    Z = np.empty((n - 1, 4))
    size = np.ones(n)
    chain = []
    for k in range(n - 1):
        if not chain:
            chain.append(int(np.flatnonzero(size > 0)[0]))
        while True:
            x = chain[-1]
            if len(chain) > 1:
                y = chain[-2]
                current = D[x, y]
            else:
                y = -1
                current = np.inf
            i = int(np.argmin(D[x]))
            if D[x, i] < current:
                current = D[x, i]
                y = i
            if len(chain) > 1 and y == chain[-2]:
                break
            chain.append(y)
        del chain[-2:]
        if x > y:
            x, y = y, x
        nx, ny = size[x], size[y]
        Z[k] = x, y, current, nx + ny
        size[x] = 0
        size[y] = nx + ny
        d_xi, d_yi = D[x], D[y]
        if method == 1:
            new = np.maximum(d_xi, d_yi)
        elif method == 2:
            new = (nx * d_xi + ny * d_yi) / (nx + ny)
        else:
            # Lance-Williams for Ward on Euclidean distances (not their squares).
            ni = size
            t = 1.0 / (nx + ny + ni)
            new = np.sqrt(
                (ni + nx) * t * d_xi * d_xi
                + (ni + ny) * t * d_yi * d_yi
                - ni * t * current * current
            )
        new[size == 0] = np.inf
        new[y] = np.inf
        D[y] = new
        D[:, y] = new
        D[x] = np.inf
        D[:, x] = np.inf
    return Z


def _mst_single_numpy(X):
    """Prim's algorithm on the square distances; the MST's edges are the single-linkage
    merges (ties to the lowest index, as in the compiled kernel)."""
    n = X.shape[0]
    D = _square_euclidean(X)
    Z = np.empty((n - 1, 4))
    merged = np.zeros(n, dtype=bool)
    best = np.full(n, np.inf)
    y = 0
    for k in range(n - 1):
        x = y
        merged[x] = True
        np.minimum(best, D[x], out=best)
        cand = np.where(merged, np.inf, best)
        y = int(np.argmin(cand))
        Z[k, 0] = x
        Z[k, 1] = y
        Z[k, 2] = cand[y]
    return Z


def _relabel_numpy(Z, n):
    """Rename sorted merges with cluster ids ``n, n+1, ...`` (union-find), smaller id first."""
    parent = list(range(2 * n - 1))
    size = [1.0] * (2 * n - 1)
    for i in range(n - 1):
        roots = []
        for c in range(2):
            a = int(Z[i, c])
            while parent[a] != a:
                a = parent[a]
            b = int(Z[i, c])
            while parent[b] != a:  # path compression
                parent[b], b = a, parent[b]
            roots.append(a)
        xr, yr = min(roots), max(roots)
        nxt = n + i
        Z[i, 0] = xr
        Z[i, 1] = yr
        parent[xr] = parent[yr] = nxt
        size[nxt] = size[xr] + size[yr]
        Z[i, 3] = size[nxt]


@validate_params({"X": ["array-like"], "linkage": [StrOptions(set(_LINKAGES))]})
def linkage_tree(X, linkage: str = "ward") -> np.ndarray:
    """The full dendrogram of ``X`` in SciPy's linkage-matrix format.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    linkage : {"ward", "complete", "average", "single"}

    Returns
    -------
    Z : ndarray of shape (n_samples - 1, 4)
        Row ``i`` merges clusters ``Z[i, 0] < Z[i, 1]`` (ids below ``n_samples`` are points,
        id ``n_samples + i`` is the cluster formed at row ``i``) at height ``Z[i, 2]``, giving
        a cluster of ``Z[i, 3]`` points. Heights are non-decreasing.

    Notes
    -----
    Every linkage height is a Euclidean distance (or a combination of them that scales with
    the data), so the tree of ``X / s`` has the heights of ``X`` divided by ``s``. Data of
    extreme magnitude (below ~1e-120 or above ~1e120) are divided by a power of two first
    (exact in floating point), so that squared distances neither overflow nor underflow.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.cluster import linkage_tree
    >>> linkage_tree(np.array([[0.0], [1.0], [5.0]]), "single").tolist()
    [[0.0, 1.0, 1.0, 2.0], [2.0, 3.0, 4.0, 3.0]]
    """
    X = np.ascontiguousarray(check_array(X, dtype=np.float64))
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"a dendrogram needs at least 2 samples; got {n}.")
    scale = _extreme_scale(X)
    if scale != 1.0:
        X = X / scale
    lib = _compiled_linkage()
    if lib is not None:
        Z = _linkage_compiled(lib, X, _LINKAGES[linkage])
    elif n < _KERNEL_MIN_SAMPLES:
        if linkage == "single":
            Z = _mst_single_numpy(X)
        else:
            Z = _nn_chain_numpy(_square_euclidean(X), n, _LINKAGES[linkage])
        Z = Z[np.argsort(Z[:, 2], kind="mergesort")]
        _relabel_numpy(Z, n)
    else:
        from ._agglomerative_kernels import (
            _condensed_euclidean,
            _mst_single,
            _nn_chain,
            _relabel,
        )

        if linkage == "single":
            Z = _mst_single(X)
        else:
            Z = _nn_chain(_condensed_euclidean(X), n, _LINKAGES[linkage])
        Z = Z[np.argsort(Z[:, 2], kind="mergesort")]
        _relabel(Z, n)
    if scale != 1.0:
        Z[:, 2] *= scale
    return Z


def _extreme_scale(X) -> float:
    """A power of two to divide ``X`` by when its magnitude is extreme, else 1.

    Squared differences overflow beyond ~1e154 and underflow below ~1e-154; a power-of-two
    division is exact, and linkage heights scale with the data.
    """
    # max |x| by two reductions: no |X| temporary (the size of the data)
    m = max(float(X.max()), -float(X.min())) if X.size else 0.0
    if m == 0.0 or 2.0**-400 <= m <= 2.0**400:
        return 1.0
    return float(np.ldexp(1.0, int(np.frexp(m)[1]) - 1))


def _cut(children, n_leaves, n_clusters):
    """Labels after undoing the last ``n_clusters - 1`` merges (0..n_clusters-1 by first
    appearance in the data)."""
    n_merges = n_leaves - n_clusters
    # node ids in 32 bits where they fit (half the memory of the pointer jumping)
    dtype = np.int32 if 2 * n_leaves < 2**31 else np.intp
    top = np.arange(2 * n_leaves - 1, dtype=dtype)
    # each node's parent (a node merged at most once; the ids of new clusters increase)
    ids = np.arange(n_leaves, n_leaves + n_merges, dtype=dtype)
    top[children[:n_merges, 0]] = ids
    top[children[:n_merges, 1]] = ids
    del ids
    # Pointer jumping: each leaf reaches the root of its subtree in O(log N) rounds, in two
    # buffers used in turn.
    nxt = np.empty_like(top)
    while True:
        np.take(top, top, out=nxt)
        if np.array_equal(nxt, top):
            break
        top, nxt = nxt, top
    root = top[:n_leaves].copy()
    del top, nxt
    _, labels = np.unique(root, return_inverse=True)
    del root
    # Relabel by order of first appearance so that labels do not depend on internal ids.
    first = np.full(labels.max() + 1, n_leaves)
    np.minimum.at(first, labels, np.arange(n_leaves))
    order = np.argsort(first, kind="stable")
    relabel = np.empty_like(order)
    relabel[order] = np.arange(order.size)
    return relabel[labels]


class AgglomerativeClustering(ClusterMixin, BaseEstimator):
    """Bottom-up hierarchical clustering with single, complete, average or Ward linkage.

    Starting from singletons, repeatedly merges the two clusters with the smallest linkage
    dissimilarity; the whole dendrogram is kept, then cut into ``n_clusters`` clusters or at
    height ``distance_threshold``.

    Parameters
    ----------
    n_clusters : int or None, default=2
        Number of clusters of the cut; ``None`` when ``distance_threshold`` is given.
    linkage : {"ward", "complete", "average", "single"}, default="ward"
        Dissimilarity between groups ``G`` and ``H`` of Euclidean distances ``d``: single
        ``min d(x_i, x_j)``, complete ``max``, average ``(1/|G||H|) sum sum d``, Ward
        ``sqrt(2 |G||H| / (|G|+|H|)) ||mean_G - mean_H||`` (the increase of the within-cluster
        sum of squares, on the distance scale SciPy uses).
    distance_threshold : float or None, default=None
        Cut the dendrogram at this height: merges at heights ``>= distance_threshold`` are
        undone. Requires ``n_clusters=None``.

    Attributes
    ----------
    children_ : ndarray of shape (n_samples - 1, 2)
        Merge ``i`` joins ``children_[i, 0] < children_[i, 1]``; ids below ``n_samples`` are
        points, id ``n_samples + i`` is the cluster made by merge ``i``.
    distances_ : ndarray of shape (n_samples - 1,)
        Height of each merge (non-decreasing).
    counts_ : ndarray of shape (n_samples - 1,)
        Size of the cluster each merge forms.
    linkage_matrix_ : ndarray of shape (n_samples - 1, 4)
        The same dendrogram in SciPy's format (for ``scipy.cluster.hierarchy.dendrogram``).
    n_clusters_ : int
    labels_ : ndarray of shape (n_samples,)
    n_leaves_ : int
    n_features_in_ : int

    See Also
    --------
    mathlearn.cluster.KMeans
        Flat clustering around K centres.
    sklearn.cluster.AgglomerativeClustering
        scikit-learn's equivalent.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" §6.2 (slides 6:43-6:44): single, complete and
    group-average linkage; Ward's criterion is the standard fourth. Complete, average and Ward
    satisfy the reducibility property, so the nearest-neighbour chain algorithm finds the
    same merges as the naive ``O(N^3)`` procedure in ``O(N^2)``; after a merge the distances
    to the new cluster follow the Lance-Williams formulas (Ward:
    ``d(k, i+j)^2 = ((n_i+n_k) d_ki^2 + (n_j+n_k) d_kj^2 - n_k d_ij^2) / (n_i+n_j+n_k)``).
    Single linkage is read off the minimum spanning tree. The merges equal those of
    ``scipy.cluster.hierarchy.linkage`` with the same method.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.cluster import AgglomerativeClustering
    >>> X = np.array([[0.0], [1.0], [5.0], [7.0]])
    >>> agg = AgglomerativeClustering(n_clusters=2, linkage="single").fit(X)
    >>> agg.labels_.tolist(), agg.children_.tolist(), agg.distances_.tolist()
    ([0, 0, 1, 1], [[0, 1], [2, 3], [4, 5]], [1.0, 2.0, 4.0])
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_clusters": [Interval(Integral, 1, None, closed="left"), None],
        "linkage": [StrOptions(set(_LINKAGES))],
        "distance_threshold": [Interval(Real, 0, None, closed="left"), None],
    }

    def __init__(
        self,
        n_clusters: int | None = 2,
        *,
        linkage: str = "ward",
        distance_threshold: float | None = None,
    ):
        self.n_clusters = n_clusters
        self.linkage = linkage
        self.distance_threshold = distance_threshold

    @_fit_context
    def fit(self, X, y=None):
        """Build the dendrogram of ``X`` and cut it.

        Returns
        -------
        self : AgglomerativeClustering
        """
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        n = X.shape[0]
        if (self.n_clusters is None) == (self.distance_threshold is None):
            raise ValueError("give exactly one of n_clusters and distance_threshold.")
        if self.n_clusters is not None and self.n_clusters > n:
            raise ValueError(f"n_clusters={self.n_clusters} exceeds n_samples={n}.")
        Z = linkage_tree(X, self.linkage)
        self.linkage_matrix_ = Z
        self.children_ = Z[:, :2].astype(np.intp)
        self.distances_ = Z[:, 2].copy()
        self.counts_ = Z[:, 3].astype(np.intp)
        self.n_leaves_ = n
        if self.distance_threshold is not None:
            self.n_clusters_ = (
                int(np.count_nonzero(self.distances_ >= self.distance_threshold)) + 1
            )
        else:
            self.n_clusters_ = int(self.n_clusters)
        self.labels_ = _cut(self.children_, n, self.n_clusters_)
        return self
