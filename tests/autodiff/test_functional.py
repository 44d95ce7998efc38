"""The functional API, the engine's guarantees, and the worked examples of the notes.

Closed forms and worked examples of Imperial "Mathematics for Machine Learning" (the matrix
calculus lectures: derivatives of matrix products, traces and inverses, the matrix identities)
and the computation-graph example of Stuttgart "Introduction to Machine Learning" §4.1.
"""

import numpy as np
import pytest

from mathlearn import autodiff as ad

# --- worked examples of the notes -------------------------------------------------------------


def test_t2_one_parameter_fit_stationary_point():
    # L(a) = sum (a x_n - y_n)^2 is stationary at a = sum x y / sum x^2 (corrected form, 6.1.1),
    # and d2L/da2 = 2 sum x^2 > 0.
    x, y = np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0, 7.0])
    loss = lambda a: ad.sum((a * x - y) ** 2)  # noqa: E731
    a_star = 31 / 14
    assert ad.grad(loss)(np.array(a_star)) == pytest.approx(0.0, abs=1e-12)
    assert ad.hessian(loss)(np.array(a_star)) == pytest.approx(2 * np.sum(x**2))
    assert ad.grad(loss)(np.array(1.0)) == pytest.approx(np.sum(2 * (x - y) * x))


@pytest.mark.parametrize("t, expected", [(np.pi / 3, -np.sqrt(3) / 2), (np.pi / 2, -2.0)])
def test_t3_chain_rule(t, expected):
    # f(x) = x1^2 + 2 x2, x(t) = [sin t, cos t]: df/dt = 2 sin t (cos t - 1).
    def f_of_t(t):
        x = ad.concatenate([ad.reshape(ad.sin(t), (1,)), ad.reshape(ad.cos(t), (1,))])
        return x[0] ** 2 + 2 * x[1]

    assert ad.grad(f_of_t)(np.array(t)) == pytest.approx(expected, rel=1e-12)
    assert expected == pytest.approx(2 * np.sin(t) * (np.cos(t) - 1))


def test_t4_t5_linear_identities(rng):
    A = rng.standard_normal((3, 4))
    x, y = rng.standard_normal(4), rng.standard_normal(3)
    # Imperial "Mathematics for Machine Learning" lecture 1.4: d(Ax)/dx = A.
    np.testing.assert_allclose(ad.jacobian(lambda x: A @ x)(x), A)
    # Imperial "Mathematics for Machine Learning" lecture 1.4: L = 1/2 ||y - Ax||^2, dL/dx = -(y -
    # Ax)^T A.
    g = ad.grad(lambda x: 0.5 * ad.sum((y - A @ x) ** 2))(x)
    np.testing.assert_allclose(g, -(y - A @ x) @ A, rtol=1e-12)


def test_t6_composite_with_sin():
    A = np.array([[1.0, 2.0], [3.0, 4.0], [0.0, 1.0]])
    y = np.array([1.0, 0.0, 2.0])
    x = np.array([0.3, -0.7])
    value, g = ad.value_and_grad(lambda x: 0.5 * ad.sum((y - A @ ad.sin(x)) ** 2))(x)
    assert value == pytest.approx(6.9103732, abs=1e-7)
    np.testing.assert_allclose(g, [-6.7483494, -10.2422224], atol=1e-7)
    # The sum in the notes (Imperial "Mathematics for Machine Learning" lecture 2): dL/dx_j = sum_n
    # (y_n - sum_i A_ni sin x_i)(-A_nj cos x_j).
    e = y - A @ np.sin(x)
    np.testing.assert_allclose(g, [np.sum(e * -A[:, j] * np.cos(x[j])) for j in range(2)])
    # dc/dx = diag(cos x): the Jacobian of an elementwise function is diagonal.
    np.testing.assert_allclose(ad.jacobian(ad.sin)(x), np.diag(np.cos(x)))


def test_t9_derivative_of_ax_wrt_a(rng):
    # df_i / dA_jk = delta_ij x_k (rank-3 tensor), i.e. row-major block diag of x^T (lecture 2).
    N, M = 3, 4
    A, x = rng.standard_normal((N, M)), rng.standard_normal(M)
    J = ad.jacobian(lambda A: A @ x)(A)
    assert J.shape == (N, N, M)
    np.testing.assert_allclose(J, np.einsum("ij,k->ijk", np.eye(N), x))
    np.testing.assert_allclose(J.reshape(N, N * M), np.kron(np.eye(N), x))  # I (x) x^T
    # Column-major vec(A): d(Ax)/dvec(A) = x^T (x) I (corrected from Imperial
    # "Mathematics for Machine Learning" lecture 2).
    J_col = J.transpose(0, 2, 1).reshape(N, N * M)
    np.testing.assert_allclose(J_col, np.kron(x, np.eye(N)))


def test_t10_one_layer_tanh_network():
    A = np.array([[0.5, -1.0], [2.0, 0.1]])
    b = np.array([0.0, 0.1])
    x = np.array([1.0, 2.0])
    y = np.array([0.5, -0.5])

    def loss(A, b, x):
        return 0.5 * ad.sum((y - ad.tanh(A @ x + b)) ** 2)

    value, (gA, gb, gx) = ad.value_and_grad(loss, argnums=(0, 1, 2))(A, b, x)
    assert value == pytest.approx(2.0825635, abs=1e-7)
    np.testing.assert_allclose(gb, [-0.2539196, 0.0583322], atol=1e-7)
    np.testing.assert_allclose(gA, [[-0.2539196, -0.5078392], [0.0583322, 0.1166643]], atol=1e-7)
    np.testing.assert_allclose(gx, [-0.0102955, 0.2597528], atol=1e-7)
    # The efficient form: delta = -(1 - f*f) * e, grad_b = delta, grad_A = delta x^T,
    # grad_x = A^T delta.
    f = np.tanh(A @ x + b)
    delta = -(1 - f * f) * (y - f)
    np.testing.assert_allclose(gb, delta, rtol=1e-12)
    np.testing.assert_allclose(gA, np.outer(delta, x), rtol=1e-12)
    np.testing.assert_allclose(gx, A.T @ delta, rtol=1e-12)


def test_matrix_identities(rng):
    A = rng.standard_normal((3, 4))
    x, y = rng.standard_normal(4), rng.standard_normal(3)
    # d ||Ax - y||^2 / dA = 2 (Ax - y) x^T.
    g = ad.grad(lambda A: ad.sum((A @ x - y) ** 2))(A)
    np.testing.assert_allclose(g, 2 * np.outer(A @ x - y, x), rtol=1e-12)
    # d x^T A x / dA = x x^T.
    S = rng.standard_normal((4, 4))
    np.testing.assert_allclose(ad.grad(lambda S: x @ S @ x)(S), np.outer(x, x), rtol=1e-12)
    # d/dtheta x^T A(theta) x with A(theta) = theta * S: chain rule through the matrix.
    assert ad.grad(lambda t: x @ (t * S) @ x)(np.array(0.7)) == pytest.approx(x @ S @ x)


def test_computation_graph_partial_vs_total():
    # Stuttgart "Introduction to Machine Learning" §4.1: f(x, g) = 3x + 2g, g(x) = 2x: partial
    # df/dx = 3, total df/dx = 7.
    assert ad.grad(lambda x: 3 * x + 2 * (2 * x))(np.array(1.5)) == pytest.approx(7.0)
    assert ad.grad(lambda x, g: 3 * x + 2 * g)(np.array(1.5), np.array(3.0)) == pytest.approx(3.0)


# --- second order -----------------------------------------------------------------------------


def _rosenbrock(x):
    return ad.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _rosenbrock_hessian(x):
    n = x.size
    H = np.zeros((n, n))
    for i in range(n - 1):
        H[i, i] += 1200 * x[i] ** 2 - 400 * x[i + 1] + 2
        H[i + 1, i + 1] += 200
        H[i, i + 1] = H[i + 1, i] = -400 * x[i]
    return H


def test_hessian_closed_forms(rng):
    Q = rng.standard_normal((4, 4))
    Q = Q @ Q.T
    c = rng.standard_normal(4)
    x = rng.standard_normal(4)
    np.testing.assert_allclose(ad.hessian(lambda x: 0.5 * x @ Q @ x + c @ x)(x), Q, atol=1e-12)
    np.testing.assert_allclose(ad.hessian(_rosenbrock)(x), _rosenbrock_hessian(x), rtol=1e-12)
    # Matrix argument: shape x.shape * 2.
    X = rng.standard_normal((2, 3))
    H = ad.hessian(lambda X: ad.sum(X**2))(X)
    assert H.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(H.reshape(6, 6), 2 * np.eye(6))


def test_hessian_matches_finite_differences_of_gradient(rng):
    W = rng.standard_normal((3, 4))

    def f(x):
        h = ad.tanh(W @ x)
        return ad.logsumexp(h) + ad.sum(ad.softplus(x) * ad.sigmoid(x)) + ad.sum(ad.log_softmax(h))

    x = rng.standard_normal(4)
    H = ad.hessian(f)(x)
    g = ad.grad(f)
    eps = 1e-6
    H_fd = np.array([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(4)])
    np.testing.assert_allclose(H, H_fd, atol=1e-7)
    np.testing.assert_allclose(H, H.T, atol=1e-12)


def test_hvp_is_hessian_times_v(rng):
    A = rng.standard_normal((4, 4)) + 4 * np.eye(4)

    def f(x):
        M = A + ad.reshape(x, (4, 1)) * ad.reshape(x, (1, 4))
        return ad.logdet(M @ ad.transpose(M)) + ad.sum(ad.solve(M, x) ** 2)

    x, v = rng.standard_normal(4) * 0.3, rng.standard_normal(4)
    H = ad.hessian(f)(x)
    np.testing.assert_allclose(ad.hvp(f, x, v), H @ v, rtol=1e-9, atol=1e-10)
    # Second directional derivative v^T H v (Imperial "Mathematics for Machine Learning" lecture
    # 1.5) by finite differences.
    g = ad.grad(f)
    eps = 1e-5
    vHv_fd = (g(x + eps * v) - g(x - eps * v)) @ v / (2 * eps)
    assert v @ H @ v == pytest.approx(vHv_fd, rel=1e-6)
    with pytest.raises(ValueError, match="shape"):
        ad.hvp(f, x, np.ones(3))


def test_hessian_through_cholesky_and_triangular_solve(rng):
    M = rng.standard_normal((3, 3))

    def f(x):
        K = M @ M.T + 3 * np.eye(3) + ad.reshape(x, (3, 1)) * ad.reshape(x, (1, 3))
        L = ad.cholesky(K)
        a = ad.solve_triangular(L, np.ones(3), lower=True)
        return ad.sum(a**2) + 2 * ad.sum(ad.log(ad.diagonal(L)))

    x = rng.standard_normal(3) * 0.5
    H = ad.hessian(f)(x)
    g = ad.grad(f)
    eps = 1e-6
    H_fd = np.array([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(H, H_fd, atol=1e-7)


# --- engine guarantees ------------------------------------------------------------------------


def test_deep_chain_is_iterative():
    # 10 000 nested operations: a recursive backward pass would exceed Python's recursion limit.
    x = ad.Tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    ad.sum(y).backward()
    np.testing.assert_allclose(x.grad, [1.0001**10_000] * 2, rtol=1e-10)


def test_node_used_twice_accumulates():
    assert ad.grad(lambda x: x * x)(np.array(3.0)) == pytest.approx(6.0)
    assert ad.grad(lambda x: x + x + x)(np.array(3.0)) == pytest.approx(3.0)
    # A diamond: u feeds two branches that meet again.
    f = lambda x: (lambda u: ad.sin(u) * ad.exp(u))(x * x)  # noqa: E731
    x0 = 0.7
    u = x0 * x0
    assert ad.grad(f)(np.array(x0)) == pytest.approx((np.cos(u) + np.sin(u)) * np.exp(u) * 2 * x0)


def test_tensor_backward_accumulates_grad():
    x = ad.Tensor([1.0, 2.0], requires_grad=True)
    ad.sum(x * x).backward()
    ad.sum(3 * x).backward()
    np.testing.assert_allclose(x.grad, [5.0, 7.0])


def test_gradient_has_parameter_shape_and_structure(rng):
    params = {"W": rng.standard_normal((3, 2)), "b": np.zeros((1, 2)), "s": np.array(0.5)}
    X = rng.standard_normal((5, 3))
    g = ad.grad(lambda p: ad.sum(ad.tanh(X @ p["W"] + p["b"]) * p["s"]))(params)
    assert set(g) == set(params)
    for k in params:
        assert g[k].shape == params[k].shape
    res = ad.check_grad(lambda p: ad.sum(ad.tanh(X @ p["W"] + p["b"]) * p["s"]), params)
    assert res.ok, str(res)
    # Lists and tuples too; an argument the output ignores gets zeros.
    gl = ad.grad(lambda p: ad.sum(p[0] * 2))([np.ones(2), np.ones(3)])
    np.testing.assert_array_equal(gl[0], [2, 2])
    np.testing.assert_array_equal(gl[1], [0, 0, 0])


def test_integer_input_is_promoted():
    g = ad.grad(lambda x: ad.sum(x**2))(np.array([1, 2, 3]))
    assert g.dtype == np.float64
    np.testing.assert_array_equal(g, [2.0, 4.0, 6.0])


def test_no_grad_and_constants():
    x = ad.Tensor(np.ones(3), requires_grad=True)
    with ad.no_grad():
        assert not ad.is_grad_enabled()
        y = ad.sum(ad.exp(x))
    assert ad.is_grad_enabled()
    assert not y.requires_grad
    assert isinstance(ad.exp(np.zeros(2)), np.ndarray)  # plain arrays in, plain array out
    np.testing.assert_array_equal(ad.grad(lambda x: 3.0)(np.ones(2)), [0.0, 0.0])
    np.testing.assert_array_equal(ad.jacobian(lambda x: np.ones(2))(np.ones(3)), np.zeros((2, 3)))
    np.testing.assert_array_equal(
        ad.hessian(lambda x: ad.sum(2 * x))(np.ones(2)), np.zeros((2, 2))
    )

    @ad.no_grad()
    def evaluate(x):
        return ad.tanh(x)

    assert not evaluate(x).requires_grad


def test_grad_of_non_scalar_raises():
    with pytest.raises(ValueError, match="scalar"):
        ad.grad(lambda x: x * 2)(np.ones(3))
    with pytest.raises(ValueError, match="scalar"):
        ad.hessian(lambda x: x * x)(np.ones(3))


# --- check_grad -------------------------------------------------------------------------------


def test_check_grad_detects_a_wrong_gradient(rng):
    A = rng.standard_normal((3, 3))
    f = lambda x: float(np.sum((A @ x) ** 2))  # noqa: E731
    right = lambda x: 2 * A.T @ (A @ x)  # noqa: E731
    wrong = lambda x: 2 * A @ (A @ x)  # noqa: E731  (a forgotten transpose)
    x = rng.standard_normal(3)
    assert ad.check_grad(f, x, grad=right).ok
    res = ad.check_grad(f, x, grad=wrong)
    assert not res.ok and not bool(res)
    assert "MISMATCH" in str(res)
    assert res.rel_error > 1e-2


def test_check_grad_shape_mismatch():
    with pytest.raises(ValueError, match="entries"):
        ad.check_grad(lambda x: float(np.sum(x)), np.ones(3), grad=lambda x: np.ones(2))


def test_numerical_grad_forward_and_central_agree_with_limit():
    # Central differences are exact on quadratics up to round-off.
    g = ad.numerical_grad(lambda x: float(x @ x), np.array([1.0, -2.0, 0.5]))
    np.testing.assert_allclose(g, [2.0, -4.0, 1.0], rtol=1e-9)


def test_comparisons_are_masks():
    x = ad.Tensor([1.0, -2.0, 3.0], requires_grad=True)
    np.testing.assert_array_equal(x > 0, [True, False, True])
    np.testing.assert_array_equal(x == 3.0, [False, False, True])
    np.testing.assert_array_equal(x != 3.0, [True, True, False])
    np.testing.assert_array_equal(x <= -2, [False, True, False])
    assert len({x, ad.Tensor(1.0)}) == 2  # still hashable by identity


def test_directional_derivative_is_jacobian_times_v(rng):
    # nabla_v f = (df/dtheta) v = lim (f(theta + h v) - f(theta)) / h  (Imperial
    # "Mathematics for Machine Learning" lecture 1.3).
    W = rng.standard_normal((3, 4))

    def f(x):
        return ad.softmax(ad.tanh(W @ x)) * ad.sum(x**2)

    x, v = rng.standard_normal(4), rng.standard_normal(4)
    J = ad.jacobian(f)(x)
    h = 1e-6
    fd = (np.asarray(f(x + h * v)) - np.asarray(f(x - h * v))) / (2 * h)
    np.testing.assert_allclose(J @ v, fd, rtol=1e-7, atol=1e-9)
    # The steepest-ascent direction is the gradient (beta = 0, lecture 1.3).
    g = ad.grad(lambda x: ad.sum(f(x)))(x)
    dirs = rng.standard_normal((200, 4))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    assert np.all(dirs @ g <= np.linalg.norm(g) + 1e-12)
