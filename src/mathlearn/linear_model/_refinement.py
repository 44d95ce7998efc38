"""Least squares to full float64 accuracy on ill-conditioned designs.

Householder QR is backward stable, so its solution carries a forward error of about
``cond(X) * eps`` (and ``cond(X)^2 * eps`` in the residual-dependent part); on raw polynomial
features with ``cond ~ 1e15`` that is no digit at all. We recover the digits with Björck's
iterative refinement of the augmented system

    [ I   X ] [r]   [y]
    [ X^T 0 ] [b] = [0],

whose corrections are solved with the QR factors of the column-equilibrated design and whose
residuals ``f = y - r - X b`` and ``g = -X^T r`` are computed in twice the working precision
(error-free transformations: Knuth's TwoSum and Dekker's TwoProduct with Veltkamp's
splitting, i.e. Ogita–Rump–Oishi's Dot2, vectorised in NumPy). Each step contracts the error
by about ``cond(X D) * eps`` where ``D`` is the equilibration, so a few steps reach the
float64 rounding of the exact least-squares solution of the given float64 data.

Refinement runs only where it is needed: when the a priori forward-error bound of the plain
QR solution (Wedin's perturbation bound, ``eps kappa (2 ||z|| + (kappa + 1) ||r|| / ||A D||)``
in the 2-norm) is already below ``2^-48`` relative to the largest coefficient, that solution
is returned as is (a well-conditioned design whose residual is not large against the fit).
The bound is first evaluated with LAPACK's estimate of the 1-norm condition number of ``R``
(``dtrcon``, ``O(k^2)``); where that calls for refinement and ``k <= 64`` or ``n >= 8 k``,
it is evaluated again with the singular values of the ``k x k`` factor (``O(k^3)``), since
the 1-norm estimate can overstate ``kappa_2`` by up to a factor ``k``.

References: Å. Björck, "Iterative refinement of linear least squares solutions I", BIT 7
(1967); T. Ogita, S. M. Rump, S. Oishi, "Accurate sum and dot product", SIAM J. Sci. Comput.
26 (2005). The normal equations of the notes (Imperial
"Mathematics for Inference and Machine Learning" eq. 1.158; PRML eq. 3.15) are never formed: their
condition number is ``cond(X)^2``.
"""

from __future__ import annotations

import ctypes
import warnings
from collections.abc import Callable

import numpy as np
import scipy.linalg as sla
from scipy.linalg import blas, lapack

from .. import _ext
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
# Refinement is skipped where the a priori error bound of the plain QR solution is below
# this (see accurate_lstsq).
_SKIP_TOL = 2.0**-48
_TINY = np.finfo(np.float64).tiny
# The singular values of R sharpen the bound where n >= _SVD_MIN_RATIO k (their O(k^3) is
# then small against the O(n k^2) of the QR) or k <= _SVD_MAX_K.
_SVD_MIN_RATIO = 8
_SVD_MAX_K = 64


_SPLITTER = 134217729.0  # 2^27 + 1 (Veltkamp's splitting constant for float64)


def _split(a):
    """Veltkamp's split ``a = hi + lo`` with 26-bit halves: ``hi * hi'`` is exact."""
    c = _SPLITTER * a
    hi = c - (c - a)
    return hi, a - hi


def _sum2(P, E):
    """Sums over axis 0 of the terms ``P + E`` in doubled precision, rounded to float64.

    Pairwise reduction with TwoSum (Knuth): the rounding error of every addition of ``P``
    is kept and accumulated, with the product errors ``E``, in plain arithmetic. The result
    is as accurate as if the sum were computed in twice the working precision and rounded
    (Ogita-Rump-Oishi's Sum2, in tree order).
    """
    while P.shape[0] > 1:
        h = P.shape[0] // 2
        a, b = P[:h], P[h : 2 * h]
        s = a + b
        z = s - a
        err = (a - (s - z)) + (b - z)
        err += E[:h]
        err += E[h : 2 * h]
        if P.shape[0] % 2:
            s = np.concatenate([s, P[2 * h :]])
            err = np.concatenate([err, E[2 * h :]])
        P, E = s, err
    return P[0] + E[0]


def _pow2_scale_of(*arrays):
    """A power of two that brings the largest magnitude of ``arrays`` to about 1 (exact)."""
    top = max(float(np.max(np.abs(a), initial=0.0)) for a in arrays)
    if not top > 0 or not np.isfinite(top):
        return 1.0
    return float(np.exp2(-np.ceil(np.log2(top))))


def _residuals_dd(AT, AT_hi, AT_lo, y, r, z):
    """``f = y - r - A z`` and ``g = -A^T r`` in doubled precision, rounded to float64.

    ``AT`` is the transposed (equilibrated) design, shape (k, n), with its Veltkamp split;
    its entries are at most 1 in magnitude. The products ``A_ij z_j`` and ``A_ij r_i`` are
    split exactly into a float64 product and its rounding error (Dekker's TwoProduct, which
    needs no fused multiply-add), and the sums are accumulated by :func:`_sum2`. ``y``, ``r``
    and ``z`` are scaled by a power of two first, so that the splits cannot overflow.
    """
    s = _pow2_scale_of(y, r, z)
    ys, rs, zs = y * s, r * s, z * s
    zh, zl = _split(zs)
    zh, zl, zc = zh[:, None], zl[:, None], zs[:, None]
    P = np.empty((AT.shape[0] + 2, AT.shape[1]))
    E = np.zeros_like(P)
    P[0] = ys
    P[1] = -rs
    p = P[2:]
    np.multiply(AT, zc, out=p)
    E[2:] = ((AT_hi * zh - p) + AT_hi * zl + AT_lo * zh) + AT_lo * zl
    np.negative(p, out=p)
    np.negative(E[2:], out=E[2:])
    f = _sum2(P, E) / s
    t = _pow2_scale_of(r)
    rt = r * t
    rh, rl = _split(rt)
    p = AT * rt
    e = ((AT_hi * rh - p) + AT_hi * rl + AT_lo * rh) + AT_lo * rl
    # (n, k) C-contiguous: the sums run over the samples
    g = -_sum2(np.ascontiguousarray(p.T), np.ascontiguousarray(e.T)) / t
    return f, g


def _compiled_residuals():
    """The compiled residual pass of :mod:`mathlearn._ext` (``_refine.c``), typed, or None
    where it was not built (the NumPy route of :func:`_residuals_dd` computes the same)."""
    lib = _ext.load("_refine")
    if lib is None:
        return None
    fn = lib.refine_residuals
    if fn.argtypes is None:
        fn.restype = None
        fn.argtypes = [ctypes.c_int64, ctypes.c_int64] + [ctypes.c_void_p] * 5
        fn.argtypes += [ctypes.c_int] + [ctypes.c_void_p] * 3
    return fn


def _residuals_dd_compiled(fn, A, y, r, x, intercept):
    """``f = y - r - A x (- x0)`` and ``g = -A^T r`` (``-sum r`` last with an intercept) in
    doubled precision by the compiled pass over the rows of ``A`` (C-contiguous, unscaled:
    no equilibrated or split copy of ``A`` is made). ``y``, ``r`` and ``x`` are scaled by
    powers of two first, so that the splits cannot overflow."""
    n, m = A.shape
    s = _pow2_scale_of(y, r, x)
    t = _pow2_scale_of(r)
    ys, rs, xs, rt = y * s, r * s, x * s, r * t
    f, g = np.empty(n), np.empty(m + int(intercept))
    work = np.empty(2 * (m + 1))
    fn(n, m, A.ctypes.data, ys.ctypes.data, rs.ctypes.data, xs.ctypes.data, rt.ctypes.data,
       int(intercept), f.ctypes.data, g.ctypes.data, work.ctypes.data)  # fmt: skip
    return f / s, g / t


def _pow2_scale(norms):
    """Powers of two close to ``1 / norms``: scaling by them is exact."""
    scale = np.ones_like(norms)
    ok = norms > 0
    scale[ok] = np.exp2(-np.round(np.log2(norms[ok])))
    return scale


def refinement_needed(R, rcond, z, r_norm, d, n) -> bool:
    """Whether the plain QR solution ``x = D z`` may miss digits that refinement would give.

    A priori forward-error bound of that solution (Wedin's perturbation bound for a backward
    error of order eps in each column of the equilibrated design ``As = A D = Q R``):

        ||dz|| <~ eps kappa (2 ||z|| + (kappa + 1) ||r|| / ||As||),

    first with ``kappa = 1 / rcond`` (LAPACK's estimate of the 1-norm condition number of
    ``R``) and ``||As|| >= ||R||_F / sqrt(k)``; the coefficients ``x = D z`` then err by at
    most ``max(D) ||dz||`` in each entry. Where that is not below ``2^-48 max|x|`` and
    ``k <= 64`` or ``n >= 8 k``, the bound is evaluated again in the 2-norm with the
    singular values of the ``k x k`` factor (the 1-norm estimate can overstate
    ``kappa_2(R)`` by up to a factor ``k``, and ``||R||_F / sqrt(k)`` understates
    ``||As||_2``): ``O(k^3)``, cheap against the QR when ``n >= 8 k`` and against a
    refinement step for small ``k``. Used by the NumPy and the Dask paths alike.

    Parameters
    ----------
    R : ndarray of shape (k, k)
        Triangular factor of the equilibrated design.
    rcond : float
        LAPACK's reciprocal 1-norm condition number estimate of ``R`` (``dtrcon``).
    z : ndarray of shape (k,)
        QR solution of the equilibrated problem.
    r_norm : float
        Norm of its residual, ``||(Q^T y)[k:]||``.
    d : ndarray of shape (k,)
        The column equilibration (powers of two).
    n : int
        Number of rows of the design.

    Returns
    -------
    bool
    """
    k = R.shape[0]
    z_norm = np.linalg.norm(z)
    target = _SKIP_TOL * np.max(np.abs(d * z)) / np.max(d)
    kappa = 1.0 / rcond
    err_z = (
        _EPS
        * kappa
        * (2.0 * z_norm + (kappa + 1.0) * r_norm * np.sqrt(k) / max(np.linalg.norm(R), _TINY))
    )
    if not err_z <= target and (k <= _SVD_MAX_K or _SVD_MIN_RATIO * k <= n):
        # Up to 128 columns LAPACK's bidiagonalisation runs unblocked whatever the work
        # array: its minimum for singular values alone, 10 k entries, gives the same values
        # as the wrapper's default (8 kB at k = 21).
        lwork = {"lwork": 10 * k} if k <= 128 else {}
        sv = lapack.dgesdd(R, compute_uv=0, **lwork)[1]
        if sv[-1] > 0:
            kappa = sv[0] / sv[-1]
            err_z = _EPS * kappa * (2.0 * z_norm + (kappa + 1.0) * r_norm / sv[0])
    return not err_z <= target


def geqrf_lwork(k: int) -> int:
    """A work-array length for LAPACK ``dgeqrf`` on ``k = min(rows, columns)`` columns.

    ``dgeqrf`` runs the blocked code only where ``k`` exceeds the crossover ``ILAENV(3)``
    (128 in the reference ``ilaenv``, which OpenBLAS ships) and the unblocked ``dgeqr2``,
    which needs ``k`` entries of work, otherwise, whatever ``lwork`` it is given: up to 128
    columns, the minimum gives the same factors without a ``64 k`` array (10 kB at
    ``k = 21``, written by the wrapper). Beyond, ``64 k`` lets the blocked code run
    (``NB = 32``).
    """
    return max(1, k) if k <= 128 else 64 * k


def accurate_lstsq(
    A, y, *, intercept: bool = False, max_iter: int = 30, rebuild: Callable | None = None
):
    """Least-squares coefficients of ``min ||y - A b (- b0)||`` to float64 accuracy.

    Parameters
    ----------
    A : ndarray of shape (n, m), float64
    y : ndarray of shape (n,), float64
    intercept : bool
        Add an implicit column of ones (its coefficient is returned last).
    max_iter : int
        Maximum number of refinement steps.
    rebuild : callable or None
        ``None``: ``A`` is left as it is and an equilibrated copy of it is factorised.
        Otherwise ``A`` is the caller's scratch array (Fortran-ordered, without
        ``intercept``): it is equilibrated and factorised in place, with no second
        ``n x m`` array, and ``rebuild()`` gives the design again where it is needed after
        that (the refinement steps and the rank-deficient fallback, which only
        ill-conditioned designs reach).

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
    in_place = (
        rebuild is not None
        and not intercept
        and isinstance(A, np.ndarray)
        and A.dtype == np.float64
        and A.ndim == 2
        and A.flags.f_contiguous
        and A.flags.writeable
    )
    if not in_place:
        A = np.ascontiguousarray(A, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    n, m = A.shape
    k = m + int(intercept)
    if n < k:
        return _wide_min_norm(A, y, intercept)
    norms = np.sqrt(np.einsum("ij,ij->j", A, A))
    if intercept:
        norms = np.append(norms, np.sqrt(n))
    d = _pow2_scale(norms)
    if in_place:
        # The same products as the copy below, into the caller's scratch array, a column
        # at a time (BLAS dscal on its contiguous columns): NumPy would buffer a temporary
        # the size of A for an in-place broadcast product on a small array.
        flat = A.reshape(-1, order="F")
        for j, dj in enumerate(d.tolist()):
            blas.dscal(dj, flat, n=n, offx=j * n)
        As = A
        del A, flat

        def design():
            assert rebuild is not None
            return np.ascontiguousarray(rebuild(), dtype=np.float64)
    else:
        As = np.empty((n, k), order="F")
        # the copy first (NumPy's assignment needs no buffer), then the products in place:
        # a broadcast product from the row-ordered A into it would buffer both operands
        scaled = As[:, :m]
        np.copyto(scaled, A)
        scaled *= d[:m]
        del scaled
        if intercept:
            As[:, m] = d[m]

        def design():
            return A

    qr, tau, _, _ = lapack.dgeqrf(As, lwork=geqrf_lwork(k), overwrite_a=True)
    # triu(Q) as the transpose of tril(Q^T): Fortran-ordered, without a second copy
    R = np.tril(qr[:k, :k].T).T
    # Rank test on the equilibrated factor: a reciprocal condition number at rounding level
    # means no digit of the solution is determined; take the minimum-norm solution instead.
    rcond, _ = lapack.dtrcon(R, norm="1", uplo="U")
    borderline = not rcond > max(n, k) * _EPS
    if not rcond > _RANK_TOL:
        return _svd_fallback(design(), y, intercept)

    # lwork=1 selects LAPACK's unblocked dorm2r: for a single vector the blocked code's
    # triangular-factor set-up costs far more than the reflections themselves.
    def q_t(v):
        return lapack.dormqr(b"L", b"T", qr, tau, v[:, None], 1)[0][:, 0]

    def q(v):
        return lapack.dormqr(b"L", b"N", qr, tau, v[:, None], 1)[0][:, 0]

    # LAPACK's trtrs directly: SciPy's solve_triangular costs ten times more for k x k, and
    # with several right-hand sides it goes through a threaded BLAS.
    def r_solve(v, trans=0):
        return lapack.dtrtrs(R, v, trans=trans)[0]

    # First solve, in working precision: z = R^{-1} (Q^T y)[:k], r = Q [0; (Q^T y)[k:]].
    h = q_t(y)
    z = r_solve(h[:k])
    # (einsum, not NumPy's BLAS: between SciPy's LAPACK calls a threaded NumPy dot would
    # wait on SciPy's spinning BLAS workers, see utils._threads.scipy_matmul)
    tail = h[k:]
    refine = refinement_needed(R, rcond, z, np.sqrt(np.einsum("i,i->", tail, tail)), d, n)
    h[:k] = 0.0
    r = q(h)
    n_iter = 0
    size = scale = 0.0
    if refine:
        # Björck's refinement: each step solves [I As; As^T 0][dr; dz] = [f; g] through
        # As = Q R, with f = y - r - As z and g = -As^T r in doubled precision.
        fn = _compiled_residuals()
        A = design()
        if fn is not None:

            def residuals(r, z):
                f, g = _residuals_dd_compiled(fn, A, y, r, d * z, intercept)
                return f, d * g  # -As^T r = D (-A^T r), exactly
        else:
            AT = np.multiply(A.T, d[:m, None]) if not intercept else np.empty((k, n))
            if intercept:
                np.multiply(A.T, d[:m, None], out=AT[:m])
                AT[m] = d[m]
            AT_hi, AT_lo = _split(AT)

            def residuals(r, z):
                return _residuals_dd(AT, AT_hi, AT_lo, y, r, z)

        prev = np.max(np.abs(d * z))
        for it in range(1, max_iter + 1):
            f, g = residuals(r, z)
            h = q_t(f)
            u = r_solve(g, trans=1)
            dz = r_solve(h[:k] - u)
            h[:k] = u
            r = r + q(h)
            z = z + dz
            # sizes of the unscaled correction and coefficients
            size = np.max(np.abs(d * dz))
            scale = np.max(np.abs(d * z))
            n_iter = it
            # Stop when the correction is at rounding level, or when the next one would be
            # (geometric contraction estimated from the last two), or when refinement stalls.
            if size <= _EPS * scale or size * (size / prev) <= _EPS * scale or size > 0.5 * prev:
                break
            prev = size
    if size > np.sqrt(_EPS) * scale:
        if borderline:
            # refinement cannot settle a numerically rank-deficient design
            return _svd_fallback(design(), y, intercept)
        warnings.warn(
            "Iterative refinement of the least-squares solution did not converge: the "
            "design is too ill-conditioned even after column equilibration, and the "
            "coefficients may be inaccurate.",
            NumericalWarning,
            stacklevel=3,
        )
    x = d * z
    r_inv = lapack.dtrtri(R)[0]
    inv_diag = d**2 * np.einsum("ij,ij->i", r_inv, r_inv)
    # The refined r converges to the exact residual together with x (Björck), so it is
    # returned as is rather than recomputed.
    return x, r, inv_diag, k, n_iter


def _svd_fallback(A, y, intercept):
    """Minimum-norm solution (LAPACK gelsd) for rank-deficient designs."""
    n = A.shape[0]
    B = np.hstack([A, np.ones((n, 1))]) if intercept else A
    cond = max(B.shape) * _EPS
    # gelsd overwrites its matrix: the design with its column of ones is ours to give it
    # (SciPy would copy it once more), the caller's A is not; the residual comes from A
    coef, _, rank, _ = sla.lstsq(
        B, y, cond=cond, lapack_driver="gelsd", check_finite=False, overwrite_a=intercept
    )
    r = y - A @ coef[: A.shape[1]]
    if intercept:
        r -= coef[-1]
    return coef, r, None, int(rank), 0


def _wide_min_norm(A, y, intercept):
    """Minimum-norm least-squares solution for a design with fewer rows than columns.

    With ``B = [A 1]`` (or ``A``), ``n < k``: the thin QR of the tall ``B^T = Q R`` (``Q``
    ``k x n`` with orthonormal columns) gives ``B x = R^T Q^T x``. Every ``x`` splits into
    ``Q z`` plus a part orthogonal to ``range(Q)`` that ``B`` does not see, so the
    minimum-norm solution is ``x = Q z`` with ``z`` the minimum-norm least-squares solution of
    the ``n x n`` system ``R^T z = y`` (Golub & Van Loan, "Matrix Computations", 4th ed.,
    §5.6.2), taken by LAPACK ``gelsd`` with the rank rule of ``gelsd`` on ``B`` itself
    (singular values below ``max(n, k) eps`` times the largest count as zero; those of ``R``
    are those of ``B``). ``gelsd`` on ``B`` computes the same factorisation internally, but
    as an LQ of the row-ordered wide matrix; the QR of ``B^T``, whose column-ordered layout
    is the row-ordered ``B``, costs about half as much, and the SVD is then of ``n x n``.
    Time ``O(n^2 k)``, memory one copy of ``B``.
    """
    n, m = A.shape
    k = m + int(intercept)
    B = np.empty((n, k))  # row-ordered: B.T is the column-ordered k x n matrix, no copy
    B[:, :m] = A
    if intercept:
        B[:, m] = 1.0
    qr, tau, _, info = lapack.dgeqrf(B.T, lwork=max(1, 64 * n), overwrite_a=True)
    if info != 0:  # pragma: no cover - LAPACK argument error
        return _svd_fallback(A, y, intercept)
    Rt = np.tril(qr[:n, :n].T)  # R^T, lower triangular, n x n
    z, _, rank, _ = sla.lstsq(
        Rt, y, cond=k * _EPS, lapack_driver="gelsd", check_finite=False, overwrite_a=True
    )
    v = np.zeros((k, 1))
    v[:n, 0] = z
    coef = lapack.dormqr(b"L", b"N", qr, tau, v, max(1, 64 * n))[0][:, 0]
    r = y - A @ coef[:m]
    if intercept:
        r -= coef[m]
    return coef, r, None, int(rank), 0
