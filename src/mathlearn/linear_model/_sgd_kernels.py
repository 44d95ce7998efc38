"""Numba kernel of the LMS epoch, for many samples (imported on demand).

Fewer samples take the NumPy route of :mod:`._sgd`; this kernel is compiled (and cached in the
user's cache directory, see :mod:`mathlearn.utils._jit`) only where a problem is large enough
for it to pay for its compilation.
"""

from __future__ import annotations

import numpy as np

from ..utils._jit import njit


@njit()
def _lms_epoch(X, y, order, w, b, etas, alpha, fit_intercept, batch_size):
    """One pass over ``X`` in ``order``: the LMS update per minibatch, in place on ``w``.

    ``etas[k]`` is the step size of the ``k``-th minibatch of the pass.

    Returns the intercept and the mean loss ``1/2 r^2`` seen in the pass (each residual taken
    before the update it drives, as scikit-learn reports it).
    """
    n, d = X.shape
    grad = np.empty(d)
    loss = 0.0
    for k_batch, start in enumerate(range(0, n, batch_size)):
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
        eta = etas[k_batch]
        m = stop - start
        for j in range(d):
            # w <- w + eta [ (t_n - w^T phi_n) phi_n - alpha w ]   (averaged over the batch)
            w[j] += eta * (grad[j] / m - alpha * w[j])
        if fit_intercept:
            b += eta * grad_b / m
    return b, loss / n
