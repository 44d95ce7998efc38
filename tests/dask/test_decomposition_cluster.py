"""PCA and k-means on Dask arrays equal their NumPy fits on the same data.

PCA: the exact routes (TSQR + SVD of R, the refined-mean scatter) compute the singular values
and axes of the same centred matrix; with well-separated singular values (gaps >= 10 %
here) the axes are well conditioned and agree to rounding, so 1e-10 relative holds. The
randomised route starts from the same Gaussian test matrix. k-means from the same centres:
the same partition at every step (no point is within rounding of a tie), hence the same
labels, iterations and inertia (to rounding of the sums).
"""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from mathlearn.cluster import KMeans  # noqa: E402
from mathlearn.decomposition import PCA  # noqa: E402

RTOL = 1e-10


def _pca_data(n=800, d=6, seed=0):
    rng = np.random.default_rng(seed)
    scales = np.array([5.0, 3.0, 2.0, 1.2, 0.6, 0.3])[:d]
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    return (rng.normal(size=(n, d)) * scales) @ Q.T + 4.0


@pytest.mark.parametrize(
    "params",
    [
        {"n_components": 3, "svd_solver": "full"},
        {"n_components": 3},
        {"n_components": 3, "svd_solver": "randomized", "random_state": 0},
        {"n_components": 0.9, "svd_solver": "full", "whiten": True},
    ],
)
def test_pca_matches_numpy(params):
    X = _pca_data()
    ref = PCA(**params).fit(X)
    Xd = da.from_array(X, chunks=(250, X.shape[1]))
    m = PCA(**params).fit(Xd)
    assert m.solver_ == ref.solver_
    assert m.n_components_ == ref.n_components_
    np.testing.assert_allclose(m.components_, ref.components_, rtol=0, atol=RTOL)
    np.testing.assert_allclose(m.explained_variance_, ref.explained_variance_, rtol=RTOL)
    np.testing.assert_allclose(
        m.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=RTOL
    )
    np.testing.assert_allclose(m.mean_, ref.mean_, rtol=RTOL)
    assert m.noise_variance_ == pytest.approx(ref.noise_variance_, rel=RTOL)
    Z = m.transform(Xd)
    assert isinstance(Z, da.Array)
    np.testing.assert_allclose(Z.compute(), ref.transform(X), rtol=0, atol=RTOL * np.abs(X).max())
    # an independent reference: the eigen-decomposition of the sample covariance
    w = np.linalg.eigvalsh(np.cov(X.T))[::-1]
    np.testing.assert_allclose(m.explained_variance_, w[: m.n_components_], rtol=1e-9)


def _blobs(seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0, 0.0], [8.0, 0.0, 1.0], [0.0, 9.0, -2.0], [7.0, 8.0, 5.0]])
    X = np.vstack([c + rng.normal(size=(250, 3)) for c in centres]) + 100.0
    truth = np.repeat(np.arange(4), 250)
    p = rng.permutation(len(X))
    return X[p], truth[p], rng.uniform(0.2, 2.0, len(X))


@pytest.mark.parametrize("weighted", [False, True])
def test_kmeans_from_the_same_centres_matches_numpy(weighted):
    X, _, sw = _blobs()
    w = sw if weighted else None
    init = X[:4] + 1.5  # a poor start, so that several Lloyd steps run
    ref = KMeans(4, init=init, n_init=1).fit(X, sample_weight=w)
    m = KMeans(4, init=init, n_init=1).fit(da.from_array(X, chunks=(300, 3)), sample_weight=w)
    assert isinstance(m.labels_, da.Array)
    np.testing.assert_array_equal(m.labels_.compute(), ref.labels_)
    assert m.n_iter_ == ref.n_iter_
    assert m.inertia_ == pytest.approx(ref.inertia_, rel=RTOL)
    np.testing.assert_allclose(m.cluster_centers_, ref.cluster_centers_, rtol=RTOL)
    Xd = da.from_array(X, chunks=(300, 3))
    np.testing.assert_array_equal(m.predict(Xd).compute(), ref.predict(X))
    np.testing.assert_allclose(m.transform(Xd).compute(), ref.transform(X), rtol=1e-9)


def test_kmeans_parallel_seeding_finds_the_clusters():
    # k-means‖ (the Dask seeding) on well-separated blobs: the partition is the generating
    # one (up to the labels' order), and the centres are the blobs' sample means.
    X, truth, _ = _blobs(1)
    m = KMeans(4, random_state=0).fit(da.from_array(X, chunks=(300, 3)))
    labels = m.labels_.compute()
    pairs = {(a, b) for a, b in zip(labels, truth, strict=True)}
    assert len(pairs) == 4
    for k in range(4):
        np.testing.assert_allclose(m.cluster_centers_[k], X[labels == k].mean(axis=0), rtol=RTOL)


def test_kmeans_random_init_draws_the_numpy_rows():
    X, _, _ = _blobs(2)
    ref = KMeans(4, init="random", n_init=2, random_state=3).fit(X)
    m = KMeans(4, init="random", n_init=2, random_state=3).fit(da.from_array(X, chunks=(300, 3)))
    np.testing.assert_array_equal(m.labels_.compute(), ref.labels_)
    assert m.inertia_ == pytest.approx(ref.inertia_, rel=RTOL)


@pytest.mark.parametrize("offset, scale", [(4.0, 1.0), (1e8, 1.0), (0.0, 2.0**400)])
def test_pca_covariance_route_one_pass(offset, scale):
    """The covariance route merges per-block means and scatters (Chan, Golub and LeVeque)
    in one pass; it equals the NumPy fit far from the origin and at a scale beyond 2^240
    (fitted in power-of-two units), with uneven blocks."""
    X = (_pca_data() - 4.0 + offset) * scale
    ref = PCA(3, svd_solver="covariance").fit(X)
    Xd = da.from_array(X, chunks=((100, 250, 50, 400), X.shape[1]))
    m = PCA(3, svd_solver="covariance").fit(Xd)
    np.testing.assert_allclose(m.mean_, ref.mean_, rtol=1e-12)
    np.testing.assert_allclose(m.explained_variance_, ref.explained_variance_, rtol=1e-9)
    np.testing.assert_allclose(m.components_, ref.components_, rtol=0, atol=1e-9)
    # independent: the sample covariance of the data brought back to a moderate scale
    w = np.linalg.eigvalsh(np.cov(((X / scale) - offset).T))[::-1][:3]
    np.testing.assert_allclose(m.explained_variance_ / scale**2, w, rtol=1e-7)


def test_pca_covariance_route_blocks_in_different_units():
    """One block of tiny values and one of ordinary values: the tiny block's moments are
    carried into the ordinary unit before the merge."""
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(size=(200, 3)) * 1e-250, rng.normal(size=(200, 3))])
    ref = PCA(2, svd_solver="covariance").fit(X)
    m = PCA(2, svd_solver="covariance").fit(da.from_array(X, chunks=(200, 3)))
    np.testing.assert_allclose(m.explained_variance_, ref.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(m.mean_, ref.mean_, rtol=1e-10, atol=1e-300)
