"""Histogram gradient boosting against scikit-learn's and a hand-computed first tree.

On features with fewer distinct values than ``max_bins`` both libraries put one value per bin,
so they see the same histograms, score splits by the same gain and grow the same leaf-wise
trees. scikit-learn keeps gradients and hessians in float32 (relative rounding 6e-8 per
value), so after 20 iterations predictions agree to about 20 * 6e-8 * |F|; 1e-6 relative to
the target's range leaves margin for that and is far below any change of split.
"""

import numpy as np
import pytest
from sklearn import ensemble as ske
from threadpoolctl import threadpool_limits

from mathlearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from mathlearn.ensemble._hist_gradient_boosting import apply_bins, bin_edges
from mathlearn.utils._param_validation import InvalidParameterError


@pytest.fixture(autouse=True)
def _one_thread():
    """scikit-learn's OpenMP threads stall on a shared, loaded machine; one is plenty here."""
    with threadpool_limits(1):
        yield


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 12, (600, 4)).astype(float)
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.standard_normal(600)
    return X, y


@pytest.mark.parametrize("l2", [0.0, 1.0])
def test_regressor_matches_sklearn(data, l2):
    X, y = data
    kw = dict(max_iter=20, early_stopping=False, l2_regularization=l2)
    ours = HistGradientBoostingRegressor(**kw).fit(X, y)
    peer = ske.HistGradientBoostingRegressor(**kw).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), peer.predict(X), atol=1e-6 * np.ptp(y))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_matches_sklearn(data, n_classes):
    X, y = data
    yc = np.digitize(y, np.quantile(y, np.arange(1, n_classes) / n_classes))
    kw = dict(max_iter=20, early_stopping=False, max_leaf_nodes=15)
    ours = HistGradientBoostingClassifier(**kw).fit(X, yc)
    peer = ske.HistGradientBoostingClassifier(**kw).fit(X, yc)
    np.testing.assert_allclose(ours.predict_proba(X), peer.predict_proba(X), atol=1e-6)
    last = list(ours.staged_predict_proba(X))[-1]
    np.testing.assert_allclose(last, ours.predict_proba(X), rtol=1e-12)


def test_first_tree_by_hand():
    """A stump (two leaves): the best gain over all bins, leaf values -nu G / (H + lambda)."""
    x = np.arange(10.0)
    y = np.array([1.0, 2, 1, 2, 1, 8, 9, 8, 9, 9])
    lam, nu = 2.0, 0.5
    reg = HistGradientBoostingRegressor(
        max_iter=1,
        max_leaf_nodes=2,
        min_samples_leaf=2,
        l2_regularization=lam,
        learning_rate=nu,
        early_stopping=False,
    ).fit(x[:, None], y)
    g = y.mean() - y  # F0 - y, hessians 1
    best = max(
        (
            g[: b + 1].sum() ** 2 / (b + 1 + lam)
            + g[b + 1 :].sum() ** 2 / (9 - b + lam)
            - g.sum() ** 2 / (10 + lam),
            b,
        )
        for b in range(1, 8)
    )[1]
    left = x <= best
    expected = y.mean() - nu * np.where(
        left, g[left].sum() / (left.sum() + lam), g[~left].sum() / ((~left).sum() + lam)
    )
    np.testing.assert_allclose(reg.predict(x[:, None]), expected, rtol=1e-14)


def test_binning_quantiles_and_distinct_values():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.standard_normal(5000), rng.integers(0, 3, 5000)])
    edges = bin_edges(X, 255, rng)
    assert edges[0].shape[0] <= 254
    np.testing.assert_array_equal(edges[1], [0.5, 1.5])
    Xb = apply_bins(X, edges)
    counts = np.bincount(Xb[:, 0])
    # Quantile bins hold about n / max_bins samples each.
    assert counts.max() <= 2 * 5000 / 255 + 2
    # A value equal to an edge goes to the lower bin (x <= edge goes left).
    assert apply_bins(np.array([[edges[0][3], 1.5]]), edges).tolist() == [[3, 1]]


def test_accuracy_close_to_sklearn_on_continuous_data():
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    X, y = load_breast_cancer(return_X_y=True)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    kw = dict(max_iter=10, early_stopping=False)
    ours = cross_val_score(HistGradientBoostingClassifier(**kw), X, y, cv=cv)
    peer = cross_val_score(ske.HistGradientBoostingClassifier(**kw), X, y, cv=cv)
    se = np.sqrt(ours.var(ddof=1) / 5 + peer.var(ddof=1) / 5)
    assert abs(ours.mean() - peer.mean()) <= 2 * se + 1 / 114


def test_early_stopping_stops():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((400, 3))
    y = (X[:, 0] + rng.standard_normal(400) > 0).astype(int)
    clf = HistGradientBoostingClassifier(
        max_iter=500, early_stopping=True, n_iter_no_change=5, random_state=0
    ).fit(X, y)
    assert clf.n_iter_ < 500
    s = clf.validation_score_
    assert s.shape == (clf.n_iter_ + 1,)
    assert np.all(s[-5:] > s[-6] - clf.tol)


def test_scale_of_target_and_bad_inputs(data):
    X, y = data
    ref = HistGradientBoostingRegressor(max_iter=5, early_stopping=False).fit(X, y).predict(X)
    big = HistGradientBoostingRegressor(max_iter=5, early_stopping=False).fit(X, y * 2.0**900)
    np.testing.assert_array_equal(big.predict(X), ref * 2.0**900)
    with pytest.raises(InvalidParameterError):
        HistGradientBoostingRegressor(max_bins=256).fit(X, y)
    with pytest.raises(InvalidParameterError):
        HistGradientBoostingRegressor(max_depth=0).fit(X, y)
    with pytest.raises(ValueError, match=r"NaN|infinity"):
        HistGradientBoostingRegressor().fit(np.where(X > 10, np.inf, X), y)
    with pytest.raises(ValueError, match="zero"):
        HistGradientBoostingRegressor().fit(X, y, sample_weight=np.zeros(600))
    with pytest.raises(ValueError, match="at least 2 classes"):
        HistGradientBoostingClassifier().fit(X, np.zeros(600))
    const = HistGradientBoostingRegressor(max_iter=3).fit(np.ones((30, 2)), np.arange(30.0))
    np.testing.assert_allclose(const.predict(np.ones((2, 2))), 14.5)


@pytest.mark.parametrize("n, max_bins", [(400, 255), (3000, 16)])
def test_compiled_route_agrees_with_numpy(monkeypatch, n, max_bins):
    """The C grower and the NumPy route add the same numbers in the same order (rows in
    index order per bin), so they grow the same trees: bit-identical predictions. With 255
    bins no node reaches the 2 x 256 rows from which a histogram is kept for subtraction,
    so every child is summed from its rows; with 16 bins most children come by subtraction."""
    from mathlearn.ensemble import _hist_gradient_boosting as hgb

    if hgb._hgb_lib() is None:
        pytest.skip("_hgb not built")

    rng = np.random.default_rng(4)
    X = rng.standard_normal((n, 5))
    y = np.digitize(X[:, 0] + X[:, 1] ** 2 + 0.3 * rng.standard_normal(n), [0.0, 1.0])
    kw = dict(max_iter=5, early_stopping=False, max_leaf_nodes=8, max_bins=max_bins)
    yr = X[:, 0] - X[:, 2]
    w = rng.uniform(0.5, 2.0, n)  # unequal weights: hessians summed, not counted
    fits = []
    for route in ("compiled", "numpy"):
        if route == "numpy":
            monkeypatch.setattr(hgb, "_hgb_lib", lambda: None)
        fits.append(
            (
                HistGradientBoostingClassifier(**kw).fit(X, y).predict_proba(X),
                HistGradientBoostingRegressor(**kw).fit(X, yr).predict(X),
                HistGradientBoostingRegressor(**kw).fit(X, yr, sample_weight=w).predict(X),
                HistGradientBoostingRegressor("absolute_error", **kw).fit(X, yr).predict(X),
            )
        )
    for a, b in zip(*fits, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("l2", [0.0, 1.0])
def test_absolute_error_matches_sklearn(data, l2):
    """Trees grown on sign(F - y) with unit hessians, leaves set to the median residual."""
    X, y = data
    y = y + np.where(np.arange(y.shape[0]) % 17 == 0, 25.0, 0.0)  # outliers in y
    kw = dict(loss="absolute_error", max_iter=20, early_stopping=False, l2_regularization=l2)
    ours = HistGradientBoostingRegressor(**kw).fit(X, y)
    peer = ske.HistGradientBoostingRegressor(**kw).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), peer.predict(X), atol=1e-6 * np.ptp(y))


def test_absolute_error_first_stump_by_hand():
    """Baseline the median of y; one split; each leaf moves by nu times its median residual."""
    x = np.arange(10.0)
    y = np.array([1.0, 2, 1, 2, 1, 8, 9, 8, 9, 30])
    nu = 0.5
    reg = HistGradientBoostingRegressor(
        loss="absolute_error",
        max_iter=1,
        max_leaf_nodes=2,
        min_samples_leaf=1,
        learning_rate=nu,
        early_stopping=False,
    ).fit(x[:, None], y)
    base = np.median(y)  # 5.0: residual signs are - for x <= 4 and + for x >= 5
    left, right = x <= 4, x >= 5
    expected = np.where(
        left, base + nu * np.median(y[left] - base), base + nu * np.median(y[right] - base)
    )
    np.testing.assert_allclose(reg.predict(x[:, None]), expected, rtol=1e-15)
    assert reg.train_score_.shape == (0,)


def test_absolute_error_weighted_median_leaves():
    """With unequal weights the baseline is the weighted median (inverted CDF): sorted y
    0, 1, 2, 3, 10 with weights 1, 1, 1, 1, 4 reach half the total weight (4) at y = 3."""
    x = np.arange(5.0)[:, None]
    y = np.array([10.0, 0.0, 1.0, 2.0, 3.0])
    w = np.array([4.0, 1.0, 1.0, 1.0, 1.0])
    reg = HistGradientBoostingRegressor(
        loss="absolute_error",
        max_iter=1,
        max_leaf_nodes=2,
        min_samples_leaf=5,
        early_stopping=False,
    ).fit(x, y, sample_weight=w)
    # min_samples_leaf = 5 forbids any split: the prediction is the baseline plus one leaf
    # step of the median residual, which is 0 at the weighted median.
    np.testing.assert_allclose(reg.predict(x), 3.0)


def test_absolute_error_is_robust_to_outliers():
    """Gross outliers in y pull the squared-error fit; the absolute-error fit stays close to
    the clean function (errors measured on clean test points)."""
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 6, (800, 1))
    f = np.sin(X[:, 0])
    y = f + 0.05 * rng.standard_normal(800)
    bad = rng.random(800) < 0.1
    y[bad] += rng.choice([-50.0, 50.0], bad.sum())
    Xt = np.linspace(0.2, 5.8, 200)[:, None]
    kw = dict(max_iter=60, early_stopping=False, random_state=0)
    err_abs = np.mean(
        np.abs(
            HistGradientBoostingRegressor("absolute_error", **kw).fit(X, y).predict(Xt)
            - np.sin(Xt[:, 0])
        )
    )
    err_sq = np.mean(
        np.abs(HistGradientBoostingRegressor(**kw).fit(X, y).predict(Xt) - np.sin(Xt[:, 0]))
    )
    assert err_abs < 0.2 < err_sq
