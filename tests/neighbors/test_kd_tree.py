"""KDTree against exhaustive search: same indices (ties by index), same distances."""

import numpy as np
import pytest

from mathlearn.neighbors import KDTree, brute_force_kneighbors


def _reference(X, Q, k):
    """Exhaustive search written out here: sort each row by (distance, index)."""
    D = np.sqrt(((Q[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))
    idx = np.arange(X.shape[0])
    order = np.array([np.lexsort((idx, row)) for row in D])[:, :k]
    return np.take_along_axis(D, order, axis=1), order


@pytest.mark.parametrize(
    "n, d, k, leaf_size",
    [(1000, 3, 5, 40), (500, 2, 1, 1), (300, 4, 50, 7), (700, 8, 10, 16), (37, 2, 37, 3)],
)
def test_query_equals_brute_force(n, d, k, leaf_size):
    rng = np.random.default_rng(n + d)
    X = rng.standard_normal((n, d))
    Q = np.vstack([rng.standard_normal((150, d)), X[:20], 10.0 * rng.standard_normal((5, d))])
    dist, ind = KDTree(X, leaf_size=leaf_size).query(Q, k=k)
    ref_d, ref_i = _reference(X, Q, k)
    np.testing.assert_array_equal(ind, ref_i)
    # Both are square roots of sums of d squared differences: a few ulps of each distance.
    np.testing.assert_allclose(dist, ref_d, rtol=8 * d * np.finfo(float).eps, atol=0)


def test_ties_and_duplicates_broken_by_index():
    # Integer grid: many exactly equal distances, all computed exactly.
    rng = np.random.default_rng(1)
    X = rng.integers(0, 4, size=(400, 2)).astype(float)
    tree = KDTree(X, leaf_size=5)
    dist, ind = tree.query(X, k=12)
    ref_d, ref_i = _reference(X, X, 12)
    np.testing.assert_array_equal(ind, ref_i)
    np.testing.assert_array_equal(dist, ref_d)
    # All points identical: the neighbours are 0, 1, ..., k-1 at distance 0.
    Z = np.ones((50, 3))
    dist, ind = KDTree(Z, leaf_size=4).query(Z[:3], k=7)
    np.testing.assert_array_equal(ind, np.tile(np.arange(7), (3, 1)))
    np.testing.assert_array_equal(dist, 0.0)


def test_brute_force_function_matches_reference():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 3, size=(60, 2)).astype(float)
    d, i = brute_force_kneighbors(X, X[:10], 9)
    ref_d, ref_i = _reference(X, X[:10], 9)
    np.testing.assert_array_equal(i, ref_i)
    np.testing.assert_array_equal(d, ref_d)


def test_far_from_origin_and_extreme_scales():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 3))
    Q = rng.standard_normal((40, 3))
    _, ind0 = KDTree(X).query(Q, k=5)
    # A translation by 1e8 rounds the coordinates (ulp 1.5e-8) but keeps the order of
    # distances that differ by more than that; an exact power-of-two scaling keeps all.
    ref_d, ref_i = _reference(X + 1e8, Q + 1e8, 5)
    d, i = KDTree(X + 1e8).query(Q + 1e8, k=5)
    np.testing.assert_array_equal(i, ref_i)
    np.testing.assert_allclose(d, ref_d, rtol=1e-12)
    for scale in (2.0**-1000, 2.0**1000):
        d, i = KDTree(X * scale).query(Q * scale, k=5)
        np.testing.assert_array_equal(i, ind0)
        assert np.all(np.isfinite(d)) and np.all(d > 0)


def test_radius_query_equals_brute_force():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((500, 3))
    Q = rng.standard_normal((30, 3))
    r = np.linspace(0.1, 1.5, 30)
    tree = KDTree(X, leaf_size=10)
    ind, dist = tree.query_radius(Q, r, return_distance=True, sort_results=True)
    counts = tree.query_radius(Q, r, count_only=True)
    unsorted = tree.query_radius(Q, r)
    D = np.sqrt(((Q[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))
    for j in range(30):
        inside = np.nonzero(D[j] <= r[j])[0]
        np.testing.assert_array_equal(unsorted[j], inside)
        order = inside[np.lexsort((inside, D[j, inside]))]
        np.testing.assert_array_equal(ind[j], order)
        np.testing.assert_allclose(dist[j], D[j, order], rtol=1e-14)
        assert counts[j] == inside.size
    # A radius of 0 finds exactly the duplicates of the query.
    Y = np.vstack([X, X[:3]])
    ind = KDTree(Y).query_radius(X[:3], 0.0)
    for j in range(3):
        np.testing.assert_array_equal(ind[j], [j, 500 + j])


def test_structure_is_a_balanced_partition():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((1000, 4))
    tree = KDTree(X, leaf_size=30)
    assert sorted(tree.idx_array) == list(range(1000))
    leaves = tree.node_data[tree.node_data["is_leaf"]]
    sizes = leaves["end"] - leaves["start"]
    assert 30 <= sizes.min() and sizes.max() <= 60 and sizes.max() - sizes.min() <= 1
    lo, hi = tree.node_bounds
    for i, (s, e, _) in enumerate(tree.node_data):
        P = X[tree.idx_array[s:e]]
        np.testing.assert_array_equal(P.min(axis=0), lo[i])
        np.testing.assert_array_equal(P.max(axis=0), hi[i])


def test_bad_input():
    X = np.random.default_rng(6).standard_normal((10, 2))
    tree = KDTree(X)
    with pytest.raises(ValueError, match="only n_samples = 10"):
        tree.query(X, k=11)
    with pytest.raises(ValueError, match="k must be"):
        tree.query(X, k=0)
    with pytest.raises(ValueError, match="3 features"):
        tree.query(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="NaN"):
        KDTree(np.array([[0.0, np.nan]]))
    with pytest.raises(ValueError, match=r"infinity|NaN"):
        tree.query([[np.inf, 0.0]])
    with pytest.raises(ValueError, match="leaf_size"):
        KDTree(X, leaf_size=0)
    with pytest.raises(ValueError, match="radius"):
        tree.query_radius(X, -1.0)
    with pytest.raises(ValueError, match="only n_samples = 10"):
        brute_force_kneighbors(X, X, 11)


@pytest.mark.parametrize("route", ["compiled", "numpy"])
@pytest.mark.parametrize("d, k, leaf_size", [(3, 7, 40), (6, 1, 5), (2, 30, 16)])
def test_large_tree_equals_brute_force(monkeypatch, route, d, k, leaf_size):
    """Above 2 048 points the tree is searched (by the compiled search where built, by the
    batched NumPy search otherwise): either way the answer is the exhaustive one."""
    from mathlearn.neighbors import _kd_tree

    if route == "numpy":
        monkeypatch.setattr(_kd_tree, "_kdtree_lib", lambda: None)
    elif _kd_tree._kdtree_lib() is None:
        pytest.skip("_kdtree not built")
    rng = np.random.default_rng(10 + d)
    X = rng.standard_normal((5000, d))
    Q = np.vstack([rng.standard_normal((60, d)), X[:10], 8.0 * rng.standard_normal((5, d))])
    dist, ind = KDTree(X, leaf_size=leaf_size).query(Q, k=k)
    ref_d, ref_i = _reference(X, Q, k)
    np.testing.assert_array_equal(ind, ref_i)
    np.testing.assert_allclose(dist, ref_d, rtol=8 * d * np.finfo(float).eps, atol=0)


def test_large_tree_ties_broken_by_index():
    """An integer grid with many duplicates: distances exact, ties decided by index, also
    for points that lie in a box at exactly the k-th distance."""
    rng = np.random.default_rng(5)
    X = rng.integers(0, 6, size=(3000, 2)).astype(float)
    dist, ind = KDTree(X, leaf_size=8).query(X[:40], k=25)
    ref_d, ref_i = _reference(X, X[:40], 25)
    np.testing.assert_array_equal(ind, ref_i)
    np.testing.assert_array_equal(dist, ref_d)
    s = 2.0**-1000
    d2, i2 = KDTree(X * s).query(X[:40] * s, k=25)
    np.testing.assert_array_equal(i2, ref_i)
    np.testing.assert_array_equal(d2, ref_d * s)


def test_radius_query_numpy_route_equals_compiled(monkeypatch):
    """The batched NumPy radius search (the fallback) and the compiled one find the same
    points, in the same order, at the same distances."""
    from mathlearn.neighbors import _kd_tree

    rng = np.random.default_rng(7)
    X = rng.standard_normal((3000, 3))
    Q = rng.standard_normal((50, 3))
    r = rng.uniform(0.1, 0.6, 50)
    tree = KDTree(X, leaf_size=10)
    got = tree.query_radius(Q, r, return_distance=True, sort_results=True)
    counts = tree.query_radius(Q, r, count_only=True)
    monkeypatch.setattr(_kd_tree, "_kdtree_lib", lambda: None)
    ref = tree.query_radius(Q, r, return_distance=True, sort_results=True)
    np.testing.assert_array_equal(counts, [len(a) for a in ref[0]])
    for j in range(50):
        np.testing.assert_array_equal(got[0][j], ref[0][j])
        np.testing.assert_allclose(got[1][j], ref[1][j], rtol=1e-14)
        D = np.sqrt(((X - Q[j]) ** 2).sum(axis=1))
        np.testing.assert_array_equal(np.sort(got[0][j]), np.flatnonzero(D <= r[j]))


def test_indices_alone_equal_those_with_distances_over_many_blocks():
    # Without distances the compiled search answers blocks of 4 096 queries with one reused
    # distance buffer: the indices are those of the search that returns distances.
    rng = np.random.default_rng(4)
    X = rng.normal(size=(3000, 3))
    Q = rng.normal(size=(9000, 3))
    tree = KDTree(X, leaf_size=20)
    _, ind = tree.query(Q, k=4)
    np.testing.assert_array_equal(tree.query(Q, k=4, return_distance=False), ind)
