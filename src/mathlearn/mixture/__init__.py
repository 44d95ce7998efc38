"""Latent-variable mixtures fitted by EM or by variational inference, and the EM driver.

PRML §9.2–9.4; Oxford "Advanced Topics in Statistical Machine Learning" §5.1-5.4.
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
