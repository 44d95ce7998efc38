"""Shared machinery of the finite mixtures fitted by EM.

Oxford "Advanced Topics in Statistical Machine Learning" §5.4; PRML §9.2.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

from ..base import (
    BaseEstimator,
    DensityMixin,
    InformationCriterionMixin,
    _fit_context,
    check_is_fitted,
)
from ..cluster import KMeans, kmeans_plusplus
from ..exceptions import ConvergenceWarning
from ..utils._backend import is_dask
from ..utils._param_validation import Interval
from ..utils._rowscale import check_log_density
from ..utils.validation import (
    check_array,
    check_int,
    check_probability_vector,
    check_random_state,
    check_sample_weight,
    validate_data,
)
from ._em import em

#: Constraints every mixture shares; a subclass adds ``init_params`` and its own parameters.
_BASE_CONSTRAINTS = {
    "n_components": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "n_init": [Interval(Integral, 1, None, closed="left")],
    "weights_init": ["array-like", None],
    "means_init": ["array-like", None],
    "random_state": ["random_state"],
}


def _row_max(A):
    """``A.max(axis=1)``; for few columns as a running maximum over the columns (NumPy's
    reduction along a short last axis costs ~20x more), the same values."""
    if A.ndim != 2 or A.shape[1] > 32 or A.shape[1] == 0:
        return A.max(axis=1)
    out = A[:, 0].copy()
    for k in range(1, A.shape[1]):
        np.maximum(out, A[:, k], out=out)
    return out


def _row_sum(A):
    """``A.sum(axis=1)``; for up to 8 columns as a running sum over the columns, which adds
    in the same order as NumPy's reduction there (left to right), so the same values."""
    if A.ndim != 2 or A.shape[1] > 8 or A.shape[1] == 0:
        return A.sum(axis=1)
    out = A[:, 0].copy()
    for k in range(1, A.shape[1]):
        out += A[:, k]
    return out


class _WorkingEM:
    """The :class:`~mathlearn.mixture.EMModel` a mixture's fit runs: its E- and M-steps on
    data already in the mixture's working frame, with optional sample weights.

    Row ``n`` of weight ``w_n`` counts as ``w_n`` repeated rows: the bound is
    ``sum_n w_n log p(x_n) / sum_n w_n`` and the M-step sees the responsibilities times the
    weights (every sufficient statistic is a responsibility-weighted sum).
    """

    def __init__(self, mixture, sample_weight=None):
        self.mixture = mixture
        self.sample_weight = sample_weight

    def e_step(self, X):
        m = self.mixture
        log_norm, log_resp = m._log_norm_and_resp(X)
        w = self.sample_weight
        if w is None:
            return float(np.mean(log_norm)) + m._log_prior() / X.shape[0], log_resp
        total = float(w.sum())
        return float(w @ log_norm) / total + m._log_prior() / total, log_resp

    def m_step(self, X, log_resp):
        resp = np.exp(log_resp)
        if self.sample_weight is not None:
            resp *= self.sample_weight[:, None]
        self.mixture._maximize(X, resp)


class _BaseMixture(InformationCriterionMixin, DensityMixin, BaseEstimator):
    """Mixture ``p(x) = sum_k pi_k p(x | theta_k)`` fitted by :func:`~mathlearn.mixture.em`.

    The base class owns the fit loop (``n_init`` starts, the EM driver, the bookkeeping of
    ``lower_bound_``, ``lower_bounds_``, ``n_iter_``, ``converged_``), the initial
    responsibilities (``init_params``), the checks of ``weights_init`` and ``means_init``,
    sample weights, the E-step and sampling. It implements the EM protocol itself
    (:meth:`e_step`, :meth:`m_step`). Subclasses implement

    * ``_check_X(X, reset)``: validated data;
    * ``_estimate_log_prob(X)``: ``log p(x_n | theta_k)``, shape (N, K);
    * ``_maximize(X, resp)``: the M-step for (weighted) responsibilities ``resp`` of shape
      (N, K), whose column sums are the effective counts ``N_k``;
    * ``_initialize(X, rng, sample_weight=None)``: the starting parameters, using
      :meth:`_initial_responsibilities` and :meth:`_checked_weights_init` /
      :meth:`_checked_means_init`;
    * ``_get_parameters()``, ``_set_parameters(params)``, ``_n_parameters()``;
    * ``_sample_components(counts, rng)``: ``counts[k]`` draws from each component, stacked;
    * optionally ``_log_prior()`` (MAP-EM), ``_after_fit(X)``, and a working frame:
      ``_set_frame(X)`` (at the start of a fit), ``_to_working(X)`` (the data as the
      parameters see them) and ``_log_jacobian()`` (``log p(x) = log p_w(x_w) - jacobian``).

    The E-step is common: in log space, ``log r_nk = log pi_k + log p(x_n | theta_k) -
    logsumexp_j(log pi_j + log p(x_n | theta_j))``.
    """

    def _log_prior(self) -> float:
        return 0.0

    def _estimate_weighted_log_prob(self, X):
        # _estimate_log_prob returns a fresh array: the weights are added in place.
        wlp = self._estimate_log_prob(X)
        wlp += np.log(self.weights_)
        return wlp

    def _log_norm_and_resp(self, X):
        """``log p(x_n)`` (N,) and ``log r_nk`` (N, K) from the weighted log-probabilities, by
        a direct max-shift log-sum-exp (rows that are all ``-inf`` give ``-inf`` and NaN
        responsibilities, which subclasses may rescue).

        Works in place on the (N, K) array of weighted log-probabilities, which becomes the
        log-responsibilities: one (N, K) temporary (the exponentials) besides it.
        """
        wlp = self._estimate_weighted_log_prob(X)
        top = _row_max(wlp)
        finite = np.isfinite(top)
        if not np.all(finite):
            top = np.where(finite, top, 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            wlp -= top[:, None]
            log_sum = np.log(_row_sum(np.exp(wlp)))
            # log r = (wlp - top) - log sum exp(wlp - top): not wlp - log p, which loses the
            # log-sum (up to log K) in the rounding of a huge log p.
            wlp -= log_sum[:, None]
            log_sum += top
            return log_sum, wlp

    def e_step(self, X):
        """E-step: the bound and the log-responsibilities under the current parameters.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Validated data.

        Returns
        -------
        bound : float
            Mean log-likelihood ``(1/N) sum_n log p(x_n)`` plus ``log p(theta) / N``.
        log_resp : ndarray of shape (n_samples, n_components)
            ``log r_nk = log p(z_n = k | x_n)``.
        """
        log_norm, log_resp = self._log_norm_and_resp(self._to_working(X))
        bound = float(np.mean(log_norm)) - self._log_jacobian()
        return bound + self._log_prior() / X.shape[0], log_resp

    def m_step(self, X, log_resp):
        """M-step: the parameters maximising ``E_q[log p(X, z)]`` (+ log prior) in place.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
        log_resp : ndarray of shape (n_samples, n_components)
            Log-responsibilities from :meth:`e_step`.
        """
        self._maximize(self._to_working(X), np.exp(log_resp))

    # Former names of the protocol's hooks.
    _e_step = e_step
    _m_step = m_step

    def _initial_responsibilities(self, X, rng, sample_weight=None):
        """Initial responsibilities (N, K) for ``init_params``.

        ``"kmeans"``: hard labels of a (weighted) k-means; ``"k-means++"``: one-hot at the
        (weighted) k-means++ seeds; ``"random"``: uniform random weights per row;
        ``"random_from_data"``: one-hot at ``K`` distinct rows drawn by weight.
        """
        n = X.shape[0]
        k = self.n_components
        resp = np.zeros((n, k))
        init = self.init_params
        if init == "kmeans":
            labels = (
                KMeans(k, n_init=1, random_state=rng).fit(X, sample_weight=sample_weight).labels_
            )
            resp[np.arange(n), labels] = 1.0
        elif init == "k-means++":
            _, idx = kmeans_plusplus(X, k, rng, sample_weight=sample_weight)
            resp[idx, np.arange(k)] = 1.0
        elif init == "random":
            resp = rng.uniform(size=(n, k))
            resp /= resp.sum(axis=1, keepdims=True)
        else:  # "random_from_data" (the constraints allow nothing else)
            p = None if sample_weight is None else sample_weight / sample_weight.sum()
            idx = rng.choice(n, k, replace=False, p=p)
            resp[idx, np.arange(k)] = 1.0
        if sample_weight is not None:
            resp = resp * sample_weight[:, None]
        return resp

    def _checked_weights_init(self):
        """``weights_init`` as a probability vector of length ``n_components`` (or None)."""
        if self.weights_init is None:
            return None
        w = check_probability_vector(self.weights_init, "weights_init", atol=1e-6)
        k = self.n_components
        if w.shape != (k,):
            raise ValueError(f"weights_init must have shape ({k},); got {w.shape}.")
        return w

    def _checked_means_init(self, d):
        """``means_init`` as an array of shape (n_components, d) (or None)."""
        if self.means_init is None:
            return None
        m = check_array(self.means_init, dtype=np.float64, copy=True, input_name="means_init")
        k = self.n_components
        if m.shape != (k, d):
            raise ValueError(f"means_init must have shape ({k}, {d}); got {m.shape}.")
        return m

    def _set_frame(self, X) -> None:
        pass

    def _to_working(self, X):
        return X

    def _log_jacobian(self) -> float:
        return 0.0

    @_fit_context
    def fit(self, X, y=None, sample_weight=None):
        """Estimate the parameters by EM (``n_init`` starts, the best bound is kept).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights: a row of weight ``w`` counts as ``w`` repeated rows in the
            likelihood and in every sufficient statistic of the M-step.

        Returns
        -------
        self
        """
        self.fit_predict(X, y, sample_weight=sample_weight)
        return self

    @_fit_context
    def fit_predict(self, X, y=None, sample_weight=None):
        """Fit, then return the most responsible component of each training point.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
        sample_weight : array-like of shape (n_samples,), optional
            See :meth:`fit`.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        if is_dask(X):
            from ._dask import mixture_fit_dask

            return mixture_fit_dask(self, X, sample_weight)
        X = self._check_X(X, reset=True)
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, X)
        n_eff = X.shape[0] if sample_weight is None else int(np.count_nonzero(sample_weight))
        if n_eff < self.n_components:
            raise ValueError(
                f"n_samples={n_eff} should be >= n_components={self.n_components}: a "
                "mixture cannot have more components than points"
                + ("" if sample_weight is None else " (of non-zero weight)")
                + "."
            )
        rng = check_random_state(self.random_state)
        self._set_frame(X)
        Xw = self._to_working(X)
        model = _WorkingEM(self, sample_weight)
        best, best_params = None, None
        for _ in range(self.n_init):
            self._initialize(Xw, rng, sample_weight)
            result = em(model, Xw, max_iter=self.max_iter, tol=self.tol)
            if best is None or result.lower_bound > best.lower_bound:
                best, best_params = result, self._get_parameters()
        self._set_parameters(best_params)
        labels = self._log_norm_and_resp(Xw)[1].argmax(axis=1)
        self.converged_ = best.converged
        self.n_iter_ = best.n_iter
        # The bound of the data as given: log p(x) = log p_w(x_w) - log |det dx_w/dx|^-1.
        jac = self._log_jacobian()
        self.lower_bound_ = best.lower_bound - jac
        self.lower_bounds_ = best.lower_bounds - jac
        if not self.converged_:
            warnings.warn(
                f"EM did not converge in max_iter={self.max_iter} iterations (last change of "
                "the bound above tol); increase max_iter or tol, or check the initialisation.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self._after_fit(X)
        return labels

    def _after_fit(self, X):
        pass

    def score_samples(self, X):
        """Log density ``log p(x_n) = logsumexp_k (log pi_k + log p(x_n | theta_k))``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_prob : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        if is_dask(X):
            from ._dask import mixture_predict_dask

            return mixture_predict_dask(self, X, what="score")
        X_user = self._check_X(X, reset=False)
        X = self._to_working(X_user)
        log_norm = self._log_norm_and_resp(X)[0] - self._log_jacobian()
        # A row ~1e154 standard deviations or more from every component has a log-density
        # below the float range: an error naming the row, never -inf in silence.
        return check_log_density(log_norm, X_user, what="the log-density")

    def score(self, X, y=None) -> float:
        """Average log-likelihood of ``X``."""
        return float(np.mean(self.score_samples(X)))

    def predict_proba(self, X):
        """Responsibilities ``p(z_n = k | x_n)``, shape (n_samples, n_components)."""
        check_is_fitted(self)
        if is_dask(X):
            from ._dask import mixture_predict_dask

            return mixture_predict_dask(self, X, what="proba")
        X = self._to_working(self._check_X(X, reset=False))
        return np.exp(self._log_norm_and_resp(X)[1])

    def predict(self, X):
        """Most responsible component of each row of ``X``."""
        check_is_fitted(self)
        if is_dask(X):
            from ._dask import mixture_predict_dask

            return mixture_predict_dask(self, X, what="labels")
        X = self._to_working(self._check_X(X, reset=False))
        return self._log_norm_and_resp(X)[1].argmax(axis=1)

    def _total_log_likelihood(self, X, y=None) -> float:
        # ``aic`` / ``bic`` (InformationCriterionMixin): Imperial "Mathematics for Inference
        # and Machine Learning" §1.7.6, eqs. 1.208-1.209, with ``_n_parameters`` the free
        # parameters of the mixture (means, covariances, K - 1 weights).
        return float(self.score_samples(X).sum())

    def sample(self, n_samples: int = 1, random_state=None):
        """Draw from the fitted mixture: a component by ``pi``, then a point from it.

        Parameters
        ----------
        n_samples : int, default=1
        random_state : int, Generator, RandomState or None
            Defaults to the estimator's ``random_state``.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
        y : ndarray of shape (n_samples,)
            Component of each draw (sorted).
        """
        check_is_fitted(self)
        n_samples = check_int(n_samples, "n_samples")
        rng = check_random_state(self.random_state if random_state is None else random_state)
        counts = rng.multinomial(n_samples, self.weights_)
        X = self._sample_components(counts, rng)
        return X, np.repeat(np.arange(self.n_components), counts)

    def _validate_basic(self, X, reset):
        return validate_data(self, X, dtype=np.float64, reset=reset, ensure_min_samples=1)
