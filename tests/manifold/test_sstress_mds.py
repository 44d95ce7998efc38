"""S-stress MDS (Stuttgart "Introduction to Machine Learning" slide 6:28): the stress and its
gradient, exact recovery of Euclidean configurations, and improvement over classical MDS."""

import numpy as np
import pytest
from scipy.linalg import orthogonal_procrustes

from mathlearn.autodiff import check_grad
from mathlearn.manifold import MDS, SStressMDS, sstress


def test_stress_gradient_against_finite_differences(rng):
    n, k = 7, 2
    D = np.abs(rng.normal(size=(n, n)))
    D2 = (D + D.T) ** 2
    np.fill_diagonal(D2, 0.0)
    Z = rng.normal(size=(n, k))
    value, _ = sstress(D2, Z)
    brute = sum(
        (D2[i, j] - np.sum((Z[i] - Z[j]) ** 2)) ** 2 for i in range(n) for j in range(n) if i != j
    )
    assert value == pytest.approx(brute, rel=1e-12)
    res = check_grad(
        lambda z: sstress(D2, z.reshape(n, k))[0],
        Z.ravel(),
        grad=lambda z: sstress(D2, z.reshape(n, k))[1].ravel(),
    )
    assert res.ok, res


def test_euclidean_configuration_is_recovered(rng):
    Y = rng.normal(size=(25, 3))
    mds = SStressMDS(n_components=3).fit(Y)
    assert mds.stress_ < 1e-20
    Yc = Y - Y.mean(0)
    Zc = mds.embedding_ - mds.embedding_.mean(0)
    R, _ = orthogonal_procrustes(Zc, Yc)
    np.testing.assert_allclose(Zc @ R, Yc, atol=1e-8)


def test_non_euclidean_dissimilarities_improve_on_classical(rng):
    # City-block distances are not Euclidean: classical MDS is not an S-stress minimiser.
    Y = rng.uniform(size=(30, 4))
    D = np.abs(Y[:, None] - Y[None]).sum(-1)
    mds = SStressMDS(n_components=2, dissimilarity="precomputed").fit(D)
    classical = MDS(n_components=2, dissimilarity="precomputed").fit_transform(D)
    s_classical, _ = sstress((D / D.max()) ** 2, classical / D.max())
    assert mds.initial_stress_ == pytest.approx(s_classical, rel=1e-10)
    assert mds.stress_ < 0.9 * s_classical
    # a stationary point: the gradient vanishes to the tolerance of the solver
    _, g = sstress((D / D.max()) ** 2, mds.embedding_ / D.max())
    assert np.max(np.abs(g)) <= 1e-6 * 30 * max(1.0, np.sqrt(mds.initial_stress_))


def test_scale_equivariance(rng):
    Y = rng.normal(size=(15, 2))
    D = np.sqrt(((Y[:, None] - Y[None]) ** 2).sum(-1)) ** 1.3  # not Euclidean
    base = SStressMDS(dissimilarity="precomputed").fit(D)
    for s in (1e-200, 1e200):
        other = SStressMDS(dissimilarity="precomputed").fit(D * s)
        np.testing.assert_allclose(other.embedding_ / s, base.embedding_, rtol=1e-8, atol=1e-8)
        assert other.stress_ == pytest.approx(base.stress_, rel=1e-8)


def test_bad_input():
    with pytest.raises(ValueError, match="square"):
        SStressMDS(dissimilarity="precomputed").fit(np.ones((2, 3)))
    with pytest.raises(ValueError, match="symmetric"):
        SStressMDS(dissimilarity="precomputed").fit(np.array([[0.0, 1.0], [2.0, 0.0]]))
    with pytest.raises(ValueError, match="zero diagonal"):
        SStressMDS(dissimilarity="precomputed").fit(np.ones((2, 2)))
    with pytest.raises(ValueError, match="non-negative"):
        SStressMDS(dissimilarity="precomputed").fit(-np.ones((2, 2)))
    with pytest.raises(ValueError, match="n_components"):
        SStressMDS(n_components=5).fit(np.eye(3))
