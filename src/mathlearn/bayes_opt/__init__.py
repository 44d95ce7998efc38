"""Bayesian optimisation: acquisition functions, an ask/tell optimiser and ``minimize``,
over real, integer and categorical dimensions, one point or a batch at a time."""

from ._acquisition import (
    expected_improvement,
    expected_positive_part,
    log_expected_improvement,
    log_probability_of_improvement,
    lower_confidence_bound,
    noisy_expected_improvement,
    noisy_probability_of_improvement,
    probability_of_improvement,
)
from ._optimizer import BayesianOptimizer, minimize
from ._space import Categorical, Integer, Real

__all__ = [
    "BayesianOptimizer",
    "Categorical",
    "Integer",
    "Real",
    "expected_improvement",
    "expected_positive_part",
    "log_expected_improvement",
    "log_probability_of_improvement",
    "lower_confidence_bound",
    "minimize",
    "noisy_expected_improvement",
    "noisy_probability_of_improvement",
    "probability_of_improvement",
]
