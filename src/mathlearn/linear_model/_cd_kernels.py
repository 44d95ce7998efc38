"""Numba kernels of the lasso's coordinate descent, for large problems (imported on demand).

Problems with few features take the NumPy route of :mod:`._coordinate_descent`; these kernels
are compiled (and cached in the user's cache directory, see :mod:`mathlearn.utils._jit`) only
where a problem is large enough for them to pay for their compilation.
"""

from __future__ import annotations

import numpy as np

from ..utils._jit import njit


@njit()
def _gap_gram(w, q, Xty, yty, alpha_n, positive):
    """Duality gap from ``q = X^T r``; ``||r||^2 = y^T y - w^T X^T y - w^T q``."""
    wXty = 0.0
    wq = 0.0
    l1 = 0.0
    dual_norm = 0.0
    for j in range(w.shape[0]):
        wXty += w[j] * Xty[j]
        wq += w[j] * q[j]
        l1 += abs(w[j])
        # with w >= 0 only x_j^T r <= N alpha constrains the dual point
        dual_norm = max(dual_norm, q[j] if positive else abs(q[j]))
    r2 = max(yty - wXty - wq, 0.0)
    ry = yty - wXty
    return _gap(r2, ry, l1, dual_norm, alpha_n)


@njit()
def _gap(r2, ry, l1, dual_norm, alpha_n):
    # Dual point nu = r * const with const = min(1, N alpha / ||X^T r||_inf).
    if dual_norm > alpha_n:
        const = alpha_n / dual_norm
        gap = 0.5 * (r2 + r2 * const * const)
    else:
        const = 1.0
        gap = r2
    return gap + alpha_n * l1 - const * ry


@njit()
def _cd_gram(G, Xty, yty, w, alpha_n, max_iter, tol, positive):
    """Coordinate descent on the Gram matrix; ``w`` is updated in place."""
    m = w.shape[0]
    q = Xty - G @ w  # X^T r
    gap = tol + 1.0
    n_iter = 0
    for it in range(max_iter):
        n_iter = it + 1
        w_max = 0.0
        d_w_max = 0.0
        for j in range(m):
            gjj = G[j, j]
            if gjj == 0.0:
                continue
            w_j = w[j]
            rho = q[j] + gjj * w_j
            if rho > alpha_n:
                new = (rho - alpha_n) / gjj
            elif rho < -alpha_n and not positive:
                new = (rho + alpha_n) / gjj
            else:
                new = 0.0
            delta = new - w_j
            if delta != 0.0:
                for k in range(m):
                    q[k] -= G[k, j] * delta
                w[j] = new
            d_w_max = max(d_w_max, abs(delta))
            w_max = max(w_max, abs(new))
        if w_max == 0.0 or d_w_max / w_max < tol or it == max_iter - 1:
            # recompute q from scratch so that rounding drift cannot fake convergence
            q = Xty - G @ w
            gap = _gap_gram(w, q, Xty, yty, alpha_n, positive)
            if gap < tol * max(yty, 1e-300):
                break
    return gap, n_iter


@njit(fastmath=True)
def _cd_residual(X, y, w, alpha_n, max_iter, tol, positive):
    """Coordinate descent on the residual ``r = y - X w`` (X Fortran-ordered)."""
    n, m = X.shape
    norms = np.empty(m)
    for j in range(m):
        s = 0.0
        for i in range(n):
            s += X[i, j] * X[i, j]
        norms[j] = s
    r = y - X @ w
    yty = 0.0
    for i in range(n):
        yty += y[i] * y[i]
    gap = tol + 1.0
    n_iter = 0
    for it in range(max_iter):
        n_iter = it + 1
        w_max = 0.0
        d_w_max = 0.0
        for j in range(m):
            if norms[j] == 0.0:
                continue
            w_j = w[j]
            rho = 0.0
            for i in range(n):
                rho += X[i, j] * r[i]
            rho += norms[j] * w_j
            if rho > alpha_n:
                new = (rho - alpha_n) / norms[j]
            elif rho < -alpha_n and not positive:
                new = (rho + alpha_n) / norms[j]
            else:
                new = 0.0
            delta = new - w_j
            if delta != 0.0:
                for i in range(n):
                    r[i] -= X[i, j] * delta
                w[j] = new
            d_w_max = max(d_w_max, abs(delta))
            w_max = max(w_max, abs(new))
        if w_max == 0.0 or d_w_max / w_max < tol or it == max_iter - 1:
            r = y - X @ w
            r2 = 0.0
            ry = 0.0
            for i in range(n):
                r2 += r[i] * r[i]
                ry += r[i] * y[i]
            dual_norm = 0.0
            l1 = 0.0
            for j in range(m):
                s = 0.0
                for i in range(n):
                    s += X[i, j] * r[i]
                dual_norm = max(dual_norm, s if positive else abs(s))
                l1 += abs(w[j])
            gap = _gap(r2, ry, l1, dual_norm, alpha_n)
            if gap < tol * max(yty, 1e-300):
                break
    return gap, n_iter
