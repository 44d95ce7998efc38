"""The table of primitives: each operation's forward rule next to its VJP.

Every entry reads ``name = Primitive("name", forward, (vjp_wrt_arg0, vjp_wrt_arg1, ...))``;
``vjp(g, ans, *args)`` maps the cotangent ``g = dL/d ans`` to ``dL/d arg``. The rules are
the derivative table of the notes in matrix form (spec 003 §2.1: elementwise functions have
diagonal Jacobians, so their VJP is an elementwise product; ``d(Ax)/dx = A`` gives
``g A``; matrix parameters get the outer product ``g x^T``, never a rank-3 tensor).

Broadcasting: an operand that was broadcast (a bias ``b`` added to every row of ``XW``) has
received the same contribution along every broadcast axis, so its gradient is the sum over
those axes (``_unbroadcast``) and has the operand's own shape.

Every function here accepts tensors or plain arrays; on plain arrays it just computes NumPy's
result, which is what lets the VJP rules be written with these same functions.
"""

from __future__ import annotations

import builtins

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
    "exp",
    "getitem",
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


# --- arithmetic (broadcasting) ------------------------------------------------------------

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
# Quotient rule (notes 003 L49): d(x/y) = dx / y - x dy / y^2 = dx / y - ans dy / y.
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

# --- elementwise functions: diagonal Jacobians (spec 003 §2.1 item 13) --------------------

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

# --- linear maps ------------------------------------------------------------------------------


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


# d(Ax)/dx = A and dL/dA = g x^T (notes 003 L185-207 and L444-456).
matmul = Primitive("matmul", np.matmul, (_matmul_vjp_a, _matmul_vjp_b))

# --- reductions ---------------------------------------------------------------------------


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


def mean(x, axis=None, keepdims: bool = False):
    """Mean over ``axis``: the sum divided by the number of entries averaged."""
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

# --- shape manipulation ---------------------------------------------------------------------

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


def concatenate(xs, axis: int = 0):
    """Join a sequence of arrays along an existing axis."""
    return _concatenate(*xs, axis=axis)


def stack(xs, axis: int = 0):
    """Join a sequence of same-shaped arrays along a new axis."""
    xs = list(xs)
    ndim = np.ndim(_value(xs[0])) + 1
    axis = axis % ndim
    return concatenate(
        [reshape(x, (*np.shape(x)[:axis], 1, *np.shape(x)[axis:])) for x in xs], axis
    )


def diagonal(a):
    """The main diagonal of a square matrix (an indexing operation)."""
    n = np.shape(_value(a))[0]
    idx = np.arange(n)
    return getitem(a, (idx, idx))


# --- linear algebra ---------------------------------------------------------------------------


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

# Give the primitives' docstrings a line each (they are shown by help()).
for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, Primitive):
        _obj.__doc__ = f"Primitive ``{_name}``: NumPy's forward rule and its VJP."

solve_triangular.__doc__ = (
    "Primitive ``solve_triangular(a, b, lower=True, trans=False)``: ``X = A^{-1} B``\n"
    "(``A^{-T} B`` with ``trans``) reading only the ``lower`` (or upper) triangle of ``a``;\n"
    "the gradient with respect to ``a`` is zero on the other triangle."
)
logdet.__doc__ = (
    "Primitive ``logdet``: ``log |det A|`` of a square matrix (LU), with gradient\n"
    "``A^{-T}`` from a solve. Raises ``LinAlgError`` for a singular matrix. For a symmetric\n"
    "positive definite ``A``, ``2 sum(log(diagonal(cholesky(A))))`` is the same number."
)
cholesky.__doc__ = (
    "Primitive ``cholesky``: lower-triangular ``L`` with ``L L^T = (A + A^T) / 2``.\n\n"
    "The input is symmetrised first (as JAX does), so the VJP ``(S + S^T) / 2`` of\n"
    "Murray (2016) is the gradient for every perturbation of ``A``, symmetric or not;\n"
    "for a symmetric positive definite ``A`` this is NumPy's factor."
)
