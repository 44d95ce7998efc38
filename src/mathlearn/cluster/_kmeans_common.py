"""Shared pieces of the k-means family: k-means++ seeding and the assignment kernel.

The assignment step needs ``argmin_k ||x_i - mu_k||^2 = argmin_k (||mu_k||^2 - 2 x_i^T mu_k)``.
It runs over blocks of rows: the cross terms of a block come from one BLAS product
``X_b C^T`` into a reused buffer (sized to stay in cache), then the compiled helper
``_ext._kmeans`` takes each row's minimum and adds the row to its cluster's sum (the M-step's
statistics) in the same pass, so neither an ``(N, K, D)`` nor an ``(N, K)`` temporary is
formed and nothing is compiled at run time. Where the helper was not built, a NumPy route
(an argmin and a one-hot product per block) computes the same thing.

A pass of more than about 4e6 multiply-adds splits its rows into as many contiguous parts as
BLAS may use threads (``threadpoolctl.threadpool_limits`` and ``OPENBLAS_NUM_THREADS`` set
that number; ``utils._threads.row_parts``), each run by one thread with its own statistics,
added in part order afterwards: a pass's labels do not depend on the thread count, its sums
differ from one thread's by rounding only (a different order of the same additions).
"""

from __future__ import annotations

import contextlib
import ctypes
from numbers import Integral

import numpy as np
import scipy.sparse as sp

from .. import _ext
from ..utils._param_validation import Interval, validate_params
from ..utils._threads import row_parts, run_parts, serial_blas
from ..utils.extmath import squared_distances
from ..utils.validation import check_array, check_random_state, check_sample_weight

# Doubles in one block of cross terms (rows x K): 32 768 (256 KiB) keeps the block, and
# the rows of X it was made from, in the L2 cache while the helper reads them back.
_BLOCK_DOUBLES = 1 << 15
# Dimensions up to which the assignment's block products read C^T from a C-ordered copy.
_SMALL_D = 32


def _block_rows(k: int, n: int | None = None, d: int | None = None) -> int:
    """Rows of a block of cross terms for ``k`` centres: the cache's size, 256 to 16 384
    rows; given the data's shape ``n x d``, at most an eighth of its numbers (but 256 rows),
    so that a small fit's block does not add a third to the copy of the data it clusters
    (at 1 000 x 20 and K = 10: 256 rows, 20 kB, instead of all 1 000 rows, 80 kB, for
    about 2% more time)."""
    rows = min(max(_BLOCK_DOUBLES // max(k, 1), 256), 16_384)
    if n is not None and d is not None:
        rows = min(rows, max(256, -(-n * d // (8 * max(k, 1)))))
    return int(rows)


def _compiled():
    """The typed functions of ``_ext._kmeans``, or None where it was not built."""
    lib = _ext.load("_kmeans")
    if lib is None:
        return None
    fa, fd = lib.kmeans_argmin_accumulate, lib.kmeans_sq_dist_assigned
    if fa.argtypes is None:
        fa.restype = None
        fa.argtypes = [ctypes.c_int64] * 3 + [ctypes.c_void_p] * 8
        fd.restype = None
        fd.argtypes = [ctypes.c_int64] * 2 + [ctypes.c_void_p] * 4
    return fa, fd


def _ptr(a):
    return None if a is None else a.ctypes.data


def _sq_dist_to_assigned(X, centers, labels):
    """``||x_i - mu_{c_i}||^2`` computed from differences (exact, no cancellation)."""
    lib = _compiled()
    if lib is not None and X.shape[0] > 0:
        X = np.ascontiguousarray(X, dtype=np.float64)
        centers = np.ascontiguousarray(centers, dtype=np.float64)
        labels = np.ascontiguousarray(labels, dtype=np.int64)
        out = np.empty(X.shape[0])
        lib[1](X.shape[0], X.shape[1], _ptr(X), _ptr(centers), _ptr(labels), _ptr(out))
        return out
    out = np.empty(X.shape[0])
    step = _block_rows(X.shape[1])
    for s in range(0, X.shape[0], step):
        diff = X[s : s + step] - centers[labels[s : s + step]]
        out[s : s + step] = np.einsum("ij,ij->i", diff, diff)
    return out


def _assign_numpy(X, centers, c_norm, accumulate, sample_weight=None):
    """:func:`assign`'s labels, ``min_k ||mu_k||^2 - 2 x^T mu_k`` and M-step statistics, by
    NumPy on one block of rows."""
    k = centers.shape[0]
    v = X @ centers.T
    v *= -2.0
    v += c_norm
    labels = np.argmin(v, axis=1)
    min_d = np.take_along_axis(v, labels[:, None], axis=1)[:, 0]
    if not accumulate:
        return labels, min_d, None, None
    onehot = (labels == np.arange(k)[:, None]).astype(np.float64)
    if sample_weight is not None:
        onehot *= sample_weight
    counts = onehot.sum(axis=1)
    sums = onehot @ X
    return labels, min_d, sums, counts


def assign(
    X, centers, x_norm_sq=None, *, accumulate=False, distances=True, sample_weight=None, parts=None
):
    """Nearest centre of every row of ``X``.

    ``parts``: the row ranges of the compiled pass (one thread each), as
    :func:`~mathlearn.utils._threads.row_parts` gives them for ``N`` rows; a loop of passes
    reads them once, before any limit on BLAS's thread count (see :func:`blas_loop`).
    Ranges that do not end at ``N`` are ignored and formed afresh.

    Returns
    -------
    labels : ndarray of shape (N,)
    sq_dist : ndarray of shape (N,), or None when ``distances`` is false
        Squared distance to the nearest centre (from the expanded form, clipped at 0).
        Lloyd's loop needs only the labels and the sums, and skips finishing them.
    sums, counts : ndarray of shape (K, D) and (K,), only when ``accumulate``
        Per-cluster (weighted) sums and sizes of the new partition (the M-step's
        statistics); with ``sample_weight`` each row counts with its weight.
    """
    n = X.shape[0]
    k, d = centers.shape
    X = np.ascontiguousarray(X, dtype=np.float64)
    centers = np.ascontiguousarray(centers, dtype=np.float64)
    c_norm = np.einsum("ij,ij->i", centers, centers)
    w = None if sample_weight is None else np.ascontiguousarray(sample_weight, np.float64)
    labels = np.empty(n, dtype=np.int64)
    min_d = np.empty(n)
    sums = np.zeros((k, d)) if accumulate else None
    counts = np.zeros(k) if accumulate else None
    step = _block_rows(k, n, d)
    lib = _compiled()
    # C^T (D x K) as its own C-ordered copy where D is small: OpenBLAS then forms a block's
    # cross terms faster than from the transposed view. One pass over 1e4 x 20 rows at
    # K = 10 took 0.26-0.44 ms against 0.34-0.57 (one thread); at D = 2, 5 and 20, 0.75-0.91
    # of the time. From D = 50 up the two took the same time within noise, and at D = 2 000
    # the transposing copy itself cost 2-4% of a pass over 200 rows.
    Ct = np.ascontiguousarray(centers.T) if d <= _SMALL_D else centers.T
    if lib is None or parts is None or parts[-1][1] != n:
        parts = row_parts(n, n * k * d) if lib is not None else [(0, n)]
    workers = len(parts)
    # Split into parts: one BLAS thread in each. One part: BLAS's own choice for the block
    # products (OpenBLAS keeps products under about 2.6e5 multiply-adds on one thread, and
    # its pool, warm across a loop's passes, took K D = 200 from 7.1 to 6.3 ms a fit at
    # N = 1e4 on two cores, where one BLAS thread and this package's pool were both slower).
    with serial_blas() if workers > 1 else contextlib.nullcontext():
        if lib is not None:
            fa = lib[0]
            # Addresses taken once (``.ctypes`` costs microseconds per call); block s starts
            # s rows further on.
            p_cn, p_x, p_lab, p_min = map(_ptr, (c_norm, X, labels, min_d))
            p_w = _ptr(w)
            # one set of M-step statistics per part (the first part's are the outputs)
            part_sums = [sums] + [np.zeros((k, d)) for _ in range(workers - 1)]
            part_counts = [counts] + [np.zeros(k) for _ in range(workers - 1)]
            if not accumulate:
                part_sums = part_counts = [None] * workers

            def run(j):
                lo, hi = parts[j]
                buf = np.empty((min(step, hi - lo), k))
                p_buf, p_sums, p_counts = _ptr(buf), _ptr(part_sums[j]), _ptr(part_counts[j])
                for s in range(lo, hi, step):
                    m = min(step, hi - s)
                    np.matmul(X[s : s + m], Ct, out=buf[:m])
                    fa(m, k, d, p_buf, p_cn, p_x + 8 * s * d,
                       None if w is None else p_w + 8 * s, p_lab + 8 * s, p_min + 8 * s,
                       p_sums, p_counts)  # fmt: skip

            run_parts(list(range(workers)), run)
            if accumulate:
                for j in range(1, workers):
                    sums += part_sums[j]
                    counts += part_counts[j]
        else:
            for s in range(0, n, step):
                ws = None if w is None else w[s : s + step]
                lab, md, sm, cn = _assign_numpy(X[s : s + step], centers, c_norm, accumulate, ws)
                labels[s : s + step] = lab
                min_d[s : s + step] = md
                if accumulate:
                    sums += sm
                    counts += cn
    labels = labels.astype(np.intp, copy=False)
    if not distances:
        min_d = None
    else:
        if x_norm_sq is None:
            x_norm_sq = np.einsum("ij,ij->i", X, X)
        min_d += x_norm_sq
        np.maximum(min_d, 0.0, out=min_d)
    if accumulate:
        return labels, min_d, sums, counts
    return labels, min_d


def blas_loop(n: int, k: int, d: int):
    """``(parts, context)`` for a loop of assignment passes over ``n`` rows and ``k``
    centres in ``d`` dimensions: the row ranges of each pass (:func:`row_parts`, read
    while BLAS still has its thread count) and a context for the whole loop: where the
    passes split into parts, it holds BLAS at one thread for the loop, so that each pass's
    own :func:`serial_blas` has nothing left to change (setting and restoring the limit
    costs about 14 us, against about 0.1 ms for a whole pass at N = 1 000, K = 10,
    D = 20); otherwise it changes nothing."""
    parts = row_parts(n, n * k * d)
    return parts, serial_blas() if len(parts) > 1 else contextlib.nullcontext()


def inertia(X, centers, labels, sample_weight=None) -> float:
    """Sum of (weighted) squared distances of the points to their assigned centres (the
    distortion J), each computed from the differences ``x_i - mu_{c_i}``."""
    d2 = _sq_dist_to_assigned(X, centers, labels)
    if sample_weight is not None:
        return float(d2 @ sample_weight)
    return float(d2.sum())


def weighted_cluster_sums(X, labels, sample_weight, n_clusters: int):
    """Per-cluster weighted sums ``sum_{c_i = k} w_i x_i`` and weights ``sum_{c_i = k} w_i``.

    The M-step statistics of weighted k-means, as one sparse-times-dense product (``O(N D)``,
    no ``(N, K)`` dense temporary): the compiled assignment kernel accumulates unit weights only.
    """
    n = X.shape[0]
    S = sp.csr_array((sample_weight, (labels, np.arange(n))), shape=(n_clusters, n))
    sums = np.asarray(S @ X)
    counts = np.bincount(labels, weights=sample_weight, minlength=n_clusters)
    return sums, counts


@validate_params(
    {
        "X": ["array-like"],
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "n_local_trials": [Interval(Integral, 1, None, closed="left")],
        "sample_weight": ["array-like", None],
    }
)
def kmeans_plusplus(
    X, n_clusters: int, random_state=None, *, n_local_trials: int = 1, sample_weight=None
):
    """k-means++ seeding (Oxford "Advanced Topics in Statistical Machine Learning" eq. 1.17).

    The first centre is a data point drawn uniformly; each next one is drawn with probability
    proportional to ``rho_i^2 = min_j ||x_i - mu_j||^2``, the squared distance to the nearest
    centre chosen so far. With ``n_local_trials > 1`` the greedy variant draws that many
    candidates and keeps the one that most reduces the potential ``sum_i rho_i^2``. With
    sample weights every probability and the potential are weighted (``w_i``, ``w_i rho_i^2``,
    ``sum_i w_i rho_i^2``): the seeding of the data with row ``i`` repeated ``w_i`` times.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_clusters : int
        Number of centres, at most ``n_samples``.
    random_state : int, Generator, RandomState or None
    n_local_trials : int, default=1
        Candidates per step; 1 is the notes' plain draw, :class:`KMeans` uses
        ``2 + int(log K)``.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights; rows of weight 0 are never chosen.

    Returns
    -------
    centers : ndarray of shape (n_clusters, n_features)
    indices : ndarray of shape (n_clusters,)
        Rows of ``X`` chosen as centres.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §1.1.2 (k-means++); the expected
    distortion of the seeding is within ``8 (log K + 2)`` of the optimum (eq. 1.18). Points whose
    ``rho_i = 0`` (duplicates of a chosen centre) are never drawn; if all are, the draw is uniform.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.cluster import kmeans_plusplus
    >>> X = np.array([[0.0, 0.0], [0.0, 0.0], [10.0, 0.0]])
    >>> centers, idx = kmeans_plusplus(X, 2, random_state=0)
    >>> sorted(centers[:, 0].tolist())
    [0.0, 10.0]
    """
    X = check_array(X, dtype=np.float64)
    if sample_weight is not None:
        sample_weight = check_sample_weight(sample_weight, X)
    check_n_clusters(n_clusters, X.shape[0], sample_weight)
    rng = check_random_state(random_state)
    # About the mean (a copy): the expanded squared distances cancel far from the origin.
    Xc = X - X.mean(axis=0)
    idx = _kmeans_plusplus(
        Xc, n_clusters, rng, n_local_trials=n_local_trials, sample_weight=sample_weight
    )[1]
    return X[idx].copy(), idx


def check_n_clusters(n_clusters: int, n_samples: int, sample_weight=None) -> None:
    """``n_clusters`` centres need as many (positively weighted) points."""
    if n_samples < n_clusters:
        raise ValueError(
            f"n_samples={n_samples} should be >= n_clusters={n_clusters}: k-means cannot "
            "place more centres than there are points."
        )
    if sample_weight is not None:
        n_pos = int(np.count_nonzero(sample_weight))
        if n_pos < n_clusters:
            raise ValueError(
                f"only {n_pos} samples have a non-zero sample_weight; n_clusters={n_clusters} "
                "centres need at least as many."
            )


def _kmeans_plusplus(
    X, n_clusters: int, rng, x_norm_sq=None, *, n_local_trials: int = 1, sample_weight=None
):
    """:func:`kmeans_plusplus` on validated data with a Generator ``rng``."""
    n = X.shape[0]
    w = sample_weight
    if x_norm_sq is None:
        x_norm_sq = np.einsum("ij,ij->i", X, X)
    idx = np.empty(n_clusters, dtype=np.intp)
    idx[0] = rng.integers(n) if w is None else rng.choice(n, p=w / w.sum())
    rho2 = squared_distances(X[idx[:1]], X, X_norm_sq=x_norm_sq[idx[:1]], Y_norm_sq=x_norm_sq)[0]
    for c in range(1, n_clusters):
        mass = rho2 if w is None else w * rho2
        total = mass.sum()
        if total <= 0:
            # Every point coincides with a chosen centre (duplicates): draw uniformly (by
            # weight).
            if w is None:
                cand = rng.integers(n, size=n_local_trials)
            else:
                cand = rng.choice(n, size=n_local_trials, p=w / w.sum())
        else:
            cum = np.cumsum(mass)
            cand = np.searchsorted(cum, rng.random(n_local_trials) * cum[-1], side="right")
            cand = np.minimum(cand, n - 1)
        d_cand = squared_distances(X[cand], X, X_norm_sq=x_norm_sq[cand], Y_norm_sq=x_norm_sq)
        np.minimum(d_cand, rho2[None, :], out=d_cand)
        potential = d_cand.sum(axis=1) if w is None else d_cand @ w
        best = int(np.argmin(potential))
        idx[c] = cand[best]
        rho2 = d_cand[best]
    return X[idx].copy(), idx
