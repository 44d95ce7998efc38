"""Variational Bayesian Gaussian mixture (PRML §10.2), with a Dirichlet or a truncated
stick-breaking (Dirichlet-process) prior on the weights."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import betaln, digamma, gammaln

from ..base import BaseEstimator, DensityMixin, _fit_context, check_is_fitted
from ..exceptions import ConvergenceWarning
from ..inference import coordinate_ascent
from ..utils._param_validation import Interval, StrOptions
from ..utils.linalg import cho_solve_batched, cholesky_batched
from ..utils.validation import check_array, check_random_state, validate_data
from ._base import _BaseMixture
from ._gaussian_mixture import _exponent

__all__ = ["BayesianGaussianMixture"]

_LOG_2PI = float(np.log(2.0 * np.pi))
_INIT_PARAMS = {"kmeans", "k-means++", "random", "random_from_data"}


# Rows per block of the E-step's product X [P_1 ... P_K] are chosen so that the block holds
# at most this many doubles (2 MiB) and at most half as many as X: the products stay large
# enough for BLAS while the working memory neither grows with N nor exceeds the data's.
_BLOCK_DOUBLES = 1 << 18


class _CAVISweep:
    """One CAVI sweep of the variational mixture: ``q(Z)`` given ``q(pi) q(mu, Lambda)``,
    then ``q(pi) q(mu, Lambda)`` given ``q(Z)``; the bound after it."""

    def __init__(self, mixture, X):
        self.mixture, self.X = mixture, X

    def update(self, X):
        m = self.mixture
        self.log_resp = m._log_resp(self.X)[1]
        m._update_params(self.X, np.exp(self.log_resp))

    def elbo(self, X):
        return self.mixture._elbo(self.log_resp)


class BayesianGaussianMixture(DensityMixin, BaseEstimator):
    r"""Gaussian mixture with a variational posterior over its weights, means and precisions.

    Parameters
    ----------
    n_components : int, default=1
        Upper bound ``K`` on the number of components; the fit empties the ones the data do
        not need.
    covariance_type : {"full", "diag"}, default="full"
        ``"full"``: a Normal-Wishart prior on each component's mean and precision matrix;
        ``"diag"``: a Normal-Gamma prior on each coordinate's mean and precision (diagonal
        precision matrices).
    tol : float, default=1e-6
        Stop when the bound changes by less than ``tol`` relative to its size.
    max_iter : int, default=100
        Maximum number of CAVI sweeps.
    n_init : int, default=1
        Number of initialisations; the one with the largest final bound is kept.
    init_params : {"kmeans", "k-means++", "random", "random_from_data"}, default="kmeans"
        Initial responsibilities (as :class:`GaussianMixture`), from which the first update of
        the parameters' posterior is made.
    weight_concentration_prior_type : {"dirichlet_process", "dirichlet_distribution"}
        Default "dirichlet_process". Prior on the weights: truncated stick-breaking
        ``v_k ~ Beta(1, gamma_0)``, ``pi_k = v_k prod_{j<k} (1 - v_j)``, or a symmetric
        ``Dir(alpha_0)``.
    weight_concentration_prior : float, optional
        ``gamma_0`` or ``alpha_0`` (> 0); ``1 / n_components`` if None. Smaller values empty
        more components.
    mean_precision_prior : float, optional
        ``beta_0 > 0``, the prior precision of the means in units of the component's
        precision; 1 if None.
    mean_prior : array-like of shape (n_features,), optional
        ``m_0``; the data mean if None.
    degrees_of_freedom_prior : float, optional
        ``nu_0 > n_features - 1``; ``n_features`` if None.
    covariance_prior : float or array-like, optional
        ``W_0^{-1}``: (D, D) symmetric positive definite for "full", (D,) positive for "diag";
        the data's covariance (variances for "diag", ``ddof=1``) if None.
    random_state : int, Generator, RandomState or None

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,)
        Posterior mean weights ``E[pi_k]`` (renormalised to sum to one under the truncated
        stick-breaking prior, whose remaining mass belongs to the components beyond ``K``).
    weight_concentration_ : ndarray of shape (n_components,) or tuple of two
        ``alpha_k`` (Dirichlet) or the Beta parameters ``(a_k, b_k)`` of the sticks.
    means_ : ndarray of shape (n_components, n_features)
        ``m_k``, the posterior means of the component means.
    mean_precision_ : ndarray of shape (n_components,)
        ``beta_k``.
    degrees_of_freedom_ : ndarray of shape (n_components,)
        ``nu_k`` (``2 a_k`` for "diag").
    covariances_ : ndarray of shape (K, D, D) ("full") or (K, D) ("diag")
        ``E[Lambda_k]^{-1} = W_k^{-1} / nu_k`` (``b_kd / a_k`` for "diag").
    precisions_ : ndarray, same shape as ``covariances_``
        ``E[Lambda_k] = nu_k W_k``.
    mean_prior_, mean_precision_prior_, degrees_of_freedom_prior_ : ndarray or float
        The priors used (defaults resolved).
    covariance_prior_, weight_concentration_prior_ : ndarray or float
        The priors used (defaults resolved).
    lower_bound_ : float
        Final value of the evidence lower bound ``L(q) <= log p(X)`` (nats, total over the
        data, with every constant).
    lower_bounds_ : ndarray of shape (n_iter_,)
        The bound after each sweep; non-decreasing (coordinate ascent).
    elbo_history_ : ndarray of shape (n_iter_,)
        Same array as ``lower_bounds_``.
    n_iter_ : int
    converged_ : bool
    n_features_in_ : int

    See Also
    --------
    GaussianMixture : Maximum-likelihood mixture fitted by EM.
    mathlearn.inference.coordinate_ascent : The driver of the fit.

    Notes
    -----
    The model (PRML §10.2; Oxford "Advanced Topics in Statistical Machine Learning" §2.8 and
    the Bayesian and Dirichlet-process mixtures of its §2.10) is
    ``z_n ~ Cat(pi)``, ``x_n | z_n = k ~ N(mu_k, Lambda_k^{-1})``,
    ``mu_k | Lambda_k ~ N(m_0, (beta_0 Lambda_k)^{-1})``, ``Lambda_k ~ W(W_0, nu_0)``, with
    the mean-field posterior ``q(Z) q(pi) prod_k q(mu_k, Lambda_k)``. Coordinate ascent
    alternates (PRML eq. 10.46-10.66):

    * ``q(Z)``: ``log r_nk = E[log pi_k] + E[log |Lambda_k|] / 2 - D/2 log 2 pi
      - D / (2 beta_k) - nu_k / 2 (x_n - m_k)^T W_k (x_n - m_k) + const``, normalised over
      ``k``, with ``E[log |Lambda_k|] = sum_i psi((nu_k + 1 - i)/2) + D log 2 + log |W_k|``;
    * ``q(pi)``: ``Dir(alpha_0 + N_k)``, or for the sticks ``Beta(1 + N_k, gamma_0 +
      sum_{j>k} N_j)`` with ``E[log pi_k] = E[log v_k] + sum_{j<k} E[log(1 - v_j)]``;
    * ``q(mu_k, Lambda_k)``: Normal-Wishart with ``beta_k = beta_0 + N_k``,
      ``m_k = (beta_0 m_0 + N_k xbar_k) / beta_k``, ``nu_k = nu_0 + N_k``,
      ``W_k^{-1} = W_0^{-1} + N_k S_k + beta_0 N_k / beta_k (xbar_k - m_0)(xbar_k - m_0)^T``
      (eq. 10.63 with ``nu_k = nu_0 + N_k``, the corrected form).

    With ``"diag"`` each coordinate has its own Normal-Gamma factor
    ``Gam(lambda_kd | nu_k / 2, b_kd)``, ``b_kd`` half the diagonal of the expression above.

    The bound. After the update of the parameters' factors given ``r``, each factor is the
    normalised ``p(theta) exp(E_Z log p(X, Z | theta))``, so the ELBO is the log of its
    normaliser (PRML eq. 10.70-10.77 summed):

    ``L = -sum_nk r_nk log r_nk - N D/2 log 2 pi + sum_k [log Z_NW(k) - log Z_NW(0)]
    + log Z_pi(post) - log Z_pi(prior)``

    with ``log Z_NW = -D/2 log beta + nu D/2 log 2 + nu/2 log |W| + sum_i log Gamma((nu + 1 -
    i)/2)`` (constants common to prior and posterior dropped), ``log Z_pi`` the log
    multivariate Beta function of the Dirichlet or the sum of ``log B(a_k, b_k)``. This is
    the full bound, every constant included. scikit-learn's ``lower_bound_`` drops the
    terms that do not change during a fit: ``ours = theirs - N D/2 log 2 pi - K log Z_NW(0)
    - log Z_pi(prior)`` exactly, and the two agree to rounding from the same
    initial responsibilities (for "full"; their "diag" uses the Wishart's log-determinant
    formula for a diagonal scale, which is not the mean-field Normal-Gamma bound used here).
    The bound never decreases; a decrease beyond rounding warns.

    Components no point needs keep ``N_k ~ 0``: their posterior is their prior and their
    weight ``E[pi_k]`` is ``alpha_0 / (alpha_0 K + N)`` (or the prior stick's share), so a
    small concentration switches them off. ``score_samples`` is the log of the posterior
    predictive density, a mixture of Student t's (PRML eq. 10.81):
    ``sum_k E[pi_k] St(x | m_k, L_k, nu_k + 1 - D)``,
    ``L_k = (nu_k + 1 - D) beta_k / (1 + beta_k) W_k``; ``predict_proba`` gives the
    variational responsibilities.

    Quadratic forms of the E-step use the expansion ``x^T P x - 2 x^T P m + m^T P m`` on data
    centred by their mean (for a block of rows, one matrix product with all the components'
    ``P_k`` side by side); the M-step's scatter matrices come from the same expansion and are
    recomputed from differences for a component whose spread is small against its offset
    from the centre (cancellation).

    Cost per sweep: ``O(N K D^2 + K D^3)`` time for "full" (``O(N K D)`` for "diag");
    memory ``O(N (K + D) + K D^2)`` besides ``X``: no array of size ``N D^2`` is formed.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.mixture import BayesianGaussianMixture
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-5, 1, (100, 2)), rng.normal(5, 1, (100, 2))])
    >>> bgm = BayesianGaussianMixture(n_components=5, weight_concentration_prior=1e-3,
    ...                               max_iter=500, random_state=0).fit(X)
    >>> int((bgm.weights_ > 0.01).sum())
    2
    >>> bool(np.all(np.diff(bgm.lower_bounds_) >= -1e-9 * abs(bgm.lower_bound_)))
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "covariance_type": [StrOptions({"full", "diag"})],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "init_params": [StrOptions(_INIT_PARAMS)],
        "weight_concentration_prior_type": [
            StrOptions({"dirichlet_process", "dirichlet_distribution"})
        ],
        "weight_concentration_prior": [Interval(Real, 0, None, closed="neither"), None],
        "mean_precision_prior": [Interval(Real, 0, None, closed="neither"), None],
        "mean_prior": ["array-like", None],
        "degrees_of_freedom_prior": [Interval(Real, None, None, closed="neither"), None],
        "covariance_prior": ["array-like", Interval(Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
    }

    _frame_offset = 0.0
    _frame_scale = 1.0

    def __init__(
        self,
        n_components: int = 1,
        *,
        covariance_type: str = "full",
        tol: float = 1e-6,
        max_iter: int = 100,
        n_init: int = 1,
        init_params: str = "kmeans",
        weight_concentration_prior_type: str = "dirichlet_process",
        weight_concentration_prior: float | None = None,
        mean_precision_prior: float | None = None,
        mean_prior=None,
        degrees_of_freedom_prior: float | None = None,
        covariance_prior=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.tol = tol
        self.max_iter = max_iter
        self.n_init = n_init
        self.init_params = init_params
        self.weight_concentration_prior_type = weight_concentration_prior_type
        self.weight_concentration_prior = weight_concentration_prior
        self.mean_precision_prior = mean_precision_prior
        self.mean_prior = mean_prior
        self.degrees_of_freedom_prior = degrees_of_freedom_prior
        self.covariance_prior = covariance_prior
        self.random_state = random_state

    def _set_frame(self, X):
        """Working frame ``(x - c) / s``: ``c`` the data mean, ``s`` a power of two (1 unless
        the data's magnitude is extreme). Exact: the model is affine-equivariant with the
        priors mapped alike, and ``log p(x) = log p_w(x_w) - D log s``."""
        e = _exponent(float(np.max(np.abs(X))))
        s = float(np.ldexp(1.0, e - 1)) if (e > 200 or e < -200) else 1.0
        self._frame_scale = s
        self._frame_offset = (X / s).mean(axis=0) * s
        return (X - self._frame_offset) / s

    def _check_priors(self, X, Xw):
        n, d = X.shape
        k = self.n_components
        s = self._frame_scale
        self.weight_concentration_prior_ = (
            1.0 / k if self.weight_concentration_prior is None else self.weight_concentration_prior
        )
        self.mean_precision_prior_ = (
            1.0 if self.mean_precision_prior is None else float(self.mean_precision_prior)
        )
        if self.mean_prior is None:
            self.mean_prior_ = self._frame_offset + 0.0 * X[0]
        else:
            m0 = check_array(
                self.mean_prior, ensure_2d=False, dtype=np.float64, input_name="mean_prior"
            )
            if m0.shape != (d,):
                raise ValueError(f"mean_prior must have shape ({d},); got {m0.shape}.")
            self.mean_prior_ = m0
        self._m0 = (self.mean_prior_ - self._frame_offset) / s
        if self.degrees_of_freedom_prior is None:
            self.degrees_of_freedom_prior_ = float(d)
        elif self.degrees_of_freedom_prior > d - 1:
            self.degrees_of_freedom_prior_ = float(self.degrees_of_freedom_prior)
        else:
            raise ValueError(
                f"degrees_of_freedom_prior must be > n_features - 1 = {d - 1} (the Wishart "
                f"is proper only then); got {self.degrees_of_freedom_prior}."
            )
        full = self.covariance_type == "full"
        if self.covariance_prior is None:
            if n < 2:
                raise ValueError(
                    "covariance_prior=None takes the data's covariance, which needs at least "
                    "2 samples; pass covariance_prior."
                )
            cov_w = np.atleast_2d(np.cov(Xw.T)) if full else Xw.var(axis=0, ddof=1)
            diag = np.diag(cov_w) if full else cov_w
            if not np.all(np.isfinite(cov_w)) or np.any(diag <= 0):
                raise ValueError(
                    "the data have zero (or non-finite) variance along some feature, so the "
                    "default covariance_prior (the data's covariance) is singular; pass a "
                    "positive definite covariance_prior or drop constant features."
                )
            if full:
                try:
                    cholesky_batched(cov_w[None], name="the data's covariance")
                except np.linalg.LinAlgError:
                    raise ValueError(
                        "the data's covariance is singular (collinear features), so the "
                        "default covariance_prior is not positive definite; pass one."
                    ) from None
            self._cov0 = cov_w
        else:
            cp = np.asarray(self.covariance_prior, dtype=np.float64)
            if full:
                cp = check_array(cp, dtype=np.float64, input_name="covariance_prior")
                if cp.shape != (d, d):
                    raise ValueError(
                        f"covariance_prior must have shape ({d}, {d}); got {cp.shape}."
                    )
                if not np.allclose(cp, cp.T, rtol=1e-10, atol=0):
                    raise ValueError("covariance_prior must be symmetric.")
                try:
                    cholesky_batched(cp[None], name="covariance_prior")
                except np.linalg.LinAlgError:
                    raise ValueError("covariance_prior must be positive definite.") from None
            else:
                cp = np.broadcast_to(cp, (d,)).astype(float) if cp.ndim == 0 else cp
                cp = check_array(
                    cp, ensure_2d=False, dtype=np.float64, input_name="covariance_prior"
                )
                if cp.shape != (d,):
                    raise ValueError(f"covariance_prior must have shape ({d},); got {cp.shape}.")
                if np.any(cp <= 0):
                    raise ValueError("covariance_prior must be positive.")
            self._cov0 = cp / s / s

    def _log_z_nw(self, beta, nu, logdet_w):
        """Log normaliser of Normal-Wishart(s), up to constants common to all of them."""
        d = self._m0.shape[0]
        if self.covariance_type == "full":
            i = np.arange(1, d + 1)
            lg = gammaln(0.5 * (np.asarray(nu)[..., None] + 1 - i)).sum(-1)
            return -0.5 * d * np.log(beta) + 0.5 * nu * d * np.log(2.0) + 0.5 * nu * logdet_w + lg
        # diag: logdet_w carries sum_d log b_kd; a = nu / 2 per coordinate.
        a = 0.5 * nu
        return d * (-0.5 * np.log(beta) + gammaln(a)) - a * logdet_w

    def _update_params(self, X, resp):
        """``q(pi)`` and ``q(mu_k, Lambda_k)`` given the responsibilities."""
        n, d = X.shape
        nk = resp.sum(axis=0) + 10 * np.finfo(float).eps
        sx = resp.T @ X
        xbar = sx / nk[:, None]
        beta0, nu0, m0 = self.mean_precision_prior_, self.degrees_of_freedom_prior_, self._m0
        if self.weight_concentration_prior_type == "dirichlet_process":
            tail = np.concatenate([np.cumsum(nk[::-1])[-2::-1], [0.0]])
            self._wc = (1.0 + nk, self.weight_concentration_prior_ + tail)
        else:
            self._wc = self.weight_concentration_prior_ + nk
        beta = beta0 + nk
        self._beta = beta
        self._m = (beta0 * m0 + sx) / beta[:, None]
        self._nu = nu0 + nk
        dev = xbar - m0
        shrink = (beta0 * nk / beta)[:, None]
        if self.covariance_type == "full":
            # N_k S_k = sum_n r_nk x x^T - N_k xbar xbar^T; recomputed from differences where
            # that cancels (spread small against the offset of the component from the centre).
            # sum_n r_nk x_n x_n^T, one product per component (no N x D^2 array)
            second = np.empty((len(nk), d, d))
            for k in range(len(nk)):
                np.matmul((X * resp[:, k, None]).T, X, out=second[k])
            scatter = second - nk[:, None, None] * xbar[:, :, None] * xbar[:, None, :]
            sdiag = np.diagonal(scatter, axis1=1, axis2=2)
            bad = np.flatnonzero(
                np.any(sdiag <= 1e-6 * np.diagonal(second, axis1=1, axis2=2), axis=1)
                & (nk > 1e-8 * n)
            )
            del second
            for k in bad:
                diff = X - xbar[k]
                scatter[k] = (resp[:, k] * diff.T) @ diff
            # W_k^{-1} = W_0^{-1} + N_k S_k + shrink (xbar - m0)(xbar - m0)^T, symmetrised,
            # summed in place in the order of that expression (the same numbers)
            winv = scatter
            winv += self._cov0
            winv += shrink[:, :, None] * dev[:, :, None] * dev[:, None, :]
            winv = np.add(winv, np.swapaxes(winv, 1, 2))
            winv *= 0.5
            self._chol = cholesky_batched(winv, name="a component's posterior scale")
            self._winv = winv
            # W_k = (W_k^{-1})^{-1} from its Cholesky factor (d x d per component).
            self._w = cho_solve_batched(self._chol, np.eye(d))
            self._logdet_w = -2.0 * np.log(np.diagonal(self._chol, axis1=1, axis2=2)).sum(1)
        else:
            second = resp.T @ (X * X)
            scatter = second - nk[:, None] * xbar * xbar
            bad = np.flatnonzero(np.any(scatter <= 1e-6 * second, axis=1) & (nk > 1e-8 * n))
            for k in bad:
                diff = X - xbar[k]
                scatter[k] = resp[:, k] @ (diff * diff)
            self._b = 0.5 * (self._cov0 + np.maximum(scatter, 0.0) + shrink * dev * dev)
            self._logdet_w = np.log(self._b).sum(axis=1)

    def _expected_log_weights(self):
        if self.weight_concentration_prior_type == "dirichlet_process":
            a, b = self._wc
            dsum = digamma(a + b)
            log_v, log_1mv = digamma(a) - dsum, digamma(b) - dsum
            return log_v + np.concatenate([[0.0], np.cumsum(log_1mv)[:-1]])
        return digamma(self._wc) - digamma(self._wc.sum())

    def _log_resp(self, X):
        """Variational ``log rho_nk`` normaliser per row and ``log r_nk`` (working data)."""
        n, d = X.shape
        if self.covariance_type == "full":
            i = np.arange(1, d + 1)
            e_logdet = digamma(0.5 * (self._nu[:, None] + 1 - i)).sum(1) + d * np.log(2.0)
            e_logdet += self._logdet_w
            P = self._w * self._nu[:, None, None]  # E[Lambda_k]
            Pm = np.einsum("kij,kj->ki", P, self._m)
            K = P.shape[0]
            # x^T P_k x for all k: the row x P_k of every component from one product with
            # [P_1 ... P_K] (P_k symmetric), times x, and the D terms of each component
            # summed by a product with the 0/1 matrix that adds them; a block of rows at a
            # time.
            Pcat = np.ascontiguousarray(P.transpose(1, 0, 2).reshape(d, K * d))
            adder = np.kron(np.eye(K), np.ones((d, 1)))
            quad = np.empty((n, K))
            step = max(1, min(_BLOCK_DOUBLES, n * d // 2) // (K * d))
            with np.errstate(over="ignore", invalid="ignore"):
                for a in range(0, n, step):
                    Xb = X[a : a + step]
                    Yb = Xb @ Pcat
                    Yb.reshape(Xb.shape[0], K, d)[...] *= Xb[:, None, :]
                    np.matmul(Yb, adder, out=quad[a : a + step])
                quad -= 2.0 * (X @ Pm.T)
                quad += np.einsum("ki,ki->k", self._m, Pm)
        else:
            a = 0.5 * self._nu
            e_logdet = d * digamma(a) - self._logdet_w
            P = a[:, None] / self._b
            with np.errstate(over="ignore", invalid="ignore"):
                quad = (X * X) @ P.T - 2.0 * (X @ (self._m * P).T)
                quad += np.einsum("kd,kd->k", self._m**2, P)
        # The N x K arrays below are updated in place (same operations, same roundings): a
        # sweep holds two of them, not six.
        nan = np.isnan(quad)
        np.maximum(quad, 0.0, out=quad)
        quad[nan] = np.inf
        far = np.flatnonzero((X > 2.0**40).any(axis=1) | (X < -(2.0**40)).any(axis=1))
        if far.size:
            # Far from the data the expansion loses every digit: differences instead.
            quad[far] = self._quad_from_differences(X[far])
        per_component = (
            self._expected_log_weights()
            + 0.5 * e_logdet
            - 0.5 * d * _LOG_2PI
            - 0.5 * d / self._beta
        )
        quad *= 0.5
        log_rho = np.subtract(per_component, quad, out=quad)
        top = log_rho.max(axis=1, keepdims=True)
        if not np.all(np.isfinite(top)):
            bad = np.flatnonzero(~np.isfinite(top[:, 0]))
            raise ValueError(
                f"rows {bad[:5].tolist()} of X are so far from the fitted components (~1e154 "
                "of their spreads or more) that their squared distances are not floats; "
                "their responsibilities and densities cannot be computed. Check X's scale."
            )
        shifted = log_rho - top
        log_norm = np.log(np.exp(shifted, out=shifted).sum(axis=1, keepdims=True)) + top
        del shifted
        log_rho -= log_norm
        return log_norm[:, 0], log_rho

    def _quad_from_differences(self, X):
        """``E[Lambda_k]``-weighted squared distances of rows ``X`` from ``m_k`` by
        differences (triangular solves); ``inf`` where they overflow."""
        k = self.n_components
        diff = X[:, None, :] - self._m[None]
        with np.errstate(over="ignore", invalid="ignore"):
            if self.covariance_type == "full":
                out = np.empty((X.shape[0], k))
                for j in range(k):
                    z = solve_triangular(self._chol[j], diff[:, j, :].T, lower=True)
                    out[:, j] = self._nu[j] * np.sum(z * z, axis=0)
            else:
                prec = (0.5 * self._nu)[:, None] / self._b
                out = np.sum(diff * diff * prec[None], axis=2)
        return np.where(np.isnan(out), np.inf, out)

    def _elbo(self, log_resp):
        n, d = log_resp.shape[0], self._m0.shape[0]
        k = self.n_components
        r = np.exp(log_resp)
        entropy = -float(np.vdot(r, log_resp))  # no N x K temporary
        beta0, nu0 = self.mean_precision_prior_, self.degrees_of_freedom_prior_
        if self.covariance_type == "full":
            logdet_w0 = -2.0 * np.log(np.diag(cholesky_batched(self._cov0[None])[0])).sum()
        else:
            logdet_w0 = float(np.log(0.5 * self._cov0).sum())
        nw = float(np.sum(self._log_z_nw(self._beta, self._nu, self._logdet_w)))
        nw0 = k * float(self._log_z_nw(beta0, nu0, logdet_w0))
        if self.weight_concentration_prior_type == "dirichlet_process":
            w_post = float(np.sum(betaln(*self._wc)))
            w_prior = -k * float(np.log(self.weight_concentration_prior_))
        else:
            a0 = self.weight_concentration_prior_
            w_post = float(np.sum(gammaln(self._wc)) - gammaln(np.sum(self._wc)))
            w_prior = float(k * gammaln(a0) - gammaln(k * a0))
        return entropy - 0.5 * n * d * _LOG_2PI + nw - nw0 + w_post - w_prior

    @_fit_context
    def fit(self, X, y=None):
        """Fit the variational posterior by coordinate ascent (``n_init`` starts).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        self.fit_predict(X, y)
        return self

    @_fit_context
    def fit_predict(self, X, y=None):
        """Fit, then return the most responsible component of each training point.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        X = validate_data(self, X, dtype=np.float64, reset=True, ensure_min_samples=2)
        n, d = X.shape
        if n < self.n_components:
            raise ValueError(
                f"n_samples={n} should be >= n_components={self.n_components}: the "
                "initialisation needs one point per component."
            )
        Xw = self._set_frame(X)
        self._check_priors(X, Xw)
        rng = check_random_state(self.random_state)
        best, best_state = None, None
        sweep = _CAVISweep(self, Xw)
        for _ in range(self.n_init):
            resp = _BaseMixture._initial_responsibilities(self, Xw, rng)
            self._update_params(Xw, resp)
            result = coordinate_ascent(
                sweep,
                None,
                max_iter=self.max_iter,
                tol=self.tol,
                criterion="relative",
                name="Variational GMM",
                decrease_hint=(
                    "every update of the mean-field factors is an exact maximisation, so this "
                    "is numerical trouble (e.g. data of very different scales per feature)."
                ),
            )
            if best is None or result.lower_bound > best.lower_bound:
                best, best_state = result, self._state()
        self._restore(best_state)
        jac = n * d * float(np.log(self._frame_scale))
        self.lower_bounds_ = best.lower_bounds - jac
        self.elbo_history_ = self.lower_bounds_
        self.lower_bound_ = float(self.lower_bounds_[-1])
        self.n_iter_ = best.n_iter
        self.converged_ = best.converged
        if not self.converged_:
            warnings.warn(
                f"the variational bound did not converge in max_iter={self.max_iter} sweeps "
                "(relative change above tol); increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self._publish()
        return self._log_resp(Xw)[1].argmax(axis=1)

    def _state(self):
        names = ("_wc", "_beta", "_m", "_nu", "_logdet_w", "_w", "_winv", "_chol", "_b")
        return {k: getattr(self, k) for k in names if k in self.__dict__}

    def _restore(self, state):
        self.__dict__.update(state)

    def _publish(self):
        s, c = self._frame_scale, self._frame_offset
        if self.weight_concentration_prior_type == "dirichlet_process":
            a, b = self._wc
            ev = a / (a + b)
            w = ev * np.concatenate([[1.0], np.cumprod(b / (a + b))[:-1]])
            self.weight_concentration_ = (a, b)
        else:
            w = self._wc.copy()
            self.weight_concentration_ = self._wc
        self.weights_ = w / w.sum()
        self.means_ = self._m * s + c
        self.mean_precision_ = self._beta
        self.degrees_of_freedom_ = self._nu

    # Covariances live in the working frame and are read in the user's units: for data of
    # size 1e300 a covariance (1e600) is not a float, and reading it is a clear error while
    # the fit, its predictions and its densities hold.
    def _user_units(self, name, value, power):
        s = self._frame_scale
        if s == 1.0:
            return value
        with np.errstate(over="ignore", under="ignore"):
            out = value * s * s if power == 2 else value / s / s
        if not np.all(np.isfinite(out)) or np.any((out == 0) & (value != 0)):
            raise ValueError(
                f"{name} in the units of X is outside the float range (the data's spread is "
                f"~{s:.1e}); rescale X."
            )
        return out

    @property
    def covariances_(self):
        """``E[Lambda_k]^{-1}`` in the data's units."""
        if "_nu" not in self.__dict__:
            raise AttributeError(
                "'BayesianGaussianMixture' object has no attribute 'covariances_'"
            )
        if self.covariance_type == "full":
            cov = self._winv / self._nu[:, None, None]
        else:
            cov = self._b / (0.5 * self._nu)[:, None]
        return self._user_units("covariances_", cov, 2)

    @property
    def precisions_(self):
        """``E[Lambda_k]`` in the data's units."""
        if "_nu" not in self.__dict__:
            raise AttributeError("'BayesianGaussianMixture' object has no attribute 'precisions_'")
        if self.covariance_type == "full":
            prec = self._w * self._nu[:, None, None]
        else:
            prec = (0.5 * self._nu)[:, None] / self._b
        return self._user_units("precisions_", prec, -2)

    @property
    def covariance_prior_(self):
        """``W_0^{-1}`` used, in the data's units."""
        if "_cov0" not in self.__dict__:
            raise AttributeError(
                "'BayesianGaussianMixture' object has no attribute 'covariance_prior_'"
            )
        return self._user_units("covariance_prior_", self._cov0, 2)

    def _working(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return (X - self._frame_offset) / self._frame_scale

    def predict_proba(self, X):
        """Variational responsibilities ``r_nk = q(z_n = k)`` of new points.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        resp : ndarray of shape (n_samples, n_components)
        """
        return np.exp(self._log_resp(self._working(X))[1])

    def predict(self, X):
        """Most responsible component of each row of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        return self._log_resp(self._working(X))[1].argmax(axis=1)

    def score_samples(self, X):
        """Log posterior predictive density ``log p(x | X_train)`` (a Student-t mixture).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        log_prob : ndarray of shape (n_samples,)
        """
        Xw = self._working(X)
        d = Xw.shape[1]
        if self.covariance_type == "full":
            dof = self._nu + 1 - d
            # St(x | m, L, dof) with L = dof beta / (1 + beta) W: scale matrix
            # L^{-1} = (1 + beta) / (dof beta) W^{-1} with Cholesky factor c * chol(W^{-1}).
            c2 = (1 + self._beta) / (dof * self._beta)
            diff = Xw[:, None, :] - self._m[None]
            z = np.stack(
                [
                    solve_triangular(self._chol[k], diff[:, k, :].T, lower=True).T
                    for k in range(self.n_components)
                ],
                axis=1,
            )
            maha = np.sum(z * z, axis=2) / c2
            half_logdet = 0.5 * (-self._logdet_w) + 0.5 * d * np.log(c2)
        else:
            dof = self._nu  # 2 a_k per coordinate
            a = 0.5 * self._nu
            var = ((1 + self._beta) / self._beta)[:, None] * self._b / a[:, None]
            diff = Xw[:, None, :] - self._m[None]
            maha_d = diff * diff / var[None]
            lp = (
                (gammaln(0.5 * (dof + 1)) - gammaln(0.5 * dof) - 0.5 * np.log(dof * np.pi))[
                    None, :, None
                ]
                - 0.5 * np.log(var)[None]
                - 0.5 * (dof[None, :, None] + 1) * np.log1p(maha_d / dof[None, :, None])
            )
            log_t = lp.sum(axis=2)
            return self._mix(log_t) - d * np.log(self._frame_scale)
        log_t = (
            gammaln(0.5 * (dof + d))
            - gammaln(0.5 * dof)
            - 0.5 * d * np.log(dof * np.pi)
            - half_logdet
            - 0.5 * (dof + d) * np.log1p(maha / dof)
        )
        return self._mix(log_t) - d * np.log(self._frame_scale)

    def _mix(self, log_t):
        with np.errstate(divide="ignore", invalid="ignore"):
            wl = log_t + np.log(self.weights_)
            top = wl.max(axis=1, keepdims=True)
            out = (np.log(np.exp(wl - top).sum(axis=1, keepdims=True)) + top)[:, 0]
        if not np.all(np.isfinite(out)):
            bad = np.flatnonzero(~np.isfinite(out))
            raise ValueError(
                f"rows {bad[:5].tolist()} of X are so far from the fitted components that "
                "their log-densities are not floats. Check X's scale."
            )
        return out

    def score(self, X, y=None) -> float:
        """Mean log posterior predictive density of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        float
        """
        return float(np.mean(self.score_samples(X)))

    def sample(self, n_samples: int = 1, random_state=None):
        """Draw from the mixture at its posterior-mean parameters (as scikit-learn does).

        A component is drawn with probability ``weights_``, then a point from
        ``N(means_k, covariances_k)`` (``E[Lambda_k]^{-1}``). These are not draws from the
        posterior predictive (a mixture of Student t densities, :meth:`score_samples`).

        Parameters
        ----------
        n_samples : int, default=1
            Number of draws.
        random_state : int, Generator or None
            Seed (default: the estimator's ``random_state``).

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            The draws, grouped by component.
        y : ndarray of shape (n_samples,)
            The component of each draw (sorted).
        """
        check_is_fitted(self)
        if not isinstance(n_samples, Integral) or n_samples < 1:
            raise ValueError(f"n_samples must be an int >= 1; got {n_samples!r}.")
        rng = check_random_state(self.random_state if random_state is None else random_state)
        w = np.asarray(self.weights_, dtype=float)
        counts = rng.multinomial(int(n_samples), w / w.sum())
        means, cov = self.means_, self.covariances_
        d = means.shape[1]
        parts = []
        for k, c in enumerate(counts):
            if c == 0:
                continue
            z = rng.standard_normal((c, d))
            if self.covariance_type == "full":
                L = cholesky_batched(cov[k][None])[0]
                parts.append(means[k] + z @ L.T)
            else:
                parts.append(means[k] + z * np.sqrt(cov[k]))
        X = np.vstack(parts)
        return X, np.repeat(np.arange(len(counts)), counts)
