"""Stacked generalisation: a final model fitted on cross-validated predictions of base models."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import ClassifierMixin, TransformerMixin
from sklearn.model_selection import check_cv, cross_val_predict
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import has_fit_parameter

from ..base import BaseEstimator, RegressorMixin, _fit_context, check_is_fitted, clone
from ..linear_model import LogisticRegression, Ridge
from ..naive_bayes import GaussianNB
from ..tree import DecisionTreeClassifier, DecisionTreeRegressor
from ..utils._param_validation import HasMethods, Interval, StrOptions
from ..utils.validation import check_sample_weight, validate_data

__all__ = ["StackingClassifier", "StackingRegressor"]

_NOTES = """
    Stacking (Wolpert 1992; Elements of Statistical Learning §8.8; Stuttgart "Introduction
    to Machine Learning" §2.6, slide 7:15 "models are features") combines base models
    ``f_1 .. f_M`` by a final model ``g`` fitted to their outputs:

    .. math::

        \\hat y(x) = g\\bigl(f_1(x), \\dots, f_M(x)\\bigr).

    Fitting ``g`` on the base models' predictions at their own training points would reward
    the models that overfit most (the notes' "beware overfitting"), so ``g`` is fitted on
    out-of-fold predictions: with the folds ``F_1 .. F_K`` of ``cv``, the feature of
    sample ``i`` in fold ``k`` is ``f_m^{(-k)}(x_i)``, the prediction of ``f_m`` fitted
    without fold ``k``. The base models used at prediction time are refitted on all the
    data. With a linear ``g`` this is the notes' linear combination ``f = sum_m alpha_m
    f_m`` with ``alpha`` fitted by (cross-validated) regression.
"""

_CONSTRAINTS = {
    "estimators": [list, None],
    "final_estimator": [HasMethods(["fit", "predict"]), None],
    "cv": [Interval(Integral, 2, None, closed="left"), HasMethods(["split"]), list],
    "passthrough": ["boolean"],
}


def _check_estimators(estimators):
    if estimators is None or len(estimators) == 0:
        raise ValueError("estimators must be a non-empty list of (name, estimator) pairs.")
    names = []
    for item in estimators:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
            raise ValueError(f"estimators must hold (name, estimator) pairs; got {item!r}.")
        names.append(item[0])
    if len(set(names)) != len(names):
        raise ValueError(f"estimator names must be unique; got {names}.")


class _BaseStacking(TransformerMixin, BaseEstimator):
    def _fit_stack(self, X, y, cv, methods, sample_weight=None):
        _check_estimators(self.estimators)
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, X)
            models = [(name, est) for name, est in self.estimators]
            models.append(("final_estimator", self._final()))
            for name, est in models:
                if not has_fit_parameter(est, "sample_weight"):
                    raise ValueError(
                        f"sample_weight was given but {name} ({type(est).__name__}) does not "
                        f"accept sample_weight in fit."
                    )
        kw = {} if sample_weight is None else {"sample_weight": sample_weight}
        feats = []
        self.estimators_ = []
        for (_, est), method in zip(self.estimators, methods, strict=True):
            # Each training fold's models see that fold's weights.
            oof = cross_val_predict(clone(est), X, y, cv=cv, method=method, params=kw)
            feats.append(self._as_columns(oof, method))
            self.estimators_.append(clone(est).fit(X, y, **kw))
        self.stack_method_ = list(methods)
        self._n_columns = [f.shape[1] for f in feats]
        Z = np.hstack(feats + ([X] if self.passthrough else []))
        self.final_estimator_ = clone(self._final()).fit(Z, y, **kw)
        return self

    def _as_columns(self, out, method):
        out = np.asarray(out, dtype=np.float64)
        if out.ndim == 1:
            return out[:, None]
        # Two-class probabilities: the second column carries all the information.
        if method == "predict_proba" and out.shape[1] == 2:
            return out[:, 1:]
        return out

    def transform(self, X) -> np.ndarray:
        """The base models' outputs (and ``X`` with ``passthrough``): the final model's input.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Z : ndarray of shape (n_samples, n_stacked_features)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        feats = [
            self._as_columns(getattr(est, m)(X), m)
            for est, m in zip(self.estimators_, self.stack_method_, strict=True)
        ]
        return np.hstack(feats + ([X] if self.passthrough else []))

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names of :meth:`transform`'s columns.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Names of the input features (used with ``passthrough``).

        Returns
        -------
        names : ndarray of str
            The estimator's name for a one-column output, ``name0, name1, ...`` otherwise,
            then the input features with ``passthrough``.
        """
        from sklearn.utils.validation import _check_feature_names_in

        check_is_fitted(self)
        names = []
        for (name, _), k in zip(self.estimators, self._n_columns, strict=True):
            names.extend([name] if k == 1 else [f"{name}{i}" for i in range(k)])
        if self.passthrough:
            names.extend(_check_feature_names_in(self, input_features))
        return np.asarray(names, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


class StackingRegressor(RegressorMixin, _BaseStacking):
    """A regressor fitted on the out-of-fold predictions of base regressors.

    Parameters
    ----------
    estimators : list of (str, regressor) or None, default=None
        The base models ``f_m`` (required; ``None`` only so that the class can be built
        without arguments, as scikit-learn's tools do).
    final_estimator : regressor or None, default=None
        The combiner ``g``; ``None`` is :class:`~mathlearn.linear_model.Ridge` with
        ``alpha=1`` (a linear combination, shrunk because the base predictions are
        strongly correlated).
    cv : int, cross-validation generator or iterable, default=5
        Folds for the out-of-fold predictions (``KFold(cv)`` for an int).
    passthrough : bool, default=False
        Give ``g`` the original features as well.

    Attributes
    ----------
    estimators_ : list of regressors
        The base models refitted on all the data.
    final_estimator_ : regressor
    stack_method_ : list of str
    n_features_in_ : int

    See Also
    --------
    StackingClassifier : The classification version.
    BayesianModelAveraging : Weights from the models' evidences instead of from data.

    Notes
    -----"""

    __doc__ += (
        _NOTES
        + """
    Complexity: with ``N`` samples, ``D`` features, ``M`` base models and ``K`` folds,
    ``fit`` costs ``M (K + 1)`` fits of base models (``K`` on the rows outside each fold,
    one refit on all ``N`` rows) and ``M K`` predictions of the held-out folds (``N`` rows
    per model in all), then one fit of the final model on ``N`` rows of ``M`` columns
    (``M + D`` with ``passthrough``). Memory: the ``N x M`` out-of-fold predictions (plus
    ``N x D`` with ``passthrough``), a copy of each fold's training rows while it is fitted,
    and, as fitted state, the ``M`` refitted base models and the final model (the fold
    models are dropped). ``predict`` of ``P`` rows costs one ``predict`` of each base model
    on the ``P`` rows and one of the final model on the ``P x M`` stacked features.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from mathlearn.ensemble import StackingRegressor
    >>> from mathlearn.linear_model import Ridge
    >>> from mathlearn.tree import DecisionTreeRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = StackingRegressor(
    ...     [("ridge", Ridge(alpha=0.1)), ("tree", DecisionTreeRegressor(max_depth=3))]
    ... ).fit(X, y)
    >>> reg.transform(X[:2]).shape
    (2, 2)
    """
    )

    _parameter_constraints = dict(_CONSTRAINTS)

    _common_test_params = {
        "estimators": [("ridge", Ridge()), ("tree", DecisionTreeRegressor(max_depth=2))],
        "cv": 3,
    }

    def __init__(
        self,
        estimators: list | None = None,
        final_estimator=None,
        *,
        cv=5,
        passthrough: bool = False,
    ):
        self.estimators = estimators
        self.final_estimator = final_estimator
        self.cv = cv
        self.passthrough = passthrough

    def _final(self):
        return Ridge(alpha=1.0) if self.final_estimator is None else self.final_estimator

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit the base models out of fold, the final model on their predictions, then refit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to every base model's fit (each fold's fit gets its rows' weights) and
            to the final model's; every one of them must accept it.

        Returns
        -------
        self : StackingRegressor
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D; got shape {y.shape}.")
        cv = check_cv(self.cv, y, classifier=False)
        methods = ["predict"] * len(self.estimators or [])
        return self._fit_stack(X, y, cv, methods, sample_weight)

    def predict(self, X) -> np.ndarray:
        """``g(f_1(x), ..., f_M(x))``, shape (n_samples,)."""
        Z = self.transform(X)
        return np.asarray(self.final_estimator_.predict(Z))


class StackingClassifier(ClassifierMixin, _BaseStacking):
    """A classifier fitted on the out-of-fold class probabilities of base classifiers.

    Parameters
    ----------
    estimators : list of (str, classifier) or None, default=None
        The base models (required).
    final_estimator : classifier or None, default=None
        ``None`` is :class:`~mathlearn.linear_model.LogisticRegression`.
    cv : int, cross-validation generator or iterable, default=5
        ``StratifiedKFold(cv)`` for an int.
    stack_method : {"auto", "predict_proba", "decision_function", "predict"}, default="auto"
        Output of each base model used as features; ``"auto"`` takes ``predict_proba``,
        else ``decision_function``, else ``predict``. For two classes only the second
        class's probability is kept.
    passthrough : bool, default=False

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    estimators_ : list of classifiers
    final_estimator_ : classifier
    stack_method_ : list of str
    n_features_in_ : int

    See Also
    --------
    StackingRegressor : The regression version.

    Notes
    -----"""

    __doc__ += (
        _NOTES
        + """
    Complexity: with ``N`` samples, ``D`` features, ``M`` base models, ``K`` folds and ``C``
    classes, ``fit`` costs ``M (K + 1)`` fits of base models (``K`` on the rows outside each
    stratified fold, one refit on all ``N`` rows) and ``M K`` calls of their stack method on
    the held-out folds (``N`` rows per model in all), then one fit of the final model on
    ``N`` rows of ``Q`` columns: ``Q = M`` for two classes, up to ``M C`` otherwise (``C``
    probabilities or scores per model), plus ``D`` with ``passthrough``. Memory: the
    ``N x Q`` out-of-fold features (plus ``N x D`` with ``passthrough``), a copy of each
    fold's training rows while it is fitted, and, as fitted state, the ``M`` refitted base
    models and the final model (the fold models are dropped). Prediction of ``P`` rows costs
    one call of each base model's stack method on the ``P`` rows and one of the final model
    on the ``P x Q`` stacked features.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from mathlearn.ensemble import StackingClassifier
    >>> from mathlearn.naive_bayes import GaussianNB
    >>> from mathlearn.tree import DecisionTreeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = StackingClassifier(
    ...     [("nb", GaussianNB()), ("tree", DecisionTreeClassifier(max_depth=2))]
    ... ).fit(X, y)
    >>> bool(clf.score(X, y) > 0.9)
    True
    """
    )

    _parameter_constraints = {
        **_CONSTRAINTS,
        "stack_method": [StrOptions({"auto", "predict_proba", "decision_function", "predict"})],
    }

    _common_test_params = {
        "estimators": [("nb", GaussianNB()), ("tree", DecisionTreeClassifier(max_depth=2))],
        "cv": 3,
    }

    def __init__(
        self,
        estimators: list | None = None,
        final_estimator=None,
        *,
        cv=5,
        stack_method: str = "auto",
        passthrough: bool = False,
    ):
        self.estimators = estimators
        self.final_estimator = final_estimator
        self.cv = cv
        self.stack_method = stack_method
        self.passthrough = passthrough

    def _final(self):
        return LogisticRegression() if self.final_estimator is None else self.final_estimator

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit the base models out of fold, the final model on their outputs, then refit.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to every base model's fit (each fold's fit gets its rows' weights) and
            to the final model's; every one of them must accept it.

        Returns
        -------
        self : StackingClassifier
        """
        from sklearn.utils.multiclass import check_classification_targets

        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        if self.classes_.shape[0] < 2:
            raise ValueError(
                f"StackingClassifier needs samples of at least 2 classes; got "
                f"{self.classes_.shape[0]} class."
            )
        _check_estimators(self.estimators)
        methods = []
        for _, est in self.estimators:
            if self.stack_method != "auto":
                if not hasattr(est, self.stack_method):
                    raise ValueError(f"{type(est).__name__} has no {self.stack_method}.")
                methods.append(self.stack_method)
                continue
            for m in ("predict_proba", "decision_function", "predict"):
                if hasattr(est, m):
                    methods.append(m)
                    break
        cv = check_cv(self.cv, y_idx, classifier=True)
        if isinstance(self.cv, Integral):
            counts = np.bincount(y_idx)
            if counts.min() < self.cv:
                raise ValueError(
                    f"cv={self.cv} stratified folds need at least {self.cv} samples of every "
                    f"class; the smallest class has {counts.min()}."
                )
        return self._fit_stack(X, y_idx, cv, methods, sample_weight)

    def predict(self, X) -> np.ndarray:
        """The final model's class, shape (n_samples,)."""
        Z = self.transform(X)
        idx = np.asarray(self.final_estimator_.predict(Z), dtype=np.intp)
        return self.classes_[idx]

    @available_if(lambda self: hasattr(self._final(), "predict_proba"))
    def predict_proba(self, X) -> np.ndarray:
        """The final model's class probabilities, shape (n_samples, n_classes)."""
        Z = self.transform(X)
        return np.asarray(self.final_estimator_.predict_proba(Z))

    @available_if(lambda self: hasattr(self._final(), "decision_function"))
    def decision_function(self, X) -> np.ndarray:
        """The final model's decision function."""
        Z = self.transform(X)
        return np.asarray(self.final_estimator_.decision_function(Z))
