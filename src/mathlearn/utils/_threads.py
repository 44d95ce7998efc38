"""BLAS thread control for loops of small matrix products (one controller for the package)."""

from __future__ import annotations

import contextlib
import itertools
import os

import numpy as np

_CONTROLLER: list = []


def blas_controller():
    """The package's :class:`threadpoolctl.ThreadpoolController`, built once (it scans the
    loaded libraries, which takes milliseconds)."""
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


_BLAS_LIBS: list = []


def _blas_libs() -> list:
    """The controllers of the BLAS libraries among the package controller's (selected once)."""
    if not _BLAS_LIBS:
        _BLAS_LIBS.append(blas_controller().select(user_api="blas").lib_controllers)
    return _BLAS_LIBS[0]


def blas_threads() -> int:
    """The number of threads the loaded BLAS libraries may use now (the largest of them)."""
    return max((lib.num_threads for lib in _blas_libs()), default=1)


# Multiply-adds below which OpenBLAS runs a product on one thread anyway.
_SMALL_PRODUCT = 1 << 16


def serial_blas(work: float = float("inf"), threshold: float = float(_SMALL_PRODUCT)):
    """A context in which BLAS runs on one thread when ``work`` (multiply-adds of a single
    product) is at least ``threshold``, else a no-op context (BLAS does not start its pool
    for smaller products anyway). Without ``work``: always one thread.

    For iterations made of many small products (a block of rows by ``K`` centres, ``N x D``
    by ``D x k``, a recurrence's per-step ``batch x hidden`` by ``hidden x gates``): a thread
    pool costs more than it gains there, and on a busy machine spinning BLAS threads slowed
    such loops ~20x. The large products before and after such loops keep the pool.
    """
    if work < threshold or blas_threads() <= 1:
        # (already one thread: setting and restoring every library's count costs more than
        # a small product)
        return contextlib.nullcontext()
    return blas_controller().limit(limits=1, user_api="blas")


def scipy_matmul(A, B, out=None):
    """``A @ B`` for 2-D float arrays, computed by SciPy's BLAS instead of NumPy's.

    NumPy and SciPy wheels each carry their own OpenBLAS, each with its own thread pool, and an
    OpenBLAS worker spins on its core for a while (about 0.1 s) after its last job. When one
    library's threaded call follows the other's and the machine has no more cores than
    threads, the newly woken worker waits for the scheduler to preempt the other pool's
    spinning one: a stall of one or two scheduler ticks (4-8 ms) per switch. Products taken
    here between SciPy LAPACK calls (or inside a loop that SciPy drives with its own BLAS,
    such as L-BFGS-B's vector updates on more than 10 000 parameters) stay in SciPy's pool and
    never switch.

    ``B`` may be a vector (the product is then a vector, as NumPy's). The product is formed
    as ``(Bᵀ Aᵀ)ᵀ`` so that C-ordered (or Fortran-ordered) operands
    pass to Fortran BLAS without a copy; the result has NumPy's type (``sgemm`` for two
    float32 operands, else ``dgemm``); ``out``, if given, must be C-contiguous.
    """
    from scipy.linalg.blas import get_blas_funcs

    A, B = np.asarray(A), np.asarray(B)
    if A.ndim == 2 and B.ndim == 1 and out is None:
        # a matrix times a vector: the vector as one column
        return scipy_matmul(A, B[:, None])[:, 0]
    dtype = np.result_type(A, B)
    if (
        dtype not in (np.float32, np.float64)
        or A.ndim != 2
        or B.ndim != 2
        or 0 in A.shape + B.shape
    ):
        return np.matmul(A, B, out=out)
    A, B = A.astype(dtype, copy=False), B.astype(dtype, copy=False)
    gemm = get_blas_funcs("gemm", dtype=dtype)

    def fortran_transpose(M):
        # (an F-contiguous array, trans flag) whose op() is Mᵀ
        if M.flags.c_contiguous:
            return M.T, 0
        if M.flags.f_contiguous:
            return M, 1
        return np.ascontiguousarray(M).T, 0

    b, trans_b = fortran_transpose(B)
    a, trans_a = fortran_transpose(A)
    if out is None:
        return gemm(1.0, b, a, trans_a=trans_b, trans_b=trans_a).T
    if not out.flags.c_contiguous or out.shape != (A.shape[0], B.shape[1]) or out.dtype != dtype:
        raise ValueError("out must be a C-contiguous array of the product's shape and type.")
    gemm(1.0, b, a, beta=0.0, c=out.T, trans_a=trans_b, trans_b=trans_a, overwrite_c=1)
    return out


def scipy_gram(A, out=None):
    """``A @ A.T`` for a 2-D float array, computed by SciPy's BLAS (``syrk``: one triangle,
    half the multiply-adds of a general product, then mirrored), for the same reason as
    :func:`scipy_matmul`: the Gram matrix that a SciPy factorisation takes next is formed in
    SciPy's thread pool. The result is C-contiguous and exactly symmetric; ``out``, if
    given, must be a C-contiguous array of its shape and of ``A``'s type."""
    from scipy.linalg.blas import get_blas_funcs

    A = np.asarray(A)
    if (
        A.dtype not in (np.float32, np.float64)
        or A.ndim != 2
        or 0 in A.shape
        or A.shape[0] ** 2 * A.shape[1] < _SMALL_PRODUCT
    ):
        # (too small for BLAS to start a pool: NumPy's product, without the Python steps
        # below, which cost more than the product itself there)
        return np.matmul(A, A.T, out=out)
    n = A.shape[0]
    if out is not None and (
        not out.flags.c_contiguous or out.shape != (n, n) or out.dtype != A.dtype
    ):
        raise ValueError("out must be a C-contiguous array of the Gram's shape and type.")
    syrk = get_blas_funcs("syrk", dtype=A.dtype)
    # (into out's Fortran view: set, not copied, since overwrite_c is on)
    kw = {} if out is None else {"c": out.T, "beta": 0.0, "overwrite_c": 1}
    if A.flags.c_contiguous:
        # Fortran sees Aᵀ (D x N): the Gram is op(a)ᵀ op(a) with trans=1
        G = syrk(1.0, A.T, trans=1, lower=0, **kw)
    else:
        G = syrk(1.0, np.asfortranarray(A), trans=0, lower=0, **kw)
    # G is Fortran-ordered with its upper triangle set: Gᵀ is C-ordered with the lower one
    # (with out given, G is out's Fortran view itself: an F-contiguous c of the right type
    # is written in place)
    mirror_lower(G.T)
    return G.T if out is None else out


def mirror_lower(G: np.ndarray, tile: int = 64) -> np.ndarray:
    """Copy the strict lower triangle of square ``G`` onto the upper one, in place, by panels
    of ``tile`` rows (no temporary of ``G``'s size); returns ``G``.

    Each panel's diagonal block is mirrored through a fixed mask and the rest of its rows
    copied from the column panel below it (a transposed copy of ``tile`` columns, which
    stays in cache): 1.2 ms at N = 1 000 against 3.8 ms for 256-row tiles with index
    arrays."""
    n = G.shape[0]
    mask = np.triu(np.ones((tile, tile), dtype=bool), 1)
    for i in range(0, n, tile):
        stop = min(n, i + tile)
        T = G[i:stop, i:stop]
        m = stop - i
        np.copyto(T, T.T, where=mask[:m, :m])
        G[i:stop, stop:] = G[stop:, i:stop].T
    return G


def gram_beside_scipy():
    """``A -> A @ A.T`` for code whose Gram matrix goes next to a SciPy factorisation:
    :func:`scipy_gram` when BLAS may use more than one thread, NumPy's product otherwise
    (see :func:`matmul_beside_scipy`)."""
    return scipy_gram if blas_threads() > 1 else _numpy_gram


def _numpy_gram(A, out=None):
    return np.matmul(A, A.T, out=out)


def matmul_beside_scipy():
    """The matrix product for code that alternates products with SciPy's LAPACK or runs
    inside a loop that SciPy drives (an optimiser's objective): :func:`scipy_matmul` when
    BLAS may use more than one thread, NumPy's ``matmul`` otherwise (one thread has no pool
    to switch, and NumPy's newer OpenBLAS was measured up to 15% faster on such products)."""
    return scipy_matmul if blas_threads() > 1 else np.matmul


_POOL: list = []
if hasattr(os, "register_at_fork"):
    # A forked child has none of the parent's pool threads: it starts a pool of its own.
    os.register_at_fork(after_in_child=_POOL.clear)


# Multiply-adds of one pass over independent rows from which the rows are split between
# threads (:func:`row_parts`). Handing a part to a pool thread and collecting it cost about
# 0.3 ms on the project's 2-core machine: the k-means assignment pass at K D = 200 took, on
# one thread and on two, 0.37 and 0.49 ms over 1e4 rows, 0.70 and 0.69-0.78 ms over 2e4,
# 1.38-1.51 and 0.89 ms over 4e4, 4.3-5.7 and 2.5-3.0 ms over 1e5.
_PARALLEL_WORK = 1 << 22
# rows each thread gets at least
_MIN_PART_ROWS = 1024


def row_parts(n: int, work: float) -> list[tuple[int, int]]:
    """Contiguous ranges ``(lo, hi)`` covering ``range(n)`` for a pass of ``work``
    multiply-adds over ``n`` independent rows: one range below ``_PARALLEL_WORK``, otherwise
    one per thread BLAS may use (:func:`blas_threads`, at most ``os.cpu_count()``), each of
    at least ``_MIN_PART_ROWS`` rows. Read it outside :func:`serial_blas`, which sets the
    BLAS count to one."""
    parts = 1
    if work >= _PARALLEL_WORK:
        parts = max(1, min(blas_threads(), os.cpu_count() or 1, n // _MIN_PART_ROWS))
    bounds = [n * j // parts for j in range(parts + 1)]
    return list(itertools.pairwise(bounds))


def run_parts(parts: list, fn) -> None:
    """Run ``fn(part)`` for every part, the first in the calling thread and the others in
    the package's thread pool, and return once all have finished (re-raising the first
    exception, after every part has stopped).

    For work that releases the interpreter lock (BLAS products, the compiled helpers called
    through ctypes) split into independent parts: each thread writes only its own outputs.
    Callers choose the number of parts (at most :func:`blas_threads`, so that
    ``threadpoolctl.threadpool_limits(1)`` or ``OPENBLAS_NUM_THREADS=1`` keeps everything
    on one core) and run the BLAS calls inside each part on one thread (:func:`serial_blas`).
    """
    if len(parts) == 1:
        fn(parts[0])
        return
    if not _POOL:
        from concurrent.futures import ThreadPoolExecutor

        _POOL.append(ThreadPoolExecutor(thread_name_prefix="mathlearn"))
    futures = [_POOL[0].submit(fn, part) for part in parts[1:]]
    try:
        fn(parts[0])
    finally:
        for future in futures:
            future.exception()
    for future in futures:
        future.result()


# Bytes of one memory page (the smallest Linux uses; touching one entry per page faults it).
_PAGE = 4096


def faulted_empty(shape, dtype=np.float64) -> np.ndarray:
    """An uninitialised array whose memory pages the calling thread has already faulted in:
    the output buffer for a threaded BLAS product.

    A fresh large array (NumPy asks the kernel for transparent huge pages above 4 MB) is
    mapped page by page on first write. When a threaded BLAS writes it, the pool's threads
    fault the same 2 MB huge pages at once and wait on each other: an 8 MB Gram matrix
    (1 000 x 1 000) took 6 ms from two threads against 1 ms from one on a 2-core machine.
    One store per 4 kB page from the calling thread faults the array in beforehand (about
    2 000 strided stores for 8 MB: microseconds where the pages are already mapped)."""
    out = np.empty(shape, dtype=dtype)
    flat = out.reshape(-1)
    step = max(_PAGE // out.itemsize, 1)
    if flat.size > step:
        flat[::step] = 0
    return out
