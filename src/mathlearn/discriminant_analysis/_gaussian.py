r"""Generative classifiers with Gaussian class conditionals: LDA (shared covariance) and QDA.

Model (PRML §4.2.2; Imperial "Mathematics for Inference and Machine Learning" §4 on
Gaussian classifiers): ``p(y = k) = π_k`` and ``p(x | y = k) = N(x | μ_k, Σ_k)``; by Bayes'
rule ``log p(y = k | x) = log π_k + log N(x | μ_k, Σ_k) - log p(x)``.

* With one covariance ``Σ`` shared by all classes the quadratic term ``x^T Σ^{-1} x`` is the
  same for every class and cancels: the log-odds are linear in ``x``,
  ``a_k(x) = w_k^T x + w_k0`` with ``w_k = Σ^{-1} μ_k`` and
  ``w_k0 = -½ μ_k^T Σ^{-1} μ_k + log π_k`` (PRML eq. 4.68-4.70): linear discriminant
  analysis. The maximum-likelihood ``Σ`` is the pooled within-class covariance
  ``Σ_k (n_k / n) S_k`` with ``S_k`` the class's ML covariance (PRML eq. 4.78-4.80).
* With one covariance per class the boundaries are quadratic: quadratic discriminant analysis.

Regularisation: LDA shrinks each class covariance towards a multiple of the identity,
``(1 - s) S_k + s (tr S_k / d) I``; QDA uses ``(1 - r) S_k + r I`` (scikit-learn's
``reg_param``). ``S_k`` is the ML class covariance (divisor ``n_k``).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.linalg import solve_triangular

from ..base import (
    BaseClassifier,
    ComponentNamesMixin,
    InformationCriterionMixin,
    TransformerMixin,
    _class_indices,
    _fit_context,
    check_is_fitted,
)
from ..utils._columns import class_sums
from ..utils._param_validation import Interval
from ..utils._rowscale import (
    InUnits,
    centred_linear_map,
    check_log_density,
    gaussian_scores,
    unit_of,
)
from ..utils.extmath import logsumexp
from ..utils.linalg import cho_solve, cholesky, logdet_from_cholesky
from ..utils.validation import validate_data

__all__ = ["LinearDiscriminantAnalysis", "QuadraticDiscriminantAnalysis"]


def _check_priors(priors, n_classes):
    if priors is None:
        return None
    priors = np.asarray(priors, dtype=float)
    if priors.shape != (n_classes,):
        raise ValueError(
            f"priors must have one entry per class ({n_classes}); got {priors.shape}."
        )
    if not np.all(np.isfinite(priors)) or np.any(priors <= 0):
        raise ValueError("priors must be finite and strictly positive.")
    if abs(priors.sum() - 1.0) > 1e-8:
        raise ValueError(f"priors must sum to 1; they sum to {priors.sum():.6g}.")
    return priors


def _joint_log_likelihood_sum(clf, X, y, covariances):
    """``Σ_i [ln π_{y_i} + ln N(x_i | μ_{y_i}, Σ_{y_i})]``, for the information criteria.

    Evaluated in the fit's units ``u`` (``covariances`` and the means are read there), the
    density of ``x`` being that of ``x / u`` times ``u^{-d}``.
    """
    check_is_fitted(clf)
    idx = _class_indices(clf, y)
    X = validate_data(clf, X, dtype=np.float64, reset=False)
    if X.shape[0] != idx.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {idx.shape[0]} labels.")
    n, d = X.shape
    Z = X / clf._unit
    means = type(clf).means_.fitted(clf)
    total = float(np.sum(np.log(clf.priors_[idx]))) - n * d * np.log(clf._unit)
    for k in range(means.shape[0]):
        rows = idx == k
        if not np.any(rows):
            continue
        L = cholesky(covariances[k], jitter=None, name="a class covariance")
        R = solve_triangular(L, (Z[rows] - means[k]).T, lower=True)
        total -= 0.5 * (
            rows.sum() * (d * np.log(2 * np.pi) + logdet_from_cholesky(L)) + np.sum(R * R)
        )
    return total


def _class_stats(X, y_idx, n_classes):
    counts = np.bincount(y_idx, minlength=n_classes).astype(float)
    return counts, class_sums(X, y_idx, n_classes) / counts[:, None]


# Rows per gathered block of one class's rows.
_SCATTER_BLOCK = 4096


def _class_moments(X, y_idx, K):
    """Counts, means and scatter matrices ``S_k = Σ_{i: y_i = k} (x_i - μ_k)(x_i - μ_k)ᵀ``.

    The rows are visited class by class through one stable sort of the labels, in gathered
    blocks of at most 4 096 rows: a class that fits in one block is gathered once (summed,
    centred in place, added as a Gram matrix), a larger one twice (sums, then residuals). No
    per-class copy of ``X`` and no one-hot matrix. Time ``O(N D^2)``, extra memory
    ``O(N + K D^2 + B D)``.
    """
    d = X.shape[1]
    order = np.argsort(y_idx, kind="stable")
    counts = np.bincount(y_idx, minlength=K)
    bounds = np.zeros(K + 1, dtype=np.int64)
    np.cumsum(counts, out=bounds[1:])
    means = np.zeros((K, d))
    S = np.zeros((K, d, d))
    for k in range(K):
        lo, hi = bounds[k], bounds[k + 1]
        if hi == lo:
            continue
        if hi - lo <= _SCATTER_BLOCK:
            R = X[order[lo:hi]]
            means[k] = R.sum(axis=0) / (hi - lo)
            R -= means[k]
            S[k] = R.T @ R
            continue
        for a in range(lo, hi, _SCATTER_BLOCK):
            means[k] += X[order[a : min(a + _SCATTER_BLOCK, hi)]].sum(axis=0)
        means[k] /= hi - lo
        for a in range(lo, hi, _SCATTER_BLOCK):
            R = X[order[a : min(a + _SCATTER_BLOCK, hi)]]
            R -= means[k]
            S[k] += R.T @ R
    return counts.astype(float), means, S


class LinearDiscriminantAnalysis(
    InformationCriterionMixin, ComponentNamesMixin, TransformerMixin, BaseClassifier
):
    r"""Gaussian class conditionals with a shared covariance: linear decision boundaries.

    ``transform`` projects onto Fisher's discriminant directions (the same implementation as
    :class:`FisherLDA`), as scikit-learn's ``LinearDiscriminantAnalysis`` does.

    Parameters
    ----------
    priors : array-like of shape (n_classes,) or None, default=None
        Class priors ``π_k``; ``None`` uses the class proportions (their ML estimate).
    shrinkage : float in [0, 1] or None, default=None
        Shrink each class covariance to ``(1 - s) S_k + s (tr S_k / d) I`` before pooling.
        The classifier only: the projection of ``transform`` is Fisher's, from the unshrunk
        scatter matrices.
    n_components : int or None, default=None
        Number of Fisher directions kept by ``transform``, at most ``min(n_classes - 1,
        n_features)`` (``None``: that maximum).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    priors_ : ndarray of shape (n_classes,)
    means_ : ndarray of shape (n_classes, n_features)
    covariance_ : ndarray of shape (n_features, n_features)
        The pooled (shrunk) within-class covariance ``Σ``.
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        ``Σ^{-1} μ_k`` per class; for two classes the difference of the two rows (the
        log-odds of ``classes_[1]``), scikit-learn's convention.
    intercept_ : ndarray of shape (1,) or (n_classes,)
    scalings_ : ndarray of shape (n_features, n_components_)
        Fisher's discriminant directions ``W`` (``S_b W = S_w W Λ``), scaled so that the
        projections have identity within-class covariance (ML estimate).
    explained_variance_ratio_ : ndarray of shape (n_components_,)
        The Fisher ratios of the directions over their sum.
    xbar_ : ndarray of shape (n_features,)
        Overall mean; ``transform`` centres with it.
    n_components_ : int
    n_features_in_ : int

    Notes
    -----
    See the module docstring (PRML §4.2.2). ``Σ`` is factorised by Cholesky; a singular
    ``Σ`` (fewer samples than features, collinear features) gets jitter with a
    ``NumericalWarning`` — use ``shrinkage`` instead.

    ``aic(X, y)`` and ``bic(X, y)`` use the joint log-likelihood ``Σ_i ln p(x_i, y_i)`` and
    ``M = (K - 1) + K d + d (d + 1) / 2`` parameters (priors, when estimated; means; the
    shared covariance); with ``shrinkage`` they are evaluated at the shrunk covariance.

    Complexity (``N`` samples, ``D`` features, ``K`` classes): ``fit`` costs ``O(N K D)`` for
    the class means, ``O(N D^2)`` for the within-class scatter, and ``O(D^3)`` for the
    Cholesky factor and Fisher's generalised eigenproblem; memory ``O(N D + D^2)`` (the
    within-class residuals). With more features than ``N - K`` the projection takes the
    route through the data (``O(N^2 D)``).

    The projection maximises the Fisher criterion ``tr((Wᵀ S_w W)^{-1} Wᵀ S_b W)`` (PRML
    §4.1.4-4.1.6; Imperial "Mathematics for Inference and Machine Learning" §2.2), computed by
    :class:`FisherLDA`'s solver ``"auto"``. The classifier is invariant under it: with
    ``n_components = n_classes - 1`` the class means differ only within the projected
    subspace, so linear discriminant analysis of the projections gives the same posteriors.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 0.5], [0.5, 1.0], [3.0, 3.0], [4.0, 3.5], [3.5, 4.0]])
    >>> LinearDiscriminantAnalysis().fit(X, [0, 0, 0, 1, 1, 1]).predict([[0.2, 0.2], [3.8, 3.6]])
    array([0, 1])

    See Also
    --------
    QuadraticDiscriminantAnalysis, mathlearn.discriminant_analysis.FisherLDA
    """

    _n_features_out_attr = "scalings_"
    _n_features_out_axis = 1

    _parameter_constraints = {
        "priors": ["array-like", None],
        "shrinkage": [Interval(Real, 0, 1, closed="both"), None],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        *,
        priors=None,
        shrinkage: float | None = None,
        n_components: int | None = None,
    ):
        self.priors = priors
        self.shrinkage = shrinkage
        self.n_components = n_components

    @_fit_context
    def fit(self, X, y):
        """Estimate priors, class means and the shared covariance.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        return self._fit_encoded(X, self._encode_labels(y))

    def _fit_encoded(self, X, y_idx):
        """The fit on validated float64 ``X`` and class indices ``y_idx`` (``classes_`` and
        ``n_features_in_`` set), for callers whose data are already checked (FisherLDA's
        classifier on its projections)."""
        K = len(self.classes_)
        n, d = X.shape
        # Fitted in units of a power of two (exact): the classifier on X * 2^e is the one on X.
        self._unit = unit_of(X)
        X = X / self._unit
        if n <= K:
            raise ValueError(f"LDA needs more samples than classes; got {n} for {K} classes.")
        kmax = min(K - 1, d)
        n_comp = kmax if self.n_components is None else int(self.n_components)
        if n_comp > kmax:
            raise ValueError(
                f"n_components={self.n_components!r} must be an int in [1, min(n_classes - 1, "
                f"n_features)] = [1, {kmax}]."
            )
        counts, means = _class_stats(X, y_idx, K)
        priors = _check_priors(self.priors, K)
        self.priors_ = counts / n if priors is None else priors
        R = X - means[y_idx]
        s = 0.0 if self.shrinkage is None else float(self.shrinkage)
        if s > 0:
            cov = np.zeros((d, d))
            for k in range(K):
                Rk = R[y_idx == k]
                Sk = Rk.T @ Rk / counts[k]
                Sk = (1 - s) * Sk + s * (np.trace(Sk) / d) * np.eye(d)
                cov += (counts[k] / n) * Sk
        else:
            # sum_k (N_k / N) S_k = R^T R / N: one product, no per-class copies
            cov = R.T @ R / n
        self.means_ = means
        self.covariance_ = cov
        L = cholesky(cov, name="the pooled within-class covariance")
        W = cho_solve(L, means.T).T  # rows Σ^{-1} μ_k
        b = -0.5 * np.sum(W * means, axis=1) + np.log(self.priors_)
        self._coef_all, self._intercept_all = W, b
        # coef_ (Σ^{-1} μ_k) scales as 1 / unit, the intercepts not at all.
        if K == 2:
            self.coef_ = (W[1] - W[0])[None, :]
            self.intercept_ = np.array([b[1] - b[0]])
        else:
            self.coef_, self.intercept_ = W, b
        from ._fisher import fisher_directions

        fd = fisher_directions(X, y_idx, K, n_comp)
        self.scalings_ = fd.scalings
        self.xbar_ = fd.xbar
        self.explained_variance_ratio_ = fd.explained_variance_ratio
        self.n_components_ = n_comp
        return self

    def transform(self, X):
        """Project onto Fisher's discriminant directions: ``(X - xbar_) @ scalings_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components_)
        """
        check_is_fitted(self)
        X = self._validate_X_predict(X) / self._unit
        W = LinearDiscriminantAnalysis.scalings_.fitted(self)
        xbar = LinearDiscriminantAnalysis.xbar_.fitted(self)
        return centred_linear_map(X, xbar, lambda Xc: Xc @ W, what="the projection")

    def decision_function(self, X):
        """Linear scores ``X coef_^T + intercept_``: log-odds of ``classes_[1]`` for two
        classes (shape (n,)), else ``log π_k + log N(x | μ_k, Σ)`` up to a per-row constant.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        X = self._validate_X_predict(X) / self._unit
        Z = X @ LinearDiscriminantAnalysis.coef_.fitted(self).T + self.intercept_
        return Z[:, 0] if Z.shape[1] == 1 else Z

    def _joint_log_likelihood(self, X):
        # log π_k + log N(x | μ_k, Σ) without the class-independent -½ x^T Σ^{-1} x - ½ log|2πΣ|.
        return (X / self._unit) @ self._coef_all.T + self._intercept_all

    def _total_log_likelihood(self, X, y=None) -> float:
        cov = LinearDiscriminantAnalysis.covariance_.fitted(self)
        return _joint_log_likelihood_sum(self, X, y, [cov] * len(self.classes_))

    def _n_parameters(self) -> int:
        K, d = len(self.classes_), self.n_features_in_
        return (K - 1) * int(self.priors is None) + K * d + d * (d + 1) // 2

    _unit = 1.0
    means_ = InUnits(1)
    covariance_ = InUnits(2)
    coef_ = InUnits(-1)
    scalings_ = InUnits(-1)
    xbar_ = InUnits(1)


class QuadraticDiscriminantAnalysis(InformationCriterionMixin, BaseClassifier):
    r"""Gaussian class conditionals with one covariance per class: quadratic boundaries.

    Parameters
    ----------
    priors : array-like of shape (n_classes,) or None, default=None
        Class priors; ``None`` uses the class proportions.
    reg_param : float in [0, 1], default=0.0
        Each class covariance becomes ``(1 - r) S_k + r I`` (scikit-learn's ``reg_param``).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    priors_ : ndarray of shape (n_classes,)
    means_ : ndarray of shape (n_classes, n_features)
    covariance_ : ndarray of shape (n_classes, n_features, n_features)
        The (regularised) maximum-likelihood class covariances.
    n_features_in_ : int

    Notes
    -----
    ``log p(x, y = k) = log π_k - ½ log|2π Σ_k| - ½ (x - μ_k)^T Σ_k^{-1} (x - μ_k)``
    (PRML §4.2.2, the case of unequal covariances), evaluated through the Cholesky factor of
    each ``Σ_k``. A class covariance that is singular (fewer samples than features,
    ``reg_param = 0``) raises an error that names the class.

    ``aic(X, y)`` and ``bic(X, y)`` use the joint log-likelihood ``Σ_i ln p(x_i, y_i)`` and
    ``M = (K - 1) + K d + K d (d + 1) / 2`` parameters (priors, when estimated; means;
    covariances); with ``reg_param`` they are evaluated at the regularised covariances.

    Complexity: ``fit`` costs ``O(N D^2 + K D^3)`` (class means and scatter matrices from
    the rows gathered class by class in blocks through one sort of the labels, Cholesky
    factors); memory ``O(N + K D^2)`` beyond ``X``. Prediction costs ``O(M K D^2)``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.1], [0.1, -0.2], [-0.1, 0.0], [3.0, 0.0], [0.0, 3.0], [-3.0, -2.0]])
    >>> qda = QuadraticDiscriminantAnalysis().fit(X, [0, 0, 0, 1, 1, 1])
    >>> qda.predict([[0.0, 0.0], [2.0, 2.0]])
    array([0, 1])

    See Also
    --------
    LinearDiscriminantAnalysis
    """

    _parameter_constraints = {
        "priors": ["array-like", None],
        "reg_param": [Interval(Real, 0, 1, closed="both")],
    }

    def __init__(self, *, priors=None, reg_param: float = 0.0):
        self.priors = priors
        self.reg_param = reg_param

    @_fit_context
    def fit(self, X, y):
        """Estimate priors, class means and class covariances.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        y_idx = self._encode_labels(y)
        K = len(self.classes_)
        n, d = X.shape
        # Fitted in units of a power of two (exact): the classifier on X * 2^e is the one on X.
        self._unit = unit_of(X)
        if self._unit != 1.0:
            X = X / self._unit
        counts, means, covs = _class_moments(X, y_idx, K)  # covs: scatters, divided below
        if np.any(counts < 2):
            k = int(np.argmin(counts))
            raise ValueError(
                f"QDA needs at least 2 samples per class for a covariance; class "
                f"{np.asarray(self.classes_[k]).item()!r} has {int(counts[k])}."
            )
        priors = _check_priors(self.priors, K)
        self.priors_ = counts / n if priors is None else priors
        r = float(self.reg_param)
        factors = np.empty((K, d, d))
        for k in range(K):
            C = covs[k]
            C /= counts[k]
            if r > 0:
                C = (1 - r) * C + r * np.eye(d)
            covs[k] = C
            label = repr(np.asarray(self.classes_[k]).item())
            try:
                factors[k] = cholesky(C, jitter=None, name=f"the covariance of class {label}")
            except np.linalg.LinAlgError as exc:
                raise ValueError(
                    f"{exc} (class {label} has {int(counts[k])} samples in {d} dimensions, "
                    "or collinear features); use reg_param > 0."
                ) from None
        self.means_ = means
        self.covariance_ = covs
        self._factors = factors
        self._log_norm = np.array(
            [-0.5 * logdet_from_cholesky(factors[k]) for k in range(K)]
        ) + np.log(self.priors_)
        return self

    def _total_log_likelihood(self, X, y=None) -> float:
        covs = QuadraticDiscriminantAnalysis.covariance_.fitted(self)
        return _joint_log_likelihood_sum(self, X, y, covs)

    def _n_parameters(self) -> int:
        K, d = len(self.classes_), self.n_features_in_
        return (K - 1) * int(self.priors is None) + K * d + K * d * (d + 1) // 2

    _unit = 1.0
    means_ = InUnits(1)
    covariance_ = InUnits(2)

    def _posterior(self, X, log):
        check_is_fitted(self)
        X = self._validate_X_predict(X)
        jll = self._joint_log_likelihood(X)
        logp = jll - logsumexp(jll, axis=1, keepdims=True)
        if not log:
            return np.exp(logp)
        return check_log_density(logp, X, what="the log posterior")

    def predict_log_proba(self, X):
        """Log class posteriors ``log p(c | x)``, shape (n_samples, n_classes).

        A posterior below ``exp(-1.8e308)`` (a row so far out that the classes' Mahalanobis
        distances differ by more than the float64 range) has no float64 logarithm: a
        ``ValueError`` says so; ``predict_proba`` gives its value, 0.
        """
        return self._posterior(X, log=True)

    def predict_proba(self, X):
        """Class posteriors ``p(c | x)``, shape (n_samples, n_classes); rows sum to one."""
        return self._posterior(X, log=False)

    def decision_function(self, X):
        """Log-odds of ``classes_[1]`` for two classes; log posteriors otherwise.

        Raises a ``ValueError`` where they are beyond the float64 range (see
        ``predict_log_proba``).
        """
        check_is_fitted(self)
        if len(self.classes_) != 2:
            return self.predict_log_proba(X)
        X = self._validate_X_predict(X)
        jll = self._joint_log_likelihood(X)
        with np.errstate(invalid="ignore"):
            return check_log_density(jll[:, 1] - jll[:, 0], X, what="the log-odds")

    def _joint_log_likelihood(self, X):
        # In the fit's units: the -d log(unit) this drops is the same for every class. Rows
        # far outside the data are scaled per row (gaussian_scores): the scores stay finite
        # up to a constant per row, and where the gaps between classes exceed the float64
        # range the posterior is its limit, one-hot on the class nearest in Mahalanobis
        # distance (the one whose covariance is widest along the row's direction).
        def sq_mahalanobis(k, D):
            Z = solve_triangular(self._factors[k], D.T, lower=True)
            return np.sum(Z * Z, axis=0)

        means = QuadraticDiscriminantAnalysis.means_.fitted(self)
        return gaussian_scores(X / self._unit, means, sq_mahalanobis, self._log_norm)[1]
