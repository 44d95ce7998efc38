"""utils.graph.kneighbors: the kd-tree route against the exhaustive route."""

import numpy as np
import pytest


def test_kneighbors_tree_route_equals_exhaustive():
    """Above 2 000 points in low dimension the kd-tree answers; on continuous data (no
    ties) it must give the exhaustive search's neighbours and distances."""
    from mathlearn.neighbors import _kd_tree
    from mathlearn.utils.graph import kneighbors

    if _kd_tree._kdtree_lib() is None:
        pytest.skip("_kdtree not built")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2500, 3)) + 1e6  # far from the origin
    dist, ind = kneighbors(X, 6)
    ref_d, ref_i = kneighbors(X, 6, chunk_size=500)  # exhaustive route
    np.testing.assert_array_equal(ind, ref_i)
    np.testing.assert_allclose(dist, ref_d, rtol=1e-8)
    # Coinciding points: more than k + 1 copies of one point.
    Y = np.vstack([np.zeros((10, 2)), rng.standard_normal((2100, 2))])
    d2, i2 = kneighbors(Y, 4)
    assert not np.any(i2 == np.arange(Y.shape[0])[:, None])
    np.testing.assert_array_equal(d2[:10], 0.0)


def test_exhaustive_route_selects_by_distance_then_index(monkeypatch):
    """The exhaustive route's compiled selection (one pass per row of each block of
    distances) gives each point's k nearest by (distance, index): on integer points, whose
    squared distances are exact and tie often, against a full sort of the exact distances;
    the NumPy fallback (a partial sort) finds the same distances."""
    from mathlearn.neighbors import _kd_tree
    from mathlearn.utils.graph import kneighbors

    if _kd_tree._kdtree_lib() is None:
        pytest.skip("_kdtree not built")
    rng = np.random.default_rng(1)
    # 16 sites: duplicates and ties. Small integers (no shift: the mean is within the
    # spread; power-of-two scalings) make every square, product and sum exact, in any order
    # of summation and on any BLAS, so the distances and their ties are exact.
    X = rng.integers(0, 4, (70, 2)).astype(float)
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    cols = np.broadcast_to(np.arange(70), D.shape)
    ref = np.array([np.lexsort((cols[i], D[i]))[:5] for i in range(70)])
    for chunk_size in (None, 16):
        dist, ind = kneighbors(X, 5, chunk_size=chunk_size)
        np.testing.assert_array_equal(ind, ref)
        np.testing.assert_array_equal(dist, np.sqrt(np.take_along_axis(D, ref, axis=1)))
    monkeypatch.setattr(_kd_tree, "_kdtree_lib", lambda: None)
    dist_np, _ = kneighbors(X, 5, chunk_size=16)
    np.testing.assert_array_equal(dist_np, dist)


def _random_graph(rng, n, density, zeros=0):
    """A sparse graph with asymmetric lengths (G_ij and G_ji drawn apart), some explicit
    zeros (edges of length 0), self-loops and, with low density, several components."""
    import scipy.sparse as sp

    G = sp.random(n, n, density=density, random_state=rng, format="coo")
    data = G.data * 10.0
    data[:zeros] = 0.0
    return sp.csr_matrix((data, (G.row, G.col)), shape=(n, n))


@pytest.mark.parametrize("n, density", [(1, 0.0), (7, 0.3), (60, 0.02), (300, 0.01)])
def test_geodesic_distances_against_scipy(n, density):
    """Dijkstra from every vertex against scipy.sparse.csgraph's on the undirected graph.
    Both keep, for every vertex, the least of the sums d(u) + w_uv over its neighbours, the
    same floating-point sums (the least solution of the same equations, see ``_paths.c``),
    so they agree exactly: in value, in the infinities between components and in the zeros
    that length-0 edges give. (Not symmetric to the last bit: d(s, v) and d(v, s) add a
    path's lengths in opposite orders.)"""
    from scipy.sparse.csgraph import shortest_path

    from mathlearn.utils.graph import geodesic_distances

    rng = np.random.default_rng(n)
    G = _random_graph(rng, n, density, zeros=3)
    D = geodesic_distances(G)
    np.testing.assert_array_equal(D, shortest_path(G, method="D", directed=False))


def test_geodesic_distances_mutual_and_repeated_edges():
    """Pairs stored both ways at different lengths (as in a k-nearest-neighbour graph, with
    either direction the shorter) and entries repeated within a row: each pair's least
    length counts. The reference is SciPy on the graph symmetrised by hand, one least length
    per pair, whose sums are the same floating-point numbers."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import shortest_path

    from mathlearn.utils.graph import geodesic_distances

    rng = np.random.default_rng(5)
    n = 40
    rows = np.repeat(np.arange(n), 5)
    cols = np.concatenate([rng.choice(n, 5, replace=False) for _ in range(n)])
    w = rng.uniform(0.5, 2.0, rows.size)
    mirror = rng.uniform(size=rows.size) < 0.7  # stored both ways, at another length
    again = rng.uniform(size=rows.size) < 0.2  # stored twice in the same row
    rows = np.concatenate([rows, cols[mirror], rows[again]])
    cols = np.concatenate([cols, rows[: mirror.size][mirror], cols[again]])
    w = np.concatenate(
        [w, rng.uniform(0.5, 2.0, mirror.sum()), rng.uniform(0.5, 2.0, again.sum())]
    )
    order = np.argsort(rows, kind="stable")
    indptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=n))]
    G = sp.csr_matrix((w[order], cols[order], indptr), shape=(n, n))  # repeats kept
    assert not G.has_canonical_format
    W = np.full((n, n), np.inf)
    for u, v, x in zip(rows, cols, w, strict=True):
        W[u, v] = W[v, u] = min(W[u, v], x)
    r, c = np.nonzero(np.isfinite(W) & ~np.eye(n, dtype=bool))
    S = sp.csr_matrix((W[r, c], (r, c)), shape=(n, n))
    np.testing.assert_array_equal(geodesic_distances(G), shortest_path(S, method="D"))


def test_geodesic_distances_split_over_threads(monkeypatch):
    """The sources split into parts run on the package's threads give the same matrix as
    one part."""
    from mathlearn import _ext
    from mathlearn.utils import graph

    if _ext.load("_paths") is None:
        pytest.skip("_paths not built")
    G = _random_graph(np.random.default_rng(1), 200, 0.02, zeros=2)
    one = graph.geodesic_distances(G)
    monkeypatch.setattr(graph, "blas_threads", lambda: 3)
    monkeypatch.setattr(graph, "_PATHS_MIN_PART", 16)
    np.testing.assert_array_equal(graph.geodesic_distances(G), one)


def test_geodesic_distances_rejects_bad_graphs():
    import scipy.sparse as sp

    from mathlearn.utils.graph import geodesic_distances

    with pytest.raises(ValueError, match="non-negative"):
        geodesic_distances(sp.csr_matrix(np.array([[0.0, -1.0], [0.0, 0.0]])))
    with pytest.raises(ValueError, match="non-negative"):
        geodesic_distances(sp.csr_matrix(np.array([[0.0, np.nan], [0.0, 0.0]])))
    with pytest.raises(ValueError, match="square"):
        geodesic_distances(sp.csr_matrix(np.ones((2, 3))))
