"""Probabilistic matrix factorisation: the MAP estimate (by ALS) and the Bayesian posterior
(by Gibbs sampling)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import cast

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..base import _fit_context
from ..distributions import NormalWishart, NormalWishartModel
from ..utils._param_validation import Interval
from ..utils.validation import check_random_state
from ._als import als_fit
from ._base import RowBlocks, sample_rows
from ._factor import FactorModel, Pattern, pair_dots

_COMMON = {
    "n_components": [Interval(Integral, 1, None, closed="left")],
    "noise_variance": [Interval(Real, 0, None, closed="neither")],
    "user_prior_variance": [Interval(Real, 0, None, closed="neither")],
    "item_prior_variance": [Interval(Real, 0, None, closed="neither")],
    "center": ["boolean"],
    "random_state": ["random_state"],
}


class ProbabilisticMatrixFactorization(FactorModel):
    """Probabilistic matrix factorisation, fitted by its maximum a posteriori estimate.

    Model (the notes' §6.4, users x items): ``p_u ~ N(0, sigma_u^2 I)``,
    ``q_i ~ N(0, sigma_i^2 I)``, ``r_ui | p, q ~ N(mu + p_u^T q_i, sigma^2)`` for the observed
    pairs. The negative log posterior is, up to a constant,

    ``(1 / (2 sigma^2)) [sum (r_ui - mu - p_u^T q_i)^2 + lambda_u ||P||_F^2
    + lambda_i ||Q||_F^2]``, with ``lambda_u = sigma^2 / sigma_u^2`` and
    ``lambda_i = sigma^2 / sigma_i^2``,

    the ALS objective (6.7); it is minimised by alternating over the users' and the items'
    ridge problems, each lowered by three conjugate-gradient steps per sweep (the default
    ``"cg"`` solver of :class:`ALS`).

    Parameters
    ----------
    n_components : int, default=10
        Rank k.
    noise_variance : float, default=1.0
        sigma^2 (sigma_y^2 in the notes).
    user_prior_variance : float, default=1.0
        sigma_u^2 (sigma_psi^2, the users' preference vectors).
    item_prior_variance : float, default=1.0
        sigma_i^2 (sigma_phi^2, the movies' feature vectors).
    center : bool, default=True
        Subtract the training mean mu first (a fixed offset; ``False`` is the notes'
        zero-mean model).
    max_iter : int, default=200
        Maximum ALS sweeps.
    tol : float, default=1e-5
        Relative decrease of the objective that stops the sweeps (0: run all).
    random_state : int, Generator or None, default=None
        Seed of the initial item factors (standard deviation 0.1).

    Attributes
    ----------
    user_factors_ : ndarray of shape (n_users, n_components)
        MAP p_u.
    item_factors_ : ndarray of shape (n_items, n_components)
        MAP q_i.
    user_bias_, item_bias_ : ndarray of shape (n_users,), (n_items,)
        Zeros (the model has no biases).
    offset_ : float
        mu (0 when ``center=False``).
    global_mean_ : float
        Mean training rating.
    objective_ : list of float
        Negative log posterior (up to its constant) after each sweep.
    n_iter_ : int
        Sweeps run.
    user_ids_, item_ids_ : ndarray
        The id maps.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §6.4, joint density (6.8) (whose
    likelihood factor needs a minus sign in the exponent, as its proportional form has) and
    the identification lambda_phi = sigma_y^2 / sigma_phi^2, lambda_psi = sigma_y^2 /
    sigma_psi^2. R. Salakhutdinov and A. Mnih, "Probabilistic matrix factorization" (NIPS
    2007). Unknown ids: mu plus the other side's mean offset.

    Complexity: with ``U`` users, ``I`` items, ``N`` observed ratings and rank ``k``, a sweep
    runs three conjugate-gradient steps on every user's and every item's ridge problem from
    its current value (each step two matrix-vector products with the row's gathered factors):
    about ``16 N k`` multiply-adds plus ``O((U + I) k)``, so ``O(T N k)`` for ``T`` sweeps
    (at most ``max_iter``; ``tol`` stops them earlier), after a sort of the ratings by user
    and by item (``O(N log N)`` at most). Memory: the factors (``(U + I) k``), the ratings in
    both orientations and one target per rating (``O(N)``), and per-row scratch of
    ``(k + 2) n_max`` numbers (``n_max`` the longest row); never a ``U x I`` array.
    ``predict`` costs ``O(k)`` per pair, ``recommend`` ``O(I k)``.

    See Also
    --------
    BayesianProbabilisticMatrixFactorization : the posterior of the same model by Gibbs
        sampling.

    Examples
    --------
    >>> from mathlearn.datasets import make_low_rank_ratings
    >>> from mathlearn.recommender import ProbabilisticMatrixFactorization
    >>> r = make_low_rank_ratings(60, 40, 900, rank=2, noise=0.3, bias_std=0.0, random_state=0)
    >>> m = ProbabilisticMatrixFactorization(2, noise_variance=0.09, random_state=0).fit(r)
    >>> m.n_iter_ < 200
    True
    """

    _parameter_constraints = {
        **_COMMON,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        n_components: int = 10,
        *,
        noise_variance: float = 1.0,
        user_prior_variance: float = 1.0,
        item_prior_variance: float = 1.0,
        center: bool = True,
        max_iter: int = 200,
        tol: float = 1e-5,
        random_state=None,
    ) -> None:
        self.n_components = n_components
        self.noise_variance = noise_variance
        self.user_prior_variance = user_prior_variance
        self.item_prior_variance = item_prior_variance
        self.center = center
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    @_fit_context
    def fit(self, ratings, y=None) -> ProbabilisticMatrixFactorization:
        """Find the MAP factors.

        Parameters
        ----------
        ratings : Ratings, scipy.sparse matrix (users x items) or DataFrame
            Training ratings.
        y : None
            Ignored.

        Returns
        -------
        self : ProbabilisticMatrixFactorization
        """
        data = self._setup(ratings)
        s2 = float(self.noise_variance)
        self.offset_ = self.global_mean_ if self.center else 0.0
        P, Q, _, _, hist, n_iter = als_fit(
            Pattern(data), int(self.n_components), s2 / float(self.user_prior_variance),
            s2 / float(self.item_prior_variance), weighting="none", biases=False,
            offset=self.offset_, max_iter=int(self.max_iter), tol=float(self.tol),
            init_std=0.1, rng=check_random_state(self.random_state),
            name="ProbabilisticMatrixFactorization",
        )  # fmt: skip
        self.user_factors_, self.item_factors_ = P, Q
        self.user_bias_, self.item_bias_ = np.zeros(len(P)), np.zeros(len(Q))
        self.objective_ = [h / (2.0 * s2) for h in hist]
        self.n_iter_ = n_iter
        return self


class BayesianProbabilisticMatrixFactorization(FactorModel):
    """Bayesian probabilistic matrix factorisation: the posterior sampled by Gibbs.

    Model (Salakhutdinov and Mnih 2008): ``r_ui ~ N(mu + p_u^T q_i, sigma^2)``,
    ``p_u ~ N(mu_U, Lambda_U^{-1})``, ``q_i ~ N(mu_V, Lambda_V^{-1})``, and with
    ``hyperpriors=True`` (the default, the paper's model) Normal–Wishart hyperpriors
    ``(mu_U, Lambda_U) ~ N(mu_U | 0, (beta_0 Lambda_U)^{-1}) W(Lambda_U | W_0, nu_0)`` (and
    likewise for the items), so that the factors' means and precisions are learned.
    ``hyperpriors=False`` fixes ``mu_U = 0``, ``Lambda_U = I / sigma_u^2`` (the prior of
    :class:`ProbabilisticMatrixFactorization`).

    Each sweep draws every user's p_u from its Gaussian full conditional

    ``p_u | Q, R ~ N(Lambda_u^{-1} ((1/sigma^2) sum_{i in I_u} (r_ui - mu) q_i
    + Lambda_U mu_U), Lambda_u^{-1})``,
    ``Lambda_u = Lambda_U + (1/sigma^2) sum_{i in I_u} q_i q_i^T``,

    then ``(mu_U, Lambda_U)`` from its Normal–Wishart conditional given P (with
    hyperpriors), then the items likewise. After ``burn_in`` sweeps, ``n_samples`` draws are
    kept; predictions average over them, and the predictive standard deviation of a new
    rating is ``sqrt(Var_samples(p_u^T q_i) + sigma^2)``.

    Parameters
    ----------
    n_components : int, default=10
        Rank k.
    noise_variance : float, default=1.0
        sigma^2.
    user_prior_variance : float, default=1.0
        sigma_u^2.
    item_prior_variance : float, default=1.0
        sigma_i^2.
    center : bool, default=True
        Subtract the training mean first.
    hyperpriors : bool, default=True
        Give the factors' means and precisions Normal–Wishart hyperpriors and sample them
        (Bayesian PMF as Salakhutdinov and Mnih define it), with their settings
        ``mu_0 = 0``, ``beta_0 = 2``, ``nu_0 = k`` and ``W_0 = I / (k sigma_u^2)`` (items:
        sigma_i^2), so that the prior mean of ``Lambda_U``, ``nu_0 W_0``, is ``I / sigma_u^2``.
        ``False``: the fixed priors ``N(0, sigma_u^2 I)`` and ``N(0, sigma_i^2 I)``.
    n_samples : int, default=100
        Draws kept.
    burn_in : int, default=20
        Sweeps discarded first.
    random_state : int, Generator or None, default=None
        Seed.

    Attributes
    ----------
    user_samples_ : ndarray of shape (n_samples, n_users, n_components)
        The kept draws of P.
    item_samples_ : ndarray of shape (n_samples, n_items, n_components)
        The kept draws of Q.
    user_prior_mean_samples_ : ndarray of shape (n_samples, n_components)
        The kept draws of mu_U (zeros without hyperpriors); draw s is from its conditional
        given ``user_samples_[s]``.
    user_prior_precision_samples_ : ndarray of shape (n_samples, n_components, n_components)
        The kept draws of Lambda_U (``I / sigma_u^2`` without hyperpriors).
    item_prior_mean_samples_ : ndarray of shape (n_samples, n_components)
        The kept draws of mu_V.
    item_prior_precision_samples_ : ndarray of shape (n_samples, n_components, n_components)
        The kept draws of Lambda_V.
    user_factors_ : ndarray of shape (n_users, n_components)
        The last draw of P (for :meth:`similar_items` and ``recommend`` scoring uses the
        sample average of the predictions).
    item_factors_ : ndarray of shape (n_items, n_components)
        The last draw of Q.
    user_bias_, item_bias_ : ndarray
        Zeros.
    offset_ : float
        mu.
    global_mean_ : float
        Mean training rating.
    user_ids_, item_ids_ : ndarray
        The id maps.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §6.4 ("a full probabilistic
    model ... joint inference"); R. Salakhutdinov and A. Mnih, "Bayesian probabilistic matrix
    factorization using Markov chain Monte Carlo" (ICML 2008): the Normal–Wishart conditional
    of ``(mu_U, Lambda_U)`` given the N user vectors has ``beta_0* = beta_0 + N``,
    ``nu_0* = nu_0 + N``, ``mu_0* = (beta_0 mu_0 + N pbar) / (beta_0 + N)`` and
    ``W_0*^{-1} = W_0^{-1} + N S + beta_0 N / (beta_0 + N) (mu_0 - pbar)(mu_0 - pbar)^T``
    (pbar and S the mean and covariance of the user vectors; the paper's equation (14)), the
    conjugate update of :class:`~mathlearn.distributions.NormalWishartModel`. The noise
    variance stays fixed. Unknown ids: mu plus the other side's mean offset, with standard
    deviation ``sqrt(sigma^2 + k sigma_u^2 sigma_i^2)`` (the fixed prior's predictive) when
    the user or item is unknown.

    Complexity: with ``U`` users, ``I`` items, ``N`` observed ratings, rank ``k`` and
    ``S = n_samples``, a Gibbs sweep forms every user's ``k x k`` conditional precision from
    the item factors of its ratings (``O(N k^2)`` in all, stacked products on padded blocks
    of rows of similar length), factorises it and solves with it (``O(U k^3)``), draws the
    users' hyperparameters (``O(U k^2 + k^3)``), then does the same for the items:
    ``O(N k^2 + (U + I) k^3)`` per sweep, for ``burn_in + S`` sweeps. Memory: the kept
    draws, ``S (U + I) k`` numbers (and ``S k^2`` for the hyperparameters), the ratings and
    the padded blocks' positions and column indices in both orientations (``O(N)``), and
    scratch for one block of rows at a time (its gathered factors, about 2 MB, and its rows'
    ``k x k`` precisions and factors, at most ``2^18 k`` numbers each, reached by rows with
    one rating). Predictions average over the draws: ``O(S k)`` per pair, with ``O(S M)``
    memory for ``M`` pairs; ``recommend`` costs ``O(S I k)``.

    See Also
    --------
    ProbabilisticMatrixFactorization : the MAP estimate.

    Examples
    --------
    >>> from mathlearn.datasets import make_low_rank_ratings
    >>> from mathlearn.recommender import BayesianProbabilisticMatrixFactorization
    >>> r = make_low_rank_ratings(40, 30, 500, rank=2, noise=0.3, random_state=0)
    >>> m = BayesianProbabilisticMatrixFactorization(
    ...     2, noise_variance=0.09, n_samples=20, burn_in=10, random_state=0).fit(r)
    >>> mean, std = m.predict([0], [0], return_std=True)
    >>> bool(std[0] > 0.3)
    True
    """

    _parameter_constraints = {
        **_COMMON,
        "hyperpriors": ["boolean"],
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "burn_in": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        n_components: int = 10,
        *,
        noise_variance: float = 1.0,
        user_prior_variance: float = 1.0,
        item_prior_variance: float = 1.0,
        center: bool = True,
        hyperpriors: bool = True,
        n_samples: int = 100,
        burn_in: int = 20,
        random_state=None,
    ) -> None:
        self.n_components = n_components
        self.noise_variance = noise_variance
        self.user_prior_variance = user_prior_variance
        self.item_prior_variance = item_prior_variance
        self.center = center
        self.hyperpriors = hyperpriors
        self.n_samples = n_samples
        self.burn_in = burn_in
        self.random_state = random_state

    @_fit_context
    def fit(self, ratings, y=None) -> BayesianProbabilisticMatrixFactorization:
        """Run the Gibbs sampler.

        Parameters
        ----------
        ratings : Ratings, scipy.sparse matrix (users x items) or DataFrame
            Training ratings.
        y : None
            Ignored.

        Returns
        -------
        self : BayesianProbabilisticMatrixFactorization
        """
        data = self._setup(ratings)
        pattern = Pattern(data)
        rng = check_random_state(self.random_state)
        k = int(self.n_components)
        tau = 1.0 / float(self.noise_variance)
        self.offset_ = self.global_mean_ if self.center else 0.0
        t_u = (data.values - self.offset_)[pattern.perm_u]
        t_i = (data.values - self.offset_)[pattern.perm_i]
        n_users, n_items = data.shape
        S, B = int(self.n_samples), int(self.burn_in)
        var_u, var_i = float(self.user_prior_variance), float(self.item_prior_variance)
        Q = np.sqrt(var_i) * rng.standard_normal((n_items, k))
        keep_u, keep_i = np.empty((S, n_users, k)), np.empty((S, n_items, k))
        # Prior mean and precision of each side (the fixed values, or the hyperprior's
        # means as the starting point of the chain).
        hyper = {"u": (np.zeros(k), np.eye(k) / var_u), "i": (np.zeros(k), np.eye(k) / var_i)}
        keep_h = {side: (np.empty((S, k)), np.empty((S, k, k))) for side in hyper}
        models = {
            side: NormalWishartModel(np.zeros(k), 2.0, float(k), np.eye(k) / (k * var))
            for side, var in (("u", var_u), ("i", var_i))
        }
        blocks_u, blocks_i = RowBlocks(pattern.R, k), RowBlocks(pattern.Rt, k)
        for sweep in range(B + S):
            mu_u, Lam_u = hyper["u"]
            P = sample_rows(pattern.R, t_u, Q, tau, Lam_u, rng, prior_mean=mu_u,
                            blocks=blocks_u)  # fmt: skip
            if self.hyperpriors:
                hyper["u"] = cast(NormalWishart, models["u"].posterior(P)).sample(rng=rng)
            mu_i, Lam_i = hyper["i"]
            Q = sample_rows(pattern.Rt, t_i, P, tau, Lam_i, rng, prior_mean=mu_i,
                            blocks=blocks_i)  # fmt: skip
            if self.hyperpriors:
                hyper["i"] = cast(NormalWishart, models["i"].posterior(Q)).sample(rng=rng)
            s = sweep - B
            if s >= 0:
                keep_u[s], keep_i[s] = P, Q
                for side in hyper:
                    keep_h[side][0][s], keep_h[side][1][s] = hyper[side]
        self.user_prior_mean_samples_, self.user_prior_precision_samples_ = keep_h["u"]
        self.item_prior_mean_samples_, self.item_prior_precision_samples_ = keep_h["i"]
        self.user_samples_, self.item_samples_ = keep_u, keep_i
        self.user_factors_, self.item_factors_ = P, Q
        self.user_bias_, self.item_bias_ = np.zeros(len(P)), np.zeros(len(Q))
        return self

    def _moments(self, u: np.ndarray, i: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        S = self.user_samples_.shape[0]
        draws = np.stack([pair_dots(self.user_samples_[s], self.item_samples_[s], u, i)
                          for s in range(S)])  # fmt: skip
        return draws.mean(axis=0), draws.var(axis=0)

    def _predict_known(self, u: np.ndarray, i: np.ndarray) -> np.ndarray:
        return self.offset_ + self._moments(u, i)[0]

    def _score_user(self, u: int) -> np.ndarray:
        return (
            self.offset_
            + np.einsum("snk,sk->n", self.item_samples_, self.user_samples_[:, u], optimize=True)
            / self.user_samples_.shape[0]
        )

    def predict(self, users, items, return_std: bool = False):
        """Posterior predictive mean (and standard deviation) of the ratings.

        Parameters
        ----------
        users, items : sequences of hashable of equal length
            User and item ids.
        return_std : bool, default=False
            Also return the predictive standard deviation of a new rating.

        Returns
        -------
        mean : ndarray of shape (n_pairs,)
        std : ndarray of shape (n_pairs,), only with ``return_std``

        Examples
        --------
        >>> from mathlearn.datasets import make_low_rank_ratings
        >>> from mathlearn.recommender import BayesianProbabilisticMatrixFactorization
        >>> r = make_low_rank_ratings(30, 20, 300, rank=1, random_state=0)
        >>> m = BayesianProbabilisticMatrixFactorization(1, n_samples=5, burn_in=2,
        ...                                               random_state=0).fit(r)
        >>> m.predict([0, 1], [0, 1]).shape
        (2,)
        """
        mean = super().predict(users, items)
        if not return_std:
            return mean
        check_is_fitted(self, "user_samples_")
        u = self._codes(self._ids(users, "users"), self._user_index)
        i = self._codes(self._ids(items, "items"), self._item_index)
        k = self.user_samples_.shape[2]
        prior = k * float(self.user_prior_variance) * float(self.item_prior_variance)
        var = np.full(u.size, prior)
        both = (u >= 0) & (i >= 0)
        if np.any(both):
            var[both] = self._moments(u[both], i[both])[1]
        return mean, np.sqrt(var + float(self.noise_variance))
