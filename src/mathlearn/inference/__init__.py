"""Approximate inference: coordinate ascent on a lower bound (EM, variational inference) and
the Laplace approximation to a posterior and its evidence.

:func:`coordinate_ascent` is the driver of every method that maximises a lower bound one block
at a time: EM (:func:`mathlearn.mixture.em` is a thin adapter on it) and coordinate-ascent
variational inference (CAVI). A model supplies its coordinate updates and its bound; the
driver records the bounds, checks that they never decrease beyond rounding and stops on a
small change (Oxford "Advanced Topics in Statistical Machine Learning" §2.8; PRML §10.1).

:func:`laplace_approximation` finds the mode of an unnormalised log posterior
``log p(theta, D)``, fits the Gaussian whose precision is the negative Hessian there, and
approximates the evidence ``log p(D)`` (Oxford "Advanced Topics in Statistical Machine
Learning" §7.3; PRML §4.4). Bayesian logistic regression and GP classification use it, with
:func:`probit_approximation` for the predictive probability ``E[σ(f)]``.
"""

from ._coordinate_ascent import (
    BoundDecreaseError,
    CoordinateAscentModel,
    CoordinateAscentResult,
    coordinate_ascent,
)
from ._laplace import LaplaceResult, laplace_approximation
from ._probit import probit_approximation

__all__ = [
    "BoundDecreaseError",
    "CoordinateAscentModel",
    "CoordinateAscentResult",
    "LaplaceResult",
    "coordinate_ascent",
    "laplace_approximation",
    "probit_approximation",
]
