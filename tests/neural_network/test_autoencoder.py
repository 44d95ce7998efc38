"""Autoencoder: the linear autoencoder's optimum is PCA (same subspace, same reconstruction
error), checked against mathlearn's PCA and scikit-learn's; bad input."""

import numpy as np
import pytest
from scipy.linalg import subspace_angles
from sklearn.decomposition import PCA as SkPCA

from mathlearn.decomposition import PCA
from mathlearn.neural_network import Autoencoder


def _data(rng, n=120, d=6):
    # Distinct variances 9, 4, 1, 0.25, ... along a random rotation, far from the origin.
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    scales = np.array([3.0, 2.0, 1.0, 0.5, 0.3, 0.2])[:d]
    return 50.0 + (rng.standard_normal((n, d)) * scales) @ q.T


@pytest.mark.parametrize("k", [1, 2, 3])
def test_linear_autoencoder_spans_the_pca_subspace(rng, k):
    X = _data(rng)
    ae = Autoencoder(
        n_components=k,
        activation="identity",
        solver="lbfgs",
        tol=1e-7,
        max_iter=5000,
        random_state=0,
    ).fit(X)
    decoder_span = ae.decoder_.parameters()["0.weight"]  # (d, k): columns span the output
    ours = PCA(n_components=k).fit(X).components_.T
    sk = SkPCA(n_components=k).fit(X).components_.T
    # At a stationary point with gradient entries below tol = 1e-7 (unit-scale data), the
    # subspace is off by O(tol / eigengap) radians, times the norm of the weights' Hessian
    # inverse; the smallest relevant gap is (1 - 0.25) / 2.4 ~ 0.3 in standardised units
    # (k = 3), and 1e-4 leaves a factor 100 for that Hessian.
    assert np.max(subspace_angles(decoder_span, ours)) < 1e-4
    assert np.max(subspace_angles(decoder_span, sk)) < 1e-4
    # The optimal error is the sum of the discarded eigenvalues of the covariance: a share
    # 1 - sum(explained_variance_ratio_) of the total variance.
    evals = np.linalg.eigvalsh(np.cov(X.T, bias=True))[::-1]
    expected = evals[k:].sum() / evals.sum()
    # The loss is quadratic about its minimum: an O(tol) error in the weights changes it at
    # second order, O(tol^2), far below 1e-9 relative.
    np.testing.assert_allclose(ae.unexplained_variance_ratio_, expected, rtol=1e-9)
    ratio = SkPCA(n_components=k).fit(X).explained_variance_ratio_.sum()
    np.testing.assert_allclose(ae.unexplained_variance_ratio_, 1 - ratio, rtol=1e-9)


def test_transform_and_inverse_transform_compose_to_the_reconstruction(rng):
    X = _data(rng, n=60, d=4)
    ae = Autoencoder(n_components=2, hidden_layer_sizes=(5,), max_iter=30, random_state=0)
    with pytest.warns(Warning):
        ae.fit(X)
    recon = ae.inverse_transform(ae.transform(X))
    ratio = np.sum((X - recon) ** 2) / np.sum((X - X.mean(0)) ** 2)
    np.testing.assert_allclose(ratio, ae.unexplained_variance_ratio_, rtol=1e-10)
    assert ae.transform(X).shape == (60, 2)
    assert ae.get_feature_names_out().tolist() == ["autoencoder0", "autoencoder1"]


def test_bad_input(rng):
    X = _data(rng, n=30, d=4)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Autoencoder(max_iter=2).fit(bad)
    ae = Autoencoder(n_components=2, activation="identity", solver="lbfgs", random_state=0)
    ae.fit(X)
    with pytest.raises(ValueError, match="codes of shape"):
        ae.inverse_transform(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="features"):
        ae.transform(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="positive integers"):
        Autoencoder(hidden_layer_sizes=(0,)).fit(X)
