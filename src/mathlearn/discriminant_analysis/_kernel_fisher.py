"""Kernel Fisher discriminant: Fisher's criterion in the feature space of a kernel."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.linalg as sla

from ..base import (
    BaseClassifier,
    ComponentNamesMixin,
    TransformerMixin,
    _fit_context,
    check_is_fitted,
)
from ..kernels import KERNEL_NAMES, Kernel
from ..kernels._get_kernel import build_kernel
from ..utils._param_validation import Interval, StrOptions
from ..utils.linalg import cholesky
from ..utils.validation import all_finite, validate_data

__all__ = ["KernelFisherDiscriminant"]


class KernelFisherDiscriminant(ComponentNamesMixin, TransformerMixin, BaseClassifier):
    r"""Kernel Fisher discriminant analysis (two- and multi-class).

    Fisher's linear discriminant in the feature space of a kernel: directions ``w = sum_i
    a_i phi(x_i)`` that maximise between-class over (regularised) within-class scatter,
    computed from the Gram matrix alone. Classes are predicted by a Gaussian model of the
    projections with a shared covariance (the regularised within-class scatter, ``I / N`` in
    these coordinates) and the class proportions as priors.

    Parameters
    ----------
    n_components : int or None, default=None
        Number of discriminant directions, at most ``n_classes - 1`` (``None``: all).
    kernel : str or Kernel, default="rbf"
        A name of :data:`mathlearn.kernels.KERNEL_NAMES` or a kernel object.
    gamma : float or None, default=None
        ``"rbf"``: ``exp(-gamma ||x - y||^2)``; ``None``: ``1 / n_features``.
    degree : float, default=3
    coef0 : float, default=1
    kernel_params : dict or None, default=None
    reg : float, default=1e-3
        Regulariser ``mu = reg * tr(N_w) / N`` added to the within-class matrix ``N_w``
        (which is singular: ``N`` coefficients, at most ``N - n_classes`` within-class
        degrees of freedom). Must be > 0.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    dual_coef_ : ndarray of shape (n_samples, n_components_)
        Expansion coefficients ``a`` of the directions; ``transform(x) = k(x, X) a``.
    eigenvalues_ : ndarray of shape (n_components_,)
        Fisher ratios ``a^T M a / a^T (N_w + mu I) a`` of the directions, decreasing.
    means_ : ndarray of shape (n_classes, n_components_)
        Projected class means.
    priors_ : ndarray of shape (n_classes,)
        Class proportions.
    X_fit_ : ndarray of shape (n_samples, n_features)
    kernel_ : Kernel
    n_components_ : int
    n_features_in_ : int

    See Also
    --------
    FisherLDA : The linear discriminant.
    mathlearn.decomposition.KernelPCA : Kernel PCA (unsupervised).

    Notes
    -----
    Imperial "Mathematics for Inference and Machine Learning" poses kernel LDA as a tutorial
    exercise (after Fisher LDA and kernel PCA) without formulas; this is the standard answer
    (Mika et al., "Fisher discriminant analysis with kernels", 1999). With ``w = sum_i a_i
    phi(x_i)``, class ``c`` of ``N_c`` points, ``(m_c)_i = (1/N_c) sum_{j in c} k(x_i, x_j)``
    and ``m`` the mean over all points,

    .. math::

        M = \sum_c N_c (m_c - m)(m_c - m)^\top, \qquad
        N_w = \sum_c K_c (I - \tfrac{1}{N_c}\mathbf 1\mathbf 1^\top) K_c^\top,

    and Fisher's ratio ``w^T S_B w / w^T S_W w`` becomes ``a^T M a / a^T N_w a``. It is
    maximised over ``a`` by the top generalised eigenvectors of ``M a = lambda (N_w + mu I)
    a``, solved here by a Cholesky factor ``N_w + mu I = L L^T`` and the SVD of ``L^{-1}
    B`` (``M = B B^T``, rank ``n_classes - 1``), so ``a^T (N_w + mu I) a = I``. For two
    classes this is ``a ∝ (N_w + mu I)^{-1} (m_1 - m_2)``.

    In these coordinates the regularised within-class covariance of the projections is
    ``A^T (N_w + mu I) A / N = I / N``, so the class scores are ``log p(z, c) = log pi_c -
    (N / 2) ||z - nu_c||^2`` up to a constant shared by the classes (``nu_c`` the projected
    means). Cost: ``O(N^2 D)`` for the Gram matrix, ``O(N^3)`` for ``N_w`` and its Cholesky
    factor; memory ``O(N^2)``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.discriminant_analysis import KernelFisherDiscriminant
    >>> t = np.linspace(0, 2 * np.pi, 20, endpoint=False)
    >>> X = np.vstack([np.c_[np.cos(t), np.sin(t)], 3 * np.c_[np.cos(t), np.sin(t)]])
    >>> y = np.repeat([0, 1], 20)  # two circles: no linear discriminant separates them
    >>> kfd = KernelFisherDiscriminant(kernel="rbf", gamma=0.5).fit(X, y)
    >>> float(kfd.score(X, y))
    1.0
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "kernel": [StrOptions(set(KERNEL_NAMES)), Kernel],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "degree": [Interval(Real, 0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "kernel_params": [dict, None],
        "reg": [Interval(Real, 0, None, closed="neither")],
    }

    _n_features_out_attr = "eigenvalues_"

    def __init__(
        self,
        n_components: int | None = None,
        *,
        kernel: str | Kernel = "rbf",
        gamma: float | None = None,
        degree: float = 3,
        coef0: float = 1,
        kernel_params: dict | None = None,
        reg: float = 1e-3,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.reg = reg

    @_fit_context
    def fit(self, X, y):
        """Fit the discriminant directions and the projected class means.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : KernelFisherDiscriminant

        Raises
        ------
        ValueError
            NaN/inf, fewer than two classes, ``n_components >= n_classes``, a kernel that
            overflows.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        y_idx = self._encode_labels(y)
        C = self.classes_.size
        k = C - 1 if self.n_components is None else self.n_components
        if k > C - 1:
            raise ValueError(
                f"n_components = {k} must be <= n_classes - 1 = {C - 1} (the rank of the "
                "between-class matrix)."
            )
        self.kernel_ = build_kernel(
            self.kernel, self.gamma, self.degree, self.coef0, self.kernel_params, X.shape[1]
        )
        with np.errstate(over="ignore", invalid="ignore"):
            K = self.kernel_(X)
        if not all_finite(K):
            raise ValueError("the kernel matrix is not finite (overflow): rescale X.")
        N = X.shape[0]
        counts = np.bincount(y_idx, minlength=C).astype(float)
        onehot = np.zeros((N, C))
        onehot[np.arange(N), y_idx] = 1.0
        Mc = (K @ onehot) / counts  # columns m_c
        B = (Mc - K.mean(axis=1, keepdims=True)) * np.sqrt(counts)
        Kc = K - Mc[:, y_idx]  # K_c (I - 11^T / N_c), column by column
        Nw = Kc @ Kc.T
        mu = float(self.reg) * max(np.trace(Nw) / N, np.finfo(float).tiny)
        Nw[np.diag_indices(N)] += mu
        L = cholesky(Nw, name="regularised within-class matrix N_w + mu I")
        U, s, _ = sla.svd(
            sla.solve_triangular(L, B, lower=True, check_finite=False), full_matrices=False
        )
        A = sla.solve_triangular(L.T, U[:, :k], lower=False, check_finite=False)
        # A fixed sign: the largest coefficient of each direction is positive.
        A *= np.sign(A[np.argmax(np.abs(A), axis=0), np.arange(k)])
        self.dual_coef_ = A
        self.eigenvalues_ = s[:k] ** 2
        self.n_components_ = k
        self.X_fit_ = X.copy()
        self.means_ = (onehot.T @ (K @ A)) / counts[:, None]
        self.priors_ = counts / N
        return self

    def transform(self, X):
        """Project onto the discriminant directions: ``k(X, X_fit) a``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.kernel_(X, self.X_fit_) @ self.dual_coef_

    def _joint_log_likelihood(self, X):
        """``log pi_c - (N / 2) ||z - nu_c||^2`` with ``z`` the projection of ``x``."""
        Z = self.kernel_(X, self.X_fit_) @ self.dual_coef_
        d = ((Z[:, None, :] - self.means_[None, :, :]) ** 2).sum(axis=2)
        return np.log(self.priors_) - 0.5 * self.X_fit_.shape[0] * d
