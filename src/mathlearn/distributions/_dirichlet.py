"""Dirichlet and Dirichlet-multinomial distributions (batched on leading axes)."""

from __future__ import annotations

import numpy as np
from scipy.special import digamma, gammaln, xlogy

from ..utils.validation import check_random_state
from ._base import Distribution, _frozen_array, _size_tuple
from ._scipy_backed import _out, scalar_param

__all__ = ["Dirichlet", "DirichletMultinomial"]


def _check_alpha(alpha) -> np.ndarray:
    a = np.asarray(alpha, dtype=float)
    if a.ndim == 0 or a.shape[-1] < 2:
        raise ValueError("alpha must have at least two categories on its last axis.")
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"alpha must be finite and > 0; got {alpha!r}.")
    return a


class Dirichlet(Distribution):
    r"""Dirichlet distribution on the probability simplex.

    Parameters
    ----------
    alpha : array-like of shape (..., K)
        Positive concentration parameters; leading axes form a batch.

    See Also
    --------
    mathlearn.distributions.Beta
        The two-category case.
    mathlearn.distributions.DirichletCategoricalModel
        The Dirichlet as a conjugate prior.
    scipy.stats.dirichlet
        SciPy's equivalent.

    Notes
    -----
    :math:`\mathrm{Dir}(\mu|\alpha) = \frac{\Gamma(\alpha_0)}{\prod_k\Gamma(\alpha_k)}
    \prod_k \mu_k^{\alpha_k-1}`, :math:`\alpha_0 = \sum_k\alpha_k`; mean
    :math:`\alpha_k/\alpha_0`, mode :math:`(\alpha_k-1)/(\alpha_0-K)` for
    :math:`\alpha_k > 1`; the posterior after counts ``m`` is :math:`\mathrm{Dir}(\alpha+m)`
    (Stuttgart "Introduction to Machine Learning" slide 9:26).

    Examples
    --------
    >>> from mathlearn.distributions import Dirichlet
    >>> Dirichlet([1.0, 1.0, 2.0]).mean
    array([0.25, 0.25, 0.5 ])
    """

    def __init__(self, alpha):
        self._set(_alpha=_frozen_array(_check_alpha(alpha)))

    def _params(self):
        return {"alpha": self._alpha}

    @property
    def alpha(self) -> np.ndarray:
        return self._alpha

    @property
    def n_categories(self) -> int:
        return int(self._alpha.shape[-1])

    @property
    def batch_shape(self):
        return self._alpha.shape[:-1]

    @property
    def mean(self) -> np.ndarray:
        return self._alpha / self._alpha.sum(-1, keepdims=True)

    @property
    def var(self) -> np.ndarray:
        a0 = self._alpha.sum(-1, keepdims=True)
        m = self._alpha / a0
        return m * (1 - m) / (a0 + 1)

    @property
    def cov(self) -> np.ndarray:
        a0 = self._alpha.sum(-1)[..., None, None]
        m = self.mean
        return (
            np.eye(self.n_categories) * m[..., None, :] - m[..., :, None] * m[..., None, :]
        ) / (a0 + 1)

    @property
    def mode(self) -> np.ndarray:
        """``(alpha_k - 1) / (alpha_0 - K)`` for every ``alpha_k >= 1``, not all 1 (9:26).

        Components with ``alpha_k = 1`` get mode 0 (on the boundary of the simplex), so
        the MAP under a uniform prior equals the ML estimate even for unseen categories.
        """
        a = self._alpha
        if np.any(a < 1) or np.any(np.all(a == 1, axis=-1)):
            raise ValueError(
                "the Dirichlet mode is unique and finite only when every alpha_k >= 1, "
                "not all equal to 1."
            )
        return (self._alpha - 1) / (self._alpha.sum(-1, keepdims=True) - self.n_categories)

    def _log_norm(self):
        return gammaln(self._alpha.sum(-1)) - gammaln(self._alpha).sum(-1)

    def expected_log(self) -> np.ndarray:
        r"""``E[log mu_k] = psi(alpha_k) - psi(alpha_0)``, shape ``batch_shape + (K,)``.

        The expected sufficient statistic of the Dirichlet, which enters every variational
        update of a multinomial's parameters (LDA, variational mixtures): Oxford "Advanced
        Topics in Statistical Machine Learning" §2.8 (the digamma fact); PRML eq. B.21.

        Returns
        -------
        ndarray of shape (..., K)

        Examples
        --------
        The notes' example, ``alpha = (1, 2, 3)``:

        >>> import numpy as np
        >>> from mathlearn.distributions import Dirichlet
        >>> np.round(Dirichlet([1.0, 2.0, 3.0]).expected_log(), 6)
        array([-2.283333, -1.283333, -0.783333])
        """
        a = self._alpha
        out = digamma(a)
        out -= digamma(a.sum(-1, keepdims=True))  # in place: no second array of a's size
        return out

    def logpdf(self, x):
        """Log-density at points ``x`` of shape (..., K) on the simplex (-inf outside)."""
        x = np.asarray(x, dtype=float)
        if x.shape[-1:] != (self.n_categories,):
            raise ValueError(f"x must have last dimension {self.n_categories}.")
        inside = np.all(x >= 0, axis=-1) & np.isclose(x.sum(-1), 1.0, atol=1e-8)
        xs = np.clip(x, 0, None)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = self._log_norm() + xlogy(self._alpha - 1, xs).sum(-1)
        return _out(np.where(inside, out, -np.inf))

    def entropy(self):
        a = self._alpha
        a0 = a.sum(-1)
        k = self.n_categories
        return _out(-self._log_norm() + (a0 - k) * digamma(a0) - ((a - 1) * digamma(a)).sum(-1))

    def sample(self, size=None, rng=None) -> np.ndarray:
        """Points of the simplex, shape ``size + batch_shape + (K,)`` (normalised Gammas)."""
        rng = check_random_state(rng, name="rng")
        shape = _size_tuple(size) + self._alpha.shape
        g = rng.standard_gamma(np.broadcast_to(self._alpha, shape))
        return g / g.sum(-1, keepdims=True)


class DirichletMultinomial(Distribution):
    r"""Dirichlet-multinomial: multinomial counts whose probabilities are Dirichlet.

    The posterior predictive of the counts of ``n`` new trials under a Dirichlet
    posterior: :math:`p(m) = \frac{n!\,\Gamma(\alpha_0)}{\Gamma(n+\alpha_0)}
    \prod_k\frac{\Gamma(m_k+\alpha_k)}{m_k!\,\Gamma(\alpha_k)}`.

    Parameters
    ----------
    n : int
        Number of trials.
    alpha : array-like of shape (K,)

    See Also
    --------
    mathlearn.distributions.DirichletMultinomialModel
        The model whose posterior predictive it is.
    scipy.stats.dirichlet_multinomial
        SciPy's equivalent.

    Examples
    --------
    >>> from mathlearn.distributions import DirichletMultinomial
    >>> round(DirichletMultinomial(1, [1.0, 3.0]).pmf([0, 1]), 6)
    0.75
    """

    def __init__(self, n, alpha):
        n = int(scalar_param(n, "n", low=0, strict=False, integer=True))
        self._set(_n=n, _alpha=_frozen_array(_check_alpha(alpha)))

    def _params(self):
        return {"n": self._n, "alpha": self._alpha}

    @property
    def mean(self):
        return self._n * self._alpha / self._alpha.sum(-1, keepdims=True)

    @property
    def var(self):
        a0 = self._alpha.sum(-1, keepdims=True)
        p = self._alpha / a0
        return self._n * p * (1 - p) * (self._n + a0) / (1 + a0)

    def logpmf(self, x):
        x = np.asarray(x, dtype=float)
        if x.shape[-1:] != self._alpha.shape[-1:]:
            raise ValueError(f"x must have last dimension {self._alpha.shape[-1]}.")
        n, a = self._n, self._alpha
        valid = np.all((x >= 0) & (x == np.round(x)), axis=-1) & (x.sum(-1) == n)
        xs = np.clip(x, 0, None)
        out = (
            gammaln(n + 1)
            + gammaln(a.sum(-1))
            - gammaln(n + a.sum(-1))
            + (gammaln(xs + a) - gammaln(xs + 1) - gammaln(a)).sum(-1)
        )
        return _out(np.where(valid, out, -np.inf))

    logpdf = logpmf

    def pmf(self, x):
        return _out(np.exp(self.logpmf(x)))

    pdf = pmf

    def sample(self, size=None, rng=None) -> np.ndarray:
        rng = check_random_state(rng, name="rng")
        p = Dirichlet(self._alpha).sample(size, rng)
        return rng.multinomial(self._n, p)
