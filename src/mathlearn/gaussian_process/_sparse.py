"""Sparse GP regression with inducing points: the variational bound of Titsias (2009)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.linalg as sla

from ..base import (
    BaseEstimator,
    ProbabilisticRegressorMixin,
    RegressorMixin,
    _fit_context,
    check_is_fitted,
)
from ..kernels import RBF, ConstantKernel, Kernel
from ..utils._param_validation import Interval
from ..utils.validation import check_random_state, validate_data
from ._common import cholesky_with_jitter, clip_variance, variance_rounding_bound

__all__ = ["SparseGaussianProcessRegressor"]

_LOG_2PI = float(np.log(2.0 * np.pi))


class SparseGaussianProcessRegressor(ProbabilisticRegressorMixin, RegressorMixin, BaseEstimator):
    """Sparse GP regression by Titsias' variational inducing-point approximation.

    ``m`` inducing inputs ``Z`` summarise the data; the cost is ``O(n m^2)`` instead of
    ``O(n^3)``. This is the *variational* approximation of Titsias (2009), not FITC/Nyström:
    its objective is a lower bound on the exact log marginal likelihood, and with ``Z = X``
    it recovers the exact GP posterior and marginal likelihood. The kernel's hyperparameters
    and the noise are kept as given (fit them on a subset with
    :class:`GaussianProcessRegressor`).

    Parameters
    ----------
    kernel : Kernel or None, default=None
        ``None``: ``ConstantKernel(1.0) * RBF(1.0)``.
    noise_variance : float, default=1e-2
        ``sigma^2`` of the Gaussian likelihood.
    n_inducing : int, default=100
        Number of inducing inputs, drawn without replacement from the training inputs
        (all of them when ``n_inducing >= n_samples``), unless ``inducing_points`` is given.
    inducing_points : array-like of shape (m, n_features) or None, default=None
    random_state : int, Generator, RandomState or None

    Attributes
    ----------
    inducing_points_ : ndarray of shape (m, n_features)
    lower_bound_ : float
        Titsias' bound ``log N(y | 0, Q + sigma^2 I) - tr(K - Q) / (2 sigma^2)`` with
        ``Q = K_nm K_mm^{-1} K_mn``; at most the exact log marginal likelihood.
    jitter_ : float
        Jitter added to ``K_mm`` for its Cholesky factor (0.0 when none was needed).
    n_features_in_ : int

    See Also
    --------
    mathlearn.gaussian_process.GaussianProcessRegressor
        The exact GP.
    mathlearn.gaussian_process.RandomFeatureGaussianProcessRegressor
        Another approximation for large N.

    Notes
    -----
    The notes' Nyström section (Oxford "Advanced Topics in Statistical Machine Learning"
    §9.4) writes ``K ~ Q`` with an ``m x m`` solve by the Woodbury identity; the variational
    method uses the same ``Q`` for the predictive mean and adds the trace penalty to the
    objective. With ``L = chol(K_mm)``, ``A = L^{-1} K_mn / sigma``, ``B = I + A A^T =
    L_B L_B^T`` and ``c = L_B^{-1} A y / sigma``: the predictive mean at ``x`` is
    ``t_2^T c`` and the latent variance ``k(x, x) - ||t_1||^2 + ||t_2||^2`` with
    ``t_1 = L^{-1} k_m(x)``, ``t_2 = L_B^{-1} t_1`` (Titsias, 2009, eq. 6-10).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.gaussian_process import SparseGaussianProcessRegressor
    >>> from mathlearn.kernels import RBF
    >>> X = np.linspace(0, 5, 200)[:, None]
    >>> y = np.sin(X[:, 0])
    >>> sgp = SparseGaussianProcessRegressor(RBF(1.0), n_inducing=15, random_state=0)
    >>> bool(np.abs(sgp.fit(X, y).predict(X) - y).max() < 0.05)
    True
    """

    _parameter_constraints = {
        "kernel": [Kernel, None],
        "noise_variance": [Interval(Real, 0, None, closed="neither")],
        "n_inducing": [Interval(Integral, 1, None, closed="left")],
        "inducing_points": ["array-like", None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        kernel: Kernel | None = None,
        *,
        noise_variance: float = 1e-2,
        n_inducing: int = 100,
        inducing_points=None,
        random_state=None,
    ):
        self.kernel = kernel
        self.noise_variance = noise_variance
        self.n_inducing = n_inducing
        self.inducing_points = inducing_points
        self.random_state = random_state

    @_fit_context
    def fit(self, X, y):
        """Compute the optimal variational distribution of the inducing values.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        self.kernel_ = (
            ConstantKernel(1.0) * RBF(1.0)
            if self.kernel is None
            else self.kernel.clone_with_theta(self.kernel.theta)
        )
        if self.inducing_points is not None:
            Z = validate_data(self, self.inducing_points, dtype=np.float64, reset=False)
        else:
            rng = check_random_state(self.random_state)
            m = min(self.n_inducing, X.shape[0])
            Z = X[np.sort(rng.choice(X.shape[0], size=m, replace=False))]
        self.inducing_points_ = Z
        s2 = float(self.noise_variance)
        n = X.shape[0]
        Kmm = self.kernel_(Z)
        self._L, self.jitter_ = cholesky_with_jitter(Kmm, "K_mm")
        Kmn = self.kernel_(Z, X)
        A = sla.solve_triangular(self._L, Kmn, lower=True, check_finite=False) / np.sqrt(s2)
        B = np.eye(Z.shape[0]) + A @ A.T
        self._LB = sla.cholesky(B, lower=True, check_finite=False)
        self._c = sla.solve_triangular(self._LB, A @ y, lower=True, check_finite=False) / np.sqrt(
            s2
        )
        trace_K = float(np.sum(self.kernel_.diag(X)))
        self.lower_bound_ = float(
            -0.5 * n * _LOG_2PI
            - np.sum(np.log(np.diag(self._LB)))
            - 0.5 * n * np.log(s2)
            - 0.5 * float(y @ y) / s2
            + 0.5 * float(self._c @ self._c)
            - 0.5 * trace_K / s2
            + 0.5 * float(np.sum(A * A))
        )
        self._trace = float(np.trace(Kmm))
        self.noise_variance_ = s2
        return self

    def _predict_mean_cov(self, X, full_cov=False):
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Kms = self.kernel_(self.inducing_points_, X)
        t1 = sla.solve_triangular(self._L, Kms, lower=True, check_finite=False)
        t2 = sla.solve_triangular(self._LB, t1, lower=True, check_finite=False)
        mean = t2.T @ self._c
        prior_var = self.kernel_.diag(X)
        bound = variance_rounding_bound(self.inducing_points_.shape[0], self._trace, prior_var)
        if full_cov:
            cov = self.kernel_(X) - t1.T @ t1 + t2.T @ t2
            cov = 0.5 * (cov + cov.T)
            cov[np.diag_indices_from(cov)] = clip_variance(
                np.diag(cov).copy(), bound, type(self).__name__
            )
            return mean, cov
        var = prior_var - np.sum(t1 * t1, axis=0) + np.sum(t2 * t2, axis=0)
        return mean, clip_variance(var, bound, type(self).__name__)

    def _predictive_noise_variance(self):
        return self.noise_variance_

    def predict(self, X, return_std: bool = False, noisy: bool = False):
        """Predictive mean, and optionally the latent (or noisy) standard deviation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
        noisy : bool, default=False
            Add ``noise_variance`` to the latent variance.

        Returns
        -------
        mean : ndarray of shape (n_samples,)
        std : ndarray of shape (n_samples,), with ``return_std``
        """
        check_is_fitted(self)
        mean, var = self._predict_mean_cov(X)
        if return_std:
            return mean, np.sqrt(var + (self.noise_variance_ if noisy else 0.0))
        return mean
