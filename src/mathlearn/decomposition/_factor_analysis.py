"""Factor analysis fitted by expectation-maximisation."""

from __future__ import annotations

import numbers
import warnings
from typing import ClassVar

import numpy as np
import scipy.linalg as sla

from ..base import BaseEstimator, ComponentNamesMixin, TransformerMixin, check_is_fitted
from ..exceptions import ConvergenceWarning
from ..utils.linalg import cho_solve, cholesky, logdet_from_cholesky
from ..utils.validation import validate_data

__all__ = ["FactorAnalysis"]

_LOG2PI = np.log(2.0 * np.pi)


class FactorAnalysis(ComponentNamesMixin, TransformerMixin, BaseEstimator):
    """Factor analysis: ``x = W z + mu + e`` with ``z ~ N(0, I)`` and diagonal noise.

    Parameters
    ----------
    n_components : int or None, default=None
        Number of factors ``k``; ``None``: ``n_features``.
    max_iter : int, default=1000
        EM iterations.
    tol : float, default=1e-6
        Stop when the mean log-likelihood (per sample) improves by less than ``tol``.
    noise_variance_init : array-like of shape (n_features,) or None, default=None
        Initial ``Psi``; ``None``: the sample variances.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The loadings ``W^T`` (identifiable only up to a rotation; compare ``W W^T``).
    noise_variance_ : ndarray of shape (n_features,)
        The diagonal of ``Psi``.
    mean_ : ndarray of shape (n_features,)
    loglike_ : list of float
        Total log-likelihood after each EM iteration (non-decreasing).
    n_iter_ : int
    n_features_in_ : int

    Notes
    -----
    Spec 004 §6.1 (slide 6:34): ``P(x | z) = N(W z + mu, Psi)`` with ``Psi`` diagonal; the
    notes give no fitting algorithm, so this is the EM of Bishop (2006) §12.2.4,
    eqs. 12.66-12.70, written with the sample covariance ``S``: with
    ``G = (I + W^T Psi^{-1} W)^{-1}`` and ``B = G W^T Psi^{-1}`` (so ``E[z_n] = B x_n``),
    ``W_new = S B^T (G + B S B^T)^{-1}`` and ``Psi_new = diag(S - W_new B S)``.
    Each iteration costs ``O(D^2 k)``. The log-likelihood uses the matrix determinant lemma,
    ``ln|C| = ln|Psi| + ln|I + W^T Psi^{-1} W|``, and Woodbury for ``C^{-1}``. ``Psi`` is
    kept above ``1e-12`` so that a constant feature cannot make ``C`` singular.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.decomposition import FactorAnalysis
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 1)) @ [[1.0, 2.0, -1.0]] + 0.1 * rng.normal(size=(200, 3))
    >>> fa = FactorAnalysis(n_components=1).fit(X)
    >>> fa.components_.shape
    (1, 3)
    """

    _common_test_params: ClassVar[dict] = {"tol": 1e-3}

    def __init__(
        self,
        n_components: int | None = None,
        *,
        max_iter: int = 1000,
        tol: float = 1e-6,
        noise_variance_init=None,
    ):
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.noise_variance_init = noise_variance_init

    def fit(self, X, y=None):
        """Fit ``(W, Psi, mu)`` by EM to ``X`` of shape (n_samples, n_features)."""
        X = validate_data(self, X, dtype=np.float64)
        n, d = X.shape
        if n < 2:
            raise ValueError(f"FactorAnalysis needs at least 2 samples; got n_samples = {n}.")
        k = d if self.n_components is None else self.n_components
        if not isinstance(k, numbers.Integral) or isinstance(k, bool) or not 1 <= k <= d:
            raise ValueError(f"n_components={k!r} must be an int in [1, n_features={d}].")
        self.mean_ = X.mean(axis=0)
        Xc = X - self.mean_
        S = Xc.T @ Xc / n
        var = np.diag(S).copy()
        small = 1e-12
        if self.noise_variance_init is None:
            psi = np.maximum(var, small)
        else:
            psi = np.asarray(self.noise_variance_init, dtype=float)
            if psi.shape != (d,) or np.any(~np.isfinite(psi)) or np.any(psi <= 0):
                raise ValueError(f"noise_variance_init must be {d} positive finite numbers.")
        # Start W from the scaled principal axes of S (a PPCA-like initialisation).
        w, U = sla.eigh(S, subset_by_index=[d - k, d - 1], check_finite=False, driver="evx")
        W = U[:, ::-1] * np.sqrt(np.clip(w[::-1], 0.0, None) * 0.5)
        eye = np.eye(k)
        self.loglike_ = []
        converged = False
        for it in range(1, self.max_iter + 1):
            Wp = W / psi[:, None]  # Psi^{-1} W
            L = cholesky(eye + W.T @ Wp, jitter=None, name="I + W^T Psi^-1 W")
            G = cho_solve(L, eye)
            B = G @ Wp.T  # (k, D)
            SB = S @ B.T  # (D, k)
            W = sla.solve(G + B @ SB, SB.T, assume_a="pos", check_finite=False).T
            psi = np.maximum(var - np.einsum("ij,ij->i", W, SB), small)
            ll = n * self._mean_loglik(S, W, psi)
            self.loglike_.append(ll)
            if it > 1 and abs(ll - self.loglike_[-2]) < self.tol * n:
                converged = True
                break
        self.components_ = W.T
        self.noise_variance_ = psi
        self.n_iter_ = it
        if not converged:
            warnings.warn(
                f"FactorAnalysis EM did not converge in max_iter={self.max_iter} iterations.",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    @staticmethod
    def _mean_loglik(S, W, psi):
        """Mean log-likelihood ``-0.5 (D ln 2 pi + ln|C| + tr(C^{-1} S))``."""
        d, k = W.shape
        Wp = W / psi[:, None]
        L = cholesky(np.eye(k) + W.T @ Wp, jitter=None, name="I + W^T Psi^-1 W")
        logdet = float(np.sum(np.log(psi))) + logdet_from_cholesky(L)
        # tr(C^{-1} S) = tr(Psi^{-1} S) - tr(G Wp^T S Wp) by Woodbury.
        T = sla.solve_triangular(L, Wp.T @ S @ Wp, lower=True, check_finite=False)
        T = sla.solve_triangular(L, T.T, lower=True, check_finite=False)
        tr = float(np.sum(np.diag(S) / psi)) - float(np.trace(T))
        return -0.5 * (d * _LOG2PI + logdet + tr)

    def _woodbury_parts(self):
        W = self.components_.T
        psi = self.noise_variance_
        Wp = W / psi[:, None]
        L = cholesky(np.eye(W.shape[1]) + W.T @ Wp, jitter=None, name="I + W^T Psi^-1 W")
        return W, psi, Wp, L

    def score_samples(self, X):
        """Log-likelihood of each sample under ``N(mu, W W^T + Psi)``, shape (n_samples,)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        W, psi, Wp, L = self._woodbury_parts()
        Xc = X - self.mean_
        proj = sla.solve_triangular(L, Wp.T @ Xc.T, lower=True, check_finite=False)
        quad = np.einsum("ij,ij->i", Xc / psi, Xc) - np.einsum("ij,ij->j", proj, proj)
        logdet = float(np.sum(np.log(psi))) + logdet_from_cholesky(L)
        return -0.5 * (W.shape[0] * _LOG2PI + logdet + quad)

    def score(self, X, y=None) -> float:
        """Mean log-likelihood of ``X`` (scikit-learn's ``FactorAnalysis.score``)."""
        return float(np.mean(self.score_samples(X)))

    def get_covariance(self) -> np.ndarray:
        """Model covariance ``W W^T + Psi``, shape (n_features, n_features)."""
        check_is_fitted(self)
        W = self.components_.T
        return W @ W.T + np.diag(self.noise_variance_)

    def transform(self, X):
        """Posterior means of the factors, ``E[z | x] = G W^T Psi^{-1} (x - mu)``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        _, _, Wp, L = self._woodbury_parts()
        return cho_solve(L, Wp.T @ (X - self.mean_).T).T
