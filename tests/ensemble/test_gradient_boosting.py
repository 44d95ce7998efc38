"""Gradient boosting against scikit-learn, a hand-computed first stage, and its invariances.

scikit-learn grows its trees on float32 copies of X, so the data here are float32-representable
(then both libraries see the same numbers and, away from ties, grow the same trees). The
residual targets are continuous, so equal gains do not occur except for the absolute and
quantile losses (two-valued pseudo-residuals): those are checked on an odd number of samples
(the lower median is then the median; scikit-learn averages the two middle values for the
initial constant) and, for the quantile loss, against the first stage computed here.
Predictions are sums of ``n_estimators`` rounded terms of size ``|y|``, so they agree to
``n_estimators * |y| * a few eps``; ``1e-9 * max|y|`` leaves room for that.
"""

import itertools

import numpy as np
import pytest
from scipy.special import expit
from sklearn import ensemble as ske
from sklearn.datasets import make_classification, make_regression

from mathlearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
from mathlearn.utils._param_validation import InvalidParameterError


def _f32(X):
    return X.astype(np.float32).astype(np.float64)


@pytest.fixture(scope="module")
def reg_data():
    X, y = make_regression(201, 5, noise=5.0, random_state=0)
    return _f32(X), y


# The absolute loss's pseudo-residuals are signs, so equal gains (ties broken differently)
# appear after a few stages; its comparison stops before them.
@pytest.mark.parametrize(
    "loss, stages", [("squared_error", 20), ("absolute_error", 3), ("huber", 20)]
)
def test_regressor_matches_sklearn(reg_data, loss, stages):
    X, y = reg_data
    kw = dict(loss=loss, n_estimators=stages, max_depth=3, random_state=0)
    ours = GradientBoostingRegressor(**kw).fit(X, y)
    peer = ske.GradientBoostingRegressor(**kw).fit(X, y)
    tol = 1e-9 * np.abs(y).max()
    np.testing.assert_allclose(ours.init_, peer.init_.constant_.ravel(), atol=tol)
    np.testing.assert_allclose(ours.predict(X), peer.predict(X), atol=tol)
    np.testing.assert_allclose(ours.train_score_, peer.train_score_, rtol=1e-9)
    for a, b in zip(ours.staged_predict(X[:5]), peer.staged_predict(X[:5]), strict=True):
        np.testing.assert_allclose(a, b, atol=tol)


def test_regressor_feature_importances_match_sklearn(reg_data):
    X, y = reg_data
    ours = GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X, y)
    peer = ske.GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.feature_importances_, peer.feature_importances_, atol=1e-9)
    assert ours.feature_importances_.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_matches_sklearn(n_classes):
    X, y = make_classification(
        150, 5, n_informative=3, n_redundant=0, n_classes=n_classes, random_state=1
    )
    X = _f32(X)
    kw = dict(n_estimators=15, max_depth=2, learning_rate=0.3, random_state=0)
    ours = GradientBoostingClassifier(**kw).fit(X, y)
    peer = ske.GradientBoostingClassifier(**kw).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), peer.predict_proba(X), atol=1e-10)
    np.testing.assert_allclose(ours.train_score_, peer.train_score_, rtol=1e-9)
    np.testing.assert_array_equal(ours.predict(X), peer.predict(X))
    if n_classes == 2:
        np.testing.assert_allclose(ours.decision_function(X), peer.decision_function(X), atol=1e-9)
    last = list(ours.staged_predict_proba(X))[-1]
    np.testing.assert_allclose(last, ours.predict_proba(X), rtol=1e-12)


def test_early_stopping_matches_sklearn():
    X, y = make_classification(300, 6, n_informative=4, n_classes=3, random_state=0)
    X = _f32(X)
    kw = dict(n_estimators=300, n_iter_no_change=5, validation_fraction=0.2, random_state=0)
    ours = GradientBoostingClassifier(**kw).fit(X, y)
    peer = ske.GradientBoostingClassifier(**kw).fit(X, y)
    assert ours.n_estimators_ == peer.n_estimators_ < 300
    assert ours.train_score_.shape == (ours.n_estimators_,)
    Xr, yr = make_regression(200, 4, noise=30.0, random_state=0)
    Xr = _f32(Xr)
    kw = dict(n_estimators=500, n_iter_no_change=3, learning_rate=0.3, random_state=3)
    ours = GradientBoostingRegressor(**kw).fit(Xr, yr)
    peer = ske.GradientBoostingRegressor(**kw).fit(Xr, yr)
    assert ours.n_estimators_ == peer.n_estimators_ < 500


def _best_stump(x, r):
    """Least-squares stump on one feature by brute force: (threshold, left mask)."""
    xs = np.unique(x)
    best = None
    for lo, hi in itertools.pairwise(xs):
        t = (lo + hi) / 2
        left = x <= t
        sse = ((r[left] - r[left].mean()) ** 2).sum() + ((r[~left] - r[~left].mean()) ** 2).sum()
        if best is None or sse < best[0]:
            best = (sse, t, left)
    return best[1], best[2]


def test_binomial_first_stage_by_hand():
    rng = np.random.default_rng(0)
    x = rng.permutation(20).astype(float)
    y = (x + 4 * rng.standard_normal(20) > 9).astype(int)
    clf = GradientBoostingClassifier(n_estimators=1, max_depth=1, learning_rate=0.5)
    clf.fit(x[:, None], y)
    p0 = y.mean()
    F0 = np.log(p0 / (1 - p0))
    r = y - p0
    t, left = _best_stump(x, r)
    # One Newton step per leaf: sum r / sum p (1 - p), with p = p0 everywhere.
    gam = {side: r[m].sum() / (m.sum() * p0 * (1 - p0)) for side, m in (("L", left), ("R", ~left))}
    F1 = F0 + 0.5 * np.where(left, gam["L"], gam["R"])
    assert clf.init_[0] == pytest.approx(F0, rel=1e-14)
    assert clf.estimators_[0, 0].threshold[0] == t
    np.testing.assert_allclose(clf.decision_function(x[:, None]), F1, rtol=1e-13)
    np.testing.assert_allclose(clf.predict_proba(x[:, None])[:, 1], expit(F1), rtol=1e-13)
    # Deviance: twice the mean log-loss.
    dev = 2 * np.mean(np.logaddexp(0, F1) - y * F1)
    assert clf.train_score_[0] == pytest.approx(dev, rel=1e-13)


def test_multinomial_first_stage_by_hand():
    rng = np.random.default_rng(1)
    x = rng.permutation(30).astype(float)
    y = np.minimum(2, (x + 3 * rng.standard_normal(30)) // 10).clip(0).astype(int)
    clf = GradientBoostingClassifier(n_estimators=1, max_depth=1, learning_rate=1.0)
    clf.fit(x[:, None], y)
    prior = np.bincount(y) / 30
    F0 = np.log(prior) - np.log(prior).mean()
    np.testing.assert_allclose(clf.init_, F0, rtol=1e-14)
    F1 = np.tile(F0, (30, 1))
    for k in range(3):
        r = (y == k) - prior[k]
        _, left = _best_stump(x, r)
        h = prior[k] * (1 - prior[k])
        for m in (left, ~left):
            F1[m, k] += (2 / 3) * r[m].sum() / (m.sum() * h)
    expected = np.exp(F1) / np.exp(F1).sum(1, keepdims=True)
    np.testing.assert_allclose(clf.predict_proba(x[:, None]), expected, rtol=1e-12)


def test_quantile_first_stage_by_hand():
    rng = np.random.default_rng(2)
    x = np.arange(40.0)
    y = 0.5 * x + rng.standard_normal(40)
    reg = GradientBoostingRegressor(
        loss="quantile", alpha=0.8, n_estimators=1, max_depth=1, learning_rate=1.0
    ).fit(x[:, None], y)
    F0 = np.quantile(y, 0.8, method="inverted_cdf")
    assert reg.init_[0] == F0
    r = np.where(y >= F0, 0.8, -0.2)
    t, left = _best_stump(x, r)
    assert reg.estimators_[0, 0].threshold[0] == t
    F1 = np.empty(40)
    for m in (left, ~left):
        F1[m] = F0 + np.quantile(y[m] - F0, 0.8, method="inverted_cdf")
    np.testing.assert_allclose(reg.predict(x[:, None]), F1, rtol=1e-14, atol=1e-14)


def test_huber_delta_and_leaf_by_hand():
    rng = np.random.default_rng(3)
    x = np.arange(31.0)
    y = x + 5 * rng.standard_t(2, 31)
    reg = GradientBoostingRegressor(
        loss="huber", alpha=0.7, n_estimators=1, max_depth=1, learning_rate=1.0
    ).fit(x[:, None], y)
    F0 = np.median(y)
    delta = np.quantile(np.abs(y - F0), 0.7, method="inverted_cdf")
    r = np.clip(y - F0, -delta, delta)
    _, left = _best_stump(x, r)
    F1 = np.empty(31)
    for m in (left, ~left):
        d = y[m] - F0
        med = np.quantile(d, 0.5, method="inverted_cdf")
        F1[m] = F0 + med + np.mean(np.sign(d - med) * np.minimum(delta, np.abs(d - med)))
    np.testing.assert_allclose(reg.predict(x[:, None]), F1, rtol=1e-13)


def test_integer_weights_equal_repeated_rows(reg_data):
    X, y = reg_data
    w = np.random.default_rng(0).integers(1, 4, X.shape[0])
    kw = dict(n_estimators=10, max_depth=2)
    a = GradientBoostingRegressor(**kw).fit(X, y, sample_weight=w)
    b = GradientBoostingRegressor(**kw).fit(np.repeat(X, w, 0), np.repeat(y, w))
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-9 * np.abs(y).max())


def test_target_scale_equivariance(reg_data):
    """Multiplying y by a power of two multiplies every prediction by it, exactly, and the
    training losses by its square (its first power for the absolute and quantile losses)
    where that is a float:
    targets of moderate size are used unscaled (2^300), extreme ones are divided by a power
    of two first (2^+-900), and both give the same fit."""
    X, y = reg_data
    for loss in ("squared_error", "huber", "absolute_error", "quantile"):
        kw = dict(loss=loss, n_estimators=5, subsample=0.7, random_state=0)
        ref = GradientBoostingRegressor(**kw).fit(X, y)
        power = 1 if loss in ("absolute_error", "quantile") else 2
        for s in (2.0**300, 2.0**900, 2.0**-900):
            got = GradientBoostingRegressor(**kw).fit(X, y * s)
            np.testing.assert_array_equal(got.predict(X), ref.predict(X) * s)
            if s == 2.0**300:  # (the square of the others leaves the float range)
                np.testing.assert_array_equal(got.train_score_, ref.train_score_ * s**power)


def test_shrinkage_and_subsample_reduce_training_loss(reg_data):
    X, y = reg_data
    reg = GradientBoostingRegressor(n_estimators=30, subsample=0.5, random_state=0).fit(X, y)
    # oob_improvement_ is the fall of the out-of-bag loss from one stage to the next.
    np.testing.assert_allclose(np.diff(reg.oob_scores_), -reg.oob_improvement_[1:], rtol=1e-12)
    assert reg.oob_score_ == reg.oob_scores_[-1]
    full = GradientBoostingRegressor(n_estimators=30, learning_rate=1.0).fit(X, y)
    slow = GradientBoostingRegressor(n_estimators=30, learning_rate=0.05).fit(X, y)
    assert np.all(np.diff(full.train_score_) <= 0)
    assert full.train_score_[-1] < slow.train_score_[-1]


def test_bad_inputs():
    X = np.arange(20.0)[:, None]
    y = np.r_[np.zeros(10), np.ones(10)]
    with pytest.raises(ValueError, match=r"NaN|infinity"):
        GradientBoostingRegressor().fit(np.where(X > 5, np.nan, X), y)
    with pytest.raises(InvalidParameterError):
        GradientBoostingRegressor(max_depth=0).fit(X, y)
    with pytest.raises(InvalidParameterError):
        GradientBoostingClassifier(learning_rate=0.0).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        GradientBoostingClassifier().fit(X, np.zeros(20))
    with pytest.raises(ValueError, match="zero"):
        GradientBoostingRegressor().fit(X, y, sample_weight=np.zeros(20))
    with pytest.raises(ValueError, match="positive total sample_weight"):
        GradientBoostingClassifier().fit(X, y, sample_weight=np.r_[np.ones(10), np.zeros(10)])
    with pytest.raises(ValueError, match="validation_fraction"):
        GradientBoostingClassifier(n_iter_no_change=2, validation_fraction=0.01).fit(
            X[:4], [0, 0, 1, 1]
        )


def test_constant_feature_and_identical_samples():
    X = np.ones((10, 2))
    y = np.arange(10.0)
    reg = GradientBoostingRegressor(n_estimators=3).fit(X, y)
    np.testing.assert_allclose(reg.predict(X), np.full(10, y.mean()))
    np.testing.assert_array_equal(reg.feature_importances_, np.zeros(2))
    clf = GradientBoostingClassifier(n_estimators=3).fit(X, [0, 1] * 5)
    np.testing.assert_allclose(clf.predict_proba(X), 0.5)


@pytest.mark.parametrize("exponent", [-996, 996])
@pytest.mark.parametrize("model", [GradientBoostingClassifier, GradientBoostingRegressor])
def test_extreme_sample_weight_scales_give_the_same_fit(model, exponent):
    # Every weighted quantity of the fit is a ratio of weighted sums, so weights scaled by
    # 2^e (about 1e+-300: exact) must give the same model bit for bit; their products
    # overflowed or underflowed before (a different committee, silently).
    rng = np.random.default_rng(5)
    X = rng.standard_normal((300, 3))
    y = (X[:, 0] - X[:, 2] + 0.4 * rng.standard_normal(300) > 0).astype(int)
    sw = rng.uniform(0.5, 2.0, 300)
    kw = {"n_estimators": 20, "subsample": 0.8, "random_state": 0}
    ref = model(**kw).fit(X, y, sample_weight=sw)
    got = model(**kw).fit(X, y, sample_weight=np.ldexp(sw, exponent))
    np.testing.assert_array_equal(got.predict(X), ref.predict(X))
    np.testing.assert_array_equal(got.train_score_, ref.train_score_)
    np.testing.assert_array_equal(got.oob_improvement_, ref.oob_improvement_)
