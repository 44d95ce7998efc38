"""DP-means: k-means whose number of clusters grows with a penalty."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from ..base import BaseEstimator, ClusterMixin, _fit_context, check_is_fitted
from ..exceptions import ConvergenceWarning, NumericalWarning
from ..utils._param_validation import Interval
from ..utils._rowscale import unit_of
from ..utils.validation import validate_data
from ._kmeans import _nearest
from ._kmeans_common import _sq_dist_to_assigned as sq_dist_to_assigned
from ._kmeans_common import assign, inertia

__all__ = ["DPMeans"]


def _dp_pass(X, centers, penalty):
    """One ordered pass of step 2: open a cluster at ``x_i`` when every centre (including
    those opened by earlier points of the pass) is farther than ``penalty`` in squared
    distance; otherwise join the nearest.

    The nearest of the current centres comes from the k-means assignment kernel shared with
    :class:`KMeans` and :class:`MiniBatchKMeans`, with the squared distance to it recomputed
    from the differences (the threshold test must not see the rounding of the expanded
    form). Each opening then only has to compare the later points with the one new centre,
    which keeps the point-by-point order of the notes exactly: ties stay with the older (lower
    index) centre, as in a sequential scan.

    Returns the labels and the centres (the given ones followed by the opened ones).
    """
    labels = assign(X, centers, distances=False)[0]
    d2 = sq_dist_to_assigned(X, centers, labels)
    opened = []
    k = centers.shape[0]
    start = 0
    while True:
        over = np.flatnonzero(d2[start:] > penalty)
        if over.size == 0:
            break
        i = start + int(over[0])
        opened.append(X[i])
        labels[i] = k
        d2[i] = 0.0
        rest = X[i + 1 :] - X[i]
        d_new = np.einsum("ij,ij->i", rest, rest)
        closer = np.flatnonzero(d_new < d2[i + 1 :]) + i + 1
        labels[closer] = k
        d2[closer] = d_new[closer - i - 1]
        k += 1
        start = i + 1
    if opened:
        centers = np.vstack([centers, np.asarray(opened)])
    return labels, centers


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

    See Also
    --------
    mathlearn.cluster.KMeans
        The same objective with a fixed number of clusters.
    mathlearn.mixture.BayesianGaussianMixture
        The Bayesian mixture whose small-variance limit DP-means is.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §1.1.2 (DP-means): start with ``K =
    1`` and ``mu_1`` the global mean; for each point in order, if ``min_k ||x_i - mu_k||^2 >
    lambda`` open cluster ``K + 1`` at ``x_i``, else assign it to its nearest centre; then move
    every centre to the mean of its points; repeat until the partition no longer changes. It is the
    small-variance limit of EM for a Dirichlet-process mixture. Clusters left empty by a pass
    are dropped (that lowers ``W_lambda`` by ``lambda``), so the starting global mean
    disappears once every point has opened or joined another cluster. Points are visited in
    the order given, so the result depends on that order, as in the notes.

    Complexity: a pass costs ``O(N K D)`` time, with ``N`` samples, ``D`` features and ``K``
    the number of clusters at the end of the pass: the nearest of the current centres by the
    k-means assignment kernel (BLAS products over blocks of rows, ``O(N K D)``), then
    ``O((N - i) D)`` for each cluster opened at point ``i`` (only the later points are
    compared with the new centre), then ``O(N D)`` for the means and the inertia; ``T``
    passes cost ``O(T N K D)``. Memory: the centred copy of ``X`` (``N D``), a difference
    temporary of at most ``N x D`` while a cluster opens, and ``O(N + K D)`` for the labels,
    distances and centres; no ``N x K`` array is formed. ``predict`` of ``M`` rows costs
    ``O(M K D)`` time and ``O(M D)`` memory (the rows taken about the centres' mean).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.cluster import DPMeans
    >>> X = np.array([[0.0], [0.1], [5.0], [5.1]])
    >>> dp = DPMeans(penalty=1.0).fit(X)
    >>> dp.n_clusters_, dp.labels_.tolist(), round(dp.objective_, 6)
    (2, [0, 0, 1, 1], 2.01)
    """

    _parameter_constraints: ClassVar[dict] = {
        "penalty": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, penalty: float = 1.0, *, max_iter: int = 100):
        self.penalty = penalty
        self.max_iter = max_iter

    @_fit_context
    def fit(self, X, y=None):
        """Cluster ``X``.

        Returns
        -------
        self : DPMeans
        """
        X = validate_data(self, X, dtype=np.float64)
        n, d = X.shape
        # In units of a power of two for data of extreme magnitude (exact): W_lambda(X) =
        # unit^2 W_{lambda / unit^2}(X / unit), the same partition. A penalty that over- or
        # underflows there is, correctly, infinitely large or small against the distances.
        unit = unit_of(X)
        with np.errstate(over="ignore", under="ignore"):
            penalty = float(self.penalty) / unit / unit
        X = X / unit if unit != 1.0 else X
        # About the data mean (a copy; W_lambda does not depend on the origin), for the
        # expanded distances of the assignment kernel.
        x_mean = X.mean(axis=0)
        X = X - x_mean
        centers = np.zeros((1, d))  # the global mean
        labels_old = np.full(n, -1, dtype=np.intp)
        history = []
        converged = False
        for _ in range(self.max_iter):
            labels, centers = _dp_pass(X, centers, penalty)
            counts = np.bincount(labels, minlength=centers.shape[0])
            keep = np.flatnonzero(counts > 0)
            remap = np.full(centers.shape[0], -1, dtype=np.intp)
            remap[keep] = np.arange(keep.size)
            labels = remap[labels]
            sums = np.zeros((keep.size, d))
            np.add.at(sums, labels, X)
            centers = sums / counts[keep, None]
            history.append((inertia(X, centers, labels), keep.size))
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
        self.cluster_centers_ = (centers + x_mean) * unit
        self.labels_ = labels
        self.n_clusters_ = int(centers.shape[0])
        inertia_ = inertia(X, centers, labels)
        sizes = np.array([k for _, k in history], dtype=float)
        history = np.array([j for j, _ in history], dtype=float)
        if unit != 1.0:
            with np.errstate(over="ignore", under="ignore"):
                inertia_ = inertia_ * unit * unit
                history = history * unit * unit
            if not np.isfinite(inertia_):
                warnings.warn(
                    "DPMeans' inertia exceeds the largest float (~1.8e308) for data of "
                    f"magnitude ~{unit:.1e}; inertia_ and objective_ are inf (the partition "
                    "and centres are unaffected).",
                    NumericalWarning,
                    stacklevel=2,
                )
        self.inertia_ = float(inertia_)
        with np.errstate(over="ignore"):
            self.objective_ = self.inertia_ + float(self.penalty) * self.n_clusters_
        with np.errstate(over="ignore"):
            self.objective_history_ = history + float(self.penalty) * sizes
        self.n_iter_ = len(history)
        return self

    def predict(self, X):
        """Nearest learned centre of each row of ``X`` (no new clusters are opened)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return _nearest(X, self.cluster_centers_)
