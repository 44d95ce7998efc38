"""Mixture of multivariate Bernoulli distributions for binary data, fitted by EM."""

from __future__ import annotations

from numbers import Real
from typing import ClassVar

import numpy as np

from ..utils._param_validation import Interval, StrOptions
from ._base import _BASE_CONSTRAINTS, _BaseMixture

__all__ = ["BernoulliMixture"]

# log(0) stand-in when alpha = 0: finite so that 0 * log(0) = 0 in the matrix products.
_LOG_TINY = np.log(np.finfo(float).tiny)


class BernoulliMixture(_BaseMixture):
    """Mixture of Bernoullis ``p(x) = sum_k pi_k prod_d mu_kd^x_d (1 - mu_kd)^(1 - x_d)``.

    For binary vectors ``x in {0, 1}^D`` (e.g. binarised images).

    Parameters
    ----------
    n_components : int, default=1
    binarize : float or None, default=0.5
        Threshold mapping inputs to {0, 1} (``x > binarize``), as in scikit-learn's
        ``BernoulliNB``; binary data are unchanged by the default. ``None`` requires the input
        to be binary already and rejects anything else.
    alpha : float, default=1.0
        Pseudo-count of a symmetric ``Beta(1 + alpha, 1 + alpha)`` prior on every ``mu_kd``
        (MAP-EM; ``alpha = 1`` is Laplace smoothing). Keeps the probabilities away from 0 and 1,
        where the log-likelihood of an unseen value is ``-inf``. ``alpha = 0`` is maximum
        likelihood.
    tol : float, default=1e-3
    max_iter : int, default=100
    n_init : int, default=1
    init_params : {"random", "kmeans", "k-means++", "random_from_data"}, default="random"
        ``"random"`` draws ``mu_kd ~ U(0.25, 0.75)`` with equal weights (Bishop §9.3.3); the
        others start from hard responsibilities as in :class:`GaussianMixture`.
    weights_init : array-like of shape (n_components,), optional
    means_init : array-like of shape (n_components, n_features), optional
        Initial ``mu`` (entries in [0, 1]).
    random_state : int, Generator, RandomState or None

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,)
        ``pi_k``.
    means_ : ndarray of shape (n_components, n_features)
        ``mu_kd = p(x_d = 1 | z = k)``.
    converged_ : bool
    n_iter_ : int
    lower_bound_ : float
        ``(log p(X | theta) + log p(mu)) / N`` at the start of the last iteration, where
        ``log p(mu) = alpha sum_kd (log mu_kd + log(1 - mu_kd))`` (up to a constant).
    lower_bounds_ : ndarray of shape (n_iter_,)
        Its history; non-decreasing.
    n_features_in_ : int

    See Also
    --------
    mathlearn.mixture.GaussianMixture
        Continuous features.
    mathlearn.mixture.em
        The EM driver.

    Notes
    -----
    A latent-variable model of Oxford "Advanced Topics in Statistical Machine Learning" §5.1 with
    Bernoulli components (Bishop §9.3.3), fitted by the general driver
    :func:`~mathlearn.mixture.em` (PRML §9.3-9.4; Oxford
    "Advanced Topics in Statistical Machine Learning" §5.3):

    * E-step: ``log r_nk = log pi_k + sum_d [x_nd log mu_kd + (1 - x_nd) log(1 - mu_kd)] -
      logsumexp_j(...)``, two matrix products;
    * M-step: ``N_k = sum_n r_nk``, ``pi_k = N_k / N`` (eq. 5.14) and
      ``mu_kd = (sum_n r_nk x_nd + alpha) / (N_k + 2 alpha)``, the maximiser of the expected
      complete-data log-likelihood plus the log prior (eq. 5.15 with this component family).

    Complexity: with ``N`` samples, ``D`` features and ``K`` components, an EM iteration
    costs ``O(N K D)`` time: the E-step's products ``X log(mu)^T`` and
    ``(1 - X) log(1 - mu)^T`` and the M-step's ``r^T X``; ``n_init`` starts of ``T``
    iterations each cost ``O(n_init T N K D)``, plus a k-means fit per start for
    ``init_params="kmeans"``. Memory: the binarised copy of ``X`` (``N D``), the ``N x D``
    temporary ``1 - X`` in each E-step, a few ``N x K`` arrays (log-probabilities,
    responsibilities) and ``O(K D)`` parameters. ``predict``, ``predict_proba`` and
    ``score_samples`` of ``M`` rows cost ``O(M K D)`` time and ``O(M (D + K))`` memory.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.mixture import BernoulliMixture
    >>> X = np.array([[1, 1, 0, 0]] * 5 + [[0, 0, 1, 1]] * 5)
    >>> bm = BernoulliMixture(2, alpha=0.0, means_init=[[0.9, 0.8, 0.2, 0.1],
    ...                       [0.2, 0.1, 0.8, 0.9]], weights_init=[0.5, 0.5]).fit(X)
    >>> bm.means_.round(3).tolist(), bm.weights_.round(3).tolist()
    ([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]], [0.5, 0.5])
    """

    _parameter_constraints: ClassVar[dict] = {
        **_BASE_CONSTRAINTS,
        "binarize": [Interval(Real, None, None, closed="neither"), None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "init_params": [StrOptions({"random", "kmeans", "k-means++", "random_from_data"})],
    }

    def __init__(
        self,
        n_components: int = 1,
        *,
        binarize: float | None = 0.5,
        alpha: float = 1.0,
        tol: float = 1e-3,
        max_iter: int = 100,
        n_init: int = 1,
        init_params: str = "random",
        weights_init=None,
        means_init=None,
        random_state=None,
    ):
        self.n_components = n_components
        self.binarize = binarize
        self.alpha = alpha
        self.tol = tol
        self.max_iter = max_iter
        self.n_init = n_init
        self.init_params = init_params
        self.weights_init = weights_init
        self.means_init = means_init
        self.random_state = random_state

    def _check_X(self, X, reset):
        X = self._validate_basic(X, reset)
        if self.binarize is not None:
            return (X > self.binarize).astype(np.float64)
        if not np.all((X == 0) | (X == 1)):
            raise ValueError(
                "BernoulliMixture with binarize=None needs binary data: every entry must be "
                "0 or 1."
            )
        return X

    def _get_parameters(self):
        return (self.weights_.copy(), self.means_.copy())

    def _set_parameters(self, params):
        self.weights_, self.means_ = params

    def _initialize(self, X, rng, sample_weight=None, estimate=None):
        k, d = self.n_components, X.shape[1]
        if self.init_params == "random":
            self.weights_ = np.full(k, 1.0 / k)
            self.means_ = rng.uniform(0.25, 0.75, size=(k, d))
        elif estimate is not None:
            self.weights_, self.means_ = estimate()
        else:
            self._maximize(X, self._initial_responsibilities(X, rng, sample_weight))
        w = self._checked_weights_init()
        if w is not None:
            self.weights_ = w
        m = self._checked_means_init(d)
        if m is not None:
            if np.any((m < 0) | (m > 1)):
                raise ValueError(f"means_init must have shape ({k}, {d}) with entries in [0, 1].")
            self.means_ = m

    def _log_params(self):
        with np.errstate(divide="ignore"):
            log_mu = np.maximum(np.log(self.means_), _LOG_TINY)
            log_1m = np.maximum(np.log1p(-self.means_), _LOG_TINY)
        return log_mu, log_1m

    def _estimate_log_prob(self, X):
        log_mu, log_1m = self._log_params()
        return X @ log_mu.T + (1.0 - X) @ log_1m.T

    def _log_prior(self) -> float:
        if self.alpha == 0:
            return 0.0
        log_mu, log_1m = self._log_params()
        return float(self.alpha * (log_mu.sum() + log_1m.sum()))

    def _suff_stats(self, X, resp, ref):
        """``N_k`` and ``sum_n r_nk x_n``: sums over rows (they add across row blocks)."""
        return resp.sum(axis=0), resp.T @ X

    def _params_from_stats(self, stats, ref):
        """``(pi, mu)`` of :meth:`_maximize` from the summed :meth:`_suff_stats`."""
        nk = stats[0] + 10 * np.finfo(float).eps
        means = (stats[1] + self.alpha) / (nk[:, None] + 2.0 * self.alpha)
        np.clip(means, 0.0, 1.0, out=means)
        return nk / nk.sum(), means

    def _maximize_stats(self, stats, ref):
        self.weights_, self.means_ = self._params_from_stats(stats, ref)

    def _stats_reference(self):
        return None

    def _maximize(self, X, resp):
        nk = resp.sum(axis=0) + 10 * np.finfo(float).eps
        self.weights_ = nk / nk.sum()
        self.means_ = (resp.T @ X + self.alpha) / (nk[:, None] + 2.0 * self.alpha)
        np.clip(self.means_, 0.0, 1.0, out=self.means_)

    def _n_parameters(self) -> int:
        return int(self.n_components * self.means_.shape[1] + self.n_components - 1)

    def _sample_components(self, counts, rng):
        y = np.repeat(np.arange(self.n_components), counts)
        return (rng.random((y.shape[0], self.means_.shape[1])) < self.means_[y]).astype(float)
