"""Gaussian processes: regression by the Cholesky route with marginal-likelihood learning,
binary / one-vs-rest classification by the Laplace approximation, and sparse regression
with inducing points (Titsias' variational bound) or random Fourier features."""

from ._gpc import GaussianProcessClassifier
from ._gpr import GaussianProcessRegressor
from ._laplace import LogisticLikelihood, ProbitLikelihood
from ._random_features import RandomFeatureGaussianProcessRegressor
from ._sparse import SparseGaussianProcessRegressor

__all__ = [
    "GaussianProcessClassifier",
    "GaussianProcessRegressor",
    "LogisticLikelihood",
    "ProbitLikelihood",
    "RandomFeatureGaussianProcessRegressor",
    "SparseGaussianProcessRegressor",
]
