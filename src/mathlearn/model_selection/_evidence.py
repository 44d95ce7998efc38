"""Bayesian model selection by the marginal likelihood."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from scipy.special import logsumexp
from sklearn.model_selection import ParameterGrid

from ..base import BaseEstimator, RegressorMixin, _fit_context, check_is_fitted, clone
from ..utils._param_validation import HasMethods
from ..utils.validation import validate_data

__all__ = ["BayesianModelSelection"]


def _log_evidence(fitted):
    """``log_evidence_`` of a fitted model, or of the last step of a fitted pipeline."""
    final = fitted.steps[-1][1] if hasattr(fitted, "steps") else fitted
    if not hasattr(final, "log_evidence_"):
        raise TypeError(
            f"{type(final).__name__} has no log_evidence_; Bayesian model selection needs a "
            "model with a marginal likelihood (e.g. BayesianLinearRegression)."
        )
    return float(final.log_evidence_)


class BayesianModelSelection(RegressorMixin, BaseEstimator):
    """Choose among candidate models by their evidence ``p(D | M_k)``.

    Each candidate is ``estimator`` with one setting of ``param_grid`` (e.g. the degree of a
    ``PolynomialBasis`` or the width of a ``GaussianBasis`` in a pipeline ending in
    ``BayesianLinearRegression``). Every candidate is fitted to all the data; the posterior
    over models is ``p(M_k | D) ∝ p(M_k) p(D | M_k)`` and the MAP model is kept.

    Parameters
    ----------
    estimator : estimator or Pipeline
        A model exposing ``log_evidence_`` after ``fit`` (or a pipeline whose last step
        does). Cloned, never modified.
    param_grid : dict of str to list, or list of such dicts
        Candidate settings, as for scikit-learn's ``GridSearchCV``.
    model_prior : array-like of shape (n_candidates,), default=None
        Prior probabilities ``p(M_k)``; default uniform (then the MAP model is the
        maximum-evidence model).

    Attributes
    ----------
    candidates_ : list of dict
        The settings, in order.
    log_evidences_ : ndarray of shape (n_candidates,)
        ``ln p(D | M_k)`` of each candidate: the evidence curve to plot.
    model_posterior_ : ndarray of shape (n_candidates,)
        ``p(M_k | D)``.
    best_index_ : int
    best_params_ : dict
    best_estimator_ : estimator
        The MAP model, fitted to all the data.
    log_evidence_ : float
        Evidence of the MAP model.
    model_averaged_log_evidence_ : float
        ``ln p(D) = ln sum_k p(M_k) p(D | M_k)``, the evidence of the model-averaged
        hypothesis (Imperial "Mathematics for Inference and Machine Learning" §1.7.4, eq. 1.200):
        the normaliser of ``model_posterior_``.
    n_features_in_ : int

    See Also
    --------
    mathlearn.ensemble.BayesianModelAveraging
        Averaging instead of choosing.
    mathlearn.model_selection.cross_validate_loss
        Choosing by held-out loss.

    Notes
    -----
    Imperial "Mathematics for Inference and Machine Learning" §1.7.2, eq. 1.192–1.197 (MAP model
    under a model prior; uniform prior gives the maximum-evidence model), eq. 1.198–1.199 (Bayes
    factors: ``exp`` of differences of ``log_evidences_``) and the closed-form evidence of Bayesian
    linear regression, eq. 1.201–1.207 (§1.7.5). With hyperparameters estimated by evidence
    maximisation the criterion is the type-II maximum likelihood of each model.

    Complexity: with ``C`` candidate settings, ``fit`` costs ``C`` fits of the estimator on
    all ``N`` rows (each then read for its ``log_evidence_``) and ``O(C)`` for the posterior.
    All ``C`` fitted models are held until ``fit`` ends; only the MAP model is kept.
    ``predict`` costs one ``predict`` of the MAP model.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from mathlearn.datasets import make_sinusoidal
    >>> from mathlearn.linear_model import BayesianLinearRegression
    >>> from mathlearn.preprocessing import PolynomialBasis
    >>> X, y = make_sinusoidal(30, random_state=0)
    >>> pipe = make_pipeline(PolynomialBasis(), BayesianLinearRegression(fit_intercept=False))
    >>> sel = BayesianModelSelection(pipe, {"polynomialbasis__degree": list(range(8))})
    >>> sel.fit(X, y).best_params_["polynomialbasis__degree"] >= 3
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "param_grid": [dict, list, None],
        "model_prior": ["array-like", None],
    }

    def __init__(self, estimator=None, param_grid=None, *, model_prior=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.model_prior = model_prior

    @_fit_context
    def fit(self, X, y):
        """Fit every candidate and keep the MAP model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        if self.estimator is None:
            from ..linear_model import BayesianLinearRegression

            estimator = BayesianLinearRegression()
        else:
            estimator = self.estimator
        grid = {} if self.param_grid is None else self.param_grid
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        candidates = list(ParameterGrid(grid))
        k = len(candidates)
        if self.model_prior is None:
            log_prior = np.full(k, -np.log(k))
        else:
            prior = np.asarray(self.model_prior, dtype=float)
            if prior.shape != (k,) or np.any(prior < 0) or not np.isclose(prior.sum(), 1.0):
                raise ValueError(
                    f"model_prior must be {k} non-negative probabilities summing to 1; "
                    f"got {self.model_prior!r}."
                )
            with np.errstate(divide="ignore"):
                log_prior = np.log(prior)
        log_ev = np.empty(k)
        fitted = []
        for i, params in enumerate(candidates):
            model = clone(estimator).set_params(**params).fit(X, y)
            log_ev[i] = _log_evidence(model)
            fitted.append(model)
        log_post = log_ev + log_prior
        log_total = float(logsumexp(log_post))
        log_post -= log_total
        self.candidates_ = candidates
        self.log_evidences_ = log_ev
        self.model_posterior_ = np.exp(log_post)
        self.best_index_ = int(np.argmax(log_post))
        self.best_params_ = candidates[self.best_index_]
        self.best_estimator_ = fitted[self.best_index_]
        self.log_evidence_ = float(log_ev[self.best_index_])
        self.model_averaged_log_evidence_ = log_total
        return self

    def predict(self, X, **predict_params):
        """Predict with the MAP model (``return_std=True`` is passed through)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.best_estimator_.predict(X, **predict_params)
