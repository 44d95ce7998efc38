"""Probability distributions, Gaussian algebra, KL divergences and conjugate updates.

Distributions are immutable value objects (not estimators): they are built once from their
parameters (validated at construction), and every operation returns a new object. They share
one vocabulary: ``logpdf``/``pdf`` (``logpmf``/``pmf`` for discrete ones), ``cdf`` where
defined, ``sample(size, rng)``, ``mean``, ``var`` (or ``cov``) and ``entropy()``.

* Discrete: :class:`Bernoulli`, :class:`Binomial`, :class:`BetaBinomial`,
  :class:`Categorical`, :class:`Multinomial`, :class:`DirichletMultinomial`,
  :class:`ProbabilityTable` (joint/marginal/conditional tables) and :func:`bayes_rule`.
* Continuous: :class:`Uniform`, :class:`Normal`, :class:`MultivariateNormal`, :class:`Beta`,
  :class:`Dirichlet`, :class:`Gamma` (rate parametrisation), :class:`Wishart`,
  :class:`StudentT`, :class:`MultivariateStudentT`, :class:`Laplace`, :class:`Exponential`,
  :class:`ChiSquared`, :class:`NormalGamma`, :class:`NormalWishart`, and the particle
  distribution :class:`Empirical`.
* Gaussian algebra on :class:`MultivariateNormal` (marginal, condition, affine, product,
  sum, canonical form, Mahalanobis) and the linear-Gaussian model
  (:func:`linear_gaussian_joint`, :func:`linear_gaussian_marginal`,
  :func:`linear_gaussian_posterior`).
* Information: :func:`kl_divergence` (closed forms by type pair, :func:`register_kl`),
  :func:`entropy`, :func:`cross_entropy`, :func:`mutual_information`.
* Conjugate models with posterior, predictive, evidence, MAP and ML estimates, and
  :func:`bayes_factor`.
"""

from ._bayesian_network import BayesianNetwork
from ._categorical import Categorical, Multinomial
from ._conjugate import (
    BetaBernoulliModel,
    BetaBinomialModel,
    ConjugateModel,
    DirichletCategoricalModel,
    DirichletMultinomialModel,
    GammaPrecisionModel,
    NormalGammaModel,
    NormalKnownVarianceModel,
    NormalWishartModel,
    bayes_factor,
    log_marginal_likelihood,
)
from ._dirichlet import Dirichlet, DirichletMultinomial
from ._empirical import Empirical
from ._information import cross_entropy, entropy, mutual_information
from ._kl import kl_divergence, register_kl
from ._linear_gaussian import (
    linear_gaussian_joint,
    linear_gaussian_marginal,
    linear_gaussian_posterior,
)
from ._mvn import MultivariateNormal
from ._mvt import MultivariateStudentT
from ._normal_gamma import NormalGamma, NormalWishart
from ._table import ProbabilityTable, bayes_rule
from ._univariate import (
    Bernoulli,
    Beta,
    BetaBinomial,
    Binomial,
    ChiSquared,
    Exponential,
    Gamma,
    Laplace,
    Normal,
    StudentT,
    Uniform,
)
from ._wishart import Wishart

__all__ = [
    "BayesianNetwork",
    "Bernoulli",
    "Beta",
    "BetaBernoulliModel",
    "BetaBinomial",
    "BetaBinomialModel",
    "Binomial",
    "Categorical",
    "ChiSquared",
    "ConjugateModel",
    "Dirichlet",
    "DirichletCategoricalModel",
    "DirichletMultinomial",
    "DirichletMultinomialModel",
    "Empirical",
    "Exponential",
    "Gamma",
    "GammaPrecisionModel",
    "Laplace",
    "Multinomial",
    "MultivariateNormal",
    "MultivariateStudentT",
    "Normal",
    "NormalGamma",
    "NormalGammaModel",
    "NormalKnownVarianceModel",
    "NormalWishart",
    "NormalWishartModel",
    "ProbabilityTable",
    "StudentT",
    "Uniform",
    "Wishart",
    "bayes_factor",
    "bayes_rule",
    "cross_entropy",
    "entropy",
    "kl_divergence",
    "linear_gaussian_joint",
    "linear_gaussian_marginal",
    "linear_gaussian_posterior",
    "log_marginal_likelihood",
    "mutual_information",
    "register_kl",
]
