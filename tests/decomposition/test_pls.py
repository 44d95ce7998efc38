import numpy as np
import pytest
from sklearn.cross_decomposition import PLSRegression as SkPLSRegression

from mathlearn.decomposition import PLSRegression


@pytest.fixture
def pls_data(rng):
    X = rng.normal(size=(80, 7)) * rng.uniform(0.5, 3, 7)
    B = rng.normal(size=(7, 3))
    Y = X @ B + 0.3 * rng.normal(size=(80, 3))
    return X, Y


def assert_same_up_to_sign(A, B, **kw):
    signs = np.sign(np.sum(A * B, axis=0))
    np.testing.assert_allclose(A * signs, B, **kw)


@pytest.mark.parametrize("scale", [True, False])
@pytest.mark.parametrize("multi", [False, True])
def test_matches_sklearn(pls_data, scale, multi):
    X, Y = pls_data
    y = Y if multi else Y[:, 0]
    ours = PLSRegression(n_components=3, scale=scale).fit(X, y)
    ref = SkPLSRegression(n_components=3, scale=scale).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-8, atol=1e-10)
    assert_same_up_to_sign(ours.transform(X), ref.transform(X), rtol=1e-8, atol=1e-10)
    assert ours.predict(X).shape == ref.predict(X).shape


def test_hastie_algorithm_single_target(pls_data):
    # Stuttgart "Introduction to Machine Learning" §6.1 (Hastie Alg. 3.3, with the corrected
    # deflation X <- (I - Z_i) X): standardise X, then z_i = X_i X_i^T y, y_hat += (z_i z_i^T /
    # z_i^T z_i) y.
    X, Y = pls_data
    y = Y[:, 1]
    Xs = (X - X.mean(0)) / X.std(0, ddof=1)
    y_hat = np.full(len(y), y.mean())
    Xi = Xs.copy()
    Z = []
    for _ in range(3):
        z = Xi @ (Xi.T @ y)
        P = np.outer(z, z) / (z @ z)
        y_hat += P @ y
        Xi = Xi - P @ Xi
        Z.append(z)
    Z = np.array(Z)
    np.testing.assert_allclose(
        Z @ Z.T, np.diag(np.diag(Z @ Z.T)), atol=1e-6 * np.abs(Z).max() ** 2
    )
    pls = PLSRegression(n_components=3).fit(X, y)
    np.testing.assert_allclose(pls.predict(X), y_hat, rtol=1e-9)


def test_full_rank_equals_least_squares(pls_data):
    X, Y = pls_data
    y = Y[:, 0]
    pls = PLSRegression(n_components=7, scale=False).fit(X, y)
    A = np.c_[np.ones(len(X)), X]
    coef = np.linalg.lstsq(A, y, rcond=None)[0]
    np.testing.assert_allclose(pls.predict(X), A @ coef, rtol=1e-8)


def test_inverse_transform(pls_data):
    X, Y = pls_data
    pls = PLSRegression(n_components=7).fit(X, Y)
    np.testing.assert_allclose(pls.inverse_transform(pls.transform(X)), X, atol=1e-8)


def test_bad_input(pls_data):
    X, Y = pls_data
    with pytest.raises(ValueError, match="n_components"):
        PLSRegression(n_components=8).fit(X, Y)
    with pytest.raises(ValueError, match="at least 2 samples"):
        PLSRegression(n_components=1).fit(X[:1], Y[:1])
    with pytest.raises(ValueError, match="NaN"):
        Xn = X.copy()
        Xn[0, 0] = np.nan
        PLSRegression().fit(Xn, Y)
    with pytest.raises(ValueError, match=r"inconsistent|samples"):
        PLSRegression().fit(X, Y[:5])
    with pytest.raises(ValueError, match="residual"):
        PLSRegression(n_components=2).fit(X, np.full(len(X), 3.0))
