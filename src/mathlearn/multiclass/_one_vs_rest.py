r"""One-vs-rest: one binary classifier per class, the class of the largest score wins."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import MetaEstimatorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets

from ..base import BaseEstimator, ClassifierMixin, _fit_context, check_is_fitted
from ..utils._param_validation import HasMethods
from ..utils.validation import validate_data
from ._common import base_has, binary_score, fit_binary

__all__ = ["OneVsRestClassifier"]


class OneVsRestClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    r"""One-vs-rest (one-vs-all) multi-class strategy.

    Parameters
    ----------
    estimator : estimator or None, default=None
        A binary classifier with ``fit`` and ``decision_function`` or ``predict_proba``
        (copied for each class). ``None``: :class:`mathlearn.linear_model.LogisticRegression`.

    Attributes
    ----------
    estimators_ : list of estimators
        ``K`` fitted copies, the ``k``-th separating ``classes_[k]`` (label 1) from the rest;
        a single one for two classes (separating ``classes_[1]`` from ``classes_[0]``).
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when ``X`` has string feature names.

    See Also
    --------
    OneVsOneClassifier : ``K(K-1)/2`` pairwise classifiers and a vote.
    sklearn.multiclass.OneVsRestClassifier : The peer, with the same decision rule.

    Notes
    -----
    ``K`` discriminants ``y_k(x)``, the ``k``-th trained to tell class ``k`` from all others;
    ``x`` goes to ``argmax_k y_k(x)`` — the ``K``-class discriminant rule that avoids the
    ambiguous regions of a vote (PRML §4.1.2, "Multiple classes"). Scores are the base
    estimator's ``decision_function``, else its probability of the positive label.
    ``predict_proba`` normalises the ``K`` one-vs-rest probabilities to sum to one (they
    are not a joint model; a multinomial model such as softmax regression gives calibrated
    multi-class probabilities).

    Complexity: with ``N`` samples and ``K`` classes, ``fit`` costs ``K`` fits of the base
    estimator on all ``N`` rows (one for two classes), all sharing ``X`` (each gets only a
    new vector of ``N`` 0/1 labels); the ``K`` fitted estimators are kept. ``predict``,
    ``decision_function`` and ``predict_proba`` of ``M`` rows cost one score per estimator
    (``decision_function``, else ``predict_proba``; ``predict_proba`` itself for
    ``predict_proba``) on all ``M`` rows, and hold the ``M x K`` matrix of scores.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.multiclass import OneVsRestClassifier
    >>> X = np.array([[0.0], [0.5], [3.0], [3.5], [6.0], [6.5]])
    >>> clf = OneVsRestClassifier().fit(X, [0, 0, 1, 1, 2, 2])
    >>> len(clf.estimators_), clf.predict([[0.2], [6.2]]).tolist()
    (3, [0, 2])
    """

    _parameter_constraints: ClassVar[dict] = {
        "estimator": [HasMethods(["fit"]), None],
    }

    def __init__(self, estimator=None):
        self.estimator = estimator

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit one binary classifier per class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Passed to every binary fit (the base estimator must accept it).

        Returns
        -------
        self : OneVsRestClassifier
        """
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        K = len(self.classes_)
        if K < 2:
            raise ValueError(
                f"OneVsRestClassifier needs samples of at least 2 classes; got {K} class "
                f"({', '.join(map(repr, self.classes_))})."
            )
        targets = [1] if K == 2 else range(K)
        self.estimators_ = [
            fit_binary(self.estimator, X, (y_idx == k).astype(int), sample_weight) for k in targets
        ]
        return self

    def _scores(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return np.column_stack([binary_score(e, X) for e in self.estimators_])

    @available_if(base_has("decision_function"))
    def decision_function(self, X):
        """The ``K`` one-vs-rest scores (one score, of ``classes_[1]``, for two classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        S = self._scores(X)
        return S[:, 0] if S.shape[1] == 1 else S

    def predict(self, X):
        """The class whose one-vs-rest score is largest.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        S = self._scores(X)
        if S.shape[1] == 1:
            threshold = 0.0 if hasattr(self.estimators_[0], "decision_function") else 0.5
            return self.classes_[(S[:, 0] > threshold).astype(int)]
        return self.classes_[np.argmax(S, axis=1)]

    @available_if(base_has("predict_proba"))
    def predict_proba(self, X):
        """One-vs-rest probabilities of each class, normalised to sum to one.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        P = np.column_stack([e.predict_proba(X)[:, 1] for e in self.estimators_])
        if P.shape[1] == 1:
            return np.column_stack([1.0 - P[:, 0], P[:, 0]])
        total = P.sum(axis=1, keepdims=True)
        # All K classifiers may say "not mine" with probability 1 in floating point.
        return np.divide(P, total, out=np.full_like(P, 1.0 / P.shape[1]), where=total > 0)
