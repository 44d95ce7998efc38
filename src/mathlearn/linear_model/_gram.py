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
    # one buffer for every block's centred rows: a fresh block each time costs its page
    # faults and cache misses again
    buf = np.empty((min(block, n), m))
    for start in range(0, n, block):
        Xb = X[start : start + block]
        C = buf[: Xb.shape[0]]
        np.subtract(Xb, x_mean, out=C)
        G += C.T @ C
        b += C.T @ (y[start : start + block] - y_mean)
    return G, b
