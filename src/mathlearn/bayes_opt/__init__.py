"""Bayesian optimisation: acquisition functions, an ask/tell optimiser and ``minimize``."""

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

__all__ = [
    "BayesianOptimizer",
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
