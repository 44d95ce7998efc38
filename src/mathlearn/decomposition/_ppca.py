"""Probabilistic PCA: closed-form maximum likelihood and EM (with missing values)."""

from __future__ import annotations

import numbers
import warnings
from typing import ClassVar

import numpy as np
import scipy.linalg as sla

from ..base import (
    BaseEstimator,
    ComponentNamesMixin,
    DensityMixin,
    TransformerMixin,
    check_is_fitted,
)
from ..exceptions import ConvergenceWarning
from ..utils.linalg import cho_solve, cholesky, logdet_from_cholesky
from ..utils.validation import check_random_state, validate_data
from ._base import flip_rows

__all__ = ["ProbabilisticPCA"]

_LOG2PI = np.log(2.0 * np.pi)


class ProbabilisticPCA(ComponentNamesMixin, DensityMixin, TransformerMixin, BaseEstimator):
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
    lower_bound_ : float
        Mean log-likelihood of the training data at the fitted parameters (observed entries
        only when there are missing values).
    lower_bound_history_ : list of float
        EM: the mean log-likelihood after each iteration (non-decreasing).
    n_features_in_ : int

    Notes
    -----
    Spec 000 M63 (notes 000 eqs. 2.77-2.90), spec 001 M34, spec 002 M32. The ML solution is
    ``mu = mean(x)``, ``sigma^2 = (1/(D-k)) sum_{j>k} lambda_j`` and
    ``W = U_k (Lambda_k - sigma^2 I)^{1/2}``, where ``lambda_j`` are the eigenvalues of the
    ``1/N`` covariance (spec 002 erratum 14). The posterior is
    ``p(z | x) = N(M^{-1} W^T (x - mu), sigma^2 M^{-1})`` with ``M = W^T W + sigma^2 I``
    (eq. 2.84); the log-likelihood uses Woodbury, ``C^{-1} = (I - W M^{-1} W^T) / sigma^2``,
    and ``ln|C| = (D - k) ln sigma^2 + ln|M|`` (eq. 2.86), so it costs ``O(N D k)`` and never a
    ``D x D`` inverse. As ``sigma^2 -> 0`` the posterior mean becomes whitened PCA,
    ``Lambda_k^{-1/2} U_k^T (x - mu)`` (spec 000 M63, erratum 13).

    EM (spec 002 M32, eqs. 5.19-5.22) for complete data: E-step ``b_i = M^{-1} W^T x_i``,
    ``R = sigma^2 M^{-1}``; M-step ``W = (sum x_i b_i^T)(sum b_i b_i^T + N R)^{-1}`` and
    ``sigma^2 = (1/(N D)) [sum ||x_i||^2 - 2 sum x_i^T W b_i + tr(W^T W (sum b_i b_i^T + N R))]``
    with the new ``W``. With missing values the E-step conditions on each sample's observed
    entries only (``M_i = W_o^T W_o + sigma^2 I``, batched over samples) and the M-step
    solves, for each feature, the ``(k + 1) x (k + 1)`` normal equations of ``(w_j, mu_j)``
    over the samples where it is observed (as in Ilin & Raiko, 2010); every step still
    increases the observed-data likelihood. EM is slow when ``sigma^2`` is small next to the
    leading eigenvalues: the length of ``W`` along a strong direction approaches its fixed
    point at a rate of about ``1 - 2 sigma^2 / lambda`` per iteration.

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

    def fit(self, X, y=None):
        """Fit ``(W, mu, sigma^2)`` to ``X`` of shape (n_samples, n_features); returns self.

        With ``method="em"``, NaN entries of ``X`` are treated as missing at random.
        """
        if self.method not in ("closed_form", "em"):
            raise ValueError(f"method must be 'closed_form' or 'em'; got {self.method!r}.")
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
        if not isinstance(k, numbers.Integral) or isinstance(k, bool) or not 1 <= k < d:
            raise ValueError(
                f"n_components={self.n_components!r} must be an int in [1, n_features - 1] = "
                f"[1, {d - 1}]."
            )
        k = int(k)
        if self.method == "closed_form":
            self._fit_closed_form(X, k)
        else:
            mask = np.isnan(X)
            if np.any(np.all(mask, axis=0)):
                raise ValueError("a feature of X is missing (NaN) in every sample.")
            if np.any(np.all(mask, axis=1)):
                raise ValueError("a sample of X is missing (NaN) in every feature.")
            if mask.any():
                self._fit_em_missing(X, mask, k)
            else:
                self._fit_em(X, k)
        self.n_components_ = k
        return self

    def _set_closed_form(self, w, U, d, k, n):
        sigma2 = float(np.sum(w[k:d])) / (d - k) if d > k else 0.0
        if not sigma2 > d * np.finfo(float).eps * max(w[0], 1e-300):
            rank = int(np.sum(w > d * np.finfo(float).eps * max(w[0], 1e-300)))
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
        Wt = U[:, :k].T * scale[:, None]
        signs = flip_rows(U[:, :k].T)
        self.components_ = Wt * signs[:, None]
        self.noise_variance_ = sigma2
        self.explained_variance_ = w[:k].copy()

    def _fit_closed_form(self, X, k):
        n, d = X.shape
        self.mean_ = X.mean(axis=0)
        Xc = X - self.mean_
        if d <= n:
            w, U = np.linalg.eigh(Xc.T @ Xc / n)
            w, U = w[::-1], U[:, ::-1]
        else:
            # D > N: the N x N Gram matrix has the same non-zero spectrum (spec 000 M52); the
            # D - N + 1 remaining eigenvalues are 0 and enter sigma^2 as zeros.
            g, V = np.linalg.eigh(Xc @ Xc.T / n)
            g, V = g[::-1], V[:, ::-1]
            r = int(np.sum(g > g[0] * n * np.finfo(float).eps))
            U = (Xc.T @ V[:, :r]) / np.sqrt(n * g[:r])
            w = np.zeros(d)
            w[:r] = g[:r]
        self._set_closed_form(np.clip(w, 0.0, None), U, d, k, n)
        self.n_iter_ = 0
        self.lower_bound_ = float(np.mean(self._loglik_complete(Xc)))
        self.lower_bound_history_ = [self.lower_bound_]

    def _init_em(self, X_filled, k, scale):
        if self.init not in ("pca", "random"):
            raise ValueError(f"init must be 'pca' or 'random'; got {self.init!r}.")
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

    def _fit_em(self, X, k):
        n, d = X.shape
        self.mean_ = X.mean(axis=0)
        Xc = X - self.mean_
        trace_s = float(np.einsum("ij,ij->", Xc, Xc)) / n
        W, sigma2 = self._init_em(X, k, max(trace_s / d, 1e-12))
        history = []
        converged = False
        for it in range(1, self.max_iter + 1):
            # E-step (5.19-5.20): b_i = M^{-1} W^T x_i, R = sigma^2 M^{-1}.
            L = cholesky(W.T @ W + sigma2 * np.eye(k), jitter=None, name="M")
            B = cho_solve(L, W.T @ Xc.T)  # (k, N)
            R = sigma2 * cho_solve(L, np.eye(k))
            # M-step (5.21-5.22), sigma^2 with the new W.
            XB = Xc.T @ B.T  # (D, k)
            Ezz = B @ B.T + n * R
            W = sla.solve(Ezz, XB.T, assume_a="pos", check_finite=False).T
            sigma2 = (n * trace_s - 2.0 * np.sum(XB * W) + np.sum((W.T @ W) * Ezz)) / (n * d)
            sigma2 = max(float(sigma2), 1e-12 * trace_s / d)
            self.components_, self.noise_variance_ = W.T, sigma2
            ll = float(np.mean(self._loglik_complete(Xc)))
            history.append(ll)
            if it > 1 and abs(ll - history[-2]) < self.tol:
                converged = True
                break
        self._finish_em(history, converged, it)

    def _finish_em(self, history, converged, it):
        self.n_iter_ = it
        self.lower_bound_ = history[-1]
        self.lower_bound_history_ = history
        if not converged:
            warnings.warn(
                f"ProbabilisticPCA EM did not converge in max_iter={self.max_iter} iterations "
                f"(last change {abs(history[-1] - history[-2]) if len(history) > 1 else 0:.3g}"
                f" > tol={self.tol}).",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _fit_em_missing(self, X, mask, k):
        d = X.shape[1]
        obs = (~mask).astype(float)
        mu = np.nanmean(X, axis=0)
        Xf = np.where(mask, 0.0, X)
        var = np.nanvar(X, axis=0)
        W, sigma2 = self._init_em(np.where(mask, mu, X), k, max(float(np.mean(var)), 1e-12))
        n_obs = float(obs.sum())
        counts = obs.sum(axis=0)
        eye = np.eye(k)
        history = []
        converged = False
        for it in range(1, self.max_iter + 1):
            # E-step, batched over samples: condition on each sample's observed coordinates,
            # M_i = W_o^T W_o + sigma^2 I, E[z_i] = M_i^{-1} W_o^T (x_o - mu_o),
            # Cov_i = sigma^2 M_i^{-1}.
            M = np.einsum("nd,dk,dl->nkl", obs, W, W) + sigma2 * eye
            rhs = ((Xf - mu) * obs) @ W
            Ez = np.linalg.solve(M, rhs[:, :, None])[:, :, 0]
            Cov = sigma2 * np.linalg.solve(M, np.broadcast_to(eye, M.shape))
            Ezz = Cov + Ez[:, :, None] * Ez[:, None, :]
            # M-step: for each feature j, (w_j, mu_j) solve the normal equations of the
            # augmented latent [z; 1] over the samples where j is observed.
            G = np.empty((d, k + 1, k + 1))
            G[:, :k, :k] = np.einsum("nd,nkl->dkl", obs, Ezz)
            s1 = obs.T @ Ez
            G[:, :k, k] = s1
            G[:, k, :k] = s1
            G[:, k, k] = counts
            R = np.empty((d, k + 1))
            R[:, :k] = Xf.T @ Ez
            R[:, k] = Xf.sum(axis=0)
            sol = np.linalg.solve(G, R[:, :, None])[:, :, 0]
            W, mu = sol[:, :k], sol[:, k]
            resid = (Xf - Ez @ W.T - mu) * obs
            spread = np.einsum("nd,dk,nkl,dl->", obs, W, Cov, W)
            sigma2 = max((float(np.sum(resid**2)) + float(spread)) / n_obs, 1e-12 * np.mean(var))
            self.components_, self.noise_variance_, self.mean_ = W.T, sigma2, mu
            ll = float(np.mean(self._loglik_missing(X, ~mask)))
            history.append(ll)
            if it > 1 and abs(ll - history[-2]) < self.tol:
                converged = True
                break
        self._finish_em(history, converged, it)

    def _loglik_complete(self, Xc):
        """Per-sample log N(x | mu, W W^T + sigma^2 I) of centred rows, via Woodbury."""
        W = self.components_.T
        d, k = W.shape
        s2 = self.noise_variance_
        L = cholesky(W.T @ W + s2 * np.eye(k), jitter=None, name="M")
        proj = sla.solve_triangular(L, W.T @ Xc.T, lower=True, check_finite=False)
        quad = (np.einsum("ij,ij->i", Xc, Xc) - np.einsum("ij,ij->j", proj, proj)) / s2
        logdet = (d - k) * np.log(s2) + logdet_from_cholesky(L)
        return -0.5 * (d * _LOG2PI + logdet + quad)

    def _loglik_missing(self, X, obs):
        """Per-sample log-density of the observed coordinates of each row (Woodbury)."""
        W = self.components_.T
        k = W.shape[1]
        s2 = self.noise_variance_
        o = obs.astype(float)
        Xc = np.where(obs, X - self.mean_, 0.0)
        M = np.einsum("nd,dk,dl->nkl", o, W, W) + s2 * np.eye(k)
        r = Xc @ W
        sol = np.linalg.solve(M, r[:, :, None])[:, :, 0]
        _, logdet_m = np.linalg.slogdet(M)
        d_o = o.sum(axis=1)
        quad = (np.einsum("ij,ij->i", Xc, Xc) - np.einsum("ij,ij->i", r, sol)) / s2
        logdet = (d_o - k) * np.log(s2) + logdet_m
        return -0.5 * (d_o * _LOG2PI + logdet + quad)

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
        obs = ~np.isnan(X)
        if obs.all():
            return self._loglik_complete(X - self.mean_)
        return self._loglik_missing(X, obs)

    def score(self, X, y=None) -> float:
        """Mean log-likelihood of the samples (scikit-learn's ``PCA.score`` convention)."""
        return float(np.mean(self.score_samples(X)))

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
        W = self.components_.T
        k = W.shape[1]
        L = cholesky(W.T @ W + self.noise_variance_ * np.eye(k), jitter=None, name="M")
        mean = cho_solve(L, W.T @ (X - self.mean_).T).T
        cov = self.noise_variance_ * cho_solve(L, np.eye(k))
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
        if (
            not isinstance(n_samples, numbers.Integral)
            or isinstance(n_samples, bool)
            or (n_samples < 1)
        ):
            raise ValueError(f"n_samples must be a positive int; got {n_samples!r}.")
        rng = check_random_state(random_state)
        k, d = self.components_.shape
        z = rng.standard_normal((int(n_samples), k))
        eps = rng.standard_normal((int(n_samples), d)) * np.sqrt(self.noise_variance_)
        return z @ self.components_ + self.mean_ + eps
