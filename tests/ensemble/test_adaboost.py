"""AdaBoost against the PRML notes' worked example and its exponential-error identity."""

import numpy as np
import pytest

from mathlearn.base import BaseEstimator, ClassifierMixin
from mathlearn.ensemble import AdaBoostClassifier
from mathlearn.tree import DecisionTreeClassifier


class _Stump(ClassifierMixin, BaseEstimator):
    """The notes' stump family: y = s if x > theta else -s, theta in {0.5, ..., 5.5},
    minimising the weighted error with ties to the first (theta ascending, s = +1 first).
    Labels are class indices (0 for -1, 1 for +1), as the ensemble passes them."""

    def fit(self, X, y, sample_weight):
        x, t = X[:, 0], np.where(np.asarray(y) == 1, 1, -1)
        best = None
        for theta in np.arange(0.5, 6.0, 1.0):
            for s in (1, -1):
                err = sample_weight[np.where(x > theta, s, -s) != t].sum()
                if best is None or err < best[0] - 1e-12:
                    best = (err, theta, s)
        self.theta_, self.s_ = best[1], best[2]
        self.classes_ = np.array([0, 1])
        return self

    def predict(self, X):
        return (np.where(X[:, 0] > self.theta_, self.s_, -self.s_) == 1).astype(int)


def test_t23_every_round():
    X = np.arange(1.0, 6.0)[:, None]
    t = np.array([1, 1, -1, -1, 1])
    clf = AdaBoostClassifier(_Stump(), n_estimators=3).fit(X, t)
    stumps = [(e.theta_, e.s_) for e in clf.estimators_]
    assert stumps == [(2.5, -1), (0.5, 1), (4.5, 1)]
    # epsilon and alpha in closed form: 1/5, 1/4, 1/6 and ln 4, ln 3, ln 5.
    np.testing.assert_allclose(clf.estimator_errors_, [0.2, 0.25, 1 / 6], rtol=1e-14)
    np.testing.assert_allclose(clf.estimator_weights_, np.log([4.0, 3.0, 5.0]), rtol=1e-14)
    np.testing.assert_allclose(
        clf.sample_weights_,
        [[0.2] * 5, [0.2, 0.2, 0.2, 0.2, 0.8], [0.2, 0.2, 0.6, 0.6, 0.8], [1, 1, 0.6, 0.6, 0.8]],
        rtol=1e-14,
    )
    staged = [p.tolist() for p in clf.staged_predict(X)]
    assert staged == [[1, 1, -1, -1, -1], [1, 1, -1, -1, -1], [1, 1, -1, -1, 1]]
    # PRML §14.3.1: normalised weights equal normalised exp(-t f_3), f_3 = 1/2 sum alpha y.
    f3 = 0.5 * clf.decision_function(X)
    w = clf.sample_weights_[-1] / clf.sample_weights_[-1].sum()
    np.testing.assert_allclose(w, [0.25, 0.25, 0.15, 0.15, 0.2], rtol=1e-14)
    e = np.exp(-t * f3)
    np.testing.assert_allclose(w, e / e.sum(), rtol=1e-13)


def test_exponential_error_identity_on_random_data():
    """PRML §14.3.1 on many rounds of real stumps: w^(m+1) is proportional to exp(-t f_m)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3))
    t = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(200) > 0, 1, -1)
    clf = AdaBoostClassifier(n_estimators=15).fit(X, t)
    f = 0.5 * clf.decision_function(X)
    w = clf.sample_weights_[-1] / clf.sample_weights_[-1].sum()
    e = np.exp(-t * f)
    np.testing.assert_allclose(w, e / e.sum(), rtol=1e-10)
    # Each learner has weighted error < 1/2 and alpha = ln((1 - eps) / eps).
    eps = clf.estimator_errors_
    assert np.all(eps < 0.5)
    np.testing.assert_allclose(clf.estimator_weights_, np.log((1 - eps) / eps), rtol=1e-12)
    # The training error of the committee falls below that of the first stump.
    errs = [np.mean(p != t) for p in clf.staged_predict(X)]
    assert errs[-1] < errs[0]


def test_guards():
    X = np.arange(6.0)[:, None]
    y = np.array([0, 0, 0, 1, 1, 1])
    # A perfect first learner: epsilon = 0, one learner with weight 1, boosting stops.
    clf = AdaBoostClassifier(n_estimators=10).fit(X, y)
    assert clf.n_estimators_ == 1 and clf.estimator_errors_[0] == 0.0
    np.testing.assert_array_equal(clf.predict(X), y)
    assert np.all(np.isfinite(clf.estimator_weights_))
    # A learner no better than chance: a stump on a constant feature.
    with pytest.raises(ValueError, match="no better than chance"):
        AdaBoostClassifier(n_estimators=5).fit(np.ones((6, 1)), y)
    # A learner that becomes perfect later decides every prediction.
    Xs = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 1.0], [3.0, 1.0], [4.0, 1.0]])
    ys = np.array([0, 1, 0, 1, 1])
    clf = AdaBoostClassifier(DecisionTreeClassifier(max_depth=2), n_estimators=10).fit(Xs, ys)
    assert np.all(np.isfinite(clf.estimator_weights_))
    np.testing.assert_array_equal(clf.predict(Xs), ys)


def test_multiclass_samme_alpha():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    clf = AdaBoostClassifier(n_estimators=10).fit(X, y)
    eps = clf.estimator_errors_
    np.testing.assert_allclose(
        clf.estimator_weights_, np.log((1 - eps) / eps) + np.log(2.0), rtol=1e-12
    )
    assert clf.score(X, y) > 0.9


def test_rounds_equal_stumps_fitted_by_their_public_fit():
    """The rounds share one sort of the features and skip the stumps' per-call validation:
    each stump must be the tree the stump's own ``fit`` grows with that round's weights."""
    from sklearn.base import clone
    from sklearn.datasets import make_classification

    X, y = make_classification(300, 6, n_informative=4, n_classes=3, random_state=1)
    X[:, 2] = np.round(X[:, 2])  # ties in a feature
    clf = AdaBoostClassifier(n_estimators=12, random_state=0).fit(X, y)
    y_idx = np.searchsorted(clf.classes_, y)
    for est, w in zip(clf.estimators_, clf.sample_weights_, strict=False):
        ref = clone(est).fit(X, y_idx, sample_weight=w)
        np.testing.assert_array_equal(est.classes_, ref.classes_)
        for name in ("feature", "threshold", "value", "n_node_samples"):
            np.testing.assert_array_equal(getattr(est.tree_, name), getattr(ref.tree_, name))


class _RecordingTree(ClassifierMixin, BaseEstimator):
    """A depth-2 tree (composition, so the ensemble calls ``fit`` with the weights) that
    keeps the weights it was fitted with."""

    seen: list = []

    def fit(self, X, y, sample_weight):
        type(self).seen.append(np.array(sample_weight, copy=True))
        self.tree_ = DecisionTreeClassifier(max_depth=2).fit(X, y, sample_weight=sample_weight)
        self.classes_ = self.tree_.classes_
        return self

    def predict(self, X):
        return self.tree_.predict(X)


@pytest.mark.parametrize("learning_rate", [1.0, 60.0])
def test_sample_weights_are_the_weights_each_round_used(learning_rate):
    # sample_weights_ is regenerated from one bit per sample and round: it must equal, bit
    # for bit, the weights each learner was given, through the rescaling that very large
    # alphas trigger (learning_rate 60: the weights pass 1e150 within a few rounds).
    rng = np.random.default_rng(3)
    X = rng.standard_normal((150, 4))
    y = (X[:, 0] + X[:, 1] ** 2 + 0.5 * rng.standard_normal(150) > 0.5).astype(int)
    sw = rng.uniform(0.5, 2.0, 150)
    _RecordingTree.seen = []
    clf = AdaBoostClassifier(_RecordingTree(), n_estimators=12, learning_rate=learning_rate)
    clf.fit(X, y, sample_weight=sw)
    hist = clf.sample_weights_
    assert hist.shape == (clf.n_estimators_ + 1, 150)
    rounds = len(_RecordingTree.seen)
    np.testing.assert_array_equal(hist[:rounds], np.array(_RecordingTree.seen))
    if learning_rate > 1:
        assert np.any(np.diff(hist.sum(axis=1)) < 0)  # a rescaling happened
    with pytest.raises(AttributeError):
        AdaBoostClassifier().sample_weights_


@pytest.mark.parametrize("scale", [1e-300, 1e300])
def test_extreme_sample_weight_scales_give_the_same_committee(scale):
    # epsilon and alpha depend on the weights' ratios only: sample weights scaled by 1e+-300
    # give the same stumps and alphas (to rounding) and finite weights throughout.
    rng = np.random.default_rng(5)
    X = rng.standard_normal((120, 3))
    y = (X[:, 0] - X[:, 2] + 0.4 * rng.standard_normal(120) > 0).astype(int)
    sw = rng.uniform(0.5, 2.0, 120)
    ref = AdaBoostClassifier(n_estimators=15).fit(X, y, sample_weight=sw)
    got = AdaBoostClassifier(n_estimators=15).fit(X, y, sample_weight=scale * sw)
    np.testing.assert_allclose(got.estimator_weights_, ref.estimator_weights_, rtol=1e-12)
    np.testing.assert_array_equal(got.predict(X), ref.predict(X))
    hist = got.sample_weights_
    assert np.all(np.isfinite(hist)) and np.all(hist.sum(axis=1) > 0)
