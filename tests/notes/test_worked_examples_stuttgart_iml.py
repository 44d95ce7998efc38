"""Worked examples of Stuttgart "Introduction to Machine Learning" not tested elsewhere.

Exercise 1.3 (vector derivatives): the derivative of a scalar by a vector is a row vector,
d(x^T x)/dx = 2 x^T, and argmin (Ax - y)^T (Ax - y) + x^T B x = (A^T A + B)^-1 A^T y, which
for B = lambda I is ridge regression.
"""

import numpy as np
import pytest

from mathlearn import autodiff as ad
from mathlearn.linear_model import Ridge


def test_derivative_of_x_transpose_x(rng):
    x = rng.standard_normal(5)
    np.testing.assert_array_equal(ad.grad(lambda v: ad.sum(v * v))(x), 2 * x)


def test_argmin_of_penalised_least_squares(rng):
    A, y = rng.standard_normal((12, 4)), rng.standard_normal(12)
    M = rng.standard_normal((4, 4))
    B = M @ M.T + np.eye(4)  # symmetric positive definite
    x_star = np.linalg.solve(A.T @ A + B, A.T @ y)
    objective = lambda x: ad.sum((A @ x - y) ** 2) + x @ (B @ x)  # noqa: E731
    # Stationary: the gradient 2 (A^T A + B) x - 2 A^T y vanishes at x*, to rounding.
    assert np.linalg.norm(ad.grad(objective)(x_star)) <= 1e-12 * np.linalg.norm(A.T @ y)
    # and it is the minimum: the Hessian 2 (A^T A + B) is positive definite.
    assert np.linalg.eigvalsh(ad.hessian(objective)(x_star)).min() > 0
    # B = lambda I is ridge regression without intercept.
    lam = 0.3
    np.testing.assert_allclose(
        Ridge(alpha=lam, fit_intercept=False).fit(A, y).coef_,
        np.linalg.solve(A.T @ A + lam * np.eye(4), A.T @ y),
        rtol=1e-12,
    )


def test_polynomial_kernel_is_the_explicit_feature_map():
    # Slide 5:6: (x1 x1' + x2 x2' + 1)^2 = phi(x)^T phi(x') with
    # phi(x) = (1, sqrt2 x1, sqrt2 x2, x1^2, sqrt2 x1 x2, x2^2); at x = (0.3, -1.2),
    # x' = (2, 0.5) both sides equal 1 (x^T x' = 0).
    from mathlearn.kernels import Polynomial

    def phi(x):
        s = np.sqrt(2.0)
        return np.array([1.0, s * x[0], s * x[1], x[0] ** 2, s * x[0] * x[1], x[1] ** 2])

    x, xp = np.array([0.3, -1.2]), np.array([2.0, 0.5])
    k = Polynomial(degree=2, gamma=1.0, coef0=1.0)
    assert k(x[None], xp[None])[0, 0] == pytest.approx(1.0, rel=1e-15)
    assert phi(x) @ phi(xp) == pytest.approx(1.0, rel=1e-15)
    rng = np.random.default_rng(3)
    X = rng.standard_normal((5, 2))
    Phi = np.array([phi(r) for r in X])
    np.testing.assert_allclose(k(X, X), Phi @ Phi.T, rtol=1e-13)


def test_autodiff_logistic_loss_gradient_and_hessian(rng):
    # Ex. 6.1: the autodiff gradient and Hessian of the regularised logistic loss
    # L(beta) = sum_i [log(1 + e^{z_i}) - y_i z_i] + lam ||beta||^2, z = X beta, against the
    # analytic X^T (p - y) + 2 lam beta and X^T diag(p (1 - p)) X + 2 lam I (slides 3:18-3:21).
    X = rng.standard_normal((30, 3))
    y = (rng.random(30) < 0.5).astype(float)
    beta, lam = rng.standard_normal(3), 0.1

    def loss(b):
        z = X @ b
        return ad.sum(ad.softplus(z) - y * z) + lam * ad.sum(b * b)

    p = 1 / (1 + np.exp(-(X @ beta)))
    np.testing.assert_allclose(ad.grad(loss)(beta), X.T @ (p - y) + 2 * lam * beta, rtol=1e-12)
    np.testing.assert_allclose(
        ad.hessian(loss)(beta),
        X.T @ ((p * (1 - p))[:, None] * X) + 2 * lam * np.eye(3),
        rtol=1e-12,
    )
