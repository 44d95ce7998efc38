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
