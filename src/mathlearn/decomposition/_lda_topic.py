"""Latent Dirichlet allocation fitted by coordinate-ascent variational inference (CAVI)."""

from __future__ import annotations

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
from ..distributions import Dirichlet
from ..exceptions import ConvergenceWarning
from ..utils._backend import is_dask
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import check_random_state, validate_data

__all__ = ["LatentDirichletAllocation"]

# The local E-step runs on blocks of documents holding at most this many (non-zero count x
# topic) products, so that its temporaries stay a few MiB whatever the corpus size, and
# at most half the model's own (documents + words) x topics entries, so that on a small
# corpus they stay below the model's own memory; never fewer than the minimum, below which
# the interpreter's per-block work dominates.
_BLOCK_ENTRIES = 1 << 19
_MIN_BLOCK_ENTRIES = 1 << 12


def _dirichlet_expected_log(params):
    """``E[log pi] = psi(params) - psi(sum params)`` row by row (Fact 22 of the Oxford notes).

    One category (a single topic, a one-word vocabulary) is the point mass ``pi = 1``, whose
    expected log is 0; :class:`~mathlearn.distributions.Dirichlet` needs two or more.
    """
    if params.shape[-1] == 1:
        return np.zeros_like(params)
    return Dirichlet(params).expected_log()


def _dirichlet_elbo_terms(prior, params, expected_log):
    """``E_q[log Dir(pi; prior)] - E_q[log Dir(pi; params)]`` summed over the rows of ``params``.

    ``prior`` is a vector broadcast against every row of ``params``; ``expected_log`` holds
    ``E_q[log pi]`` under ``q = Dir(params)``. Each row contributes
    ``log B(params) - log B(prior) + sum (prior - params) E_q[log pi]`` with
    ``log B(a) = sum log Gamma(a) - log Gamma(sum a)``.
    """
    n = params.shape[0]
    log_b_prior = float(np.sum(gammaln(prior)) - gammaln(np.sum(prior)))
    # row by row, and the cross term as two dot products: no temporary of params' size
    # (for the topics that is K x V, the model's largest array)
    sum_gammaln = sum(float(np.sum(gammaln(row))) for row in params)
    log_b_params = sum_gammaln - float(np.sum(gammaln(params.sum(axis=1))))
    cross = float(expected_log.sum(axis=0) @ prior) - float(np.vdot(params, expected_log))
    return cross + log_b_params - n * log_b_prior


def _local_step(X, gamma, exp_elog_beta_t, alpha, max_iter, tol, warm=None):
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
    a (V, K) array, for the optimal ``phi`` given the returned ``gamma``, and
    ``sum_d f_d(gamma_d) - sum_dv n_dv c_v`` (the documents' part of the ELBO).
    """
    n_docs, n_topics = gamma.shape
    n_words = exp_elog_beta_t.shape[0]
    indptr, indices, counts = X.indptr, X.indices, X.data
    stats_t = np.zeros((n_words, n_topics))
    total = 0.0
    entries = min(_BLOCK_ENTRIES, max(_MIN_BLOCK_ENTRIES, (n_docs + n_words) * n_topics // 2))
    budget = max(entries // n_topics, 1)
    start = 0
    while start < n_docs:
        stop = int(np.searchsorted(indptr, indptr[start] + budget, side="right")) - 1
        stop = min(max(stop, start + 1), n_docs)
        lo, hi = indptr[start], indptr[stop]
        block_ptr = indptr[start : stop + 1] - lo
        sizes = np.diff(block_ptr)
        cols = indices[lo:hi]
        cnt = counts[lo:hi]
        beta_nz = exp_elog_beta_t[cols]  # (nnz in the block, K)
        g = gamma[start:stop]
        _iterate_block(g, sizes, cnt, beta_nz, alpha, max_iter, tol)
        f, a, norm = _doc_bounds(g, sizes, cnt, beta_nz, alpha)
        if warm is not None:
            w = warm[start:stop]
            f_w, a_w, norm_w = _doc_bounds(w, sizes, cnt, beta_nz, alpha)
            better = f_w > f
            if better.any():
                g[better], f[better], a[better] = w[better], f_w[better], a_w[better]
                better_nz = np.repeat(better, sizes)
                norm[better_nz] = norm_w[better_nz]
        total += float(f.sum())
        ratio = sp.csr_matrix((cnt / norm, cols, block_ptr), shape=(stop - start, n_words))
        stats_t += ratio.T @ a
        start = stop
    return stats_t, total


def _doc_bounds(g, sizes, cnt, beta_nz, alpha):
    """Each document's part ``f_d`` of the ELBO at ``gamma_d = g[d]``, ``phi`` optimal.

    ``f_d = sum_v n_dv log sum_k exp(E log theta_dk + E log beta_kv - c_v)
    + E_q log Dir(theta_d; alpha) - E_q log Dir(theta_d; gamma_d)``. Also returns
    ``a = exp(E log theta - s_d)`` (row maximum ``s_d`` removed) and the normalisers
    ``norm_dv = sum_k a_dk exp(E log beta_kv - c_v)`` at the non-zeros, from which
    ``phi_dvk = a_dk exp(E log beta_kv - c_v) / norm_dv``.
    """
    n = g.shape[0]
    elog = _dirichlet_expected_log(g)
    shift = elog.max(axis=1)
    a = np.exp(elog - shift[:, None])
    rows = np.repeat(np.arange(n), sizes)
    norm = np.einsum("ij,ij->i", a[rows], beta_nz)
    words = np.bincount(rows, weights=cnt * (np.log(norm) + shift[rows]), minlength=n)
    log_b_alpha = np.sum(gammaln(alpha)) - gammaln(np.sum(alpha))
    dirichlet = (
        gammaln(g).sum(axis=1)
        - gammaln(g.sum(axis=1))
        - log_b_alpha
        + np.einsum("ij,ij->i", alpha - g, elog)
    )
    return words + dirichlet, a, norm


def _block_operator(beta_nz, sizes):
    """The block-diagonal sparse matrix ``M`` with ``(M a)_i = beta_nz[i] . a[doc(i)]``.

    Row ``i`` of ``M`` (one per non-zero count) holds ``beta_nz[i]`` in the ``K`` columns of
    its document, so that, with ``a`` the (n_docs, K) array raveled, ``M @ a`` gives every
    normaliser ``norm_dv`` and ``M.T @ t`` the per-document sums ``sum_v t_dv beta_v.``: the
    two halves of a sweep as two compiled sparse products over the non-zeros only.
    """
    n_nz, n_topics = beta_nz.shape
    n_docs = sizes.size
    itype = np.int32 if n_docs * n_topics < np.iinfo(np.int32).max else np.int64
    doc_of = np.repeat(np.arange(n_docs, dtype=itype), sizes)
    cols = (doc_of[:, None] * itype(n_topics) + np.arange(n_topics, dtype=itype)).ravel()
    ptr = np.arange(0, n_nz * n_topics + 1, n_topics, dtype=itype)
    return sp.csr_matrix((beta_nz.ravel(), cols, ptr), shape=(n_nz, n_docs * n_topics))


def _iterate_block(g, sizes, cnt, beta_nz, alpha, max_iter, tol):
    """Updates 1-2 on one block of documents, each until its own ``gamma_d`` settles.

    ``sizes`` are the documents' numbers of non-zero counts (all positive), ``cnt`` and
    ``beta_nz`` the counts and the rows of ``exp(E log beta)^T`` at the non-zeros, in order.
    The documents still moving are computed together; once fewer than three quarters of the
    documents computed are still moving, the non-zeros of the settled ones are dropped.
    """
    idx = np.arange(g.shape[0])
    live = np.ones(idx.size, dtype=bool)
    op = _block_operator(beta_nz, sizes)
    op_t = op.T
    for _ in range(max_iter):
        ga = g[idx]
        elog = digamma(ga)
        a = np.exp(elog - elog.max(axis=1, keepdims=True))
        norm = op @ a.ravel()
        new = alpha + a * (op_t @ (cnt / norm)).reshape(a.shape)
        change = np.abs(new - ga).mean(axis=1)
        g[idx[live]] = new[live]
        live &= change >= tol
        n_live = int(np.count_nonzero(live))
        if n_live == 0:
            return
        if n_live < 0.75 * idx.size:
            keep_nz = np.repeat(live, sizes)
            beta_nz, cnt = beta_nz[keep_nz], cnt[keep_nz]
            sizes, idx = sizes[live], idx[live]
            live = np.ones(idx.size, dtype=bool)
            op = _block_operator(beta_nz, sizes)
            op_t = op.T


def _shifted_exp_beta(elog_beta):
    """``c_v = max_k E log beta_kv`` and ``exp(E log beta_kv - c_v)`` transposed, (V, K)."""
    shift = elog_beta.max(axis=0)
    out = np.empty(elog_beta.shape[::-1])
    np.subtract(elog_beta.T, shift[:, None], out=out)
    return shift, np.exp(out, out=out)


def _local_stats(X, gamma, exp_beta_t, shift, alpha, max_iter, tol, warm=None):
    """:func:`_local_step` on a non-empty CSR corpus, its bound with the shifts ``c_v`` put
    back: ``(stats_t, sum_d f_d)``. The statistics are a sum over documents, so those of a
    corpus are the sum of those of its pieces (the Dask fit adds them over row blocks)."""
    stats_t, part = _local_step(X, gamma, exp_beta_t, alpha, max_iter, tol, warm)
    return stats_t, part + float(X.data @ shift[X.indices])


def check_counts(X, name):
    """Raise unless the CSR matrix ``X`` holds counts: integers in ``[0, 2^53]``."""
    values = X.data
    if values.size:
        if values.min() < 0:
            raise ValueError(
                f"Negative values in data passed to {name}: X must hold "
                f"word counts (its smallest entry is {values.min():.6g})."
            )
        if values.max() > 2.0**53 or np.any(values != np.round(values)):
            bad = values[(values != np.round(values)) | (values > 2.0**53)][0]
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
        return self.alpha + (corpus.lengths / self.alpha.size)[:, None]

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
        stats_t *= exp_beta_t
        return stats_t.T, part

    def step(self, corpus):
        elog_beta = self.expected_log_beta()
        # The topics' part of the bound needs E[log beta] and lambda only: taken first, so
        # that E[log beta] is freed before the local updates (K x V is the model's largest
        # array; the sweep then holds three of them, not five).
        topic_part = _elbo(0.0, self.eta, self.lam, elog_beta)
        shifted = _shifted_exp_beta(elog_beta)
        del elog_beta
        gamma = self.initial_gamma(corpus)
        stats, doc_part = self._local_shifted(corpus, gamma, *shifted, warm=self.gamma)
        del shifted
        self.gamma = gamma
        stats += self.eta
        self.lam = stats
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
    ``max_doc_update_iter`` sweeps) plus ``O(K V)``; memory ``O((D + V) K)``: three
    ``K x V`` arrays of the topics, ``O(D K)`` for the documents, and a block of documents
    at a time whose ``nnz K`` products are at most ``(D + V) K / 2`` (and 2^19). The corpus
    is not copied when it is already a CSR matrix of counts in canonical form.

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
        self.exp_dirichlet_component_ = np.exp(state.expected_log_beta())
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
