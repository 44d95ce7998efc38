"""Naive Bayes classifiers: Gaussian, Bernoulli and multinomial event models.

Each has the maximum-likelihood and the Bayesian (posterior-predictive) estimate, works in
log space and learns incrementally with ``partial_fit`` (Oxford "Advanced Topics in
Statistical Machine Learning" §7.1-7.2; PRML §4.2.3).
"""

from ._discrete import BernoulliNB, MultinomialNB
from ._gaussian import GaussianNB

__all__ = ["BernoulliNB", "GaussianNB", "MultinomialNB"]
