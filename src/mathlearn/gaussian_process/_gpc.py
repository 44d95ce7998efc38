"""Gaussian-process classification by the Laplace approximation (binary and one-vs-rest)."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

from ..base import BaseClassifier, _fit_context, check_is_fitted
from ..exceptions import ConvergenceWarning
from ..kernels import RBF, ConstantKernel, Kernel
from ..utils._param_validation import HasMethods, Interval, StrOptions
from ..utils.extmath import logsumexp
from ..utils.validation import check_random_state, validate_data
from ._common import check_log_bounds, clip_variance, maximize_lml, variance_rounding_bound
from ._laplace import (
    LogisticLikelihood,
    ProbitLikelihood,
    laplace_lml_gradient,
    laplace_mode,
    latent_predictive,
)

__all__ = ["GaussianProcessClassifier"]

_LIKELIHOODS = {"logistic": LogisticLikelihood, "probit": ProbitLikelihood}
# Gauss-Hermite nodes for E[p(y | f)] under the latent Gaussian: exact for polynomials of
# degree 2 * 64 - 1, far below 1e-10 error for the smooth logistic/probit links.
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(64)
_LOG_GH_W = np.log(_GH_W / np.sqrt(2.0 * np.pi))


class GaussianProcessClassifier(BaseClassifier):
    """Gaussian-process classification with the Laplace approximation.

    A latent function ``f ~ GP(0, k)`` and ``p(y = +1 | f) = sigma(f)`` (logistic) or
    ``Phi(f)`` (probit). The posterior of ``f`` at the training inputs is approximated by a
    Gaussian at its mode (found by the stable Newton iteration); the kernel's
    hyperparameters maximise the approximate log marginal likelihood. More than two classes:
    one binary model per class against the rest, sharing the kernel's initial value; the
    class probabilities are normalised to sum to one.

    Parameters
    ----------
    kernel : Kernel or None, default=None
        ``None``: ``ConstantKernel(1.0) * RBF(1.0)``.
    likelihood : "logistic", "probit" or object, default="logistic"
        An object with ``log_lik(y, f)``, ``derivatives(y, f) -> (g, W, third)``,
        ``log_proba_latent(f)`` and ``log_proba_probit_approx(mean, var)`` plugs in another
        factorising log-concave likelihood (labels ``y`` in ``{-1, +1}``).
    optimizer : "lbfgs" or None, default="lbfgs"
        L-BFGS-B on the approximate log marginal likelihood, stopped as in
        :class:`GaussianProcessRegressor` (SciPy's default tests); ``None`` keeps the
        hyperparameters as given.
    n_restarts : int, default=0
        Additional L-BFGS-B starts at scrambled Sobol points of the log-space box of bounds.
    proba_method : {"probit", "quadrature", "mc"}, default="probit"
        Class probability ``E[p(y = 1 | f)]`` under the latent predictive ``N(mean, var)``:
        the probit approximation (``Phi(mean / sqrt(1 + var))``, exact for the probit link;
        MacKay's ``sigma(mean / sqrt(1 + pi var / 8))`` for the logistic one), 64-point
        Gauss-Hermite quadrature, or Monte Carlo with ``n_mc`` draws.
    n_mc : int, default=1000
    max_iter : int, default=100
        Newton iterations per mode search.
    tol : float, default=1e-10
        Relative change of the Newton objective that stops the iteration.
    random_state : int, Generator, RandomState or None
        Seeds the restarts and the MC draws.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    kernel_ : Kernel or list of Kernel
        The learned kernel (one per class for one-vs-rest).
    f_ : ndarray of shape (n_samples,) or (n_classes, n_samples)
        Posterior mode of the latent function at the training inputs.
    log_marginal_likelihood_value_ : float
        Approximate log marginal likelihood (summed over the one-vs-rest models).
    optimizer_trace_ : list
        Per start (per class for one-vs-rest), as in ``GaussianProcessRegressor``.
    n_iter_ : int or ndarray
        Newton iterations of the final mode search.
    n_features_in_ : int

    See Also
    --------
    mathlearn.gaussian_process.GaussianProcessRegressor
        Regression with a Gaussian likelihood.
    mathlearn.linear_model.BayesianLogisticRegression
        The same Laplace approximation on a linear model.
    sklearn.gaussian_process.GaussianProcessClassifier
        scikit-learn's equivalent.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §9.3 (eq. 9.12-9.17 and the
    stable Newton iteration with ``B = I + D^1/2 K D^1/2``): the approximate posterior is
    ``N(f_hat, (K^{-1} + W)^{-1})``; the latent predictive has mean ``k_*^T grad log p(y |
    f_hat)`` and variance ``k(x, x) - k_*^T (K + W^{-1})^{-1} k_*``, larger than the
    plug-in variance ``k(x, x) - k_*^T K^{-1} k_*``. The approximate log marginal likelihood
    and its gradient are Rasmussen and Williams' (eq. 3.32, Alg. 5.1); the notes do not give
    them. Class probabilities are not in the notes either (see ``proba_method``).

    Complexity: each Newton step of the mode search costs ``O(N^3)`` (the Cholesky factor of
    ``B``), a few to a few dozen steps per hyperparameter value; the approximate log marginal
    likelihood's gradient adds ``O(N^3 + P N^2)`` for ``P`` hyperparameters; memory
    ``O(P N^2)`` for the kernel and its gradient. Prediction of ``M`` points: ``O(M N D)`` for
    the kernel rows and ``O(M N^2)`` for the latent variances.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.gaussian_process import GaussianProcessClassifier
    >>> from mathlearn.kernels import RBF, ConstantKernel
    >>> k = ConstantKernel(4.0, "fixed") * RBF(1.0, "fixed")
    >>> X, y = np.array([[-1.0], [0.0], [1.0], [2.0]]), np.array([-1, -1, 1, 1])
    >>> gpc = GaussianProcessClassifier(k, optimizer=None).fit(X, y)
    >>> np.round(gpc.f_, 6)
    array([-1.366709, -0.853134,  0.853134,  1.366709])
    >>> mean, var = gpc.predict_latent(np.array([[0.5], [5.0]]))
    >>> np.round(mean, 6), np.round(var, 6)
    (array([0.      , 0.009424]), array([1.746723, 3.999796]))
    """

    _parameter_constraints = {
        "kernel": [Kernel, None],
        "likelihood": [
            StrOptions({"logistic", "probit"}),
            HasMethods(["log_lik", "derivatives", "log_proba_latent", "log_proba_probit_approx"]),
        ],
        "optimizer": [StrOptions({"lbfgs"}), None],
        "n_restarts": [Interval(Integral, 0, None, closed="left")],
        "proba_method": [StrOptions({"probit", "quadrature", "mc"})],
        "n_mc": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        kernel: Kernel | None = None,
        *,
        likelihood="logistic",
        optimizer: str | None = "lbfgs",
        n_restarts: int = 0,
        proba_method: str = "probit",
        n_mc: int = 1000,
        max_iter: int = 100,
        tol: float = 1e-10,
        random_state=None,
    ):
        self.kernel = kernel
        self.likelihood = likelihood
        self.optimizer = optimizer
        self.n_restarts = n_restarts
        self.proba_method = proba_method
        self.n_mc = n_mc
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _lik(self):
        if isinstance(self.likelihood, str):
            return _LIKELIHOODS[self.likelihood]()
        return self.likelihood

    def _fit_binary(self, X, y_pm, kernel, lik, rng):
        cache = {"f": None}

        def objective(theta):
            kernel.theta = theta
            K, dK = kernel(X, eval_gradient=True)
            state = laplace_mode(K, y_pm, lik, f0=cache["f"], max_iter=self.max_iter, tol=self.tol)
            cache["f"] = state["f"]
            grad = laplace_lml_gradient(K, np.moveaxis(dK, -1, 0), state)
            return state["lml"], grad

        trace = []
        if self.optimizer is not None:
            bounds = kernel.bounds
            if bounds.shape[0] == 0:
                raise ValueError(
                    "The kernel has no free hyperparameters (its theta is empty), so there is "
                    "nothing to optimise; pass optimizer=None."
                )
            names = [
                h.name for h in kernel.hyperparameters if not h.fixed for _ in range(h.n_elements)
            ]
            check_log_bounds(bounds, names)
            theta, _, trace = maximize_lml(
                objective, kernel.theta, bounds, self.n_restarts, rng, type(self).__name__
            )
            kernel.theta = theta
        K = kernel(X)
        state = laplace_mode(K, y_pm, lik, max_iter=self.max_iter, tol=self.tol)
        if not state["converged"]:
            warnings.warn(
                f"{type(self).__name__}: Newton's method did not converge in {self.max_iter} "
                "iterations; increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )
        state["trace_K"] = float(np.trace(K))
        return kernel, state, trace

    @_fit_context
    def fit(self, X, y):
        """Find the posterior mode (and the hyperparameters) for each binary problem.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        y_idx = self._encode_labels(y)
        lik = self._lik()
        rng = check_random_state(self.random_state)
        base = ConstantKernel(1.0) * RBF(1.0) if self.kernel is None else self.kernel
        self.X_train_ = X
        n_classes = self.classes_.shape[0]
        targets = [1] if n_classes == 2 else range(n_classes)
        self._models = []
        for c in targets:
            y_pm = np.where(y_idx == c, 1.0, -1.0)
            kernel = base.clone_with_theta(base.theta)
            self._models.append(self._fit_binary(X, y_pm, kernel, lik, rng))
        self.optimizer_trace_ = [m[2] for m in self._models]
        if n_classes == 2:
            self.kernel_ = self._models[0][0]
            self.f_ = self._models[0][1]["f"]
            self.n_iter_ = self._models[0][1]["n_iter"]
            self.optimizer_trace_ = self.optimizer_trace_[0]
        else:
            self.kernel_ = [m[0] for m in self._models]
            self.f_ = np.array([m[1]["f"] for m in self._models])
            self.n_iter_ = np.array([m[1]["n_iter"] for m in self._models])
        self.log_marginal_likelihood_value_ = float(sum(m[1]["lml"] for m in self._models))
        return self

    def _latent(self, X):
        means, variances = [], []
        for kernel, state, _ in self._models:
            prior_var = kernel.diag(X)
            m, v = latent_predictive(kernel(X, self.X_train_), prior_var, state)
            bound = variance_rounding_bound(self.X_train_.shape[0], state["trace_K"], prior_var)
            means.append(m)
            variances.append(clip_variance(v, bound, type(self).__name__))
        return np.array(means), np.array(variances)

    def predict_latent(self, X):
        """Latent predictive mean and variance of ``f(x)`` under the Laplace posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        mean, var : ndarray of shape (n_samples,) for two classes, else (n_samples, n_classes)
        """
        check_is_fitted(self)
        X = self._validate_X_predict(X)
        m, v = self._latent(X)
        if m.shape[0] == 1:
            return m[0], v[0]
        return m.T, v.T

    def _log_proba_binary(self, m, v):
        """``log p(y = +1)`` and ``log p(y = -1)`` under ``f ~ N(m, v)``."""
        lik = self._lik()
        if self.proba_method == "probit":
            return lik.log_proba_probit_approx(m, v)
        if self.proba_method == "quadrature":
            f = m[:, None] + np.sqrt(v)[:, None] * _GH_X[None, :]
            lp, ln = lik.log_proba_latent(f)
            return logsumexp(lp + _LOG_GH_W, axis=1), logsumexp(ln + _LOG_GH_W, axis=1)
        rng = check_random_state(self.random_state)
        f = m[:, None] + np.sqrt(v)[:, None] * rng.standard_normal((m.shape[0], self.n_mc))
        lp, ln = lik.log_proba_latent(f)
        log_n = np.log(self.n_mc)
        return logsumexp(lp, axis=1) - log_n, logsumexp(ln, axis=1) - log_n

    def _joint_log_likelihood(self, X):
        m, v = self._latent(X)
        if m.shape[0] == 1:
            lp, ln = self._log_proba_binary(m[0], v[0])
            return np.column_stack([ln, lp])
        # One-vs-rest: each class's probability against the rest, normalised by the base.
        return np.column_stack([self._log_proba_binary(m[c], v[c])[0] for c in range(m.shape[0])])
