"""Latent Dirichlet allocation fitted by coordinate-ascent variational inference (CAVI)."""

from __future__ import annotations

import itertools
import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from scipy.special import digamma, gammaln

from ..base import (
    BaseEstimator,
    ComponentNamesMixin,
    TransformerMixin,
    _fit_context,
    check_is_fitted,
)
from ..exceptions import ConvergenceWarning
from ..utils._backend import is_dask
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import check_random_state, validate_data

__all__ = ["LatentDirichletAllocation"]

# The local E-step runs on blocks of documents holding at most this many (non-zero count x
# topic) products, so that its two arrays of them stay a few MiB whatever the corpus size,
# and at most half the model's own (documents + words) x topics entries, so that on a small
# corpus the two together stay within the model's own memory; never fewer than the minimum,
# below which the interpreter's per-block work dominates.
_BLOCK_ENTRIES = 1 << 19
_MIN_BLOCK_ENTRIES = 1 << 12
# check_counts reads the counts in pieces of this many entries.
_CHECK_CHUNK = 1 << 13
_INT32_MAX = int(np.iinfo(np.int32).max)


def _dirichlet_expected_log(params):
    """``E[log pi] = psi(params) - psi(sum params)`` row by row (Fact 22 of the Oxford notes).

    The arithmetic of :meth:`~mathlearn.distributions.Dirichlet.expected_log`, without the
    validated copy of ``params`` that the distribution keeps (the parameters here are
    positive by construction): the result is the only array of their size made. One
    category (a single topic, a one-word vocabulary) is the point mass ``pi = 1``, whose
    expected log is 0.
    """
    if params.shape[-1] == 1:
        return np.zeros_like(params)
    out = digamma(params)
    _subtract_along_rows(out, digamma(params.sum(axis=-1)))
    return out


def _subtract_along_rows(out, values):
    """``out -= values[:, None]`` in place, one 1-d operation per line of the shorter axis.

    A broadcast operation on a large array makes NumPy allocate a buffer of up to 64 KiB
    behind the scenes (as does one that mixes memory layouts); operations on single rows or
    columns, strided or not, make none. The same holds for the other row- or column-wise
    loops below.
    """
    if out.shape[0] <= out.shape[1]:
        for row, value in zip(out, values, strict=True):
            row -= value
    else:
        for column in out.T:
            column -= values


def _expected_log_beta_t(lam):
    """:func:`_dirichlet_expected_log` of ``lambda`` (K, V), written transposed as (V, K).

    The local updates read ``E[log beta]`` one word (a row of the transpose) at a time; the
    transpose is written topic by topic rather than copied from a (K, V) result.
    """
    out = np.empty(lam.shape[::-1])
    if lam.shape[1] == 1:
        out.fill(0.0)
        return out
    psi_sums = digamma(lam.sum(axis=1))
    for k, row in enumerate(lam):
        column = out[:, k]
        digamma(row, out=column)
        column -= psi_sums[k]
    return out


def _dirichlet_elbo_terms(prior, params, expected_log):
    """``E_q[log Dir(pi; prior)] - E_q[log Dir(pi; params)]`` summed over the rows of ``params``.

    ``prior`` is a vector broadcast against every row of ``params``; ``expected_log`` holds
    ``E_q[log pi]`` under ``q = Dir(params)`` (any memory layout: the transpose of a (V, K)
    array is read in place). Each row contributes
    ``log B(params) - log B(prior) + sum (prior - params) E_q[log pi]`` with
    ``log B(a) = sum log Gamma(a) - log Gamma(sum a)``.
    """
    n = params.shape[0]
    log_b_prior = float(np.sum(gammaln(prior)) - gammaln(np.sum(prior)))
    # row by row: no temporary of params' size (for the topics that is K x V, the model's
    # largest array)
    sum_gammaln = sum(float(np.sum(gammaln(row))) for row in params)
    log_b_params = sum_gammaln - float(np.sum(gammaln(params.sum(axis=1))))
    cross = sum(
        float((prior - row) @ e_row) for row, e_row in zip(params, expected_log, strict=True)
    )
    return cross + log_b_params - n * log_b_prior


def _local_step(X, gamma, exp_elog_beta_t, alpha, max_iter, tol, warm=None, out=None):
    """The per-document CAVI updates (Prop. 23, updates 1 and 2) for every row of ``X``.

    ``X`` is a CSR count matrix with no empty row, ``gamma`` (n_docs, K) the starting
    ``gamma_d`` (updated in place), ``exp_elog_beta_t`` (V, K) holds
    ``exp(E[log beta_kv] - c_v)`` for any per-word constant ``c_v`` (it cancels in ``phi``).
    For each document, alternate ``phi_dvk ∝ exp(E[log theta_dk] + E[log beta_kv])`` and
    ``gamma_d = alpha + sum_v n_dv phi_dv`` until the mean absolute change of ``gamma_d``
    falls below ``tol`` or for ``max_iter`` sweeps. ``phi`` is never stored: only the
    normaliser ``norm_dv = sum_k exp(E log theta_dk) exp(E log beta_kv)`` of each non-zero
    count is formed, over the non-zeros only.

    With ``warm`` (n_docs, K), a document keeps ``warm[d]`` instead when its bound
    ``f_d(warm[d]) > f_d(gamma_d)``: the bound is a sum over documents given ``lambda``, so
    the total is then at least the bound at ``warm``.

    Returns the sufficient statistics ``sum_d n_dv phi_dvk / exp(E log beta_kv - c_v)`` as
    a (K, V) array, for the optimal ``phi`` given the returned ``gamma``, and
    ``sum_d f_d(gamma_d) - sum_dv n_dv c_v`` (the documents' part of the ELBO). The
    statistics are added up in ``out`` (a (K, V) float array, overwritten) when it is
    given, in a new array otherwise.
    """
    n_docs, n_topics = gamma.shape
    n_words = exp_elog_beta_t.shape[0]
    indptr, indices, counts = X.indptr, X.indices, X.data
    if out is None:
        stats = np.zeros((n_topics, n_words))
    else:
        stats = out
        stats.fill(0.0)
    total = 0.0
    entries = min(_BLOCK_ENTRIES, max(_MIN_BLOCK_ENTRIES, (n_docs + n_words) * n_topics // 2))
    budget = max(entries // n_topics, 1)
    stops = [0]
    while stops[-1] < n_docs:
        start = stops[-1]
        stop = int(np.searchsorted(indptr, indptr[start] + budget, side="right")) - 1
        stops.append(min(max(stop, start + 1), n_docs))
    # Two (nnz, K) arrays for the rows of exp(E log beta)^T at a block's non-zeros and for
    # their compacted copies as documents settle, made once for all the blocks: arrays of a
    # new size for every block would each take a new place in the heap.
    largest = int(np.max(np.diff(indptr[stops])))
    buffers = np.empty((2, largest, n_topics))
    for start, stop in itertools.pairwise(stops):
        lo, hi = indptr[start], indptr[stop]
        block_ptr = indptr[start : stop + 1] - lo
        sizes = np.diff(block_ptr)
        cols = indices[lo:hi]
        cnt = counts[lo:hi]
        # the rows of exp(E log beta)^T at the block's non-zeros, (nnz in the block, K); the
        # indices are valid, and with mode="clip" np.take writes straight into ``out``
        # (its default mode writes through a temporary copy)
        beta_nz = buffers[0, : hi - lo]
        np.take(exp_elog_beta_t, cols, axis=0, out=beta_nz, mode="clip")
        op = _norm_operator(beta_nz, sizes)
        g = gamma[start:stop]
        if _iterate_block(g, sizes, cnt, beta_nz, op, alpha, max_iter, tol, buffers):
            np.take(exp_elog_beta_t, cols, axis=0, out=beta_nz, mode="clip")  # gathered again
        f, a, norm = _doc_bounds(g, sizes, cnt, op, alpha)
        if warm is not None:
            w = warm[start:stop]
            f_w, a_w, norm_w = _doc_bounds(w, sizes, cnt, op, alpha)
            better = f_w > f
            if better.any():
                g[better], f[better], a[better] = w[better], f_w[better], a_w[better]
                better_nz = np.repeat(better, sizes)
                norm[better_nz] = norm_w[better_nz]
        total += float(f.sum())
        # stats[k, v] += sum_d (n_dv / norm_dv) a_dk over the block's non-zeros, one topic
        # at a time: the product with all K columns of ``a`` at once would make a (V, K)
        # temporary, the size of the statistics, per block
        ratio_t = sp.csc_matrix(
            (np.divide(cnt, norm, out=norm), cols, block_ptr), shape=(n_words, stop - start)
        )
        for row, a_k in zip(stats, a.T, strict=True):
            row += ratio_t @ np.ascontiguousarray(a_k)
    return stats, total


def _doc_bounds(g, sizes, cnt, op, alpha):
    """Each document's part ``f_d`` of the ELBO at ``gamma_d = g[d]``, ``phi`` optimal.

    ``f_d = sum_v n_dv log sum_k exp(E log theta_dk + E log beta_kv - c_v)
    + E_q log Dir(theta_d; alpha) - E_q log Dir(theta_d; gamma_d)``. Also returns
    ``a = exp(E log theta - s_d)`` (row maximum ``s_d`` removed) and the normalisers
    ``norm_dv = sum_k a_dk exp(E log beta_kv - c_v)`` at the non-zeros (``op`` is the
    block's :func:`_norm_operator`), from which
    ``phi_dvk = a_dk exp(E log beta_kv - c_v) / norm_dv``.
    """
    n = g.shape[0]
    elog = _dirichlet_expected_log(g)
    shift = elog.max(axis=1)
    a = np.exp(elog - shift[:, None])
    norm = op @ a.ravel()
    rows = np.repeat(np.arange(n), sizes)
    words = np.bincount(rows, weights=cnt * (np.log(norm) + shift[rows]), minlength=n)
    log_b_alpha = np.sum(gammaln(alpha)) - gammaln(np.sum(alpha))
    dirichlet = (
        gammaln(g).sum(axis=1)
        - gammaln(g.sum(axis=1))
        - log_b_alpha
        + np.einsum("ij,ij->i", alpha - g, elog)
    )
    return words + dirichlet, a, norm


def _index_dtype(n):
    """The index type of a sparse matrix whose indices and sizes are below ``n``."""
    return np.int32 if n < _INT32_MAX else np.int64


def _norm_operator(beta_nz, sizes):
    """The sparse matrix ``M`` with ``(M a)_i = beta_nz[i] . a[doc(i)]``.

    Row ``i`` of ``M`` (one per non-zero count) holds ``beta_nz[i]`` in the ``K`` columns of
    its document, so that, with ``a`` the (n_docs, K) array raveled, ``M @ a`` gives every
    normaliser ``norm_dv`` in one compiled sparse product over the non-zeros only. Stored as
    a block sparse row matrix of 1 x K blocks, one per non-zero: its data is ``beta_nz``
    itself (not a copy) and its index one document number per non-zero.
    """
    n_nz, n_topics = beta_nz.shape
    itype = _index_dtype(max(n_nz, sizes.size * n_topics) + 1)
    doc_of = np.repeat(np.arange(sizes.size, dtype=itype), sizes)
    return sp.bsr_matrix(
        (beta_nz.reshape(n_nz, 1, n_topics), doc_of, np.arange(n_nz + 1, dtype=itype)),
        shape=(n_nz, sizes.size * n_topics),
    )


def _doc_sum_operator(sizes):
    """The (n_docs, nnz) CSR matrix ``S`` whose row ``d`` spans the non-zeros of document ``d``.

    With weights ``t`` written into ``S.data`` (in place), ``S @ beta_nz`` gives the
    per-document sums ``sum_v t_dv beta_nz[dv]`` in one compiled sparse product.
    """
    n_nz = int(sizes.sum())
    itype = _index_dtype(n_nz + 1)
    ptr = np.zeros(sizes.size + 1, dtype=itype)
    np.cumsum(sizes, out=ptr[1:])
    return sp.csr_matrix(
        (np.empty(n_nz), np.arange(n_nz, dtype=itype), ptr), shape=(sizes.size, n_nz)
    )


def _iterate_block(g, sizes, cnt, beta_nz, op, alpha, max_iter, tol, buffers):
    """Updates 1-2 on one block of documents, each until its own ``gamma_d`` settles.

    ``sizes`` are the documents' numbers of non-zero counts (all positive), ``cnt`` and
    ``beta_nz`` the counts and the rows of ``exp(E log beta)^T`` at the non-zeros, in order,
    and ``op`` their :func:`_norm_operator`. The documents still moving are computed
    together; once fewer than three quarters of the documents computed are still moving,
    the non-zeros of the settled ones are dropped: the rows of the others are copied into
    ``buffers[1]`` and, at the next drop, back into ``buffers[0]``, the array that
    ``beta_nz`` begins (``buffers`` is (2, n, K), ``n`` at least the rows of ``beta_nz``).
    Returns whether ``beta_nz`` was so overwritten.
    """
    n_topics = g.shape[1]
    idx = np.arange(g.shape[0])
    live = np.ones(idx.size, dtype=bool)
    doc_sum = _doc_sum_operator(sizes)
    target, overwritten = 1, False
    for _ in range(max_iter):
        ga = g[idx]
        elog = digamma(ga)
        a = np.exp(elog - elog.max(axis=1, keepdims=True))
        norm = op @ a.ravel()
        np.divide(cnt, norm, out=doc_sum.data)
        new = alpha + a * (doc_sum @ beta_nz)
        # the mean over topics as np.mean computes it (a sum, then a division by K), without
        # its per-call overhead
        change = np.add.reduce(np.abs(new - ga), axis=1) / n_topics
        g[idx[live]] = new[live]
        live &= change >= tol
        n_live = int(np.count_nonzero(live))
        if n_live == 0:
            break
        if n_live < 0.75 * idx.size:
            kept = np.flatnonzero(np.repeat(live, sizes))
            del op, doc_sum  # the previous operators go before the next are made
            beta_nz = np.take(beta_nz, kept, axis=0, out=buffers[target, : kept.size], mode="clip")
            overwritten |= target == 0
            target = 1 - target
            cnt = cnt[kept]
            sizes, idx = sizes[live], idx[live]
            live = np.ones(idx.size, dtype=bool)
            op, doc_sum = _norm_operator(beta_nz, sizes), _doc_sum_operator(sizes)
    return overwritten


def _shifted_exp_beta(elog_beta):
    """``c_v = max_k E log beta_kv`` and ``exp(E log beta_kv - c_v)`` transposed, (V, K)."""
    return _shift_exp_inplace(elog_beta.T.copy())  # a copy: the caller may use elog_beta again


def _shift_exp_inplace(elog_beta_t):
    """:func:`_shifted_exp_beta` from ``E[log beta]`` already transposed, (V, K), in place:
    returns ``c_v`` and ``elog_beta_t``, which then holds ``exp(E log beta_kv - c_v)``."""
    shift = elog_beta_t[:, 0].copy()
    for column in elog_beta_t.T[1:]:
        np.maximum(shift, column, out=shift)
    _subtract_along_rows(elog_beta_t, shift)
    return shift, np.exp(elog_beta_t, out=elog_beta_t)


def _scale_by_exp_beta(stats, exp_beta_t):
    """``stats *= exp_beta_t.T`` in place, (K, V) by (V, K), topic by topic (no buffer)."""
    for row, column in zip(stats, exp_beta_t.T, strict=True):
        row *= column
    return stats


def _local_stats(X, gamma, exp_beta_t, shift, alpha, max_iter, tol, warm=None, out=None):
    """:func:`_local_step` on a non-empty CSR corpus, its bound with the shifts ``c_v`` put
    back: ``(stats_t, sum_d f_d)``, with ``stats_t`` the (V, K) transpose (a view) of the
    statistics, which ``out`` (K, V) receives when given. The statistics are a sum over
    documents, so those of a corpus are the sum of those of its pieces (the Dask fit adds
    them over row blocks)."""
    stats, part = _local_step(X, gamma, exp_beta_t, alpha, max_iter, tol, warm, out)
    # sum_dv n_dv c_v as a sparse product (one value per document), not through an
    # nnz-long gather of the shifts
    return stats.T, part + float((X @ shift).sum())


def check_counts(X, name):
    """Raise unless the CSR matrix ``X`` holds counts: integers in ``[0, 2^53]``."""
    values = X.data
    if values.size:
        if values.min() < 0:
            raise ValueError(
                f"Negative values in data passed to {name}: X must hold "
                f"word counts (its smallest entry is {values.min():.6g})."
            )
        # in pieces, so that the rounded copy is a small array, not one of the corpus' size
        for start in range(0, values.size, _CHECK_CHUNK):
            piece = values[start : start + _CHECK_CHUNK]
            rounded = np.round(piece)
            if piece.max() > 2.0**53 or np.any(piece != rounded):
                bad = piece[(piece != rounded) | (piece > 2.0**53)][0]
                raise ValueError(
                    f"{name} needs word counts, integers in [0, 2**53]: X has the entry {bad!r}."
                )


def _elbo(doc_part, topic_prior, lam, elog_beta):
    """Total ELBO: the documents' part (``_local_step``) + the topics' Dirichlet terms."""
    return doc_part + _dirichlet_elbo_terms(topic_prior, lam, elog_beta)


class _Corpus:
    """A validated count matrix split into its non-empty documents (CSR) and their lengths."""

    def __init__(self, X):
        lengths = np.asarray(X.sum(axis=1)).ravel()
        self.n_docs = X.shape[0]
        self.nonempty = np.flatnonzero(lengths > 0)
        self.X = X[self.nonempty] if self.nonempty.size < self.n_docs else X
        self.lengths = lengths[self.nonempty]
        self.n_words = float(lengths.sum())


class _Variational:
    """The variational state ``(lambda, gamma)`` and the CAVI sweeps of the LDA model.

    ``step`` is one sweep of batch CAVI for :func:`mathlearn.inference.coordinate_ascent`:
    the local updates (Prop. 23, 1-2) of every document from ``gamma_d = alpha + N_d / K``,
    each document keeping the previous sweep's ``gamma_d`` instead where that gives it a
    larger bound, then the bound at ``(gamma, lambda)`` with ``phi`` optimal, then the
    global update ``lambda_k = eta + sum_dv n_dv phi_dvk`` (Prop. 23, 3).

    Why the bound cannot decrease: with ``L(gamma, lambda)`` the ELBO maximised over
    ``phi``, the update of ``lambda`` maximises ``L`` given the ``phi`` of ``gamma_t``,
    so ``L(gamma_t, lambda_{t+1}) >= L(gamma_t, lambda_t)``; the next sweep's ``gamma`` is,
    document by document, at least as good as ``gamma_t`` under ``lambda_{t+1}``.
    Restarting the local updates rather than continuing them from ``gamma_t`` keeps early
    sweeps, taken under nearly uniform topics, from fixing the documents' proportions.
    """

    def __init__(self, alpha, eta, lam, max_doc_iter, doc_tol):
        self.alpha, self.eta, self.lam = alpha, eta, lam
        self.max_doc_iter, self.doc_tol = max_doc_iter, doc_tol
        self.gamma = None

    def initial_gamma(self, corpus):
        """``gamma_d = alpha + N_d / K``: the update of ``gamma`` from a uniform ``phi``."""
        gamma = np.empty((corpus.lengths.size, self.alpha.size))
        per_topic = corpus.lengths / self.alpha.size
        for k, column in enumerate(gamma.T):  # column by column: no broadcast buffer
            np.add(self.alpha[k], per_topic, out=column)
        return gamma

    def expected_log_beta(self):
        return _dirichlet_expected_log(self.lam)

    def local(self, corpus, gamma, elog_beta, warm=None):
        """Updates 1-2 from ``gamma`` (in place; ``warm``: see ``_local_step``); returns the
        (K, V) statistics and the documents' part of the bound."""
        return self._local_shifted(corpus, gamma, *_shifted_exp_beta(elog_beta), warm)

    def _local_shifted(self, corpus, gamma, shift, exp_beta_t, warm=None):
        """:meth:`local` given ``_shifted_exp_beta(E[log beta])``."""
        if corpus.X.shape[0] == 0:
            return np.zeros_like(self.lam), 0.0
        stats_t, part = _local_stats(
            corpus.X, gamma, exp_beta_t, shift, self.alpha, self.max_doc_iter, self.doc_tol, warm
        )
        return _scale_by_exp_beta(stats_t.T, exp_beta_t), part

    def step(self, corpus):
        lam = self.lam
        # The sweep holds two K x V arrays (the model's largest) at a time. E[log beta] is
        # made transposed, (V, K), as the local updates read it; the topics' part of the
        # bound, which needs it and lambda only, is taken first, and the same array then
        # becomes exp(E[log beta] - c) in place. lambda's own array is not read again in
        # the sweep: the statistics are added up in it, and it becomes the new lambda.
        exp_beta_t = _expected_log_beta_t(lam)
        topic_part = _elbo(0.0, self.eta, lam, exp_beta_t.T)
        shift, exp_beta_t = _shift_exp_inplace(exp_beta_t)
        if not (lam.flags.c_contiguous and lam.flags.writeable):  # never the case in a fit
            lam = np.empty(lam.shape)
        gamma = self.initial_gamma(corpus)
        if corpus.X.shape[0] == 0:
            lam.fill(0.0)
            doc_part = 0.0
        else:
            _, doc_part = _local_stats(
                corpus.X,
                gamma,
                exp_beta_t,
                shift,
                self.alpha,
                self.max_doc_iter,
                self.doc_tol,
                self.gamma,
                out=lam,
            )
        self.gamma = gamma
        # lambda_k = eta + sum_dv n_dv phi_dvk, topic by topic in place
        for row, column in zip(lam, exp_beta_t.T, strict=True):
            row *= column
            row += self.eta
        self.lam = lam
        return doc_part + topic_part


class _OnlineVariational(_Variational):
    """Stochastic variational inference (Hoffman, Blei & Bach, 2010) on ``lambda``.

    ``step`` is one pass over the documents in mini-batches ``B`` of ``batch_size``: the
    local updates of the batch's documents (from ``gamma_d = alpha + N_d / K``), the noisy
    global optimum ``lambda_hat = eta + (D / |B|) sum_{d in B} sum_v n_dv phi_dv``, and the
    step ``lambda <- (1 - rho_t) lambda + rho_t lambda_hat`` with ``rho_t = (tau_0 + t)^-kappa``
    (``t = 1, 2, ...`` counts the mini-batches), which is a natural-gradient step of size
    ``rho_t`` on the ELBO. After the pass it returns the ELBO of the whole corpus (the local
    updates of every document under the new ``lambda``), which is not monotone.
    """

    def __init__(self, alpha, eta, lam, max_doc_iter, doc_tol, batch_size, offset, decay):
        super().__init__(alpha, eta, lam, max_doc_iter, doc_tol)
        self.batch_size, self.offset, self.decay = batch_size, offset, decay
        self.n_batch_iter = 0

    def partial(self, corpus, total_docs):
        """One stochastic step on the documents of ``corpus`` (one mini-batch)."""
        if corpus.X.shape[0] == 0:
            return
        gamma = self.initial_gamma(corpus)
        stats, _ = self.local(corpus, gamma, self.expected_log_beta())
        self.n_batch_iter += 1
        rho = (self.offset + self.n_batch_iter) ** (-self.decay)
        scale = total_docs / corpus.n_docs
        self.lam = (1.0 - rho) * self.lam + rho * (self.eta + scale * stats)

    def step(self, corpus):
        X = corpus.X
        for start in range(0, X.shape[0], self.batch_size):
            batch = _Corpus(X[start : start + self.batch_size])
            self.partial(batch, X.shape[0])
        elog_beta = self.expected_log_beta()
        gamma = self.initial_gamma(corpus)
        _, doc_part = self.local(corpus, gamma, elog_beta)
        return _elbo(doc_part, self.eta, self.lam, elog_beta)


class LatentDirichletAllocation(ComponentNamesMixin, TransformerMixin, BaseEstimator):
    r"""Latent Dirichlet allocation (LDA) topic model, fitted by variational inference.

    Each of ``K`` topics is a distribution ``beta_k`` over the ``V`` words of the
    vocabulary, each document ``d`` a mixture ``theta_d`` of the topics, and each word of a
    document is drawn from the topic of its own assignment ``z_dn``. Given a
    document-term count matrix, the model approximates the posterior of topics, proportions
    and assignments by a mean-field family fitted by coordinate-ascent variational inference
    (CAVI), or by its stochastic variant for large corpora.

    Parameters
    ----------
    n_components : int, default=10
        Number of topics ``K``.
    doc_topic_prior : float, array-like of shape (n_components,) or None, default=None
        ``alpha``, the parameter of the Dirichlet prior on each document's topic
        proportions ``theta_d``; ``None``: ``1 / n_components``. A float is a symmetric
        prior. Must be positive.
    topic_word_prior : float, array-like of shape (n_features,) or None, default=None
        ``eta``, the parameter of the Dirichlet prior on each topic's word distribution
        ``beta_k``; ``None``: ``1 / n_components``. Must be positive.
    learning_method : {"batch", "online"}, default="batch"
        ``"batch"``: CAVI over the whole corpus, whose ELBO never decreases. ``"online"``:
        stochastic variational inference over mini-batches of ``batch_size`` documents
        (Hoffman, Blei & Bach, 2010); each pass over the corpus is one iteration.
    learning_decay : float, default=0.7
        ``kappa`` in the step size ``rho_t = (learning_offset + t)^-kappa`` of the online
        method, in ``(0.5, 1]`` (the Robbins-Monro conditions).
    learning_offset : float, default=10.0
        ``tau_0 > 0``, which down-weights the first mini-batches of the online method.
    max_iter : int, default=100
        Maximum number of CAVI sweeps (``"batch"``) or passes over the corpus (``"online"``).
    batch_size : int, default=128
        Documents per mini-batch of the online method.
    total_samples : int, default=1_000_000
        Number of documents of the corpus that :meth:`partial_fit` sees in pieces: it
        scales each mini-batch's statistics (``fit`` uses the number of rows of ``X``).
    tol : float, default=1e-4
        Stop when the ELBO changes by less than ``tol`` times its magnitude between
        iterations.
    mean_change_tol : float, default=1e-3
        A document's local updates stop when the mean absolute change of its ``gamma_d``
        falls below this.
    max_doc_update_iter : int, default=100
        Maximum number of local sweeps per document per iteration.
    random_state : int, RandomState, Generator or None, default=None
        Seed of the initial ``lambda`` and of nothing else.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        ``lambda``: the parameters of the Dirichlet posteriors ``q(beta_k)``; a row divided
        by its sum is the posterior mean of the topic's word distribution.
    exp_dirichlet_component_ : ndarray of shape (n_components, n_features)
        ``exp(E_q[log beta_kv])``.
    doc_topic_prior_ : float or ndarray of shape (n_components,)
        ``alpha`` used.
    topic_word_prior_ : float or ndarray of shape (n_features,)
        ``eta`` used.
    elbo_history_ : ndarray of shape (n_iter_,)
        The ELBO (in nats, for the whole corpus) at each iteration: for ``"batch"``, at
        ``(gamma_t, lambda_t)`` before the sweep's update of ``lambda``; non-decreasing.
    lower_bounds_ : ndarray of shape (n_iter_,)
        The same array as ``elbo_history_``.
    lower_bound_ : float
        The last ELBO recorded.
    n_iter_ : int
        Number of iterations run.
    converged_ : bool
        Whether the relative change of the ELBO fell below ``tol``.
    n_batch_iter_ : int
        Number of mini-batch updates (online method and :meth:`partial_fit`).
    n_components_ : int
        ``K``.
    n_features_in_ : int
        ``V``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when ``X`` has string feature names.

    See Also
    --------
    sklearn.decomposition.LatentDirichletAllocation : The same model and variational family;
        its bound and perplexity follow the definition given here.
    NMF : Non-negative factorisation; with the KL loss, a maximum-likelihood relative.

    Notes
    -----
    The model (Oxford "Advanced Topics in Statistical Machine Learning" §8.4, eq. 8.2):
    ``beta_k ~ Dir_V(eta)``; for each document ``theta_d ~ Dir_K(alpha)`` and for each of
    its ``N_d`` words ``z_dn ~ Mult(theta_d)``, ``w_dn ~ Mult(beta_{z_dn})``. The mean-field
    family is ``q = prod_k Dir(beta_k; lambda_k) prod_d Dir(theta_d; gamma_d)
    prod_n Mult(z_dn; phi_dn)``, and the CAVI updates (Proposition 23, with Fact 22
    ``E[log pi_j] = psi(a_j) - psi(sum_l a_l)`` under ``Dir(a)``) are

    .. math::

        \phi_{dvk} &\propto \exp\{\psi(\gamma_{dk}) + \psi(\lambda_{kv})
                     - \psi(\textstyle\sum_u \lambda_{ku})\}, \\
        \gamma_d &= \alpha + \textstyle\sum_v n_{dv}\,\phi_{dv}, \qquad
        \lambda_k = \eta + \textstyle\sum_{d,v} n_{dv}\,\phi_{dvk},

    on the counts ``n_dv`` (one ``phi`` per distinct word of a document, shared by its
    ``n_dv`` tokens; only non-zero counts are visited). Each iteration runs the local
    updates of every document (``phi`` and ``gamma`` alternately, from the previous
    iteration's ``gamma``, until ``gamma_d`` settles), then the global update of
    ``lambda``, all through :func:`mathlearn.inference.coordinate_ascent`. The initial
    ``lambda`` has Gamma(100, 1/100) entries, the first ``gamma_d = alpha + N_d / K``
    (``phi`` uniform).

    **The ELBO** (eq. 8.1), with ``phi`` at its optimum given ``gamma`` and ``lambda``, is

    .. math::

        \mathcal L = \sum_{d,v} n_{dv} \log \sum_k
            \exp\{E\log\theta_{dk} + E\log\beta_{kv}\}
          + \sum_d \bigl(E_q \log \mathrm{Dir}(\theta_d;\alpha)
                      - E_q\log \mathrm{Dir}(\theta_d;\gamma_d)\bigr)
          + \sum_k \bigl(E_q \log \mathrm{Dir}(\beta_k;\eta)
                      - E_q\log \mathrm{Dir}(\beta_k;\lambda_k)\bigr),

    a lower bound on ``log p(X)`` (the word terms count the multinomial coefficient of no
    document: the words are a sequence, as in the model). In batch mode every update
    maximises ``L`` over its block, so ``elbo_history_`` never decreases; a decrease
    beyond rounding is reported by a ``NumericalWarning``. :meth:`score` is ``L`` for new
    documents under the fitted ``lambda`` (their ``gamma`` fitted by the local updates)
    and :meth:`perplexity` is ``exp(-L / N)`` with ``N`` the total word count, the
    definition scikit-learn's ``perplexity`` uses, so that the two libraries' figures
    compare.

    **Inputs.** Counts must be integers in ``[0, 2^53]`` (float64 represents them
    exactly); a document with no words is allowed: it has no assignments, so
    ``gamma_d = alpha`` and it adds nothing to the bound.

    **Dask arrays.** The local updates of a document need only its own counts and
    ``lambda``, and the global update only ``sum_dv n_dv phi_dvk``, a sum over documents. So
    a ``dask.array.Array`` of counts (blocks of rows) is fitted by the same sweeps with the
    local updates run block by block on the workers and the blocks' statistics and bound
    added (a balanced tree); each document's ``gamma_d`` returns to the client for the next
    sweep's comparison. The result is the NumPy fit's, to the rounding of the order of the
    additions. Only the batch method runs on Dask: the online method's mini-batches are
    sequential by construction (``partial_fit`` on computed blocks in turn does it).

    **Cost.** An iteration costs ``O(nnz(X) K)`` per local sweep (at most
    ``max_doc_update_iter`` sweeps) plus ``O(K V)``; memory ``O((D + V) K)``: two
    ``K x V`` arrays of the topics in a batch iteration (``lambda``, whose array also
    receives the statistics ``sum_dv n_dv phi_dvk``, and ``E[log beta]``, then
    ``exp(E[log beta])`` in its place), ``O(D K)`` for the documents, and a block of
    documents at a time, whose ``nnz K`` products, at most ``(D + V) K / 2`` (and 2^19),
    are held in two arrays of that size. The corpus is not copied when it is already a CSR
    matrix of counts in canonical form.

    References: D. M. Blei, A. Y. Ng and M. I. Jordan, "Latent Dirichlet allocation",
    JMLR 3 (2003); M. D. Hoffman, D. M. Blei and F. Bach, "Online learning for latent
    Dirichlet allocation", NeurIPS (2010).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.decomposition import LatentDirichletAllocation
    >>> X = np.array([[5, 4, 0, 0], [4, 6, 1, 0], [0, 0, 5, 6], [1, 0, 4, 5]])
    >>> lda = LatentDirichletAllocation(n_components=2, random_state=0).fit(X)
    >>> theta = lda.transform(X)
    >>> bool(theta[0].argmax() != theta[2].argmax())
    True
    >>> bool(np.all(np.diff(lda.elbo_history_) >= 0))
    True
    """

    _common_test_params: ClassVar[dict] = {"n_components": 3, "max_iter": 50, "tol": 1e-3}

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "doc_topic_prior": [Interval(Real, 0, None, closed="neither"), "array-like", None],
        "topic_word_prior": [Interval(Real, 0, None, closed="neither"), "array-like", None],
        "learning_method": [StrOptions({"batch", "online"})],
        "learning_decay": [Interval(Real, 0.5, 1, closed="right")],
        "learning_offset": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "total_samples": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "mean_change_tol": [Interval(Real, 0, None, closed="left")],
        "max_doc_update_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components: int = 10,
        *,
        doc_topic_prior=None,
        topic_word_prior=None,
        learning_method: str = "batch",
        learning_decay: float = 0.7,
        learning_offset: float = 10.0,
        max_iter: int = 100,
        batch_size: int = 128,
        total_samples: int = 1_000_000,
        tol: float = 1e-4,
        mean_change_tol: float = 1e-3,
        max_doc_update_iter: int = 100,
        random_state=None,
    ):
        self.n_components = n_components
        self.doc_topic_prior = doc_topic_prior
        self.topic_word_prior = topic_word_prior
        self.learning_method = learning_method
        self.learning_decay = learning_decay
        self.learning_offset = learning_offset
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.total_samples = total_samples
        self.tol = tol
        self.mean_change_tol = mean_change_tol
        self.max_doc_update_iter = max_doc_update_iter
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        # Counts: the common checks then round their data to non-negative integers.
        tags.input_tags.categorical = True
        tags.requires_fit = True
        return tags

    def _check_X(self, X, *, reset):
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=reset)
        if not sp.issparse(X):
            X = sp.csr_matrix(X)
        elif not X.has_canonical_format or np.any(X.data == 0):
            # Duplicates summed and explicit zeros dropped on a copy: the caller's matrix is
            # left as it is, and a corpus already in that form is not copied at all.
            X = sp.csr_matrix(X, copy=True)
            X.sum_duplicates()
            X.eliminate_zeros()
        else:
            X = sp.csr_matrix(X)
        check_counts(X, type(self).__name__)
        return X

    @staticmethod
    def _prior(value, size, name, default):
        if value is None:
            return default, np.full(size, default)
        if np.ndim(value) == 0:
            return float(value), np.full(size, float(value))
        vec = np.asarray(value, dtype=np.float64)
        if vec.shape != (size,):
            raise ValueError(f"{name} must be a float or have shape ({size},); got {vec.shape}.")
        if not np.all(np.isfinite(vec)) or np.any(vec <= 0):
            raise ValueError(f"{name} must be positive and finite; got {vec!r}.")
        return vec, vec

    def _init_state(self, n_features):
        K = int(self.n_components)
        self.doc_topic_prior_, alpha = self._prior(
            self.doc_topic_prior, K, "doc_topic_prior", 1.0 / K
        )
        self.topic_word_prior_, eta = self._prior(
            self.topic_word_prior, n_features, "topic_word_prior", 1.0 / K
        )
        rng = check_random_state(self.random_state)
        lam = rng.gamma(100.0, 0.01, size=(K, n_features))
        args = (alpha, eta, lam, int(self.max_doc_update_iter), float(self.mean_change_tol))
        if self.learning_method == "online":
            return _OnlineVariational(
                *args, int(self.batch_size), float(self.learning_offset), self.learning_decay
            )
        return _Variational(*args)

    def _store(self, state):
        self._state = state
        self.components_ = state.lam
        elog_beta = state.expected_log_beta()
        self.exp_dirichlet_component_ = np.exp(elog_beta, out=elog_beta)
        self.n_components_ = int(self.n_components)
        self.n_batch_iter_ = getattr(state, "n_batch_iter", 0)

    @_fit_context
    def fit(self, X, y=None):
        """Fit the variational posterior to the count matrix ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            Document-term counts (non-negative integers). A ``dask.array.Array`` (dense or
            sparse blocks of rows) is fitted block by block (batch method only; see Notes).
        y : Ignored
            Not used, present for API consistency.

        Returns
        -------
        self : LatentDirichletAllocation
            The fitted model.
        """
        from ..inference import coordinate_ascent

        if is_dask(X):
            from ._dask import lda_corpus_dask, lda_state_dask

            corpus = lda_corpus_dask(self, X)
        else:
            X = self._check_X(X, reset=True)
            corpus = _Corpus(X)
        if corpus.n_words == 0:
            raise ValueError(f"{type(self).__name__}: X has no words (every count is zero).")
        state = self._init_state(self.n_features_in_)
        if is_dask(X):
            state = lda_state_dask(self, state)
        batch = self.learning_method == "batch"
        result = coordinate_ascent(
            state,
            corpus,
            max_iter=int(self.max_iter),
            tol=float(self.tol),
            criterion="relative",
            on_decrease="warn" if batch else "ignore",
            name="LDA's CAVI",
        )
        self._store(state)
        self.elbo_history_ = result.lower_bounds
        self.lower_bounds_ = self.elbo_history_
        self.lower_bound_ = result.lower_bound
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        if not result.converged:
            warnings.warn(
                f"{type(self).__name__} did not converge in max_iter={self.max_iter} "
                f"iterations (relative ELBO change above tol={self.tol}); increase max_iter.",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    @_fit_context
    def partial_fit(self, X, y=None):
        """One stochastic variational step per mini-batch of ``batch_size`` rows of ``X``.

        The first call initialises ``lambda``; each mini-batch's statistics are scaled by
        ``total_samples / batch rows``, the online update of Hoffman, Blei and Bach (2010).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts of a piece of the corpus.
        y : Ignored
            Not used, present for API consistency.

        Returns
        -------
        self : LatentDirichletAllocation
            The updated model.
        """
        first = not hasattr(self, "components_")
        X = self._check_X(X, reset=first)
        state = self._init_state(X.shape[1]) if first else self._state
        if not isinstance(state, _OnlineVariational):
            state = _OnlineVariational(
                state.alpha,
                state.eta,
                state.lam,
                state.max_doc_iter,
                state.doc_tol,
                int(self.batch_size),
                float(self.learning_offset),
                self.learning_decay,
            )
        for start in range(0, X.shape[0], int(self.batch_size)):
            state.partial(_Corpus(X[start : start + int(self.batch_size)]), self.total_samples)
        self._store(state)
        return self

    def _local_fit(self, X):
        """``gamma`` of each row of ``X`` under the fitted ``lambda``, and its bound."""
        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        corpus = _Corpus(X)
        state = self._state
        gamma_ne = state.initial_gamma(corpus)
        elog_beta = state.expected_log_beta()
        _, doc_part = state.local(corpus, gamma_ne, elog_beta)
        gamma = np.tile(state.alpha, (X.shape[0], 1))
        gamma[corpus.nonempty] = gamma_ne
        return gamma, doc_part, corpus

    def transform(self, X, *, normalize: bool = True):
        """Document-topic proportions: the posterior means ``gamma_d / sum_k gamma_dk``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts.
        normalize : bool, default=True
            ``False`` returns ``gamma`` itself (the Dirichlet parameters of ``q(theta_d)``).

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            Proportions (rows sum to one) or ``gamma``; a lazy Dask array (row blocks as
            those of ``X``) when ``X`` is a Dask array.
        """
        if is_dask(X):
            from ._dask import lda_transform_dask

            return lda_transform_dask(self, X, normalize)
        gamma, _, _ = self._local_fit(X)
        if normalize:
            gamma /= gamma.sum(axis=1, keepdims=True)
        return gamma

    def score(self, X, y=None) -> float:
        """The ELBO of the documents ``X`` under the fitted topics (in nats).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts.
        y : Ignored
            Not used, present for API consistency.

        Returns
        -------
        float
            ``L`` of the Notes, with the topics' terms at the fitted ``lambda`` and each
            document's ``gamma`` from the local updates.
        """
        _, doc_part, _ = self._local_fit(X)
        state = self._state
        return _elbo(doc_part, state.eta, state.lam, state.expected_log_beta())

    def perplexity(self, X) -> float:
        """``exp(-L / N)``: the ELBO :meth:`score` per word, negated and exponentiated.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts, with at least one word.

        Returns
        -------
        float
            The perplexity bound; ``N`` is the total count of ``X``.
        """
        _, doc_part, corpus = self._local_fit(X)
        if corpus.n_words == 0:
            raise ValueError("perplexity needs at least one word: every count of X is zero.")
        state = self._state
        bound = _elbo(doc_part, state.eta, state.lam, state.expected_log_beta())
        return float(np.exp(-bound / corpus.n_words))
