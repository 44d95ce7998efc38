"""Kernel PCA: PCA in the feature space of a kernel, through the centred Gram matrix."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from scipy.sparse.linalg import eigsh

from ..base import (
    BaseEstimator,
    ComponentNamesMixin,
    TransformerMixin,
    _fit_context,
    check_is_fitted,
)
from ..kernels import Kernel, get_kernel
from ..utils._param_validation import Interval, StrOptions
from ..utils._rowscale import InUnits, unit_of
from ..utils.linalg import solve_psd, symmetric_operator
from ..utils.validation import all_finite, check_random_state, check_symmetric, validate_data
from ._base import flip_rows, top_eigh

__all__ = ["KernelPCA"]

_KERNELS = ("linear", "rbf", "poly", "sigmoid", "precomputed")


def _center_fit(K: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``K~ = (I - E) K (I - E)`` in place, ``E = 11^T / N``.

    Imperial "Mathematics for Inference and Machine Learning" §2.2.1; PRML §12.3.
    """
    col_means = K.mean(axis=0)
    grand = float(col_means.mean())
    K -= col_means[None, :]
    K -= col_means[:, None]
    K += grand
    return K, col_means, grand


class KernelPCA(ComponentNamesMixin, TransformerMixin, BaseEstimator):
    """Kernel principal component analysis.

    Parameters
    ----------
    n_components : int or None, default=None
        Number of components; ``None`` keeps all with a positive eigenvalue.
    kernel : {"linear", "rbf", "poly", "sigmoid", "precomputed"} or Kernel, default="linear"
        A kernel name (with ``gamma``, ``degree``, ``coef0`` below, as in scikit-learn), a
        kernel object of :mod:`mathlearn.kernels` (cloned, never mutated), or
        ``"precomputed"`` (``X`` is then the Gram matrix).
    gamma : float or None, default=None
        ``rbf``: ``exp(-gamma ||x - y||^2)``; ``poly``/``sigmoid``: scale of ``x^T y``.
        ``None``: ``1 / n_features``.
    degree : int, default=3
        Degree of the ``poly`` kernel.
    coef0 : float, default=1.0
        Offset of the ``poly`` and ``sigmoid`` kernels.
    alpha : float, default=1.0
        Ridge penalty of the kernel ridge regression that learns the pre-image map.
    fit_inverse_transform : bool, default=False
        Learn ``inverse_transform`` (an approximate pre-image).
    eigen_solver : {"auto", "dense", "arpack"}, default="auto"
        ``"dense"``: LAPACK ``syevx``/``syevd`` on the wanted eigenpairs; ``"arpack"``: Lanczos
        (``scipy.sparse.linalg.eigsh``), fast for few components of a large Gram matrix;
        ``"auto"``: ``"arpack"`` when ``n_components < 10`` and ``N > 200``.
    tol : float, default=0
        ARPACK tolerance (0: machine precision).
    max_iter : int or None, default=None
        ARPACK iterations.
    remove_zero_eig : bool, default=False
        Drop components whose eigenvalue is not positive (always done when
        ``n_components=None``).
    random_state : int, Generator, RandomState or None, default=None
        Start vector of ARPACK.

    Attributes
    ----------
    eigenvalues_ : ndarray of shape (n_components_,)
        Eigenvalues ``mu_i`` of the centred Gram matrix, decreasing. The feature-space
        covariance eigenvalues are ``mu_i / N`` (PRML §12.3).
    eigenvectors_ : ndarray of shape (n_samples, n_components_)
        Unit eigenvectors ``e_i`` of the centred Gram matrix.
    dual_coef_ : ndarray of shape (n_samples, n_components_)
        The expansion coefficients ``a_i = e_i / sqrt(mu_i)`` (so ``a_i^T K~ a_i = 1``, the
        unit-norm condition of PRML §12.3 and Oxford
        "Advanced Topics in Statistical Machine Learning" §3.6); ``transform(x) = k~(x)^T a``.
    X_fit_ : ndarray of shape (n_samples, n_features)
    X_transformed_fit_ : ndarray of shape (n_samples, n_components_)
        Training projections ``sqrt(mu_i) e_i``.
    kernel_ : Kernel or None
        The kernel used (``None`` for precomputed).
    dual_coef_inverse_ : ndarray of shape (n_samples, n_features)
        With ``fit_inverse_transform``: weights of the pre-image map.
    n_components_ : int
    n_features_in_ : int

    See Also
    --------
    mathlearn.decomposition.PCA
        Linear principal components.
    mathlearn.kernels
        The kernels it accepts.
    sklearn.decomposition.KernelPCA
        scikit-learn's equivalent.

    Notes
    -----
    Imperial "Mathematics for Inference and Machine Learning" §2.2.1; PRML §12.3; Oxford
    "Advanced Topics in Statistical Machine Learning" §3.6; Stuttgart
    "Introduction to Machine Learning" §6.1 (slides 6:17–6:21). With ``E = 11^T/N`` the centred
    Gram matrix ``K~ = (I - E) K (I - E)`` is eigendecomposed, ``K~ = V Lambda V^T``; a new point
    ``x`` with ``g(x) = [k(x_1, x), ..., k(x_N, x)]`` projects to ``y = Lambda^{-1/2} V^T (I -
    E)(g(x) - K 1 / N)`` (Imperial "Mathematics for Inference and Machine Learning" §2.2.1), i.e.
    ``g`` is centred with the training column means and grand mean. Training projections are ``V
    Lambda^{1/2}``. With the linear kernel the projections equal PCA's (PRML §12.3).

    Complexity: the Gram matrix costs ``O(N^2 D)`` time and ``N x N`` memory; the dense
    eigensolver ``O(N^3)``, Lanczos (``"arpack"``) ``O(N^2 k)`` per restart for ``k``
    components; ``transform`` of ``M`` points ``O(M N (D + k))``.

    The pre-image (``inverse_transform``) is learned as in Bakir, Weston & Schoelkopf (2004):
    kernel ridge regression from the projections back to ``X``, with the same kernel on the
    projections, ``X^ = k(Z, Z_fit) (k(Z_fit, Z_fit) + alpha I)^{-1} X_fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.decomposition import KernelPCA
    >>> X = np.array([[0., 0.], [1., 0.], [0., 1.], [1., 1.], [3., 3.]])
    >>> kpca = KernelPCA(n_components=2, kernel="rbf", gamma=0.5).fit(X)
    >>> np.round(kpca.eigenvalues_, 6)
    array([1.307847, 0.632121])
    """

    _n_features_out_attr = "X_transformed_fit_"
    _n_features_out_axis = 1
    # The linear kernel is fitted in units of a power of two for data of extreme magnitude
    # (1.0 otherwise): its Gram matrix scales with the square of the data, its eigenvectors
    # not at all. The eigenvalues are read in the data's units (InUnits).
    _unit = 1.0
    eigenvalues_ = InUnits(2)

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        # Any string here: the kernel builder names the allowed ones in its own message.
        "kernel": [str, Kernel],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "degree": [Interval(Integral, 0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_inverse_transform": ["boolean"],
        "eigen_solver": [StrOptions({"auto", "dense", "arpack"})],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "remove_zero_eig": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components: int | None = None,
        *,
        kernel: str | Kernel = "linear",
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        alpha: float = 1.0,
        fit_inverse_transform: bool = False,
        eigen_solver: str = "auto",
        tol: float = 0.0,
        max_iter: int | None = None,
        remove_zero_eig: bool = False,
        random_state=None,
    ):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.alpha = alpha
        self.fit_inverse_transform = fit_inverse_transform
        self.eigen_solver = eigen_solver
        self.tol = tol
        self.max_iter = max_iter
        self.remove_zero_eig = remove_zero_eig
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def _make_kernel(self, n_features):
        if isinstance(self.kernel, Kernel):
            return get_kernel(self.kernel)
        if self.kernel not in _KERNELS:
            raise ValueError(
                f"kernel must be one of {_KERNELS} or a mathlearn.kernels.Kernel; "
                f"got {self.kernel!r}."
            )
        gamma = 1.0 / n_features if self.gamma is None else float(self.gamma)
        if self.kernel == "linear":
            return get_kernel("linear")
        if self.kernel == "rbf":
            return get_kernel("rbf", gamma=gamma)
        if self.kernel == "poly":
            return get_kernel("poly", degree=self.degree, gamma=gamma, coef0=self.coef0)
        if self.kernel == "sigmoid":
            return get_kernel("sigmoid", gamma=gamma, coef0=self.coef0)
        return None

    def _gram(self, X, Y=None):
        if self.kernel_ is None:
            K = np.array(X, dtype=float)
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                K = self.kernel_(X, Y)
        if not all_finite(K):
            raise ValueError(
                f"the kernel matrix of X under {self.kernel_ or self.kernel!r} is not finite "
                f"(entries of X up to {np.max(np.abs(X)):.3g} overflow it); rescale X or "
                "adjust the kernel's parameters."
            )
        return K

    @_fit_context
    def fit(self, X, y=None):
        """Fit kernel PCA on ``X`` (or on the Gram matrix if ``kernel="precomputed"``)."""
        X = validate_data(self, X, dtype=np.float64)
        n = X.shape[0]
        if n < 2:
            raise ValueError(f"KernelPCA needs at least 2 samples; got n_samples = {n}.")
        self.kernel_ = self._make_kernel(X.shape[1])
        if self.kernel_ is None and X.shape[0] != X.shape[1]:
            raise ValueError(f"precomputed kernel must be square; got shape {X.shape}.")
        if self.kernel_ is None:
            # both eigen routes read only the lower triangle
            check_symmetric(X, "the precomputed kernel matrix")
        linear = isinstance(self.kernel, str) and self.kernel == "linear"
        self._unit = unit = unit_of(X) if linear else 1.0
        if unit != 1.0 and self.fit_inverse_transform:
            raise ValueError(
                f"fit_inverse_transform=True needs data of moderate magnitude; X has entries "
                f"up to {np.max(np.abs(X)):.3g}, whose squares overflow. Rescale X."
            )
        K = self._gram(X / unit if unit != 1.0 else X)
        K, self._col_means, self._grand_mean = _center_fit(K)
        k = self.n_components
        if k is not None and k > n:
            raise ValueError(f"n_components={k!r} must be an int in [1, n_samples={n}].")
        want = n if k is None else int(k)
        solver = self.eigen_solver
        if solver == "auto":
            solver = "arpack" if (want < 10 and n > 200) else "dense"
        if solver == "dense":
            w, V = top_eigh(K, want)
        else:  # "arpack"
            if want >= n:
                raise ValueError("eigen_solver='arpack' needs n_components < n_samples.")
            rng = check_random_state(self.random_state)
            v0 = rng.uniform(-1.0, 1.0, n)
            w, V = eigsh(
                symmetric_operator(K),
                want,
                which="LA",
                tol=self.tol,
                maxiter=self.max_iter,
                v0=v0,
            )
            order = np.argsort(w)[::-1]
            w, V = w[order], V[:, order]
        # Components with non-positive eigenvalue carry no variance and cannot be normalised
        # (division by sqrt(mu)); they are dropped.
        tol = max(w[0], 0.0) * n * np.finfo(float).eps if w.size else 0.0
        if k is None or self.remove_zero_eig:
            keep = w > tol
            w, V = w[keep], V[:, keep]
        if w.size == 0:
            raise ValueError(
                "the centred kernel matrix is zero: all points coincide in feature space."
            )
        signs = flip_rows(V.T)
        V = V * signs
        self.eigenvalues_ = w
        self.eigenvectors_ = V
        with np.errstate(divide="ignore"):
            inv_sqrt = np.where(w > tol, 1.0 / np.sqrt(np.where(w > tol, w, 1.0)), 0.0)
        self.dual_coef_ = V * (inv_sqrt / unit)
        self.X_transformed_fit_ = V * (np.sqrt(np.clip(w, 0.0, None)) * unit)
        self.n_components_ = w.size
        self.X_fit_ = X.copy()  # later changes to the caller's array must not leak in
        if self.fit_inverse_transform:
            if self.kernel_ is None:
                raise ValueError("fit_inverse_transform needs a kernel, not 'precomputed'.")
            Kz = self.kernel_(self.X_transformed_fit_)
            Kz.flat[:: n + 1] += self.alpha
            self.dual_coef_inverse_ = solve_psd(Kz, X, name="k(Z, Z) + alpha I")
        return self

    @_fit_context
    def fit_transform(self, X, y=None):
        """Fit and return the training projections ``V Lambda^{1/2}``."""
        return self.fit(X).X_transformed_fit_

    def transform(self, X):
        """Project new points: ``k~(x)^T a`` with the training centring."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.kernel_ is None:
            Kt = np.array(X, dtype=float)
            if Kt.shape[1] != self.X_fit_.shape[0]:
                raise ValueError("precomputed test kernel must have n_train columns.")
        else:
            unit = self._unit
            if unit != 1.0:
                # The Gram matrix in the fit's units, mapped back through the projection:
                # (Kt / unit^2) (dual_coef_ unit) unit = Kt dual_coef_.
                Kt = self._gram(X / unit, self.X_fit_ / unit)
                Kt -= Kt.mean(axis=1, keepdims=True)
                Kt -= self._col_means[None, :]
                Kt += self._grand_mean
                return (Kt @ (self.dual_coef_ * unit)) * unit
            Kt = self.kernel_(X, self.X_fit_)
        Kt -= Kt.mean(axis=1, keepdims=True)
        Kt -= self._col_means[None, :]
        Kt += self._grand_mean
        return Kt @ self.dual_coef_

    def inverse_transform(self, X):
        """Approximate pre-images of projections ``X`` (needs ``fit_inverse_transform``)."""
        check_is_fitted(self)
        if not self.fit_inverse_transform:
            raise ValueError(
                "inverse_transform needs fit_inverse_transform=True when fitting KernelPCA."
            )
        Z = np.asarray(X, dtype=float)
        if Z.ndim != 2 or Z.shape[1] != self.n_components_:
            raise ValueError(f"expected shape (n_samples, {self.n_components_}); got {Z.shape}.")
        return self.kernel_(Z, self.X_transformed_fit_) @ self.dual_coef_inverse_
