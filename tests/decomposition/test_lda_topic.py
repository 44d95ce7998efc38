"""LatentDirichletAllocation: CAVI updates, the ELBO, scikit-learn on the same counts."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from scipy.special import digamma, gammaln
from sklearn.decomposition import LatentDirichletAllocation as SkLDA

from mathlearn.decomposition import LatentDirichletAllocation
from mathlearn.exceptions import ConvergenceWarning


def _corpus(n_docs, n_words, n_topics, doc_len, seed, doc_conc=0.2, word_conc=0.05):
    """Documents drawn from the LDA model with known topics (rows of ``beta``)."""
    rng = np.random.default_rng(seed)
    beta = rng.dirichlet(np.full(n_words, word_conc), size=n_topics)
    theta = rng.dirichlet(np.full(n_topics, doc_conc), size=n_docs)
    X = np.stack([rng.multinomial(doc_len, t @ beta) for t in theta]).astype(float)
    return X, beta


def _elog_dirichlet(P):
    return digamma(P) - digamma(P.sum(axis=1, keepdims=True))


def _log_b(a):
    return gammaln(a).sum(axis=-1) - gammaln(a.sum(axis=-1))


def _elbo_reference(X, gamma, lam, alpha, eta):
    """E_q log p(w, z, theta, beta) + H(q), term by term, with dense phi (D, V, K).

    ``phi_dv`` is optimal given ``gamma`` and ``lambda`` (Prop. 23, update 1); the bound is
    summed over the tokens through the counts.
    """
    X = np.asarray(X)
    K, V = lam.shape
    e_theta, e_beta = _elog_dirichlet(gamma), _elog_dirichlet(lam)
    logits = e_theta[:, None, :] + e_beta.T[None, :, :]  # (D, V, K)
    phi = np.exp(logits - logits.max(axis=2, keepdims=True))
    phi /= phi.sum(axis=2, keepdims=True)
    alpha_v, eta_v = np.full(K, alpha), np.full(V, eta)
    log_p_z_w = np.sum(X[:, :, None] * phi * logits)  # E log p(z|theta) + E log p(w|z,beta)
    entropy_z = -np.sum(X[:, :, None] * phi * np.log(phi))
    theta_terms = np.sum(-_log_b(alpha_v) + ((alpha_v - 1) * e_theta).sum(1)) - np.sum(
        -_log_b(gamma) + ((gamma - 1) * e_theta).sum(1)
    )
    beta_terms = np.sum(-_log_b(eta_v) + ((eta_v - 1) * e_beta).sum(1)) - np.sum(
        -_log_b(lam) + ((lam - 1) * e_beta).sum(1)
    )
    return log_p_z_w + entropy_z + theta_terms + beta_terms


def _min_matched_cosine(A, B):
    A = A / np.linalg.norm(A, axis=1, keepdims=True)
    B = B / np.linalg.norm(B, axis=1, keepdims=True)
    C = A @ B.T
    rows, cols = linear_sum_assignment(-C)
    return C[rows, cols].min()


def test_one_topic_closed_form():
    # K = 1: phi = 1, so gamma_d = alpha + N_d and lambda = eta + the corpus' word counts.
    X, _ = _corpus(30, 12, 2, 15, seed=0)
    X[3] = 0
    lda = LatentDirichletAllocation(
        n_components=1, doc_topic_prior=0.7, topic_word_prior=0.3, max_iter=5, random_state=0
    ).fit(X)
    np.testing.assert_allclose(lda.components_[0], 0.3 + X.sum(0), rtol=1e-13)
    np.testing.assert_allclose(lda.transform(X, normalize=False)[:, 0], 0.7 + X.sum(1), rtol=1e-13)
    np.testing.assert_allclose(lda.transform(X), 1.0)


@pytest.mark.parametrize("seed", range(4))
def test_elbo_monotone_in_batch_mode(seed):
    rng = np.random.default_rng(seed)
    D, V = rng.integers(20, 60), rng.integers(10, 40)
    X = sp.random(D, V, density=0.3, random_state=seed, format="csr")
    X.data = rng.integers(1, 8, X.data.size).astype(float)
    lda = LatentDirichletAllocation(
        n_components=int(rng.integers(2, 6)),
        doc_topic_prior=float(rng.uniform(0.05, 2)),
        topic_word_prior=float(rng.uniform(0.01, 1)),
        max_iter=40,
        tol=0.0,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lda.fit(X)  # a decrease would raise the driver's NumericalWarning (warnings = errors)
    bounds = lda.elbo_history_
    # Rounding of a sum of O(nnz) terms of size |L|: far below 1e-9 relative.
    assert np.all(np.diff(bounds) >= -1e-9 * np.abs(bounds[1:]))
    assert bounds[-1] > bounds[0]
    assert lda.lower_bounds_ is lda.elbo_history_ and lda.lower_bound_ == bounds[-1]


def test_score_is_the_elbo_of_the_notes():
    X, _ = _corpus(25, 15, 3, 20, seed=1)
    lda = LatentDirichletAllocation(
        n_components=3, doc_topic_prior=0.4, topic_word_prior=0.2, max_iter=30, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lda.fit(X)
    gamma = lda.transform(X, normalize=False)
    ref = _elbo_reference(X, gamma, lda.components_, 0.4, 0.2)
    np.testing.assert_allclose(lda.score(X), ref, rtol=1e-11)
    np.testing.assert_allclose(lda.perplexity(X), np.exp(-ref / X.sum()), rtol=1e-10)
    # Empty documents add nothing: gamma = alpha makes their Dirichlet terms cancel.
    X0 = np.vstack([X, np.zeros((2, 15))])
    np.testing.assert_allclose(lda.score(X0), lda.score(X), rtol=1e-13)
    np.testing.assert_allclose(lda.transform(X0, normalize=False)[-2:], 0.4)


def test_transform_is_the_fixed_point_of_the_local_updates():
    X, _ = _corpus(20, 10, 3, 25, seed=2)
    lda = LatentDirichletAllocation(
        n_components=3, mean_change_tol=1e-13, max_doc_update_iter=5000, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lda.fit(X)
    lam, alpha = lda.components_, 1 / 3
    gamma = np.ones((20, 3))
    for _ in range(5000):  # Prop. 23: phi from gamma, gamma = alpha + sum_v n_dv phi_dv
        logits = _elog_dirichlet(gamma)[:, None, :] + _elog_dirichlet(lam).T[None]
        phi = np.exp(logits - logits.max(axis=2, keepdims=True))
        phi /= phi.sum(axis=2, keepdims=True)
        gamma = alpha + np.einsum("dv,dvk->dk", X, phi)
    np.testing.assert_allclose(lda.transform(X, normalize=False), gamma, rtol=1e-9)


def _separated_corpus(n_docs, seed):
    """Three topics on disjoint blocks of 8 words (plus a little of every word)."""
    rng = np.random.default_rng(seed)
    beta = np.kron(np.eye(3), np.ones(8)) + 0.02
    beta /= beta.sum(axis=1, keepdims=True)
    theta = rng.dirichlet(np.full(3, 0.5), size=n_docs)
    return np.stack([rng.multinomial(100, t @ beta) for t in theta]).astype(float), beta


def test_bound_and_perplexity_share_scikit_learns_definition():
    X, _ = _separated_corpus(40, seed=0)
    s = SkLDA(n_components=3, doc_topic_prior=0.5, topic_word_prior=0.1, max_iter=5).fit(X)
    gamma = s.transform(X, normalize=False)
    ref = _elbo_reference(X, gamma, s.components_, 0.5, 0.1)
    np.testing.assert_allclose(s.score(X), ref, rtol=1e-11)
    np.testing.assert_allclose(s.perplexity(X), np.exp(-ref / X.sum()), rtol=1e-10)


def test_no_worse_than_scikit_learn_at_equal_iterations():
    # Same counts, priors and number of iterations; the bound of both under the definition
    # checked above. Each run's value depends on its random initial lambda, so the
    # comparison is over three initialisations of each library.
    X, _ = _separated_corpus(60, seed=2)
    kw = dict(n_components=3, doc_topic_prior=0.5, topic_word_prior=0.1, mean_change_tol=1e-5)
    ours, theirs = [], []
    for seed in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            o = LatentDirichletAllocation(max_iter=10, tol=0.0, random_state=seed, **kw).fit(X)
        s = SkLDA(learning_method="batch", max_iter=10, random_state=seed, **kw).fit(X)
        ours.append((o.score(X), o.perplexity(X)))
        theirs.append((s.score(X), s.perplexity(X)))
    ours, theirs = np.array(ours), np.array(theirs)
    assert ours[:, 0].mean() >= theirs[:, 0].mean()
    assert np.exp(-ours[:, 0].mean() / X.sum()) <= np.exp(-theirs[:, 0].mean() / X.sum())
    np.testing.assert_allclose(ours[:, 1], np.exp(-ours[:, 0] / X.sum()), rtol=1e-12)


def test_topics_recovered_from_a_synthetic_corpus():
    X, beta = _corpus(300, 50, 4, 60, seed=3, doc_conc=0.3, word_conc=0.1)
    lda = LatentDirichletAllocation(n_components=4, tol=1e-6, random_state=0).fit(sp.csr_matrix(X))
    assert lda.converged_
    assert _min_matched_cosine(lda.components_, beta) >= 0.95
    np.testing.assert_allclose(
        lda.exp_dirichlet_component_,
        np.exp(_elog_dirichlet(lda.components_)),
        rtol=1e-12,
    )


def test_online_recovers_topics_and_partial_fit_is_one_pass():
    X, beta = _separated_corpus(300, seed=7)
    online = LatentDirichletAllocation(
        n_components=3, learning_method="online", batch_size=50, max_iter=20, random_state=0
    ).fit(X)
    assert _min_matched_cosine(online.components_, beta) >= 0.95
    assert online.n_batch_iter_ == 6 * online.n_iter_
    one_pass = LatentDirichletAllocation(
        n_components=3, learning_method="online", batch_size=50, max_iter=1, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        one_pass.fit(X)
    pieces = LatentDirichletAllocation(
        n_components=3, batch_size=50, total_samples=300, random_state=0
    )
    pieces.partial_fit(X[:150]).partial_fit(X[150:])
    np.testing.assert_allclose(pieces.components_, one_pass.components_, rtol=1e-12)


def test_sparse_and_dense_agree():
    X, _ = _corpus(40, 20, 3, 30, seed=4)
    kw = dict(n_components=3, max_iter=10, tol=0.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = LatentDirichletAllocation(**kw).fit(X)
        b = LatentDirichletAllocation(**kw).fit(sp.csr_matrix(X))
    np.testing.assert_allclose(a.components_, b.components_, rtol=1e-12)
    np.testing.assert_allclose(a.transform(X), b.transform(sp.csc_matrix(X)), rtol=1e-12)


@pytest.mark.parametrize(
    ("value", "match"),
    [(-1.0, "Negative values"), (0.5, "word counts, integers"), (np.nan, "NaN"), (np.inf, "inf")],
)
def test_bad_counts(value, match):
    X = np.ones((5, 4))
    X[2, 1] = value
    with pytest.raises(ValueError, match=match):
        LatentDirichletAllocation(n_components=2).fit(X)
    with pytest.raises(ValueError, match=match):
        LatentDirichletAllocation(n_components=2).fit(sp.csr_matrix(X))


def test_bad_count_found_anywhere_in_a_large_corpus():
    # The counts are checked piece by piece: an entry far from the first is still reported,
    # and the first bad entry is the one named.
    X = sp.random(300, 200, density=0.5, random_state=0, format="csr")
    X.data[:] = 1.0
    X.data[-3], X.data[-1] = 2.5, 2.0**60
    with pytest.raises(ValueError, match=r"X has the entry (np\.float64\()?2\.5\b"):
        LatentDirichletAllocation(n_components=2).fit(X)


def test_bad_priors_and_empty_corpus():
    X = np.ones((5, 4))
    for kw in ({"doc_topic_prior": 0.0}, {"topic_word_prior": -1.0}):
        with pytest.raises(ValueError, match="prior"):
            LatentDirichletAllocation(n_components=2, **kw).fit(X)
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        LatentDirichletAllocation(n_components=2, doc_topic_prior=[1.0, 1.0, 1.0]).fit(X)
    with pytest.raises(ValueError, match="positive"):
        LatentDirichletAllocation(n_components=2, topic_word_prior=[1.0, 0.0, 1.0, 1.0]).fit(X)
    with pytest.raises(ValueError, match="no words"):
        LatentDirichletAllocation(n_components=2).fit(np.zeros((3, 4)))
    lda = LatentDirichletAllocation(n_components=2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="at least one word"):
        lda.perplexity(np.zeros((2, 4)))


def test_vector_priors_equal_scalar_priors():
    X, _ = _corpus(30, 12, 2, 20, seed=5)
    kw = dict(n_components=2, max_iter=8, tol=0.0, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = LatentDirichletAllocation(doc_topic_prior=0.3, topic_word_prior=0.2, **kw).fit(X)
        b = LatentDirichletAllocation(
            doc_topic_prior=[0.3, 0.3], topic_word_prior=np.full(12, 0.2), **kw
        ).fit(X)
    np.testing.assert_allclose(a.components_, b.components_, rtol=1e-12)
    np.testing.assert_allclose(a.elbo_history_, b.elbo_history_, rtol=1e-12)


def test_large_counts_stay_finite():
    X, _ = _corpus(20, 10, 2, 20, seed=6)
    lda = LatentDirichletAllocation(n_components=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lda.fit(X * 2.0**40)
    assert np.all(np.isfinite(lda.components_)) and np.isfinite(lda.lower_bound_)
    with pytest.raises(ValueError, match="integers"):
        lda.fit(X * 2.0**60)


def test_caller_matrix_untouched_and_duplicates_summed():
    """A CSR corpus with duplicate entries and explicit zeros fits as its canonical form
    (duplicates summed, zeros dropped) and is left as the caller gave it; a canonical corpus
    is used as it is."""
    rng = np.random.default_rng(5)
    dense = rng.poisson(0.5, size=(30, 12)).astype(float)
    canonical = sp.csr_matrix(dense)
    # every non-zero split into two entries of the same row and column, then a zero per
    # row: built from (data, indices, indptr) directly, which keeps them as given
    data, indices, indptr = [], [], [0]
    for i in range(30):
        lo, hi = canonical.indptr[i], canonical.indptr[i + 1]
        for j, v in zip(canonical.indices[lo:hi], canonical.data[lo:hi], strict=True):
            data += [np.floor(v / 2), v - np.floor(v / 2)]
            indices += [j, j]
        data.append(0.0)
        indices.append(11)
        indptr.append(len(data))
    X = sp.csr_matrix((np.array(data), np.array(indices), np.array(indptr)), shape=dense.shape)
    assert X.nnz > canonical.nnz and not X.has_canonical_format
    before = (X.data.copy(), X.indices.copy(), X.indptr.copy())
    kw = dict(n_components=3, max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = LatentDirichletAllocation(**kw).fit(X)
        b = LatentDirichletAllocation(**kw).fit(canonical)
    for got, want in zip((X.data, X.indices, X.indptr), before, strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(a.components_, b.components_, rtol=1e-12)
    np.testing.assert_allclose(a.elbo_history_, b.elbo_history_, rtol=1e-12)
