"""Standardisation and whitening.

Standardisation (Imperial "Mathematics for Machine Learning", the practical PCA recipe;
Stuttgart "Introduction to Machine Learning" §2, feature scaling) maps each feature to mean 0
and variance 1: ``z_d = (x_d - mu_d) / s_d``.

Whitening (PRML §12.1.3; Imperial "Mathematics for Inference and Machine Learning" §2.1.4,
Fig. 2.1) maps the data to identity sample covariance: ``z = W (x - mu)`` with
``W S W^T = I`` for the sample covariance ``S = Xc^T Xc / (N - 1)``. ``W`` is determined up
to a rotation; three choices are standard:

* ``"pca"``: ``W = Lambda^{-1/2} U^T`` (rotate onto the principal axes, then scale), with
  ``S = U Lambda U^T``; the same as PCA with ``whiten=True`` keeping every component;
* ``"zca"`` (Mahalanobis): ``W = U Lambda^{-1/2} U^T = S^{-1/2}``, the symmetric choice, which
  of all whitening transforms changes the data least (it minimises ``E ||z - Xc||^2``; Kessy,
  Lewis and Strimmer 2018);
* ``"cholesky"``: ``W = L^{-1}`` with ``S = L L^T``, lower triangular (the first feature is
  only scaled, the second made uncorrelated with the first, and so on).

``U`` and ``Lambda`` come from the SVD of the centred data, ``Xc = V Sigma U^T``, ``Lambda =
Sigma^2 / (N - 1)``, and ``L`` from its QR factorisation, ``Xc = Q R``, ``L = R^T / sqrt(N -
1)`` (signs fixed so that ``diag L > 0``): the covariance matrix is never formed, so its
condition number is not squared. ``eps`` adds a ridge to the covariance (``S + eps I``,
which is then formed), bounding the amplification of directions of tiny variance.
"""

from __future__ import annotations

from numbers import Real
from typing import ClassVar

import numpy as np
import scipy.linalg as sla
from sklearn.base import OneToOneFeatureMixin

from ..base import BaseEstimator, TransformerMixin, _fit_context, check_is_fitted
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import validate_data

__all__ = ["StandardScaler", "Whitening"]


def _mean_and_scale(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column means and standard deviations (``ddof = 0``), without overflow or cancellation.

    Two passes (mean, then the spread of the centred values, corrected by the mean of the
    centred values); each column is divided by its largest centred magnitude before squaring,
    so data near ``1e+-300`` keep every digit.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        mean = np.mean(X, axis=0)
        if not np.all(np.isfinite(mean)):  # the sum overflowed: average scaled values
            m = np.max(np.abs(X), axis=0)
            m = np.where(m > 0, m, 1.0)
            mean = np.mean(X / m, axis=0) * m
    C = X - mean
    c = np.max(np.abs(C), axis=0)
    c_safe = np.where(c > 0, c, 1.0)
    U = C / c_safe
    u_mean = U.mean(axis=0)
    var_u = np.maximum(np.mean(U * U, axis=0) - u_mean * u_mean, 0.0)
    mean = mean + u_mean * c_safe  # the correction term of the two-pass algorithm
    return mean, np.sqrt(var_u) * c_safe


class StandardScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Standardise features to zero mean and unit variance.

    Parameters
    ----------
    with_mean : bool, default=True
        Subtract the mean.
    with_std : bool, default=True
        Divide by the standard deviation (``ddof = 0``); a constant feature is left with
        scale 1.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Feature means (zeros when ``with_mean=False``).
    scale_ : ndarray of shape (n_features,)
        Feature standard deviations (ones when ``with_std=False``; 1 for a constant feature).
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    Whitening : also removes the correlations.

    Notes
    -----
    The variance is computed after dividing each centred column by its largest magnitude, so
    data of magnitude ``1e300`` (whose squares overflow) or ``1e-300`` (whose squares
    underflow), and data far from the origin, keep full accuracy.

    Complexity: for ``N`` samples and ``D`` features ``fit`` costs ``O(N D)`` time (a few
    passes over the columns) and ``O(N D)`` memory beyond ``X``: the centred copy, the copy
    divided by each column's largest magnitude and one temporary for its squares; the fitted
    state is ``2 D`` numbers. ``transform`` and ``inverse_transform`` cost ``O(N D)`` time and
    return a new ``N x D`` array.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.preprocessing import StandardScaler
    >>> X = np.array([[1.0, 10.0], [3.0, 10.0], [5.0, 10.0]])
    >>> StandardScaler().fit_transform(X)[:, 0].round(6).tolist()
    [-1.224745, 0.0, 1.224745]
    """

    _parameter_constraints: ClassVar[dict] = {
        "with_mean": ["boolean"],
        "with_std": ["boolean"],
    }

    def __init__(self, *, with_mean: bool = True, with_std: bool = True):
        self.with_mean = with_mean
        self.with_std = with_std

    @_fit_context
    def fit(self, X, y=None):
        """Compute the means and scales of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.

        Returns
        -------
        self : StandardScaler
        """
        X = validate_data(self, X, dtype=np.float64)
        mean, scale = _mean_and_scale(X)
        self.mean_ = mean if self.with_mean else np.zeros(X.shape[1])
        self.scale_ = np.where(scale > 0, scale, 1.0) if self.with_std else np.ones(X.shape[1])
        return self

    def transform(self, X):
        """``(X - mean_) / scale_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return (X - self.mean_) / self.scale_

    def inverse_transform(self, X):
        """``X * scale_ + mean_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Standardised data.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X * self.scale_ + self.mean_


class Whitening(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Whitening: a linear map to identity sample covariance (PCA, ZCA or Cholesky).

    Parameters
    ----------
    method : {"zca", "pca", "cholesky"}, default="zca"
        The whitening matrix ``W`` (see Notes).
    eps : float, default=0.0
        Added to the covariance's eigenvalues (to its diagonal for ``"cholesky"``) before
        inverting; needed when the covariance is singular (fewer samples than features,
        constant or collinear features).

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        The sample mean ``mu``.
    whitening_matrix_ : ndarray of shape (n_features, n_features)
        ``W``; ``transform`` returns ``(X - mu) W^T``.
    dewhitening_matrix_ : ndarray of shape (n_features, n_features)
        ``W^{-1}``; ``inverse_transform`` returns ``Z W^{-T} + mu``.
    explained_variance_ : ndarray of shape (n_features,)
        The covariance's eigenvalues ``Lambda`` in decreasing order (before ``eps``); ``inf``
        where a variance exceeds the float64 range (data of magnitude above about 1e154),
        which does not affect ``W``.
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    StandardScaler : per-feature scaling only.
    mathlearn.decomposition.PCA : ``whiten=True`` with fewer components.

    Notes
    -----
    With ``S = U Lambda U^T`` the sample covariance (``N - 1`` in the denominator): ``"pca"``
    is ``W = Lambda^{-1/2} U^T``, ``"zca"`` is ``W = S^{-1/2}`` and ``"cholesky"`` is
    ``W = L^{-1}`` for ``S = L L^T``. All three satisfy ``W S W^T = I``; they differ by a
    rotation. ``U`` and ``Lambda`` come from the SVD of the centred data and ``L`` from its
    QR factorisation (PRML §12.1.3).

    Complexity: for ``N`` samples and ``D`` features ``fit`` costs ``O(N D^2 + D^3)`` time:
    ``O(N D)`` for the mean and scales; ``O(N D min(N, D))`` for the singular values of the
    scaled, centred data (the rank test); with ``eps = 0`` (which needs ``N > D``) the thin
    SVD (``"pca"``, ``"zca"``) or the QR factor and the singular values (``"cholesky"``) of
    the centred data, ``O(N D^2)``; with ``eps > 0`` the covariance ``O(N D^2)`` and its
    eigendecomposition ``O(D^3)``; and ``O(D^3)`` for the triangular inverse or the ZCA
    rotation. Memory ``O(N D + D^2)``: a few ``N x D`` arrays (the centred data, its scaled
    copy, the SVD's ``N x D`` left factor) and the ``D x D`` matrices. ``transform`` and
    ``inverse_transform`` cost ``O(N D^2)`` time and return a new ``N x D`` array.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.preprocessing import Whitening
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2)) @ [[2.0, 0.0], [1.5, 0.5]]
    >>> Z = Whitening(method="zca").fit_transform(X)
    >>> bool(np.allclose(np.cov(Z.T), np.eye(2), atol=1e-12))
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "method": [StrOptions({"zca", "pca", "cholesky"})],
        "eps": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, *, method: str = "zca", eps: float = 0.0):
        self.method = method
        self.eps = eps

    @_fit_context
    def fit(self, X, y=None):
        """Estimate the mean and the whitening matrix from ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, at least 2 samples.
        y : None
            Ignored.

        Returns
        -------
        self : Whitening

        Raises
        ------
        ValueError
            Fewer than 2 samples, or a singular covariance with ``eps = 0``.
        """
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        n, d = X.shape
        mean, scale = _mean_and_scale(X)
        Xs = X - mean
        # The rank test is scale-invariant: it looks at the data in units of each feature's
        # spread (the correlation structure), where no feature's size can hide another's.
        s = np.where(scale > 0, scale, 1.0)
        sig_u = np.linalg.svd(Xs / s, compute_uv=False)
        tol = max(n, d) * np.finfo(float).eps * sig_u[0]
        rank = int(np.sum(sig_u > tol)) if np.any(scale > 0) else 0
        if rank < d and self.eps == 0:
            raise ValueError(
                f"the sample covariance is singular (rank {rank} < {d} features: fewer samples "
                "than features, or constant or collinear features); set eps > 0 to whiten "
                "with a regularised covariance."
            )
        root = np.sqrt(n - 1.0)
        with np.errstate(over="ignore"):
            if self.eps > 0:
                S = Xs.T @ Xs / (n - 1) + self.eps * np.eye(d)
                if not np.all(np.isfinite(S)):
                    raise ValueError(
                        "the covariance overflows float64 on these data; rescale the features "
                        "(StandardScaler) before whitening with eps > 0."
                    )
                lam, U = np.linalg.eigh(S)
                lam, U = lam[::-1], U[:, ::-1]
                self.explained_variance_ = np.maximum(lam - self.eps, 0.0)
                if self.method == "cholesky":
                    L = np.linalg.cholesky(S)
                    W = sla.solve_triangular(L, np.eye(d), lower=True)
                    Winv = L
                else:
                    W, Winv = (U / np.sqrt(lam)).T, U * np.sqrt(lam)
            elif self.method == "cholesky":
                R = np.linalg.qr(Xs / s, mode="r")
                R = R * np.sign(np.diag(R))[:, None]
                L = s[:, None] * R.T / root  # S = L L^T, L lower triangular, diag L > 0
                W = sla.solve_triangular(L, np.eye(d), lower=True)
                Winv = L
                self.explained_variance_ = (np.linalg.svd(Xs, compute_uv=False) / root) ** 2
            else:
                _, sig, Ut = np.linalg.svd(Xs, full_matrices=False)
                U, sd = Ut.T, sig / root  # sd^2 = the eigenvalues of S, never squared here
                W, Winv = (U / sd).T, U * sd
                self.explained_variance_ = sd**2
            if self.method == "zca":
                W, Winv = U @ W, Winv @ U.T
        if not (np.all(np.isfinite(W)) and np.all(np.isfinite(Winv))):
            raise ValueError(
                "the whitening matrix is not finite: the data's variances span more than the "
                "float64 range; rescale the features (StandardScaler) first."
            )
        self.mean_ = mean
        self.whitening_matrix_ = W
        self.dewhitening_matrix_ = Winv
        return self

    def transform(self, X):
        """``Z = (X - mean_) W^T``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return (X - self.mean_) @ self.whitening_matrix_.T

    def inverse_transform(self, X):
        """``X = Z W^{-T} + mean_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Whitened data.

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.dewhitening_matrix_.T + self.mean_
