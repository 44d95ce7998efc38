"""Numba kernel of the LMS epoch, for many samples (imported on demand).

Fewer samples take the NumPy route of :mod:`._sgd`; this kernel is compiled (and cached in the
user's cache directory, see :mod:`mathlearn.utils._jit`) only where a problem is large enough
for it to pay for its compilation.
"""

from __future__ import annotations

import numpy as np

from ..utils._jit import njit


@njit()
def _lms_epoch(X, y, order, w, b, t, eta0, power_t, mode, t0, alpha, fit_intercept, batch_size):
    """One pass over ``X`` in ``order``: the LMS update per minibatch, in place on ``w``.

    Returns the intercept, the update counter and the mean loss ``1/2 r^2`` seen in the pass
    (each residual taken before the update it drives, as scikit-learn reports it).
    """
    n, d = X.shape
    grad = np.empty(d)
    loss = 0.0
    for start in range(0, n, batch_size):
        stop = min(start + batch_size, n)
        grad[:] = 0.0
        grad_b = 0.0
        for k in range(start, stop):
            i = order[k]
            r = y[i] - b
            for j in range(d):
                r -= X[i, j] * w[j]
            loss += 0.5 * r * r
            for j in range(d):
                grad[j] += r * X[i, j]
            grad_b += r
        t += 1
        if mode == 0:
            eta = eta0
        elif mode == 1:
            eta = eta0 / t**power_t
        else:
            eta = eta0 / (1.0 + (t - 1) / t0)
        m = stop - start
        for j in range(d):
            # w <- w + eta [ (t_n - w^T phi_n) phi_n - alpha w ]   (averaged over the batch)
            w[j] += eta * (grad[j] / m - alpha * w[j])
        if fit_intercept:
            b += eta * grad_b / m
    return b, t, loss / n
