"""Numba kernel of plain (one rating at a time) SGD for matrix factorisation, for large
inputs (imported on demand).

One rating's update depends on the previous one's, so an epoch cannot be vectorised in
NumPy; small problems run the same arithmetic in a Python loop (:mod:`._sgd`), large ones
this compiled loop (cached in the user's cache directory, see :mod:`mathlearn.utils._jit`).
"""

from __future__ import annotations

from ..utils._jit import njit


@njit(cache=True, nogil=True)
def sgd_epoch(users, items, values, P, Q, bu, bi, mu, lr, lam, biases):  # pragma: no cover
    """One pass of updates (6.3)-(6.4) with biases over the ratings in the order given (the
    caller permutes the arrays: sequential reads, no cache miss per rating), in place."""
    k = P.shape[1]
    for idx in range(values.shape[0]):
        u = users[idx]
        i = items[idx]
        dot = 0.0
        for f in range(k):
            dot += P[u, f] * Q[i, f]
        e = values[idx] - mu - bu[u] - bi[i] - dot
        if biases:
            bu[u] += lr * (e - lam * bu[u])
            bi[i] += lr * (e - lam * bi[i])
        for f in range(k):
            pf = P[u, f]
            qf = Q[i, f]
            P[u, f] = pf + lr * (e * qf - lam * pf)
            Q[i, f] = qf + lr * (e * pf - lam * qf)
