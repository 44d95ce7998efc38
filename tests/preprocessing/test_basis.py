import numpy as np
import pytest
from scipy.special import expit
from sklearn.preprocessing import PolynomialFeatures

from mathlearn.linear_model import LinearRegression
from mathlearn.preprocessing import (
    FourierBasis,
    GaussianBasis,
    PiecewiseConstantBasis,
    PiecewiseLinearBasis,
    PolynomialBasis,
    SigmoidBasis,
)

ALL = [
    PolynomialBasis(),
    GaussianBasis(),
    SigmoidBasis(),
    FourierBasis(),
    PiecewiseConstantBasis(),
    PiecewiseLinearBasis(),
]


def test_polynomial_scalar_is_vandermonde():
    x = np.linspace(-2, 3, 7)[:, None]
    Phi = PolynomialBasis(degree=4).fit_transform(x)
    np.testing.assert_allclose(Phi, np.vander(x[:, 0], 5, increasing=True), rtol=1e-15)
    Phi = PolynomialBasis(degree=4, include_bias=False).fit_transform(x)
    np.testing.assert_allclose(Phi, np.vander(x[:, 0], 5, increasing=True)[:, 1:], rtol=1e-15)


@pytest.mark.parametrize("include_bias", [True, False])
def test_polynomial_multivariate_matches_sklearn(include_bias):
    X = np.random.default_rng(0).normal(size=(9, 3))
    ours = PolynomialBasis(degree=3, include_bias=include_bias).fit(X)
    ref = PolynomialFeatures(degree=3, include_bias=include_bias).fit(X)
    np.testing.assert_allclose(ours.transform(X), ref.transform(X), rtol=1e-13)
    # Stuttgart "Introduction to Machine Learning" slide 2:7: 1 + d + d(d+1)/2 + d(d+1)(d+2)/6
    # features for the cubic map
    assert ours.n_output_features_ == int(include_bias) + 3 + 6 + 10
    assert list(ours.get_feature_names_out(["a", "b", "c"]))[int(include_bias) + 3] == "a^2"


def test_gaussian_closed_form_and_defaults():
    x = np.array([[0.0], [0.25], [1.0]])
    b = GaussianBasis(n_centres=5).fit(x)
    np.testing.assert_allclose(b.centres_[:, 0], np.linspace(0, 1, 5))
    np.testing.assert_allclose(b.width_, [0.25])
    expected = np.exp(-0.5 * ((x - b.centres_[:, 0][None, :]) / 0.25) ** 2)
    np.testing.assert_allclose(b.transform(x), expected, rtol=1e-15)
    Phi = GaussianBasis(centres=[0.5], width=2.0, include_bias=True).fit_transform(x)
    np.testing.assert_allclose(Phi[:, 0], 1.0)
    np.testing.assert_allclose(Phi[:, 1], np.exp(-((x[:, 0] - 0.5) ** 2) / 8.0))


def test_sigmoid_closed_form():
    x = np.linspace(-3, 3, 11)[:, None]
    Phi = SigmoidBasis(centres=[-1.0, 0.0, 2.0], width=0.5).fit_transform(x)
    np.testing.assert_allclose(Phi, expit((x - np.array([-1.0, 0.0, 2.0])) / 0.5))
    assert Phi[5, 1] == 0.5


def test_fourier_orthogonal_on_a_period():
    n = 16
    x = (np.arange(n) / n * 3.0)[:, None]  # one period P = 3 sampled evenly
    Phi = FourierBasis(n_frequencies=3, period=3.0).fit_transform(x)
    G = Phi.T @ Phi
    np.testing.assert_allclose(G, np.diag([n] + [n / 2] * 6), atol=1e-12)
    np.testing.assert_allclose(Phi[:, 1], np.cos(2 * np.pi * x[:, 0] / 3.0))


def test_piecewise_constant_intervals():
    b = PiecewiseConstantBasis(knots=[0.0, 1.0]).fit(np.zeros((1, 1)))
    Phi = b.transform(np.array([[-5.0], [0.0], [0.5], [1.0], [1.5]]))
    # [xi_j < x <= xi_{j+1}]: 0.0 belongs to the first interval, 1.0 to the second
    np.testing.assert_array_equal(np.argmax(Phi, axis=1), [0, 0, 1, 1, 2])
    np.testing.assert_array_equal(Phi.sum(axis=1), 1.0)


def test_piecewise_linear_fits_hinge_function_exactly():
    x = np.linspace(-2, 2, 41)[:, None]
    knots = [-0.5, 0.7]
    y = 0.3 + 2.0 * x[:, 0] - 3.0 * np.maximum(x[:, 0] + 0.5, 0) + np.maximum(x[:, 0] - 0.7, 0)
    Phi = PiecewiseLinearBasis(knots=knots).fit_transform(x)
    model = LinearRegression(fit_intercept=False).fit(Phi, y)
    np.testing.assert_allclose(model.coef_, [0.3, 2.0, -3.0, 1.0], atol=1e-12)
    # discontinuous form: independent line per interval
    Phi = PiecewiseLinearBasis(knots=knots, continuous=False, include_bias=False).fit_transform(x)
    assert Phi.shape == (41, 6)
    np.testing.assert_array_equal(Phi[:, 0::2].sum(axis=1), 1.0)
    np.testing.assert_array_equal((Phi[:, 1::2]).sum(axis=1), x[:, 0])


def test_default_piecewise_knots_are_interior():
    b = PiecewiseConstantBasis(n_knots=3).fit(np.array([[0.0], [4.0]]))
    np.testing.assert_allclose(b.knots_[:, 0], [1.0, 2.0, 3.0])
    assert b.n_output_features_ == 4


@pytest.mark.parametrize("basis", ALL, ids=lambda b: type(b).__name__)
def test_bad_input(basis):
    X = np.random.default_rng(0).normal(size=(5, 2))
    with pytest.raises(ValueError, match="NaN"):
        basis.fit(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match=r"infinity|inf"):
        basis.fit(np.array([[np.inf, 1.0]]))
    basis.fit(X)
    with pytest.raises(ValueError, match="features"):
        basis.transform(X[:, :1])
    with pytest.raises(ValueError, match="0 sample"):
        basis.fit(np.empty((0, 2)))


@pytest.mark.parametrize(
    "basis, match",
    [
        (PolynomialBasis(degree=-1), "degree"),
        (PolynomialBasis(degree=0, include_bias=False), "no features"),
        (GaussianBasis(n_centres=0), "n_centres"),
        (GaussianBasis(width=-1.0), "width"),
        (SigmoidBasis(width=0.0), "width"),
        (FourierBasis(n_frequencies=0), "n_frequencies"),
        (FourierBasis(period=-2.0), "period"),
        (PiecewiseConstantBasis(n_knots=0), "n_knots"),
        (GaussianBasis(centres=[[0.0, 1.0, 2.0]]), "centres"),
        (PiecewiseLinearBasis(knots=[np.nan]), "knots"),
    ],
)
def test_bad_parameters(basis, match):
    with pytest.raises(ValueError, match=match):
        basis.fit(np.ones((3, 1)))


@pytest.mark.parametrize(
    "basis, match",
    [
        (PolynomialBasis(degree=True), "degree"),
        (PolynomialBasis(degree=2.0), "degree"),
        (PolynomialBasis(include_bias="yes"), "include_bias"),
        (GaussianBasis(include_bias=1), "include_bias"),
        (FourierBasis(include_bias="no"), "include_bias"),
        (PiecewiseLinearBasis(continuous="no"), "continuous"),
    ],
)
def test_bad_parameter_types(basis, match):
    # a string flag is truthy and a bool is an int: both silently meant something else
    with pytest.raises((TypeError, ValueError), match=match):
        basis.fit(np.ones((3, 1)))


def test_gaussian_is_radial_in_several_dimensions():
    X = np.random.default_rng(1).normal(size=(8, 3))
    C = np.array([[0.0, 0.0, 0.0], [1.0, -1.0, 0.5]])
    Phi = GaussianBasis(centres=C, width=0.7).fit_transform(X)
    d2 = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
    np.testing.assert_allclose(Phi, np.exp(-d2 / (2 * 0.49)), rtol=1e-12)
    # "data": every training input is a centre (Stuttgart "Introduction to Machine Learning" slide
    # 2:9), with the bias column
    b = GaussianBasis(centres="data", include_bias=True).fit(X)
    Phi = b.transform(X)
    assert Phi.shape == (8, 9)
    np.testing.assert_allclose(np.diag(Phi[:, 1:]), 1.0)
    nn = np.sqrt(np.sort(((X[:, None] - X[None]) ** 2).sum(axis=2), axis=1)[:, 1])
    assert b.width_ == pytest.approx(np.median(nn))
    # default centres for several features are training points
    b = GaussianBasis(n_centres=4).fit(X)
    assert all(any(np.array_equal(c, x) for x in X) for c in b.centres_)
    with pytest.raises(ValueError, match="centres"):
        GaussianBasis(centres="grid").fit(X)


def test_polynomial_basis_overflow_is_a_clear_error():
    X = np.array([[1.0, 2.0], [3e200, 1.0]])
    basis = PolynomialBasis(degree=2).fit(X)
    with pytest.raises(ValueError, match=r"feature 'x0\^2' of row 1 of X .* overflows float64"):
        basis.transform(X)


@pytest.mark.parametrize("c", [2.0**997, 2.0**-997])
def test_gaussian_basis_width_at_extreme_scales(rng, c):
    # The default width is the median nearest-neighbour distance between centres: it scales
    # with the data (exactly, for a power of two), and so does nothing else in the features.
    X = rng.normal(size=(30, 3))
    ref = GaussianBasis(n_centres=10).fit(X)
    big = GaussianBasis(n_centres=10).fit(c * X)
    assert big.width_ == pytest.approx(c * ref.width_, rel=1e-15)
    np.testing.assert_allclose(big.transform(c * X), ref.transform(X), rtol=1e-12, atol=1e-300)
