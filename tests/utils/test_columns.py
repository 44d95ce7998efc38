import math

import numpy as np
import pytest

from mathlearn.utils._columns import (
    class_sums,
    column_extremes,
    column_max_abs,
    column_means,
)


def _layouts(X):
    yield X
    yield np.asfortranarray(X)
    yield X[::2]  # not contiguous
    yield X[:, ::-1]


@pytest.mark.parametrize("shape", [(1, 3), (7, 5), (1000, 20), (1237, 3), (4099, 1), (300, 600)])
def test_column_extremes_are_exact(shape):
    rng = np.random.default_rng(0)
    X = rng.standard_normal(shape) * np.exp(rng.uniform(-20, 20, shape[1]))
    for A in _layouts(X):
        hi, lo = column_extremes(A)
        np.testing.assert_array_equal(hi, A.max(axis=0))
        np.testing.assert_array_equal(lo, A.min(axis=0))
        np.testing.assert_array_equal(column_max_abs(A), np.abs(A).max(axis=0))


def test_column_extremes_see_nan_and_inf_in_the_remainder_and_the_fold():
    X = np.zeros((1237, 3))
    for i, v in [(5, np.nan), (1236, np.inf), (700, -np.inf)]:
        Y = X.copy()
        Y[i, 1] = v
        hi, lo = column_extremes(Y)
        assert not (np.isfinite(hi[1]) and np.isfinite(lo[1]))
        assert np.all(np.isfinite(hi[[0, 2]])) and np.all(np.isfinite(lo[[0, 2]]))


@pytest.mark.parametrize("shape", [(3, 2), (1000, 20), (1237, 3), (20011, 7)])
def test_column_means_within_their_rounding_bound(shape):
    # against exactly rounded sums (math.fsum); the folded sum of n terms in k runs errs by
    # at most (n / k + k) eps sum |x|, and NumPy's own (the fallback) by n eps sum |x|
    rng = np.random.default_rng(1)
    X = 1e6 + rng.standard_normal(shape)
    for A in _layouts(X):
        got = column_means(A)
        ref = np.array([math.fsum(A[:, j]) / A.shape[0] for j in range(A.shape[1])])
        bound = (A.shape[0] + 2) * np.finfo(float).eps * np.abs(A).sum(axis=0) / A.shape[0]
        assert np.all(np.abs(got - ref) <= bound)
    assert column_means(X).dtype == X.dtype and column_means(X).shape == (shape[1],)


@pytest.mark.parametrize("n_classes", [1, 3, 32, 33, 200])
def test_class_sums_equal_the_scatter_of_rows(n_classes):
    # both routes (one-hot products, per-column bincount) against np.add.at, to the rounding
    # of sums of |x| (different summation orders)
    rng = np.random.default_rng(2)
    X = rng.standard_normal((5003, 4)) + 10.0
    labels = rng.integers(0, n_classes, 5003)
    ref = np.zeros((n_classes, 4))
    np.add.at(ref, labels, X)
    bound = np.zeros((n_classes, 4))
    np.add.at(bound, labels, np.abs(X))
    got = class_sums(X, labels, n_classes)
    assert got.shape == (n_classes, 4)
    assert np.all(np.abs(got - ref) <= 5003 * np.finfo(float).eps * bound)
