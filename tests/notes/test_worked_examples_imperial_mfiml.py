"""Worked examples of Imperial "Mathematics for Inference and Machine Learning" tested here.

The partial derivatives of §1.4.1 (eq. 1.74–1.79), the chain rule through a curve of §1.4.4
(eq. 1.125–1.134), the gradient and Hessian of the negative log-likelihood of linear regression
of §1.5.1 (eq. 1.155) and the centring identity of §2.1.4 (eq. 2.35–2.37). Each is checked
against the closed form the notes derive, at several points; the derivatives come from
reverse-mode autodiff, so they agree with the closed forms to rounding.
"""

import numpy as np
import pytest

from mathlearn import autodiff as ad
from mathlearn.decomposition import PCA
from mathlearn.linear_model import LinearRegression

POINTS = [(1.0, 2.0), (-0.7, 0.3), (2.5, -1.25)]


@pytest.mark.parametrize("x1, x2", POINTS)
def test_gradient_of_x1_squared_x2_plus_x1_x2_cubed(x1, x2):
    # eq. 1.74-1.76: grad f = [2 x1 x2 + x2^3, x1^2 + 3 x1 x2^2].
    f = lambda x: x[0] ** 2 * x[1] + x[0] * x[1] ** 3  # noqa: E731
    g = ad.grad(f)(np.array([x1, x2]))
    np.testing.assert_allclose(g, [2 * x1 * x2 + x2**3, x1**2 + 3 * x1 * x2**2], rtol=1e-14)


@pytest.mark.parametrize("x, y", POINTS)
def test_partials_of_x_squared_plus_y_squared(x, y):
    # eq. 1.77-1.78: df/dx = 2x, df/dy = 2y.
    g = ad.grad(lambda v: v[0] ** 2 + v[1] ** 2)(np.array([x, y]))
    np.testing.assert_array_equal(g, [2 * x, 2 * y])


@pytest.mark.parametrize("x, y", POINTS)
def test_partials_of_x_plus_two_y_cubed_squared(x, y):
    # eq. 1.79: df/dx = 2 (x + 2 y^3); df/dy (not printed) = 12 y^2 (x + 2 y^3).
    g = ad.grad(lambda v: (v[0] + 2 * v[1] ** 3) ** 2)(np.array([x, y]))
    inner = x + 2 * y**3
    np.testing.assert_allclose(g, [2 * inner, 12 * y**2 * inner], rtol=1e-13)


@pytest.mark.parametrize("t", [0.0, 0.4, 1.3, -2.0])
def test_chain_rule_through_a_curve(t):
    # eq. 1.125-1.134: h(t) = f(g(t)), f(x) = exp(x1 x2^2), g(t) = [t cos t, t sin t];
    # dh/dt = exp(x1 x2^2) [x2^2 (cos t - t sin t) + 2 x1 x2 (sin t + t cos t)].
    def h(t):
        x1, x2 = t * ad.cos(t), t * ad.sin(t)
        return ad.exp(x1 * x2**2)

    x1, x2 = t * np.cos(t), t * np.sin(t)
    expected = np.exp(x1 * x2**2) * (
        x2**2 * (np.cos(t) - t * np.sin(t)) + 2 * x1 * x2 * (np.sin(t) + t * np.cos(t))
    )
    assert float(ad.grad(h)(np.array(t))) == pytest.approx(expected, rel=1e-13, abs=1e-15)


def test_negative_log_likelihood_gradient_and_hessian(rng):
    # eq. 1.155: d(-log p)/dtheta = (1/sigma^2)(-y^T X + theta^T X^T X); the Hessian is
    # X^T X / sigma^2 (positive definite for full-rank X, footnote 26), and the ML estimate of
    # LinearRegression is where the gradient vanishes.
    X, y, sigma2 = rng.standard_normal((20, 3)), rng.standard_normal(20), 0.7
    nll = lambda th: ad.sum((y - X @ th) ** 2) / (2 * sigma2)  # noqa: E731
    theta = rng.standard_normal(3)
    np.testing.assert_allclose(
        ad.grad(nll)(theta), (-y @ X + theta @ X.T @ X) / sigma2, rtol=1e-12, atol=1e-12
    )
    H = ad.hessian(nll)(theta)
    np.testing.assert_allclose(H, X.T @ X / sigma2, rtol=1e-12)
    assert np.linalg.eigvalsh(H).min() > 0
    theta_ml = LinearRegression(fit_intercept=False).fit(X, y).coef_
    # |grad| at the solver's answer is rounding-sized relative to |X^T y| / sigma^2.
    scale = np.linalg.norm(X.T @ y) / sigma2
    assert np.linalg.norm(ad.grad(nll)(theta_ml)) <= 1e-12 * scale


def test_centring_by_matrix_multiplication(rng):
    # eq. 2.35-2.37 (samples as columns, X is F x n): X (I - 11^T / n) = X - m 1^T, and PCA
    # (which takes samples as rows) centres on the same mean m.
    F, n = 4, 9
    X = rng.standard_normal((F, n)) + 5.0
    centring = np.eye(n) - np.ones((n, n)) / n
    pca = PCA().fit(X.T)
    m = pca.mean_
    np.testing.assert_allclose(m, X.mean(axis=1), rtol=1e-14)
    np.testing.assert_allclose(X @ centring, X - np.outer(m, np.ones(n)), atol=1e-13)
    # The scores of PCA are the projections of the centred columns onto the components.
    np.testing.assert_allclose(
        pca.transform(X.T), (X @ centring).T @ pca.components_.T, atol=1e-12
    )


def test_appendix_derivative_examples(rng):
    # §A.1.2 (eq. A.26-A.33): d x^T B x / dx = x^T (B + B^T); d tr(A X B) / dX = A^T B^T;
    # d tr(W^T B W) / dW = (B + B^T) W; d det(X) / dX = det(X) X^-T.
    B = rng.standard_normal((4, 4))
    x = rng.standard_normal(4)
    np.testing.assert_allclose(ad.grad(lambda v: v @ (B @ v))(x), x @ (B + B.T), rtol=1e-13)
    A, X, C = rng.standard_normal((3, 4)), rng.standard_normal((4, 5)), rng.standard_normal((5, 3))
    trace = lambda M: ad.sum(ad.diagonal(M))  # noqa: E731
    np.testing.assert_allclose(ad.grad(lambda X: trace(A @ X @ C))(X), A.T @ C.T, rtol=1e-13)
    W = rng.standard_normal((4, 2))
    np.testing.assert_allclose(
        ad.grad(lambda W: trace(W.T @ B @ W))(W), (B + B.T) @ W, rtol=1e-12, atol=1e-14
    )
    M = rng.standard_normal((4, 4))
    S = M @ M.T + 4 * np.eye(4)  # positive definite, so det S = exp(logdet S)
    g = ad.grad(lambda S: ad.exp(ad.logdet(S)))(S)
    np.testing.assert_allclose(g, np.linalg.det(S) * np.linalg.inv(S).T, rtol=1e-10)


def test_matrix_derivative_identities(rng):
    # §1.4.3 (eq. 1.108-1.117), each by reverse-mode autodiff against the closed form; the
    # determinant rule in its corrected form d det f(X) = det f(X) tr(f(X)^-1 df) (eq. 1.110).
    n = 4
    X = rng.standard_normal((n, n)) + 3 * np.eye(n)  # well conditioned
    V = rng.standard_normal((n, n))  # a direction
    a, b = rng.standard_normal(n), rng.standard_normal(n)
    Xinv = np.linalg.inv(X)

    # (1.110) with f(X) = X X^T + I (positive definite, so det f = exp(logdet f)).
    F = X @ X.T + np.eye(n)
    dF = V @ X.T + X @ V.T
    g = ad.grad(lambda X: ad.exp(ad.logdet(X @ X.T + np.eye(n))))(X)
    expected = np.linalg.det(F) * np.trace(np.linalg.solve(F, dF))
    assert np.sum(g * V) == pytest.approx(expected, rel=1e-10)

    # (1.111) d f^-1 = -f^-1 df f^-1, seen through a^T f(X)^-1 b.
    g = ad.grad(lambda X: a @ ad.solve(X @ X.T + np.eye(n), b))(X)
    Finv = np.linalg.inv(F)
    assert np.sum(g * V) == pytest.approx(-a @ Finv @ dF @ Finv @ b, rel=1e-10)

    # (1.112) d a^T X^-1 b / dX = -(X^-1)^T a b^T (X^-1)^T.
    g = ad.grad(lambda X: a @ ad.solve(X, b))(X)
    np.testing.assert_allclose(g, -Xinv.T @ np.outer(a, b) @ Xinv.T, rtol=1e-10, atol=1e-13)

    # (1.113)-(1.115): d x^T a / dx = d a^T x / dx = a^T; d a^T X b / dX = a b^T.
    x = rng.standard_normal(n)
    np.testing.assert_array_equal(ad.grad(lambda x: x @ a)(x), a)
    np.testing.assert_array_equal(ad.grad(lambda x: a @ x)(x), a)
    np.testing.assert_allclose(ad.grad(lambda X: a @ X @ b)(X), np.outer(a, b), rtol=1e-14)

    # (1.117) d/ds (x - A s)^T W (x - A s) = -2 (x - A s)^T W A for symmetric W.
    A, s = rng.standard_normal((n, 3)), rng.standard_normal(3)
    M = rng.standard_normal((n, n))
    W = M + M.T
    r = x - A @ s
    g = ad.grad(lambda s: (x - A @ s) @ (W @ (x - A @ s)))(s)
    np.testing.assert_allclose(g, -2 * r @ W @ A, rtol=1e-12, atol=1e-13)
