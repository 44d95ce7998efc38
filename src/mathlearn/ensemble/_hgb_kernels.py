"""Numba kernels of histogram gradient boosting, for large inputs (imported on demand).

Small inputs take the NumPy routes of :mod:`._hist_gradient_boosting` (one ``bincount`` per
statistic, cumulative sums for the split gains); these kernels are compiled (and cached in
the user's cache directory, see :mod:`mathlearn.utils._jit`) only when a problem is large
enough for them to pay for their compilation. Both routes add the same numbers in the same
order (rows in index order per bin; bins in order per feature), so they agree exactly.
"""

from __future__ import annotations

import numpy as np

from ..utils._jit import njit


@njit(cache=True, nogil=True)
def histogram(Xb, idx, g, h, n_bins, const_h):  # pragma: no cover - compiled
    """(d, B, 3) sums of ``g``, ``h`` and counts over the rows ``idx`` (a bin's three sums
    share a cache line).

    ``const_h > 0`` means every hessian equals it (squared error with equal weights); the
    hessian sums are then ``const_h`` times the counts.
    """
    d = Xb.shape[1]
    hist = np.zeros((d, n_bins, 3))
    if const_h > 0.0:
        for t in range(idx.shape[0]):
            i = idx[t]
            gi = g[i]
            for j in range(d):
                b = Xb[i, j]
                hist[j, b, 0] += gi
                hist[j, b, 2] += 1.0
        for j in range(d):
            for b in range(n_bins):
                hist[j, b, 1] = hist[j, b, 2] * const_h
    else:
        for t in range(idx.shape[0]):
            i = idx[t]
            gi = g[i]
            hi = h[i]
            for j in range(d):
                b = Xb[i, j]
                hist[j, b, 0] += gi
                hist[j, b, 1] += hi
                hist[j, b, 2] += 1.0
    return hist


@njit(cache=True, nogil=True)
def best_split(hist, msl, min_hess, lam):  # pragma: no cover - compiled
    """``(gain, feature, bin, parent term)`` of the best ``bin <= b`` split of a (d, B, 3)
    histogram; feature -1 if none is valid."""
    d, B = hist.shape[0], hist.shape[1]
    G, H, N = 0.0, 0.0, 0.0
    for b in range(B):
        G += hist[0, b, 0]
        H += hist[0, b, 1]
        N += hist[0, b, 2]
    parent = G * G / (H + lam)
    best, bj, bb = -np.inf, -1, -1
    for j in range(d):
        GL, HL, NL = 0.0, 0.0, 0.0
        for b in range(B - 1):
            GL += hist[j, b, 0]
            HL += hist[j, b, 1]
            NL += hist[j, b, 2]
            GR, HR, NR = G - GL, H - HL, N - NL
            if NL < msl or NR < msl or HL < min_hess or HR < min_hess:
                continue
            if HL + lam <= 0.0 or HR + lam <= 0.0:
                continue
            gain = GL * GL / (HL + lam) + GR * GR / (HR + lam) - parent
            if gain > best:
                best, bj, bb = gain, j, b
    return best, bj, bb, parent


@njit(cache=True, nogil=True)
def _evaluate(hist, t, count, depth, max_depth, msl, min_hess, lam, gain, split_j, split_b):
    if depth[t] >= max_depth or count < 2 * msl:
        return False
    g, j, b, parent = best_split(hist[t], float(msl), min_hess, lam)
    if j < 0 or not g > 1e-12 * abs(parent) or not np.isfinite(g):
        return False
    gain[t], split_j[t], split_b[t] = g, j, b
    return True


@njit(cache=True, nogil=True)
def grow_tree(
    Xb, g, h, const_h, n_bins, max_leaf_nodes, max_depth, msl, min_hess, lam
):  # pragma: no cover - compiled
    """Grow one tree leaf-wise, as ``_Grower.grow`` does, in one compiled call.

    Samples are kept in ``order`` with node ``t`` owning ``order[start[t]:end[t]]``; a split
    partitions that range stably (so every node's samples stay in increasing index order,
    the order the NumPy route sums them in). Of two children only the smaller one's
    histogram is summed; the larger one's is the parent's minus it. The leaf with the
    largest gain is split next (the lowest node id on ties).

    Returns ``order, start, end, depth, left, right, split_j, split_b, gain, n_nodes``.
    """
    n = Xb.shape[0]
    d = Xb.shape[1]
    max_nodes = 2 * max_leaf_nodes - 1
    order = np.arange(n)
    buf = np.empty(n, dtype=np.int64)
    start = np.zeros(max_nodes, dtype=np.int64)
    end = np.zeros(max_nodes, dtype=np.int64)
    depth = np.zeros(max_nodes, dtype=np.int64)
    left = np.full(max_nodes, -1, dtype=np.int64)
    right = np.full(max_nodes, -1, dtype=np.int64)
    split_j = np.full(max_nodes, -1, dtype=np.int64)
    split_b = np.full(max_nodes, -1, dtype=np.int64)
    gain = np.full(max_nodes, -np.inf)
    cand = np.zeros(max_nodes, dtype=np.bool_)
    hist = np.empty((max_nodes, d, n_bins, 3))
    end[0] = n
    hist[0] = histogram(Xb, order, g, h, n_bins, const_h)
    cand[0] = _evaluate(hist, 0, n, depth, max_depth, msl, min_hess, lam, gain, split_j, split_b)
    n_nodes = 1
    n_leaves = 1
    while n_leaves < max_leaf_nodes:
        t = -1
        for s in range(n_nodes):
            if cand[s] and (t < 0 or gain[s] > gain[t]):
                t = s
        if t < 0:
            break
        cand[t] = False
        j, b = split_j[t], split_b[t]
        lo, hi = start[t], end[t]
        nl = 0
        nr = 0
        for p in range(lo, hi):
            i = order[p]
            if Xb[i, j] <= b:
                order[lo + nl] = i
                nl += 1
            else:
                buf[nr] = i
                nr += 1
        for q in range(nr):
            order[lo + nl + q] = buf[q]
        L, R = n_nodes, n_nodes + 1
        left[t], right[t] = L, R
        start[L], end[L], start[R], end[R] = lo, lo + nl, lo + nl, hi
        depth[L] = depth[R] = depth[t] + 1
        if nl <= nr:
            hist[L] = histogram(Xb, order[lo : lo + nl], g, h, n_bins, const_h)
            hist[R] = hist[t] - hist[L]
        else:
            hist[R] = histogram(Xb, order[lo + nl : hi], g, h, n_bins, const_h)
            hist[L] = hist[t] - hist[R]
        n_nodes += 2
        n_leaves += 1
        cand[L] = _evaluate(
            hist, L, nl, depth, max_depth, msl, min_hess, lam, gain, split_j, split_b
        )
        cand[R] = _evaluate(
            hist, R, nr, depth, max_depth, msl, min_hess, lam, gain, split_j, split_b
        )
    return order, start, end, depth, left, right, split_j, split_b, gain, n_nodes
