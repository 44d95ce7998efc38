"""Bayesian linear regression with evidence maximisation."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.linalg as sla
from scipy.linalg import blas, lapack

from ..base import ProbabilisticRegressorMixin, _fit_context, check_is_fitted
from ..distributions import MultivariateNormal
from ..exceptions import ConvergenceWarning
from ..optim import lbfgs
from ..utils._backend import is_dask
from ..utils._param_validation import Interval, validate_parameter_constraints
from ..utils.extmath import _GER_MAX_ENTRIES
from ..utils.linalg import cho_solve, cholesky, logdet_from_cholesky, symmetrize_in_place
from ..utils.validation import check_random_state, validate_data
from ._base import LinearModel, pow2_scale, prepare_data, validate_xy, weights_or_none
from ._gram import centred_gram
from ._refinement import accurate_lstsq, geqrf_lwork

__all__ = ["BayesianLinearRegression"]

_LOG_2PI = np.log(2.0 * np.pi)
# Precisions are kept inside this range so that a degenerate fit (a target that is exactly
# zero or exactly interpolated) yields huge-but-finite numbers rather than inf/NaN.
_PREC_MIN, _PREC_MAX = 1e-15, 1e15


def log_evidence(n, beta, rss, prior_quad, logdet_prior_precision, logdet_post_precision):
    """``ln p(t)`` of the linear-Gaussian model, written in parameter space.

    For the prior ``w ~ N(m_0, P_0^{-1})``, the likelihood ``t ~ N(Phi w, I / beta)`` of
    ``n`` targets and the posterior ``N(m_N, P_N^{-1})``:

    ``ln p(t) = -n/2 ln 2pi + n/2 ln beta - beta/2 ||t - Phi m_N||^2
    - 1/2 (m_N - m_0)^T P_0 (m_N - m_0) + 1/2 ln|P_0| - 1/2 ln|P_N|``

    (Imperial "Mathematics for Inference and Machine Learning" §1.7.5, eq. 1.205–1.207, with the
    completed square of §1.8.2.2, eq. 1.229–1.238; PRML §3.5.1, eq. 3.86, for the isotropic prior
    ``P_0 = alpha I``, ``m_0 = 0``). The one place this formula is written: ``fit`` evaluates it on
    the spectrum of the design, ``partial_fit`` on a general Gaussian prior.

    Parameters
    ----------
    n : float
        Number of targets (the sum of the sample weights when there are weights).
    beta : float
    rss : float
        ``||t - Phi m_N||^2`` (weighted).
    prior_quad : float
        ``(m_N - m_0)^T P_0 (m_N - m_0)``.
    logdet_prior_precision, logdet_post_precision : float
        ``ln|P_0|`` and ``ln|P_N|``.
    """
    return (
        -0.5 * n * _LOG_2PI
        + 0.5 * n * np.log(beta)
        - 0.5 * beta * rss
        - 0.5 * prior_quad
        + 0.5 * logdet_prior_precision
        - 0.5 * logdet_post_precision
    )


class _Spectrum:
    """The design through its SVD ``Phi = U diag(s) V^T``: every quantity of the evidence
    for given ``(alpha, beta)`` in ``O(M)``.

    With ``c = U^T t`` and ``rss_out`` the part of ``||t||^2`` outside the range of
    ``Phi``: ``m_N = V (beta s c / (alpha + beta s^2))`` and ``||t - Phi m_N||^2 = rss_out +
    sum_i (alpha c_i / (alpha + beta s_i^2))^2`` (a sum of squares, no cancellation).
    """

    def __init__(self, n, m, s, c, rss_out, Vt):
        self.n, self.m = n, m
        self.s, self.s2, self.c = s, s * s, c
        self.c2, self.sc2 = c * c, np.square(s * c)
        self.rss_out = rss_out
        self.Vt = Vt
        self.n_zero = m - s.shape[0]  # directions with no data (N < M): eigenvalue 0

    def stats(self, alpha, beta):
        """``(gamma, m_N^T m_N, ||t - Phi m_N||^2, d)`` at ``(alpha, beta)``, ``d = alpha +
        beta s^2``.

        With ``w = 1 / d``: ``gamma = beta sum s^2 w``, ``m_N^T m_N = beta^2 sum (s c)^2 w^2``
        and the residual ``rss_out + alpha^2 sum c^2 w^2``, sums of positive terms (no
        cancellation), six array operations; the fixed point calls this a few dozen times
        per fit, where NumPy's dispatch, not the O(M) arithmetic, is the cost.
        """
        d = self.s2 * beta
        d += alpha
        w = 1.0 / d
        w2 = w * w
        gamma = beta * float(self.s2 @ w)
        mm = beta * beta * float(self.sc2 @ w2)
        rss = self.rss_out + alpha * alpha * float(self.c2 @ w2)
        return gamma, mm, rss, d

    def terms(self, alpha, beta):
        """``(ln p(t), gamma, m_N^T m_N, ||t - Phi m_N||^2)`` at ``(alpha, beta)``."""
        gamma, mm, rss, d = self.stats(alpha, beta)
        log_alpha = np.log(alpha)
        log_ev = log_evidence(
            self.n, beta, rss, alpha * mm, self.m * log_alpha,
            float(np.log(d).sum()) + self.n_zero * log_alpha,
        )  # fmt: skip
        return log_ev, gamma, mm, rss

    def posterior_mean(self, alpha, beta):
        """``m_N = V (beta s c / (alpha + beta s^2))``."""
        return self.Vt.T @ (beta * self.s * self.c / (alpha + beta * self.s2))

    def posterior_cov(self, alpha, beta):
        """``S_N = (alpha I + beta Phi^T Phi)^{-1}`` and ``S_N^{-1}`` from the spectrum.

        Two ``D x D`` arrays and nothing else of that size: with ``n_zero`` directions
        orthogonal to the data (``N < D``), where the prior alone covers them,
        ``S_N = V diag(1 / d) V^T + (I - V V^T) / alpha = I / alpha - V diag(beta s^2 /
        (alpha d)) V^T`` (``d = alpha + beta s^2``) is one product and a diagonal."""
        denom = alpha + beta * self.s2
        V = self.Vt.T
        if self.n_zero:
            cov = (V * (-beta * self.s2 / (alpha * denom))) @ self.Vt
            cov[np.diag_indices(self.m)] += 1.0 / alpha
        else:
            cov = (V / denom) @ self.Vt
        P = (V * (beta * self.s2)) @ self.Vt
        P[np.diag_indices(self.m)] += alpha
        return symmetrize_in_place(cov), P


def _centred_into(out, X, x_offset):
    """``X - x_offset`` written into the Fortran-contiguous ``out``, without the temporary
    of the size of ``X`` that NumPy buffers for a broadcast subtraction on small arrays.

    Either ``out = X`` then ``out += (-1) 1 x_offset^T`` (``dger``: each entry
    ``x_ij + (-x_offset_j)``, one rounding, the same as the subtraction), or a subtraction
    per column."""
    n, m = X.shape
    if out.size <= _GER_MAX_ENTRIES and out.flags.f_contiguous:
        np.copyto(out, X)
        blas.dger(-1.0, np.ones(n), x_offset, a=out, overwrite_a=True)
    else:
        for j in range(m):
            np.subtract(X[:, j], x_offset[j], out=out[:, j])
    return out


def _spectrum(X, x_offset, t, n_eff, work=None) -> _Spectrum:
    """Factorise ``Phi = X - x_offset`` once (no centred copy where it can be avoided).

    ``work``, when given (``N >= M``), is an ``N x M`` Fortran-ordered scratch array that
    holds the centred design for either route (the Gram matrix's rows, or the QR's
    factors); ``X`` itself when it is already centred there (``x_offset`` zero)."""
    n, m = X.shape
    s = None
    if n >= m:
        # Cheap route: eigen-decomposition of the Gram matrix (built without a centred
        # copy of X, or in the scratch array). Its eigenvalues carry relative errors ~ eps *
        # cond(Phi)^2, so it is used only for well-conditioned designs (cond(Phi) < 1e3);
        # otherwise QR below.
        if work is None:
            G, b = centred_gram(X, x_offset, t, 0.0)
        else:
            if work is not X:
                _centred_into(work, X, x_offset)
            G = work.T @ work  # one symmetric product (BLAS syrk)
            b = work.T @ t
        # NumPy's LAPACK, not SciPy's: G was just built by NumPy's BLAS, and on few cores
        # switching to SciPy's separate OpenBLAS thread pool makes the two pools contend.
        s2, V = np.linalg.eigh(G)
        if s2[0] > 1e-6 * s2[-1] > 0:
            s = np.sqrt(s2)
            c = (V.T @ b) / s  # = U^T t with U = Phi V diag(1/s)
            w_ls = V @ (c / s)
            # least-squares residual, computed directly (no cancellation)
            resid = t - (X @ w_ls - float(x_offset @ w_ls))
            return _Spectrum(n_eff, m, s, c, float(resid @ resid), V.T)
    # Fortran order: LAPACK factorises this centred copy in place.
    if work is not None:
        Phi = work  # centred above
    else:
        Phi = np.subtract(X, x_offset, out=np.empty(X.shape, order="F"))
    if n >= m:
        qr, tau, _, _ = lapack.dgeqrf(Phi, lwork=geqrf_lwork(m), overwrite_a=True)
        qt = lapack.dormqr(b"L", b"T", qr, tau, t[:, None], 1)[0][:, 0]  # unblocked
        Ur, s, Vt = sla.svd(np.triu(qr[:m, :m]), check_finite=False)
        return _Spectrum(n_eff, m, s, Ur.T @ qt[:m], float(qt[m:] @ qt[m:]), Vt)
    # (the centred copy is the SVD's work array: no second copy of the N x D data)
    U, s, Vt = sla.svd(Phi, full_matrices=False, check_finite=False, overwrite_a=True)
    return _Spectrum(n_eff, m, s, U.T @ t, 0.0, Vt)


def _clipped_ratio(num, den):
    """``num / den`` clipped to ``[_PREC_MIN, _PREC_MAX]`` without overflowing.

    ``den`` is zero for a zero target (``m_N = 0``) or an exactly fitted one (``rss = 0``);
    the quotient then diverges and stops at the upper bound instead of overflowing.
    """
    if den * _PREC_MAX <= max(num, 0.0):
        return _PREC_MAX
    return min(max(float(num / den), _PREC_MIN), _PREC_MAX)  # np.clip on a scalar


def _augmented_design(X, alpha, beta, sqrt_sw, fit_intercept, out):
    """``[Phi 1; sqrt(alpha / beta) I 0]`` (rows times ``sqrt(s_n)``) written into ``out``."""
    n, m = X.shape
    out[:n, :m] = X
    if fit_intercept:
        out[:n, m] = 1.0
    out[n:] = 0.0
    if sqrt_sw is not None:
        for j in range(out.shape[1]):  # (a broadcast product would buffer a copy)
            out[:n, j] *= sqrt_sw
    if out.flags.f_contiguous:  # the diagonal of the lower block as one strided slice
        out.reshape(-1, order="F")[n : n + m * (n + m + 1) : n + m + 1] = np.sqrt(alpha / beta)
    else:
        out[n + np.arange(m), np.arange(m)] = np.sqrt(alpha / beta)
    return out


def _posterior_mean(X, t, alpha, beta, sqrt_sw, fit_intercept, work=None):
    """``m_N`` (and the offset) by least squares on the augmented system, refined.

    ``m_N`` minimises ``||t - Phi w - w_0||^2 + (alpha / beta) ||w||^2``, the least-squares
    problem ``[Phi 1; sqrt(alpha / beta) I 0] [w; w_0] ~ [t; 0]``. Solving it with the
    equilibrated QR and doubled-precision residual refinement of ``LinearRegression`` keeps
    the float64 accuracy on designs with ``cond(Phi) ~ 1e15``, where the normal equations
    (``cond^2``) or the SVD route lose most digits. ``Phi`` enters unrounded: it is neither
    centred (the offset is an explicit unpenalised column) nor multiplied by ``sqrt(beta)``.
    With weights the rows are multiplied by ``sqrt(s_n)``.

    ``work``: a Fortran-ordered ``(N + M) x (M + fit_intercept)`` array to build the system
    in (the caller's, which the factorisation of the design used as scratch).
    """
    n, m = X.shape
    b = np.zeros(n + m)
    b[:n] = t
    if sqrt_sw is not None:
        b[:n] *= sqrt_sw
    shape = (n + m, m + int(fit_intercept))
    A = np.empty(shape, order="F") if work is None else work
    # Built in Fortran order, the augmented design is the QR's own work array (one
    # (N + M) x M array instead of two); ill-conditioned designs, whose refinement needs it
    # again, get it rebuilt.
    coef = accurate_lstsq(
        _augmented_design(X, alpha, beta, sqrt_sw, fit_intercept, A),
        b,
        intercept=False,
        rebuild=lambda: _augmented_design(X, alpha, beta, sqrt_sw, fit_intercept, np.empty(shape)),
    )[0]
    return coef[:m], (float(coef[m]) if fit_intercept else 0.0)


class BayesianLinearRegression(ProbabilisticRegressorMixin, LinearModel):
    """Bayesian linear regression with a Gaussian prior and evidence maximisation.

    Model: ``w ~ N(0, alpha^{-1} I)``, ``t_n | w ~ N(w^T phi_n, beta^{-1})``. The posterior
    over ``w`` is Gaussian, predictions are Gaussian, and the precisions ``alpha`` and
    ``beta`` are either fixed or set to maximise the marginal likelihood (evidence).

    Parameters
    ----------
    prior_precision : float or None, default=None
        ``alpha`` of the notes (the prior ``N(0, alpha^{-1} I)``; Imperial
        "Mathematics for Inference and Machine Learning" writes ``S0 = b^2 I``, so ``alpha =
        1/b^2``). ``None``: estimated by evidence maximisation.
    noise_precision : float or None, default=None
        ``beta = 1/sigma^2``. ``None``: estimated by evidence maximisation.
    fit_intercept : bool, default=True
        ``True`` (as every regressor here and scikit-learn's ``BayesianRidge``): ``X`` and
        ``y`` are centred and the offset is fitted without a prior; the offset's
        uncertainty is then ignored. ``False`` is the notes' model: the design holds every
        feature, a constant one included (``PolynomialBasis`` adds it), and all weights
        share the prior; ``partial_fit`` needs it.
    max_iter : int, default=300
        Maximum number of re-estimation steps.
    tol : float, default=1e-8
        Stop when both precisions change by less than ``tol`` relatively.
    prior_mean : array-like of shape (n_features,) or None, default=None
        ``m_0``, the prior mean of the weights; ``None``: zero.
    prior_covariance : array-like of shape (n_features, n_features) or None, default=None
        ``S_0``, a symmetric positive definite prior covariance: the general Gaussian prior
        ``w ~ N(m_0, S_0)``. It fixes the prior, so ``prior_precision`` must be ``None`` and
        ``alpha`` is not estimated (``noise_precision`` is still estimated when ``None``);
        ``S_0 = alpha^{-1} I`` gives the fit with ``prior_precision=alpha``. ``None``: the
        isotropic prior ``N(m_0, alpha^{-1} I)``. With ``fit_intercept=True`` the prior is on
        the weights of the centred features (the offset has none).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Posterior mean ``m_N``.
    coef_cov_ : ndarray of shape (n_features, n_features)
        Posterior covariance ``S_N``.
    intercept_ : float
    prior_precision_ : float or None
        ``alpha`` used (fitted or given); ``None`` with a ``prior_covariance``.
    noise_precision_ : float
        ``beta`` used (fitted or given).
    log_evidence_ : float
        ``ln p(t | alpha, beta)`` at the precisions used (after ``partial_fit``, of all the
        data seen so far). With ``fit_intercept=True`` it is the evidence of the centred
        data, as in ``BayesianRidge.scores_``.
    effective_params_ : float
        ``gamma = sum_i lambda_i / (alpha + lambda_i)``, ``lambda_i`` the eigenvalues of
        ``beta Phi^T Phi``: the number of well-determined parameters.
    n_iter_ : int
        Re-estimation steps (0 when both precisions are given).
    n_features_in_ : int

    See Also
    --------
    mathlearn.linear_model.Ridge
        The posterior mean for a fixed prior precision.
    mathlearn.linear_model.VariationalLinearRegression
        The variational treatment of the same model.
    sklearn.linear_model.BayesianRidge
        scikit-learn's equivalent.

    Notes
    -----
    Posterior (Imperial "Mathematics for Inference and Machine Learning" §1.8.2, eq. 1.213–1.215;
    PRML §3.3.1 with
    ``S_N^{-1} = alpha I + beta Phi^T Phi``, ``m_N = beta S_N Phi^T t``); predictive
    ``N(m_N^T phi(x), phi(x)^T S_N phi(x) + 1/beta)`` (§1.8.3, eq. 1.247–1.258); log evidence
    ``M/2 ln alpha + N/2 ln beta - N/2 ln 2pi - beta/2 ||t - Phi m_N||^2
    - alpha/2 m_N^T m_N - 1/2 ln|S_N^{-1}|`` (PRML eq. 3.86), which equals
    ``ln N(t | 0, beta^{-1} I + alpha^{-1} Phi Phi^T)`` (eq. 1.205–1.207).

    Evidence maximisation iterates the fixed-point equations of MacKay / Bishop
    ``gamma = sum_i lambda_i/(alpha + lambda_i)``, ``alpha = gamma / m_N^T m_N``,
    ``beta = (N - gamma) / ||t - Phi m_N||^2`` jointly (PRML §3.5.2, with the eigenvalues
    of ``beta Phi^T Phi`` rescaled by the current ``beta`` in every step). The design is
    factorised ONCE (the eigen-decomposition of ``Phi^T Phi`` when ``cond(Phi) < 1e3``;
    otherwise Householder QR, then the SVD of the small triangular factor), after which
    every step costs ``O(M)``: with ``Phi = U diag(s) V^T`` and ``c = U^T t``,
    ``m_N = V (beta s c / (alpha + beta s^2))`` and the residual is
    ``||t||^2_{outside range} + sum_i (alpha c_i / (alpha + beta s_i^2))^2`` (a sum of
    squares, no cancellation). The iteration finds a local maximum of the evidence; it is run
    from scikit-learn's starting point (``alpha = 1``, ``beta = 1/var(t)``) and from two
    low-noise starting points, and the highest evidence is kept. Where the evidence grows
    without bound (a model that interpolates the data, a constant target) the precisions
    stop at the clipping bounds ``1e-15`` / ``1e15``. If the best run has not converged
    within ``max_iter`` steps (the fixed point crawls, or wanders, where the supremum lies
    towards a boundary, as for ``N < M`` designs that can interpolate), the evidence is
    maximised further over the log-precisions by L-BFGS (:func:`mathlearn.optim.lbfgs`,
    at most ``max_iter`` iterations) with the O(M) gradient
    ``d/d ln alpha = (gamma - alpha m_N^T m_N) / 2``,
    ``d/d ln beta = (N - gamma - beta ||t - Phi m_N||^2) / 2``, within the clipping bounds;
    a ``ConvergenceWarning`` is raised only if that fails too.

    Once the precisions are known, the posterior mean (for ``N >= M``; from the SVD for wide
    designs) is computed as the solution of the least-squares problem ``[Phi 1;
    sqrt(alpha/beta) I 0] [w; w_0] ~ [t; 0]`` by the equilibrated QR with doubled-precision
    iterative refinement that ``LinearRegression`` uses, so it keeps full float64 accuracy on
    designs with ``cond(Phi) ~ 1e15`` (raw polynomial features); the posterior covariance comes
    from the SVD. ``fit`` never forms the posterior precision ``alpha I + beta Phi^T Phi``,
    whose condition number is ``cond(Phi)^2``. Sample weights ``s_n`` give sample ``n`` the
    noise precision ``s_n beta`` (a weight ``k`` is ``k`` copies of the sample; ``N = sum_n
    s_n``). Data whose squares leave float64 (``|x| ~ 1e+-300``) are scaled exactly by powers
    of two first; a fit whose precisions or covariance are then outside float64 raises an error
    that says so.

    Complexity (isotropic prior): the factorisation costs ``O(N M^2 + M^3)`` time for
    ``N >= M`` (``O(N^2 M)`` for wide designs, by the SVD), each evidence step ``O(M)``,
    the refined posterior mean ``O((N + M) M^2)`` per refinement step and the posterior
    covariance ``O(M^2 min(N, M))``; memory: for ``N >= M`` one ``(N + M) x (M + 1)``
    array, the augmented system of the posterior mean, whose leading ``N M`` entries hold
    the centred design while the design is factorised (no other copy of the data); the
    centred design (``N M``) for wide designs; the ``M x M`` covariance and precision and
    ``O(min(N, M) M)`` for the spectrum.

    General Gaussian prior ``w ~ N(m_0, S_0)`` (Imperial "Mathematics for Inference and
    Machine Learning" §1.8.2, eq. 1.213–1.215; PRML §3.3.1, eq. 3.49–3.51):
    ``S_N^{-1} = S_0^{-1} + beta Phi^T Phi``, ``m_N = S_N (S_0^{-1} m_0 + beta Phi^T t)``.
    It is computed without ``S_0^{-1}``: with ``S_0 = L_0 L_0^T`` (Cholesky) and ``w = m_0
    + L_0 v``, ``t - Phi m_0 = (Phi L_0) v + eps`` with ``v ~ N(0, I)``, which is the
    isotropic model with ``alpha = 1`` on the design ``Phi L_0``; its posterior maps back to
    ``m_N = m_0 + L_0 m_v`` and ``S_N = L_0 S_v L_0^T``, and ``log_evidence_`` (the density
    of ``t``, unchanged by the substitution) and the estimate of ``beta`` are those of that
    model. ``effective_params_`` is then ``M - tr(S_0^{-1} S_N)``. Not available on Dask
    arrays.

    ``partial_fit`` is the sequential update of PRML §3.3.1 (Fig. 3.7): the current posterior
    becomes the prior for the next batch (Bayes' theorem for Gaussians in information
    form, :meth:`mathlearn.distributions.MultivariateNormal.from_canonical`); after all
    batches it equals the batch posterior and ``log_evidence_`` sums the batch evidences
    (chain rule). Precisions stay fixed
    during sequential updates; if they are ``None`` they are estimated on the first batch.
    Each update adds ``beta Phi_b^T Phi_b`` to the posterior precision and solves with its
    Cholesky factor, so on badly conditioned designs (raw high-degree monomials)
    sequential updates are less accurate than one ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.datasets import make_sinusoidal
    >>> from mathlearn.preprocessing import PolynomialBasis
    >>> X, y = make_sinusoidal(25, random_state=0)
    >>> Phi = PolynomialBasis(degree=5).fit_transform(X)
    >>> model = BayesianLinearRegression(fit_intercept=False).fit(Phi, y)
    >>> mean, std = model.predict(Phi, return_std=True)
    >>> mean.shape, std.shape
    ((25,), (25,))

    A general prior centred on a guess of the weights, and the latent standard deviation:

    >>> prior = BayesianLinearRegression(
    ...     fit_intercept=False, noise_precision=100.0,
    ...     prior_mean=np.ones(6), prior_covariance=0.5 * np.eye(6)).fit(Phi, y)
    >>> latent = prior.predict(Phi[:1], return_std=True, noisy=False)[1]
    >>> noisy = prior.predict(Phi[:1], return_std=True)[1]
    >>> bool(np.isclose(noisy[0] ** 2 - latent[0] ** 2, 1 / 100.0))
    True
    """

    _PARTIAL_FIT = (
        "partial_fit needs fit_intercept=False (centring is not sequential), and the "
        "default is fit_intercept=True, so partial_fit raises by design"
    )
    _expected_failed_checks: ClassVar[dict] = {
        "check_fit_score_takes_y": _PARTIAL_FIT,
        "check_n_features_in_after_fitting": _PARTIAL_FIT,
        "check_estimators_partial_fit_n_features": _PARTIAL_FIT,
    }
    _parameter_constraints: ClassVar[dict] = {
        "prior_precision": [Interval(Real, 0, None, closed="neither"), None],
        "noise_precision": [Interval(Real, 0, None, closed="neither"), None],
        "prior_mean": ["array-like", None],
        "prior_covariance": ["array-like", None],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        prior_precision: float | None = None,
        noise_precision: float | None = None,
        fit_intercept: bool = True,
        max_iter: int = 300,
        tol: float = 1e-8,
        prior_mean=None,
        prior_covariance=None,
    ):
        self.prior_precision = prior_precision
        self.noise_precision = noise_precision
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.prior_mean = prior_mean
        self.prior_covariance = prior_covariance

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Compute the posterior, estimating the precisions that are ``None``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Design matrix ``Phi``.
        y : array-like of shape (n_samples,)
            Targets ``t``.
        sample_weight : array-like of shape (n_samples,), float or None, default=None
            Weights ``s_n``: sample ``n`` has noise precision ``s_n beta`` (an integer
            weight is the same as repeating the sample).

        Returns
        -------
        self
        """
        if self.prior_mean is None and self.prior_covariance is None:
            self._prior_chol = None
            return self._fit_isotropic(X, y, sample_weight, self.prior_precision)
        return self._fit_general_prior(X, y, sample_weight)

    def _check_prior(self, m):
        """The validated ``m_0`` (zeros if not given) and Cholesky factor of ``S_0`` (or None)."""
        m0 = np.zeros(m)
        if self.prior_mean is not None:
            m0 = np.asarray(self.prior_mean, dtype=np.float64)
            if m0.shape != (m,):
                raise ValueError(
                    f"prior_mean must have shape ({m},), one entry per feature; got {m0.shape}."
                )
            if not np.all(np.isfinite(m0)):
                raise ValueError("prior_mean must be finite (no NaN or inf).")
        if self.prior_covariance is None:
            return m0, None
        if self.prior_precision is not None:
            raise ValueError(
                "prior_precision and prior_covariance both set: the prior covariance fixes "
                "the prior (it is S_0 = alpha^-1 I for the isotropic one); give one of them."
            )
        S0 = np.asarray(self.prior_covariance, dtype=np.float64)
        if S0.shape != (m, m):
            raise ValueError(
                f"prior_covariance must have shape ({m}, {m}) for {m} features; got {S0.shape}."
            )
        if not np.all(np.isfinite(S0)):
            raise ValueError("prior_covariance must be finite (no NaN or inf).")
        scale = float(np.max(np.abs(S0))) if m else 0.0
        if np.max(np.abs(S0 - S0.T), initial=0.0) > 1e-10 * scale:
            raise ValueError("prior_covariance must be symmetric.")
        try:
            L0 = cholesky(0.5 * (S0 + S0.T), jitter=None, name="prior_covariance")
        except np.linalg.LinAlgError:
            raise ValueError(
                "prior_covariance is not positive definite (its Cholesky factorisation "
                "fails): a Gaussian prior needs a symmetric positive definite covariance."
            ) from None
        return m0, L0

    def _fit_general_prior(self, X, y, sample_weight):
        """The posterior under ``w ~ N(m_0, S_0)`` through ``w = m_0 + L_0 v``, ``v ~ N(0, I)``.

        With ``S_0 = L_0 L_0^T`` the targets ``t - Phi m_0 = (Phi L_0) v + eps`` follow the
        isotropic model with ``alpha = 1`` and design ``Phi L_0``; its posterior ``N(m_v,
        S_v)`` maps back to ``m_N = m_0 + L_0 m_v``, ``S_N = L_0 S_v L_0^T``, which is PRML
        eq. 3.49-3.51. The density of the targets, hence the evidence, is unchanged.
        """
        if is_dask(X):
            raise ValueError(
                "prior_mean / prior_covariance are not supported on Dask arrays; pass a NumPy "
                "array (the design of a Bayesian linear model has few columns)."
            )
        X, y = validate_xy(self, X, y)
        names = getattr(self, "feature_names_in_", None)
        m0, L0 = self._check_prior(X.shape[1])
        t = y - X @ m0 if np.any(m0) else y
        if L0 is None:
            self._fit_isotropic(X, t, sample_weight, self.prior_precision)
        else:
            self._fit_isotropic(X @ L0, t, sample_weight, 1.0)
            self.coef_ = L0 @ self.coef_
            cov = L0 @ self.coef_cov_ @ L0.T
            self.coef_cov_ = 0.5 * (cov + cov.T)
            # x'_offset = x_offset L_0 and P' = L_0^T P L_0 in the coordinates of v.
            self._x_offset = sla.solve_triangular(L0, self._x_offset, trans="T", lower=True)
            A = sla.solve_triangular(L0, self._posterior_precision, trans="T", lower=True)
            P = sla.solve_triangular(L0, A.T, trans="T", lower=True).T
            self._posterior_precision = 0.5 * (P + P.T)
            self.prior_precision_ = None
        self.coef_ = self.coef_ + m0
        self._prior_chol = L0
        if names is not None:
            self.feature_names_in_ = names
        return self

    def _fit_isotropic(self, X, y, sample_weight, prior_precision):
        if is_dask(X):
            return self._fit_dask(X, y, sample_weight)
        # X's finiteness is checked by prepare_data, from the column maxima it needs anyway
        X, y = validate_xy(self, X, y, finite=False)
        sw = weights_or_none(sample_weight, X)
        fit_intercept = bool(self.fit_intercept)
        n, m = X.shape
        prep = prepare_data(
            X, y, fit_intercept=fit_intercept, sample_weight=sw, per_column=False, center=False,
            check_finite_for=self,
        )  # fmt: skip
        # X scaled by g and y by h (powers of two, 1 for ordinary data): v = (h / g) w has
        # prior precision alpha g^2 / h^2 and noise precision beta / h^2.
        g = float(prep.x_scale[0]) if m else 1.0
        h = prep.y_scale
        alpha_user, beta_user = prior_precision, self.noise_precision
        if alpha_user is not None and g > 1.0:
            # Tiny X with a given prior: enlarge it only until the prior precision is of
            # order one (beyond, the data term is negligible next to it anyway).
            g_cap = float(pow2_scale(np.sqrt(alpha_user) / h))
            if g_cap < g:
                prep = prep._replace(X=prep.X * (g_cap / g), x_offset=prep.x_offset * (g_cap / g))
                g = g_cap
        to_s = {"prior_precision": g * g / (h * h), "noise_precision": 1.0 / (h * h)}
        alpha, beta = (
            None if v is None else self._to_scaled(v, to_s[name], name)
            for name, v in (("prior_precision", alpha_user), ("noise_precision", beta_user))
        )
        Xs, ts = prep.X, prep.y
        # The augmented system of the posterior mean (N >= M) is allocated first: until the
        # mean is solved for, its leading N x M block holds the centred design that the
        # factorisation needs, so that the fit makes one array of that size, not two.
        A = work = None
        if n >= m:
            # one allocation: A in Fortran order, and its first N M entries as the
            # Fortran-contiguous N x M scratch array (which LAPACK and BLAS take in place)
            k = m + int(fit_intercept)
            flat = np.empty((n + m) * k)
            A = flat.reshape((n + m, k), order="F")
            work = flat[: n * m].reshape((n, m), order="F")
            del flat
        if prep.sqrt_sw is None:
            Xg, xo, t = Xs, prep.x_offset, ts - prep.y_offset
        else:
            r = prep.sqrt_sw
            xo, t = np.zeros(m), (ts - prep.y_offset) * r
            if work is None:
                Xg = (Xs - prep.x_offset) * r[:, None]
            else:
                Xg = _centred_into(work, Xs, prep.x_offset)
                for j in range(m):
                    Xg[:, j] *= r
        spec = _spectrum(Xg, xo, t, prep.sw_sum, work)
        del Xg
        var_t = float(np.var(t)) if prep.sqrt_sw is None else float(t @ t) / spec.n
        alpha, beta, log_ev = self._evidence(spec, var_t, alpha, beta)
        # Fixed precisions take the same route as evidence maximisation (one factorisation
        # of the design, no normal equations): on ill-conditioned designs the posterior
        # precision alpha I + beta Phi^T Phi can have cond ~ 1e28, where its Cholesky factor
        # has no correct digit. The mean is refined on the augmented least-squares system.
        if n >= m:
            coef, offset = _posterior_mean(Xs, ts, alpha, beta, prep.sqrt_sw, fit_intercept, A)
            del A, work
        else:
            # A wide design (N < M) would make the augmented system (N + M) x M; the SVD of
            # the N x M design already gives the mean at O(N^2 M).
            coef = spec.posterior_mean(alpha, beta)
            offset = prep.y_offset - float(prep.x_offset @ coef)
        self._store(
            spec,
            coef,
            offset,
            alpha,
            beta,
            log_ev,
            g,
            h,
            prep,
            # only for the message of a fit outside float64: computed when it is raised
            lambda: (float(np.max(np.abs(X))), float(np.max(np.abs(y)))),
        )
        return self

    def _store(self, spec, coef, offset, alpha, beta, log_ev, g, h, prep, sizes):
        """The fitted attributes, in the data's units, from the fit in scaled units
        (``sizes()`` gives ``(max |x|, max |y|)`` for the error message)."""
        m = spec.m
        cov, P = spec.posterior_cov(alpha, beta)
        self.effective_params_ = float(m - alpha * np.trace(cov))
        a, b = g / h, h / g
        with np.errstate(over="raise", under="raise"):
            try:
                self.prior_precision_ = float(alpha * b * b)
                self.noise_precision_ = float(beta * h * h)
                self.coef_ = coef * a
                self.intercept_ = offset / h
                if np.any(cov):  # scaled in place: no further D x D arrays
                    cov *= a
                    cov *= a
                self.coef_cov_ = cov
                P *= b
                P *= b
                self._posterior_precision = P
                self.log_evidence_ = float(log_ev + prep.sw_sum * np.log(h))
            except FloatingPointError:
                x_max, y_max = sizes()
                raise ValueError(
                    "BayesianLinearRegression: at the scale of these data (largest |x| = "
                    f"{x_max:.3g}, largest |y| = {y_max:.3g}) the "
                    "posterior (its precisions or covariance) is outside the range of "
                    "float64; rescale X or y."
                ) from None
        self._x_offset = prep.x_offset / g

    def _fit_dask(self, X, y, sample_weight):
        """The same fit on Dask arrays (see :mod:`._dask`): the spectrum of the centred
        design from its TSQR, the mean from the refined augmented least squares."""
        import dask.array as da

        from ..utils._backend import check_dask_input, dask_sample_weight
        from ._dask import accurate_lstsq_dask, data_scales, first_pass, tsqr

        X, y = check_dask_input(self, X, y)
        sw = dask_sample_weight(sample_weight, X)
        n, m = X.shape
        if n < m:
            # A wide design has few rows: its SVD is computed in memory.
            Xn, yn = X.compute(), y.compute()
            return self.fit(Xn, yn, sample_weight=None if sw is None else sw.compute())
        fit_intercept = bool(self.fit_intercept)
        col_max, y_max, _, _, sx, sy, sw_sum = first_pass(X, y, sw)
        prep = data_scales(col_max, y_max, per_column=False)
        g, h = float(prep.x_scale[0]), prep.y_scale
        Xs = X * g if g != 1.0 else X
        ts = y * h if h != 1.0 else y
        if g != 1.0 or h != 1.0:
            _, _, _, _, sx, sy, sw_sum = first_pass(Xs, ts, sw)
        x_offset = sx / sw_sum if fit_intercept else np.zeros(m)
        y_offset = float(sy / sw_sum) if fit_intercept else 0.0
        alpha_user, beta_user = self.prior_precision, self.noise_precision
        if alpha_user is not None and g > 1.0:
            g_cap = float(pow2_scale(np.sqrt(alpha_user) / h))
            if g_cap < g:
                Xs = Xs * (g_cap / g)
                x_offset = x_offset * (g_cap / g)
                g = g_cap
        prep = prep._replace(
            x_offset=x_offset, y_offset=y_offset, x_scale=np.full(m, g), sw_sum=sw_sum
        )
        to_s = {"prior_precision": g * g / (h * h), "noise_precision": 1.0 / (h * h)}
        alpha, beta = (
            None if v is None else self._to_scaled(v, to_s[name], name)
            for name, v in (("prior_precision", alpha_user), ("noise_precision", beta_user))
        )
        r = None if sw is None else da.sqrt(sw)
        Phi, t = Xs - x_offset, ts - y_offset
        if r is not None:
            Phi, t = Phi * r[:, None], t * r
        # Phi = Q R and [Phi, t] = Q' R': R' = [R, Q^T t; 0, ||t - P_Phi t||].
        Raug = tsqr(da.concatenate([Phi, t[:, None]], axis=1).rechunk({1: -1}))
        Ur, s, Vt = np.linalg.svd(Raug[:m, :m])
        rss_out = float(Raug[m, m] ** 2) if Raug.shape[0] > m else 0.0
        spec = _Spectrum(sw_sum, m, s, Ur.T @ Raug[:m, m], rss_out, Vt)
        # ||t||^2 = ||Q^T t||^2 (t is centred: its mean is a rounding error)
        t_sq = float(Raug[: m + 1, m] @ Raug[: m + 1, m])
        var_t = t_sq / n if r is None else t_sq / sw_sum
        alpha, beta, log_ev = self._evidence(spec, var_t, alpha, beta)
        # The mean: the augmented least-squares problem of _posterior_mean, by TSQR.
        cols = [Xs]
        if fit_intercept:
            cols.append(da.ones((n, 1), chunks=(X.chunks[0], (1,))))
        A = da.concatenate(cols, axis=1).rechunk({1: -1}) if fit_intercept else Xs
        b = ts
        if r is not None:
            A, b = A * r[:, None], b * r
        k = m + int(fit_intercept)
        pen = np.zeros((m, k))
        pen[np.arange(m), np.arange(m)] = np.sqrt(alpha / beta)
        A = da.concatenate([A, da.from_array(pen, chunks=(m, k))], axis=0)
        b = da.concatenate([b, da.zeros(m, chunks=m)])
        coef = accurate_lstsq_dask(A, b, intercept=False)[0]
        offset = float(coef[m]) if fit_intercept else 0.0
        self._store(spec, coef[:m], offset, alpha, beta, log_ev, g, h, prep,
                    lambda: (float(col_max.max()), y_max))  # fmt: skip
        return self

    @staticmethod
    def _to_scaled(value, factor, name):
        with np.errstate(over="ignore", under="ignore"):
            scaled = float(value) * factor
        if not np.isfinite(scaled) or scaled < np.finfo(np.float64).tiny:
            raise ValueError(
                f"BayesianLinearRegression: {name}={value!r} is outside the range float64 "
                "can represent at the scale of these data; rescale X or y."
            )
        return scaled

    def _evidence(self, spec, var_t, alpha, beta):
        """Joint MacKay/Bishop re-estimation on the spectrum of the design.

        ``var_t`` is the variance of the (centred, weighted) targets, which sets the scale
        of the starting points.
        """
        fix_alpha, fix_beta = alpha is not None, beta is not None
        scale = 1.0 / var_t if var_t > 0 else 1.0
        # The fixed-point iteration climbs to a local maximum of the evidence, which can be
        # a poor one (all variance explained as noise). It is started from scikit-learn's
        # point (alpha = 1, beta = 1/var(t)) and from two low-noise points; the highest
        # evidence wins. Each run costs O(M) per step, so the restarts are nearly free.
        starts = [(1.0, scale), (1e-3, 100.0 * scale), (1e-6, 1e4 * scale)]
        best = None
        for alpha0, beta0 in starts:
            a = alpha if fix_alpha else alpha0
            b = beta if fix_beta else beta0
            run = self._fixed_point(spec, a, b, fix_alpha, fix_beta)
            run = (*run, spec.terms(run[0], run[1])[0])
            if best is None or run[4] > best[4] + 1e-9 * abs(best[4]):
                best = run
            if fix_alpha and fix_beta:
                break
        alpha, beta, n_iter, converged, log_ev = best
        if not converged:
            # The fixed point can crawl or wander where the evidence's supremum lies on a
            # boundary (alpha or beta -> infinity, e.g. N < M designs that interpolate). Its
            # gradient in log-precisions is available in O(M), (gamma - alpha m^T m) / 2 and
            # (N - gamma - beta rss) / 2, so a bounded quasi-Newton run finishes the climb.
            polished = self._polish(spec, alpha, beta, fix_alpha, fix_beta)
            # (a stationary start returns the same point, up to rounding of the evidence)
            if polished is not None and polished[2] >= log_ev - 1e-12 * abs(log_ev):
                alpha, beta, log_ev = polished
                converged = True
        if not converged:
            warnings.warn(
                f"Evidence maximisation did not converge in max_iter={self.max_iter} "
                "iterations; increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.n_iter_ = 0 if fix_alpha and fix_beta else n_iter
        return alpha, beta, log_ev

    def _polish(self, spec, alpha, beta, fix_alpha, fix_beta):
        """Maximise the evidence over the free log-precisions by L-BFGS within the bounds.

        Returns ``(alpha, beta, log_evidence)`` on success, else ``None``.
        """

        def unpack(p):
            a = alpha if fix_alpha else float(np.exp(p[0]))
            b = beta if fix_beta else float(np.exp(p[-1]))
            return a, b

        def objective(p):
            a, b = unpack(p)
            value, gamma, mm, rss = spec.terms(a, b)
            grad = []
            if not fix_alpha:
                grad.append(0.5 * (gamma - a * mm))
            if not fix_beta:
                grad.append(0.5 * (spec.n - gamma - b * rss))
            return -value, -np.asarray(grad)

        start = []
        if not fix_alpha:
            start.append(np.log(alpha))
        if not fix_beta:
            start.append(np.log(beta))
        with warnings.catch_warnings():
            # a failed polish is reported below as the estimator's own ConvergenceWarning
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = lbfgs(
                objective,
                np.asarray(start),
                bounds=(np.log(_PREC_MIN), np.log(_PREC_MAX)),
                max_iter=int(self.max_iter),
                # the gradient's terms are sums over N samples and M directions, so rounding
                # alone leaves about eps * max(N, M) in it: ask for a relative 1e-10
                tol=1e-10 * max(spec.n, spec.m, 1.0),
            )
        if not res.success:
            return None
        a, b = unpack(np.atleast_1d(res.x))
        return a, b, -float(res.fun)

    def _fixed_point(self, spec, alpha, beta, fix_alpha, fix_beta):
        """MacKay/Bishop updates from one starting point; O(M) per step."""
        alpha = min(max(float(alpha), _PREC_MIN), _PREC_MAX)
        beta = min(max(float(beta), _PREC_MIN), _PREC_MAX)
        converged = fix_alpha and fix_beta
        n_iter = 0
        for it in range(1, int(self.max_iter) + 1):
            n_iter = it
            gamma, mm, rss, _ = spec.stats(alpha, beta)
            new_alpha = alpha if fix_alpha else _clipped_ratio(gamma, mm)
            new_beta = beta if fix_beta else _clipped_ratio(spec.n - gamma, rss)
            done = abs(new_alpha - alpha) <= self.tol * alpha and (
                abs(new_beta - beta) <= self.tol * beta
            )
            alpha, beta = new_alpha, new_beta
            if done:
                converged = True
                break
        return alpha, beta, n_iter, converged

    @_fit_context
    def partial_fit(self, X, y, sample_weight=None):
        """Sequential Bayesian update: the current posterior is the prior for this batch.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), float or None, default=None
            Weights ``s_n`` (noise precision ``s_n beta``) of this batch's samples.

        Returns
        -------
        self
        """
        if self.fit_intercept:
            raise ValueError(
                "partial_fit needs fit_intercept=False (centring is not sequential); put a "
                "constant feature in the design instead."
            )
        if not hasattr(self, "coef_"):
            return self.fit(X, y, sample_weight=sample_weight)
        X, y = validate_xy(self, X, y, reset=False)
        sw = weights_or_none(sample_weight, X)
        n_eff = float(X.shape[0]) if sw is None else float(np.sum(sw))
        if sw is not None:
            r = np.sqrt(sw)
            X, y = X * r[:, None], y * r
        beta = self.noise_precision_
        P0, m0 = self._posterior_precision, self.coef_
        L0 = cholesky(P0, name="prior precision", warn=False)
        # Bayes' theorem for Gaussians in information form: P_N = P_0 + beta Phi^T Phi,
        # P_N m_N = P_0 m_0 + beta Phi^T t.
        P = P0 + beta * (X.T @ X)
        P = 0.5 * (P + P.T)
        post = MultivariateNormal.from_canonical(P0 @ m0 + beta * (X.T @ y), P)
        coef = post.mean
        resid = y - X @ coef
        dm = coef - m0
        log_ev = log_evidence(
            n_eff, beta, float(resid @ resid), float(dm @ P0 @ dm),
            logdet_from_cholesky(L0), -2.0 * float(np.sum(np.log(np.diag(post.scale_tril)))),
        )  # fmt: skip
        cov = post.cov
        self.coef_cov_ = 0.5 * (cov + cov.T)
        self.coef_ = coef
        self.log_evidence_ += float(log_ev)
        L0 = getattr(self, "_prior_chol", None)
        # gamma = M - tr(S_0^{-1} S_N), the isotropic M - alpha tr(S_N) for S_0 = alpha^-1 I.
        shrink = (
            self.prior_precision_ * np.trace(self.coef_cov_)
            if L0 is None
            else np.trace(cho_solve(L0, self.coef_cov_))
        )
        self.effective_params_ = float(X.shape[1] - shrink)
        self._posterior_precision = P
        self.n_iter_ = 0
        return self

    def _predict_mean_cov(self, X, full_cov=False):
        X = validate_data(self, X, dtype=np.float64, reset=False)
        mean = X @ self.coef_ + self.intercept_
        # With a centred fit the prediction is (x - mean(X))^T w + mean(y): the uncertainty
        # is that of the centred features.
        X = X - self._x_offset
        XS = X @ self.coef_cov_
        if full_cov:
            cov = XS @ X.T
            return mean, 0.5 * (cov + cov.T)
        return mean, np.maximum(np.einsum("ij,ij->i", XS, X), 0.0)

    def _predictive_noise_variance(self):
        return 1.0 / self.noise_precision_

    def sample_y(self, X, n_samples: int = 1, random_state=None):
        """Draw weight vectors from the posterior and evaluate their functions at ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
        n_samples : int, default=1
            Number of function draws.
        random_state : int, Generator, RandomState or None

        Returns
        -------
        y_samples : ndarray of shape (n_samples_X, n_samples)
            Column ``j`` is ``phi(X) w_j`` (plus the offset) with ``w_j ~ N(m_N, S_N)``:
            noise-free functions of the model (Imperial
            "Mathematics for Inference and Machine Learning" §1.8.3, Remark 22: draw ``theta_i ~
            N(m_N, S_N)`` and evaluate ``theta_i^T phi(x)``; the sample curves of PRML Fig. 3.9).

        Notes
        -----
        Sampling the ``M`` weights instead of the ``n_samples_X`` function values costs
        ``O(M^3 + n_samples_X M n_samples)`` rather than a Cholesky factorisation of the
        ``n_samples_X x n_samples_X`` predictive covariance, whose rank is at most ``M``
        (so it would need jitter). ``S_N^{1/2}`` comes from the symmetric eigendecomposition
        of ``S_N``.
        """
        check_is_fitted(self)
        validate_parameter_constraints(
            {"n_samples": [Interval(Integral, 1, None, closed="left")]},
            {"n_samples": n_samples},
            "BayesianLinearRegression.sample_y",
        )
        rng = check_random_state(random_state)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        lam, Q = np.linalg.eigh(self.coef_cov_)
        root = Q * np.sqrt(np.maximum(lam, 0.0))
        z = rng.standard_normal((root.shape[1], n_samples))
        mean = X @ self.coef_ + self.intercept_
        return mean[:, None] + (X - self._x_offset) @ (root @ z)

    def predict(self, X, return_std: bool = False, noisy: bool = True):
        """Predictive mean, and optionally the predictive standard deviation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        return_std : bool, default=False
            Also return the predictive standard deviation.
        noisy : bool, default=True
            ``True``: ``sqrt(phi^T S_N phi + 1/beta)``, the standard deviation of a new noisy
            target (as scikit-learn's ``BayesianRidge`` does). ``False``: ``sqrt(phi^T S_N
            phi)``, that of the latent noise-free function ``f(x) = w^T phi(x)`` (Imperial
            "Mathematics for Inference and Machine Learning" §1.8.3, eq. 1.254 against
            1.258; the ``noisy`` switch of the Gaussian-process regressors).

        Returns
        -------
        mean : ndarray of shape (n_samples,)
        std : ndarray of shape (n_samples,), only if ``return_std``
        """
        check_is_fitted(self)
        if is_dask(X):
            from ._dask import predict_dask

            coef, b0, xo, S = self.coef_, self.intercept_, self._x_offset, self.coef_cov_
            noise = self._predictive_noise_variance() if noisy else 0.0
            mean = predict_dask(self, X, lambda B: B @ coef + b0)
            if not return_std:
                return mean

            def std(B):
                C = B - xo
                return np.sqrt(np.maximum(np.einsum("ij,ij->i", C @ S, C), 0.0) + noise)

            return mean, predict_dask(self, X, std)
        mean, var = self._predict_mean_cov(X)
        if return_std:
            noise = self._predictive_noise_variance() if noisy else 0.0
            return mean, np.sqrt(var + noise)
        return mean
