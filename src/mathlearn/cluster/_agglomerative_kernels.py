"""Numba kernels of agglomerative clustering, for many samples (imported on demand).

Fewer samples take the NumPy routes of :mod:`._agglomerative`; these kernels are compiled (and
cached in the user's cache directory, see :mod:`mathlearn.utils._jit`) only where a problem is
large enough for them to pay for their compilation.
"""

from __future__ import annotations

import numpy as np

from ..utils._jit import njit


@njit()
def _cidx(n, i, j):  # pragma: no cover
    """Index of the pair ``i < j`` in the condensed (upper-triangle, row-major) matrix."""
    return n * i - (i * (i + 1)) // 2 + (j - i - 1)


@njit()
def _condensed_euclidean(X):  # pragma: no cover
    n, d = X.shape
    out = np.empty(n * (n - 1) // 2)
    p = 0
    for i in range(n):
        for j in range(i + 1, n):
            s = 0.0
            for k in range(d):
                r = X[i, k] - X[j, k]
                s += r * r
            out[p] = np.sqrt(s)
            p += 1
    return out


@njit()
def _nn_chain(D, n, method):  # pragma: no cover
    """Nearest-neighbour chain on the condensed distances ``D`` (overwritten).

    Follows each cluster's nearest neighbour until two clusters are each other's nearest
    neighbours (reciprocal pair), merges them, and updates the distances to the merged cluster
    by Lance-Williams. Valid for linkages that satisfy the reducibility property (complete,
    average, Ward). Merged cluster keeps the larger index ``y``.
    """
    Z = np.empty((n - 1, 4))
    size = np.ones(n)
    chain = np.empty(n, dtype=np.int64)
    length = 0
    for k in range(n - 1):
        if length == 0:
            length = 1
            for i in range(n):
                if size[i] > 0:
                    chain[0] = i
                    break
        while True:
            x = chain[length - 1]
            if length > 1:
                y = chain[length - 2]
                a, b = (x, y) if x < y else (y, x)
                current = D[_cidx(n, a, b)]
            else:
                y = -1
                current = np.inf
            for i in range(n):
                if size[i] == 0 or i == x:
                    continue
                a, b = (x, i) if x < i else (i, x)
                dist = D[_cidx(n, a, b)]
                if dist < current:
                    current = dist
                    y = i
            if length > 1 and y == chain[length - 2]:
                break
            chain[length] = y
            length += 1
        length -= 2
        if x > y:
            x, y = y, x
        nx = size[x]
        ny = size[y]
        Z[k, 0] = x
        Z[k, 1] = y
        Z[k, 2] = current
        Z[k, 3] = nx + ny
        size[x] = 0
        size[y] = nx + ny
        for i in range(n):
            ni = size[i]
            if ni == 0 or i == y:
                continue
            a, b = (i, x) if i < x else (x, i)
            d_xi = D[_cidx(n, a, b)]
            a, b = (i, y) if i < y else (y, i)
            iy = _cidx(n, a, b)
            d_yi = D[iy]
            if method == 1:
                D[iy] = max(d_xi, d_yi)
            elif method == 2:
                D[iy] = (nx * d_xi + ny * d_yi) / (nx + ny)
            else:
                # Lance-Williams for Ward on Euclidean distances (not their squares).
                t = 1.0 / (nx + ny + ni)
                D[iy] = np.sqrt(
                    (ni + nx) * t * d_xi * d_xi
                    + (ni + ny) * t * d_yi * d_yi
                    - ni * t * current * current
                )
    return Z


@njit()
def _mst_single(X):  # pragma: no cover
    """Prim's algorithm; the MST's edges are the single-linkage merges."""
    n, d = X.shape
    Z = np.empty((n - 1, 4))
    merged = np.zeros(n, dtype=np.bool_)
    best = np.full(n, np.inf)
    y = 0
    for k in range(n - 1):
        x = y
        current = np.inf
        merged[x] = True
        for i in range(n):
            if merged[i]:
                continue
            s = 0.0
            for j in range(d):
                r = X[x, j] - X[i, j]
                s += r * r
            dist = np.sqrt(s)
            if best[i] > dist:
                best[i] = dist
            if best[i] < current:
                y = i
                current = best[i]
        Z[k, 0] = x
        Z[k, 1] = y
        Z[k, 2] = current
    return Z


@njit()
def _relabel(Z, n):  # pragma: no cover
    """Rename sorted merges with cluster ids ``n, n+1, ...`` (union-find), smaller id first."""
    parent = np.arange(2 * n - 1)
    size = np.ones(2 * n - 1)
    nxt = n
    for i in range(n - 1):
        r = np.empty(2, dtype=np.int64)
        for c in range(2):
            a = np.int64(Z[i, c])
            while parent[a] != a:
                a = parent[a]
            # path compression
            b = np.int64(Z[i, c])
            while parent[b] != a:
                p = parent[b]
                parent[b] = a
                b = p
            r[c] = a
        xr, yr = (r[0], r[1]) if r[0] < r[1] else (r[1], r[0])
        Z[i, 0] = xr
        Z[i, 1] = yr
        parent[xr] = nxt
        parent[yr] = nxt
        size[nxt] = size[xr] + size[yr]
        Z[i, 3] = size[nxt]
        nxt += 1
