r"""Gaussian naive Bayes.

``p(x | y = k) = Π_j N(x_j | μ_kj, σ²_kj)``: class-conditional independence with a Gaussian
per feature (PRML §4.2.3 with Gaussian inputs; the diagonal-covariance case of QDA). The
maximum-likelihood estimates are the weighted class means and variances (divisor ``n_k``);
``var_smoothing`` adds ``ε = var_smoothing · max_j Var(x_j)`` to every variance, as
scikit-learn does, so a feature constant within a class does not give an infinite density.

``partial_fit`` merges the sufficient statistics of a batch with the running ones exactly
(the pairwise update of Chan, Golub and LeVeque): for weights ``n_a, n_b``, means
``μ_a, μ_b`` and variances ``v_a, v_b``,
``μ = (n_a μ_a + n_b μ_b)/n`` and
``n v = n_a v_a + n_b v_b + (n_a n_b / n)(μ_a - μ_b)²``, so fitting in batches equals one fit.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from ..base import _fit_context, check_is_fitted
from ..utils._backend import is_dask
from ..utils._param_validation import Interval
from ..utils._rowscale import InUnits, check_log_density, gaussian_scores, unit_of
from ..utils.extmath import logsumexp
from ..utils.validation import check_sample_weight, validate_data
from ._base import _BaseNB

__all__ = ["GaussianNB"]


def _merge(n_a, mu_a, v_a, n_b, mu_b, v_b):
    n = n_a + n_b
    with np.errstate(invalid="ignore", divide="ignore"):
        wa = np.where(n > 0, n_a / np.where(n > 0, n, 1), 0.0)
    wb = 1.0 - wa
    wa, wb = np.where(n > 0, wa, 0.0), np.where(n > 0, wb, 0.0)
    d = mu_b - mu_a
    mu = mu_a + wb[..., None] * d if np.ndim(mu_a) > np.ndim(n) else mu_a + wb * d
    if np.ndim(mu_a) > np.ndim(n):
        v = wa[..., None] * v_a + wb[..., None] * v_b + (wa * wb)[..., None] * d * d
    else:
        v = wa * v_a + wb * v_b + wa * wb * d * d
    return n, mu, v


# Numbers per block of the class sums (the block of deviations and its one-hot matrix):
# 128 kB, whatever the numbers of features and classes.
_SUM_BLOCK = 1 << 14


def _class_sums(X, y_idx, sw, K, center=None):
    """``Σ_i s_i [y_i = k] x_i`` (or of ``(x_i - center_k)²``), shape (K, d), by blocks.

    ``sw`` None is unit weight. A block's deviations are gathered into their own buffer and
    squared in place (one temporary of the block's size); a quarter of small data (at least
    64 rows) makes a block, so that the one-hot matrix stays small next to ``X``.
    """
    n, d = X.shape
    out = np.zeros((K, d))
    step = min(max(16, _SUM_BLOCK // (d + K)), max(64, -(-n // 4)))
    for a in range(0, n, step):
        rows = slice(a, a + step)
        yb = y_idx[rows]
        onehot = np.zeros((K, yb.shape[0]))
        onehot[yb, np.arange(yb.shape[0])] = 1.0 if sw is None else sw[rows]
        if center is None:
            out += onehot @ X[rows]
        else:
            dev = np.take(center, yb, axis=0)
            np.subtract(X[rows], dev, out=dev)
            dev *= dev
            out += onehot @ dev
    return out


class GaussianNB(_BaseNB):
    r"""Naive Bayes with a Gaussian per feature and class (maximum likelihood).

    Parameters
    ----------
    var_smoothing : float, default=1e-9
        ``var_smoothing · max_j Var(x_j)`` (the weighted variance over all data seen) is
        added to every variance.
    fit_prior : bool, default=True
    class_prior : array-like of shape (n_classes,) or None, default=None
    class_prior_alpha : float, default=0.0
        Dirichlet pseudo-count on the class prior; ``0``: the class proportions.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of samples per class.
    theta_ : ndarray of shape (n_classes, n_features)
        Class means ``μ_kj``.
    var_ : ndarray of shape (n_classes, n_features)
        Class variances ``σ²_kj`` including ``epsilon_``.
    epsilon_ : float
    class_log_prior_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    See Also
    --------
    mathlearn.discriminant_analysis.QuadraticDiscriminantAnalysis
        Full class covariances.
    sklearn.naive_bayes.GaussianNB
        scikit-learn's equivalent.

    Notes
    -----
    See the module docstring. ``log p(x, y = k) = log π_k - ½ Σ_j [log(2π σ²_kj) +
    (x_j - μ_kj)² / σ²_kj]``, evaluated on the deviations from each class mean (no expansion
    into ``x²`` terms, which cancels catastrophically for data far from the origin).
    ``aic(X, y)`` and ``bic(X, y)`` count ``2 K d`` means and variances and ``K - 1`` class
    probabilities when they are learned (``fit_prior=True``, no ``class_prior``).

    Complexity (``N`` samples, ``D`` features, ``K`` classes): ``fit`` costs ``O(N K D)`` in
    BLAS products of one-hot class matrices with blocks of rows (two passes: means, then
    squared deviations) and needs ``O(K D)`` memory beyond ``X`` plus one block of about
    16 384 numbers; prediction costs ``O(M K D)`` for ``M`` rows.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[-1.0, -1.0], [-2.0, -1.0], [1.0, 1.0], [2.0, 1.0]])
    >>> GaussianNB().fit(X, [0, 0, 1, 1]).predict([[-0.8, -1.0]])
    array([0])
    """

    _parameter_constraints = {
        "var_smoothing": [Interval(Real, 0, None, closed="left")],
        "fit_prior": ["boolean"],
        "class_prior": ["array-like", None],
        "class_prior_alpha": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        var_smoothing: float = 1e-9,
        fit_prior: bool = True,
        class_prior=None,
        class_prior_alpha: float = 0.0,
    ):
        self.var_smoothing = var_smoothing
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.class_prior_alpha = class_prior_alpha

    # Data of extreme magnitude are fitted in units of a power of two (``_unit``, set on the
    # first call; see ``unit_of``), exactly; means and variances are read in the data's units.
    _unit = 1.0
    theta_ = InUnits(1)
    var_ = InUnits(2)
    epsilon_ = InUnits(2)

    def _n_feature_parameters(self) -> int:
        # A mean and a variance per class and feature.
        return 2 * self.var_.size

    def _fit_batch(self, X, y, classes, sample_weight, first_call):
        X, y = validate_data(self, X, y, dtype=np.float64, reset=first_call)
        y_idx = self._labels_to_index(y, classes, first_call)
        sw = check_sample_weight(sample_weight, X)
        K, d = len(self.classes_), X.shape[1]
        if first_call:
            self._unit = unit_of(X)
            self.class_count_ = np.zeros(K)
            self.theta_ = np.zeros((K, d))
            self._raw_var = np.zeros((K, d))
            self._n_all, self._mu_all, self._v_all = 0.0, np.zeros(d), np.zeros(d)
        if self._unit != 1.0:
            X = X / self._unit
            if not np.all(np.isfinite(X)):
                raise ValueError(
                    f"X has entries beyond the float64 range in the units ({self._unit:.3g}) "
                    "set by the first partial_fit batch."
                )
        theta = GaussianNB.theta_.fitted(self)
        # Class sums and then squared deviations from the class means (a two-pass variance),
        # by products with the weighted one-hot matrix over blocks of rows that stay in
        # cache: no per-class masked copies of X and no temporaries of its size.
        counts = np.bincount(y_idx, weights=sw, minlength=K)
        has = counts > 0
        safe = np.where(has, counts, 1.0)[:, None]
        w = None if sample_weight is None else sw  # unit weights: a plain one-hot
        mu = _class_sums(X, y_idx, w, K) / safe
        v = _class_sums(X, y_idx, w, K, center=mu) / safe
        # Overall (weighted) variance of every sample seen, for epsilon: within- plus
        # between-class parts of this batch. scikit-learn uses the unweighted variance;
        # weighting keeps a weight equivalent to repeating the sample.
        n_b = float(counts.sum())
        if n_b > 0:
            mu_b = counts[has] @ mu[has] / n_b
            v_b = counts[has] @ (v[has] + (mu[has] - mu_b) ** 2) / n_b
            self._n_all, self._mu_all, self._v_all = _merge(
                np.float64(self._n_all), self._mu_all, self._v_all, np.float64(n_b), mu_b, v_b
            )
        for k in np.flatnonzero(has):
            self.class_count_[k], theta[k], self._raw_var[k] = _merge(
                np.float64(self.class_count_[k]),
                theta[k],
                self._raw_var[k],
                np.float64(counts[k]),
                mu[k],
                v[k],
            )
        self._finish_batch()
        return self

    def _finish_batch(self):
        """``epsilon_``, ``var_`` and the class prior from the merged moments."""
        self.epsilon_ = eps = float(self.var_smoothing) * float(np.max(self._v_all))
        self.var_ = var = self._raw_var + eps
        seen = self.class_count_ > 0
        if np.any(var[seen] <= 0):
            k, j = np.argwhere((var <= 0) & seen[:, None])[0]
            raise ValueError(
                f"feature {j} has zero variance in class {np.asarray(self.classes_[k]).item()!r} "
                "(and var_smoothing adds nothing): its Gaussian density is degenerate. Use "
                "var_smoothing > 0 or drop constant features."
            )
        self._update_class_log_prior()

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Estimate class priors, means and variances.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        if is_dask(X):
            from ._dask import nb_fit_dask

            return nb_fit_dask(self, X, y, sample_weight)
        y_arr = np.asarray(y)
        return self._fit_batch(
            X, y, np.unique(y_arr) if y_arr.ndim == 1 else y, sample_weight, True
        )

    @_fit_context
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Merge a batch into the sufficient statistics (``classes`` on the first call).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        classes : array-like of shape (n_classes,), optional
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        self
        """
        return self._fit_batch(X, y, classes, sample_weight, not hasattr(self, "classes_"))

    def _scores(self, X):
        # log N(x | θ_k, σ²_k) = log N(x / u | θ'_k, σ'²_k) - d log u for the fit unit u.
        theta, var = GaussianNB.theta_.fitted(self), GaussianNB.var_.fitted(self)
        seen = self.class_count_ > 0
        with np.errstate(divide="ignore"):
            const = (
                np.where(seen, -0.5 * np.sum(np.log(2 * np.pi * var), axis=1), -np.inf)
                + self.class_log_prior_
            )
        jll, rel = gaussian_scores(
            X / self._unit,
            theta,
            lambda k, D: np.sum(D * D / var[k], axis=1),
            const,
        )
        return jll - X.shape[1] * np.log(self._unit), rel

    def predict_joint_log_proba(self, X):
        """``log p(x, y = k)``, shape (n_samples, n_classes).

        A row so far from every class that a log joint is below the float64 range (about
        ``1e154`` standard deviations) raises a ``ValueError``; its posterior, which
        ``predict_proba`` gives, is still defined.
        """
        check_is_fitted(self)
        X = self._validate_X_predict(X)
        jll = self._scores(X)[0]
        seen = self.class_count_ > 0
        check_log_density(jll[:, seen], X, what="the log joint likelihood")
        return jll

    def _posterior(self, X, log):
        check_is_fitted(self)
        if is_dask(X):
            from ._dask import nb_predict_dask

            return nb_predict_dask(self, X, "log_proba" if log else "proba")
        X = self._validate_X_predict(X)
        jll = self._joint_log_likelihood(X)
        logp = jll - logsumexp(jll, axis=1, keepdims=True)
        if not log:
            return np.exp(logp)
        seen = self.class_count_ > 0
        check_log_density(logp[:, seen], X, what="the log posterior")
        return logp

    def predict_log_proba(self, X):
        """Log class posteriors, shape (n_samples, n_classes).

        A posterior below ``exp(-1.8e308)`` (a row so far out that the classes' scaled
        distances differ by more than the float64 range) has no float64 logarithm: a
        ``ValueError`` says so; ``predict_proba`` gives its value, 0.
        """
        return self._posterior(X, log=True)

    def predict_proba(self, X):
        """Class posteriors, shape (n_samples, n_classes); rows sum to one."""
        return self._posterior(X, log=False)

    def predict(self, X):
        """The class with the largest posterior probability."""
        check_is_fitted(self)
        if is_dask(X):
            from ._dask import nb_predict_dask

            return nb_predict_dask(self, X, "labels")
        jll = self._joint_log_likelihood(self._validate_X_predict(X))
        return self.classes_[np.argmax(jll, axis=1)]

    def _joint_log_likelihood(self, X):
        # Up to a constant per row (enough for posteriors): finite for rows of any size; see
        # gaussian_scores. A row beyond every class's float64 range gets the limit posterior,
        # one-hot on the class nearest in (variance-weighted) distance.
        return self._scores(X)[1]
