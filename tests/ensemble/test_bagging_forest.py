"""Bagging and forests: the bootstrap's 0.632 fraction, out-of-bag bookkeeping by brute
force, and accuracy beside scikit-learn's forests."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer

from mathlearn.ensemble import (
    BaggingClassifier,
    BaggingRegressor,
    ExtraTreesClassifier,
    RandomForestClassifier,
    RandomForestRegressor,
)
from mathlearn.linear_model import LinearRegression


class _NoWeights(LinearRegression):
    def fit(self, X, y):
        return super().fit(X, y)


def test_t24_bootstrap_unique_fraction():
    n, L = 2000, 30
    clf = BaggingRegressor(LinearRegression(), n_estimators=L, random_state=0)
    X = np.random.default_rng(0).standard_normal((n, 2))
    clf.fit(X, X[:, 0])
    u = np.array([len(s) for s in clf.estimators_samples_])
    assert all(np.all((s >= 0) & (s < n)) for s in clf.estimators_samples_)
    assert all(c.sum() == n for c in clf._bootstrap_counts())
    # Exact mean and variance of the number of distinct items in N draws from N.
    q1, q2 = (1 - 1 / n) ** n, (1 - 2 / n) ** n
    mean = n * (1 - q1)
    var = n * q1 * (1 - q1) + n * (n - 1) * (q2 - q1**2)
    z = (u.mean() - mean) / np.sqrt(var / L)
    assert abs(z) < 4.5
    assert abs(mean / n - (1 - np.exp(-1))) < 1e-3


@pytest.mark.parametrize("seed", [0, "generator"])
def test_bootstraps_drawn_again_are_the_fits_draws(seed):
    """The members' bootstraps are not stored but drawn again from the generator's state at
    the start of ``fit``: they must be the draws each member was fitted on, in the order a
    single pass draws them (each member's sample, then its features; the members' seeds
    after all of them), also when ``random_state`` is a Generator that the fit advances."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((50, 6))
    y = X[:, 0] + 0.1 * rng.standard_normal(50)
    state = np.random.default_rng(11) if seed == "generator" else seed
    ref = np.random.default_rng(11) if seed == "generator" else np.random.default_rng(seed)
    ens = BaggingRegressor(
        LinearRegression(), n_estimators=7, max_features=0.5, random_state=state
    ).fit(X, y)
    counts, feats = [], []
    for _ in range(7):
        counts.append(np.bincount(ref.integers(0, 50, 50), minlength=50))
        feats.append(np.sort(ref.choice(6, 3, False)))
    ref.integers(0, np.iinfo(np.int32).max, 7)  # the members' seeds come last
    for got, want in zip(ens._bootstrap_counts(), counts, strict=True):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(ens.estimators_features_, feats, strict=True):
        np.testing.assert_array_equal(got, want)
    if seed == "generator":  # the fit advanced the caller's generator past the same draws
        assert state.integers(0, 2**62) == ref.integers(0, 2**62)
    for got, want in zip(ens.estimators_samples_, counts, strict=True):
        np.testing.assert_array_equal(got, np.flatnonzero(want))
    # each member is the fit on its own bootstrap (repeated rows, its features)
    for est, c, f in zip(ens.estimators_, counts, feats, strict=True):
        rep = np.repeat(np.arange(50), c)
        np.testing.assert_allclose(
            est.coef_, LinearRegression().fit(X[np.ix_(rep, f)], y[rep]).coef_, rtol=1e-12
        )


def test_oob_matches_brute_force():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((120, 4))
    y = (X[:, 0] + 0.5 * rng.standard_normal(120) > 0).astype(int)
    clf = RandomForestClassifier(n_estimators=15, oob_score=True, random_state=0).fit(X, y)
    acc = np.zeros((120, 2))
    cnt = np.zeros(120)
    for est, c in zip(clf.estimators_, clf._bootstrap_counts(), strict=True):
        m = c == 0
        proba = np.zeros((m.sum(), 2))
        proba[:, est.classes_] = est.predict_proba(X[m])
        acc[m] += proba
        cnt[m] += 1
    seen = cnt > 0
    np.testing.assert_allclose(clf.oob_decision_function_[seen], acc[seen] / cnt[seen, None])
    assert clf.oob_score_ == np.mean(np.argmax(acc[seen], 1) == y[seen])
    yr = X[:, 0] + 0.1 * rng.standard_normal(120)
    reg = BaggingRegressor(LinearRegression(), n_estimators=15, oob_score=True, random_state=0)
    reg.fit(X, yr)
    assert 0.9 < reg.oob_score_ <= 1.0


def test_bagging_reduces_variance_of_trees():
    """Averaging L trees: the prediction variance across training sets drops."""
    rng = np.random.default_rng(2)
    x0 = np.array([[0.3]])
    single, bagged = [], []
    for _ in range(12):
        X = rng.uniform(-1, 1, (50, 1))
        y = np.sin(3 * X[:, 0]) + 0.5 * rng.standard_normal(50)
        from mathlearn.tree import DecisionTreeRegressor

        single.append(DecisionTreeRegressor().fit(X, y).predict(x0)[0])
        bagged.append(BaggingRegressor(n_estimators=10, random_state=0).fit(X, y).predict(x0)[0])
    assert np.var(bagged) < 0.7 * np.var(single)


@pytest.mark.parametrize(
    "Ours,Peer",
    [
        (RandomForestClassifier, "RandomForestClassifier"),
        (ExtraTreesClassifier, "ExtraTreesClassifier"),
    ],
)
def test_forest_accuracy_beside_sklearn(Ours, Peer):
    import sklearn.ensemble as ske
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    X, y = load_breast_cancer(return_X_y=True)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    a = cross_val_score(Ours(n_estimators=10, random_state=0), X, y, cv=cv)
    b = cross_val_score(getattr(ske, Peer)(n_estimators=10, random_state=0), X, y, cv=cv)
    # Same splits: the fold-wise difference's mean within 3 standard errors of zero.
    d = a - b
    assert abs(d.mean()) <= 3 * max(d.std(ddof=1) / np.sqrt(5), 1 / 114)


def test_forest_regressor_and_features():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((150, 5))
    y = 2 * X[:, 0] + X[:, 1] ** 2 + 0.1 * rng.standard_normal(150)
    reg = RandomForestRegressor(n_estimators=8, random_state=0, n_jobs=2).fit(X, y)
    imp = reg.feature_importances_
    assert imp.argmax() == 0 and imp[2:].max() < imp[1]
    np.testing.assert_allclose(imp.sum(), 1.0)
    again = RandomForestRegressor(n_estimators=8, random_state=0, n_jobs=1).fit(X, y)
    np.testing.assert_array_equal(reg.predict(X), again.predict(X))
    clf = BaggingClassifier(max_features=2, n_estimators=4, random_state=0).fit(X, y > 0)
    assert all(len(f) == 2 for f in clf.estimators_features_)


def test_bad_input():
    X = np.ones((10, 3))
    y = np.array([0, 1] * 5)
    clf = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    np.testing.assert_allclose(clf.predict_proba(X), 0.5, atol=0.5)
    with pytest.raises(ValueError, match="non-zero"):
        BaggingClassifier(n_estimators=3).fit(X, y, sample_weight=np.zeros(10))
    with pytest.raises(ValueError, match="sample_weight"):
        BaggingRegressor(_NoWeights(), n_estimators=3).fit(X, y, sample_weight=np.arange(10.0))
    with pytest.raises(ValueError, match="NaN"):
        RandomForestRegressor(n_estimators=3).fit(np.full((10, 3), np.nan), y)


@pytest.mark.parametrize(
    "Ensemble,params",
    [
        (RandomForestClassifier, {"n_estimators": 6}),
        (ExtraTreesClassifier, {"n_estimators": 4}),
        (BaggingClassifier, {"n_estimators": 5, "max_features": 0.5}),
        (RandomForestRegressor, {"n_estimators": 4}),
    ],
)
def test_members_equal_trees_fitted_by_their_public_fit(Ensemble, params):
    """Forests fit their trees without re-validating each one: every member must be the tree
    that the tree's own ``fit`` grows on the member's bootstrap sample (same classes, same
    nodes), including bootstraps that miss the rare class."""
    from sklearn.base import clone

    rng = np.random.default_rng(4)
    X = rng.standard_normal((60, 5))
    y = (X[:, 0] > 0).astype(int)
    y[:2] = 2  # a rare class: some bootstraps leave it out
    target = y if hasattr(Ensemble, "predict_proba") else X[:, 1] + y
    ens = Ensemble(random_state=0, **params).fit(X, target)
    missing = 0
    members = zip(ens.estimators_, ens._bootstrap_counts(), ens.estimators_features_, strict=True)
    for est, c, f in members:
        keep = c > 0
        ref = clone(est).fit(X[np.ix_(keep, f)], target[keep], sample_weight=c[keep])
        if hasattr(est, "classes_"):
            np.testing.assert_array_equal(est.classes_, ref.classes_)
            missing += est.classes_.size < 3
        for name in ("children_left", "feature", "threshold", "value", "n_node_samples"):
            np.testing.assert_array_equal(getattr(est.tree_, name), getattr(ref.tree_, name))
        assert est.n_features_in_ == ref.n_features_in_
    if Ensemble is RandomForestClassifier:
        assert missing > 0
