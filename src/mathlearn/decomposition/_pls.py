"""Partial least squares regression (PLS2 by NIPALS)."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.linalg as sla

from ..base import (
    BaseEstimator,
    ComponentNamesMixin,
    RegressorMixin,
    TransformerMixin,
    _fit_context,
    check_is_fitted,
)
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval
from ..utils._rowscale import unit_of
from ..utils.validation import check_array, validate_data

__all__ = ["PLSRegression"]


def _deflate(A, t, p):
    """``A -= outer(t, p)`` in place, as one BLAS rank-one update of the C-ordered ``A``
    (seen as the Fortran-ordered ``A.T``), without the n x d temporary of ``np.outer``."""
    if A.flags.c_contiguous and A.dtype == np.float64:
        sla.blas.dger(-1.0, p, t, a=A.T, overwrite_a=True)
    else:
        A -= np.outer(t, p)


def _std(A):
    """Column standard deviations (``ddof=1``) of the centred ``A``: ``sqrt(sum a^2 / (n -
    1))`` in one pass, without a temporary (the columns' means are rounding residues, of
    order ``eps |a|``, and would change the sum of squares by a relative ``eps^2``). In
    units of a power of two, exactly, so that the squares of entries of any magnitude
    neither overflow nor underflow."""
    unit = unit_of(A)
    B = A / unit if unit != 1.0 else A
    return np.sqrt(np.einsum("ij,ij->j", B, B) / (A.shape[0] - 1)) * unit


class PLSRegression(ComponentNamesMixin, TransformerMixin, RegressorMixin, BaseEstimator):
    """Partial least squares regression.

    Finds directions in ``X`` whose scores have maximal covariance with ``Y``, deflating
    both after each component, and regresses ``Y`` on the scores.

    Parameters
    ----------
    n_components : int, default=2
        Number of latent components, in ``[1, n_features]``.
    scale : bool, default=True
        Standardise ``X`` and ``Y`` (unit sample variance) before fitting, as Hastie et al.'s
        Algorithm 3.3 does.
    max_iter : int, default=500
        NIPALS inner iterations per component (multi-target ``Y`` only; one target needs
        none).
    tol : float, default=1e-6
        NIPALS convergence tolerance on the change of the ``X`` weights.

    Attributes
    ----------
    x_weights_ : ndarray of shape (n_features, n_components)
    y_weights_ : ndarray of shape (n_targets, n_components)
    x_loadings_ : ndarray of shape (n_features, n_components)
    y_loadings_ : ndarray of shape (n_targets, n_components)
    x_rotations_ : ndarray of shape (n_features, n_components)
        ``W (P^T W)^{-1}``: maps centred (scaled) ``X`` straight to the scores.
    coef_ : ndarray of shape (n_targets, n_features)
        Coefficients in the original units: ``Y ~ (X - mean) @ coef_.T + intercept_``.
    intercept_ : ndarray of shape (n_targets,)
    n_iter_ : list of int
        NIPALS iterations per component (1 for a single target, solved in one step).
    n_features_in_ : int

    See Also
    --------
    mathlearn.decomposition.PCA
        Directions of largest variance of X alone.
    mathlearn.linear_model.Ridge
        Another way to regress on collinear features.
    sklearn.cross_decomposition.PLSRegression
        scikit-learn's equivalent.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" §6.1 (slides 6:14-6:16, after Hastie et al. Alg.
    3.3; corrected: the deflation is ``X <- (I - Z_i) X``). For component ``i``: the weights ``w``
    are the first left singular vector of ``X_i^T Y_i`` (by NIPALS power iteration; for one target
    ``w ~ X_i^T y``), the scores ``t = X_i w``, the loadings ``p = X_i^T t / t^T t`` and
    ``q = Y_i^T t / t^T t``, and the deflation ``X_{i+1} = X_i - t p^T``,
    ``Y_{i+1} = Y_i - t q^T``. For a single target the fitted values equal those of
    Hastie's algorithm (successive orthogonal ``z_i``). Signs are fixed so that the
    largest-magnitude entry of each ``x`` weight vector is positive.

    Complexity (``N`` samples, ``D`` features, ``T`` targets, ``A`` components): each
    component costs ``O(N (D + T))`` per NIPALS iteration (one for a single target) plus the
    deflation, so ``O(A N (D + T) n_iter)`` in all; memory ``O(N (D + T))`` (the centred,
    deflated copies of ``X`` and ``Y``).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.decomposition import PLSRegression
    >>> X = np.array([[0., 0., 1.], [1., 0., 0.], [2., 2., 2.], [2., 5., 4.]])
    >>> y = np.array([0.1, 0.9, 6.2, 11.9])
    >>> PLSRegression(n_components=2).fit(X, y).predict(X).shape
    (4,)
    """

    _n_features_out_attr = "x_rotations_"
    _n_features_out_axis = 1

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "scale": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self, n_components: int = 2, *, scale: bool = True, max_iter: int = 500, tol: float = 1e-6
    ):
        self.n_components = n_components
        self.scale = scale
        self.max_iter = max_iter
        self.tol = tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    @_fit_context
    def fit(self, X, y):
        """Fit ``X`` (n_samples, n_features) to ``y`` (n_samples,) or (n_samples, n_targets)."""
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=True, y_numeric=True)
        Y = y.reshape(-1, 1) if y.ndim == 1 else y.astype(float, copy=True)
        self._y_ndim = y.ndim
        n, d = X.shape
        if n < 2:
            raise ValueError(f"PLSRegression needs at least 2 samples; got n_samples = {n}.")
        k = int(self.n_components)
        if k > d:
            raise ValueError(f"n_components={k!r} must be an int in [1, n_features={d}].")
        self._x_mean = X.mean(axis=0)
        self._y_mean = Y.mean(axis=0)
        Xk = X - self._x_mean
        Yk = Y - self._y_mean
        if self.scale:
            x_std = _std(Xk)
            y_std = _std(Yk)
            x_std[x_std == 0] = 1.0  # a constant feature stays zero after centring
            y_std[y_std == 0] = 1.0
            Xk /= x_std
            Yk /= y_std
        else:
            x_std = np.ones(d)
            y_std = np.ones(Y.shape[1])
        self._x_std, self._y_std = x_std, y_std
        q_t = Y.shape[1]
        Wx = np.zeros((d, k))
        Wy = np.zeros((q_t, k))
        P = np.zeros((d, k))
        Q = np.zeros((q_t, k))
        self.n_iter_ = []
        eps = np.finfo(float).eps
        for i in range(k):
            # A target residual that is all zero carries nothing left to explain.
            col_ok = np.any(np.abs(Yk) > 10 * eps, axis=0)
            if not col_ok.any():
                raise ValueError(
                    f"the Y residual is constant at component {i + 1}; lower n_components."
                )
            w, c, t, it = self._first_weights(Xk, Yk, col_ok)
            self.n_iter_.append(it)
            # Deterministic sign: the largest-magnitude entry of the X weights is positive.
            j = np.argmax(np.abs(w))
            if w[j] < 0:
                w, c, t = -w, -c, -t
            tt = float(t @ t)
            if tt <= eps:
                raise ValueError(
                    f"the X residual is zero at component {i + 1} (rank of X reached); "
                    "lower n_components."
                )
            p = Xk.T @ t / tt
            qv = Yk.T @ t / tt
            if i + 1 < k:  # deflate in place (rank-one BLAS updates); the last needs none
                _deflate(Xk, t, p)
                _deflate(Yk, t, qv)
            Wx[:, i], Wy[:, i], P[:, i], Q[:, i] = w, c, p, qv
        self.x_weights_, self.y_weights_ = Wx, Wy
        self.x_loadings_, self.y_loadings_ = P, Q
        self.x_rotations_ = Wx @ sla.pinv(P.T @ Wx, check_finite=False)
        coef = self.x_rotations_ @ Q.T  # scaled units
        self.coef_ = (coef * y_std).T / x_std
        self.intercept_ = self._y_mean
        self._n_targets = q_t
        return self

    def _first_weights(self, X, Y, col_ok):
        """First pair of singular vectors of ``X^T Y`` by NIPALS (mode A)."""
        if Y.shape[1] == 1:
            w = X.T @ Y[:, 0]
            nw = np.linalg.norm(w)
            if nw <= np.finfo(float).eps:
                raise ValueError(
                    "X^T y is zero: X carries no information on y; lower n_components."
                )
            w /= nw
            t = X @ w
            c = Y.T @ t / max(float(t @ t), np.finfo(float).tiny)
            return w, c, t, 1  # one exact step: w is proportional to X^T y
        y_score = Y[:, np.flatnonzero(col_ok)[0]].copy()
        w_old = np.zeros(X.shape[1])
        for it in range(1, self.max_iter + 1):
            w = X.T @ y_score / float(y_score @ y_score)
            w /= np.linalg.norm(w) + np.finfo(float).eps
            t = X @ w
            c = Y.T @ t / (float(t @ t) + np.finfo(float).eps)
            y_score = Y @ c / (float(c @ c) + np.finfo(float).eps)
            if np.sum((w - w_old) ** 2) < self.tol:
                return w, c, t, it
            w_old = w
        warnings.warn(
            f"PLSRegression NIPALS did not converge in max_iter={self.max_iter} iterations.",
            ConvergenceWarning,
            stacklevel=3,
        )
        return w, c, t, self.max_iter

    def transform(self, X, y=None):
        """``X`` scores ``((X - mean) / std) @ x_rotations_``, shape (n_samples, n_components)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return ((X - self._x_mean) / self._x_std) @ self.x_rotations_

    def predict(self, X):
        """Predicted targets, shape (n_samples,) or (n_samples, n_targets)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Y = (X - self._x_mean) @ self.coef_.T + self.intercept_
        return Y.ravel() if self._y_ndim == 1 else Y

    @_fit_context
    def fit_transform(self, X, y):
        """Fit and return the ``X`` scores."""
        return self.fit(X, y).transform(X)

    def inverse_transform(self, X):
        """Map scores back to ``X`` space: ``Z @ x_loadings_.T * std + mean``."""
        check_is_fitted(self)
        Z = check_array(X, dtype=np.float64)
        if Z.shape[1] != self.x_loadings_.shape[1]:
            raise ValueError(f"expected {self.x_loadings_.shape[1]} columns; got {Z.shape[1]}.")
        return (Z @ self.x_loadings_.T) * self._x_std + self._x_mean
