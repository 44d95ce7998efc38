"""Factor analysis fitted by expectation-maximisation."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.linalg as sla

from ..base import (
    BaseEstimator,
    ComponentNamesMixin,
    TransformerMixin,
    _fit_context,
    check_is_fitted,
)
from ..exceptions import ConvergenceWarning
from ..mixture import em
from ..utils._param_validation import Interval
from ..utils._rowscale import centred_linear_map
from ..utils.linalg import cho_solve, solve_psd
from ..utils.validation import validate_data
from ._base import EMSteps
from ._lowrank import LowRankPlusDiagonal

__all__ = ["FactorAnalysis"]

# Floor of Psi, relative to min(1, largest sample variance): a constant feature must not
# make C singular, and data in small units must not meet an absolute floor.
_PSI_FLOOR = 1e-12


class FactorAnalysis(ComponentNamesMixin, TransformerMixin, BaseEstimator):
    """Factor analysis: ``x = W z + mu + e`` with ``z ~ N(0, I)`` and diagonal noise.

    Parameters
    ----------
    n_components : int or None, default=None
        Number of factors ``k``; ``None``: ``n_features``.
    max_iter : int, default=1000
        EM iterations, at least 1.
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
    lower_bound_ : float
        Mean log-likelihood of the training data at the fitted parameters (EM's bound is
        tight: the E-step is exact).
    lower_bounds_ : ndarray of shape (n_iter_,)
        Mean log-likelihood at the start of each EM iteration (``lower_bounds_[0]`` at the
        initial parameters); non-decreasing, and at most ``lower_bound_``.
    converged_ : bool
        Whether the change of the mean log-likelihood fell below ``tol``.
    loglike_ : list of float
        Total log-likelihood after each EM iteration: ``N`` times ``lower_bounds_[1:]``
        followed by ``lower_bound_`` (non-decreasing).
    n_iter_ : int
    n_features_in_ : int

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" §6.1 (slide 6:34): ``P(x | z) =
    N(W z + mu, Psi)`` with ``Psi`` diagonal; the notes give no fitting algorithm, so this is
    the EM of PRML §12.2.4, eqs. 12.66-12.70, written with the sample covariance ``S``: with
    ``G = (I + W^T Psi^{-1} W)^{-1}`` and ``B = G W^T Psi^{-1}`` (so ``E[z_n] = B x_n``),
    ``W_new = S B^T (G + B S B^T)^{-1}`` and ``Psi_new = diag(S - W_new B S)``. It runs
    through the EM driver :func:`mathlearn.mixture.em` with ``S`` as the data, so each
    iteration costs ``O(D^2 k)`` whatever ``N``. The log-likelihood uses the matrix
    determinant lemma, ``ln|C| = ln|Psi| + ln|I + W^T Psi^{-1} W|``, and the Woodbury form of
    ``C^{-1}`` (the low-rank-plus-diagonal Gaussian shared with probabilistic PCA). ``Psi``
    is kept above ``1e-12 min(1, max_j S_jj)`` so that a constant feature cannot make ``C``
    singular (a floor relative to the data for data in small units).

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

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "noise_variance_init": ["array-like", None],
    }

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

    @_fit_context
    def fit(self, X, y=None):
        """Fit ``(W, Psi, mu)`` by EM to ``X`` of shape (n_samples, n_features)."""
        X = validate_data(self, X, dtype=np.float64)
        n, d = X.shape
        if n < 2:
            raise ValueError(f"FactorAnalysis needs at least 2 samples; got n_samples = {n}.")
        k = d if self.n_components is None else int(self.n_components)
        if k > d:
            raise ValueError(f"n_components={k} must be at most n_features={d}.")
        self.mean_ = X.mean(axis=0)
        Xc = X - self.mean_
        with np.errstate(over="ignore", invalid="ignore"):  # checked just below
            S = Xc.T @ Xc / n
        if not np.all(np.isfinite(S)):
            raise ValueError(
                "the sample covariance of X overflows float64 (entries of X up to "
                f"{float(np.max(np.abs(Xc))):.3g} from their mean); rescale X."
            )
        self._var = np.diag(S).copy()
        vmax = float(np.max(self._var))
        if not vmax >= np.finfo(float).tiny:
            raise ValueError(
                "every feature of X is constant (or its variance is below the normal float64 "
                f"range, largest {vmax:.3g}): the factor model is degenerate; rescale X."
            )
        self._floor = _PSI_FLOOR * min(1.0, vmax)
        if self.noise_variance_init is None:
            psi = np.maximum(self._var, self._floor)
        else:
            psi = np.asarray(self.noise_variance_init, dtype=float)
            if psi.shape != (d,) or np.any(~np.isfinite(psi)) or np.any(psi <= 0):
                raise ValueError(f"noise_variance_init must be {d} positive finite numbers.")
        # Start W from the scaled principal axes of S (a PPCA-like initialisation).
        w, U = sla.eigh(S, subset_by_index=[d - k, d - 1], check_finite=False, driver="evx")
        self.components_ = (U[:, ::-1] * np.sqrt(np.clip(w[::-1], 0.0, None) * 0.5)).T
        self.noise_variance_ = psi
        result = em(EMSteps(self), S, max_iter=self.max_iter, tol=self.tol)
        del self._var, self._floor
        self.lower_bounds_ = result.lower_bounds
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        self.lower_bound_ = self._model().mean_logpdf_from_scatter(S)
        self.loglike_ = [n * b for b in self.lower_bounds_[1:]] + [n * self.lower_bound_]
        if not self.converged_:
            warnings.warn(
                f"FactorAnalysis EM did not converge in max_iter={self.max_iter} iterations.",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def _model(self) -> LowRankPlusDiagonal:
        return LowRankPlusDiagonal(self.components_.T, self.noise_variance_)

    def _e_step(self, S):
        """EM driver hook: the mean log-likelihood and the gain ``B`` at the current fit."""
        model = self._model()
        B = model.gain()
        return model.mean_logpdf_from_scatter(S, B), (B, model.L)

    def _m_step(self, S, posterior):
        """EM driver hook: eqs. 12.69-12.70 with the statistics of the E-step."""
        B, L = posterior
        G = cho_solve(L, np.eye(L.shape[0]))  # posterior covariance of z
        SB = S @ B.T  # (D, k)
        W = solve_psd(G + B @ SB, SB.T, jitter=None, name="E[z z^T]").T
        self.components_ = W.T
        self.noise_variance_ = np.maximum(self._var - np.einsum("ij,ij->i", W, SB), self._floor)

    def score_samples(self, X):
        """Log-likelihood of each sample under ``N(mu, W W^T + Psi)``, shape (n_samples,)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._model().logpdf(X, self.mean_)

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
        model = self._model()
        return centred_linear_map(X, self.mean_, model.latent_mean, what="E[z | x]")
