"""Gram matrix of centred data without a centred copy of the data."""

from __future__ import annotations

import numpy as np

__all__ = ["centred_gram"]


def centred_gram(X, x_mean, y, y_mean):
    """``(X - x_mean)^T (X - x_mean)`` and ``(X - x_mean)^T (y - y_mean)``.

    Rows are centred in blocks that stay in cache, so the cost is one pass over ``X`` plus the
    ``O(N D^2)`` products (NumPy hands ``C.T @ C`` to BLAS syrk), with no ``N x D``
    temporary. Centring before multiplying keeps the accuracy that the downdate
    ``X^T X - N x_mean x_mean^T`` would lose when the means are large.
    """
    n, m = X.shape
    G = np.zeros((m, m))
    b = np.zeros(m)
    block = max(256, 131072 // max(m, 1))
    for start in range(0, n, block):
        C = X[start : start + block] - x_mean
        G += C.T @ C
        b += C.T @ (y[start : start + block] - y_mean)
    return G, b
