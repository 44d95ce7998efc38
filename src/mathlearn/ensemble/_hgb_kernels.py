"""Numba kernels of histogram gradient boosting, for large inputs (imported on demand).

Small inputs take the NumPy routes of :mod:`._hist_gradient_boosting` (one ``bincount`` per
statistic, cumulative sums for the split gains); these kernels are compiled (and cached in
the user's cache directory, see :mod:`mathlearn.utils._jit`) only when a problem is large
enough for them to pay for their compilation. Both routes add the same numbers in the same
order (rows in index order per bin; bins in order per feature), so they agree exactly.
"""

from __future__ import annotations

import numpy as np

from ..utils._jit import njit


@njit(cache=True, nogil=True)
def histogram(Xb, idx, g, h, n_bins, const_h):  # pragma: no cover - compiled
    """(3, d, B) sums of ``g``, ``h`` and counts over the rows ``idx``.

    ``const_h > 0`` means every hessian equals it (squared error with equal weights); the
    hessian sums are then ``const_h`` times the counts.
    """
    d = Xb.shape[1]
    hist = np.zeros((3, d, n_bins))
    if const_h > 0.0:
        for t in range(idx.shape[0]):
            i = idx[t]
            gi = g[i]
            for j in range(d):
                b = Xb[i, j]
                hist[0, j, b] += gi
                hist[2, j, b] += 1.0
        for j in range(d):
            for b in range(n_bins):
                hist[1, j, b] = hist[2, j, b] * const_h
    else:
        for t in range(idx.shape[0]):
            i = idx[t]
            gi = g[i]
            hi = h[i]
            for j in range(d):
                b = Xb[i, j]
                hist[0, j, b] += gi
                hist[1, j, b] += hi
                hist[2, j, b] += 1.0
    return hist


@njit(cache=True, nogil=True)
def best_split(hist, msl, min_hess, lam):  # pragma: no cover - compiled
    """``(gain, feature, bin)`` of the best ``bin <= b`` split; feature -1 if none is valid."""
    d, B = hist.shape[1], hist.shape[2]
    G, H, N = 0.0, 0.0, 0.0
    for b in range(B):
        G += hist[0, 0, b]
        H += hist[1, 0, b]
        N += hist[2, 0, b]
    parent = G * G / (H + lam)
    best, bj, bb = -np.inf, -1, -1
    for j in range(d):
        GL, HL, NL = 0.0, 0.0, 0.0
        for b in range(B - 1):
            GL += hist[0, j, b]
            HL += hist[1, j, b]
            NL += hist[2, j, b]
            GR, HR, NR = G - GL, H - HL, N - NL
            if NL < msl or NR < msl or HL < min_hess or HR < min_hess:
                continue
            if HL + lam <= 0.0 or HR + lam <= 0.0:
                continue
            gain = GL * GL / (HL + lam) + GR * GR / (HR + lam) - parent
            if gain > best:
                best, bj, bb = gain, j, b
    return best, bj, bb, parent
