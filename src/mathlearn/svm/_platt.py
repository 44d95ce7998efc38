"""Class probabilities for SVMs: Platt's sigmoid on held-out decision values, pairwise coupling.

Platt (1999, "Probabilistic outputs for support vector machines") models
``P(y = +1 | f) = 1 / (1 + exp(A f + B))`` for a decision value ``f`` and fits ``(A, B)`` by
maximum likelihood on decision values the machine did not train on (here from an internal
5-fold cross-validation), with the regularised targets ``t_+ = (N_+ + 1) / (N_+ + 2)`` and
``t_- = 1 / (N_- + 2)``. The fit is Newton's method with a backtracking line search on the
convex cross-entropy, written with ``log(1 + exp(.))`` evaluated stably (Lin, Lin and Weng,
2007, "A note on Platt's probabilistic outputs for support vector machines").

For ``K > 2`` classes, the pairwise estimates ``r_ij ~ P(i | i or j, x)`` are coupled into
one distribution ``p`` by the second method of Wu, Lin and Weng (2004, "Probability
estimates for multi-class classification by pairwise coupling"):
``min_p sum_i sum_{j != i} (r_ji p_i - r_ij p_j)^2`` subject to ``sum_i p_i = 1``, whose
optimum solves the ``(K + 1) x (K + 1)`` linear system ``[Q e; e^T 0] [p; b] = [0; 1]``
with ``Q_ii = sum_{j != i} r_ji^2`` and ``Q_ij = -r_ji r_ij`` (and is non-negative).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit


def _nll(A, B, f, target):
    z = A * f + B
    # -[t log p + (1 - t) log(1 - p)] with p = 1 / (1 + exp(z)): log(1 + e^z) - (1 - t) z.
    return float(np.sum(np.logaddexp(0.0, z) - (1.0 - target) * z))


def platt_sigmoid(f, y, *, max_iter: int = 100) -> tuple[float, float]:
    """Fit ``(A, B)`` of ``P(y = 1 | f) = 1 / (1 + exp(A f + B))``.

    Parameters
    ----------
    f : ndarray of shape (n,)
        Held-out decision values.
    y : ndarray of shape (n,) of bool
        Whether each sample is of the positive class.

    Returns
    -------
    (A, B) : tuple of float
    """
    n_pos = int(np.sum(y))
    n_neg = y.shape[0] - n_pos
    target = np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    A, B = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
    value = _nll(A, B, f, target)
    for _ in range(max_iter):
        p = expit(-(A * f + B))  # P(y = 1 | f)
        d1 = target - p  # derivative of the loss with respect to z = A f + B
        w = p * (1.0 - p)
        g = np.array([np.sum(d1 * f), np.sum(d1)])
        if np.max(np.abs(g)) < 1e-10 * max(1.0, y.shape[0]):
            break
        H = np.array([[np.sum(w * f * f), np.sum(w * f)], [np.sum(w * f), np.sum(w)]])
        H[np.diag_indices(2)] += 1e-12
        step = -np.linalg.solve(H, g)
        t = 1.0
        while t >= 1e-10:
            new = _nll(A + t * step[0], B + t * step[1], f, target)
            if new < value + 1e-4 * t * (g @ step):
                break
            t /= 2.0
        else:
            break
        A, B, value = A + t * step[0], B + t * step[1], new
    return float(A), float(B)


def sigmoid_probability(f, A, B):
    """``1 / (1 + exp(A f + B))``, without overflow."""
    return expit(-(A * f + B))


def couple_pairwise(r):
    """Class probabilities from pairwise ones by Wu, Lin and Weng's second method.

    Parameters
    ----------
    r : ndarray of shape (n_samples, K, K)
        ``r[:, i, j] ~ P(i | i or j)``, with ``r[:, j, i] = 1 - r[:, i, j]``.

    Returns
    -------
    p : ndarray of shape (n_samples, K)
    """
    n, K, _ = r.shape
    rt = np.swapaxes(r, 1, 2)  # rt[:, i, j] = r_ji
    Q = -rt * r
    idx = np.arange(K)
    Q[:, idx, idx] = 0.0
    Q[:, idx, idx] = np.sum(rt * rt, axis=2) - rt[:, idx, idx] ** 2
    M = np.zeros((n, K + 1, K + 1))
    M[:, :K, :K] = Q
    M[:, :K, K] = 1.0
    M[:, K, :K] = 1.0
    rhs = np.zeros((n, K + 1))
    rhs[:, K] = 1.0
    p = np.linalg.solve(M, rhs[..., None])[:, :K, 0]
    p = np.clip(p, 0.0, None)  # the solution is non-negative; clip rounding below zero
    return p / p.sum(axis=1, keepdims=True)
