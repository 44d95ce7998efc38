"""Conjugate Bayesian models: posterior updates, posterior predictives, marginal likelihoods.

Each model holds its current belief about the parameter (``prior``, a distribution) and is
an immutable value: ``update(data)`` returns a NEW model whose prior is the posterior, so
sequential updating is ``m.update(x1).update(x2)`` and equals ``m.update(x1 + x2)``.

Every model exposes

* ``prior`` – the distribution over the parameter;
* ``update(data)`` / ``posterior(data)`` – the updated model / the posterior distribution;
* ``predictive()`` – the posterior predictive distribution of a new observation;
* ``log_marginal_likelihood(data)`` – :math:`\\log p(D)`, the evidence, so that Bayes factors
  between models are one call (:func:`bayes_factor`);
* ``map_estimate(data)`` and ``ml_estimate(data)`` – the MAP and ML point estimates.

The update formulas are the standard conjugate ones (Imperial "Mathematics for Inference and
Machine Learning" §1.2.4 and Table 1.1; Stuttgart "Introduction to Machine Learning" slides 9:22,
9:26, 9:31, 9:36; Bishop §2.3.6 and Murphy, "Conjugate Bayesian analysis of the Gaussian
distribution", for the Normal–Gamma and Normal–Wishart cases, which the notes name but do not
derive).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla
from numpy.typing import ArrayLike
from scipy.special import betaln, gammaln, multigammaln

from ._base import Distribution
from ._categorical import Categorical
from ._dirichlet import Dirichlet, DirichletMultinomial
from ._mvn import MultivariateNormal, _factor_cov
from ._mvt import MultivariateStudentT
from ._normal_gamma import NormalGamma, NormalWishart
from ._scipy_backed import scalar_param
from ._univariate import Bernoulli, Beta, BetaBinomial, Gamma, Normal, StudentT

__all__ = [
    "BetaBernoulliModel",
    "BetaBinomialModel",
    "ConjugateModel",
    "DirichletCategoricalModel",
    "DirichletMultinomialModel",
    "GammaPrecisionModel",
    "NormalGammaModel",
    "NormalKnownVarianceModel",
    "NormalWishartModel",
    "bayes_factor",
    "log_marginal_likelihood",
]

_LOG_2PI = float(np.log(2 * np.pi))


def _real_data(x, name="data") -> np.ndarray:
    x = np.asarray(x, dtype=float).ravel()
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return x


def _nonempty(n: int) -> None:
    # Maximum likelihood has no prior to fall back on: without data it is undefined.
    if n == 0:
        raise ValueError("the ML estimate needs at least one observation; got none.")


def _binary_data(x) -> np.ndarray:
    x = _real_data(x)
    if not np.all((x == 0) | (x == 1)):
        raise ValueError("binary data must be 0 or 1.")
    return x


def _single_dirichlet(alpha) -> Dirichlet:
    prior = Dirichlet(alpha)
    if prior.alpha.ndim != 1:
        raise ValueError(f"alpha must be a 1-D vector; got shape {prior.alpha.shape}.")
    return prior


class ConjugateModel(Distribution):
    """Base class of the conjugate models (see the module docstring).

    A model holds the prior of a parameter; ``update(data)`` returns the model whose prior is
    the posterior (so updates chain: sequential learning), ``posterior(data)`` that posterior,
    and ``log_marginal_likelihood(data)`` the evidence ``log p(data)``.

    See Also
    --------
    mathlearn.distributions.BetaBernoulliModel
        A subclass.
    mathlearn.distributions.NormalWishartModel
        A subclass.

    Examples
    --------
    >>> from mathlearn.distributions import BetaBernoulliModel, ConjugateModel
    >>> model = BetaBernoulliModel(1, 1)
    >>> isinstance(model, ConjugateModel)
    True
    >>> model.update([1]).update([1, 0]).posterior([]).mean == model.posterior([1, 1, 0]).mean
    True
    """

    prior: Distribution

    def posterior(self, data) -> Distribution:
        """Posterior distribution of the parameter after observing ``data``."""
        return self.update(data).prior

    def update(self, data) -> ConjugateModel:  # pragma: no cover - abstract
        raise NotImplementedError

    def log_marginal_likelihood(self, data) -> float:  # pragma: no cover - abstract
        raise NotImplementedError


class BetaBernoulliModel(ConjugateModel):
    r"""Bernoulli observations with a Beta prior on the success probability :math:`\mu`.

    Parameters
    ----------
    a, b : float, default=1
        Prior ``Beta(a, b)``; ``a = b = 1`` is uniform.

    See Also
    --------
    mathlearn.distributions.Beta
        The prior and posterior.
    mathlearn.distributions.BetaBinomialModel
        Counts instead of single trials.

    Notes
    -----
    With :math:`h` ones and :math:`t` zeros the posterior is :math:`\mathrm{Beta}(a+h, b+t)`
    (Imperial "Mathematics for Inference and Machine Learning" §1.2.4, eq. 1.53–1.56; Stuttgart
    "Introduction to Machine Learning" slide 9:22); the predictive is
    :math:`\mathrm{Bernoulli}(a/(a+b))`; the evidence of the sequence is
    :math:`B(a+h, b+t)/B(a, b)`.

    Examples
    --------
    >>> from mathlearn.distributions import BetaBernoulliModel
    >>> BetaBernoulliModel(1, 1).posterior([1, 1, 0]).mean
    0.6
    """

    def __init__(self, a=1.0, b=1.0):
        self._set(prior=Beta(scalar_param(a, "a", low=0.0), scalar_param(b, "b", low=0.0)))

    def _params(self):
        return {"a": self.prior.a, "b": self.prior.b}

    def _counts(self, data):
        x = _binary_data(data)
        return x.sum(), x.size - x.sum()

    def update(self, data) -> BetaBernoulliModel:
        h, t = self._counts(data)
        return BetaBernoulliModel(self.prior.a + h, self.prior.b + t)

    def update_counts(self, n_ones, n_zeros) -> BetaBernoulliModel:
        """Update from counts of ones and zeros instead of a sequence."""
        if n_ones < 0 or n_zeros < 0:
            raise ValueError("counts must be non-negative.")
        return BetaBernoulliModel(self.prior.a + n_ones, self.prior.b + n_zeros)

    def predictive(self) -> Bernoulli:
        return Bernoulli(self.prior.mean)

    def predictive_counts(self, n) -> BetaBinomial:
        """Predictive of the number of ones in ``n`` new trials: Beta-binomial."""
        return BetaBinomial(n, self.prior.a, self.prior.b)

    def log_marginal_likelihood(self, data) -> float:
        h, t = self._counts(data)
        a, b = self.prior.a, self.prior.b
        return float(betaln(a + h, b + t) - betaln(a, b))

    def map_estimate(self, data) -> float:
        """Posterior mode ``(a + h - 1) / (a + b + n - 2)``."""
        return self.posterior(data).mode

    @staticmethod
    def ml_estimate(data) -> float:
        """Fraction of ones."""
        x = _binary_data(data)
        _nonempty(x.size)
        return float(np.mean(x))


class BetaBinomialModel(ConjugateModel):
    r"""Binomial counts out of ``n_trials`` with a Beta prior on the success probability.

    Parameters
    ----------
    n_trials : int
        Trials per observation.
    a, b : float, default=1

    See Also
    --------
    mathlearn.distributions.BetaBinomial
        Its posterior predictive.
    mathlearn.distributions.BetaBernoulliModel
        Single trials.

    Notes
    -----
    Observations :math:`k_i \sim \mathrm{Bin}(n, \mu)`; posterior
    :math:`\mathrm{Beta}(a + \sum k_i, b + \sum (n - k_i))`; predictive
    :math:`\mathrm{BetaBinomial}(n, a, b)`; evidence
    :math:`\prod_i\binom{n}{k_i}\,B(a+\sum k, b+\sum(n-k))/B(a,b)`.

    Examples
    --------
    >>> from mathlearn.distributions import BetaBinomialModel
    >>> BetaBinomialModel(10).posterior([7]).mean
    0.6666666666666666
    """

    def __init__(self, n_trials, a=1.0, b=1.0):
        n_trials = int(scalar_param(n_trials, "n_trials", low=1, strict=False, integer=True))
        a, b = scalar_param(a, "a", low=0.0), scalar_param(b, "b", low=0.0)
        self._set(n_trials=n_trials, prior=Beta(a, b))

    def _params(self):
        return {"n_trials": self.n_trials, "a": self.prior.a, "b": self.prior.b}

    def _check(self, data):
        k = _real_data(data)
        if np.any(k < 0) or np.any(k > self.n_trials) or np.any(k != np.round(k)):
            raise ValueError(f"counts must be integers in [0, {self.n_trials}].")
        return k

    def update(self, data) -> BetaBinomialModel:
        k = self._check(data)
        return BetaBinomialModel(
            self.n_trials, self.prior.a + k.sum(), self.prior.b + (self.n_trials - k).sum()
        )

    def predictive(self) -> BetaBinomial:
        return BetaBinomial(self.n_trials, self.prior.a, self.prior.b)

    def log_marginal_likelihood(self, data) -> float:
        k = self._check(data)
        n = self.n_trials
        log_binom = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
        a, b = self.prior.a, self.prior.b
        return float(log_binom.sum() + betaln(a + k.sum(), b + (n - k).sum()) - betaln(a, b))

    def map_estimate(self, data) -> float:
        return self.posterior(data).mode

    def ml_estimate(self, data) -> float:
        k = self._check(data)
        _nonempty(k.size)
        return float(k.sum() / (k.size * self.n_trials))


class DirichletCategoricalModel(ConjugateModel):
    r"""Categorical observations with a Dirichlet prior on the probabilities.

    Parameters
    ----------
    alpha : array-like of shape (K,)

    See Also
    --------
    mathlearn.distributions.Dirichlet
        The prior and posterior.
    mathlearn.distributions.DirichletMultinomialModel
        Count vectors.

    Notes
    -----
    Posterior :math:`\mathrm{Dir}(\alpha + m)` with counts :math:`m` (Stuttgart "Introduction to
    Machine Learning" slide 9:26); predictive :math:`\mathrm{Cat}(\alpha/\alpha_0)`; evidence
    :math:`\frac{\Gamma(\alpha_0)}{\Gamma(\alpha_0+n)}\prod_k
    \frac{\Gamma(\alpha_k+m_k)}{\Gamma(\alpha_k)}`.

    Examples
    --------
    >>> from mathlearn.distributions import DirichletCategoricalModel
    >>> DirichletCategoricalModel([1, 1, 1]).posterior([0, 0, 2]).alpha
    array([3., 1., 2.])
    """

    def __init__(self, alpha):
        self._set(prior=_single_dirichlet(alpha))

    def _params(self):
        return {"alpha": self.prior.alpha}

    def _counts(self, data):
        x = _real_data(data)
        k = self.prior.n_categories
        if np.any(x < 0) or np.any(x >= k) or np.any(x != np.round(x)):
            raise ValueError(f"categories must be integers in [0, {k}).")
        return np.bincount(x.astype(int), minlength=k).astype(float)

    def update(self, data) -> DirichletCategoricalModel:
        return DirichletCategoricalModel(self.prior.alpha + self._counts(data))

    def update_counts(self, counts) -> DirichletCategoricalModel:
        counts = np.asarray(counts, dtype=float)
        if counts.shape != self.prior.alpha.shape or np.any(counts < 0):
            raise ValueError("counts must be non-negative with one entry per category.")
        return DirichletCategoricalModel(self.prior.alpha + counts)

    def predictive(self) -> Categorical:
        return Categorical(self.prior.mean)

    def log_marginal_likelihood(self, data) -> float:
        m = self._counts(data)
        a = self.prior.alpha
        return float(
            gammaln(a.sum()) - gammaln(a.sum() + m.sum()) + np.sum(gammaln(a + m) - gammaln(a))
        )

    def map_estimate(self, data) -> np.ndarray:
        return self.posterior(data).mode

    def ml_estimate(self, data) -> np.ndarray:
        m = self._counts(data)
        _nonempty(int(m.sum()))
        return m / m.sum()


class DirichletMultinomialModel(ConjugateModel):
    r"""Multinomial count vectors (``n_trials`` each) with a Dirichlet prior.

    Parameters
    ----------
    n_trials : int
    alpha : array-like of shape (K,)

    See Also
    --------
    mathlearn.distributions.DirichletMultinomial
        Its posterior predictive.
    mathlearn.distributions.DirichletCategoricalModel
        Single draws.

    Notes
    -----
    Posterior :math:`\mathrm{Dir}(\alpha + \sum_i m_i)`; predictive
    Dirichlet-multinomial; evidence includes the multinomial coefficients.

    Examples
    --------
    >>> from mathlearn.distributions import DirichletMultinomialModel
    >>> DirichletMultinomialModel(3, [1, 1]).posterior([[2, 1], [3, 0]]).alpha
    array([6., 2.])
    """

    def __init__(self, n_trials, alpha):
        n_trials = int(scalar_param(n_trials, "n_trials", low=1, strict=False, integer=True))
        self._set(n_trials=n_trials, prior=_single_dirichlet(alpha))

    def _params(self):
        return {"n_trials": self.n_trials, "alpha": self.prior.alpha}

    def _check(self, data):
        m = np.atleast_2d(np.asarray(data, dtype=float))
        k = self.prior.n_categories
        if m.ndim != 2 or m.shape[1] != k:
            raise ValueError(f"data must be count vectors of length {k}.")
        if np.any(m < 0) or np.any(m != np.round(m)) or np.any(m.sum(1) != self.n_trials):
            raise ValueError(f"each count vector must hold integers summing to {self.n_trials}.")
        return m

    def update(self, data) -> DirichletMultinomialModel:
        return DirichletMultinomialModel(
            self.n_trials, self.prior.alpha + self._check(data).sum(0)
        )

    def predictive(self) -> DirichletMultinomial:
        return DirichletMultinomial(self.n_trials, self.prior.alpha)

    def log_marginal_likelihood(self, data) -> float:
        m = self._check(data)
        a = self.prior.alpha
        tot = m.sum(0)
        log_coef = np.sum(gammaln(self.n_trials + 1) - gammaln(m + 1).sum(1))
        return float(
            log_coef
            + gammaln(a.sum())
            - gammaln(a.sum() + tot.sum())
            + np.sum(gammaln(a + tot) - gammaln(a))
        )

    def map_estimate(self, data) -> np.ndarray:
        return self.posterior(data).mode

    def ml_estimate(self, data) -> np.ndarray:
        m = self._check(data)
        _nonempty(m.size)
        tot = m.sum(0)
        return tot / tot.sum()


class NormalKnownVarianceModel(ConjugateModel):
    r"""Gaussian observations with known variance and a Gaussian prior on the mean.

    Parameters
    ----------
    prior_mean : float
        :math:`m_0`.
    prior_var : float
        :math:`v_0 > 0`.
    noise_var : float
        Known observation variance :math:`\sigma^2 > 0`.

    See Also
    --------
    mathlearn.distributions.Normal
        The prior, posterior and predictive.
    mathlearn.distributions.NormalGammaModel
        Unknown variance as well.

    Notes
    -----
    Posterior :math:`N(m_n, v_n)` with :math:`v_n^{-1} = v_0^{-1} + n/\sigma^2` and
    :math:`m_n = v_n(m_0/v_0 + \sum_i x_i/\sigma^2)` (Stuttgart "Introduction to Machine Learning"
    slide 9:36, with the prior term that the notes omit; a product of Gaussians, Imperial
    "Mathematics for Inference and Machine Learning" §1.2.3.5, eq. 1.42–1.44). Predictive
    :math:`N(m_n, v_n + \sigma^2)`; evidence
    :math:`N(x | m_0 \mathbf 1, \sigma^2 I + v_0 \mathbf 1\mathbf 1^T)`.

    Examples
    --------
    >>> from mathlearn.distributions import NormalKnownVarianceModel
    >>> NormalKnownVarianceModel(0.0, 1.0, 1.0).posterior([2.0]).mean
    1.0
    """

    def __init__(self, prior_mean=0.0, prior_var=1.0, noise_var=1.0):
        prior = Normal(
            scalar_param(prior_mean, "prior_mean"), scalar_param(prior_var, "prior_var", low=0.0)
        )
        noise_var = scalar_param(noise_var, "noise_var", low=0.0)
        self._set(prior=prior, noise_var=noise_var)

    def _params(self):
        return {
            "prior_mean": self.prior.mean,
            "prior_var": self.prior.var,
            "noise_var": self.noise_var,
        }

    def update(self, data) -> NormalKnownVarianceModel:
        x = _real_data(data)
        prec = 1.0 / self.prior.var + x.size / self.noise_var
        vn = 1.0 / prec
        mn = vn * (self.prior.mean / self.prior.var + x.sum() / self.noise_var)
        return NormalKnownVarianceModel(mn, vn, self.noise_var)

    def predictive(self) -> Normal:
        return Normal(self.prior.mean, self.prior.var + self.noise_var)

    def log_marginal_likelihood(self, data) -> float:
        x = _real_data(data)
        n, s2, v0 = x.size, self.noise_var, self.prior.var
        r = x - self.prior.mean
        # Matrix determinant lemma and Sherman–Morrison on sigma^2 I + v0 1 1^T.
        logdet = n * np.log(s2) + np.log1p(n * v0 / s2)
        quad = (r @ r - v0 * r.sum() ** 2 / (s2 + n * v0)) / s2
        return float(-0.5 * (n * _LOG_2PI + logdet + quad))

    def map_estimate(self, data) -> float:
        return self.posterior(data).mean

    @staticmethod
    def ml_estimate(data) -> float:
        x = _real_data(data)
        _nonempty(x.size)
        return float(np.mean(x))


class GammaPrecisionModel(ConjugateModel):
    r"""Gaussian observations with known mean and a Gamma prior on the precision.

    Parameters
    ----------
    mean : float
        Known mean :math:`\mu`.
    shape, rate : float
        Prior :math:`\mathrm{Gam}(\tau|a, b)` (rate parametrisation).

    See Also
    --------
    mathlearn.distributions.Gamma
        The prior and posterior.
    mathlearn.distributions.NormalGammaModel
        Unknown mean as well.

    Notes
    -----
    Posterior :math:`\mathrm{Gam}(a + n/2, b + \tfrac12\sum_i(x_i-\mu)^2)` (Imperial "Mathematics
    for Inference and Machine Learning" §1.2.3.6, footnote 12; Stuttgart "Introduction to Machine
    Learning" slide 9:31). Predictive Student t with :math:`2a` dof, location :math:`\mu`, scale
    :math:`\sqrt{b/a}`. Evidence
    :math:`\frac{\Gamma(a_n)}{\Gamma(a)}\frac{b^a}{b_n^{a_n}}(2\pi)^{-n/2}`.

    Examples
    --------
    >>> from mathlearn.distributions import GammaPrecisionModel
    >>> GammaPrecisionModel(0.0, 1.0, 1.0).posterior([1.0, -1.0]).rate
    2.0
    """

    def __init__(self, mean=0.0, shape=1.0, rate=1.0):
        shape, rate = scalar_param(shape, "shape", low=0.0), scalar_param(rate, "rate", low=0.0)
        self._set(mean=scalar_param(mean, "mean"), prior=Gamma(shape, rate))

    def _params(self):
        return {"mean": self.mean, "shape": self.prior.shape, "rate": self.prior.rate}

    def update(self, data) -> GammaPrecisionModel:
        x = _real_data(data)
        return GammaPrecisionModel(
            self.mean,
            self.prior.shape + 0.5 * x.size,
            self.prior.rate + 0.5 * np.sum((x - self.mean) ** 2),
        )

    def predictive(self) -> StudentT:
        a, b = self.prior.shape, self.prior.rate
        return StudentT(2 * a, self.mean, np.sqrt(b / a))

    def log_marginal_likelihood(self, data) -> float:
        x = _real_data(data)
        post = self.update(x).prior
        a, b, an, bn = self.prior.shape, self.prior.rate, post.shape, post.rate
        return float(
            gammaln(an) - gammaln(a) + a * np.log(b) - an * np.log(bn) - 0.5 * x.size * _LOG_2PI
        )

    def map_estimate(self, data) -> float:
        """Posterior mode of the precision, ``(a_n - 1) / b_n`` (needs a_n >= 1)."""
        post = self.posterior(data)
        if post.shape < 1:
            raise ValueError("the posterior mode is at zero (shape < 1).")
        return float((post.shape - 1) / post.rate)

    def ml_estimate(self, data) -> float:
        """``1 / mean((x - mu)^2)``."""
        x = _real_data(data)
        _nonempty(x.size)
        ss = np.mean((x - self.mean) ** 2)
        if ss == 0:
            raise ValueError("every observation equals the mean: the ML precision is infinite.")
        return float(1.0 / ss)


class NormalGammaModel(ConjugateModel):
    r"""Gaussian observations with unknown mean and precision, Normal–Gamma prior.

    Parameters
    ----------
    mean, kappa, shape, rate : float
        Prior :math:`N(\mu|m_0,(\kappa_0\tau)^{-1})\mathrm{Gam}(\tau|a_0,b_0)`.

    See Also
    --------
    mathlearn.distributions.NormalGamma
        The prior and posterior.
    mathlearn.distributions.NormalWishartModel
        The multivariate case.

    Notes
    -----
    With :math:`n` observations of mean :math:`\bar x`:
    :math:`\kappa_n = \kappa_0 + n`, :math:`m_n = (\kappa_0 m_0 + n\bar x)/\kappa_n`,
    :math:`a_n = a_0 + n/2`, :math:`b_n = b_0 + \tfrac12\sum(x_i-\bar x)^2 +
    \frac{\kappa_0 n(\bar x - m_0)^2}{2\kappa_n}`. Predictive: Student t with :math:`2a_n`
    dof, location :math:`m_n`, scale :math:`\sqrt{b_n(\kappa_n+1)/(a_n\kappa_n)}`. Evidence
    :math:`\frac{\Gamma(a_n)}{\Gamma(a_0)}\frac{b_0^{a_0}}{b_n^{a_n}}
    \sqrt{\kappa_0/\kappa_n}(2\pi)^{-n/2}`.

    Examples
    --------
    >>> from mathlearn.distributions import NormalGammaModel
    >>> NormalGammaModel(0.0, 1.0, 1.0, 1.0).posterior([1.0, 3.0]).params
    (1.3333333333333333, 3.0, 2.0, 3.333333333333333)
    """

    def __init__(self, mean=0.0, kappa=1.0, shape=1.0, rate=1.0):
        self._set(prior=NormalGamma(mean, kappa, shape, rate))

    def _params(self):
        m, k, a, b = self.prior.params
        return {"mean": m, "kappa": k, "shape": a, "rate": b}

    def update(self, data) -> NormalGammaModel:
        x = _real_data(data)
        m0, k0, a0, b0 = self.prior.params
        n = x.size
        if n == 0:
            return self
        xbar = x.mean()
        kn = k0 + n
        mn = (k0 * m0 + n * xbar) / kn
        an = a0 + 0.5 * n
        bn = b0 + 0.5 * np.sum((x - xbar) ** 2) + k0 * n * (xbar - m0) ** 2 / (2 * kn)
        return NormalGammaModel(mn, kn, an, bn)

    def predictive(self) -> StudentT:
        m, k, a, b = self.prior.params
        return StudentT(2 * a, m, np.sqrt(b * (k + 1) / (a * k)))

    def log_marginal_likelihood(self, data) -> float:
        x = _real_data(data)
        _, k0, a0, b0 = self.prior.params
        _, kn, an, bn = self.update(x).prior.params
        return float(
            gammaln(an)
            - gammaln(a0)
            + a0 * np.log(b0)
            - an * np.log(bn)
            + 0.5 * (np.log(k0) - np.log(kn))
            - 0.5 * x.size * _LOG_2PI
        )

    def map_estimate(self, data) -> tuple[float, float]:
        """Joint posterior mode ``(mu, tau)``."""
        mu, tau = self.posterior(data).mode
        return float(mu), float(tau)

    @staticmethod
    def ml_estimate(data) -> tuple[float, float]:
        r"""``(mean, precision) = (x_bar, 1 / sigma^2_ML)`` with the biased
        :math:`\sigma^2_{ML} = \frac1N\sum(x_i-\bar x)^2` (PRML §1.2.4)."""
        fit = Normal.fit(_real_data(data))
        return float(fit.mean), float(1.0 / fit.var)


class NormalWishartModel(ConjugateModel):
    r"""Multivariate Gaussian observations with unknown mean and precision, Normal–Wishart
    prior.

    Parameters
    ----------
    mean : array-like of shape (d,)
    kappa : float
    df : float
        :math:`\nu_0 > d - 1`.
    scale : array-like of shape (d, d)
        Wishart scale :math:`W_0`.

    See Also
    --------
    mathlearn.distributions.NormalWishart
        The prior and posterior.
    mathlearn.distributions.NormalGammaModel
        The univariate case.

    Notes
    -----
    :math:`\kappa_n = \kappa_0 + n`, :math:`\nu_n = \nu_0 + n`,
    :math:`m_n = (\kappa_0 m_0 + n\bar x)/\kappa_n`,
    :math:`W_n^{-1} = W_0^{-1} + S + \frac{\kappa_0 n}{\kappa_n}(\bar x - m_0)(\bar x -
    m_0)^T`, :math:`S = \sum_i (x_i-\bar x)(x_i-\bar x)^T`. Predictive: multivariate
    Student t with :math:`\nu_n - d + 1` dof, location :math:`m_n`, shape
    :math:`\frac{\kappa_n+1}{\kappa_n(\nu_n-d+1)}W_n^{-1}`. Evidence
    :math:`\pi^{-nd/2}\frac{\Gamma_d(\nu_n/2)}{\Gamma_d(\nu_0/2)}
    \frac{|W_n|^{\nu_n/2}}{|W_0|^{\nu_0/2}}(\kappa_0/\kappa_n)^{d/2}`.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.distributions import NormalWishartModel
    >>> m = NormalWishartModel(np.zeros(2), 1.0, 3.0, np.eye(2))
    >>> m.posterior([[1.0, 1.0]]).params[0]
    array([0.5, 0.5])
    """

    def __init__(self, mean, kappa, df, scale):
        self._set(prior=NormalWishart(mean, kappa, df, scale))

    def _params(self):
        m, k, nu, W = self.prior.params
        return {"mean": m, "kappa": k, "df": nu, "scale": W}

    def _check(self, data) -> np.ndarray:
        X = np.asarray(data, dtype=float)
        if X.ndim == 1:
            X = X.reshape(1, -1)
        if X.ndim != 2 or X.shape[1] != self.prior.dim:
            raise ValueError(f"data must have shape (n, {self.prior.dim}); got {X.shape}.")
        if not np.all(np.isfinite(X)):
            raise ValueError("data contains NaN or infinity.")
        return X

    def update(self, data) -> NormalWishartModel:
        X = self._check(data)
        m0, k0, nu0, _W0 = self.prior.params
        n = X.shape[0]
        if n == 0:
            return self
        xbar = X.mean(0)
        dev = X - xbar
        kn, nun = k0 + n, nu0 + n
        mn = (k0 * m0 + n * xbar) / kn
        W0inv = sla.cho_solve((self.prior._LW, True), np.eye(len(m0)), check_finite=False)
        diff = xbar - m0
        Wn_inv = W0inv + dev.T @ dev + (k0 * n / kn) * np.outer(diff, diff)
        L = _factor_cov(0.5 * (Wn_inv + Wn_inv.T), jitter=None, name="posterior inverse scale")
        Wn = sla.cho_solve((L, True), np.eye(len(m0)), check_finite=False)
        return NormalWishartModel(mn, kn, nun, 0.5 * (Wn + Wn.T))

    def predictive(self) -> MultivariateStudentT:
        m, k, nu, _W = self.prior.params
        d = len(m)
        dof = nu - d + 1
        Winv = sla.cho_solve((self.prior._LW, True), np.eye(d), check_finite=False)
        return MultivariateStudentT(dof, m, (k + 1) / (k * dof) * Winv)

    def log_marginal_likelihood(self, data) -> float:
        X = self._check(data)
        n, d = X.shape
        post = self.update(X).prior
        _, k0, nu0, _ = self.prior.params
        _, kn, nun, _ = post.params
        logdet0 = 2 * np.sum(np.log(np.diag(self.prior._LW)))
        logdetn = 2 * np.sum(np.log(np.diag(post._LW)))
        return float(
            -0.5 * n * d * np.log(np.pi)
            + multigammaln(nun / 2, d)
            - multigammaln(nu0 / 2, d)
            + 0.5 * nun * logdetn
            - 0.5 * nu0 * logdet0
            + 0.5 * d * (np.log(k0) - np.log(kn))
        )

    def map_estimate(self, data) -> tuple[np.ndarray, np.ndarray]:
        r"""Joint posterior mode ``(m_n, (nu_n - d) W_n)`` (needs :math:`\nu_n > d`)."""
        m, _, nu, W = self.posterior(data).params
        if nu <= len(m):
            raise ValueError("the joint mode needs df > d.")
        return m, (nu - len(m)) * W

    def ml_estimate(self, data) -> tuple[np.ndarray, np.ndarray]:
        """``(mean, covariance)`` with the biased 1/N ML covariance."""
        X = self._check(data)
        _nonempty(X.shape[0])
        xbar = X.mean(0)
        dev = X - xbar
        return xbar, dev.T @ dev / X.shape[0]


def log_marginal_likelihood(model: Any, data: ArrayLike) -> float:
    r"""Log evidence ``log p(data | model)`` of a conjugate model or a fixed distribution.

    Parameters
    ----------
    model : ConjugateModel or Distribution
        A conjugate model (its parameter integrated out against its prior) or a plain
        distribution (no free parameter, e.g. ``Bernoulli(0.5)`` for a fair coin), whose
        evidence is its i.i.d. likelihood ``sum(model.logpdf(data))``.
    data : array-like
        Observations in the format the model expects.

    Returns
    -------
    float

    Notes
    -----
    :math:`p(D) = \int p(D|\theta)p(\theta)d\theta`; for conjugate models in closed form.

    Examples
    --------
    >>> from mathlearn.distributions import BetaBernoulliModel, log_marginal_likelihood
    >>> round(log_marginal_likelihood(BetaBernoulliModel(1, 1), [1, 0]), 6)  # log(1/6)
    -1.791759
    """
    if isinstance(model, ConjugateModel):
        return model.log_marginal_likelihood(data)
    if isinstance(model, MultivariateNormal):
        return float(np.sum(model.logpdf(np.atleast_2d(np.asarray(data, dtype=float)))))
    if hasattr(model, "logpdf"):
        return float(np.sum(model.logpdf(np.asarray(data, dtype=float))))
    raise TypeError(f"cannot compute the evidence of a {type(model).__name__}.")


def bayes_factor(model_1: Any, model_2: Any, data: ArrayLike, *, log: bool = False) -> float:
    r"""Bayes factor :math:`p(D|M_1)/p(D|M_2)` between two models of the same data.

    Parameters
    ----------
    model_1, model_2 : ConjugateModel or Distribution
        A conjugate model (its parameter integrated out) or a fixed distribution.
    data : array-like
    log : bool, default=False
        Return the log Bayes factor.

    Examples
    --------
    Fair coin against a coin of unknown bias (uniform prior), after 9 heads in 10 flips:

    >>> from mathlearn.distributions import Bernoulli, BetaBernoulliModel, bayes_factor
    >>> flips = [1, 1, 1, 1, 1, 1, 1, 1, 1, 0]
    >>> round(bayes_factor(Bernoulli(0.5), BetaBernoulliModel(1, 1), flips), 4)
    0.1074
    """
    lb = log_marginal_likelihood(model_1, data) - log_marginal_likelihood(model_2, data)
    return float(lb) if log else float(np.exp(lb))
