"""Histogram-based gradient boosting: binned features, leaf-wise trees, Newton leaves."""

from __future__ import annotations

import ctypes
import heapq
import weakref
from numbers import Integral, Real

import numpy as np

from .._ext import load as _load_ext
from ..base import BaseClassifier, BaseEstimator, RegressorMixin, _fit_context, check_is_fitted
from ..tree._tree import Tree
from ..utils._param_validation import Interval, StrOptions
from ..utils.extmath import log_softmax, logsumexp, sigmoid, softmax
from ..utils.validation import check_random_state, check_sample_weight, validate_data
from ._gb_losses import weighted_quantile

__all__ = ["HistGradientBoostingClassifier", "HistGradientBoostingRegressor"]

# Rows used to place the quantile bin edges of a feature.
_BIN_SUBSAMPLE = 200_000


def _hgb_lib():
    """The plain-C tree grower ``mathlearn._ext._hgb`` (built at install), or None."""
    lib = _load_ext("_hgb")
    if lib is not None and not getattr(lib, "_typed", False):
        i64, f64, ptr = ctypes.c_int64, ctypes.c_double, ctypes.c_void_p
        lib.hgb_grow_tree.restype = i64
        lib.hgb_grow_tree.argtypes = [ptr, i64, i64, ptr, ptr, f64, i64, i64, i64, i64, f64]
        lib.hgb_grow_tree.argtypes += [f64, i64] + [ptr] * 10
        lib.hgb_pool_new.restype = ptr
        lib.hgb_pool_new.argtypes = []
        lib.hgb_pool_free.restype = None
        lib.hgb_pool_free.argtypes = [ptr]
        lib._typed = True
    return lib


def bin_edges(X: np.ndarray, max_bins: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Upper bin edges per feature: midpoints of distinct values, or quantiles of a subsample.

    A feature with at most ``max_bins`` distinct values gets one bin per value (edges at the
    midpoints); otherwise the edges are its ``k / max_bins`` quantiles, ``k = 1 ..
    max_bins - 1`` (duplicates removed), so every bin holds about ``n / max_bins`` samples.
    """
    if X.shape[0] > _BIN_SUBSAMPLE:
        X = X[rng.choice(X.shape[0], _BIN_SUBSAMPLE, replace=False)]
    edges = []
    n = X.shape[0]
    # Quantile positions q (n - 1); the "midpoint" quantile averages the two order
    # statistics around each.
    pos = np.linspace(0.0, 1.0, max_bins + 1)[1:-1] * (n - 1)
    lo, hi = np.floor(pos).astype(np.intp), np.ceil(pos).astype(np.intp)
    for j in range(X.shape[1]):
        s = np.sort(X[:, j])
        u = s[np.r_[True, s[1:] != s[:-1]]]
        if u.shape[0] <= max_bins:
            e = u[:-1] / 2.0 + u[1:] / 2.0
        else:
            e = np.unique(s[lo] / 2.0 + s[hi] / 2.0)
        edges.append(e)
    return edges


def apply_bins(X: np.ndarray, edges: list[np.ndarray]) -> np.ndarray:
    """Bin index of every entry: ``x`` goes to bin ``b`` when ``e[b-1] < x <= e[b]``.

    The result is the transpose of a C-contiguous (n_features, n_samples) array: each
    feature's bins are contiguous, as the compiled grower reads them.
    """
    XbT = np.empty(X.shape[::-1], dtype=np.uint8)
    for j, e in enumerate(edges):
        XbT[j] = np.searchsorted(e, np.ascontiguousarray(X[:, j]), side="left")
    Xb = XbT.T
    return Xb


class _Grower:
    """Grows one tree leaf-wise on binned data from gradients ``g`` and hessians ``h``."""

    def __init__(self, Xb, n_bins, max_leaf_nodes, max_depth, min_samples_leaf, l2, min_hess):
        self.Xb = Xb
        self.n, self.d = Xb.shape
        self.B = int(n_bins)
        self.offsets = (np.arange(self.d) * self.B).astype(np.intp)
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = np.inf if max_depth is None else max_depth
        self.msl = min_samples_leaf
        self.l2 = l2
        self.min_hess = min_hess
        # A node of fewer rows keeps no histogram for its children to subtract from: they
        # are summed from their rows, about as cheap as subtracting d x B cells.
        self.keep_min = 2 * self.B
        # The compiled grower indexes rows and counts them in 32-bit integers.
        self.lib = _hgb_lib() if self.n < 2**31 else None
        # The C grower reads the bins feature by feature: one contiguous row per feature,
        # and keeps its histogram buffers from one tree to the next in a pool that lives
        # as long as this grower.
        self.XbT = np.ascontiguousarray(Xb.T) if self.lib is not None else None  # no copy
        self._pool = None
        if self.lib is not None:
            self._pool = self.lib.hgb_pool_new()
            if not self._pool:
                raise MemoryError("could not allocate the tree grower's histogram pool.")
            weakref.finalize(self, self.lib.hgb_pool_free, self._pool)

    def histogram(self, idx, g, h, const_h):
        """(3, d, B) sums of g, h and counts over the rows ``idx``, one bincount each."""
        flat = (self.Xb[idx].astype(np.intp) + self.offsets).ravel()
        size = self.d * self.B
        cnt = np.bincount(flat, minlength=size).reshape(self.d, self.B).astype(np.float64)
        G = np.bincount(flat, weights=np.repeat(g[idx], self.d), minlength=size)
        H = cnt * const_h if const_h else None
        if H is None:
            H = np.bincount(flat, weights=np.repeat(h[idx], self.d), minlength=size)
            H = H.reshape(self.d, self.B)
        return np.stack([G.reshape(self.d, self.B), H, cnt])

    def best_split(self, hist):
        """``(gain, feature, bin)`` maximising the gain of ``x_j <= bin``, or None."""
        cum = np.cumsum(hist[:, :, :-1], axis=2)
        tot = hist[:, 0].sum(axis=1)  # (3,) totals, identical for every feature
        GL, HL, nL = cum
        GR, HR, nR = tot[0] - GL, tot[1] - HL, tot[2] - nL
        lam = self.l2
        valid = (
            (nL >= self.msl)
            & (nR >= self.msl)
            & (HL >= self.min_hess)
            & (HR >= self.min_hess)
            & (HL + lam > 0)
            & (HR + lam > 0)
        )
        if not valid.any():
            return None
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = GL * GL / (HL + lam) + GR * GR / (HR + lam) - tot[0] ** 2 / (tot[1] + lam)
        gain = np.where(valid, gain, -np.inf)
        k = int(np.argmax(gain))
        j, b = divmod(k, gain.shape[1])
        if not gain[j, b] > 1e-12 * abs(tot[0] ** 2 / (tot[1] + lam)) or not np.isfinite(
            gain[j, b]
        ):
            return None
        return float(gain[j, b]), j, b

    def grow(self, g, h, const_h, idx_root):
        if self.lib is not None:
            return self._grow_compiled(g, h, const_h)
        nodes = []  # dicts: idx, hist, depth, split, children
        root = {"idx": idx_root, "hist": self.histogram(idx_root, g, h, const_h), "depth": 0}
        nodes.append(root)
        heap = []

        def consider(node_id):
            node = nodes[node_id]
            hist, node["hist"] = node["hist"], None
            if node["depth"] >= self.max_depth or node["idx"].shape[0] < 2 * self.msl:
                return
            split = self.best_split(hist)
            if split is not None:
                node["split"] = split
                if node["idx"].shape[0] >= self.keep_min:  # kept for the children
                    node["hist"] = hist
                heapq.heappush(heap, (-split[0], node_id))

        consider(0)
        n_leaves = 1
        while heap and n_leaves < self.max_leaf_nodes:
            _, nid = heapq.heappop(heap)
            node = nodes[nid]
            _, j, b = node["split"]
            idx = node["idx"]
            go_left = self.Xb[idx, j] <= b
            iL, iR = idx[go_left], idx[~go_left]
            # Histogram subtraction: build the smaller child's, subtract for the other
            # (a parent below keep_min rows kept none: build both).
            small, large = (iL, iR) if iL.shape[0] <= iR.shape[0] else (iR, iL)
            h_small = self.histogram(small, g, h, const_h)
            if node["hist"] is None:
                h_large = self.histogram(large, g, h, const_h)
            else:
                h_large = node["hist"] - h_small
                if const_h:  # equal hessians: a cell's sum is its count times h, as in C
                    np.multiply(h_large[2], const_h, out=h_large[1])
            hL, hR = (h_small, h_large) if small is iL else (h_large, h_small)
            node["hist"] = None
            node["children"] = (len(nodes), len(nodes) + 1)
            for ii, hh in ((iL, hL), (iR, hR)):
                nodes.append({"idx": ii, "hist": hh, "depth": node["depth"] + 1})
            consider(len(nodes) - 2)
            consider(len(nodes) - 1)
            n_leaves += 1
        return nodes

    def _grow_compiled(self, g, h, const_h):
        """The same tree from one call of the C grower, as the node dicts of :meth:`grow`."""
        max_depth = np.iinfo(np.int64).max if self.max_depth is np.inf else int(self.max_depth)
        m = 2 * int(self.max_leaf_nodes) - 1
        g = np.ascontiguousarray(g, dtype=np.float64)
        h = np.ascontiguousarray(h, dtype=np.float64)
        order = np.empty(self.n, dtype=np.int32)  # rows as 32-bit integers (n < 2^31)
        start, end, depth, left, right, sj, sb = (np.empty(m, dtype=np.int64) for _ in range(7))
        gain = np.empty(m)
        n_nodes = self.lib.hgb_grow_tree(
            self.XbT.ctypes.data,
            self.n,
            self.d,
            g.ctypes.data,
            h.ctypes.data,
            float(const_h),
            self.B,
            int(self.max_leaf_nodes),
            max_depth,
            int(self.msl),
            float(self.min_hess),
            float(self.l2),
            self.keep_min,
            order.ctypes.data,
            start.ctypes.data,
            end.ctypes.data,
            depth.ctypes.data,
            left.ctypes.data,
            right.ctypes.data,
            sj.ctypes.data,
            sb.ctypes.data,
            gain.ctypes.data,
            self._pool,
        )
        if n_nodes < 0:
            raise MemoryError("growing the boosting tree ran out of memory.")
        if self.n <= 65_536:
            # NumPy widens 32-bit indices at every fancy index (three per leaf); on small
            # data that costs more than widening the whole order once (at most 512 KiB).
            order = order.astype(np.intp)
        nodes = []
        for t in range(n_nodes):
            node = {"idx": order[start[t] : end[t]], "depth": int(depth[t])}
            if left[t] >= 0:
                node["split"] = (float(gain[t]), int(sj[t]), int(sb[t]))
                node["children"] = (int(left[t]), int(right[t]))
            nodes.append(node)
        return nodes


def _to_tree(nodes, edges, g, h, l2, learning_rate, leaf_value=None):
    """Flat pre-order :class:`Tree` with leaf values ``-nu G / (H + l2)``; leaf id per node.

    ``leaf_value(idx)``, when given, replaces the Newton step of the leaf holding the rows
    ``idx`` (then multiplied by ``nu``): the line search of a loss without a useful second
    derivative, such as the median of the residuals for the absolute error.
    """
    order = []
    stack = [0]
    while stack:
        t = stack.pop()
        order.append(t)
        if "children" in nodes[t]:
            stack.append(nodes[t]["children"][1])
            stack.append(nodes[t]["children"][0])
    new_id = {t: i for i, t in enumerate(order)}
    m = len(order)
    left = np.full(m, -1, dtype=np.intp)
    right = np.full(m, -1, dtype=np.intp)
    feat = np.full(m, -2, dtype=np.intp)
    thr = np.full(m, -2.0)
    value = np.zeros((m, 1))
    count = np.zeros(m, dtype=np.intp)
    hess = np.zeros(m)
    leaves = []
    for t in order:
        i = new_id[t]
        node = nodes[t]
        idx = node["idx"]
        count[i] = idx.shape[0]
        if "children" in node:
            _, j, b = node["split"]
            cl, cr = node["children"]
            left[i], right[i] = new_id[cl], new_id[cr]
            feat[i], thr[i] = j, edges[j][b]
        else:
            # Only leaves predict; internal nodes keep value 0 and their children's hessians.
            G, H = g[idx].sum(), h[idx].sum()
            hess[i] = H
            if leaf_value is not None:
                value[i, 0] = learning_rate * leaf_value(idx)
            else:
                value[i, 0] = -learning_rate * G / (H + l2) if H + l2 > 0 else 0.0
            leaves.append((idx, value[i, 0]))
    for i in range(m - 1, -1, -1):
        if left[i] >= 0:
            hess[i] = hess[left[i]] + hess[right[i]]
    tree = Tree(
        children_left=left,
        children_right=right,
        feature=feat,
        threshold=thr,
        value=value,
        impurity=np.zeros(m),
        n_node_samples=count,
        weighted_n_node_samples=hess,
    )
    return tree, leaves


def _weighted_median(values: np.ndarray, w: np.ndarray) -> float:
    """The median of ``values``: NumPy's (middle two averaged) for equal weights, otherwise
    the smallest value whose cumulative weight reaches half the total."""
    if np.all(w == w[0]):
        return float(np.median(values))
    return weighted_quantile(values, w, 0.5)


def _weights(sample_weight, X):
    """Validated per-sample weights; unit weights as a read-only view of one 1.0 (no n-long
    array: every product with it rounds as with an array of ones)."""
    if sample_weight is None:
        return np.broadcast_to(np.float64(1.0), (X.shape[0],))
    return check_sample_weight(sample_weight, X)


class _BaseHGB(BaseEstimator):
    _common_test_params = {"max_iter": 10}

    def _es_enabled(self, n):
        if self.early_stopping == "auto":
            return n > 10_000
        return bool(self.early_stopping)

    def _fit_hgb(self, X, y, w, kind, K):
        """``kind`` is "squared", "absolute", "binomial" or "multinomial"; ``y`` indices or
        values."""
        regression = kind in ("squared", "absolute")
        rng = check_random_state(self.random_state)
        X_val = None
        if self._es_enabled(X.shape[0]):
            from sklearn.model_selection import train_test_split

            seed = int(rng.integers(np.iinfo(np.int32).max))
            try:
                X, X_val, y, y_val, w, w_val = train_test_split(
                    X,
                    y,
                    w,
                    test_size=self.validation_fraction,
                    random_state=seed,
                    stratify=None if regression else y,
                )
            except ValueError as exc:
                raise ValueError(
                    f"Early stopping could not hold out validation_fraction="
                    f"{self.validation_fraction} of the samples: {exc}"
                ) from exc
        n = X.shape[0]
        self._edges = bin_edges(X, self.max_bins, rng)
        Xb = apply_bins(X, self._edges)
        n_bins = max(e.shape[0] for e in self._edges) + 1
        K_trees = 1 if kind != "multinomial" else K
        if kind == "squared":
            init = np.array([np.average(y, weights=w)])
        elif kind == "absolute":
            init = np.array([_weighted_median(y, w)])
        elif kind == "binomial":
            p = np.average(y, weights=w)
            if not 0.0 < p < 1.0:
                raise ValueError("The training part lacks one of the two classes.")
            init = np.array([np.log(p) - np.log1p(-p)])
        else:
            prior = np.bincount(y, weights=w, minlength=K) / w.sum()
            if np.any(prior == 0):
                raise ValueError("The training part lacks a class.")
            logp = np.log(prior)
            # Equal priors give exactly zero (rounding of the mean would break the tie).
            init = np.zeros(K) if np.all(logp == logp[0]) else logp - logp.mean()
        self._baseline_prediction = init
        F = np.tile(init, (n, 1))
        grower = _Grower(
            Xb,
            n_bins,
            self.max_leaf_nodes,
            self.max_depth,
            self.min_samples_leaf,
            self.l2_regularization,
            0.0 if regression else 1e-3,
        )
        onehot = (y[:, None] == np.arange(K)) if kind == "multinomial" else None
        predictors = []
        train_scores, val_scores = [], []
        if X_val is not None:
            F_val = np.tile(init, (X_val.shape[0], 1))
            val_scores.append(self._loss(kind, y_val, F_val, w_val))
        all_idx = np.arange(n) if grower.lib is None else None  # the NumPy route's root
        const_h = regression and np.all(w == w[0])
        unit_w = bool(np.all(w == 1.0))
        leaf_value = None
        for _ in range(self.max_iter):
            if kind == "squared":
                G = w * (F[:, 0] - y)
                Hs = np.broadcast_to(w, (n,))
                Gs, Hss = [G], [Hs]
            elif kind == "absolute":
                # Gradient sign(F - y) (-1 at a tie), unit hessian: the tree is grown as a
                # least-squares fit to the signs; its leaves then take the median residual.
                Gs, Hss = [w * np.where(F[:, 0] > y, 1.0, -1.0)], [np.broadcast_to(w, (n,))]
                resid = y - F[:, 0]

                def leaf_value(idx, resid=resid):
                    return _weighted_median(resid[idx], w[idx])

            elif kind == "binomial":
                # g = w (p - y), h = w p (1 - p) with the same roundings, in place
                p = sigmoid(F[:, 0])
                if unit_w:  # p (1 - p) as (1 p)(1 - p) rounds, without a temporary
                    h_ = np.subtract(1.0, p)
                    h_ *= p
                    p -= y
                else:
                    h_ = w * p
                    h_ *= 1.0 - p
                    p -= y
                    p *= w
                Gs, Hss = [p], [h_]
            else:
                P = softmax(F, axis=1)
                Gs = [w * (P[:, k] - onehot[:, k]) for k in range(K)]
                Hss = [w * P[:, k] * (1.0 - P[:, k]) for k in range(K)]
            stage = []
            for k in range(K_trees):
                nodes = grower.grow(Gs[k], Hss[k], w[0] if const_h else 0.0, all_idx)
                tree, leaves = _to_tree(
                    nodes,
                    self._edges,
                    Gs[k],
                    Hss[k],
                    self.l2_regularization,
                    self.learning_rate,
                    leaf_value,
                )
                for idx, v in leaves:
                    F[idx, k] += v
                stage.append(tree)
            predictors.append(stage)
            if X_val is not None:
                train_scores.append(self._loss(kind, y, F, w))
                for k, tree in enumerate(stage):
                    F_val[:, k] += tree.value[tree.apply(X_val), 0]
                val_scores.append(self._loss(kind, y_val, F_val, w_val))
                m = self.n_iter_no_change
                if len(val_scores) > m:
                    reference = val_scores[-m - 1]
                    if all(s > reference - self.tol for s in val_scores[-m:]):
                        break
        self._predictors = predictors
        self.n_iter_ = len(predictors)
        self.n_trees_per_iteration_ = K_trees
        self.train_score_ = np.asarray(train_scores)
        self.validation_score_ = np.asarray(val_scores)
        return self

    @staticmethod
    def _loss(kind, y, F, w):
        if kind == "squared":
            return float(np.average(0.5 * (y - F[:, 0]) ** 2, weights=w))
        if kind == "absolute":
            return float(np.average(np.abs(y - F[:, 0]), weights=w))
        if kind == "binomial":
            f = F[:, 0]
            return float(np.average(np.logaddexp(0.0, f) - y * f, weights=w))
        lse = logsumexp(F, axis=1)
        return float(np.average(lse - F[np.arange(y.shape[0]), y], weights=w))

    def _raw_predict(self, X):
        F = np.tile(self._baseline_prediction, (X.shape[0], 1))
        for stage in self._predictors:
            for k, tree in enumerate(stage):
                F[:, k] += tree.value[tree.apply(X), 0]
        return F

    def _validate_X_predict(self, X):
        return validate_data(self, X, dtype=np.float64, reset=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


_HGB_CONSTRAINTS = {
    "learning_rate": [Interval(Real, 0.0, None, closed="neither")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "max_leaf_nodes": [Interval(Integral, 2, None, closed="left")],
    "max_depth": [Interval(Integral, 1, None, closed="left"), None],
    "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
    "l2_regularization": [Interval(Real, 0.0, None, closed="left")],
    "max_bins": [Interval(Integral, 2, 255, closed="both")],
    "early_stopping": [StrOptions({"auto"}), "boolean"],
    "validation_fraction": [Interval(Real, 0.0, 1.0, closed="neither")],
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0.0, None, closed="left")],
    "random_state": ["random_state"],
}

_HGB_NOTES = """
    Histogram gradient boosting (Ke et al. 2017, LightGBM; Chen and Guestrin 2016, XGBoost;
    the second-order form of Friedman 2001's gradient boosting, Stuttgart "Introduction to
    Machine Learning" §2.6, slides 7:21-7:24) first maps every feature to at most
    ``max_bins`` bins at its quantiles, so a split is "bin <= b". At each iteration the
    gradients ``g_i = w_i dL/dF`` and hessians ``h_i = w_i d^2L/dF^2`` at the current ``F``
    are summed per (feature, bin): a node's histogram. The gain of a split is

    .. math::

        \\text{gain} = \\frac{G_L^2}{H_L + \\lambda} + \\frac{G_R^2}{H_R + \\lambda}
        - \\frac{G^2}{H + \\lambda},

    read off cumulative sums of the histogram for every bin at once; a leaf's value is the
    regularised Newton step ``-nu G / (H + lambda)``, ``lambda = l2_regularization``.
    Children need ``min_samples_leaf`` samples (and, for the log-loss, a hessian of at least
    1e-3). Trees grow leaf-wise (best gain first) up to ``max_leaf_nodes`` leaves; of two
    children only the smaller one's histogram is summed, the other is the parent's minus it
    (histogram subtraction), except below ``2 B`` rows (``B`` bins), where the parent keeps
    no histogram and both children are summed, about as cheap as subtracting ``D B`` cells.
    Ties go to the lowest feature, then the lowest bin. Each tree
    is grown by one call of the plain-C helper ``mathlearn._ext._hgb``, built when mathlearn
    is installed (nothing is compiled at run time); a source tree where it was never built
    takes the NumPy route, which grows the same trees from the same sums.

    Early stopping (``early_stopping=True``, or ``"auto"`` with more than 10 000 samples)
    holds out ``validation_fraction`` and stops when none of the last ``n_iter_no_change``
    held-out losses is below the one before them by more than ``tol``.

    Cost: binning sorts a subsample of each feature and maps ``X`` once (``O(D N log B)``
    with ``B = max_bins``); each iteration sums histograms over the rows of the smaller
    child at every split, ``O(D N log L)`` at worst for ``L = max_leaf_nodes`` leaves (the
    rows of a level are summed once; subtraction gives the larger children), scans
    ``O(L D B)`` bins, and updates the gradients in ``O(N)`` (``O(N K)`` for ``K`` classes).
    Memory: the bins as bytes (``N D``), ``O(N K)`` for ``F`` and the gradients, 4 bytes a
    row for the row order, and ``O(min(L, N / B) D B)`` for the histograms (12 bytes a cell
    with equal hessians, 20 otherwise), one per leaf that may still be split.
"""


class HistGradientBoostingRegressor(RegressorMixin, _BaseHGB):
    """Histogram-based gradient boosting for regression (squared or absolute error).

    Parameters
    ----------
    loss : {"squared_error", "absolute_error"}, default="squared_error"
        ``"squared_error"``: ``L = (y - F)^2 / 2``, so ``g = F - y`` and ``h = 1``.
        ``"absolute_error"``: ``L = |y - F|``, robust to outliers in ``y``. Its second
        derivative is zero almost everywhere, so each tree is grown on ``g = sign(F - y)``
        with ``h = 1`` and each leaf then takes the median of its residuals ``y - F`` (times
        ``learning_rate``; weighted median with unequal weights), the line search of
        Friedman's (2001) least-absolute-deviation boosting; ``l2_regularization`` acts on
        the splits only. The first prediction is the median of ``y``.
    learning_rate : float, default=0.1
        Shrinkage ``nu``.
    max_iter : int, default=100
        Boosting iterations (trees).
    max_leaf_nodes : int, default=31
    max_depth : int or None, default=None
    min_samples_leaf : int, default=20
    l2_regularization : float, default=0.0
        ``lambda`` added to every hessian sum.
    max_bins : int, default=255
        At most 255 bins per feature.
    early_stopping : "auto" or bool, default="auto"
    validation_fraction : float, default=0.1
    n_iter_no_change : int, default=10
    tol : float, default=1e-7
    random_state : int, Generator, RandomState or None, default=None
        Drives the binning subsample and the validation split.

    Attributes
    ----------
    n_iter_ : int
        Iterations run.
    n_trees_per_iteration_ : int
    train_score_ : ndarray of shape (n_iter_,) or (0,)
        Weighted mean loss (``(y - F)^2 / 2`` or ``|y - F|``) on the training part after each
        iteration,
        recorded with early stopping only (empty otherwise, as it costs a pass over the
        data per iteration).
    validation_score_ : ndarray of shape (n_iter_ + 1,) or (0,)
        Held-out loss before and after each iteration (empty without early stopping).
    n_features_in_ : int

    See Also
    --------
    GradientBoostingRegressor : Exact splits on unbinned data.
    HistGradientBoostingClassifier : The log-loss.

    Notes
    -----"""

    __doc__ += (
        _HGB_NOTES
        + """
    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.ensemble import HistGradientBoostingRegressor
    >>> X = np.linspace(0, 6, 2000)[:, None]
    >>> reg = HistGradientBoostingRegressor(max_iter=50).fit(X, np.sin(X[:, 0]))
    >>> bool(np.max(np.abs(reg.predict(X) - np.sin(X[:, 0]))) < 0.1)
    True
    """
    )

    _parameter_constraints = {
        "loss": [StrOptions({"squared_error", "absolute_error"})],
        **_HGB_CONSTRAINTS,
    }

    def __init__(
        self,
        loss: str = "squared_error",
        *,
        learning_rate: float = 0.1,
        max_iter: int = 100,
        max_leaf_nodes: int = 31,
        max_depth: int | None = None,
        min_samples_leaf: int = 20,
        l2_regularization: float = 0.0,
        max_bins: int = 255,
        early_stopping: str | bool = "auto",
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 10,
        tol: float = 1e-7,
        random_state=None,
    ):
        self.loss = loss
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.max_bins = max_bins
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.random_state = random_state

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit the boosted trees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : HistGradientBoostingRegressor
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D; got shape {y.shape}.")
        w = _weights(sample_weight, X)
        if not np.any(w > 0):
            raise ValueError("sample_weight is zero for every sample; nothing to fit.")
        y = y.astype(np.float64, copy=False)  # (read only: y / scale below is new)
        top = float(np.max(np.abs(y)))
        self._scale = float(np.ldexp(1.0, int(np.frexp(top)[1]) - 1)) if top > 0 else 1.0
        kind = "squared" if self.loss == "squared_error" else "absolute"
        self._fit_hgb(X, y / self._scale, w, kind, 1)
        return self

    def predict(self, X) -> np.ndarray:
        """``F(x)``, shape (n_samples,)."""
        check_is_fitted(self)
        return self._raw_predict(self._validate_X_predict(X))[:, 0] * self._scale


class HistGradientBoostingClassifier(BaseClassifier, _BaseHGB):
    """Histogram-based gradient boosting for classification with the log-loss.

    Parameters
    ----------
    loss : {"log_loss"}, default="log_loss"
        Binomial (one tree per iteration) or multinomial (``K`` trees) log-loss; ``g = p - y``,
        ``h = p (1 - p)`` per class.
    learning_rate : float, default=0.1
    max_iter : int, default=100
    max_leaf_nodes : int, default=31
    max_depth : int or None, default=None
    min_samples_leaf : int, default=20
    l2_regularization : float, default=0.0
    max_bins : int, default=255
    early_stopping : "auto" or bool, default="auto"
    validation_fraction : float, default=0.1
        Held out, stratified.
    n_iter_no_change : int, default=10
    tol : float, default=1e-7
    random_state : int, Generator, RandomState or None, default=None
        See :class:`HistGradientBoostingRegressor` for all of these.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : int
    n_trees_per_iteration_ : int
    train_score_ : ndarray of shape (n_iter_,) or (0,)
        Mean log-loss on the training part after each iteration (with early stopping).
    validation_score_ : ndarray
    n_features_in_ : int

    See Also
    --------
    GradientBoostingClassifier : Exact splits on unbinned data.

    Notes
    -----"""

    __doc__ += (
        _HGB_NOTES
        + """
    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from mathlearn.ensemble import HistGradientBoostingClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = HistGradientBoostingClassifier(max_iter=30).fit(X, y)
    >>> bool(clf.score(X, y) > 0.97)
    True
    """
    )

    _parameter_constraints = {"loss": [StrOptions({"log_loss"})], **_HGB_CONSTRAINTS}

    def __init__(
        self,
        loss: str = "log_loss",
        *,
        learning_rate: float = 0.1,
        max_iter: int = 100,
        max_leaf_nodes: int = 31,
        max_depth: int | None = None,
        min_samples_leaf: int = 20,
        l2_regularization: float = 0.0,
        max_bins: int = 255,
        early_stopping: str | bool = "auto",
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 10,
        tol: float = 1e-7,
        random_state=None,
    ):
        self.loss = loss
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.max_bins = max_bins
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.random_state = random_state

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit the boosted trees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : HistGradientBoostingClassifier
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        y_idx = self._encode_labels(y)
        w = _weights(sample_weight, X)
        K = self.classes_.shape[0]
        if np.any(np.bincount(y_idx, weights=w, minlength=K) <= 0):
            raise ValueError("Every class needs a positive total sample_weight.")
        if K == 2:
            y_float = y_idx.astype(np.float64)
            del y_idx  # the float copy replaces it during the fit
            self._fit_hgb(X, y_float, w, "binomial", 2)
        else:
            self._fit_hgb(X, y_idx, w, "multinomial", K)
        return self

    def _joint_log_likelihood(self, X):
        F = self._raw_predict(X)
        return np.column_stack([np.zeros(F.shape[0]), F[:, 0]]) if F.shape[1] == 1 else F

    def decision_function(self, X) -> np.ndarray:
        """Raw scores ``F(x)``: the log-odds for two classes, shape (n_samples,); otherwise
        the ``K`` scores whose softmax is ``predict_proba``, shape (n_samples, n_classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        F = self._raw_predict(self._validate_X_predict(X))
        return F[:, 0] if F.shape[1] == 1 else F

    def staged_predict_proba(self, X):
        """Class probabilities after each iteration.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        X = self._validate_X_predict(X)
        F = np.tile(self._baseline_prediction, (X.shape[0], 1))
        for stage in self._predictors:
            for k, tree in enumerate(stage):
                F[:, k] += tree.value[tree.apply(X), 0]
            jll = np.column_stack([np.zeros(F.shape[0]), F[:, 0]]) if F.shape[1] == 1 else F
            yield np.exp(log_softmax(jll, axis=1))
