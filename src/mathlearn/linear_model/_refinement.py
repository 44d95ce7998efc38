"""Least squares to full float64 accuracy on ill-conditioned designs.

Householder QR is backward stable, so its solution carries a forward error of about
``cond(X) * eps`` (and ``cond(X)^2 * eps`` in the residual-dependent part); on raw polynomial
features with ``cond ~ 1e15`` that is no digit at all. We recover the digits with Björck's
iterative refinement of the augmented system

    [ I   X ] [r]   [y]
    [ X^T 0 ] [b] = [0],

whose corrections are solved with the QR factors of the column-equilibrated design and whose
residuals ``f = y - r - X b`` and ``g = -X^T r`` are computed in twice the working precision
(error-free transformations TwoSum/TwoProd, i.e. Ogita–Rump–Oishi's Dot2, with a fused
multiply-add for the product error). Each step contracts the error by about
``cond(X D) * eps`` where ``D`` is the equilibration, so a few steps reach the float64
rounding of the exact least-squares solution of the given float64 data.

References: Å. Björck, "Iterative refinement of linear least squares solutions I", BIT 7
(1967); T. Ogita, S. M. Rump, S. Oishi, "Accurate sum and dot product", SIAM J. Sci. Comput.
26 (2005). The normal equations of the notes (seeds/000 eq. 1.158, seeds/001 L145) are never
formed: their condition number is ``cond(X)^2``.
"""

from __future__ import annotations

import warnings

import numba
import numpy as np
import scipy.linalg as sla
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from scipy.linalg import lapack

from ..exceptions import NumericalWarning

__all__ = ["accurate_lstsq"]

_EPS = np.finfo(np.float64).eps
# Below this reciprocal condition number of the equilibrated R no digit of the solution is
# determined: the design is numerically rank deficient. Above it, refinement is tried; between
# it and max(n, k) * eps (LAPACK's usual threshold, which grows with N) a refinement that
# stalls also means rank deficiency. A threshold growing with N alone would send, e.g.,
# degree-12 monomials on 20 000 points (full rank, cond(X D) ~ 1e11) to the SVD and lose
# every digit.
_RANK_TOL = _EPS


@intrinsic
def _fma(typingctx, a, b, c):
    """Correctly rounded ``a * b + c`` (LLVM's ``llvm.fma.f64``)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        d = ir.DoubleType()
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(d, [d, d, d]), "llvm.fma.f64"
        )
        return builder.call(fn, args)

    return sig, codegen


@numba.njit(cache=True, parallel=True)
def _residuals_dd(A, y, r, x, intercept, n_chunks):
    """``f = y - r - A x`` and ``g = -A^T r`` in doubled precision, rounded to float64.

    ``A`` is (n, m) C-contiguous; with ``intercept`` the coefficient vector ``x`` has one more
    entry, the coefficient of an implicit column of ones.
    """
    n, m = A.shape
    f = np.empty(n)
    g_hi = np.zeros((n_chunks, m + 1))
    g_lo = np.zeros((n_chunks, m + 1))
    x0 = x[m] if intercept else 0.0
    for c in numba.prange(n_chunks):
        start = c * n // n_chunks
        stop = (c + 1) * n // n_chunks
        gh = g_hi[c]
        gl = g_lo[c]
        for i in range(start, stop):
            # s + e accumulates y_i - r_i - sum_j A_ij x_j; two interleaved chains for ILP.
            s0 = y[i]
            t = -r[i]
            s1 = s0 + t
            z = s1 - s0
            e0 = (s0 - (s1 - z)) + (t - z)
            s0 = s1
            s1 = -x0
            e1 = 0.0
            ri = r[i]
            for j in range(0, m - 1, 2):
                a0 = A[i, j]
                a1 = A[i, j + 1]
                p0 = -a0 * x[j]
                q0 = _fma(-a0, x[j], -p0)
                p1 = -a1 * x[j + 1]
                q1 = _fma(-a1, x[j + 1], -p1)
                u0 = s0 + p0
                z0 = u0 - s0
                e0 += (s0 - (u0 - z0)) + (p0 - z0) + q0
                s0 = u0
                u1 = s1 + p1
                z1 = u1 - s1
                e1 += (s1 - (u1 - z1)) + (p1 - z1) + q1
                s1 = u1
            if m % 2 == 1:
                a0 = A[i, m - 1]
                p0 = -a0 * x[m - 1]
                q0 = _fma(-a0, x[m - 1], -p0)
                u0 = s0 + p0
                z0 = u0 - s0
                e0 += (s0 - (u0 - z0)) + (p0 - z0) + q0
                s0 = u0
            u0 = s0 + s1
            z0 = u0 - s0
            f[i] = u0 + ((s0 - (u0 - z0)) + (s1 - z0) + e0 + e1)
            # g_j -= A_ij r_i, vectorised over j.
            for j in range(m):
                p = -A[i, j] * ri
                q = _fma(-A[i, j], ri, -p)
                u = gh[j] + p
                z = u - gh[j]
                gl[j] += (gh[j] - (u - z)) + (p - z) + q
                gh[j] = u
            if intercept:
                p = -ri
                u = gh[m] + p
                z = u - gh[m]
                gl[m] += (gh[m] - (u - z)) + (p - z)
                gh[m] = u
    k = m + 1 if intercept else m
    g = np.empty(k)
    for j in range(k):
        s = 0.0
        e = 0.0
        for c in range(n_chunks):
            for v in (g_hi[c, j], g_lo[c, j]):
                u = s + v
                z = u - s
                e += (s - (u - z)) + (v - z)
                s = u
        g[j] = s + e
    return f, g


def _chunks(n):
    return max(1, min(n, 8 * numba.get_num_threads()))


def _pow2_scale(norms):
    """Powers of two close to ``1 / norms``: scaling by them is exact."""
    scale = np.ones_like(norms)
    ok = norms > 0
    scale[ok] = np.exp2(-np.round(np.log2(norms[ok])))
    return scale


def accurate_lstsq(A, y, *, intercept: bool = False, max_iter: int = 30):
    """Least-squares coefficients of ``min ||y - A b (- b0)||`` to float64 accuracy.

    Parameters
    ----------
    A : ndarray of shape (n, m), float64
    y : ndarray of shape (n,), float64
    intercept : bool
        Add an implicit column of ones (its coefficient is returned last).
    max_iter : int
        Maximum number of refinement steps.

    Returns
    -------
    coef : ndarray of shape (m + intercept,)
    residual : ndarray of shape (n,)
        ``y - A coef``, accurate to working precision.
    R_inv_diag_sq : ndarray of shape (m + intercept,) or None
        Diagonal of ``(A^T A)^{-1}``; ``None`` when ``A`` is numerically rank deficient.
    rank : int
    n_iter : int
        Refinement steps taken.
    """
    A = np.ascontiguousarray(A, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    n, m = A.shape
    k = m + int(intercept)
    norms = np.sqrt(np.einsum("ij,ij->j", A, A))
    if intercept:
        norms = np.append(norms, np.sqrt(n))
    d = _pow2_scale(norms)
    As = np.empty((n, k), order="F")
    np.multiply(A, d[:m], out=As[:, :m])
    if intercept:
        As[:, m] = d[m]
    if n < k:
        return _svd_fallback(A, y, intercept)
    qr, tau, _, _ = lapack.dgeqrf(As, lwork=max(1, 64 * k), overwrite_a=True)
    R = np.triu(qr[:k, :k])
    # Rank test on the equilibrated factor: a reciprocal condition number at rounding level
    # means no digit of the solution is determined; take the minimum-norm solution instead.
    rcond, _ = lapack.dtrcon(R, norm="1", uplo="U")
    borderline = not rcond > max(n, k) * _EPS
    if not rcond > _RANK_TOL:
        return _svd_fallback(A, y, intercept)

    # lwork=1 selects LAPACK's unblocked dorm2r: for a single vector the blocked code's
    # triangular-factor set-up costs far more than the reflections themselves.
    def q_t(v):
        return lapack.dormqr(b"L", b"T", qr, tau, v[:, None], 1)[0][:, 0]

    def q(v):
        return lapack.dormqr(b"L", b"N", qr, tau, v[:, None], 1)[0][:, 0]

    x = np.zeros(k)  # unscaled coefficients
    r = np.zeros(n)
    f, g = y, np.zeros(k)
    prev = np.inf
    n_iter = 0
    for it in range(max_iter + 1):
        # Solve [I As; As^T 0][dr; dz] = [f; D g] through As = Q R.
        h = q_t(f)
        u = sla.solve_triangular(R, d * g, trans="T", check_finite=False)
        dz = sla.solve_triangular(R, h[:k] - u, check_finite=False)
        h[:k] = u
        dr = q(h)
        dx = d * dz
        x = x + dx
        r = r + dr
        size = np.max(np.abs(dx))
        scale = np.max(np.abs(x))
        n_iter = it
        # Stop when the correction is at rounding level, or when the next one would be
        # (geometric contraction estimated from the last two), or when refinement stalls.
        if it > 0 and (
            size <= _EPS * scale or size * (size / prev) <= _EPS * scale or size > 0.5 * prev
        ):
            break
        prev = size
        f, g = _residuals_dd(A, y, r, x, intercept, _chunks(n))
    if size > np.sqrt(_EPS) * scale:
        if borderline:
            # refinement cannot settle a numerically rank-deficient design
            return _svd_fallback(A, y, intercept)
        warnings.warn(
            "Iterative refinement of the least-squares solution did not converge: the "
            "design is too ill-conditioned even after column equilibration, and the "
            "coefficients may be inaccurate.",
            NumericalWarning,
            stacklevel=3,
        )
    r_inv = sla.solve_triangular(R, np.eye(k), check_finite=False)
    inv_diag = d**2 * np.einsum("ij,ij->i", r_inv, r_inv)
    # The refined r converges to the exact residual together with x (Björck), so it is
    # returned as is rather than recomputed.
    return x, r, inv_diag, k, n_iter


def _svd_fallback(A, y, intercept):
    """Minimum-norm solution (LAPACK gelsd) for rank-deficient designs."""
    n = A.shape[0]
    B = np.hstack([A, np.ones((n, 1))]) if intercept else A
    cond = max(B.shape) * _EPS
    coef, _, rank, _ = sla.lstsq(B, y, cond=cond, lapack_driver="gelsd", check_finite=False)
    return coef, y - B @ coef, None, int(rank), 0
