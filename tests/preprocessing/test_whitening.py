"""Standardisation and whitening against scikit-learn, the defining identities and extreme
data (PRML §12.1.3; Imperial "Mathematics for Machine Learning", the PCA recipe)."""

import numpy as np
import pytest
import scipy.linalg as sla
from sklearn.decomposition import PCA as SkPCA
from sklearn.preprocessing import StandardScaler as SkScaler

from mathlearn.preprocessing import StandardScaler, Whitening

EPS = np.finfo(float).eps


def _correlated(rng, n=300):
    A = np.array([[2.0, 0.0, 0.0], [1.5, 0.5, 0.0], [-1.0, 0.3, 0.1]])
    return rng.normal(size=(n, 3)) @ A + np.array([5.0, -2.0, 1.0])


def test_standard_scaler_matches_scikit_learn(rng):
    X = _correlated(rng)
    ours, peer = StandardScaler().fit(X), SkScaler().fit(X)
    np.testing.assert_allclose(ours.mean_, peer.mean_, rtol=1e-14)
    np.testing.assert_allclose(ours.scale_, peer.scale_, rtol=1e-13)
    np.testing.assert_allclose(ours.transform(X), peer.transform(X), atol=1e-13)
    np.testing.assert_allclose(ours.inverse_transform(ours.transform(X)), X, rtol=1e-14)
    X[:, 1] = 3.0
    assert StandardScaler().fit(X).scale_[1] == 1.0  # constant feature: left unscaled
    np.testing.assert_array_equal(StandardScaler(with_std=False).fit(X).scale_, np.ones(3))


@pytest.mark.parametrize("scale", [1e-300, 1e-150, 1.0, 1e150, 1e300])
def test_standard_scaler_extreme_magnitudes(rng, scale):
    x = rng.normal(size=200)
    ours = StandardScaler().fit((scale * x)[:, None])
    assert ours.scale_[0] == pytest.approx(scale * x.std(), rel=1e-13)
    np.testing.assert_allclose(
        ours.transform((scale * x)[:, None])[:, 0], (x - x.mean()) / x.std(), atol=1e-12
    )


def test_standard_scaler_far_from_origin(rng):
    x = rng.normal(size=500)
    ours = StandardScaler().fit((1e9 + x)[:, None])
    # Relative accuracy of the spread limited by the rounding of the inputs: eps * 1e9 / 1.
    assert ours.scale_[0] == pytest.approx(x.std(), rel=1e3 * EPS * 1e9)


@pytest.mark.parametrize("method", ["zca", "pca", "cholesky"])
def test_whitening_gives_identity_covariance(rng, method):
    X = _correlated(rng)
    w = Whitening(method=method).fit(X)
    Z = w.transform(X)
    kappa = np.linalg.cond(np.cov(X.T))
    np.testing.assert_allclose(np.cov(Z.T), np.eye(3), atol=100 * kappa * EPS)
    np.testing.assert_allclose(Z.mean(0), 0.0, atol=1e-12)
    np.testing.assert_allclose(w.inverse_transform(Z), X, atol=1e-12 * np.abs(X).max())
    S = np.cov(X.T)
    W = w.whitening_matrix_
    np.testing.assert_allclose(W @ S @ W.T, np.eye(3), atol=100 * kappa * EPS)
    np.testing.assert_allclose(w.explained_variance_, np.linalg.eigvalsh(S)[::-1], rtol=1e-12)


def test_whitening_matrices_have_their_structure(rng):
    X = _correlated(rng)
    S = np.cov(X.T)
    zca = Whitening(method="zca").fit(X).whitening_matrix_
    np.testing.assert_allclose(zca, zca.T, atol=1e-12)  # S^{-1/2}, symmetric
    np.testing.assert_allclose(zca, np.real(sla.inv(sla.sqrtm(S))), rtol=1e-9)
    chol = Whitening(method="cholesky").fit(X).whitening_matrix_
    np.testing.assert_allclose(np.triu(chol, 1), 0.0, atol=0)  # L^{-1}, lower triangular
    np.testing.assert_allclose(chol, np.linalg.inv(np.linalg.cholesky(S)), rtol=1e-10)
    # PCA whitening equals scikit-learn's PCA(whiten=True), component signs aside.
    Zp = Whitening(method="pca").fit_transform(X)
    Zs = SkPCA(whiten=True).fit_transform(X)
    signs = np.sign(np.sum(Zp * Zs, axis=0))
    np.testing.assert_allclose(Zp * signs, Zs, atol=1e-10)


def test_zca_changes_the_data_least(rng):
    # Among whitening transforms Q W (Q orthogonal) ZCA minimises ||Z - Xc||_F (Kessy et al.).
    X = _correlated(rng)
    Xc = X - X.mean(0)
    Z = Whitening(method="zca").fit_transform(X)
    best = np.linalg.norm(Z - Xc)
    for _ in range(20):
        Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        assert best <= np.linalg.norm(Z @ Q.T - Xc) + 1e-9


def test_whitening_scale_invariance_and_extremes(rng):
    X = _correlated(rng)
    Z = Whitening(method="cholesky").fit_transform(X)
    for scale in (1e-300, 1e300):
        Zs = Whitening(method="cholesky").fit_transform(X * scale)
        np.testing.assert_allclose(Zs, Z, atol=1e-10)
    for method in ("zca", "pca"):
        Zm = Whitening(method=method).fit_transform(X)
        np.testing.assert_allclose(
            Whitening(method=method).fit_transform(X * 1e-300), Zm, atol=1e-10
        )
        np.testing.assert_allclose(Whitening(method=method).fit_transform(X + 1e8), Zm, atol=1e-6)


def test_whitening_singular_needs_eps(rng):
    X = rng.normal(size=(3, 5))  # fewer samples than features
    with pytest.raises(ValueError, match=r"singular.*eps"):
        Whitening().fit(X)
    Xc = _correlated(rng)
    Xc[:, 2] = 7.0
    with pytest.raises(ValueError, match="singular"):
        Whitening(method="cholesky").fit(Xc)
    w = Whitening(eps=1e-3).fit(X)
    S = np.cov(X.T) + 1e-3 * np.eye(5)
    W = w.whitening_matrix_
    np.testing.assert_allclose(W @ S @ W.T, np.eye(5), atol=1e-8)
    with pytest.raises(ValueError, match="2"):
        Whitening().fit(X[:1])
