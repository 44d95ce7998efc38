"""The linear regressors on Dask arrays: sums over row blocks, the same numerics as NumPy.

Least squares (:class:`LinearRegression`) runs the algorithm of :mod:`._refinement` on a
tall-skinny QR (TSQR): each row block ``A_b`` of the equilibrated design is factorised by
Householder QR, ``A_b = Q_b R_b``, and the stacked triangles ``[R_1; ...; R_p] = Q_2 R``
once more, so that ``A = diag(Q_b) Q_2 R`` is a Householder QR of the whole design with an
implicit orthogonal factor (Demmel, Grigori, Hoemmen & Langou, "Communication-optimal
parallel and sequential QR and LU factorizations", SIAM J. Sci. Comput. 34, 2012). Applying
``Q`` or ``Q^T`` to an ``n``-vector is a pass over the blocks (``Q_b`` applied locally) and
one small product with ``Q_2``; that is all Björck's refinement of the augmented system needs,
so the refined solution is the float64 rounding of the exact least-squares solution, as on
NumPy, even for ``cond(X) ~ 1e15``. The local factors are recomputed from the block when a
step needs them (they are as large as the data, and recomputation is deterministic), and the
residual ``r`` of the refinement stays on the workers, block by block. The sums over rows of
``-A^T r`` are carried as unevaluated pairs (sum, rounding error) across blocks, so the
doubled-precision residuals stay doubled across the reduction.

Out of core every pass regenerates or rereads the blocks, so :class:`LinearRegression` makes
as few as the numerics allow: ONE pass validates the data, sums the squares of the columns
(for the equilibration ``D``) and factorises each unscaled block (QR commutes exactly with
the power-of-two scaling, so ``R_b D`` is the equilibrated block's factor; data that needs
scaling into the float64 range takes the equilibrated route, one pass more). A design whose
QR solution provably carries the digits (:func:`._refinement.refinement_needed`, the rule of
the NumPy path) needs no other pass; otherwise each refinement step is one pass (the block's
local QR again and its doubled-precision residuals, by the compiled kernel of the NumPy path
where it was built), and the final residual sum of squares comes from the last of them.

Ridge regression needs the centred Gram matrix and moment vector, and Bayesian linear
regression the singular values of the centred design and the projection of the targets on
its left singular vectors: both are sums over row blocks (the latter through the TSQR of
``[X - x_bar, t]``), and the rest of each fit is the NumPy code on those small matrices.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

import dask
from dask import delayed

from ..utils._backend import block_sums, raise_if_not_finite
from . import _refinement as _ref

__all__ = [
    "accurate_lstsq_dask",
    "first_pass",
    "lstsq_first_pass",
    "moment_pass",
    "ridge_stats",
    "tsqr",
]


def _row_blocks(A, *aligned):
    """Delayed row blocks of ``A`` (all columns) and of 1-D arrays chunked like its rows."""
    blocks = A.to_delayed(optimize_graph=False)[:, 0].tolist()
    out = [blocks]
    for a in aligned:
        if a.chunks[0] != A.chunks[0]:
            a = a.rechunk({0: A.chunks[0]})
        out.append(a.to_delayed(optimize_graph=False).tolist())
    return out


def first_pass_stats(Xb, yb, swb=None):
    """One block's part of :func:`first_pass`."""
    w = np.ones(Xb.shape[0]) if swb is None else swb
    with np.errstate(over="ignore", invalid="ignore"):
        return (
            np.max(np.abs(Xb), axis=0, initial=0.0),
            float(np.max(np.abs(yb), initial=0.0)),
            bool(np.isfinite(Xb).all() and np.isfinite(yb).all()),
            w @ (Xb * Xb),
            w @ Xb,
            float(w @ yb),
            float(w.sum()),
        )


def _combine_stats(a, b):
    return (
        np.maximum(a[0], b[0]),
        max(a[1], b[1]),
        a[2] and b[2],
        a[3] + b[3],
        a[4] + b[4],
        a[5] + b[5],
        a[6] + b[6],
    )


def first_pass(X, y, sw=None):
    """Column maxima of ``|X|``, ``max |y|``, finiteness, column sums of squares of ``X``
    (weighted by ``sw``), the sums of ``X``, ``y`` (weighted) and of the weights."""
    args = (X, y) if sw is None else (X, y, sw)
    out = _reduce(first_pass_stats, _combine_stats, *args)
    raise_if_not_finite(out[2], "X or y")
    if sw is not None and not np.all(np.isfinite(out[6])):
        raise ValueError("sample_weight contains NaN or infinity.")
    return out


def _tree(combine, parts):
    """``combine``-reduction of ``parts`` in the balanced-tree order of :func:`_reduce`."""
    parts = list(parts)
    while len(parts) > 1:
        nxt = [combine(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    return parts[0]


def lstsq_first_pass(X, y, sw=None, *, intercept: bool = False):
    """:func:`first_pass` and the local factors of the least-squares design, in ONE pass.

    Each block returns, besides its :func:`first_pass` statistics, the Householder QR of
    its rows of the unscaled design ``B_b = [X_b, 1]`` (rows times ``sqrt(sw_b)`` with
    weights; the offset column only with ``intercept``): ``R_b`` and ``Q_b^T t_b`` (its top
    ``k_b`` entries and the squared norm of the rest) with ``t_b`` the (weighted) targets.
    Householder QR commutes exactly with scaling the columns by powers of two (the reflector
    of a column is invariant under its scaling, and the updates of the other columns are
    linear in them), barring underflow and overflow: ``R_b D`` and ``Q_b^T t_b`` are then
    what the TSQR of the equilibrated design ``B D`` computes, with ``D`` known only after
    the pass. The caller checks that no scaling of the data is needed (see
    :func:`accurate_lstsq_dask`'s ``first``) before using them.

    Returns
    -------
    stats : tuple
        As :func:`first_pass` (combined in the same tree order).
    parts : list of (top, rest, R_b)
        One per row block, in order.
    """

    def block(Xb, yb, swb=None):
        st = first_pass_stats(Xb, yb, swb)
        if not st[2]:
            return st, None
        m = Xb.shape[1]
        k = m + int(intercept)
        B = np.empty((Xb.shape[0], k), order="F")
        if swb is None:
            B[:, :m] = Xb
            t = np.array(yb, dtype=np.float64)
            if intercept:
                B[:, m] = 1.0
        else:
            r = np.sqrt(swb)
            np.multiply(Xb, r[:, None], out=B[:, :m])
            t = yb * r
            if intercept:
                B[:, m] = r
        kb = min(B.shape)
        if kb == 0:
            return st, (np.zeros(0), float(t @ t), np.zeros((0, k)))
        qr, tau, _, _ = lapack.dgeqrf(B, lwork=max(1, 64 * k), overwrite_a=True)
        w = _apply(qr, tau[:kb], t, b"T")
        # may overflow for data beyond the safe range: the caller then discards the factors
        with np.errstate(over="ignore", invalid="ignore"):
            return st, (w[:kb], float(w[kb:] @ w[kb:]), np.triu(qr[:kb, :]))

    args = (X, y) if sw is None else (X, y, sw)
    blocks, *others = _row_blocks(*args)
    f = delayed(block, pure=True)
    outs = dask.compute(*[f(b, *(o[i] for o in others)) for i, b in enumerate(blocks)])
    stats = _tree(_combine_stats, [o[0] for o in outs])
    raise_if_not_finite(stats[2], "X or y")
    if sw is not None and not np.all(np.isfinite(stats[6])):
        raise ValueError("sample_weight contains NaN or infinity.")
    return stats, [o[1] for o in outs]


def _reduce(func, combine, X, *aligned):
    """``combine``-reduction (balanced tree) of ``func`` over the row blocks."""
    blocks, *others = _row_blocks(X, *aligned)
    f = delayed(func, pure=True)
    c = delayed(combine, pure=True)
    parts = [f(b, *(o[i] for o in others)) for i, b in enumerate(blocks)]
    while len(parts) > 1:
        nxt = [c(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    return dask.compute(parts[0])[0]


def moment_pass(X, y, x_offset, y_offset, sw=None):
    """``(X - x_offset)^T (X - x_offset)`` and ``(X - x_offset)^T (y - y_offset)`` (rows
    weighted by ``sw``), and the weighted sum of squares of ``y - y_offset``."""

    def stats(Xb, yb, swb=None):
        C = Xb - x_offset
        c = yb - y_offset
        if swb is not None:
            C = C * swb[:, None]
            c = c * swb
        return C.T @ C, C.T @ c, float(c @ c)

    args = (X, y) if sw is None else (X, y, sw)
    return block_sums(stats, *args)


def ridge_stats(Xw, yw, xo, yo):
    """The centred Gram matrix and moment vector of :func:`._gram.centred_gram`, by blocks."""
    G, b, _ = moment_pass(Xw, yw, xo, yo)
    return G, b


def tsqr(A):
    """Triangular factor ``R`` of the Householder QR of a tall Dask array ``A`` (TSQR).

    ``R`` is that of a Householder QR of ``A`` up to the signs of its rows (any two QR
    factorisations of a full-rank matrix differ only there).
    """

    def local(Ab):
        M = np.array(Ab, dtype=np.float64, order="F")
        if M.shape[0] == 0:
            return np.zeros((0, M.shape[1]))
        qr = lapack.dgeqrf(M, lwork=max(1, 64 * M.shape[1]), overwrite_a=True)[0]
        return np.triu(qr[: min(M.shape), :])

    def combine(Ra, Rb):
        return local(np.vstack([Ra, Rb]))

    return _reduce(local, combine, A)


def _sum2_pair(P, E):
    """:func:`._refinement._sum2` without the final rounding: ``(sum, error)`` over axis 0."""
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
    return P[0], E[0]


def _add_pairs(a, b):
    """Two (sum, error) pairs added with Knuth's TwoSum (the sum stays doubled)."""
    s = a[0] + b[0]
    z = s - a[0]
    err = (a[0] - (s - z)) + (b[0] - z)
    return s, err + a[1] + b[1]


class _Blocks:
    """The equilibrated blocks ``A_b D`` (with the offset column) and their local QR."""

    def __init__(self, d, intercept):
        self.d = d
        self.intercept = intercept

    def __dask_tokenize__(self):
        return (self.d.tobytes(), self.intercept)

    def design(self, Ab):
        m = Ab.shape[1]
        k = m + int(self.intercept)
        As = np.empty((Ab.shape[0], k), order="F")
        np.multiply(Ab, self.d[:m], out=As[:, :m])
        if self.intercept:
            As[:, m] = self.d[m]
        return As

    def qr(self, Ab):
        """``As`` (``None`` where the compiled residuals, which do not need it, are built),
        and the Householder QR of ``As``."""
        As = self.design(Ab)
        kb = min(As.shape)
        keep = _ref._compiled_residuals() is None
        qr, tau, _, _ = lapack.dgeqrf(
            As.copy(order="F") if keep else As, lwork=max(1, 64 * As.shape[1]), overwrite_a=True
        )
        return (As if keep else None), qr, tau[:kb], kb

    def residuals(self, Ab, As, yb, rb, z):
        """``f_b`` rounded (exact per row) and ``-A_b^T r_b`` as a (sum, error) pair.

        By the compiled pass of :mod:`mathlearn._ext` (``_refine.c``) on the unscaled block
        where it was built (its work array holds ``g``'s unrounded pair on return), else by
        the vectorised NumPy transformations on the equilibrated block ``As``.
        """
        fn = _ref._compiled_residuals()
        if fn is not None:
            return _residuals_pair_compiled(fn, Ab, yb, rb, self.d * z, self.d, self.intercept)
        AT = np.ascontiguousarray(As.T)
        hi, lo = _ref._split(AT)
        f = _ref._residuals_dd(AT, hi, lo, yb, rb, z)[0]
        t = _ref._pow2_scale_of(rb)
        rt = rb * t
        rh, rl = _ref._split(rt)
        p = AT * rt
        e = ((hi * rh - p) + hi * rl + lo * rh) + lo * rl
        s, err = _sum2_pair(np.ascontiguousarray(p.T), np.ascontiguousarray(e.T))
        return f, (-s / t, -err / t)


def _residuals_pair_compiled(fn, Ab, y, r, x, d, intercept):
    """``f = y - r - A x (- x0)`` rounded and ``-As^T r = D (-A^T r)`` as a (sum, error)
    pair, by the compiled pass over the unscaled block ``A`` (``x = D z``); ``y``, ``r`` and
    ``x`` are scaled by powers of two first, so that the splits cannot overflow."""
    A = np.ascontiguousarray(Ab, dtype=np.float64)
    n, m = A.shape
    k = m + int(intercept)
    s = _ref._pow2_scale_of(y, r, x)
    t = _ref._pow2_scale_of(r)
    ys, rs, xs, rt = y * s, r * s, x * s, r * t
    f, g = np.empty(n), np.empty(k)
    work = np.empty(2 * (m + 1))
    fn(n, m, A.ctypes.data, ys.ctypes.data, rs.ctypes.data, xs.ctypes.data, rt.ctypes.data,
       int(intercept), f.ctypes.data, g.ctypes.data, work.ctypes.data)  # fmt: skip
    # work = [g's sums (m + 1), g's rounding errors (m + 1)]; D / t is a power of two
    return f / s, (work[:k] * (d / t), work[m + 1 : m + 1 + k] * (d / t))


def _apply(qr, tau, v, trans):
    """``Q v`` or ``Q^T v`` (``v`` a vector or the columns of a matrix)."""
    kb = tau.shape[0]
    if kb == 0:
        return v.copy()
    if v.ndim == 2:
        return lapack.dormqr(b"L", trans, qr[:, :kb], tau, v, v.shape[1])[0]
    return lapack.dormqr(b"L", trans, qr[:, :kb], tau, v[:, None], 1)[0][:, 0]


def _stage_a(blocks: _Blocks, Ab, yb, rb, z):
    """Top of ``Q_b^T f_b`` (and the rest's squared norm), ``-A_b^T r_b``, ``R_b``."""
    As, qr, tau, kb = blocks.qr(Ab)
    if rb is None:
        f = np.array(yb, dtype=np.float64)
        g = (np.zeros(qr.shape[1]), np.zeros(qr.shape[1]))
    else:
        f, g = blocks.residuals(Ab, As, yb, rb, z)
    w = _apply(qr, tau, f, b"T")
    return w[:kb], float(w[kb:] @ w[kb:]), g, np.triu(qr[:kb, :])


def _stage_c(blocks: _Blocks, Ab, yb, rb, z, top):
    """``r_b + Q_b [top; (Q_b^T f_b)[k_b:]]``: the block's part of the new residual."""
    As, qr, tau, kb = blocks.qr(Ab)
    if rb is None:
        f = np.array(yb, dtype=np.float64)
    else:
        f, _ = blocks.residuals(Ab, As, yb, rb, z)
    w = _apply(qr, tau, f, b"T")
    w[:kb] = top
    dr = _apply(qr, tau, w, b"N")
    return dr if rb is None else rb + dr


def _stage_ca(blocks: _Blocks, Ab, yb, rb, z_old, top, z):
    """:func:`_stage_c` (the block's residual after the last correction), then
    :func:`_stage_a` at the new coefficients ``z``, with one local QR."""
    As, qr, tau, kb = blocks.qr(Ab)
    f = (
        np.array(yb, dtype=np.float64)
        if rb is None
        else blocks.residuals(Ab, As, yb, rb, z_old)[0]
    )
    w = _apply(qr, tau, f, b"T")
    w[:kb] = top
    dr = _apply(qr, tau, w, b"N")
    r_new = dr if rb is None else rb + dr
    f, g = blocks.residuals(Ab, As, yb, r_new, z)
    # Q_b^T f and, for ||r_new + Q_b [top'; w[kb:]]||^2 with the next top' (see
    # accurate_lstsq_dask), Q_b^T r_new: ||r_new||^2, (Q_b^T r_new)[:kb] and
    # (Q_b^T r_new)[kb:] . w[kb:]; both in one application of the reflectors
    w, v = _apply(qr, tau, np.column_stack([f, r_new]), b"T").T
    rss = (float(r_new @ r_new), v[:kb], float(v[kb:] @ w[kb:]))
    return r_new, (w[:kb], float(w[kb:] @ w[kb:]), g, rss)


def _stage_c_rss(blocks: _Blocks, Ab, yb, rb, z, top):
    """``||r_b||^2`` of the block's residual after the last correction."""
    r = _stage_c(blocks, Ab, yb, rb, z, top)
    return float(r @ r)


def _column_sumsq(A):
    return block_sums(lambda Ab: np.einsum("ij,ij->j", Ab, Ab), A)


def accurate_lstsq_dask(
    A, y, *, intercept: bool = False, max_iter: int = 30, sumsq=None, first=None
):
    """:func:`._refinement.accurate_lstsq` for a tall Dask array ``A`` (by TSQR).

    Parameters
    ----------
    A : dask.array.Array of shape (n, m), one block of columns
    y : dask.array.Array of shape (n,), chunked like ``A``'s rows
    intercept : bool
    max_iter : int
    sumsq : ndarray of shape (m,) or None
        Column sums of squares of ``A`` when already known (saves a pass).
    first : list of (top, rest, R_b) or None
        The local factors of the unscaled design ``[A, 1]`` (``[A]`` without
        ``intercept``) by :func:`lstsq_first_pass`, when already computed (saves the TSQR
        pass; needs ``sumsq``). The caller passes them only where ``A`` and ``y`` are in the
        range where the exact power-of-two scalings commute with the QR (no underflow or
        overflow).

    Returns
    -------
    coef, rss, R_inv_diag_sq (or None), rank, n_iter
        As :func:`._refinement.accurate_lstsq`, with the residual sum of squares in place
        of the residual vector.
    """
    n, m = A.shape
    k = m + int(intercept)
    if sumsq is None:
        sumsq = _column_sumsq(A)
    norms = np.sqrt(sumsq)
    if intercept:
        norms = np.append(norms, np.sqrt(n))
    d = _ref._pow2_scale(norms)
    if n < k:
        return _svd_fallback_dask(A, y, intercept)
    blocks = _Blocks(d, intercept)
    Ad, yd = _row_blocks(A, y)
    if first is None:
        sa = delayed(_stage_a, pure=True)
        parts = dask.compute(*[sa(blocks, Ad[i], yd[i], None, None) for i in range(len(Ad))])
    else:
        # R_b D is the block's factor of the equilibrated design; Q_b^T y_b is unchanged
        parts = [(p[0], p[1], None, p[2] * d) for p in first]
    sizes = [p[0].shape[0] for p in parts]
    cuts = np.cumsum(sizes)[:-1]
    S = np.asfortranarray(np.vstack([p[3] for p in parts]))
    qr2, tau2, _, _ = lapack.dgeqrf(S, lwork=max(1, 64 * k), overwrite_a=True)
    R = np.asfortranarray(np.triu(qr2[:k, :k]))
    rcond, _ = lapack.dtrcon(R, norm="1", uplo="U")
    borderline = not rcond > max(n, k) * _ref._EPS
    if not rcond > _ref._RANK_TOL:
        return _svd_fallback_dask(A, y, intercept)

    def q2_t(v):
        return lapack.dormqr(b"L", b"T", qr2, tau2, v[:, None], 1)[0][:, 0]

    def q2(v):
        return lapack.dormqr(b"L", b"N", qr2, tau2, v[:, None], 1)[0][:, 0]

    def r_solve(v, trans=0):
        return lapack.dtrtrs(R, v, trans=trans)[0]

    H = q2_t(np.concatenate([p[0] for p in parts]))
    z = r_solve(H[:k])
    rest = float(H[k:] @ H[k:]) + sum(p[1] for p in parts)
    refine = _ref.refinement_needed(R, rcond, z, np.sqrt(rest), d, n)
    n_iter = 0
    size = scale = 0.0
    rss = rest
    if refine:
        # One pass per step: each block first updates its part of the residual with the
        # previous step's correction (r_b += Q_b [top; bottom], starting from the residual
        # of the plain QR solution, r = Q [0; H[k:]; bottoms]), then computes the next
        # step's doubled-precision residuals from it; r stays on the workers.
        sca = delayed(_stage_ca, pure=True, nout=2)
        H[:k] = 0.0
        tops = np.split(q2(H), cuts)
        r: list = [None] * len(Ad)
        z_old = None
        prev = np.max(np.abs(d * z))
        for it in range(1, max_iter + 1):
            outs = [sca(blocks, Ad[i], yd[i], r[i], z_old, tops[i], z) for i in range(len(Ad))]
            outs = dask.persist(*outs)
            parts = dask.compute(*[o[1] for o in outs])
            r = [o[0] for o in outs]
            g = parts[0][2]
            for p in parts[1:]:
                g = _add_pairs(g, p[2])
            g = g[0] + g[1]
            H = q2_t(np.concatenate([p[0] for p in parts]))
            u = r_solve(g, trans=1)
            dz = r_solve(H[:k] - u)
            H[:k] = u
            tops = np.split(q2(H), cuts)
            z_old, z = z, z + dz
            size = np.max(np.abs(d * dz))
            scale = np.max(np.abs(d * z))
            n_iter = it
            if size <= _ref._EPS * scale or size * (size / prev) <= _ref._EPS * scale:
                break
            if size > 0.5 * prev:
                break
            prev = size
        # The residual after the last correction, r_b + Q_b [top_b; w_b] (w_b the bottom
        # of Q_b^T f_b of the last pass), has the squared norm ||r_b||^2 + 2 (Q_b^T r_b) .
        # [top_b; w_b] + ||top_b||^2 + ||w_b||^2: all from the last pass. Its rounding error
        # is a few eps times the sum of the terms' magnitudes; where that sum exceeds 4 rss
        # (cancellation: the last correction changed r by more than r itself, as for a
        # near-interpolating fit), the corrected blocks are summed on the workers instead.
        terms = np.array(
            [
                [
                    p[3][0],
                    2.0 * float(p[3][1] @ t),
                    2.0 * p[3][2],
                    float(t @ t),
                    p[1],
                ]
                for p, t in zip(parts, tops, strict=True)
            ]
        )
        rss = float(np.sum(terms))
        if not rss >= 0.25 * float(np.sum(np.abs(terms))):
            rss = float(
                sum(
                    dask.compute(
                        *[
                            delayed(_stage_c_rss, pure=True)(
                                blocks, Ad[i], yd[i], r[i], z_old, tops[i]
                            )
                            for i in range(len(Ad))
                        ]
                    )
                )
            )
    if size > np.sqrt(_ref._EPS) * scale:
        if borderline:
            return _svd_fallback_dask(A, y, intercept)
        import warnings

        from ..exceptions import NumericalWarning

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
    return x, rss, inv_diag, k, n_iter


def _svd_fallback_dask(A, y, intercept):
    """Minimum-norm solution (as LAPACK gelsd) from the TSQR of ``[A, 1, y]``."""
    import dask.array as da

    n, m = A.shape
    cols = [A]
    if intercept:
        cols.append(da.ones((n, 1), chunks=(A.chunks[0], (1,))))
    cols.append(y[:, None])
    Raug = tsqr(da.concatenate(cols, axis=1).rechunk({1: -1}))
    k = m + int(intercept)
    R, c = Raug[:k, :k], Raug[:k, k]
    rho2 = float(Raug[k, k] ** 2) if Raug.shape[0] > k else 0.0
    U, s, Vt = np.linalg.svd(R)
    cond = max(n, k) * _ref._EPS
    rank = int(np.sum(s > cond * s[0])) if s.size and s[0] > 0 else 0
    uc = U.T @ c
    coef = Vt[:rank].T @ (uc[:rank] / s[:rank])
    rss = rho2 + float(uc[rank:] @ uc[rank:])
    return coef, rss, None, rank, 0


def data_scales(col_max, y_max, *, per_column: bool):
    """The exact power-of-two scales :func:`._base.prepare_data` picks, from the maxima.

    Returns a :class:`._base.Prepared` with only ``x_scale`` and ``y_scale`` meaningful.
    """
    from ._base import Prepared, _needs_scaling, pow2_scale

    m = col_max.shape[0]
    x_scale = np.ones(m)
    y_scale = 1.0
    if _needs_scaling(col_max):
        x_scale = pow2_scale(col_max) if per_column else np.full(m, pow2_scale(col_max.max()))
    if _needs_scaling(y_max):
        y_scale = float(pow2_scale(y_max))
    empty = np.zeros((0, m))
    return Prepared(empty, empty[:, 0], np.zeros(m), 0.0, x_scale, y_scale, None, 0.0)


def predict_dask(estimator, X, func, out_cols=None):
    """``func`` (NumPy rows to predictions) over Dask ``X``: a lazy Dask array."""
    from ..utils._backend import check_dask_input, map_row_blocks

    X = check_dask_input(estimator, X, reset=False)
    return map_row_blocks(func, X, out_cols=out_cols)
