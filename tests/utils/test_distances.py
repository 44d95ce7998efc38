"""squared_distances: accuracy far from the origin and at extreme scales."""

import numpy as np
import pytest

from mathlearn.utils.extmath import squared_distances
from mathlearn.utils.graph import kneighbors

EPS = np.finfo(float).eps


def _difference_form(X, Y):
    # Subtracting two floats within a factor of 2 of each other is exact (Sterbenz), so on
    # offset data this reference only rounds in the squares and the sum.
    return ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)


@pytest.mark.parametrize("offset", [0.0, 1e6, 1e8])
def test_accurate_far_from_the_origin(offset, rng):
    X = offset + rng.standard_normal((40, 4))
    Y = offset + rng.standard_normal((25, 4))
    ref = _difference_form(X, Y)
    # The expansion's rounding error is about 2 (D + 2) eps times the squared norms of the
    # points it sees; coordinates offset beyond their spread are centred, the others are at
    # most twice their spread from 0, so those norms are at most 4 times the centred ones:
    # independent of the offset.
    spread = np.max(np.sum((np.vstack([X, Y]) - X.mean(0)) ** 2, axis=1))
    atol = 4 * 2 * (X.shape[1] + 2) * EPS * spread
    np.testing.assert_allclose(squared_distances(X, Y), ref, rtol=0, atol=atol)
    D = squared_distances(X)
    np.testing.assert_allclose(D, _difference_form(X, X), rtol=0, atol=atol)
    assert np.all(np.diag(D) == 0.0)


def test_identical_rows_are_exactly_zero_apart(rng):
    # A medoid's distance to itself is 0, not ~1e-7 after a square root.
    X = 1e8 + rng.standard_normal((30, 3))
    medoids = X[[3, 17]]
    D = squared_distances(X, medoids)
    assert D[3, 0] == 0.0 and D[17, 1] == 0.0
    assert np.all(D[np.arange(30) != 3, 0] > 0)


@pytest.mark.parametrize("scale", [1e300, 1e-300, 1e150, 1e-150])
def test_extreme_scales(scale, rng):
    X = rng.standard_normal((12, 3))
    Y = rng.standard_normal((7, 3))
    ref = _difference_form(X, Y)
    D = squared_distances(X * scale, Y * scale)
    # The scaling is by powers of two (exact), so the answer is the unscaled one times
    # scale^2, where that is representable.
    with np.errstate(over="ignore", under="ignore"):
        expected = ref * scale * scale
    if np.all(np.isfinite(expected)) and np.all(expected > np.finfo(float).tiny):
        np.testing.assert_allclose(D, expected, rtol=16 * (3 + 2) * EPS)
    elif scale > 1:
        # True squared distances near 1e600 are beyond the float range: inf, never NaN.
        assert np.all(np.isinf(D))
    else:
        # True values near 1e-600 underflow to zero: never negative, never NaN.
        assert np.all(D == 0.0)
    # The distances themselves are representable at every scale; kneighbors keeps them.
    dist, ind = kneighbors(X * scale, 2)
    full = np.sqrt(_difference_form(X, X))
    np.fill_diagonal(full, np.inf)
    np.testing.assert_array_equal(ind, np.argsort(full, axis=1)[:, :2])
    np.testing.assert_allclose(dist / scale, np.sort(full, axis=1)[:, :2], rtol=1e-12)


def test_inf_only_where_the_true_value_overflows():
    X = np.array([[1e308], [-1e308], [1e154], [0.0]])
    D = squared_distances(X)
    assert np.isinf(D[0, 1]) and np.isinf(D[0, 3])  # (2e308)^2, (1e308)^2
    assert D[2, 3] == pytest.approx(1e308, rel=1e-15)  # (1e154)^2 is representable
    assert not np.any(np.isnan(D))


def test_bad_input():
    with pytest.raises(ValueError, match="NaN or infinity"):
        squared_distances(np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match="same number of columns"):
        squared_distances(np.zeros((2, 2)), np.zeros((2, 3)))
    assert squared_distances(np.zeros((3, 2))).tolist() == [[0.0] * 3] * 3
    assert squared_distances(np.zeros((0, 2)), np.ones((2, 2))).shape == (0, 2)


@pytest.mark.parametrize("chunk_size", [None, 7])
def test_kneighbors_far_from_the_origin(chunk_size, rng):
    # The points are scaled and centred once for every block of rows: far from the origin
    # the neighbours and distances stay those of the unshifted points. Storing 1e8 + x
    # already moves x by up to ulp(1e8) / 2 = 7.5e-9 per coordinate, so distances of order
    # one agree to ~1e-8 relative (the expansion's own error, ~D eps, is far smaller).
    base = rng.standard_normal((60, 5))
    full = np.sqrt(_difference_form(base, base))
    np.fill_diagonal(full, np.inf)
    for offset in (0.0, 1e8):
        dist, ind = kneighbors(offset + base, 4, chunk_size=chunk_size)
        np.testing.assert_array_equal(ind, np.argsort(full, axis=1)[:, :4])
        np.testing.assert_allclose(dist, np.sort(full, axis=1)[:, :4], rtol=1e-6)
    with pytest.raises(ValueError, match="NaN or infinity"):
        kneighbors(np.array([[0.0], [np.inf], [1.0]]), 1)
