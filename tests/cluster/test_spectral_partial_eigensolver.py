"""Shift-invert Lanczos (ARPACK) against the dense eigendecomposition of graph Laplacians.

Eigenvalues must agree to ``O(eps N ||L||)`` and the eigenvector subspaces to
``O(eps N ||L|| / gap)`` (Davis-Kahan), on connected, disconnected (a repeated zero
eigenvalue) and symmetric (repeated non-zero eigenvalues) graphs.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from mathlearn.cluster import SpectralClustering
from mathlearn.manifold import SpectralEmbedding


def _lsym(W):
    W = W.toarray() if sp.issparse(W) else np.asarray(W)
    s = 1.0 / np.sqrt(W.sum(axis=1))
    return np.eye(len(W)) - s[:, None] * W * s[None, :]


def _check(vals, vecs, L, k):
    w, V = np.linalg.eigh(L)
    n = len(L)
    tol = 100 * n * np.finfo(float).eps * np.linalg.norm(L, 2)
    np.testing.assert_allclose(vals, w[:k], rtol=0, atol=tol)
    gap = w[k] - w[k - 1]
    Q, _ = np.linalg.qr(vecs)
    P = Q @ Q.T - V[:, :k] @ V[:, :k].T
    assert np.linalg.norm(P, 2) < tol / gap


def _blobs(rng, n, centres):
    c = rng.standard_normal((centres, 3)) * 20.0
    return c[rng.integers(0, centres, n)] + rng.standard_normal((n, 3))


@pytest.mark.parametrize("affinity", ["nearest_neighbors", "rbf"])
def test_arpack_matches_dense_connected(rng, affinity):
    X = _blobs(rng, 300, 1)
    kw = {"n_neighbors": 8} if affinity == "nearest_neighbors" else {"gamma": 0.1}
    sc = SpectralClustering(
        4, affinity=affinity, laplacian="symmetric", eigen_solver="arpack", random_state=0, **kw
    ).fit(X)
    _check(sc.eigenvalues_, sc.embedding_, _lsym(sc.affinity_matrix_), 4)


def test_arpack_disconnected_graph_repeated_zero(rng):
    # Three far-apart blobs: the kNN graph has three components, so 0 is a triple eigenvalue
    # whose eigenspace (the component indicators, scaled) must be found whole.
    X = np.vstack([rng.standard_normal((100, 3)) + 1e3 * i for i in range(3)])
    sc = SpectralClustering(
        3,
        affinity="nearest_neighbors",
        n_neighbors=6,
        laplacian="symmetric",
        eigen_solver="arpack",
        random_state=0,
    ).fit(X)
    L = _lsym(sc.affinity_matrix_)
    assert np.sum(np.linalg.eigvalsh(L) < 1e-10) == 3
    _check(sc.eigenvalues_, sc.embedding_, L, 3)
    assert len(set(zip(sc.labels_, np.repeat([0, 1, 2], 100), strict=True))) == 3


def test_arpack_repeated_nonzero_eigenvalues():
    # A cycle graph: eigenvalues 1 - cos(2 pi j / n), each non-zero one twice.
    n = 60
    W = sp.diags([np.ones(n - 1), np.ones(n - 1)], [-1, 1]).tolil()
    W[0, n - 1] = W[n - 1, 0] = 1.0
    W = W.tocsr()
    sc = SpectralClustering(
        5, affinity="precomputed", laplacian="symmetric", eigen_solver="arpack", random_state=0
    ).fit(W)
    _check(sc.eigenvalues_, sc.embedding_, _lsym(W), 5)


def test_spectral_embedding_lanczos_route_matches_dense(rng):
    # 600 points: above the dense limit, so "auto" takes shift-invert Lanczos.
    X = _blobs(rng, 600, 1)
    se = SpectralEmbedding(2, affinity="nearest_neighbors", n_neighbors=10, laplacian="symmetric")
    emb = se.fit_transform(X)
    L = _lsym(se.affinity_matrix_)
    w, V = np.linalg.eigh(L)
    tol = 100 * 600 * np.finfo(float).eps * 2
    np.testing.assert_allclose(se.eigenvalues_, w[1:3], rtol=0, atol=tol)
    Q, _ = np.linalg.qr(emb)
    P = Q @ Q.T - V[:, 1:3] @ V[:, 1:3].T
    assert np.linalg.norm(P, 2) < tol / min(w[3] - w[2], w[1] - w[0])


@pytest.mark.parametrize("sparse,dense", [(True, False), (True, True), (False, True)])
def test_shift_invert_factorisation_and_its_fallback(rng, sparse, dense):
    # L - sigma I is factorised without pivoting (SPD); where it is not positive definite
    # (here a symmetric matrix with negative eigenvalues) the factorisation reports it and
    # ARPACK's own pivoted LU is used instead: same eigenpairs either way.
    from mathlearn.cluster._spectral import _SIGMA, _shift_invert, bottom_eigenpairs

    n, k = 300, 4
    A = sp.random(n, n, density=0.02, random_state=1)
    W = (A + A.T).tocsr()
    W.data[:] = 1.0
    W = W + sp.diags(np.ones(n - 1), 1) + sp.diags(np.ones(n - 1), -1)
    L = sp.csr_matrix(_lsym(W))
    for M in (L, L - 0.5 * sp.identity(n)):
        M = M if sparse else M.toarray()
        op = _shift_invert(M, _SIGMA, dense)
        full = M.toarray() if sparse else M
        assert (op is None) == (np.linalg.eigvalsh(full)[0] < 0)
        if op is not None:
            b = rng.standard_normal(n)
            x = op.matvec(b)
            resid = full @ x - _SIGMA * x - b
            assert np.linalg.norm(resid) < 1e-9 * np.linalg.norm(b) * np.linalg.norm(x)
        vals, vecs = bottom_eigenpairs(M, k, np.random.default_rng(0), "arpack")
        if op is not None:
            _check(vals, vecs, full, k)
        else:
            # shift-invert finds the eigenvalues nearest sigma (here not the smallest)
            w = np.linalg.eigvalsh(full)
            near = np.sort(w[np.argsort(np.abs(w - _SIGMA))[:k]])
            np.testing.assert_allclose(vals, near, rtol=0, atol=100 * n * 2.3e-16 * 2)
            resid = full @ vecs - vecs * vals
            assert np.abs(resid).max() < 100 * n * 2.3e-16 * 2


@pytest.mark.parametrize("n", [7, 8])
def test_packed_positions_match_lapack(n):
    # the rectangular full packed layout against LAPACK's own conversion (dtrttf)
    from scipy.linalg import lapack

    from mathlearn.cluster._spectral import _packed_shifted, _rfp_position

    A = np.arange(n * n, dtype=float).reshape(n, n)
    A = np.tril(A) + np.tril(A, -1).T
    ref, info = lapack.dtrttf(np.asfortranarray(A), transr="N", uplo="L")
    assert info == 0
    i, j = np.tril_indices(n)
    packed = np.empty(n * (n + 1) // 2)
    packed[_rfp_position(i, j, n)] = A[i, j]
    np.testing.assert_array_equal(packed, ref)
    shifted, _ = lapack.dtrttf(np.asfortranarray(A + 0.5 * np.eye(n)), transr="N", uplo="L")
    np.testing.assert_array_equal(_packed_shifted(A, -0.5), shifted)
    np.testing.assert_array_equal(_packed_shifted(sp.csr_matrix(A), -0.5), shifted)


def test_known_laplacian_skips_only_the_pivot_check():
    # A Laplacian built from non-negative weights is positive semidefinite by construction:
    # its factorisation's pivots are not read (that materialised SuperLU's U factor), and
    # the eigenpairs are the same bits as with the check.
    from mathlearn.cluster._spectral import bottom_eigenpairs
    from mathlearn.utils.graph import knn_graph, laplacian

    X = np.random.default_rng(3).standard_normal((700, 3))
    L, _ = laplacian(knn_graph(X, 8), "symmetric")
    checked = bottom_eigenpairs(L, 4, np.random.default_rng(0), "arpack")
    trusted = bottom_eigenpairs(L, 4, np.random.default_rng(0), "arpack", laplacian=True)
    for a, b in zip(checked, trusted, strict=True):
        np.testing.assert_array_equal(a, b)
    _check(*trusted, L.toarray(), 4)
