"""Kernel smoothers: the Nadaraya-Watson local average and locally weighted regression."""

from __future__ import annotations

from numbers import Real
from typing import ClassVar

import numpy as np

from ..base import BaseEstimator, RegressorMixin, _fit_context, check_is_fitted
from ..utils._param_validation import Interval, StrOptions
from ..utils._rowscale import pow2_scale, unit_of
from ..utils.validation import validate_data

__all__ = ["LocallyWeightedRegression", "NadarayaWatson"]

_KERNELS = ("gaussian", "epanechnikov", "tricube")
_CHUNK = 1 << 20


def _row_exponents(A):
    """Per row of ``A``: the binary exponent ``e`` with ``max_j |a_j| * 2^-e`` in ``[0.5, 1)``."""
    amax = np.max(np.abs(A), axis=1) if A.shape[1] else np.zeros(A.shape[0])
    return np.frexp(amax)[1]


def _sq_dist_parts(Q, X, bandwidth):
    """``S = |q - x|^2 / h^2`` and ``R = S - min_j S_j`` per query row, without overflow.

    Each query row is scaled by a power of two (exact) with its entries and the training
    data's below 1 in magnitude, and ``S`` is formed from coordinate differences; the factor
    ``(2^e / h)^2`` is applied last, so a squared distance beyond the float64 range reads
    ``inf`` (never NaN). For a query farther than ``2^20`` times the data's radius from their
    centre ``m`` the differences cannot separate the training points, and ``R`` comes from
    ``|x_i - m|^2 - 2 (q - m)^T (x_i - m)`` (the same quantity up to the row's constant),
    in units of powers of two; its nearest point has ``R = 0`` exactly.
    """
    h = float(bandwidth)
    ex = int(np.frexp(np.max(np.abs(X)))[1]) if X.size else 0
    e = np.maximum(_row_exponents(Q), ex)
    p = np.ldexp(1.0, -e)[:, None]
    diff = (Q * p)[:, None, :] - X[None, :, :] * p[:, :, None]
    S_units = np.einsum("ijk,ijk->ij", diff, diff)
    with np.errstate(over="ignore", invalid="ignore"):
        f = np.ldexp(1.0 / h, e)[:, None]
        S = np.where(S_units == 0.0, 0.0, S_units * f * f)
        R_units = S_units - S_units.min(axis=1, keepdims=True)
        R = np.where(R_units == 0.0, 0.0, R_units * f * f)
    # Far rows: centre the data at their mid-range, in units of the data's own scale.
    pX = pow2_scale(np.max(np.abs(X)))
    Xs = X * pX
    m = 0.5 * (Xs.max(axis=0) + Xs.min(axis=0))
    Xc = Xs - m  # X - centre, in units 1 / pX
    ea = int(np.frexp(np.max(np.abs(Xc)))[1]) if Xc.size else 0
    q_e = np.maximum(_row_exponents(Q), ex)
    pq = np.ldexp(1.0, -q_e)[:, None]
    Qc = Q * pq - (m / pX) * pq  # (Q - centre) in units 2^q_e (entries below 2)
    eq = _row_exponents(Qc) + q_e  # |q - m| ~ 2^eq
    radius_exp = ea - int(np.frexp(pX)[1]) + 1  # |X - m| ~ 2^radius_exp
    far = (np.max(np.abs(Qc), axis=1) > 0) & (eq > radius_exp + 20) & (np.max(np.abs(Xc)) > 0)
    if far.any():
        Xu = np.ldexp(Xc, -ea)  # (X - m) / 2^a, a = ea - log2 pX
        a_exp = ea - (int(np.frexp(pX)[1]) - 1)
        Qf = np.ldexp(Qc[far], (q_e[far] - eq[far])[:, None])  # (q - m) / 2^eq
        r = np.ldexp(1.0, a_exp - eq[far])[:, None]
        K = 0.5 * r * np.einsum("ij,ij->i", Xu, Xu)[None, :] - Qf @ Xu.T
        dK = K - K.min(axis=1, keepdims=True)
        with np.errstate(over="ignore", invalid="ignore"):
            g = np.ldexp(2.0 / h / h, a_exp + eq[far])[:, None]
            R[far] = np.where(dK == 0.0, 0.0, dK * g)
    return S, R


def _kernel_weights(S, R, kernel, relative):
    """Weights ``D(s)`` from ``S = s^2``; with ``relative`` Gaussian weights are divided by
    the row's largest, ``exp(-R / 2)`` with ``R = S - min S`` (so they never all underflow;
    a ratio of weights is unchanged).

    Returns the weights and a mask of rows whose weights are all zero (no training point
    within a compact kernel's support).
    """
    if kernel == "gaussian":
        W = np.exp(-0.5 * (R if relative else S))
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
        S, R = _sq_dist_parts(Q, self.X_fit_, self.bandwidth)
        W, empty = _kernel_weights(S, R, self.kernel, self._relative_weights)
        if empty.any():
            # No training point inside the kernel's support: weigh the nearest ones.
            W[empty] = (R[empty] == 0.0).astype(float)
        return W, R, empty

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
    nearest point (``exp(-(s_i^2 - min_j s_j^2) / 2)``), so they never all underflow; the
    distances are formed in units of a power of two per query (exact), so data near
    ``1e300`` do not overflow, and for a query far outside the data (``2^20`` radii or more)
    the differences ``s_i^2 - min_j s_j^2`` come from ``|x_i - m|^2 - 2 (x* - m)^T (x_i - m)``
    about the data's centre ``m``, so the nearest point is still told apart: a bandwidth
    tiny against the spacing of the data gives, in the limit, the nearest point's value. With a
    compact kernel a query with no training point within ``h`` has no local average; it is
    given the average of its nearest training points (a choice: the local average is
    undefined there).

    Complexity: ``fit`` only validates and stores the ``N`` training points of ``D``
    features, ``O(N D)`` time; the validated ``X`` and ``y`` are the fitted state. ``predict`` of
    ``M`` queries costs ``O(M N D)`` time (the coordinate differences to every training point;
    the kernel weights and the weighted sums add ``O(M N)``). Queries are processed in chunks
    of ``max(1, 2^20 / (N D))``, so memory is ``O(max(N D, 2^20))``: the chunk's differences
    (about ``2^20`` entries, or ``N x D`` for a single query) and its squared distances and
    weights, plus ``O(N D)`` for the recentred training data.

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
        W, _, _ = self._weights(Q)
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
    the nearest points, as in :class:`NadarayaWatson`. When every Gaussian weight of a query
    underflows (``|x* - x_i|^2 / h^2 > 1490`` for all ``i``) and ``alpha > 0``, the penalty
    outweighs the weights and the local slopes vanish: the prediction is that limit, the
    weighted mean with weights relative to the nearest point. Centre and spread are formed in
    units of a power of two (data near ``1e300`` do not overflow); a local system that is
    singular to working precision raises an error rather than returning a non-finite value.

    Complexity: ``fit`` stores the ``N`` training points of ``D`` features and computes their
    centre and spread, ``O(N D)`` time. ``predict`` of ``M`` queries costs
    ``O(M N D^2 + M D^3)`` time: for each query ``O(N D)`` for the kernel weights,
    ``O(N D^2)`` for its ``(1 + D) x (1 + D)`` weighted normal equations and ``O(D^3)`` for
    their Cholesky solve. Queries are processed in chunks of ``max(1, 2^20 / (N D))``; memory
    is ``O(N D^2 + max(N D, 2^20))``: the ``N x (1 + D)^2`` table of products
    ``phi(x_i) phi(x_i)^T`` (rebuilt for each chunk), the chunk's coordinate differences and
    weights, and its ``(1 + D) x (1 + D)`` systems.

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
        # Both are formed in units of a power of two, so data near 1e300 do not overflow.
        c = unit_of(self.X_fit_)
        Xc = self.X_fit_ / c
        self._centre = Xc.mean(axis=0) * c
        spread = Xc.std(axis=0) * c
        self._unit = np.where(spread > 0, spread, 1.0)
        return self

    def _predict_chunk(self, Q):
        W, R, empty = self._weights(Q)
        limit = empty & (self.kernel == "gaussian") & (self.alpha > 0)
        if limit.any():
            # Every absolute weight underflows: the ridge penalty outweighs them by more than
            # e^700 / unit^2, the local slopes vanish and the fit is the weighted mean with
            # the weights relative to the nearest point.
            out = np.empty(Q.shape[0])
            Wl = np.exp(-0.5 * R[limit])
            out[limit] = (Wl @ self.y_fit_) / Wl.sum(axis=1)
            if (~limit).any():
                out[~limit] = self._local_fit(Q[~limit], W[~limit])
            return out
        return self._local_fit(Q, W)

    def _local_fit(self, Q, W):
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
        # Beyond 2^900 the penalty pins the slopes to 0 as well as any larger one would.
        if self.alpha > 0:
            with np.errstate(over="ignore"):
                inv = 1.0 / self._unit
                pen[1:] = np.minimum(self.alpha * inv * inv, 2.0**900)
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
        with np.errstate(over="ignore", invalid="ignore"):
            pred = beta[:, 0] + np.einsum("ij,ij->i", Zq, beta[:, 1:])
        if not np.all(np.isfinite(pred)):
            raise ValueError(
                "A local weighted least-squares fit is not finite: the local system is "
                "singular to working precision (too few training points with non-negligible "
                "weight for the scale of X). Increase bandwidth or alpha, or rescale X."
            )
        return pred
