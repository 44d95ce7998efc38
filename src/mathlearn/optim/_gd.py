"""Gradient descent with a fixed or scheduled step, heavy-ball momentum and Nesterov momentum.

Gradient descent (Imperial "Mathematics for Machine Learning" lecture 5;
Imperial "Mathematics for Inference and Machine Learning" §1.6, eq. 1.182):
``theta_{t+1} = theta_t - gamma_t grad L(theta_t)``.

Heavy ball (Imperial "Mathematics for Machine Learning" lecture 6;
Imperial "Mathematics for Inference and Machine Learning" §1.6.2, eqs. 1.185–1.186; Stuttgart
"Introduction to Machine Learning" slide 4:17): ``Delta_0 = 0``, ``Delta_{t+1} = alpha Delta_t -
gamma_t grad L(theta_t)``, ``theta_{t+1} = theta_t + Delta_{t+1}``.

Nesterov (Stuttgart "Introduction to Machine Learning" slide 4:17; Sutskever et al. 2013): the
gradient is taken at the look-ahead point ``theta_t + alpha Delta_t``.
"""

from __future__ import annotations

from numbers import Real
from typing import Any, NamedTuple

import numpy as np

from ..utils._param_validation import Interval, validate_params
from ..utils._tree import tree_map
from ._transform import GradientTransformation, Schedule

__all__ = ["momentum", "nesterov", "sgd"]


def _step_size(learning_rate: float | Schedule, count: int) -> float:
    return float(learning_rate(count) if callable(learning_rate) else learning_rate)


class CountState(NamedTuple):
    count: int  # type: ignore[assignment]  # shadows tuple.count, by design


class MomentumState(NamedTuple):
    count: int  # type: ignore[assignment]  # shadows tuple.count, by design
    velocity: Any  # Delta_t, with the parameters' structure


@validate_params(
    {
        "learning_rate": [Interval(Real, 0, None, closed="neither"), callable],
    }
)
def sgd(learning_rate: float | Schedule) -> GradientTransformation:
    """Gradient descent: ``updates = -gamma_t * g``.

    Parameters
    ----------
    learning_rate : float or callable
        The step size ``gamma``, or a schedule ``t -> gamma_t`` (see ``exponential_decay``,
        ``robbins_monro``). Fed minibatch gradients it is stochastic gradient descent.

    Returns
    -------
    GradientTransformation

    Notes
    -----
    On the least-squares loss ``L = ||y - X theta||^2 / (2 sigma^2)`` with constant ``gamma``
    the iterates are ``theta_t = (I - gamma/sigma^2 X^T X)^t (theta_0 - theta*) + theta*``
    (Imperial "Mathematics for Machine Learning" lecture 5), which converge from every start iff
    ``gamma < 2 sigma^2 / lambda_max(X^T X)`` (ibid.).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import optim
    >>> opt = optim.sgd(0.1)
    >>> updates, state = opt.update(np.array([1.0, -2.0]), opt.init(np.zeros(2)))
    >>> updates
    array([-0.1,  0.2])
    """

    def init(params):
        return CountState(0)

    def update(updates, state, params=None, **extra):
        gamma = _step_size(learning_rate, state.count)
        return tree_map(lambda g: -gamma * g, updates), CountState(state.count + 1)

    return GradientTransformation(init, update)


@validate_params(
    {
        "learning_rate": [Interval(Real, 0, None, closed="neither"), callable],
        "momentum": [Interval(Real, 0, 1, closed="left")],
    }
)
def momentum(learning_rate: float | Schedule, momentum: float = 0.9) -> GradientTransformation:
    """Heavy-ball momentum: ``Delta <- alpha Delta - gamma_t g``, ``updates = Delta``.

    Parameters
    ----------
    learning_rate : float or callable
        Step size ``gamma`` or a schedule.
    momentum : float, default=0.9
        Momentum coefficient ``alpha`` in ``[0, 1)``.

    Notes
    -----
    ``theta_{t+1} = theta_t - gamma_t grad L(theta_t) + alpha (theta_t - theta_{t-1})``
    (Imperial "Mathematics for Machine Learning" lecture 6, with the lost minus signs restored;
    Imperial "Mathematics for Inference and Machine Learning" §1.6.2, eq. 1.186, corrected to
    ``Delta x_i = x_i - x_{i-1}``). Faster along flat directions, damped oscillations across
    narrow valleys, smoothed noisy gradients (Imperial "Mathematics for Machine Learning" lecture
    6).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import optim
    >>> opt = optim.momentum(0.1, momentum=0.5)
    >>> state = opt.init(np.zeros(1))
    >>> u1, state = opt.update(np.array([1.0]), state)
    >>> u2, state = opt.update(np.array([1.0]), state)  # 0.5 * (-0.1) - 0.1
    >>> u1, u2
    (array([-0.1]), array([-0.15]))
    """

    def init(params):
        return MomentumState(
            0, tree_map(lambda p: np.zeros_like(p, dtype=np.result_type(p, 0.0)), params)
        )

    def update(updates, state, params=None, **extra):
        gamma = _step_size(learning_rate, state.count)
        velocity = tree_map(lambda v, g: momentum * v - gamma * g, state.velocity, updates)
        return velocity, MomentumState(state.count + 1, velocity)

    return GradientTransformation(init, update)


@validate_params(
    {
        "learning_rate": [Interval(Real, 0, None, closed="neither"), callable],
        "momentum": [Interval(Real, 0, 1, closed="left")],
    }
)
def nesterov(learning_rate: float | Schedule, momentum: float = 0.9) -> GradientTransformation:
    """Nesterov momentum, with the gradient taken at the look-ahead point.

    Parameters
    ----------
    learning_rate : float or callable
        Step size ``gamma`` or a schedule.
    momentum : float, default=0.9
        Momentum coefficient ``alpha`` in ``[0, 1)``.

    Notes
    -----
    The notes (Stuttgart "Introduction to Machine Learning" slide 4:17) print ``Delta <- alpha
    Delta - gamma grad L(beta + Delta)``, ``beta <- beta + Delta``; the look-ahead point of
    Sutskever et al. (2013), which this implements, is where momentum alone would carry the
    parameters, ``Delta <- alpha Delta - gamma grad L(beta + alpha Delta)``.
    An ``update`` only sees the gradient at the parameters it is given, so the parameters
    held here are the look-ahead points ``phi_t = beta_t + alpha Delta_t``. With
    ``g = grad L(phi_t)``, ``Delta_{t+1} = alpha Delta_t - gamma g`` and
    ``phi_{t+1} = phi_t + alpha Delta_{t+1} - gamma g``, which is the update returned; the
    sequence is the same as the notes', shifted by ``alpha Delta_t`` (a test checks this).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad, optim
    >>> f = ad.value_and_grad(lambda x: 0.5 * ad.sum(np.array([1.0, 100.0]) * x**2))
    >>> res = optim.minimize(f, np.ones(2), optim.nesterov(0.01, 0.8), tol=1e-8)
    >>> np.allclose(res.x, 0, atol=1e-8)
    True
    """

    def init(params):
        return MomentumState(
            0, tree_map(lambda p: np.zeros_like(p, dtype=np.result_type(p, 0.0)), params)
        )

    def update(updates, state, params=None, **extra):
        gamma = _step_size(learning_rate, state.count)
        velocity = tree_map(lambda v, g: momentum * v - gamma * g, state.velocity, updates)
        step = tree_map(lambda v, g: momentum * v - gamma * g, velocity, updates)
        return step, MomentumState(state.count + 1, velocity)

    return GradientTransformation(init, update)
