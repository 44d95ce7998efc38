"""Graph cuts and graph constructors (Oxford "Advanced Topics in Statistical Machine Learning"
§4: similarity graphs, Lemma 17; Stuttgart "Introduction to Machine Learning", exercise sheet
9, exercise 3)."""

import numpy as np
import pytest
import scipy.sparse as sp

from mathlearn.utils.graph import cut, epsilon_graph, knn_graph, laplacian, ratio_cut


def _random_graph(rng, n=12):
    W = rng.random((n, n)) * (rng.random((n, n)) < 0.5)
    return np.triu(W, 1) + np.triu(W, 1).T


def _brute_cut(W, labels):
    labels = np.asarray(labels)
    return sum(
        W[i, j] for i in range(len(labels)) for j in range(len(labels)) if labels[i] != labels[j]
    )


@pytest.mark.parametrize("k", [2, 3, 4])
def test_lemma_17_ratio_cut_is_a_laplacian_quadratic_form(rng, k):
    for _ in range(5):
        W = _random_graph(rng)
        labels = rng.integers(0, k, size=12)
        labels[:k] = np.arange(k)  # every cluster non-empty
        L, _ = laplacian(W)
        L = L.toarray() if sp.issparse(L) else L
        total = 0.0
        for c in range(k):
            h = (labels == c) / np.sqrt(np.sum(labels == c))
            total += h @ L @ h
        assert ratio_cut(W, labels) == pytest.approx(total, rel=1e-12)
        assert cut(W, labels) == pytest.approx(_brute_cut(W, labels), rel=1e-12)
        by_hand = sum(
            sum(W[i, j] for i in np.flatnonzero(labels == c) for j in np.flatnonzero(labels != c))
            / np.sum(labels == c)
            for c in range(k)
        )
        assert ratio_cut(W, labels) == pytest.approx(by_hand, rel=1e-12)
        assert ratio_cut(sp.csr_matrix(W), labels) == pytest.approx(by_hand, rel=1e-12)


def test_two_cluster_identity_f_L_f_is_n_ratio_cut(rng):
    # Stuttgart exercise sheet 9, exercise 3: f = sqrt(|B|/|A|) on A, -sqrt(|A|/|B|) on B.
    W = _random_graph(rng, 10)
    labels = np.array([0] * 4 + [1] * 6)
    f = np.where(labels == 0, np.sqrt(6 / 4), -np.sqrt(4 / 6))
    L = np.diag(W.sum(1)) - W
    assert f @ L @ f == pytest.approx(10 * ratio_cut(W, labels), rel=1e-12)
    # RatioCut(C1, C2) = (1/|C1| + 1/|C2|) sum_{C1 x C2} w_ij
    across = W[np.ix_(labels == 0, labels == 1)].sum()
    assert ratio_cut(W, labels) == pytest.approx((1 / 4 + 1 / 6) * across, rel=1e-12)


def test_mutual_and_symmetric_knn_graphs(rng):
    X = rng.normal(size=(30, 2))
    k = 3
    D = np.linalg.norm(X[:, None] - X[None], axis=2)
    np.fill_diagonal(D, np.inf)
    nn = np.argsort(D, axis=1)[:, :k]
    A = np.zeros((30, 30), bool)
    A[np.repeat(np.arange(30), k), nn.ravel()] = True
    sym = knn_graph(X, k).toarray() > 0
    mut = knn_graph(X, k, mutual=True).toarray() > 0
    np.testing.assert_array_equal(sym, A | A.T)
    np.testing.assert_array_equal(mut, A & A.T)


def test_epsilon_graph(rng):
    X = rng.normal(size=(40, 3))
    D = np.linalg.norm(X[:, None] - X[None], axis=2)
    eps = float(np.median(D))
    W = epsilon_graph(X, eps)
    expected = (D <= eps) & ~np.eye(40, dtype=bool)
    np.testing.assert_array_equal(W.toarray() > 0, expected)
    Wd = epsilon_graph(X, eps, mode="distance").toarray()
    np.testing.assert_allclose(Wd[expected], D[expected], rtol=1e-12)
    # Far from the origin the neighbourhoods are the same.
    np.testing.assert_array_equal((epsilon_graph(X + 1e8, eps).toarray() > 0), expected)


def test_graph_bad_input():
    W = np.ones((3, 3))
    with pytest.raises(ValueError, match="one entry per vertex"):
        ratio_cut(W, [0, 1])
    with pytest.raises(ValueError, match="square"):
        cut(np.ones((2, 3)), [0, 1])
    with pytest.raises(ValueError, match="eps"):
        epsilon_graph(np.zeros((3, 1)), 0.0)
    with pytest.raises(ValueError, match="NaN"):
        epsilon_graph(np.array([[np.nan], [1.0]]), 1.0)
