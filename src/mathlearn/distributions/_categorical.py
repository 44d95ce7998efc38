"""Categorical and multinomial distributions over ``K`` categories (batched on leading axes)."""

from __future__ import annotations

import numpy as np
import scipy.stats as st
from scipy.special import gammaln, xlogy

from ..utils.validation import check_random_state
from ._base import Distribution, _frozen_array, _size_tuple
from ._scipy_backed import _out, scalar_param

__all__ = ["Categorical", "Multinomial"]


def _check_probs(probs, name: str = "probs", atol: float = 1e-8) -> np.ndarray:
    p = np.asarray(probs, dtype=float)
    if p.ndim == 0 or p.shape[-1] < 1:
        raise ValueError(f"{name} must have at least one category on its last axis.")
    if not np.all(np.isfinite(p)):
        raise ValueError(f"{name} contains NaN or infinity.")
    if np.any(p < 0) or np.any(p > 1):
        raise ValueError(f"{name} must lie in [0, 1].")
    s = p.sum(axis=-1)
    if not np.allclose(s, 1.0, rtol=0.0, atol=atol):
        raise ValueError(f"{name} must sum to one over the last axis; sums are {s}.")
    return p / s[..., None]


class Categorical(Distribution):
    r"""Categorical distribution :math:`P(x = k) = \mu_k`, ``k`` in ``{0, ..., K-1}``.

    Parameters
    ----------
    probs : array-like of shape (..., K)
        Probabilities summing to one over the last axis; leading axes form a batch.

    Attributes
    ----------
    probs : ndarray of shape (..., K)
    n_categories : int
    mean, var : ndarray of shape (..., K)
        Moments of the one-hot encoding of ``x``: ``probs`` and ``probs (1 - probs)``.

    See Also
    --------
    mathlearn.distributions.Multinomial
        Counts of n categorical trials.
    mathlearn.distributions.DirichletCategoricalModel
        Bayesian inference of its probabilities.

    Notes
    -----
    :math:`P(D|\mu) = \prod_k \mu_k^{m_k}` with counts :math:`m_k`; the ML estimate is
    :math:`\hat\mu = m / n` (Stuttgart "Introduction to Machine Learning" slide 9:25). Conjugate
    prior: Dirichlet.

    Examples
    --------
    >>> from mathlearn.distributions import Categorical
    >>> Categorical([0.2, 0.5, 0.3]).pmf(1)
    0.5
    """

    def __init__(self, probs):
        self._set(_probs=_frozen_array(_check_probs(probs)))

    def _params(self):
        return {"probs": self._probs}

    @property
    def probs(self) -> np.ndarray:
        return self._probs

    @property
    def n_categories(self) -> int:
        return int(self._probs.shape[-1])

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self._probs.shape[:-1]

    @property
    def mean(self) -> np.ndarray:
        return self._probs

    @property
    def var(self) -> np.ndarray:
        return self._probs * (1.0 - self._probs)

    def _check_x(self, x) -> np.ndarray:
        x = np.asarray(x)
        if not np.all(np.isfinite(x)) or np.any(x != np.round(x)):
            raise ValueError("categories must be integers.")
        return x.astype(int)

    def logpmf(self, x):
        """Log-probability of the integer categories ``x`` (broadcast against the batch)."""
        x = self._check_x(x)
        inside = (x >= 0) & (x < self.n_categories)
        xi = np.where(inside, x, 0)
        shape = np.broadcast_shapes(x.shape, self.batch_shape)
        probs = np.broadcast_to(self._probs, (*shape, self.n_categories))
        p = np.take_along_axis(probs, np.broadcast_to(xi, shape)[..., None], axis=-1)[..., 0]
        with np.errstate(divide="ignore"):
            return _out(np.where(inside, np.log(p), -np.inf))

    logpdf = logpmf

    def pmf(self, x):
        return _out(np.exp(self.logpmf(x)))

    pdf = pmf

    def entropy(self):
        r""":math:`H = -\sum_k \mu_k \log \mu_k` in nats."""
        return _out(-np.sum(xlogy(self._probs, self._probs), axis=-1))

    @property
    def mode(self):
        return _out(np.argmax(self._probs, axis=-1))

    def sample(self, size=None, rng=None) -> np.ndarray:
        """Integer categories of shape ``size + batch_shape`` (inverse-cdf on the probs)."""
        rng = check_random_state(rng, name="rng")
        shape = _size_tuple(size) + self.batch_shape
        cdf = np.cumsum(self._probs, axis=-1)
        cdf[..., -1] = 1.0
        u = rng.random(shape)
        cdf_b = np.broadcast_to(cdf, (*shape, self.n_categories))
        return np.sum(u[..., None] >= cdf_b, axis=-1)

    @classmethod
    def fit(cls, x, n_categories: int | None = None) -> Categorical:
        """Maximum-likelihood fit: relative frequencies of the integer categories ``x``."""
        x = np.asarray(x).ravel()
        if x.size == 0:
            raise ValueError("need at least one sample.")
        if np.any(x < 0) or np.any(x != np.round(x)):
            raise ValueError("categories must be non-negative integers.")
        k = int(x.max()) + 1 if n_categories is None else int(n_categories)
        if np.any(x >= k):
            raise ValueError(f"categories must be < n_categories={k}.")
        return cls(np.bincount(x.astype(int), minlength=k) / x.size)


class Multinomial(Distribution):
    r"""Multinomial distribution of the counts of ``n`` categorical trials.

    Parameters
    ----------
    n : int
        Number of trials.
    probs : array-like of shape (..., K)
        Category probabilities.

    See Also
    --------
    mathlearn.distributions.Categorical
        One trial.
    mathlearn.distributions.DirichletMultinomialModel
        Bayesian inference of its probabilities.
    scipy.stats.multinomial
        SciPy's equivalent.

    Notes
    -----
    :math:`\mathrm{Mult}(m|n,\mu) = \frac{n!}{\prod_k m_k!}\prod_k \mu_k^{m_k}`, mean
    :math:`n\mu`, covariance :math:`n(\mathrm{diag}\,\mu - \mu\mu^T)` (Stuttgart "Introduction to
    Machine Learning" slide 9:25).

    Examples
    --------
    >>> from mathlearn.distributions import Multinomial
    >>> Multinomial(4, [0.5, 0.5]).mean
    array([2., 2.])
    """

    def __init__(self, n, probs):
        n = int(scalar_param(n, "n", low=0, strict=False, integer=True))
        self._set(_n=n, _probs=_frozen_array(_check_probs(probs)))

    def _params(self):
        return {"n": self._n, "probs": self._probs}

    @property
    def n(self) -> int:
        return self._n

    @property
    def probs(self) -> np.ndarray:
        return self._probs

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self._probs.shape[:-1]

    @property
    def mean(self) -> np.ndarray:
        return self._n * self._probs

    @property
    def var(self) -> np.ndarray:
        return self._n * self._probs * (1 - self._probs)

    @property
    def cov(self) -> np.ndarray:
        p = self._probs
        return self._n * (
            np.eye(p.shape[-1]) * p[..., None, :] - p[..., :, None] * p[..., None, :]
        )

    def logpmf(self, x):
        """Log-probability of the count vectors ``x`` of shape (..., K)."""
        x = np.asarray(x, dtype=float)
        if x.shape[-1:] != self._probs.shape[-1:]:
            raise ValueError(f"x must have last dimension {self._probs.shape[-1]}.")
        if np.any(np.isnan(x)):
            # NaN is missing data, not a count outside the support.
            raise ValueError("x contains NaN.")
        valid = np.all((x >= 0) & (x == np.round(x)), axis=-1) & (x.sum(-1) == self._n)
        xs = np.where(x >= 0, x, 0)
        out = gammaln(self._n + 1) - gammaln(xs + 1).sum(-1) + xlogy(xs, self._probs).sum(-1)
        return _out(np.where(valid, out, -np.inf))

    logpdf = logpmf

    def pmf(self, x):
        return _out(np.exp(self.logpmf(x)))

    pdf = pmf

    def entropy(self):
        return _out(st.multinomial(self._n, self._probs).entropy())

    def sample(self, size=None, rng=None) -> np.ndarray:
        """Count vectors of shape ``size + batch_shape + (K,)``."""
        rng = check_random_state(rng, name="rng")
        shape = _size_tuple(size) + self.batch_shape
        return rng.multinomial(
            self._n, np.broadcast_to(self._probs, shape + self._probs.shape[-1:])
        )
