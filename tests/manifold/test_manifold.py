import numpy as np
import pytest
import scipy.linalg as sla
from sklearn.datasets import make_swiss_roll
from sklearn.decomposition import PCA as SkPCA
from sklearn.manifold import Isomap as SkIsomap
from sklearn.manifold import SpectralEmbedding as SkSpectralEmbedding

from mathlearn.manifold import MDS, Isomap, SpectralEmbedding
from mathlearn.utils.extmath import squared_distances
from mathlearn.utils.graph import knn_graph, rbf_affinity


def assert_same_up_to_sign(A, B, **kw):
    signs = np.sign(np.sum(A * B, axis=0))
    signs[signs == 0] = 1
    np.testing.assert_allclose(A * signs, B, **kw)


def unit_columns(A):
    return A / np.linalg.norm(A, axis=0)


def test_classical_mds_is_pca(rng):
    X = rng.normal(size=(50, 4)) * [3, 2, 1, 0.5]
    Z = MDS(n_components=3).fit_transform(X)
    assert_same_up_to_sign(Z, SkPCA(3).fit_transform(X), atol=1e-10)
    D = np.sqrt(squared_distances(X))
    Zp = MDS(n_components=3, dissimilarity="precomputed").fit_transform(D)
    np.testing.assert_allclose(Zp, Z, atol=1e-10)
    # Full-rank MDS reproduces the distances exactly.
    Zf = MDS(n_components=4).fit_transform(X)
    np.testing.assert_allclose(np.sqrt(squared_distances(Zf)), D, atol=1e-9)


def test_mds_non_euclidean_dissimilarities():
    # A non-Euclidean dissimilarity gives negative eigenvalues: zero coordinates, never NaN.
    D = np.array([[0, 1, 1, 3], [1, 0, 1, 1], [1, 1, 0, 1], [3, 1, 1, 0]], dtype=float)
    Z = MDS(n_components=3, dissimilarity="precomputed").fit_transform(D)
    assert np.all(np.isfinite(Z))


def test_isomap_matches_sklearn():
    X, _ = make_swiss_roll(n_samples=300, random_state=0)
    ours = Isomap(n_neighbors=10).fit(X)
    ref = SkIsomap(n_neighbors=10).fit(X)
    np.testing.assert_allclose(ours.dist_matrix_, ref.dist_matrix_, rtol=1e-10)
    assert_same_up_to_sign(ours.embedding_, ref.embedding_, rtol=1e-6, atol=1e-6)
    Xt = X[:15] + 0.2
    assert_same_up_to_sign(ours.transform(Xt), ref.transform(Xt), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ours.transform(X), ours.embedding_, atol=1e-6)


def test_isomap_unrolls_a_spiral():
    t = np.linspace(0.5, 3 * np.pi, 120)
    X = np.c_[t * np.cos(t), t * np.sin(t)]
    z = Isomap(n_neighbors=4, n_components=1).fit_transform(X)[:, 0]
    # The geodesic coordinate is the arc length of the spiral r = t (up to sign and shift).
    arc = 0.5 * (t * np.sqrt(1 + t**2) + np.arcsinh(t))
    assert abs(np.corrcoef(z, arc)[0, 1]) > 0.999
    assert np.all(np.diff(z) > 0) or np.all(np.diff(z) < 0)


def test_isomap_disconnected_graph(rng):
    X = np.r_[rng.normal(size=(20, 2)), rng.normal(size=(20, 2)) + 50]
    with pytest.raises(ValueError, match="connected components"):
        Isomap(n_neighbors=3, disconnected="raise").fit(X)
    iso = Isomap(n_neighbors=3).fit(X)
    assert iso.n_connected_components_ == 2
    assert np.all(np.isfinite(iso.dist_matrix_))
    assert np.all(np.isfinite(iso.embedding_))


def test_spectral_embedding_matches_sklearn(rng):
    X = rng.normal(size=(120, 3))
    ours = SpectralEmbedding(n_components=2, gamma=0.5).fit_transform(X)
    ref = SkSpectralEmbedding(n_components=2, affinity="rbf", gamma=0.5, random_state=0)
    assert_same_up_to_sign(unit_columns(ours), unit_columns(ref.fit_transform(X)), atol=1e-7)


@pytest.mark.parametrize("kind", ["unnormalized", "symmetric", "random_walk"])
def test_spectral_embedding_closed_form(rng, kind):
    X = rng.normal(size=(60, 2))
    W = rbf_affinity(X, 1.0)
    d = W.sum(axis=1)
    if kind == "unnormalized":
        w, V = sla.eigh(np.diag(d) - W)
    else:
        # Random-walk eigenvectors solve L v = lambda D v.
        w, V = sla.eigh(np.diag(d) - W, np.diag(d))
        if kind == "symmetric":
            V = V * np.sqrt(d)[:, None]
    Z = SpectralEmbedding(n_components=3, gamma=1.0, laplacian=kind).fit(X)
    np.testing.assert_allclose(Z.eigenvalues_, w[1:4], atol=1e-10)
    assert_same_up_to_sign(unit_columns(Z.embedding_), unit_columns(V[:, 1:4]), atol=1e-8)


def test_spectral_embedding_knn_separates_clusters(rng):
    X = np.r_[rng.normal(size=(30, 2)), rng.normal(size=(30, 2)) + 8]
    se = SpectralEmbedding(n_components=1, affinity="nearest_neighbors", n_neighbors=5)
    # The two clusters are two components: the Fiedler vector is constant on each.
    z = se.fit_transform(X)[:, 0]
    assert se.eigenvalues_[0] == pytest.approx(0.0, abs=1e-10)
    assert np.ptp(z[:30]) < 1e-8 and np.ptp(z[30:]) < 1e-8 and abs(z[0] - z[-1]) > 1e-3
    L = knn_graph(X, 5).toarray()
    np.testing.assert_array_equal(se.affinity_matrix_.toarray(), L)


def test_precomputed_affinity(rng):
    X = rng.normal(size=(40, 2))
    W = rbf_affinity(X, 0.7)
    a = SpectralEmbedding(affinity="precomputed").fit_transform(W)
    b = SpectralEmbedding(gamma=0.7).fit_transform(X)
    np.testing.assert_allclose(a, b, atol=1e-10)


def test_bad_input(rng):
    X = rng.normal(size=(10, 2))
    for est in (MDS(), Isomap(n_neighbors=3), SpectralEmbedding()):
        with pytest.raises(ValueError, match="NaN"):
            est.fit(np.array([[np.nan, 1.0], [1.0, 2.0], [0.0, 0.0]]))
        with pytest.raises(ValueError, match="at least 2 samples"):
            est.fit(X[:1])
        with pytest.raises(ValueError, match="infinity"):
            est.fit(np.array([[np.inf, 1.0], [1.0, 2.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="n_components"):
        MDS(n_components=11).fit(X)
    with pytest.raises(ValueError, match="n_neighbors"):
        Isomap(n_neighbors=10).fit(X)
    with pytest.raises(ValueError, match="n_components"):
        SpectralEmbedding(n_components=10).fit(X)
    with pytest.raises(ValueError, match="symmetric"):
        MDS(dissimilarity="precomputed").fit(np.triu(np.ones((3, 3)), 1))
    with pytest.raises(ValueError, match="isolated"):
        SpectralEmbedding(gamma=1e4).fit(np.r_[X, [[100.0, 100.0]]])
    with pytest.raises(ValueError, match="laplacian"):
        SpectralEmbedding(laplacian="sym").fit(X)
    W_neg = np.array([[0.0, -1.0, 1.0], [-1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    with pytest.raises(ValueError, match="negative entries"):
        SpectralEmbedding(n_components=1, affinity="precomputed").fit(W_neg)


def test_isomap_repeated_points_geodesics_match_sklearn():
    # Repeated points are 0 apart: the directed k-NN graph keeps those zero-length edges
    # (as scikit-learn's does), so the graph stays one component and the geodesics agree.
    # Each geodesic is a sum of at most N edge lengths, each with a relative error of a few
    # eps: 1e-12 relative is far above that and far below any real difference.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    X = np.vstack([X, X[:10], X[:3]])
    ours = Isomap(n_neighbors=5).fit(X)
    ref = SkIsomap(n_neighbors=5).fit(X)
    assert ours.n_connected_components_ == 1
    np.testing.assert_allclose(ours.dist_matrix_, ref.dist_matrix_, rtol=1e-12, atol=1e-12)
