"""kd-tree: median splits on the widest coordinate, batched k-nearest and radius queries."""

from __future__ import annotations

import ctypes
from numbers import Integral

import numpy as np

from .._ext import load as _load_ext
from ..utils._param_validation import Interval, validate_params
from ..utils.validation import check_array

__all__ = ["KDTree", "brute_force_kneighbors"]

# Number of (query, point) distance evaluations held in memory at once.
_BLOCK = 1 << 21
# Trees over at most this many points are searched exhaustively (same answer, less work).
_BRUTE_N = 2048


def _kdtree_lib():
    lib = _load_ext("_kdtree")
    if lib is not None and not getattr(lib, "_typed", False):
        i64, ptr = ctypes.c_int64, ctypes.c_void_p
        lib.kdtree_query.restype = ctypes.c_int
        lib.kdtree_query.argtypes = [ptr] * 6 + [i64, i64, i64, ptr, i64, i64, ptr, ptr]
        lib.kdtree_radius.restype = ctypes.c_int
        lib.kdtree_radius.argtypes = [ptr] * 5 + [i64, i64, i64, ptr, i64] + [ptr] * 5
        lib.kdtree_build.restype = None
        lib.kdtree_build.argtypes = [ptr, i64, i64, ptr, ptr, i64, i64, ptr, ptr, ptr]
        lib.kdtree_select.restype = None
        lib.kdtree_select.argtypes = [ptr, i64, i64, i64, ptr, ptr]
        lib._typed = True
    return lib


def _pow2_scale(X: np.ndarray) -> float:
    """A power of two near ``max |X|``: dividing by it is exact and keeps squares finite."""
    # largest magnitude without an |X| temporary
    m = max(abs(float(np.max(X))), abs(float(np.min(X)))) if X.size else 0.0
    if m == 0.0 or not 2.0**-400 <= m <= 2.0**400:
        return 2.0 ** float(np.frexp(m)[1]) if m > 0.0 else 1.0
    return 1.0


def _select_k(rows, cols, d2, n_rows: int, k: int):
    """The ``k`` entries per row smallest in ``(d2, col)`` order, from candidate triples.

    ``rows`` must hold at least ``k`` candidates for each of the ``n_rows`` rows.
    """
    order = np.lexsort((cols, d2, rows))
    starts = np.zeros(n_rows + 1, dtype=np.intp)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=starts[1:])
    take = order[starts[:-1, None] + np.arange(k)]
    return d2[take], cols[take]


def _brute_sq(Q: np.ndarray, X: np.ndarray, k: int):
    """Exact squared distances and indices of the ``k`` nearest rows of ``X`` for each row
    of ``Q``, sorted by distance then index (``X`` and ``Q`` already scaled).

    Candidates are found with the matrix-product expansion ``|x|^2 + |q|^2 - 2 x^T q`` (BLAS)
    about the mean of ``X``: every point whose expanded distance is within its rounding
    bound of the k-th is kept, then the candidates' distances are recomputed from coordinate
    differences and ranked by (distance, index).
    """
    m, n = Q.shape[0], X.shape[0]
    d = X.shape[1]
    c = X.mean(axis=0)
    Xc = X - c
    xn = np.einsum("ij,ij->i", Xc, Xc)
    # Rounding of the expansion: a few (d + 4) ulps of |q|^2 + |x|^2 (Higham, dot products).
    slack_x = 4.0 * (d + 4) * np.finfo(float).eps
    xmax = float(xn.max()) if n else 0.0
    out_d = np.empty((m, k))
    out_i = np.empty((m, k), dtype=np.intp)
    step = max(1, _BLOCK // max(1, n))
    for s in range(0, m, step):
        q = Q[s : s + step] - c
        qn = np.einsum("ij,ij->i", q, q)
        D = q @ Xc.T
        D *= -2.0
        D += qn[:, None]
        D += xn[None, :]
        t = np.partition(D, k - 1, axis=1)[:, k - 1]
        rows, cols = np.nonzero(D <= (t + slack_x * (qn + xmax))[:, None])
        diff = Q[s + rows] - X[cols]
        exact = np.einsum("ij,ij->i", diff, diff)
        out_d[s : s + step], out_i[s : s + step] = _select_k(rows, cols, exact, q.shape[0], k)
    return out_d, out_i


@validate_params(
    {
        "X": ["array-like"],
        "Y": ["array-like"],
        "k": [Interval(Integral, 1, None, closed="left")],
    }
)
def brute_force_kneighbors(X, Y, k: int):
    """The ``k`` nearest rows of ``X`` to each row of ``Y`` by exhaustive search.

    Distances are computed from coordinate differences (not the ``|x|^2 + |y|^2 - 2 x^T y``
    expansion), so they are accurate for data far from the origin, and ties are broken by
    the smaller index of ``X``. This is the reference the kd-tree is tested against.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Points searched.
    Y : array-like of shape (n_queries, n_features)
        Query points.
    k : int
        Number of neighbours, at most ``n_samples``.

    Returns
    -------
    distances : ndarray of shape (n_queries, k)
        Euclidean distances, increasing along each row.
    indices : ndarray of shape (n_queries, k)
        Row indices into ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neighbors import brute_force_kneighbors
    >>> X = np.array([[0.0], [2.0], [1.0], [1.0]])
    >>> brute_force_kneighbors(X, [[0.9]], 3)[1]
    array([[2, 3, 0]])
    """
    X = check_array(X, dtype=np.float64)
    Y = check_array(Y, dtype=np.float64)
    if Y.shape[1] != X.shape[1]:
        raise ValueError(
            f"Y has {Y.shape[1]} features but X has {X.shape[1]}; they must be equal."
        )
    if k > X.shape[0]:
        raise ValueError(
            f"k = {k} neighbours were asked for but there are only n_samples = {X.shape[0]} "
            "points to search."
        )
    s = _pow2_scale(np.vstack([X, Y]))
    d2, ind = _brute_sq(Y / s, X / s, k)
    return np.sqrt(d2) * s, ind


class KDTree:
    """kd-tree for exact k-nearest-neighbour and radius queries in Euclidean space.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The points to index (finite).
    leaf_size : int, default=40
        Leaves hold between ``leaf_size`` and ``2 * leaf_size`` points (all of them when
        there are fewer), scikit-learn's convention.

    Attributes
    ----------
    data : ndarray of shape (n_samples, n_features)
        The indexed points (a float64 copy).
    idx_array : ndarray of shape (n_samples,)
        Permutation of ``0 .. n_samples - 1``: node ``i`` holds the points
        ``idx_array[node_data["start"][i]:node_data["end"][i]]``.
    node_data : structured ndarray of shape (n_nodes,)
        Fields ``start``, ``end`` (the node's range in ``idx_array``) and ``is_leaf``.
    node_bounds : ndarray of shape (2, n_nodes, n_features)
        Lower and upper corners of each node's bounding box.
    n_levels : int
        Depth of the tree; nodes are stored as a complete binary tree in array order (the
        children of node ``i`` are ``2 i + 1`` and ``2 i + 2``), leaves are the last
        ``2 ** (n_levels - 1)`` nodes.

    See Also
    --------
    brute_force_kneighbors : the exhaustive search the tree's answers equal.
    KNeighborsClassifier, KNeighborsRegressor : estimators that search with this tree.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" §7.1 (kd-trees, slides 7:7-7:9): each node
    splits its points by a hyperplane orthogonal to one coordinate. Here the coordinate is
    the one of largest spread in the node and the split is at the median (the notes split on
    alternating coordinates at a random point; the median keeps the tree balanced, so its
    depth is ``1 + floor(log2((n - 1) / leaf_size))`` and it can be stored as arrays). A
    node's bounding box gives the lower bound
    ``d(q, box)^2 = sum_j max(lo_j - q_j, 0, q_j - hi_j)^2`` on the distance from a query
    ``q`` to any of its points, which is what prunes the search.

    Queries are answered by the compiled helper ``mathlearn._ext._kdtree`` (plain C, built
    when mathlearn is installed): a depth-first search per query that visits the nearer
    child first and skips a node whose box is farther than the current ``k``-th candidate,
    keeping the ``k`` best ordered by (distance, index); a box at exactly the ``k``-th
    distance is still searched, so ties are resolved as by exhaustive search. Radius queries
    run in the same helper (a depth-first search that skips boxes farther than ``r``, one
    pass to count each query's points and one to write them). Where the
    helper was not built (a source tree), queries are answered for many points at once, in
    NumPy, in three steps: (1) each query
    descends to a node with at least ``k`` points, whose ``k``-th distance ``u`` bounds the
    answer; (2) a breadth-first pass keeps the (query, leaf) pairs with ``d(q, box) <= u``,
    sorted by that bound; (3) leaves are visited in that order, in rounds of 1, 2, 4, ...
    leaves per query, each round merging the exact distances into the running ``k`` best and
    dropping the leaves whose bound exceeds the current ``k``-th distance. The result is the
    exact one.

    Distances are computed from coordinate differences after dividing by a power of two
    (which is exact), so they stay accurate far from the origin and finite at extreme
    scales. Ties in distance are broken by the smaller index, so the answer is *identical* to
    :func:`brute_force_kneighbors`, the order included. (A query whose ``k``-th distance is
    shared by a point that a merge discarded is answered again by exhaustive search.)

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neighbors import KDTree
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    >>> dist, ind = KDTree(X, leaf_size=1).query([[0.1, 0.0]], k=2)
    >>> ind
    array([[0, 1]])
    >>> np.round(dist, 6)
    array([[0.1, 0.9]])
    """

    def __init__(self, X, leaf_size: int = 40):
        if isinstance(leaf_size, bool) or not isinstance(leaf_size, Integral) or leaf_size < 1:
            raise ValueError(f"leaf_size must be an int >= 1; got {leaf_size!r}.")
        self._build(check_array(X, dtype=np.float64, copy=True), leaf_size)

    @classmethod
    def _over(cls, X, leaf_size: int = 40) -> KDTree:
        """A tree that keeps ``X`` itself as ``data`` (no copy): for an estimator that holds
        the validated float64 training data anyway and never modifies it."""
        tree = cls.__new__(cls)
        tree._build(X, int(leaf_size))
        return tree

    def _build(self, X, leaf_size: int) -> None:
        self.data = X
        self.leaf_size = int(leaf_size)
        n, d = X.shape
        self._scale = _pow2_scale(X)
        Xs = X / self._scale if self._scale != 1.0 else X
        self.n_levels = int(np.log2(max(1.0, (n - 1) / leaf_size))) + 1 if n > 1 else 1
        n_nodes = 2**self.n_levels - 1
        start = np.zeros(n_nodes, dtype=np.intp)
        end = np.zeros(n_nodes, dtype=np.intp)
        end[0] = n
        n_internal = 2 ** (self.n_levels - 1) - 1
        for i in range(n_internal):
            mid = start[i] + (end[i] - start[i]) // 2
            start[2 * i + 1], end[2 * i + 1] = start[i], mid
            start[2 * i + 2], end[2 * i + 2] = mid, end[i]
        # Level by level: every node's box by one segment reduction over the points in the
        # current order, then each node partitioned at its median along its widest side
        # (in one compiled call where the helper is built; the same boxes and medians).
        perm = np.arange(n)
        Xp, Xp_full = Xs, None
        lo = np.empty((n_nodes, d))
        hi = np.empty((n_nodes, d))
        lib = _kdtree_lib()
        levels = range(self.n_levels)
        if lib is not None and n > 0:
            Xc = np.ascontiguousarray(Xs)
            perm = np.arange(n, dtype=np.int64)
            lib.kdtree_build(
                Xc.ctypes.data,
                n,
                d,
                np.ascontiguousarray(start, dtype=np.int64).ctypes.data,
                np.ascontiguousarray(end, dtype=np.int64).ctypes.data,
                n_nodes,
                n_internal,
                perm.ctypes.data,
                lo.ctypes.data,
                hi.ctypes.data,
            )
            perm = perm.astype(np.intp, copy=False)
            # points in tree order straight into the stored array (one row more, below)
            Xp_full = np.empty((n + 1, d))
            Xp = np.take(Xs, perm, axis=0, out=Xp_full[:n])
            levels = range(0)
        for level in levels:
            nodes = np.arange(2**level - 1, 2 ** (level + 1) - 1)
            s_l, e_l = start[nodes], end[nodes]
            lo[nodes] = np.minimum.reduceat(Xp, s_l, axis=0)
            hi[nodes] = np.maximum.reduceat(Xp, s_l, axis=0)
            if level == self.n_levels - 1:
                break
            dims = np.argmax(hi[nodes] - lo[nodes], axis=1)
            key = Xp[np.arange(n), np.repeat(dims, e_l - s_l)]
            g = np.arange(n)
            for s0, e0 in zip(s_l.tolist(), e_l.tolist(), strict=True):
                g[s0:e0] = s0 + np.argpartition(key[s0:e0], (e0 - s0) // 2)
            Xp = Xp[g]
            perm = perm[g]
        self.idx_array = perm
        self.node_data = np.zeros(
            n_nodes, dtype=[("start", np.intp), ("end", np.intp), ("is_leaf", bool)]
        )
        self.node_data["start"] = start
        self.node_data["end"] = end
        self.node_data["is_leaf"][n_internal:] = True
        self._lo, self._hi = lo, hi
        self.node_bounds = np.stack([lo, hi]) * self._scale
        # Points in tree order, plus a sentinel row at infinity for padded blocks.
        if Xp_full is not None:  # the compiled build wrote the points there
            Xp_full[n] = np.inf
            self._Xp = Xp_full
        else:
            self._Xp = np.vstack([Xp, np.full((1, d), np.inf)])
        self._blocks: dict[int, np.ndarray] = {}
        self._leaf_points: np.ndarray | None = None

    def _level_blocks(self, level: int) -> np.ndarray:
        """Positions (into ``_Xp``) of each node's points at ``level``, padded with ``n``.

        Sizes at one level differ by at most one, so the padding is at most one slot.
        """
        if level not in self._blocks:
            nodes = np.arange(2**level - 1, 2 ** (level + 1) - 1)
            s, e = self.node_data["start"][nodes], self.node_data["end"][nodes]
            width = int((e - s).max())
            pos = s[:, None] + np.arange(width)
            self._blocks[level] = np.where(pos < e[:, None], pos, self.data.shape[0])
        return self._blocks[level]

    def _check_queries(self, X) -> np.ndarray:
        X = check_array(X, dtype=np.float64)
        if X.shape[1] != self.data.shape[1]:
            raise ValueError(
                f"Query points have {X.shape[1]} features but the tree was built on "
                f"{self.data.shape[1]}."
            )
        return X / self._scale if self._scale != 1.0 else X

    @staticmethod
    def _box_sq(Q, lo, hi):
        """Squared distance from each query row to the matching box row."""
        g = np.maximum(lo - Q, 0.0) + np.maximum(Q - hi, 0.0)
        return np.einsum("ij,ij->i", g, g)

    def _descend(self, Q, level: int) -> np.ndarray:
        """The node at ``level`` reached by following the nearer child box from the root."""
        node = np.zeros(Q.shape[0], dtype=np.intp)
        for _ in range(level):
            a, b = 2 * node + 1, 2 * node + 2
            da = self._box_sq(Q, self._lo[a], self._hi[a])
            db = self._box_sq(Q, self._lo[b], self._hi[b])
            node = np.where(da <= db, a, b)
        return node

    def _candidates(self, Q, bound):
        """(query, leaf, bound) triples with ``d(q, leaf box)^2 <= bound[q]``, breadth first."""
        q = np.arange(Q.shape[0])
        node = np.zeros(Q.shape[0], dtype=np.intp)
        lb = np.zeros(Q.shape[0])
        for _ in range(self.n_levels - 1):
            q = np.repeat(q, 2)
            node = (2 * np.repeat(node, 2) + 1) + np.tile([0, 1], node.shape[0])
            lb = self._box_sq(Q[q], self._lo[node], self._hi[node])
            keep = lb <= bound[q]
            q, node, lb = q[keep], node[keep], lb[keep]
        return q, node, lb

    def query(self, X, k: int = 1, return_distance: bool = True):
        """The ``k`` nearest indexed points of each query point.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
        k : int, default=1
            Number of neighbours, ``1 <= k <= n_samples``.
        return_distance : bool, default=True

        Returns
        -------
        distances : ndarray of shape (n_queries, k)
            Only if ``return_distance``; increasing along each row.
        indices : ndarray of shape (n_queries, k)
            Indices into ``data``; equal distances are ordered by index.
        """
        n = self.data.shape[0]
        if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
            raise ValueError(f"k must be an int >= 1; got {k!r}.")
        if k > n:
            raise ValueError(
                f"k = {k} neighbours were asked for but the tree holds only n_samples = {n} "
                "points."
            )
        Q = self._check_queries(X)
        m = Q.shape[0]
        lib = _kdtree_lib()
        if lib is not None:
            dist, ind = self._query_compiled(lib, Q, k, keep_distances=return_distance)
            if return_distance:
                np.sqrt(dist, out=dist)
                if self._scale != 1.0:
                    dist *= self._scale
                return dist, ind
            return ind
        dist = np.empty((m, k))
        ind = np.empty((m, k), dtype=np.intp)
        n_leaves = 2 ** (self.n_levels - 1)
        step = max(1, min(4096, _BLOCK // max(1, n_leaves)))
        for s in range(0, m, step):
            dist[s : s + step], ind[s : s + step] = self._query_chunk(Q[s : s + step], k)
        if return_distance:
            return np.sqrt(dist) * self._scale, ind
        return ind

    def _query_compiled(self, lib, Q, k, keep_distances=True):
        """Squared (scaled) distances and indices of the ``k`` nearest, by the C search.

        Without ``keep_distances`` the distances are written to one buffer of 4 096 rows
        reused for every block of queries, and None is returned for them.
        """
        if not hasattr(self, "_c_arrays"):
            nd = self.node_data
            self._c_arrays = (
                np.ascontiguousarray(self._Xp[:-1]),
                np.ascontiguousarray(self.idx_array, dtype=np.int64),
                np.ascontiguousarray(nd["start"], dtype=np.int64),
                np.ascontiguousarray(nd["end"], dtype=np.int64),
                np.ascontiguousarray(self._lo),
                np.ascontiguousarray(self._hi),
            )
        P, pos_index, start, end, lo, hi = self._c_arrays
        m, d = Q.shape
        Q = np.ascontiguousarray(Q)
        step = m if keep_distances else 4096
        dist = np.empty((min(m, step), k))
        ind = np.empty((m, k), dtype=np.int64)
        n_nodes = start.shape[0]
        n_internal = 2 ** (self.n_levels - 1) - 1
        for a in range(0, m, max(step, 1)):
            b = min(m, a + step)
            status = lib.kdtree_query(
                P.ctypes.data,
                pos_index.ctypes.data,
                start.ctypes.data,
                end.ctypes.data,
                lo.ctypes.data,
                hi.ctypes.data,
                n_nodes,
                n_internal,
                d,
                Q[a:b].ctypes.data,
                b - a,
                k,
                dist.ctypes.data,
                ind[a:b].ctypes.data,
            )
            if status != 0:
                raise MemoryError("the kd-tree search ran out of memory.")
        return (dist if keep_distances else None), ind.astype(np.intp, copy=False)

    def _merge(self, Q, qa, P, pos, k, best_d, best_p, tie):
        """Merge the points ``P`` (tree positions ``pos``; one row per query ``qa``) into
        the running best."""
        a, w = pos.shape
        cat_d = np.empty((a, k + w))
        cat_d[:, :k] = best_d[qa]
        D = P - Q[qa, None, :]
        np.einsum("ijk,ijk->ij", D, D, out=cat_d[:, k:])
        # Partitioning at k - 1 and k also tells whether the (k+1)-th smallest equals the
        # k-th: a discarded point at the k-th distance, whose index may order before ours.
        part = np.argpartition(cat_d, (k - 1, k), axis=1)
        keep = part[:, :k]
        new_d = np.take_along_axis(cat_d, keep, axis=1)
        kth = np.take_along_axis(cat_d, part[:, k - 1 : k], axis=1)[:, 0]
        nxt = np.take_along_axis(cat_d, part[:, k : k + 1], axis=1)[:, 0]
        tie[qa] |= np.isfinite(kth) & (nxt == kth)
        old_p = best_p[qa]
        from_old = keep < k
        new_p = np.where(
            from_old,
            np.take_along_axis(old_p, np.minimum(keep, k - 1), axis=1),
            np.take_along_axis(pos, np.maximum(keep - k, 0), axis=1),
        )
        best_d[qa] = new_d
        best_p[qa] = new_p

    def _query_chunk(self, Q, k: int):
        m, d = Q.shape
        n = self.data.shape[0]
        L = self.n_levels - 1
        if n <= _BRUTE_N:
            return _brute_sq(Q, self.data / self._scale, k)
        best_d = np.full((m, k), np.inf)
        best_p = np.full((m, k), n, dtype=np.intp)
        tie = np.zeros(m, dtype=bool)
        # (1) The node, at the deepest level whose nodes hold at least k points, reached by
        # following the nearer child box: its points give a first k best and a bound.
        sizes_min = n // 2 ** np.arange(self.n_levels)
        level0 = int(np.nonzero(sizes_min >= k)[0].max())
        node0 = self._descend(Q, level0)
        block = self._level_blocks(level0)
        pos0 = block[node0 - (2**level0 - 1)]
        self._merge(Q, np.arange(m), self._Xp[pos0], pos0, k, best_d, best_p, tie)
        # (2) Candidate leaves per query, nearest box first, without those already seen.
        cq, cleaf, clb = self._candidates(Q, best_d.max(axis=1))
        h = L - level0
        seen_first = (node0[cq] + 1) * 2**h - 1
        fresh = (cleaf < seen_first) | (cleaf >= seen_first + 2**h)
        cq, cleaf, clb = cq[fresh], cleaf[fresh], clb[fresh]
        order = np.lexsort((clb, cq))
        cq, cleaf, clb = cq[order], cleaf[order], clb[order]
        counts = np.bincount(cq, minlength=m)
        first = np.zeros(m + 1, dtype=np.intp)
        np.cumsum(counts, out=first[1:])
        leaf_pos = self._level_blocks(L)
        if self._leaf_points is None:
            # Leaves' points as one contiguous (n_leaves, width, d) block: a leaf is then
            # gathered by one copy, not row by row.
            self._leaf_points = self._Xp[leaf_pos]
        leaf0 = 2**L - 1
        width = leaf_pos.shape[1]
        clb_pad = np.append(clb, np.inf)
        done = np.zeros(m, dtype=np.intp)
        # (3) Rounds: each query takes its next leaves whose bound is within its current
        # k-th distance (at most `cap` of them); queries taking equally many go together.
        cap = 2
        while True:
            kth = best_d.max(axis=1)
            # Bounds are sorted, so the leaves within kth form a prefix of what remains.
            idx = first[:-1] + done
            left = counts - done
            probe = np.arange(cap)
            slots = idx[:, None] + probe
            okm = (probe < left[:, None]) & (clb_pad[np.minimum(slots, len(clb))] <= kth[:, None])
            take = np.cumprod(okm, axis=1).sum(axis=1)
            if not take.any():
                break
            for t in np.unique(take[take > 0]):
                qs = np.nonzero(take == t)[0]
                sub = max(1, _BLOCK // max(1, t * width * d))
                for a0 in range(0, qs.size, sub):
                    qa = qs[a0 : a0 + sub]
                    leaves = cleaf[idx[qa, None] + np.arange(t)] - leaf0
                    pos = leaf_pos[leaves].reshape(qa.size, -1)
                    P = self._leaf_points[leaves].reshape(qa.size, -1, d)
                    self._merge(Q, qa, P, pos, k, best_d, best_p, tie)
            done += take
            cap *= 4
        ind = self.idx_array[np.minimum(best_p, n - 1)]
        order = np.lexsort((ind, best_d), axis=1)
        best_d = np.take_along_axis(best_d, order, axis=1)
        ind = np.take_along_axis(ind, order, axis=1)
        if tie.any():
            best_d[tie], ind[tie] = _brute_sq(Q[tie], self.data / self._scale, k)
        return best_d, ind

    def query_radius(
        self,
        X,
        r,
        return_distance: bool = False,
        count_only: bool = False,
        sort_results: bool = False,
    ):
        """The indexed points within distance ``r`` (inclusive) of each query point.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)
        r : float or array-like of shape (n_queries,)
            Radius (non-negative), one for all queries or one per query.
        return_distance : bool, default=False
        count_only : bool, default=False
            Return only the number of points within ``r`` of each query.
        sort_results : bool, default=False
            Order each query's points by distance (then index); otherwise by index.

        Returns
        -------
        indices : ndarray of shape (n_queries,) of int arrays
            Or ``counts`` (int array) with ``count_only``.
        distances : ndarray of shape (n_queries,) of float arrays
            Only if ``return_distance``.
        """
        Q = self._check_queries(X)
        m = Q.shape[0]
        r = np.broadcast_to(np.asarray(r, dtype=np.float64), (m,))
        if not np.all(np.isfinite(r)) or np.any(r < 0):
            raise ValueError("The radius r must be finite and non-negative.")
        r2 = (r / self._scale) ** 2
        lib = _kdtree_lib()
        if lib is not None:
            hq, hp, hd = self._radius_compiled(lib, Q, r2)
        else:
            hq, hp, hd = self._radius_numpy(Q, r2)
        counts = np.bincount(hq, minlength=m)
        if count_only:
            return counts
        order = np.lexsort((hp, hd, hq)) if sort_results else np.lexsort((hp, hq))
        hp, hd = hp[order], np.sqrt(hd[order]) * self._scale
        splits = np.cumsum(counts)[:-1]
        ind = np.empty(m, dtype=object)
        ind[:] = np.split(hp, splits) if m else []
        if not return_distance:
            return ind
        dist = np.empty(m, dtype=object)
        dist[:] = np.split(hd, splits) if m else []
        return ind, dist

    def _radius_compiled(self, lib, Q, r2):
        """(query, original index, squared scaled distance) of every hit, by the C search."""
        if not hasattr(self, "_c_arrays"):
            self._query_compiled(lib, Q[:0], 1)  # builds the cached arrays
        P, pos_index, start, end, lo, hi = self._c_arrays
        m, d = Q.shape
        Q = np.ascontiguousarray(Q)
        r2 = np.ascontiguousarray(r2, dtype=np.float64)
        n_internal = 2 ** (self.n_levels - 1) - 1
        counts = np.zeros(m, dtype=np.int64)
        args = (P, start, end, lo, hi)
        head = [a.ctypes.data for a in args] + [start.shape[0], n_internal, d, Q.ctypes.data, m]
        if lib.kdtree_radius(*head, r2.ctypes.data, counts.ctypes.data, None, None, None):
            raise MemoryError("the kd-tree search ran out of memory.")
        offset = np.zeros(m, dtype=np.int64)
        np.cumsum(counts[:-1], out=offset[1:])
        total = int(counts.sum())
        pos = np.empty(total, dtype=np.int64)
        d2 = np.empty(total)
        if lib.kdtree_radius(
            *head,
            r2.ctypes.data,
            counts.ctypes.data,
            offset.ctypes.data,
            pos.ctypes.data,
            d2.ctypes.data,
        ):
            raise MemoryError("the kd-tree search ran out of memory.")
        hq = np.repeat(np.arange(m), counts)
        return hq, pos_index[pos].astype(np.intp, copy=False), d2

    def _radius_numpy(self, Q, r2):
        """:meth:`_radius_compiled` by batched (query, leaf) candidates in NumPy."""
        cq, cleaf, _ = self._candidates(Q, r2)
        leaf_pos = self._level_blocks(self.n_levels - 1)[cleaf - (2 ** (self.n_levels - 1) - 1)]
        hit_q, hit_p, hit_d = [], [], []
        step = max(1, _BLOCK // max(1, leaf_pos.shape[1] * Q.shape[1]))
        for s in range(0, cq.size, step):
            qq, pp = cq[s : s + step], leaf_pos[s : s + step]
            D = self._Xp[pp] - Q[qq, None, :]
            D = np.einsum("ijk,ijk->ij", D, D)
            rows, cols = np.nonzero(D <= r2[qq, None])
            hit_q.append(qq[rows])
            hit_p.append(pp[rows, cols])
            hit_d.append(D[rows, cols])
        hq = np.concatenate(hit_q) if hit_q else np.empty(0, dtype=np.intp)
        hp = self.idx_array[np.concatenate(hit_p)] if hit_p else np.empty(0, dtype=np.intp)
        hd = np.concatenate(hit_d) if hit_d else np.empty(0)
        return hq, hp, hd
