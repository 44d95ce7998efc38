r"""Bayesian logistic regression by the Laplace approximation.

Model (Stuttgart "Introduction to Machine Learning" slides 8:19-8:21; PRML §4.5; Oxford
"Advanced Topics" §7.3): ``p(y = 1 | x, w) = σ(w^T x̃)`` with ``x̃ = (x, 1)`` when an
intercept is fitted, and the prior ``w ~ N(0, α^{-1} I)`` on every weight (the intercept
included, as in the notes). The log joint

.. math::

    \log p(w, D) = \sum_i s_i \log\sigma(t_i w^\top \tilde x_i)
    + \tfrac d2 \log\tfrac{\alpha}{2\pi} - \tfrac\alpha2 \|w\|^2, \qquad t_i = \pm 1,

is maximised by Newton's method; the posterior is approximated by ``N(w_MAP, H^{-1})`` with
``H = Σ_i s_i p_i (1 - p_i) x̃_i x̃_i^T + α I`` and the evidence by the Laplace formula
(:func:`mathlearn.inference.laplace_approximation`). The notes write the prior as
``exp(-λ‖β‖²)`` and call its variance ``2/λ``; its variance is ``1/(2λ)`` (corrected here), so
``α = 2λ``.

The predictive ``p(y = 1 | x, D) = ∫ σ(f) N(f | μ, s²) df`` with ``μ = w_MAP^T x̃`` and
``s² = x̃^T H^{-1} x̃`` is computed by the probit approximation ``σ(μ / sqrt(1 + π s²/8))``
(slide 8:20, PRML eq. 4.155) or by Monte Carlo over ``f``.

Evidence maximisation (MacKay, 1992; PRML §4.4 and §3.5.2 for the linear analogue): the
Laplace evidence is stationary in ``α`` where

.. math::

    \alpha = \frac{\gamma - \alpha\,\tau}{\|w_{MAP}\|^2}, \qquad
    \gamma = d - \alpha \operatorname{tr} H^{-1}, \qquad
    \tau = \sum_i s_i\, p_i(1 - p_i)(1 - 2p_i)\,(\tilde x_i^\top H^{-1} \tilde x_i)\,
    (\tilde x_i^\top \partial_\alpha w_{MAP}),

with ``∂_α w_MAP = -H^{-1} w_MAP``. MacKay's update ``α = γ / ‖w‖²`` drops ``τ``, the change
of the Hessian with the mode; keeping it makes the fixed point the exact maximiser of the
Laplace evidence, which is what the tests check.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import expit, log_expit
from scipy.special import logsumexp as _logsumexp

from ..base import BaseClassifier, _fit_context, check_is_fitted
from ..exceptions import ConvergenceWarning
from ..inference import laplace_approximation
from ..utils._param_validation import Interval, StrOptions
from ..utils.linalg import cho_solve, cholesky
from ..utils.validation import check_random_state, check_sample_weight, validate_data

__all__ = ["BayesianLogisticRegression"]


class BayesianLogisticRegression(BaseClassifier):
    r"""Binary logistic regression with a Gaussian prior, by the Laplace approximation.

    Parameters
    ----------
    prior_precision : float or None, default=None
        ``α`` in the prior ``N(0, α^{-1} I)`` (the notes' ``2λ``). ``None``: maximise the
        Laplace evidence over ``α`` (MacKay's fixed point, see Notes).
    fit_intercept : bool, default=True
        Append a constant feature; its weight has the same prior.
    predictive : {"probit", "mc", "map"}, default="probit"
        How ``predict_proba`` integrates over the posterior: the probit approximation, a
        Monte Carlo average of ``σ(f)`` over ``n_mc_samples`` draws of the latent ``f``, or
        the plug-in ``σ(w_MAP^T x̃)`` that ignores the posterior's spread.
    n_mc_samples : int, default=2000
    max_iter : int, default=100
        Iterations of the evidence maximisation (and of each Newton search for the mode).
    tol : float, default=1e-8
        Evidence maximisation stops when ``|Δ log α| <= tol``; the mode is found to a
        gradient norm of ``tol * Σ_i s_i * max(1, max|X|)``.
    random_state : int, Generator, RandomState or None, default=None
        Seed of the Monte Carlo predictive (``predictive="mc"``).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (1, n_features)
        Posterior mean (= mode) of the weights.
    intercept_ : ndarray of shape (1,)
    coef_cov_ : ndarray of shape (n_params, n_params)
        Posterior covariance ``H^{-1}`` of ``(coef, intercept)`` (``n_params = n_features + 1``
        with an intercept).
    posterior_ : MultivariateNormal
        ``N(w_MAP, H^{-1})`` over the ``n_params`` weights.
    prior_precision_ : float
    log_evidence_ : float
        Laplace approximation of ``log p(y | X, α)``.
    effective_params_ : float
        ``γ = d - α tr H^{-1}``, the number of well-determined parameters.
    n_iter_ : int
        Evidence iterations (1 with a fixed ``prior_precision``).
    n_features_in_ : int

    Notes
    -----
    See the module docstring for the model, the predictive and the evidence update.

    Complexity: for ``N`` samples and ``P`` weights (``D`` features, plus one with an
    intercept), each Newton step of the mode search costs ``O(N P^2)`` for the Hessian ``H``
    (a weighted product ``X~^T X~`` of the ``N x P`` design ``X~``) and ``O(P^3)`` for its
    solve, plus ``O(N P)`` per log-joint evaluation of the line search; a few steps reach the
    mode. The Cholesky factor of ``H``, its inverse and the posterior add ``O(P^3)``. With
    ``prior_precision=None`` each of the ``T`` evidence iterations repeats a warm-started mode
    search (often of zero or one step) and adds ``O(N P^2 + P^3)`` for the leverages
    ``x~_i^T H^{-1} x~_i`` of the rows ``x~_i`` of ``X~``, so ``fit`` costs
    ``O((I + T) (N P^2 + P^3))`` for ``I`` Newton steps in all. Memory
    ``O(N P + P^2)``: the design matrix with its intercept column, its weighted copy for the
    Hessian, the ``P x N`` array behind the leverages, and ``P x P`` matrices. Prediction of
    ``M`` points costs ``O(M P^2)`` for the latent variances (``O(M P)`` memory), and
    ``predictive="mc"`` adds ``O(M n_mc_samples)`` time in blocks of 4096 points.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[-2.0], [-1.0], [0.0], [1.0], [2.0], [0.5]])
    >>> y = np.array([0, 0, 1, 1, 1, 0])
    >>> clf = BayesianLogisticRegression(prior_precision=1.0).fit(X, y)
    >>> mean, var = clf.predict_latent(np.array([[0.0], [10.0]]))
    >>> bool(var[1] > var[0])  # less certain far from the data
    True

    See Also
    --------
    mathlearn.linear_model.LogisticRegression : the MAP (penalised ML) estimate alone.
    mathlearn.inference.laplace_approximation
    """

    _parameter_constraints = {
        "prior_precision": [Interval(Real, 0, None, closed="neither"), None],
        "fit_intercept": ["boolean"],
        "predictive": [StrOptions({"probit", "mc", "map"})],
        "n_mc_samples": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    # The common checks fit noise, for which the evidence is largest as α → ∞ (all weights
    # zero); a fixed prior keeps them about the estimator's contract.
    _common_test_params = {"prior_precision": 1.0}

    def __init__(
        self,
        *,
        prior_precision: float | None = None,
        fit_intercept: bool = True,
        predictive: str = "probit",
        n_mc_samples: int = 2000,
        max_iter: int = 100,
        tol: float = 1e-8,
        random_state=None,
    ):
        self.prior_precision = prior_precision
        self.fit_intercept = fit_intercept
        self.predictive = predictive
        self.n_mc_samples = n_mc_samples
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def _design(self, X):
        return np.hstack([X, np.ones((X.shape[0], 1))]) if self.fit_intercept else X

    @staticmethod
    def _laplace(Xt, t, sw, alpha, w0, tol, max_iter, cache):
        d = Xt.shape[1]
        const = 0.5 * d * math.log(alpha / (2 * math.pi))

        def log_joint(w):
            return float(sw @ log_expit(t * (Xt @ w))) + const - 0.5 * alpha * float(w @ w)

        def grad(w):
            return Xt.T @ (sw * t * expit(-t * (Xt @ w))) - alpha * w

        def hess(w):
            # The data term Σ s_i p_i (1 - p_i) x̃_i x̃_iᵀ depends on w only: kept for the last
            # w, since successive evidence iterations often end at the same mode (their mode
            # search starts there and may take no step).
            key = w.tobytes()
            if cache.get("key") != key:
                p = expit(Xt @ w)
                Xd = Xt * np.sqrt(sw * p * (1 - p))[:, None]
                cache["key"], cache["A"] = key, Xd.T @ Xd
            H = cache["A"].copy()
            H[np.diag_indices(d)] += alpha
            return -H

        return laplace_approximation(
            log_joint, w0, grad, hess, method="newton", tol=tol, max_iter=max_iter
        )

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Find the posterior mode, the Laplace posterior and (optionally) ``α``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes (numbers or strings).
        sample_weight : array-like of shape (n_samples,), optional
            Multiplies each sample's log-likelihood term.

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        y_idx = self._encode_labels(y)
        if len(self.classes_) != 2:
            raise ValueError(
                "Only binary classification is supported. BayesianLogisticRegression got "
                f"{len(self.classes_)} classes."
            )
        sw = check_sample_weight(sample_weight, X)
        scale = float(np.max(np.abs(X)))
        if scale > 1e100:
            raise ValueError(
                f"X has entries of magnitude up to {scale:.3g}; the Hessian's sums of products "
                "of features overflow float64 beyond about 1e100. Rescale X."
            )
        Xt = self._design(X)
        t = np.where(y_idx == 1, 1.0, -1.0)
        d = Xt.shape[1]
        # The gradient sums S = Σ s_i terms of size up to max|x̃|: tolerance relative to that.
        newton_tol = self.tol * max(float(sw.sum()), 1.0) * max(scale, 1.0)
        fixed = self.prior_precision is not None
        alpha = float(self.prior_precision) if fixed else 1.0
        w = np.zeros(d)
        n_iter = 0
        previous = None
        cache: dict = {}
        evidence_converged = True
        with warnings.catch_warnings():
            # The mode search's own warning is replaced by the one below, after the loop.
            warnings.simplefilter("ignore", ConvergenceWarning)
            while True:
                res = self._laplace(Xt, t, sw, alpha, w, newton_tol, self.max_iter, cache)
                w = res.mode
                n_iter += 1
                L = cholesky(res.hessian, jitter=None, name="the posterior precision")
                Linv = solve_triangular(L, np.eye(d), lower=True)
                gamma = d - alpha * float(np.sum(Linv * Linv))  # tr H^{-1} = ‖L^{-1}‖_F²
                if fixed:
                    break
                if n_iter > self.max_iter:
                    evidence_converged = False
                    break
                p = expit(Xt @ w)
                V = Linv @ Xt.T  # x_i^T H^{-1} x_i = ‖L^{-1} x_i‖²
                lev = np.sum(V * V, axis=0)
                dw = -cho_solve(L, w)
                tau = float(np.sum(sw * p * (1 - p) * (1 - 2 * p) * lev * (Xt @ dw)))
                ww = float(w @ w)
                new = (gamma - alpha * tau) / ww if ww > 0 else np.inf
                if not (np.isfinite(new) and new > 0):
                    raise ValueError(
                        "the evidence has no maximum over the prior precision for these data "
                        "(the posterior mode shrinks to zero: the labels carry no linear "
                        "signal); pass a fixed prior_precision."
                    )
                x, fx = math.log(alpha), math.log(new / alpha)
                step = abs(fx)
                x_next = x + fx  # the fixed-point update α <- new
                if previous is not None and step > self.tol:
                    # Secant on F(log α) = log new(α) - log α (same root, superlinear
                    # convergence where the fixed-point update is linear); kept only when it
                    # moves at most a few fixed-point steps.
                    xp, fp = previous
                    if fx != fp:
                        xs = x - fx * (x - xp) / (fx - fp)
                        if math.isfinite(xs) and abs(xs - x) <= 4.0 * step:
                            x_next = xs
                previous = (x, fx)
                alpha_next = math.exp(x_next)
                alpha = alpha_next
                if step <= self.tol:
                    # One more Laplace fit at the final α, so every attribute belongs to it.
                    fixed = True
        if not evidence_converged:
            warnings.warn(
                f"the evidence maximisation stopped after {self.max_iter} iterations before "
                f"|Δ log α| <= tol = {self.tol:g}, at α = {alpha:.3g}. If α keeps drifting "
                "towards 0 or infinity, the Laplace evidence has no finite maximiser for these "
                "data (as for few or separable data); pass a fixed prior_precision.",
                ConvergenceWarning,
                stacklevel=2,
            )
        if not res.converged:
            warnings.warn(
                "the Newton search for the posterior mode stopped before its gradient "
                "tolerance; increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=2,
            )
        n_feat = X.shape[1]
        self.coef_ = w[:n_feat].reshape(1, n_feat).copy()
        self.intercept_ = np.array([w[n_feat] if self.fit_intercept else 0.0])
        self.posterior_ = res.posterior
        self.coef_cov_ = res.posterior.cov
        self.prior_precision_ = alpha
        self.log_evidence_ = res.log_evidence
        self.effective_params_ = gamma
        self.n_iter_ = min(n_iter, self.max_iter)
        return self

    def predict_latent(self, X):
        """Mean and variance of the latent ``f = w^T x̃`` under the Laplace posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        mean : ndarray of shape (n_samples,)
        var : ndarray of shape (n_samples,)
            ``x̃^T H^{-1} x̃``.
        """
        check_is_fitted(self)
        Xt = self._design(self._validate_X_predict(X))
        mean = Xt @ self.posterior_.mean
        B = Xt @ self.posterior_.scale_tril  # Σ = S S^T, so x^T Σ x = ‖S^T x‖²
        return mean, np.sum(B * B, axis=1)

    def _log_p1_p0(self, mean, var, method):
        if method == "map":
            return log_expit(mean), log_expit(-mean)
        if method == "probit":
            kappa_mu = mean / np.sqrt(1.0 + np.pi * var / 8.0)
            return log_expit(kappa_mu), log_expit(-kappa_mu)
        rng = check_random_state(self.random_state)
        z = rng.standard_normal(self.n_mc_samples)
        log_m = math.log(self.n_mc_samples)
        lp1 = np.empty_like(mean)
        lp0 = np.empty_like(mean)
        sd = np.sqrt(var)
        for start in range(0, mean.shape[0], 4096):
            sl = slice(start, start + 4096)
            f = mean[sl, None] + sd[sl, None] * z
            lp1[sl] = _logsumexp(log_expit(f), axis=1) - log_m
            lp0[sl] = _logsumexp(log_expit(-f), axis=1) - log_m
        return lp1, lp0

    def _joint_log_likelihood(self, X):
        Xt = self._design(X)
        mean = Xt @ self.posterior_.mean
        B = Xt @ self.posterior_.scale_tril
        lp1, lp0 = self._log_p1_p0(mean, np.sum(B * B, axis=1), self.predictive)
        return np.column_stack([lp0, lp1])

    def predict_proba_with(self, X, method: str):
        """``predict_proba`` with the predictive ``method`` ("probit", "mc" or "map").

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        method : {"probit", "mc", "map"}

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
        """
        if method not in ("probit", "mc", "map"):
            raise ValueError(f"method must be 'probit', 'mc' or 'map'; got {method!r}.")
        mean, var = self.predict_latent(X)
        lp1, lp0 = self._log_p1_p0(mean, var, method)
        return np.exp(np.column_stack([lp0, lp1]))
