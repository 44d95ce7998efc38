"""Gradient boosting of CART regression trees (Friedman's gradient TreeBoost)."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..base import BaseClassifier, BaseEstimator, RegressorMixin, _fit_context, check_is_fitted
from ..tree._tree import build_tree, presort
from ..utils._param_validation import Interval, RealNotInt, StrOptions
from ..utils.extmath import softmax
from ..utils.validation import check_random_state, check_sample_weight, validate_data
from . import _gb_losses as L

__all__ = ["GradientBoostingClassifier", "GradientBoostingRegressor"]

_GB_CONSTRAINTS = {
    "learning_rate": [Interval(Real, 0.0, None, closed="neither")],
    "n_estimators": [Interval(Integral, 1, None, closed="left")],
    "subsample": [Interval(Real, 0.0, 1.0, closed="right")],
    "min_samples_split": [
        Interval(Integral, 2, None, closed="left"),
        Interval(RealNotInt, 0.0, 1.0, closed="right"),
    ],
    "min_samples_leaf": [
        Interval(Integral, 1, None, closed="left"),
        Interval(RealNotInt, 0.0, 1.0, closed="neither"),
    ],
    "min_weight_fraction_leaf": [Interval(Real, 0.0, 0.5, closed="both")],
    "max_depth": [Interval(Integral, 1, None, closed="left"), None],
    "min_impurity_decrease": [Interval(Real, 0.0, None, closed="left")],
    "max_features": [
        Interval(Integral, 1, None, closed="left"),
        Interval(RealNotInt, 0.0, 1.0, closed="right"),
        StrOptions({"sqrt", "log2"}),
        None,
    ],
    "random_state": ["random_state"],
    "validation_fraction": [Interval(Real, 0.0, 1.0, closed="neither")],
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left"), None],
    "tol": [Interval(Real, 0.0, None, closed="left")],
}

_NOTES = """
    Gradient boosting (Friedman 2001, "Greedy function approximation: a gradient boosting
    machine", Algorithm 1 with trees, TreeBoost; Stuttgart "Introduction to Machine Learning"
    §2.6, slides 7:21-7:24; Elements of Statistical Learning §10.10, Algorithm 10.3) builds
    an additive model by functional gradient descent on ``sum_i w_i L(y_i, F(x_i))``:

    .. math::

        F_0 = \\arg\\min_c \\sum_i w_i L(y_i, c), \\qquad
        r_{im} = -\\left.\\frac{\\partial L(y_i, F)}{\\partial F}\\right|_{F = F_{m-1}(x_i)},

    a CART regression tree with leaves ``R_{jm}`` is fitted to the pseudo-residuals
    ``r_{im}`` by least squares (only its regions are kept), each leaf gets the line-search
    value

    .. math::

        \\gamma_{jm} = \\arg\\min_\\gamma \\sum_{x_i \\in R_{jm}} w_i L(y_i, F_{m-1}(x_i) +
        \\gamma),

    and ``F_m = F_{m-1} + \\nu \\sum_j \\gamma_{jm} 1(x \\in R_{jm})`` with the shrinkage
    ``nu = learning_rate``. (The sign on the notes' slide 7:22 is wrong: the descent
    direction is the negative gradient, as in step 3 of slide 7:23.) With ``subsample < 1``
    each tree sees a random fraction of the samples drawn without replacement (stochastic
    gradient boosting, Friedman 2002); the others give ``oob_improvement_``.

    Early stopping: with ``n_iter_no_change`` set, ``validation_fraction`` of the training
    data (stratified for classification) is held out, and boosting stops once the held-out
    loss has not fallen by more than ``tol`` below its best over the last ``n_iter_no_change``
    stages.

    Cost: the features are sorted once for all stages (``O(D N log N)``); each of the ``M``
    stages (``K`` trees per stage for ``K > 2`` classes) grows a depth-``h`` tree by scanning
    and partitioning the presorted columns, ``O(h D N)``, plus ``O(N)`` for the gradients and
    the leaf values. Memory ``O(D N)`` for the sorted columns, which every stage's tree
    reads without copying them (it is grown level by level, see
    :func:`mathlearn.tree._tree.build_tree`; with ``max_features`` below ``D`` each tree
    partitions a copy), and ``O(N K)`` for ``F``.
"""


class _BaseGradientBoosting(BaseEstimator):
    """Fitting loop shared by the regressor and the classifier."""

    _common_test_params = {"n_estimators": 10}
    _expected_failed_checks = {
        "check_sample_weight_equivalence_on_dense_data": (
            "zero-weight samples still place the trees' midpoint thresholds, so weighting by "
            "zero is not removing the sample (as for DecisionTreeRegressor)"
        ),
    }

    def _resolve_int(self, value, n):
        from math import ceil

        if isinstance(value, Integral):
            return int(value)
        return max(1, ceil(value * n))

    def _max_features(self, d):
        mf = self.max_features
        if mf is None:
            return d
        if mf == "sqrt":
            return max(1, int(np.sqrt(d)))
        if mf == "log2":
            return max(1, int(np.log2(d)))
        if isinstance(mf, Integral):
            return min(int(mf), d)
        return max(1, int(mf * d))

    def _split_validation(self, X, y, w, rng, stratify):
        from sklearn.model_selection import train_test_split

        seed = (
            self.random_state
            if isinstance(self.random_state, Integral)
            else int(rng.integers(np.iinfo(np.int32).max))
        )
        try:
            return train_test_split(
                X,
                y,
                w,
                random_state=seed,
                test_size=self.validation_fraction,
                stratify=y if stratify else None,
            )
        except ValueError as exc:
            raise ValueError(
                f"Early stopping could not hold out validation_fraction="
                f"{self.validation_fraction} of {X.shape[0]} samples: {exc}"
            ) from exc

    def _boost(self, X, y, w, loss, stratify, own_w=False):
        """Run the stages; ``y`` is already in the loss's units (indices or scaled values).
        ``own_w``: ``w`` was made by the fit (no caller's array), so it is scaled in place."""
        rng = check_random_state(self.random_state)
        # Every weighted quantity here is a ratio of weighted sums (weighted means, Newton
        # steps, weight fractions), but weights far from 1 overflow or underflow their
        # products: scale them by a power of two (exact) to a largest entry in [1/2, 1).
        e = -int(np.frexp(float(w.max()))[1]) if w.max() > 0 else 0
        if e:
            w = np.ldexp(w, e, out=w if own_w else None)
        if self.n_iter_no_change is not None:
            X, X_val, y, y_val, w, w_val = self._split_validation(X, y, w, rng, stratify)
            if stratify and np.unique(y).shape[0] < loss.K + (loss.K == 1):
                raise ValueError(
                    "The training part left after holding out validation_fraction lacks a class."
                )
        n, d = X.shape
        K = loss.K
        self.init_ = loss.init(y, w)
        F = np.tile(self.init_, (n, 1))
        msl = self._resolve_int(self.min_samples_leaf, n)
        mss = max(2, self._resolve_int(self.min_samples_split, n))
        self.max_features_ = self._max_features(d)
        full_order = presort(X, compact=True) if self.subsample >= 1.0 else None
        n_inbag = max(1, int(self.subsample * n))
        do_oob = self.subsample < 1.0
        trees = []
        train_score, oob_scores, oob_improvement = [], [], []
        if self.n_iter_no_change is not None:
            F_val = np.tile(self.init_, (X_val.shape[0], 1))
            history = np.full(self.n_iter_no_change, np.inf)
        for m in range(self.n_estimators):
            if do_oob:
                inbag = np.zeros(n, dtype=bool)
                inbag[rng.choice(n, n_inbag, replace=False)] = True
                if m == 0:
                    oob_prev = loss(y[~inbag], F[~inbag], w[~inbag])
                idx = np.flatnonzero(inbag)
                Xb = X[idx]
                order = None
            else:
                idx, Xb, order = slice(None), X, full_order
            yb, Fb, wb = y[idx], F[idx], w[idx]
            if isinstance(loss, L.HuberLoss):
                loss.set_delta(yb, Fb, wb)
            R = loss.negative_gradient(yb, Fb)
            stage = []
            for k in range(K):
                tree = build_tree(
                    Xb,
                    R[:, k : k + 1],
                    wb,
                    criterion="squared_error",
                    splitter="best",
                    max_depth=self.max_depth,
                    min_samples_split=mss,
                    min_samples_leaf=msl,
                    min_weight_leaf=self.min_weight_fraction_leaf * wb.sum(),
                    max_features=self.max_features_,
                    min_impurity_decrease=self.min_impurity_decrease,
                    rng=rng,
                    presorted_order=order,
                )
                leaf = None
                if not getattr(loss, "tree_values_suffice", False):
                    leaf = tree.apply(Xb)
                    ids, vals = loss.leaf_values(leaf, yb, Fb, R[:, k], wb, k)
                    tree.value[ids, 0] = vals
                stage.append(tree)
                if leaf is None or do_oob:  # (a subsample's leaves are not every row's)
                    leaf = tree.apply(X)
                step = tree.value[leaf, 0]
                del leaf  # (not held into the next tree's growth: N integers)
                step *= self.learning_rate
                F[:, k] += step
                del step
            trees.append(stage)
            del R  # (the next stage's residuals replace it; not held through the loss)
            if do_oob:
                train_score.append(loss(y[inbag], F[inbag], w[inbag]))
                oob_scores.append(loss(y[~inbag], F[~inbag], w[~inbag]))
                oob_improvement.append(oob_prev - oob_scores[-1])
                oob_prev = oob_scores[-1]
            else:
                train_score.append(loss(y, F, w))
            if self.n_iter_no_change is not None:
                for k, tree in enumerate(stage):
                    F_val[:, k] += self.learning_rate * tree.value[tree.apply(X_val), 0]
                val_loss = loss(y_val, F_val, w_val)
                if np.any(val_loss + self.tol < history):
                    history[m % history.shape[0]] = val_loss
                else:
                    break
        self.estimators_ = np.empty((len(trees), K), dtype=object)
        for m, stage in enumerate(trees):
            for k, tree in enumerate(stage):
                self.estimators_[m, k] = tree
        self.n_estimators_ = len(trees)
        self.n_trees_per_iteration_ = K
        self.train_score_ = np.asarray(train_score)
        if do_oob:
            self.oob_scores_ = np.asarray(oob_scores)
            self.oob_improvement_ = np.asarray(oob_improvement)
            self.oob_score_ = float(self.oob_scores_[-1])
        return self

    def _raw_stages(self, X):
        F = np.tile(self.init_, (X.shape[0], 1))
        for stage in self.estimators_:
            for k, tree in enumerate(stage):
                F[:, k] += self.learning_rate * tree.value[tree.apply(X), 0]
            yield F

    def _raw_predict(self, X):
        F = np.tile(self.init_, (X.shape[0], 1))
        for stage in self.estimators_:
            for k, tree in enumerate(stage):
                F[:, k] += self.learning_rate * tree.value[tree.apply(X), 0]
        return F

    def _validate_X_predict(self, X):
        return validate_data(self, X, dtype=np.float64, reset=False)

    @property
    def feature_importances_(self) -> np.ndarray:
        """Mean over the trees of their impurity decreases per feature, normalised to sum 1.

        For one tree, ``I_j = sum_{t splits on j} (W_t i(t) - W_L i(L) - W_R i(R)) / W_root``
        with ``i`` the variance of the pseudo-residuals; single-leaf trees are left out, and
        the mean over the remaining trees is divided by its sum (zeros if every tree is a
        leaf).
        """
        check_is_fitted(self)
        total = np.zeros(self.n_features_in_)
        count = 0
        for stage in self.estimators_:
            for t in stage:
                internal = np.flatnonzero(t.children_left != -1)
                if internal.size == 0:
                    continue
                wi = t.weighted_n_node_samples * t.impurity
                dec = wi[internal] - wi[t.children_left[internal]] - wi[t.children_right[internal]]
                imp = np.zeros(self.n_features_in_)
                np.add.at(imp, t.feature[internal], dec / t.weighted_n_node_samples[0])
                total += imp
                count += 1
        if count == 0 or total.sum() <= 0:
            return np.zeros(self.n_features_in_)
        total /= count
        return total / total.sum()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class GradientBoostingRegressor(RegressorMixin, _BaseGradientBoosting):
    """Gradient-boosted regression trees.

    Parameters
    ----------
    loss : {"squared_error", "absolute_error", "huber", "quantile"}, default="squared_error"
        ``(y - f)^2 / 2``; ``|y - f|``; Huber's loss with ``delta`` the ``alpha``-quantile of
        the current ``|y - f|``; the pinball loss of the ``alpha``-quantile.
    learning_rate : float, default=0.1
        Shrinkage ``nu`` multiplying every tree.
    n_estimators : int, default=100
        Number of boosting stages ``M``.
    subsample : float, default=1.0
        Fraction of the samples (without replacement) each tree is fitted to.
    min_samples_split : int or float, default=2
    min_samples_leaf : int or float, default=1
    min_weight_fraction_leaf : float, default=0.0
    max_depth : int or None, default=3
        Depth of each tree (``J = 2^depth`` leaves at most).
    min_impurity_decrease : float, default=0.0
    random_state : int, Generator, RandomState or None, default=None
        Drives the subsamples, the feature draws and the validation split.
    max_features : int, float, {"sqrt", "log2"} or None, default=None
        Features drawn per split, as for :class:`~mathlearn.tree.DecisionTreeRegressor`.
    alpha : float, default=0.9
        Quantile of the Huber and quantile losses.
    validation_fraction : float, default=0.1
        Held-out fraction for early stopping.
    n_iter_no_change : int or None, default=None
        Stop when the held-out loss has not improved by ``tol`` for this many stages;
        ``None`` runs all ``n_estimators`` stages on all the data.
    tol : float, default=1e-4

    Attributes
    ----------
    estimators_ : ndarray of Tree, shape (n_estimators_, 1)
        The fitted trees (flat arrays; ``value`` holds the leaf values ``gamma_jm`` before
        shrinkage).
    init_ : ndarray of shape (1,)
        ``F_0``.
    n_estimators_ : int
        Stages fitted (fewer than ``n_estimators`` after early stopping).
    n_trees_per_iteration_ : int
        1.
    train_score_ : ndarray of shape (n_estimators_,)
        Weighted mean loss on the (in-bag) training samples after each stage: the mean
        squared error, mean absolute error, mean Huber or pinball loss (``inf`` where the
        mean squared error exceeds the floating-point range, for ``y`` beyond about 1e154).
    oob_improvement_ : ndarray of shape (n_estimators_,)
        Fall of the out-of-bag loss at each stage (``subsample < 1`` only).
    oob_scores_ : ndarray of shape (n_estimators_,)
    oob_score_ : float
    feature_importances_ : ndarray of shape (n_features,)
    max_features_ : int
    n_features_in_ : int

    See Also
    --------
    GradientBoostingClassifier : The same with the log-loss.
    HistGradientBoostingRegressor : Binned features and leaf-wise growth for large data.
    mathlearn.tree.DecisionTreeRegressor : The base learner.

    Notes
    -----"""

    __doc__ += (
        _NOTES
        + """
    Leaf values: the weighted mean of ``r`` (squared error), the weighted median of
    ``y - F_{m-1}`` (absolute error), its ``alpha``-quantile (quantile loss), and for Huber
    ``m + mean_w(sign(d - m) min(delta, |d - m|))`` with ``m`` that median and
    ``d = y - F_{m-1}`` (Friedman 2001, Algorithm 4). Medians and quantiles are the weighted
    inverted-CDF ones (the lower median for unit weights). ``y`` is divided internally by a
    power of two near its largest magnitude, which is exact, so targets of any scale fit.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.ensemble import GradientBoostingRegressor
    >>> X = np.linspace(0, 6, 40)[:, None]
    >>> reg = GradientBoostingRegressor(n_estimators=50, max_depth=2).fit(X, np.sin(X[:, 0]))
    >>> bool(np.max(np.abs(reg.predict(X) - np.sin(X[:, 0]))) < 0.1)
    True
    """
    )

    _parameter_constraints = {
        "loss": [StrOptions({"squared_error", "absolute_error", "huber", "quantile"})],
        "alpha": [Interval(Real, 0.0, 1.0, closed="neither")],
        **_GB_CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        loss: str = "squared_error",
        learning_rate: float = 0.1,
        n_estimators: int = 100,
        subsample: float = 1.0,
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        min_weight_fraction_leaf: float = 0.0,
        max_depth: int | None = 3,
        min_impurity_decrease: float = 0.0,
        random_state=None,
        max_features: int | float | str | None = None,
        alpha: float = 0.9,
        validation_fraction: float = 0.1,
        n_iter_no_change: int | None = None,
        tol: float = 1e-4,
    ):
        self.loss = loss
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.subsample = subsample
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_depth = max_depth
        self.min_impurity_decrease = min_impurity_decrease
        self.random_state = random_state
        self.max_features = max_features
        self.alpha = alpha
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol

    def _make_loss(self):
        if self.loss == "squared_error":
            return L.SquaredError()
        if self.loss == "absolute_error":
            return L.AbsoluteError()
        if self.loss == "huber":
            return L.HuberLoss(self.alpha)
        return L.QuantileLoss(self.alpha)

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit the boosted trees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : GradientBoostingRegressor
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D; got shape {y.shape}.")
        y = y.astype(np.float64, copy=False)  # (never written by _boost)
        w = check_sample_weight(sample_weight, X)
        if not np.any(w > 0):
            raise ValueError("sample_weight is zero for every sample; nothing to fit.")
        # Divide y by a power of two (exact) so squares neither overflow nor underflow. Every
        # quantity of the fit scales exactly with y while it stays in the normal range, so
        # targets of moderate size (their squares and sums far inside float64) are used as
        # they are, without the copy: the same fit bit for bit, unless some target or
        # residual is below 2^-500 or so, whose square would underflow in one units and not
        # in the other (relative sizes of 2^-100 or less at the bottom of this range).
        top = float(np.max(np.abs(y)))
        scale = float(np.ldexp(1.0, int(np.frexp(top)[1]) - 1)) if top > 0 else 1.0
        if 2.0**-400 <= top <= 2.0**400:
            scale = 1.0
        loss = self._make_loss()
        y_units = y if scale == 1.0 else y / scale
        self._boost(X, y_units, w, loss, stratify=False, own_w=sample_weight is None)
        self.init_ = self.init_ * scale
        for tree in self.estimators_.ravel():
            np.multiply(tree.value, scale, out=tree.value)
        power = 1 if self.loss in ("absolute_error", "quantile") else 2
        with np.errstate(over="ignore"):
            factor = np.float64(scale) ** power
            self.train_score_ = self.train_score_ * factor
            if self.subsample < 1.0:
                self.oob_scores_ = self.oob_scores_ * factor
                self.oob_improvement_ = self.oob_improvement_ * factor
                self.oob_score_ = float(self.oob_scores_[-1])
        return self

    def predict(self, X) -> np.ndarray:
        """``F_M(x)``, shape (n_samples,)."""
        check_is_fitted(self)
        return self._raw_predict(self._validate_X_predict(X))[:, 0]

    def staged_predict(self, X):
        """Predictions after each stage.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        for F in self._raw_stages(self._validate_X_predict(X)):
            yield F[:, 0].copy()


class GradientBoostingClassifier(BaseClassifier, _BaseGradientBoosting):
    """Gradient-boosted trees for classification with the log-loss.

    Parameters
    ----------
    loss : {"log_loss"}, default="log_loss"
        Binomial deviance for two classes (one tree per stage, ``F`` the log-odds), the
        multinomial log-loss for ``K > 2`` (``K`` trees per stage, ``p = softmax(F)``).
    learning_rate : float, default=0.1
    n_estimators : int, default=100
    subsample : float, default=1.0
    min_samples_split : int or float, default=2
    min_samples_leaf : int or float, default=1
    min_weight_fraction_leaf : float, default=0.0
    max_depth : int or None, default=3
    min_impurity_decrease : float, default=0.0
    random_state : int, Generator, RandomState or None, default=None
    max_features : int, float, {"sqrt", "log2"} or None, default=None
    validation_fraction : float, default=0.1
        Held out, stratified, for early stopping.
    n_iter_no_change : int or None, default=None
    tol : float, default=1e-4
        See :class:`GradientBoostingRegressor` for all of these.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    estimators_ : ndarray of Tree, shape (n_estimators_, n_trees_per_iteration_)
    init_ : ndarray of shape (n_trees_per_iteration_,)
        ``F_0``: the log-odds of the class-1 frequency, or the log class frequencies centred
        to sum to zero.
    n_estimators_ : int
    n_trees_per_iteration_ : int
        1 for two classes, ``K`` otherwise.
    train_score_ : ndarray of shape (n_estimators_,)
        Binomial deviance (twice the mean log-loss) or the mean multinomial log-loss on the
        (in-bag) training samples after each stage.
    oob_improvement_, oob_scores_, oob_score_
        As for the regressor (``subsample < 1`` only).
    feature_importances_ : ndarray of shape (n_features,)
    max_features_ : int
    n_features_in_ : int

    See Also
    --------
    GradientBoostingRegressor : The regression losses.
    HistGradientBoostingClassifier : Binned features for large data.
    AdaBoostClassifier : Boosting with the exponential loss and reweighting.

    Notes
    -----"""

    __doc__ += (
        _NOTES
        + """
    Leaf values are one Newton step on the leaf's log-loss (Friedman 2001, Algorithms 5-6):
    ``gamma = sum w r / sum w p (1 - p)`` with ``r = y - p``; for ``K`` classes each class's
    tree gets ``(K - 1)/K`` times that ratio for its own ``r_k, p_k``. A leaf whose total
    hessian ``sum w p (1 - p)`` is below ``1e-150`` of its weight (all probabilities already
    0 or 1 in double precision) gets 0. ``decision_function`` is the raw ``F``: the log-odds
    for two classes, the ``K`` scores otherwise.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from mathlearn.ensemble import GradientBoostingClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = GradientBoostingClassifier(n_estimators=20, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.95)
    True
    """
    )

    _parameter_constraints = {
        "loss": [StrOptions({"log_loss"})],
        **_GB_CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        loss: str = "log_loss",
        learning_rate: float = 0.1,
        n_estimators: int = 100,
        subsample: float = 1.0,
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        min_weight_fraction_leaf: float = 0.0,
        max_depth: int | None = 3,
        min_impurity_decrease: float = 0.0,
        random_state=None,
        max_features: int | float | str | None = None,
        validation_fraction: float = 0.1,
        n_iter_no_change: int | None = None,
        tol: float = 1e-4,
    ):
        self.loss = loss
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.subsample = subsample
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_depth = max_depth
        self.min_impurity_decrease = min_impurity_decrease
        self.random_state = random_state
        self.max_features = max_features
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit the boosted trees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : GradientBoostingClassifier
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        y_idx = self._encode_labels(y)
        w = check_sample_weight(sample_weight, X)
        K = self.classes_.shape[0]
        present = np.bincount(y_idx, weights=w, minlength=K) > 0
        if not present.all():
            raise ValueError(
                "Every class needs a positive total sample_weight; classes "
                f"{self.classes_[~present].tolist()} have none."
            )
        if K == 2:
            self._boost(
                X,
                y_idx.astype(np.float64),
                w,
                L.BinomialLoss(),
                stratify=True,
                own_w=sample_weight is None,
            )
        else:
            self._boost(
                X, y_idx, w, L.MultinomialLoss(K), stratify=True, own_w=sample_weight is None
            )
        return self

    def _joint_log_likelihood(self, X):
        F = self._raw_predict(X)
        return np.column_stack([np.zeros(X.shape[0]), F[:, 0]]) if F.shape[1] == 1 else F

    def decision_function(self, X) -> np.ndarray:
        """Raw scores ``F(x)``: the log-odds for two classes, shape (n_samples,); otherwise
        the ``K`` scores whose softmax is ``predict_proba``, shape (n_samples, n_classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        F = self._raw_predict(self._validate_X_predict(X))
        return F[:, 0] if F.shape[1] == 1 else F

    def _staged_jll(self, X):
        for F in self._raw_stages(self._validate_X_predict(X)):
            yield np.column_stack([np.zeros(F.shape[0]), F[:, 0]]) if F.shape[1] == 1 else F

    def staged_decision_function(self, X):
        """:meth:`decision_function` after each stage.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        for jll in self._staged_jll(X):
            yield jll[:, 1] - jll[:, 0] if jll.shape[1] == 2 else jll.copy()

    def staged_predict_proba(self, X):
        """Class probabilities after each stage.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        for jll in self._staged_jll(X):
            yield softmax(jll, axis=1)

    def staged_predict(self, X):
        """Predicted classes after each stage.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        for jll in self._staged_jll(X):
            yield self.classes_[np.argmax(jll, axis=1)]
