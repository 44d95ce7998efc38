"""Step sizes chosen from objective values: the adaptive step and backtracking line search.

Both treat their input ``updates`` as the gradient ``g`` and need the objective: ``value``
(``L`` at ``params``) and, for the line search, ``value_fn`` (``L`` as a function).
:func:`mathlearn.optim.minimize` passes both.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, NamedTuple

from ..utils._param_validation import Interval, validate_params
from ..utils._tree import tree_map, tree_vdot
from ._transform import GradientTransformation

__all__ = ["adaptive_step", "backtracking_line_search"]


def _require(extra: dict, *names: str) -> None:
    missing = [n for n in names if extra.get(n) is None]
    if missing:
        raise ValueError(
            f"this optimiser needs {', '.join(missing)} passed to update(); "
            "use mathlearn.optim.minimize, which passes value and value_fn."
        )


class AdaptiveStepState(NamedTuple):
    step: float  # the step size of the last trial
    anchor: Any  # last accepted parameters (None before the first update)
    anchor_value: float
    anchor_grad: Any
    n_rejected: int


@validate_params(
    {
        "initial_step": [Interval(Real, 0, None, closed="neither")],
        "grow": [Interval(Real, 1, None, closed="neither")],
        "shrink": [Interval(Real, 0, 1, closed="neither")],
    }
)
def adaptive_step(
    initial_step: float = 0.1, grow: float = 1.2, shrink: float = 0.5
) -> GradientTransformation:
    """Gradient descent with the notes' adaptive step: grow on success, undo and shrink on failure.

    Parameters
    ----------
    initial_step : float, default=0.1
        First step size ``gamma_0``.
    grow : float, default=1.2
        Factor (> 1) applied to the step after a step that decreased the objective.
    shrink : float, default=0.5
        Factor (in (0, 1)) applied after a step that increased it; that step is undone.

    Notes
    -----
    Imperial "Mathematics for Inference and Machine Learning" §1.6.1 (after Toussaint 2012): if
    ``f`` increases after a step, undo the step and decrease the step size; if it decreases,
    increase the step size. The notes give no factors; 1.2 and 0.5 are common choices. The accepted
    iterates decrease ``f`` monotonically. At each call, ``value`` is ``f(params)``: if it is above
    the last accepted value the returned update moves back to that point and on with the smaller
    step along its gradient; otherwise ``params`` is accepted and a longer step is taken.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad, optim
    >>> f = ad.value_and_grad(lambda x: ad.sum((x - 2.0) ** 2))
    >>> res = optim.minimize(f, np.zeros(2), optim.adaptive_step(10.0), tol=1e-8)
    >>> np.round(res.x, 6), res.state.n_rejected  # 10, 5, 2.5, 1.25 undone before 0.625
    (array([2., 2.]), 8)
    """

    def init(params):
        return AdaptiveStepState(initial_step, None, float("inf"), None, 0)

    def update(updates, state, params=None, **extra):
        _require(extra, "value")
        if params is None:
            raise ValueError("adaptive_step needs params passed to update().")
        value = float(extra["value"])
        if state.anchor is None or value <= state.anchor_value:
            # Accepted (or first call): grow the step, then move from here.
            step = state.step if state.anchor is None else state.step * grow
            new = tree_map(lambda g: -step * g, updates)
            return new, AdaptiveStepState(step, params, value, updates, state.n_rejected)
        # Rejected: undo (go back to the anchor) and retry from there with a smaller step.
        step = state.step * shrink
        new = tree_map(lambda p, a, g: (a - step * g) - p, params, state.anchor, state.anchor_grad)
        return new, state._replace(step=step, n_rejected=state.n_rejected + 1)

    return GradientTransformation(init, update)


class LineSearchState(NamedTuple):
    step: float  # the step size accepted last
    n_evaluations: int  # objective evaluations spent in searches so far


@validate_params(
    {
        "initial_step": [Interval(Real, 0, None, closed="neither")],
        "shrink": [Interval(Real, 0, 1, closed="neither")],
        "c": [Interval(Real, 0, 1, closed="neither")],
        "max_backtracks": [Interval(Integral, 1, None, closed="left")],
    }
)
def backtracking_line_search(
    initial_step: float = 1.0, shrink: float = 0.5, c: float = 1e-4, max_backtracks: int = 50
) -> GradientTransformation:
    """Steepest descent with a backtracking (Armijo) line search.

    Parameters
    ----------
    initial_step : float, default=1.0
        Largest step tried, ``gamma_max``.
    shrink : float, default=0.5
        Ratio of successive trial steps (the decreasing schedule of the notes).
    c : float, default=1e-4
        Sufficient-decrease constant of the Armijo condition.
    max_backtracks : int, default=50
        Budget ``tau`` of trials; the smallest step is taken if none passes.

    Notes
    -----
    Imperial "Mathematics for Machine Learning" lecture 6: try ``gamma^(1) > gamma^(2) > ...`` and
    accept the first for which ``L(theta) - L(theta - gamma g)`` "is big enough"; the criterion
    used is Armijo's, ``L(theta - gamma g) <= L(theta) - c gamma ||g||^2``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad, optim
    >>> f = ad.value_and_grad(lambda x: 0.5 * ad.sum(np.array([1.0, 10.0]) * x**2))
    >>> res = optim.minimize(f, np.ones(2), optim.backtracking_line_search(), tol=1e-8)
    >>> np.allclose(res.x, 0, atol=1e-8), res.state.step <= 1.0
    (True, True)
    """

    def init(params):
        return LineSearchState(initial_step, 0)

    def update(updates, state, params=None, **extra):
        _require(extra, "value", "value_fn")
        value, value_fn = float(extra["value"]), extra["value_fn"]
        gg = tree_vdot(updates, updates)
        step, n_eval = initial_step, 0
        for _ in range(max_backtracks):
            trial = tree_map(lambda p, g, s=step: p - s * g, params, updates)
            n_eval += 1
            if value_fn(trial) <= value - c * step * gg:
                break
            step *= shrink
        new = tree_map(lambda g: -step * g, updates)
        return new, LineSearchState(step, state.n_evaluations + n_eval)

    return GradientTransformation(init, update)
