"""Per-class sums and scatter matrices by blocks against the per-class masked formulas."""

import numpy as np
import pytest

from mathlearn.utils._groups import class_scatters, class_sums, within_class_scatter


def _data(n, d, K=3):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d)) + 100.0  # far from the origin: residuals, not raw moments
    y = rng.integers(0, K, n)
    y[:K] = np.arange(K)
    masks = [y == k for k in range(K)]
    means = np.array([X[m].mean(0) for m in masks])
    return X, y, rng.uniform(0.5, 2.0, n), masks, means


# blocks of rows in every shape: one block, several (9 000 rows), a few rows per block
@pytest.mark.parametrize(("n", "d"), [(7, 3), (9000, 4), (40, 2500)])
def test_blocked_class_sums_equal_the_masked_sums(n, d):
    X, y, w, masks, means = _data(n, d)
    sums = np.array([X[m].sum(0) for m in masks])
    wsums = np.array([w[m] @ X[m] for m in masks])
    sq = np.array([((X[m] - means[k]) ** 2).sum(0) for k, m in enumerate(masks)])
    # sums of n terms of size ~100 (relative rounding n eps), squares of residuals ~1
    np.testing.assert_allclose(class_sums(X, y, 3), sums, rtol=1e-12)
    np.testing.assert_allclose(class_sums(X, y, 3, w), wsums, rtol=1e-12)
    np.testing.assert_allclose(class_sums(X, y, 3, center=means), sq, rtol=1e-11)


@pytest.mark.parametrize(("n", "d"), [(7, 3), (9000, 4), (300, 60)])
def test_blocked_scatters_equal_the_masked_scatters(n, d):
    X, y, _, masks, means = _data(n, d)
    scat = np.array([(X[m] - means[k]).T @ (X[m] - means[k]) for k, m in enumerate(masks)])
    # sums of n products of residuals ~1 (absolute rounding n eps)
    np.testing.assert_allclose(class_scatters(X, y, means), scat, atol=1e-12 * n)
    np.testing.assert_allclose(within_class_scatter(X, y, means), scat.sum(0), atol=1e-12 * n)
