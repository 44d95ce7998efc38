"""k-means by Lloyd's algorithm and its mini-batch variant."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from ..base import (
    BaseEstimator,
    ClusterMixin,
    ComponentNamesMixin,
    TransformerMixin,
    _fit_context,
    check_is_fitted,
)
from ..exceptions import ConvergenceWarning, NumericalWarning
from ..utils._backend import is_dask
from ..utils._columns import column_extremes, column_means
from ..utils._param_validation import Interval, StrOptions
from ..utils.extmath import squared_distances, sum_of_squares
from ..utils.validation import check_array, check_random_state, check_sample_weight, validate_data
from ._kmeans_common import (
    _kmeans_plusplus,
    assign,
    blas_loop,
    check_n_clusters,
    inertia,
)

__all__ = ["KMeans", "MiniBatchKMeans"]

# Kept under its old name for the other estimators of the package.
_check_n_clusters = check_n_clusters


def _initial_centers(X, init, n_clusters, rng, x_norm_sq, sample_weight=None, *, X_user=None):
    """Initial centres (in the coordinates of ``X``) from ``init``: 'k-means++', 'random'
    (distinct data points, drawn by weight), an array, or a callable.

    ``X`` is the centred data the loop runs on; ``X_user`` the data as the user gave them (a
    callable is called on those, its centres are then moved into ``X``'s coordinates by the
    caller, as for an array).
    """
    if isinstance(init, str):
        if init == "k-means++":
            # Greedy k-means++ (2 + log K candidates per step, as scikit-learn): the notes'
            # draw, repeated, keeping the candidate that lowers the potential most.
            trials = 2 + int(np.log(n_clusters))
            return _kmeans_plusplus(
                X, n_clusters, rng, x_norm_sq, n_local_trials=trials, sample_weight=sample_weight
            )[0]
        # "random" (the only other string the constraints allow)
        p = None if sample_weight is None else sample_weight / sample_weight.sum()
        return X[rng.choice(X.shape[0], n_clusters, replace=False, p=p)].copy()
    if callable(init):
        centers = init(X_user, n_clusters, random_state=rng)
        what = "the centres returned by the init callable"
    else:
        centers = init
        what = "init array"
    centers = check_array(centers, dtype=np.float64, copy=True, input_name="init")
    if centers.shape != (n_clusters, X.shape[1]):
        raise ValueError(
            f"{what} has shape {centers.shape}; expected (n_clusters, n_features) = "
            f"({n_clusters}, {X.shape[1]})."
        )
    return centers


def _n_init(n_init, init):
    if n_init == "auto":
        return 10 if isinstance(init, str) and init == "random" else 1
    if not isinstance(init, str) and n_init != 1:
        # Restarting from the same given centres would repeat the same run.
        return 1
    return int(n_init)


def _power_of_two_scale(*arrays) -> float:
    """A power of two near the largest magnitude in ``arrays`` (1.0 for zeros).

    Dividing by it is exact (barring underflow below 2**-1022), and brings values of any
    magnitude into a range where squares neither overflow nor underflow.
    """
    m = max((float(np.max(np.abs(a))) if a.size else 0.0) for a in arrays)
    if not np.isfinite(m) or m == 0.0:
        return 1.0
    # 2**(e - 1) <= m < 2**e; 2**e itself may not be a float (m near the largest one).
    return float(np.ldexp(1.0, int(np.frexp(m)[1]) - 1))


def _relocate_empty(X, centers_old, labels, sums, counts, sample_weight=None):
    """Give each empty cluster the point farthest from its current centre (taken from its
    cluster), as scikit-learn does, so that no centre is left without data.

    Only points off their centre (and with a non-zero weight) are moved: with fewer distinct
    points than clusters (duplicates) the surplus clusters stay empty and keep their centres,
    since moving a point that sits on its centre cannot lower ``J`` and made the centres hop
    between duplicates without end.
    """
    empty = np.flatnonzero(counts == 0)
    if empty.size == 0:
        return
    dist = ((X - centers_old[labels]) ** 2).sum(axis=1)
    if sample_weight is not None:
        dist[sample_weight == 0] = 0.0
    # The same selection call as scikit-learn, so that ties are broken the same way.
    far = np.argpartition(dist, -empty.size)[: -empty.size - 1 : -1]
    far = far[dist[far] > 0]
    for new_k, i in zip(empty, far, strict=False):
        old_k = labels[i]
        w = 1.0 if sample_weight is None else sample_weight[i]
        sums[old_k] -= w * X[i]
        counts[old_k] -= w
        sums[new_k] = w * X[i]
        counts[new_k] = w
        labels[i] = new_k


def _nearest_with_distances(X, centers, *, distances: bool):
    """Nearest centre of each row of ``X`` and, optionally, the Euclidean distances to every
    centre, accurate for data far from the origin and of any magnitude.

    The bulk goes through the assignment kernel / BLAS on the data taken about the centres'
    mean (the expanded ``||x||^2 - 2 x^T mu + ||mu||^2`` cancels catastrophically far from
    the origin), divided by a power of two (exact) when the centres' spread is extreme.
    Rows whose squares would still overflow (points ~1e120 or more from the centres) are
    measured one by one from the differences, each scaled by its own power of two.
    """
    shift = centers.mean(axis=0)
    Cs = centers - shift
    g = _power_of_two_scale(Cs)
    if 2.0**-400 <= g <= 2.0**400:
        g = 1.0
    else:
        Cs = Cs / g
    with np.errstate(over="ignore", invalid="ignore"):
        Xs = (X - shift) / g if g != 1.0 else X - shift
        size = np.max(np.abs(Xs), axis=1) if Xs.shape[1] else np.zeros(Xs.shape[0])
    unsafe = ~(size <= 2.0**400)  # also catches inf and NaN
    n, k = X.shape[0], centers.shape[0]
    labels = np.empty(n, dtype=np.intp)
    dist = np.empty((n, k)) if distances else None
    safe = np.flatnonzero(~unsafe)
    if safe.size:
        Xsafe = Xs[safe] if unsafe.any() else Xs
        labels[safe] = assign(Xsafe, Cs, distances=False)[0]
        if distances:
            dist[safe] = np.sqrt(squared_distances(Xsafe, Cs)) * g
    c_norm = np.einsum("kd,kd->k", Cs, Cs)
    for i in np.flatnonzero(unsafe):
        # argmin_k ||x - c_k||^2 = argmin_k (||c_k||^2 - 2 x^T c_k), divided by 2^e ~ |x|:
        # exact in ordering, and finite (the distances themselves agree to all their digits).
        e = int(np.frexp(max(float(np.max(np.abs(X[i]))), float(np.max(np.abs(centers)))))[1])
        with np.errstate(under="ignore"):
            xs = np.ldexp(X[i], -e) - np.ldexp(shift, -e)
            labels[i] = int(np.argmin(np.ldexp(c_norm, -e) * g * g - 2.0 * g * (Cs @ xs)))
        if distances:
            r = np.ldexp(X[i], -e) - np.ldexp(centers, -e)
            with np.errstate(over="ignore"):
                dist[i] = np.ldexp(np.sqrt(np.einsum("kd,kd->k", r, r)), e)
    return labels, dist


def _nearest(X, centers):
    """Labels of the nearest centres (see :func:`_nearest_with_distances`)."""
    return _nearest_with_distances(X, centers, distances=False)[0]


def _distances(X, centers):
    """Euclidean distances to every centre (see :func:`_nearest_with_distances`); a distance
    beyond the float range raises."""
    out = _nearest_with_distances(X, centers, distances=True)[1]
    if not np.all(np.isfinite(out)):
        raise ValueError(
            "a distance to a centre exceeds the largest float (~1.8e308): X holds values too "
            "large to measure against the fitted centres."
        )
    return out


def _check_fit_data(estimator, X, sample_weight):
    """Validated ``X`` (float64) and weights (``None`` when not given)."""
    X = validate_data(estimator, X, dtype=np.float64)
    if sample_weight is not None:
        sample_weight = check_sample_weight(sample_weight, X)
    return X, sample_weight


def _check_finite_range(X):
    """Data whose spread is not a finite float cannot be clustered in floating point.

    Returns the column minima and maxima (reused by :class:`_Frame`).
    """
    if not X.size:
        return np.zeros(X.shape[1]), np.zeros(X.shape[1])
    hi, lo = column_extremes(X)
    spread = hi - lo
    if not np.all(np.isfinite(spread)):
        raise ValueError(
            "the range of X (max - min of a feature) exceeds the largest float (~1.8e308); "
            "rescale X."
        )
    return lo, hi


def _tolerance(X, tol, sample_weight, x_norm_sq=None):
    """``tol`` times the mean per-feature variance (weighted: that of the repeated data).

    ``X`` is centred (the working frame), so without weights the variances are the mean
    squares, ``sum_i ||x_i||^2 / (N D)``, from the row norms the loop needs anyway.
    """
    if tol <= 0:
        return 0.0
    if sample_weight is None:
        n, d = X.shape
        total = float(x_norm_sq.sum()) if x_norm_sq is not None else sum_of_squares(X)
        return total / (n * max(d, 1)) * tol
    mean = sample_weight @ X / sample_weight.sum()
    var = sample_weight @ ((X - mean) ** 2) / sample_weight.sum()
    return float(np.mean(var)) * tol


def _blocked_tolerance(frame, n_features: int, tol, sample_weight):
    """:func:`_tolerance` from the working rows of ``frame``, one block at a time."""
    if tol <= 0:
        return 0.0
    n = frame._source.shape[0]
    if sample_weight is None:
        total = sum(sum_of_squares(Xb) for _, Xb in frame.blocks(n_features))
        return total / (n * max(n_features, 1)) * tol
    w_sum = sample_weight.sum()
    mean = sum(sample_weight[sl] @ Xb for sl, Xb in frame.blocks(n_features)) / w_sum
    var = sum(sample_weight[sl] @ ((Xb - mean) ** 2) for sl, Xb in frame.blocks(n_features))
    return float(np.mean(var / w_sum)) * tol


def lloyd(X, centers, *, max_iter: int, tol: float, x_norm_sq=None, sample_weight=None):
    """Lloyd's iterations from ``centers`` (PRML §9.1, steps 1-3).

    Stops when the partition no longer changes or the total squared centre shift is at most
    ``tol`` (absolute). Returns ``labels, inertia, centers, n_iter, converged``; the labels are
    those of the returned centres. With ``sample_weight`` each centre is the weighted mean of
    its points and the inertia is weighted.
    """
    n = X.shape[0]
    parts, blas = blas_loop(n, *centers.shape)
    with blas:
        return _lloyd(X, centers, max_iter, tol, sample_weight, parts)


def _lloyd(X, centers, max_iter, tol, sample_weight, parts):
    n = X.shape[0]
    labels_old = np.full(n, -1, dtype=np.intp)
    converged = strict = False
    n_iter = 0
    for _ in range(max_iter):
        n_iter += 1
        labels, _, sums, counts = assign(
            X, centers, accumulate=True, distances=False, sample_weight=sample_weight,
            parts=parts,
        )  # fmt: skip
        _relocate_empty(X, centers, labels, sums, counts, sample_weight)
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
        labels = assign(X, centers, distances=False, parts=parts)[0]
    return labels, inertia(X, centers, labels, sample_weight), centers, n_iter, converged


class _Frame:
    """The working coordinates of a fit: ``(x / s - mean) / t`` with ``s``, ``t`` powers of two.

    Centring (exact mathematics: k-means does not depend on the origin) keeps the expanded
    squared distances accurate far from the origin; the power-of-two scalings are exact in
    floating point and keep squares inside the float range for data of any magnitude
    (1e-300 .. 1e300). Each scaling is applied only when needed, so ordinary data run on the
    centred data exactly as before.

    With ``materialize=False`` no transformed copy of ``X`` is kept: :meth:`rows` transforms
    the rows a caller asks for (a mini-batch, a block), with the same operations element by
    element, so the values are those the full copy would hold, bit for bit.
    """

    def __init__(self, X, col_range=None, *, materialize: bool = True):
        if col_range is None:
            col_range = column_extremes(X)[::-1] if X.size else (np.zeros(0),) * 2
        lo, hi = col_range
        s = _power_of_two_scale(lo, hi)
        self.s = s if not 2.0**-400 <= s <= 2.0**400 else 1.0
        self._source = X
        Xs = X / self.s if self.s != 1.0 else X
        self.mean = column_means(Xs)
        if self.s == 1.0:
            # max |x - m| over a column is max(hi - m, m - lo): rounding is monotonic, so
            # these are the largest entries of Xc exactly, without another pass over it.
            Xc = Xs - self.mean if materialize else None
            t = _power_of_two_scale(hi - self.mean, self.mean - lo)
        else:
            Xc = Xs - self.mean
            t = _power_of_two_scale(Xc)
            if not materialize:
                Xc = None
        self.t = t if not 2.0**-400 <= t <= 2.0**400 else 1.0
        if Xc is not None:  # materialize
            self.X = Xc / self.t if self.t != 1.0 else Xc

    def rows(self, index):
        """The working coordinates of ``X[index]`` (a new array)."""
        Xb = self._source[index]
        if self.s != 1.0:
            Xb = Xb / self.s
            Xb -= self.mean
        elif isinstance(index, slice):
            Xb = Xb - self.mean  # a view: one new array
        else:
            Xb -= self.mean  # fancy indexing made a copy already
        if self.t != 1.0:
            Xb /= self.t
        return Xb

    def blocks(self, n_features: int):
        """``(slice, working rows)`` over the data in blocks of about 256 kB."""
        n = self._source.shape[0]
        step = max(1, (1 << 18) // (8 * max(n_features, 1)))
        for start in range(0, n, step):
            sl = slice(start, min(n, start + step))
            yield sl, self.rows(sl)

    def to_work(self, C):
        return (C / self.s - self.mean) / self.t

    def from_work(self, C):
        return (C * self.t + self.mean) * self.s

    def sq_scale(self) -> float:
        with np.errstate(over="ignore"):
            return np.float64(self.s * self.t) ** 2


def _rescaled_inertia(value, frame, who):
    with np.errstate(over="ignore"):
        out = float(value * frame.sq_scale())
    if not np.isfinite(out):
        warnings.warn(
            f"{who}'s inertia exceeds the largest float (~1.8e308) for data of this magnitude; "
            "inertia_ is inf (the partition and centres are unaffected).",
            NumericalWarning,
            stacklevel=3,
        )
    return out


_KMEANS_CONSTRAINTS = {
    "n_clusters": [Interval(Integral, 1, None, closed="left")],
    "init": [StrOptions({"k-means++", "random"}), callable, "array-like"],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "random_state": ["random_state"],
}


def _score(est, X, sample_weight):
    X = validate_data(est, X, dtype=np.float64, reset=False)
    if sample_weight is not None:
        sample_weight = check_sample_weight(sample_weight, X)
    labels = _nearest(X, est.cluster_centers_)
    # From the differences x - mu (exact far from the origin); overflow gives inf.
    total = inertia(X, est.cluster_centers_, labels, sample_weight)
    if not np.isfinite(total):
        warnings.warn(
            "the distortion of X exceeds the largest float (~1.8e308); the score is -inf.",
            NumericalWarning,
            stacklevel=3,
        )
    return -total


class KMeans(ComponentNamesMixin, ClusterMixin, TransformerMixin, BaseEstimator):
    """k-means clustering by Lloyd's algorithm with k-means++ seeding.

    Minimises the distortion ``J = sum_n ||x_n - mu_{c_n}||^2`` by alternating the
    assignment step (each point to its nearest centre) and the update step (each centre to
    the mean of its points).

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters ``K``.
    init : {"k-means++", "random"}, callable or array-like of shape (n_clusters, n_features)
        Initial centres: greedy k-means++ seeding (each step draws ``2 + log K`` candidates
        with probability proportional to ``rho_i^2`` and keeps the one that lowers
        ``sum_i rho_i^2`` most), ``K`` distinct data points drawn uniformly (by weight), the
        given centres, or ``init(X, n_clusters, random_state=...)`` returning them (called with
        the data as given and a ``numpy.random.Generator``).
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

    See Also
    --------
    mathlearn.cluster.MiniBatchKMeans
        k-means on mini-batches for large N.
    mathlearn.mixture.GaussianMixture
        The soft, probabilistic generalisation.
    sklearn.cluster.KMeans
        scikit-learn's equivalent.

    Notes
    -----
    PRML §9.1 and Oxford "Advanced Topics in Statistical Machine Learning" §1.1.2 (Algorithm 1.1,
    k-means++ eq. 1.17). The assignment uses ``||x - mu||^2 = ||x||^2 - 2 x^T mu + ||mu||^2`` with
    one matrix product per iteration, clipped at zero, on the data centred by their mean (a copy;
    far from the origin the expanded form would cancel); ties go to the lowest index. ``J`` never
    increases, so the algorithm stops at a local minimum. A cluster that becomes empty gets
    the point farthest from its centre (the notes do not treat this case); with
    fewer distinct points than clusters the surplus clusters stay empty, keep their centres,
    and a :class:`~mathlearn.exceptions.ConvergenceWarning` gives the number found.
    A run that reaches ``max_iter`` raises a :class:`~mathlearn.exceptions.ConvergenceWarning`.

    With ``sample_weight`` the centres are weighted means, ``J = sum_n w_n ||x_n -
    mu_{c_n}||^2`` and the seeding draws by weight: integer weights are repeated rows.

    Stopping rule (scikit-learn's): a run stops as soon as an assignment step leaves the
    partition unchanged (strict convergence), or when the total squared shift of the centres
    ``sum_k ||mu_k^new - mu_k||^2`` is at most ``tol`` times the mean per-feature variance of
    ``X``. With the default ``init="k-means++"`` and ``n_init="auto"`` there is one run from the
    greedy seeding (``2 + int(log K)`` candidates per centre).

    Complexity: each Lloyd iteration costs ``O(N K D)`` time: the cross terms ``X C^T`` by BLAS
    over blocks of rows (each block's ``rows x K`` products kept within ~256 KiB), then one
    compiled pass (helper ``_ext._kmeans``) that takes each row's nearest centre and adds the
    row to its cluster's sum (a pass of more than about 4e6 multiply-adds splits its rows
    between as many threads as BLAS may use: ``threadpoolctl.threadpool_limits(1)`` keeps it
    on one); the k-means++ seeding costs ``O(N K D log K)``. Memory: the
    centred copy of ``X`` (``N D``) and ``O(N)`` besides, with no ``N x K`` array. Data of
    extreme magnitude are divided by a power of two (exact) before the loop, so that squares
    stay in the float range; ``predict``/``transform`` handle rows of any magnitude.

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

    _parameter_constraints: ClassVar[dict] = {
        **_KMEANS_CONSTRAINTS,
        "n_init": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
    }

    # The sample-weight checks fit 4 distinct points: 8 clusters would leave some empty (and
    # warn), so the common checks use 3, as scikit-learn's own use a small K for KMeans.
    _common_test_params: ClassVar[dict] = {"n_clusters": 3}

    _expected_failed_checks: ClassVar[dict] = {
        "check_sample_weight_equivalence_on_dense_data": (
            "the random initialisation draws from the rows as stored: the same seed picks "
            "different centres from weighted rows and from repeated rows (the weighted "
            "k-means++ distribution is that of the repeated data, the draws are not)."
        ),
    }

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

    @_fit_context
    def fit(self, X, y=None, sample_weight=None):
        """Cluster ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights: each centre is the weighted mean of its points, the
            distortion is ``sum_n w_n ||x_n - mu_{c_n}||^2``, and the seeding draws by
            weight (a row of weight ``w`` counts as ``w`` repeated rows).

        Returns
        -------
        self : KMeans
        """
        if is_dask(X):
            from ._dask import kmeans_fit_dask

            return kmeans_fit_dask(self, X, sample_weight)
        X, sample_weight = _check_fit_data(self, X, sample_weight)
        check_n_clusters(self.n_clusters, X.shape[0], sample_weight)
        col_range = _check_finite_range(X)
        rng = check_random_state(self.random_state)
        n_init = _n_init(self.n_init, self.init)
        # Cluster the centred data (a copy; the partition does not depend on the origin): the
        # expanded ||x||^2 - 2 x^T mu + ||mu||^2 loses every digit for data far from the
        # origin. scikit-learn does the same, so the arithmetic matches it too.
        frame = _Frame(X, col_range)
        Xw = frame.X
        # Row norms for the k-means++ seeding only (the loop does not need them).
        seeding = isinstance(self.init, str) and self.init == "k-means++"
        x_norm_sq = np.einsum("ij,ij->i", Xw, Xw) if seeding else None
        tol = _tolerance(Xw, self.tol, sample_weight, x_norm_sq)
        best = None
        for _ in range(n_init):
            centers = _initial_centers(
                Xw, self.init, self.n_clusters, rng, x_norm_sq, sample_weight, X_user=X
            )
            if not isinstance(self.init, str):
                centers = frame.to_work(centers)
            run = lloyd(
                Xw,
                centers,
                max_iter=self.max_iter,
                tol=tol,
                x_norm_sq=x_norm_sq,
                sample_weight=sample_weight,
            )
            if best is None or run[1] < best[1]:
                best = run
        labels, inert, centers, n_iter, converged = best
        used = labels if sample_weight is None else labels[sample_weight > 0]
        n_distinct = int(np.count_nonzero(np.bincount(used, minlength=self.n_clusters)))
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
        self.cluster_centers_ = frame.from_work(centers)
        self.labels_ = labels
        self.inertia_ = _rescaled_inertia(inert, frame, "KMeans")
        self.n_iter_ = n_iter
        return self

    def predict(self, X):
        """Index of the nearest centre of each row of ``X``.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        if is_dask(X):
            from ._dask import kmeans_predict_dask

            return kmeans_predict_dask(self, X, distances=False)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return _nearest(X, self.cluster_centers_)

    def transform(self, X):
        """Euclidean distances to every centre.

        Returns
        -------
        distances : ndarray of shape (n_samples, n_clusters)
        """
        check_is_fitted(self)
        if is_dask(X):
            from ._dask import kmeans_predict_dask

            return kmeans_predict_dask(self, X, distances=True)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return _distances(X, self.cluster_centers_)

    def score(self, X, y=None, sample_weight=None) -> float:
        """Minus the (weighted) distortion of ``X`` under the fitted centres."""
        check_is_fitted(self)
        return _score(self, X, sample_weight)


class MiniBatchKMeans(ComponentNamesMixin, ClusterMixin, TransformerMixin, BaseEstimator):
    """k-means on mini-batches (Sculley, 2010), for large ``N``.

    Each step draws ``batch_size`` points, assigns them to their nearest centres and moves
    each centre to the running mean of every point it has been given so far:
    ``mu_k <- mu_k + (sum_{b in B_k} x_b - |B_k| mu_k) / n_k`` with ``n_k`` the total count.

    Parameters
    ----------
    n_clusters : int, default=8
    init : {"k-means++", "random"}, callable or array-like of shape (n_clusters, n_features)
        Initial centres, as for :class:`KMeans`; the seeding runs on a random subset of
        ``3 * batch_size`` points (a callable is called on that subset).
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

    See Also
    --------
    mathlearn.cluster.KMeans
        Full-batch Lloyd iterations.
    sklearn.cluster.MiniBatchKMeans
        scikit-learn's equivalent.

    Notes
    -----
    The notes mention k-means "for large data" without an algorithm (PRML §9.1); this is
    the stochastic version of Lloyd's update step: with ``batch_size >= n_samples`` and fresh
    counts one step is exactly one Lloyd iteration. Later full-batch steps keep averaging over
    the whole history, so on data smaller than a batch the centres creep towards the Lloyd
    fixed point slowly: use :class:`KMeans` there. Stopping at ``max_iter`` passes without
    the early-stopping rule firing raises a ConvergenceWarning.

    Complexity: a step costs ``O(batch_size K D)`` time; the final assignment of all points
    ``O(N K D)``. Memory beyond ``X`` is ``O(batch_size D + K D)`` plus the labels: the
    centred, scaled working coordinates are computed per batch and per block of the final
    pass, never as a copy of ``X`` (one copy when ``batch_size >= N``). The number of steps
    is set by the stopping rule and varies with the seed (the smoothed distortion starts
    from one batch's value, so whether it keeps improving for long depends on that draw).

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
    # regime this estimator is for (full batches only creep, see Notes). A fixed seed: several
    # checks fit without setting one, and on their 20-point data (one full batch) some draws
    # of the start reach max_iter, whose ConvergenceWarning the test suite turns into an error.
    _common_test_params: ClassVar[dict] = {"batch_size": 64, "random_state": 0}

    _n_features_out_attr = "cluster_centers_"

    _parameter_constraints: ClassVar[dict] = {
        **_KMEANS_CONSTRAINTS,
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "max_no_improvement": [Interval(Integral, 0, None, closed="left"), None],
    }

    _expected_failed_checks: ClassVar[dict] = {
        "check_sample_weight_equivalence_on_dense_data": (
            "mini-batches are drawn from the rows as stored: weighted rows and repeated rows "
            "give different batches (each batch's update is weighted, the draws are not)."
        ),
    }

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

    @_fit_context
    def fit(self, X, y=None, sample_weight=None):
        """Cluster ``X`` by mini-batch steps.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights: within a batch each point counts with its weight, in the
            sums, in the counts ``n_k`` and in the distortion.

        Returns
        -------
        self : MiniBatchKMeans
        """
        X, sample_weight = _check_fit_data(self, X, sample_weight)
        n = X.shape[0]
        check_n_clusters(self.n_clusters, n, sample_weight)
        col_range = _check_finite_range(X)
        rng = check_random_state(self.random_state)
        batch = min(int(self.batch_size), n)
        init_idx = np.sort(rng.choice(n, min(n, max(3 * batch, self.n_clusters)), replace=False))
        w_init = None if sample_weight is None else sample_weight[init_idx]
        if w_init is not None and np.count_nonzero(w_init) < self.n_clusters:
            # The subset drew too few weighted points: seed on all of them.
            init_idx = np.arange(n)
            w_init = sample_weight
        # Work about the data mean (each batch is a copy anyway), scaled when the data call for
        # it: the expanded squared distance of the assignment loses every digit for data far
        # from the origin, and squares overflow for huge values (see _Frame).
        # No working copy of X is kept: each batch (a copy anyway) and each block of the final
        # pass is transformed when it is drawn, so the memory beyond X is O(batch + K D).
        frame = _Frame(X, col_range, materialize=False)
        # A batch of all N points is the same every step: transformed once.
        X_all = frame.rows(slice(None)) if batch >= n else None
        everything = init_idx.size == n  # init_idx is sorted: then it is arange(n)
        centers = _initial_centers(
            X_all if everything and X_all is not None else frame.rows(init_idx),
            self.init,
            self.n_clusters,
            rng,
            None,
            w_init,
            X_user=(X if everything else X[init_idx]) if callable(self.init) else None,
        )
        if not isinstance(self.init, str):
            centers = frame.to_work(centers)
        k = self.n_clusters
        counts = np.zeros(k)
        tol = _blocked_tolerance(frame, X.shape[1], self.tol, sample_weight)
        n_steps_max = int(np.ceil(self.max_iter * n / batch))
        ewa, best_ewa, no_improvement = None, np.inf, 0
        converged = False
        step = 0
        # (one BLAS limit for the whole loop, see blas_loop)
        parts, blas = blas_loop(batch, k, X.shape[1])
        with blas:
            for _ in range(n_steps_max):
                step += 1
                # With replacement: O(batch) per step, not a permutation of all N points.
                idx = rng.integers(n, size=batch) if X_all is None else np.arange(n)
                Xb = frame.rows(idx) if X_all is None else X_all
                if sample_weight is None:
                    labels, d2, sums, cnt = assign(Xb, centers, accumulate=True, parts=parts)
                    batch_weight = float(batch)
                else:
                    wb = sample_weight[idx]
                    labels, d2, sums, cnt = assign(
                        Xb, centers, accumulate=True, sample_weight=wb, parts=parts
                    )
                    d2 = d2 * wb
                    batch_weight = float(wb.sum())
                counts += cnt
                hit = cnt > 0
                new_centers = centers.copy()
                new_centers[hit] += (sums[hit] - cnt[hit, None] * centers[hit]) / counts[hit, None]
                shift = float(((new_centers - centers) ** 2).sum())
                centers = new_centers
                # Exponentially weighted average of the batch distortion per point.
                batch_inertia = float(d2.sum()) / batch_weight if batch_weight > 0 else 0.0
                alpha = min(1.0, 2.0 * batch / (n + 1))
                ewa = batch_inertia if ewa is None else ewa * (1 - alpha) + batch_inertia * alpha
                if tol > 0 and shift <= tol:
                    converged = True
                    break
                if step == 1:
                    # The first batch's distortion is measured against the initial centres, not
                    # a fitted state: the average starts at the second (scikit-learn's rule).
                    # Started at the first, it decayed from the seeding's distortion for ~200 steps
                    # where the partition settled in a few.
                    ewa = None
                    continue
                # Improvements below 1e-3 (relative) do not count: the running means keep
                # creeping towards the Lloyd fixed point long after the partition has settled.
                if ewa < best_ewa * (1.0 - 1e-3):  # ewa >= 0; best_ewa starts at inf
                    best_ewa, no_improvement = ewa, 0
                else:
                    no_improvement += 1
                if (
                    self.max_no_improvement is not None
                    and no_improvement >= self.max_no_improvement
                ):
                    converged = True
                    break
        if not converged:
            warnings.warn(
                f"MiniBatchKMeans stopped at max_iter={self.max_iter} passes before its "
                "stopping rule fired.",
                ConvergenceWarning,
                stacklevel=2,
            )
        labels = np.empty(n, dtype=np.int64)
        total = 0.0
        blocks = frame.blocks(X.shape[1]) if X_all is None else [(slice(None), X_all)]
        for sl, Xb in blocks:
            labels[sl] = assign(Xb, centers, distances=False)[0]
            wb = None if sample_weight is None else sample_weight[sl]
            total += inertia(Xb, centers, labels[sl], wb)
        self.cluster_centers_ = frame.from_work(centers)
        self.labels_ = labels
        self.inertia_ = _rescaled_inertia(total, frame, "MiniBatchKMeans")
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

    def score(self, X, y=None, sample_weight=None) -> float:
        """Minus the (weighted) distortion of ``X`` under the fitted centres."""
        check_is_fitted(self)
        return _score(self, X, sample_weight)
