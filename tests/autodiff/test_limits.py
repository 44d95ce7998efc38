"""Gradients at the edges of their domains are their limits, not NaN.

The suite turns warnings into errors, so a 0 * inf or inf - inf on the way fails here too.
"""

import numpy as np
import pytest

from mathlearn import autodiff as ad


def test_power_zero_exponent_has_zero_gradient_at_zero():
    # x^0 = 1 for every x: its derivative is 0 everywhere, also at x = 0.
    x = np.array([0.0, 0.0, 2.0])
    np.testing.assert_array_equal(ad.grad(lambda t: ad.sum(ad.power(t, 0.0)))(x), 0.0)
    np.testing.assert_array_equal(ad.hessian(lambda t: ad.sum(ad.power(t, 0.0)))(x), 0.0)
    # Other exponents are unchanged: d x^3 = 3 x^2, d^2 x^3 = 6 x.
    x = np.array([0.0, 1.5])
    np.testing.assert_array_equal(ad.grad(lambda t: ad.sum(t**3.0))(x), 3 * x**2)
    np.testing.assert_array_equal(ad.hessian(lambda t: ad.sum(t**3.0))(x), np.diag(6 * x))


@pytest.mark.parametrize("n", [1, 3])
def test_logsumexp_gradient_at_all_minus_inf_is_the_limit(n):
    # For x = (c, ..., c) the gradient softmax(x) is uniform for every finite c; at c = -inf
    # it is the limit, 1/n each, rather than exp(-inf - (-inf)) = NaN.
    g = ad.grad(lambda t: ad.logsumexp(t))(np.full(n, -np.inf))
    # At c = -1000 the sum c + log n is rounded at the 1e-13 level, which exp carries over.
    finite = ad.grad(lambda t: ad.logsumexp(t))(np.full(n, -1000.0))
    np.testing.assert_allclose(g, finite, rtol=1e-12)
    np.testing.assert_allclose(g, 1.0 / n, rtol=1e-15)


def test_logsumexp_gradient_rowwise_mixed():
    x = np.array([[-np.inf, -np.inf], [0.0, np.log(3.0)], [-np.inf, 1.0]])
    g = ad.grad(lambda t: ad.sum(ad.logsumexp(t, axis=1)))(x)
    np.testing.assert_allclose(g, [[0.5, 0.5], [0.25, 0.75], [0.0, 1.0]], rtol=1e-15)
