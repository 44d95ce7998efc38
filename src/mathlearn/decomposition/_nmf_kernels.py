"""Numba kernels of NMF's exact non-negative least squares, for large inputs (on demand).

Fewer rows take :func:`scipy.optimize.nnls` row by row (see :func:`._nmf._nnls_weights`); the
compiled Lawson-Hanson active set here, run in parallel over the rows, is imported (compiled
and cached in the user's cache directory, see :mod:`mathlearn.utils._jit`) only where a
problem is large enough for it to pay for its compilation.
"""

from __future__ import annotations

import numba
import numpy as np

from ..utils._jit import njit


@njit()
def _solve_passive(G, c, idx, p, L, z):
    """Solve ``G[idx, idx] z = c[idx]`` (first ``p`` entries of ``idx``) by Cholesky.

    Written out in loops on preallocated buffers: the systems are at most ``k x k`` with
    ``k`` the number of parts, where a LAPACK call's overhead exceeds its arithmetic.
    """
    for a in range(p):
        for b in range(a + 1):
            v = G[idx[a], idx[b]]
            for q in range(b):
                v -= L[a, q] * L[b, q]
            if a == b:
                L[a, a] = np.sqrt(max(v, 1e-300))
            else:
                L[a, b] = v / L[b, b]
    for a in range(p):  # forward substitution L y = c
        v = c[idx[a]]
        for q in range(a):
            v -= L[a, q] * z[q]
        z[a] = v / L[a, a]
    for a in range(p - 1, -1, -1):  # back substitution L^T z = y
        v = z[a]
        for q in range(a + 1, p):
            v -= L[q, a] * z[q]
        z[a] = v / L[a, a]


@njit()
def _fnnls_row(G, c, maxiter):
    """Lawson-Hanson active set on the normal equations (Bro & De Jong's fast NNLS).

    Minimises ``0.5 w^T G w - c^T w`` over ``w >= 0`` for a positive definite ``G``; with
    ``G = H H^T`` and ``c = H x`` this is ``argmin_{w >= 0} ||x - H^T w||``. Returns the
    solution and whether the active set settled within ``maxiter`` inner steps.
    """
    k = c.shape[0]
    x = np.zeros(k)
    passive = np.zeros(k, dtype=np.bool_)
    idx = np.empty(k, dtype=np.int64)
    L = np.empty((k, k))
    z = np.empty(k)
    grad = c.copy()
    # Dual feasibility up to rounding in c - G x (both terms are of the size of max|c|).
    tol = 10.0 * k * 2.220446049250313e-16 * max(np.max(np.abs(c)), 1e-300)
    steps = 0
    while True:
        j = -1
        best = tol
        for t in range(k):
            if not passive[t] and grad[t] > best:
                best = grad[t]
                j = t
        if j < 0:
            return x, True
        passive[j] = True
        while True:
            steps += 1
            if steps > maxiter:
                return x, False
            p = 0
            for t in range(k):
                if passive[t]:
                    idx[p] = t
                    p += 1
            _solve_passive(G, c, idx, p, L, z)
            feasible = True
            for q in range(p):
                if z[q] <= 0:
                    feasible = False
            if feasible:
                x[:] = 0.0
                for q in range(p):
                    x[idx[q]] = z[q]
                break
            # Move towards z until the first passive coordinate reaches zero, drop it.
            alpha = np.inf
            for q in range(p):
                if z[q] <= 0:
                    t = idx[q]
                    alpha = min(alpha, x[t] / (x[t] - z[q]))
            xmax = 0.0
            for q in range(p):
                t = idx[q]
                x[t] += alpha * (z[q] - x[t])
                xmax = max(xmax, x[t])
            for q in range(p):
                t = idx[q]
                if x[t] <= 1e-14 * xmax:
                    x[t] = 0.0
                    passive[t] = False
        for t in range(k):
            v = c[t]
            for q in range(k):
                v -= G[t, q] * x[q]
            grad[t] = v


@njit(parallel=True)
def _fnnls_rows(G, C, maxiter):
    n, k = C.shape
    W = np.empty((n, k))
    ok = np.empty(n, dtype=np.bool_)
    for i in numba.prange(n):
        W[i], ok[i] = _fnnls_row(G, C[i], maxiter)
    return W, ok
