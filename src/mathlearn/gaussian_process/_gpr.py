"""Gaussian-process regression by the Cholesky route, with marginal-likelihood learning."""

from __future__ import annotations

import warnings
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
from ..exceptions import NumericalWarning
from ..kernels import RBF, ConstantKernel, Kernel
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import check_random_state, validate_data
from ._common import (
    LML_FTOL,
    check_log_bounds,
    cholesky_with_jitter,
    clip_variance,
    maximize_lml,
    variance_rounding_bound,
)

__all__ = ["GaussianProcessRegressor"]

_LOG_2PI = float(np.log(2.0 * np.pi))
# From this many training points on, the gradient's K^{-1} comes from LAPACK's potri (a third
# of the flops of two triangular solves); below, its per-column clearing of the upper
# triangle (a Python loop) costs more than the O(N^3) it saves.
_POTRI_MIN_N = 256


def _lower_inverse_from_cholesky(L: np.ndarray) -> np.ndarray:
    """The lower triangle of ``(L L^T)^{-1}``, its strict upper triangle zero (Fortran order).

    The trace terms ``tr(K^{-1} dK_j)`` of the gradient need every entry of ``K^{-1}``, and
    by symmetry its lower triangle holds them all. LAPACK's ``potri`` forms it from ``L`` in
    ``2/3 N^3`` flops (``L^{-1}`` in place, then ``L^{-T} L^{-1}``), a third of the
    ``2 N^3`` of two triangular solves against the identity. SciPy's Cholesky factor is
    already in Fortran order, so nothing is copied on the way in.
    """
    inv, info = sla.lapack.dpotri(np.asfortranarray(L), lower=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"potri failed (info = {info}): the factor is singular.")
    # potri leaves the upper triangle as it found it: clear it column by column (contiguous
    # slices of the Fortran array; no N^2 index arrays).
    for j in range(1, inv.shape[0]):
        inv[:j, j] = 0.0
    return inv


class GaussianProcessRegressor(ProbabilisticRegressorMixin, RegressorMixin, BaseEstimator):
    """Gaussian-process regression with a Gaussian likelihood.

    Model: ``f ~ GP(m, k)``, ``y_i = f(x_i) + eps_i`` with ``eps_i ~ N(0, noise_variance)``.
    The posterior of ``f`` is Gaussian; the kernel's free hyperparameters (``theta``, log
    space) and, unless fixed, the log noise variance are set by maximising the log marginal
    likelihood with L-BFGS-B from the given values and ``n_restarts`` Sobol points.

    Parameters
    ----------
    kernel : Kernel or None, default=None
        Prior covariance ``k`` (a :mod:`mathlearn.kernels` kernel). ``None``:
        ``ConstantKernel(1.0) * RBF(1.0)``. Cloned into ``kernel_``, never modified.
    noise_variance : float, default=1e-10
        ``sigma^2`` of the Gaussian likelihood: a parameter of the model, added to the
        diagonal of ``K`` and (only) to the variance of a *noisy* prediction. It is not a
        jitter: if ``K + sigma^2 I`` still cannot be factorised, a separate jitter is added,
        reported in ``jitter_`` and by a ``NumericalWarning``.
    noise_variance_bounds : (float, float) or "fixed", default="fixed"
        Bounds of ``noise_variance`` when it is learned with the kernel's hyperparameters.
    mean : None, "constant" or callable, default=None
        Prior mean ``m``: zero; the sample mean of ``y`` (per output); or a function
        ``m(X)`` returning shape (n_samples,) or (n_samples, n_outputs).
    normalize_y : bool, default=False
        Divide the residual ``y - m(X)`` by its standard deviation (per output) before the
        fit, and subtract its mean first when ``mean`` is None; predictions are transformed
        back. The kernel then models the scaled residual.
    optimizer : "lbfgs" or None, default="lbfgs"
        L-BFGS-B on the log marginal likelihood, each start stopped by SciPy's default tests
        (projected gradient at most ``1e-5``, or an iteration that raises the LML by at most
        ``1e7 eps`` relative to ``max(|LML|, 1)``; scikit-learn's rule too). ``None`` keeps
        the hyperparameters as given.
    n_restarts : int, default=0
        Additional L-BFGS-B starts, at scrambled Sobol points of the log-space box of bounds.
    random_state : int, Generator, RandomState or None
        Seeds the restarts' Sobol points.

    Attributes
    ----------
    kernel_ : Kernel
        The kernel with the learned hyperparameters.
    noise_variance_ : float
        The learned (or given) noise variance, on the scale of the normalised target.
    X_train_ : ndarray of shape (n_samples, n_features)
    y_train_ : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        The target as fitted (mean subtracted and, with ``normalize_y``, scaled).
    L_ : ndarray of shape (n_samples, n_samples)
        Lower Cholesky factor of ``K + noise_variance_ I (+ jitter_ I)``.
    alpha_ : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        ``(K + sigma^2 I)^{-1} y``.
    jitter_ : float
        Jitter added to the diagonal for the final factorisation (0.0 when none was needed).
    log_marginal_likelihood_value_ : float
        ``log p(y | theta)`` at the learned hyperparameters, for the target on its original
        scale (the normalisation's Jacobian is included, so values are comparable across
        ``normalize_y``).
    optimizer_trace_ : list of dict
        One entry per start: ``theta0``, ``theta``, ``log_marginal_likelihood``, ``n_iter``,
        ``converged``, ``message``, ``history``, ``projected_gradient``. Empty without an
        optimiser.
    n_features_in_ : int

    See Also
    --------
    mathlearn.gaussian_process.SparseGaussianProcessRegressor
        Inducing points for large N.
    mathlearn.kernel_ridge.KernelRidge
        The same mean without the variance.
    sklearn.gaussian_process.GaussianProcessRegressor
        scikit-learn's equivalent.

    Notes
    -----
    Cholesky route (Oxford "Advanced Topics in Statistical Machine Learning" §9, eq. 9.7;
    Stuttgart "Introduction to Machine Learning" slides 8:10-8:13 with ``lambda = sigma^2``):
    ``L = chol(K + sigma^2 I)``, ``alpha = L^T \\ (L \\ (y - m(X)))``, predictive mean
    ``m(x*) + k_*^T alpha``, ``v = L \\ k_*``, latent variance ``k(x*, x*) - v^T v``; a noisy
    target adds ``sigma^2`` (the Stuttgart notes' exercise 11.3b; the Oxford notes' GP-BO
    section uses the latent one). With a non-zero mean the data term is ``y - m(X)`` (the
    Stuttgart slides print ``y``; corrected). Negative variances are clipped at 0 only below
    the rounding bound ``gamma_{n+2} (trace(K + sigma^2 I) + k(x*, x*))`` of the Cholesky
    factorisation; larger ones are clipped with a ``NumericalWarning``.

    Log marginal likelihood (Oxford notes eq. 9.9) and its gradient (eq. 9.10):
    ``log p(y) = -1/2 y^T alpha - sum(log diag L) - n/2 log 2 pi`` and
    ``d log p / d theta_j = 1/2 tr((alpha alpha^T - K^{-1}) dK/dtheta_j)``; for the log
    noise variance ``dK/dtheta = sigma^2 I``. Outputs of a multi-output ``y`` share the kernel
    and their log likelihoods add.

    Kernel Bayesian ridge (Stuttgart slide 8:10; prior ``N(0, sigma^2 / lambda)`` on the
    weights of the feature map of ``k``) is this regressor with kernel
    ``ConstantKernel(sigma^2 / lambda) * k`` and ``noise_variance=sigma^2``: its mean
    ``kappa (K + lambda I)^{-1} y`` is kernel ridge regression with ``alpha = lambda``
    (:class:`mathlearn.kernel_ridge.KernelRidge`), and ``lambda = sigma^2`` is the plain GP.

    Complexity: each evaluation of the log marginal likelihood and its gradient costs
    ``O(N^2 D)`` for the kernel, ``O(N^3)`` for the Cholesky factor and ``K^{-1}``, and
    ``O(P N^2)`` for the traces of ``P`` hyperparameters; memory ``O(P N^2)`` (the kernel's
    gradient, ``P`` matrices ``N x N``). The optimiser makes a few dozen evaluations per start
    (``1 + n_restarts`` starts). Prediction of ``M`` points: ``O(M N D)`` for the kernel
    rows, ``O(M N)`` for the mean, ``O(M N^2)`` for the variances.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.gaussian_process import GaussianProcessRegressor
    >>> from mathlearn.kernels import RBF
    >>> gp = GaussianProcessRegressor(RBF(1.0, "fixed"), noise_variance=0.1, optimizer=None)
    >>> gp = gp.fit(np.array([[0.0], [1.0]]), np.array([1.0, -1.0]))
    >>> mean, std = gp.predict(np.array([[0.5], [2.0]]), return_std=True)
    >>> np.round(mean, 6), np.round(std**2, 6)
    (array([ 0.      , -0.954863]), array([0.08727 , 0.613784]))
    >>> round(gp.log_marginal_likelihood_value_, 6)
    -3.778429
    """

    # L-BFGS-B's relative-decrease test (None: the gradient test alone; see maximize_lml).
    _lml_ftol: float | None = LML_FTOL

    _parameter_constraints = {
        "kernel": [Kernel, None],
        "noise_variance": [Interval(Real, 0, None, closed="neither")],
        "noise_variance_bounds": [tuple, list, StrOptions({"fixed"})],
        "mean": [StrOptions({"constant"}), callable, None],
        "normalize_y": ["boolean"],
        "optimizer": [StrOptions({"lbfgs"}), None],
        "n_restarts": [Interval(Integral, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        kernel: Kernel | None = None,
        *,
        noise_variance: float = 1e-10,
        noise_variance_bounds="fixed",
        mean=None,
        normalize_y: bool = False,
        optimizer: str | None = "lbfgs",
        n_restarts: int = 0,
        random_state=None,
    ):
        self.kernel = kernel
        self.noise_variance = noise_variance
        self.noise_variance_bounds = noise_variance_bounds
        self.mean = mean
        self.normalize_y = normalize_y
        self.optimizer = optimizer
        self.n_restarts = n_restarts
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def _noise_free(self) -> bool:
        b = self.noise_variance_bounds
        return not (isinstance(b, str) and b == "fixed")

    def _noise_log_bounds(self) -> np.ndarray:
        b = self.noise_variance_bounds
        try:
            lo, hi = (float(v) for v in b)
        except (TypeError, ValueError):
            raise ValueError(
                f"noise_variance_bounds must be 'fixed' or a pair (low, high); got {b!r}."
            ) from None
        if not (np.isfinite(lo) and np.isfinite(hi) and 0 < lo <= hi):
            raise ValueError(
                f"noise_variance_bounds must satisfy 0 < low <= high < inf; got {b!r}."
            )
        return np.log([[lo, hi]])

    def _split_theta(self, theta):
        n = self.kernel_.n_dims
        log_noise = theta[n] if theta.shape[0] > n else np.log(self.noise_variance_)
        return theta[:n], float(log_noise)

    @property
    def theta_(self) -> np.ndarray:
        """Learned hyperparameters in log space: the kernel's ``theta``, then the log noise
        variance if it is learned."""
        check_is_fitted(self)
        extra = [np.log(self.noise_variance_)] if self._noise_free() else []
        return np.concatenate([self.kernel_.theta, extra])

    def _lml(self, theta, eval_gradient, kernel=None):
        k_theta, log_noise = self._split_theta(theta)
        if kernel is None:
            # One private working copy per fit, re-parameterised in place (no clone per call).
            kernel = getattr(self, "_kernel_work", None)
            if kernel is None:
                kernel = self._kernel_work = self.kernel_.clone_with_theta(self.kernel_.theta)
        kernel.theta = k_theta
        noise = np.exp(log_noise)
        X, y = self.X_train_, self.y_train_
        n = X.shape[0]
        if eval_gradient:
            K, dK = kernel(X, eval_gradient=True)
        else:
            K = kernel(X)
        K[np.diag_indices_from(K)] += noise
        L, _ = cholesky_with_jitter(K, "K + noise_variance * I")
        Y = y if y.ndim == 2 else y[:, None]
        alpha = sla.cho_solve((L, True), Y, check_finite=False)
        n_out = Y.shape[1]
        lml = (
            -0.5 * float(np.sum(Y * alpha))
            - n_out * float(np.sum(np.log(np.diag(L))))
            - 0.5 * n * n_out * _LOG_2PI
        )
        if not eval_gradient:
            return lml
        G = np.moveaxis(dK, -1, 0)  # the kernel's contiguous (n_theta, N, N) buffer
        n_t = G.shape[0]
        if n < _POTRI_MIN_N:
            # Small N: W = alpha alpha^T - n_out K^{-1} in full (two triangular solves for
            # K^{-1}); dlml_j = 1/2 <W, dK_j> (Frobenius).
            W = alpha @ alpha.T - n_out * sla.cho_solve((L, True), np.eye(n), check_finite=False)
            grad_k = 0.5 * (G.reshape(n_t, -1) @ W.ravel()) if n_t else np.empty(0)
            tr_w = float(np.trace(W))
        else:
            # dlml_j = 1/2 (sum_o alpha_o^T dK_j alpha_o - n_out tr(K^{-1} dK_j)). dK_j and
            # K^{-1} are symmetric: with T the lower triangle of K^{-1}, tr(K^{-1} dK_j) is
            # 2 <T, dK_j> - sum_i T_ii (dK_j)_ii, so K^{-1} is formed once and only in half.
            T = _lower_inverse_from_cholesky(L)
            t_diag = np.diagonal(T)
            if n_t:
                # The Fortran-ordered T ravels as T^T in C order; <T^T, dK_j> = <T, dK_j>.
                trace = 2.0 * (G.reshape(n_t, -1) @ T.ravel(order="K"))
                trace -= np.diagonal(G, axis1=1, axis2=2) @ t_diag
                data = np.einsum(
                    "jio,io->j", (G.reshape(n_t * n, n) @ alpha).reshape(n_t, n, -1), alpha
                )
                grad_k = 0.5 * (data - n_out * trace)
            else:
                grad_k = np.empty(0)
            tr_w = float(np.sum(alpha * alpha)) - n_out * float(np.sum(t_diag))
        grad = [grad_k]
        if theta.shape[0] > kernel.n_dims:
            # dK/dlog sigma^2 = sigma^2 I: 1/2 sigma^2 tr(W).
            grad.append([0.5 * noise * tr_w])
        return lml, np.concatenate(grad)

    def log_marginal_likelihood(self, theta=None, eval_gradient: bool = False):
        """Log marginal likelihood of the fitted target at hyperparameters ``theta``.

        Parameters
        ----------
        theta : array-like of shape (n_hyperparameters,) or None
            Log-space hyperparameters (the kernel's ``theta``, then the log noise variance if
            ``noise_variance_bounds`` is not "fixed"). ``None``: ``theta_``.
        eval_gradient : bool, default=False
            Also return the gradient with respect to ``theta``.

        Returns
        -------
        log_likelihood : float
            On the scale the target was fitted (normalised with ``normalize_y``).
        gradient : ndarray of shape (n_hyperparameters,), only with ``eval_gradient``
        """
        check_is_fitted(self)
        theta = self.theta_ if theta is None else np.asarray(theta, dtype=float).ravel()
        if theta.shape[0] != self.theta_.shape[0]:
            raise ValueError(
                f"theta has {theta.shape[0]} entries; {self.theta_.shape[0]} expected."
            )
        return self._lml(theta, eval_gradient)

    def _mean_values(self, X, n_out):
        if callable(self.mean):
            m = np.asarray(self.mean(X), dtype=float)
            if m.ndim == 1:
                m = m[:, None]
            if m.shape[0] != X.shape[0] or m.shape[1] not in (1, n_out):
                raise ValueError(
                    f"mean(X) must have shape ({X.shape[0]},) or ({X.shape[0]}, {n_out}); got "
                    f"{m.shape}."
                )
            if not np.all(np.isfinite(m)):
                raise ValueError("mean(X) returned NaN or infinity.")
            return np.broadcast_to(m, (X.shape[0], n_out))
        return np.broadcast_to(self._y_offset, (X.shape[0], n_out))

    @_fit_context
    def fit(self, X, y):
        """Condition the GP on ``(X, y)``, learning the hyperparameters unless fixed.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, multi_output=True, y_numeric=True, dtype=np.float64)
        self._multi = y.ndim == 2
        Y = y if self._multi else y[:, None]
        n_out = Y.shape[1]
        self.kernel_ = (
            ConstantKernel(1.0) * RBF(1.0)
            if self.kernel is None
            else self.kernel.clone_with_theta(self.kernel.theta)
        )
        self.kernel_.bounds  # noqa: B018 - validates the kernel's bounds early
        self._kernel_work = self.kernel_.clone_with_theta(self.kernel_.theta)
        self.noise_variance_ = float(self.noise_variance)

        # Mean function, then scaling.
        if self.mean == "constant" or (self.mean is None and self.normalize_y):
            self._y_offset = Y.mean(axis=0)
        else:
            self._y_offset = np.zeros(n_out)
        R = Y - self._mean_values(X, n_out)
        if self.normalize_y:
            scale = R.std(axis=0)
            self._y_scale = np.where(scale > 0, scale, 1.0)
        else:
            self._y_scale = np.ones(n_out)
        R = R / self._y_scale
        self.X_train_ = X
        self.y_train_ = R if self._multi else R[:, 0]

        self.optimizer_trace_ = []
        if self.optimizer is not None:
            bounds = self.kernel_.bounds
            names = [
                h.name
                for h in self.kernel_.hyperparameters
                if not h.fixed
                for _ in range(h.n_elements)
            ]
            if self._noise_free():
                bounds = np.vstack([bounds, self._noise_log_bounds()])
                names.append("noise_variance")
            if bounds.shape[0] == 0:
                raise ValueError(
                    "The kernel has no free hyperparameters (its theta is empty) and the noise "
                    "variance is fixed, so there is nothing to optimise; pass optimizer=None."
                )
            check_log_bounds(bounds, names)
            theta0 = np.concatenate(
                [self.kernel_.theta, [np.log(self.noise_variance_)] if self._noise_free() else []]
            )
            rng = check_random_state(self.random_state)
            theta, _, self.optimizer_trace_ = maximize_lml(
                lambda t: self._lml(t, True),
                theta0,
                bounds,
                self.n_restarts,
                rng,
                type(self).__name__,
                ftol=self._lml_ftol,
            )
            k_theta, log_noise = self._split_theta(theta)
            self.kernel_ = self.kernel_.clone_with_theta(k_theta)
            self.noise_variance_ = float(np.exp(log_noise))

        K = self.kernel_(X)
        K[np.diag_indices_from(K)] += self.noise_variance_
        self._trace = float(np.trace(K))
        self.L_, self.jitter_ = cholesky_with_jitter(K, "K + noise_variance * I")
        if self.jitter_ > 0:
            warnings.warn(
                f"K + noise_variance * I was not numerically positive definite; a jitter of "
                f"{self.jitter_:.3g} was added to its diagonal (the noise variance "
                f"{self.noise_variance_:.3g} is unchanged).",
                NumericalWarning,
                stacklevel=2,
            )
        alpha = sla.cho_solve((self.L_, True), R, check_finite=False)
        self.alpha_ = alpha if self._multi else alpha[:, 0]
        n = X.shape[0]
        lml = (
            -0.5 * float(np.sum(R * alpha))
            - n_out * float(np.sum(np.log(np.diag(self.L_))))
            - 0.5 * n * n_out * _LOG_2PI
        )
        self.log_marginal_likelihood_value_ = float(lml - n * np.sum(np.log(self._y_scale)))
        return self

    def _latent(self, X, full_cov):
        """Mean (n, n_out) on the original scale and latent (co)variance on the fitted scale."""
        K_star = self.kernel_(X, self.X_train_)
        A = self.alpha_ if self._multi else self.alpha_[:, None]
        mean = (K_star @ A) * self._y_scale + self._mean_values(X, A.shape[1])
        V = sla.solve_triangular(self.L_, K_star.T, lower=True, check_finite=False)
        prior_var = self.kernel_.diag(X)
        bound = variance_rounding_bound(self.X_train_.shape[0], self._trace, prior_var)
        what = type(self).__name__
        if full_cov:
            cov = self.kernel_(X) - V.T @ V
            cov = 0.5 * (cov + cov.T)
            d = clip_variance(np.diag(cov).copy(), bound, what)
            cov[np.diag_indices_from(cov)] = d
            return mean, cov
        var = prior_var - np.einsum("ij,ij->j", V, V)
        return mean, clip_variance(var, bound, what)

    def predict(self, X, return_std: bool = False, return_cov: bool = False, noisy: bool = False):
        """Predictive mean, and optionally its standard deviation or covariance.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
            Also return the predictive standard deviation.
        return_cov : bool, default=False
            Also return the joint predictive covariance (not with ``return_std``).
        noisy : bool, default=False
            ``False``: the latent function ``f(x)``. ``True``: a new noisy target
            ``y = f(x) + eps``, whose variance adds ``noise_variance_``.

        Returns
        -------
        mean : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        std : ndarray of shape (n_samples,) or (n_samples, n_outputs), with ``return_std``
        cov : ndarray of shape (n_samples, n_samples) or (n_samples, n_samples, n_outputs),
            with ``return_cov``
        """
        if return_std and return_cov:
            raise ValueError("At most one of return_std and return_cov can be requested.")
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        mean, var = self._latent(X, full_cov=return_cov)
        out_mean = mean if self._multi else mean[:, 0]
        if not (return_std or return_cov):
            return out_mean
        noise = self.noise_variance_ if noisy else 0.0
        if return_cov:
            cov = var + noise * np.eye(var.shape[0])
            scale2 = self._y_scale**2
            if self._multi:
                return out_mean, cov[:, :, None] * scale2
            return out_mean, cov * scale2[0]
        std = np.sqrt(var + noise)[:, None] * self._y_scale
        return out_mean, std if self._multi else std[:, 0]

    def _predict_mean_cov(self, X, full_cov=False):
        if self._multi:
            raise ValueError(
                "predict_distribution is defined for a single output; this model was fitted "
                "on several."
            )
        X = validate_data(self, X, dtype=np.float64, reset=False)
        mean, var = self._latent(X, full_cov=full_cov)
        return mean[:, 0], var * self._y_scale[0] ** 2

    def _predictive_noise_variance(self):
        return self.noise_variance_ * self._y_scale[0] ** 2

    def sample_y(self, X, n_samples: int = 1, random_state=None):
        """Draw functions from the posterior (noise-free) and evaluate them at ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
        n_samples : int, default=1
        random_state : int, Generator, RandomState or None

        Returns
        -------
        y_samples : ndarray of shape (n_samples_X, n_samples) or
            (n_samples_X, n_outputs, n_samples)
        """
        check_is_fitted(self)
        if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be a positive integer; got {n_samples!r}.")
        rng = check_random_state(random_state)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        mean, cov = self._latent(X, full_cov=True)
        # The posterior covariance is often singular up to rounding (query points near the
        # data or near each other), where a Cholesky factor may not exist: a symmetric square
        # root with the (rounding-sized) negative eigenvalues set to zero always does.
        w, Q = np.linalg.eigh(cov)
        L = Q * np.sqrt(np.maximum(w, 0.0))
        n_out = mean.shape[1]
        z = rng.standard_normal((X.shape[0], n_out * int(n_samples)))
        draws = (L @ z).reshape(X.shape[0], n_out, int(n_samples))
        draws = draws * self._y_scale[None, :, None] + mean[:, :, None]
        return draws if self._multi else draws[:, 0, :]
