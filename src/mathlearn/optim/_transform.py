"""Optimisers as pairs of functions, composed with ``chain``.

An optimiser is a :class:`GradientTransformation`: ``init(params) -> state`` and
``update(updates, state, params=None, **extra) -> (updates, state)``. The first transformation
of a chain receives the gradient as ``updates``; each one maps its input to new updates, and
the last one's output is added to the parameters (``apply_updates``). This is the design of
optax: gradient clipping, momentum and a step size are independent pieces, and
``chain(clip_by_global_norm(1.0), adam(1e-3))`` composes them.

``extra`` carries what a few optimisers need besides the gradient: ``value`` (the objective
at ``params``) for the adaptive step, and ``value_fn`` (the objective as a function) for a
line search. :func:`mathlearn.optim.minimize` passes both.

Parameters are an array or a dict (list, tuple) of arrays; every optimiser works leafwise.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Real
from typing import Any, NamedTuple

import numpy as np

from ..utils._param_validation import Interval, validate_params
from ..utils._tree import tree_flatten, tree_map

__all__ = [
    "GradientTransformation",
    "apply_updates",
    "chain",
    "clip",
    "clip_by_global_norm",
    "global_norm",
    "scale",
]

Schedule = Callable[[int], float]


class GradientTransformation(NamedTuple):
    """An optimiser: ``init(params) -> state``, ``update(updates, state, params, **extra)``.

    Parameters
    ----------
    init : callable
        ``init(params) -> state``.
    update : callable
        ``update(updates, state, params=None, **extra) -> (updates, state)``.

    See Also
    --------
    mathlearn.optim.adam
        An optimiser of this form.
    mathlearn.optim.sgd
        Another one.

    Examples
    --------
    A step that halves the gradient, written from scratch:

    >>> import numpy as np
    >>> from mathlearn import optim
    >>> half = optim.GradientTransformation(lambda p: (), lambda u, s, p=None: (-0.5 * u, s))
    >>> optim.apply_updates(np.ones(2), half.update(np.ones(2), half.init(None))[0])
    array([0.5, 0.5])
    """

    init: Callable[[Any], Any]
    update: Callable[..., tuple[Any, Any]]


def apply_updates(params: Any, updates: Any) -> Any:
    """``params + updates`` leafwise, keeping each parameter's dtype.

    Parameters
    ----------
    params : array or tree of arrays
        The parameters.
    updates : array or tree of arrays
        Of the same structure (the same dict keys); a different structure is an error.

    Returns
    -------
    array or tree of arrays
        The new parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import optim
    >>> optim.apply_updates({"w": np.ones(2)}, {"w": np.array([0.5, -1.0])})
    {'w': array([1.5, 0. ])}
    """
    return tree_map(lambda p, u: np.asarray(p + u, dtype=np.result_type(p)), params, updates)


def global_norm(tree: Any) -> float:
    """Euclidean norm of all the leaves of ``tree`` taken together.

    Parameters
    ----------
    tree : array or tree of arrays
        The leaves.

    Returns
    -------
    float
        ``sqrt(sum of all squared entries)``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import optim
    >>> optim.global_norm({"a": np.array([3.0]), "b": np.array([4.0])})
    5.0
    """
    return float(np.sqrt(sum(np.vdot(x, x).real for x in tree_flatten(tree)[0])))


def chain(*transforms: GradientTransformation) -> GradientTransformation:
    """Apply ``transforms`` in sequence; the state is the tuple of their states.

    Parameters
    ----------
    *transforms : GradientTransformation
        Applied first to last; each maps the previous one's updates.

    Returns
    -------
    GradientTransformation

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import optim
    >>> opt = optim.chain(optim.clip_by_global_norm(1.0), optim.sgd(0.1))
    >>> state = opt.init(np.zeros(2))
    >>> updates, state = opt.update(np.array([3.0, 4.0]), state)
    >>> updates
    array([-0.06, -0.08])
    """

    def init(params):
        return tuple(t.init(params) for t in transforms)

    def update(updates, state, params=None, **extra):
        new_state = []
        for t, s in zip(transforms, state, strict=True):
            updates, s = t.update(updates, s, params, **extra)
            new_state.append(s)
        return updates, tuple(new_state)

    return GradientTransformation(init, update)


def _stateless(fn: Callable[[Any], Any]) -> GradientTransformation:
    return GradientTransformation(lambda params: (), lambda u, s, p=None, **kw: (fn(u), s))


@validate_params(
    {
        "factor": [Interval(Real, None, None, closed="neither")],
    }
)
def scale(factor: float) -> GradientTransformation:
    """Multiply the updates by a constant (``scale(-lr)`` turns a direction into a step).

    Parameters
    ----------
    factor : float
        The constant.

    Returns
    -------
    GradientTransformation

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import optim
    >>> optim.scale(-0.1).update(np.array([1.0, 2.0]), ())[0]
    array([-0.1, -0.2])
    """
    return _stateless(lambda u: tree_map(lambda x: factor * x, u))


@validate_params(
    {
        "max_abs": [Interval(Real, 0, None, closed="neither")],
    }
)
def clip(max_abs: float) -> GradientTransformation:
    """Clip every entry of the updates to ``[-max_abs, max_abs]``.

    Parameters
    ----------
    max_abs : float
        Largest absolute value let through; positive.

    Returns
    -------
    GradientTransformation

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import optim
    >>> optim.clip(1.0).update(np.array([-3.0, 0.5]), ())[0]
    array([-1. ,  0.5])
    """
    return _stateless(lambda u: tree_map(lambda x: np.clip(x, -max_abs, max_abs), u))


@validate_params(
    {
        "max_norm": [Interval(Real, 0, None, closed="neither")],
    }
)
def clip_by_global_norm(max_norm: float) -> GradientTransformation:
    """Rescale the updates so that their global norm is at most ``max_norm``.

    ``g <- g * min(1, max_norm / ||g||)``: the direction is kept, only an exploding length is
    cut (Pascanu et al., 2013).

    Parameters
    ----------
    max_norm : float
        Largest global norm (over all leaves together) let through; positive.

    Returns
    -------
    GradientTransformation

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import optim
    >>> optim.clip_by_global_norm(1.0).update({"a": np.array([3.0]), "b": np.array([4.0])}, ())[0]
    {'a': array([0.6]), 'b': array([0.8])}
    """

    def fn(u):
        norm = global_norm(u)
        if norm <= max_norm:
            return u
        factor = max_norm / norm
        return tree_map(lambda x: x * factor, u)

    return _stateless(fn)
