"""Result containers of the Monte Carlo estimators."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

__all__ = ["ImportanceResult", "MCEstimate", "RejectionResult"]


@dataclass(frozen=True)
class MCEstimate:
    """A Monte Carlo estimate with its standard error.

    Attributes
    ----------
    estimate : float or ndarray
    std_error : float or ndarray
        Estimated standard deviation of ``estimate`` (shrinks as ``1 / sqrt(n_samples)``).
    n_samples : int

    See Also
    --------
    mathlearn.monte_carlo.mc_expectation
        The function that returns it.

    Examples
    --------
    >>> from mathlearn.distributions import Normal
    >>> from mathlearn.monte_carlo import mc_expectation
    >>> r = mc_expectation(lambda x: x, Normal(0.0, 1.0), 10_000, rng=0)
    >>> r.n_samples, abs(r.estimate) < 4 * r.std_error
    (10000, True)
    """

    estimate: float | np.ndarray
    std_error: float | np.ndarray
    n_samples: int

    def confidence_interval(self, level: float = 0.95):
        """Normal-approximation interval ``estimate -/+ z * std_error``."""
        if not 0 < level < 1:
            raise ValueError(f"level must be in (0, 1); got {level}.")
        z = norm.ppf(0.5 + level / 2)
        return self.estimate - z * self.std_error, self.estimate + z * self.std_error


@dataclass(frozen=True)
class RejectionResult:
    """Samples accepted by rejection sampling.

    Attributes
    ----------
    samples : ndarray of shape (n,) or (n, d)
        Independent draws from the (normalised) target.
    n_proposed : int
        Number of proposals drawn to obtain them.
    acceptance_rate : float
        ``n / n_proposed``; equals ``Z / M`` for a target of normaliser ``Z`` and a bound
        ``p <= M q`` (``1 / M`` for a normalised target).

    See Also
    --------
    mathlearn.monte_carlo.rejection_sample
        The function that returns it.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.distributions import Beta, Uniform
    >>> from mathlearn.monte_carlo import rejection_sample
    >>> r = rejection_sample(Beta(2, 2).logpdf, Uniform(0, 1), np.log(1.5), 500, rng=0)
    >>> r.samples.shape, r.n_proposed >= 500
    ((500,), True)
    """

    samples: np.ndarray
    n_proposed: int
    acceptance_rate: float


@dataclass(frozen=True)
class ImportanceResult:
    """An importance-sampling estimate.

    Attributes
    ----------
    estimate : float or ndarray
    std_error : float or ndarray
        Standard error (delta method for the self-normalised estimator).
    samples : ndarray
        The proposal draws.
    weights : ndarray of shape (n,)
        Normalised weights ``w_i / sum_j w_j``.
    log_weights : ndarray of shape (n,)
        Unnormalised log-weights ``log p(x_i) - log q(x_i)``.
    ess : float
        Effective sample size ``(sum w)^2 / sum w^2``.
    log_normaliser : float
        Estimate of ``log Z = log E_q[p / q]`` (the target's normaliser when ``p`` is
        unnormalised).
    self_normalised : bool

    See Also
    --------
    mathlearn.monte_carlo.importance_sampling
        The function that returns it.

    Examples
    --------
    >>> from mathlearn.distributions import Normal
    >>> from mathlearn.monte_carlo import importance_sampling
    >>> r = importance_sampling(None, Normal(1.0, 1.0).logpdf, Normal(0.0, 2.0), 2000, rng=0)
    >>> r.weights.shape, 0 < r.ess <= 2000
    ((2000,), True)
    """

    estimate: float | np.ndarray
    std_error: float | np.ndarray
    samples: np.ndarray
    weights: np.ndarray
    log_weights: np.ndarray
    ess: float
    log_normaliser: float
    self_normalised: bool

    @property
    def n_samples(self) -> int:
        return int(self.weights.shape[0])

    def particles(self):
        """The weighted sample as an :class:`~mathlearn.distributions.Empirical`."""
        from ..distributions import Empirical

        return Empirical(self.samples, self.weights)
