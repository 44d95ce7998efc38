"""Probabilistic PCA: closed-form maximum likelihood and EM (with missing values)."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from ..base import (
    BaseEstimator,
    ComponentNamesMixin,
    DensityMixin,
    InformationCriterionMixin,
    TransformerMixin,
    _fit_context,
    check_is_fitted,
)
from ..exceptions import ConvergenceWarning
from ..mixture import em
from ..utils._param_validation import Interval, StrOptions, validate_parameter_constraints
from ..utils._rowscale import centred_linear_map, check_log_density, unit_of
from ..utils.linalg import cho_solve, cho_solve_batched, cholesky_batched, solve_psd
from ..utils.validation import check_random_state, validate_data
from ._base import EMSteps, centred_spectrum, flip_rows
from ._lowrank import LowRankPlusDiagonal

__all__ = ["ProbabilisticPCA"]

_LOG2PI = np.log(2.0 * np.pi)


class ProbabilisticPCA(
    InformationCriterionMixin, ComponentNamesMixin, DensityMixin, TransformerMixin, BaseEstimator
):
    """Probabilistic PCA (Tipping & Bishop): a linear-Gaussian latent variable model.

    ``z ~ N(0, I_k)``, ``x | z ~ N(W z + mu, sigma^2 I_D)``, so ``x ~ N(mu, C)`` with
    ``C = W W^T + sigma^2 I``.

    Parameters
    ----------
    n_components : int or None, default=None
        Latent dimension ``k``; must satisfy ``k < rank`` of the data so that ``sigma^2 > 0``.
        ``None``: ``min(n_samples - 1, n_features) - 1``.
    method : {"closed_form", "em"}, default="closed_form"
        ``"closed_form"``: the maximum-likelihood solution from the eigendecomposition of the
        sample covariance. ``"em"``: expectation-maximisation, which also accepts missing
        values (NaN) in ``X``.
    max_iter : int, default=1000
        EM iterations.
    tol : float, default=1e-6
        EM stops when the mean log-likelihood improves by less than ``tol``.
    init : {"pca", "random"}, default="pca"
        EM starting point: ``"pca"``, the closed-form solution for the data with missing
        entries replaced by their feature means (for complete data that is already the
        maximum); ``"random"``, a random ``W`` with ``sigma^2`` the mean variance.
    random_state : int, Generator, RandomState or None, default=None
        Randomness of ``init="random"``.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        ``W^T``. For the closed form ``W = U_k (Lambda_k - sigma^2 I)^{1/2}`` (rotation
        ``R = I``), with signs fixed so that each row's largest-magnitude entry is positive.
        EM determines ``W`` only up to a rotation: compare ``W W^T``.
    noise_variance_ : float
        ``sigma^2``.
    mean_ : ndarray of shape (n_features,)
    explained_variance_ : ndarray of shape (n_components,)
        Closed form only: the top ``k`` eigenvalues of the ``1/N`` sample covariance.
    n_components_ : int
    n_iter_ : int
        EM iterations run (0 for the closed form).
    converged_ : bool
        Whether EM's change of the mean log-likelihood fell below ``tol`` (``True`` for the
        closed form).
    lower_bound_ : float
        Mean log-likelihood of the training data at the fitted parameters (observed entries
        only when there are missing values); EM's bound is tight, its E-step being exact.
    lower_bounds_ : ndarray of shape (n_iter_,)
        EM: the mean log-likelihood at the start of each iteration (``lower_bounds_[0]`` at
        the initial parameters), non-decreasing; empty for the closed form.
    lower_bound_history_ : list of float
        The mean log-likelihood after each EM iteration (``lower_bounds_[1:]`` followed by
        ``lower_bound_``); ``[lower_bound_]`` for the closed form.
    n_features_in_ : int

    See Also
    --------
    mathlearn.decomposition.PCA
        The zero-noise limit.
    mathlearn.decomposition.FactorAnalysis
        The same model with diagonal noise.

    Notes
    -----
    Imperial "Mathematics for Inference and Machine Learning" §2.2.1.1 (eqs. 2.77-2.90);
    PRML §12.2; Oxford "Advanced Topics in Statistical Machine Learning" §5.5. The ML solution is
    ``mu = mean(x)``, ``sigma^2 = (1/(D-k)) sum_{j>k} lambda_j`` and
    ``W = U_k (Lambda_k - sigma^2 I)^{1/2}``, where ``lambda_j`` are the eigenvalues of the
    ``1/N`` covariance (the maximum-likelihood covariance, not the unbiased one). The posterior is
    ``p(z | x) = N(M^{-1} W^T (x - mu), sigma^2 M^{-1})`` with ``M = W^T W + sigma^2 I``
    (eq. 2.84); the log-likelihood uses Woodbury, ``C^{-1} = (I - W M^{-1} W^T) / sigma^2``,
    and ``ln|C| = (D - k) ln sigma^2 + ln|M|`` (eq. 2.86), so it costs ``O(N D k)`` and never a
    ``D x D`` inverse. As ``sigma^2 -> 0`` the posterior mean becomes whitened PCA,
    ``Lambda_k^{-1/2} U_k^T (x - mu)`` (Imperial "Mathematics for Inference and Machine Learning"
    §2.2.1.1; corrected: the notes' limit omits the ``U_k^T``).

    EM (Oxford "Advanced Topics in Statistical Machine Learning" §5.5, eqs. 5.19-5.22) for complete
    data: E-step ``b_i = M^{-1} W^T x_i``, ``R = sigma^2 M^{-1}``; M-step ``W = (sum x_i b_i^T)(sum
    b_i b_i^T + N R)^{-1}`` and ``sigma^2 = (1/(N D)) [sum ||x_i||^2 - 2 sum x_i^T W b_i + tr(W^T W
    (sum b_i b_i^T + N R))]`` with the new ``W``. With missing values the E-step conditions on each
    sample's observed entries only (``M_i = W_o^T W_o + sigma^2 I``, batched over samples) and the
    M-step solves, for each feature, the ``(k + 1) x (k + 1)`` normal equations of ``(w_j, mu_j)``
    over the samples where it is observed (as in Ilin & Raiko, 2010); every step still
    increases the observed-data likelihood. Both run through the EM driver
    :func:`mathlearn.mixture.em`. EM is slow when ``sigma^2`` is small next to the
    leading eigenvalues: the length of ``W`` along a strong direction approaches its fixed
    point at a rate of about ``1 - 2 sigma^2 / lambda`` per iteration.

    ``aic(X)`` and ``bic(X)`` use ``Σ_i ln p(x_i)`` and ``M = D q - q (q - 1) / 2 + 1 + D``
    free parameters: ``W`` up to a rotation of the latent space, ``sigma^2`` and ``mu``
    (PRML §12.2.1).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.decomposition import ProbabilisticPCA
    >>> X = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [-1, 0, 0], [0, -1, 0], [0, 0, -1],
    ...               [2, 2, 0], [-2, -2, 0]], dtype=float)
    >>> ppca = ProbabilisticPCA(n_components=1).fit(X)
    >>> round(ppca.noise_variance_, 6), np.round(ppca.components_, 6)
    (0.25, array([[1., 1., 0.]]))
    """

    _expected_failed_checks: ClassVar[dict] = {
        "check_transformer_n_iter": "the default closed-form fit runs no iterations, so n_iter_ "
        "is 0; max_iter only applies to method='em'."
    }

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "method": [StrOptions({"closed_form", "em"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "init": [StrOptions({"pca", "random"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components: int | None = None,
        *,
        method: str = "closed_form",
        max_iter: int = 1000,
        tol: float = 1e-6,
        init: str = "pca",
        random_state=None,
    ):
        self.n_components = n_components
        self.method = method
        self.max_iter = max_iter
        self.tol = tol
        self.init = init
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = self.method == "em"
        return tags

    @_fit_context
    def fit(self, X, y=None):
        """Fit ``(W, mu, sigma^2)`` to ``X`` of shape (n_samples, n_features); returns self.

        With ``method="em"``, NaN entries of ``X`` are treated as missing at random.
        """
        allow_nan = self.method == "em"
        try:
            X = validate_data(
                self, X, dtype=np.float64, ensure_all_finite="allow-nan" if allow_nan else True
            )
        except ValueError as err:
            if not allow_nan and "NaN" in str(err):
                raise ValueError(
                    f"{err} ProbabilisticPCA(method='em') handles missing values (NaN)."
                ) from None
            raise
        n, d = X.shape
        if n < 2:
            raise ValueError(f"ProbabilisticPCA needs at least 2 samples; got n_samples = {n}.")
        if d < 2:
            raise ValueError(
                f"ProbabilisticPCA needs k < n_features; got n_features = {d} (n_features=1)."
            )
        k = self.n_components
        if k is None:
            k = max(min(n - 1, d) - 1, 1)
        if k >= d:
            raise ValueError(
                f"n_components={self.n_components!r} must be an int in [1, n_features - 1] = "
                f"[1, {d - 1}]."
            )
        k = int(k)
        # Data of extreme magnitude are fitted in units of a power of two (exact, as the
        # model is equivariant: W, mu scale with the data, sigma^2 with its square).
        unit = unit_of(X)
        if unit != 1.0:
            X = X / unit
        if self.method == "closed_form":
            self._fit_closed_form(X, k)
        else:
            mask = np.isnan(X)
            if np.any(np.all(mask, axis=0)):
                raise ValueError("a feature of X is missing (NaN) in every sample.")
            if np.any(np.all(mask, axis=1)):
                raise ValueError("a sample of X is missing (NaN) in every feature.")
            self._fit_em(X, mask, k)
        if unit != 1.0:
            self._map_back(unit)
        self.n_components_ = k
        return self

    def _map_back(self, unit):
        """Parameters in the data's units from a fit to ``X / unit``; a clear error when the
        data's variances (the square of their magnitude) are not float64 numbers."""
        d = self.mean_.shape[0]
        with np.errstate(over="ignore", under="ignore"):
            sigma2 = self.noise_variance_ * unit * unit
            closed = self.method == "closed_form"  # EM fits have no explained_variance_
            explained = self.explained_variance_ * unit * unit if closed else np.ones(1)
        tiny = np.finfo(float).tiny
        if not (np.isfinite(sigma2) and np.all(np.isfinite(explained))) or sigma2 < tiny:
            raise ValueError(
                f"the noise variance sigma^2 of these data ({self.noise_variance_:.3g} in "
                f"units of {unit:.3g} squared) is outside the float64 range, so the PPCA "
                "density of data of this magnitude cannot be represented; rescale X."
            )
        self.noise_variance_ = float(sigma2)
        if closed:
            self.explained_variance_ = explained
        self.components_ = self.components_ * unit
        self.mean_ = self.mean_ * unit
        # log p(x) = log p_unit(x / unit) - D log(unit).
        shift = d * float(np.log(unit))
        self.lower_bound_ -= shift
        self.lower_bounds_ = self.lower_bounds_ - shift
        self.lower_bound_history_ = [b - shift for b in self.lower_bound_history_]

    def _set_closed_form(self, lam, Vt, d, k, n):
        """ML parameters from the eigenvalues ``lam`` of the 1/N covariance and its axes."""
        w = np.zeros(d)
        w[: lam.size] = np.clip(lam, 0.0, None)  # zeros beyond min(N, D)
        sigma2 = float(np.sum(w[k:d])) / (d - k)
        # Rank at the resolution of the singular values of X_c, eps * s_max in absolute
        # terms (centred_spectrum falls back to them whenever the covariance route could not
        # resolve sigma^2).
        s = np.sqrt(w * n)
        tol = max(n, d) * np.finfo(float).eps * s[0]
        rank = int(np.sum(s > tol))
        if rank <= k:
            if rank == 0:
                raise ValueError(
                    "X is constant (every feature has zero variance): the PPCA density is "
                    "degenerate."
                )
            advice = f"use n_components < {rank}" if rank > 1 else "PPCA needs data of rank >= 2"
            raise ValueError(
                f"the data lie in a subspace of dimension {rank} <= n_components={k}, so "
                f"sigma^2 = 0 and the PPCA density is degenerate; {advice}."
            )
        scale = np.sqrt(np.clip(w[:k] - sigma2, 0.0, None))
        signs = flip_rows(Vt[:k])
        self.components_ = Vt[:k] * (scale * signs)[:, None]
        self.noise_variance_ = sigma2
        self.explained_variance_ = w[:k].copy()

    def _fit_closed_form(self, X, k):
        n, d = X.shape
        self.mean_ = X.mean(axis=0)
        Xc = X - self.mean_
        # The spectrum of the covariance, from its eigendecomposition when that resolves
        # sigma^2 (the mean of the D - k trailing eigenvalues), else from the singular
        # values of X_c, which do not square the condition number. For D > N there are N
        # non-trivial directions (Imperial "Mathematics for Inference and Machine Learning"
        # §2.1.4.3, Lemma 1); the D - N remaining eigenvalues are 0 and enter sigma^2 as zeros.
        lam, Vt = centred_spectrum(Xc, lambda w: np.sum(np.clip(w[k:], 0, None)) / (d - k))
        self._set_closed_form(lam, Vt, d, k, n)
        self.n_iter_ = 0
        self.converged_ = True
        self.lower_bound_ = float(np.mean(self._model().logpdf(Xc, np.zeros(d))))
        self.lower_bounds_ = np.empty(0)
        self.lower_bound_history_ = [self.lower_bound_]

    def _init_em(self, X_filled, k, scale):
        d = X_filled.shape[1]
        if self.init == "pca":
            try:
                start = ProbabilisticPCA(n_components=k).fit(X_filled)
            except ValueError:
                pass  # degenerate after mean imputation: fall back to a random start
            else:
                return start.components_.T.copy(), start.noise_variance_
        rng = check_random_state(self.random_state)
        W = rng.standard_normal((d, k)) * np.sqrt(scale / k)
        return W, scale

    def _fit_em(self, X, mask, k):
        if mask.any():
            obs = ~mask
            mu = np.nanmean(X, axis=0)
            var = np.nanvar(X, axis=0)
            W, sigma2 = self._init_em(np.where(mask, mu, X), k, max(float(np.mean(var)), 1e-12))
            data = ("missing", X, obs, 1e-12 * np.mean(var))
        else:
            n, d = X.shape
            mu = X.mean(axis=0)
            Xc = X - mu
            trace_s = float(np.einsum("ij,ij->", Xc, Xc)) / n
            W, sigma2 = self._init_em(X, k, max(trace_s / d, 1e-12))
            data = ("complete", Xc, trace_s, 1e-12 * trace_s / d)
        self.components_, self.noise_variance_, self.mean_ = W.T, float(sigma2), mu
        result = em(EMSteps(self), data, max_iter=self.max_iter, tol=self.tol)
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        self.lower_bounds_ = result.lower_bounds
        self.lower_bound_ = float(np.mean(self._score(X, ~mask)))
        self.lower_bound_history_ = [*map(float, result.lower_bounds[1:]), self.lower_bound_]
        if not self.converged_:
            history = self.lower_bound_history_
            warnings.warn(
                f"ProbabilisticPCA EM did not converge in max_iter={self.max_iter} iterations "
                f"(last change {abs(history[-1] - history[-2]) if len(history) > 1 else 0:.3g}"
                f" > tol={self.tol}).",
                ConvergenceWarning,
                stacklevel=3,
            )

    # The EM driver's hooks (:class:`mathlearn.mixture.EMModel`). ``data`` is
    # ("complete", X_c, tr(S), sigma^2 floor) or ("missing", X, observed mask, floor).
    def _e_step(self, data):
        if data[0] == "complete":
            return self._e_step_complete(data[1])
        return self._e_step_missing(data[1], data[2])

    def _m_step(self, data, posterior):
        if data[0] == "complete":
            self._m_step_complete(data[1], data[2], posterior)
        else:
            self._m_step_missing(data[1], data[2], posterior)
        self.noise_variance_ = max(self.noise_variance_, data[3])

    def _e_step_complete(self, Xc):
        """E-step (5.19-5.20): ``b_i = M^{-1} W^T x_i``, ``R = sigma^2 M^{-1}``."""
        model = self._model()
        B = model.latent_mean(Xc)  # (N, k)
        R = cho_solve(model.L, np.eye(model.L.shape[0]))  # sigma^2 M^{-1}
        bound = float(np.mean(model.logpdf(Xc, np.zeros(Xc.shape[1]))))
        return bound, (B, R)

    def _m_step_complete(self, Xc, trace_s, posterior):
        """M-step (5.21-5.22), ``sigma^2`` with the new ``W``."""
        B, R = posterior
        n, d = Xc.shape
        XB = Xc.T @ B  # (D, k)
        Ezz = B.T @ B + n * R
        W = solve_psd(Ezz, XB.T, jitter=None, name="sum E[z z^T]").T
        sigma2 = (n * trace_s - 2.0 * np.sum(XB * W) + np.sum((W.T @ W) * Ezz)) / (n * d)
        self.components_ = W.T
        self.noise_variance_ = float(sigma2)

    def _e_step_missing(self, X, obs):
        """E-step on each sample's observed coordinates (see :meth:`_missing_posterior`)."""
        ll, Ez, Cov = self._missing_posterior(X, obs)
        return float(np.mean(ll)), (Ez, Cov)

    def _m_step_missing(self, X, obs, posterior):
        """For each feature ``j``, ``(w_j, mu_j)`` solve the normal equations of the augmented
        latent ``[z; 1]`` over the samples where ``j`` is observed."""
        Ez, Cov = posterior
        k = Ez.shape[1]
        d = X.shape[1]
        o = obs.astype(float)
        Xf = np.where(obs, X, 0.0)
        Ezz = Cov + Ez[:, :, None] * Ez[:, None, :]
        G = np.empty((d, k + 1, k + 1))
        G[:, :k, :k] = np.einsum("nd,nkl->dkl", o, Ezz)
        s1 = o.T @ Ez
        G[:, :k, k] = s1
        G[:, k, :k] = s1
        G[:, k, k] = o.sum(axis=0)
        R = np.empty((d, k + 1))
        R[:, :k] = Xf.T @ Ez
        R[:, k] = Xf.sum(axis=0)
        sol = cho_solve_batched(cholesky_batched(G, name="E[[z; 1][z; 1]^T]"), R[:, :, None])[
            :, :, 0
        ]
        W, mu = sol[:, :k], sol[:, k]
        resid = (Xf - Ez @ W.T - mu) * o
        spread = np.einsum("nd,dk,nkl,dl->", o, W, Cov, W)
        sigma2 = (float(np.sum(resid**2)) + float(spread)) / float(o.sum())
        self.components_, self.mean_, self.noise_variance_ = W.T, mu, sigma2

    def _model(self) -> LowRankPlusDiagonal:
        return LowRankPlusDiagonal(self.components_.T, self.noise_variance_)

    def _score(self, X, obs):
        """Per-sample log-density of the observed coordinates of each row."""
        if obs.all():
            return self._model().logpdf(X, self.mean_)
        return self._missing_posterior(X, obs)[0]

    def _missing_posterior(self, X, obs):
        """Observed-data log-likelihood of each row and the posterior of its latent.

        Batched over samples: ``M_i = W_o^T W_o + sigma^2 I``, ``E[z_i] = M_i^{-1} W_o^T
        (x_o - mu_o)``, ``Cov_i = sigma^2 M_i^{-1}``, and by Woodbury on the observed block
        ``(x_o - mu_o)^T C_oo^{-1} (x_o - mu_o) = (||x_o - mu_o||^2 - r_i^T E[z_i]) /
        sigma^2`` with ``r_i = W_o^T (x_o - mu_o)``, ``ln|C_oo| = (d_o - k) ln sigma^2 +
        ln|M_i|``.
        """
        W = self.components_.T
        k = W.shape[1]
        s2 = self.noise_variance_
        o = obs.astype(float)
        Xc = np.where(obs, X - self.mean_, 0.0)
        M = np.einsum("nd,dk,dl->nkl", o, W, W) + s2 * np.eye(k)
        r = Xc @ W
        L = cholesky_batched(M, name="M_i")
        Ez = cho_solve_batched(L, r[:, :, None])[:, :, 0]
        Cov = s2 * cho_solve_batched(L, np.eye(k))
        logdet_m = 2.0 * np.sum(np.log(np.diagonal(L, axis1=1, axis2=2)), axis=1)
        d_o = o.sum(axis=1)
        quad = (np.einsum("ij,ij->i", Xc, Xc) - np.einsum("ij,ij->i", r, Ez)) / s2
        ll = -0.5 * (d_o * _LOG2PI + (d_o - k) * np.log(s2) + logdet_m + quad)
        return ll, Ez, Cov

    def _validate(self, X):
        check_is_fitted(self)
        return validate_data(
            self,
            X,
            dtype=np.float64,
            reset=False,
            ensure_all_finite="allow-nan" if self.method == "em" else True,
        )

    def score_samples(self, X):
        """Log-likelihood ``log p(x_i)`` of each sample, shape (n_samples,).

        NaN entries (``method="em"`` only) are marginalised out.
        """
        X = self._validate(X)
        with np.errstate(over="ignore"):
            logp = self._score(X, ~np.isnan(X))
        return check_log_density(logp, X, what="the log-likelihood")

    def score(self, X, y=None) -> float:
        """Mean log-likelihood of the samples (scikit-learn's ``PCA.score`` convention)."""
        return float(np.mean(self.score_samples(X)))

    def _total_log_likelihood(self, X, y=None) -> float:
        return float(np.sum(self.score_samples(X)))

    def _n_parameters(self) -> int:
        D, q = self.components_.shape[1], self.components_.shape[0]
        return D * q - q * (q - 1) // 2 + 1 + D

    def get_covariance(self) -> np.ndarray:
        """The model covariance ``C = W W^T + sigma^2 I``, shape (n_features, n_features)."""
        check_is_fitted(self)
        W = self.components_.T
        return W @ W.T + self.noise_variance_ * np.eye(W.shape[0])

    def posterior(self, X):
        """Posterior ``p(z | x) = N(M^{-1} W^T (x - mu), sigma^2 M^{-1})`` (eq. 2.84).

        Returns
        -------
        mean : ndarray of shape (n_samples, n_components)
        cov : ndarray of shape (n_components, n_components)
            Shared by all samples (complete data).
        """
        X = self._validate(X)
        if np.isnan(X).any():
            raise ValueError("posterior needs complete rows; X contains NaN.")
        model = self._model()
        mean = centred_linear_map(X, self.mean_, model.latent_mean, what="E[z | x]")
        cov = cho_solve(model.L, np.eye(model.L.shape[0]))  # sigma^2 M^{-1}
        return mean, cov

    def transform(self, X):
        """Posterior means ``E[z | x]``, shape (n_samples, n_components)."""
        return self.posterior(X)[0]

    def inverse_transform(self, Z):
        """Reconstruction ``W E[z | x] + mu`` from latent means ``Z``."""
        check_is_fitted(self)
        Z = np.asarray(Z, dtype=float)
        if Z.ndim != 2 or Z.shape[1] != self.n_components_:
            raise ValueError(f"expected shape (n_samples, {self.n_components_}); got {Z.shape}.")
        return Z @ self.components_ + self.mean_

    def sample(self, n_samples: int = 1, random_state=None) -> np.ndarray:
        """Draw ``x = W z + mu + eps`` from the generative model, shape (n_samples, D)."""
        check_is_fitted(self)
        validate_parameter_constraints(
            {"n_samples": [Interval(Integral, 1, None, closed="left")]},
            {"n_samples": n_samples},
            "ProbabilisticPCA.sample",
        )
        rng = check_random_state(random_state)
        k, d = self.components_.shape
        z = rng.standard_normal((int(n_samples), k))
        eps = rng.standard_normal((int(n_samples), d)) * np.sqrt(self.noise_variance_)
        return z @ self.components_ + self.mean_ + eps
