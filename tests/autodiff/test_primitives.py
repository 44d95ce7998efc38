"""Every primitive's VJP against central finite differences, on random shapes.

Each test differentiates ``sum(W * op(x))`` for a fixed random ``W``, so that every entry
of the Jacobian contributes, and compares with ``numerical_grad`` (central differences).
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mathlearn import autodiff as ad

RTOL = 1e-6


def _check_op(op, args, argnum, rng):
    """Gradient of ``sum(W * op(*args))`` w.r.t. ``args[argnum]`` vs finite differences."""
    out = np.asarray(op(*args))
    W = rng.standard_normal(out.shape)

    def f(x):
        a = list(args)
        a[argnum] = x
        return ad.sum(W * op(*a))

    res = ad.check_grad(f, args[argnum], rtol=RTOL)
    assert res.ok, str(res)
    assert np.shape(res.analytic) == np.shape(args[argnum])


SHAPES = [(), (3,), (2, 3), (1, 4), (2, 1, 3)]

UNARY = {
    "exp": (ad.exp, lambda x: x),
    "log": (ad.log, lambda x: np.abs(x) + 0.5),
    "sqrt": (ad.sqrt, lambda x: np.abs(x) + 0.5),
    "sin": (ad.sin, lambda x: x),
    "cos": (ad.cos, lambda x: x),
    "abs": (ad.abs, lambda x: np.sign(x) * (np.abs(x) + 0.1)),
    "tanh": (ad.tanh, lambda x: x),
    "sigmoid": (ad.sigmoid, lambda x: 3 * x),
    "relu": (ad.relu, lambda x: np.sign(x) * (np.abs(x) + 0.1)),
    "softplus": (ad.softplus, lambda x: 3 * x),
    "negative": (ad.negative, lambda x: x),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("shape", SHAPES)
def test_unary(name, shape, rng):
    op, domain = UNARY[name]
    x = domain(rng.standard_normal(shape))
    _check_op(op, [x], 0, rng)


BINARY = {
    "add": (ad.add, lambda x: x),
    "subtract": (ad.subtract, lambda x: x),
    "multiply": (ad.multiply, lambda x: x),
    "divide": (ad.divide, lambda x: np.sign(x) * (np.abs(x) + 0.5)),
    "power": (ad.power, lambda x: np.abs(x) + 0.5),
}
BROADCAST_PAIRS = [
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((2, 1), (1, 3)),
    ((1,), (2, 3)),
    ((), (2, 3)),
    ((4, 1, 3), (2, 1)),
]


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", BROADCAST_PAIRS)
@pytest.mark.parametrize("argnum", [0, 1])
def test_binary_broadcasting(name, shapes, argnum, rng):
    op, domain = BINARY[name]
    x = np.abs(rng.standard_normal(shapes[0])) + 0.5  # base of power must be positive
    y = domain(rng.standard_normal(shapes[1]))
    _check_op(op, [x, y], argnum, rng)


def test_power_gradient_in_the_exponent_with_a_zero_base():
    # d/dp sum(x^p) = sum x^p log x, whose x = 0 term is 0 (limit), not 0 * log 0 = NaN.
    x = np.array([0.0, 2.0, 0.5])
    res = ad.check_grad(lambda p: ad.sum(x**p), np.array(1.5))
    assert res.ok, str(res)
    assert float(res.analytic) == pytest.approx(np.sum(x[1:] ** 1.5 * np.log(x[1:])), rel=1e-12)
    # Second order too (the rule is differentiated again for Hessians).
    h = ad.hessian(lambda p: ad.sum(x**p))(np.array(1.5))
    assert float(h) == pytest.approx(np.sum(x[1:] ** 1.5 * np.log(x[1:]) ** 2), rel=1e-12)


def test_operators_match_primitives(rng):
    x = ad.Tensor(rng.random((2, 3)) + 0.5, requires_grad=True)
    y = rng.random(3) + 0.5
    exprs = [
        (x + y, x.value + y),
        (y + x, y + x.value),
        (x - y, x.value - y),
        (y - x, y - x.value),
        (x * y, x.value * y),
        (x / y, x.value / y),
        (y / x, y / x.value),
        (x**2, x.value**2),
        (2.0**x, 2.0**x.value),
        (-x, -x.value),
        (x.T, x.value.T),
        (x[1], x.value[1]),
    ]
    for got, want in exprs:
        np.testing.assert_allclose(got.value, want)


MATMUL_SHAPES = [
    ((3, 4), (4, 2)),
    ((4,), (4, 2)),
    ((3, 4), (4,)),
    ((4,), (4,)),
    ((2, 3, 4), (4, 5)),
    ((2, 3, 4), (1, 4, 5)),
    ((4,), (2, 4, 3)),
    ((2, 3, 4), (4,)),
]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES)
@pytest.mark.parametrize("argnum", [0, 1])
def test_matmul(shapes, argnum, rng):
    a = rng.standard_normal(shapes[0])
    b = rng.standard_normal(shapes[1])
    _check_op(ad.matmul, [a, b], argnum, rng)


AXES = [None, 0, -1, (0, 2), 1]


@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("op", [ad.sum, ad.mean, ad.max, ad.logsumexp], ids=lambda f: f.__doc__)
def test_reductions(op, axis, keepdims, rng):
    x = rng.standard_normal((2, 3, 4))  # distinct entries: max is differentiable
    _check_op(lambda x: op(x, axis=axis, keepdims=keepdims), [x], 0, rng)


def test_max_splits_ties():
    g = ad.grad(lambda x: ad.max(x))(np.array([1.0, 3.0, 3.0, 2.0]))
    np.testing.assert_array_equal(g, [0.0, 0.5, 0.5, 0.0])


@pytest.mark.parametrize("op", [ad.softmax, ad.log_softmax], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_softmaxes(op, axis, rng):
    x = rng.standard_normal((3, 4))
    _check_op(lambda x: op(x, axis=axis), [x], 0, rng)


def test_shape_ops(rng):
    x = rng.standard_normal((2, 3, 4))
    _check_op(lambda x: ad.reshape(x, (4, 6)), [x], 0, rng)
    _check_op(lambda x: ad.transpose(x, (2, 0, 1)), [x], 0, rng)
    _check_op(lambda x: ad.transpose(x), [x], 0, rng)
    _check_op(lambda x: ad.broadcast_to(x[:, :1, :], (2, 5, 4)), [x], 0, rng)
    _check_op(lambda x: x[1, :, ::2], [x], 0, rng)
    _check_op(lambda x: x[..., -1], [x], 0, rng)
    # Advanced indexing with a repeated index: the gradient accumulates.
    _check_op(lambda x: x[np.array([0, 1, 0, 0])], [x], 0, rng)
    _check_op(lambda x: x[x > 0], [x], 0, rng)
    _check_op(lambda x: ad.diagonal(x[0, :, :3]), [x], 0, rng)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("argnum", [0, 1, 2])
def test_concatenate(axis, argnum, rng):
    shapes = [(2, 3), (2, 3), (2, 3)]
    shapes[argnum] = (4, 3) if axis == 0 else (2, 5)
    xs = [rng.standard_normal(s) for s in shapes]
    _check_op(lambda *xs: ad.concatenate(xs, axis=axis), xs, argnum, rng)


def _spd(rng, n):
    M = rng.standard_normal((n, n))
    return M @ M.T + n * np.eye(n)


@pytest.mark.parametrize("bshape", [(4,), (4, 2)])
@pytest.mark.parametrize("argnum", [0, 1])
def test_solve(bshape, argnum, rng):
    A = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    B = rng.standard_normal(bshape)
    _check_op(ad.solve, [A, B], argnum, rng)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("bshape", [(4,), (4, 3)])
@pytest.mark.parametrize("argnum", [0, 1])
def test_solve_triangular(lower, trans, bshape, argnum, rng):
    A = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    A = np.tril(A) if lower else np.triu(A)
    B = rng.standard_normal(bshape)
    _check_op(
        lambda A, B: ad.solve_triangular(A, B, lower=lower, trans=trans), [A, B], argnum, rng
    )


def test_cholesky(rng):
    # A symmetric input: differentiate through A = M M^T + 4 I, so the perturbation is
    # symmetric as the rule assumes.
    M = rng.standard_normal((4, 4))
    _check_op(lambda M: ad.cholesky(M @ M.T + 4 * np.eye(4)), [M], 0, rng)
    A = _spd(rng, 4)
    np.testing.assert_allclose(ad.cholesky(A), np.linalg.cholesky(A))


def test_cholesky_gradient_on_unsymmetric_perturbations(rng):
    # Finite differences move one entry of A at a time, which breaks its symmetry; the
    # forward rule factors (A + A^T) / 2, so the symmetric VJP must match them entry by
    # entry, above the diagonal as well as below (and on an input that is not symmetric).
    A = _spd(rng, 4)
    _check_op(ad.cholesky, [A], 0, rng)
    A_unsym = A + 0.3 * np.triu(rng.standard_normal((4, 4)), 1)
    _check_op(ad.cholesky, [A_unsym], 0, rng)
    np.testing.assert_array_equal(ad.cholesky(A), np.linalg.cholesky(A))
    L = ad.cholesky(A_unsym)
    np.testing.assert_allclose(L @ L.T, 0.5 * (A_unsym + A_unsym.T), rtol=1e-12)


def test_cholesky_gradient_of_logdet_is_inverse(rng):
    # log det A = 2 sum log diag L, and d log det A / dA = A^{-1} (A symmetric).
    A = _spd(rng, 5)
    g = ad.grad(lambda A: 2 * ad.sum(ad.log(ad.diagonal(ad.cholesky(A)))))(A)
    np.testing.assert_allclose(g, np.linalg.inv(A), rtol=1e-10, atol=1e-12)


def test_logdet(rng):
    A = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    _check_op(ad.logdet, [A], 0, rng)
    assert float(ad.logdet(A)) == pytest.approx(np.linalg.slogdet(A)[1])


def test_linalg_errors():
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        ad.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        ad.logdet(np.zeros((2, 2)))


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "exp", "softplus", "relu"])
def test_float32_stays_float32(name, rng):
    op = UNARY[name][0]
    params = {
        "W": rng.standard_normal((5, 3)).astype(np.float32),
        "b": np.zeros(3, np.float32),
    }
    X = rng.standard_normal((4, 5)).astype(np.float32)

    def loss(p):
        h = op(X @ p["W"] + p["b"])
        out = ad.log_softmax(h, axis=1)
        return -ad.mean(out[:, 0]) + ad.logsumexp(h) * 1e-3 + ad.max(h) * 1e-3

    value, g = ad.value_and_grad(loss)(params)
    assert value.dtype == np.float32
    assert g["W"].dtype == np.float32 and g["b"].dtype == np.float32


def _linalg_losses(rng):
    """Scalar losses through the linear-algebra primitives and a broadcast product."""
    W = rng.standard_normal((4, 4))
    b = rng.standard_normal((4, 2))
    return {
        "solve": lambda A: ad.sum(W[:, :2] * ad.solve(A, b)),
        "solve_triangular": lambda A: ad.sum(
            W[:, :2] * ad.solve_triangular(A, b, lower=True, trans=True)
        ),
        "cholesky": lambda A: ad.sum(W * ad.cholesky(A @ A.T)),
        "logdet": lambda A: ad.logdet(A) + ad.sum(W[0] * A),
        "broadcast": lambda A: ad.sum(W * (A * A[:1, :] + A[:, 1:2])),
    }


@pytest.mark.parametrize("name", ["solve", "solve_triangular", "cholesky", "logdet", "broadcast"])
def test_float32_gradients_match_float64(name, rng):
    # The float32 gradient is the float64 one rounded: its relative error is a few float32
    # epsilons (1.2e-7) times the conditioning of these well-conditioned 4 x 4 problems.
    loss = _linalg_losses(rng)[name]
    A = np.tril(rng.standard_normal((4, 4))) + 4 * np.eye(4)
    g64 = ad.grad(loss)(A)
    g32 = ad.grad(loss)(A.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, g64, rtol=2e-5, atol=2e-5 * np.abs(g64).max())
    res = ad.check_grad(loss, A)  # and the float64 gradient itself is right
    assert res.ok, str(res)


@st.composite
def _broadcastable_pair(draw):
    """Two shapes that broadcast together, with size-1 axes and missing leading axes."""
    ndim = draw(st.integers(0, 3))
    full = draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim))
    shapes = []
    for _ in range(2):
        keep = draw(st.integers(0, ndim))
        shape = [n if draw(st.booleans()) else 1 for n in full[ndim - keep :]]
        shapes.append(tuple(shape))
    return shapes


@settings(max_examples=15, deadline=None)
@given(
    shapes=_broadcastable_pair(), name=st.sampled_from(sorted(BINARY)), argnum=st.integers(0, 1)
)
def test_binary_broadcasting_property(shapes, name, argnum):
    rng = np.random.default_rng(1)
    op, domain = BINARY[name]
    x = np.abs(rng.standard_normal(shapes[0])) + 0.5
    y = domain(rng.standard_normal(shapes[1]))
    _check_op(op, [x, y], argnum, rng)


@pytest.mark.parametrize("argnum", [1, 2])
def test_where(argnum, rng):
    c = rng.random((3, 4)) > 0.5
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((4,))
    _check_op(ad.where, [c, x, y], argnum, rng)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_stack(axis, rng):
    xs = [rng.standard_normal((2, 3)) for _ in range(3)]
    np.testing.assert_array_equal(ad.stack(xs, axis=axis), np.stack(xs, axis=axis))
    _check_op(lambda *xs: ad.stack(xs, axis=axis), xs, 1, rng)
