"""k-nearest-neighbour classification and regression."""

from __future__ import annotations

from numbers import Integral
from typing import ClassVar

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from ..base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context, check_is_fitted
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import validate_data
from ._kd_tree import KDTree, _brute_sq, _pow2_scale

__all__ = ["KNeighborsClassifier", "KNeighborsRegressor"]


class _KNeighborsBase(BaseEstimator):
    _parameter_constraints: ClassVar[dict] = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "weights": [StrOptions({"uniform", "distance"})],
        "algorithm": [StrOptions({"auto", "brute", "kd_tree"})],
        "leaf_size": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        n_neighbors: int = 5,
        *,
        weights: str = "uniform",
        algorithm: str = "auto",
        leaf_size: int = 40,
    ):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.algorithm = algorithm
        self.leaf_size = leaf_size

    def _fit_index(self, X):
        n, d = X.shape
        if self.n_neighbors > n:
            raise ValueError(
                f"n_neighbors = {self.n_neighbors} is larger than the number of training "
                f"samples (n_samples = {n}); use n_neighbors <= {n}."
            )
        self._fit_X = X
        algo = self.algorithm
        if algo == "auto":
            algo = "kd_tree" if d <= 15 and n >= 2 * self.leaf_size else "brute"
        self._fit_method = algo
        # the tree keeps the validated training data itself, which _fit_X holds anyway
        self._tree = KDTree._over(X, self.leaf_size) if algo == "kd_tree" else None
        self.n_samples_fit_ = n

    def kneighbors(self, X=None, n_neighbors: int | None = None, return_distance: bool = True):
        """The nearest training points of each query point.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), optional
            Query points; ``None``: the training points, each excluding itself.
        n_neighbors : int, optional
            Defaults to the estimator's ``n_neighbors``.
        return_distance : bool, default=True

        Returns
        -------
        distances : ndarray of shape (n_queries, n_neighbors)
            Only if ``return_distance``; increasing along each row.
        indices : ndarray of shape (n_queries, n_neighbors)
            Indices of training points; equal distances are ordered by index.
        """
        check_is_fitted(self)
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        if isinstance(k, bool) or not isinstance(k, Integral) or k < 1:
            raise ValueError(f"n_neighbors must be an int >= 1; got {k!r}.")
        self_query = X is None
        if self_query:
            Q, k_search = self._fit_X, k + 1
        else:
            Q, k_search = validate_data(self, X, dtype=np.float64, reset=False), k
        n = self.n_samples_fit_
        if k_search > n:
            raise ValueError(
                f"Expected n_neighbors <= n_samples_fit, but n_neighbors = {k_search} and "
                f"n_samples_fit = {n}"
                + (" (a training point is not its own neighbour)" if self_query else "")
                + "."
            )
        dist = None
        if self._tree is not None:
            if return_distance:
                dist, ind = self._tree.query(Q, k_search)
            else:  # the search then keeps no array of distances
                ind = self._tree.query(Q, k_search, return_distance=False)
        else:
            s = _pow2_scale(np.vstack([self._fit_X, Q]))
            d2, ind = _brute_sq(Q / s, self._fit_X / s, k_search)
            dist = np.sqrt(d2) * s
        if self_query:
            # Drop each point itself (or, among exact duplicates, one copy at distance 0).
            own = ind == np.arange(n)[:, None]
            drop = np.where(own.any(axis=1), np.argmax(own, axis=1), k_search - 1)
            keep = np.ones_like(own)
            keep[np.arange(n), drop] = False
            ind = ind[keep].reshape(n, k)
            if dist is not None:
                dist = dist[keep].reshape(n, k)
        return (dist, ind) if return_distance else ind

    def _weights(self, dist):
        """Neighbour weights: 1, or ``1 / d``; rows with an exact match weigh only matches."""
        if self.weights == "uniform":
            return np.ones_like(dist)
        zero = dist == 0.0
        with np.errstate(divide="ignore"):
            w = 1.0 / dist
        has_zero = zero.any(axis=1)
        w[has_zero] = zero[has_zero].astype(float)
        return w


class KNeighborsClassifier(ClassifierMixin, _KNeighborsBase):
    """Classifier by a (weighted) vote among the ``k`` nearest training points.

    Parameters
    ----------
    n_neighbors : int, default=5
        ``k``, at most the number of training samples.
    weights : {"uniform", "distance"}, default="uniform"
        ``"uniform"``: each neighbour has one vote. ``"distance"``: a neighbour at distance
        ``d`` has weight ``1 / d``; a query that coincides with training points (``d = 0``)
        takes the vote of those points only.
    algorithm : {"auto", "brute", "kd_tree"}, default="auto"
        Neighbour search: :class:`KDTree`, exhaustive, or ``"auto"``: the tree for at most
        15 features and at least ``2 * leaf_size`` samples, else exhaustive. All give the
        same neighbours (ties by index).
    leaf_size : int, default=40
        Leaf size of the tree.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    n_samples_fit_ : int

    See Also
    --------
    KNeighborsRegressor : the average of the neighbours' targets.
    KDTree : the neighbour search.
    KMeansPrototypeClassifier : nearest prototype instead of nearest samples.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" §7.1 (slides 7:3-7:6) and PRML §2.5.2: with
    ``N_k(x)`` the ``k`` training points nearest to ``x`` and weights ``w_i``,
    ``p(c | x) = sum_{i in N_k(x), y_i = c} w_i / sum_{i in N_k(x)} w_i`` and the prediction
    is the class of largest ``p(c | x)`` (the smallest such class on a tie). With uniform
    weights this is PRML's ``p(C_c | x) = K_c / K`` (eq. 2.256).

    Complexity (``N`` training points, ``M`` queries, ``D`` features): ``fit`` builds the
    kd-tree in ``O(N D log N)`` time and keeps one ``N x D`` copy of the points in tree
    order; a query costs about ``O(k log N)`` with the tree in few dimensions and ``O(N D)``
    exhaustively. Prediction memory is ``O(M k)`` (the neighbour indices; with uniform weights
    no distances are kept).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neighbors import KNeighborsClassifier
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> clf = KNeighborsClassifier(n_neighbors=3).fit(X, [0, 0, 1, 1])
    >>> clf.predict([[1.1]])
    array([0])
    >>> clf.predict_proba([[1.1]])
    array([[0.66666667, 0.33333333]])
    """

    @_fit_context
    def fit(self, X, y):
        """Store the training data and build the search structure.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, self._y = np.unique(y, return_inverse=True)
        self._fit_index(X)
        return self

    def predict_proba(self, X):
        """Weighted share of each class among the neighbours.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        proba : ndarray of shape (n_queries, n_classes)
        """
        uniform = self.weights == "uniform"
        if uniform:  # votes only: no distances, no weights
            ind = self.kneighbors(X, return_distance=False)
        else:
            dist, ind = self.kneighbors(X)
        m, n_classes = ind.shape[0], self.classes_.shape[0]
        flat = self._y[ind]
        flat += np.arange(m)[:, None] * n_classes
        flat = flat.ravel()
        if uniform:
            proba = np.bincount(flat, minlength=m * n_classes).astype(np.float64)
        else:
            proba = np.bincount(flat, weights=self._weights(dist).ravel(), minlength=m * n_classes)
        proba = proba.reshape(m, n_classes)
        proba /= proba.sum(axis=1, keepdims=True)
        return proba

    def predict(self, X):
        """The class with the largest weighted vote.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_queries,)
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


class KNeighborsRegressor(RegressorMixin, _KNeighborsBase):
    """Regression by the (weighted) average of the ``k`` nearest training targets.

    Parameters
    ----------
    n_neighbors : int, default=5
        ``k``, at most the number of training samples.
    weights : {"uniform", "distance"}, default="uniform"
        As in :class:`KNeighborsClassifier`.
    algorithm : {"auto", "brute", "kd_tree"}, default="auto"
    leaf_size : int, default=40

    Attributes
    ----------
    n_features_in_ : int
    n_samples_fit_ : int

    See Also
    --------
    KNeighborsClassifier : the vote among the neighbours.
    NadarayaWatson : a smooth kernel in place of the k-NN window.
    LocallyWeightedRegression : a local linear fit in place of a local average.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" §7.1 (slides 7:3-7:4): the k-NN smoothing
    kernel ``K(x*, x_i) = [x_i in kNN(x*)]`` in the weighted local average
    ``f(x*) = sum_i K(x*, x_i) w_i y_i / sum_i K(x*, x_i) w_i``, with ``w_i = 1`` or
    ``1 / |x* - x_i|``.

    Complexity as for :class:`KNeighborsClassifier`: ``O(N D log N)`` to build the tree,
    about ``O(k log N)`` per query in few dimensions (``O(N D)`` exhaustively), ``O(M k)``
    memory for ``M`` queries (uniform weights: the indices only, the mean accumulated one
    neighbour rank at a time).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neighbors import KNeighborsRegressor
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> KNeighborsRegressor(n_neighbors=2).fit(X, [0.0, 1.0, 4.0, 9.0]).predict([[0.4]])
    array([0.5])
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    @_fit_context
    def fit(self, X, y):
        """Store the training data and build the search structure.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=True, y_numeric=True)
        self._y = y
        self._fit_index(X)
        return self

    def predict(self, X):
        """Weighted average of the neighbours' targets.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_queries,) or (n_queries, n_targets)
        """
        if self.weights == "uniform":
            # the mean of the neighbours' targets, one neighbour rank at a time (no array of
            # distances, weights or gathered targets of the size of the neighbour lists)
            ind = self.kneighbors(X, return_distance=False)
            k = ind.shape[1]
            pred = self._y[ind[:, 0]].astype(np.float64, copy=False)
            for j in range(1, k):
                pred += self._y[ind[:, j]]
            pred /= k
            return pred
        dist, ind = self.kneighbors(X)
        w = self._weights(dist)
        w /= w.sum(axis=1, keepdims=True)
        Y = self._y[ind]
        if Y.ndim == 2:
            return np.einsum("ij,ij->i", w, Y)
        return np.einsum("ij,ijt->it", w, Y)
