"""Rprop: resilient backpropagation, iRprop- (Igel and Huesken, 2000).

The notes name Rprop as a batch optimiser for small networks (Stuttgart "Introduction to
Machine Learning" §4, "Optimizers") without giving its rule; this is the iRprop- variant.
Each coordinate has its own step ``Delta_i`` and only the *sign* of its gradient is used:

- if ``g_i^t g_i^{t-1} > 0``: ``Delta_i <- min(eta_plus Delta_i, step_max)``;
- if ``g_i^t g_i^{t-1} < 0``: ``Delta_i <- max(eta_minus Delta_i, step_min)`` and
  ``g_i^t <- 0`` (the coordinate makes no move this step, and the next step is not
  compared with the overshoot);
- ``theta_i <- theta_i - sign(g_i^t) Delta_i``.

Rprop is meant for full-batch gradients: minibatch noise flips the signs at random.
"""

from __future__ import annotations

from numbers import Real
from typing import Any, NamedTuple

import numpy as np

from ..utils._param_validation import Interval, validate_params
from ..utils._tree import tree_flatten, tree_map, tree_unflatten
from ._transform import GradientTransformation

__all__ = ["rprop"]


class RpropState(NamedTuple):
    step: Any  # Delta, per coordinate
    prev_grad: Any  # g^{t-1} (zeroed where the sign flipped)


@validate_params(
    {
        "step_init": [Interval(Real, 0, None, closed="neither")],
        "eta_minus": [Interval(Real, 0, 1, closed="neither")],
        "eta_plus": [Interval(Real, 1, None, closed="neither")],
        "step_min": [Interval(Real, 0, None, closed="left")],
        "step_max": [Interval(Real, 0, None, closed="neither")],
    }
)
def rprop(
    step_init: float = 0.01,
    eta_minus: float = 0.5,
    eta_plus: float = 1.2,
    step_min: float = 1e-6,
    step_max: float = 50.0,
) -> GradientTransformation:
    """iRprop-: sign-based steps with per-coordinate step sizes (Igel and Huesken, 2000).

    Parameters
    ----------
    step_init : float, default=0.01
        ``Delta_0`` for every coordinate.
    eta_minus : float, default=0.5
        Factor in ``(0, 1)`` applied to ``Delta`` when the gradient's sign flips.
    eta_plus : float, default=1.2
        Factor ``> 1`` applied when the sign is kept.
    step_min, step_max : float, default=1e-6, 50.0
        Bounds on ``Delta``.

    Returns
    -------
    GradientTransformation

    Notes
    -----
    The update rule is given in this module's docstring; it is the iRprop- of Igel and
    Huesken (2000), the rule PyTorch's ``Rprop`` also implements.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import optim
    >>> opt = optim.rprop(step_init=0.1)
    >>> state = opt.init(np.zeros(2))
    >>> u1, state = opt.update(np.array([3.0, -1e-3]), state)  # only signs matter
    >>> u2, state = opt.update(np.array([1.0, 2.0]), state)  # kept sign / flipped sign
    >>> u1, u2
    (array([-0.1,  0.1]), array([-0.12,  0.  ]))
    """
    if step_min > step_max:
        raise ValueError(f"step_min ({step_min}) must not exceed step_max ({step_max}).")

    def init(params):
        dtype = lambda p: np.result_type(p, 0.0)  # noqa: E731
        return RpropState(
            tree_map(lambda p: np.full(np.shape(p), step_init, dtype=dtype(p)), params),
            tree_map(lambda p: np.zeros(np.shape(p), dtype=dtype(p)), params),
        )

    def update(updates, state, params=None, **extra):
        grads, treedef = tree_flatten(updates)
        deltas, _ = tree_flatten(state.step)
        prevs, _ = tree_flatten(state.prev_grad)
        out_u, out_d, out_g = [], [], []
        for g, delta, g_prev in zip(grads, deltas, prevs, strict=True):
            s = g * g_prev
            delta = np.where(
                s > 0,
                np.minimum(delta * eta_plus, step_max),
                np.where(s < 0, np.maximum(delta * eta_minus, step_min), delta),
            ).astype(delta.dtype)
            g = np.where(s < 0, 0.0, g).astype(delta.dtype)
            out_u.append(0.0 - np.sign(g) * delta)  # 0.0 - 0.0 = +0.0
            out_d.append(delta)
            out_g.append(g)
        return tree_unflatten(treedef, out_u), RpropState(
            tree_unflatten(treedef, out_d), tree_unflatten(treedef, out_g)
        )

    return GradientTransformation(init, update)
