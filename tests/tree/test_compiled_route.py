"""The compiled CART builder (``mathlearn._ext._cart``) against the NumPy route.

Both grow the tree of ``mathlearn.tree._tree`` by the same arithmetic in the same order (the
prefix sums of each sorted feature, the same proxy, the same tie-breaks), so on data whose
best splits are not tied to within rounding they must give the same tree: the same
structure, features and thresholds exactly, and node statistics equal to the rounding of
their sums (the NumPy route's ``sum`` is pairwise, the compiled one sequential: relative
differences of a few ulps, 1e-12 is ample). With ``max_features`` below the number of
features the routes draw different candidate features, so only the validity of the tree
and its accuracy are compared there. Skipped where the helper was not built.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from mathlearn.tree import DecisionTreeClassifier, DecisionTreeRegressor, _tree

pytestmark = pytest.mark.skipif(_tree._cart_lib() is None, reason="_cart not built")

# the arrays that make up a fitted tree (mathlearn.tree._tree.Tree's constructor arguments)
_TREE_ARRAYS = (
    "children_left",
    "children_right",
    "feature",
    "threshold",
    "value",
    "impurity",
    "n_node_samples",
    "weighted_n_node_samples",
)


def _numpy_route(monkeypatch):
    monkeypatch.setattr(_tree, "_cart_lib", lambda: None)


def _same_tree(a, b):
    for name in ("children_left", "children_right", "feature", "threshold", "n_node_samples"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for name in ("value", "impurity", "weighted_n_node_samples"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-12, atol=1e-15)
    assert a.max_depth == b.max_depth


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"max_depth": 4},
        {"min_samples_leaf": 7, "min_samples_split": 20},
        {"min_impurity_decrease": 1e-3},
        {"min_weight_fraction_leaf": 0.02},
    ],
)
def test_classifier_same_tree(monkeypatch, params):
    X, y = make_classification(600, 8, n_classes=3, n_informative=5, random_state=0)
    w = np.random.default_rng(0).uniform(0.5, 2.0, 600)
    ours = DecisionTreeClassifier(criterion="gini", random_state=0, **params)
    compiled = ours.fit(X, y, sample_weight=w).tree_
    _numpy_route(monkeypatch)
    _same_tree(compiled, ours.fit(X, y, sample_weight=w).tree_)


def test_entropy_splits_are_optimal():
    """The entropy proxy needs logarithms, which the C library and NumPy may round
    differently in the last place, so near-ties can go either way: instead of comparing with
    the NumPy route, check at every internal node of the compiled tree that its split's proxy
    is the largest over all candidate splits of that node (computed here by the NumPy
    route's scorer) up to rounding."""
    X, y = make_classification(400, 6, n_classes=3, n_informative=4, random_state=4)
    w = np.random.default_rng(1).uniform(0.5, 2.0, 400)
    clf = DecisionTreeClassifier(criterion="entropy", random_state=0).fit(X, y, sample_weight=w)
    t = clf.tree_
    Y = (y[:, None] == np.arange(3)).astype(float)
    Yw = Y * w[:, None]
    path = clf.decision_path(X).tocsc()
    for node in np.flatnonzero(t.children_left >= 0):
        idx = path.indices[path.indptr[node] : path.indptr[node + 1]]
        order = idx[np.argsort(X[idx], axis=0, kind="stable")]
        best = _tree._best_split_sorted(X, Yw, w, order, np.arange(6), 1, 0.0, "entropy")
        go = X[idx, t.feature[node]] <= t.threshold[node]
        sL, sR = Yw[idx[go]].sum(axis=0), Yw[idx[~go]].sum(axis=0)
        mine = _tree._proxy(sL, np.asarray(sL.sum()), sR, np.asarray(sR.sum()), "entropy")
        # The proxy is W_L sum p log p + W_R sum p log p: rounding of order eps W log C.
        assert mine >= best[2] - 1e-12 * (sL.sum() + sR.sum())


@pytest.mark.parametrize("params", [{}, {"max_depth": 5}, {"min_samples_leaf": 5}])
def test_regressor_same_tree(monkeypatch, params):
    X, y = make_regression(500, 6, noise=5.0, random_state=1)
    compiled = DecisionTreeRegressor(random_state=0, **params).fit(X, y).tree_
    _numpy_route(monkeypatch)
    _same_tree(compiled, DecisionTreeRegressor(random_state=0, **params).fit(X, y).tree_)


def test_purity_is_relative_to_the_mean_square_on_both_routes(monkeypatch):
    """Targets 2^0 ... 2^29: both routes split every node down to one sample (a node is pure
    when its variance is below eps times its mean square), and give the same tree."""
    x, y = np.arange(30.0)[:, None], 2.0 ** np.arange(30)
    compiled = DecisionTreeRegressor().fit(x, y).tree_
    _numpy_route(monkeypatch)
    reference = DecisionTreeRegressor().fit(x, y).tree_
    assert compiled.node_count == reference.node_count == 59
    _same_tree(compiled, reference)


def test_ties_and_constant_features(monkeypatch):
    """Integer features (many equal values), a constant column, duplicated rows."""
    rng = np.random.default_rng(2)
    X = rng.integers(0, 4, (300, 5)).astype(float)
    X[:, 2] = 7.0
    X = np.vstack([X, X[:50]])
    y = (X[:, 0] + X[:, 1] > 3).astype(int)
    y[::13] ^= 1
    compiled = DecisionTreeClassifier(random_state=0).fit(X, y).tree_
    assert 2 not in set(compiled.feature)
    _numpy_route(monkeypatch)
    _same_tree(compiled, DecisionTreeClassifier(random_state=0).fit(X, y).tree_)


def test_max_features_trees_are_valid_and_accurate():
    """Random candidate features: every split separates its node's samples by the stored
    threshold, children partition their parent, and the leaves fit the training data."""
    X, y = make_classification(800, 12, random_state=3)
    clf = DecisionTreeClassifier(max_features=3, random_state=0).fit(X, y)
    t = clf.tree_
    internal = np.flatnonzero(t.children_left >= 0)
    np.testing.assert_array_equal(
        t.n_node_samples[internal],
        t.n_node_samples[t.children_left[internal]] + t.n_node_samples[t.children_right[internal]],
    )
    assert clf.score(X, y) == 1.0  # grown to purity (no duplicate rows with two labels)
    again = DecisionTreeClassifier(max_features=3, random_state=0).fit(X, y).tree_
    np.testing.assert_array_equal(again.feature, t.feature)  # reproducible from random_state


def test_compiled_apply_equals_numpy_descent(monkeypatch):
    """Leaves reached by the compiled per-row descent and by the level-by-level NumPy one,
    including rows exactly on thresholds."""
    X, y = make_classification(500, 6, random_state=5)
    tree = DecisionTreeClassifier(max_depth=6, random_state=0).fit(X, y).tree_
    Xq = np.vstack([X, np.tile(X[:1], (6, 1))])
    internal = np.flatnonzero(tree.children_left >= 0)[:6]
    Xq[-6:, tree.feature[internal]] = tree.threshold[internal]  # on the split values
    compiled = tree.apply(Xq)
    monkeypatch.setattr(_tree, "_cart_lib", lambda: None)
    np.testing.assert_array_equal(
        compiled,
        _tree.Tree(**{f: getattr(tree, f) for f in _TREE_ARRAYS}).apply(Xq),
    )


@pytest.mark.parametrize(
    "Tree,params",
    [
        (DecisionTreeClassifier, {}),
        (DecisionTreeClassifier, {"criterion": "entropy", "max_features": 3}),
        (DecisionTreeClassifier, {"min_samples_leaf": 4, "max_depth": 6}),
        (DecisionTreeRegressor, {}),
        (DecisionTreeRegressor, {"max_features": 2, "min_samples_leaf": 3}),
    ],
)
def test_random_splitter_compiled_tree_is_consistent(Tree, params):
    """The compiled "random" splitter: every node's stored statistics equal those recomputed
    from the training samples that reach it (an independent reference: the samples'
    decision paths), every threshold lies in its node's range of the feature, children
    partition their parent and respect ``min_samples_leaf``, and the fit is reproducible."""
    X, y = make_classification(500, 8, n_classes=3, n_informative=5, random_state=6)
    w = np.random.default_rng(2).uniform(0.5, 2.0, 500)
    target = y if Tree is DecisionTreeClassifier else X[:, 0] + y
    est = Tree(splitter="random", random_state=0, **params).fit(X, target, sample_weight=w)
    t = est.tree_
    path = est.decision_path(X).tocsc()
    msl = params.get("min_samples_leaf", 1)
    for node in range(t.node_count):
        idx = path.indices[path.indptr[node] : path.indptr[node + 1]]
        assert t.n_node_samples[node] == idx.size >= msl
        W = w[idx].sum()
        np.testing.assert_allclose(t.weighted_n_node_samples[node], W, rtol=1e-12)
        if Tree is DecisionTreeClassifier:
            p = np.bincount(y[idx], weights=w[idx], minlength=3) / W
            np.testing.assert_allclose(t.value[node], p, rtol=1e-12, atol=1e-15)
        else:
            mean = np.sum(w[idx] * target[idx]) / W
            np.testing.assert_allclose(t.value[node, 0], mean, rtol=1e-10)
        if t.children_left[node] >= 0:
            xs = X[idx, t.feature[node]]
            assert xs.min() <= t.threshold[node] < xs.max()
            n_l, n_r = (
                t.n_node_samples[t.children_left[node]],
                t.n_node_samples[t.children_right[node]],
            )
            assert n_l + n_r == idx.size and n_l == np.sum(xs <= t.threshold[node])
    if "max_depth" in params:
        assert t.max_depth <= params["max_depth"]
    again = Tree(splitter="random", random_state=0, **params).fit(X, target, sample_weight=w)
    np.testing.assert_array_equal(again.tree_.threshold, t.threshold)


def test_random_splitter_compiled_accuracy_beside_numpy_route(monkeypatch):
    """The two routes draw from different random streams, so they grow different trees;
    their held-out accuracies over 15 seeds agree within the seeds' spread."""
    X, y = make_classification(1200, 10, n_informative=6, random_state=7)
    Xtr, ytr, Xte, yte = X[:800], y[:800], X[800:], y[800:]
    acc = {}
    for route in ("compiled", "numpy"):
        if route == "numpy":
            _numpy_route(monkeypatch)
        acc[route] = np.array(
            [
                DecisionTreeClassifier(splitter="random", max_features=3, random_state=s)
                .fit(Xtr, ytr)
                .score(Xte, yte)
                for s in range(15)
            ]
        )
    d = acc["compiled"].mean() - acc["numpy"].mean()
    se = np.sqrt((acc["compiled"].var(ddof=1) + acc["numpy"].var(ddof=1)) / 15)
    assert abs(d) <= 4 * se + 1e-12


def _identical_trees(a, b):
    for name in _TREE_ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert np.array_equal(x.view(np.uint8), y.view(np.uint8)), name  # same bits
    assert a.max_depth == b.max_depth


def _levels_data(layout, k):
    X, y = make_classification(700, 7, n_classes=k, n_informative=5, random_state=11)
    X = np.round(X, 1)  # many ties
    X[:, 4] = 2.5  # a constant feature
    X = np.vstack([X, X[:60]])  # duplicated rows
    y = np.concatenate([y, y[:60]])
    y[::11] = (y[::11] + 1) % k  # a duplicate with another label
    w = np.random.default_rng(3).uniform(0.2, 3.0, X.shape[0])
    w[::19] = 0.0
    return (np.asfortranarray(X) if layout == "F" else X), y, w


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize(
    "criterion, k",
    [("gini", 2), ("gini", 3), ("entropy", 2), ("entropy", 3), ("squared_error", 2)],
)
@pytest.mark.parametrize(
    "params",
    [
        {"max_depth": 1},
        {"max_depth": 3},
        {"max_depth": 6, "min_samples_leaf": 4, "min_samples_split": 15},
        {"max_depth": 4, "min_impurity_decrease": 2e-3},
        {"max_depth": 5, "min_weight_leaf": 30.0},
        {"max_depth": 16},  # hundreds of nodes; levels at most n wide, not 2^16
    ],
)
def test_levels_route_grows_cart_grows_tree(monkeypatch, layout, criterion, k, params):
    """``cart_grow_levels`` (a shared presorted order, read only, level by level) against
    ``cart_grow`` (a private order partitioned depth first): the same tree, bit for bit, by
    the same sums in the same order; classes given as indices or as one-hot rows alike, and
    squared-error targets as ``y`` and ``w`` (the helper forms ``[w y, w y^2]`` itself). The
    shared order is left as it was."""
    X, y, w = _levels_data(layout, k)
    kw = dict(
        criterion=criterion,
        splitter="best",
        min_samples_split=params.get("min_samples_split", 2),
        min_samples_leaf=params.get("min_samples_leaf", 1),
        min_weight_leaf=params.get("min_weight_leaf", 0.0),
        max_features=X.shape[1],
        min_impurity_decrease=params.get("min_impurity_decrease", 0.0),
        rng=np.random.default_rng(0),
        max_depth=params["max_depth"],
    )
    if criterion == "squared_error":
        Ys = [(np.sin(X[:, 0] * 3 + X[:, 1])[:, None], None)]
    else:
        Ys = [(y, k), (np.eye(k)[y], None)]
    calls = []
    lib = _tree._cart_lib()

    class Spy:  # records which helper functions are called
        def __getattr__(self, name):
            calls.append(name)
            return getattr(lib, name)

    monkeypatch.setattr(_tree, "_cart_lib", Spy)
    for Y, n_classes in Ys:
        calls.clear()
        reference = _tree.build_tree(X, Y, w, n_classes=n_classes, **kw)
        assert "cart_grow" in calls and "cart_grow_levels" not in calls
        for compact in (False, True):  # 32- and 16-bit ids
            order = _tree.presort(X, compact=compact)
            assert order.dtype == (np.uint16 if compact else np.int32)
            kept = order.copy()
            calls.clear()
            shared = _tree.build_tree(X, Y, w, n_classes=n_classes, presorted_order=order, **kw)
            assert "cart_grow_levels" in calls
            np.testing.assert_array_equal(order, kept)
            _identical_trees(shared, reference)
            assert shared.node_count > 1


def test_levels_route_in_boosting_keeps_the_rounds(monkeypatch):
    """AdaBoost's stumps and gradient boosting's depth-3 trees grown on the shared order are
    those grown on a private copy of it (the depth-first helper, reached here by letting the
    level route decline every tree)."""
    from mathlearn.ensemble import AdaBoostClassifier, GradientBoostingClassifier

    X, y = make_classification(600, 8, n_informative=5, flip_y=0.1, random_state=2)
    models = [
        lambda: AdaBoostClassifier(n_estimators=15, random_state=0),
        lambda: GradientBoostingClassifier(n_estimators=15, random_state=0),
    ]
    fitted = [m().fit(X, y) for m in models]
    monkeypatch.setattr(_tree, "_LEVELS_MAX_DEPTH", 0)
    for make, a in zip(models, fitted, strict=True):
        b = make().fit(X, y)
        ta = [getattr(t, "tree_", t) for t in np.ravel(a.estimators_)]
        tb = [getattr(t, "tree_", t) for t in np.ravel(b.estimators_)]
        assert len(ta) == len(tb)
        for s, t in zip(ta, tb, strict=True):
            _identical_trees(s, t)
        np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize(
    "criterion, splitter, max_features",
    [
        ("gini", "best", 7),
        ("entropy", "best", 3),
        ("squared_error", "best", 7),
        ("gini", "random", 3),
        ("squared_error", "random", 7),
    ],
)
def test_rows_route_grows_the_tree_of_the_copied_rows(layout, criterion, splitter, max_features):
    """``rows`` (a bootstrap sample's ids, read in place) against the same rows copied out
    of ``X``: the same tree bit for bit, random draws included (the helpers' sums and
    streams do not see the rows left out)."""
    X, y, w = _levels_data(layout, 3)
    rng = np.random.default_rng(5)
    counts = np.bincount(rng.integers(0, X.shape[0], X.shape[0]), minlength=X.shape[0])
    rows = np.flatnonzero(counts)
    wr = counts[rows] * w[rows]
    if criterion == "squared_error":
        Y, n_classes = np.sin(X[rows, 0] * 3 + X[rows, 1])[:, None], None
    else:
        Y, n_classes = y[rows], 3
    kw = dict(
        criterion=criterion,
        splitter=splitter,
        max_depth=None,
        min_samples_split=2,
        min_samples_leaf=2,
        min_weight_leaf=0.0,
        max_features=max_features,
        min_impurity_decrease=0.0,
        n_classes=n_classes,
    )
    copied = _tree.build_tree(X[rows], Y, wr, rng=np.random.default_rng(1), **kw)
    kept = X.copy()
    in_place = _tree.build_tree(X, Y, wr, rng=np.random.default_rng(1), rows=rows, **kw)
    np.testing.assert_array_equal(X, kept)
    _identical_trees(in_place, copied)
    assert in_place.node_count > 10


def test_bagging_members_read_their_rows_in_place(monkeypatch):
    """A forest's members fitted on their bootstrap rows read in place equal the members
    fitted on the copied rows (the route the members of a feature-subsampling bagging
    take), and the out-of-bag bookkeeping is the same."""
    from mathlearn.ensemble import RandomForestRegressor

    X, y = make_regression(400, 6, noise=5.0, random_state=3)
    a = RandomForestRegressor(8, random_state=0, oob_score=True).fit(X, y)
    calls = []
    original = _tree.build_tree

    def copied_rows(X, Y, w, rows=None, **kw):
        calls.append(rows is not None)
        return original(X if rows is None else X[rows], Y, w, **kw)

    monkeypatch.setattr(_tree, "build_tree", copied_rows)
    monkeypatch.setattr("mathlearn.tree._classes.build_tree", copied_rows)
    b = RandomForestRegressor(8, random_state=0, oob_score=True).fit(X, y)
    assert any(calls)
    for s, t in zip(a.estimators_, b.estimators_, strict=True):
        _identical_trees(s.tree_, t.tree_)
    assert a.oob_score_ == b.oob_score_
    np.testing.assert_array_equal(a.oob_prediction_, b.oob_prediction_)


def test_compact_presort_is_the_stable_argsort():
    """16-bit ids up to 65536 samples (the largest id 65535), 32-bit beyond; the same
    order as NumPy's stable argsort either way, and the same as the default presort."""
    rng = np.random.default_rng(0)
    for n in (65536, 65537):
        X = rng.integers(0, 50, (n, 2)).astype(float)  # many ties
        order = _tree.presort(X, compact=True)
        assert order.dtype == (np.uint16 if n <= 65536 else np.int32)
        np.testing.assert_array_equal(order, np.argsort(X, axis=0, kind="stable"))


@pytest.mark.parametrize("splitter, levels", [("best", False), ("best", True), ("random", False)])
def test_node_store_grows_to_the_bound_of_2n_minus_1_nodes(monkeypatch, splitter, levels):
    """The helpers grow their node arrays from a few nodes by doubling: a tree with one
    sample per leaf has exactly 2 n - 1 nodes (the bound the arrays may reach, not a power
    of two here), and each route gives the NumPy route's tree. Distinct x, y = x: every
    split point of the sorted x leaves both sides impure until they hold one sample."""
    n = 333
    X = np.random.default_rng(4).permutation(n).astype(float)[:, None]
    Y = X.copy()
    w = np.ones(n)
    kw = dict(
        criterion="squared_error",
        splitter=splitter,
        min_samples_split=2,
        min_samples_leaf=1,
        min_weight_leaf=0.0,
        max_features=1,
        min_impurity_decrease=0.0,
        max_depth=16 if levels else None,
    )
    order = _tree.presort(X) if levels else None
    compiled = _tree.build_tree(X, Y, w, rng=np.random.default_rng(0), presorted_order=order, **kw)
    assert compiled.node_count == 2 * n - 1
    assert np.all(compiled.n_node_samples[compiled.children_left == -1] == 1)
    # a leaf's value is its sample's y
    leaves = compiled.apply(X)
    np.testing.assert_array_equal(compiled.value[leaves, 0], Y[:, 0])
    if splitter == "best":
        _numpy_route(monkeypatch)
        reference = _tree.build_tree(X, Y, w, rng=np.random.default_rng(0), **kw)
        _same_tree(compiled, reference)
