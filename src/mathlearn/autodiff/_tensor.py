"""The computation graph: ``Tensor`` nodes, primitives, and the reverse sweep.

A ``Tensor`` wraps a NumPy array. When an operation is applied to tensors that require a
gradient, the result remembers the *primitive* that made it and its inputs: that is the
computation graph of Stuttgart "Introduction to Machine Learning" §4.1 (slides 4:25–4:28) (a
"deterministic Bayes net" ``x_i = f_i(x_parents)``).

Reverse mode (backpropagation, Imperial "Mathematics for Machine Learning" lecture 2) walks that
graph once from the output back to the inputs, carrying the vector ``dL/dx``
("all the partial gradients that are carried around are vectors", ibid.). Each primitive only has
to know how to multiply such a vector by its own Jacobian, its vector-Jacobian product (VJP); the
backward chain rule ``dL/dx = sum_{g : x in parents(g)} dL/dg * dg/dx`` (Stuttgart
"Introduction to Machine Learning" slide 4:28) is the accumulation below. The sweep is a loop over
a topological order, never a recursion, so a graph ten thousand operations deep is no problem.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

__all__ = ["Primitive", "Tensor", "backward", "is_grad_enabled", "no_grad"]

_GRAD_ENABLED = [True]


def is_grad_enabled() -> bool:
    """Whether operations on tensors currently record the graph.

    Returns
    -------
    bool
        ``False`` inside :func:`no_grad`, ``True`` otherwise.

    Examples
    --------
    >>> from mathlearn.autodiff import is_grad_enabled, no_grad
    >>> with no_grad():
    ...     inside = is_grad_enabled()
    >>> is_grad_enabled(), inside
    (True, False)
    """
    return _GRAD_ENABLED[-1]


@contextlib.contextmanager
def no_grad() -> Iterator[None]:
    """Context manager (or decorator) in which no graph is recorded.

    Operations on tensors still compute their values, but the results have no parents, so
    evaluation costs no memory for the backward pass.

    Examples
    --------
    >>> from mathlearn.autodiff import Tensor, no_grad
    >>> x = Tensor([1.0, 2.0], requires_grad=True)
    >>> with no_grad():
    ...     y = (x * x).sum()
    >>> y.requires_grad
    False
    """
    _GRAD_ENABLED.append(False)
    try:
        yield
    finally:
        _GRAD_ENABLED.pop()


class Primitive:
    """An operation with its forward rule and its vector-Jacobian products.

    Parameters
    ----------
    name : str
        Name shown in ``repr`` of the nodes it creates.
    forward : callable
        ``forward(*arrays, **params) -> ndarray`` on plain NumPy arrays.
    vjps : sequence of callables, or one callable if ``variadic``
        ``vjps[i](g, ans, *args, **params)`` returns ``g @ d(ans)/d(args[i])``, with the shape
        of ``args[i]``. For a ``variadic`` primitive (any number of inputs) a single callable
        ``vjp(g, ans, *args, argnum, **params)`` serves every input.
    variadic : bool, default=False
        Whether the primitive takes any number of inputs (like ``concatenate``).

    See Also
    --------
    mathlearn.autodiff.Tensor
        The array type whose operations are recorded.
    mathlearn.autodiff.grad
        Reverse-mode gradient of a scalar function.

    Notes
    -----
    The VJP rules are written with the operations of this package, which accept plain arrays
    as well as tensors. In a first-order backward pass they receive plain arrays and compute
    plain arrays; with ``create_graph=True`` they receive tensors and record their own graph,
    which is how Hessians are obtained (reverse over reverse).

    Examples
    --------
    A new operation is one line: its forward rule and its VJP, ``d(x^3)/dx = 3 x^2``.

    >>> import numpy as np
    >>> from mathlearn.autodiff import Primitive, grad
    >>> cube = Primitive("cube", lambda x: x**3, (lambda g, ans, x: g * 3 * x**2,))
    >>> float(grad(cube)(np.array(2.0)))
    12.0
    """

    def __init__(self, name: str, forward: Callable, vjps, *, variadic: bool = False):
        self.name = name
        self.forward = forward
        self.vjps = vjps
        self.variadic = variadic

    def vjp(self, argnum: int, g, ans, args, params):
        if self.variadic:
            return self.vjps(g, ans, *args, argnum=argnum, **params)
        return self.vjps[argnum](g, ans, *args, **params)

    def __call__(self, *args, **params):
        values, record = [], False
        any_tensor = False
        for a in args:
            if isinstance(a, Tensor):
                any_tensor = True
                record = record or a.requires_grad
                values.append(a.value)
            else:
                values.append(a)
        out = self.forward(*values, **params)
        if not any_tensor:
            return out
        if record and _GRAD_ENABLED[-1]:
            return Tensor(out, _node=(self, args, params))
        return Tensor(out)

    def __repr__(self) -> str:
        return f"Primitive({self.name!r})"


def _as_array(value) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind in "biu":
        # Integer inputs are promoted so that their gradients can be non-integer.
        arr = arr.astype(np.float64)
    return arr


class Tensor:
    """A NumPy array that records the operations applied to it.

    Parameters
    ----------
    value : array-like
        The data; integer and boolean data become float64, float32 stays float32.
    requires_grad : bool, default=False
        Whether gradients with respect to this tensor are wanted (a *leaf* of the graph).

    Attributes
    ----------
    value : ndarray
        The data.
    grad : ndarray or None
        Filled by :meth:`backward` on leaves with ``requires_grad``; same shape as ``value``.

    See Also
    --------
    mathlearn.autodiff.grad
        Reverse-mode gradient of a scalar function.
    mathlearn.autodiff.Primitive
        An operation with its vector-Jacobian products.

    Examples
    --------
    >>> from mathlearn.autodiff import Tensor
    >>> x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    array([2., 4., 6.])
    """

    # NumPy defers to our reflected operators (``array * tensor`` -> ``Tensor.__rmul__``).
    __array_ufunc__ = None
    __slots__ = ("_node", "grad", "requires_grad", "value")

    def __init__(self, value, requires_grad: bool = False, *, _node=None):
        self.value = value if _node is not None else _as_array(value)
        self._node = _node
        self.requires_grad = bool(requires_grad) or _node is not None
        self.grad = None

    @property
    def shape(self) -> tuple[int, ...]:
        return np.shape(self.value)

    @property
    def ndim(self) -> int:
        return np.ndim(self.value)

    @property
    def size(self) -> int:
        return np.size(self.value)

    @property
    def dtype(self):
        return np.asarray(self.value).dtype

    @property
    def T(self) -> Tensor:
        return _p.transpose(self)

    def __len__(self) -> int:
        return len(self.value)

    def __repr__(self) -> str:
        op = f", op={self._node[0].name}" if self._node is not None else ""
        return f"Tensor({np.array2string(np.asarray(self.value), precision=4)}{op})"

    def __float__(self) -> float:
        return float(self.value)

    def numpy(self) -> np.ndarray:
        """The underlying array (not a copy)."""
        return self.value

    def detach(self) -> Tensor:
        """The same value, cut from the graph."""
        return Tensor(self.value)

    def backward(self, seed=None) -> None:
        """Accumulate ``d self / d leaf`` into the ``grad`` of every leaf that requires it.

        ``seed`` is the cotangent ``dL/d self`` (default: ones, i.e. the gradient of a scalar).
        """
        grads = backward(self, seed)
        for leaf, g in grads.values():
            leaf.grad = g if leaf.grad is None else leaf.grad + g

    __add__ = lambda self, o: _p.add(self, o)  # noqa: E731
    __radd__ = lambda self, o: _p.add(o, self)  # noqa: E731
    __sub__ = lambda self, o: _p.subtract(self, o)  # noqa: E731
    __rsub__ = lambda self, o: _p.subtract(o, self)  # noqa: E731
    __mul__ = lambda self, o: _p.multiply(self, o)  # noqa: E731
    __rmul__ = lambda self, o: _p.multiply(o, self)  # noqa: E731
    __truediv__ = lambda self, o: _p.divide(self, o)  # noqa: E731
    __rtruediv__ = lambda self, o: _p.divide(o, self)  # noqa: E731
    __pow__ = lambda self, o: _p.power(self, o)  # noqa: E731
    __rpow__ = lambda self, o: _p.power(o, self)  # noqa: E731
    __matmul__ = lambda self, o: _p.matmul(self, o)  # noqa: E731
    __rmatmul__ = lambda self, o: _p.matmul(o, self)  # noqa: E731
    __neg__ = lambda self: _p.negative(self)  # noqa: E731
    __getitem__ = lambda self, idx: _p.getitem(self, index=_value(idx))  # noqa: E731
    # Comparisons are not differentiable: they return plain boolean arrays (masks). Nodes are
    # still hashed by identity.
    __hash__ = object.__hash__
    __eq__ = lambda self, o: self.value == _value(o)  # type: ignore[attr-defined]  # noqa: E731
    __ne__ = lambda self, o: self.value != _value(o)  # type: ignore[attr-defined]  # noqa: E731
    __lt__ = lambda self, o: self.value < _value(o)  # noqa: E731
    __le__ = lambda self, o: self.value <= _value(o)  # noqa: E731
    __gt__ = lambda self, o: self.value > _value(o)  # noqa: E731
    __ge__ = lambda self, o: self.value >= _value(o)  # noqa: E731

    def sum(self, axis=None, keepdims: bool = False) -> Tensor:
        return _p.sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis=None, keepdims: bool = False) -> Tensor:
        return _p.mean(self, axis=axis, keepdims=keepdims)

    def max(self, axis=None, keepdims: bool = False) -> Tensor:
        return _p.max(self, axis=axis, keepdims=keepdims)

    def reshape(self, *shape) -> Tensor:
        return _p.reshape(self, shape[0] if len(shape) == 1 else shape)

    def transpose(self, *axes) -> Tensor:
        return _p.transpose(self, (axes[0] if len(axes) == 1 else axes) or None)


def _toposort(output: Tensor) -> list[Tensor]:
    """Nodes that ``output`` depends on (and that need a gradient), inputs first.

    Iterative depth-first search: a node is emitted once all its inputs have been.
    """
    order: list[Tensor] = []
    visited: set[int] = set()
    stack: list[tuple[Tensor, bool]] = [(output, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        stack.append((node, True))
        if node._node is not None:
            for parent in node._node[1]:
                if isinstance(parent, Tensor) and parent.requires_grad:
                    if id(parent) not in visited:
                        stack.append((parent, False))
    return order


def backward(output: Tensor, seed: Any = None, *, create_graph: bool = False) -> dict:
    """Reverse sweep: the gradient of ``<seed, output>`` with respect to every leaf.

    Parameters
    ----------
    output : Tensor
    seed : array-like, optional
        Cotangent of the output, ``dL/d output``; default ones (for a scalar output: 1).
    create_graph : bool, default=False
        Record the backward pass itself, so that the returned gradients are tensors that can
        be differentiated again (used for Hessians).

    Returns
    -------
    grads : dict
        ``{id(leaf): (leaf, gradient)}`` for every leaf with ``requires_grad`` reachable from
        ``output``; each gradient has its leaf's shape.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.autodiff import Tensor, backward
    >>> x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    >>> grads = backward((x * x).sum())
    >>> grads[id(x)][1]  # d sum(x^2) / dx = 2 x
    array([2., 4.])
    """
    if seed is None:
        seed = np.ones_like(output.value)
    elif not create_graph:
        seed = np.broadcast_to(np.asarray(seed, dtype=output.dtype), output.shape)
    grads: dict[int, object] = {id(output): seed}
    leaves: dict = {}
    context = contextlib.nullcontext() if create_graph else no_grad()
    with context:
        for node in reversed(_toposort(output)):
            g = grads.pop(id(node), None)
            if g is None:
                continue
            if node._node is None:
                leaves[id(node)] = (node, g)
                continue
            prim, args, params = node._node
            # First order: the rules see plain arrays. create_graph: they see the tensors.
            ans = node if create_graph else node.value
            call_args = args if create_graph else [_value(a) for a in args]
            for i, a in enumerate(args):
                if isinstance(a, Tensor) and a.requires_grad:
                    ga = prim.vjp(i, g, ans, call_args, params)
                    prev = grads.get(id(a))
                    grads[id(a)] = ga if prev is None else prev + ga
    return leaves


def _value(x):
    return x.value if isinstance(x, Tensor) else x


from . import _primitives as _p  # noqa: E402  (the operators above are defined there)
