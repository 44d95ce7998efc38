"""Laplacian regularised least squares (manifold regularisation with the squared loss)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.linalg as sla

from ..base import BaseEstimator, RegressorMixin, _fit_context, check_is_fitted
from ..kernels import KERNEL_NAMES, Kernel
from ..kernels._get_kernel import build_kernel
from ..utils._param_validation import Interval, StrOptions
from ..utils.graph import knn_graph, laplacian, rbf_affinity
from ..utils.validation import all_finite, check_array, validate_data

__all__ = ["LaplacianRLS"]


class LaplacianRLS(RegressorMixin, BaseEstimator):
    r"""Laplacian regularised least squares (LapRLS).

    Kernel ridge regression with a second, intrinsic penalty ``f^T L f`` that asks the
    function to vary slowly along a similarity graph over the labelled *and* unlabelled
    inputs (the manifold assumption of semi-supervised learning).

    Parameters
    ----------
    alpha : float, default=1.0
        Ambient regulariser ``lambda >= 0`` on ``||f||_H^2`` (as in
        :class:`~mathlearn.kernel_ridge.KernelRidge`).
    intrinsic_alpha : float, default=0.1
        Intrinsic regulariser ``eta >= 0`` on ``f^T L f``; ``0`` gives kernel ridge
        regression. ``f^T L f`` grows with the graph's degrees (about ``n_neighbors`` for
        the k-NN graph), so useful values are usually well below ``alpha * n``.
    kernel : str or Kernel, default="rbf"
        A name of :data:`mathlearn.kernels.KERNEL_NAMES` or a kernel object.
    gamma : float or None, default=None
        ``"rbf"``: ``exp(-gamma ||x - y||^2)``; ``None``: ``1 / n_features``.
    degree : float, default=3
        Degree of the ``"poly"`` kernel.
    coef0 : float, default=1
        Offset of the ``"poly"`` and ``"sigmoid"`` kernels.
    kernel_params : dict or None, default=None
        Further hyperparameters of the kernel.
    graph : {"knn", "rbf"}, default="knn"
        ``"knn"``: symmetric ``n_neighbors``-nearest-neighbour graph with unit weights;
        ``"rbf"``: fully connected, ``w_ij = exp(-graph_gamma ||x_i - x_j||^2)``.
    n_neighbors : int, default=10
        Neighbours in the ``"knn"`` graph (at most ``N - 1`` are used for ``N`` inputs).
    graph_gamma : float or None, default=None
        Width of the ``"rbf"`` graph; ``None``: ``1 / n_features``.
    laplacian : {"unnormalized", "symmetric"}, default="unnormalized"
        ``L = D - W`` or ``I - D^{-1/2} W D^{-1/2}``.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_samples + n_unlabeled,) or (..., n_targets)
        The expansion weights ``alpha`` over all inputs.
    X_fit_ : ndarray of shape (n_samples + n_unlabeled, n_features)
        The labelled inputs followed by the unlabelled ones.
    n_labeled_ : int
    kernel_ : Kernel
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when ``X`` has string feature names.

    See Also
    --------
    mathlearn.kernel_ridge.KernelRidge : The case ``intrinsic_alpha = 0``.
    mathlearn.utils.graph.laplacian : The graph Laplacians.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning", §4.2 (manifold
    regularisation). With ``n`` labelled pairs and ``u`` unlabelled inputs, the graph
    Laplacian ``L`` over all ``n + u`` inputs, and ``f^T L f = (1/2) sum_ij w_ij (f(x_i) -
    f(x_j))^2``,

    .. math::

        \min_{f\in\mathcal H}\ \frac1n\sum_{i\le n}(y_i - f(x_i))^2 + \frac\lambda n
        \|f\|_{\mathcal H}^2 + \frac\eta n\,\mathbf f^\top L\mathbf f .

    By the representer theorem ``f = sum_{i <= n+u} alpha_i k(x_i, .)``, and setting the
    gradient to zero gives

    .. math:: \alpha = (J^\top J K + \lambda I + \eta L K)^{-1} J^\top y,
        \qquad J = [I_n \,|\, 0] \in \mathbb R^{n\times(n+u)} .

    The system is not symmetric: it is solved by an LU factorisation (never an inverse).
    With ``u = 0`` and ``eta = 0`` it is ``(K + lambda I)^{-1} y``, kernel ridge regression
    (the notes' check); with ``eta = 0`` and ``u > 0`` the unlabelled weights vanish.
    Cost (``M = n + u``): ``O(M^2 D)`` for the Gram matrix and the graph, ``O(M^3)`` for the
    product ``L K`` and the LU solve; memory ``O(M^2)``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.semi_supervised import LaplacianRLS
    >>> X = np.array([[0.0], [3.0]])
    >>> X_u = np.linspace(0.0, 3.0, 7)[1:-1, None]
    >>> y = np.array([0.0, 1.0])
    >>> m = LaplacianRLS(alpha=0.01, intrinsic_alpha=1.0, gamma=0.5, n_neighbors=2)
    >>> np.round(m.fit(X, y, X_unlabeled=X_u).predict(X_u), 2)
    array([0.24, 0.32, 0.49, 0.67, 0.76])
    """

    _parameter_constraints: ClassVar[dict] = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "intrinsic_alpha": [Interval(Real, 0, None, closed="left")],
        "kernel": [StrOptions(set(KERNEL_NAMES)), Kernel],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "degree": [Interval(Real, 0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "kernel_params": [dict, None],
        "graph": [StrOptions({"knn", "rbf"})],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "graph_gamma": [Interval(Real, 0, None, closed="neither"), None],
        "laplacian": [StrOptions({"unnormalized", "symmetric"})],
    }

    def __init__(
        self,
        alpha: float = 1.0,
        intrinsic_alpha: float = 0.1,
        *,
        kernel: str | Kernel = "rbf",
        gamma: float | None = None,
        degree: float = 3,
        coef0: float = 1,
        kernel_params: dict | None = None,
        graph: str = "knn",
        n_neighbors: int = 10,
        graph_gamma: float | None = None,
        laplacian: str = "unnormalized",
    ):
        self.alpha = alpha
        self.intrinsic_alpha = intrinsic_alpha
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.graph_gamma = graph_gamma
        self.laplacian = laplacian

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def _laplacian(self, Z):
        N = Z.shape[0]
        if N < 2:
            return np.zeros((N, N))
        if self.graph == "knn":
            W = knn_graph(Z, min(self.n_neighbors, N - 1)).toarray()
        else:
            g = 1.0 / Z.shape[1] if self.graph_gamma is None else float(self.graph_gamma)
            W = rbf_affinity(Z, g)
        return laplacian(W, self.laplacian)[0]

    @_fit_context
    def fit(self, X, y, X_unlabeled=None):
        """Fit on labelled ``(X, y)`` and, optionally, unlabelled inputs.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Labelled inputs.
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        X_unlabeled : array-like of shape (n_unlabeled, n_features), optional
            Inputs without labels; they enter the graph and the expansion of ``f``.

        Returns
        -------
        self : LaplacianRLS

        Raises
        ------
        ValueError
            NaN/inf, feature counts that differ, a normalised Laplacian of a graph with an
            isolated vertex, or a singular system (``alpha = 0`` with a singular ``K``).
        """
        X, y = validate_data(self, X, y, dtype=np.float64, multi_output=True, y_numeric=True)
        n = X.shape[0]
        Z = X
        if X_unlabeled is not None:
            Xu = check_array(X_unlabeled, dtype=np.float64, input_name="X_unlabeled")
            if Xu.shape[1] != X.shape[1]:
                raise ValueError(f"X_unlabeled has {Xu.shape[1]} features; X has {X.shape[1]}.")
            Z = np.vstack([X, Xu])
        N = Z.shape[0]
        self.kernel_ = build_kernel(
            self.kernel, self.gamma, self.degree, self.coef0, self.kernel_params, X.shape[1]
        )
        with np.errstate(over="ignore", invalid="ignore"):
            K = self.kernel_(Z)
        if not all_finite(K):
            raise ValueError("the kernel matrix is not finite (overflow): rescale X.")
        Y = np.asarray(y, dtype=float).reshape(n, -1)
        rhs = np.zeros((N, Y.shape[1]))
        rhs[:n] = Y  # J^T y
        # (J^T J + eta L) K + lambda I: J^T J is the indicator of the labelled rows.
        M = float(self.intrinsic_alpha) * self._laplacian(Z)
        M[np.arange(n), np.arange(n)] += 1.0
        A = M @ K
        A[np.diag_indices(N)] += float(self.alpha)
        try:
            coef = sla.solve(A, rhs, check_finite=False)
        except np.linalg.LinAlgError:
            raise ValueError(
                "the LapRLS system (J^T J K + alpha I + intrinsic_alpha L K) is singular; "
                "increase alpha."
            ) from None
        self.dual_coef_ = coef.ravel() if y.ndim == 1 else coef
        self.X_fit_ = Z.copy()
        self.n_labeled_ = n
        return self

    def predict(self, X):
        """Predict ``f(x) = sum_i alpha_i k(x_i, x)`` over all fitted inputs.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        y : ndarray of shape (n_queries,) or (n_queries, n_targets)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.kernel_(X, self.X_fit_) @ self.dual_coef_
