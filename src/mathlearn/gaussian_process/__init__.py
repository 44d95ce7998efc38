"""Gaussian processes: regression by the Cholesky route with marginal-likelihood learning,
and binary / one-vs-rest classification by the Laplace approximation."""

from ._gpr import GaussianProcessRegressor

__all__ = ["GaussianProcessRegressor"]
