"""Classification by the nearest of a few k-means prototypes per class."""

from __future__ import annotations

from numbers import Integral
from typing import ClassVar

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from ..base import BaseEstimator, ClassifierMixin, _fit_context, check_is_fitted
from ..cluster import KMeans
from ..utils._param_validation import Interval
from ..utils.validation import check_random_state, validate_data
from ._kd_tree import _brute_sq, _pow2_scale

__all__ = ["KMeansPrototypeClassifier"]


class KMeansPrototypeClassifier(ClassifierMixin, BaseEstimator):
    """Nearest-prototype classifier with ``R`` k-means prototypes per class.

    Parameters
    ----------
    n_prototypes : int, default=5
        ``R``, prototypes per class; a class with fewer distinct points gets one prototype
        per distinct point. ``R = 1`` is the nearest-centroid classifier.
    n_init : int, default=5
        k-means restarts per class (the run of smallest within-cluster sum of squares is
        kept).
    max_iter : int, default=300
        Lloyd iterations per k-means run.
    random_state : int, Generator, RandomState or None, default=None

    Attributes
    ----------
    prototypes_ : ndarray of shape (n_prototypes_total, n_features)
    prototype_labels_ : ndarray of shape (n_prototypes_total,)
        Class (an entry of ``classes_``) of each prototype.
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : ndarray of shape (n_classes,)
        Lloyd iterations of the kept k-means run of each class (1 where the prototypes are
        the class mean or its distinct points).
    n_features_in_ : int

    See Also
    --------
    KNeighborsClassifier : the vote of the nearest training points themselves.
    mathlearn.cluster.KMeans : the clustering run within each class.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" §6.2 (k-means for classification, slide
    6:40, after Hastie et al. §13.2.1): run k-means with ``R`` centres separately on the
    points of each class,
    ``min_{mu, c} sum_{i : y_i = k} |x_i - mu_{c(i)}|^2``, and classify a point by the class
    of its nearest prototype, ``y(x) = label(argmin_r |x - mu_r|)`` (ties: the prototype
    listed first, i.e. the smaller class).

    Complexity: for ``N`` samples, ``D`` features, ``K`` classes and ``R`` prototypes per
    class, ``fit`` costs ``O(N D log N)`` to find each class's distinct rows (a sort) plus,
    for every class of more than ``R`` distinct points, ``n_init`` k-means runs: ``O(N_k R D
    log R)`` for the k-means++ seeding and ``O(N_k R D)`` per Lloyd iteration on the class's
    ``N_k`` points, so ``O(n_init I N R D)`` over all classes for ``I`` iterations per run
    (``O(N D)`` for the class means when ``R = 1``). Memory ``O(N D)`` beyond ``X`` (the
    class's rows, their distinct rows, k-means' centred copy); the fitted state is the
    ``K R x D`` prototypes. ``predict`` of ``M`` points costs ``O(M K R D)`` time (BLAS
    distances to every prototype) and ``O(M D)`` memory (a rescaled copy of the queries) plus
    blocks of about ``2^21`` distances.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neighbors import KMeansPrototypeClassifier
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [4.0, 4.0], [5.0, 4.0]])
    >>> clf = KMeansPrototypeClassifier(n_prototypes=1).fit(X, [0, 0, 1, 1])
    >>> clf.prototypes_
    array([[0. , 0.5],
           [4.5, 4. ]])
    >>> clf.predict([[1.0, 1.0], [3.0, 3.0]])
    array([0, 1])
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_prototypes": [Interval(Integral, 1, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_prototypes: int = 5,
        *,
        n_init: int = 5,
        max_iter: int = 300,
        random_state=None,
    ):
        self.n_prototypes = n_prototypes
        self.n_init = n_init
        self.max_iter = max_iter
        self.random_state = random_state

    @_fit_context
    def fit(self, X, y):
        """Run k-means within each class.

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
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        rng = check_random_state(self.random_state)
        protos, labels, n_iter = [], [], []
        for c in range(self.classes_.shape[0]):
            Xc = X[y_idx == c]
            distinct = np.unique(Xc, axis=0)
            if distinct.shape[0] <= self.n_prototypes:
                centres = distinct if self.n_prototypes > 1 else Xc.mean(axis=0, keepdims=True)
            elif self.n_prototypes == 1:
                centres = Xc.mean(axis=0, keepdims=True)
            else:
                km = KMeans(
                    self.n_prototypes,
                    n_init=self.n_init,
                    max_iter=self.max_iter,
                    random_state=int(rng.integers(2**31 - 1)),
                ).fit(Xc)
                centres = km.cluster_centers_
                n_iter.append(km.n_iter_)
            if len(n_iter) <= c:
                n_iter.append(1)  # closed form: the class mean or its distinct points
            protos.append(centres)
            labels.append(np.full(centres.shape[0], c))
        self.n_iter_ = np.asarray(n_iter)
        self.prototypes_ = np.vstack(protos)
        self._proto_idx = np.concatenate(labels)
        self.prototype_labels_ = self.classes_[self._proto_idx]
        return self

    def predict(self, X):
        """The class of the nearest prototype.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_queries,)
        """
        check_is_fitted(self)
        Q = validate_data(self, X, dtype=np.float64, reset=False)
        s = _pow2_scale(np.vstack([self.prototypes_, Q]))
        _, ind = _brute_sq(Q / s, self.prototypes_ / s, 1)
        return self.prototype_labels_[ind[:, 0]]
