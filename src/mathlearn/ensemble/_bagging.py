"""Bootstrap aggregation over any estimator, and the random forests built on it."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from joblib import Parallel, delayed
from sklearn.utils.metaestimators import available_if

from ..base import (
    BaseClassifier,
    BaseEstimator,
    RegressorMixin,
    _fit_context,
    check_is_fitted,
    clone,
)
from ..tree._classes import _BaseTree
from ..utils._param_validation import HasMethods, Interval, RealNotInt
from ..utils.validation import check_random_state, check_sample_weight, validate_data

__all__ = ["BaggingClassifier", "BaggingRegressor"]


def _fit_one(estimator, X, y, counts, sample_weight, feats, supports_weight, checked=False):
    """Fit one member on its bootstrap sample, given as counts per training sample.

    ``checked``: the member is one of our trees, whose parameters the ensemble has
    validated, so it is fitted by ``_fit_member`` (no per-member validation of the arrays
    the ensemble validated once).
    """
    keep = counts > 0
    everything = bool(keep.all())
    if supports_weight:
        if sample_weight is None:  # unit weights: the counts themselves (no N-long ones)
            w = (counts if everything else counts[keep]).astype(np.float64)
        else:
            w = counts * sample_weight if everything else counts[keep] * sample_weight[keep]
        yk = y if everything else y[keep]
        if checked and feats is None:
            # Our trees read the bootstrap sample's rows of X in place (no N x D copy).
            rows = None if everything else np.flatnonzero(keep)
            return estimator._fit_member(X, yk, w, rows=rows)
        if feats is not None:
            Xk = X[np.ix_(keep, feats)]
        else:
            Xk = X if everything else X[keep]
        if checked:
            return estimator._fit_member(Xk, yk, w)
        return estimator.fit(Xk, yk, sample_weight=w)
    # Without weights the bootstrap is the repeated sample itself.
    rep = np.repeat(np.flatnonzero(keep), counts[keep])
    Xr = X[np.ix_(rep, feats)] if feats is not None else X[rep]
    return estimator.fit(Xr, y[rep])


def _supports_sample_weight(estimator) -> bool:
    import inspect

    return "sample_weight" in inspect.signature(estimator.fit).parameters


class _BaseBagging(BaseEstimator):
    """Shared fitting of the members on bootstrap samples and their out-of-bag bookkeeping."""

    def _make_estimator(self, seed):  # pragma: no cover - overridden
        raise NotImplementedError

    def _draws(self, n_samples, n_features, rng, counts=True):
        """Each member's bootstrap (counts of each sample) and features, one member at a time,
        in the order they are drawn from ``rng`` (``counts=False``: the same draws, the
        counts not formed, ``None`` in their place)."""
        ms = self._max_samples()
        n_draw = ms if isinstance(ms, Integral) else max(1, round(ms * n_samples))
        mf = getattr(self, "max_features_bag", 1.0)
        n_feat = mf if isinstance(mf, Integral) else max(1, round(mf * n_features))
        n_feat = min(n_feat, n_features)
        for _ in range(self.n_estimators):
            c = None
            if self.bootstrap:
                drawn = rng.integers(0, n_samples, n_draw)
                if counts:
                    c = np.bincount(drawn, minlength=n_samples)
                # not held by the suspended generator while the member is fitted (N int64)
                del drawn
            else:
                drawn = rng.choice(n_samples, min(n_draw, n_samples), replace=False)
                if counts:
                    c = np.zeros(n_samples, dtype=np.int64)
                    c[drawn] = 1
                del drawn
            f = None if n_feat == n_features else np.sort(rng.choice(n_features, n_feat, False))
            yield c, f

    def _replayed_draws(self):
        """The fitted members' bootstraps and features, drawn again from the generator's
        state at the start of ``fit`` (kept instead of an ``N``-length array per member)."""
        kind, state, n_samples, n_features = self._draw_start
        rng = np.random.Generator(kind())
        rng.bit_generator.state = state
        return self._draws(n_samples, n_features, rng)

    def _max_samples(self):
        return 1.0

    def _fit_members(self, X, y, sample_weight):
        n_samples, n_features = X.shape
        # None stays None (unit weights): the members' weights are then their bootstrap
        # counts, with no N-long array of ones held through the fit
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, X)
        rng = check_random_state(self.random_state)
        # The bootstrap counts (N per member) are drawn again one member at a time as the
        # members are fitted, and again for the out-of-bag bookkeeping, from the generator's
        # state here: holding every member's counts cost N bytes or more per member for the
        # whole fit and after it (2 MB for 20 members at N = 1e5). This first pass only
        # advances the generator to the members' seeds, as drawing them all did.
        self._draw_start = (
            type(rng.bit_generator),
            rng.bit_generator.state,
            n_samples,
            n_features,
        )
        feats = [f for _, f in self._draws(n_samples, n_features, rng, counts=False)]
        seeds = rng.integers(0, np.iinfo(np.int32).max, self.n_estimators)
        members = [self._make_estimator(int(s)) for s in seeds]
        supports = _supports_sample_weight(members[0])
        if (
            not supports
            and sample_weight is not None
            and not np.all(sample_weight == sample_weight[0])
        ):
            raise ValueError(
                f"The estimator {type(members[0]).__name__} does not take sample_weight."
            )
        # Our trees are fitted without re-validating what this fit validated: the
        # members share their hyperparameters, so checking the first checks them all.
        checked = isinstance(members[0], _BaseTree) and y.ndim == 1
        if checked:
            members[0]._validate_params()
        self.estimators_ = Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(_fit_one)(m, X, y, c, sample_weight, f, supports, checked)
            for m, (c, f) in zip(members, self._replayed_draws(), strict=True)
        )
        self.estimators_features_ = [np.arange(n_features) if f is None else f for f in feats]
        return self

    def _bootstrap_counts(self) -> list[np.ndarray]:
        """Each member's count of each training sample in its bootstrap."""
        return [c for c, _ in self._replayed_draws()]

    @property
    def estimators_samples_(self) -> list[np.ndarray]:
        """Indices of the distinct training samples each member was fitted on."""
        check_is_fitted(self)
        return [np.flatnonzero(c) for c, _ in self._replayed_draws()]

    def _oob_mask(self) -> np.ndarray:
        """(n_estimators, n_samples): sample left out of the member's bootstrap."""
        return np.array([c == 0 for c, _ in self._replayed_draws()])


class BaggingClassifier(BaseClassifier, _BaseBagging):
    """Bootstrap aggregation of classifiers: the members' class probabilities averaged.

    Parameters
    ----------
    estimator : estimator or None, default=None
        The member, cloned for each bootstrap sample; ``None`` is a
        :class:`~mathlearn.tree.DecisionTreeClassifier`.
    n_estimators : int, default=10
        Number of members ``L``.
    max_samples : int or float, default=1.0
        Size of each bootstrap sample (a float is a fraction of ``n_samples``).
    max_features : int or float, default=1.0
        Number of features (drawn without replacement) each member sees.
    bootstrap : bool, default=True
        Draw samples with replacement; ``False`` draws subsets without replacement.
    oob_score : bool, default=False
        Estimate the accuracy on the samples each member did not see.
    n_jobs : int or None, default=None
        Members fitted in parallel by joblib threads.
    random_state : int, Generator, RandomState or None, default=None

    Attributes
    ----------
    estimators_ : list of estimators
    estimators_samples_ : list of ndarray
        Distinct sample indices in each bootstrap.
    estimators_features_ : list of ndarray
    classes_ : ndarray of shape (n_classes,)
    oob_score_ : float
        Accuracy of the out-of-bag predictions (samples never left out are skipped).
    oob_decision_function_ : ndarray of shape (n_samples, n_classes)
        Averaged out-of-bag probabilities (NaN for samples in every bootstrap).

    See Also
    --------
    BaggingRegressor : The regression version.
    RandomForestClassifier : Bagged trees with random feature subsets at each node.

    Notes
    -----
    Bagging (PRML §14.2, Stuttgart "Introduction to Machine Learning" §2.6) fits ``L``
    copies of a model to bootstrap samples ``D_l`` (``N`` draws with replacement) and
    averages them, ``y_COM(x) = 1/L sum_l y_l(x)``; if the members' errors are uncorrelated
    with zero mean the committee's expected squared error is ``1/L`` of the average member's
    (PRML eq. 14.14). A bootstrap sample contains each point with probability
    ``1 - (1 - 1/N)^N -> 1 - 1/e ~ 0.632``, so each member leaves about 37% of the data
    out of bag, where it can be scored without a separate validation set.

    Cost: ``L`` fits of the member on about ``0.632 N`` distinct samples (weighted by their
    counts) plus ``O(L N)`` for the draws; memory: one member's fit and the copy of its
    sample (``O(N D)``) at a time per job (our trees with every feature read the sample's
    rows of ``X`` in place: no copy), the fitted members, and the bootstrap counts (``L N``
    bytes).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.ensemble import BaggingClassifier
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    >>> clf = BaggingClassifier(n_estimators=5, random_state=0).fit(X, [0, 0, 0, 1, 1, 1])
    >>> clf.predict([[0.5], [4.5]])
    array([0, 1])
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "max_samples": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
        ],
        "max_features": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
        ],
        "bootstrap": ["boolean"],
        "oob_score": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }
    _common_test_params = {"n_estimators": 5}
    _expected_failed_checks = {
        "check_sample_weight_equivalence_on_dense_data": (
            "the bootstrap draws N indices of the data given, so repeating a sample changes "
            "every draw; weights are not repetitions for a randomised committee"
        ),
    }

    def __init__(
        self,
        estimator=None,
        *,
        n_estimators: int = 10,
        max_samples: int | float = 1.0,
        max_features: int | float = 1.0,
        bootstrap: bool = True,
        oob_score: bool = False,
        n_jobs: int | None = None,
        random_state=None,
    ):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state

    @property
    def max_features_bag(self):
        return self.max_features

    def _max_samples(self):
        return self.max_samples

    def _make_estimator(self, seed):
        from ..tree import DecisionTreeClassifier

        est = clone(self.estimator) if self.estimator is not None else DecisionTreeClassifier()
        if "random_state" in est.get_params(deep=False):
            est.set_params(random_state=seed)
        return est

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit the members on bootstrap samples.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Multiplies the bootstrap counts (members must accept ``sample_weight``).

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        y_idx = self._encode_labels(y)
        self._fit_members(X, y_idx, sample_weight)
        if self.oob_score:
            self._set_oob(X, y_idx)
        return self

    def _member_proba(self, est, X, feats):
        K = self.classes_.shape[0]
        out = np.zeros((X.shape[0], K))
        Xf = X[:, feats]
        cols = np.asarray(est.classes_, dtype=np.intp)
        if hasattr(est, "predict_proba"):
            out[:, cols] = est.predict_proba(Xf)
        else:
            out[np.arange(X.shape[0]), np.asarray(est.predict(Xf), dtype=np.intp)] = 1.0
        return out

    def _set_oob(self, X, y_idx):
        oob = self._oob_mask()
        acc = np.zeros((X.shape[0], self.classes_.shape[0]))
        for est, feats, m in zip(self.estimators_, self.estimators_features_, oob, strict=True):
            if m.any():
                acc[m] += self._member_proba(est, X[m], feats)
        n_oob = oob.sum(axis=0)
        seen = n_oob > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            self.oob_decision_function_ = acc / n_oob[:, None]
        if not seen.any():
            raise ValueError("No sample was left out of every bootstrap; raise n_estimators.")
        pred = np.argmax(self.oob_decision_function_[seen], axis=1)
        self.oob_score_ = float(np.mean(pred == y_idx[seen]))

    def predict_proba(self, X) -> np.ndarray:
        """Average of the members' class probabilities (votes for members without them)."""
        check_is_fitted(self)
        X = self._validate_X_predict(X)
        total = np.zeros((X.shape[0], self.classes_.shape[0]))
        for est, feats in zip(self.estimators_, self.estimators_features_, strict=True):
            total += self._member_proba(est, X, feats)
        return total / len(self.estimators_)

    def predict_log_proba(self, X) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X) -> np.ndarray:
        """The class with the largest averaged probability."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    @available_if(lambda self: False)
    def decision_function(self, X):  # pragma: no cover - averaged probabilities only
        raise AttributeError


class BaggingRegressor(RegressorMixin, _BaseBagging):
    """Bootstrap aggregation of regressors: the members' predictions averaged.

    Parameters
    ----------
    estimator : estimator or None, default=None
        ``None`` is a :class:`~mathlearn.tree.DecisionTreeRegressor`.
    n_estimators : int, default=10
    max_samples : int or float, default=1.0
    max_features : int or float, default=1.0
    bootstrap : bool, default=True
    oob_score : bool, default=False
        Estimate R² on the samples each member did not see.
    n_jobs : int or None, default=None
    random_state : int, Generator, RandomState or None, default=None
        See :class:`BaggingClassifier`.

    Attributes
    ----------
    estimators_ : list of estimators
    estimators_samples_ : list of ndarray
    estimators_features_ : list of ndarray
    oob_score_ : float
    oob_prediction_ : ndarray of shape (n_samples,)

    See Also
    --------
    BaggingClassifier, RandomForestRegressor

    Notes
    -----
    ``y_COM(x) = 1/L sum_l y_l(x)`` over models fitted on bootstrap samples (PRML §14.2,
    eqs. 14.7-14.14; Stuttgart "Introduction to Machine Learning" §2.6): averaging reduces
    the variance part of the error and leaves the bias. Cost as for
    :class:`BaggingClassifier`.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.ensemble import BaggingRegressor
    >>> X = np.arange(8.0)[:, None]
    >>> reg = BaggingRegressor(n_estimators=20, random_state=0).fit(X, 2 * X.ravel())
    >>> bool(abs(reg.predict([[3.0]])[0] - 6.0) < 1.5)
    True
    """

    _parameter_constraints = BaggingClassifier._parameter_constraints
    _common_test_params = {"n_estimators": 5}
    _expected_failed_checks = {
        "check_sample_weight_equivalence_on_dense_data": (
            "the bootstrap draws N indices of the data given, so repeating a sample changes "
            "every draw; weights are not repetitions for a randomised committee"
        ),
    }

    def __init__(
        self,
        estimator=None,
        *,
        n_estimators: int = 10,
        max_samples: int | float = 1.0,
        max_features: int | float = 1.0,
        bootstrap: bool = True,
        oob_score: bool = False,
        n_jobs: int | None = None,
        random_state=None,
    ):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state

    @property
    def max_features_bag(self):
        return self.max_features

    def _max_samples(self):
        return self.max_samples

    def _make_estimator(self, seed):
        from ..tree import DecisionTreeRegressor

        est = clone(self.estimator) if self.estimator is not None else DecisionTreeRegressor()
        if "random_state" in est.get_params(deep=False):
            est.set_params(random_state=seed)
        return est

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit the members on bootstrap samples.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        self._fit_members(X, y.astype(np.float64), sample_weight)
        if self.oob_score:
            oob = self._oob_mask()
            acc = np.zeros(X.shape[0])
            for est, f, m in zip(self.estimators_, self.estimators_features_, oob, strict=True):
                if m.any():
                    acc[m] += est.predict(X[m][:, f])
            n_oob = oob.sum(axis=0)
            seen = n_oob > 0
            if not seen.any():
                raise ValueError("No sample was left out of every bootstrap; raise n_estimators.")
            with np.errstate(invalid="ignore", divide="ignore"):
                self.oob_prediction_ = acc / n_oob
            r = y[seen] - self.oob_prediction_[seen]
            d = y[seen] - y[seen].mean()
            self.oob_score_ = float(1.0 - (r @ r) / (d @ d)) if d @ d > 0 else 0.0
        return self

    def predict(self, X) -> np.ndarray:
        """Average of the members' predictions, shape (n_samples,)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return np.mean(
            [
                e.predict(X[:, f])
                for e, f in zip(self.estimators_, self.estimators_features_, strict=True)
            ],
            axis=0,
        )
