"""Monte Carlo methods: plain expectations with standard errors, rejection sampling,
importance sampling (normalised and self-normalised, with the effective sample size) and
sampling by inverse cdf (Stuttgart "Introduction to Machine Learning" slides 9:45–9:47; PRML
§1.2.2)."""

from ._results import ImportanceResult, MCEstimate, RejectionResult
from ._sampling import (
    effective_sample_size,
    importance_sampling,
    inverse_cdf_sample,
    mc_expectation,
    rejection_sample,
)

__all__ = [
    "ImportanceResult",
    "MCEstimate",
    "RejectionResult",
    "effective_sample_size",
    "importance_sampling",
    "inverse_cdf_sample",
    "mc_expectation",
    "rejection_sample",
]
