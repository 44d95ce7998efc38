"""The Lanczos route of classical MDS and Isomap against the dense eigendecomposition.

Above a few hundred points the top eigenpairs of ``B = -0.5 H D^2 H`` come from ARPACK;
they must agree with LAPACK's dense ``eigh`` of the same ``B`` to the eigensolver's
tolerance: eigenvalues to ``O(eps N ||B||)``, eigenvectors (as a subspace, so repeated
eigenvalues are covered) to ``O(eps N ||B|| / gap)``.
"""

import numpy as np
import pytest

from mathlearn.manifold import MDS, Isomap


def _dense_top(D2, k):
    n = D2.shape[0]
    H = np.eye(n) - 1.0 / n
    B = -0.5 * H @ D2 @ H
    w, V = np.linalg.eigh(B)
    return w[::-1][:k], V[:, ::-1][:, :k], np.linalg.norm(B, 2)


def _check(emb, w, D2, k, gap_floor):
    w_ref, V_ref, norm = _dense_top(D2, k)
    n = D2.shape[0]
    eps = np.finfo(float).eps
    np.testing.assert_allclose(w, w_ref, rtol=0, atol=100 * n * eps * norm)
    V = emb / np.sqrt(w)
    # Same subspace: the projector difference, bounded by eps ||B|| / gap (Davis-Kahan).
    P = V @ V.T - V_ref @ V_ref.T
    assert np.linalg.norm(P, 2) < 100 * n * eps * norm / gap_floor


def test_mds_lanczos_matches_dense(rng):
    X = rng.standard_normal((600, 5)) * np.array([5.0, 3.0, 2.0, 1.0, 0.5])
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    emb = MDS(n_components=3, dissimilarity="precomputed").fit(D)
    w_ref, _, _ = _dense_top(D**2, 4)
    _check(emb.embedding_, emb.eigenvalues_, D**2, 3, gap_floor=w_ref[2] - w_ref[3])


@pytest.mark.parametrize("mult", [2, 3])
def test_mds_lanczos_repeated_eigenvalues(rng, mult):
    # Centred data with orthogonal columns of equal norm: B = X X^T has the top eigenvalue
    # repeated ``mult`` times; the subspace is unique although the vectors are not.
    Q, _ = np.linalg.qr(rng.standard_normal((600, mult + 1)) - 0.0)
    Q -= Q.mean(axis=0)
    Q, _ = np.linalg.qr(Q)
    X = Q * np.r_[np.full(mult, 10.0), 1.0]
    D = np.sqrt(np.clip(((X[:, None] - X[None]) ** 2).sum(-1), 0, None))
    emb = MDS(n_components=mult, dissimilarity="precomputed").fit(D)
    w_ref, _, _ = _dense_top(D**2, mult + 1)
    _check(emb.embedding_, emb.eigenvalues_, D**2, mult, gap_floor=w_ref[mult - 1] - w_ref[mult])


def test_isomap_lanczos_matches_dense(rng):
    t = 1.5 * np.pi * (1 + 2 * rng.random(700))
    X = np.column_stack([t * np.cos(t), 10 * rng.random(700), t * np.sin(t)])
    iso = Isomap(n_neighbors=10, n_components=2).fit(X)
    w_ref, _, _ = _dense_top(iso.dist_matrix_**2, 3)
    _check(iso.embedding_, iso.eigenvalues_, iso.dist_matrix_**2, 2, w_ref[1] - w_ref[2])
