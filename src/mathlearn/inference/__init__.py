"""Approximate inference: the Laplace approximation to a posterior and its evidence.

:func:`laplace_approximation` finds the mode of an unnormalised log posterior
``log p(theta, D)``, fits the Gaussian whose precision is the negative Hessian there, and
approximates the evidence ``log p(D)`` (Oxford "Advanced Topics in Statistical Machine
Learning" §7.3; PRML §4.4). Bayesian logistic regression and GP classification use it, with
:func:`probit_approximation` for the predictive probability ``E[σ(f)]``.
"""

from ._laplace import LaplaceResult, laplace_approximation
from ._probit import probit_approximation

__all__ = ["LaplaceResult", "laplace_approximation", "probit_approximation"]
