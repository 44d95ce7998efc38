"""Shared machinery of the finite mixtures fitted by EM (spec 002 §5.4, spec 001 M44)."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from ..base import BaseEstimator, DensityMixin, check_is_fitted
from ..exceptions import ConvergenceWarning
from ..utils.extmath import logsumexp
from ..utils.validation import check_random_state, validate_data
from ._em import em


class _BaseMixture(DensityMixin, BaseEstimator):
    """Mixture ``p(x) = sum_k pi_k p(x | theta_k)`` fitted by :func:`~mathlearn.mixture.em`.

    Subclasses implement ``_initialize(X, rng)``, ``_estimate_log_prob(X)`` (``log p(x_n |
    theta_k)``, shape (N, K)), ``_m_step(X, log_resp)``, ``_get_parameters()``,
    ``_set_parameters(params)``, ``_n_parameters()``, ``_check_X(X, reset)`` and optionally
    ``_log_prior()`` (MAP-EM) and ``_after_fit(X)``. The E-step is common: in log space,
    ``log r_nk = log pi_k + log p(x_n | theta_k) - logsumexp_j(log pi_j + log p(x_n|theta_j))``.
    """

    def _check_params_common(self, n_samples):
        if not isinstance(self.n_components, numbers.Integral) or self.n_components < 1:
            raise ValueError(
                f"n_components must be a positive integer; got {self.n_components!r}."
            )
        if n_samples < self.n_components:
            raise ValueError(
                f"n_samples={n_samples} should be >= n_components={self.n_components}: a "
                "mixture cannot have more components than points."
            )
        if not isinstance(self.n_init, numbers.Integral) or self.n_init < 1:
            raise ValueError(f"n_init must be a positive integer; got {self.n_init!r}.")
        if not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 1:
            raise ValueError(f"max_iter must be a positive integer; got {self.max_iter!r}.")
        if not (isinstance(self.tol, numbers.Real) and self.tol >= 0):
            raise ValueError(f"tol must be a non-negative number; got {self.tol!r}.")

    def _log_prior(self) -> float:
        return 0.0

    def _estimate_weighted_log_prob(self, X):
        return self._estimate_log_prob(X) + np.log(self.weights_)

    def _e_step(self, X):
        """E-step of the EM protocol: mean log-likelihood (+ log prior / N) and log q(z)."""
        wlp = self._estimate_weighted_log_prob(X)
        log_norm = logsumexp(wlp, axis=1)
        log_resp = wlp - log_norm[:, None]
        return float(np.mean(log_norm)) + self._log_prior() / X.shape[0], log_resp

    def fit(self, X, y=None):
        """Estimate the parameters by EM (``n_init`` starts, the best bound is kept).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        self.fit_predict(X, y)
        return self

    def fit_predict(self, X, y=None):
        """Fit, then return the most responsible component of each training point.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        X = self._check_X(X, reset=True)
        self._check_params_common(X.shape[0])
        rng = check_random_state(self.random_state)
        best, best_params = None, None
        for _ in range(self.n_init):
            self._initialize(X, rng)
            result = em(self, X, max_iter=self.max_iter, tol=self.tol)
            if best is None or result.lower_bound > best.lower_bound:
                best, best_params = result, self._get_parameters()
        self._set_parameters(best_params)
        self.converged_ = best.converged
        self.n_iter_ = best.n_iter
        self.lower_bound_ = best.lower_bound
        self.lower_bounds_ = best.lower_bounds
        if not self.converged_:
            warnings.warn(
                f"EM did not converge in max_iter={self.max_iter} iterations (last change of "
                "the bound above tol); increase max_iter or tol, or check the initialisation.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self._after_fit(X)
        return self._e_step(X)[1].argmax(axis=1)

    def _after_fit(self, X):
        pass

    def score_samples(self, X):
        """Log density ``log p(x_n) = logsumexp_k (log pi_k + log p(x_n | theta_k))``.

        Returns
        -------
        log_prob : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        return logsumexp(self._estimate_weighted_log_prob(X), axis=1)

    def score(self, X, y=None) -> float:
        """Average log-likelihood of ``X``."""
        return float(np.mean(self.score_samples(X)))

    def predict_proba(self, X):
        """Responsibilities ``p(z_n = k | x_n)``, shape (n_samples, n_components)."""
        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        return np.exp(self._e_step(X)[1])

    def predict(self, X):
        """Most responsible component of each row of ``X``."""
        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        return self._estimate_weighted_log_prob(X).argmax(axis=1)

    def bic(self, X) -> float:
        """Bayesian information criterion ``-2 log p(X | theta) + M ln N`` (lower is better).

        ``M`` is the number of free parameters (spec 000 M34; the notes maximise
        ``log p - M ln N / 2``, which is ``-BIC / 2``).
        """
        log_prob = self.score_samples(X)
        return -2.0 * log_prob.sum() + self._n_parameters() * np.log(log_prob.shape[0])

    def aic(self, X) -> float:
        """Akaike information criterion ``-2 log p(X | theta) + 2 M`` (lower is better)."""
        return -2.0 * self.score_samples(X).sum() + 2.0 * self._n_parameters()

    def _validate_basic(self, X, reset):
        return validate_data(self, X, dtype=np.float64, reset=reset, ensure_min_samples=1)
