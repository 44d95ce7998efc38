r"""One-vs-one: a binary classifier for each pair of classes and a vote."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import MetaEstimatorMixin
from sklearn.utils.multiclass import check_classification_targets

from ..base import BaseEstimator, ClassifierMixin, _fit_context, check_is_fitted
from ..utils._param_validation import HasMethods
from ..utils.validation import check_sample_weight, validate_data
from ._common import binary_score, fit_binary

__all__ = ["OneVsOneClassifier"]


class OneVsOneClassifier(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    r"""One-vs-one multi-class strategy: ``K(K-1)/2`` pairwise classifiers and a vote.

    Parameters
    ----------
    estimator : estimator or None, default=None
        A binary classifier with ``fit`` and ``predict`` (and preferably
        ``decision_function`` or ``predict_proba``, used to break ties), copied for each pair.
        ``None``: :class:`mathlearn.linear_model.LogisticRegression`.

    Attributes
    ----------
    estimators_ : list of estimators
        ``K(K-1)/2`` fitted copies in the order ``(0, 1), (0, 2), ..., (K-2, K-1)``; the one
        for ``(i, j)`` is trained on the samples of classes ``i`` and ``j`` only, with label
        1 for class ``j``.
    pairwise_indices_ : ndarray of shape (n_pairs, 2)
        The class indices ``(i, j)`` of each estimator.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when ``X`` has string feature names.

    See Also
    --------
    OneVsRestClassifier : ``K`` classifiers, each against all other classes.
    sklearn.multiclass.OneVsOneClassifier : The peer, with the same vote and tie-break.

    Notes
    -----
    Each pair of classes gets a discriminant trained on their samples only; a point gets the
    class with the most pairwise wins. The vote leaves ambiguous regions — ties, and in
    general regions that no class wins outright (PRML §4.1.2, Figure 4.2; the notes
    following PRML, "K > 2 case") — which are resolved here by the summed confidences:
    with ``c_{ij}(x)`` the score of class ``j`` against ``i``, class ``k`` gets

    .. math::

        v_k(x) + \frac{s_k(x)}{3(|s_k(x)| + 1)}, \qquad
        s_k(x) = \sum_{j > k} -c_{kj}(x) + \sum_{i < k} c_{ik}(x),

    where ``v_k`` counts the wins. The added term lies in ``(-1/3, 1/3)``, so it only orders
    classes with equal votes. This is ``decision_function``; ``predict`` takes its argmax.

    Complexity: with ``N`` samples, ``D`` features and ``K`` classes of sizes ``N_k``,
    ``fit`` costs ``K(K-1)/2`` fits of the base estimator, the one for ``(i, j)`` on the
    ``N_i + N_j`` rows of those two classes (``2N/K`` on balanced data); the rows fitted
    add up to ``(K - 1) N``, so for a base estimator linear in its rows ``fit`` costs about
    ``K - 1`` fits on all ``N`` rows. Each pair's rows are copied while it is fitted
    (``(N_i + N_j) D`` memory), and the ``K(K-1)/2`` fitted estimators are kept.
    ``predict`` and ``decision_function`` of ``M`` rows cost, for each of the ``K(K-1)/2``
    estimators, one ``predict`` and one score (``decision_function``, else
    ``predict_proba``) on all ``M`` rows, plus ``O(M K^2)`` for the votes, in two
    ``M x K`` arrays (votes and confidences).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.multiclass import OneVsOneClassifier
    >>> X = np.array([[0.0], [0.5], [3.0], [3.5], [6.0], [6.5]])
    >>> clf = OneVsOneClassifier().fit(X, ["a", "a", "b", "b", "c", "c"])
    >>> clf.pairwise_indices_.tolist(), clf.predict([[0.2], [3.2], [6.2]]).tolist()
    ([[0, 1], [0, 2], [1, 2]], ['a', 'b', 'c'])
    """

    _parameter_constraints: ClassVar[dict] = {
        "estimator": [HasMethods(["fit", "predict"]), None],
    }

    def __init__(self, estimator=None):
        self.estimator = estimator

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit one binary classifier per pair of classes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Passed, restricted to each pair's samples, to the binary fits.

        Returns
        -------
        self : OneVsOneClassifier
        """
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        K = len(self.classes_)
        if K < 2:
            raise ValueError(
                f"OneVsOneClassifier needs samples of at least 2 classes; got {K} class "
                f"({', '.join(map(repr, self.classes_))})."
            )
        sw = None if sample_weight is None else check_sample_weight(sample_weight, X)
        pairs, estimators = [], []
        for i in range(K):
            for j in range(i + 1, K):
                mask = (y_idx == i) | (y_idx == j)
                estimators.append(
                    fit_binary(
                        self.estimator,
                        X[mask],
                        (y_idx[mask] == j).astype(int),
                        None if sw is None else sw[mask],
                    )
                )
                pairs.append((i, j))
        self.estimators_ = estimators
        self.pairwise_indices_ = np.array(pairs, dtype=np.intp).reshape(-1, 2)
        return self

    def _scores(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        n, K = X.shape[0], len(self.classes_)
        votes = np.zeros((n, K))
        conf = np.zeros((n, K))
        for est, (i, j) in zip(self.estimators_, self.pairwise_indices_, strict=True):
            wins_j = np.asarray(est.predict(X)) == 1
            votes[:, j] += wins_j
            votes[:, i] += ~wins_j
            c = binary_score(est, X)
            conf[:, j] += c
            conf[:, i] -= c
        return votes + conf / (3.0 * (np.abs(conf) + 1.0))

    def decision_function(self, X):
        """Votes plus the bounded tie-break of the summed pairwise confidences.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes), or (n_samples,) for two classes
            (the score of ``classes_[1]``).
        """
        scores = self._scores(X)
        return scores[:, 1] if scores.shape[1] == 2 else scores

    def predict(self, X):
        """The class with the most pairwise wins (ties broken by confidence).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        scores = self._scores(X)
        return self.classes_[np.argmax(scores, axis=1)]
