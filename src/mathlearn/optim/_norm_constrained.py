"""Norm-constrained least squares and its correspondence with ridge regression.

The multiplier ``lambda`` for a given radius is found by a one-dimensional root search after
one SVD (Imperial "Mathematics for Machine Learning" lecture 13).
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real

import numpy as np
import scipy.linalg as sla
from numpy.typing import ArrayLike
from scipy.optimize import brentq

from ..utils._param_validation import Interval, validate_params
from ._arrays import _as_2d

__all__ = ["NormConstrainedResult", "norm_constrained_least_squares", "ridge_squared_norm"]


def _svd_parts(X, y):
    if np.ndim(X) != 2:
        raise ValueError(f"X must be a 2-D array; got shape {np.shape(X)}.")
    X = _as_2d(X, "X")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X needs at least one sample and one feature; got shape {X.shape}.")
    y = np.asarray(y, dtype=float).ravel()
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},); got {y.shape}.")
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity.")
    U, s, Vt = sla.svd(X, full_matrices=False, check_finite=False)
    return s, U.T @ y, Vt


def _ridge_from_svd(s, z, Vt, alpha):
    # theta(alpha) = V diag(s / (s^2 + alpha)) U^T y; alpha = 0 gives the minimum-norm OLS.
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(s > s.max(initial=0) * 1e-12, s / (s**2 + alpha), 0.0)
    return Vt.T @ (w * z)


@validate_params(
    {
        "alpha": [Interval(Real, 0, None, closed="left")],
    }
)
def ridge_squared_norm(X: ArrayLike, y: ArrayLike, alpha: float) -> float:
    """``||theta_ridge(alpha)||^2`` with ``theta_ridge = (X^T X + alpha I)^{-1} X^T y``.

    The radius ``delta`` at which the norm constraint ``||theta||^2 <= delta`` is solved by
    ridge with this ``alpha`` (Imperial "Mathematics for Machine Learning" lecture 13); decreasing
    in ``alpha``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Design matrix.
    y : array-like of shape (n_samples,)
        Targets.
    alpha : float
        Ridge penalty, non-negative (``0``: the minimum-norm least-squares solution).

    Returns
    -------
    float
        ``||theta_ridge(alpha)||^2``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.optim import ridge_squared_norm
    >>> ridge_squared_norm(np.eye(2), [3.0, 4.0], 1.0)  # theta = (1.5, 2)
    6.25
    """
    s, z, Vt = _svd_parts(X, y)
    return float(np.sum(_ridge_from_svd(s, z, Vt, alpha) ** 2))


@dataclass(frozen=True)
class NormConstrainedResult:
    """Solution of norm-constrained least squares.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
        ``theta*``.
    lagrange_multiplier : float
        ``lambda >= 0`` of the notes' Lagrangian (zero when the constraint is redundant).
    ridge_alpha : float
        ``2 sigma^2 lambda``: the ridge penalty ``alpha`` in ``||y - X theta||^2 +
        alpha ||theta||^2`` with the same solution (the notes' ``lambda'``).
    binding : bool
        Whether the constraint is active (``||theta*||^2 = delta``).

    See Also
    --------
    mathlearn.optim.norm_constrained_least_squares
        The function that returns it.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.optim import norm_constrained_least_squares
    >>> norm_constrained_least_squares(np.eye(2), [3.0, 4.0], 30.0).binding  # ||(3, 4)||^2 = 25
    False
    """

    coef: np.ndarray
    lagrange_multiplier: float
    ridge_alpha: float
    binding: bool


@validate_params(
    {
        "radius_sq": [Interval(Real, 0, None, closed="neither")],
        "noise_var": [Interval(Real, 0, None, closed="neither")],
    }
)
def norm_constrained_least_squares(
    X: ArrayLike, y: ArrayLike, radius_sq: float, *, noise_var: float = 1.0
) -> NormConstrainedResult:
    """``min_theta ||y - X theta||^2 / (2 sigma^2)`` subject to ``||theta||^2 <= delta``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    radius_sq : float
        ``delta``, the bound on the squared norm.
    noise_var : float, default=1.0
        ``sigma^2``; only rescales the multiplier.

    Returns
    -------
    NormConstrainedResult

    Notes
    -----
    Imperial "Mathematics for Machine Learning" lecture 13 (and its worked example): with the
    Lagrangian ``||y - X theta||^2 / (2 sigma^2) + lambda (||theta||^2 - delta)``, stationarity
    gives ``theta*(lambda) = (X^T X + 2 sigma^2 lambda I)^{-1} X^T y``: ridge regression with
    ``lambda' = 2 sigma^2 lambda`` (errata 6.1 item 47 on the factor 2). If the unconstrained
    (minimum-norm) least-squares solution satisfies the constraint it is redundant and
    ``lambda = 0``; otherwise complementary slackness requires ``||theta*(lambda)||^2 =
    delta``, a monotone equation in ``lambda`` solved by Brent's method on ``log lambda'``
    after one SVD of ``X`` (each evaluation is then ``O(n_features)``).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.optim import norm_constrained_least_squares
    >>> res = norm_constrained_least_squares(np.eye(2), [3.0, 4.0], 6.25)
    >>> res.coef, round(res.lagrange_multiplier, 12)
    (array([1.5, 2. ]), 0.5)
    """
    s, z, Vt = _svd_parts(X, y)
    theta0 = _ridge_from_svd(s, z, Vt, 0.0)
    if theta0 @ theta0 <= radius_sq:
        return NormConstrainedResult(theta0, 0.0, 0.0, False)

    def excess(log_alpha):
        theta = _ridge_from_svd(s, z, Vt, np.exp(log_alpha))
        return np.log(theta @ theta) - np.log(radius_sq)

    # ||theta(alpha)||^2 ~ ||X^T y||^2 / alpha^2 for large alpha: bracket the root.
    hi = np.log(max(np.linalg.norm(s * z) / np.sqrt(radius_sq), 1e-300)) + 1.0
    lo = hi - 5.0
    while excess(lo) < 0:
        lo -= 5.0
    while excess(hi) > 0:
        hi += 5.0
    alpha = float(np.exp(brentq(excess, lo, hi, xtol=1e-14, rtol=1e-14)))
    coef = _ridge_from_svd(s, z, Vt, alpha)
    return NormConstrainedResult(coef, alpha / (2 * noise_var), alpha, True)
