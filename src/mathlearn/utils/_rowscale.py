"""Row-scaled evaluation of linear maps, for inputs near the float64 overflow threshold."""

from __future__ import annotations

import numpy as np

# Below this size (float32 included: 1e30 < 3.4e38) a difference and the products of a
# linear map with moderate coefficients do not overflow, and no rescaling is needed.
_SAFE = 1e30


def centred_linear_map(X: np.ndarray, mean: np.ndarray, f, *, what: str = "the result"):
    """``f(X - mean)`` for a map ``f`` that is linear in each row, safe near overflow.

    Rows of large entries are divided by ``s_i = max(max_j |x_ij|, max_j |mean_j|)`` before
    the subtraction and ``f``, and the result multiplied back by ``s_i``: exact by linearity, and
    neither ``x - mean`` nor the products inside ``f`` overflow for rows of size up to the
    float64 maximum. When the result itself is beyond the float64 range, a ``ValueError``
    says so instead of returning ``inf`` or NaN.
    """
    X = np.asarray(X)
    mean = np.asarray(mean, dtype=X.dtype)
    big = max(np.max(np.abs(X)) if X.size else 0, np.max(np.abs(mean)) if mean.size else 0)
    # Overflow is detected below, from the result.
    with np.errstate(over="ignore", invalid="ignore"):
        if big <= _SAFE:
            Z = f(X - mean)
            s = np.full((X.shape[0], 1), big)
        else:
            s = np.max(np.abs(X), axis=1) if X.shape[1] else np.zeros(X.shape[0], X.dtype)
            s = np.maximum(s, np.max(np.abs(mean)) if mean.size else 0)
            s = np.where(s > 0, s, 1).astype(X.dtype, copy=False)[:, None]
            Z = f(X / s - mean / s) * s
    if not np.all(np.isfinite(Z)):
        rows = np.flatnonzero(~np.all(np.isfinite(Z), axis=1))
        raise ValueError(
            f"{what} of row {rows[0]} of X (entries up to {float(s[rows[0], 0]):.3g}) exceeds "
            f"the {np.dtype(Z.dtype).name} range."
        )
    return Z
