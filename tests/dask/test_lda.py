"""LatentDirichletAllocation on Dask arrays: batch CAVI with the E-step per row block.

Each sweep runs the local updates of every document in the block that holds it (the same
code as the NumPy sweep) and adds the blocks' statistics ``sum_dv n_dv phi_dvk`` and their
parts of the bound. Per document the arithmetic is that of the NumPy fit; only the order of
the additions across documents differs. The statistics are sums of ``m <= D`` non-negative
terms, and two orders of such a sum differ by at most ``2 (m - 1) u`` relative
(``u = 2^-53``): ``< 7e-14`` for the ``D = 300`` documents here. That difference is carried
into the next sweep through ``lambda``; the tests compare after five sweeps, and 1e-10
leaves a factor ``1e-10 / 7e-14 ~ 1500`` (more than 4 per sweep) for its amplification by the
sweeps, which the (contracting) local updates do not approach.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

da = pytest.importorskip("dask.array")

from mathlearn.decomposition import LatentDirichletAllocation  # noqa: E402
from mathlearn.exceptions import ConvergenceWarning  # noqa: E402

RTOL = 1e-10
CHUNKS = (50, 120, 30, 100)


def _corpus(n_docs=300, n_words=40, n_topics=3, doc_len=30, seed=0):
    rng = np.random.default_rng(seed)
    beta = rng.dirichlet(np.full(n_words, 0.05), size=n_topics)
    theta = rng.dirichlet(np.full(n_topics, 0.2), size=n_docs)
    X = np.stack([rng.multinomial(doc_len, t @ beta) for t in theta]).astype(float)
    X[7] = 0.0  # an empty document: gamma_d = alpha, no statistics
    return X


def _fit(X, **params):
    """Five sweeps (tol=0: never converged, which the fit reports)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return LatentDirichletAllocation(
            n_components=3, max_iter=5, tol=0.0, random_state=0, **params
        ).fit(X)


@pytest.mark.parametrize("blocks", ["dense", "sparse"])
def test_five_sweeps_equal_the_numpy_fit(blocks):
    X = _corpus()
    Xd = da.from_array(X, chunks=(CHUNKS, X.shape[1]))
    if blocks == "sparse":
        Xd = Xd.map_blocks(sp.csr_matrix, meta=sp.csr_matrix((0, 0)))
    ref, m = _fit(X), _fit(Xd)
    assert m.n_iter_ == ref.n_iter_ == 5
    np.testing.assert_allclose(m.components_, ref.components_, rtol=RTOL)
    np.testing.assert_allclose(m.elbo_history_, ref.elbo_history_, rtol=RTOL)
    np.testing.assert_allclose(m.exp_dirichlet_component_, ref.exp_dirichlet_component_, rtol=RTOL)
    assert np.all(np.diff(m.elbo_history_) >= 0)
    # transform: lazy, block by block; per document it is the NumPy computation
    T = m.transform(Xd)
    assert isinstance(T, da.Array)
    assert T.chunks == (CHUNKS, (3,))
    np.testing.assert_allclose(T.compute(), m.transform(X), rtol=1e-13, atol=0)
    G = m.transform(Xd, normalize=False).compute()
    np.testing.assert_allclose(G[7], m.doc_topic_prior_)


def test_one_topic_closed_form_on_blocks():
    # Independent of the NumPy fit: with K = 1, phi = 1, so lambda = eta + the corpus'
    # column sums and gamma_d = alpha + N_d whatever the blocks.
    X = _corpus(seed=1)
    Xd = da.from_array(X, chunks=(CHUNKS, X.shape[1]))
    m = LatentDirichletAllocation(
        n_components=1, doc_topic_prior=0.7, topic_word_prior=0.3, max_iter=3, random_state=0
    ).fit(Xd)
    np.testing.assert_allclose(m.components_[0], 0.3 + X.sum(0), rtol=1e-13)
    gamma = m.transform(Xd, normalize=False).compute()
    np.testing.assert_allclose(gamma[:, 0], 0.7 + X.sum(1), rtol=1e-13)


def test_bad_blocks_and_methods():
    X = _corpus(seed=2)
    bad = X.copy()
    bad[250, 3] = 0.5  # in the last block: found by the validation pass, before any sweep
    lda = LatentDirichletAllocation(n_components=2, max_iter=2)
    with pytest.raises(ValueError, match="word counts, integers"):
        lda.fit(da.from_array(bad, chunks=(CHUNKS, X.shape[1])))
    bad[250, 3] = -1.0
    with pytest.raises(ValueError, match="Negative values"):
        lda.fit(da.from_array(bad, chunks=(CHUNKS, X.shape[1])))
    bad[250, 3] = np.nan
    with pytest.raises(ValueError, match="word counts"):
        lda.fit(da.from_array(bad, chunks=(CHUNKS, X.shape[1])))
    with pytest.raises(ValueError, match="no words"):
        lda.fit(da.zeros((20, 4), chunks=(10, 4)))
    with pytest.raises(ValueError, match="learning_method='batch'"):
        LatentDirichletAllocation(learning_method="online").fit(da.from_array(X, chunks=100))
    fitted = _fit(X)
    with pytest.raises(ValueError, match="features"):
        fitted.transform(da.from_array(X[:, :-1], chunks=100))
