r"""PCA on Dask arrays: the spectrum of the centred data from sums over row blocks.

* ``"full"`` (and ``"gram"``, and ``"auto"`` where NumPy would take one of them): the
  singular values and right singular vectors of the centred data ``X_c`` are those of the
  triangular factor of its QR, ``X_c = Q R``; the factor comes from a tall-skinny QR (TSQR,
  each row block factorised and the stacked triangles factorised again), so no
  ``N x D`` matrix is formed and the condition number is not squared (the route of
  :func:`._base.right_singular`).
* ``"covariance"``: one pass. Each row block gives its count ``n_b``, mean ``m_b`` and scatter
  about its own mean ``M_b = (X_b - m_b)^T (X_b - m_b)`` (the mean refined by the mean of the
  centred rows), in the power-of-two unit of its own largest magnitude; pairs of blocks are
  merged by Chan, Golub and LeVeque's update (1979) in the larger unit,

  .. math::

      n = n_a + n_b,\quad \delta = m_b - m_a,\quad m = m_a + \delta\, n_b / n,\quad
      M = M_a + M_b + \delta \delta^T n_a n_b / n,

  which never subtracts two large sums, so data far from the origin keep their digits
  without a first pass for the mean.
* ``"randomized"``: Halko, Martinsson & Tropp's range finder (:func:`._pca.randomized_range_svd`)
  with the tall products and thin QRs on Dask (TSQR), the small ones in memory, from the
  same Gaussian test matrix as the NumPy path.

The mean is computed first, then refined by the mean of the centred rows (as on NumPy), so
data far from the origin keep their digits.
"""

from __future__ import annotations

import dask.array as da
import numpy as np
import scipy.sparse as sp

import dask

from ..linear_model._dask import tsqr
from ..utils._backend import block_sums, check_dask_input, map_row_blocks, raise_if_not_finite
from ..utils._rowscale import unit_of
from ..utils.validation import check_is_fitted, check_random_state
from ._lda_topic import (
    _Corpus,
    _elbo,
    _local_stats,
    _shifted_exp_beta,
    _Variational,
    check_counts,
)
from ._pca import _centred_scatter

__all__ = [
    "lda_corpus_dask",
    "lda_state_dask",
    "lda_transform_dask",
    "pca_fit_dask",
    "pca_transform_dask",
]


def _first(Xb):
    with np.errstate(over="ignore", invalid="ignore"):
        return (
            np.max(np.abs(Xb), initial=0.0),
            bool(np.isfinite(Xb).all()),
            Xb.sum(axis=0),
        )


def _combine_first(a, b):
    return max(a[0], b[0]), a[1] and b[1], a[2] + b[2]


def _moments(Xb):
    """``(max |x|, all finite, unit, n_b, mean, scatter about the mean)`` of a row block, in
    the power-of-two unit of its largest magnitude."""
    Xb = np.asarray(Xb, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        amax = float(np.max(np.abs(Xb), initial=0.0))
        finite = bool(np.isfinite(Xb).all())
    nb = Xb.shape[0]
    if not finite or nb == 0:
        return amax, finite, 1.0, nb, np.zeros(Xb.shape[1]), np.zeros((Xb.shape[1],) * 2)
    unit = unit_of(np.array([amax]))
    if unit != 1.0:
        Xb = Xb / unit
    m = Xb.sum(axis=0) / nb
    M, shift = _centred_scatter(Xb, m)  # about the refined mean m + shift
    return amax, finite, unit, nb, m + shift, M


def _combine_moments(a, b):
    """Chan, Golub and LeVeque's merge of two blocks' moments, in the larger unit."""
    amax = max(a[0], b[0])
    finite = a[1] and b[1]
    if not finite:
        return amax, False, 1.0, a[3] + b[3], a[4], a[5]
    unit = max(a[2], b[2])
    (na, ma, Ma), (nb, mb, Mb) = ((t[3], t[4], t[5]) for t in (a, b))
    if a[2] != unit:
        r = a[2] / unit
        ma, Ma = ma * r, Ma * (r * r)
    if b[2] != unit:
        r = b[2] / unit
        mb, Mb = mb * r, Mb * (r * r)
    n = na + nb
    if na == 0 or nb == 0:
        return amax, True, unit, n, (ma if nb == 0 else mb), (Ma if nb == 0 else Mb)
    delta = mb - ma
    return (
        amax,
        True,
        unit,
        n,
        ma + delta * (nb / n),
        Ma + Mb + np.outer(delta, delta) * (na * nb / n),
    )


def pca_fit_dask(est, X):
    """``PCA._fit`` for Dask ``X``; returns ``(None, s)`` (the projections stay lazy)."""
    from ..linear_model._dask import _reduce

    X = check_dask_input(est, X, dtype=None if X.dtype == np.float32 else np.float64)
    n, d = X.shape
    if n < 2:
        raise ValueError(f"PCA needs at least 2 samples; got n_samples = {n} (1 sample).")
    k = est._checked_k(n, d)
    if est._choose_solver(n, d, k) == "covariance":
        amax, finite, unit, _, mean, C = _reduce(_moments, _combine_moments, X)
        raise_if_not_finite(finite)
        est._unit = unit
        est.mean_ = mean
        w, V = np.linalg.eigh(C)
        s_all = np.sqrt(np.clip(w[::-1], 0.0, None))[: min(n, d)]
        Vt = V[:, ::-1].T[: min(n, d)]
        return est._finish(None, s_all, Vt, s_all, None, n, d, k, "covariance", X.dtype, unit)
    amax, finite, total = _reduce(_first, _combine_first, X)
    raise_if_not_finite(finite)
    est._unit = unit = unit_of(np.array([amax]))
    if unit != 1.0:
        X = X / unit
        total = block_sums(lambda Xb: Xb.sum(axis=0), X)
    k = est._checked_k(n, d)
    solver = est._choose_solver(n, d, k)
    if solver == "gram":
        solver = "full"
    mean = total / n
    total_var = None
    if solver == "covariance":

        def scatter(Xb):
            B = Xb - mean
            return B.T @ B, B.sum(axis=0)

        C, tot = block_sums(scatter, X)
        shift = tot / n
        C -= n * np.outer(shift, shift)
        est.mean_ = mean + shift
        w, V = np.linalg.eigh(C)
        s_all = np.sqrt(np.clip(w[::-1], 0.0, None))[: min(n, d)]
        s = s_all
        Vt = V[:, ::-1].T[: min(n, d)]
    else:

        def centred(Xb):
            B = Xb - mean
            return B.sum(axis=0), float(np.einsum("ij,ij->", B, B))

        tot, _ = block_sums(centred, X)
        shift = tot / n
        est.mean_ = mean + shift
        Xc = X - est.mean_
        if solver == "full":
            R = tsqr(Xc)
            _, s, Vt = np.linalg.svd(R, full_matrices=False)
            s_all = s[: min(n, d)]
            Vt = Vt[: min(n, d)]
        else:
            n_iter = est.iterated_power
            if n_iter == "auto":
                n_iter = 7 if k < 0.1 * min(n, d) else 4
            s, Vt = _randomized(Xc, k, est.n_oversamples, int(n_iter), est.random_state)
            s_all = None
            total_var = float(block_sums(lambda B: float(np.einsum("ij,ij->", B, B)), Xc))
            total_var /= n - 1
    return est._finish(None, s, Vt, s_all, total_var, n, d, k, solver, X.dtype, unit)


def _thin_q(Y):
    """Orthonormal basis of the columns of a tall Dask array (lazy, TSQR)."""
    Y = Y.rechunk({1: -1})
    Q, _ = da.linalg.tsqr(Y)
    return Q


def _randomized(Xc, k, n_oversamples, n_iter, random_state):
    """:func:`._pca.randomized_range_svd` with the ``N``-sized factors on Dask."""
    rng = check_random_state(random_state)
    n, d = Xc.shape
    size = min(k + n_oversamples, n, d)
    Q = rng.standard_normal((d, size))
    for _ in range(n_iter):
        Qn = _thin_q(Xc @ Q)
        Q, _ = np.linalg.qr((Xc.T @ Qn).compute())
    Qn = _thin_q(Xc @ Q)
    B = dask.compute(Qn.T @ Xc)[0]
    _, s, Vt = np.linalg.svd(B, full_matrices=False)
    return s[:k], Vt[:k]


def pca_transform_dask(est, X):
    """``PCA.transform`` of Dask ``X``: a lazy Dask array of projections."""
    X = check_dask_input(est, X, reset=False, dtype=None if X.dtype == np.float32 else np.float64)
    mean, comp = est.mean_, est.components_
    scale = est._std_unit() if est.whiten else None

    def project(B):
        Z = (B - mean) @ comp.T
        return Z / scale if scale is not None else Z

    return map_row_blocks(project, X, out_cols=comp.shape[0], dtype=X.dtype)


def _lda_block_counts(Xb, name):
    """A row block of a document-term matrix as a checked CSR count matrix."""
    Xb = sp.csr_matrix(Xb, dtype=np.float64, copy=True)
    Xb.sum_duplicates()
    Xb.eliminate_zeros()
    check_counts(Xb, name)
    return Xb


def _lda_block_words(Xb, name):
    return float(_lda_block_counts(Xb, name).sum())


def lda_corpus_dask(est, X):
    """Validate Dask counts for ``LatentDirichletAllocation.fit`` (one pass): the corpus.

    Every block is checked as the NumPy fit checks ``X`` (integer counts in ``[0, 2^53]``,
    which also rules out NaN and infinity); the pass also counts the words.
    """
    dtype = None if X.dtype == np.float64 else np.float64
    X = check_dask_input(est, X, reset=True, dtype=dtype)
    name = type(est).__name__
    words = block_sums(lambda Xb: _lda_block_words(Xb, name), X)
    return _DaskCorpus(X, words, name)


def _lda_block_local(Xb, warm, params):
    """The local updates (Prop. 23, 1-2) of one row block's documents: the block's part of
    the statistics and of the bound, and its documents' ``gamma`` (non-empty rows only)."""
    exp_beta_t, shift, alpha, max_iter, tol, name = params
    corpus = _Corpus(_lda_block_counts(Xb, name))
    gamma = alpha + (corpus.lengths / alpha.size)[:, None]
    if corpus.X.shape[0] == 0:
        return np.zeros_like(exp_beta_t), 0.0, gamma
    stats_t, part = _local_stats(corpus.X, gamma, exp_beta_t, shift, alpha, max_iter, tol, warm)
    return stats_t, part, gamma


def lda_state_dask(est, state):
    """The batch CAVI state of ``est`` for Dask counts; the online method is refused."""
    if est.learning_method != "batch":
        raise ValueError(
            f"{type(est).__name__}(learning_method={est.learning_method!r}) on a Dask array: "
            "the Dask fit is batch CAVI (learning_method='batch', the default), whose "
            "statistics add over row blocks. For stochastic updates, call partial_fit on "
            "the computed blocks in turn (one mini-batch per call)."
        )
    return _BlockVariational(state.alpha, state.eta, state.lam, state.max_doc_iter, state.doc_tol)


def lda_transform_dask(est, X, normalize):
    """``LatentDirichletAllocation.transform`` of Dask counts: a lazy Dask array."""
    check_is_fitted(est)
    dtype = None if X.dtype == np.float64 else np.float64
    X = check_dask_input(est, X, reset=False, dtype=dtype)
    k = est.n_components_

    def block(Xb):
        return est.transform(Xb, normalize=normalize)

    return X.map_blocks(block, dtype=np.float64, chunks=(X.chunks[0], (k,)), meta=np.empty((0, 0)))


class _DaskCorpus:
    """Dask counts for the CAVI sweeps: the row blocks (delayed) and the total word count."""

    def __init__(self, X, n_words, name):
        self.blocks = X.to_delayed(optimize_graph=False)[:, 0].tolist()
        self.n_words = float(n_words)
        self.name = name


def _pick(result, i):
    return result[i]


class _BlockVariational(_Variational):
    """Batch CAVI with the local updates run block by block (``step`` of the NumPy state).

    A sweep is one pass over the row blocks: each block runs the local updates of its own
    documents (the NumPy sweep's ``_local_step``, from ``gamma_d = alpha + N_d / K``, each
    document keeping the previous sweep's ``gamma_d`` where its bound is larger) and returns
    its part of ``sum_dv n_dv phi_dvk`` and of the bound, added by a balanced tree; the
    documents' ``gamma`` come back to the client for the next sweep's comparison. The global
    update of ``lambda`` and the topics' terms of the bound are then those of the NumPy state.
    """

    def step(self, corpus):
        from ..utils._backend import _tree_sum

        elog_beta = self.expected_log_beta()
        shift, exp_beta_t = _shifted_exp_beta(elog_beta)
        params = dask.delayed(
            (exp_beta_t, shift, self.alpha, self.max_doc_iter, self.doc_tol, corpus.name),
            traverse=False,
        )
        warm = self.gamma if self.gamma is not None else [None] * len(corpus.blocks)
        local = dask.delayed(_lda_block_local, pure=True)
        pick = dask.delayed(_pick, pure=True)
        parts = [local(b, w, params) for b, w in zip(corpus.blocks, warm, strict=True)]
        sums = _tree_sum([pick(p, slice(0, 2)) for p in parts])
        (stats_t, doc_part), gamma = dask.compute(sums, [pick(p, 2) for p in parts])
        self.gamma = list(gamma)
        bound = _elbo(doc_part, self.eta, self.lam, elog_beta)
        self.lam = self.eta + stats_t.T * exp_beta_t.T
        return bound
