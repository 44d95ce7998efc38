"""Similarity graphs and graph Laplacians, shared by spectral embedding and clustering, and
the geodesic (shortest-path) distances of a neighbour graph, which Isomap embeds.

Oxford "Advanced Topics in Statistical Machine Learning" ch. 4 and Stuttgart
"Introduction to Machine Learning" §6.1: given a weighted adjacency ``W`` with degrees ``d_i =
sum_j W_ij`` and ``D = diag(d)``,

- unnormalised Laplacian ``L = D - W`` (RatioCut),
- symmetric normalised ``L_sym = I - D^{-1/2} W D^{-1/2}`` (NCut via the symmetric problem),
- random-walk ``L_rw = I - D^{-1} W`` (NCut; its eigenvectors are ``D^{-1/2}`` times those
  of ``L_sym``).

Neighbour search is brute force through ``squared_distances`` (BLAS), which suits the data
sizes these methods are used on.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike
from scipy.linalg import blas

from ._threads import blas_threads, matmul_beside_scipy, run_parts
from .extmath import (
    _GER_MAX_ENTRIES,
    _RECOMPUTE,
    _expand,
    _recompute_near,
    _scaled_points,
    small_ufunc_buffers,
)

__all__ = [
    "cut",
    "epsilon_graph",
    "geodesic_distances",
    "kneighbors",
    "knn_graph",
    "laplacian",
    "ratio_cut",
    "rbf_affinity",
]


def rbf_affinity(X, gamma: float) -> np.ndarray:
    """Fully connected Gaussian similarity ``W_ij = exp(-gamma ||x_i - x_j||^2)``, 0 diagonal.

    The Gram matrix of :class:`mathlearn.kernels.RBF` with ``length_scale = 1/sqrt(2 gamma)``.

    Parameters
    ----------
    X : array-like of shape (N, D)
        The points.
    gamma : float
        Inverse width, ``gamma > 0``.

    Returns
    -------
    W : ndarray of shape (N, N)
        Symmetric affinities with a zero diagonal.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.graph import rbf_affinity
    >>> rbf_affinity(np.array([[0.0], [1.0]]), gamma=1.0)
    array([[0.        , 0.36787944],
           [0.36787944, 0.        ]])
    """
    from ..kernels import get_kernel  # the kernels import utils: import on use

    W = get_kernel("rbf", gamma=gamma)(X)
    np.fill_diagonal(W, 0.0)
    return W


# In at most _TREE_MAX_D dimensions the neighbours come from the compiled kd-tree search
# (about O(N k log N) in low dimension) instead of the O(N^2 D) exhaustive one where
# _use_tree says it is faster: from about max(k, 10) 2^(5 + 0.3 D) points, the crossover
# measured for Gaussian data (10 neighbours: ~600 points in 3 dimensions, ~1 700 in 8;
# 100 neighbours in 3 dimensions: ~6 000, where the old fixed threshold of 2 000 points made
# a 500-neighbour search at 5 000 points three times slower than the exhaustive one).
_TREE_MAX_D = 12


def _use_tree(n: int, d: int, k: int) -> bool:
    return d <= _TREE_MAX_D and n >= max(k, 10) * 2.0 ** (5.0 + 0.3 * d)


def _kneighbors_tree(X: np.ndarray, n_neighbors: int):
    """:func:`kneighbors` by :class:`mathlearn.neighbors.KDTree`'s compiled search, or None
    where that search is not built."""
    from ..neighbors import _kd_tree  # neighbors imports utils: import on use

    if _kd_tree._kdtree_lib() is None:
        return None
    n = X.shape[0]
    dist, ind = _kd_tree.KDTree(X).query(X, k=n_neighbors + 1)
    # Drop each point itself; when more than k + 1 points coincide with it, it can be
    # missing from its own list (ties go to smaller indices): then drop the last entry.
    is_self = ind == np.arange(n)[:, None]
    is_self[~is_self.any(axis=1), -1] = True
    keep = ~is_self
    return dist[keep].reshape(n, n_neighbors), ind[keep].reshape(n, n_neighbors)


def _expand_block(Xb, Y, xb, yn, D):
    """:func:`mathlearn.utils.extmath._expand` of the rows ``Xb`` against ``Y`` into the
    C-ordered block ``D``, the same operations in the same order: ``-2 x^T y`` by one BLAS
    product, plus ``||x||^2`` then ``||y||^2``, clipped at 0. On small blocks the two sums
    are ``dger`` updates of ``D^T`` (``d_ij + xb_i 1``, then ``+ 1 yn_j``: exact products,
    one rounding each, as NumPy's sums) rather than broadcast sums."""
    if D.size > _GER_MAX_ENTRIES or not D.flags.c_contiguous:
        _expand(Xb, Y, xb, yn, out=D)
        return
    # The product from SciPy's BLAS too where BLAS runs threads: a threaded call of NumPy's
    # pool between two of SciPy's stalls on the other pool's spinning worker (see
    # utils._threads.scipy_matmul).
    mm = matmul_beside_scipy()
    if Xb.shape[1] < Y.shape[0]:
        mm(Xb * -2.0, Y.T, out=D)
    else:
        mm(Xb, Y.T, out=D)
        D *= -2.0
    Dt = D.T  # Fortran-ordered: BLAS updates it in place
    blas.dger(1.0, np.ones(D.shape[1]), xb, a=Dt, overwrite_a=True)
    blas.dger(1.0, yn, np.ones(D.shape[0]), a=Dt, overwrite_a=True)
    np.maximum(D, 0.0, out=D)


def kneighbors(
    X: ArrayLike,
    n_neighbors: int,
    *,
    chunk_size: int | None = None,
    max_chunk_rows: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_neighbors`` nearest other points of each row of ``X``.

    In at most 12 dimensions, from about ``max(k, 10) 2^(5 + 0.3 D)`` points on (600 in 3
    dimensions for 10 neighbours) and with ``chunk_size=None``, the neighbours come from
    :class:`mathlearn.neighbors.KDTree`'s compiled search (ties by index, exact
    distances from coordinate differences); otherwise by exhaustive search, with distances
    from :func:`mathlearn.utils.extmath.squared_distances`' scaled and centred computation
    and each row's nearest picked by the kd-tree helper's compiled selection (one pass per
    row, ties by index) where ``n_neighbors`` is small against ``N`` (up to about 40 of
    1 000, 90 of 3 000), else by a partial sort.
    Either way data far from the origin or near ``1e+-300`` keep their neighbours and
    distances.

    Parameters
    ----------
    X : array-like of shape (N, D)
        The points (finite).
    n_neighbors : int
        Neighbours per point, in ``[1, N - 1]``; a point is not its own neighbour.
    chunk_size : int or None, default=None
        Rows processed at once (memory ``chunk_size x N``); ``None``: about ``2^15 / N``
        (at least 16), so a block of distances (and the partial sort's indices) stays near
        256 KB and the peak memory of the search is about a MB. Time ``O(N^2 D)`` for the
        distances and ``O(N^2)`` for the selection.
    max_chunk_rows : int or None, default=None
        With ``chunk_size=None``, at most this many rows at once (but at least 16): for a
        caller that next holds an ``N x N`` array (a dense eigensolver's Laplacian), which
        small blocks leave room for, at a few more passes of the loop.

    Returns
    -------
    distances : ndarray of shape (N, n_neighbors)
        Euclidean distances, sorted increasingly.
    indices : ndarray of shape (N, n_neighbors)

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.graph import kneighbors
    >>> dist, ind = kneighbors(np.array([[0.0], [1.0], [3.0]]), 1)
    >>> dist.ravel(), ind.ravel()
    (array([1., 1., 2.]), array([1, 0, 1]))
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    if not 1 <= n_neighbors < n:
        raise ValueError(
            f"n_neighbors must be in [1, {n - 1}] for {n} samples; got {n_neighbors}."
        )
    if chunk_size is None and _use_tree(n, X.shape[1], n_neighbors):
        tree_result = _kneighbors_tree(X, n_neighbors)
        if tree_result is not None:
            return tree_result
    if chunk_size is None:
        chunk_size = 2**15 // max(n, 1)
        if max_chunk_rows is not None:
            chunk_size = min(chunk_size, max_chunk_rows)
        chunk_size = max(16, chunk_size)
    dist = np.empty((n, n_neighbors))
    ind = np.empty((n, n_neighbors), dtype=np.intp)
    if not np.isfinite(X).all():
        raise ValueError("kneighbors: X contains NaN or infinity.")
    # Scaled and centred once (x_i - x_j = c (xs_i - xs_j), entries of order one): the
    # distances sqrt(S) c stay finite even where their squares would overflow.
    scaled = _scaled_points(X)
    if scaled is None:  # every point coincides
        Xs, factor = np.zeros_like(X), 1.0
    else:
        Xs, _, factor = scaled
    xn = np.einsum("ij,ij->i", Xs, Xs)
    # the pairs whose expansion may have lost digits are recomputed from the differences
    threshold = _RECOMPUTE * 2.0 * float(xn.max())
    block = np.empty((min(chunk_size, n), n))
    from ..neighbors import _kd_tree  # neighbors imports utils: import on use

    lib = _kd_tree._kdtree_lib()
    # The heap's selection costs about 2 n + 12 k (1 + ln(n / k)) log2(k) ns a row, the
    # partial sort about 13 n (measured at n = 1 000 - 3 000 and k = 10 - 100): the heap
    # where it is the cheaper, i.e. for the few nearest of many.
    k = n_neighbors
    if lib is not None and k * (1.0 + math.log(n / k)) * math.log2(k) >= 0.9 * n:
        lib = None
    for start in range(0, n, chunk_size):
        stop = min(start + chunk_size, n)
        D = block[: stop - start]
        _expand_block(Xs[start:stop], Xs, xn[start:stop], xn, D)
        rows = np.arange(stop - start)
        # a point is not its own neighbour: its pair is set aside before the near pairs are
        # recomputed (their differences, N x D gathers, would all be the point itself)
        D[rows, rows + start] = np.inf
        _recompute_near(D, Xs[start:stop], Xs, threshold)
        if lib is not None and ind.dtype == np.int64:
            # the compiled selection: one pass per row, ties by index
            d_rows, i_rows = dist[start:stop], ind[start:stop]
            lib.kdtree_select(D.ctypes.data, stop - start, n, n_neighbors, d_rows.ctypes.data,
                              i_rows.ctypes.data)  # fmt: skip
            np.sqrt(d_rows, out=d_rows)
            d_rows *= factor
            continue
        # (a copy of the kept columns: the partial sort's indices, as many as D's entries,
        # are freed at once rather than when the next block's replace them)
        part = np.argpartition(D, n_neighbors - 1, axis=1)[:, :n_neighbors].copy()
        d_part = np.take_along_axis(D, part, axis=1)
        order = np.argsort(d_part, axis=1, kind="stable")
        ind[start:stop] = np.take_along_axis(part, order, axis=1)
        dist[start:stop] = np.sqrt(np.take_along_axis(d_part, order, axis=1)) * factor
    return dist, ind


def knn_graph(
    X: ArrayLike,
    n_neighbors: int,
    *,
    mode: str = "connectivity",
    gamma: float | None = None,
    mutual: bool = False,
    max_chunk_rows: int | None = None,
) -> sp.csr_matrix:
    """Symmetric k-nearest-neighbour graph as a sparse matrix.

    ``i`` and ``j`` are joined when either is among the other's ``n_neighbors`` nearest
    points (the "or" symmetrisation), or, with ``mutual=True``, when each is among the
    other's (the mutual k-NN graph, "and"; Oxford "Advanced Topics in Statistical Machine
    Learning" §4). ``mode="connectivity"`` gives weight 1; ``mode="rbf"`` gives
    ``exp(-gamma d_ij^2)``; ``mode="distance"`` gives ``d_ij``.

    Parameters
    ----------
    X : array-like of shape (N, D)
        The points.
    n_neighbors : int
        Neighbours per point.
    mode : {"connectivity", "distance", "rbf"}, default="connectivity"
        The edge weights.
    gamma : float, optional
        Width of the ``"rbf"`` weights (required with it).
    mutual : bool, default=False
        Keep only the edges whose two ends are among each other's neighbours.
    max_chunk_rows : int or None, default=None
        Passed to :func:`kneighbors`.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (N, N)
        The symmetric adjacency.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.graph import knn_graph
    >>> knn_graph(np.array([[0.0], [1.0], [3.0]]), 1, mutual=True).toarray()
    array([[0., 1., 0.],
           [1., 0., 0.],
           [0., 0., 0.]])
    >>> knn_graph(np.array([[0.0], [1.0], [3.0]]), 1).toarray()
    array([[0., 1., 0.],
           [1., 0., 1.],
           [0., 1., 0.]])
    """
    dist, ind = kneighbors(X, n_neighbors, max_chunk_rows=max_chunk_rows)
    n = dist.shape[0]
    if mode == "connectivity":
        vals = np.ones(ind.size)
    elif mode == "distance":
        vals = dist.ravel()
    elif mode == "rbf":
        if gamma is None:
            raise ValueError("mode='rbf' needs gamma.")
        vals = np.exp(-gamma * dist.ravel() ** 2)
    else:
        raise ValueError(f"mode must be 'connectivity', 'distance' or 'rbf'; got {mode!r}.")
    # CSR directly (row i holds its n_neighbors entries): no row-index array, no COO
    indptr = np.arange(0, n * n_neighbors + 1, n_neighbors)
    W = sp.csr_matrix((vals, ind.ravel(), indptr), shape=(n, n))
    S = W.minimum(W.T) if mutual else W.maximum(W.T)
    del W
    return _compact(S.tocsr())


def _compact(S: sp.csr_matrix) -> sp.csr_matrix:
    """``S`` with arrays of exactly ``nnz`` entries.

    SciPy's element-wise binary operations allocate room for ``A.nnz + B.nnz`` entries and
    keep views of those buffers unless fewer than half are used: a symmetrised k-NN graph
    would hold nearly twice its size (0.9 MB more at 1 000 points and 100 neighbours).
    """
    nnz = S.nnz
    if S.data.base is not None or S.data.shape[0] != nnz:
        S.data = np.array(S.data[:nnz])
    if S.indices.base is not None or S.indices.shape[0] != nnz:
        S.indices = np.array(S.indices[:nnz])
    return S


def epsilon_graph(X: ArrayLike, eps: float, *, mode: str = "connectivity") -> sp.csr_matrix:
    """The epsilon-neighbourhood graph: ``i`` and ``j`` joined when ``||x_i - x_j|| <= eps``.

    Oxford "Advanced Topics in Statistical Machine Learning" §4 (usually unweighted).
    Neighbours come from a radius query of :class:`mathlearn.neighbors.KDTree`.

    Parameters
    ----------
    X : array-like of shape (N, D)
        The points (finite).
    eps : float
        Radius, ``> 0`` (inclusive).
    mode : {"connectivity", "distance"}, default="connectivity"
        Edge weights 1, or the distances.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (N, N)
        The symmetric adjacency, no self-loops.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.graph import epsilon_graph
    >>> epsilon_graph(np.array([[0.0], [1.0], [3.0]]), 1.5).toarray()
    array([[0., 1., 0.],
           [1., 0., 0.],
           [0., 0., 0.]])
    """
    from ..neighbors import KDTree  # neighbors imports utils: import on use

    if not (np.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a finite number > 0; got {eps}.")
    if mode not in ("connectivity", "distance"):
        raise ValueError(f"mode must be 'connectivity' or 'distance'; got {mode!r}.")
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty 2-D array; got shape {X.shape}.")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity.")
    n = X.shape[0]
    ind, dist = KDTree(X).query_radius(X, eps, return_distance=True)
    counts = np.array([len(i) for i in ind])
    rows = np.repeat(np.arange(n), counts)
    cols = np.concatenate(ind) if n else np.zeros(0, dtype=int)
    vals = np.concatenate(dist) if mode == "distance" else np.ones(cols.size)
    keep = rows != cols
    W = sp.csr_matrix((vals[keep], (rows[keep], cols[keep])), shape=(n, n))
    if mode == "distance":
        W.data[W.data == 0] = np.finfo(float).tiny  # duplicate points stay joined
    return W.maximum(W.T).tocsr()


def _partition(W, labels):
    W = sp.csr_matrix(W) if sp.issparse(W) else np.asarray(W, dtype=float)
    labels = np.asarray(labels)
    n = W.shape[0]
    if W.ndim != 2 or W.shape != (n, n):
        raise ValueError(f"W must be a square adjacency matrix; got shape {W.shape}.")
    if labels.shape != (n,):
        raise ValueError(f"labels must have one entry per vertex, ({n},); got {labels.shape}.")
    _, codes = np.unique(labels, return_inverse=True)
    H = sp.csr_matrix((np.ones(n), (np.arange(n), codes)), shape=(n, codes.max() + 1))
    within = np.asarray((H.T @ (W @ H)).diagonal()).ravel()  # sum_{i, j in C_k} w_ij
    degree = np.asarray(W.sum(axis=1)).ravel()
    volume = np.asarray(H.T @ degree).ravel()  # sum_{i in C_k} d_i
    sizes = np.bincount(codes)
    return volume - within, sizes  # cut(C_k, complement of C_k), |C_k|


def cut(W: Any, labels: ArrayLike) -> float:
    """``cut(C_1, ..., C_K) = sum_k cut(C_k, C_k-bar)``, ``cut(A, B) = sum_{A x B} w_ij``.

    Oxford "Advanced Topics in Statistical Machine Learning" §4.1.1. Each edge between two
    clusters is counted once from each side (the notes' convention; ``W`` symmetric).

    Parameters
    ----------
    W : array-like or sparse matrix of shape (N, N)
        Symmetric non-negative adjacency.
    labels : array-like of shape (N,)
        Cluster of each vertex.

    Returns
    -------
    float

    See Also
    --------
    ratio_cut

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.graph import cut
    >>> W = np.array([[0, 2, 1], [2, 0, 0], [1, 0, 0]], dtype=float)
    >>> cut(W, [0, 0, 1])          # the edge 0-2 (weight 1) counted from both sides
    2.0
    """
    c, _ = _partition(W, labels)
    return float(c.sum())


def ratio_cut(W: Any, labels: ArrayLike) -> float:
    """``RatioCut(C_1, ..., C_K) = sum_k cut(C_k, C_k-bar) / |C_k|``.

    Lemma 17 of the Oxford notes ("Advanced Topics in Statistical Machine Learning" §4.1.1):
    with ``h_k = 1{i in C_k} / sqrt(|C_k|)``, ``RatioCut = sum_k h_k^T L h_k`` for the
    unnormalised Laplacian ``L = D - W``; for two clusters and
    ``f_i = sqrt(|B| / |A|)`` on ``A``, ``-sqrt(|A| / |B|)`` on ``B``, ``f^T L f = n RatioCut``
    (Stuttgart "Introduction to Machine Learning", exercise sheet 9, exercise 3). This is why
    the eigenvectors of ``L`` relax the RatioCut problem in spectral clustering.

    Parameters
    ----------
    W : array-like or sparse matrix of shape (N, N)
        Symmetric non-negative adjacency.
    labels : array-like of shape (N,)
        Cluster of each vertex.

    Returns
    -------
    float

    See Also
    --------
    cut, laplacian

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.graph import ratio_cut
    >>> W = np.array([[0, 2, 1], [2, 0, 0], [1, 0, 0]], dtype=float)
    >>> ratio_cut(W, [0, 0, 1])    # 1 / 2 + 1 / 1
    1.5
    """
    c, sizes = _partition(W, labels)
    return float(np.sum(c / sizes))


def laplacian(
    W: Any, kind: str = "unnormalized", *, dense: bool = False
) -> tuple[Any, np.ndarray]:
    """Graph Laplacian of a symmetric non-negative adjacency matrix.

    Parameters
    ----------
    W : ndarray or sparse matrix of shape (N, N)
        Symmetric non-negative weights.
    kind : {"unnormalized", "symmetric", "random_walk"}
        ``D - W``, ``I - D^{-1/2} W D^{-1/2}`` or ``I - D^{-1} W``.
    dense : bool, default=False
        Return ``L`` as a dense Fortran-ordered array (what a dense eigensolver factorises
        in place); for a sparse ``W``, the same numbers as ``L.toarray()``. The
        symmetric Laplacian of a graph without repeated entries is then written straight from
        the entries of ``W``, ``0 - (s_i w_ij) s_j`` and ``1`` added on the diagonal with
        ``s = d^{-1/2}`` (the products and differences of the sparse route, one rounding
        each), without its intermediate sparse matrices.

    Returns
    -------
    L : ndarray or sparse matrix of shape (N, N)
        Same storage as ``W`` (dense with ``dense=True``).
    degree : ndarray of shape (N,)

    Raises
    ------
    ValueError
        If ``W`` has a negative weight, or a normalised Laplacian is asked for a graph with an
        isolated vertex (zero degree).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.graph import laplacian
    >>> L, degree = laplacian(np.array([[0.0, 1.0], [1.0, 0.0]]))
    >>> L, degree
    (array([[ 1., -1.],
           [-1.,  1.]]), array([1., 1.]))
    """
    sparse = sp.issparse(W)
    W = W.tocsr().astype(float) if sparse else np.asarray(W, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"adjacency must be square; got shape {W.shape}.")
    if (W.data if sparse else W).min(initial=0.0) < 0:
        raise ValueError("adjacency has negative weights.")
    d = np.asarray(W.sum(axis=1)).ravel()
    if kind not in ("unnormalized", "symmetric", "random_walk"):
        raise ValueError(
            f"kind must be 'unnormalized', 'symmetric' or 'random_walk'; got {kind!r}."
        )
    if kind != "unnormalized" and np.any(d <= 0):
        raise ValueError(
            "the graph has isolated vertices (zero degree); a normalised Laplacian is undefined."
        )
    if not sparse:
        return _dense_laplacian(W, kind, d, dense), d
    if kind == "unnormalized":
        return _densified((sp.diags(d) - W).tocsr(), dense), d
    n = W.shape[0]
    if kind == "symmetric":
        s = 1.0 / np.sqrt(d)
        if dense:
            W.sort_indices()  # (W is this function's copy) then duplicates are checked
            if W.has_canonical_format:
                return _symmetric_laplacian_dense(W, s), d
        L = (sp.identity(n) - sp.diags(s) @ W @ sp.diags(s)).tocsr()
    else:
        L = (sp.identity(n) - sp.diags(1.0 / d) @ W).tocsr()
    return _densified(L, dense), d


def _dense_laplacian(W: np.ndarray, kind: str, d: np.ndarray, fortran: bool) -> np.ndarray:
    """The Laplacian of a dense ``W`` in one new ``N x N`` array (Fortran-ordered with
    ``fortran``, for a dense eigensolver to factorise in place), where the expressions
    ``np.diag(d) - W``, ``np.eye(N) - s[:, None] * W * s[None, :]`` (``s = d^{-1/2}``) and
    ``np.eye(N) - W / d[:, None]`` hold up to three: the same numbers, ``0 - m`` off the
    diagonal and ``c + (0 - m)`` on it, which rounds as ``c - m``."""
    n = W.shape[0]
    # W copied first, then scaled in place (a ufunc between arrays of different memory
    # orders goes through one of NumPy's buffers per operand), the broadcast scales through
    # small buffers: at 100 points NumPy's default ones would be more than L itself
    L = np.empty((n, n), order="F" if fortran else "C")
    np.copyto(L, W)
    diag: np.ndarray | float = d
    with small_ufunc_buffers():
        if kind == "symmetric":
            s = 1.0 / np.sqrt(d)
            L *= s[:, None]  # w_ij s_i, which is s_i w_ij
            L *= s[None, :]
            diag = 1.0
        elif kind == "random_walk":
            L /= d[:, None]
            diag = 1.0
    np.subtract(0.0, L, out=L)
    idx = np.arange(n)
    L[idx, idx] += diag
    return L


def _densified(L, dense: bool):
    """``L`` as a dense Fortran-ordered array where asked for and it is sparse."""
    return L.toarray(order="F") if dense and sp.issparse(L) else L


def _symmetric_laplacian_dense(W: sp.csr_matrix, s: np.ndarray) -> np.ndarray:
    """``I - diag(s) W diag(s)`` of a CSR ``W`` without repeated entries as a dense
    Fortran-ordered array.

    Entry by entry what the sparse route computes (``(s_i w_ij) s_j``, subtracted from 0
    off the diagonal and from 1 on it: ``1 + (0 - m) = 1 - m`` exactly), where no entry
    leaves ``+0``; one ``N x N`` array and ``O(nnz)`` temporaries."""
    n = W.shape[0]
    rows = np.repeat(np.arange(n), np.diff(W.indptr))
    vals = s[rows]
    vals *= W.data  # s_i w_ij
    # positions in the column-ordered array, j N + i (the row indices go once used)
    pos = W.indices.astype(np.intp)
    pos *= n
    pos += rows
    del rows
    vals *= s[W.indices]  # (s_i w_ij) s_j
    L = np.zeros((n, n), order="F")
    flat = L.reshape(-1, order="F")  # a view
    flat[pos] = np.subtract(0.0, vals, out=vals)
    flat[:: n + 1] += 1.0
    return L


# Sources per thread at least in geodesic_distances: a source costs O((n + m) log n), tens of
# microseconds on graphs of a few hundred vertices, so a part of 256 of them outweighs
# handing it to a thread.
_PATHS_MIN_PART = 256


def _kernel_csr(A: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The arrays of a CSR matrix as the compiled Dijkstra reads them: 64-bit offsets,
    32-bit column indices (SciPy's own, no copy, where they are 32-bit) and float64
    weights."""
    return (
        np.ascontiguousarray(A.indptr, dtype=np.int64),
        np.ascontiguousarray(A.indices, dtype=np.int32),
        np.ascontiguousarray(A.data, dtype=np.float64),
    )


def geodesic_distances(G: Any) -> np.ndarray:
    """Shortest-path distances between all vertices of a weighted undirected graph.

    Dijkstra's algorithm from every vertex (Tenenbaum, de Silva & Langford, 2000, step 2 of
    Isomap): ``d(s, v)`` is the least total length of a path from ``s`` to ``v`` along the
    stored edges, each usable either way (with the smaller length where ``G_ij`` and
    ``G_ji`` differ), ``inf`` where no path exists. The compiled helper
    ``mathlearn._ext._paths`` runs it with an indexed binary heap, ``O(n (n + m) log n)``
    time for ``n`` vertices and ``m`` edges and ``O(n + m)`` memory beside the ``n x n``
    result (the reverse edges that ``G`` lacks, relaxed beside ``G``'s), the sources split
    over the threads BLAS may use; without it,
    :func:`scipy.sparse.csgraph.shortest_path`. Both form every distance as the same sums
    ``d(u) + w_uv`` and keep the least, so they give the same numbers.

    Parameters
    ----------
    G : sparse matrix or ndarray of shape (n, n)
        Edge lengths; every stored entry of a sparse matrix is an edge (0 included), a dense
        array's zeros off the diagonal are not. Lengths must be non-negative.

    Returns
    -------
    D : ndarray of shape (n, n)
        Zero on the diagonal; symmetric up to rounding (``D[s, v]`` adds the lengths along a
        path from ``s``, ``D[v, s]`` along the same path from ``v``).

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from mathlearn.utils.graph import geodesic_distances
    >>> G = sp.csr_matrix(([1.0, 2.0], ([0, 1], [1, 2])), shape=(3, 3))
    >>> geodesic_distances(G)
    array([[0., 1., 3.],
           [1., 0., 2.],
           [3., 2., 0.]])
    """
    from .. import _ext

    G = sp.csr_matrix(G)
    n = G.shape[0]
    if G.ndim != 2 or G.shape[1] != n:
        raise ValueError(f"The graph must be a square matrix; got shape {G.shape}.")
    if G.nnz and not (np.min(G.data) >= 0):  # also rejects NaN
        raise ValueError("Edge lengths must be non-negative numbers (no NaN).")
    lib = _ext.load("_paths")
    if lib is None:
        from scipy.sparse.csgraph import shortest_path

        return shortest_path(G, method="D", directed=False)
    fn, reverse_fn = lib.paths_dijkstra, lib.paths_reverse_edges
    if fn.argtypes is None:
        import ctypes

        fn.restype = None
        fn.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 6 + [ctypes.c_int64] * 2
        fn.argtypes += [ctypes.c_void_p] * 3
        reverse_fn.restype = ctypes.c_int64
        reverse_fn.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 8
    # G, and the reverse edges G lacks (at most 12 bytes an edge, as SciPy's transpose; no
    # symmetrised copy): each stored edge is relaxed both ways, a mutual pair twice at most.
    arrays = list(_kernel_csr(G))
    reverse = (np.empty(n + 1, dtype=np.int64), np.empty(G.nnz, dtype=np.int32),
               np.empty(G.nnz), np.empty(n, dtype=np.int32), np.empty(n))  # fmt: skip
    kept = reverse_fn(n, *(a.ctypes.data for a in arrays + list(reverse)))
    # (trimmed to the edges kept before the n x n result is allocated, so that the copies
    # do not add to the peak)
    arrays += [reverse[0], reverse[1][:kept].copy(), reverse[2][:kept].copy()]
    del reverse
    out = np.empty((n, n))
    n_parts = max(1, min(blas_threads(), n // _PATHS_MIN_PART))
    bounds = [n * j // n_parts for j in range(n_parts + 1)]

    def run(part: tuple[int, int]) -> None:
        lo, hi = part
        heap, pos = np.empty(2 * n, dtype=np.int64), np.empty(n, dtype=np.int64)
        fn(n, *(a.ctypes.data for a in arrays), lo, hi, out[lo:hi].ctypes.data,
           heap.ctypes.data, pos.ctypes.data)  # fmt: skip

    run_parts(list(itertools.pairwise(bounds)), run)
    return out
