"""LDA topic model against scikit-learn's ``LatentDirichletAllocation`` on the same counts.

One batch iteration (``max_iter=1``: initial ``lambda``, the local updates of every document
with ``max_doc_update_iter=100`` and ``mean_change_tol=1e-3`` on both sides, and the update
of ``lambda``; ours also evaluates the ELBO, which scikit-learn skips with its default
``evaluate_every=-1``) on a corpus drawn from the LDA model: 5 000 documents, a vocabulary of
10 000 words, 20 topics, about 100 distinct words per document (sparse CSR). scikit-learn
runs with ``n_jobs=1``. The first call of each is timed on its own (no warm-up: ours compiles
nothing), then the harness alternates the two. Run with ``python benchmarks/run.py lda``.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
import sklearn.decomposition as skd

import mathlearn.decomposition as mld
from _harness import compare
from _sweep_cases import Case
from mathlearn.exceptions import ConvergenceWarning


def corpus(n_docs, n_words, n_topics, n_tokens, seed=0):
    """Counts drawn from LDA: sparse topics (Dir(0.05)) and proportions (Dir(0.1))."""
    rng = np.random.default_rng(seed)
    beta = rng.dirichlet(np.full(n_words, 0.05), size=n_topics)
    theta = rng.dirichlet(np.full(n_topics, 0.1), size=n_docs)
    rows, cols, vals = [], [], []
    for d in range(n_docs):
        words, counts = np.unique(
            rng.choice(n_words, n_tokens, p=theta[d] @ beta), return_counts=True
        )
        rows.append(np.full(words.size, d))
        cols.append(words)
        vals.append(counts)
    return sp.csr_matrix(
        (np.concatenate(vals).astype(float), (np.concatenate(rows), np.concatenate(cols))),
        shape=(n_docs, n_words),
    )


def _ours(X, k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return mld.LatentDirichletAllocation(k, max_iter=1, random_state=0).fit(X)


def _peer(X, k):
    return skd.LatentDirichletAllocation(
        k, learning_method="batch", max_iter=1, n_jobs=1, random_state=0
    ).fit(X)


def main() -> None:
    for n_docs, n_words in ((500, 2_000), (5_000, 10_000)):
        X = corpus(n_docs, n_words, 20, 110)
        name = f"LDA one batch iteration, {n_docs}x{n_words}, K=20, nnz/doc={X.nnz / n_docs:.0f}"
        t0 = time.perf_counter()
        _ours(X, 20)
        t1 = time.perf_counter()
        _peer(X, 20)
        t2 = time.perf_counter()
        print(
            f"| {name}, first call | {(t1 - t0) * 1e3:.1f} | {(t2 - t1) * 1e3:.1f} | "
            f"{(t1 - t0) / (t2 - t1):.2f} | 1 ({'met' if t1 - t0 <= t2 - t1 else 'NOT met'}) |",
            flush=True,
        )
        compare(name, lambda X=X: _ours(X, 20), lambda X=X: _peer(X, 20), repeats=1, target=1.0)


def sweep_corpus(n_docs, n_words, n_topics=10, n_tokens=60, seed=0):
    """Counts drawn from LDA as :func:`corpus`, all tokens at once (fast at 1e5 documents)."""
    rng = np.random.default_rng(seed)
    beta = rng.dirichlet(np.full(n_words, 0.05), size=n_topics)
    theta = rng.dirichlet(np.full(n_topics, 0.1), size=n_docs)
    doc = np.repeat(np.arange(n_docs), n_tokens)
    topic = (rng.random(doc.size)[:, None] > np.cumsum(theta, axis=1)[doc]).sum(axis=1)
    topic = np.minimum(topic, n_topics - 1)
    cdf = np.cumsum(beta, axis=1)
    word = np.empty(doc.size, dtype=np.intp)
    u = rng.random(doc.size)
    for k in range(n_topics):
        at = np.flatnonzero(topic == k)
        word[at] = np.minimum(np.searchsorted(cdf[k], u[at]), n_words - 1)
    X = sp.csr_matrix((np.ones(doc.size), (doc, word)), shape=(n_docs, n_words))
    X.sum_duplicates()
    return (X,)


def _sweep_ours(X, iters=5):
    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return mld.LatentDirichletAllocation(10, max_iter=iters, tol=0.0, random_state=0).fit(
                X
            )

    return fit


def _sweep_peer(X, iters=5):
    return lambda: skd.LatentDirichletAllocation(
        10, learning_method="batch", max_iter=iters, n_jobs=1, random_state=0
    ).fit(X)


# Batch variational Bayes, K = 10 topics, exactly 5 sweeps on both sides (ours: tol=0;
# scikit-learn: evaluate_every=-1, its default, never stops early), the same local-update
# limits (100 inner iterations, mean change 1e-3, both defaults); documents of 60 tokens from
# the LDA model over a vocabulary of D words. Ours evaluates the bound each sweep, the peer
# does not.
SWEEP_CASES = [
    Case(
        "topic models",
        "LatentDirichletAllocation batch, 5 sweeps",
        sweep_corpus,
        _sweep_ours,
        _sweep_peer,
        d=1_000,
        max_n=100_000,
        wide=(200, 20_000),
    )
]


if __name__ == "__main__":
    main()
