"""The teaching linear-algebra toolkit against NumPy/SciPy, exact arithmetic and the notes'
worked examples (Imperial "Mathematics for Inference and Machine Learning" Appendix and §1.4.1.2;
Imperial "Mathematics for Machine Learning")."""

from fractions import Fraction

import numpy as np
import pytest

from mathlearn import autodiff as ad
from mathlearn.linalg import (
    InnerProduct,
    block_determinant,
    block_inverse,
    cofactor_determinant,
    condition_number,
    kailath_solve,
    matrix_rank,
    null_space,
    pinv,
    range_space,
    rayleigh_quotient,
    searle,
    taylor_polynomial,
    unvec,
    vec,
    woodbury_solve,
)

EPS = np.finfo(float).eps


def _low_rank(rng, m, n, r):
    return rng.normal(size=(m, r)) @ rng.normal(size=(r, n))


# Subspaces from the SVD


@pytest.mark.parametrize(("m", "n", "r"), [(6, 4, 2), (4, 7, 3), (5, 5, 5), (8, 3, 1)])
def test_rank_null_range_pinv(rng, m, n, r):
    A = _low_rank(rng, m, n, r)
    assert matrix_rank(A) == np.linalg.matrix_rank(A) == r
    N, R = null_space(A), range_space(A)
    assert N.shape == (n, n - r) and R.shape == (m, r)  # rank-nullity
    s1 = np.linalg.norm(A, 2)
    # A N = 0 up to the SVD's backward error, about max(m, n) eps sigma_1.
    assert np.max(np.abs(A @ N), initial=0.0) <= 10 * max(m, n) * EPS * s1
    np.testing.assert_allclose(N.T @ N, np.eye(n - r), atol=10 * n * EPS)
    np.testing.assert_allclose(R.T @ R, np.eye(r), atol=10 * m * EPS)
    # Every column of A lies in ran(A): its residual after projection is rounding.
    resid = A - R @ (R.T @ A)
    assert np.max(np.abs(resid)) <= 10 * max(m, n) * EPS * s1
    # Moore-Penrose conditions; agreement with NumPy's pinv (same SVD, same cutoff rule).
    P = pinv(A)
    kappa = s1 / np.linalg.svd(A, compute_uv=False)[r - 1]
    tol = 100 * max(m, n) * EPS * kappa
    np.testing.assert_allclose(A @ P @ A, A, atol=tol * s1)
    np.testing.assert_allclose(P @ A @ P, P, atol=tol / np.linalg.norm(P, 2) * 10)
    np.testing.assert_allclose(P, np.linalg.pinv(A), atol=tol * np.linalg.norm(P, 2))


def test_pinv_is_the_left_and_right_inverse(rng):
    A = rng.normal(size=(7, 3))  # full column rank, well conditioned
    kappa = np.linalg.cond(A)
    left = np.linalg.solve(A.T @ A, A.T)
    np.testing.assert_allclose(pinv(A), left, atol=100 * kappa**2 * EPS)
    B = A.T  # full row rank
    right = B.T @ np.linalg.solve(B @ B.T, np.eye(3))
    np.testing.assert_allclose(pinv(B), right, atol=100 * kappa**2 * EPS)
    S = rng.normal(size=(4, 4)) + 4 * np.eye(4)
    np.testing.assert_allclose(
        pinv(S), np.linalg.inv(S), rtol=0, atol=100 * np.linalg.cond(S) * EPS
    )


def test_subspace_bad_input():
    with pytest.raises(ValueError, match="2-D"):
        matrix_rank([1.0, 2.0])
    with pytest.raises(ValueError, match="NaN"):
        null_space([[1.0, np.nan]])
    with pytest.raises(ValueError, match="empty"):
        pinv(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="tol"):
        matrix_rank([[1.0]], tol=-1.0)


# Determinants


def test_cofactor_worked_example_every_column():
    # Imperial notes, Appendix eq. A.35: det = 18 exactly, whatever the expansion column.
    A = [[-2, 2, -3], [-1, 1, 3], [2, 0, -1]]
    for k in range(3):
        d = cofactor_determinant(A, column=k)
        assert d == 18 and isinstance(d, int)


def test_cofactor_exact_and_against_lu(rng):
    for n in range(1, 7):
        A = rng.integers(-5, 6, size=(n, n))
        d = cofactor_determinant(A)
        # |det| <= prod of row norms (Hadamard); LU's error is about n eps times that bound.
        bound = np.prod(np.linalg.norm(A, axis=1))
        assert abs(d - np.linalg.det(A)) <= 10 * n * EPS * max(bound, 1.0)
        B = rng.integers(-5, 6, size=(n, n))
        assert cofactor_determinant(A @ B) == d * cofactor_determinant(B)  # exact
        assert cofactor_determinant(A.T) == d
        assert cofactor_determinant(3 * A) == 3**n * d
    F = [[Fraction(1, 2), Fraction(1, 3)], [Fraction(1, 4), Fraction(1, 5)]]
    assert cofactor_determinant(F) == Fraction(1, 10) - Fraction(1, 12)


def test_triangular_properties(rng):
    # The notes' triangular-matrix exercises: closure under sums, products, inverses and
    # scaling; det = product of the diagonal; eigenvalues = the diagonal.
    L1 = np.tril(rng.integers(1, 5, size=(5, 5)))
    L2 = np.tril(rng.integers(1, 5, size=(5, 5)))
    for M in (L1 + L2, L1 @ L2, 3 * L1, np.linalg.inv(L1)):
        assert np.allclose(np.triu(M, 1), 0.0)
    assert cofactor_determinant(L1) == int(np.prod(np.diag(L1)))
    np.testing.assert_allclose(
        np.sort(np.linalg.eigvals(L1).real), np.sort(np.diag(L1)), atol=1e-8
    )


def test_block_determinant_and_inverse(rng):
    p, q = 3, 2
    M = rng.normal(size=(p + q, p + q)) + 3 * np.eye(p + q)
    A, B, C, D = M[:p, :p], M[:p, p:], M[p:, :p], M[p:, p:]
    kappa = np.linalg.cond(M)
    d = block_determinant(A, B, C, D)
    assert abs(d - np.linalg.det(M)) <= 100 * kappa * EPS * abs(np.linalg.det(M))
    np.testing.assert_allclose(
        block_inverse(A, B, C, D),
        np.linalg.inv(M),
        atol=100 * kappa * EPS * np.linalg.norm(np.linalg.inv(M), 2),
    )


def test_determinant_bad_input():
    with pytest.raises(ValueError, match="square"):
        cofactor_determinant([[1, 2, 3], [4, 5, 6]])
    with pytest.raises(ValueError, match="10"):
        cofactor_determinant(np.eye(11))
    with pytest.raises(ValueError, match="column"):
        cofactor_determinant(np.eye(2), column=2)
    with pytest.raises(ValueError, match="NaN"):
        cofactor_determinant([[np.nan]])
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        block_determinant([[0.0]], [[1.0]], [[1.0]], [[0.0]])
    with pytest.raises(ValueError, match="fit"):
        block_inverse(np.eye(2), np.ones((3, 1)), np.ones((1, 2)), [[1.0]])


# Inner products


def test_nonstandard_inner_product_axioms(rng):
    # Imperial notes Appendix, Definition 9: beta(x, y) = x1 y1 - (x1 y2 + x2 y1) + 2 x2 y2,
    # Gram matrix [[1, -1], [-1, 2]] with eigenvalues (3 -+ sqrt 5) / 2.
    M = np.array([[1.0, -1.0], [-1.0, 2.0]])
    np.testing.assert_allclose(np.linalg.eigvalsh(M), [(3 - 5**0.5) / 2, (3 + 5**0.5) / 2])
    beta = InnerProduct(M)
    for _ in range(20):
        x, y = rng.normal(size=2), rng.normal(size=2)
        direct = x[0] * y[0] - (x[0] * y[1] + x[1] * y[0]) + 2 * x[1] * y[1]
        assert beta(x, y) == pytest.approx(direct, rel=1e-14, abs=1e-15)
        nx, ny = beta.norm(x), beta.norm(y)
        assert abs(beta(x, y)) <= nx * ny * (1 + 1e-14)  # Cauchy-Schwarz
        assert beta.norm(x + y) <= nx + ny + 1e-14  # triangle
        lhs = beta.norm(x + y) ** 2 + beta.norm(x - y) ** 2  # parallelogram (corrected)
        assert lhs == pytest.approx(2 * nx**2 + 2 * ny**2, rel=1e-13)
        polar = (beta.norm(x + y) ** 2 - beta.norm(x - y) ** 2) / 4
        assert polar == pytest.approx(beta(x, y), rel=1e-12, abs=1e-13 * nx * ny)
        w = beta.angle(x, y)
        assert 0.0 <= w <= np.pi
        assert np.cos(w) == pytest.approx(beta(x, y) / (nx * ny), abs=1e-13)
        p = beta.project(y, x)
        assert abs(beta(x, y - p)) <= 1e-13 * beta.norm(y) * nx  # residual orthogonal


def test_angle_accuracy_and_range():
    dot = InnerProduct(2)
    # arccos(cos w) returns 0 here: the cosine rounds to 1. Kahan's formula keeps every digit.
    assert dot.angle([1.0, 0.0], [1.0, 1e-10]) == pytest.approx(1e-10, rel=1e-14)
    assert dot.angle([1.0, 0.0], [-1.0, 0.0]) == np.pi  # antiparallel: pi, inside [0, pi]
    assert dot.angle([1e-300, 0.0], [0.0, 1e300]) == pytest.approx(np.pi / 2, rel=1e-15)
    assert dot.norm([3e200, 4e200]) == pytest.approx(5e200, rel=1e-15)
    assert dot.norm([1.0, 2.0]) == np.sqrt(5.0)  # the notes' vector length, exactly rounded


def test_projection_onto_columns(rng):
    M = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 3.0]])
    ip = InnerProduct(M)
    B = rng.normal(size=(3, 2))
    y = rng.normal(size=3)
    p = ip.project(y, B)
    explicit = B @ np.linalg.solve(B.T @ M @ B, B.T @ M @ y)
    np.testing.assert_allclose(p, explicit, rtol=1e-12)
    np.testing.assert_allclose(ip(B.T, y - p), 0.0, atol=1e-12 * ip.norm(y))


def test_inner_product_bad_input():
    with pytest.raises(ValueError, match="positive definite"):
        InnerProduct([[1.0, 2.0], [2.0, 1.0]])
    with pytest.raises(ValueError, match="symmetric"):
        InnerProduct([[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ValueError, match="dimension"):
        InnerProduct(0)
    ip = InnerProduct(2)
    with pytest.raises(ValueError, match="2 entries"):
        ip([1.0, 2.0, 3.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="zero vector"):
        ip.angle([0.0, 0.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="dependent"):
        ip.project([1.0, 2.0], [[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(ValueError, match="NaN"):
        ip.norm([np.nan, 1.0])


# Identities


def test_woodbury_and_kailath_against_direct_solves(rng):
    p, q = 30, 3
    d = 1.0 + rng.random(p)
    U, V = rng.normal(size=(p, q)), rng.normal(size=(p, q))
    W = np.diag(1.0 + rng.random(q))
    b = rng.normal(size=(p, 2))
    full = np.diag(d) + U @ W @ V.T
    kappa = np.linalg.cond(full)
    expected = np.linalg.solve(full, b)
    scale = np.linalg.norm(expected)
    for Z in (d, np.diag(d)):
        x = woodbury_solve(Z, U, W, V, b)
        assert np.linalg.norm(x - expected) <= 1e3 * kappa * EPS * scale
    x = kailath_solve(np.diag(d), U @ W, V.T, b[:, 0])
    assert np.linalg.norm(x - expected[:, 0]) <= 1e3 * kappa * EPS * np.linalg.norm(expected[:, 0])


def test_woodbury_worked_form(rng):
    # The corrected form of the Imperial notes: (A + U C V)^{-1} = A^{-1} - A^{-1} U
    # (C^{-1} + V A^{-1} U)^{-1} V A^{-1}; applied to the identity it gives the inverse.
    A = np.diag([1.0, 2.0, 3.0, 4.0])
    U, C, V = rng.normal(size=(4, 2)), np.array([[2.0, 0.3], [0.3, 1.0]]), rng.normal(size=(2, 4))
    inv = woodbury_solve(A, U, C, V.T, np.eye(4))
    np.testing.assert_allclose(inv, np.linalg.inv(A + U @ C @ V), rtol=1e-10, atol=1e-12)


def test_searle(rng):
    A = rng.normal(size=(4, 4))
    A = A @ A.T + np.eye(4)
    B = rng.normal(size=(4, 4))
    B = B @ B.T + np.eye(4)
    expected = np.linalg.inv(np.linalg.inv(A) + np.linalg.inv(B))
    np.testing.assert_allclose(searle(A, B), expected, rtol=1e-10)
    np.testing.assert_allclose(searle(B, A), expected, rtol=1e-10)  # B (A + B)^{-1} A
    # A singular B: the inverses do not exist, the Searle form does (limit of B + t I).
    Bs = np.diag([1.0, 1.0, 0.0, 0.0])
    t = 1e-9
    limit = np.linalg.inv(np.linalg.inv(A) + np.linalg.inv(Bs + t * np.eye(4)))
    np.testing.assert_allclose(searle(A, Bs), limit, atol=1e-7)


def test_identity_bad_input():
    with pytest.raises(np.linalg.LinAlgError, match="zero entry"):
        woodbury_solve([1.0, 0.0], np.ones((2, 1)), [[1.0]], np.ones((2, 1)), [1.0, 1.0])
    with pytest.raises(ValueError, match="W must be"):
        woodbury_solve([1.0, 1.0], np.ones((2, 1)), np.eye(2), np.ones((2, 1)), [1.0, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        searle([[np.nan]], [[1.0]])
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        searle([[1.0]], [[-1.0]])


# Rayleigh quotient, condition number, vec


def test_rayleigh_quotient_bounds(rng):
    A = rng.normal(size=(5, 5))
    A = A + A.T
    w, Q = np.linalg.eigh(A)
    for k in range(5):
        assert rayleigh_quotient(A, Q[:, k]) == pytest.approx(w[k], abs=1e-13 * np.abs(w).max())
    for _ in range(20):
        r = rayleigh_quotient(A, rng.normal(size=5))
        assert w[0] - 1e-13 <= r <= w[-1] + 1e-13
    assert rayleigh_quotient(A, 1e300 * Q[:, 0]) == pytest.approx(w[0], abs=1e-12)
    with pytest.raises(ValueError, match="zero vector"):
        rayleigh_quotient(A, np.zeros(5))


def test_condition_number(rng):
    A = rng.normal(size=(6, 6))
    assert condition_number(A) == pytest.approx(np.linalg.cond(A), rel=1e-10)
    S = A @ A.T + np.eye(6)
    w = np.linalg.eigvalsh(S)
    assert condition_number(S) == pytest.approx(w[-1] / w[0], rel=1e-10)
    assert (
        condition_number([[1.0, 1.0], [1.0, 1.0]]) == np.inf
        or condition_number([[1.0, 1.0], [1.0, 1.0]]) > 1e15
    )
    with pytest.raises(ValueError, match="NaN"):
        condition_number([[np.inf]])


def test_vec_worked_example_and_kronecker(rng):
    assert vec([["a", "b"], ["c", "d"]]).tolist() == ["a", "c", "b", "d"]  # Imperial MML
    A, X, B = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=(2, 5))
    np.testing.assert_allclose(vec(A @ X @ B), np.kron(B.T, A) @ vec(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(unvec(vec(X), X.shape), X)
    with pytest.raises(ValueError, match="2-D"):
        vec(np.ones(3))
    with pytest.raises(ValueError, match="entries"):
        unvec(np.ones(5), (2, 2))


# Taylor polynomials


def _f(v):
    return v[0] ** 2 + 2 * v[0] * v[1] + v[1] ** 3


def _series(x, y):
    # Imperial notes §1.4.1.2, eq. 1.103 (corrected).
    dx, dy = x - 1, y - 2
    return 13 + 6 * dx + 14 * dy + dx**2 + 2 * dx * dy + 6 * dy**2 + dy**3


def test_taylor_worked_example(rng):
    T = [taylor_polynomial(_f, [1.0, 2.0], order=n) for n in range(4)]
    assert T[3]([0.3, -1.7]) == pytest.approx(-5.843, abs=1e-12)
    for _ in range(5):
        x, y = rng.normal(size=2)
        dx, dy = x - 1, y - 2
        assert T[0]([x, y]) == 13.0
        assert T[1]([x, y]) == pytest.approx(13 + 6 * dx + 14 * dy, rel=1e-13, abs=1e-12)
        assert T[2]([x, y]) == pytest.approx(
            13 + 6 * dx + 14 * dy + dx**2 + 2 * dx * dy + 6 * dy**2, rel=1e-13, abs=1e-12
        )
        assert T[3]([x, y]) == pytest.approx(_series(x, y), rel=1e-13, abs=1e-12)
        assert T[3]([x, y]) == pytest.approx(_f(np.array([x, y])), rel=1e-13, abs=1e-12)


def test_taylor_of_exp_converges():
    from math import exp, factorial

    f = lambda v: ad.exp(v[0])  # noqa: E731
    for n in range(6):
        T = taylor_polynomial(f, [0.0], order=n)
        assert T([0.5]) == pytest.approx(
            sum(0.5**k / factorial(k) for k in range(n + 1)), rel=1e-14
        )
    assert abs(taylor_polynomial(f, [0.0], order=12)([0.5]) - exp(0.5)) < 1e-13


def test_taylor_bad_input():
    with pytest.raises(ValueError, match="vector"):
        taylor_polynomial(_f, [[1.0, 2.0]])
    with pytest.raises(ValueError, match="NaN"):
        taylor_polynomial(_f, [np.nan, 2.0])
    with pytest.raises(ValueError, match="shape"):
        taylor_polynomial(_f, [1.0, 2.0])([1.0])
    with pytest.raises(ValueError, match="order"):
        taylor_polynomial(_f, [1.0, 2.0], order=-1)
