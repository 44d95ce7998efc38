"""Agglomerative merges against scipy.cluster.hierarchy; spectral clustering against
scikit-learn's ARI on the classic shapes and the Laplacian's known spectrum."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.cluster.hierarchy import fcluster, linkage
from sklearn.cluster import AgglomerativeClustering as SkAgglomerative
from sklearn.cluster import SpectralClustering as SkSpectral
from sklearn.datasets import make_circles, make_moons
from sklearn.metrics import adjusted_rand_score

from mathlearn.cluster import AgglomerativeClustering, KMeans, SpectralClustering, linkage_tree

LINKAGES = ["single", "complete", "average", "ward"]


@pytest.mark.parametrize("method", LINKAGES)
@pytest.mark.parametrize("shape", [(40, 2), (150, 5)])
def test_linkage_identical_to_scipy(method, shape, rng):
    X = rng.normal(size=shape)
    Z = linkage_tree(X, method)
    ref = linkage(X, method)
    np.testing.assert_array_equal(Z[:, [0, 1, 3]], ref[:, [0, 1, 3]])
    np.testing.assert_allclose(Z[:, 2], ref[:, 2], rtol=1e-12)


@pytest.mark.parametrize("method", LINKAGES)
@pytest.mark.parametrize("kind", ["grid", "integers", "duplicates"])
def test_linkage_identical_to_scipy_with_ties(method, kind):
    # Many equal distances: the tie-breaking (nearest-neighbour chain scan order, stable sort
    # by height, union-find relabelling) must reproduce SciPy's merges exactly.
    rng = np.random.default_rng(1)
    X = {
        "grid": np.array([[i, j] for i in range(5) for j in range(4)], dtype=float),
        "integers": rng.integers(0, 4, size=(40, 2)).astype(float),
        "duplicates": np.repeat(rng.normal(size=(8, 3)), 3, axis=0),
    }[kind]
    Z = linkage_tree(X, method)
    ref = linkage(X, method)
    np.testing.assert_array_equal(Z[:, [0, 1, 3]], ref[:, [0, 1, 3]])
    np.testing.assert_allclose(Z[:, 2], ref[:, 2], rtol=1e-12, atol=0)


def test_distance_threshold_at_a_merge_height_matches_sklearn():
    # Merges at heights >= threshold are undone (scikit-learn's rule): on 0, 1, ..., 11 every
    # single-linkage merge is at height 1.
    X = np.arange(12.0)[:, None]
    for t, expected in [(1.0, 12), (1.5, 1)]:
        agg = AgglomerativeClustering(None, linkage="single", distance_threshold=t).fit(X)
        sk = SkAgglomerative(None, linkage="single", distance_threshold=t).fit(X)
        assert agg.n_clusters_ == sk.n_clusters_ == expected
        assert adjusted_rand_score(sk.labels_, agg.labels_) == 1.0


@pytest.mark.parametrize("method", LINKAGES)
def test_cut_by_n_clusters_and_threshold(method, rng):
    X = rng.normal(size=(80, 3))
    ref = linkage(X, method)
    agg = AgglomerativeClustering(4, linkage=method).fit(X)
    assert adjusted_rand_score(fcluster(ref, 4, criterion="maxclust"), agg.labels_) == 1.0
    np.testing.assert_array_equal(agg.children_, ref[:, :2].astype(int))
    np.testing.assert_allclose(agg.distances_, ref[:, 2], rtol=1e-12)
    # Same tree and partition as scikit-learn.
    sk = SkAgglomerative(4, linkage=method, compute_distances=True).fit(X)
    assert adjusted_rand_score(sk.labels_, agg.labels_) == 1.0
    t = 0.5 * (ref[-4, 2] + ref[-3, 2])  # undoes the last three merges
    by_t = AgglomerativeClustering(None, linkage=method, distance_threshold=t).fit(X)
    assert by_t.n_clusters_ == 4
    assert adjusted_rand_score(fcluster(ref, t, criterion="distance"), by_t.labels_) == 1.0


def test_ward_height_is_sum_of_squares_increase():
    # Ward merges {a} and {b} at sqrt(2 * |a||b|/(|a|+|b|)) * ||mean_a - mean_b|| = ||a - b||.
    X = np.array([[0.0, 0.0], [1.0, 0.0], [10.0, 0.0]])
    Z = linkage_tree(X, "ward")
    assert Z[0, 2] == pytest.approx(1.0)
    # Then {0,1} with {2}: sqrt(2 * 2 * 1 / 3) * 9.5.
    assert Z[1, 2] == pytest.approx(np.sqrt(4 / 3) * 9.5)


def test_agglomerative_bad_input():
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(ValueError, match="exactly one"):
        AgglomerativeClustering(2, distance_threshold=1.0).fit(X)
    with pytest.raises(ValueError, match="exceeds n_samples"):
        AgglomerativeClustering(6).fit(X)
    with pytest.raises(ValueError, match="linkage"):
        AgglomerativeClustering(2, linkage="centroid").fit(X)
    with pytest.raises(ValueError, match="NaN"):
        AgglomerativeClustering(2).fit(np.array([[0.0], [np.nan], [1.0]]))
    with pytest.raises(ValueError, match="minimum of 2"):
        AgglomerativeClustering(1).fit(np.zeros((1, 2)))
    with pytest.raises(ValueError, match="NaN"):
        linkage_tree(np.array([[0.0], [np.nan], [1.0]]))
    with pytest.raises(ValueError, match="at least 2 samples"):
        linkage_tree(np.zeros((1, 2)))
    with pytest.raises(
        ValueError,
        match=r"'distance_threshold' parameter of AgglomerativeClustering must be a float in "
        r"the range \[0, inf\) or None\. Got nan",
    ):
        AgglomerativeClustering(None, distance_threshold=np.nan).fit(X)
    with pytest.raises(
        ValueError,
        match=r"'distance_threshold' parameter of AgglomerativeClustering must be a float in "
        r"the range \[0, inf\) or None\. Got -1\.0",
    ):
        AgglomerativeClustering(None, distance_threshold=-1.0).fit(X)


def test_agglomerative_duplicates():
    X = np.array([[0.0, 0.0], [0.0, 0.0], [3.0, 0.0], [3.0, 0.0]])
    agg = AgglomerativeClustering(2, linkage="average").fit(X)
    assert adjusted_rand_score([0, 0, 1, 1], agg.labels_) == 1.0
    np.testing.assert_allclose(agg.distances_, [0.0, 0.0, 3.0])


@pytest.mark.parametrize(
    "data",
    [
        make_moons(300, noise=0.05, random_state=0),
        make_circles(300, factor=0.5, noise=0.05, random_state=0),
    ],
    ids=["moons", "circles"],
)
@pytest.mark.parametrize("laplacian", ["random_walk", "symmetric", "unnormalized"])
def test_spectral_shapes_match_sklearn(data, laplacian):
    X, y = data
    with warnings.catch_warnings():
        # scikit-learn warns that the kNN graph of the moons has two components (which is
        # exactly what makes the clustering perfect); that warning is the reference's.
        warnings.simplefilter("ignore", UserWarning)
        sk = SkSpectral(2, affinity="nearest_neighbors", n_neighbors=10, random_state=0).fit(X)
    ours = SpectralClustering(
        2, affinity="nearest_neighbors", laplacian=laplacian, random_state=0
    ).fit(X)
    assert adjusted_rand_score(y, sk.labels_) == 1.0
    assert adjusted_rand_score(y, ours.labels_) == 1.0
    # k-means alone cannot separate these shapes.
    assert adjusted_rand_score(y, KMeans(2, random_state=0).fit(X).labels_) < 0.6


def test_spectral_rbf_moons_matches_sklearn():
    X, y = make_moons(200, noise=0.05, random_state=1)
    sk = SkSpectral(2, affinity="rbf", gamma=20.0, random_state=0).fit(X)
    ours = SpectralClustering(2, affinity="rbf", gamma=20.0, random_state=0).fit(X)
    assert adjusted_rand_score(y, sk.labels_) == adjusted_rand_score(y, ours.labels_) == 1.0


def test_spectral_disconnected_graph_eigenvectors_are_indicators():
    # Two cliques: L has eigenvalue 0 twice, eigenvectors spanned by the component indicators
    # (Oxford "Advanced Topics in Statistical Machine Learning" ch. 4), so the clustering is
    # exactly the components for every Laplacian.
    W = np.zeros((6, 6))
    W[:3, :3] = 1.0
    W[3:, 3:] = 1.0
    np.fill_diagonal(W, 0.0)
    for lap in ["unnormalized", "symmetric", "random_walk"]:
        sc = SpectralClustering(2, affinity="precomputed", laplacian=lap, random_state=0).fit(W)
        np.testing.assert_allclose(sc.eigenvalues_, 0.0, atol=1e-10)
        assert adjusted_rand_score([0, 0, 0, 1, 1, 1], sc.labels_) == 1.0
        sc_sparse = SpectralClustering(
            2, affinity="precomputed", laplacian=lap, random_state=0
        ).fit(sp.csr_matrix(W))
        assert adjusted_rand_score([0, 0, 0, 1, 1, 1], sc_sparse.labels_) == 1.0


def test_spectral_unnormalized_eigenvalues_of_path_graph():
    # Path graph on n vertices: eigenvalues of D - W are 2 - 2 cos(pi k / n).
    n = 8
    W = np.zeros((n, n))
    i = np.arange(n - 1)
    W[i, i + 1] = W[i + 1, i] = 1.0
    sc = SpectralClustering(3, affinity="precomputed", laplacian="unnormalized", random_state=0)
    sc.fit(W)
    np.testing.assert_allclose(
        sc.eigenvalues_, 2 - 2 * np.cos(np.pi * np.arange(3) / n), atol=1e-12
    )


def test_spectral_bad_input():
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match="n_clusters"):
        SpectralClustering(11).fit(X)
    with pytest.raises(ValueError, match="affinity"):
        SpectralClustering(2, affinity="cosine").fit(X)
    with pytest.raises(ValueError, match="laplacian"):
        SpectralClustering(2, laplacian="sym").fit(X)
    with pytest.raises(ValueError, match="NaN"):
        SpectralClustering(2).fit(np.array([[0.0, 1.0], [np.nan, 0.0], [1.0, 1.0]]))
    with pytest.raises(ValueError, match="symmetric"):
        SpectralClustering(2, affinity="precomputed").fit(np.triu(np.ones((4, 4))))
    # Isolated vertex: normalised Laplacian undefined, error names the cause.
    W = np.zeros((4, 4))
    W[0, 1] = W[1, 0] = W[1, 2] = W[2, 1] = 1.0
    with pytest.raises(ValueError, match="isolated"):
        SpectralClustering(2, affinity="precomputed").fit(W)


def test_spectral_arpack_equals_dense():
    X, y = make_circles(400, factor=0.5, noise=0.05, random_state=1)
    for lap in ["unnormalized", "symmetric", "random_walk"]:
        kw = dict(affinity="nearest_neighbors", laplacian=lap, random_state=0)
        dense = SpectralClustering(2, eigen_solver="dense", **kw).fit(X)
        arpack = SpectralClustering(2, eigen_solver="arpack", **kw).fit(X)
        np.testing.assert_allclose(arpack.eigenvalues_, dense.eigenvalues_, atol=1e-8)
        assert adjusted_rand_score(dense.labels_, arpack.labels_) == 1.0
        assert adjusted_rand_score(y, arpack.labels_) == 1.0


def test_spectral_duplicates_and_k_equal_n():
    X = np.array([[0.0, 0.0], [0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.0, 5.0], [5.1, 5.0]])
    sc = SpectralClustering(2, affinity="rbf", gamma=0.5, random_state=0).fit(X)
    assert adjusted_rand_score([0, 0, 0, 1, 1, 1], sc.labels_) == 1.0
    X3 = np.array([[0.0], [1.0], [3.0]])
    sc = SpectralClustering(3, random_state=0).fit(X3)
    assert sorted(sc.labels_.tolist()) == [0, 1, 2]


def test_spectral_one_sample():
    with pytest.raises(ValueError, match="minimum of 2"):
        SpectralClustering(1).fit(np.zeros((1, 2)))


@pytest.mark.parametrize("laplacian", ["unnormalized", "symmetric", "random_walk"])
def test_spectral_embedding_solves_the_laplacian_eigenproblem(laplacian):
    # Independent reference: W built by hand, L = D - W, and SciPy's (generalised) symmetric
    # eigensolver. Unnormalised: L u = lambda u; symmetric: L_sym v = lambda v; random walk:
    # L u = lambda D u (Remark 18), the same eigenvalues as L_sym.
    import scipy.linalg as sla

    X, _ = make_moons(60, noise=0.1, random_state=0)
    gamma = 2.0
    W = np.exp(-gamma * ((X[:, None] - X[None]) ** 2).sum(-1))
    np.fill_diagonal(W, 0.0)
    deg = W.sum(1)
    L = np.diag(deg) - W
    sc = SpectralClustering(3, gamma=gamma, laplacian=laplacian, random_state=0).fit(X)
    U = sc.embedding_
    lam = sc.eigenvalues_
    if laplacian == "unnormalized":
        ref = sla.eigh(L, eigvals_only=True)[:3]
        np.testing.assert_allclose(L @ U, U * lam, atol=1e-10)
    elif laplacian == "symmetric":
        Lsym = L / np.sqrt(np.outer(deg, deg))
        ref = sla.eigh(Lsym, eigvals_only=True)[:3]
        np.testing.assert_allclose(Lsym @ U, U * lam, atol=1e-10)
        np.testing.assert_allclose(U.T @ U, np.eye(3), atol=1e-10)
    else:
        ref = sla.eigh(L, np.diag(deg), eigvals_only=True)[:3]
        np.testing.assert_allclose(L @ U, (deg[:, None] * U) * lam, atol=1e-10)
    np.testing.assert_allclose(lam, ref, atol=1e-10)


@pytest.mark.parametrize("scale", [1e-300, 1e300])
@pytest.mark.parametrize("linkage_", ["ward", "complete", "average", "single"])
def test_agglomerative_extreme_magnitudes(scale, linkage_):
    # Issue 10: on X * 1e300 the squared distances overflowed and 3 clusters came out as 45
    # labels. Every linkage height scales with the data, so the tree of X * c is the tree of
    # X with heights times c (the data differ from X * c by one rounding: relative 1e-15).
    X, _ = make_moons(60, noise=0.05, random_state=0)
    ref = AgglomerativeClustering(3, linkage=linkage_).fit(X)
    big = AgglomerativeClustering(3, linkage=linkage_).fit(X * scale)
    np.testing.assert_array_equal(big.labels_, ref.labels_)
    assert np.unique(big.labels_).size == 3
    np.testing.assert_array_equal(big.children_, ref.children_)
    np.testing.assert_allclose(big.distances_ / scale, ref.distances_, rtol=1e-12)


@pytest.mark.parametrize("method", LINKAGES)
@pytest.mark.parametrize("kind", ["normal", "integers", "duplicates"])
def test_compiled_linkage_equals_the_numpy_route_bit_for_bit(method, kind, monkeypatch):
    # the C helper (_ext._linkage) does the NumPy route's operations in the same order
    from mathlearn import _ext

    if _ext.load("_linkage") is None:
        pytest.skip("the compiled helper _linkage is not built")
    rng = np.random.default_rng(2)
    X = {
        "normal": rng.normal(size=(300, 4)) * [1.0, 1e-3, 10.0, 1.0],
        "integers": rng.integers(0, 5, size=(200, 2)).astype(float),
        "duplicates": np.repeat(rng.normal(size=(30, 3)), 4, axis=0),
    }[kind]
    Z = linkage_tree(X, method)
    monkeypatch.setenv(_ext.DISABLE_ENV, "1")
    ref = linkage_tree(X, method)
    np.testing.assert_array_equal(Z, ref)


def test_cut_matches_a_union_find_over_the_first_merges():
    # _cut finds each leaf's root by pointer jumping in two 32-bit buffers; the reference
    # follows parents one by one, then numbers the clusters by first appearance
    from mathlearn.cluster._agglomerative import _cut

    n = 300
    X = np.random.default_rng(5).normal(size=(n, 4))
    children = linkage_tree(X, "single")[:, :2].astype(np.intp)
    for k in (1, 2, 7, n):
        parent = list(range(2 * n - 1))
        for i, (a, b) in enumerate(children[: n - k]):
            parent[a] = parent[b] = n + i
        roots = []
        for leaf in range(n):
            while parent[leaf] != leaf:
                leaf = parent[leaf]
            roots.append(leaf)
        number = {}
        expected = [number.setdefault(r, len(number)) for r in roots]
        np.testing.assert_array_equal(_cut(children, n, k), expected)
