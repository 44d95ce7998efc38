"""Latent-variable mixtures fitted by EM or by variational inference, and the EM driver.

Spec 001 M43-M44, spec 002 §5.1-5.4 (M28-M31).
"""

from ._bayesian_mixture import BayesianGaussianMixture
from ._bernoulli_mixture import BernoulliMixture
from ._em import EMModel, EMResult, em
from ._gaussian_mixture import GaussianMixture

__all__ = [
    "BayesianGaussianMixture",
    "BernoulliMixture",
    "EMModel",
    "EMResult",
    "GaussianMixture",
    "em",
]
