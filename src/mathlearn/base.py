"""Estimator base classes.

mathlearn estimators inherit scikit-learn's public base classes, so they work with
``clone``, ``Pipeline``, ``GridSearchCV`` and the rest of the scikit-learn ecosystem. The
mixins are listed first in a class's bases, as scikit-learn requires.

``ProbabilisticRegressorMixin`` adds the probabilistic prediction API shared by the Bayesian
regressors: ``predict(X, return_std=...)``, ``predict_distribution`` and ``sample_y``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    DensityMixin,
    RegressorMixin,
    TransformerMixin,
    clone,
)
from sklearn.utils.validation import check_is_fitted

from .utils.validation import check_random_state

__all__ = [
    "BaseEstimator",
    "ClassifierMixin",
    "ClusterMixin",
    "ComponentNamesMixin",
    "DensityMixin",
    "ProbabilisticRegressorMixin",
    "RegressorMixin",
    "TransformerMixin",
    "check_is_fitted",
    "clone",
]


class ComponentNamesMixin(ClassNamePrefixFeaturesOutMixin):
    """``get_feature_names_out`` for transformers whose outputs are learned components.

    The output names are the lower-cased class name followed by an index (``pca0``,
    ``pca1``, ...), scikit-learn's convention, which also makes ``set_output(transform=
    "pandas")`` work. A subclass names the fitted array whose axis ``_n_features_out_axis``
    counts the outputs (``components_`` and axis 0 by default).
    """

    _n_features_out_attr: str = "components_"
    _n_features_out_axis: int = 0

    @property
    def _n_features_out(self) -> int:
        # An AttributeError before fitting makes check_is_fitted report NotFittedError.
        return getattr(self, self._n_features_out_attr).shape[self._n_features_out_axis]


class ProbabilisticRegressorMixin:
    """Mixin for regressors with a Gaussian predictive distribution.

    Subclasses implement ``_predict_mean_cov(X, full_cov)`` returning the predictive mean of
    shape ``(n_samples,)`` and either the predictive variances ``(n_samples,)`` or, when
    ``full_cov`` is true, the joint predictive covariance of the latent function
    ``(n_samples, n_samples)``; and ``_predictive_noise_variance()`` returning the observation
    noise variance added to the latent variance for a noisy target. It provides
    ``predict_distribution(X)`` (the joint Gaussian over noisy targets) and
    ``sample_y(X, n_samples, random_state)`` (noise-free posterior function draws).
    """

    def predict_distribution(self, X):
        """Joint predictive distribution of noisy targets at the query points.

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
            Query points.

        Returns
        -------
        mathlearn.distributions.MultivariateNormal
            ``N(mean, cov + noise_variance * I)`` over the ``n_samples_X`` targets, where
            ``mean`` and ``cov`` are the predictive mean and the joint covariance of the
            latent function values.
        """
        from .distributions import MultivariateNormal

        check_is_fitted(self)
        mean, cov = self._predict_mean_cov(X, full_cov=True)
        cov = cov + self._predictive_noise_variance() * np.eye(mean.shape[0])
        return MultivariateNormal(mean, cov)

    def sample_y(self, X, n_samples: int = 1, random_state=None):
        """Draw functions from the posterior and evaluate them at ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
            Query points.
        n_samples : int, default=1
            Number of function draws.
        random_state : int, Generator, RandomState or None
            Source of randomness.

        Returns
        -------
        y_samples : ndarray of shape (n_samples_X, n_samples)
            Column ``j`` is the ``j``-th posterior function evaluated at ``X`` (noise-free),
            the layout scikit-learn's ``GaussianProcessRegressor.sample_y`` uses.
        """
        from .utils.linalg import cholesky

        check_is_fitted(self)
        rng = check_random_state(random_state)
        mean, cov = self._predict_mean_cov(X, full_cov=True)
        L = cholesky(cov, jitter="auto", warn=False)
        z = rng.standard_normal((mean.shape[0], int(n_samples)))
        return mean[:, None] + L @ z
