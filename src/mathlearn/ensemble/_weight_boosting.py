"""AdaBoost: discrete SAMME boosting of weak classifiers."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from ..base import BaseClassifier, _fit_context, check_is_fitted, clone
from ..utils._param_validation import HasMethods, Interval
from ..utils.validation import check_random_state, check_sample_weight, validate_data

__all__ = ["AdaBoostClassifier"]


def _reweight(w: np.ndarray, alpha: float, miss: np.ndarray) -> np.ndarray:
    """``w_n exp(alpha I(miss_n))``, rescaled to sum 1 once its largest entry passes 1e150
    (rescaling changes no epsilon; it keeps the weights finite).

    Where ``max(w) exp(alpha)`` would overflow (a round with a tiny weighted error, or a
    large ``learning_rate``, gives an ``alpha`` of hundreds), the same weights are formed
    times ``exp(-alpha) / max(w)``, ``w_n / max(w) exp(-alpha I(not miss_n))``, and rescaled
    to sum 1."""
    top = float(w.max())
    if top > 0.0 and math.log(top) + alpha > 700.0:
        w = (w / top) * np.exp(-alpha * ~miss)
        return w / w.sum()
    w = w * np.exp(alpha * miss)
    top = float(w.max())
    if top > 1e150:
        w = w / top  # first to at most 1, so that the sum of N of them cannot overflow
        w = w / w.sum()
    return w


class AdaBoostClassifier(BaseClassifier):
    """AdaBoost (discrete SAMME): weak learners fitted in turn to reweighted data.

    Parameters
    ----------
    estimator : classifier or None, default=None
        The weak learner; it must accept ``sample_weight``. ``None`` is a decision stump
        (:class:`~mathlearn.tree.DecisionTreeClassifier` with ``max_depth=1``).
    n_estimators : int, default=50
        Largest number of rounds ``M``.
    learning_rate : float, default=1.0
        Multiplies every ``alpha_m``.
    random_state : int, Generator, RandomState or None, default=None
        Seeds learners that have a ``random_state``.

    Attributes
    ----------
    estimators_ : list of classifiers
    estimator_weights_ : ndarray of shape (n_estimators_,)
        ``alpha_m``.
    estimator_errors_ : ndarray of shape (n_estimators_,)
        Weighted error ``epsilon_m`` of each round.
    sample_weights_ : ndarray of shape (n_rounds + 1, n_samples)
        ``n_rounds`` is ``n_estimators_``. The unnormalised weights ``w^(m)`` before round
        ``m`` (row 0: the initial weights, ``1/N`` times ``sample_weight``) and after the
        last round; regenerated on access from what the fit keeps (the initial weights and
        one bit per sample and round).
    n_estimators_ : int
    classes_ : ndarray of shape (n_classes,)

    See Also
    --------
    GradientBoostingClassifier : Boosting as gradient descent on a differentiable loss.
    BaggingClassifier : Members fitted independently on bootstrap samples.

    Notes
    -----
    PRML §14.3 (Stuttgart "Introduction to Machine Learning" §2.6): with weights
    ``w_n^(1) = 1/N``, round ``m`` fits ``y_m`` minimising the weighted error, then

    .. math::

        \\epsilon_m = \\frac{\\sum_n w_n^{(m)} I(y_m(x_n) \\ne t_n)}{\\sum_n w_n^{(m)}},
        \\quad \\alpha_m = \\ln\\frac{1 - \\epsilon_m}{\\epsilon_m} + \\ln(K - 1),
        \\quad w_n^{(m+1)} = w_n^{(m)} \\exp(\\alpha_m I(y_m(x_n) \\ne t_n)),

    and the committee predicts ``argmax_k sum_m alpha_m I(y_m(x) = k)``, for two classes
    ``sign(sum_m alpha_m y_m(x))`` (PRML eqs. 14.15-14.19; ``ln(K - 1)`` is SAMME's term, 0
    for two classes). The weights are those of the exponential error
    ``E = sum_n exp(-t_n f_m(x_n))`` with ``f_m = 1/2 sum_l alpha_l y_l``: normalised,
    ``w^(m+1)`` is proportional to ``exp(-t_n f_m(x_n))`` (PRML eq. 14.22).

    Guards: if ``epsilon_m = 0`` the learner is perfect on the weighted sample; its ``alpha``
    would be infinite, so it gets ``1 + sum_{l<m} alpha_l`` (it decides every prediction) and
    boosting stops. If ``epsilon_m >= 1 - 1/K`` the learner is no better than chance: it is
    dropped and boosting stops (an error when it is the first).

    Cost: ``M`` rounds, each a weighted fit of the learner and a prediction on the ``N``
    training points; with the default stump, ``O(D N log N)`` to sort the features and
    ``O(D N K)`` to scan them per round. Memory: one learner's fit and the weight history
    as ``M N`` bits; with the default stumps, the features' sort order (4 bytes per entry)
    is made once and read by every round without a copy, so a round adds ``O(N)``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.ensemble import AdaBoostClassifier
    >>> X = np.arange(1.0, 6.0)[:, None]
    >>> clf = AdaBoostClassifier(n_estimators=3).fit(X, [1, 1, -1, -1, 1])
    >>> clf.predict(X)
    array([ 1,  1, -1, -1,  1])
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }
    _common_test_params = {"n_estimators": 10}
    _expected_failed_checks = {
        "check_sample_weight_equivalence_on_dense_data": (
            "the default stumps place thresholds at midpoints that zero-weight samples "
            "still move (see DecisionTreeClassifier)"
        ),
    }

    def __init__(
        self,
        estimator=None,
        *,
        n_estimators: int = 50,
        learning_rate: float = 1.0,
        random_state=None,
    ):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.random_state = random_state

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Run up to ``n_estimators`` boosting rounds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
            Initial weights (times ``1/N``).

        Returns
        -------
        self
        """
        from ..tree import DecisionTreeClassifier
        from ..tree._tree import presort

        X, y = validate_data(self, X, y, dtype=np.float64)
        y_idx = self._encode_labels(y)
        K = self.classes_.shape[0]
        n = X.shape[0]
        w = check_sample_weight(sample_weight, X) / n
        rng = check_random_state(self.random_state)
        base = (
            self.estimator if self.estimator is not None else DecisionTreeClassifier(max_depth=1)
        )
        estimators, alphas, errors = [], [], []
        # The weight history is kept as what regenerates it exactly (see sample_weights_):
        # the initial weights, and per round the misclassified samples as bits and whether
        # the weights were updated. M x N floats would be 40 MB at 1e5 x 50 rounds.
        w0, miss_bits, updated = w, [], []
        # Our trees are fitted without re-validating X and y each round, and all rounds
        # share one sort of the features (the rounds differ only in the weights).
        member = isinstance(base, DecisionTreeClassifier)
        order = None
        if member:
            base._validate_params()
            if base.splitter == "best":
                order = presort(X, compact=True)
        for m in range(self.n_estimators):
            est = clone(base)
            if "random_state" in est.get_params(deep=False):
                est.set_params(random_state=int(rng.integers(np.iinfo(np.int32).max)))
            if member:
                est._fit_member(X, y_idx, w, presorted_order=order)
            else:
                est.fit(X, y_idx, sample_weight=w)
            miss = np.asarray(est.predict(X)) != y_idx
            eps = float(w[miss].sum() / w.sum())
            if eps >= 1.0 - 1.0 / K:
                if m == 0:
                    raise ValueError(
                        f"The first weak learner has weighted error {eps:.3g} >= 1 - 1/K = "
                        f"{1 - 1 / K:.3g}: it is no better than chance, so boosting cannot start."
                    )
                break
            estimators.append(est)
            errors.append(eps)
            miss_bits.append(np.packbits(miss))
            if eps <= 0.0:
                alphas.append(1.0 + float(np.sum(alphas)))
                updated.append(False)
                break
            alpha = self.learning_rate * (np.log((1.0 - eps) / eps) + np.log(K - 1.0))
            alphas.append(alpha)
            updated.append(True)
            w = _reweight(w, alpha, miss)
        self.estimators_ = estimators
        self.estimator_weights_ = np.asarray(alphas)
        self.estimator_errors_ = np.asarray(errors)
        self._weight_history = (w0, np.array(miss_bits, dtype=np.uint8).reshape(len(alphas), -1),
                                np.array(updated, dtype=bool))  # fmt: skip
        self.n_estimators_ = len(estimators)
        return self

    @property
    def sample_weights_(self) -> np.ndarray:
        """The unnormalised weights ``w^(m)`` before round ``m``, one row per round (row 0:
        the initial weights, ``1/N`` times ``sample_weight``) and one after the last round.

        Regenerated on access from the initial weights, the rounds' ``alpha_m`` and their
        misclassified samples (kept as bits), by the fit's own operations in the same order,
        so the values are those the fit used, bit for bit.
        """
        try:
            w, bits, updated = self._weight_history
        except AttributeError:
            raise AttributeError("sample_weights_ is set by fit") from None
        n = w.shape[0]
        out = np.empty((updated.shape[0] + 1, n))
        out[0] = w
        for m, (alpha, upd) in enumerate(zip(self.estimator_weights_, updated, strict=True)):
            if upd:
                w = _reweight(w, alpha, np.unpackbits(bits[m], count=n).astype(bool))
            out[m + 1] = w
        return out

    def _votes(self, X, n_rounds=None):
        K = self.classes_.shape[0]
        votes = np.zeros((X.shape[0], K))
        for est, a in list(zip(self.estimators_, self.estimator_weights_, strict=True))[:n_rounds]:
            votes[np.arange(X.shape[0]), np.asarray(est.predict(X), dtype=np.intp)] += a
        return votes

    def _joint_log_likelihood(self, X):
        # Votes as unnormalised log scores: predict is the weighted majority, and for two
        # classes decision_function is sum_m alpha_m y_m(x) with y_m in {-1, +1}.
        return self._votes(X)

    def staged_decision_function(self, X):
        """Committee scores after each round (see :meth:`decision_function`).

        Yields
        ------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        X = self._validate_X_predict(X)
        K = self.classes_.shape[0]
        votes = np.zeros((X.shape[0], K))
        for est, a in zip(self.estimators_, self.estimator_weights_, strict=True):
            votes[np.arange(X.shape[0]), np.asarray(est.predict(X), dtype=np.intp)] += a
            yield votes[:, 1] - votes[:, 0] if K == 2 else votes.copy()

    def staged_predict(self, X):
        """Committee predictions after each round.

        Yields
        ------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = self._validate_X_predict(X)
        K = self.classes_.shape[0]
        votes = np.zeros((X.shape[0], K))
        for est, a in zip(self.estimators_, self.estimator_weights_, strict=True):
            votes[np.arange(X.shape[0]), np.asarray(est.predict(X), dtype=np.intp)] += a
            yield self.classes_[np.argmax(votes, axis=1)]
