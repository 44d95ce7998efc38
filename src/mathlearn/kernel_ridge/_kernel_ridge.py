"""Kernel ridge regression through a Cholesky solve of ``(K + alpha I) a = y``."""

from __future__ import annotations

from numbers import Real
from typing import ClassVar

import numpy as np

from ..base import BaseEstimator, RegressorMixin, _fit_context, check_is_fitted
from ..kernels import KERNEL_NAMES, Kernel
from ..kernels._get_kernel import build_kernel
from ..utils._param_validation import Interval, StrOptions
from ..utils.linalg import cho_solve, cholesky
from ..utils.validation import all_finite, check_sample_weight, check_symmetric_psd, validate_data

__all__ = ["KernelRidge"]


class KernelRidge(RegressorMixin, BaseEstimator):
    r"""Kernel ridge regression.

    Minimises ``sum_i s_i (y_i - f(x_i))^2 + alpha ||f||_H^2`` over the reproducing kernel
    Hilbert space ``H`` of a kernel ``k``; by the representer theorem the minimiser is
    ``f(x) = sum_i a_i k(x_i, x)`` with ``(K + alpha I) a = y`` (unit weights ``s_i``).

    Parameters
    ----------
    alpha : float or array-like of shape (n_targets,), default=1.0
        Regulariser ``alpha >= 0`` (the notes' ``lambda``; ``sigma^2`` in the Gaussian-process
        view). An array gives one value per target column of ``y``.
    kernel : str or Kernel, default="linear"
        A name of :data:`mathlearn.kernels.KERNEL_NAMES` (``"linear"``, ``"rbf"``,
        ``"poly"``, ``"sigmoid"``, ``"matern"``, ...), a kernel object of
        :mod:`mathlearn.kernels` (copied, never mutated), or ``"precomputed"`` (``X`` is then
        the Gram matrix ``K`` in ``fit`` and ``k(X_test, X_train)`` in ``predict``).
    gamma : float or None, default=None
        ``"rbf"``: ``k = exp(-gamma ||x - y||^2)``; ``"poly"``/``"sigmoid"``: the scale of
        ``x^T y``; ``"exponential"``: ``exp(gamma x^T y)``. ``None``: ``1 / n_features`` for
        the first three (scikit-learn's rule), the kernel's default otherwise. Ignored by the
        other kernels.
    degree : float, default=3
        Degree of the ``"poly"`` kernel.
    coef0 : float, default=1
        Offset of the ``"poly"`` and ``"sigmoid"`` kernels.
    kernel_params : dict or None, default=None
        Further hyperparameters of the kernel (``{"length_scale": 2.0, "nu": 2.5}`` for
        ``"matern"``; nested names such as ``k1__length_scale`` for a kernel object).

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        The representer weights ``a`` (``a = S^{1/2} (S^{1/2} K S^{1/2} + alpha I)^{-1}
        S^{1/2} y`` with sample weights ``S``).
    X_fit_ : ndarray of shape (n_samples, n_features)
        Training inputs (the Gram matrix for ``kernel="precomputed"``).
    kernel_ : Kernel or None
        The kernel used (``None`` for ``"precomputed"``).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when ``X`` has string feature names.

    See Also
    --------
    mathlearn.linear_model.Ridge : The same estimator with the linear kernel and explicit
        features (and an unpenalised intercept).
    mathlearn.kernel_approximation.Nystroem : Low-rank features for large ``N``.
    mathlearn.kernel_approximation.RandomFourierFeatures : Random features of the RBF kernel.
    sklearn.kernel_ridge.KernelRidge : The peer, with the same parameters.

    Notes
    -----
    The objective ``sum_i (y_i - f(x_i))^2 + lambda ||f||_H^2`` has, by the representer
    theorem, a minimiser ``f = sum_i a_i k(x_i, .)``; with ``||f||_H^2 = a^T K a`` it becomes
    ``||y - K a||^2 + lambda a^T K a``, whose stationary point is

    .. math:: a = (K + \lambda I)^{-1} y, \qquad f(x_*) = k_*^T a

    (Stuttgart "Introduction to Machine Learning", §5 Kernelization, 5:1-5:3; Oxford
    "Advanced Topics in Statistical Machine Learning", §9.2.3 "KRR vs GPR"). With
    ``lambda = sigma^2`` this is the posterior mean of a Gaussian process with covariance
    ``k`` and noise variance ``sigma^2``, ``k_*^T (K + sigma^2 I)^{-1} y`` (same section).
    With the linear kernel, ``(X X^T + lambda I)^{-1}`` and the push-through identity
    ``X^T (X X^T + lambda I)^{-1} = (X^T X + lambda I)^{-1} X^T`` make the prediction equal to
    ridge regression without intercept.

    Sample weights ``s_i`` weight the squared residuals; the stationary point solves
    ``(S K + lambda I) a = S y``, computed as ``a = S^{1/2} c`` with the symmetric system
    ``(S^{1/2} K S^{1/2} + lambda I) c = S^{1/2} y``. Every system is solved through a
    Cholesky factor (never an inverse); if ``K + lambda I`` is numerically singular
    (``lambda = 0`` with a rank-deficient ``K``), the smallest jitter that makes it factorise is
    added to its diagonal and a ``NumericalWarning`` names it. Cost: ``O(N^2 D)`` for the Gram
    matrix and ``O(N^3 / 3)`` for the factorisation, once per distinct ``alpha``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernel_ridge import KernelRidge
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> y = np.array([0.0, 1.0, 4.0, 9.0])
    >>> krr = KernelRidge(alpha=0.1, kernel="poly", degree=2, gamma=1.0, coef0=1.0).fit(X, y)
    >>> np.round(krr.predict(np.array([[1.5]])), 4)
    array([2.2775])
    """

    _parameter_constraints: ClassVar[dict] = {
        "alpha": [Interval(Real, 0, None, closed="left"), "array-like"],
        "kernel": [StrOptions({*KERNEL_NAMES, "precomputed"}), Kernel],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "degree": [Interval(Real, 0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "kernel_params": [dict, None],
    }

    def __init__(
        self,
        alpha: float | np.ndarray = 1.0,
        *,
        kernel: str | Kernel = "linear",
        gamma: float | None = None,
        degree: float = 3,
        coef0: float = 1,
        kernel_params: dict | None = None,
    ):
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = isinstance(self.kernel, str) and self.kernel == "precomputed"
        tags.target_tags.multi_output = True
        return tags

    def _gram(self, X, Y=None):
        if self.kernel_ is None:
            return np.array(X, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            K = self.kernel_(X, Y)
        if not all_finite(K):
            raise ValueError("the kernel matrix is not finite (overflow): rescale X.")
        return K

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit kernel ridge regression.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training inputs, or the ``(n_samples, n_samples)`` Gram matrix for
            ``kernel="precomputed"`` (which must be symmetric positive semi-definite).
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : float or array-like of shape (n_samples,), optional
            Non-negative weights of the squared residuals.

        Returns
        -------
        self : KernelRidge

        Raises
        ------
        ValueError
            NaN/inf in ``X``, ``y`` or the weights; a non-square, asymmetric or indefinite
            precomputed kernel; ``alpha`` of the wrong length or negative; a kernel matrix
            that is not positive definite even after ``alpha`` and jitter (a sigmoid kernel,
            say).
        """
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=True, y_numeric=True)
        n = X.shape[0]
        self.kernel_ = build_kernel(
            self.kernel, self.gamma, self.degree, self.coef0, self.kernel_params, X.shape[1]
        )
        if self.kernel_ is None:
            check_symmetric_psd(X, "the precomputed kernel matrix", strict=False)
        K = self._gram(X)
        sw = None if sample_weight is None else check_sample_weight(sample_weight, X)

        ravel = y.ndim == 1
        Y = np.asarray(y, dtype=float).reshape(n, -1)
        alpha = np.atleast_1d(np.asarray(self.alpha, dtype=float))
        if alpha.ndim != 1 or alpha.size not in (1, Y.shape[1]):
            raise ValueError(
                f"alpha must be a number or have one entry per target ({Y.shape[1]}); got "
                f"shape {alpha.shape}."
            )
        if not np.all(np.isfinite(alpha)) or np.any(alpha < 0):
            raise ValueError(f"alpha must be finite and >= 0; got {self.alpha!r}.")

        if sw is not None:
            root = np.sqrt(sw)
            K = K * root[:, None]
            K *= root[None, :]
            Y = Y * root[:, None]
        A = np.empty_like(Y)
        diag = K.flat[:: n + 1].copy()
        if alpha.size == 1:
            groups = [(float(alpha[0]), slice(None))]
        else:
            groups = [(float(a), alpha == a) for a in np.unique(alpha)]
        for a, cols in groups:
            K.flat[:: n + 1] = diag + a
            L = self._factor(K, a)
            A[:, cols] = cho_solve(L, Y[:, cols])
        K.flat[:: n + 1] = diag
        if sw is not None:
            A *= root[:, None]
        self.dual_coef_ = A.ravel() if ravel else A
        self.X_fit_ = X.copy()  # the caller's array may change after fit
        return self

    @staticmethod
    def _factor(K, a):
        try:
            return cholesky(K, jitter="auto", name=f"kernel matrix + alpha I (alpha={a:g})")
        except np.linalg.LinAlgError:
            raise ValueError(
                f"the kernel matrix plus alpha I (alpha={a:g}) is not positive definite, even "
                "with jitter: the kernel is not positive semi-definite (e.g. sigmoid), or "
                "alpha is too small for its conditioning; increase alpha."
            ) from None

    def predict(self, X):
        """Predict ``f(x) = sum_i a_i k(x_i, x)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Query points, or ``k(X_test, X_train)`` of shape (n_samples, n_samples_fit) for
            ``kernel="precomputed"``.

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_targets)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._gram(X, self.X_fit_) @ self.dual_coef_
