"""Soft k-means: the isotropic Gaussian mixture with a known, fixed variance, fitted by EM."""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from ..base import BaseEstimator, ClusterMixin, DensityMixin, _fit_context, check_is_fitted
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, StrOptions
from ..utils.extmath import squared_distances
from ..utils.validation import check_array, check_random_state, validate_data
from ._kmeans_common import kmeans_plusplus

__all__ = ["SoftKMeans"]


class _SoftKMeansEM:
    """E- and M-steps of the fixed-variance isotropic mixture (the EM protocol)."""

    def __init__(self, sigma2, means, weights, learn_weights):
        self.sigma2, self.means, self.weights = sigma2, means, weights
        self.learn_weights = learn_weights

    def log_joint(self, X):
        """``log pi_k + log f(x_n | mu_k)``, shape (N, K)."""
        d = X.shape[1]
        with np.errstate(divide="ignore"):
            log_pi = np.log(self.weights)
        d2 = squared_distances(X, self.means)
        return log_pi - 0.5 * d2 / self.sigma2 - 0.5 * d * np.log(2 * np.pi * self.sigma2)

    def e_step(self, X):
        lj = self.log_joint(X)
        top = lj.max(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", over="ignore"):
            log_norm = np.log(np.exp(lj - top).sum(axis=1, keepdims=True)) + top
        return float(np.mean(log_norm)), lj - log_norm

    def m_step(self, X, log_resp):
        Q = np.exp(log_resp)
        nk = Q.sum(axis=0)
        if self.learn_weights:
            self.weights = nk / X.shape[0]
        full = nk > 0
        # A component with no responsibility keeps its mean (any mean maximises there).
        self.means[full] = (Q[:, full].T @ X) / nk[full, None]


class SoftKMeans(ClusterMixin, DensityMixin, BaseEstimator):
    r"""Soft k-means: EM for an isotropic Gaussian mixture with a fixed variance ``sigma2``.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of components ``K``.
    sigma2 : float, default=1.0
        The known variance :math:`\sigma^2` of every component (``1 / beta``, the notes'
        stiffness ``beta = 1 / sigma^2``). As it tends to 0 the fit becomes k-means.
    learn_weights : bool, default=True
        Learn the mixing weights ``pi`` (the notes' M-step); False keeps them uniform.
    init : {"k-means++", "random"} or array-like of shape (n_clusters, n_features)
        Default "k-means++". Initial means: k-means++ seeds, ``K`` distinct data points,
        or given means.
    n_init : int, default=1
        Number of initialisations (ignored for given means); the largest final
        log-likelihood is kept.
    max_iter : int, default=300
    tol : float, default=1e-8
        EM stops when the per-sample log-likelihood changes by less than ``tol``.
    random_state : int, Generator, RandomState or None

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        The means ``mu_k``.
    weights_ : ndarray of shape (n_clusters,)
        The mixing weights ``pi_k``.
    labels_ : ndarray of shape (n_samples,)
        Most responsible component of each training point.
    lower_bound_ : float
        Per-sample log-likelihood at the last iteration.
    lower_bounds_ : ndarray of shape (n_iter_,)
        Its history (non-decreasing: EM).
    n_iter_ : int
    converged_ : bool
    n_features_in_ : int

    See Also
    --------
    KMeans : The ``sigma2 -> 0`` limit.
    mathlearn.mixture.GaussianMixture : The mixture with learned covariances.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §5.1 and §5.4 (eq. 5.1-5.3 and
    5.13-5.18): ``x | z = k ~ N(mu_k, sigma^2 I)``, ``z ~ Cat(pi)``. EM alternates

    * E-step: :math:`Q_{ik} = \pi_k e^{-\|x_i-\mu_k\|^2/2\sigma^2} /
      \sum_j \pi_j e^{-\|x_i-\mu_j\|^2/2\sigma^2}` (computed in log space);
    * M-step: :math:`\pi_k = \frac1n\sum_i Q_{ik}`,
      :math:`\mu_k = \sum_i Q_{ik}x_i / \sum_i Q_{ik}`.

    As :math:`\sigma^2\to0`, :math:`Q_{ik}\to[k = \arg\min_j \|x_i-\mu_j\|^2]` (ties
    aside; the weights' term ``log pi_k`` is negligible against ``1/sigma^2``), the M-step is
    the centroid update, and EM is Lloyd's k-means (the notes' remark after eq. 5.18; PRML
    §9.3.2). The log-likelihood never decreases (:func:`~mathlearn.mixture.em`).

    Complexity: with ``N`` samples, ``D`` features and ``K`` components, an EM iteration
    costs ``O(N K D)`` time: the squared distances to the means (one BLAS product) in the
    E-step and the product ``Q^T X`` in the M-step; the k-means++ seeding costs ``O(N K D)``
    per start, so ``n_init`` starts of ``T`` iterations each cost ``O(n_init T N K D)``.
    Memory: a few ``N x K`` arrays (distances, log-joint, log-responsibilities and their
    exponentials), an ``N x D`` temporary (the centred or rescaled copy of ``X`` made by the
    range check, the seeding and each distance computation), and ``O(K D)`` parameters.
    ``predict``, ``predict_proba`` and ``score_samples`` of ``M`` rows cost ``O(M K D)`` time
    and ``O(M K)`` memory.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.cluster import SoftKMeans
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [5.0, 5.0], [5.0, 6.0]])
    >>> skm = SoftKMeans(2, sigma2=0.5, init=[[0.0, 0.0], [5.0, 5.0]]).fit(X)
    >>> skm.cluster_centers_.round(3).tolist()
    [[0.0, 0.5], [5.0, 5.5]]
    >>> skm.labels_.tolist()
    [0, 0, 1, 1]
    """

    # The common checks cluster standardised blobs: a variance well below the clusters'.
    _common_test_params: ClassVar[dict] = {"sigma2": 0.05, "n_init": 3}

    _parameter_constraints: ClassVar[dict] = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "sigma2": [Interval(Real, 0, None, closed="neither")],
        "learn_weights": ["boolean"],
        "init": [StrOptions({"k-means++", "random"}), "array-like"],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        sigma2: float = 1.0,
        learn_weights: bool = True,
        init="k-means++",
        n_init: int = 1,
        max_iter: int = 300,
        tol: float = 1e-8,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.sigma2 = sigma2
        self.learn_weights = learn_weights
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _initial_means(self, X, rng):
        k = self.n_clusters
        if isinstance(self.init, str):
            if self.init == "k-means++":
                return kmeans_plusplus(X, k, rng)[0].astype(float)
            return X[rng.choice(X.shape[0], k, replace=False)].copy()
        means = check_array(self.init, dtype=np.float64, copy=True, input_name="init")
        if means.shape != (k, X.shape[1]):
            raise ValueError(f"init must have shape ({k}, {X.shape[1]}); got {means.shape}.")
        return means

    @_fit_context
    def fit(self, X, y=None):
        """Fit the means (and weights) by EM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        X = validate_data(self, X, dtype=np.float64, reset=True)
        if X.shape[0] < self.n_clusters:
            raise ValueError(f"n_samples={X.shape[0]} should be >= n_clusters={self.n_clusters}.")
        from ..mixture import em  # mixture imports cluster (its k-means initialisation)

        spread = float(np.max(np.abs(X - X.mean(axis=0))))
        if spread > 1e150 or float(self.sigma2) > 1e300 or float(self.sigma2) < 1e-300:
            raise ValueError(
                f"X's spread (~{spread:.1e}) or sigma2={self.sigma2:g} is so extreme that the "
                "squared distances over sigma2 are not floats; rescale X and sigma2 together "
                "(the model is invariant under x -> s x, sigma2 -> s^2 sigma2)."
            )

        rng = check_random_state(self.random_state)
        n_init = 1 if not isinstance(self.init, str) else self.n_init
        best = best_model = None
        for _ in range(n_init):
            k = self.n_clusters
            model = _SoftKMeansEM(
                float(self.sigma2),
                self._initial_means(X, rng),
                np.full(k, 1.0 / k),
                bool(self.learn_weights),
            )
            result = em(model, X, max_iter=self.max_iter, tol=self.tol)
            if best is None or result.lower_bound > best.lower_bound:
                best, best_model = result, model
        self._model = best_model
        self.cluster_centers_ = best_model.means
        self.weights_ = best_model.weights
        self.lower_bounds_ = best.lower_bounds
        self.lower_bound_ = best.lower_bound
        self.n_iter_ = best.n_iter
        self.converged_ = best.converged
        if not self.converged_:
            warnings.warn(
                f"EM did not converge in max_iter={self.max_iter} iterations; increase "
                "max_iter or tol.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.labels_ = best_model.e_step(X)[1].argmax(axis=1)
        return self

    def _log_resp(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        model = _SoftKMeansEM(self.sigma2, self.cluster_centers_, self.weights_, False)
        lj = model.log_joint(X)
        bad = ~np.isfinite(lj.max(axis=1))
        if np.any(bad):
            raise ValueError(
                f"rows {np.flatnonzero(bad)[:5].tolist()} of X are so far from every centre "
                "(relative to sigma2) that their log-densities are not floats."
            )
        top = lj.max(axis=1, keepdims=True)
        log_norm = np.log(np.exp(lj - top).sum(axis=1, keepdims=True)) + top
        return log_norm[:, 0], lj - log_norm

    def predict_proba(self, X):
        """Responsibilities ``Q_ik``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_clusters)
        """
        return np.exp(self._log_resp(X)[1])

    def predict(self, X):
        """Most responsible component of each row.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._log_resp(X)[1].argmax(axis=1)

    def score_samples(self, X):
        """Log mixture density ``log sum_k pi_k N(x | mu_k, sigma2 I)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._log_resp(X)[0]

    def score(self, X, y=None) -> float:
        """Mean log-likelihood of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        float
        """
        return float(np.mean(self.score_samples(X)))
