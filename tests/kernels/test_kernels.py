import tracemalloc

import numpy as np
import pytest
from sklearn.metrics.pairwise import (
    linear_kernel,
    polynomial_kernel,
    rbf_kernel,
    sigmoid_kernel,
)

from mathlearn.kernels import RBF, Linear, Polynomial, Sigmoid


@pytest.fixture
def data(rng):
    return rng.normal(size=(15, 4)), rng.normal(size=(7, 4))


def test_rbf_matches_sklearn(data):
    X, Y = data
    k = RBF(length_scale=1.7)
    gamma = 1.0 / (2 * 1.7**2)
    np.testing.assert_allclose(k(X, Y), rbf_kernel(X, Y, gamma=gamma), rtol=1e-12)
    np.testing.assert_allclose(k(X), rbf_kernel(X, gamma=gamma), rtol=1e-12)
    assert k.gamma == pytest.approx(gamma)
    np.testing.assert_array_equal(k.diag(X), np.ones(len(X)))


def test_rbf_closed_form_value():
    # The notes' form exp(-||x - y||^2 / r^2) with r^2 = 2 l^2 (Imperial
    # "Mathematics for Inference and Machine Learning" §2.2.1; the notes drop the minus sign).
    x, y = np.array([[1.0, 2.0]]), np.array([[0.0, 0.0]])
    r2 = 3.0
    assert RBF(np.sqrt(r2 / 2))(x, y)[0, 0] == pytest.approx(np.exp(-5.0 / r2), rel=1e-14)


def test_polynomial_sigmoid_linear_match_sklearn(data):
    X, Y = data
    np.testing.assert_allclose(
        Polynomial(degree=3, gamma=0.3, coef0=1.5)(X, Y),
        polynomial_kernel(X, Y, degree=3, gamma=0.3, coef0=1.5),
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        Sigmoid(gamma=0.2, coef0=-0.5)(X, Y), sigmoid_kernel(X, Y, gamma=0.2, coef0=-0.5)
    )
    np.testing.assert_allclose(Linear()(X, Y), linear_kernel(X, Y))
    np.testing.assert_allclose(Linear().diag(X), np.diag(linear_kernel(X)))
    np.testing.assert_allclose(Polynomial(2).diag(X), np.diag(Polynomial(2)(X)))


def test_degree_two_feature_map(rng):
    # Imperial "Mathematics for Inference and Machine Learning" §2.2.1 (corrected: the notes say
    # R^8): the explicit map R^3 -> R^10 has inner product (1 + x^T y)^2.
    def phi(x):
        s = np.sqrt(2.0)
        return np.array(
            [1, s * x[0], s * x[1], s * x[2], x[0] ** 2, x[1] ** 2, x[2] ** 2,
             s * x[0] * x[1], s * x[1] * x[2], s * x[0] * x[2]]
        )  # fmt: skip

    X = rng.normal(size=(5, 3))
    explicit = np.array([[phi(a) @ phi(b) for b in X] for a in X])
    np.testing.assert_allclose(Polynomial(degree=2, gamma=1.0, coef0=1.0)(X), explicit)


def test_params_and_repr():
    k = Polynomial(degree=2, gamma=0.5, coef0=0.0)
    assert k.get_params() == {"degree": 2, "gamma": 0.5, "coef0": 0.0}
    k.set_params(degree=4)
    assert k.degree == 4
    assert "Polynomial(degree=4" in repr(k)
    assert RBF(2.0) == RBF(2.0) and RBF(2.0) != RBF(1.0)
    with pytest.raises(ValueError, match="no hyperparameter"):
        k.set_params(length_scale=1.0)


def test_no_three_way_temporaries(rng):
    X, Y = rng.normal(size=(200, 500)), rng.normal(size=(200, 500))
    tracemalloc.start()
    RBF(3.0)(X, Y)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # An (N, M, D) temporary would need 160 MB; the Gram route needs a few (N, M) arrays.
    assert peak < 5e6


@pytest.mark.parametrize("kernel", [RBF(), Linear(), Polynomial(), Sigmoid()])
def test_bad_input(kernel):
    with pytest.raises(ValueError, match="NaN"):
        kernel(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="same number of features"):
        kernel(np.ones((2, 3)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="2-D"):
        kernel(np.ones(3))


def test_rbf_bad_length_scale():
    with pytest.raises(ValueError, match="length_scale"):
        RBF(0.0)(np.ones((2, 2)))


@pytest.mark.parametrize("degree", [2.5, -1, True])
def test_polynomial_bad_degree(degree):
    # (gamma x^T y + coef0)^2.5 is NaN where the base is negative: refuse the degree instead.
    with pytest.raises(ValueError, match="degree"):
        Polynomial(degree=degree, coef0=-5.0)(np.ones((2, 2)))
    np.testing.assert_array_equal(Polynomial(degree=3.0)(np.ones((1, 2))), [[27.0]])
