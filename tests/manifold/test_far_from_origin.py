"""Manifold learners on data far from the origin, bad hyperparameters and extreme rows."""

import numpy as np
import pytest

from mathlearn.exceptions import InvalidParameterError
from mathlearn.manifold import MDS, Isomap, SpectralEmbedding

EPS = np.finfo(float).eps


@pytest.fixture
def shifted(rng):
    # Points near + offset, and the same points moved back to order one: X stays in the
    # binade of offset, so Y = X - offset is exact (Sterbenz) and Y + offset == X: the two
    # data sets are exact translates of each other in float64.
    offset = 1e6
    X = rng.normal(size=(60, 3)) * [3.0, 1.0, 0.3] + 4.0 + offset
    Y = X - offset
    assert np.array_equal(Y + offset, X)
    return Y, X


def _same_up_to_sign(A, B, atol):
    signs = np.sign(np.sum(A * B, axis=0))
    np.testing.assert_allclose(A * signs, B, rtol=0, atol=atol)


def test_mds_and_isomap_are_translation_invariant_far_from_origin(shifted):
    # Distances are translation invariant; once centred, the two data sets are translates
    # by a vector of exactly representable values (both are multiples of ulp(offset) of
    # magnitude < 2^5), so their differences are bitwise equal and what remains is the
    # rounding of the distance and eigen computations: a few eps times the squared spread,
    # divided by the eigengap (order one here) for the embedding.
    Y, X = shifted
    scale = np.abs(Y - Y.mean(0)).max()
    atol = 1e3 * EPS * scale**2
    _same_up_to_sign(
        MDS(n_components=2).fit_transform(X), MDS(n_components=2).fit_transform(Y), atol
    )
    iso_x = Isomap(n_neighbors=6, n_components=2).fit(X)
    iso_y = Isomap(n_neighbors=6, n_components=2).fit(Y)
    np.testing.assert_allclose(iso_x.dist_matrix_, iso_y.dist_matrix_, rtol=0, atol=atol)
    _same_up_to_sign(iso_x.embedding_, iso_y.embedding_, atol * 10)
    np.testing.assert_allclose(
        iso_x.transform(X[:5] + 0.5), iso_y.transform(Y[:5] + 0.5), rtol=0, atol=atol * 10
    )


def test_isomap_transform_of_far_rows(shifted):
    # For a point at distance c from the data the embedding grows like c (the d_0^2 term of
    # the squared geodesics cancels in the centring, exactly): moving twice as far doubles it
    # up to the terms of order one. Computed naively, -g^2 / 2 loses every digit of that
    # linear term at c = 1e100.
    Y, _ = shifted
    iso = Isomap(n_neighbors=6, n_components=2).fit(Y)
    u = np.array([[1.0, 2.0, 2.0]]) / 3.0
    z1 = iso.transform(Y.mean(0) + 1e100 * u)
    z2 = iso.transform(Y.mean(0) + 2e100 * u)
    assert np.all(np.isfinite(z1))
    np.testing.assert_allclose(z2, 2 * z1, rtol=1e-10)
    with pytest.raises(ValueError, match="too far from the training data"):
        iso.transform(np.full((1, 3), 1e300))


@pytest.mark.parametrize(
    "est, name",
    [(MDS(n_components=0), "n_components"), (MDS(dissimilarity="cosine"), "dissimilarity"),
     (Isomap(n_neighbors=2.5), "n_neighbors"), (Isomap(path_method="BF"), "path_method"),
     (SpectralEmbedding(gamma=0.0), "gamma"), (SpectralEmbedding(n_neighbors=0), "n_neighbors"),
     (SpectralEmbedding(drop_first="yes"), "drop_first")],
    ids=repr,
)  # fmt: skip
def test_bad_hyperparameters(rng, est, name):
    with pytest.raises(InvalidParameterError, match=rf"The '{name}' parameter of"):
        est.fit(rng.normal(size=(10, 2)))
