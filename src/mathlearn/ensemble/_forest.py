"""Random forests and extremely randomised trees: bagged CART trees with random features."""

from __future__ import annotations

from numbers import Integral

import numpy as np

from ..utils._param_validation import Interval, RealNotInt, StrOptions
from ._bagging import BaggingClassifier, BaggingRegressor

__all__ = ["ExtraTreesClassifier", "RandomForestClassifier", "RandomForestRegressor"]

_FOREST_CONSTRAINTS = {
    "n_estimators": [Interval(Integral, 1, None, closed="left")],
    "max_depth": [Interval(Integral, 1, None, closed="left"), None],
    "min_samples_split": [
        Interval(Integral, 2, None, closed="left"),
        Interval(RealNotInt, 0.0, 1.0, closed="right"),
    ],
    "min_samples_leaf": [
        Interval(Integral, 1, None, closed="left"),
        Interval(RealNotInt, 0.0, 1.0, closed="neither"),
    ],
    "max_features": [
        Interval(Integral, 1, None, closed="left"),
        Interval(RealNotInt, 0.0, 1.0, closed="right"),
        StrOptions({"sqrt", "log2"}),
        None,
    ],
    "bootstrap": ["boolean"],
    "oob_score": ["boolean"],
    "n_jobs": [Integral, None],
    "random_state": ["random_state"],
}


class _ForestMixin:
    """Members are trees with the forest's parameters; features are drawn per node."""

    _splitter = "best"

    @property
    def max_features_bag(self):
        return 1.0

    def _max_samples(self):
        return 1.0

    def _tree_params(self, seed):
        return dict(
            criterion=self.criterion,
            splitter=self._splitter,
            max_depth=self.max_depth,
            min_samples_split=self.min_samples_split,
            min_samples_leaf=self.min_samples_leaf,
            max_features=self.max_features,
            random_state=seed,
        )

    @property
    def feature_importances_(self) -> np.ndarray:
        """Mean of the trees' normalised impurity decreases."""
        return np.mean([t.feature_importances_ for t in self.estimators_], axis=0)


class RandomForestClassifier(_ForestMixin, BaggingClassifier):
    """A random forest: bootstrap-aggregated CART trees, each split on a random feature subset.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    criterion : {"gini", "entropy", "log_loss"}, default="gini"
    max_depth : int or None, default=None
    min_samples_split : int or float, default=2
    min_samples_leaf : int or float, default=1
    max_features : int, float, {"sqrt", "log2"} or None, default="sqrt"
        Features drawn at each node (``None``: all, which is bagging of trees).
    bootstrap : bool, default=True
    oob_score : bool, default=False
        Out-of-bag accuracy in ``oob_score_``.
    n_jobs : int or None, default=None
        Trees grown in parallel by joblib threads (the NumPy kernels release the GIL).
    random_state : int, Generator, RandomState or None, default=None

    Attributes
    ----------
    estimators_ : list of DecisionTreeClassifier
    classes_ : ndarray of shape (n_classes,)
    feature_importances_ : ndarray of shape (n_features,)
    oob_score_ : float
    oob_decision_function_ : ndarray of shape (n_samples, n_classes)

    See Also
    --------
    mathlearn.tree.DecisionTreeClassifier : One tree.
    ExtraTreesClassifier : Random thresholds as well as random features.
    BaggingClassifier : Bagging of any estimator.

    Notes
    -----
    Random forests (Stuttgart "Introduction to Machine Learning" §2.6) de-correlate bagged
    trees: each split considers only ``m`` of the ``D`` features (``m = sqrt(D)`` by
    default). The variance of an average of ``L`` identically distributed predictors with
    pairwise correlation ``rho`` is ``rho sigma^2 + (1 - rho) sigma^2 / L``, so lowering
    ``rho`` lowers what bagging alone cannot remove. Class probabilities are the trees'
    leaf proportions averaged.

    Cost: ``L`` trees, each ``O(D N log N)`` to sort its bootstrap sample's features plus
    ``O(m N C)`` per level for the split search over ``m`` features (``C`` classes) and
    ``O(D N)`` to partition them; memory ``O(D N)`` per tree being grown (``n_jobs`` at
    once: the sort order of its bootstrap sample, 4 bytes per entry; the sample's rows of
    ``X`` are read in place, not copied) and ``O(N C)`` per fitted tree for its nodes.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from mathlearn.ensemble import RandomForestClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.95)
    True
    """

    _parameter_constraints = {
        "criterion": [StrOptions({"gini", "entropy", "log_loss"})],
        **_FOREST_CONSTRAINTS,
    }
    _common_test_params = {"n_estimators": 5}

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        criterion: str = "gini",
        max_depth: int | None = None,
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        max_features: int | float | str | None = "sqrt",
        bootstrap: bool = True,
        oob_score: bool = False,
        n_jobs: int | None = None,
        random_state=None,
    ):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _make_estimator(self, seed):
        from ..tree import DecisionTreeClassifier

        return DecisionTreeClassifier(**self._tree_params(seed))


class ExtraTreesClassifier(RandomForestClassifier):
    """Extremely randomised trees: random features and one random threshold per feature.

    Parameters
    ----------
    n_estimators : int, default=100
    criterion : {"gini", "entropy", "log_loss"}, default="gini"
    max_depth : int or None, default=None
    min_samples_split : int or float, default=2
    min_samples_leaf : int or float, default=1
    max_features : int, float, {"sqrt", "log2"} or None, default="sqrt"
    bootstrap : bool, default=False
        Extra trees use the whole training set by default.
    oob_score : bool, default=False
        Needs ``bootstrap=True``.
    n_jobs : int or None, default=None
    random_state : int, Generator, RandomState or None, default=None

    Attributes
    ----------
    estimators_ : list of DecisionTreeClassifier
    classes_ : ndarray of shape (n_classes,)
    feature_importances_ : ndarray of shape (n_features,)

    See Also
    --------
    RandomForestClassifier

    Notes
    -----
    At each node, each of the ``m`` drawn features gets a threshold drawn uniformly between
    its smallest and largest value in the node, and the best of these ``m`` splits by impurity
    decrease is kept (Geurts, Ernst and Wehenkel 2006): more randomness than a random forest,
    so less correlated trees, and no sorting.

    Cost: ``L`` trees of ``O(m N C)`` per level each (two passes over the node's samples per
    examined feature: their range, then the class sums left of the threshold), about
    ``O(m N C log N)`` per tree; memory ``O(N C)`` per tree being grown and per fitted
    tree (``X`` is read in place).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from mathlearn.ensemble import ExtraTreesClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> bool(ExtraTreesClassifier(n_estimators=20, random_state=0).fit(X, y).score(X, y) > 0.95)
    True
    """

    _splitter = "random"

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        criterion: str = "gini",
        max_depth: int | None = None,
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        max_features: int | float | str | None = "sqrt",
        bootstrap: bool = False,
        oob_score: bool = False,
        n_jobs: int | None = None,
        random_state=None,
    ):
        super().__init__(
            n_estimators=n_estimators,
            criterion=criterion,
            max_depth=max_depth,
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            max_features=max_features,
            bootstrap=bootstrap,
            oob_score=oob_score,
            n_jobs=n_jobs,
            random_state=random_state,
        )


class RandomForestRegressor(_ForestMixin, BaggingRegressor):
    """A random forest of regression trees.

    Parameters
    ----------
    n_estimators : int, default=100
    criterion : {"squared_error"}, default="squared_error"
    max_depth : int or None, default=None
    min_samples_split : int or float, default=2
    min_samples_leaf : int or float, default=1
    max_features : int, float, {"sqrt", "log2"} or None, default=1.0
        scikit-learn's default for regression: all features, so bagged trees.
    bootstrap : bool, default=True
    oob_score : bool, default=False
        Out-of-bag R² in ``oob_score_``.
    n_jobs : int or None, default=None
    random_state : int, Generator, RandomState or None, default=None

    Attributes
    ----------
    estimators_ : list of DecisionTreeRegressor
    feature_importances_ : ndarray of shape (n_features,)
    oob_score_ : float
    oob_prediction_ : ndarray of shape (n_samples,)

    See Also
    --------
    RandomForestClassifier, mathlearn.tree.DecisionTreeRegressor

    Notes
    -----
    The average of regression trees grown on bootstrap samples with ``m`` random features
    per split (Stuttgart "Introduction to Machine Learning" §2.6); see
    :class:`RandomForestClassifier`. Cost as there with ``C = 2`` statistics per sample
    (``m = D`` by default, so each split scans every feature).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.ensemble import RandomForestRegressor
    >>> X = np.linspace(0, 1, 40)[:, None]
    >>> reg = RandomForestRegressor(n_estimators=10, random_state=0).fit(X, X.ravel() ** 2)
    >>> bool(abs(reg.predict([[0.5]])[0] - 0.25) < 0.05)
    True
    """

    _parameter_constraints = {
        "criterion": [StrOptions({"squared_error"})],
        **_FOREST_CONSTRAINTS,
    }
    _common_test_params = {"n_estimators": 5}

    def __init__(
        self,
        n_estimators: int = 100,
        *,
        criterion: str = "squared_error",
        max_depth: int | None = None,
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        max_features: int | float | str | None = 1.0,
        bootstrap: bool = True,
        oob_score: bool = False,
        n_jobs: int | None = None,
        random_state=None,
    ):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _make_estimator(self, seed):
        from ..tree import DecisionTreeRegressor

        return DecisionTreeRegressor(**self._tree_params(seed))
