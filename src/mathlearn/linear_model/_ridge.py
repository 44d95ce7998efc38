"""Ridge regression: the MAP estimate under a Gaussian prior (spec 000 §2.D M21–M22)."""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

from ..base import BaseEstimator, RegressorMixin, check_is_fitted
from ..utils.validation import check_positive, validate_data
from ._gram import centred_gram
from ._validation import check_bool, validate_xy

__all__ = ["Ridge"]


def _solve_spd_upper(G, b, name):
    """Solve ``G x = b`` for SPD ``G`` whose upper triangle is filled (LAPACK potrf/potrs)."""
    c, info = lapack.dpotrf(G, lower=0, clean=0, overwrite_a=1)
    if info != 0:
        raise np.linalg.LinAlgError(
            f"{name} is not numerically positive definite; increase alpha."
        )
    x, info = lapack.dpotrs(c, b, lower=0)
    return x


class Ridge(RegressorMixin, BaseEstimator):
    """Ridge regression ``min ||y - X w - w_0||^2 + alpha ||w||^2`` (MAP, Gaussian prior).

    Parameters
    ----------
    alpha : float, default=1.0
        Penalty ``alpha >= 0``. It is scikit-learn's ``alpha`` and the notes'
        ``lambda = sigma^2 / b^2`` (= prior precision / noise precision); the intercept is
        not penalised.
    fit_intercept : bool, default=True

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        ``w_MAP``.
    intercept_ : float
    solver_ : {"primal", "dual"}
        ``"primal"`` solved the ``D x D`` system ``(X^T X + alpha I) w = X^T y``;
        ``"dual"`` (when ``N < D``) the ``N x N`` system ``(X X^T + alpha I) a = y`` with
        ``w = X^T a`` (the push-through / Woodbury identity).
    n_features_in_ : int

    Notes
    -----
    Negative log-posterior ``(1/2 sigma^2) ||y - Phi w||^2 + (1/2 b^2) ||w||^2``
    (seeds/000 eq. 1.174) has the minimiser ``w_MAP = (Phi^T Phi + (sigma^2/b^2) I)^{-1}
    Phi^T y`` (eq. 1.180; spec 001 M11 with ``lambda = alpha/beta``). Erratum: Remark 13 of
    notes 000 calls lambda "twice the precision"; it is half of it (spec 000 §2.D M22). The
    offset is left unpenalised by centring ``X`` and ``y`` (notes 004 slide 2:15, spec 004
    §2.1) and recovered as ``w_0 = mean(y) - mean(X) w``. The SPD system is solved by
    Cholesky on the smaller side, never by an inverse.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([1.0, 3.0, 2.0, 5.0])
    >>> Ridge(alpha=0.0).fit(X, y).coef_.round(10)
    array([1.1])
    """

    def __init__(self, alpha: float = 1.0, *, fit_intercept: bool = True):
        self.alpha = alpha
        self.fit_intercept = fit_intercept

    def fit(self, X, y):
        """Fit the MAP estimate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        alpha = check_positive(self.alpha, "alpha", strict=False)
        fit_intercept = check_bool(self.fit_intercept, "fit_intercept")
        X, y = validate_xy(self, X, y)
        n, m = X.shape
        if fit_intercept:
            x_mean = X.mean(axis=0)
            y_mean = float(y.mean())
        else:
            x_mean = np.zeros(m)
            y_mean = 0.0
        if n >= m:
            G, b = centred_gram(X, x_mean, y, y_mean)
            G[np.diag_indices(m)] += alpha
            coef = _solve_spd_upper(G, b, "X^T X + alpha I")
            self.solver_ = "primal"
        else:
            Xc = X - x_mean
            K = Xc @ Xc.T
            K[np.diag_indices(n)] += alpha
            coef = Xc.T @ _solve_spd_upper(K, y - y_mean, "X X^T + alpha I")
            self.solver_ = "dual"
        self.coef_ = coef
        self.intercept_ = y_mean - float(x_mean @ coef)
        return self

    def predict(self, X):
        """Predicted means ``X w + w_0``, shape (n_samples,)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_
