"""Gaussian processes: regression by the Cholesky route with marginal-likelihood learning,
and binary / one-vs-rest classification by the Laplace approximation."""

from ._gpc import GaussianProcessClassifier
from ._gpr import GaussianProcessRegressor
from ._laplace import LogisticLikelihood, ProbitLikelihood

__all__ = [
    "GaussianProcessClassifier",
    "GaussianProcessRegressor",
    "LogisticLikelihood",
    "ProbitLikelihood",
]
