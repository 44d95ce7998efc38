"""Helpers shared by the one-vs-rest and one-vs-one classifiers."""

from __future__ import annotations

import numpy as np
from sklearn.base import clone


def make_binary_estimator(estimator):
    """A fresh copy of the base estimator (logistic regression when ``None``)."""
    if estimator is None:
        from ..linear_model import LogisticRegression

        return LogisticRegression()
    return clone(estimator)


def fit_binary(estimator, X, y01, sample_weight):
    """Fit a copy of ``estimator`` on 0/1 labels, passing weights only when given."""
    est = make_binary_estimator(estimator)
    if sample_weight is None:
        return est.fit(X, y01)
    return est.fit(X, y01, sample_weight=sample_weight)


def binary_score(est, X) -> np.ndarray:
    """Confidence of class 1: ``decision_function`` if there is one, else ``P(1 | x)``."""
    if hasattr(est, "decision_function"):
        s = np.asarray(est.decision_function(X), dtype=float)
        return s.ravel() if s.ndim == 2 and s.shape[1] == 1 else s
    if hasattr(est, "predict_proba"):
        return np.asarray(est.predict_proba(X), dtype=float)[:, 1]
    return np.asarray(est.predict(X), dtype=float)


def base_has(name):
    """For ``available_if``: the base estimator (logistic regression by default) has ``name``."""

    def check(self):
        if hasattr(self, "estimators_"):
            return hasattr(self.estimators_[0], name)
        return hasattr(make_binary_estimator(self.estimator), name)

    return check
