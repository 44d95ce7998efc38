"""Per-class sums and scatter matrices of the rows of ``X``, by blocks of rows.

Used by the Gaussian generative classifiers (naive Bayes, LDA, QDA, Fisher's discriminant).
Each block of rows is multiplied by its (weighted) one-hot class matrix, a BLAS product, so
there is no per-class masked copy of ``X``, no unbuffered ``np.add.at`` scatter, and no
temporary of the size of ``X``: the extra memory is one block.
"""

from __future__ import annotations

import numpy as np

__all__ = ["class_scatters", "class_sums", "within_class_scatter"]

# Rows per block of the scatter matrices: 4 096 rows of a few dozen features stay in the
# cache (and the D x D accumulation is amortised over many rows).
_BLOCK = 4096
# Numbers per block of the class sums (the block of deviations and its one-hot matrix):
# 128 kB, whatever the numbers of features and classes.
_SUM_BLOCK = 1 << 14


def _onehot(yb: np.ndarray, K: int, wb: np.ndarray | None) -> np.ndarray:
    onehot = np.zeros((K, yb.shape[0]))
    onehot[yb, np.arange(yb.shape[0])] = 1.0 if wb is None else wb
    return onehot


def class_sums(
    X: np.ndarray,
    y_idx: np.ndarray,
    K: int,
    weights: np.ndarray | None = None,
    center: np.ndarray | None = None,
) -> np.ndarray:
    """``Σ_i s_i [y_i = k] x_i``, shape (K, d); with ``center`` (K, d), of ``(x_i - c_k)²``.

    ``y_idx`` holds class indices in ``0 .. K - 1``; ``weights`` the ``s_i`` (1 if None).
    Time ``O(N K D)`` in BLAS products, extra memory ``O((K + D) B)`` for blocks of ``B``
    rows (``(K + D) B`` about 16 384 numbers).
    """
    out = np.zeros((K, X.shape[1]))
    # a quarter of the rows (at least 64) up to the cap: small data take a few blocks too,
    # so that the block's one-hot matrix stays small next to X
    step = min(max(16, _SUM_BLOCK // (X.shape[1] + K)), max(64, -(-X.shape[0] // 4)))
    for a in range(0, X.shape[0], step):
        rows = slice(a, a + step)
        yb = y_idx[rows]
        onehot = _onehot(yb, K, None if weights is None else weights[rows])
        if center is None:
            out += onehot @ X[rows]
        else:
            dev = np.take(center, yb, axis=0)  # the rows' class centres, then x - c in place
            np.subtract(X[rows], dev, out=dev)
            dev *= dev
            out += onehot @ dev
    return out


def within_class_scatter(X: np.ndarray, y_idx: np.ndarray, means: np.ndarray) -> np.ndarray:
    """``S_w = Σ_i (x_i - μ_{y_i})(x_i - μ_{y_i})ᵀ``, shape (D, D).

    The residuals are formed block by block and each block adds its Gram matrix, so ``S_w``
    is accumulated from differences (no cancellation against the class means' outer
    products, whatever the offset of the data). Time ``O(N D²)``, extra memory
    ``O(D (D + B))``.
    """
    d = X.shape[1]
    S = np.zeros((d, d))
    for a in range(0, X.shape[0], _BLOCK):
        rows = slice(a, a + _BLOCK)
        R = X[rows] - means[y_idx[rows]]
        S += R.T @ R
    return S


def class_scatters(X: np.ndarray, y_idx: np.ndarray, means: np.ndarray) -> np.ndarray:
    """``S_k = Σ_{i: y_i = k} (x_i - μ_k)(x_i - μ_k)ᵀ`` for every class, shape (K, D, D).

    The rows are visited class by class through one stable sort of the labels, each class in
    blocks of rows gathered, centred in place and added as a Gram matrix: no per-class copy
    of ``X``. Time ``O(N D²)``, extra memory ``O(N + K D² + B D)`` (the sort's indices).
    """
    K, d = means.shape
    order = np.argsort(y_idx, kind="stable")
    bounds = np.zeros(K + 1, dtype=np.int64)
    np.cumsum(np.bincount(y_idx, minlength=K), out=bounds[1:])
    S = np.zeros((K, d, d))
    for k in range(K):
        for a in range(bounds[k], bounds[k + 1], _BLOCK):
            R = X[order[a : min(a + _BLOCK, bounds[k + 1])]]
            R -= means[k]
            S[k] += R.T @ R
    return S
