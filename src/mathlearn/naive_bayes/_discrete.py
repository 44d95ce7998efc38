r"""Naive Bayes for binary and count features: Bernoulli and multinomial event models.

Both estimate, per class ``k``, feature probabilities from (weighted) counts and score a
sample by ``log p(x, y = k) = log π_k + Σ_j log p(x_j | y = k)`` in log space (Oxford
"Advanced Topics in Statistical Machine Learning" §7.1-7.2; PRML §4.2.3).

* Bernoulli: ``p(x | y = k) = Π_j φ_kj^{x_j} (1 - φ_kj)^{1 - x_j}`` for ``x ∈ {0, 1}^d``.
  With a Beta(α, α) prior on each ``φ_kj`` the posterior is
  ``Beta(α + n_kj, α + n_k - n_kj)`` and the posterior predictive
  ``p(x̃_j = 1 | y = k, D) = (n_kj + α) / (n_k + 2α)``.
* Multinomial: ``p(x | y = k) ∝ Π_j θ_kj^{x_j}`` for counts ``x``; with a symmetric
  Dirichlet(α) prior on ``θ_k`` the predictive is ``θ_kj = (n_kj + α) / (n_k + d α)`` with
  ``n_kj`` the total count of feature ``j`` in class ``k``.

``α = 0`` gives the maximum-likelihood estimates ``n_kj / n_k``, whose zero counts give a
feature value unseen with a class probability zero (the notes' pitfall); ``α = 1`` is
Laplace smoothing, and ``α`` is scikit-learn's ``alpha``. The class prior is the Dirichlet
posterior predictive ``(n_k + a) / (n + K a)`` (``a = class_prior_alpha``; ``a = 0``: the
class proportions, scikit-learn's ``fit_prior=True``).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.special import gammaln

from ..base import _fit_context
from ..utils._backend import is_dask
from ..utils._param_validation import Interval
from ..utils.validation import check_sample_weight, validate_data
from ._base import _BaseNB

__all__ = ["BernoulliNB", "MultinomialNB"]

_COMMON_CONSTRAINTS = {
    "alpha": [Interval(Real, 0, None, closed="left")],
    "fit_prior": ["boolean"],
    "class_prior": ["array-like", None],
    "class_prior_alpha": [Interval(Real, 0, None, closed="left")],
}


class _DiscreteNB(_BaseNB):
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Gaussian blobs binarised or read as counts are not what these models describe.
        tags.classifier_tags.poor_score = True
        return tags

    def _check_X(self, X, reset):
        return validate_data(self, X, dtype=np.float64, reset=reset)

    def _count(self, X, y_idx, sample_weight):
        K = len(self.classes_)
        sw = check_sample_weight(sample_weight, X)
        # Weighted one-hot class indicators: n_kj = Σ_i s_i [y_i = k] x_ij through BLAS.
        Y = np.zeros((X.shape[0], K))
        Y[np.arange(X.shape[0]), y_idx] = sw
        self.class_count_ += Y.sum(axis=0)
        self.feature_count_ += Y.T @ self._transform_counts(X)

    def _fit_batch(self, X, y, classes, sample_weight, first_call):
        X, y = validate_data(self, X, y, dtype=np.float64, reset=first_call)
        X = self._validated_features(X)
        y_idx = self._labels_to_index(y, classes, first_call)
        if first_call:
            self.class_count_ = np.zeros(len(self.classes_))
            self.feature_count_ = np.zeros((len(self.classes_), X.shape[1]))
        self._count(X, y_idx, sample_weight)
        self._update_feature_log_prob()
        self._update_class_log_prior()
        return self

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Estimate the class prior and feature probabilities from counts.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        if is_dask(X):
            from ._dask import nb_fit_dask

            return nb_fit_dask(self, X, y, sample_weight)
        y_arr = np.asarray(y)
        return self._fit_batch(
            X, y, np.unique(y_arr) if y_arr.ndim == 1 else y, sample_weight, True
        )

    @_fit_context
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Add a batch of samples to the counts (``classes`` is required on the first call).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), optional
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        return self._fit_batch(X, y, classes, sample_weight, not hasattr(self, "classes_"))


class BernoulliNB(_DiscreteNB):
    r"""Naive Bayes for binary features, with the Beta posterior-predictive estimate.

    Parameters
    ----------
    alpha : float, default=1.0
        Beta(α, α) prior pseudo-counts on each feature probability (scikit-learn's
        ``alpha``); ``0`` gives the maximum-likelihood estimate.
    binarize : float or None, default=0.0
        Threshold: features ``> binarize`` count as 1. ``None``: ``X`` must already be
        0/1.
    fit_prior : bool, default=True
        ``False``: a uniform class prior.
    class_prior : array-like of shape (n_classes,) or None, default=None
        A fixed class prior (overrides ``fit_prior``).
    class_prior_alpha : float, default=0.0
        Dirichlet pseudo-count on the class prior; ``0``: the class proportions.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of samples per class ``n_k``.
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted number of samples of class ``k`` with feature ``j`` on, ``n_kj``.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        ``log p(x_j = 1 | y = k, D)``.
    class_log_prior_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    See Also
    --------
    mathlearn.naive_bayes.MultinomialNB
        Count features.
    sklearn.naive_bayes.BernoulliNB
        scikit-learn's equivalent.

    Notes
    -----
    See the module docstring. The log-likelihood of a binary ``x`` is
    ``Σ_j x_j log φ_kj + (1 - x_j) log(1 - φ_kj)``, computed as ``X (log φ - log(1-φ))^T +
    Σ_j log(1 - φ_kj)``. ``aic(X, y)`` and ``bic(X, y)`` count ``K d`` feature probabilities
    and ``K - 1`` class probabilities when they are learned (``fit_prior=True``, no
    ``class_prior``), on the binarised features.

    Complexity: ``fit`` costs ``O(N K D)`` (one product of the ``N x K`` one-hot class matrix
    with the binarised ``X``) and needs ``O(N (K + D))`` memory beyond ``X`` (the one-hot
    matrix and the binarised copy); prediction ``O(M K D)``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1, 0], [1, 1], [0, 1], [0, 0]]); y = np.array([0, 0, 1, 1])
    >>> BernoulliNB(alpha=1.0).fit(X, y).predict_proba([[1, 0]]).round(4)
    array([[0.75, 0.25]])
    """

    _parameter_constraints = {**_COMMON_CONSTRAINTS, "binarize": [Real, None]}

    def __init__(
        self,
        *,
        alpha: float = 1.0,
        binarize: float | None = 0.0,
        fit_prior: bool = True,
        class_prior=None,
        class_prior_alpha: float = 0.0,
    ):
        self.alpha = alpha
        self.binarize = binarize
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.class_prior_alpha = class_prior_alpha

    def _n_feature_parameters(self) -> int:
        return self.feature_log_prob_.size

    def _validated_features(self, X):
        if self.binarize is None:
            if not np.all((X == 0) | (X == 1)):
                raise ValueError("X must hold only 0 and 1 when binarize=None.")
            return X
        return (X > self.binarize).astype(np.float64)

    def _transform_counts(self, X):
        return X

    def _update_feature_log_prob(self):
        a = float(self.alpha)
        num = self.feature_count_ + a
        den = (self.class_count_ + 2 * a)[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            self.feature_log_prob_ = np.log(num) - np.log(den)
            self._log_1m = np.log(den - num) - np.log(den)

    def _joint_log_likelihood(self, X):
        X = self._validated_features(X)
        on, off = self.feature_log_prob_, self._log_1m
        # x log φ + (1 - x) log(1 - φ), with 0 * (-inf) read as 0 (a value that cannot occur
        # contributes nothing when it does not occur).
        jll = np.zeros((X.shape[0], on.shape[0]))
        for k in range(on.shape[0]):
            jll[:, k] = np.where(X > 0, on[k], off[k]).sum(axis=1)
        return jll + self.class_log_prior_


class MultinomialNB(_DiscreteNB):
    r"""Naive Bayes for count features, with the Dirichlet posterior-predictive estimate.

    Parameters
    ----------
    alpha : float, default=1.0
        Symmetric Dirichlet(α) prior pseudo-counts (scikit-learn's ``alpha``); ``0`` gives
        the maximum-likelihood estimate.
    fit_prior : bool, default=True
    class_prior : array-like of shape (n_classes,) or None, default=None
    class_prior_alpha : float, default=0.0

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
    feature_count_ : ndarray of shape (n_classes, n_features)
        Weighted total count ``n_kj`` of feature ``j`` in class ``k``.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        ``log θ_kj``.
    class_log_prior_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    See Also
    --------
    mathlearn.naive_bayes.BernoulliNB
        Binary features.
    sklearn.naive_bayes.MultinomialNB
        scikit-learn's equivalent.

    Notes
    -----
    See the module docstring; ``log p(x, y = k) = log π_k + Σ_j x_j log θ_kj`` up to the
    multinomial coefficient, which is the same for every class. ``aic(X, y)`` and
    ``bic(X, y)`` include that coefficient, ``ln Γ(n + 1) - Σ_j ln Γ(x_j + 1)`` with
    ``n = Σ_j x_j``, so that the log-likelihood is that of the counts, and count ``K (d - 1)``
    word probabilities and ``K - 1`` class probabilities when they are learned.

    Complexity: ``fit`` costs ``O(N K D)`` (one product of the ``N x K`` one-hot class matrix
    with ``X``) and needs ``O(N K + K D)`` memory beyond ``X``; prediction ``O(M K D)``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 3], [1, 3, 2]]); y = np.array([0, 0, 1, 1])
    >>> MultinomialNB().fit(X, y).predict([[4, 0, 0], [0, 1, 4]])
    array([0, 1])
    """

    _parameter_constraints = dict(_COMMON_CONSTRAINTS)

    def __init__(
        self,
        *,
        alpha: float = 1.0,
        fit_prior: bool = True,
        class_prior=None,
        class_prior_alpha: float = 0.0,
    ):
        self.alpha = alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.class_prior_alpha = class_prior_alpha

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags

    def _n_feature_parameters(self) -> int:
        K, d = self.feature_log_prob_.shape
        return K * (d - 1)

    def _log_coefficient(self, X):
        X = self._validate_X_predict(X)
        return gammaln(X.sum(axis=1) + 1.0) - gammaln(X + 1.0).sum(axis=1)

    def _validated_features(self, X):
        if X.size and X.min() < 0:  # a reduction: no n x d mask
            raise ValueError(
                "Negative values in data passed to MultinomialNB, which models counts."
            )
        return X

    def _transform_counts(self, X):
        return X

    def _update_feature_log_prob(self):
        a = float(self.alpha)
        num = self.feature_count_ + a
        with np.errstate(divide="ignore", invalid="ignore"):
            self.feature_log_prob_ = np.log(num) - np.log(num.sum(axis=1, keepdims=True))

    def _joint_log_likelihood(self, X):
        X = self._validated_features(X)
        logp = self.feature_log_prob_
        if np.all(np.isfinite(logp)):
            return X @ logp.T + self.class_log_prior_
        # ML estimate with zero counts: 0 * log 0 = 0, x > 0 with θ = 0 gives -inf.
        jll = np.empty((X.shape[0], logp.shape[0]))
        for k in range(logp.shape[0]):
            finite = np.isfinite(logp[k])
            jll[:, k] = X[:, finite] @ logp[k, finite]
            jll[np.any(X[:, ~finite] > 0, axis=1), k] = -np.inf
        return jll + self.class_log_prior_
