"""Numba kernels of the k-means family, for large inputs (imported on demand).

Small inputs take the NumPy routes of :mod:`._kmeans_common`; these kernels are compiled (and
cached in the user's cache directory, see :mod:`mathlearn.utils._jit`) only when a problem is
large enough for them to pay for their compilation.
"""

from __future__ import annotations

import types

import numba
import numpy as np

from ..utils._jit import njit


def _argmin_accumulate_py(
    X, C, c_norm, n_threads, labels, min_d, sums, counts, accumulate
):  # pragma: no cover
    """Nearest centre of each row (``argmin_k ||mu_k||^2 - 2 x^T mu_k``); optionally the
    per-cluster sums and sizes of the new partition, from per-thread partial sums.

    Each thread takes a contiguous block of rows; the ``K`` dot products of a row are
    computed in registers, so nothing of size ``N x K`` (let alone ``N x K x D``) is stored.
    """
    n, d = X.shape
    k_ = C.shape[0]
    step = (n + n_threads - 1) // n_threads
    part_sums = np.zeros((n_threads, k_, d))
    part_counts = np.zeros((n_threads, k_))
    for t in numba.prange(n_threads):
        for i in range(t * step, min(n, (t + 1) * step)):
            best = np.inf
            arg = 0
            for k in range(k_):
                dot = 0.0
                for j in range(d):
                    dot += X[i, j] * C[k, j]
                v = c_norm[k] - 2.0 * dot
                # Branch-free select (strict: ties go to the lowest index). The winner is
                # unpredictable for clustered data in random order, and mispredicted branches
                # cost more than the dot products: this halves the kernel's time.
                lt = v < best
                arg = k if lt else arg
                best = v if lt else best
            labels[i] = arg
            min_d[i] = best
            if accumulate:
                part_counts[t, arg] += 1.0
                for j in range(d):
                    part_sums[t, arg, j] += X[i, j]
    if accumulate:
        for t in range(n_threads):
            for k in range(k_):
                counts[k] += part_counts[t, k]
                for j in range(d):
                    sums[k, j] += part_sums[t, k, j]


def _named_copy(func, name):
    """The same function under another name, so that numba caches its compilations apart.

    Numba's on-disk cache keys a compiled function by its qualified name and source line, not
    by its compilation options: two ``cache=True`` compilations of one function (parallel and
    serial) would overwrite each other and one would silently run the other's machine code.
    """
    copy = types.FunctionType(func.__code__, func.__globals__, name, func.__defaults__)
    copy.__qualname__ = name
    return copy


# Two compilations of one body: the parallel one, and the serial one for a single numba
# thread (``prange`` is then a plain range).
# Reassociation (vectorised dot products) but not the "no NaN / no inf" flags: the running
# minimum starts at +inf, and under ``ninf`` a comparison with inf is undefined in LLVM.
_FASTMATH = {"reassoc", "contract", "nsz", "arcp"}
_argmin_accumulate_parallel = njit(parallel=True, fastmath=_FASTMATH)(
    _named_copy(_argmin_accumulate_py, "_argmin_accumulate_parallel_kernel")
)
_argmin_accumulate_serial = njit(fastmath=_FASTMATH)(
    _named_copy(_argmin_accumulate_py, "_argmin_accumulate_serial_kernel")
)


@njit(nogil=True)
def _sq_dist_to_assigned(X, centers, labels):  # pragma: no cover
    """``||x_i - mu_{c_i}||^2`` computed from differences (exact, no cancellation)."""
    n, d = X.shape
    out = np.empty(n)
    for i in range(n):
        s = 0.0
        c = labels[i]
        for j in range(d):
            r = X[i, j] - centers[c, j]
            s += r * r
        out[i] = s
    return out
