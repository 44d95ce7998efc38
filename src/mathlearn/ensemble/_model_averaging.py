"""Bayesian model averaging over candidate models weighted by their evidence."""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import ParameterGrid

from ..base import BaseEstimator, RegressorMixin, _fit_context, check_is_fitted, clone
from ..model_selection._evidence import _log_evidence
from ..utils._param_validation import HasMethods
from ..utils.extmath import logsumexp
from ..utils.validation import validate_data

__all__ = ["BayesianModelAveraging"]


class BayesianModelAveraging(RegressorMixin, BaseEstimator):
    """Average the predictions of candidate models weighted by their posterior probabilities.

    Parameters
    ----------
    estimator : estimator, Pipeline or None, default=None
        A model exposing ``log_evidence_`` after ``fit`` (or a pipeline whose last step
        does), e.g. :class:`~mathlearn.linear_model.BayesianLinearRegression` (the default).
    param_grid : dict of str to list, or list of such dicts, default=None
        The candidates ``M_k``: one setting each, as for
        :class:`~mathlearn.model_selection.BayesianModelSelection`.
    model_prior : array-like of shape (n_candidates,), default=None
        ``p(M_k)``; uniform by default.

    Attributes
    ----------
    candidates_ : list of dict
    estimators_ : list of estimators
        Every candidate fitted to all the data.
    log_evidences_ : ndarray of shape (n_candidates,)
        ``ln p(D | M_k)``.
    model_posterior_ : ndarray of shape (n_candidates,)
        ``p(M_k | D)``, the averaging weights.
    log_evidence_ : float
        ``ln p(D) = ln sum_k p(M_k) p(D | M_k)``.
    n_features_in_ : int

    See Also
    --------
    mathlearn.model_selection.BayesianModelSelection : Keeps only the MAP model.
    StackingRegressor : Combination weights fitted to out-of-fold predictions.

    Notes
    -----
    Bayesian model averaging (Stuttgart "Introduction to Machine Learning" §2.6, slide 7:14;
    Imperial "Mathematics for Inference and Machine Learning" eq. 1.200; PRML §1.5.4, §3.4)
    does not choose a model but integrates over them:

    .. math::

        p(y \\mid x, D) = \\sum_k p(y \\mid x, M_k, D)\\, p(M_k \\mid D), \\qquad
        p(M_k \\mid D) = \\frac{p(M_k)\\, p(D \\mid M_k)}{\\sum_l p(M_l)\\, p(D \\mid M_l)},

    with ``p(D | M_k)`` each candidate's evidence (marginal likelihood). The predictive
    mean is ``mu(x) = sum_k p_k mu_k(x)``, and, the predictive being a mixture, its variance
    is ``sum_k p_k (sigma_k^2(x) + mu_k(x)^2) - mu(x)^2`` (within-model plus between-model
    spread). The weights are computed as ``exp(log p_k - logsumexp)`` so evidences of any
    magnitude are safe.

    Complexity: with ``C`` candidate settings, ``fit`` costs ``C`` fits of the estimator on
    all ``N`` rows (each then read for its ``log_evidence_``) and ``O(C)`` for the posterior;
    all ``C`` fitted models are kept. ``predict`` of ``M`` rows costs one ``predict`` of
    every candidate with a non-zero posterior weight (at most ``C``) and ``O(C M)`` for the
    weighted sum, in ``O(M)`` memory; with ``return_std=True`` the candidates' means and
    standard deviations are held as two ``C x M`` arrays.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from mathlearn.datasets import make_sinusoidal
    >>> from mathlearn.ensemble import BayesianModelAveraging
    >>> from mathlearn.linear_model import BayesianLinearRegression
    >>> from mathlearn.preprocessing import PolynomialBasis
    >>> X, y = make_sinusoidal(30, random_state=0)
    >>> pipe = make_pipeline(PolynomialBasis(), BayesianLinearRegression(fit_intercept=False))
    >>> bma = BayesianModelAveraging(pipe, {"polynomialbasis__degree": [1, 3, 5]}).fit(X, y)
    >>> bool(abs(bma.model_posterior_.sum() - 1.0) < 1e-12)
    True
    """

    _parameter_constraints = {
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
        """Fit every candidate and compute the model posterior.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self : BayesianModelAveraging
        """
        if self.estimator is None:
            from ..linear_model import BayesianLinearRegression

            estimator = BayesianLinearRegression()
        else:
            estimator = self.estimator
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        candidates = list(ParameterGrid({} if self.param_grid is None else self.param_grid))
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
        self.estimators_ = [clone(estimator).set_params(**p).fit(X, y) for p in candidates]
        log_ev = np.array([_log_evidence(m) for m in self.estimators_])
        log_post = log_ev + log_prior
        total = float(logsumexp(log_post))
        self.candidates_ = candidates
        self.log_evidences_ = log_ev
        self.model_posterior_ = np.exp(log_post - total)
        self.log_evidence_ = total
        return self

    def predict(self, X, return_std: bool = False):
        """Model-averaged predictive mean, and optionally its standard deviation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
            Also return the mixture's standard deviation (the candidates must support
            ``predict(X, return_std=True)``).

        Returns
        -------
        mean : ndarray of shape (n_samples,)
        std : ndarray of shape (n_samples,)
            Only with ``return_std=True``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        w = self.model_posterior_
        keep = np.flatnonzero(w > 0)
        if not return_std:
            return sum(w[k] * np.asarray(self.estimators_[k].predict(X)) for k in keep)
        outs = [self.estimators_[k].predict(X, return_std=True) for k in keep]
        mus = np.array([np.asarray(o[0]) for o in outs])
        sds = np.array([np.asarray(o[1]) for o in outs])
        wk = w[keep][:, None]
        mean = np.sum(wk * mus, axis=0)
        # Mixture variance as within-model plus between-model spread, without cancellation.
        var = np.sum(wk * (sds**2 + (mus - mean) ** 2), axis=0)
        return mean, np.sqrt(var)
