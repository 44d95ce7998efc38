"""Random-feature networks: an untrained random hidden layer, a fitted linear output layer.

Stuttgart "Introduction to Machine Learning" §4 (exercise on neural random features, also
called extreme learning machines): draw the hidden layers at random with the notes'
initialisation, ``W_l ~ N(0, 1 / h_{l-1})`` entrywise and ``b_l ~ U(-1, 1)`` (so that the
ReLU kinks cover the input region), never train them, and use the last hidden layer
``phi(x) = x_{L-1}`` as features of a linear model fitted exactly: logistic regression
(Newton's method) for classification, ridge regression for regression. The fit is convex;
only the output layer is learned.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .. import nn
from ..base import BaseClassifier, BaseEstimator, _fit_context
from ..linear_model import LogisticRegression, Ridge
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import check_random_state, validate_data

__all__ = ["RandomFeatureClassifier", "RandomFeatureRegressor"]

_ACTIVATIONS = {
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "logistic": nn.Sigmoid,
    "leaky_relu": nn.LeakyReLU,
}


class _RandomBody(BaseEstimator):
    _parameter_constraints: ClassVar[dict] = {
        "hidden_layer_sizes": ["array-like", Interval(Integral, 1, None, closed="left")],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "random_state": ["random_state"],
    }

    def _build_body(self, n_in: int) -> nn.Sequential:
        sizes = np.atleast_1d(np.asarray(self.hidden_layer_sizes, dtype=float))
        if sizes.ndim != 1 or sizes.size == 0 or np.any(sizes < 1) or np.any(sizes % 1):
            raise ValueError(
                "hidden_layer_sizes must be one or more positive integers; got "
                f"{self.hidden_layer_sizes!r}."
            )
        rng = check_random_state(self.random_state)
        layers: list[nn.Module] = []
        prev = n_in
        for h in sizes.astype(int):
            layers.append(
                nn.Linear(
                    prev,
                    int(h),
                    weight_init="fan_in_normal",
                    bias_init="uniform",
                    dtype=np.float64,
                    random_state=rng,
                )
            )
            layers.append(_ACTIVATIONS[self.activation]())
            prev = int(h)
        body = nn.Sequential(*layers)
        body.eval()
        return body

    def _features(self, X: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            phi = np.asarray(self.body_(X))
        if not np.all(np.isfinite(phi)):
            raise ValueError(
                "the random features overflowed: X has entries far too large for the hidden "
                "layer. Rescale the features (for example with StandardScaler)."
            )
        return phi


class RandomFeatureClassifier(_RandomBody, BaseClassifier):
    """Random hidden layers (never trained) with a logistic-regression output layer.

    Parameters
    ----------
    hidden_layer_sizes : int or array-like of int, default=(100,)
        Widths of the random hidden layers; the last is the number of features.
    activation : {"relu", "tanh", "logistic", "leaky_relu"}, default="relu"
        Hidden unit.
    C : float, default=1.0
        Inverse L2 penalty of the output layer
        (:class:`mathlearn.linear_model.LogisticRegression`).
    max_iter : int, default=100
        Newton iterations of the output layer.
    random_state : int, Generator or None, default=None
        Draws of the hidden layers.

    Attributes
    ----------
    body_ : mathlearn.nn.Sequential
        The random hidden layers (float64).
    head_ : mathlearn.linear_model.LogisticRegression
        The fitted output layer on ``phi(x)``.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_iter_ : ndarray of shape (1,)
        Newton iterations of the output layer.
    n_features_in_ : int
        Number of input features.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    RandomFeatureRegressor : The same body with a ridge output layer.
    MLPClassifier : Every layer trained.

    Notes
    -----
    ``W_l ~ N(0, 1/h_{l-1})``, ``b_l ~ U(-1, 1)``, ``phi(x) = x_{L-1}``, then Newton logistic
    regression on ``phi`` (Stuttgart §4, neural random features).

    Complexity (``N`` samples, ``D`` features, hidden widths ``h_1, ..., h_L``, ``H = h_L``
    features ``phi``, ``K`` classes, ``Q = 1`` for two classes and ``K`` otherwise): the random
    layers cost ``O(N (D h_1 + h_1 h_2 + ... + h_{L-1} H))`` time, once; each Newton step of
    the output layer costs ``O(N (Q H)^2 + (Q H)^3)`` (the Hessian and its Cholesky factor),
    at most ``max_iter`` steps. Memory beyond ``X``: the ``N x H`` features and one hidden
    layer's activations during the pass, the ``(Q H) x (Q H)`` Hessian and a weighted copy of
    the features. Prediction of ``M`` samples: ``O(M (D h_1 + ... + h_{L-1} H + K H))``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neural_network import RandomFeatureClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(200, 2)); y = (X[:, 0] ** 2 + X[:, 1] ** 2 < 0.5)
    >>> clf = RandomFeatureClassifier((200,), C=100.0, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.95)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        **_RandomBody._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        hidden_layer_sizes=(100,),
        activation: str = "relu",
        *,
        C: float = 1.0,
        max_iter: int = 100,
        random_state=None,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.C = C
        self.max_iter = max_iter
        self.random_state = random_state

    @_fit_context
    def fit(self, X, y):
        """Draw the hidden layers and fit the output layer.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : RandomFeatureClassifier
            The fitted classifier.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        self._encode_labels(y)
        self.body_ = self._build_body(X.shape[1])
        self.head_ = LogisticRegression(C=self.C, solver="newton", max_iter=self.max_iter)
        self.head_.fit(self._features(X), y)
        self.n_iter_ = self.head_.n_iter_
        return self

    def _joint_log_likelihood(self, X):
        check_is_fitted(self, "head_")
        return self.head_.predict_log_proba(self._features(X))


class RandomFeatureRegressor(RegressorMixin, _RandomBody):
    """Random hidden layers (never trained) with a ridge-regression output layer.

    Parameters
    ----------
    hidden_layer_sizes : int or array-like of int, default=(100,)
        Widths of the random hidden layers.
    activation : {"relu", "tanh", "logistic", "leaky_relu"}, default="relu"
        Hidden unit.
    alpha : float, default=1.0
        Ridge penalty of the output layer (:class:`mathlearn.linear_model.Ridge`).
    random_state : int, Generator or None, default=None
        Draws of the hidden layers.

    Attributes
    ----------
    body_ : mathlearn.nn.Sequential
        The random hidden layers (float64).
    head_ : mathlearn.linear_model.Ridge
        The fitted output layer.
    n_features_in_ : int
        Number of input features.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names.

    See Also
    --------
    RandomFeatureClassifier : The same body with a logistic output layer.

    Notes
    -----
    ``W_l ~ N(0, 1/h_{l-1})``, ``b_l ~ U(-1, 1)``, ``phi(x) = x_{L-1}``, then ridge regression
    on ``phi`` (Stuttgart §4, neural random features).

    Complexity (``N`` samples, ``D`` features, hidden widths ``h_1, ..., h_L``, ``H = h_L``
    features ``phi``): the random layers cost ``O(N (D h_1 + h_1 h_2 + ... + h_{L-1} H))``
    time; the ridge output layer ``O(N H^2 + H^3)`` when ``N >= H`` (the ``H x H`` normal
    equations), ``O(N^2 H + N^3)`` otherwise (the ``N x N`` dual system). Memory beyond ``X``:
    ``O(N H)`` for the features (and one hidden layer's activations during the pass) and the
    ``min(N, H) x min(N, H)`` system. Prediction of ``M`` samples:
    ``O(M (D h_1 + ... + h_{L-1} H + H))``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neural_network import RandomFeatureRegressor
    >>> X = np.linspace(-2, 2, 100)[:, None]; y = np.sin(2 * X[:, 0])
    >>> reg = RandomFeatureRegressor((200,), alpha=1e-3, random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.99)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        **_RandomBody._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        hidden_layer_sizes=(100,),
        activation: str = "relu",
        *,
        alpha: float = 1.0,
        random_state=None,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.alpha = alpha
        self.random_state = random_state

    @_fit_context
    def fit(self, X, y):
        """Draw the hidden layers and fit the output layer.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.
        y : array-like of shape (n_samples,)
            Targets.

        Returns
        -------
        self : RandomFeatureRegressor
            The fitted regressor.
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        self.body_ = self._build_body(X.shape[1])
        self.head_ = Ridge(alpha=self.alpha).fit(self._features(X), y)
        return self

    def predict(self, X):
        """Output-layer prediction on the random features.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predictions.
        """
        check_is_fitted(self, "head_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.head_.predict(self._features(X))
