"""Gaussian mixture model fitted by EM (spec 001 M44, spec 002 M28 and M31)."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla

from ..base import check_is_fitted
from ..exceptions import NumericalWarning
from ..utils.validation import (
    check_array,
    check_int,
    check_probability_vector,
    check_random_state,
)
from ._base import _BaseMixture

__all__ = ["GaussianMixture"]

_COV_TYPES = ("full", "tied", "diag", "spherical")
_LOG_2PI = np.log(2.0 * np.pi)


def _chol(cov, what):
    try:
        return sla.cholesky(cov, lower=True, check_finite=False)
    except sla.LinAlgError:
        raise ValueError(
            f"the covariance of {what} is singular: the component collapsed onto too few "
            "points (e.g. duplicates or a single point). Increase reg_covar, decrease "
            "n_components, or remove duplicate samples."
        ) from None


def _responsibilities_from_init(X, init, n_components, rng):
    """Initial responsibilities (N, K) for ``init_params``."""
    n = X.shape[0]
    resp = np.zeros((n, n_components))
    if init == "kmeans":
        from ..cluster import KMeans

        labels = KMeans(n_components, n_init=1, random_state=rng).fit(X).labels_
        resp[np.arange(n), labels] = 1.0
    elif init == "k-means++":
        from ..cluster._kmeans_common import _kmeans_plusplus

        _, idx = _kmeans_plusplus(X, n_components, rng)
        resp[idx, np.arange(n_components)] = 1.0
    elif init == "random":
        resp = rng.uniform(size=(n, n_components))
        resp /= resp.sum(axis=1, keepdims=True)
    elif init == "random_from_data":
        idx = rng.choice(n, n_components, replace=False)
        resp[idx, np.arange(n_components)] = 1.0
    else:
        raise ValueError(
            "init_params must be 'kmeans', 'k-means++', 'random' or 'random_from_data'; "
            f"got {init!r}."
        )
    return resp


class GaussianMixture(_BaseMixture):
    """Gaussian mixture ``p(x) = sum_k pi_k N(x | mu_k, Sigma_k)`` fitted by EM.

    Parameters
    ----------
    n_components : int, default=1
        Number of components ``K``.
    covariance_type : {"full", "tied", "diag", "spherical"}, default="full"
        Each component its own full covariance; one full covariance shared by all; diagonal
        covariances; one variance per component (``Sigma_k = sigma_k^2 I``).
    tol : float, default=1e-3
        EM stops when the per-sample log-likelihood changes by less than ``tol``.
    reg_covar : float, default=1e-6
        ``epsilon`` added to the diagonal of every covariance estimate, so that a component
        that shrinks onto a point keeps a positive definite covariance (the likelihood is
        unbounded there, notes 001 L813). 0 disables it.
    max_iter : int, default=100
    n_init : int, default=1
        Number of initialisations; the fit with the largest final bound is kept.
    init_params : {"kmeans", "k-means++", "random", "random_from_data"}, default="kmeans"
        Initial responsibilities: hard k-means labels, k-means++ seeds, uniform random
        weights, or random data points. Parameters given through the ``*_init`` arguments
        override the ones derived from them.
    weights_init : array-like of shape (n_components,), optional
    means_init : array-like of shape (n_components, n_features), optional
    precisions_init : array-like, optional
        Initial precision matrices (inverse covariances), shaped as ``covariances_``.
    random_state : int, Generator, RandomState or None

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,)
        ``pi_k``.
    means_ : ndarray of shape (n_components, n_features)
    covariances_ : ndarray
        (K, D, D) full, (D, D) tied, (K, D) diag, (K,) spherical.
    precisions_ : ndarray
        Inverse covariances, same shape (for compatibility; computations use Cholesky
        factors of the covariances and triangular solves, never these inverses).
    converged_ : bool
    n_iter_ : int
    lower_bound_ : float
        Per-sample log-likelihood ``(1/N) sum_n log p(x_n)`` of the kept run, at the start of
        its last iteration (scikit-learn's convention).
    lower_bounds_ : ndarray of shape (n_iter_,)
        The bound at every iteration; it never decreases (EM's monotonicity) with
        ``reg_covar=0``. With ``reg_covar > 0`` the covariance update ``S_k + epsilon I`` is
        not the exact maximiser of the M-step, and once a variance is within a few orders of
        magnitude of ``epsilon`` the bound can dip slightly; the driver then warns once.
    n_features_in_ : int

    Notes
    -----
    Spec 001 M44 (notes ``seeds/001_*`` L795-839) and spec 002 §5.4 (M31):

    * E-step, in log space: ``log gamma_nk = log pi_k + log N(x_n | mu_k, Sigma_k) -
      logsumexp_j(log pi_j + log N(x_n | mu_j, Sigma_j))``;
    * M-step: ``N_k = sum_n gamma_nk``, ``mu_k = (1/N_k) sum_n gamma_nk x_n``,
      ``Sigma_k = (1/N_k) sum_n gamma_nk (x_n - mu_k)(x_n - mu_k)^T + epsilon I`` with the new
      means, ``pi_k = N_k / N``; the tied, diagonal and spherical forms are the maximisers
      under those constraints.

    The iteration is :func:`~mathlearn.mixture.em`, whose bound argument (free energy, KL,
    Gibbs' inequality; notes 002 §5.2-5.3) makes ``lower_bounds_`` non-decreasing. Densities
    use the Cholesky factor ``L_k`` of ``Sigma_k``: ``log det Sigma_k = 2 sum log diag L_k``
    and the Mahalanobis term ``||L_k^{-1}(x - mu_k)||^2`` by a triangular solve. A component
    whose covariance is held up only by ``reg_covar`` at the end of the fit (it collapsed
    onto a point or a subspace) raises a :class:`~mathlearn.exceptions.NumericalWarning`;
    with ``reg_covar=0`` a singular covariance is an error.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.mixture import GaussianMixture
    >>> X = np.array([[-2.0], [-1.0], [0.0], [4.0], [5.0], [6.0]])
    >>> gm = GaussianMixture(2, means_init=[[-1.0], [1.0]], reg_covar=0.0, tol=1e-10,
    ...                      max_iter=500).fit(X)
    >>> gm.means_.ravel().round(6).tolist(), gm.covariances_.ravel().round(6).tolist()
    ([-1.0, 5.0], [0.666667, 0.666667])
    """

    def __init__(
        self,
        n_components: int = 1,
        *,
        covariance_type: str = "full",
        tol: float = 1e-3,
        reg_covar: float = 1e-6,
        max_iter: int = 100,
        n_init: int = 1,
        init_params: str = "kmeans",
        weights_init=None,
        means_init=None,
        precisions_init=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.tol = tol
        self.reg_covar = reg_covar
        self.max_iter = max_iter
        self.n_init = n_init
        self.init_params = init_params
        self.weights_init = weights_init
        self.means_init = means_init
        self.precisions_init = precisions_init
        self.random_state = random_state

    def _check_X(self, X, reset):
        return self._validate_basic(X, reset)

    def _set_covariances(self, covariances):
        """Store covariances and their Cholesky factors (raises if one is singular)."""
        self.covariances_ = covariances
        ct = self.covariance_type
        if ct == "full":
            self._cov_chol = np.stack(
                [_chol(c, f"component {k}") for k, c in enumerate(covariances)]
            )
        elif ct == "tied":
            self._cov_chol = _chol(covariances, "the tied covariance")
        else:
            if np.any(covariances <= 0):
                k = int(np.argwhere(covariances <= 0)[0][0])
                _chol(np.zeros((1, 1)), f"component {k}")
            self._cov_chol = np.sqrt(covariances)

    def _get_parameters(self):
        return (self.weights_.copy(), self.means_.copy(), self.covariances_.copy())

    def _set_parameters(self, params):
        self.weights_, self.means_, covariances = params
        self._set_covariances(covariances)

    def _initialize(self, X, rng):
        """Initial ``pi, mu, Sigma`` from ``init_params`` and the ``*_init`` overrides."""
        d = X.shape[1]
        k = self.n_components
        ct = self.covariance_type
        if ct not in _COV_TYPES:
            raise ValueError(f"covariance_type must be one of {_COV_TYPES}; got {ct!r}.")
        if not (np.isfinite(self.reg_covar) and self.reg_covar >= 0):
            raise ValueError(f"reg_covar must be a non-negative number; got {self.reg_covar!r}.")
        given = (self.weights_init, self.means_init, self.precisions_init)
        if any(v is None for v in given):
            resp = _responsibilities_from_init(X, self.init_params, k, rng)
            weights, means, covariances = self._estimate_parameters(X, resp)
        else:
            weights = means = covariances = None
        if self.weights_init is not None:
            weights = check_probability_vector(self.weights_init, "weights_init", atol=1e-6)
            if weights.shape != (k,):
                raise ValueError(f"weights_init must have shape ({k},); got {weights.shape}.")
        if self.means_init is not None:
            means = check_array(self.means_init, dtype=np.float64, copy=True)
            if means.shape != (k, d):
                raise ValueError(f"means_init must have shape ({k}, {d}); got {means.shape}.")
        if self.precisions_init is not None:
            covariances = self._covariances_from_precisions(self.precisions_init, k, d)
        self.weights_ = np.asarray(weights, dtype=float)
        self.means_ = means
        self._set_covariances(covariances)

    def _covariances_from_precisions(self, precisions, k, d):
        P = np.asarray(precisions, dtype=np.float64)
        ct = self.covariance_type
        shape = {"full": (k, d, d), "tied": (d, d), "diag": (k, d), "spherical": (k,)}[ct]
        if P.shape != shape:
            raise ValueError(f"precisions_init must have shape {shape} for {ct!r}; got {P.shape}.")
        if not np.all(np.isfinite(P)):
            raise ValueError("precisions_init contains NaN or infinity.")
        if ct in ("diag", "spherical"):
            if np.any(P <= 0):
                raise ValueError("precisions_init must be positive.")
            return 1.0 / P
        mats = P if ct == "full" else P[None]
        out = np.empty_like(mats)
        eye = np.eye(d)
        for j, m in enumerate(mats):
            if not np.allclose(m, m.T, rtol=1e-10, atol=1e-12 * np.abs(m).max()):
                raise ValueError("precisions_init must be symmetric.")
            try:
                cf = sla.cho_factor(m, lower=True, check_finite=False)
            except sla.LinAlgError:
                raise ValueError("precisions_init must be positive definite.") from None
            # A boundary conversion of the user's precision to a covariance.
            out[j] = sla.cho_solve(cf, eye, check_finite=False)
        return out if ct == "full" else out[0]

    def _estimate_parameters(self, X, resp):
        """M-step maximisers ``(pi, mu, Sigma)`` for responsibilities ``resp``."""
        d = X.shape[1]
        nk = resp.sum(axis=0) + 10 * np.finfo(resp.dtype).eps
        means = (resp.T @ X) / nk[:, None]
        reg = self.reg_covar
        ct = self.covariance_type
        if ct == "full":
            cov = np.empty((self.n_components, d, d))
            for k in range(self.n_components):
                diff = X - means[k]
                cov[k] = (resp[:, k] * diff.T) @ diff / nk[k]
                cov[k].flat[:: d + 1] += reg
        elif ct == "tied":
            # sum_k sum_n r_nk (x_n - mu_k)(x_n - mu_k)^T = X^T X - sum_k N_k mu_k mu_k^T, on
            # data centred by their mean (the covariance does not depend on the origin; far
            # from it the two terms would cancel catastrophically).
            xbar = X.mean(axis=0)
            Xc = X - xbar
            mc = means - xbar
            cov = Xc.T @ Xc - (nk * mc.T) @ mc
            cov /= nk.sum()
            cov.flat[:: d + 1] += reg
        else:
            # From the differences x_n - mu_k, not E[x^2] - mu^2 (which cancels for data far
            # from the origin).
            cov = np.empty((self.n_components, d))
            for k in range(self.n_components):
                diff = X - means[k]
                cov[k] = (resp[:, k] @ (diff * diff)) / nk[k]
            cov += reg
            if ct == "spherical":
                cov = cov.mean(axis=1)
        weights = nk / nk.sum()
        return weights, means, cov

    def _m_step(self, X, log_resp):
        weights, means, cov = self._estimate_parameters(X, np.exp(log_resp))
        self.weights_ = weights
        self.means_ = means
        self._set_covariances(cov)

    def _estimate_log_prob(self, X):
        """``log N(x_n | mu_k, Sigma_k)``, shape (N, K)."""
        n, d = X.shape
        ct = self.covariance_type
        L = self._cov_chol
        if ct == "full":
            out = np.empty((n, self.n_components))
            Xt = X.T
            for k in range(self.n_components):
                Y = sla.solve_triangular(L[k], Xt, lower=True, check_finite=False)
                m = sla.solve_triangular(L[k], self.means_[k], lower=True, check_finite=False)
                Y -= m[:, None]
                maha = np.einsum("ij,ij->j", Y, Y)
                out[:, k] = -0.5 * maha - np.log(np.diag(L[k])).sum()
        else:
            # Mahalanobis terms from differences (no expanded ||x||^2 - 2 x^T mu + ||mu||^2,
            # whose terms cancel for data far from the origin), one component at a time.
            if ct == "tied":
                Y = sla.solve_triangular(L, X.T, lower=True, check_finite=False).T
                M = sla.solve_triangular(L, self.means_.T, lower=True, check_finite=False).T
                scale = np.ones((self.n_components, d))
                half_logdet = np.full(self.n_components, np.log(np.diag(L)).sum())
            else:
                Y, M = X, self.means_
                var = self.covariances_
                scale = 1.0 / (var if ct == "diag" else np.repeat(var[:, None], d, axis=1))
                half_logdet = (
                    0.5 * np.log(var).sum(axis=1) if ct == "diag" else 0.5 * d * np.log(var)
                )
            out = np.empty((n, self.n_components))
            for k in range(self.n_components):
                diff = Y - M[k]
                out[:, k] = -0.5 * ((diff * diff) @ scale[k]) - half_logdet[k]
        return out - 0.5 * d * _LOG_2PI

    def _after_fit(self, X):
        ct = self.covariance_type
        if ct in ("full", "tied"):
            L = self._cov_chol if ct == "full" else self._cov_chol[None]
            eye = np.eye(X.shape[1])
            self.precisions_ = np.stack([sla.cho_solve((Lk, True), eye) for Lk in L])
            if ct == "tied":
                self.precisions_ = self.precisions_[0]
            # Smallest conditional variance of each covariance (squared Cholesky pivots).
            floor = np.min(np.diagonal(L, axis1=1, axis2=2) ** 2, axis=1)
        else:
            self.precisions_ = 1.0 / self.covariances_
            floor = self.covariances_ if ct == "spherical" else self.covariances_.min(axis=1)
        if self.reg_covar > 0:
            collapsed = np.flatnonzero(floor < 2.0 * self.reg_covar)
            if collapsed.size:
                what = (
                    "the tied covariance" if ct == "tied" else f"component(s) {collapsed.tolist()}"
                )
                warnings.warn(
                    f"{what} collapsed: the data give (almost) no spread in some direction, so "
                    f"the covariance is held positive definite only by reg_covar="
                    f"{self.reg_covar:g}. The likelihood is unbounded there; use fewer "
                    "components, remove duplicate points or raise reg_covar.",
                    NumericalWarning,
                    stacklevel=3,
                )

    def _n_parameters(self) -> int:
        d = self.means_.shape[1]
        k = self.n_components
        cov = {
            "full": k * d * (d + 1) / 2.0,
            "diag": k * d,
            "tied": d * (d + 1) / 2.0,
            "spherical": k,
        }[self.covariance_type]
        return int(cov + k * d + k - 1)

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
            Component of each draw.
        """
        check_is_fitted(self)
        n_samples = check_int(n_samples, "n_samples")
        rng = check_random_state(self.random_state if random_state is None else random_state)
        counts = rng.multinomial(n_samples, self.weights_)
        d = self.means_.shape[1]
        ct = self.covariance_type
        parts = []
        for k, c in enumerate(counts):
            z = rng.standard_normal((c, d))
            if ct == "full":
                z = z @ self._cov_chol[k].T
            elif ct == "tied":
                z = z @ self._cov_chol.T
            else:
                z = z * self._cov_chol[k]
            parts.append(self.means_[k] + z)
        y = np.repeat(np.arange(self.n_components), counts)
        return np.vstack(parts), y
