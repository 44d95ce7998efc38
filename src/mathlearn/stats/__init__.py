"""Statistical tests (kernel two-sample and independence tests) and decision theory.

The functions return result objects in the style of :mod:`scipy.stats` (``statistic``,
``pvalue``, ``null_distribution``), so a user who knows ``scipy.stats.permutation_test`` finds
them where they look for tests; the kernels themselves live in :mod:`mathlearn.kernels`.
"""

from ._common import median_heuristic
from ._decision import ExpectedUtility, bayes_decision, expected_utility
from ._hsic import HSICTestResult, hsic, hsic_test
from ._mmd import MMDTestResult, mmd2, mmd_test

__all__ = [
    "ExpectedUtility",
    "HSICTestResult",
    "MMDTestResult",
    "bayes_decision",
    "expected_utility",
    "hsic",
    "hsic_test",
    "median_heuristic",
    "mmd2",
    "mmd_test",
]
