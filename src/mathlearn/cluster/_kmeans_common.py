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

from numbers import Integral

import numpy as np
import scipy.sparse as sp

from ..utils._param_validation import Interval, validate_params
from ..utils.extmath import squared_distances
from ..utils.validation import check_array, check_random_state, check_sample_weight

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
