"""Variational Bayesian linear regression (PRML §10.3): mean-field q(w) q(alpha) (q(beta))."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from scipy.special import digamma, gammaln

from ..base import (
    BaseEstimator,
    ProbabilisticRegressorMixin,
    RegressorMixin,
    _fit_context,
    check_is_fitted,
)
from ..exceptions import ConvergenceWarning
from ..inference import coordinate_ascent
from ..utils._param_validation import Interval
from ..utils.validation import validate_data

__all__ = ["VariationalLinearRegression"]

_LOG_2PI = float(np.log(2.0 * np.pi))


def _gamma_entropy(a, b):
    return a - np.log(b) + gammaln(a) + (1.0 - a) * digamma(a)


def _gamma_expected_log_prior(a0, b0, e_x, e_log_x):
    """``E[log Gam(x | a0, b0)]`` under a q with the given ``E[x]`` and ``E[log x]``."""
    return a0 * np.log(b0) - gammaln(a0) + (a0 - 1.0) * e_log_x - b0 * e_x


class _Sweep:
    """CAVI for the linear model on the spectral decomposition of the design."""

    def __init__(self, reg, Phi, t, V, lam, Vt_Phit_t, fixed_beta):
        self.reg, self.Phi, self.t, self.V, self.lam = reg, Phi, t, V, lam
        self.c, self.fixed_beta = Vt_Phit_t, fixed_beta
        n, m = Phi.shape
        self.n, self.m = n, m
        r = reg
        self.a_n = r.alpha_shape + 0.5 * m
        self.c_n = r.beta_shape + 0.5 * n
        # Starting expectations (the first q(w) update uses them).
        self.e_alpha = 1.0
        self.e_beta = fixed_beta if fixed_beta is not None else 1.0 / max(np.var(t), 1e-300)
        self.b_n = self.a_n / self.e_alpha
        self.d_n = self.c_n / self.e_beta

    def _qw(self):
        # S_N^{-1} = E[alpha] I + E[beta] Phi^T Phi = V diag(E[alpha] + E[beta] lam) V^T.
        self.prec = self.e_alpha + self.e_beta * self.lam
        self.mean = self.V @ (self.e_beta * self.c / self.prec)
        self.trace_s = float(np.sum(1.0 / self.prec))
        self.trace_phiphi_s = float(np.sum(self.lam / self.prec))
        self.resid2 = float(np.sum((self.t - self.Phi @ self.mean) ** 2))
        self.e_ww = float(self.mean @ self.mean) + self.trace_s
        self.e_sq_err = self.resid2 + self.trace_phiphi_s

    def update(self, _):
        r = self.reg
        self._qw()
        self.b_n = r.alpha_rate + 0.5 * self.e_ww
        self.e_alpha = self.a_n / self.b_n
        if self.fixed_beta is None:
            self.d_n = r.beta_rate + 0.5 * self.e_sq_err
            self.e_beta = self.c_n / self.d_n

    def elbo(self, _):
        """PRML eq. 10.107, with q(beta) when beta is not fixed."""
        r = self.reg
        n, m = self.n, self.m
        # The bound is evaluated at q(w) for the current E[alpha], E[beta]: recompute it.
        self._qw()
        e_log_alpha = digamma(self.a_n) - np.log(self.b_n)
        if self.fixed_beta is None:
            e_log_beta = digamma(self.c_n) - np.log(self.d_n)
        else:
            e_log_beta = np.log(self.fixed_beta)
        lik = 0.5 * n * (e_log_beta - _LOG_2PI) - 0.5 * self.e_beta * self.e_sq_err
        p_w = 0.5 * m * (e_log_alpha - _LOG_2PI) - 0.5 * self.e_alpha * self.e_ww
        p_alpha = _gamma_expected_log_prior(r.alpha_shape, r.alpha_rate, self.e_alpha, e_log_alpha)
        h_w = 0.5 * m * (1.0 + _LOG_2PI) - 0.5 * float(np.sum(np.log(self.prec)))
        h_alpha = _gamma_entropy(self.a_n, self.b_n)
        out = lik + p_w + p_alpha + h_w + h_alpha
        if self.fixed_beta is None:
            out += _gamma_expected_log_prior(r.beta_shape, r.beta_rate, self.e_beta, e_log_beta)
            out += _gamma_entropy(self.c_n, self.d_n)
        return float(out)


class VariationalLinearRegression(ProbabilisticRegressorMixin, RegressorMixin, BaseEstimator):
    r"""Bayesian linear regression with Gamma hyperpriors, fitted by variational inference.

    Parameters
    ----------
    alpha_shape, alpha_rate : float, default=1e-6
        Prior ``Gam(alpha | a_0, b_0)`` on the weights' precision (rate parametrisation);
        both > 0. The defaults are broad.
    beta_shape, beta_rate : float, default=1e-6
        Prior ``Gam(beta | c_0, d_0)`` on the noise precision (used when ``noise_precision``
        is None).
    noise_precision : float, optional
        A known noise precision ``beta`` (PRML §10.3's model); None gives ``beta`` its own
        factor ``q(beta)``.
    fit_intercept : bool, default=True
        Centre ``X`` and ``y`` and fit the offset without a prior (as
        :class:`BayesianLinearRegression`).
    max_iter : int, default=3000
        Maximum number of CAVI sweeps (each costs ``O(NM)``). Convergence is linear, and
        slow where a weight is irrelevant (``E[alpha]`` then creeps up over hundreds of
        sweeps).
    tol : float, default=1e-9
        Stop when the bound changes by less than ``tol`` relative to its size.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        ``m_N``, the mean of ``q(w)``.
    coef_cov_ : ndarray of shape (n_features, n_features)
        ``S_N``, the covariance of ``q(w)``.
    intercept_ : float
    alpha_ : float
        ``E[alpha] = a_N / b_N``.
    noise_precision_ : float
        ``E[beta] = c_N / d_N`` (or the given ``beta``).
    alpha_shape_, alpha_rate_ : float
        ``a_N``, ``b_N`` of ``q(alpha)``.
    beta_shape_, beta_rate_ : float
        ``c_N``, ``d_N`` of ``q(beta)`` (absent when ``noise_precision`` is given).
    lower_bound_ : float
        The variational lower bound ``L(q) <= log p(t)`` (total, nats; of the centred data
        when ``fit_intercept``).
    lower_bounds_ : ndarray of shape (n_iter_,)
        The bound after each sweep (non-decreasing).
    elbo_history_ : ndarray of shape (n_iter_,)
        Same array as ``lower_bounds_``.
    n_iter_ : int
    converged_ : bool
    n_features_in_ : int

    See Also
    --------
    BayesianLinearRegression : The same model with ``alpha`` and ``beta`` set by evidence
        maximisation (type-II maximum likelihood) instead of integrated over.
    mathlearn.inference.coordinate_ascent : The driver of the fit.

    Notes
    -----
    Model (PRML §10.3): ``t | w, beta ~ N(Phi w, beta^{-1} I)``, ``w | alpha ~ N(0,
    alpha^{-1} I)``, ``alpha ~ Gam(a_0, b_0)``, ``beta ~ Gam(c_0, d_0)``, with the
    mean-field posterior ``q(w) q(alpha) q(beta)``. The optimal factors (PRML eq.
    10.93-10.98, and the same derivation for ``beta``) are

    * ``q(w) = N(m_N, S_N)``, ``S_N^{-1} = E[alpha] I + E[beta] Phi^T Phi``,
      ``m_N = E[beta] S_N Phi^T t``;
    * ``q(alpha) = Gam(a_0 + M/2, b_0 + E[w^T w]/2)``, ``E[w^T w] = m_N^T m_N + tr S_N``;
    * ``q(beta) = Gam(c_0 + N/2, d_0 + E||t - Phi w||^2 / 2)``,
      ``E||t - Phi w||^2 = ||t - Phi m_N||^2 + tr(Phi^T Phi S_N)``.

    The bound (PRML eq. 10.107 extended by ``beta``'s terms) is
    ``E[ln p(t|w,beta)] + E[ln p(w|alpha)] + E[ln p(alpha)] + E[ln p(beta)] + H[q(w)] +
    H[q(alpha)] + H[q(beta)]``, never above the log evidence ``ln p(t)``
    (Oxford "Advanced Topics in Statistical Machine Learning" §2.8). The design is
    factorised once (thin SVD ``Phi = U diag(s) V^T``, or the eigendecomposition of
    ``Phi^T Phi`` for wide designs), so that each sweep costs ``O(NM)`` (the residual) plus
    ``O(M^2)``. Predictions use ``N(m_N^T phi, phi^T S_N phi + 1 / E[beta])`` (PRML eq.
    10.105 with ``E[beta]`` in place of a known ``beta``).

    As ``N`` grows ``q(alpha)`` and ``q(beta)`` concentrate and the fit tends to the
    evidence-maximised one.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linear_model import VariationalLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=200)
    >>> vlr = VariationalLinearRegression().fit(X, y)
    >>> np.round(vlr.coef_, 1).tolist()
    [1.0, -2.0, 0.5]
    >>> mean, std = vlr.predict(X[:2], return_std=True)
    >>> bool(np.all((std > 0.09) & (std < 0.12)))
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "alpha_shape": [Interval(Real, 0, None, closed="neither")],
        "alpha_rate": [Interval(Real, 0, None, closed="neither")],
        "beta_shape": [Interval(Real, 0, None, closed="neither")],
        "beta_rate": [Interval(Real, 0, None, closed="neither")],
        "noise_precision": [Interval(Real, 0, None, closed="neither"), None],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        alpha_shape: float = 1e-6,
        alpha_rate: float = 1e-6,
        beta_shape: float = 1e-6,
        beta_rate: float = 1e-6,
        noise_precision: float | None = None,
        fit_intercept: bool = True,
        max_iter: int = 3000,
        tol: float = 1e-9,
    ):
        self.alpha_shape = alpha_shape
        self.alpha_rate = alpha_rate
        self.beta_shape = beta_shape
        self.beta_rate = beta_rate
        self.noise_precision = noise_precision
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    @_fit_context
    def fit(self, X, y):
        """Fit ``q(w) q(alpha) q(beta)`` by coordinate ascent.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, reset=True)
        for name, arr in (("X", X), ("y", y)):
            big = float(np.max(np.abs(arr))) if arr.size else 0.0
            if big > 1e150:
                raise ValueError(
                    f"{name} has entries of magnitude ~{big:.1e}, whose squares (and the "
                    "Gamma priors' scales) are outside float64; rescale the data and the "
                    "priors together."
                )
        if self.fit_intercept:
            self._x_offset = X.mean(axis=0)
            y_offset = float(y.mean())
        else:
            self._x_offset = np.zeros(X.shape[1])
            y_offset = 0.0
        Phi = X - self._x_offset
        t = y - y_offset
        n, m = Phi.shape
        if n >= m:
            _, s, Vt = np.linalg.svd(Phi, full_matrices=False)
            V, lam = Vt.T, s * s
        else:
            lam, V = np.linalg.eigh(Phi.T @ Phi)
            lam = np.maximum(lam, 0.0)
        c = V.T @ (Phi.T @ t)
        fixed = None if self.noise_precision is None else float(self.noise_precision)
        sweep = _Sweep(self, Phi, t, V, lam, c, fixed)
        result = coordinate_ascent(
            sweep, None, max_iter=self.max_iter, tol=self.tol, name="Variational regression"
        )
        sweep._qw()
        self.coef_ = sweep.mean
        self.coef_cov_ = (V / sweep.prec) @ V.T
        self.coef_cov_ = 0.5 * (self.coef_cov_ + self.coef_cov_.T)
        self.intercept_ = float(y_offset - self._x_offset @ self.coef_)
        self.alpha_shape_, self.alpha_rate_ = float(sweep.a_n), float(sweep.b_n)
        self.alpha_ = float(sweep.e_alpha)
        if fixed is None:
            self.beta_shape_, self.beta_rate_ = float(sweep.c_n), float(sweep.d_n)
        self.noise_precision_ = float(sweep.e_beta)
        self.lower_bounds_ = result.lower_bounds
        self.elbo_history_ = self.lower_bounds_
        self.lower_bound_ = result.lower_bound
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        if not self.converged_:
            warnings.warn(
                f"the variational bound did not converge in max_iter={self.max_iter} sweeps; "
                "increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def _predict_mean_cov(self, X, full_cov=False):
        X = validate_data(self, X, dtype=np.float64, reset=False)
        mean = X @ self.coef_ + self.intercept_
        Xc = X - self._x_offset
        XS = Xc @ self.coef_cov_
        if full_cov:
            cov = XS @ Xc.T
            return mean, 0.5 * (cov + cov.T)
        return mean, np.maximum(np.einsum("ij,ij->i", XS, Xc), 0.0)

    def _predictive_noise_variance(self):
        return 1.0 / self.noise_precision_

    def predict(self, X, return_std: bool = False):
        """Predictive mean, and optionally the predictive standard deviation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
            Also return ``sqrt(phi^T S_N phi + 1 / E[beta])``.

        Returns
        -------
        mean : ndarray of shape (n_samples,)
        std : ndarray of shape (n_samples,), only if ``return_std``
        """
        check_is_fitted(self)
        mean, var = self._predict_mean_cov(X)
        if return_std:
            return mean, np.sqrt(var + self._predictive_noise_variance())
        return mean
