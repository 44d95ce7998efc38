"""Estimator base classes.

mathlearn estimators inherit scikit-learn's public base classes, so they work with
``clone``, ``Pipeline``, ``GridSearchCV`` and the rest of the scikit-learn ecosystem. The
mixins are listed first in a class's bases, as scikit-learn requires.

``BaseEstimator`` is scikit-learn's, with hyperparameter validation from the class's
declared ``_parameter_constraints`` (:mod:`mathlearn.utils._param_validation`); decorate
``fit``-like methods with :func:`_fit_context` so they validate before they run.

``BaseClassifier`` holds what every classifier shares: label encoding (``classes_``), and
``predict``, ``predict_proba``, ``predict_log_proba`` and ``decision_function`` from a joint
log-likelihood ``log p(x, y = c)``.

``ProbabilisticRegressorMixin`` adds the probabilistic prediction API shared by the Bayesian
regressors: ``predict(X, return_std=...)``, ``predict_distribution`` and ``sample_y``.

``InformationCriterionMixin`` gives ``aic`` and ``bic`` to every likelihood-based estimator from
its log-likelihood and its number of free parameters.
"""

from __future__ import annotations

import functools
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator as _SklearnBaseEstimator
from sklearn.base import (
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    DensityMixin,
    RegressorMixin,
    TransformerMixin,
    clone,
)
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .utils._param_validation import validate_parameter_constraints
from .utils.extmath import logsumexp
from .utils.validation import check_random_state, validate_data

__all__ = [
    "BaseClassifier",
    "BaseEstimator",
    "ClassifierMixin",
    "ClusterMixin",
    "ComponentNamesMixin",
    "DensityMixin",
    "InformationCriterionMixin",
    "ProbabilisticRegressorMixin",
    "RegressorMixin",
    "TransformerMixin",
    "check_is_fitted",
    "clone",
]


# Hyperparameter settings that passed validation (see BaseEstimator._validate_params), at
# most _VALIDATED_MAX of them.
_VALIDATED: set = set()
_VALIDATED_MAX = 4096
_PLAIN = (int, float, str, bool, type(None))


def _plain(value) -> bool:
    if type(value) in _PLAIN:
        return True
    return type(value) is tuple and all(type(v) in _PLAIN for v in value)


class BaseEstimator(_SklearnBaseEstimator):
    """scikit-learn's ``BaseEstimator`` with declarative hyperparameter validation.

    A subclass lists, for each constructor argument, the forms it may take in
    ``_parameter_constraints`` (see :mod:`mathlearn.utils._param_validation`), and decorates
    ``fit``, ``partial_fit``, ``fit_transform`` and ``fit_predict`` with :func:`_fit_context`.
    Checks that depend on the data (``n_components <= n_features``) stay in ``fit``.

    See Also
    --------
    sklearn.base.BaseEstimator
        The scikit-learn base it extends.
    mathlearn.base.BaseClassifier
        Base for classifiers scored by a joint log-likelihood.

    Examples
    --------
    >>> from numbers import Real
    >>> from mathlearn.base import BaseEstimator, _fit_context
    >>> from mathlearn.utils._param_validation import Interval
    >>> class Shrink(BaseEstimator):
    ...     _parameter_constraints = {"alpha": [Interval(Real, 0, None, closed="left")]}
    ...     def __init__(self, alpha=1.0):
    ...         self.alpha = alpha
    ...     @_fit_context
    ...     def fit(self, X, y=None):
    ...         return self
    >>> Shrink(alpha=-1).fit([[0.0]])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    mathlearn.exceptions.InvalidParameterError: The 'alpha' parameter of Shrink must be ...
    """

    _parameter_constraints: ClassVar[dict] = {}

    @classmethod
    def _get_param_names(cls):
        """The constructor's parameter names, as scikit-learn's ``BaseEstimator`` lists them,
        read once per class (its ``inspect.signature`` costs about 12 us, paid by every
        ``get_params`` and so by every ``fit``)."""
        names = cls.__dict__.get("_param_names_read")
        if names is None:
            names = tuple(super()._get_param_names())
            cls._param_names_read = names
        return list(names)

    def _validate_params(self) -> None:
        """Check every hyperparameter against ``_parameter_constraints``.

        Raises
        ------
        mathlearn.exceptions.InvalidParameterError
            Naming the parameter, the estimator, the allowed forms and the value given.
        """
        params = self.get_params(deep=False)
        constraints = self._parameter_constraints
        # The check is a function of the values alone: a class's settings that passed once
        # pass again. Remembered only where every value is a plain number, string, None or
        # a tuple of them (with its type, so that 1, 1.0 and True differ): objects, which
        # may change in place or hold data, are checked every time.
        key = None
        if all(_plain(v) for v in params.values()):
            key = (type(self), id(constraints), tuple((k, type(v), v) for k, v in params.items()))
            if key in _VALIDATED:
                return
        validate_parameter_constraints(constraints, params, type(self).__name__)
        if key is not None and len(_VALIDATED) < _VALIDATED_MAX:
            _VALIDATED.add(key)


def _fit_context(fit_method):
    """Decorator for ``fit``-like methods: validate the hyperparameters, then run.

    Examples
    --------
    >>> from numbers import Integral
    >>> from mathlearn.utils._param_validation import Interval
    >>> class Counter(BaseEstimator):
    ...     _parameter_constraints = {"n": [Interval(Integral, 1, None, closed="left")]}
    ...     def __init__(self, n=1):
    ...         self.n = n
    ...     @_fit_context
    ...     def fit(self, X=None, y=None):
    ...         return self
    >>> Counter(n=0).fit()
    Traceback (most recent call last):
    ...
    mathlearn.exceptions.InvalidParameterError: The 'n' parameter of Counter must be an int \
in the range [1, inf). Got 0 instead.
    """

    @functools.wraps(fit_method)
    def wrapper(estimator, *args, **kwargs):
        estimator._validate_params()
        return fit_method(estimator, *args, **kwargs)

    return wrapper


class BaseClassifier(ClassifierMixin, BaseEstimator):
    """Base for classifiers that score each class by a joint log-likelihood.

    A subclass calls :meth:`_encode_labels` in ``fit`` (which sets ``classes_`` and returns
    the labels as indices ``0 .. C - 1``) and implements ``_joint_log_likelihood(X)`` on
    validated ``X``: an ``(n_samples, n_classes)`` array of ``log p(x, y = c)`` up to an
    additive constant per row (for a discriminative model, the log of unnormalised class
    probabilities). The base class then gives

    * ``predict``: ``classes_[argmax_c log p(x, c)]``;
    * ``predict_log_proba`` / ``predict_proba``: ``log p(c | x) = log p(x, c) -
      logsumexp_c' log p(x, c')``, computed stably;
    * ``decision_function``: for two classes the log-odds ``log p(c_1 | x) - log p(c_0 | x)``
      (positive favours ``classes_[1]``, scikit-learn's convention), shape (n_samples,);
      otherwise the log posteriors, shape (n_samples, n_classes).

    Classifiers whose scores are not log-likelihoods (an SVM) override ``decision_function``
    and ``predict``, and ``_has_predict_proba`` to say whether probabilities exist (for an
    SVM only after Platt scaling); without them ``predict_proba`` is absent, so
    ``hasattr(clf, "predict_proba")`` tells the truth. ``_validate_X_predict`` validates ``X``
    at prediction time (finite float64 with the fitted number of features); override it for
    other inputs.

    See Also
    --------
    mathlearn.base.BaseEstimator
        Hyperparameter validation for every estimator.
    sklearn.base.ClassifierMixin
        scikit-learn's classifier contract.

    Examples
    --------
    A nearest-class-mean classifier: unit-variance Gaussian log-likelihoods.

    >>> import numpy as np
    >>> from mathlearn.base import BaseClassifier, _fit_context
    >>> from mathlearn.utils.validation import validate_data
    >>> class NearestMean(BaseClassifier):
    ...     @_fit_context
    ...     def fit(self, X, y):
    ...         X, y = validate_data(self, X, y)
    ...         idx = self._encode_labels(y)
    ...         self.means_ = np.array([X[idx == c].mean(0) for c in range(len(self.classes_))])
    ...         return self
    ...     def _joint_log_likelihood(self, X):
    ...         return -0.5 * ((X[:, None, :] - self.means_) ** 2).sum(-1)
    >>> clf = NearestMean().fit([[0.0], [1.0], [4.0], [5.0]], ["a", "a", "b", "b"])
    >>> clf.predict([[0.2], [4.4]]).tolist(), clf.predict_proba([[2.5]]).round(6).tolist()
    (['a', 'b'], [[0.5, 0.5]])
    """

    def _has_predict_proba(self) -> bool:
        return True

    def _encode_labels(self, y, *, min_classes: int = 2) -> np.ndarray:
        """Set ``classes_`` (sorted unique labels) and return ``y`` as class indices.

        Raises
        ------
        ValueError
            If ``y`` is not a classification target, or has fewer than ``min_classes``
            classes.
        """
        check_classification_targets(y)
        y = np.asarray(y)
        if y.dtype.kind in "biuf":
            # numeric labels: the sorted unique values, then a binary search per label (a
            # fifth of the memory and a third of the time of unique's inverse, which sorts
            # a copy of y with its permutation)
            classes = np.unique(y)
            y_idx = np.searchsorted(classes, y)
        else:
            classes, y_idx = np.unique(y, return_inverse=True)
        if classes.shape[0] < min_classes:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least {min_classes} classes; "
                f"got {classes.shape[0]} class ({', '.join(map(repr, classes))})."
            )
        self.classes_ = classes
        return y_idx.ravel()

    def _validate_X_predict(self, X):
        return validate_data(self, X, dtype=np.float64, reset=False)

    def _joint_log_likelihood(self, X):  # pragma: no cover - abstract
        raise NotImplementedError

    def decision_function(self, X):
        """Log-odds of ``classes_[1]`` for two classes; log posteriors otherwise.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        jll = self._joint_log_likelihood(self._validate_X_predict(X))
        if jll.shape[1] == 2:
            return jll[:, 1] - jll[:, 0]
        return jll - logsumexp(jll, axis=1, keepdims=True)

    def predict(self, X):
        """The class with the largest posterior probability.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        jll = self._joint_log_likelihood(self._validate_X_predict(X))
        return self.classes_[np.argmax(jll, axis=1)]

    @available_if(lambda self: self._has_predict_proba())
    def predict_log_proba(self, X):
        """Log class posteriors ``log p(c | x)``, shape (n_samples, n_classes)."""
        check_is_fitted(self)
        jll = self._joint_log_likelihood(self._validate_X_predict(X))
        return jll - logsumexp(jll, axis=1, keepdims=True)

    @available_if(lambda self: self._has_predict_proba())
    def predict_proba(self, X):
        """Class posteriors ``p(c | x)``, shape (n_samples, n_classes); rows sum to one."""
        return np.exp(self.predict_log_proba(X))


class ComponentNamesMixin(ClassNamePrefixFeaturesOutMixin):
    """``get_feature_names_out`` for transformers whose outputs are learned components.

    The output names are the lower-cased class name followed by an index (``pca0``,
    ``pca1``, ...), scikit-learn's convention, which also makes ``set_output(transform=
    "pandas")`` work. A subclass names the fitted array whose axis ``_n_features_out_axis``
    counts the outputs (``components_`` and axis 0 by default).

    See Also
    --------
    sklearn.base.ClassNamePrefixFeaturesOutMixin
        scikit-learn's equivalent.
    mathlearn.decomposition.PCA
        A transformer that uses it.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.decomposition import PCA
    >>> X = np.random.default_rng(0).standard_normal((10, 3))
    >>> PCA(n_components=2).fit(X).get_feature_names_out().tolist()
    ['pca0', 'pca1']
    """

    _n_features_out_attr: str = "components_"
    _n_features_out_axis: int = 0

    @property
    def _n_features_out(self) -> int:
        # An AttributeError before fitting makes check_is_fitted report NotFittedError.
        return getattr(self, self._n_features_out_attr).shape[self._n_features_out_axis]


class ProbabilisticRegressorMixin:
    """Mixin for regressors with a Gaussian predictive distribution.

    Subclasses implement ``_predict_mean_cov(X, full_cov)`` returning the predictive mean of
    shape ``(n_samples,)`` and either the predictive variances ``(n_samples,)`` or, when
    ``full_cov`` is true, the joint predictive covariance of the latent function
    ``(n_samples, n_samples)``; and ``_predictive_noise_variance()`` returning the observation
    noise variance added to the latent variance for a noisy target. It provides
    ``predict_distribution(X)`` (the joint Gaussian over noisy targets) and
    ``sample_y(X, n_samples, random_state)`` (noise-free posterior function draws).

    See Also
    --------
    mathlearn.linear_model.BayesianLinearRegression
        A regressor with a Gaussian predictive.
    mathlearn.gaussian_process.GaussianProcessRegressor
        Another one.

    Examples
    --------
    A regressor predicting ``N(mean(y), var(y))`` everywhere, independently at each point:

    >>> import numpy as np
    >>> from sklearn.base import RegressorMixin
    >>> from mathlearn.base import BaseEstimator, ProbabilisticRegressorMixin
    >>> class Constant(ProbabilisticRegressorMixin, RegressorMixin, BaseEstimator):
    ...     def fit(self, X, y):
    ...         self.mean_, self.var_ = float(np.mean(y)), float(np.var(y))
    ...         return self
    ...     def _predict_mean_cov(self, X, full_cov=False):
    ...         n = len(X)
    ...         cov = self.var_ * (np.eye(n) if full_cov else np.ones(n))
    ...         return np.full(n, self.mean_), cov
    ...     def _predictive_noise_variance(self):
    ...         return 0.0
    >>> reg = Constant().fit(np.zeros((3, 1)), [1.0, 2.0, 3.0])
    >>> d = reg.predict_distribution(np.zeros((2, 1)))
    >>> d.mean, d.cov
    (array([2., 2.]), array([[0.66666667, 0.        ],
           [0.        , 0.66666667]]))
    """

    def predict_distribution(self, X):
        """Joint predictive distribution of noisy targets at the query points.

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
            Query points.

        Returns
        -------
        mathlearn.distributions.MultivariateNormal
            ``N(mean, cov + noise_variance * I)`` over the ``n_samples_X`` targets, where
            ``mean`` and ``cov`` are the predictive mean and the joint covariance of the
            latent function values.
        """
        from .distributions import MultivariateNormal

        check_is_fitted(self)
        mean, cov = self._predict_mean_cov(X, full_cov=True)
        cov = cov + self._predictive_noise_variance() * np.eye(mean.shape[0])
        return MultivariateNormal(mean, cov)

    def sample_y(self, X, n_samples: int = 1, random_state=None):
        """Draw functions from the posterior and evaluate them at ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
            Query points.
        n_samples : int, default=1
            Number of function draws.
        random_state : int, Generator, RandomState or None
            Source of randomness.

        Returns
        -------
        y_samples : ndarray of shape (n_samples_X, n_samples)
            Column ``j`` is the ``j``-th posterior function evaluated at ``X`` (noise-free),
            the layout scikit-learn's ``GaussianProcessRegressor.sample_y`` uses.
        """
        from .utils.linalg import cholesky

        check_is_fitted(self)
        rng = check_random_state(random_state)
        mean, cov = self._predict_mean_cov(X, full_cov=True)
        L = cholesky(cov, jitter="auto", warn=False)
        z = rng.standard_normal((mean.shape[0], int(n_samples)))
        return mean[:, None] + L @ z


class InformationCriterionMixin:
    r"""Akaike and Bayesian information criteria for a likelihood-based estimator.

    A subclass implements ``_total_log_likelihood(X, y)``, the log-likelihood
    ``ln p(D | theta_hat)`` of the data ``D`` under the fitted parameters (a sum over the
    samples; ``y`` is ``None`` for a density model), and ``_n_parameters()``, the number
    ``M`` of free parameters of the model. The mixin provides

    .. math::

        \mathrm{AIC} = -2 \ln p(D \mid \hat\theta) + 2 M, \qquad
        \mathrm{BIC} = -2 \ln p(D \mid \hat\theta) + M \ln N,

    lower is better, and ``n_parameters_``. On the training data, with ``theta_hat`` the
    maximum-likelihood estimate, these are the criteria of Imperial "Mathematics for Inference
    and Machine Learning" §1.7.6 (eqs. 1.208-1.209: the notes maximise
    ``ln p(D | theta_ML) - (M / 2) ln N``, which is ``-BIC / 2``; Akaike's criterion
    ``ln p(D | theta_ML) - M`` is ``-AIC / 2``) and of PRML §1.3 (eq. 1.73) and §4.4.1
    (eq. 4.139). Where an estimator fits a smoothed or penalised estimate (a Dirichlet
    pseudo-count, a covariance shrinkage) the criteria are evaluated at that estimate; each
    estimator's ``aic`` documents what it counts.

    See Also
    --------
    mathlearn.mixture.GaussianMixture
        Choosing the number of components by BIC.
    mathlearn.model_selection.BayesianModelSelection
        The marginal likelihood that BIC approximates.

    Examples
    --------
    A Gaussian with unknown mean and variance (``M = 2``):

    >>> import numpy as np
    >>> from mathlearn.base import BaseEstimator, InformationCriterionMixin
    >>> class Gauss(InformationCriterionMixin, BaseEstimator):
    ...     def fit(self, X, y=None):
    ...         self.mean_, self.var_ = np.mean(X), np.var(X)
    ...         return self
    ...     def _total_log_likelihood(self, X, y=None):
    ...         X = np.asarray(X, dtype=float)
    ...         return float(-0.5 * np.sum(np.log(2 * np.pi * self.var_)
    ...                                     + (X - self.mean_) ** 2 / self.var_))
    ...     def _n_parameters(self):
    ...         return 2
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> g = Gauss().fit(X)
    >>> bool(np.isclose(g.aic(X), 3 * np.log(2 * np.pi * np.var(X)) + 3 + 4))
    True
    >>> g.n_parameters_
    2
    """

    def _total_log_likelihood(self, X, y=None) -> float:  # pragma: no cover - abstract
        raise NotImplementedError

    def _n_parameters(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def n_parameters_(self) -> int:
        """Number ``M`` of free parameters counted by :meth:`aic` and :meth:`bic`."""
        check_is_fitted(self)
        return int(self._n_parameters())

    def _log_likelihood_and_n(self, X, y):
        check_is_fitted(self)
        loglik = float(self._total_log_likelihood(X, y))
        n = int(X.shape[0]) if hasattr(X, "shape") else len(X)
        if not np.isfinite(loglik):
            raise ValueError(
                f"the log-likelihood of these data under the fitted {type(self).__name__} is "
                f"{loglik}: an information criterion is not defined (a sample with zero "
                "density, or a degenerate fit)."
            )
        return loglik, n

    def aic(self, X, y=None) -> float:
        """Akaike information criterion ``-2 ln p(D | theta_hat) + 2 M`` (lower is better).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or None, default=None
            Targets, for a model of ``y`` (given ``X``, or jointly with ``X``); ignored by a
            density model.

        Returns
        -------
        aic : float
        """
        loglik, _ = self._log_likelihood_and_n(X, y)
        return -2.0 * loglik + 2.0 * self._n_parameters()

    def bic(self, X, y=None) -> float:
        """Bayesian information criterion ``-2 ln p(D | theta_hat) + M ln N`` (lower is better).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or None, default=None
            Targets, for a model of ``y`` (given ``X``, or jointly with ``X``); ignored by a
            density model.

        Returns
        -------
        bic : float
        """
        loglik, n = self._log_likelihood_and_n(X, y)
        return -2.0 * loglik + self._n_parameters() * np.log(n)


def _class_indices(classifier, y) -> np.ndarray:
    """``y`` as indices into a fitted classifier's ``classes_``; unknown labels raise."""
    if y is None:
        raise ValueError(
            f"{type(classifier).__name__}.aic / bic need the labels y: aic(X, y) (the "
            "likelihood is that of the labels)."
        )
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional; got shape {y.shape}.")
    classes = classifier.classes_
    idx = np.searchsorted(classes, y)
    idx = np.clip(idx, 0, classes.shape[0] - 1)
    unknown = classes[idx] != y
    if np.any(unknown):
        raise ValueError(
            f"y holds labels not seen in fit: {np.unique(y[unknown]).tolist()}; the classes "
            f"are {classes.tolist()}."
        )
    return idx
