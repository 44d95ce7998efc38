"""Numba kernel of LinearRegression's doubled-precision residuals, for many rows (on demand).

Fewer rows take the NumPy route of :mod:`._refinement` (the same error-free transformations,
vectorised); this parallel kernel, with a fused multiply-add for the product errors, is
compiled (and cached in the user's cache directory, see :mod:`mathlearn.utils._jit`) only
where a design large enough to pay for its compilation needs refinement.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ..utils._jit import njit


@intrinsic
def _fma(typingctx, a, b, c):
    """Correctly rounded ``a * b + c`` (LLVM's ``llvm.fma.f64``)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        d = ir.DoubleType()
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(d, [d, d, d]), "llvm.fma.f64"
        )
        return builder.call(fn, args)

    return sig, codegen


@njit(parallel=True)
def _residuals_dd(A, y, r, x, intercept, n_chunks):
    """``f = y - r - A x`` and ``g = -A^T r`` in doubled precision, rounded to float64.

    ``A`` is (n, m) C-contiguous; with ``intercept`` the coefficient vector ``x`` has one more
    entry, the coefficient of an implicit column of ones.
    """
    n, m = A.shape
    f = np.empty(n)
    g_hi = np.zeros((n_chunks, m + 1))
    g_lo = np.zeros((n_chunks, m + 1))
    x0 = x[m] if intercept else 0.0
    for c in numba.prange(n_chunks):
        start = c * n // n_chunks
        stop = (c + 1) * n // n_chunks
        gh = g_hi[c]
        gl = g_lo[c]
        for i in range(start, stop):
            # s + e accumulates y_i - r_i - sum_j A_ij x_j; two interleaved chains for ILP.
            s0 = y[i]
            t = -r[i]
            s1 = s0 + t
            z = s1 - s0
            e0 = (s0 - (s1 - z)) + (t - z)
            s0 = s1
            s1 = -x0
            e1 = 0.0
            ri = r[i]
            for j in range(0, m - 1, 2):
                a0 = A[i, j]
                a1 = A[i, j + 1]
                p0 = -a0 * x[j]
                q0 = _fma(-a0, x[j], -p0)
                p1 = -a1 * x[j + 1]
                q1 = _fma(-a1, x[j + 1], -p1)
                u0 = s0 + p0
                z0 = u0 - s0
                e0 += (s0 - (u0 - z0)) + (p0 - z0) + q0
                s0 = u0
                u1 = s1 + p1
                z1 = u1 - s1
                e1 += (s1 - (u1 - z1)) + (p1 - z1) + q1
                s1 = u1
            if m % 2 == 1:
                a0 = A[i, m - 1]
                p0 = -a0 * x[m - 1]
                q0 = _fma(-a0, x[m - 1], -p0)
                u0 = s0 + p0
                z0 = u0 - s0
                e0 += (s0 - (u0 - z0)) + (p0 - z0) + q0
                s0 = u0
            u0 = s0 + s1
            z0 = u0 - s0
            f[i] = u0 + ((s0 - (u0 - z0)) + (s1 - z0) + e0 + e1)
            # g_j -= A_ij r_i, vectorised over j.
            for j in range(m):
                p = -A[i, j] * ri
                q = _fma(-A[i, j], ri, -p)
                u = gh[j] + p
                z = u - gh[j]
                gl[j] += (gh[j] - (u - z)) + (p - z) + q
                gh[j] = u
            if intercept:
                p = -ri
                u = gh[m] + p
                z = u - gh[m]
                gl[m] += (gh[m] - (u - z)) + (p - z)
                gh[m] = u
    k = m + 1 if intercept else m
    g = np.empty(k)
    for j in range(k):
        s = 0.0
        e = 0.0
        for c in range(n_chunks):
            for v in (g_hi[c, j], g_lo[c, j]):
                u = s + v
                z = u - s
                e += (s - (u - z)) + (v - z)
                s = u
        g[j] = s + e
    return f, g


def _chunks(n):
    return max(1, min(n, 8 * numba.get_num_threads()))
