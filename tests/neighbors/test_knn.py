"""k-NN classifier and regressor against scikit-learn's on the same data."""

import numpy as np
import pytest
from sklearn import neighbors as sk

from mathlearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

ALGOS = ["auto", "brute", "kd_tree"]


def _data(n=300, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (X[:, 0] + 0.5 * rng.standard_normal(n) > 0).astype(int) + (X[:, 1] > 1)
    return X, y, rng.standard_normal((100, d))


@pytest.mark.parametrize("algorithm", ALGOS)
@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_classifier_matches_sklearn(algorithm, weights):
    # The peer searches with its kd-tree, whose distances come from coordinate differences
    # as ours do: its brute search expands |x|^2 + |q|^2 - 2 x^T q, which leaves about
    # sqrt(eps) |x| ~ 2e-8 where a query coincides with a training point, so an exact match
    # is not recognised there.
    X, y, Q = _data()
    # Queries include training points: exact matches (distance 0) for distance weights.
    Q = np.vstack([Q, X[:10]])
    ours = KNeighborsClassifier(7, weights=weights, algorithm=algorithm, leaf_size=8).fit(X, y)
    peer = sk.KNeighborsClassifier(7, weights=weights, algorithm="kd_tree").fit(X, y)
    np.testing.assert_array_equal(ours.predict(Q), peer.predict(Q))
    # Probabilities are ratios of at most 7 weights: a few ulps.
    np.testing.assert_allclose(
        ours.predict_proba(Q), peer.predict_proba(Q), rtol=1e-13, atol=1e-15
    )
    d0, i0 = ours.kneighbors(Q)
    d1, i1 = peer.kneighbors(Q)
    np.testing.assert_array_equal(i0, i1)
    np.testing.assert_allclose(d0, d1, rtol=1e-12, atol=1e-12)
    # Without X: each training point's neighbours exclude itself.
    np.testing.assert_array_equal(ours.kneighbors()[1], peer.kneighbors()[1])


@pytest.mark.parametrize("algorithm", ALGOS)
@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_regressor_matches_sklearn(algorithm, weights):
    X, _, Q = _data(seed=1)
    y = np.sin(X[:, 0]) + X[:, 1] ** 2
    Q = np.vstack([Q, X[:10]])
    ours = KNeighborsRegressor(5, weights=weights, algorithm=algorithm, leaf_size=8).fit(X, y)
    peer = sk.KNeighborsRegressor(5, weights=weights, algorithm="kd_tree").fit(X, y)
    np.testing.assert_allclose(ours.predict(Q), peer.predict(Q), rtol=1e-12, atol=1e-12)
    Y = np.column_stack([y, -2 * y])
    ours.fit(X, Y)
    peer.fit(X, Y)
    np.testing.assert_allclose(ours.predict(Q), peer.predict(Q), rtol=1e-12, atol=1e-12)


def test_exact_match_takes_only_the_matching_points():
    X = np.array([[0.0], [0.0], [1.0], [2.0]])
    y = np.array([0, 1, 1, 1])
    clf = KNeighborsClassifier(4, weights="distance").fit(X, y)
    # Two training points coincide with the query: they alone vote, 1:1.
    np.testing.assert_array_equal(clf.predict_proba([[0.0]]), [[0.5, 0.5]])
    reg = KNeighborsRegressor(3, weights="distance").fit(X, [1.0, 3.0, 10.0, 20.0])
    np.testing.assert_array_equal(reg.predict([[0.0], [1.0]]), [2.0, 10.0])
    # Away from the data: points 0, 1, 2 are all at distance 0.5, so equal 1/d weights.
    np.testing.assert_allclose(reg.predict([[0.5]]), [14.0 / 3.0], rtol=1e-15)


def test_bad_input():
    X, y, _ = _data(n=6)
    with pytest.raises(ValueError, match=r"n_neighbors = 7 is larger .*n_samples = 6"):
        KNeighborsClassifier(7).fit(X, y)
    clf = KNeighborsClassifier(6).fit(X, y)
    with pytest.raises(ValueError, match="n_neighbors <= n_samples_fit"):
        clf.kneighbors()  # a point is not its own neighbour: only 5 others
    with pytest.raises(ValueError, match="NaN"):
        KNeighborsRegressor(2).fit(np.array([[0.0], [np.nan], [1.0]]), [1.0, 2.0, 3.0])
    # A constant feature and all samples identical are valid data: every sample ties.
    Xc = np.column_stack([np.arange(10.0), np.ones(10)])
    reg = KNeighborsRegressor(2).fit(Xc, np.arange(10.0))
    np.testing.assert_allclose(reg.predict([[4.2, 1.0]]), [4.5])
    same = np.ones((8, 2))
    reg = KNeighborsRegressor(3, algorithm="kd_tree", leaf_size=2).fit(same, np.arange(8.0))
    np.testing.assert_array_equal(reg.predict([[1.0, 1.0]]), [1.0])  # points 0, 1, 2 by index
    clf = KNeighborsClassifier(3, weights="distance").fit(same, [0, 1, 1, 0, 0, 0, 0, 0])
    np.testing.assert_allclose(clf.predict_proba([[1.0, 1.0]]), [[1 / 3, 2 / 3]])
