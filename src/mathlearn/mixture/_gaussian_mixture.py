"""Gaussian mixture model fitted by EM."""

from __future__ import annotations

import warnings
from numbers import Real
from typing import ClassVar

import numpy as np
from scipy.linalg.blas import get_blas_funcs

from ..distributions import MultivariateNormal
from ..exceptions import NumericalWarning
from ..utils._param_validation import Interval, StrOptions
from ..utils.linalg import cho_solve_batched, cholesky, cholesky_batched
from ._base import _BASE_CONSTRAINTS, _BaseMixture

__all__ = ["GaussianMixture"]

_COV_TYPES = ("full", "tied", "diag", "spherical")
_LOG_2PI = np.log(2.0 * np.pi)
_INIT_PARAMS = {"kmeans", "k-means++", "random", "random_from_data"}


def _singular(what):
    return ValueError(
        f"the covariance of {what} is singular: the component collapsed onto too few "
        "points (e.g. duplicates or a single point). Increase reg_covar, decrease "
        "n_components, or remove duplicate samples."
    )


def _chol(cov, what):
    """Lower Cholesky factor(s) of one covariance (2-D) or a stack (3-D), through
    :mod:`mathlearn.utils.linalg`; a singular one is an error naming the component."""
    try:
        if cov.ndim == 2:
            return cholesky(cov, jitter=None, name=what)
        return cholesky_batched(cov, name="component")
    except np.linalg.LinAlgError as exc:
        msg = str(exc)
        # "component[k] is not positive definite." -> "component k"
        if msg.startswith("component["):
            what = "component " + msg[len("component[") : msg.index("]")]
        raise _singular(what) from None


def _exponent(m: float) -> int:
    """``e`` with ``2**(e - 1) <= m < 2**e`` (0 for 0 or a non-finite ``m``)."""
    return 0 if m == 0.0 or not np.isfinite(m) else int(np.frexp(m)[1])


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
        unbounded there, PRML §9.2.1). 0 disables it.
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

    See Also
    --------
    mathlearn.mixture.BayesianGaussianMixture
        The variational Bayesian mixture.
    mathlearn.cluster.KMeans
        The hard-assignment limit.
    sklearn.mixture.GaussianMixture
        scikit-learn's equivalent.

    Notes
    -----
    PRML §9.2 and Oxford "Advanced Topics in Statistical Machine Learning" §5.4:

    * E-step, in log space: ``log gamma_nk = log pi_k + log N(x_n | mu_k, Sigma_k) -
      logsumexp_j(log pi_j + log N(x_n | mu_j, Sigma_j))``;
    * M-step: ``N_k = sum_n gamma_nk``, ``mu_k = (1/N_k) sum_n gamma_nk x_n``,
      ``Sigma_k = (1/N_k) sum_n gamma_nk (x_n - mu_k)(x_n - mu_k)^T + epsilon I`` with the new
      means, ``pi_k = N_k / N``; the tied, diagonal and spherical forms are the maximisers
      under those constraints.

    The iteration is :func:`~mathlearn.mixture.em`, whose bound argument (free energy, KL,
    Gibbs' inequality; Oxford "Advanced Topics in Statistical Machine Learning" §5.2-5.3) makes
    ``lower_bounds_`` non-decreasing. Densities use the Cholesky factor ``L_k`` of ``Sigma_k``:
    ``log det Sigma_k = 2 sum log diag L_k`` and the Mahalanobis term ``||L_k^{-1}(x - mu_k)||^2``
    by a triangular solve. A component whose covariance is held up only by ``reg_covar`` at the end
    of the fit (it collapsed onto a point or a subspace) raises a
    :class:`~mathlearn.exceptions.NumericalWarning`; with ``reg_covar=0`` a singular covariance is
    an error.

    Full densities take, per component, the differences ``x_n - mu_k`` into one reused
    ``N x D`` buffer and one in-place triangular solve with ``L_k``; tied ones go through the
    batched kernel of :class:`~mathlearn.distributions.MultivariateNormal`; diagonal and
    spherical ones are two matrix products on the data centred by their mean. The
    log-sum-exp is a direct max-shift, in place on the ``N x K`` log-probabilities. The
    mixture is fitted in that centred frame, and data of extreme magnitude (beyond ~1e60)
    are also divided by a power of two first (exact; ``reg_covar`` is scaled alike), so that
    sums of squares stay finite; covariances that are themselves outside the float range are
    an error. Rows far outside the data (~1e154 standard deviations) get the
    limit responsibilities, and a log-density of ``-inf`` with a warning.

    ``fit(X, sample_weight=w)`` weights every sufficient statistic: a row of weight ``w_n``
    counts as ``w_n`` repeated rows.

    Complexity per EM iteration: ``O(N K D^2 + K D^3)`` time for full covariances (``O(N K
    D)`` for diagonal and spherical ones, ``O(N K D + N D^2)`` for tied), in ``O(N (K + D))``
    memory besides ``X`` (the ``N x K`` responsibilities and one ``N x D`` buffer).

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

    _parameter_constraints: ClassVar[dict] = {
        **_BASE_CONSTRAINTS,
        "covariance_type": [StrOptions(set(_COV_TYPES))],
        "reg_covar": [Interval(Real, 0, None, closed="left")],
        "init_params": [StrOptions(_INIT_PARAMS)],
        "precisions_init": ["array-like", None],
    }

    # The sample-weight equivalence check fits 30 features with 15 distinct points: a full
    # covariance is singular there (held up by reg_covar, which the estimator rightly warns
    # about), diagonal ones are not. The contract checks do not depend on the covariance type.
    _common_test_params: ClassVar[dict] = {"covariance_type": "diag"}

    # The working frame of the fitted parameters: data are handled as (x - offset) / scale.
    _frame_offset = 0.0
    _frame_scale = 1.0

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

    # The working frame: the mixture is fitted to (x - c) / s with c the data mean and s a
    # power of two (1 unless the data's magnitude is extreme). A Gaussian mixture is
    # equivariant under affine maps of the data (with reg_covar / s^2 in place of
    # reg_covar), so this is exact mathematics; centring keeps the diagonal forms' matrix
    # products accurate far from the origin, the exact power-of-two scaling keeps sums of
    # squares inside the float range, and log p(x) = log p_w((x - c) / s) - D log s.

    def _set_frame(self, X):
        e = _exponent(float(np.max(np.abs(X))))
        # Large data are scaled down before anything is summed (sums of squares overflow long
        # before the data do). Small data are left alone when reg_covar > 0: their covariances
        # are then reg_covar (the specified answer) and scaling up would overflow it.
        if e > 200 or (e < -200 and self.reg_covar == 0):
            s = float(np.ldexp(1.0, e - 1))
            c = (X / s).mean(axis=0) * s
        else:
            s = 1.0
            c = X.mean(axis=0)
        self._frame_offset = c
        self._frame_scale = s

    def _to_working(self, X):
        Xw = X - self._frame_offset
        return Xw / self._frame_scale if self._frame_scale != 1.0 else Xw

    def _log_jacobian(self) -> float:
        if self._frame_scale == 1.0:
            return 0.0
        return self._means_w.shape[1] * float(np.log(self._frame_scale))

    def _set_covariances(self, cov_w):
        """Store working covariances and their Cholesky factors (raises if one is singular)
        and the covariances in the user's units."""
        self._cov_w = cov_w
        ct = self.covariance_type
        if ct == "full":
            self._cov_chol = _chol(cov_w, "component")
        elif ct == "tied":
            self._cov_chol = _chol(cov_w, "the tied covariance")
        else:
            if np.any(cov_w <= 0):
                raise _singular(f"component {int(np.argwhere(cov_w <= 0)[0][0])}")
            self._cov_chol = np.sqrt(cov_w)

    # The covariances and precisions are kept in the working frame, where every computation
    # happens, and read in the user's units: for data of size 1e300 a covariance (1e600) is
    # not a float, and reading it is a clear error while the fit, its predictions and its
    # log-densities hold.
    @property
    def covariances_(self):
        """Component covariances in the data's units (shape depends on covariance_type)."""
        if "_cov_w" not in self.__dict__:
            raise AttributeError("'GaussianMixture' object has no attribute 'covariances_'")
        return self._to_user_cov(self._cov_w)

    @property
    def precisions_(self):
        """Inverses of the covariances, in the data's units."""
        if "_prec_w" not in self.__dict__:
            raise AttributeError("'GaussianMixture' object has no attribute 'precisions_'")
        s = self._frame_scale
        if s == 1.0:
            return self._prec_w
        with np.errstate(over="ignore", under="ignore"):
            prec = self._prec_w / s / s
        if not np.all(np.isfinite(prec)) or np.any((prec == 0) & (self._prec_w != 0)):
            raise ValueError(
                "the precisions of X are outside the float range: the data's spread is "
                f"~{s:.1e}, whose inverse square is not a float. Rescale X."
            )
        return prec

    def _to_user_cov(self, cov_w):
        s = self._frame_scale
        if s == 1.0:
            return cov_w
        with np.errstate(over="ignore", under="ignore"):
            cov = cov_w * s * s
        if not np.all(np.isfinite(cov)):
            raise ValueError(
                "the covariances of X exceed the largest float (~1.8e308): the data's spread "
                f"is ~{s:.1e}, whose square is not a float. Rescale X."
            )
        diag = (
            cov
            if cov.ndim < 2 or self.covariance_type == "diag"
            else np.diagonal(cov, axis1=-2, axis2=-1)
        )
        if np.any(diag <= np.finfo(float).tiny):
            raise ValueError(
                "the covariances of X underflow the float range (below ~2.2e-308): the data's "
                f"spread is ~{s:.1e}. Rescale X, or set reg_covar > 0."
            )
        return cov

    def _set_means(self, means_w):
        self._means_w = means_w
        self.means_ = means_w * self._frame_scale + self._frame_offset

    def _get_parameters(self):
        return (self.weights_.copy(), self._means_w.copy(), self._cov_w.copy())

    def _set_parameters(self, params):
        self.weights_, means_w, cov_w = params
        self._set_means(means_w)
        self._set_covariances(cov_w)

    def _initialize(self, X, rng, sample_weight=None, estimate=None):
        """Initial ``pi, mu, Sigma`` (working units) from ``init_params`` and the ``*_init``
        overrides (user units). ``estimate()``, when given, returns the ``(pi, mu, Sigma)`` of
        the initial responsibilities (the Dask path computes them by blocks)."""
        d = X.shape[1]
        k = self.n_components
        weights = self._checked_weights_init()
        means = self._checked_means_init(d)
        covariances = None
        if self.precisions_init is not None:
            covariances = self._covariances_from_precisions(self.precisions_init, k, d)
            covariances = covariances / self._frame_scale / self._frame_scale
        if weights is None or means is None or covariances is None:
            if estimate is None:
                resp = self._initial_responsibilities(X, rng, sample_weight)
                w0, m0, c0 = self._estimate_parameters(X, resp)
            else:
                w0, m0, c0 = estimate()
            weights = w0 if weights is None else weights
            covariances = c0 if covariances is None else covariances
            means = m0 if means is None else self._to_working(means)
        else:
            means = self._to_working(means)
        self.weights_ = np.asarray(weights, dtype=float)
        self._set_means(means)
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
        for m in mats:
            if not np.allclose(m, m.T, rtol=1e-10, atol=1e-12 * np.abs(m).max()):
                raise ValueError("precisions_init must be symmetric.")
        try:
            R = cholesky_batched(mats, name="precisions_init")
        except np.linalg.LinAlgError:
            raise ValueError("precisions_init must be positive definite.") from None
        # A boundary conversion of the user's precision to a covariance.
        out = cho_solve_batched(R, np.eye(d))
        return out if ct == "full" else out[0]

    def _estimate_parameters(self, X, resp):
        """M-step maximisers ``(pi, mu, Sigma)`` for (weighted) responsibilities ``resp``."""
        d = X.shape[1]
        nk = resp.sum(axis=0) + 10 * np.finfo(resp.dtype).eps
        means = (resp.T @ X) / nk[:, None]
        # reg_covar in working units (only ever scaled for large data, or when it is 0).
        reg = self.reg_covar / self._frame_scale / self._frame_scale
        ct = self.covariance_type
        if ct == "full":
            # Per component, in one reused N x D buffer: the differences scaled by the square
            # roots of the responsibilities, then the product B^T B (D x D).
            cov = np.empty((self.n_components, d, d))
            diff = np.empty_like(X)
            for k in range(self.n_components):
                np.subtract(X, means[k], out=diff)
                diff *= np.sqrt(resp[:, k])[:, None]
                np.matmul(diff.T, diff, out=cov[k])
                cov[k] /= nk[k]
                cov[k].flat[:: d + 1] += reg
        elif ct == "tied":
            # sum_k sum_n r_nk (x_n - mu_k)(x_n - mu_k)^T = X^T R X - sum_k N_k mu_k mu_k^T
            # (R = diag of the row sums of resp), on the centred data of the working frame.
            rw = resp.sum(axis=1)
            cov = (rw * X.T) @ X - (nk * means.T) @ means
            cov /= nk.sum()
            cov.flat[:: d + 1] += reg
        else:
            # E_r[x^2] - mu^2 by two matrix products; where that difference cancels (a
            # component whose variance is tiny against its squared mean: more than four digits
            # would be lost) the component is recomputed from the differences x_n - mu_k.
            second = (resp.T @ (X * X)) / nk[:, None]
            cov = second - means * means
            bad = np.flatnonzero(np.any(cov <= 1e-4 * second, axis=1))
            for k in bad:
                diff = X - means[k]
                cov[k] = (resp[:, k] @ (diff * diff)) / nk[k]
            cov += reg
            if ct == "spherical":
                cov = cov.mean(axis=1)
        weights = nk / nk.sum()
        return weights, means, cov

    def _suff_stats(self, X, resp, ref):
        """Sums over rows that the M-step needs (they add across row blocks): ``N_k``,
        ``sum_n r_nk x_n`` and the second moments about reference means ``ref`` (the
        current ones: near convergence the correction ``N_k (mu_k - ref_k)^2`` is tiny, so
        the moments keep their digits), or ``X^T diag(sum_k r_nk) X`` for a tied covariance.
        """
        nk = resp.sum(axis=0)
        sx = resp.T @ X
        ct = self.covariance_type
        if ct == "tied":
            second = (resp.sum(axis=1) * X.T) @ X
        elif ct == "full":
            second = np.empty((resp.shape[1], X.shape[1], X.shape[1]))
            for k in range(resp.shape[1]):
                diff = X - ref[k]
                second[k] = (resp[:, k] * diff.T) @ diff
        else:
            second = np.empty((resp.shape[1], X.shape[1]))
            for k in range(resp.shape[1]):
                diff = X - ref[k]
                second[k] = resp[:, k] @ (diff * diff)
        return nk, sx, second

    def _params_from_stats(self, stats, ref):
        """``(pi, mu, Sigma)`` from :meth:`_suff_stats` summed over all rows (the maximisers
        of :meth:`_estimate_parameters`)."""
        n_true, sx, second = stats
        d = sx.shape[1]
        nk = n_true + 10 * np.finfo(float).eps
        means = sx / nk[:, None]
        reg = self.reg_covar / self._frame_scale / self._frame_scale
        ct = self.covariance_type
        if ct == "tied":
            cov = second - (nk * means.T) @ means
            cov /= nk.sum()
            cov.flat[:: d + 1] += reg
        elif ct == "full":
            delta = means - ref
            cov = second - n_true[:, None, None] * delta[:, :, None] * delta[:, None, :]
            cov /= nk[:, None, None]
            for k in range(cov.shape[0]):
                cov[k].flat[:: d + 1] += reg
        else:
            delta = means - ref
            cov = (second - n_true[:, None] * delta * delta) / nk[:, None]
            cov += reg
            if ct == "spherical":
                cov = cov.mean(axis=1)
        return nk / nk.sum(), means, cov

    def _maximize_stats(self, stats, ref):
        weights, means, cov = self._params_from_stats(stats, ref)
        self.weights_ = weights
        self._set_means(means)
        self._set_covariances(cov)

    def _stats_reference(self):
        """The means the second moments of the next E-step are taken about."""
        return self._means_w.copy()

    def _maximize(self, X, resp):
        weights, means, cov = self._estimate_parameters(X, resp)
        self.weights_ = weights
        self._set_means(means)
        self._set_covariances(cov)

    def _half_mahalanobis(self, X, means):
        """``0.5 (x_n - mu_k)^T Sigma_k^{-1} (x_n - mu_k)``, shape (N, K), working units.

        Full and tied covariances: the multivariate normal's batched kernel (one triangular
        solve per Cholesky factor on the differences). Diagonal and spherical: two matrix
        products of the expansion ``x^2 / v - 2 x mu / v + mu^2 / v`` on the centred data of
        the working frame, clipped at zero.
        """
        ct = self.covariance_type
        if ct == "full":
            # Per component: the differences (N x D, reused), one in-place triangular solve
            # L_k z = (x - mu_k) on their transpose (Fortran order: no copy), and the column
            # sums of squares; no (N, K, D) temporary.
            # BLAS's trsm directly (SciPy's solve_triangular wrapper costs more than the
            # solve at N = 1 000, D = 10): Fortran reads the C-ordered factor L_k as its
            # transpose, so op(a) = L_k with trans_a=1 on an upper triangle.
            n = X.shape[0]
            out = np.empty((n, len(means)))
            diff = np.empty_like(X)
            trsm = get_blas_funcs("trsm", dtype=X.dtype)
            for k in range(len(means)):
                np.subtract(X, means[k], out=diff)
                z = trsm(1.0, self._cov_chol[k].T, diff.T, lower=0, trans_a=1, overwrite_b=1)
                out[:, k] = np.einsum("ij,ij->j", z, z)
            out *= 0.5
            return out
        if ct == "tied":
            mvn = MultivariateNormal._from_factor(means, self._cov_chol)
            return 0.5 * mvn._batched_maha_sq(X[:, None, :] - means, (X.shape[0], len(means)))
        if ct == "diag":
            prec = 1.0 / self._cov_w
            out = (X * X) @ prec.T
            out -= 2.0 * (X @ (means * prec).T)
            out += np.einsum("kd,kd->k", means * means, prec)
        else:
            prec = 1.0 / self._cov_w
            out = np.einsum("nd,nd->n", X, X)[:, None] - 2.0 * (X @ means.T)
            out += np.einsum("kd,kd->k", means, means)
            out *= prec
        np.maximum(out, 0.0, out=out)
        out *= 0.5
        return out

    def _log_norm_const(self):
        """``-0.5 log det Sigma_k - D/2 log 2 pi`` per component, working units."""
        d = self._means_w.shape[1]
        ct = self.covariance_type
        L = self._cov_chol
        if ct == "full":
            half_logdet = np.log(np.diagonal(L, axis1=1, axis2=2)).sum(axis=1)
        elif ct == "tied":
            half_logdet = np.full(self.n_components, np.log(np.diag(L)).sum())
        elif ct == "diag":
            half_logdet = 0.5 * np.log(self._cov_w).sum(axis=1)
        else:
            half_logdet = 0.5 * d * np.log(self._cov_w)
        return -half_logdet - 0.5 * d * _LOG_2PI

    def _estimate_log_prob(self, X):
        """``log N(x_n | mu_k, Sigma_k)`` of working-frame data, shape (N, K)."""
        with np.errstate(over="ignore", invalid="ignore"):
            out = self._half_mahalanobis(X, self._means_w)
            return np.subtract(self._log_norm_const(), out, out=out)

    def _rescued_rows(self, Xw, log_norm, log_resp):
        """Rows whose log-densities overflowed (points ~1e154 standard deviations away):
        responsibilities and log-density from scores divided by ``t^2`` (``t`` a power of two
        of the row's size), whose argmax and differences are those of the exact scores."""
        log_w = np.log(self.weights_) + self._log_norm_const()
        bad = ~np.isfinite(log_norm) | np.isnan(log_resp).any(axis=1)
        for i in np.flatnonzero(bad):
            x = Xw[i]
            e = _exponent(float(np.max(np.abs(x)))) - 1  # t = 2**e
            with np.errstate(over="ignore", under="ignore"):
                g = (
                    np.ldexp(log_w, -2 * e)
                    - self._half_mahalanobis(np.ldexp(x[None], -e), np.ldexp(self._means_w, -e))[0]
                )
                gmax = g.max()
                z = np.ldexp(g - gmax, 2 * e)
                lse = np.log(np.sum(np.exp(z)))
                log_resp[i] = z - lse
                log_norm[i] = np.ldexp(gmax, 2 * e) + lse

    def _tied_log_resp(self, X):
        """Responsibilities of a tied mixture from its linear scores, for rows far out.

        With one covariance the quadratic term ``x^T P x / 2`` is common to all components and
        cancels: ``log r_nk = softmax_k(x_n^T P mu_k - mu_k^T P mu_k / 2 + log pi_k)``
        (``P = Sigma^{-1}``). Far from the data the quadratic term swamps the linear one in
        every log-density, so the responsibilities are computed from the linear scores, each
        row scaled by its own power of two.
        """
        B = cho_solve_batched(self._cov_chol[None], self._means_w.T)[0]  # P mu_k, (D, K)
        offset = 0.5 * np.einsum("kd,dk->k", self._means_w, B) - np.log(self.weights_)
        e = np.array([_exponent(float(m)) for m in np.max(np.abs(X), axis=1)])[:, None]
        with np.errstate(over="ignore", under="ignore"):
            a = np.ldexp(X, -e) @ B - np.ldexp(offset[None, :], -e)
            z = np.ldexp(a - a.max(axis=1, keepdims=True), e)
            return z - np.log(np.exp(z).sum(axis=1, keepdims=True))

    def _log_norm_and_resp(self, X):
        log_norm, log_resp = super()._log_norm_and_resp(X)
        if not np.all(np.isfinite(log_norm)):
            self._rescued_rows(X, log_norm, log_resp)
        if self.covariance_type == "tied":
            # Beyond ~1e6 standard deviations the linear scores lose digits inside the
            # log-densities (see _tied_log_resp).
            far = np.flatnonzero(np.max(np.abs(X), axis=1) > 2.0**20)
            if far.size:
                log_resp[far] = self._tied_log_resp(X[far])
        return log_norm, log_resp

    def _after_fit(self, X):
        ct = self.covariance_type
        if ct in ("full", "tied"):
            L = self._cov_chol if ct == "full" else self._cov_chol[None]
            precisions = cho_solve_batched(L, np.eye(X.shape[1]))
            self._prec_w = precisions[0] if ct == "tied" else precisions
            # Smallest conditional variance of each covariance (squared Cholesky pivots).
            floor = np.min(np.diagonal(L, axis1=1, axis2=2) ** 2, axis=1)
        else:
            self._prec_w = 1.0 / self._cov_w
            floor = self._cov_w if ct == "spherical" else self._cov_w.min(axis=1)
        if self.reg_covar > 0:
            # In working units (reg_covar / s^2 there).
            s = self._frame_scale
            collapsed = np.flatnonzero(floor < 2.0 * self.reg_covar / s / s)
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

    def _sample_components(self, counts, rng):
        d = self.means_.shape[1]
        ct = self.covariance_type
        s = self._frame_scale
        parts = []
        for k, c in enumerate(counts):
            z = rng.standard_normal((c, d))
            if ct == "full":
                z = z @ self._cov_chol[k].T
            elif ct == "tied":
                z = z @ self._cov_chol.T
            else:
                z = z * self._cov_chol[k]
            parts.append(self.means_[k] + z * s)
        return np.vstack(parts)
