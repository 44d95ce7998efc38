"""CART trees against scikit-learn's on the same data, pruning, and bad input.

scikit-learn casts X to float32, so the data here are float32-representable and the two
libraries see the same values. Equally good splits are broken differently (scikit-learn
visits features in a random order), so the comparisons avoid ties: class counts tie often,
hence classification compares under random dyadic sample weights (k / 1024: their sums are
exact, so a pure node has impurity exactly 0 in both, and distinct partitions almost never
tie); two features can give the same partition of a small node, hence exact structure on
several features uses leaves of at least 20 samples, and full-depth trees on several
features are compared by what such ties cannot change (costs, pruning path, predictions).
"""

import numpy as np
import pytest
from sklearn import tree as sk

from mathlearn.exceptions import InvalidParameterError
from mathlearn.tree import DecisionTreeClassifier, DecisionTreeRegressor, export_text


def _data(n=240, d=4, seed=0, classes=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, max(d, 2))).astype(np.float32).astype(np.float64)
    f = X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.4 * rng.standard_normal(n)
    y_cls = np.digitize(f, np.quantile(f, np.linspace(0, 1, classes + 1)[1:-1]))
    y_reg = X[:, 0] + np.sin(2 * X[:, 1]) + 0.1 * rng.standard_normal(n)
    return X[:, :d], y_cls, y_reg


def _dyadic_weights(n, seed=1):
    return np.random.default_rng(seed).integers(256, 4096, n) / 1024.0


def _assert_same_tree(a, b):
    ta, tb = a.tree_, b.tree_
    assert ta.node_count == tb.node_count
    np.testing.assert_array_equal(ta.children_left, tb.children_left)
    np.testing.assert_array_equal(ta.feature, tb.feature)
    # Midpoints of the same two doubles, computed the same way: equal bit for bit.
    np.testing.assert_array_equal(ta.threshold, tb.threshold)
    np.testing.assert_array_equal(ta.n_node_samples, tb.n_node_samples)
    # Impurities and leaf values are sums over the same samples in another order.
    np.testing.assert_allclose(ta.impurity, tb.impurity, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ta.value, tb.value.reshape(ta.value.shape), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_classifier_equals_sklearn_one_feature(criterion):
    X, y, _ = _data(d=1)
    w = _dyadic_weights(X.shape[0])
    a = DecisionTreeClassifier(criterion=criterion).fit(X, y, sample_weight=w)
    b = sk.DecisionTreeClassifier(criterion=criterion, random_state=0).fit(X, y, sample_weight=w)
    _assert_same_tree(a, b)


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
def test_classifier_equals_sklearn_min_leaf(criterion):
    X, y, _ = _data(n=600)
    w = _dyadic_weights(X.shape[0])
    kw = dict(criterion=criterion, min_samples_leaf=20)
    a = DecisionTreeClassifier(**kw).fit(X, y, sample_weight=w)
    b = sk.DecisionTreeClassifier(**kw, random_state=0).fit(X, y, sample_weight=w)
    _assert_same_tree(a, b)
    np.testing.assert_allclose(a.feature_importances_, b.feature_importances_, rtol=1e-10)
    np.testing.assert_array_equal(a.apply(X), b.apply(X.astype(np.float32)))
    np.testing.assert_array_equal(
        a.decision_path(X).toarray(), b.decision_path(X.astype(np.float32)).toarray()
    )
    assert a.get_depth() == b.get_depth() and a.get_n_leaves() == b.get_n_leaves()


def test_regressor_equals_sklearn():
    X, _, y = _data(d=1)
    _assert_same_tree(
        DecisionTreeRegressor().fit(X, y), sk.DecisionTreeRegressor(random_state=0).fit(X, y)
    )
    X, _, y = _data(n=400)
    kw = dict(min_samples_leaf=20, max_depth=6)
    _assert_same_tree(
        DecisionTreeRegressor(**kw).fit(X, y),
        sk.DecisionTreeRegressor(**kw, random_state=0).fit(X, y),
    )


def test_weighted_tree_equals_sklearn():
    X, y, yr = _data(n=400)
    w = _dyadic_weights(X.shape[0], seed=2)
    kw = dict(min_samples_leaf=20, criterion="entropy")
    _assert_same_tree(
        DecisionTreeClassifier(**kw).fit(X, y, sample_weight=w),
        sk.DecisionTreeClassifier(**kw, random_state=0).fit(X, y, sample_weight=w),
    )
    w = np.random.default_rng(1).uniform(0.2, 3.0, X.shape[0])
    kw = dict(min_samples_leaf=20)
    _assert_same_tree(
        DecisionTreeClassifier(**kw).fit(X, y, sample_weight=w),
        sk.DecisionTreeClassifier(**kw, random_state=0).fit(X, y, sample_weight=w),
    )
    _assert_same_tree(
        DecisionTreeRegressor(**kw).fit(X, yr, sample_weight=w),
        sk.DecisionTreeRegressor(**kw, random_state=0).fit(X, yr, sample_weight=w),
    )


@pytest.mark.parametrize(
    "Est,ref,target",
    [
        (DecisionTreeClassifier, sk.DecisionTreeClassifier, 1),
        (DecisionTreeRegressor, sk.DecisionTreeRegressor, 2),
    ],
)
def test_pruning_path_equals_sklearn(Est, ref, target):
    data = _data(n=300)
    X, y = data[0], data[target]
    w = _dyadic_weights(X.shape[0])
    # Full depth on several features: ties may swap which feature splits, never the
    # partition, so the costs, the path and the training predictions agree.
    a, b = Est().fit(X, y, sample_weight=w), ref(random_state=0).fit(X, y, sample_weight=w)
    # Pure leaves: the labels, or means of one sample up to the centring's rounding.
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-12, atol=1e-12)
    pa = a.cost_complexity_pruning_path(X, y, sample_weight=w)
    pb = b.cost_complexity_pruning_path(X, y, sample_weight=w)
    # Sums of O(n_nodes) non-negative terms: rounding of order n_nodes * eps.
    np.testing.assert_allclose(pa["ccp_alphas"], pb["ccp_alphas"], rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(pa["impurities"], pb["impurities"], rtol=1e-9, atol=1e-13)
    X1 = X[:, :1]
    alphas = b.cost_complexity_pruning_path(X1, y, sample_weight=w)["ccp_alphas"]
    for alpha in alphas[[len(alphas) // 4, len(alphas) // 2, -2]]:
        # Half-way between two path values so rounding cannot move the cut.
        k = np.searchsorted(alphas, alpha)
        mid = 0.5 * (alphas[k] + alphas[min(k + 1, len(alphas) - 1)])
        _assert_same_tree(
            Est(ccp_alpha=mid).fit(X1, y, sample_weight=w),
            ref(ccp_alpha=mid, random_state=0).fit(X1, y, sample_weight=w),
        )


def test_pruning_is_weakest_link_optimum():
    """The pruned tree minimises R(T) + alpha |T| over the path's subtrees (monotone path)."""
    X, y, _ = _data(n=200)
    clf = DecisionTreeClassifier(random_state=0)
    path = clf.cost_complexity_pruning_path(X, y)
    alphas, imp = path["ccp_alphas"], path["impurities"]
    assert np.all(np.diff(alphas) >= -1e-15) and np.all(np.diff(imp) >= -1e-15)
    leaves = [DecisionTreeClassifier(ccp_alpha=a).fit(X, y).get_n_leaves() for a in alphas]
    assert np.all(np.diff(leaves) <= 0) and leaves[-1] == 1


def test_leaf_values_and_importances_by_hand():
    X = np.array([[0.0, 5.0], [1.0, 3.0], [2.0, 1.0], [3.0, 4.0]])
    y = np.array([0, 0, 1, 1])
    clf = DecisionTreeClassifier().fit(X, y)
    # x0 <= 1.5 separates the classes perfectly (Gini 0.5 -> 0); x1 cannot.
    assert clf.tree_.feature[0] == 0 and clf.tree_.threshold[0] == 1.5
    np.testing.assert_array_equal(clf.feature_importances_, [1.0, 0.0])
    np.testing.assert_array_equal(clf.predict_proba([[0.2, 0.0]]), [[1.0, 0.0]])
    reg = DecisionTreeRegressor(max_depth=1).fit(X[:, :1], [1.0, 2.0, 6.0, 10.0])
    # Split {1,2} | {6,10}: SSE 0.5 + 8 beats {1} | {2,6,10} (0 + 32.67).
    np.testing.assert_allclose(reg.predict([[0.0], [3.0]]), [1.5, 8.0])


def test_max_features_uses_random_subsets():
    X, y, _ = _data(n=300, d=8)
    a = DecisionTreeClassifier(max_features=2, random_state=0).fit(X, y)
    b = DecisionTreeClassifier(max_features=2, random_state=0).fit(X, y)
    c = DecisionTreeClassifier(max_features=2, random_state=1).fit(X, y)
    np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
    assert a.max_features_ == 2
    assert not np.array_equal(a.tree_.feature, c.tree_.feature)


def test_random_splitter_thresholds_inside_node_range():
    X, y, _ = _data(n=200)
    clf = DecisionTreeClassifier(splitter="random", random_state=0).fit(X, y)
    assert clf.score(X, y) == 1.0  # grown to purity on distinct points
    t = clf.tree_
    internal = np.flatnonzero(t.children_left != -1)
    leaf = clf.apply(X)
    path = clf.decision_path(X).toarray().astype(bool)
    for node in internal[:20]:
        xs = X[path[:, node], t.feature[node]]
        assert xs.min() <= t.threshold[node] < xs.max()
    assert leaf.shape == (200,)


def test_sample_weight_integer_equals_repetition():
    X, y, yr = _data(n=60)
    w = np.random.default_rng(3).integers(1, 4, 60)
    Xr, yr_, yrr = np.repeat(X, w, axis=0), np.repeat(y, w), np.repeat(yr, w)
    a = DecisionTreeClassifier().fit(X, y, sample_weight=w)
    b = DecisionTreeClassifier().fit(Xr, yr_)
    np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
    np.testing.assert_allclose(a.tree_.value, b.tree_.value, rtol=1e-12)
    a = DecisionTreeRegressor().fit(X, yr, sample_weight=w)
    b = DecisionTreeRegressor().fit(Xr, yrr)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-12)


def test_export_text():
    X, y, _ = _data(n=100)
    clf = DecisionTreeClassifier(max_depth=2).fit(X, y)
    ref = sk.export_text(sk.DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y))
    assert export_text(clf) == ref
    reg = DecisionTreeRegressor(max_depth=2).fit(X, X[:, 0])
    text = export_text(reg, feature_names=["a", "b", "c", "d"], max_depth=0)
    assert "truncated branch of depth 1" in text and text.startswith("|--- a <=")


def test_bad_input():
    X, y, yr = _data(n=30)
    with pytest.raises(InvalidParameterError, match="max_depth"):
        DecisionTreeClassifier(max_depth=0).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        DecisionTreeClassifier().fit(np.where(X > 1.5, np.nan, X), y)
    with pytest.raises(ValueError, match="non-zero"):
        DecisionTreeRegressor().fit(X, yr, sample_weight=np.zeros(30))
    one = DecisionTreeClassifier().fit(X, np.full(30, 7))
    assert one.get_n_leaves() == 1 and np.all(one.predict(X) == 7)
    with pytest.raises(ValueError, match="feature_names"):
        export_text(DecisionTreeClassifier().fit(X, y), feature_names=["a"])


def test_degenerate_data_give_single_leaf():
    X = np.ones((10, 3))
    y = np.array([0, 1] * 5)
    clf = DecisionTreeClassifier().fit(X, y)
    assert clf.get_n_leaves() == 1
    np.testing.assert_allclose(clf.predict_proba(X), 0.5)
    np.testing.assert_array_equal(clf.feature_importances_, 0.0)
    # A constant feature beside an informative one is never used.
    Xc = np.column_stack([np.full(10, 3.0), np.arange(10.0)])
    clf = DecisionTreeClassifier().fit(Xc, y)
    assert np.all(clf.tree_.feature != 0)
    # Zero-weight samples do not count in the leaf values.
    w = np.r_[np.zeros(5), np.ones(5)]
    reg = DecisionTreeRegressor().fit(X, np.arange(10.0), sample_weight=w)
    np.testing.assert_allclose(reg.predict(X[:1]), [7.0])


@pytest.mark.parametrize("exponent", [-996, -664, 664, 996])
def test_extreme_sample_weight_scales_give_the_same_tree(exponent):
    # The criteria depend on the weights' ratios only; at 1e+-200 their sums of squares
    # overflow or underflow unless the weights are rescaled first (a wrong root split was
    # chosen silently before). Weights scaled by 2^e (about 1e+-200 and 1e+-300: exact, so
    # nothing may change) give the same tree bit for bit, weighted node counts times 2^e.
    X, y, yr = _data(n=100)
    sw = np.random.default_rng(4).uniform(0.5, 2.0, 100)
    for model, target in ((DecisionTreeClassifier, y), (DecisionTreeRegressor, yr)):
        ref = model(max_depth=3).fit(X, target, sample_weight=sw).tree_
        got = model(max_depth=3).fit(X, target, sample_weight=np.ldexp(sw, exponent)).tree_
        for name in ("feature", "threshold", "n_node_samples", "value", "impurity"):
            np.testing.assert_array_equal(getattr(got, name), getattr(ref, name))
        np.testing.assert_array_equal(
            got.weighted_n_node_samples, np.ldexp(ref.weighted_n_node_samples, exponent)
        )


def test_extreme_scales():
    X, y, yr = _data(n=100)
    for scale, shift in [(1e-300, 0.0), (1e300, 0.0), (1.0, 1e12)]:
        Xs = X * scale + shift
        clf = DecisionTreeClassifier(max_depth=3).fit(Xs, y)
        ref = DecisionTreeClassifier(max_depth=3).fit(X, y)
        if shift == 0.0:
            np.testing.assert_array_equal(clf.predict(Xs), ref.predict(X))
        assert np.all(np.isfinite(clf.tree_.threshold))
    ref = DecisionTreeRegressor(max_depth=3).fit(X, yr)
    for scale, shift in [(1e-300, 0.0), (1e150, 0.0), (1.0, 1e12)]:
        reg = DecisionTreeRegressor(max_depth=3).fit(X, yr * scale + shift)
        np.testing.assert_array_equal(reg.tree_.feature, ref.tree_.feature)
        # Leaf means of the mapped targets: a few ulps of the mapped values.
        np.testing.assert_allclose(
            reg.predict(X), ref.predict(X) * scale + shift, rtol=1e-12, atol=1e-12 * scale
        )


def test_classifier_predict_is_the_argmax_of_predict_proba():
    # predict takes each node's majority class once and looks it up per sample; it must be
    # the argmax of the sample's class proportions (first class on ties), with string labels
    # and leaves that tie (weights 1 and 1 in a leaf of two samples).
    from mathlearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 4))
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, 300)]
    for depth in (1, 3, None):
        tree = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y)
        Xt = rng.standard_normal((200, 4))
        expected = tree.classes_[np.argmax(tree.predict_proba(Xt), axis=1)]
        np.testing.assert_array_equal(tree.predict(Xt), expected)
    tie = DecisionTreeClassifier(max_depth=1, min_samples_leaf=2).fit(
        np.array([[0.0], [0.0], [1.0], [1.0]]), np.array([1, 0, 2, 2])
    )
    np.testing.assert_array_equal(tie.predict(np.array([[0.0]])), [0])


def test_random_splitter_chain_deeper_than_the_builders_first_stack():
    # x_i = 2^i: a threshold drawn uniformly over a node's range almost always separates its
    # largest point alone, so the fully grown tree is a chain about N / 2 deep. The
    # depth-first builder's stack starts with room for 64 frames and grows on demand; the
    # grown tree still holds one sample a leaf and reproduces every target up to the
    # rounding of y's centring and scaling and back: four operations, each within eps / 2
    # of a number at most 2 max |y| in size.
    n = 200
    x = 2.0 ** np.arange(n, dtype=np.float64)[:, None]
    y = np.arange(n, dtype=np.float64)
    tree = DecisionTreeRegressor(splitter="random", random_state=0).fit(x, y)
    assert tree.get_depth() > 64
    assert tree.tree_.node_count == 2 * n - 1
    atol = 4 * np.finfo(float).eps * np.abs(y).max()
    np.testing.assert_allclose(tree.predict(x), y, rtol=0, atol=atol)


@pytest.mark.parametrize("Est, target", [(DecisionTreeClassifier, 1), (DecisionTreeRegressor, 2)])
def test_tree_arrays_are_views_of_one_exact_buffer(Est, target):
    """A fitted tree's eight arrays are views of one buffer of node_count x (7 + n_values)
    doubles, without spare capacity; writing into a view writes the tree; the tree survives
    a pickle round trip and equals the tree built from copies of its arrays."""
    import pickle

    from mathlearn.tree._tree import Tree

    X, *ys = _data(300, 3)
    y = ys[target - 1]
    est = Est(random_state=0).fit(X, y)
    t = est.tree_
    names = [
        "children_left",
        "children_right",
        "feature",
        "threshold",
        "impurity",
        "n_node_samples",
        "weighted_n_node_samples",
        "value",
    ]
    n_values = t.value.shape[1]
    assert t._nodes.shape == (t.node_count * (7 + n_values),)
    for name in names:
        a = getattr(t, name)
        assert a.shape[0] == t.node_count and np.shares_memory(a, t._nodes), name
    assert t.children_left.dtype == np.intp and t.threshold.dtype == np.float64
    # the same arrays copied into a tree of their own, and through pickle
    copied = Tree(
        *(getattr(t, k).copy() for k in names[:4]),
        t.value.copy(),
        *(getattr(t, k).copy() for k in names[4:7]),
        max_depth=t.max_depth,
    )
    for other in (copied, pickle.loads(pickle.dumps(t))):
        assert other.max_depth == t.max_depth
        for name in names:
            np.testing.assert_array_equal(getattr(other, name), getattr(t, name), err_msg=name)
    # a write through the view changes the prediction
    leaf, pred = t.apply(X[:1])[0], est.predict(X[:1])[0]
    if target == 1:
        other = (list(est.classes_).index(pred) + 1) % n_values
        t.value[leaf] = np.eye(n_values)[other]
        assert est.predict(X[:1])[0] == est.classes_[other]
    else:
        t.value[leaf] = pred + 1.0
        assert est.predict(X[:1])[0] == pred + 1.0


@pytest.mark.parametrize("exponent", [0, -600, 600])
def test_regressor_splits_targets_small_beside_the_largest(exponent):
    """Targets 2^0 ... 2^29 at x = 0 ... 29: a fully grown tree fits every target exactly, as
    scikit-learn's does (the same splits). The regressor grows on targets scaled into
    [-1, 1], where the node {1, 2, 4, 8, 16} has variance about 2^-54: a node is pure when
    its variance is below eps times its mean square, not below eps. At scales 2^-600 and
    2^600 (targets scaled by a power of two) the same tree; at 2^600 the variances of the
    upper nodes (2^1258) overflow and are reported as inf, as they are."""
    x = np.arange(30.0)[:, None]
    y = 2.0 ** np.arange(30)
    ours = DecisionTreeRegressor().fit(x, np.ldexp(y, exponent))
    np.testing.assert_array_equal(ours.predict(x), np.ldexp(y, exponent))
    t, ref = ours.tree_, sk.DecisionTreeRegressor(random_state=0).fit(x, y).tree_
    assert t.node_count == ref.node_count == 59
    for name in ("children_left", "children_right", "feature", "threshold", "n_node_samples"):
        np.testing.assert_array_equal(getattr(t, name), getattr(ref, name), err_msg=name)
    leaves = t.children_left == -1
    np.testing.assert_array_equal(t.value[leaves, 0], np.ldexp(ref.value[leaves, 0, 0], exponent))
    assert np.all(t.impurity[leaves] == 0.0)
    assert np.all(np.isfinite(t.impurity)) == (exponent < 500)


def test_pruning_refuses_targets_whose_variance_overflows():
    """Targets spread over 1e200: the tree is grown (its predictions are the targets) but its
    variances are beyond the doubles, so pruning, which compares them, says so."""
    x = np.arange(20.0)[:, None]
    y = np.linspace(-1.0, 1.0, 20) * 1e200
    # a leaf's value is its target mapped to [-1, 1] and back: four roundings, each within
    # eps / 2 of a number at most 2 max |y| in size
    atol = 4 * np.finfo(float).eps * np.abs(y).max()
    pred = DecisionTreeRegressor().fit(x, y).predict(x)
    np.testing.assert_allclose(pred, y, rtol=0, atol=atol)
    with pytest.raises(ValueError, match="overflows float64"):
        DecisionTreeRegressor(ccp_alpha=1.0).fit(x, y)
    with pytest.raises(ValueError, match="overflows float64"):
        DecisionTreeRegressor().cost_complexity_pruning_path(x, y)
