"""Shared pieces of the k-means family: k-means++ seeding and the assignment kernel.

The assignment step needs ``argmin_k ||x_i - mu_k||^2 = argmin_k (||mu_k||^2 - 2 x_i^T mu_k)``.
On large inputs a parallel numba kernel (:mod:`._kmeans_kernels`) computes the cross terms row
by row, takes the minima and accumulates the per-cluster sums in the same pass (the M-step's
statistics), so neither an ``(N, K, D)`` nor an ``(N, K)`` temporary is formed. (A BLAS
product followed by a second pass was slower there for the small ``K`` and ``D`` of
clustering: the data are read twice and two thread pools compete for the cores.) Below
``_KERNEL_MIN_ROWS`` rows that NumPy route is as fast and compiles nothing.
"""

from __future__ import annotations

import numpy as np

from ..utils.extmath import squared_distances
from ..utils.validation import check_array, check_int, check_random_state

# Below this many rows the assignment and the inertia take NumPy routes (BLAS cross terms,
# an argmin, a one-hot product for the sums), which need no compilation; above it the
# compiled kernels of ._kmeans_kernels, which stream the data once and run in parallel.
_KERNEL_MIN_ROWS = 20_000


def _sq_dist_to_assigned(X, centers, labels):
    """``||x_i - mu_{c_i}||^2`` computed from differences (exact, no cancellation)."""
    if X.shape[0] >= _KERNEL_MIN_ROWS:
        from ._kmeans_kernels import _sq_dist_to_assigned as kernel

        return kernel(np.ascontiguousarray(X), np.ascontiguousarray(centers), labels)
    diff = X - centers[labels]
    return np.einsum("ij,ij->i", diff, diff)


def _assign_numpy(X, centers, c_norm, accumulate):
    """:func:`assign`'s labels, ``min_k ||mu_k||^2 - 2 x^T mu_k`` and M-step statistics."""
    k = centers.shape[0]
    v = X @ centers.T
    v *= -2.0
    v += c_norm
    labels = np.argmin(v, axis=1)
    min_d = np.take_along_axis(v, labels[:, None], axis=1)[:, 0]
    if not accumulate:
        return labels, min_d, None, None
    onehot = labels == np.arange(k)[:, None]
    counts = onehot.sum(axis=1).astype(np.float64)
    sums = onehot.astype(np.float64) @ X
    return labels, min_d, sums, counts


def assign(X, centers, x_norm_sq=None, *, accumulate=False, distances=True):
    """Nearest centre of every row of ``X``.

    Returns
    -------
    labels : ndarray of shape (N,)
    sq_dist : ndarray of shape (N,), or None when ``distances`` is false
        Squared distance to the nearest centre (from the expanded form, clipped at 0).
        Lloyd's loop needs only the labels and the sums, and skips finishing them.
    sums, counts : ndarray of shape (K, D) and (K,), only when ``accumulate``
        Per-cluster sums and sizes of the new partition (the M-step's statistics).
    """
    n = X.shape[0]
    k, d = centers.shape
    c_norm = np.einsum("ij,ij->i", centers, centers)
    if n < _KERNEL_MIN_ROWS:
        labels, min_d, sums, counts = _assign_numpy(X, centers, c_norm, accumulate)
    else:
        from ._kmeans_kernels import (
            _argmin_accumulate_parallel,
            _argmin_accumulate_serial,
            numba,
        )

        labels = np.empty(n, dtype=np.intp)
        min_d = np.empty(n)
        sums = np.zeros((k, d))
        counts = np.zeros(k)
        if numba.get_num_threads() > 1:
            kernel, n_threads = _argmin_accumulate_parallel, numba.get_num_threads()
        else:
            kernel, n_threads = _argmin_accumulate_serial, 1
        kernel(
            np.ascontiguousarray(X),
            np.ascontiguousarray(centers),
            c_norm,
            n_threads,
            labels,
            min_d,
            sums,
            counts,
            accumulate,
        )
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


def inertia(X, centers, labels) -> float:
    """Sum of squared distances of the points to their assigned centres (the distortion J)."""
    return float(_sq_dist_to_assigned(X, centers, labels).sum())


def kmeans_plusplus(X, n_clusters: int, random_state=None, *, n_local_trials: int = 1):
    """k-means++ seeding (spec 002 M3, eq. 1.17).

    The first centre is a data point drawn uniformly; each next one is drawn with probability
    proportional to ``rho_i^2 = min_j ||x_i - mu_j||^2``, the squared distance to the nearest
    centre chosen so far. With ``n_local_trials > 1`` the greedy variant draws that many
    candidates and keeps the one that most reduces the potential ``sum_i rho_i^2``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_clusters : int
        Number of centres, at most ``n_samples``.
    random_state : int, Generator, RandomState or None
    n_local_trials : int, default=1
        Candidates per step; 1 is the notes' plain draw, :class:`KMeans` uses
        ``2 + int(log K)``.

    Returns
    -------
    centers : ndarray of shape (n_clusters, n_features)
    indices : ndarray of shape (n_clusters,)
        Rows of ``X`` chosen as centres.

    Notes
    -----
    Spec 002 M3 (notes ``seeds/002_*`` L224-238); the expected distortion of the seeding is
    within ``8 (log K + 2)`` of the optimum (eq. 1.18). Points whose ``rho_i = 0`` (duplicates
    of a chosen centre) are never drawn; if all are, the draw is uniform.

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
    n_clusters = check_int(n_clusters, "n_clusters")
    if n_clusters > X.shape[0]:
        raise ValueError(
            f"n_samples={X.shape[0]} should be >= n_clusters={n_clusters}: k-means++ draws "
            "distinct data points."
        )
    n_local_trials = check_int(n_local_trials, "n_local_trials")
    rng = check_random_state(random_state)
    return _kmeans_plusplus(X, n_clusters, rng, n_local_trials=n_local_trials)


def _kmeans_plusplus(X, n_clusters: int, rng, x_norm_sq=None, *, n_local_trials: int = 1):
    """:func:`kmeans_plusplus` on validated data with a Generator ``rng``."""
    n = X.shape[0]
    if x_norm_sq is None:
        x_norm_sq = np.einsum("ij,ij->i", X, X)
    idx = np.empty(n_clusters, dtype=np.intp)
    idx[0] = rng.integers(n)
    rho2 = squared_distances(X[idx[:1]], X, X_norm_sq=x_norm_sq[idx[:1]], Y_norm_sq=x_norm_sq)[0]
    for c in range(1, n_clusters):
        total = rho2.sum()
        if total <= 0:
            # Every point coincides with a chosen centre (duplicates): draw uniformly.
            cand = rng.integers(n, size=n_local_trials)
        else:
            cum = np.cumsum(rho2)
            cand = np.searchsorted(cum, rng.random(n_local_trials) * cum[-1], side="right")
            cand = np.minimum(cand, n - 1)
        d_cand = squared_distances(X[cand], X, X_norm_sq=x_norm_sq[cand], Y_norm_sq=x_norm_sq)
        np.minimum(d_cand, rho2[None, :], out=d_cand)
        best = int(np.argmin(d_cand.sum(axis=1)))
        idx[c] = cand[best]
        rho2 = d_cand[best]
    return X[idx].copy(), idx
