"""FastICA: independent component analysis by fixed-point iteration on negentropy."""

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
from ..utils._param_validation import Interval, Options, StrOptions
from ..utils.validation import check_random_state, validate_data
from ._base import centred_spectrum

__all__ = ["FastICA"]


def _logcosh(x, alpha=1.0):
    gx = np.tanh(alpha * x, out=x)  # in place: x is a temporary
    g_x = alpha * (1.0 - np.mean(gx**2, axis=1))
    return gx, g_x


def _exp(x):
    e = np.exp(-0.5 * x**2)
    return x * e, np.mean((1.0 - x**2) * e, axis=1)


def _cube(x):
    return x**3, np.mean(3.0 * x**2, axis=1)


_FUNS = {"logcosh": _logcosh, "exp": _exp, "cube": _cube}


def _sym_decorrelation(W):
    """``W <- (W W^T)^{-1/2} W`` through the eigendecomposition of ``W W^T``."""
    s, u = sla.eigh(W @ W.T, check_finite=False)
    s = np.clip(s, np.finfo(W.dtype).tiny, None)
    return (u * (1.0 / np.sqrt(s))) @ u.T @ W


class FastICA(ComponentNamesMixin, TransformerMixin, BaseEstimator):
    """FastICA (Hyvaerinen & Oja, 2000): independent non-Gaussian sources from linear mixtures.

    Parameters
    ----------
    n_components : int or None, default=None
        Number of sources; ``None``: ``n_features``.
    algorithm : {"parallel", "deflation"}, default="parallel"
        Estimate all unmixing rows at once with symmetric decorrelation, or one at a time
        with Gram-Schmidt deflation.
    whiten : {"unit-variance", False}, default="unit-variance"
        Whiten by PCA first and scale the sources to unit variance; ``False``: the data are
        assumed white already.
    fun : {"logcosh", "exp", "cube"}, default="logcosh"
        The contrast ``G`` whose derivative ``g`` enters the fixed point (``tanh``,
        ``x exp(-x^2/2)``, ``x^3``).
    max_iter : int, default=200
    tol : float, default=1e-4
        Stop when ``max |1 - |diag(W_new W^T)|| < tol``.
    w_init : ndarray of shape (n_components, n_components) or None, default=None
        Initial unmixing matrix (whitened space); ``None``: standard normal.
    random_state : int, Generator, RandomState or None, default=None

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Unmixing matrix: ``sources = (X - mean_) @ components_.T``.
    mixing_ : ndarray of shape (n_features, n_components)
        Pseudo-inverse of ``components_``: ``X ~ sources @ mixing_.T + mean_``.
    whitening_ : ndarray of shape (n_components, n_features)
        The PCA whitening matrix (when ``whiten`` is set).
    mean_ : ndarray of shape (n_features,)
    n_iter_ : int
    n_features_in_ : int

    See Also
    --------
    mathlearn.decomposition.PCA
        Uncorrelated rather than independent components.
    sklearn.decomposition.FastICA
        scikit-learn's equivalent.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" §6.1 (slide 6:13): ``x = W z + mu + e`` with
    independent non-Gaussian ``z``; the notes name no algorithm, so this is FastICA. After
    whitening ``x~ = K (x - mu)`` with ``K = Lambda_k^{-1/2} U_k^T`` (PCA whitening, Imperial
    "Mathematics for Inference and Machine Learning" §2.1.4.3, eq. 2.58), each row ``w`` of the
    unmixing matrix is updated by the fixed point ``w <- E[x~ g(w^T x~)] - E[g'(w^T x~)] w``
    followed by decorrelation (symmetric, ``W <- (W W^T)^{-1/2} W``, or deflation). Sources are
    identified up to order, sign and scale.

    Complexity: the whitening costs ``O(N D min(N, D))`` time: the eigendecomposition of the
    ``D x D`` covariance when ``N >= D``, of the ``N x N`` Gram matrix ``X_c X_c^T`` when
    ``N < D`` (its top eigenvectors give the whitened data directly), and the SVD of ``X_c``
    where the kept eigenvalues fall below ``1e-4`` of the largest and the squared route would
    not resolve them. Each fixed-point iteration costs ``O(N k^2)``. Memory: the centred copy
    of ``X`` (``N D``) and ``O(min(N, D)^2)`` besides.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.decomposition import FastICA
    >>> rng = np.random.default_rng(0)
    >>> S = np.c_[np.sign(np.sin(np.linspace(0, 40, 500))), rng.laplace(size=500)]
    >>> X = S @ [[1.0, 0.5], [0.5, 2.0]]
    >>> FastICA(random_state=0).fit(X).components_.shape
    (2, 2)
    """

    _common_test_params: ClassVar[dict] = {"max_iter": 1000, "tol": 1e-2}

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "algorithm": [StrOptions({"parallel", "deflation"})],
        "whiten": [StrOptions({"unit-variance"}), Options(bool, {False})],
        "fun": [StrOptions(set(_FUNS))],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "w_init": ["array-like", None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components: int | None = None,
        *,
        algorithm: str = "parallel",
        whiten: str | bool = "unit-variance",
        fun: str = "logcosh",
        max_iter: int = 200,
        tol: float = 1e-4,
        w_init=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.algorithm = algorithm
        self.whiten = whiten
        self.fun = fun
        self.max_iter = max_iter
        self.tol = tol
        self.w_init = w_init
        self.random_state = random_state

    def _fit(self, X):
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        n, d = X.shape
        if n < 2:
            raise ValueError(f"FastICA needs at least 2 samples; got n_samples = {n}.")
        k = d if self.n_components is None else int(self.n_components)
        if k > min(n, d):
            raise ValueError(
                f"n_components={k!r} must be an int in [1, min(n_samples, n_features)="
                f"{min(n, d)}]."
            )
        g = _FUNS[self.fun]
        if not self.whiten and k != d:
            raise ValueError(
                f"whiten=False treats X as already white, so n_components must equal "
                f"n_features={d}; got {k}."
            )
        if self.whiten:
            self.mean_ = X.mean(axis=0)
            Xc = X - self.mean_
            # The sources do not depend on the units of X: data of extreme scale are whitened
            # in units of a power of two near their size (an exact rescaling), so that their
            # second moments neither overflow nor underflow.
            amax = float(np.max(np.abs(Xc)))
            unit = 2.0 ** np.round(np.log2(amax)) if not 1e-100 <= amax <= 1e100 else 1.0
            Xc = Xc / unit
            # PCA whitening (Imperial "Mathematics for Inference and Machine Learning" §2.1.4.3).
            # The covariance's eigendecomposition resolves its eigenvalues only to eps * lambda_max
            # and would call data with one feature in large units collinear; centred_spectrum then
            # takes the singular values of X_c (accurate to eps * s_max) instead.
            lam, Vt = centred_spectrum(Xc, lambda w: w[k - 1] if k <= w.size else 0.0, rows=k)
            sv = np.sqrt(np.clip(lam, 0.0, None) * n)
            if k > sv.size or sv[k - 1] <= sv[0] * max(n, d) * np.finfo(X.dtype).eps:
                raise ValueError(
                    "the data have fewer than n_components non-degenerate directions "
                    "(constant or collinear features); lower n_components."
                )
            K = Vt[:k] * (np.sqrt(n) / sv[:k])[:, None]  # (k, D) = Lambda^{-1/2} U_k^T
            X1 = K @ Xc.T  # (k, N), unit covariance
        else:
            self.mean_ = np.zeros(d, dtype=X.dtype)
            X1 = X.T.copy()
            K = None
            unit = 1.0
        rng = check_random_state(self.random_state)
        if self.w_init is None:
            W0 = rng.standard_normal((k, k))
        else:
            W0 = np.asarray(self.w_init, dtype=float)
            if W0.shape != (k, k):
                raise ValueError(f"w_init must have shape {(k, k)}; got {W0.shape}.")
        W, n_iter, converged = (
            self._parallel(X1, W0, g)
            if self.algorithm == "parallel"
            else self._deflation(X1, W0, g)
        )
        if not converged:
            warnings.warn(
                f"FastICA did not converge in max_iter={self.max_iter} iterations; consider "
                "raising max_iter or tol.",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.n_iter_ = n_iter
        if K is not None:
            comps = W @ K
            S = (comps @ Xc.T).T
            std = S.std(axis=0)
            S /= std
            comps = comps / std[:, None]
            self.whitening_ = K / unit  # back to the units of X
        else:
            comps = W
            S = (W @ X1).T
        self.components_ = comps / unit
        self.mixing_ = sla.pinv(comps, check_finite=False) * unit
        return S

    def _parallel(self, X, W, g):
        n = X.shape[1]
        W = _sym_decorrelation(W)
        for it in range(1, self.max_iter + 1):
            gwtx, g_wtx = g(W @ X)
            W1 = _sym_decorrelation(gwtx @ X.T / n - g_wtx[:, None] * W)
            lim = float(np.max(np.abs(np.abs(np.einsum("ij,ij->i", W1, W)) - 1.0)))
            W = W1
            if lim < self.tol:
                return W, it, True
        return W, self.max_iter, False

    def _deflation(self, X, W0, g):
        n = X.shape[1]
        k = W0.shape[0]
        W = np.zeros_like(W0)
        worst = 0
        converged = True
        for j in range(k):
            w = W0[j].copy()
            w -= W[:j].T @ (W[:j] @ w)
            w /= np.linalg.norm(w)
            ok = False
            used = 0
            for used in range(1, self.max_iter + 1):  # noqa: B007 - used after the loop
                gwtx, g_wtx = g((w @ X)[None, :])
                w1 = (X @ gwtx[0]) / n - g_wtx[0] * w
                w1 -= W[:j].T @ (W[:j] @ w1)
                w1 /= np.linalg.norm(w1)
                lim = abs(abs(w1 @ w) - 1.0)
                w = w1
                if lim < self.tol:
                    ok = True
                    break
            worst = max(worst, used)
            converged &= ok
            W[j] = w
        return W, worst, converged

    @_fit_context
    def fit(self, X, y=None):
        """Estimate the unmixing matrix from ``X`` of shape (n_samples, n_features)."""
        self._fit(X)
        return self

    @_fit_context
    def fit_transform(self, X, y=None):
        """Fit and return the estimated sources, shape (n_samples, n_components)."""
        return self._fit(X)

    def transform(self, X):
        """Sources ``(X - mean_) @ components_.T``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        return (X - self.mean_) @ self.components_.T

    def inverse_transform(self, X):
        """Mix sources back: ``X @ mixing_.T + mean_``."""
        check_is_fitted(self)
        S = np.asarray(X, dtype=float)
        if S.ndim != 2 or S.shape[1] != self.components_.shape[0]:
            raise ValueError(
                f"expected shape (n_samples, {self.components_.shape[0]}); got {S.shape}."
            )
        return S @ self.mixing_.T + self.mean_
