"""Step-size schedules ``t -> gamma_t`` (t = number of updates already made, from 0)."""

from __future__ import annotations

from collections.abc import Callable
from numbers import Real

from ..utils._param_validation import Interval, validate_params

__all__ = ["constant_schedule", "exponential_decay", "inverse_scaling", "robbins_monro"]


@validate_params(
    {
        "value": [Interval(Real, 0, None, closed="neither")],
    }
)
def constant_schedule(value: float) -> Callable[[int], float]:
    """``gamma_t = value``.

    Parameters
    ----------
    value : float
        The step size; positive.

    Returns
    -------
    callable
        ``t -> value``.

    Examples
    --------
    >>> from mathlearn.optim import constant_schedule
    >>> constant_schedule(0.1)(1000)
    0.1
    """
    return lambda t: value + 0.0 * t  # broadcasts over an array of update counts


@validate_params(
    {
        "init_value": [Interval(Real, 0, None, closed="neither")],
        "decay_rate": [Interval(Real, 0, 1, closed="right")],
        "transition_steps": [Interval(Real, 0, None, closed="neither")],
    }
)
def exponential_decay(
    init_value: float, decay_rate: float, transition_steps: int = 1
) -> Callable[[int], float]:
    """``gamma_t = init_value * decay_rate ** (t / transition_steps)``.

    The notes' "exponential cooling" (Stuttgart "Introduction to Machine Learning" slide 4:16,
    printed ``eta = eta_0^t``; the intended form has a decay factor ``decay_rate < 1``).

    Parameters
    ----------
    init_value : float
        ``gamma_0``; positive.
    decay_rate : float
        Factor per ``transition_steps`` updates, in ``(0, 1]``.
    transition_steps : float, default=1
        Updates over which the step shrinks by ``decay_rate``; positive.

    Returns
    -------
    callable
        ``t -> gamma_t``.

    Examples
    --------
    >>> from mathlearn.optim import exponential_decay
    >>> [exponential_decay(1.0, 0.5)(t) for t in range(3)]
    [1.0, 0.5, 0.25]
    """
    return lambda t: init_value * decay_rate ** (t / transition_steps)


@validate_params(
    {
        "init_value": [Interval(Real, 0, None, closed="neither")],
        "t0": [Interval(Real, 0, None, closed="neither")],
        "power": [Interval(Real, None, None, closed="neither")],
    }
)
def robbins_monro(
    init_value: float, t0: float = 1.0, power: float = 1.0
) -> Callable[[int], float]:
    """``gamma_t = init_value / (1 + t / t0) ** power``, with ``1/2 < power <= 1``.

    For such powers ``sum_t gamma_t = inf`` and ``sum_t gamma_t^2 < inf``: the Robbins-Monro
    conditions under which SGD converges (Imperial "Mathematics for Machine Learning" lecture 6).

    Parameters
    ----------
    init_value : float
        ``gamma_0``; positive.
    t0 : float, default=1.0
        Time scale of the decay; positive.
    power : float, default=1.0
        Exponent, in ``(1/2, 1]``.

    Returns
    -------
    callable
        ``t -> gamma_t``.

    Examples
    --------
    >>> from mathlearn.optim import robbins_monro
    >>> [robbins_monro(1.0, t0=1.0)(t) for t in range(3)]
    [1.0, 0.5, 0.3333333333333333]
    """
    if not 0.5 < power <= 1:
        raise ValueError(
            f"power must be in (1/2, 1] for the Robbins-Monro conditions; got {power}."
        )
    return lambda t: init_value / (1.0 + t / t0) ** power


@validate_params(
    {
        "init_value": [Interval(Real, 0, None, closed="neither")],
        "power": [Interval(Real, 0, None, closed="left")],
    }
)
def inverse_scaling(init_value: float, power: float = 0.25) -> Callable[[int], float]:
    """``gamma_t = init_value / (t + 1) ** power``.

    scikit-learn's ``"invscaling"`` schedule ``eta0 / t^power_t`` with the updates counted
    from 1; ``power = 1/2`` is the classic ``1 / sqrt(t)`` rate of stochastic gradient
    methods on convex problems, and ``power > 1/2`` up to 1 meets the Robbins-Monro
    conditions (see :func:`robbins_monro`).

    Parameters
    ----------
    init_value : float
        ``gamma_0``; positive.
    power : float, default=0.25
        Exponent, >= 0.

    Returns
    -------
    callable
        ``t -> gamma_t`` (also on an array of ``t``).

    Examples
    --------
    >>> from mathlearn.optim import inverse_scaling
    >>> [inverse_scaling(1.0, power=0.5)(t) for t in (0, 3)]
    [1.0, 0.5]
    """
    return lambda t: init_value / (t + 1.0) ** power
