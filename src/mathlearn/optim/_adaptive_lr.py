"""Per-coordinate adaptive step sizes: AdaGrad, RMSProp, Adam, Nadam.

These are the "statistics of gradients along the trajectory" used as a diagonal
preconditioner (Imperial "Mathematics for Machine Learning" lecture 6): each coordinate's step is
divided by a running root-mean-square of its gradients, so that steep and flat directions progress
alike. Imperial "Mathematics for Inference and Machine Learning" §1.6.4 names them; Adam and Nadam
are written out in Stuttgart "Introduction to Machine Learning" slides 4:18–4:19.
"""

from __future__ import annotations

from numbers import Real
from typing import Any, NamedTuple

import numpy as np

from ..utils._param_validation import Interval, validate_params
from ..utils._tree import tree_map
from ._gd import _step_size
from ._transform import GradientTransformation, Schedule

__all__ = ["adagrad", "adam", "nadam", "rmsprop"]


def _zeros(params):
    return tree_map(lambda p: np.zeros_like(p, dtype=np.result_type(p, 0.0)), params)


class AccumulatorState(NamedTuple):
    count: int  # type: ignore[assignment]  # shadows tuple.count, by design
    accumulator: Any  # sum or running average of squared gradients


class AdamState(NamedTuple):
    count: int  # type: ignore[assignment]  # shadows tuple.count, by design
    mu: Any  # first moment m_t
    nu: Any  # second moment v_t


@validate_params(
    {
        "learning_rate": [Interval(Real, 0, None, closed="neither"), callable],
        "eps": [Interval(Real, 0, None, closed="left")],
    }
)
def adagrad(learning_rate: float | Schedule, eps: float = 1e-8) -> GradientTransformation:
    """AdaGrad (Duchi, Hazan and Singer, 2011).

    ``G_t = G_{t-1} + g_t^2``, ``updates = -gamma g_t / (sqrt(G_t) + eps)``: each coordinate's
    step shrinks with the total squared gradient it has seen.

    Parameters
    ----------
    learning_rate : float or callable
        Step size ``gamma`` or a schedule ``t -> gamma_t``.
    eps : float, default=1e-8
        Added to the root of the accumulator (no division by zero).

    Returns
    -------
    GradientTransformation

    Examples
    --------
    The first step is ``-gamma sign(g)`` (up to ``eps``), whatever the scale of ``g``:

    >>> import numpy as np
    >>> from mathlearn import optim
    >>> opt = optim.adagrad(0.1)
    >>> np.round(opt.update(np.array([0.5, -2.0]), opt.init(np.zeros(2)))[0], 6)
    array([-0.1,  0.1])
    """

    def init(params):
        return AccumulatorState(0, _zeros(params))

    def update(updates, state, params=None, **extra):
        gamma = _step_size(learning_rate, state.count)
        acc = tree_map(lambda a, g: a + g * g, state.accumulator, updates)
        step = tree_map(lambda g, a: -gamma * g / (np.sqrt(a) + eps), updates, acc)
        return step, AccumulatorState(state.count + 1, acc)

    return GradientTransformation(init, update)


@validate_params(
    {
        "learning_rate": [Interval(Real, 0, None, closed="neither"), callable],
        "decay": [Interval(Real, 0, 1, closed="left")],
        "eps": [Interval(Real, 0, None, closed="left")],
    }
)
def rmsprop(
    learning_rate: float | Schedule, decay: float = 0.9, eps: float = 1e-8
) -> GradientTransformation:
    """RMSProp (Tieleman and Hinton, 2012).

    ``v_t = rho v_{t-1} + (1 - rho) g_t^2``, ``updates = -gamma g_t / (sqrt(v_t) + eps)``: an
    exponentially weighted average instead of AdaGrad's sum, so the step does not vanish.

    Parameters
    ----------
    learning_rate : float or callable
        Step size ``gamma`` or a schedule ``t -> gamma_t``.
    decay : float, default=0.9
        ``rho`` in ``[0, 1)``.
    eps : float, default=1e-8

    Returns
    -------
    GradientTransformation

    Examples
    --------
    With ``v_0 = 0`` (no bias correction) the first step is ``-gamma sign(g) / sqrt(1 - rho)``:

    >>> import numpy as np
    >>> from mathlearn import optim
    >>> opt = optim.rmsprop(0.01)
    >>> np.round(opt.update(np.array([0.5, -2.0]), opt.init(np.zeros(2)))[0], 6)
    array([-0.031623,  0.031623])
    """

    def init(params):
        return AccumulatorState(0, _zeros(params))

    def update(updates, state, params=None, **extra):
        gamma = _step_size(learning_rate, state.count)
        acc = tree_map(lambda a, g: decay * a + (1 - decay) * g * g, state.accumulator, updates)
        step = tree_map(lambda g, a: -gamma * g / (np.sqrt(a) + eps), updates, acc)
        return step, AccumulatorState(state.count + 1, acc)

    return GradientTransformation(init, update)


def _adam(learning_rate, b1, b2, eps, nesterov: bool) -> GradientTransformation:

    def init(params):
        return AdamState(0, _zeros(params), _zeros(params))

    def update(updates, state, params=None, **extra):
        t = state.count + 1
        gamma = _step_size(learning_rate, state.count)
        mu = tree_map(lambda m, g: b1 * m + (1 - b1) * g, state.mu, updates)
        nu = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state.nu, updates)
        c1, c2 = 1 - b1**t, 1 - b2**t  # bias corrections: m_0 = v_0 = 0 biases towards 0

        def step(m, v, g):
            m_hat, v_hat = m / c1, v / c2
            if nesterov:
                m_hat = b1 * m_hat + (1 - b1) * g / c1
            return -gamma * m_hat / (np.sqrt(v_hat) + eps)

        return tree_map(step, mu, nu, updates), AdamState(t, mu, nu)

    return GradientTransformation(init, update)


@validate_params(
    {
        "learning_rate": [Interval(Real, 0, None, closed="neither"), callable],
        "b1": [Interval(Real, 0, 1, closed="left")],
        "b2": [Interval(Real, 0, 1, closed="left")],
        "eps": [Interval(Real, 0, None, closed="left")],
    }
)
def adam(
    learning_rate: float | Schedule = 1e-3, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
) -> GradientTransformation:
    """Adam (Kingma and Ba, 2015; Stuttgart "Introduction to Machine Learning" slide 4:18).

    ``m_t = b1 m_{t-1} + (1 - b1) g_t``, ``v_t = b2 v_{t-1} + (1 - b2) g_t^2``,
    ``m_hat = m_t / (1 - b1^t)``, ``v_hat = v_t / (1 - b2^t)``,
    ``updates = -alpha m_hat / (sqrt(v_hat) + eps)``. At ``t = 1``, ``m_hat = g_1`` so the
    first step is about ``-alpha sign(g_1)`` (Stuttgart "Introduction to Machine Learning" slide
    4:19).

    Parameters
    ----------
    learning_rate : float or callable, default=1e-3
        ``alpha``, or a schedule ``t -> alpha_t``.
    b1, b2 : float, default=0.9, 0.999
        Decay rates of the first and second moment averages, in ``[0, 1)``.
    eps : float, default=1e-8
        Added to ``sqrt(v_hat)``, non-negative.

    Returns
    -------
    GradientTransformation

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import optim
    >>> opt = optim.adam()
    >>> updates, _ = opt.update(np.array([0.5, -2.0]), opt.init(np.zeros(2)))
    >>> np.round(updates, 6)
    array([-0.001,  0.001])
    """
    return _adam(learning_rate, b1, b2, eps, nesterov=False)


@validate_params(
    {
        "learning_rate": [Interval(Real, 0, None, closed="neither"), callable],
        "b1": [Interval(Real, 0, 1, closed="left")],
        "b2": [Interval(Real, 0, 1, closed="left")],
        "eps": [Interval(Real, 0, None, closed="left")],
    }
)
def nadam(
    learning_rate: float | Schedule = 1e-3, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8
) -> GradientTransformation:
    """Nadam: Adam with Nesterov momentum (Dozat, 2016).

    Stuttgart "Introduction to Machine Learning" slide 4:19.

    ``updates = -alpha / (sqrt(v_hat) + eps) * (b1 m_hat + (1 - b1) g_t / (1 - b1^t))``, with
    ``m_hat, v_hat`` as in :func:`adam`.

    Parameters
    ----------
    learning_rate : float or callable, default=1e-3
        ``alpha`` or a schedule.
    b1, b2 : float, default=0.9, 0.999
        Decay rates of the first and second moments, in ``[0, 1)``.
    eps : float, default=1e-8

    Returns
    -------
    GradientTransformation

    Notes
    -----
    This is the notes' form (Stuttgart "Introduction to Machine Learning" slide 4:19), which
    bias-corrects the momentum term with ``1 - b1^t``; Dozat's paper (and optax) use ``1 -
    b1^(t+1)`` there, which changes the steps by a factor that tends to 1. At ``t = 1`` the notes'
    step is ``-alpha (1 + b1) sign(g_1)``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import optim
    >>> opt = optim.nadam()
    >>> np.round(opt.update(np.array([0.5, -2.0]), opt.init(np.zeros(2)))[0], 6)
    array([-0.0019,  0.0019])
    """
    return _adam(learning_rate, b1, b2, eps, nesterov=True)
