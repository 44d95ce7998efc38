"""Losses of gradient boosting: initial constant, negative gradient, leaf values, mean loss.

Each loss gives the four pieces of Friedman's gradient TreeBoost (Friedman 2001, Algorithm
1; Stuttgart "Introduction to Machine Learning" §2.6, slide 7:23):

* ``init``: ``f_0 = argmin_c sum_i w_i L(y_i, c)``;
* ``negative_gradient``: the pseudo-residuals ``r_i = -dL(y_i, f)/df`` at ``f = f_{m-1}(x_i)``;
* ``leaf_values``: the line search of step 5 done per leaf ``R_j`` of the tree fitted to
  ``r``, ``gamma_j = argmin_g sum_{x_i in R_j} w_i L(y_i, f_{m-1}(x_i) + g)`` (exact for the
  squared, absolute and quantile losses, one Newton step for the log-loss, Friedman's
  approximation for Huber);
* ``__call__``: the weighted mean loss reported in ``train_score_``.

Raw predictions ``F`` have shape (n_samples, K): ``K = 1`` except for the multinomial loss.
"""

from __future__ import annotations

import numpy as np

from ..utils.extmath import logsumexp, sigmoid

# Below this total hessian a Newton leaf step is set to zero: the leaf's samples are all
# classified with probability 0 or 1 to double precision, so the step would divide 0 by 0.
_TINY_HESSIAN = 1e-150


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """Smallest ``v`` in ``values`` with ``sum_{values <= v} w >= q sum w`` (inverted CDF).

    For unit weights and ``q = 1/2`` it is the lower median.
    """
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    k = int(np.searchsorted(cum, q * cum[-1], side="left"))
    return float(values[order[min(k, values.shape[0] - 1)]])


def _leaf_groups(leaf: np.ndarray):
    """For each distinct leaf id, the positions of its samples."""
    order = np.argsort(leaf, kind="stable")
    ids, starts = np.unique(leaf[order], return_index=True)
    return ids, np.split(order, starts[1:])


class SquaredError:
    """``L = (y - f)^2 / 2``; ``r = y - f``; leaf value the leaf's weighted mean of ``r``."""

    K = 1
    # The tree fitted to r by squared error already holds each leaf's weighted mean of r,
    # which is this loss's exact line search: the booster keeps the tree's values and skips
    # leaf_values (a sort of the leaf ids and two passes over the samples per tree).
    tree_values_suffice = True

    def init(self, y, w):
        return np.array([np.average(y, weights=w)])

    def negative_gradient(self, y, F):
        return (y - F[:, 0])[:, None]

    def leaf_values(self, leaf, y, F, r, w, k):
        ids = np.unique(leaf)
        num = np.bincount(leaf, weights=w * r)[ids]
        den = np.bincount(leaf, weights=w)[ids]
        return ids, num / den

    def __call__(self, y, F, w):
        # Mean squared error (twice the half squared error), as scikit-learn reports it;
        # one temporary of N numbers (np.average's form takes three).
        d = y - F[:, 0]
        d *= d
        return float(np.dot(d, w) / np.sum(w))


class AbsoluteError:
    """``L = |y - f|``; ``r = sign(y - f)``; leaf value the weighted median of ``y - f``.

    At ``y = f`` the subgradient ``+1`` is taken (any value in [-1, 1] is one).
    """

    K = 1

    def init(self, y, w):
        return np.array([weighted_quantile(y, w, 0.5)])

    def negative_gradient(self, y, F):
        return np.where(y >= F[:, 0], 1.0, -1.0)[:, None]

    def leaf_values(self, leaf, y, F, r, w, k):
        ids, groups = _leaf_groups(leaf)
        resid = y - F[:, 0]
        return ids, np.array([weighted_quantile(resid[g], w[g], 0.5) for g in groups])

    def __call__(self, y, F, w):
        return float(np.average(np.abs(y - F[:, 0]), weights=w))


class QuantileLoss:
    """Pinball loss ``L = alpha (y - f)_+ + (1 - alpha) (f - y)_+``; leaf: the alpha-quantile."""

    K = 1

    def __init__(self, alpha):
        self.alpha = alpha

    def init(self, y, w):
        return np.array([weighted_quantile(y, w, self.alpha)])

    def negative_gradient(self, y, F):
        return np.where(y >= F[:, 0], self.alpha, self.alpha - 1.0)[:, None]

    def leaf_values(self, leaf, y, F, r, w, k):
        ids, groups = _leaf_groups(leaf)
        resid = y - F[:, 0]
        return ids, np.array([weighted_quantile(resid[g], w[g], self.alpha) for g in groups])

    def __call__(self, y, F, w):
        d = y - F[:, 0]
        return float(
            np.average(np.where(d > 0, self.alpha * d, (self.alpha - 1.0) * d), weights=w)
        )


class HuberLoss:
    """Huber's loss with ``delta`` the ``alpha``-quantile of ``|y - f|`` at each stage.

    ``L = d^2 / 2`` for ``|d| <= delta`` and ``delta (|d| - delta / 2)`` beyond, ``d = y - f``;
    ``r = d`` clipped to ``[-delta, delta]``. Leaf value (Friedman 2001, §4.4): with ``m`` the
    leaf's weighted median of ``d``, ``m + mean_w(sign(d - m) min(delta, |d - m|))``.
    """

    K = 1

    def __init__(self, alpha):
        self.alpha = alpha
        self.delta = np.inf

    def init(self, y, w):
        return np.array([weighted_quantile(y, w, 0.5)])

    def set_delta(self, y, F, w):
        self.delta = weighted_quantile(np.abs(y - F[:, 0]), w, self.alpha)

    def negative_gradient(self, y, F):
        return np.clip(y - F[:, 0], -self.delta, self.delta)[:, None]

    def leaf_values(self, leaf, y, F, r, w, k):
        ids, groups = _leaf_groups(leaf)
        resid = y - F[:, 0]
        out = np.empty(ids.shape[0])
        for j, g in enumerate(groups):
            m = weighted_quantile(resid[g], w[g], 0.5)
            d = resid[g] - m
            out[j] = m + np.average(np.sign(d) * np.minimum(self.delta, np.abs(d)), weights=w[g])
        return ids, out

    def __call__(self, y, F, w):
        d = np.abs(y - F[:, 0])
        delta = self.delta
        loss = np.where(d <= delta, 0.5 * d * d, delta * (d - 0.5 * delta))
        return float(np.average(loss, weights=w))


def _newton_leaves(leaf, g, h, w, factor=1.0):
    ids = np.unique(leaf)
    num = np.bincount(leaf, weights=w * g)[ids]
    den = np.bincount(leaf, weights=w * h)[ids]
    safe = den > _TINY_HESSIAN * np.bincount(leaf, weights=w)[ids]
    vals = np.zeros(ids.shape[0])
    vals[safe] = factor * num[safe] / den[safe]
    return ids, vals


class BinomialLoss:
    """Log-loss of two classes, ``F`` the log-odds, ``y`` in {0, 1}.

    ``L = log(1 + e^F) - y F``; ``r = y - p`` with ``p = sigma(F)``; leaf value one Newton step
    ``sum w r / sum w p (1 - p)`` (Friedman 2001, Algorithm 5).
    """

    K = 1

    def init(self, y, w):
        p = np.average(y, weights=w)
        return np.array([np.log(p) - np.log1p(-p)])

    def negative_gradient(self, y, F):
        return (y - sigmoid(F[:, 0]))[:, None]

    def leaf_values(self, leaf, y, F, r, w, k):
        p = y - r  # r = y - p
        return _newton_leaves(leaf, r, p * (1.0 - p), w)

    def __call__(self, y, F, w):
        f = F[:, 0]
        # Binomial deviance, twice the mean log-loss (scikit-learn's train_score_).
        return 2.0 * float(np.average(np.logaddexp(0.0, f) - y * f, weights=w))


class MultinomialLoss:
    """Log-loss of ``K`` classes with ``p_k = softmax(F)_k``; one tree per class per stage.

    ``r_k = 1{y = k} - p_k``; leaf value ``(K - 1)/K sum w r_k / sum w p_k (1 - p_k)``
    (Friedman 2001, Algorithm 6, a diagonal Newton step). ``init`` is ``log p_k`` centred to
    sum to zero.
    """

    def __init__(self, K):
        self.K = K

    def init(self, y, w):
        p = np.array([np.average(y == k, weights=w) for k in range(self.K)])
        logp = np.log(p)
        # Equal priors give exactly zero (rounding of the mean would break the tie).
        return np.zeros(self.K) if np.all(logp == logp[0]) else logp - logp.mean()

    def negative_gradient(self, y, F):
        P = np.exp(F - logsumexp(F, axis=1, keepdims=True))
        return (y[:, None] == np.arange(self.K)).astype(np.float64) - P

    def leaf_values(self, leaf, y, F, r, w, k):
        p = (y == k) - r
        return _newton_leaves(leaf, r, p * (1.0 - p), w, factor=(self.K - 1.0) / self.K)

    def __call__(self, y, F, w):
        lse = logsumexp(F, axis=1)
        return float(np.average(lse - F[np.arange(y.shape[0]), y], weights=w))
