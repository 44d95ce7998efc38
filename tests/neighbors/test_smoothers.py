"""Kernel smoothers against their closed forms, written out here."""

import numpy as np
import pytest
from sklearn.neighbors import NearestCentroid

from mathlearn.neighbors import (
    KMeansPrototypeClassifier,
    LocallyWeightedRegression,
    NadarayaWatson,
)

PROFILES = {
    "gaussian": lambda s: np.exp(-0.5 * s**2),
    "epanechnikov": lambda s: np.where(s <= 1, 0.75 * (1 - s**2), 0.0),
    "tricube": lambda s: np.where(s <= 1, (1 - s**3) ** 3, 0.0),
}


def _data(n=80, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, (n, d))
    y = np.sin(X[:, 0]) + 0.3 * X[:, -1] + 0.1 * rng.standard_normal(n)
    return X, y, rng.uniform(-1.5, 1.5, (25, d))


def _dist(Q, X):
    return np.sqrt(((Q[:, None, :] - X[None, :, :]) ** 2).sum(axis=2))


@pytest.mark.parametrize("kernel", sorted(PROFILES))
def test_nadaraya_watson_closed_form(kernel):
    X, y, Q = _data()
    h = 0.9
    W = PROFILES[kernel](_dist(Q, X) / h)
    expected = (W @ y) / W.sum(axis=1)
    got = NadarayaWatson(kernel=kernel, bandwidth=h).fit(X, y).predict(Q)
    # A ratio of sums of 80 positive terms: relative error a few hundred ulps at most.
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kernel", sorted(PROFILES))
@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_locally_weighted_regression_is_weighted_ridge(kernel, alpha):
    X, y, Q = _data()
    h = 1.2
    est = LocallyWeightedRegression(kernel=kernel, bandwidth=h, alpha=alpha).fit(X, y)
    got = est.predict(Q)
    expected = []
    for q in Q:
        w = PROFILES[kernel](np.sqrt(((X - q) ** 2).sum(axis=1)) / h)
        Phi = np.column_stack([np.ones(len(X)), X - q])
        # min sum_i w_i (y_i - phi_i^T b)^2 + alpha |b_1:|^2 as an augmented least squares.
        A = np.vstack([np.sqrt(w)[:, None] * Phi, np.sqrt(alpha) * np.eye(3)[1:]])
        b = np.concatenate([np.sqrt(w) * y, np.zeros(2)])
        expected.append(np.linalg.lstsq(A, b, rcond=None)[0][0])
    # Normal equations of a well-conditioned 3x3 system (condition ~ 1e2): ~1e-13.
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_local_linear_reproduces_lines_and_nw_reproduces_constants():
    X, _, Q = _data(seed=1)
    y = 2.0 - 3.0 * X[:, 0] + 0.5 * X[:, 1]
    pred = LocallyWeightedRegression(bandwidth=0.7, alpha=0.0).fit(X, y).predict(Q)
    np.testing.assert_allclose(pred, 2.0 - 3.0 * Q[:, 0] + 0.5 * Q[:, 1], rtol=1e-11)
    pred = NadarayaWatson(kernel="tricube", bandwidth=3.0).fit(X, np.full(80, 7.0)).predict(Q)
    np.testing.assert_allclose(pred, 7.0, rtol=1e-15)


def test_outside_compact_support_uses_nearest_points():
    X = np.array([[0.0], [1.0], [1.0], [5.0]])
    y = np.array([0.0, 2.0, 4.0, 9.0])
    nw = NadarayaWatson(kernel="epanechnikov", bandwidth=0.5).fit(X, y)
    np.testing.assert_array_equal(nw.predict([[2.5], [100.0]]), [3.0, 9.0])
    # A Gaussian far from all data: weights relative to the nearest point, no underflow.
    g = NadarayaWatson(bandwidth=0.01).fit(X, y)
    np.testing.assert_allclose(g.predict([[50.0]]), [9.0])


def test_bad_input_smoothers():
    X, y, _ = _data(n=10)
    with pytest.raises(ValueError, match="NaN"):
        NadarayaWatson().fit(np.vstack([X[:-1], [np.nan, 0.0]]), y)
    # alpha = 0 and a compact kernel holding one point: no unique local line.
    lwr = LocallyWeightedRegression(kernel="epanechnikov", bandwidth=1e-3, alpha=0.0).fit(X, y)
    with pytest.raises(ValueError, match="singular"):
        lwr.predict(X[:1] + 1e-4)
    # A constant feature: its slope is left to the ridge penalty, and the fit stays finite.
    Xc = np.column_stack([X[:, 0], np.ones(10)])
    pred = LocallyWeightedRegression(alpha=1e-3).fit(Xc, y).predict(Xc)
    assert np.all(np.isfinite(pred))
    # All samples identical: every smoother returns the mean target.
    same = np.ones((6, 2))
    t = np.arange(6.0)
    np.testing.assert_allclose(NadarayaWatson().fit(same, t).predict([[3.0, 0.0]]), [2.5])
    np.testing.assert_allclose(
        LocallyWeightedRegression(alpha=1.0).fit(same, t).predict([[1.0, 1.0]]), [2.5]
    )


def test_prototypes_one_per_class_is_nearest_centroid():
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(m, 1.0, (40, 3)) for m in (-2, 0, 2)])
    y = np.repeat(["a", "b", "c"], 40)
    Q = rng.normal(0, 2.0, (200, 3))
    ours = KMeansPrototypeClassifier(n_prototypes=1).fit(X, y)
    peer = NearestCentroid().fit(X, y)
    np.testing.assert_array_equal(ours.predict(Q), peer.predict(Q))
    np.testing.assert_allclose(ours.prototypes_, peer.centroids_, rtol=1e-14)


def test_prototypes_are_per_class_kmeans_centres():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(0, 1.0, (60, 2)), rng.normal(3, 1.0, (60, 2))])
    y = np.repeat([0, 1], 60)
    clf = KMeansPrototypeClassifier(n_prototypes=3, n_init=3, random_state=0).fit(X, y)
    for c in (0, 1):
        P = clf.prototypes_[clf.prototype_labels_ == c]
        # Each prototype is the mean of the class points nearest to it (a k-means fixed point).
        Xc = X[y == c]
        assign = np.argmin(((Xc[:, None] - P[None]) ** 2).sum(-1), axis=1)
        for r in range(3):
            np.testing.assert_allclose(P[r], Xc[assign == r].mean(axis=0), rtol=1e-12)
    Q = rng.uniform(-2, 5, (100, 2))
    dist = ((Q[:, None] - clf.prototypes_[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(clf.predict(Q), clf.prototype_labels_[dist.argmin(axis=1)])
    # A class with fewer distinct points than prototypes keeps its distinct points.
    X2 = np.vstack([X, [[9.0, 9.0], [9.0, 9.0]]])
    clf = KMeansPrototypeClassifier(n_prototypes=3, random_state=0).fit(X2, np.r_[y, 2, 2])
    np.testing.assert_array_equal(clf.prototypes_[clf.prototype_labels_ == 2], [[9.0, 9.0]])


@pytest.mark.parametrize("scale", [2.0**997, 2.0**-997])
@pytest.mark.parametrize("kernel", sorted(PROFILES))
def test_smoothers_equivariant_under_power_of_two_scaling(kernel, scale):
    """``x -> c x`` with ``h -> c h`` leaves every ``|x* - x| / h`` unchanged; with ``c`` a
    power of two every scaling is exact, so the predictions agree to rounding (LWR with
    ``alpha = 0``: its local least squares is equivariant too)."""
    X, y, Q = _data(seed=2)
    for est in (
        NadarayaWatson(kernel=kernel, bandwidth=0.9),
        LocallyWeightedRegression(kernel=kernel, bandwidth=0.9, alpha=0.0),
    ):
        expected = est.fit(X, y).predict(Q)
        got = est.set_params(bandwidth=0.9 * scale).fit(X * scale, y).predict(Q * scale)
        # Exact scalings: the same floating-point operations on the same significands,
        # up to a few ulps from the order of the Cholesky sums.
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("t", [1e150, 1e300])
def test_far_queries_take_the_nearest_value(t):
    """A Gaussian with ``h = 1`` at ``q = t x0`` (``t >= 1e150``): the nearest point wins by a
    factor ``exp(-t * gap)``, so the smoother's value is that point's ``y`` (PRML §6.3.1
    weights; the limit of the local fit too: its ridge penalty outweighs every weight)."""
    X, y, _ = _data(seed=3)
    x0 = X[:3]
    Q = x0 * t
    # For t this large the nearest point maximises x0 . x_i (|x_i|^2 is negligible).
    proj = x0 @ X.T
    expected = y[np.argmax(proj, axis=1)]
    srt = np.sort(proj, axis=1)
    assert np.all(srt[:, -1] - srt[:, -2] > 1e-6)  # a unique nearest point
    np.testing.assert_array_equal(NadarayaWatson().fit(X, y).predict(Q), expected)
    np.testing.assert_allclose(LocallyWeightedRegression().fit(X, y).predict(Q), expected)


def test_extreme_scale_with_fixed_bandwidth_is_finite_or_refused():
    """``h = 1`` on data ``1e300`` apart: each training query weighs only itself."""
    X, y, _ = _data(seed=4)
    Xs = X * 1e300
    np.testing.assert_array_equal(NadarayaWatson().fit(Xs, y).predict(Xs), y)
    with pytest.raises(ValueError, match="singular"):
        LocallyWeightedRegression().fit(Xs, y).predict(Xs)


@pytest.mark.parametrize("h", [1e4, 3e7, 1e9])
def test_far_query_weights_against_mpmath(h):
    """Queries ``~1e8`` radii from the data (the far-row path): the Gaussian average equals
    the one from 50-digit distances to a few ulps (the weights' exponents are formed with
    relative error ~eps, and ``|x_i|^2 - 2 q^T x_i`` is well conditioned here)."""
    mp = pytest.importorskip("mpmath")
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, (30, 2))
    y = rng.standard_normal(30)
    Q = np.array([[1e8 + 0.3, -2e7], [3e9, 1e9]])
    got = NadarayaWatson(bandwidth=h).fit(X, y).predict(Q)
    with mp.workdps(50):
        ref = []
        for q in Q:
            d2 = [sum((mp.mpf(a) - mp.mpf(b)) ** 2 for a, b in zip(q, x, strict=True)) for x in X]
            w = [mp.exp(-(d - min(d2)) / (2 * mp.mpf(h) ** 2)) for d in d2]
            ref.append(float(mp.fsum(wi * yi for wi, yi in zip(w, y, strict=True)) / mp.fsum(w)))
    np.testing.assert_allclose(got, ref, rtol=1e-13)
