"""Optimisers as ``(init, update)`` pairs, optimisation loops, and constrained optimisation.

First-order optimisers are :class:`GradientTransformation` pairs composed with
:func:`chain` (the design of optax): ``sgd``, ``momentum``, ``nesterov``, ``adagrad``,
``rmsprop``, ``adam``, ``nadam``, the notes' ``adaptive_step``, ``backtracking_line_search``,
``clip``/``clip_by_global_norm`` and the sign-based ``rprop`` (iRprop-); step sizes may be
schedules (``constant_schedule``,
``exponential_decay``, ``robbins_monro``). :func:`minimize` runs one of them, and
:func:`minimize_stochastic` does minibatch SGD with the notes' ``N/M`` scaling. Second order:
:func:`newton` and the L-BFGS-B bridge :func:`lbfgs`. Constrained: :func:`solve_equality_qp`
(the KKT system), :func:`projected_gradient` with :func:`check_kkt`, and
:func:`norm_constrained_least_squares` (the ridge correspondence). Also: linear
:func:`conjugate_gradient` with a preconditioner, the fixed-matrix :func:`precondition`
transformation with :func:`max_stable_step` (``2 / lambda_max(P^{-1} H)``), and the
:func:`subgradient_method` for non-differentiable convex objectives.

Parameters may be an array or a dict (list, tuple) of arrays.

Examples
--------
>>> import numpy as np
>>> from mathlearn import autodiff as ad, optim
>>> rosen = lambda x: (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
>>> res = optim.minimize(ad.value_and_grad(rosen), np.array([-1.0, 1.0]),
...                      optim.adam(0.02), max_iter=20000, tol=1e-6)
>>> np.round(res.x, 4)
array([1., 1.])
"""

from ._adaptive_lr import adagrad, adam, nadam, rmsprop
from ._conjugate_gradient import conjugate_gradient
from ._equality_qp import solve_equality_qp
from ._gd import momentum, nesterov, sgd
from ._lbfgs import lbfgs
from ._minimize import minibatch_gradient, minimize, minimize_stochastic
from ._newton import newton
from ._norm_constrained import (
    NormConstrainedResult,
    norm_constrained_least_squares,
    ridge_squared_norm,
)
from ._preconditioning import max_stable_step, precondition
from ._projection import (
    KKTResult,
    check_kkt,
    project_box,
    project_l2_ball,
    projected_gradient,
)
from ._rprop import rprop
from ._schedules import constant_schedule, exponential_decay, inverse_scaling, robbins_monro
from ._step_control import adaptive_step, backtracking_line_search
from ._subgradient import subgradient_method
from ._transform import (
    GradientTransformation,
    apply_updates,
    chain,
    clip,
    clip_by_global_norm,
    global_norm,
    scale,
)

__all__ = [
    "GradientTransformation",
    "KKTResult",
    "NormConstrainedResult",
    "adagrad",
    "adam",
    "adaptive_step",
    "apply_updates",
    "backtracking_line_search",
    "chain",
    "check_kkt",
    "clip",
    "clip_by_global_norm",
    "conjugate_gradient",
    "constant_schedule",
    "exponential_decay",
    "global_norm",
    "inverse_scaling",
    "lbfgs",
    "max_stable_step",
    "minibatch_gradient",
    "minimize",
    "minimize_stochastic",
    "momentum",
    "nadam",
    "nesterov",
    "newton",
    "norm_constrained_least_squares",
    "precondition",
    "project_box",
    "project_l2_ball",
    "projected_gradient",
    "ridge_squared_norm",
    "rmsprop",
    "robbins_monro",
    "rprop",
    "scale",
    "sgd",
    "solve_equality_qp",
    "subgradient_method",
]
