"""Probability distributions, Gaussian algebra, KL divergences and conjugate updates.

Distributions are immutable value objects (not estimators) with ``logpdf``/``pdf``,
``sample(size, rng)``, ``mean``, ``var``/``cov`` and ``entropy()``.
"""

from ._mvn import MultivariateNormal

__all__ = ["MultivariateNormal"]
