"""The optimisation loop, deterministic and minibatch-stochastic.

The generic loop of Imperial "Mathematics for Machine Learning" lecture 5: start at ``theta_0``,
iterate with the gradient, stop on a computation budget (``max_iter``) or when the gradient
is small (``||grad L|| <= tol``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy.optimize import OptimizeResult

from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, validate_params
from ..utils._tree import tree_map
from ..utils.validation import RandomStateLike, check_random_state
from ._transform import GradientTransformation, apply_updates, global_norm

__all__ = ["minibatch_gradient", "minimize", "minimize_stochastic"]


def _copy_params(x0: Any) -> Any:
    return tree_map(lambda p: np.array(p, dtype=np.result_type(p, 0.0)), x0)


@validate_params(
    {
        "fun_and_grad": [callable],
        "optimizer": [GradientTransformation],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "callback": [callable, None],
        "fun": [callable, None],
    }
)
def minimize(
    fun_and_grad: Callable[[Any], tuple[float, Any]],
    x0: Any,
    optimizer: GradientTransformation,
    *,
    max_iter: int = 1000,
    tol: float = 1e-6,
    callback: Callable[[int, Any, float, Any], bool | None] | None = None,
    fun: Callable[[Any], float] | None = None,
) -> OptimizeResult:
    """Minimise ``f`` with a first-order optimiser, recording the objective history.

    Parameters
    ----------
    fun_and_grad : callable
        ``fun_and_grad(params) -> (f, grad)``, ``grad`` with the structure of ``params``
        (``mathlearn.autodiff.value_and_grad(f)`` gives one).
    x0 : array or dict (list, tuple) of arrays
        Starting point ``theta_0`` (copied, never modified).
    optimizer : GradientTransformation
        E.g. ``sgd(0.1)``, ``chain(clip_by_global_norm(1), adam(1e-2))``.
    max_iter : int, default=1000
        Budget of updates.
    tol : float, default=1e-6
        Stop when the gradient's global norm is at most ``tol``.
    callback : callable, optional
        ``callback(iteration, params, f, grad)`` after each update; a truthy return stops.
    fun : callable, optional
        ``fun(params) -> f`` without the gradient, used by line searches to save work
        (default: the first output of ``fun_and_grad``).

    Returns
    -------
    scipy.optimize.OptimizeResult
        ``x`` (final parameters), ``fun``, ``jac`` (gradient at ``x``), ``nit`` (updates
        made), ``success`` (gradient norm reached ``tol``), ``message``, ``history``
        (objective at ``x_0, ..., x_nit``, shape ``(nit + 1,)``) and ``grad_norms``.

    Warns
    -----
    ConvergenceWarning
        When ``max_iter`` is reached first, or when the objective becomes non-finite.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad, optim
    >>> f = ad.value_and_grad(lambda x: ad.sum((x - 3.0) ** 2))
    >>> res = optim.minimize(f, np.zeros(2), optim.sgd(0.5), tol=1e-10)
    >>> res.x, res.nit
    (array([3., 3.]), 1)
    """
    value_fn = fun if fun is not None else (lambda p: fun_and_grad(p)[0])
    x = _copy_params(x0)
    state = optimizer.init(x)
    f, g = fun_and_grad(x)
    f = float(f)
    history, grad_norms = [f], [global_norm(g)]
    nit, success, message = 0, False, ""
    while True:
        if not np.isfinite(f):
            message = f"the objective became non-finite ({f}) after {nit} updates (diverged)."
            break
        if grad_norms[-1] <= tol:
            success, message = True, f"gradient norm {grad_norms[-1]:.3g} <= tol = {tol:g}."
            break
        if nit >= max_iter:
            message = (
                f"max_iter = {max_iter} reached with gradient norm {grad_norms[-1]:.3g} "
                f"> tol = {tol:g}."
            )
            break
        updates, state = optimizer.update(g, state, x, value=f, value_fn=value_fn)
        x = apply_updates(x, updates)
        nit += 1
        f, g = fun_and_grad(x)
        f = float(f)
        history.append(f)
        grad_norms.append(global_norm(g))
        if callback is not None and callback(nit, x, f, g):
            message = f"stopped by the callback after {nit} updates."
            break
    if not success and not message.startswith("stopped"):
        warnings.warn(f"minimize did not converge: {message}", ConvergenceWarning, stacklevel=2)
    return OptimizeResult(
        x=x,
        fun=f,
        jac=g,
        nit=nit,
        success=success,
        message=message,
        history=np.asarray(history),
        grad_norms=np.asarray(grad_norms),
        state=state,
    )


@validate_params(
    {
        "grad_sum": [callable],
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "rng": ["random_state"],
        "replace": ["boolean"],
    }
)
def minibatch_gradient(
    grad_sum: Callable[[Any, np.ndarray], Any],
    params: Any,
    n_samples: int,
    batch_size: int,
    rng: np.random.Generator,
    *,
    replace: bool = True,
) -> tuple[Any, np.ndarray]:
    """Unbiased minibatch estimate of the gradient of a sum ``L = sum_n L_n``.

    Parameters
    ----------
    grad_sum : callable
        ``grad_sum(params, idx) -> sum_{m in idx} grad L_m(params)``.
    params : array or tree of arrays
    n_samples : int
        ``N``, the number of terms.
    batch_size : int
        ``M``, the number of terms drawn.
    rng : numpy.random.Generator
    replace : bool, default=True
        Draw the indices uniformly with replacement, as the notes do (``P(S) = N^{-M}``).

    Returns
    -------
    estimate : tree of arrays
        ``g_hat = (N / M) sum_{m in S} grad L_m``.
    idx : ndarray of shape (M,)
        The indices drawn.

    Notes
    -----
    Imperial "Mathematics for Machine Learning" lecture 6: ``E_S[g_hat] = grad L`` (unbiased) and,
    with replacement, ``V[g_hat] = (N^2 / M) V_{m ~ U(1..N)}[grad L_m]``. If the loss is a mean
    instead of a sum, the factor ``N`` drops out: scale by ``1/M``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.optim import minibatch_gradient
    >>> x = np.arange(10.0)  # L(w) = sum_n (w - x_n)^2 / 2, grad = sum_n (w - x_n)
    >>> g, idx = minibatch_gradient(lambda w, i: np.sum(w - x[i]), 0.0, 10, 5,
    ...                             np.random.default_rng(0))
    >>> bool(np.isclose(g, -2.0 * x[idx].sum()))
    True
    """
    if not replace and batch_size > n_samples:
        raise ValueError(f"batch_size {batch_size} > n_samples {n_samples} without replacement.")
    idx = (
        rng.integers(0, n_samples, size=batch_size)
        if replace
        else rng.choice(n_samples, size=batch_size, replace=False)
    )
    factor = n_samples / batch_size
    return tree_map(lambda g: factor * np.asarray(g), grad_sum(params, idx)), idx


@validate_params(
    {
        "fun_and_grad_sum": [callable],
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "optimizer": [GradientTransformation],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "replace": ["boolean"],
        "random_state": ["random_state"],
        "fun": [callable, None],
        "record_every": [Interval(Integral, 1, None, closed="left")],
        "callback": [callable, None],
    }
)
def minimize_stochastic(
    fun_and_grad_sum: Callable[[Any, np.ndarray], tuple[float, Any]],
    x0: Any,
    n_samples: int,
    optimizer: GradientTransformation,
    *,
    batch_size: int = 32,
    max_iter: int = 1000,
    replace: bool = True,
    random_state: RandomStateLike = None,
    fun: Callable[[Any], float] | None = None,
    record_every: int = 1,
    callback: Callable[[int, Any, float, Any], bool | None] | None = None,
) -> OptimizeResult:
    """Minibatch stochastic gradient descent on a sum ``L = sum_n L_n``.

    Parameters
    ----------
    fun_and_grad_sum : callable
        ``fun_and_grad_sum(params, idx) -> (sum_{m in idx} L_m, sum_{m in idx} grad L_m)``.
    x0 : array or tree of arrays
    n_samples : int
        ``N``.
    optimizer : GradientTransformation
        Fed the scaled estimate ``g_hat = (N / M) sum grad L_m``, e.g. ``sgd(robbins_monro(...))``.
    batch_size : int, default=32
        ``M``.
    max_iter : int, default=1000
        Number of updates (there is no gradient-norm test: the estimate is noisy).
    replace : bool, default=True
        Draw indices with replacement (the notes' scheme).
    random_state : int, Generator or None
    fun : callable, optional
        Full objective ``fun(params)``, recorded in ``full_history`` every ``record_every``
        updates (and at the start and the end).
    record_every : int, default=1
    callback : callable, optional
        ``callback(iteration, params, f_hat, g_hat)``; a truthy return stops.

    Returns
    -------
    scipy.optimize.OptimizeResult
        ``x``, ``nit``, ``history`` (the scaled minibatch objective estimates
        ``(N / M) sum_{m in S} L_m`` at each update), ``full_history`` and
        ``full_history_iters`` when ``fun`` is given.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import optim
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((100, 2)); y = X @ np.array([1.0, -1.0])
    >>> def fg(w, idx):
    ...     r = y[idx] - X[idx] @ w
    ...     return 0.5 * r @ r, -X[idx].T @ r
    >>> res = optim.minimize_stochastic(fg, np.zeros(2), 100, optim.sgd(1e-3), batch_size=10,
    ...                                 max_iter=2000, random_state=0)
    >>> np.round(res.x, 3)
    array([ 1., -1.])
    """
    if not replace and batch_size > n_samples:
        raise ValueError(f"batch_size {batch_size} > n_samples {n_samples} without replacement.")
    rng = check_random_state(random_state)
    x = _copy_params(x0)
    state = optimizer.init(x)
    history, full, full_iters = [], [], []
    factor = n_samples / batch_size
    nit = 0
    for nit in range(1, max_iter + 1):
        if fun is not None and (nit - 1) % record_every == 0:
            full.append(float(fun(x)))
            full_iters.append(nit - 1)
        idx = (
            rng.integers(0, n_samples, size=batch_size)
            if replace
            else rng.choice(n_samples, size=batch_size, replace=False)
        )
        f_b, g_b = fun_and_grad_sum(x, idx)
        f_hat = factor * float(f_b)
        g_hat = tree_map(lambda g: factor * np.asarray(g), g_b)
        history.append(f_hat)
        updates, state = optimizer.update(g_hat, state, x)
        x = apply_updates(x, updates)
        if callback is not None and callback(nit, x, f_hat, g_hat):
            break
    if fun is not None:
        full.append(float(fun(x)))
        full_iters.append(nit)
    return OptimizeResult(
        x=x,
        nit=nit,
        success=True,
        message=f"{nit} stochastic updates with batch size {batch_size}.",
        history=np.asarray(history),
        full_history=np.asarray(full),
        full_history_iters=np.asarray(full_iters),
        state=state,
    )
