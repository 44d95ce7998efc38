r"""Least squares for classification and one-hot target coding.

PRML §4.1.1-4.1.3 (the notes following Bishop's PRML): targets are one-hot rows ``t_n``
(1-of-K coding); the model ``ŷ(x) = W̃^T x̃`` with ``x̃ = (1, x)`` minimises
``E_D(W̃) = ½ Tr{(X̃ W̃ - T)^T (X̃ W̃ - T)}``, solved by ``W̃ = X̃^† T`` (PRML eq. 4.16-4.17),
and a point goes to ``argmax_k ŷ_k(x)``. With a bias column the outputs of every ``x`` sum to
one (PRML Exercise 4.2), but they are not probabilities: they can leave [0, 1], and points
far on the correct side of the boundary (outliers) pull the boundary towards them — the
method's known weakness (PRML Fig. 4.4), which logistic regression does not share.
"""

from __future__ import annotations

import numpy as np

from ..base import BaseClassifier, _fit_context, check_is_fitted
from ..utils.linalg import lstsq
from ..utils.validation import validate_data

__all__ = ["LeastSquaresClassifier", "one_hot"]


def one_hot(y, n_classes: int | None = None) -> np.ndarray:
    """1-of-K coding: row ``n`` has a 1 in column ``y[n]`` and zeros elsewhere.

    Parameters
    ----------
    y : array-like of int, shape (n_samples,)
        Class indices in ``0 .. n_classes - 1``.
    n_classes : int, optional
        Defaults to ``max(y) + 1``.

    Returns
    -------
    T : ndarray of shape (n_samples, n_classes)

    Examples
    --------
    >>> one_hot([0, 1], 2)
    array([[1., 0.],
           [0., 1.]])
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D; got shape {y.shape}.")
    if y.size and (not np.issubdtype(y.dtype, np.integer) or y.min() < 0):
        raise ValueError("y must hold non-negative integer class indices.")
    K = int(y.max()) + 1 if n_classes is None else int(n_classes)
    if y.size and y.max() >= K:
        raise ValueError(f"y has the index {int(y.max())}, not below n_classes = {K}.")
    T = np.zeros((y.shape[0], K))
    T[np.arange(y.shape[0]), y] = 1.0
    return T


class LeastSquaresClassifier(BaseClassifier):
    r"""Linear least squares on one-hot targets; predicts the largest output.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Add the bias column ``x_0 = 1``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes, n_features)
        ``W^T`` without the bias row.
    intercept_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    See Also
    --------
    mathlearn.linear_model.LogisticRegression
        A likelihood suited to class labels.
    mathlearn.discriminant_analysis.LinearDiscriminantAnalysis
        A generative linear classifier.

    Notes
    -----
    ``W̃ = X̃^† T`` by a pivoted QR least-squares solve (:func:`mathlearn.utils.linalg.lstsq`,
    never the normal equations). ``decision_function`` returns the outputs
    ``ŷ(x) = W̃^T x̃`` (shape (n, K); for two classes ``ŷ_1 - ŷ_0``); ``predict_proba`` is not
    offered, as the outputs are not probabilities.

    Complexity: for ``N`` samples, ``D`` features and ``K`` classes, ``fit`` costs
    ``O(N D^2 + N D K)`` time when ``N >= D`` (``O(N^2 (D + K))`` otherwise): the pivoted QR
    factorisation of the ``N x (D + 1)`` design and ``Q^T T`` for the ``N x K`` one-hot
    targets ``T``. Memory ``O(N (D + K))``: the design with its bias column, the thin ``Q``
    factor and ``T``; the fitted state is ``K (D + 1)`` numbers. Prediction of ``M`` points
    costs ``O(M D K)``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [3.0], [4.0]])
    >>> LeastSquaresClassifier().fit(X, [0, 0, 1, 1]).predict([[0.5], [3.5]])
    array([0, 1])
    """

    _parameter_constraints = {"fit_intercept": ["boolean"]}

    def __init__(self, *, fit_intercept: bool = True):
        self.fit_intercept = fit_intercept

    @_fit_context
    def fit(self, X, y):
        """Solve ``min ||X̃ W̃ - T||_F``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        T = one_hot(self._encode_labels(y), len(self.classes_))
        Xt = np.hstack([np.ones((X.shape[0], 1)), X]) if self.fit_intercept else X
        W, _ = lstsq(Xt, T)
        if self.fit_intercept:
            self.intercept_, self.coef_ = W[0].copy(), W[1:].T.copy()
        else:
            self.intercept_, self.coef_ = np.zeros(len(self.classes_)), W.T.copy()
        return self

    def _joint_log_likelihood(self, X):  # the outputs; argmax is all predict needs
        return X @ self.coef_.T + self.intercept_

    def decision_function(self, X):
        """The outputs ``ŷ(x)``; for two classes ``ŷ_1(x) - ŷ_0(x)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        Y = self._validate_X_predict(X) @ self.coef_.T + self.intercept_
        return Y[:, 1] - Y[:, 0] if Y.shape[1] == 2 else Y

    def _has_predict_proba(self) -> bool:
        return False  # the outputs are not probabilities
