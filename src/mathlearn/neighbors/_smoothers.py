"""Kernel smoothers: the Nadaraya-Watson local average and locally weighted regression."""

from __future__ import annotations

from numbers import Real
from typing import ClassVar

import numpy as np

from ..base import BaseEstimator, RegressorMixin, _fit_context, check_is_fitted
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import validate_data
from ._kd_tree import _pow2_scale

__all__ = ["LocallyWeightedRegression", "NadarayaWatson"]

_KERNELS = ("gaussian", "epanechnikov", "tricube")
_CHUNK = 1 << 20


def _scaled_sq_dist(Q, X, bandwidth):
    """``|q - x|^2 / h^2`` for all pairs, from coordinate differences (exact far from 0)."""
    s = _pow2_scale(np.vstack([X, Q]))
    Qs, Xs = Q / s, X / s
    diff = Qs[:, None, :] - Xs[None, :, :]
    S = np.einsum("ijk,ijk->ij", diff, diff)
    return S * ((s / bandwidth) ** 2)


def _kernel_weights(S, kernel, relative):
    """Weights ``D(s)`` from ``S = s^2``; with ``relative`` Gaussian weights are divided by
    the row's largest (so they never all underflow; a ratio of weights is unchanged).

    Returns the weights and a mask of rows whose weights are all zero (no training point
    within a compact kernel's support).
    """
    if kernel == "gaussian":
        W = np.exp(-0.5 * (S - S.min(axis=1, keepdims=True) if relative else S))
    elif kernel == "epanechnikov":
        W = 0.75 * np.maximum(1.0 - S, 0.0)
    else:  # tri-cube
        W = np.maximum(1.0 - np.minimum(S, 1.0) ** 1.5, 0.0) ** 3
    return W, ~(W > 0).any(axis=1)


class _SmootherBase(RegressorMixin, BaseEstimator):
    _relative_weights = True

    _parameter_constraints: ClassVar[dict] = {
        "kernel": [StrOptions(set(_KERNELS))],
        "bandwidth": [Interval(Real, 0, None, closed="neither")],
    }

    def _fit_data(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        self.X_fit_ = X
        self.y_fit_ = y
        return self

    def _weights(self, Q):
        S = _scaled_sq_dist(Q, self.X_fit_, self.bandwidth)
        W, empty = _kernel_weights(S, self.kernel, self._relative_weights)
        if empty.any():
            # No training point inside the kernel's support: weigh the nearest ones.
            rows = np.nonzero(empty)[0]
            Se = S[rows]
            W[rows] = (Se == Se.min(axis=1, keepdims=True)).astype(float)
        return W

    def predict(self, X):
        """Predictions at the query points.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_queries,)
        """
        check_is_fitted(self)
        Q = validate_data(self, X, dtype=np.float64, reset=False)
        n = self.X_fit_.shape[0]
        step = max(1, _CHUNK // max(1, n * self.X_fit_.shape[1]))
        return np.concatenate(
            [self._predict_chunk(Q[s : s + step]) for s in range(0, Q.shape[0], step)]
        )


class NadarayaWatson(_SmootherBase):
    """Nadaraya-Watson kernel smoother: a kernel-weighted local average of the targets.

    Parameters
    ----------
    kernel : {"gaussian", "epanechnikov", "tricube"}, default="gaussian"
        Profile ``D(s)`` of the smoothing kernel ``K_h(x*, x) = D(|x* - x| / h)``:
        ``exp(-s^2 / 2)``; ``3/4 (1 - s^2)`` for ``s <= 1``; ``(1 - s^3)^3`` for ``s <= 1``.
    bandwidth : float, default=1.0
        ``h`` (the notes' ``lambda``), in the units of ``X``.

    Attributes
    ----------
    X_fit_ : ndarray of shape (n_samples, n_features)
    y_fit_ : ndarray of shape (n_samples,)
    n_features_in_ : int

    See Also
    --------
    LocallyWeightedRegression : a local linear fit with the same kernels.
    KNeighborsRegressor : the k-NN window in place of a fixed bandwidth.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" §7.1 (slides 7:3-7:5, smoothing kernels,
    Epanechnikov kernel) and PRML §6.3.1 (Nadaraya-Watson model): the weighted local least
    squares problem with a constant model, ``min_b sum_i K_h(x*, x_i) (y_i - b)^2``, is solved
    by

    ``f(x*) = sum_i K_h(x*, x_i) y_i / sum_i K_h(x*, x_i)``.

    The kernel's normalising constant cancels. Gaussian weights are computed relative to the
    nearest point (``exp(-(s_i^2 - min_j s_j^2) / 2)``), so they never all underflow. With a
    compact kernel a query with no training point within ``h`` has no local average; it is
    given the average of its nearest training points (a choice: the local average is
    undefined there).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neighbors import NadarayaWatson
    >>> X = np.array([[0.0], [1.0], [2.0]])
    >>> nw = NadarayaWatson(kernel="epanechnikov", bandwidth=1.5).fit(X, [0.0, 1.0, 2.0])
    >>> np.round(nw.predict([[0.0], [1.0]]), 6)
    array([0.357143, 1.      ])
    """

    def __init__(self, kernel: str = "gaussian", bandwidth: float = 1.0):
        self.kernel = kernel
        self.bandwidth = bandwidth

    @_fit_context
    def fit(self, X, y):
        """Store the training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        return self._fit_data(X, y)

    def _predict_chunk(self, Q):
        W = self._weights(Q)
        return (W @ self.y_fit_) / W.sum(axis=1)


class LocallyWeightedRegression(_SmootherBase):
    """Locally weighted (ridge) linear regression: one weighted least-squares fit per query.

    Parameters
    ----------
    kernel : {"gaussian", "epanechnikov", "tricube"}, default="gaussian"
        Smoothing kernel profile, as in :class:`NadarayaWatson`.
    bandwidth : float, default=1.0
        ``h``, in the units of ``X``.
    alpha : float, default=1e-6
        Ridge penalty ``lambda`` on the local slopes.

    Attributes
    ----------
    X_fit_ : ndarray of shape (n_samples, n_features)
    y_fit_ : ndarray of shape (n_samples,)
    n_features_in_ : int

    See Also
    --------
    NadarayaWatson : the local constant fit.
    mathlearn.linear_model.Ridge : the global fit (all weights equal).

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" §7.1 (slide 7:3, weighted local least
    squares): for a query ``x*`` with weights ``W = diag(K_h(x*, x_1..n))`` and features
    ``phi(x) = (1, x - x*)``,

    ``beta(x*) = argmin sum_i K_h(x*, x_i) (y_i - phi(x_i)^T beta)^2 + lambda |beta_1:|^2
    = (Phi^T W Phi + lambda I_0)^{-1} Phi^T W y``,

    and the prediction is ``f(x*) = phi(x*)^T beta = beta_0``. Unlike the slide, the intercept
    is not penalised (``I_0`` is the identity with a zero in the intercept's place): a penalty
    on it would shrink every prediction toward zero and make the fit depend on the origin of
    ``y``. The ``(1 + D) x (1 + D)`` system of each query is solved by Cholesky; a query with
    fewer than ``1 + D`` points of non-zero weight and ``alpha = 0`` has no unique local fit
    and raises an error. Weights of queries outside a compact kernel's support fall back to
    the nearest points, as in :class:`NadarayaWatson`.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neighbors import LocallyWeightedRegression
    >>> X = np.linspace(0.0, 1.0, 11)[:, None]
    >>> lwr = LocallyWeightedRegression(bandwidth=0.2, alpha=0.0).fit(X, 3.0 * X[:, 0] + 1.0)
    >>> np.round(lwr.predict([[0.25], [1.5]]), 6)  # a line is reproduced exactly
    array([1.75, 5.5 ])
    """

    _relative_weights = False  # the ridge penalty is on the scale of the raw weights
    _parameter_constraints: ClassVar[dict] = {
        **_SmootherBase._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, kernel: str = "gaussian", bandwidth: float = 1.0, alpha: float = 1e-6):
        self.kernel = kernel
        self.bandwidth = bandwidth
        self.alpha = alpha

    @_fit_context
    def fit(self, X, y):
        """Store the training data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        self._fit_data(X, y)
        # Local coordinates in units of the data's spread keep the normal equations
        # well scaled; predictions do not depend on this choice.
        self._centre = self.X_fit_.mean(axis=0)
        spread = self.X_fit_.std(axis=0)
        self._unit = np.where(spread > 0, spread, 1.0)
        return self

    def _predict_chunk(self, Q):
        W = self._weights(Q)
        Z = (self.X_fit_ - self._centre) / self._unit
        Zq = (Q - self._centre) / self._unit
        n, d = Z.shape
        Phi = np.hstack([np.ones((n, 1)), Z])
        # Per-query normal equations in global coordinates (an affine change of the local
        # ones, which leaves the unpenalised intercept's prediction unchanged).
        A = (W @ np.einsum("ni,nj->nij", Phi, Phi).reshape(n, -1)).reshape(-1, d + 1, d + 1)
        b = W @ (Phi * self.y_fit_[:, None])
        # lambda |slope|^2 in the units of X is lambda / unit_j^2 on the rescaled slopes.
        pen = np.zeros(d + 1)
        pen[1:] = self.alpha / self._unit**2
        A += np.diag(pen)
        try:
            L = np.linalg.cholesky(A)
        except np.linalg.LinAlgError:
            raise ValueError(
                "A local weighted least-squares system is singular: some query has fewer "
                f"than n_features + 1 = {d + 1} training points with non-zero weight in "
                "general position. Increase bandwidth or alpha."
            ) from None
        u = np.linalg.solve(L, b[:, :, None])
        beta = np.linalg.solve(np.swapaxes(L, 1, 2), u)[:, :, 0]
        return beta[:, 0] + np.einsum("ij,ij->i", Zq, beta[:, 1:])
