"""k-means by Lloyd's algorithm and its mini-batch variant (spec 001 M40, spec 002 M2-M3)."""

from __future__ import annotations

import numbers
import warnings
from typing import ClassVar

import numpy as np

from ..base import (
    BaseEstimator,
    ClusterMixin,
    ComponentNamesMixin,
    TransformerMixin,
    check_is_fitted,
)
from ..exceptions import ConvergenceWarning
from ..utils.extmath import squared_distances
from ..utils.validation import (
    check_array,
    check_int,
    check_positive,
    check_random_state,
    validate_data,
)
from ._kmeans_common import _kmeans_plusplus, assign, inertia

__all__ = ["KMeans", "MiniBatchKMeans"]


def _check_n_clusters(n_clusters, n_samples):
    if not isinstance(n_clusters, numbers.Integral) or n_clusters < 1:
        raise ValueError(f"n_clusters must be a positive integer; got {n_clusters!r}.")
    if n_samples < n_clusters:
        raise ValueError(
            f"n_samples={n_samples} should be >= n_clusters={n_clusters}: k-means cannot "
            "place more centres than there are points."
        )


def _initial_centers(X, init, n_clusters, rng, x_norm_sq):
    """Initial centres from ``init``: 'k-means++', 'random' (distinct data points) or array."""
    if isinstance(init, str):
        if init == "k-means++":
            # Greedy k-means++ (2 + log K candidates per step, as scikit-learn): the notes'
            # draw, repeated, keeping the candidate that lowers the potential most.
            trials = 2 + int(np.log(n_clusters))
            return _kmeans_plusplus(X, n_clusters, rng, x_norm_sq, n_local_trials=trials)[0]
        if init == "random":
            return X[rng.choice(X.shape[0], n_clusters, replace=False)].copy()
        raise ValueError(f"init must be 'k-means++', 'random' or an array; got {init!r}.")
    centers = check_array(init, dtype=np.float64, copy=True)
    if centers.shape != (n_clusters, X.shape[1]):
        raise ValueError(
            f"init array has shape {centers.shape}; expected (n_clusters, n_features) = "
            f"({n_clusters}, {X.shape[1]})."
        )
    return centers


def _n_init(n_init, init):
    if n_init == "auto":
        return 10 if isinstance(init, str) and init == "random" else 1
    if not isinstance(n_init, numbers.Integral) or n_init < 1:
        raise ValueError(f"n_init must be 'auto' or a positive integer; got {n_init!r}.")
    if not isinstance(init, str) and n_init != 1:
        # Restarting from the same given centres would repeat the same run.
        return 1
    return int(n_init)


def _relocate_empty(X, centers_old, labels, sums, counts):
    """Give each empty cluster the point farthest from its current centre (taken from its
    cluster), as scikit-learn does, so that no centre is left without data.

    Only points off their centre are moved: with fewer distinct points than clusters
    (duplicates) the surplus clusters stay empty and keep their centres, since moving a point
    that sits on its centre cannot lower ``J`` and made the centres hop between duplicates
    without end.
    """
    empty = np.flatnonzero(counts == 0)
    if empty.size == 0:
        return
    dist = ((X - centers_old[labels]) ** 2).sum(axis=1)
    # The same selection call as scikit-learn, so that ties are broken the same way.
    far = np.argpartition(dist, -empty.size)[: -empty.size - 1 : -1]
    far = far[dist[far] > 0]
    for new_k, i in zip(empty, far, strict=False):
        old_k = labels[i]
        sums[old_k] -= X[i]
        counts[old_k] -= 1
        sums[new_k] = X[i]
        counts[new_k] = 1
        labels[i] = new_k


def _nearest(X, centers):
    """Labels of the nearest centres, computed about the centres' mean (the expanded squared
    distance cancels catastrophically for points far from the origin)."""
    shift = centers.mean(axis=0)
    return assign(X - shift, centers - shift)[0]


def _distances(X, centers):
    """Euclidean distances to every centre, about the centres' mean (see :func:`_nearest`)."""
    shift = centers.mean(axis=0)
    return np.sqrt(squared_distances(X - shift, centers - shift))


def lloyd(X, centers, *, max_iter: int, tol: float, x_norm_sq=None):
    """Lloyd's iterations from ``centers`` (spec 001 M40 steps 1-3).

    Stops when the partition no longer changes or the total squared centre shift is at most
    ``tol`` (absolute). Returns ``labels, inertia, centers, n_iter, converged``; the labels are
    those of the returned centres.
    """
    n = X.shape[0]
    if x_norm_sq is None:
        x_norm_sq = np.einsum("ij,ij->i", X, X)
    labels_old = np.full(n, -1, dtype=np.intp)
    converged = strict = False
    n_iter = 0
    for _ in range(max_iter):
        n_iter += 1
        labels, _, sums, counts = assign(X, centers, accumulate=True, distances=False)
        _relocate_empty(X, centers, labels, sums, counts)
        # A cluster still empty (duplicates) keeps its centre.
        filled = counts > 0
        new_centers = centers.copy()
        new_centers[filled] = sums[filled] / counts[filled, None]
        shift = float(((new_centers - centers) ** 2).sum())
        centers = new_centers
        if np.array_equal(labels, labels_old):
            converged = strict = True
            break
        if shift <= tol:
            converged = True
            break
        labels_old = labels
    if not strict:
        # The centres moved after the last assignment: re-assign so labels match them.
        labels, _ = assign(X, centers, x_norm_sq)
    return labels, inertia(X, centers, labels), centers, n_iter, converged


class KMeans(ComponentNamesMixin, ClusterMixin, TransformerMixin, BaseEstimator):
    """k-means clustering by Lloyd's algorithm with k-means++ seeding.

    Minimises the distortion ``J = sum_n ||x_n - mu_{c_n}||^2`` by alternating the
    assignment step (each point to its nearest centre) and the update step (each centre to
    the mean of its points).

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters ``K``.
    init : {"k-means++", "random"} or array-like of shape (n_clusters, n_features)
        Initial centres: greedy k-means++ seeding (each step draws ``2 + log K`` candidates
        with probability proportional to ``rho_i^2`` and keeps the one that lowers
        ``sum_i rho_i^2`` most), ``K`` distinct data points drawn uniformly, or the given
        centres.
    n_init : "auto" or int, default="auto"
        Number of restarts; the run with the smallest distortion is kept. ``"auto"`` means 1
        for k-means++ and given centres, 10 for ``"random"``.
    max_iter : int, default=300
        Maximum number of Lloyd iterations per run.
    tol : float, default=1e-4
        Relative tolerance: a run stops when the total squared shift of the centres is at
        most ``tol`` times the mean per-feature variance of ``X`` (scikit-learn's rule).
    random_state : int, Generator, RandomState or None
        Seed of the initialisation.

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    labels_ : ndarray of shape (n_samples,)
        Cluster of each training point (consistent with ``cluster_centers_``).
    inertia_ : float
        Distortion ``J`` of the kept run.
    n_iter_ : int
        Lloyd iterations of the kept run.
    n_features_in_ : int

    Notes
    -----
    Spec 001 M40 (notes ``seeds/001_*`` L721-755) and spec 002 M2-M3 (Algorithm 1.1, k-means++
    eq. 1.17). The assignment uses ``||x - mu||^2 = ||x||^2 - 2 x^T mu + ||mu||^2`` with one
    matrix product per iteration, clipped at zero, on the data centred by their mean (a copy;
    far from the origin the expanded form would cancel); ties go to the lowest index. ``J`` never
    increases, so the algorithm stops at a local minimum. A cluster that becomes empty gets
    the point farthest from its centre (the notes do not treat this case; spec 001 §6); with
    fewer distinct points than clusters the surplus clusters stay empty, keep their centres,
    and a :class:`~mathlearn.exceptions.ConvergenceWarning` gives the number found.
    A run that reaches ``max_iter`` raises a :class:`~mathlearn.exceptions.ConvergenceWarning`.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.cluster import KMeans
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [5.0, 5.0], [5.0, 6.0], [6.0, 5.0]])
    >>> km = KMeans(n_clusters=2, init=X[:2], n_init=1).fit(X)
    >>> km.labels_
    array([0, 0, 0, 1, 1, 1])
    >>> round(km.inertia_, 4)
    2.6667
    """

    _n_features_out_attr = "cluster_centers_"

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        init="k-means++",
        n_init="auto",
        max_iter: int = 300,
        tol: float = 1e-4,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y=None):
        """Cluster ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : KMeans
        """
        X = validate_data(self, X, dtype=np.float64)
        _check_n_clusters(self.n_clusters, X.shape[0])
        check_int(self.max_iter, "max_iter")
        check_positive(self.tol, "tol", strict=False)
        rng = check_random_state(self.random_state)
        n_init = _n_init(self.n_init, self.init)
        tol = float(np.mean(np.var(X, axis=0))) * self.tol if self.tol > 0 else 0.0
        # Cluster the centred data (a copy; the partition does not depend on the origin): the
        # expanded ||x||^2 - 2 x^T mu + ||mu||^2 loses every digit for data far from the
        # origin. scikit-learn does the same, so the arithmetic matches it too.
        x_mean = X.mean(axis=0)
        X = X - x_mean
        x_norm_sq = np.einsum("ij,ij->i", X, X)
        best = None
        for _ in range(n_init):
            centers = _initial_centers(X, self.init, self.n_clusters, rng, x_norm_sq)
            if not isinstance(self.init, str):
                centers -= x_mean
            run = lloyd(X, centers, max_iter=self.max_iter, tol=tol, x_norm_sq=x_norm_sq)
            if best is None or run[1] < best[1]:
                best = run
        labels, inert, centers, n_iter, converged = best
        n_distinct = np.unique(labels).size
        if n_distinct < self.n_clusters:
            warnings.warn(
                f"Number of distinct clusters ({n_distinct}) found smaller than n_clusters "
                f"({self.n_clusters}): X has duplicate points; the empty clusters keep their "
                "centres.",
                ConvergenceWarning,
                stacklevel=2,
            )
        if not converged:
            warnings.warn(
                f"KMeans stopped at max_iter={self.max_iter} before the partition settled; "
                "increase max_iter.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.cluster_centers_ = centers + x_mean
        self.labels_ = labels
        self.inertia_ = inert
        self.n_iter_ = n_iter
        return self

    def predict(self, X):
        """Index of the nearest centre of each row of ``X``.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return _nearest(X, self.cluster_centers_)

    def transform(self, X):
        """Euclidean distances to every centre.

        Returns
        -------
        distances : ndarray of shape (n_samples, n_clusters)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return _distances(X, self.cluster_centers_)

    def score(self, X, y=None) -> float:
        """Minus the distortion of ``X`` under the fitted centres."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        labels = _nearest(X, self.cluster_centers_)
        return -inertia(X, self.cluster_centers_, labels)


class MiniBatchKMeans(ComponentNamesMixin, ClusterMixin, TransformerMixin, BaseEstimator):
    """k-means on mini-batches (Sculley, 2010), for large ``N``.

    Each step draws ``batch_size`` points, assigns them to their nearest centres and moves
    each centre to the running mean of every point it has been given so far:
    ``mu_k <- mu_k + (sum_{b in B_k} x_b - |B_k| mu_k) / n_k`` with ``n_k`` the total count.

    Parameters
    ----------
    n_clusters : int, default=8
    init : {"k-means++", "random"} or array-like of shape (n_clusters, n_features)
        Initial centres; the seeding runs on a random subset of ``3 * batch_size`` points.
    batch_size : int, default=1024
    max_iter : int, default=100
        Maximum number of passes over the data.
    tol : float, default=0.0
        Stop when the total squared centre shift of a step, relative to the mean feature
        variance, is at most ``tol`` (0 disables the test).
    max_no_improvement : int, default=10
        Stop when the smoothed mini-batch distortion has not improved (by more than 1e-3,
        relative) for this many consecutive steps.
    random_state : int, Generator, RandomState or None

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    labels_ : ndarray of shape (n_samples,)
    inertia_ : float
        Distortion of the whole training set under the final centres.
    n_steps_ : int
        Mini-batch steps taken.
    n_iter_ : int
        Passes over the data (``ceil(n_steps_ * batch_size / n_samples)``).
    counts_ : ndarray of shape (n_clusters,)
        Points each centre has absorbed.

    Notes
    -----
    The notes mention k-means "for large data" without an algorithm (spec 001 M40); this is
    the stochastic version of Lloyd's update step: with ``batch_size >= n_samples`` and fresh
    counts one step is exactly one Lloyd iteration. Later full-batch steps keep averaging over
    the whole history, so on data smaller than a batch the centres creep towards the Lloyd
    fixed point slowly: use :class:`KMeans` there. Stopping at ``max_iter`` passes without
    the early-stopping rule firing raises a ConvergenceWarning.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.cluster import MiniBatchKMeans
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0, 0.1, (50, 2)), rng.normal(3, 0.1, (50, 2))]
    >>> mbk = MiniBatchKMeans(n_clusters=2, batch_size=20, random_state=0).fit(X)
    >>> sorted(np.abs(np.round(mbk.cluster_centers_[:, 0])).tolist())
    [0.0, 3.0]
    """

    # The common checks use data of ~20-150 points: a batch of 64 keeps them in the mini-batch
    # regime this estimator is for (full batches only creep, see Notes).
    _common_test_params: ClassVar[dict] = {"batch_size": 64}

    _n_features_out_attr = "cluster_centers_"

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        init="k-means++",
        batch_size: int = 1024,
        max_iter: int = 100,
        tol: float = 0.0,
        max_no_improvement: int = 10,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.init = init
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.tol = tol
        self.max_no_improvement = max_no_improvement
        self.random_state = random_state

    def fit(self, X, y=None):
        """Cluster ``X`` by mini-batch steps.

        Returns
        -------
        self : MiniBatchKMeans
        """
        X = validate_data(self, X, dtype=np.float64)
        n = X.shape[0]
        _check_n_clusters(self.n_clusters, n)
        if not isinstance(self.batch_size, numbers.Integral) or self.batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer; got {self.batch_size!r}.")
        check_int(self.max_iter, "max_iter")
        check_positive(self.tol, "tol", strict=False)
        rng = check_random_state(self.random_state)
        batch = min(int(self.batch_size), n)
        init_idx = rng.choice(n, min(n, max(3 * batch, self.n_clusters)), replace=False)
        # Work about the data mean (each batch is a copy anyway): the expanded squared distance
        # of the assignment loses every digit for data far from the origin.
        x_mean = X.mean(axis=0)
        X_init = X[np.sort(init_idx)] - x_mean
        centers = _initial_centers(X_init, self.init, self.n_clusters, rng, None)
        if not isinstance(self.init, str):
            centers -= x_mean
        counts = np.zeros(self.n_clusters)
        tol = float(np.mean(np.var(X, axis=0))) * self.tol if self.tol > 0 else 0.0
        n_steps_max = int(np.ceil(self.max_iter * n / batch))
        ewa, best_ewa, no_improvement = None, np.inf, 0
        converged = False
        step = 0
        for _ in range(n_steps_max):
            step += 1
            # With replacement: O(batch) per step, not a permutation of all N points.
            idx = rng.integers(n, size=batch) if batch < n else np.arange(n)
            Xb = X[idx]
            Xb -= x_mean
            labels, d2, sums, cnt = assign(Xb, centers, accumulate=True)
            counts += cnt
            hit = cnt > 0
            new_centers = centers.copy()
            new_centers[hit] += (sums[hit] - cnt[hit, None] * centers[hit]) / counts[hit, None]
            shift = float(((new_centers - centers) ** 2).sum())
            centers = new_centers
            # Exponentially weighted average of the batch distortion per point.
            batch_inertia = float(d2.sum()) / batch
            alpha = min(1.0, 2.0 * batch / (n + 1))
            ewa = batch_inertia if ewa is None else ewa * (1 - alpha) + batch_inertia * alpha
            if tol > 0 and shift <= tol:
                converged = True
                break
            # Improvements below 1e-3 (relative) do not count: the running means keep
            # creeping towards the Lloyd fixed point long after the partition has settled.
            if ewa < best_ewa * (1.0 - 1e-3):  # ewa >= 0; best_ewa starts at inf
                best_ewa, no_improvement = ewa, 0
            else:
                no_improvement += 1
            if self.max_no_improvement is not None and no_improvement >= self.max_no_improvement:
                converged = True
                break
        if not converged:
            warnings.warn(
                f"MiniBatchKMeans stopped at max_iter={self.max_iter} passes before its "
                "stopping rule fired.",
                ConvergenceWarning,
                stacklevel=2,
            )
        centers += x_mean
        labels = _nearest(X, centers)
        self.cluster_centers_ = centers
        self.labels_ = labels
        self.inertia_ = inertia(X, centers, labels)
        self.counts_ = counts
        self.n_steps_ = step
        self.n_iter_ = int(np.ceil(step * batch / n))
        return self

    def predict(self, X):
        """Index of the nearest centre of each row of ``X``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return _nearest(X, self.cluster_centers_)

    def transform(self, X):
        """Euclidean distances to every centre, shape (n_samples, n_clusters)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return _distances(X, self.cluster_centers_)

    def score(self, X, y=None) -> float:
        """Minus the distortion of ``X`` under the fitted centres."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return -inertia(X, self.cluster_centers_, _nearest(X, self.cluster_centers_))
