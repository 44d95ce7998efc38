"""DP-means: k-means whose number of clusters grows with a penalty (spec 002 M4)."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ..base import BaseEstimator, ClusterMixin, check_is_fitted
from ..exceptions import ConvergenceWarning
from ..utils.validation import check_positive, validate_data
from ._kmeans_common import assign, inertia

__all__ = ["DPMeans"]


# Below this many rows the ordered pass runs in NumPy: one vectorised step per cluster
# opened; above it, the compiled loop of ._kmeans_kernels.
_KERNEL_MIN_ROWS = 20_000


def _sq_dist_by_differences(X, c):
    diff = X - c
    return np.einsum("ij,ij->i", diff, diff)


def _dp_assign(X, centers, n_centers, penalty, labels):
    """One ordered pass of step 2: open a cluster at ``x_i`` when every centre is farther
    than ``penalty`` (in squared distance). ``centers`` has room for ``N`` rows.

    Point ``i`` sees the centres opened by the points before it. The NumPy route computes
    every point's nearest existing centre at once, finds the first point farther than
    ``penalty`` from all of them, opens its cluster and lowers the distances of the points
    after it to the new centre; ties go to the lowest index, as in the sequential pass.
    """
    n = X.shape[0]
    if n >= _KERNEL_MIN_ROWS:
        from ._kmeans_kernels import _dp_assign as kernel

        return kernel(X, centers, n_centers, penalty, labels)
    best = np.full(n, np.inf)
    arg = np.zeros(n, dtype=np.intp)
    for k in range(n_centers):
        dist = _sq_dist_by_differences(X, centers[k])
        closer = dist < best
        best[closer] = dist[closer]
        arg[closer] = k
    i = 0
    while i < n:
        far = np.flatnonzero(best[i:] > penalty)
        if far.size == 0:
            break
        j = i + int(far[0])
        centers[n_centers] = X[j]
        arg[j] = n_centers
        if j + 1 < n:
            dist = _sq_dist_by_differences(X[j + 1 :], X[j])
            tail_best, tail_arg = best[j + 1 :], arg[j + 1 :]
            closer = dist < tail_best
            tail_best[closer] = dist[closer]
            tail_arg[closer] = n_centers
        n_centers += 1
        i = j + 1
    labels[:] = arg
    return n_centers


class DPMeans(ClusterMixin, BaseEstimator):
    """DP-means clustering: a new cluster opens wherever a point is far from every centre.

    Locally minimises ``W_lambda = sum_k sum_{i in C_k} ||x_i - mu_k||^2 + lambda K`` over
    partitions, centres *and* the number of clusters ``K``.

    Parameters
    ----------
    penalty : float, default=1.0
        ``lambda``: the price of one more cluster, a threshold on the **squared** distance.
    max_iter : int, default=100
        Maximum number of passes.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters_, n_features)
    labels_ : ndarray of shape (n_samples,)
    n_clusters_ : int
    inertia_ : float
        ``sum ||x_i - mu_{c_i}||^2`` at the end.
    objective_ : float
        ``W_lambda = inertia_ + penalty * n_clusters_`` (eq. 1.19).
    objective_history_ : ndarray of shape (n_iter_,)
        ``W_lambda`` after each pass; it never increases.
    n_iter_ : int
    n_features_in_ : int

    Notes
    -----
    Spec 002 M4 (notes ``seeds/002_*`` L240-255): start with ``K = 1`` and ``mu_1`` the
    global mean; for each point in order, if ``min_k ||x_i - mu_k||^2 > lambda`` open cluster
    ``K + 1`` at ``x_i``, else assign it to its nearest centre; then move every centre to the
    mean of its points; repeat until the partition no longer changes. It is the
    small-variance limit of EM for a Dirichlet-process mixture. Clusters left empty by a pass
    are dropped (that lowers ``W_lambda`` by ``lambda``), so the starting global mean
    disappears once every point has opened or joined another cluster. Points are visited in
    the order given, so the result depends on that order, as in the notes.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.cluster import DPMeans
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1]])
    >>> dp = DPMeans(penalty=1.0).fit(X)
    >>> dp.n_clusters_, dp.labels_.tolist(), round(dp.objective_, 6)
    (2, [0, 0, 1, 1], 2.01)
    """

    def __init__(self, penalty: float = 1.0, *, max_iter: int = 100):
        self.penalty = penalty
        self.max_iter = max_iter

    def fit(self, X, y=None):
        """Cluster ``X``.

        Returns
        -------
        self : DPMeans
        """
        X = validate_data(self, X, dtype=np.float64)
        penalty = check_positive(self.penalty, "penalty", strict=False)
        if not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 1:
            raise ValueError(f"max_iter must be a positive integer; got {self.max_iter!r}.")
        n, d = X.shape
        buf = np.empty((n + 1, d))
        buf[0] = X.mean(axis=0)
        n_centers = 1
        labels = np.empty(n, dtype=np.intp)
        labels_old = np.full(n, -1, dtype=np.intp)
        history = []
        converged = False
        for _ in range(self.max_iter):
            n_centers = _dp_assign(X, buf, n_centers, penalty, labels)
            counts = np.bincount(labels, minlength=n_centers)
            keep = np.flatnonzero(counts > 0)
            remap = np.full(n_centers, -1, dtype=np.intp)
            remap[keep] = np.arange(keep.size)
            labels = remap[labels]
            sums = np.zeros((keep.size, d))
            np.add.at(sums, labels, X)
            centers = sums / counts[keep, None]
            n_centers = keep.size
            buf[:n_centers] = centers
            history.append(inertia(X, centers, labels) + penalty * n_centers)
            if np.array_equal(labels, labels_old):
                converged = True
                break
            labels_old = labels.copy()
        if not converged:
            warnings.warn(
                f"DPMeans stopped at max_iter={self.max_iter} while the partition still changed.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.cluster_centers_ = buf[:n_centers].copy()
        self.labels_ = labels
        self.n_clusters_ = int(n_centers)
        self.inertia_ = inertia(X, self.cluster_centers_, labels)
        self.objective_ = self.inertia_ + penalty * self.n_clusters_
        self.objective_history_ = np.asarray(history)
        self.n_iter_ = len(history)
        return self

    def predict(self, X):
        """Nearest learned centre of each row of ``X`` (no new clusters are opened)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return assign(X, self.cluster_centers_)[0]
