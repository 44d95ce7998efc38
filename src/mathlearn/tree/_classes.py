"""Classification and regression trees (CART) with cost-complexity pruning."""

from __future__ import annotations

from math import ceil
from numbers import Integral, Real

import numpy as np
from sklearn.utils.metaestimators import available_if

from ..base import BaseClassifier, BaseEstimator, RegressorMixin, _fit_context, check_is_fitted
from ..utils._param_validation import Interval, RealNotInt, StrOptions
from ..utils.validation import check_random_state, check_sample_weight, validate_data
from ._tree import Tree, build_tree, prune_tree, pruning_path

__all__ = ["DecisionTreeClassifier", "DecisionTreeRegressor"]


_TREE_CONSTRAINTS = {
    "splitter": [StrOptions({"best", "random"})],
    "max_depth": [Interval(Integral, 1, None, closed="left"), None],
    "min_samples_split": [
        Interval(Integral, 2, None, closed="left"),
        Interval(RealNotInt, 0.0, 1.0, closed="right"),
    ],
    "min_samples_leaf": [
        Interval(Integral, 1, None, closed="left"),
        Interval(RealNotInt, 0.0, 1.0, closed="neither"),
    ],
    "min_weight_fraction_leaf": [Interval(Real, 0.0, 0.5, closed="both")],
    "max_features": [
        Interval(Integral, 1, None, closed="left"),
        Interval(RealNotInt, 0.0, 1.0, closed="right"),
        StrOptions({"sqrt", "log2"}),
        None,
    ],
    "random_state": ["random_state"],
    "min_impurity_decrease": [Interval(Real, 0.0, None, closed="left")],
    "ccp_alpha": [Interval(Real, 0.0, None, closed="left")],
}


def _check_finite_impurities(tree) -> None:
    """Minimal cost-complexity pruning compares impurities (for a regressor, in units of
    y^2): refuse trees whose impurities overflowed."""
    if not np.all(np.isfinite(tree.impurity)):
        raise ValueError(
            "cost-complexity pruning needs the node impurities, and the variance of these "
            "targets overflows float64 (their spread is above about 1e154); rescale y "
            "(the tree is the same) or set ccp_alpha=0."
        )


class _BaseTree(BaseEstimator):
    """Shared fitting, prediction and inspection of CART trees."""

    def _resolve_max_features(self, n_features: int) -> int:
        mf = self.max_features
        if mf is None:
            return n_features
        if mf == "sqrt":
            return max(1, int(np.sqrt(n_features)))
        if mf == "log2":
            return max(1, int(np.log2(n_features)))
        if isinstance(mf, Integral):
            return min(int(mf), n_features)
        return max(1, int(mf * n_features))

    def _grow(
        self, X, Y, sample_weight, criterion, presorted_order=None, n_classes=None, rows=None
    ):
        # ``rows``: the tree is grown on X[rows] (Y and sample_weight given for those rows).
        n = X.shape[0] if rows is None else rows.shape[0]
        w = check_sample_weight(sample_weight, X if rows is None else rows)
        # The split criteria depend on the weights' ratios only, but their sums of squares
        # overflow or underflow for weights far from 1 (1e+-200 gave a wrong root split).
        # Weights are grown at a power-of-two scale with largest entry in [1/2, 1), which is
        # exact, and the tree's weighted counts are scaled back.
        top = float(w.max()) if w.size else 0.0
        exponent = int(np.frexp(top)[1]) if top > 0 else 0
        if exponent:  # (in place where w is not the caller's array)
            own = sample_weight is None or isinstance(sample_weight, Real)
            w = np.ldexp(w, -exponent, out=w if own else None)
        mss = self.min_samples_split
        mss = mss if isinstance(mss, Integral) else max(2, ceil(mss * n))
        msl = self.min_samples_leaf
        msl = msl if isinstance(msl, Integral) else max(1, ceil(msl * n))
        self.max_features_ = self._resolve_max_features(X.shape[1])
        tree = build_tree(
            X,
            Y,
            w,
            criterion=criterion,
            splitter=self.splitter,
            max_depth=self.max_depth,
            min_samples_split=int(mss),
            min_samples_leaf=int(msl),
            min_weight_leaf=self.min_weight_fraction_leaf * w.sum(),
            max_features=self.max_features_,
            min_impurity_decrease=self.min_impurity_decrease,
            rng=check_random_state(self.random_state),
            presorted_order=presorted_order if self.splitter == "best" else None,
            n_classes=n_classes,
            rows=rows,
        )
        if exponent:
            # in place: the tree's arrays share one block (see _grow_compiled)
            np.ldexp(tree.weighted_n_node_samples, exponent, out=tree.weighted_n_node_samples)
        self._full_tree = tree
        return self

    def _prune(self):
        if self.ccp_alpha > 0:
            _check_finite_impurities(self._full_tree)
        self.tree_ = prune_tree(self._full_tree, self.ccp_alpha)
        return self

    def _fit_member(self, X, y, sample_weight=None, presorted_order=None, rows=None):
        """Fit as a member of an ensemble that has validated everything already.

        ``X``: a float64 array of shape (n, d) without NaN or inf; ``y``: class indices
        ``0 .. K-1`` (classifier) or numeric targets of shape (n,) (regressor);
        ``sample_weight``: None or a finite non-negative (n,) array; ``presorted_order``:
        None or ``np.argsort(X, axis=0, kind="stable")``, for an ensemble that grows many
        trees on the same ``X`` (boosting); ``rows``: None, or increasing row ids, to fit
        on ``X[rows]`` without copying it (``y`` and ``sample_weight`` are then given for
        those rows only: a bootstrap sample). The hyperparameters are not checked here: the
        ensemble checks them once for all its members, which share them. Gives the same
        tree as :meth:`fit` on the same arrays, without its per-call validation and label
        encoding (a forest fits hundreds of trees).
        """
        self.n_features_in_ = X.shape[1]
        return self._fit_checked(X, y, sample_weight, presorted_order, rows)

    def _validate_X_predict(self, X):
        return validate_data(self, X, dtype=np.float64, reset=False)

    def apply(self, X) -> np.ndarray:
        """Index of the leaf each sample ends in.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        leaves : ndarray of shape (n_samples,)
            Node ids into the arrays of ``tree_``.
        """
        check_is_fitted(self)
        return self.tree_.apply(self._validate_X_predict(X))

    def decision_path(self, X):
        """Nodes each sample passes through.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        indicator : scipy.sparse.csr_matrix of shape (n_samples, n_nodes)
            Entry ``(i, t)`` is 1 when sample ``i`` visits node ``t``.
        """
        check_is_fitted(self)
        return self.tree_.decision_path(self._validate_X_predict(X))

    def get_depth(self) -> int:
        """Depth of the tree: the longest root-to-leaf path, in edges."""
        check_is_fitted(self)
        return int(self.tree_.max_depth)

    def get_n_leaves(self) -> int:
        """Number of leaves."""
        check_is_fitted(self)
        return self.tree_.n_leaves

    @property
    def feature_importances_(self) -> np.ndarray:
        """Normalised total weighted impurity decrease brought by each feature.

        ``I_j = sum_{t splits on j} (W_t i(t) - W_L i(L) - W_R i(R)) / W_root``, divided by
        ``sum_j I_j`` (all zeros for a single leaf).
        """
        check_is_fitted(self)
        t: Tree = self.tree_
        imp = np.zeros(self.n_features_in_)
        internal = np.flatnonzero(t.children_left != -1)
        wi = t.weighted_n_node_samples * t.impurity
        gain = wi[internal] - wi[t.children_left[internal]] - wi[t.children_right[internal]]
        np.add.at(imp, t.feature[internal], gain / t.weighted_n_node_samples[0])
        total = imp.sum()
        return imp / total if total > 0 else imp

    def cost_complexity_pruning_path(self, X, y, sample_weight=None):
        """Effective alphas of minimal cost-complexity pruning and the impurity after each.

        Grows the full tree (``ccp_alpha`` ignored) on ``(X, y)`` and collapses the weakest
        link repeatedly.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        path : dict with keys ``"ccp_alphas"`` and ``"impurities"``
            ``ccp_alphas[k]`` is the alpha above which the ``k``-th collapse happens, and
            ``impurities[k]`` the total weighted leaf impurity ``sum_leaves W_t i(t) / W``
            of the subtree after it; both ascending.
        """
        from ..base import clone

        est = clone(self).set_params(ccp_alpha=0.0).fit(X, y, sample_weight=sample_weight)
        _check_finite_impurities(est._full_tree)
        alphas, impurities = pruning_path(est._full_tree)
        return {"ccp_alphas": alphas, "impurities": impurities}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class DecisionTreeClassifier(BaseClassifier, _BaseTree):
    """A classification tree grown by CART and pruned by cost complexity.

    Parameters
    ----------
    criterion : {"gini", "entropy", "log_loss"}, default="gini"
        Node impurity: the Gini index ``1 - sum_c p_c^2`` or the entropy
        ``-sum_c p_c log2 p_c`` (``"log_loss"`` is the same).
    splitter : {"best", "random"}, default="best"
        ``"best"`` scans every threshold of the candidate features; ``"random"`` draws one
        threshold per candidate feature uniformly in the node's range (extremely randomised
        trees) and keeps the best of those.
    max_depth : int or None, default=None
        Largest depth; ``None`` grows until the leaves are pure or too small.
    min_samples_split : int or float, default=2
        Fewest samples a node needs to be split (a float is a fraction of ``n_samples``).
    min_samples_leaf : int or float, default=1
        Fewest samples each child must keep.
    min_weight_fraction_leaf : float, default=0.0
        Fewest total sample weight, as a fraction of the total, in each child.
    max_features : int, float, {"sqrt", "log2"} or None, default=None
        Number of features drawn at random (without replacement) per node; ``None`` uses all.
        Constant features in the node are not counted.
    random_state : int, Generator, RandomState or None, default=None
        Drives the feature draws and the random thresholds.
    min_impurity_decrease : float, default=0.0
        A node is split only if ``W_t / W (i(t) - W_L/W_t i(L) - W_R/W_t i(R))`` reaches it.
    ccp_alpha : float, default=0.0
        Complexity parameter of minimal cost-complexity pruning; 0 keeps the grown tree.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    max_features_ : int
    tree_ : Tree
        Flat arrays ``children_left``, ``children_right``, ``feature``, ``threshold``,
        ``value`` (n_nodes, n_classes) of class proportions, ``impurity``,
        ``n_node_samples``, ``weighted_n_node_samples``.
    feature_importances_ : ndarray of shape (n_features,)

    See Also
    --------
    DecisionTreeRegressor : The regression tree.
    mathlearn.ensemble.RandomForestClassifier : Many randomised trees averaged.
    export_text : The tree's rules as text.

    Notes
    -----
    CART (Stuttgart "Introduction to Machine Learning" §2.6, Breiman et al. 1984) partitions
    the input space into axis-aligned boxes by recursive binary splits ``x_j <= theta``,
    each chosen greedily to maximise the weighted impurity decrease
    ``W_t i(t) - W_L i(L) - W_R i(R)``. For each feature, sorting the node's values and
    taking prefix sums of the weighted class counts scores every threshold in one pass;
    thresholds are midpoints between consecutive distinct values. A leaf predicts its
    weighted class proportions.

    Pruning minimises ``C_alpha(T) = R(T) + alpha |leaves(T)|`` with ``R(T) = sum_leaves
    W_t / W i(t)``: the weakest link, the internal node ``t`` with the smallest
    ``g(t) = (R(t) - R(T_t)) / (|leaves(T_t)| - 1)``, is collapsed repeatedly while
    ``g(t) <= alpha``; the sequence of ``g`` is :meth:`cost_complexity_pruning_path`.

    Ties between equally good splits go to the lowest feature index, then the lowest
    threshold. Features are used in float64 (scikit-learn casts to float32, so its
    thresholds can differ on data that float32 cannot represent).

    Cost: the "best" splitter sorts each feature once (``O(D N log N)``) and then scans and
    stably partitions every node's sorted columns, ``O(D N C)`` per level of the tree with
    ``C`` classes, so ``O(D N (log N + h C))`` for a tree of depth ``h`` (``h ~ log N`` for
    balanced trees); "random" sorts nothing and examines ``max_features`` features per node,
    ``O(max_features N C)`` per level. Memory: ``O(D N)`` for the sorted columns ("best";
    ``X`` itself is read in place) or ``O(N C)`` ("random"), plus ``O(N C)`` for the nodes.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.tree import DecisionTreeClassifier
    >>> X = np.array([[1.0], [2.0], [3.0], [4.0]])
    >>> clf = DecisionTreeClassifier().fit(X, [0, 0, 1, 1])
    >>> clf.tree_.threshold[0], clf.predict([[1.2], [3.7]])
    (np.float64(2.5), array([0, 1]))
    """

    _parameter_constraints = {
        "criterion": [StrOptions({"gini", "entropy", "log_loss"})],
        **_TREE_CONSTRAINTS,
    }
    _expected_failed_checks = {
        "check_sample_weight_equivalence_on_dense_data": (
            "zero-weight samples still place the midpoint thresholds, so weighting by zero "
            "is not removing the sample (scikit-learn's trees behave the same)"
        ),
    }

    def __init__(
        self,
        *,
        criterion: str = "gini",
        splitter: str = "best",
        max_depth: int | None = None,
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        min_weight_fraction_leaf: float = 0.0,
        max_features: int | float | str | None = None,
        random_state=None,
        min_impurity_decrease: float = 0.0,
        ccp_alpha: float = 0.0,
    ):
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.min_impurity_decrease = min_impurity_decrease
        self.ccp_alpha = ccp_alpha

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Grow (and prune) the tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : DecisionTreeClassifier
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        # One class is allowed (a bootstrap sample may hold one): the tree is a single leaf.
        y_idx = self._encode_labels(y, min_classes=1)
        return self._grow_classes(X, y_idx, sample_weight)

    def _fit_checked(self, X, y, sample_weight, presorted_order=None, rows=None):
        # ``y`` holds class indices: the classes are those present, as ``fit`` would find.
        present = np.bincount(y) > 0
        self.classes_ = np.flatnonzero(present)
        y_idx = y if present.all() else (np.cumsum(present) - 1)[y]
        return self._grow_classes(X, y_idx, sample_weight, presorted_order, rows)

    def _grow_classes(self, X, y_idx, sample_weight, presorted_order=None, rows=None):
        # The class indices stand for the one-hot matrix (see build_tree).
        crit = "gini" if self.criterion == "gini" else "entropy"
        K = self.classes_.shape[0]
        return self._grow(X, y_idx, sample_weight, crit, presorted_order, K, rows)._prune()

    def predict_proba(self, X) -> np.ndarray:
        """Class proportions of each sample's leaf, shape (n_samples, n_classes)."""
        check_is_fitted(self)
        return self.tree_.value[self.tree_.apply(self._validate_X_predict(X))]

    def predict_log_proba(self, X) -> np.ndarray:
        """Logarithm of :meth:`predict_proba` (``-inf`` for classes absent from a leaf)."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X) -> np.ndarray:
        """The majority class (by weight) of each sample's leaf."""
        check_is_fitted(self)
        # Each node's majority class first, then one lookup per sample: the same argmax as
        # over the samples' rows of proportions, without that n_samples x n_classes array.
        node_class = self.classes_[np.argmax(self.tree_.value, axis=1)]
        return node_class[self.tree_.apply(self._validate_X_predict(X))]

    @available_if(lambda self: False)
    def decision_function(self, X):  # pragma: no cover - trees have no decision function
        raise AttributeError


class DecisionTreeRegressor(RegressorMixin, _BaseTree):
    """A regression tree grown by CART and pruned by cost complexity.

    Parameters
    ----------
    criterion : {"squared_error"}, default="squared_error"
        Node impurity: the weighted variance of ``y``; a leaf predicts its weighted mean.
    splitter : {"best", "random"}, default="best"
    max_depth : int or None, default=None
    min_samples_split : int or float, default=2
    min_samples_leaf : int or float, default=1
    min_weight_fraction_leaf : float, default=0.0
    max_features : int, float, {"sqrt", "log2"} or None, default=None
    random_state : int, Generator, RandomState or None, default=None
    min_impurity_decrease : float, default=0.0
    ccp_alpha : float, default=0.0
        See :class:`DecisionTreeClassifier` for all of these.

    Attributes
    ----------
    n_features_in_ : int
    max_features_ : int
    tree_ : Tree
        As for the classifier, with ``value`` of shape (n_nodes, 1) holding leaf means.
    feature_importances_ : ndarray of shape (n_features,)

    See Also
    --------
    DecisionTreeClassifier : The classification tree.
    mathlearn.ensemble.GradientBoostingRegressor : Shallow regression trees fitted in stages.

    Notes
    -----
    The squared-error split (Stuttgart "Introduction to Machine Learning" §2.6) minimises
    ``sum_L w (y - ybar_L)^2 + sum_R w (y - ybar_R)^2``; since ``sum w (y - ybar)^2 = sum w
    y^2 - (sum w y)^2 / W``, it maximises ``(sum_L w y)^2 / W_L + (sum_R w y)^2 / W_R``,
    which prefix sums of ``w y`` and ``w`` over the sorted values give for every threshold
    at once. Pruning as in :class:`DecisionTreeClassifier` with ``i(t)`` the variance.
    Cost as for :class:`DecisionTreeClassifier` with ``C = 2`` statistics per sample.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.tree import DecisionTreeRegressor
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> DecisionTreeRegressor(max_depth=1).fit(X, [1.0, 1.0, 5.0, 7.0]).predict([[0.5], [2.5]])
    array([1., 6.])
    """

    _parameter_constraints = {
        "criterion": [StrOptions({"squared_error"})],
        **_TREE_CONSTRAINTS,
    }
    _expected_failed_checks = DecisionTreeClassifier._expected_failed_checks

    def __init__(
        self,
        *,
        criterion: str = "squared_error",
        splitter: str = "best",
        max_depth: int | None = None,
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        min_weight_fraction_leaf: float = 0.0,
        max_features: int | float | str | None = None,
        random_state=None,
        min_impurity_decrease: float = 0.0,
        ccp_alpha: float = 0.0,
    ):
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.min_impurity_decrease = min_impurity_decrease
        self.ccp_alpha = ccp_alpha

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Grow (and prune) the tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : DecisionTreeRegressor
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D; got shape {y.shape}.")
        return self._fit_checked(X, y, sample_weight)

    def _fit_checked(self, X, y, sample_weight, presorted_order=None, rows=None):
        y = np.asarray(y, dtype=np.float64)  # (validated: float64 already, not copied)
        # Centre and scale y so the sums of w y^2 neither overflow nor cancel (data far from
        # the origin); the tree is invariant to this affine map, values and variances are
        # mapped back.
        shift = float(np.median(y))
        scale = float(np.max(np.abs(y - shift)))
        scale = scale if scale > 0 else 1.0
        Y = ((y - shift) / scale)[:, None]
        self._grow(X, Y, sample_weight, "squared_error", presorted_order, rows=rows)
        tree = self._full_tree
        # in place (the same products and sums): the arrays share one block. The variances
        # of targets beyond about 1e154 are beyond the doubles: inf (an honest figure; the
        # tree and its predictions are not affected, pruning refuses them).
        np.add(np.multiply(tree.value, scale, out=tree.value), shift, out=tree.value)
        with np.errstate(over="ignore"):
            s2 = np.float64(scale) ** 2
            np.multiply(tree.impurity, s2 if np.isfinite(s2) else scale, out=tree.impurity)
            if not np.isfinite(s2):  # (a pure node's 0 stays 0, not 0 x inf)
                np.multiply(tree.impurity, scale, out=tree.impurity)
        return self._prune()

    def predict(self, X) -> np.ndarray:
        """Mean target of each sample's leaf, shape (n_samples,)."""
        check_is_fitted(self)
        return self.tree_.value[self.tree_.apply(self._validate_X_predict(X)), 0]
