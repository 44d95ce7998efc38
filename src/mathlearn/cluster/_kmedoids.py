"""k-medoids: prototypes restricted to data points, any dissimilarity (PRML §9.1)."""

from __future__ import annotations

import warnings
from numbers import Integral
from typing import ClassVar

import numpy as np
from scipy.spatial.distance import cdist

from ..base import BaseEstimator, ClusterMixin, _fit_context, check_is_fitted
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import check_random_state, validate_data
from ._kmeans import _check_n_clusters, _power_of_two_scale

__all__ = ["KMedoids"]

_METRICS = ("euclidean", "sqeuclidean", "manhattan", "precomputed")
_CDIST = {"euclidean": "euclidean", "sqeuclidean": "sqeuclidean", "manhattan": "cityblock"}


def _dissimilarity(X, Y, metric):
    """Dissimilarities from the differences ``x_i - y_j`` (SciPy's ``cdist``).

    The difference form is exact where it matters here: a point's distance to itself is 0 and
    a shift of the data leaves every distance unchanged (the expanded ``||x||^2 + ||y||^2 -
    2 x^T y`` loses digits far from the origin, and its square root turns a rounding residual
    of 1e-14 into a self-distance of 1e-7). Data of extreme magnitude are divided by a power
    of two first (exact), so that squares neither overflow nor underflow; rows of ``X`` far
    larger than ``Y`` are measured one at a time, each with its own power of two.
    """
    kind = _CDIST[metric]
    power = 2 if metric == "sqeuclidean" else 1
    s = _power_of_two_scale(Y)
    if 2.0**-400 <= s <= 2.0**400:
        s = 1.0
    with np.errstate(over="ignore", under="ignore"):
        Xs, Ys = (X / s, Y / s) if s != 1.0 else (X, Y)
    size = np.max(np.abs(Xs), axis=1) if Xs.shape[1] else np.zeros(Xs.shape[0])
    unsafe = ~(size <= 2.0**400)
    if not unsafe.any():
        D = cdist(Xs, Ys, kind)
        if s != 1.0:
            with np.errstate(over="ignore", under="ignore"):
                for _ in range(power):  # one factor at a time: s**2 itself may not be a float
                    D *= s
    else:
        D = np.empty((X.shape[0], Y.shape[0]))
        safe = np.flatnonzero(~unsafe)
        with np.errstate(over="ignore", under="ignore"):
            D[safe] = cdist(Xs[safe], Ys, kind) * s
            if power == 2:
                D[safe] *= s
        y_max = float(np.max(np.abs(Y))) if Y.size else 0.0
        for i in np.flatnonzero(unsafe):
            e = int(np.frexp(max(float(np.max(np.abs(X[i]))), y_max))[1])
            row = cdist(np.ldexp(X[i : i + 1], -e), np.ldexp(Y, -e), kind)
            with np.errstate(over="ignore"):
                D[i] = np.ldexp(row, power * e)
    if not np.all(np.isfinite(D)):
        raise ValueError(
            f"a {metric} dissimilarity of X exceeds the largest float (~1.8e308); rescale X."
        )
    if s < 1.0 and power == 2 and np.any((D == 0) & (cdist(Xs, Ys, kind) > 0)):
        raise ValueError(
            "a sqeuclidean dissimilarity of X is below the smallest float (~4.9e-324); use "
            "metric='euclidean' (same medoids) or rescale X."
        )
    return D


def _far_rows_nearest(X, M, labels):
    """Nearest centre (Euclidean) of rows so far out (2**52 times the centres' size or more)
    that their distances to all centres agree to every digit: ``argmin_k (||m_k||^2 - 2 x^T
    m_k)``, divided by a power of two near ``|x|`` (see :class:`KMeans`' prediction)."""
    m_max = float(np.max(np.abs(M))) if M.size else 0.0
    size = np.max(np.abs(X), axis=1) if X.shape[1] else np.zeros(X.shape[0])
    for i in np.flatnonzero(size > 2.0**52 * max(m_max, np.finfo(float).tiny)):
        e = int(np.frexp(size[i])[1])
        with np.errstate(under="ignore"):
            score = np.einsum("kd,kd->k", M, np.ldexp(M, -e)) - 2.0 * (M @ np.ldexp(X[i], -e))
        labels[i] = int(np.argmin(score))
    return labels


class KMedoids(ClusterMixin, BaseEstimator):
    """k-medoids clustering by alternating assignment and medoid update.

    Minimises ``J~ = sum_n V(x_n, m_{c_n})`` over partitions and prototypes ``m_k`` that must
    be data points, for a general dissimilarity ``V``.

    Parameters
    ----------
    n_clusters : int, default=8
    metric : {"euclidean", "sqeuclidean", "manhattan", "precomputed"}, default="euclidean"
        The dissimilarity ``V``. With ``"precomputed"``, ``X`` in ``fit`` is a square
        dissimilarity matrix, ``X[i, j] = V(x_i, x_j)`` from point ``i`` to prototype ``j``
        (it need not be symmetric), and in ``predict`` the dissimilarities to the training
        points.
    init : {"k-medoids++", "random"} or array-like of shape (n_clusters,)
        k-means++-style seeding on ``V`` (probability proportional to the dissimilarity to
        the nearest chosen medoid), distinct points drawn uniformly, or given row indices.
    max_iter : int, default=300
    random_state : int, Generator, RandomState or None

    Attributes
    ----------
    medoid_indices_ : ndarray of shape (n_clusters,)
        Rows of the training data that are the medoids.
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The medoids themselves (absent with ``metric="precomputed"``).
    labels_ : ndarray of shape (n_samples,)
    inertia_ : float
        ``J~`` at the end.
    n_iter_ : int
    n_features_in_ : int

    See Also
    --------
    mathlearn.cluster.KMeans
        Centres that are means rather than data points.
    mathlearn.cluster.AgglomerativeClustering
        Hierarchical clustering from distances.

    Notes
    -----
    PRML §9.1 (K-medoids): the assignment step gives each point
    its nearest medoid under ``V``; the update step replaces each medoid by the member of its
    cluster with the smallest summed dissimilarity to the other members, ``O(N_k^2)`` per
    cluster. Neither step increases ``J~``, and there are finitely many medoid sets, so the
    iteration stops; it stops when the medoids no longer change. The full ``N x N``
    dissimilarity matrix is formed once, so this suits moderate ``N``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.cluster import KMedoids
    >>> X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [30.0]])
    >>> km = KMedoids(n_clusters=2, init=[0, 3]).fit(X)
    >>> km.cluster_centers_.ravel().tolist(), km.labels_.tolist()
    ([1.0, 11.0], [0, 0, 0, 1, 1, 1])
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "metric": [StrOptions(set(_METRICS))],
        "init": [StrOptions({"k-medoids++", "random"}), "array-like"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        metric: str = "euclidean",
        init="k-medoids++",
        max_iter: int = 300,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.metric = metric
        self.init = init
        self.max_iter = max_iter
        self.random_state = random_state

    def _init_medoids(self, D, rng):
        n = D.shape[0]
        k = self.n_clusters
        if isinstance(self.init, str):
            if self.init == "random":
                return rng.choice(n, k, replace=False)
            idx = [int(rng.integers(n))]
            nearest = D[:, idx[0]].copy()
            for _ in range(1, k):
                total = nearest.sum()
                if total <= 0:
                    rest = np.setdiff1d(np.arange(n), idx)
                    idx.append(int(rng.choice(rest)))
                else:
                    idx.append(int(rng.choice(n, p=nearest / total)))
                np.minimum(nearest, D[:, idx[-1]], out=nearest)
            return np.asarray(idx)
        idx = np.asarray(self.init)
        if (
            idx.shape != (k,)
            or not np.issubdtype(idx.dtype, np.integer)
            or np.unique(idx).size != k
            or idx.min() < 0
            or idx.max() >= n
        ):
            raise ValueError(
                f"init must hold {k} distinct row indices in [0, {n}); got {self.init!r}."
            )
        return idx.copy()

    @_fit_context
    def fit(self, X, y=None):
        """Cluster ``X`` (or a precomputed dissimilarity matrix).

        Returns
        -------
        self : KMedoids
        """
        X = validate_data(self, X, dtype=np.float64)
        if self.metric == "precomputed":
            if X.shape[0] != X.shape[1]:
                raise ValueError(f"a precomputed dissimilarity must be square; got {X.shape}.")
            if np.any(X < 0):
                raise ValueError("a precomputed dissimilarity must be non-negative.")
            D = X
        else:
            D = _dissimilarity(X, X, self.metric)
        _check_n_clusters(self.n_clusters, X.shape[0])
        rng = check_random_state(self.random_state)
        medoids = self._init_medoids(D, rng)
        converged = False
        n_iter = 0
        for _ in range(self.max_iter):
            n_iter += 1
            labels = np.argmin(D[:, medoids], axis=1)
            new = medoids.copy()
            for k in range(self.n_clusters):
                members = np.flatnonzero(labels == k)
                if members.size:  # empty only when medoids coincide: keep the old one
                    # Cost of m as medoid: sum_j V(x_j, m), the column sum (the assignment reads
                    # V(point, medoid); for a non-symmetric V the row sum would not be J~).
                    cost = D[np.ix_(members, members)].sum(axis=0)
                    new[k] = members[np.argmin(cost)]
            if np.array_equal(new, medoids):
                converged = True
                break
            medoids = new
        if not converged:
            warnings.warn(
                f"KMedoids stopped at max_iter={self.max_iter} while medoids still moved.",
                ConvergenceWarning,
                stacklevel=2,
            )
        labels = np.argmin(D[:, medoids], axis=1)
        self.medoid_indices_ = medoids
        if self.metric != "precomputed":
            self.cluster_centers_ = X[medoids].copy()
        self.labels_ = labels
        self.inertia_ = float(D[np.arange(D.shape[0]), medoids[labels]].sum())
        self.n_iter_ = n_iter
        return self

    def predict(self, X):
        """Nearest medoid of each row of ``X`` under the metric.

        With ``metric="precomputed"``, ``X`` has shape (n_samples, n_train_samples): the
        dissimilarities to the training points.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.metric == "precomputed":
            return np.argmin(X[:, self.medoid_indices_], axis=1)
        # The nearest medoid under the squared distance is the nearest under the distance,
        # which stays a float for rows ~1e154 times farther out.
        metric = "euclidean" if self.metric == "sqeuclidean" else self.metric
        labels = np.argmin(_dissimilarity(X, self.cluster_centers_, metric), axis=1)
        if metric == "euclidean":
            labels = _far_rows_nearest(X, self.cluster_centers_, labels)
        return labels

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.metric == "precomputed"
        return tags
