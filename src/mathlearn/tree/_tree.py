"""CART growing, prediction and weakest-link pruning on flat arrays.

A tree is a :class:`Tree`: parallel arrays indexed by node id, nodes numbered in pre-order
(a node, then its left subtree, then its right subtree), so the subtree of node ``t`` is the
contiguous range ``t .. t + subtree_size - 1``. Leaves have ``children_left ==
children_right == -1`` and ``feature == threshold == -2`` (scikit-learn's layout).

Growing (Stuttgart "Introduction to Machine Learning" §2.6, CART): at a node holding the
samples ``S`` with weights ``w``, every candidate split ``x_j <= theta`` is scored by the
weighted impurity decrease

.. math::

    \\Delta(j, \\theta) = W_S\\, i(S) - W_L\\, i(L) - W_R\\, i(R),

with ``i`` the Gini index ``1 - sum_c p_c^2``, the entropy ``-sum_c p_c log2 p_c`` or the
weighted variance of ``y``. For one feature, sorting the node's values once and taking prefix
sums of the weighted class counts (or of ``w y``) gives the children's statistics for all
``n - 1`` positions at once, so the best threshold over all features is one vectorised pass.
The threshold is the midpoint of two consecutive distinct values.

The "best" splitter presorts every feature once and keeps, for each node, its samples sorted
by every feature (a stable partition of each sorted list sends a split's left samples first),
so no node sorts anything. It runs as one call into the compiled helper ``mathlearn._ext._cart``
(plain C built when mathlearn is installed: nothing is compiled at run time), which grows the
same tree as the NumPy route below (:func:`_grow_numpy`) up to the rounding of sums: the NumPy
route is kept as the reference and as the fallback of a source tree where the helper was
never built. With ``max_features`` below the number of features the two routes draw their
candidate features from different random streams. The "random" splitter (extremely
randomised trees: one threshold per candidate feature, drawn uniformly in the node's range)
presorts nothing; the same helper grows it on one array of sample ids partitioned in place,
``O(N max_features)`` per tree level, with its own random stream for the features and
thresholds (the NumPy route draws from ``rng``). An ensemble that grows many depth-limited
trees on one ``X`` with every feature a candidate (AdaBoost's stumps, gradient boosting's
trees) shares one presorted order, which the helper then only reads: it grows the tree level
by level, one pass over each sorted column per level visiting every node's samples in the
order the partitioned column would hold them (a stable partition keeps the presorted order),
so the sums, and the tree, are those of the depth-first route bit for bit, with ``O(N)``
memory per tree instead of a copy of the ``D x N`` order. The helper reads ``X`` through
its strides, so it is never copied. Prediction (:meth:`Tree.apply`) is one compiled descent per
row in the same helper, with the level-by-level NumPy descent as its fallback.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import numpy as np
from scipy.special import xlogy

from .._ext import load as _load_ext

__all__ = ["Tree", "build_tree", "presort", "prune_tree", "pruning_path"]

# A node whose impurity is below EPS is pure, EPS times the mean of w y^2 for the squared
# error (see _ext/_cart.c, ``pure``). (Unlike scikit-learn, which merges values closer than
# 1e-7, any two distinct doubles can be split, so data at scale 1e-300 work.)
_EPS = np.finfo(np.float64).eps
# Largest number of (position, feature, class) prefix-sum entries formed at once.
_CHUNK = 1 << 22


# The node arrays of a :class:`Tree`, in the order of its buffer: name, and whether the
# entries are integers (held as int64 bit patterns in the float64 buffer).
_TREE_FIELDS = (
    ("children_left", True),
    ("children_right", True),
    ("feature", True),
    ("threshold", False),
    ("impurity", False),
    ("n_node_samples", True),
    ("weighted_n_node_samples", False),
)


class Tree:
    """A fitted binary tree stored as flat arrays.

    Attributes
    ----------
    children_left, children_right : ndarray of shape (node_count,)
        Child ids, ``-1`` at leaves.
    feature : ndarray of shape (node_count,)
        Feature tested at each node, ``-2`` at leaves.
    threshold : ndarray of shape (node_count,)
        A sample goes left when ``x[feature] <= threshold``; ``-2`` at leaves.
    value : ndarray of shape (node_count, n_values)
        Class proportions (classification) or the mean target (regression, ``n_values = 1``).
    impurity : ndarray of shape (node_count,)
    n_node_samples : ndarray of shape (node_count,)
    weighted_n_node_samples : ndarray of shape (node_count,)
    max_depth : int

    Notes
    -----
    The arrays are views of one buffer of ``node_count * (7 + n_values)`` doubles (the
    integer arrays as 64-bit integers), formed on each access: writing into them writes the
    tree. An ensemble holds hundreds of small trees, and eight arrays of their own were
    eight NumPy objects and allocations per tree (about 1.7 kB for a depth-3 tree of 15
    nodes, against 1 kB of node data).
    """

    __slots__ = ("_count", "_nodes", "max_depth")

    def __init__(
        self,
        children_left,
        children_right,
        feature,
        threshold,
        value,
        impurity,
        n_node_samples,
        weighted_n_node_samples,
        max_depth: int = 0,
    ):
        count = np.shape(children_left)[0]
        value = np.asarray(value, dtype=np.float64).reshape(count, -1)
        arrays = (
            children_left,
            children_right,
            feature,
            threshold,
            impurity,
            n_node_samples,
            weighted_n_node_samples,
        )
        self._nodes = np.empty(count * (len(arrays) + value.shape[1]))
        self._count = count
        self.max_depth = max_depth
        for (name, integer), a in zip(_TREE_FIELDS, arrays, strict=True):
            getattr(self, name)[:] = np.asarray(a, dtype=np.int64 if integer else np.float64)
        self.value[:] = value

    @classmethod
    def _from_buffer(cls, nodes: np.ndarray, count: int, max_depth: int) -> Tree:
        """The tree whose buffer (laid out as the class documents) is ``nodes``, not copied."""
        tree = cls.__new__(cls)
        tree._nodes, tree._count, tree.max_depth = nodes, count, max_depth
        return tree

    def _field(self, k: int, integer: bool) -> np.ndarray:
        a = self._nodes[k * self._count : (k + 1) * self._count]
        return a.view(np.int64) if integer else a

    children_left = property(lambda self: self._field(0, True), doc="Left child ids.")
    children_right = property(lambda self: self._field(1, True), doc="Right child ids.")
    feature = property(lambda self: self._field(2, True), doc="Feature tested at each node.")
    threshold = property(lambda self: self._field(3, False), doc="Threshold at each node.")
    impurity = property(lambda self: self._field(4, False), doc="Impurity of each node.")
    n_node_samples = property(lambda self: self._field(5, True), doc="Samples per node.")
    weighted_n_node_samples = property(
        lambda self: self._field(6, False), doc="Weight of the samples per node."
    )

    @property
    def value(self) -> np.ndarray:
        """Node values, ``(node_count, n_values)``."""
        m = len(_TREE_FIELDS) * self._count
        return self._nodes[m:].reshape(self._count, -1)

    def __repr__(self) -> str:
        return f"Tree(node_count={self._count}, max_depth={self.max_depth})"

    @property
    def node_count(self) -> int:
        return self._count

    @property
    def n_leaves(self) -> int:
        return int(np.sum(self.children_left == -1))

    def apply(self, X: np.ndarray) -> np.ndarray:
        """Leaf id of every row of ``X``: one compiled descent per row (``_ext._cart``), or,
        where the helper is not built, all rows descending together level by level."""
        lib = _cart_lib()
        if lib is not None and X.shape[0] > 0:
            Xc = np.ascontiguousarray(X, dtype=np.float64)
            out = np.empty(Xc.shape[0], dtype=np.int64)
            base, step = self._nodes.ctypes.data, 8 * self._count
            lib.cart_apply(
                Xc.ctypes.data,
                Xc.shape[0],
                Xc.shape[1],
                base,  # children_left
                base + step,  # children_right
                base + 2 * step,  # feature
                base + 3 * step,  # threshold
                out.ctypes.data,
            )
            return out.astype(np.intp, copy=False)
        left, right = self.children_left, self.children_right
        feature, threshold = self.feature, self.threshold
        node = np.zeros(X.shape[0], dtype=np.intp)
        active = np.flatnonzero(left[node] != -1)
        while active.size:
            cur = node[active]
            go_left = X[active, feature[cur]] <= threshold[cur]
            node[active] = np.where(go_left, left[cur], right[cur])
            active = active[left[node[active]] != -1]
        return node

    def decision_path(self, X: np.ndarray):
        """Sparse indicator (n_samples, node_count) of the nodes each row passes through."""
        import scipy.sparse as sp

        left, right = self.children_left, self.children_right
        feature, threshold = self.feature, self.threshold
        n = X.shape[0]
        rows, cols = [np.arange(n)], [np.zeros(n, dtype=np.intp)]
        node = np.zeros(n, dtype=np.intp)
        active = np.flatnonzero(left[node] != -1)
        while active.size:
            cur = node[active]
            go_left = X[active, feature[cur]] <= threshold[cur]
            node[active] = np.where(go_left, left[cur], right[cur])
            rows.append(active)
            cols.append(node[active])
            active = active[left[node[active]] != -1]
        r, c = np.concatenate(rows), np.concatenate(cols)
        data = np.ones(r.shape[0], dtype=np.int64)
        return sp.csr_matrix((data, (r, c)), shape=(n, self.node_count))

    def subtree_size(self) -> np.ndarray:
        """Number of nodes in each node's subtree (pre-order makes them contiguous)."""
        left, right = self.children_left, self.children_right
        size = np.ones(self.node_count, dtype=np.intp)
        for t in range(self.node_count - 1, -1, -1):
            if left[t] != -1:
                size[t] += size[left[t]] + size[right[t]]
        return size

    def depths(self) -> np.ndarray:
        left, right = self.children_left, self.children_right
        depth = np.zeros(self.node_count, dtype=np.intp)
        for t in range(self.node_count):
            if left[t] != -1:
                depth[left[t]] = depth[right[t]] = depth[t] + 1
        return depth


def _impurity_from_stats(stat: np.ndarray, W: np.ndarray, criterion: str) -> np.ndarray:
    """Node impurity from class weights ``stat (..., C)`` or ``(sum wy, sum wy^2)``."""
    if criterion == "squared_error":
        mean = stat[..., 0] / W
        return np.maximum(stat[..., 1] / W - mean * mean, 0.0)
    p = stat / W[..., None]
    if criterion == "gini":
        return 1.0 - np.sum(p * p, axis=-1)
    return -np.sum(xlogy(p, p), axis=-1) / np.log(2.0)


def _proxy(sL, WL, sR, WR, criterion: str) -> np.ndarray:
    """A quantity whose maximiser over splits minimises ``W_L i(L) + W_R i(R)``.

    Gini: ``W i = W - sum_c w_c^2 / W``; squared error: ``W i = sum w y^2 - (sum w y)^2 / W``
    (the ``sum w y^2`` and ``W`` terms are the same for every split of the node); entropy:
    ``-W i`` directly.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        if criterion == "gini":
            return np.sum(sL * sL, axis=-1) / WL + np.sum(sR * sR, axis=-1) / WR
        if criterion == "squared_error":
            return sL[..., 0] ** 2 / WL + sR[..., 0] ** 2 / WR
        pL, pR = sL / WL[..., None], sR / WR[..., None]
        return (
            WL * np.sum(xlogy(pL, pL), axis=-1) + WR * np.sum(xlogy(pR, pR), axis=-1)
        ) / np.log(2.0)


def _best_split_sorted(X, Yw, w, order, feats, msl, min_w_leaf, criterion):
    """Best ``(feature, threshold, proxy)`` over ``feats`` by sorted prefix sums, or None.

    ``order[:, j]`` lists the node's sample ids sorted by feature ``j``. Ties go to the
    lowest feature in ``feats`` order, then the lowest position.
    """
    n = order.shape[0]
    C = Yw.shape[1]
    best = None
    step = max(1, _CHUNK // max(1, n * C))
    ids = order[:, 0]
    total = Yw[ids].sum(axis=0)
    W = w[ids].sum() if criterion == "squared_error" else total.sum()
    for start in range(0, len(feats), step):
        fs = feats[start : start + step]
        o = order[:, fs]
        Xs = X[o, fs]
        # Left child of position i holds sorted rows 0..i; consider i = 0 .. n-2.
        sL = np.cumsum(Yw[o], axis=0)[:-1]  # (n-1, k, C)
        # Class weights sum to the sample weight; the squared error needs w separately.
        WL = np.cumsum(w[o], axis=0)[:-1] if criterion == "squared_error" else sL.sum(axis=-1)
        sR = total - sL
        if criterion != "squared_error":
            # A class absent from the right child leaves a rounding residue of either sign;
            # a negative one would make the entropy's log NaN.
            np.maximum(sR, 0.0, out=sR)
        WR = W - WL
        pos = np.arange(1, n)[:, None]
        valid = (
            (Xs[1:] > Xs[:-1])
            & (pos >= msl)
            & (n - pos >= msl)
            & (WL > 0)
            & (WR > 0)
            & (WL >= min_w_leaf)
            & (WR >= min_w_leaf)
        )
        if not valid.any():
            continue
        if criterion == "squared_error":
            sL, sR = sL[..., :1], sR[..., :1]
        score = np.where(valid, _proxy(sL, WL, sR, WR, criterion), -np.inf)
        # Feature-major argmax: first feature, then first position, on ties.
        flat = int(np.argmax(score.T))
        k, i = divmod(flat, n - 1)
        if best is None or score[i, k] > best[2]:
            lo, hi = Xs[i, k], Xs[i + 1, k]
            thr = lo / 2.0 + hi / 2.0
            if thr == hi or not np.isfinite(thr):
                thr = lo
            best = (int(fs[k]), float(thr), float(score[i, k]))
    return best


def _best_split_random(Xn, Yw, w, feats, msl, min_w_leaf, criterion, rng):
    """Best split when each feature gets one threshold drawn uniformly in its node range."""
    Xf = Xn[:, feats]
    lo, hi = Xf.min(axis=0), Xf.max(axis=0)
    thr = lo + rng.random(len(feats)) * (hi - lo)
    thr = np.where(thr >= hi, lo, thr)
    left = Xf <= thr  # (n, k)
    nL = left.sum(axis=0)
    n = Xn.shape[0]
    Yw_ = Yw[:, :1] if criterion == "squared_error" else Yw
    sL = left.T.astype(np.float64) @ Yw_  # (k, C)
    WL = left.T.astype(np.float64) @ w
    sR = Yw_.sum(axis=0) - sL
    WR = w.sum() - WL
    valid = (
        (nL >= msl)
        & (n - nL >= msl)
        & (WL > 0)
        & (WR > 0)
        & (WL >= min_w_leaf)
        & (WR >= min_w_leaf)
    )
    if not valid.any():
        return None
    score = np.where(valid, _proxy(sL, WL, sR, WR, criterion), -np.inf)
    k = int(np.argmax(score))
    return int(feats[k]), float(thr[k]), float(score[k])


def build_tree(
    X: np.ndarray,
    Y: np.ndarray,
    w: np.ndarray,
    *,
    criterion: str,
    splitter: str,
    max_depth: int | None,
    min_samples_split: int,
    min_samples_leaf: int,
    min_weight_leaf: float,
    max_features: int,
    min_impurity_decrease: float,
    rng: np.random.Generator,
    presorted_order: np.ndarray | None = None,
    n_classes: int | None = None,
    rows: np.ndarray | None = None,
) -> Tree:
    """Grow a tree depth first.

    ``Y`` is the one-hot class matrix (classification) or the column ``y`` (regression);
    with ``n_classes`` given, ``Y`` is instead the vector of class indices ``0 ..
    n_classes - 1``, which stands for its one-hot matrix (the compiled routes need no such
    matrix). ``w`` are the sample weights. The node statistics are ``sum_i w_i Y_i`` per
    class, or ``(sum w y, sum w y^2)`` for the squared error. ``presorted_order`` may pass
    :func:`presort` of ``X`` (or ``np.argsort(X, axis=0, kind="stable")``) when the caller
    grows many trees on one ``X`` (boosting), so it is computed once; it is not modified.
    ``rows`` (increasing ids, no ``presorted_order``) grows the tree on ``X[rows]``, with
    ``Y`` and ``w`` given for those rows only, reading ``X`` in place (a bootstrap sample's
    rows are not copied); the tree is the one grown on ``X[rows]``.
    """
    if rows is not None and (_cart_lib() is None or rows.shape[0] == 0):
        X, rows = X[rows], None
    n = X.shape[0] if rows is None else rows.shape[0]
    # The compiled "best" splitter keeps sample ids in 32 bits (half the memory of the
    # sorted columns); more samples than that take the NumPy route.
    compiled = 0 < n and (splitter == "random" or n < _INT32_LIMIT) and _cart_lib() is not None
    if n_classes is not None and not compiled:
        Y = np.eye(n_classes)[Y]
    grow: Callable[..., Tree] = _grow_compiled if compiled else _grow_numpy
    return grow(
        X,
        Y,
        w,
        criterion=criterion,
        splitter=splitter,
        max_depth=max_depth,
        min_samples_split=min_samples_split,
        min_samples_leaf=min_samples_leaf,
        min_weight_leaf=min_weight_leaf,
        max_features=max_features,
        min_impurity_decrease=min_impurity_decrease,
        rng=rng,
        presorted_order=presorted_order,
        **({} if n_classes is None or not compiled else {"n_classes": n_classes}),
        **({} if rows is None else {"rows": rows}),
    )


_CRITERIA = {"gini": 0, "entropy": 1, "log_loss": 1, "squared_error": 2}
_INT32_LIMIT = 2**31
_UINT16_LIMIT = 2**16
# Deepest tree grown level by level on a shared presorted order (cart_grow_levels holds the
# states of a level's nodes, at most 2^depth, at once).
_LEVELS_MAX_DEPTH = 16


@ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_int64)
def _GROW_BUFFER_CALLBACK(holder, size):  # the helper's ``grow``: see _grow_compiled
    try:
        holder[0].resize(size, refcheck=False)
    except MemoryError:
        return None
    return holder[0].ctypes.data


_GROW_BUFFER = type(_GROW_BUFFER_CALLBACK)


def presort(X: np.ndarray, compact: bool = False) -> np.ndarray:
    """``np.argsort(X, axis=0, kind="stable")`` with 32-bit indices where they suffice,
    sorted one column at a time into a feature-major array (the layout the compiled grower
    partitions), returned as its (n_samples, n_features) transpose.

    ``compact``: 16-bit indices where they suffice (at most 65536 samples), for an order
    that an ensemble's trees share and only read (the level route of ``_grow_compiled``
    reads them as they are; the other routes widen a copy), half the memory."""
    n, d = X.shape
    dtype = np.int32 if n < _INT32_LIMIT else np.intp
    out = np.empty((d, n), dtype=np.uint16 if compact and n <= _UINT16_LIMIT else dtype)
    for j in range(d):
        out[j] = np.argsort(X[:, j], kind="stable")
    return out.T


def _weighted_moments(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``[w y, w y^2]`` as an ``(n, 2)`` array, written in place: the same products as
    ``np.column_stack([w * y, w * y ** 2])`` (``y ** 2`` is ``y * y``, and a product rounds
    the same in either order), without its three ``n``-length temporaries (2.4 MB at 1e5)."""
    out = np.empty((y.shape[0], 2))
    np.multiply(w, y, out=out[:, 0])
    np.multiply(y, y, out=out[:, 1])
    out[:, 1] *= w
    return out


def _presort_rows(X: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """:func:`presort` of ``X[rows]`` (feature-major, 32-bit) holding the ids ``rows[i]``
    instead of the positions ``i``, formed one column at a time (``rows`` increasing, so
    ties keep the order of the ids as the stable sort of ``X[rows]`` keeps positions)."""
    out = np.empty((X.shape[1], rows.shape[0]), dtype=np.int32)
    for j in range(X.shape[1]):
        out[j] = rows[np.argsort(X[rows, j], kind="stable")]
    return out


def _cart_lib():
    lib = _load_ext("_cart")
    if lib is not None and not getattr(lib, "_typed", False):
        i64, f64 = ctypes.c_int64, ctypes.c_double
        ptr = ctypes.c_void_p
        lib.cart_grow.restype = i64
        lib.cart_grow.argtypes = [ptr, i64, i64, ptr, ptr, ptr, i64, i64, i64, i64, ctypes.c_int]
        lib.cart_grow.argtypes += [i64, i64]
        lib.cart_grow.argtypes += [i64, f64, i64, f64, ctypes.c_uint64, i64]
        lib.cart_grow.argtypes += [_GROW_BUFFER, ctypes.py_object, ptr]
        lib.cart_grow_random.restype = i64
        lib.cart_grow_random.argtypes = lib.cart_grow.argtypes
        lib.cart_grow_levels.restype = i64
        lib.cart_grow_levels.argtypes = [ptr, i64, i64, ptr, ptr, ptr, ptr, ptr, ctypes.c_int]
        lib.cart_grow_levels.argtypes += [i64, i64, i64]
        lib.cart_grow_levels.argtypes += [ctypes.c_int, i64, i64, i64, f64, f64, i64]
        lib.cart_grow_levels.argtypes += [_GROW_BUFFER, ctypes.py_object, ptr]
        lib.cart_apply.restype = None
        lib.cart_apply.argtypes = [ptr, i64, i64, ptr, ptr, ptr, ptr, ptr]
        lib._typed = True
    return lib


def _grow_compiled(
    X,
    Y,
    w,
    *,
    criterion,
    splitter,
    max_depth,
    min_samples_split,
    min_samples_leaf,
    min_weight_leaf,
    max_features,
    min_impurity_decrease,
    rng,
    presorted_order,
    n_classes=None,
    rows=None,
) -> Tree:
    """:func:`build_tree` grown by ``_ext._cart``: ``cart_grow`` on presorted features for
    the "best" splitter, ``cart_grow_random`` on one array of sample ids for "random", and
    ``cart_grow_levels`` for the "best" splitter on a caller's presorted order (shared by an
    ensemble's trees) when every feature is a candidate and the depth is limited: it grows
    the same tree level by level reading the order without writing it, so the order is not
    copied for each tree (a copy was ``4 N D`` bytes per tree: 8 MB at 1e5 x 20). With
    ``rows``, the helpers grow the tree on those rows of ``X`` read in place: their order
    lists the ids ``rows``, and ``Yw``, ``w`` get zero rows for the others."""
    lib = _cart_lib()
    n_data, d = X.shape
    n = n_data if rows is None else rows.shape[0]
    levels = (
        splitter == "best"
        and presorted_order is not None
        and max_features >= d
        and max_depth is not None
        and max_depth <= _LEVELS_MAX_DEPTH
    )
    w = np.ascontiguousarray(w, dtype=np.float64)
    yidx = yv = None
    if criterion == "squared_error" and levels and rows is None:
        # the helper forms [w y, w y^2] per sample itself: no n x 2 array (1.6 MB at 1e5)
        yv = np.ascontiguousarray(Y[:, 0], dtype=np.float64)
        Yw = None
    elif criterion == "squared_error":
        Yw = _weighted_moments(Y[:, 0], w)
    elif n_classes is None:
        Yw = np.ascontiguousarray(Y * w[:, None], dtype=np.float64)
    elif levels:  # the helper adds w_i to class Y_i itself: no n x C array
        yidx = np.ascontiguousarray(Y, dtype=np.int32)
        Yw = None
    else:  # w_i at class Y_i, 0 elsewhere: the entries of one-hot(Y) * w, without one-hot(Y)
        Yw = np.zeros((n, n_classes))
        Yw[np.arange(n), Y] = w
    C = 2 if yv is not None else n_classes if Yw is None else Yw.shape[1]
    if rows is not None:  # the tree's rows of Yw and w at their ids, zero elsewhere
        assert Yw is not None and presorted_order is None
        Yw_all, w_all = np.zeros((n_data, C)), np.zeros(n_data)
        Yw_all[rows], w_all[rows] = Yw, w
        Yw, w = Yw_all, w_all
        rows = np.ascontiguousarray(rows, dtype=np.int32 if n_data < _INT32_LIMIT else np.intp)
    # The helper reads X through its strides: no transposed copy (an N x D array per tree).
    if X.dtype != np.float64 or not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X, dtype=np.float64)
    sx, sf = (d, 1) if X.flags.c_contiguous else (1, n_data)
    if levels:
        # Read only: the caller's feature-major 32- or 16-bit order as it is (presort's).
        wide = np.int32 if presorted_order.dtype != np.uint16 else np.uint16
        order = np.ascontiguousarray(presorted_order.T, dtype=wide)
    elif splitter == "random":
        order = np.arange(n, dtype=np.int64) if rows is None else rows.astype(np.int64)
    elif rows is not None:
        order = _presort_rows(X, rows)
    elif presorted_order is None:
        order = presort(X).T  # feature-major, C-contiguous, 32-bit
    else:  # the helper partitions it in place: a copy of the caller's
        order = np.array(presorted_order.T, dtype=np.int32, order="C")
    seed = int(rng.integers(0, 2**63)) if max_features < d or splitter == "random" else 0
    # A binary tree with non-empty leaves has at most 2 n - 1 nodes, and at most
    # 2^(depth + 1) - 1 below a depth limit (15 for boosting's depth-3 trees): the bound
    # past which the helper reports an error. It grows the tree's buffer (see Tree) from a
    # few nodes, doubling it through _GROW_BUFFER_CALLBACK (``ndarray.resize``: realloc),
    # and packs the nodes at the end, so that the buffer is then cut to the nodes in place.
    # (Arrays of the bound's size were 9 x 8 bytes per sample of every tree, most of them
    # never written; copying the nodes out of them held the tree twice. Shrinking such
    # arrays in place, allocated before the work arrays, once fragmented the heap of a
    # forest, 46 against 30 MB resident for 20 trees on 1e5 x 20; a buffer grown from small
    # keeps it: 33.8 against the peer's 38.2 MB, as with copies of exact size.)
    m = max(2 * n - 1, 1)
    if max_depth is not None and max_depth < 62:
        m = min(m, 2 ** (int(max_depth) + 1) - 1)
    V = 1 if criterion == "squared_error" else C
    depth = np.zeros(1, dtype=np.int64)
    holder = [np.empty(0)]
    max_depth = np.iinfo(np.int64).max if max_depth is None else int(max_depth)
    outputs = (m, _GROW_BUFFER_CALLBACK, ctypes.py_object(holder), depth.ctypes.data)
    if levels:
        count = lib.cart_grow_levels(
            X.ctypes.data,
            sx,
            sf,
            None if Yw is None else Yw.ctypes.data,
            None if yidx is None else yidx.ctypes.data,
            None if yv is None else yv.ctypes.data,
            w.ctypes.data,
            order.ctypes.data,
            int(order.dtype == np.uint16),
            n,
            d,
            C,
            _CRITERIA[criterion],
            max_depth,
            int(min_samples_split),
            int(min_samples_leaf),
            float(min_weight_leaf),
            float(min_impurity_decrease),
            *outputs,
        )
    else:
        assert Yw is not None  # class indices are only passed to cart_grow_levels
        grow = lib.cart_grow_random if splitter == "random" else lib.cart_grow
        count = grow(
            X.ctypes.data,
            sx,
            sf,
            Yw.ctypes.data,
            w.ctypes.data,
            order.ctypes.data,
            n,
            n_data,
            d,
            C,
            _CRITERIA[criterion],
            max_depth,
            int(min_samples_split),
            int(min_samples_leaf),
            float(min_weight_leaf),
            int(max_features),
            float(min_impurity_decrease),
            seed,
            *outputs,
        )
    if count < 0:
        raise MemoryError("growing the tree ran out of memory.")
    del order, Yw, yidx, yv
    nodes = holder.pop()
    nodes.resize(count * (len(_TREE_FIELDS) + V), refcheck=False)  # in place
    return Tree._from_buffer(nodes, count, int(depth[0]))


def _grow_numpy(
    X: np.ndarray,
    Y: np.ndarray,
    w: np.ndarray,
    *,
    criterion: str,
    splitter: str,
    max_depth: int | None,
    min_samples_split: int,
    min_samples_leaf: int,
    min_weight_leaf: float,
    max_features: int,
    min_impurity_decrease: float,
    rng: np.random.Generator,
    presorted_order: np.ndarray | None = None,
) -> Tree:
    """:func:`build_tree` in NumPy: the reference route, and the "random" splitter's."""
    n_samples, n_features = X.shape

    if criterion == "squared_error":
        Yw = np.column_stack([w * Y[:, 0], w * Y[:, 0] ** 2])
    else:
        Yw = Y * w[:, None]
    W_total = w.sum()
    max_depth = np.iinfo(np.int32).max if max_depth is None else max_depth
    min_samples_split = max(min_samples_split, 2 * min_samples_leaf)

    left: list[int] = []
    right: list[int] = []
    feat: list[int] = []
    thr: list[float] = []
    val: list = []
    imp: list[float] = []
    nns: list[int] = []
    wnns: list[float] = []
    depth_reached = 0
    # Stack of (sample ids, depth, parent id, is_left); pushing right before left numbers
    # nodes in pre-order.
    presorted = splitter == "best"
    root: np.ndarray
    if not presorted:
        root = np.arange(n_samples)
    elif presorted_order is not None:
        root = presorted_order
    else:
        root = np.argsort(X, axis=0, kind="stable")
    go = np.zeros(n_samples, dtype=bool)
    stack = [(root, 0, -1, False)]
    while stack:
        order, depth, parent, is_left = stack.pop()
        # With presorting, ``order`` is (n_node, n_features), column j sorted by x_j.
        idx = order[:, 0] if presorted else order
        node_id = len(left)
        if parent >= 0:
            (left if is_left else right)[parent] = node_id
        Yn, wn = Yw[idx], w[idx]
        stat = Yn.sum(axis=0)
        # Class weights summed per class and then together, so a pure node has p = 1 exactly.
        W = wn.sum() if criterion == "squared_error" else stat.sum()
        impurity = float(_impurity_from_stats(stat, np.asarray(W), criterion))
        n = idx.shape[0]
        left.append(-1)
        right.append(-1)
        feat.append(-2)
        thr.append(-2.0)
        imp.append(impurity)
        nns.append(n)
        wnns.append(W)
        val.append(stat[:1] / W if criterion == "squared_error" else stat / W)
        depth_reached = max(depth_reached, depth)

        if (
            depth >= max_depth
            or n < min_samples_split
            or n < 2 * min_samples_leaf
            or W < 2 * min_weight_leaf
            or impurity <= (_EPS * (stat[1] / W) if criterion == "squared_error" else _EPS)
        ):
            continue
        if presorted:
            span = X[order[-1], np.arange(n_features)] - X[order[0], np.arange(n_features)]
        else:
            Xn = X[idx]
            span = Xn.max(axis=0) - Xn.min(axis=0)
        nonconst = np.flatnonzero(span > 0)
        if nonconst.size == 0:
            continue
        if max_features < n_features:
            feats = rng.permutation(n_features)
            feats = feats[np.isin(feats, nonconst)][:max_features]
        else:
            feats = nonconst
        if splitter == "best":
            split = _best_split_sorted(
                X, Yw, w, order, feats, min_samples_leaf, min_weight_leaf, criterion
            )
        else:
            split = _best_split_random(
                Xn, Yn, wn, feats, min_samples_leaf, min_weight_leaf, criterion, rng
            )
        if split is None:
            continue
        f, t, _ = split
        go_left = X[idx, f] <= t
        idxL, idxR = idx[go_left], idx[~go_left]
        if presorted:
            # Stable partition of every sorted column keeps the children's columns sorted.
            go[idxL] = True
            m = go[order].T
            ordT = order.T
            orderL = ordT[m].reshape(n_features, -1).T
            orderR = ordT[~m].reshape(n_features, -1).T
            go[idxL] = False
        else:
            orderL, orderR = idxL, idxR
        sL, sR = Yw[idxL].sum(axis=0), Yw[idxR].sum(axis=0)
        if criterion == "squared_error":
            WL, WR = w[idxL].sum(), w[idxR].sum()
        else:
            WL, WR = sL.sum(), sR.sum()
        iL = float(_impurity_from_stats(sL, np.asarray(WL), criterion))
        iR = float(_impurity_from_stats(sR, np.asarray(WR), criterion))
        improvement = (W / W_total) * (impurity - WL / W * iL - WR / W * iR)
        if improvement + _EPS < min_impurity_decrease:
            continue
        feat[node_id] = f
        thr[node_id] = t
        stack.append((orderR, depth + 1, node_id, False))
        stack.append((orderL, depth + 1, node_id, True))

    return Tree(
        children_left=np.asarray(left, dtype=np.intp),
        children_right=np.asarray(right, dtype=np.intp),
        feature=np.asarray(feat, dtype=np.intp),
        threshold=np.asarray(thr, dtype=np.float64),
        value=np.asarray(val, dtype=np.float64),
        impurity=np.asarray(imp, dtype=np.float64),
        n_node_samples=np.asarray(nns, dtype=np.intp),
        weighted_n_node_samples=np.asarray(wnns, dtype=np.float64),
        max_depth=depth_reached,
    )


def _weakest_link(tree: Tree, ccp_alpha: float | None):
    """Minimal cost-complexity pruning (Breiman et al.; Stuttgart IML §2.6).

    With ``R(t) = W_t / W_root * i(t)``, the branch ``T_t`` is worth keeping while
    ``alpha < g(t) = (R(t) - R(T_t)) / (|leaves(T_t)| - 1)``. Repeatedly collapse the internal
    node with the smallest ``g`` (the lowest id on ties), recording ``g`` and the total leaf
    cost ``R(T)``; stop when ``g > ccp_alpha`` (never, for the path).

    Returns the list of alphas, the list of costs and the mask of nodes kept.
    """
    r_node = tree.weighted_n_node_samples / tree.weighted_n_node_samples[0] * tree.impurity
    size = tree.subtree_size()
    is_leaf = tree.children_left == -1
    parent = np.full(tree.node_count, -1, dtype=np.intp)
    internal = np.flatnonzero(~is_leaf)
    parent[tree.children_left[internal]] = internal
    parent[tree.children_right[internal]] = internal
    n_leaves = is_leaf.astype(np.int64)
    r_branch = np.where(is_leaf, r_node, 0.0)
    for t in range(tree.node_count - 1, -1, -1):
        if not is_leaf[t]:
            cl, cr = tree.children_left[t], tree.children_right[t]
            n_leaves[t] = n_leaves[cl] + n_leaves[cr]
            r_branch[t] = r_branch[cl] + r_branch[cr]
    candidate = ~is_leaf
    in_tree = np.ones(tree.node_count, dtype=bool)
    alphas, costs = [0.0], [float(r_branch[0])]
    while candidate[0]:
        cand = np.flatnonzero(candidate)
        g = (r_node[cand] - r_branch[cand]) / (n_leaves[cand] - 1)
        j = int(np.argmin(g))
        alpha, t = float(g[j]), int(cand[j])
        if ccp_alpha is not None and alpha > ccp_alpha:
            break
        in_tree[t + 1 : t + size[t]] = False
        candidate[t : t + size[t]] = False
        d_leaves, d_r = n_leaves[t] - 1, r_branch[t] - r_node[t]
        n_leaves[t], r_branch[t] = 1, r_node[t]
        a = parent[t]
        while a >= 0:
            n_leaves[a] -= d_leaves
            r_branch[a] -= d_r
            a = parent[a]
        alphas.append(alpha)
        costs.append(float(r_branch[0]))
    return alphas, costs, in_tree


def pruning_path(tree: Tree):
    """The weakest-link sequence: effective alphas and total leaf impurities."""
    alphas, costs, _ = _weakest_link(tree, None)
    return np.asarray(alphas), np.asarray(costs)


def prune_tree(tree: Tree, ccp_alpha: float) -> Tree:
    """The subtree of ``tree`` minimising ``R(T) + ccp_alpha |leaves(T)|``."""
    if ccp_alpha <= 0.0 or tree.node_count == 1:
        return tree
    _, _, keep = _weakest_link(tree, ccp_alpha)
    if keep.all():
        return tree
    new_id = np.cumsum(keep) - 1
    kept = np.flatnonzero(keep)
    cl, cr = tree.children_left[kept], tree.children_right[kept]
    # A kept node whose children were removed becomes a leaf.
    leaf = (cl == -1) | ~keep[np.maximum(cl, 0)]
    children_left = np.where(leaf, -1, new_id[np.maximum(cl, 0)])
    children_right = np.where(leaf, -1, new_id[np.maximum(cr, 0)])
    pruned = Tree(
        children_left=children_left.astype(np.intp),
        children_right=children_right.astype(np.intp),
        feature=np.where(leaf, -2, tree.feature[kept]).astype(np.intp),
        threshold=np.where(leaf, -2.0, tree.threshold[kept]),
        value=tree.value[kept],
        impurity=tree.impurity[kept],
        n_node_samples=tree.n_node_samples[kept],
        weighted_n_node_samples=tree.weighted_n_node_samples[kept],
    )
    pruned.max_depth = int(pruned.depths().max())
    return pruned
