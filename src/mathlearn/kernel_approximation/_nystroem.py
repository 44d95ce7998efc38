"""Nyström features ``phi(x) = K_zz^{-1/2} k_z(x)`` from a random subset of landmarks."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from ..base import (
    BaseEstimator,
    ComponentNamesMixin,
    TransformerMixin,
    _fit_context,
    check_is_fitted,
)
from ..kernels import KERNEL_NAMES, Kernel
from ..kernels._get_kernel import build_kernel
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import check_random_state, validate_data

__all__ = ["Nystroem"]


# Entries of k(X, landmarks) evaluated at a time in transform: 512 KiB, which stays in a
# core's L2 cache from the kernel to the product. Against 8 MiB blocks, with 100 landmarks
# and 10 features on a 2-core AMD EPYC: 10.1 against 14.9 ms at N = 1e4 (one thread), 7.8
# against 15.8 ms (two), the same at 1e3 and 1e5; smaller blocks pay the per-call overhead
# (1.8 ms against 1.1 at N = 1e3 with 128 KiB).
_BLOCK = 1 << 16


class Nystroem(ComponentNamesMixin, TransformerMixin, BaseEstimator):
    r"""Nyström approximation of a kernel feature map from ``m`` landmark points.

    ``transform`` maps ``x`` to ``phi(x) = K_zz^{-1/2} k_z(x)``, where ``k_z(x) = [k(z_1, x),
    ..., k(z_m, x)]``, so that ``phi(x)^T phi(y) = k_z(x)^T K_zz^{-1} k_z(y)`` approximates
    ``k(x, y)`` and linear methods on ``phi`` approximate kernel methods at ``O(N m^2)`` cost.

    Parameters
    ----------
    kernel : str or Kernel, default="rbf"
        A name of :data:`mathlearn.kernels.KERNEL_NAMES` or a kernel object of
        :mod:`mathlearn.kernels` (copied, never mutated).
    gamma : float or None, default=None
        ``"rbf"``: ``exp(-gamma ||x - y||^2)``; ``"poly"``/``"sigmoid"``: scale of ``x^T y``.
        ``None``: ``1 / n_features`` for these three (scikit-learn's rule).
    coef0 : float, default=1
        Offset of the ``"poly"`` and ``"sigmoid"`` kernels.
    degree : float, default=3
        Degree of the ``"poly"`` kernel.
    kernel_params : dict or None, default=None
        Further hyperparameters of the kernel (e.g. ``{"nu": 2.5}`` for ``"matern"``).
    n_components : int, default=100
        Number of landmarks ``m`` (rows of ``X`` drawn without replacement) and of features.
        At most ``n_samples``.
    random_state : int, Generator, RandomState or None, default=None
        Draws the landmarks.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        The landmarks ``z_j``.
    component_indices_ : ndarray of shape (n_components,)
        Their rows in the training ``X``.
    normalization_ : ndarray of shape (n_components, n_components)
        The symmetric (pseudo-)inverse square root ``K_zz^{+1/2}``; features are
        ``k(X, Z) @ normalization_``.
    eigenvalues_ : ndarray of shape (n_components,)
        Eigenvalues of ``K_zz``, decreasing.
    rank_ : int
        Eigenvalues of ``K_zz`` kept (above ``m eps lambda_max``); the others are treated as
        zero, which gives the pseudo-inverse (landmarks that coincide, a low-rank kernel).
    kernel_ : Kernel
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when ``X`` has string feature names.

    See Also
    --------
    RandomFourierFeatures : Data-independent random features of the RBF kernel.
    mathlearn.kernel_ridge.KernelRidge : The exact kernel method.
    sklearn.kernel_approximation.Nystroem : The peer.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning", §9.6.1: with landmarks
    ``z_1..z_m``, ``K ~= K_xz K_zz^{-1} K_zx = Q Q^T`` with ``Q = K_xz K_zz^{-1/2}``. The
    feature map is therefore

    .. math:: \phi(x) = K_{zz}^{-1/2}\,[k(z_1, x), \dots, k(z_m, x)]^\top;

    the notes print ``K_zz^{-1}`` there, which would give ``k_xz K_zz^{-2} k_zx`` (corrected
    here). ``K_zz^{-1/2}`` comes from the eigendecomposition ``K_zz = U Lambda
    U^T`` as ``U Lambda^{-1/2} U^T``; eigenvalues below ``m eps lambda_max`` (rounding level)
    are set to zero in ``Lambda^{-1/2}`` rather than inverted, the pseudo-inverse square
    root, which keeps the features finite when landmarks (nearly) coincide. With every
    training point as a landmark and ``K`` positive definite, ``Phi Phi^T = K K^{-1} K = K``.
    A clearly negative eigenvalue (a kernel that is not positive semi-definite) is an error.
    Cost: ``fit`` ``O(m^2 D + m^3)``; ``transform`` ``O(N m D + N m^2)`` time and ``O(N m)``
    memory (the features; the kernel matrix is evaluated in blocks of rows).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernel_approximation import Nystroem
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    >>> ny = Nystroem(kernel="rbf", gamma=0.5, n_components=3, random_state=0).fit(X)
    >>> Phi = ny.transform(X)
    >>> np.round(Phi @ Phi.T, 6)  # all points are landmarks: the RBF Gram matrix itself
    array([[1.      , 0.606531, 0.135335],
           [0.606531, 1.      , 0.082085],
           [0.135335, 0.082085, 1.      ]])
    """

    _parameter_constraints: ClassVar[dict] = {
        "kernel": [StrOptions(set(KERNEL_NAMES)), Kernel],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "degree": [Interval(Real, 0, None, closed="left")],
        "kernel_params": [dict, None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }
    _common_test_params: ClassVar[dict] = {"n_components": 5}

    def __init__(
        self,
        kernel: str | Kernel = "rbf",
        *,
        gamma: float | None = None,
        coef0: float = 1,
        degree: float = 3,
        kernel_params: dict | None = None,
        n_components: int = 100,
        random_state=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.coef0 = coef0
        self.degree = degree
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.random_state = random_state

    @_fit_context
    def fit(self, X, y=None):
        """Draw the landmarks and factorise ``K_zz``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : Nystroem

        Raises
        ------
        ValueError
            NaN/inf in ``X``; ``n_components > n_samples``; a kernel matrix on the landmarks
            that is not positive semi-definite or not finite.
        """
        X = validate_data(self, X, dtype=np.float64)
        n, m = X.shape[0], self.n_components
        if m > n:
            raise ValueError(
                f"n_components = {m} landmarks cannot be drawn from n_samples = {n}; "
                "n_components must be <= n_samples."
            )
        self.kernel_ = build_kernel(
            self.kernel, self.gamma, self.degree, self.coef0, self.kernel_params, X.shape[1]
        )
        rng = check_random_state(self.random_state)
        idx = rng.permutation(n)[:m]
        Z = X[idx]
        with np.errstate(over="ignore", invalid="ignore"):
            Kzz = self.kernel_(Z)
        if not np.all(np.isfinite(Kzz)):
            raise ValueError("the kernel matrix on the landmarks is not finite (overflow).")
        # NumPy's eigh (LAPACK's divide and conquer, dsyevd), not SciPy's: the kernel before
        # and the products after run on NumPy's BLAS, and a switch to SciPy's OpenBLAS and
        # back can stall a few ms on a machine with as many cores as threads (each library
        # keeps its own spinning thread pool). It was also measured 10% faster than dsyevr.
        w, U = np.linalg.eigh(Kzz)
        w, U = w[::-1], U[:, ::-1]
        tol = m * np.finfo(float).eps * max(float(np.max(np.abs(w))), np.finfo(float).tiny)
        if w[-1] < -1e3 * tol:
            raise ValueError(
                f"the kernel matrix on the landmarks has a negative eigenvalue ({w[-1]:.3g}): "
                "the kernel is not positive semi-definite, so it has no feature map."
            )
        keep = w > tol
        Uk = U[:, keep]
        self.normalization_ = (Uk / np.sqrt(w[keep])) @ Uk.T
        self.eigenvalues_ = w
        self.rank_ = int(keep.sum())
        self.components_ = Z
        self.component_indices_ = idx
        return self

    def transform(self, X):
        """The features ``k(X, Z) K_zz^{+1/2}``, shape (n_samples, n_components)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        m = self.components_.shape[0]
        out = np.empty((X.shape[0], m))
        # In blocks of rows whose kernel matrix (_BLOCK entries) stays in cache from its
        # evaluation to its product with the normalisation; no (N, m) kernel matrix is kept.
        # Blocks of equal size, at most _BLOCK entries, each let go before the next is
        # evaluated (rebinding it would hold two at once).
        n = X.shape[0]
        blocks = -(-n // max(1, _BLOCK // m)) if n else 0
        step = -(-n // blocks) if blocks else 1
        for start in range(0, n, step):
            with np.errstate(over="ignore", invalid="ignore"):
                Kxz = self.kernel_(X[start : start + step], self.components_)
            if not np.isfinite(Kxz).all():
                raise ValueError("the kernel matrix k(X, landmarks) is not finite (overflow).")
            np.matmul(Kxz, self.normalization_, out=out[start : start + step])
            del Kxz
        return out
