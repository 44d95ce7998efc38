"""Numerically stable elementwise and reduction functions.

``logsumexp``, the sigmoid and its logarithm come from ``scipy.special``, which computes them
stably; this module names them the way the notes do and adds ``softplus``, the softmaxes and
squared Euclidean distances computed through BLAS without ``(N, M, D)`` temporaries.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, log_expit, log_softmax, logsumexp, softmax

__all__ = [
    "log_sigmoid",
    "log_softmax",
    "logsumexp",
    "sigmoid",
    "softmax",
    "softplus",
    "squared_distances",
]

#: The logistic sigmoid ``1 / (1 + exp(-x))``, stable for large ``|x|``.
sigmoid = expit
#: ``log sigmoid(x) = -softplus(-x)``, stable for large ``|x|``.
log_sigmoid = log_expit


def softplus(x):
    """``log(1 + exp(x))`` without overflow: ``logaddexp(0, x)``."""
    return np.logaddexp(0.0, x)


def squared_distances(X, Y=None, *, X_norm_sq=None, Y_norm_sq=None) -> np.ndarray:
    """Squared Euclidean distances ``||x_i - y_j||^2`` as an ``(N, M)`` matrix.

    Uses ``||x||^2 + ||y||^2 - 2 x^T y`` so that the work is one matrix product (BLAS), then
    clips the small negative values that cancellation can produce. When ``Y`` is ``None`` the
    distances of ``X`` to itself are returned with an exactly zero diagonal.

    Parameters
    ----------
    X : ndarray of shape (N, D)
    Y : ndarray of shape (M, D), optional
    X_norm_sq, Y_norm_sq : ndarray of shape (N,) / (M,), optional
        Precomputed squared row norms, to save work in iterative algorithms.
    """
    X = np.asarray(X)
    same = Y is None
    Y = X if same else np.asarray(Y)
    if X_norm_sq is None:
        X_norm_sq = np.einsum("ij,ij->i", X, X)
    if same:
        Y_norm_sq = X_norm_sq
    elif Y_norm_sq is None:
        Y_norm_sq = np.einsum("ij,ij->i", Y, Y)
    D = X @ Y.T
    D *= -2.0
    D += X_norm_sq[:, None]
    D += Y_norm_sq[None, :]
    np.maximum(D, 0.0, out=D)
    if same:
        np.fill_diagonal(D, 0.0)
    return D
