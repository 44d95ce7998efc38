"""The table of primitives: each operation's forward rule next to its VJP.

Every entry reads ``name = Primitive("name", forward, (vjp_wrt_arg0, vjp_wrt_arg1, ...))``;
``vjp(g, ans, *args)`` maps the cotangent ``g = dL/d ans`` to ``dL/d arg``. The rules are
the derivative table of the notes in matrix form (Imperial "Mathematics for Machine Learning"
lectures 1.2–2: elementwise functions have diagonal Jacobians, so their VJP is an elementwise
product; ``d(Ax)/dx = A`` gives ``g A``; matrix parameters get the outer product ``g x^T``, never a
rank-3 tensor).

Broadcasting: an operand that was broadcast (a bias ``b`` added to every row of ``XW``) has
received the same contribution along every broadcast axis, so its gradient is the sum over
those axes (``_unbroadcast``) and has the operand's own shape.

Every function here accepts tensors or plain arrays; on plain arrays it just computes NumPy's
result, which is what lets the VJP rules be written with these same functions.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.linalg as sla
from scipy import special

from ._tensor import Primitive, _value

__all__ = [
    "abs",
    "broadcast_to",
    "cholesky",
    "concatenate",
    "cos",
    "diagonal",
    "divide",
    "erf",
    "exp",
    "gelu",
    "getitem",
    "leaky_relu",
    "log",
    "log_softmax",
    "logdet",
    "logsumexp",
    "matmul",
    "max",
    "mean",
    "multiply",
    "negative",
    "power",
    "relu",
    "reshape",
    "sigmoid",
    "sin",
    "softmax",
    "softplus",
    "solve",
    "solve_triangular",
    "sqrt",
    "stack",
    "subtract",
    "sum",
    "tanh",
    "transpose",
    "where",
]


def _unbroadcast(g, shape: tuple[int, ...]):
    """Sum ``g`` over the axes along which an operand of ``shape`` was broadcast."""
    gshape = np.shape(g)
    if gshape == tuple(shape):
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1
    )
    return reshape(sum(g, axis=axes), shape)


def _keepdims_shape(shape: tuple[int, ...], axis) -> tuple[int, ...]:
    """Shape of a reduction over ``axis`` with ``keepdims=True``."""
    if axis is None:
        return (1,) * len(shape)
    chosen = [axis] if isinstance(axis, int | np.integer) else list(axis)
    axes = {int(a) % len(shape) for a in chosen}
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


add = Primitive(
    "add",
    np.add,
    (
        lambda g, ans, x, y: _unbroadcast(g, np.shape(x)),
        lambda g, ans, x, y: _unbroadcast(g, np.shape(y)),
    ),
)
subtract = Primitive(
    "subtract",
    np.subtract,
    (
        lambda g, ans, x, y: _unbroadcast(g, np.shape(x)),
        lambda g, ans, x, y: _unbroadcast(-g, np.shape(y)),
    ),
)
multiply = Primitive(
    "multiply",
    np.multiply,
    (
        lambda g, ans, x, y: _unbroadcast(g * y, np.shape(x)),
        lambda g, ans, x, y: _unbroadcast(g * x, np.shape(y)),
    ),
)
# Quotient rule (Imperial "Mathematics for Machine Learning" lecture 1.2):
# d(x/y) = dx / y - x dy / y^2 = dx / y - ans dy / y.
divide = Primitive(
    "divide",
    np.divide,
    (
        lambda g, ans, x, y: _unbroadcast(g / y, np.shape(x)),
        lambda g, ans, x, y: _unbroadcast(-g * ans / y, np.shape(y)),
    ),
)
negative = Primitive("negative", np.negative, (lambda g, ans, x: -g,))


# d x^p / dx = p x^(p-1), which is 0 for p = 0 whatever x (x^0 = 1 is constant): the
# exponent p - 1 is replaced by 1 there, so that 0 * 0^(-1) = 0 * inf = NaN never arises.
# d x^p / dp = x^p log x, which tends to 0 as x -> 0 (p > 0): a zero base contributes
# x^p log 1 = 0 instead of 0 * (-inf) = NaN.
def _power_vjp_x(g, ans, x, p):
    exponent = where(np.asarray(_value(p)) == 0, 1.0, p - 1)
    return _unbroadcast(g * p * x**exponent, np.shape(x))


power = Primitive(
    "power",
    np.power,
    (
        _power_vjp_x,
        lambda g, ans, x, p: _unbroadcast(
            g * ans * log(where(_value(x) == 0, 1.0, x)), np.shape(p)
        ),
    ),
)

# where(cond, x, y): the gradient goes to the branch that was selected (cond is a constant).
where = Primitive(
    "where",
    np.where,
    (
        lambda g, ans, c, x, y: np.zeros(np.shape(c)),  # piecewise constant in cond
        lambda g, ans, c, x, y: _unbroadcast(g * _value(c), np.shape(x)),
        lambda g, ans, c, x, y: _unbroadcast(g * ~np.asarray(_value(c), dtype=bool), np.shape(y)),
    ),
)


exp = Primitive("exp", np.exp, (lambda g, ans, x: g * ans,))
log = Primitive("log", np.log, (lambda g, ans, x: g / x,))
sqrt = Primitive("sqrt", np.sqrt, (lambda g, ans, x: g * 0.5 / ans,))
sin = Primitive("sin", np.sin, (lambda g, ans, x: g * cos(x),))
cos = Primitive("cos", np.cos, (lambda g, ans, x: -g * sin(x),))
abs = Primitive("abs", np.abs, (lambda g, ans, x: g * np.sign(_value(x)),))
tanh = Primitive("tanh", np.tanh, (lambda g, ans, x: g * (1 - ans * ans),))
sigmoid = Primitive("sigmoid", special.expit, (lambda g, ans, x: g * ans * (1 - ans),))
relu = Primitive("relu", lambda x: np.maximum(x, 0), (lambda g, ans, x: g * (_value(x) > 0),))
softplus = Primitive("softplus", lambda x: np.logaddexp(0, x), (lambda g, ans, x: g * sigmoid(x),))


_TWO_OVER_SQRT_PI = 1.1283791670955126
# d erf(x)/dx = 2 / sqrt(pi) exp(-x^2).
erf = Primitive("erf", special.erf, (lambda g, ans, x: g * _TWO_OVER_SQRT_PI * exp(-x * x),))


def _leaky_relu(x, negative_slope=0.01):
    x = np.asarray(x)
    return np.where(x > 0, x, x * np.asarray(negative_slope, dtype=x.dtype))


def _leaky_relu_vjp(g, ans, x, negative_slope=0.01):
    xv = np.asarray(_value(x))
    return g * np.where(xv > 0, 1.0, negative_slope).astype(np.result_type(xv, np.float32))


# max(a x, x) for 0 <= a < 1 (the notes' leaky ReLU has a = 0.01); the gradient at 0 is a.
leaky_relu = Primitive("leaky_relu", _leaky_relu, (_leaky_relu_vjp,))

_SQRT_HALF = 0.7071067811865476
_INV_SQRT_2PI = 0.3989422804014327


def _gelu(x):
    x = np.asarray(x)
    return (0.5 * x * (1.0 + special.erf(x * _SQRT_HALF))).astype(x.dtype, copy=False)


def _gelu_vjp(g, ans, x):
    # d/dx x Phi(x) = Phi(x) + x phi(x), Phi and phi the standard normal cdf and density;
    # written with the primitives so that it can be differentiated again.
    return g * (0.5 * (1.0 + erf(x * _SQRT_HALF)) + x * _INV_SQRT_2PI * exp(-0.5 * x * x))


# The exact GELU x Phi(x) (Hendrycks and Gimpel, 2016), not the tanh approximation.
gelu = Primitive("gelu", _gelu, (_gelu_vjp,))


def _matmul_vjp_a(g, ans, a, b):
    if np.ndim(b) == 1:  # (..., m, k) @ (k,) -> (..., m): dA = g b^T
        if np.ndim(a) == 1:
            return g * b
        return _unbroadcast(reshape(g, (*np.shape(g), 1)) * b, np.shape(a))
    if np.ndim(a) == 1:  # (k,) @ (..., k, n) -> (..., n)
        return _unbroadcast(matmul(b, reshape(g, (*np.shape(g), 1)))[..., 0], np.shape(a))
    return _unbroadcast(matmul(g, swapaxes(b)), np.shape(a))


def _matmul_vjp_b(g, ans, a, b):
    if np.ndim(a) == 1:  # dB = a g^T
        if np.ndim(b) == 1:
            return g * a
        return _unbroadcast(
            reshape(a, (-1, 1)) * reshape(g, (*np.shape(g)[:-1], 1, -1)), np.shape(b)
        )
    if np.ndim(b) == 1:
        return _unbroadcast(
            matmul(reshape(g, (*np.shape(g)[:-1], 1, -1)), a)[..., 0, :], np.shape(b)
        )
    return _unbroadcast(matmul(swapaxes(a), g), np.shape(b))


# d(Ax)/dx = A and dL/dA = g x^T (Imperial "Mathematics for Machine Learning" lectures 1.4 and 2).
matmul = Primitive("matmul", np.matmul, (_matmul_vjp_a, _matmul_vjp_b))


def _sum_vjp(g, ans, x, axis=None, keepdims=False):
    shape = np.shape(x)
    return broadcast_to(reshape(g, _keepdims_shape(shape, axis)), shape)


def _max_vjp(g, ans, x, axis=None, keepdims=False):
    # The gradient goes to the maximising entries, shared equally between ties.
    shape = np.shape(x)
    kshape = _keepdims_shape(shape, axis)
    mask = _value(x) == np.reshape(_value(ans), kshape)
    mask = mask / np.sum(mask, axis=axis, keepdims=True)
    return reshape(g, kshape) * mask.astype(np.asarray(_value(x)).dtype)


def _logsumexp_vjp(g, ans, x, axis=None, keepdims=False):
    # d logsumexp(x) / dx = softmax(x) = exp(x - logsumexp(x)). Where every entry is -inf
    # (logsumexp = -inf) the softmax is the limit of that of (c, ..., c) as c -> -inf: the
    # uniform weights, instead of exp(-inf - (-inf)) = NaN.
    kshape = _keepdims_shape(np.shape(x), axis)
    ans_k = np.reshape(_value(ans), kshape)
    empty = np.isneginf(ans_k)
    if not np.any(empty):
        return reshape(g, kshape) * exp(x - reshape(ans, kshape))
    xv = np.asarray(_value(x))
    uniform = np.where(empty, 1.0, 0.0) / np.prod(
        [n for n, k in zip(np.shape(xv), kshape, strict=True) if k == 1]
    )
    safe_ans = where(empty, 0.0, reshape(ans, kshape))
    return reshape(g, kshape) * (exp(x - safe_ans) + np.broadcast_to(uniform, np.shape(xv)))


sum = Primitive("sum", np.sum, (_sum_vjp,))
max = Primitive("max", np.max, (_max_vjp,))
logsumexp = Primitive("logsumexp", special.logsumexp, (_logsumexp_vjp,))


def mean(x: Any, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Any:
    """Mean over ``axis``: the sum divided by the number of entries averaged.

    Parameters
    ----------
    x : array-like or Tensor
        Input.
    axis : int, tuple of int or None, default=None
        Axes averaged; ``None``: all.
    keepdims : bool, default=False
        Keep the averaged axes with length one.

    Returns
    -------
    Tensor or ndarray
        The mean (a Tensor when ``x`` is one).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad
    >>> ad.grad(lambda t: ad.mean(t))(np.zeros(4))
    array([0.25, 0.25, 0.25, 0.25])
    """
    shape = np.shape(_value(x))
    count = np.prod(
        [n for n, k in zip(shape, _keepdims_shape(shape, axis), strict=True) if k == 1]
    )
    return sum(x, axis=axis, keepdims=keepdims) / builtins.max(int(count), 1)


# Softmax Jacobian diag(s) - s s^T, applied without forming it.
softmax = Primitive(
    "softmax",
    lambda x, axis=-1: special.softmax(x, axis=axis),
    (lambda g, ans, x, axis=-1: ans * (g - sum(g * ans, axis=axis, keepdims=True)),),
)
log_softmax = Primitive(
    "log_softmax",
    lambda x, axis=-1: special.log_softmax(x, axis=axis),
    (lambda g, ans, x, axis=-1: g - exp(ans) * sum(g, axis=axis, keepdims=True),),
)


reshape = Primitive("reshape", np.reshape, (lambda g, ans, x, shape: reshape(g, np.shape(x)),))
broadcast_to = Primitive(
    "broadcast_to",
    np.broadcast_to,
    (lambda g, ans, x, shape: _unbroadcast(g, np.shape(x)),),
)


def _transpose_vjp(g, ans, x, axes=None):
    inverse = None if axes is None else tuple(np.argsort(axes))
    return transpose(g, inverse)


transpose = Primitive("transpose", np.transpose, (_transpose_vjp,))


def swapaxes(x):
    """Swap the last two axes (the matrix transpose of a stack of matrices)."""
    n = np.ndim(_value(x))
    if n < 2:
        return x
    return transpose(x, (*range(n - 2), n - 1, n - 2))


def _scatter_add(g, index, shape):
    """Zeros of ``shape`` with ``g`` added at ``index`` (repeated indices accumulate)."""
    out = np.zeros(shape, dtype=np.asarray(g).dtype)
    np.add.at(out, index, g)
    return out


# getitem and scatter-add are each other's VJP.
scatter_add = Primitive(
    "scatter_add", _scatter_add, (lambda g, ans, x, index, shape: getitem(g, index),)
)
getitem = Primitive(
    "getitem",
    lambda x, index: x[index],
    (lambda g, ans, x, index: scatter_add(g, index=index, shape=np.shape(x)),),
)


def _concatenate_vjp(g, ans, *xs, argnum, axis=0):
    axis = axis % np.ndim(_value(ans))
    start = int(np.sum([np.shape(x)[axis] for x in xs[:argnum]], dtype=int))
    index = (slice(None),) * axis + (slice(start, start + np.shape(xs[argnum])[axis]),)
    return getitem(g, index=index)


_concatenate = Primitive(
    "concatenate",
    lambda *xs, axis=0: np.concatenate(xs, axis=axis),
    _concatenate_vjp,
    variadic=True,
)


def concatenate(xs: Sequence[Any], axis: int = 0) -> Any:
    """Join a sequence of arrays along an existing axis.

    Parameters
    ----------
    xs : sequence of array-like or Tensor
        The arrays, of equal shapes except along ``axis``.
    axis : int, default=0
        The axis joined along.

    Returns
    -------
    Tensor or ndarray
        The joined array.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad
    >>> ad.grad(lambda t: ad.sum(ad.concatenate([t, 2.0 * t])))(np.zeros(2))
    array([3., 3.])
    """
    return _concatenate(*xs, axis=axis)


def stack(xs: Sequence[Any], axis: int = 0) -> Any:
    """Join a sequence of same-shaped arrays along a new axis.

    Parameters
    ----------
    xs : sequence of array-like or Tensor
        The arrays, all of one shape.
    axis : int, default=0
        Position of the new axis in the result.

    Returns
    -------
    Tensor or ndarray
        The stacked array.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad
    >>> ad.grad(lambda t: ad.stack([t, t], axis=1)[0, 1])(np.zeros(2))
    array([1., 0.])
    """
    xs = list(xs)
    ndim = np.ndim(_value(xs[0])) + 1
    axis = axis % ndim
    return concatenate(
        [reshape(x, (*np.shape(x)[:axis], 1, *np.shape(x)[axis:])) for x in xs], axis
    )


def diagonal(a: Any) -> Any:
    """The main diagonal of a square matrix (an indexing operation).

    Parameters
    ----------
    a : array-like or Tensor of shape (n, n)
        Square matrix.

    Returns
    -------
    Tensor or ndarray of shape (n,)
        ``a[i, i]``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad
    >>> ad.grad(lambda A: ad.sum(ad.diagonal(A)))(np.zeros((2, 2)))  # d trace(A) / dA = I
    array([[1., 0.],
           [0., 1.]])
    """
    n = np.shape(_value(a))[0]
    idx = np.arange(n)
    return getitem(a, (idx, idx))


def _outer_or_matmul(u, x):
    """``u x^T`` for vectors or matrices ``u`` and ``x`` (columns matched)."""
    if np.ndim(_value(x)) == 1:
        return reshape(u, (-1, 1)) * reshape(x, (1, -1))
    return matmul(u, swapaxes(x))


def _solve_vjp_b(g, ans, a, b):
    return solve(swapaxes(a), g)


def _solve_vjp_a(g, ans, a, b):
    # X = A^{-1} B:  dL/dB = A^{-T} G,  dL/dA = -(dL/dB) X^T.
    return -_outer_or_matmul(solve(swapaxes(a), g), ans)


solve = Primitive("solve", np.linalg.solve, (_solve_vjp_a, _solve_vjp_b))


def _solve_tri(a, b, lower=True, trans=False):
    return sla.solve_triangular(a, b, lower=lower, trans="T" if trans else "N", check_finite=False)


def _tri_mask(a, lower):
    n = np.shape(_value(a))[0]
    return np.tril(np.ones((n, n))) if lower else np.triu(np.ones((n, n)))


def _solve_tri_vjp_b(g, ans, a, b, lower=True, trans=False):
    return solve_triangular(a, g, lower=lower, trans=not trans)


def _solve_tri_vjp_a(g, ans, a, b, lower=True, trans=False):
    gb = solve_triangular(a, g, lower=lower, trans=not trans)
    ga = -_outer_or_matmul(gb, ans) if not trans else -_outer_or_matmul(ans, gb)
    # Only the referenced triangle of A is an input.
    return ga * _tri_mask(a, lower).astype(np.asarray(_value(ga)).dtype)


solve_triangular = Primitive("solve_triangular", _solve_tri, (_solve_tri_vjp_a, _solve_tri_vjp_b))


def _cholesky_vjp(g, ans, a):
    # Murray (2016), "Differentiation of the Cholesky decomposition", eq. 10:
    # P = Phi(L^T G), S = L^{-T} P L^{-1}, dL/dA = (S + S^T) / 2, where Phi keeps the lower
    # triangle and halves the diagonal. A is treated as symmetric.
    n = np.shape(_value(a))[0]
    phi = np.tril(np.ones((n, n))) - 0.5 * np.eye(n)
    p = matmul(swapaxes(ans), g) * phi
    s = solve_triangular(ans, p, lower=True, trans=True)  # L^{-T} P
    s = swapaxes(solve_triangular(ans, swapaxes(s), lower=True, trans=True))  # (L^{-T} S^T)^T
    return 0.5 * (s + swapaxes(s))


def _cholesky(a):
    # The factor of the symmetric part (A + A^T) / 2, so that the function differentiated is
    # the one the symmetric VJP above describes, for every perturbation of A (LAPACK alone
    # would read one triangle, and finite differences across the diagonal would disagree).
    # For a symmetric A this is A itself, bit for bit.
    a = np.asarray(a)
    a = 0.5 * (a + np.swapaxes(a, -1, -2))
    try:
        return np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError("cholesky: the matrix is not positive definite.") from None


cholesky = Primitive("cholesky", _cholesky, (_cholesky_vjp,))


def _logdet(a):
    sign, value = np.linalg.slogdet(a)
    if sign == 0:
        raise np.linalg.LinAlgError("logdet: the matrix is singular.")
    return value


# d log|det A| / dA = A^{-T}, obtained by a solve rather than an explicit inverse.
logdet = Primitive(
    "logdet",
    _logdet,
    (
        lambda g, ans, a: (
            g
            * swapaxes(solve(a, np.eye(np.shape(_value(a))[0], dtype=np.asarray(_value(a)).dtype)))
        ),
    ),
)

# Each primitive's docstring: what it computes (NumPy's forward rule), its arguments, and an
# example of its gradient. They are instances, not functions: tests/test_docstrings.py runs
# these examples.
_UNARY = "x : array-like or Tensor\n    Input."
_BINARY = "x, y : array-like or Tensor\n    Inputs; they broadcast against each other."
_REDUCE = (
    "x : array-like or Tensor\n    Input.\n"
    "axis : int, tuple of int or None, default=None\n    Axes reduced; ``None``: all.\n"
    "keepdims : bool, default=False\n    Keep the reduced axes with length one."
)
_DOCS = {
    "add": (
        "Elementwise ``x + y``.",
        _BINARY,
        "ad.grad(lambda t: ad.sum(ad.add(t, 2.0)))(np.zeros(2))",
        "array([1., 1.])",
    ),
    "subtract": (
        "Elementwise ``x - y``.",
        _BINARY,
        "ad.grad(lambda t: ad.sum(ad.subtract(1.0, t)))(np.zeros(2))",
        "array([-1., -1.])",
    ),
    "multiply": (
        "Elementwise ``x * y``.",
        _BINARY,
        "ad.grad(lambda t: ad.sum(ad.multiply(t, t)))(np.array([1.0, 3.0]))",
        "array([2., 6.])",
    ),
    "divide": (
        "Elementwise ``x / y`` (quotient rule for the gradient).",
        _BINARY,
        "ad.grad(lambda t: ad.sum(ad.divide(1.0, t)))(np.array([2.0]))",
        "array([-0.25])",
    ),
    "negative": (
        "Elementwise ``-x``.",
        _UNARY,
        "ad.grad(lambda t: ad.sum(ad.negative(t)))(np.ones(2))",
        "array([-1., -1.])",
    ),
    "power": (
        "Elementwise ``x ** p``; ``d/dx = p x^(p-1)`` (0 for ``p = 0``, also at ``x = 0``).",
        "x, p : array-like or Tensor\n    Base and exponent; they broadcast.",
        "ad.grad(lambda t: ad.sum(ad.power(t, 3.0)))(np.array([2.0]))",
        "array([12.])",
    ),
    "where": (
        "``x`` where ``cond`` holds, else ``y``; the gradient follows the branch taken.",
        "cond : array-like of bool\n    The selector (a constant).\nx, y : array-like or Tensor\n    The two branches; they broadcast.",  # noqa: E501
        "ad.grad(lambda t: ad.sum(ad.where(t > 0, t, 0.0)))(np.array([-1.0, 2.0]))",
        "array([0., 1.])",
    ),
    "exp": (
        "Elementwise ``exp(x)``.",
        _UNARY,
        "ad.grad(lambda t: ad.sum(ad.exp(t)))(np.zeros(1))",
        "array([1.])",
    ),
    "log": (
        "Elementwise natural logarithm.",
        _UNARY,
        "ad.grad(lambda t: ad.sum(ad.log(t)))(np.array([4.0]))",
        "array([0.25])",
    ),
    "sqrt": (
        "Elementwise square root.",
        _UNARY,
        "ad.grad(lambda t: ad.sum(ad.sqrt(t)))(np.array([4.0]))",
        "array([0.25])",
    ),
    "sin": (
        "Elementwise sine.",
        _UNARY,
        "ad.grad(lambda t: ad.sum(ad.sin(t)))(np.zeros(1))",
        "array([1.])",
    ),
    "cos": (
        "Elementwise cosine.",
        _UNARY,
        "ad.grad(lambda t: ad.sum(ad.cos(t)))(np.zeros(1))",
        "array([-0.])",
    ),
    "abs": (
        "Elementwise ``|x|``; the gradient at 0 is 0 (``sign(0)``).",
        _UNARY,
        "ad.grad(lambda t: ad.sum(ad.abs(t)))(np.array([-2.0, 0.0, 3.0]))",
        "array([-1.,  0.,  1.])",
    ),
    "tanh": (
        "Elementwise hyperbolic tangent; ``d/dx = 1 - tanh^2``.",
        _UNARY,
        "ad.grad(lambda t: ad.sum(ad.tanh(t)))(np.zeros(1))",
        "array([1.])",
    ),
    "sigmoid": (
        "Elementwise logistic sigmoid ``1 / (1 + exp(-x))``, stable for large ``|x|``.",
        _UNARY,
        "ad.grad(lambda t: ad.sum(ad.sigmoid(t)))(np.zeros(1))",
        "array([0.25])",
    ),
    "relu": (
        "Elementwise ``max(x, 0)``; the gradient at 0 is 0.",
        _UNARY,
        "ad.grad(lambda t: ad.sum(ad.relu(t)))(np.array([-1.0, 2.0]))",
        "array([0., 1.])",
    ),
    "softplus": (
        "Elementwise ``log(1 + exp(x))`` without overflow; its gradient is the sigmoid.",
        _UNARY,
        "ad.grad(lambda t: ad.sum(ad.softplus(t)))(np.zeros(1))",
        "array([0.5])",
    ),
    "leaky_relu": (
        "Elementwise ``max(a x, x)`` with slope ``a = negative_slope`` (default 0.01, the notes' value) for ``x < 0``; the gradient at 0 is ``a``.",  # noqa: E501
        "x : array-like or Tensor\n    Input.\nnegative_slope : float, default=0.01\n    The slope ``a`` in ``[0, 1)`` left of 0.",  # noqa: E501
        "ad.grad(lambda t: ad.sum(ad.leaky_relu(t)))(np.array([-1.0, 2.0]))",
        "array([0.01, 1.  ])",
    ),
    "erf": (
        "Elementwise error function ``2/sqrt(pi) int_0^x exp(-t^2) dt``.",
        _UNARY,
        "ad.grad(lambda t: ad.sum(ad.erf(t)))(np.zeros(1))",
        "array([1.12837917])",
    ),
    "gelu": (
        "Elementwise GELU ``x Phi(x)``, ``Phi`` the standard normal distribution function (the exact form, not the tanh approximation); ``d/dx = Phi(x) + x phi(x)``.",  # noqa: E501
        _UNARY,
        "ad.grad(lambda t: ad.sum(ad.gelu(t)))(np.zeros(1))",
        "array([0.5])",
    ),
    "matmul": (
        "Matrix product ``a @ b`` (batched like ``numpy.matmul``).",
        "a, b : array-like or Tensor\n    Matrices or vectors.",
        "ad.grad(lambda A: ad.sum(A @ np.array([1.0, 2.0])))(np.zeros((1, 2)))",
        "array([[1., 2.]])",
    ),
    "sum": (
        "Sum over ``axis``.",
        _REDUCE,
        "ad.grad(lambda t: ad.sum(t, axis=0)[1])(np.ones((2, 2)))",
        "array([[0., 1.],\n       [0., 1.]])",
    ),
    "max": (
        "Maximum over ``axis``; the gradient is shared equally between ties.",
        _REDUCE,
        "ad.grad(lambda t: ad.max(t))(np.array([1.0, 3.0, 3.0]))",
        "array([0. , 0.5, 0.5])",
    ),
    "logsumexp": (
        "``log(sum(exp(x)))`` over ``axis``, stable; its gradient is the softmax (uniform where every entry is ``-inf``).",  # noqa: E501
        _REDUCE,
        "ad.grad(lambda t: ad.logsumexp(t))(np.zeros(4))",
        "array([0.25, 0.25, 0.25, 0.25])",
    ),
    "softmax": (
        "``exp(x) / sum(exp(x))`` along ``axis``.",
        "x : array-like or Tensor\n    Input.\naxis : int, default=-1\n    The axis normalised.",
        "ad.grad(lambda t: ad.softmax(t)[0])(np.zeros(2))",
        "array([ 0.25, -0.25])",
    ),
    "log_softmax": (
        "``x - logsumexp(x)`` along ``axis``.",
        "x : array-like or Tensor\n    Input.\naxis : int, default=-1\n    The axis normalised.",
        "ad.grad(lambda t: ad.log_softmax(t)[0])(np.zeros(2))",
        "array([ 0.5, -0.5])",
    ),
    "reshape": (
        "``x`` with a new shape (same entries).",
        "x : array-like or Tensor\n    Input.\nshape : tuple of int\n    The new shape.",
        "ad.grad(lambda t: ad.reshape(t, (2, 2))[0, 1])(np.zeros(4))",
        "array([0., 1., 0., 0.])",
    ),
    "broadcast_to": (
        "``x`` broadcast to ``shape``; the gradient sums over the broadcast axes.",
        "x : array-like or Tensor\n    Input.\nshape : tuple of int\n    The target shape.",
        "ad.grad(lambda t: ad.sum(ad.broadcast_to(t, (3, 2))))(np.zeros(2))",
        "array([3., 3.])",
    ),
    "transpose": (
        "``x`` with its axes permuted (reversed by default).",
        "x : array-like or Tensor\n    Input.\naxes : tuple of int, optional\n    The permutation.",  # noqa: E501
        "ad.grad(lambda t: ad.transpose(t)[0, 1])(np.zeros((2, 2)))",
        "array([[0., 0.],\n       [1., 0.]])",
    ),
    "getitem": (
        "``x[index]`` (basic or advanced indexing); the gradient scatters back, adding repeats.",
        "x : array-like or Tensor\n    Input.\nindex : int, slice, array or tuple of them\n    The index.",  # noqa: E501
        "ad.grad(lambda t: ad.sum(ad.getitem(t, [0, 0, 2])))(np.zeros(3))",
        "array([2., 0., 1.])",
    ),
    "solve": (
        "Solution ``X = A^{-1} B`` of a square linear system (LU, never an inverse).",
        "a : array-like or Tensor of shape (n, n)\n    The matrix.\nb : array-like or Tensor of shape (n,) or (n, k)\n    The right-hand side.",  # noqa: E501
        "ad.grad(lambda b: ad.sum(ad.solve(2.0 * np.eye(2), b)))(np.ones(2))",
        "array([0.5, 0.5])",
    ),
    "solve_triangular": (
        "``X = A^{-1} B`` (``A^{-T} B`` with ``trans``) reading only the ``lower`` (or upper) triangle of ``a``; the gradient with respect to ``a`` is zero on the other triangle.",  # noqa: E501
        "a : array-like or Tensor of shape (n, n)\n    Triangular matrix.\nb : array-like or Tensor of shape (n,) or (n, k)\n    The right-hand side.\nlower : bool, default=True\n    Which triangle of ``a`` is read.\ntrans : bool, default=False\n    Solve with ``A^T``.",  # noqa: E501
        "ad.grad(lambda b: ad.sum(ad.solve_triangular(np.array([[2.0, 0.0], [1.0, 1.0]]), b)))(np.ones(2))",  # noqa: E501
        "array([0., 1.])",
    ),
    "cholesky": (
        "Lower-triangular ``L`` with ``L L^T = (A + A^T) / 2``. The input is symmetrised first (as JAX does), so the VJP ``(S + S^T) / 2`` of Murray (2016) is the gradient for every perturbation of ``A``, symmetric or not; for a symmetric positive definite ``A`` this is NumPy's factor.",  # noqa: E501
        "a : array-like or Tensor of shape (n, n)\n    Symmetric positive definite.",
        "ad.grad(lambda A: ad.cholesky(A)[0, 0])(4.0 * np.eye(1))",
        "array([[0.25]])",
    ),
    "logdet": (
        "``log |det A|`` of a square matrix (LU), with gradient ``A^{-T}`` from a solve. Raises ``LinAlgError`` for a singular matrix. For a symmetric positive definite ``A``, ``2 sum(log(diagonal(cholesky(A))))`` is the same number.",  # noqa: E501
        "a : array-like or Tensor of shape (n, n)\n    Nonsingular.",
        "ad.grad(ad.logdet)(np.diag([2.0, 4.0]))",
        "array([[0.5 , 0.  ],\n       [0.  , 0.25]])",
    ),
}


def _primitive_doc(summary: str, params: str, call: str, result: str) -> str:
    import textwrap

    lines = textwrap.fill(summary, 88)
    example = "\n".join(
        [
            ">>> import numpy as np",
            ">>> from mathlearn import autodiff as ad",
            f">>> {call}",
            *result.split("\n"),
        ]
    )
    return (
        f"{lines}\n\nParameters\n----------\n{params}\n\nReturns\n-------\n"
        "Tensor or ndarray\n    A Tensor, recorded for differentiation, when an input is "
        "one; else an array.\n\nExamples\n--------\n"
        f"{example}\n"
    )


for _name, _entry in _DOCS.items():
    globals()[_name].__doc__ = _primitive_doc(*_entry)
