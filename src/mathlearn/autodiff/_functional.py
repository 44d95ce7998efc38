"""Functional differentiation: ``grad``, ``value_and_grad``, ``jacobian``, ``hessian``, ``hvp``.

These turn a Python function of arrays into a function that returns derivatives, as
``jax.grad`` and ``autograd.grad`` do. The function is written with the operations of
:mod:`mathlearn.autodiff` (``ad.tanh(X @ W + b)``, ``ad.sum(e * e)``); its arguments are
wrapped in :class:`Tensor` leaves, the graph is recorded during the call, and one reverse
sweep gives the gradient with respect to every entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..utils._tree import tree_flatten, tree_unflatten
from ._tensor import Tensor, _as_array, backward

__all__ = ["grad", "hessian", "hvp", "jacobian", "value_and_grad"]


def _plain(g, like: np.ndarray) -> np.ndarray:
    """A writable array with ``like``'s shape and dtype (gradients may be broadcast views)."""
    g = np.asarray(g, dtype=like.dtype)
    if g.shape != like.shape:
        g = np.broadcast_to(g, like.shape)
    return g.copy() if not g.flags.writeable else g


def _wrap_args(args: Sequence, argnums: tuple[int, ...]):
    """Replace the differentiated arguments by trees of fresh leaves."""
    args = list(args)
    wrapped = []
    for i in argnums:
        leaves, treedef = tree_flatten(args[i])
        tensors = [Tensor(_as_array(leaf), requires_grad=True) for leaf in leaves]
        args[i] = tree_unflatten(treedef, tensors)
        wrapped.append((tensors, treedef))
    return args, wrapped


def _collect(grads: dict, wrapped):
    out = []
    for tensors, treedef in wrapped:
        leaves = []
        for t in tensors:
            g = grads.get(id(t))
            leaves.append(np.zeros_like(t.value) if g is None else _plain(g[1], t.value))
        out.append(tree_unflatten(treedef, leaves))
    return out


def _argnums(argnums) -> tuple[int, ...]:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def value_and_grad(fun: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """Function returning ``(fun(*args), gradient)`` for a scalar-valued ``fun``.

    Parameters
    ----------
    fun : callable
        Scalar-valued function written with :mod:`mathlearn.autodiff` operations.
    argnums : int or sequence of int, default=0
        Which positional argument(s) to differentiate. Each may be an array or a dict
        (or list/tuple) of arrays; its gradient has the same structure and shapes.

    Returns
    -------
    callable
        ``(*args, **kwargs) -> (value, gradient)``; with a sequence ``argnums`` the gradient
        is a tuple, one entry per argument.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad
    >>> f = lambda x: ad.sum(x ** 2)
    >>> value, g = ad.value_and_grad(f)(np.array([1.0, 2.0]))
    >>> float(value), g
    (5.0, array([2., 4.]))
    """
    nums = _argnums(argnums)

    def wrapped(*args: Any, **kwargs: Any):
        targs, wrapped_leaves = _wrap_args(args, nums)
        out = fun(*targs, **kwargs)
        value = np.asarray(out.value if isinstance(out, Tensor) else out)
        if value.size != 1:
            raise ValueError(
                f"grad needs a scalar-valued function; got output of shape {value.shape}. "
                "Use jacobian for vector-valued functions."
            )
        grads = backward(out) if isinstance(out, Tensor) and out.requires_grad else {}
        result = _collect(grads, wrapped_leaves)
        return value.reshape(())[()], (result[0] if isinstance(argnums, int) else tuple(result))

    return wrapped


def grad(fun: Callable, argnums: int | Sequence[int] = 0) -> Callable:
    """Gradient of a scalar-valued function, with each argument's structure and shapes.

    Parameters
    ----------
    fun : callable
        Scalar-valued function written with :mod:`mathlearn.autodiff` operations.
    argnums : int or sequence of int, default=0
        Which positional argument(s) to differentiate (see :func:`value_and_grad`).

    Returns
    -------
    callable
        ``(*args, **kwargs) -> gradient``, a tuple of gradients for a sequence ``argnums``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad
    >>> A = np.array([[1.0, 2.0], [3.0, 4.0]]); x = np.array([1.0, -1.0]); y = np.zeros(2)
    >>> ad.grad(lambda A: ad.sum((A @ x - y) ** 2))(A)  # = 2 (Ax - y) x^T
    array([[-2.,  2.],
           [-2.,  2.]])
    """
    vg = value_and_grad(fun, argnums)
    return lambda *args, **kwargs: vg(*args, **kwargs)[1]


def jacobian(fun: Callable, argnums: int = 0) -> Callable:
    """Jacobian ``d fun / d x`` of an array-valued function of an array argument.

    Returns an array of shape ``out.shape + x.shape`` (the notes' ``M x N`` Jacobian for a
    map ``R^N -> R^M``, Imperial "Mathematics for Machine Learning" lecture 1.4), built row by row
    with one reverse sweep per output entry over a single recorded graph.

    Parameters
    ----------
    fun : callable
        Array-valued function written with :mod:`mathlearn.autodiff` operations.
    argnums : int, default=0
        The positional argument (an array) to differentiate.

    Returns
    -------
    callable
        ``(*args, **kwargs) -> ndarray`` of shape ``out.shape + x.shape``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad
    >>> A = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> ad.jacobian(lambda x: A @ x)(np.zeros(2))  # d(Ax)/dx = A
    array([[1., 2.],
           [3., 4.],
           [5., 6.]])
    """

    def wrapped(*args: Any, **kwargs: Any) -> np.ndarray:
        arglist = list(args)
        x = Tensor(_as_array(arglist[argnums]), requires_grad=True)
        arglist[argnums] = x
        out = fun(*arglist, **kwargs)
        out_value = np.asarray(out.value if isinstance(out, Tensor) else out)
        jac = np.zeros(out_value.shape + x.shape, dtype=np.result_type(out_value, x.value))
        if not (isinstance(out, Tensor) and out.requires_grad):
            return jac
        rows = jac.reshape(out_value.size, *x.shape)
        seed = np.zeros(out_value.size, dtype=out_value.dtype)
        for k in range(out_value.size):
            seed[:] = 0
            seed[k] = 1
            g = backward(out, seed.reshape(out_value.shape)).get(id(x))
            if g is not None:
                rows[k] = g[1]
        return jac

    return wrapped


def _grad_graph(fun: Callable, x: np.ndarray):
    """Leaf ``x`` and the gradient of ``fun`` at it, as a tensor that can be differentiated."""
    leaf = Tensor(_as_array(x), requires_grad=True)
    out = fun(leaf)
    if not (isinstance(out, Tensor) and out.requires_grad):
        return leaf, None
    if out.size != 1:
        raise ValueError(f"hessian needs a scalar-valued function; got shape {out.shape}.")
    g = backward(out, create_graph=True).get(id(leaf))
    return leaf, None if g is None else g[1]


def hessian(fun: Callable) -> Callable:
    """Hessian ``d^2 fun / dx dx`` of a scalar function of one array, shape ``x.shape * 2``.

    Reverse over reverse: the gradient is computed with its own graph recorded, then
    differentiated once per entry (Imperial "Mathematics for Machine Learning" lecture 1.5).

    Parameters
    ----------
    fun : callable
        Scalar-valued function of one array, written with :mod:`mathlearn.autodiff`
        operations.

    Returns
    -------
    callable
        ``x -> ndarray`` of shape ``x.shape * 2``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad
    >>> ad.hessian(lambda x: x[0] ** 2 * x[1])(np.array([1.0, 2.0]))
    array([[4., 2.],
           [2., 0.]])
    """

    def wrapped(x) -> np.ndarray:
        leaf, g = _grad_graph(fun, x)
        n = leaf.size
        hess = np.zeros((n, n), dtype=leaf.dtype)
        if isinstance(g, Tensor) and g.requires_grad:
            g_flat = g.reshape(-1)
            for i in range(n):
                row = backward(g_flat[i]).get(id(leaf))
                if row is not None:
                    hess[i] = np.reshape(row[1], -1)
        return hess.reshape(leaf.shape + leaf.shape)

    return wrapped


def hvp(fun: Callable, x: Any, v: Any) -> np.ndarray:
    """Hessian-vector product ``H(x) v`` without forming ``H``.

    Differentiates ``<grad fun(x), v>`` once more (the second directional derivative of
    Imperial "Mathematics for Machine Learning" lecture 1.5, ``d/dθ [df/dθ v] = v^T H``).

    Parameters
    ----------
    fun : callable
        Scalar-valued function of one array, written with :mod:`mathlearn.autodiff`
        operations.
    x : array-like
        The point ``x``.
    v : array-like of x's shape
        The direction.

    Returns
    -------
    ndarray of x's shape
        ``H(x) v``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad
    >>> ad.hvp(lambda x: ad.sum(x ** 3), np.array([1.0, 2.0]), np.array([1.0, 1.0]))
    array([ 6., 12.])
    """
    leaf, g = _grad_graph(fun, x)
    v = np.asarray(v, dtype=leaf.dtype)
    if v.shape != leaf.shape:
        raise ValueError(f"v must have the shape of x, {leaf.shape}; got {v.shape}.")
    if not (isinstance(g, Tensor) and g.requires_grad):
        return np.zeros_like(leaf.value)
    from ._primitives import sum as _sum

    out = backward(_sum(g * v)).get(id(leaf))
    return np.zeros_like(leaf.value) if out is None else _plain(out[1], leaf.value)
