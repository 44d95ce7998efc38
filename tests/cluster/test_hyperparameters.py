"""Hyperparameters of the clustering and mixture estimators are declared and checked before
fitting (issue 10's obscure errors: ``n_clusters=True``, strings or NaN for ``max_iter`` and
``tol``, ``random_state=-1``), and public functions check their arguments alike."""

import numpy as np
import pytest

from mathlearn.cluster import (
    AgglomerativeClustering,
    DPMeans,
    KMeans,
    KMedoids,
    MiniBatchKMeans,
    SpectralClustering,
    kmeans_plusplus,
    linkage_tree,
)
from mathlearn.exceptions import InvalidParameterError
from mathlearn.mixture import BernoulliMixture, GaussianMixture, em

X = np.random.default_rng(0).normal(size=(12, 2))

CASES = [
    (KMeans, "n_clusters", True),
    (KMeans, "max_iter", "abc"),
    (KMeans, "max_iter", np.nan),
    (KMeans, "tol", "abc"),
    (KMeans, "tol", np.nan),
    (KMeans, "random_state", -1),
    (KMeans, "init", "kmeans"),
    (KMeans, "n_init", 0),
    (MiniBatchKMeans, "n_clusters", True),
    (MiniBatchKMeans, "batch_size", 0),
    (MiniBatchKMeans, "random_state", -1),
    (KMedoids, "n_clusters", True),
    (KMedoids, "max_iter", np.nan),
    (KMedoids, "random_state", -1),
    (DPMeans, "penalty", np.nan),
    (DPMeans, "max_iter", "abc"),
    (AgglomerativeClustering, "n_clusters", True),
    (SpectralClustering, "n_clusters", True),
    (SpectralClustering, "gamma", 0.0),
    (SpectralClustering, "random_state", -1),
    (GaussianMixture, "n_components", True),
    (GaussianMixture, "max_iter", "abc"),
    (GaussianMixture, "tol", np.nan),
    (GaussianMixture, "reg_covar", np.inf),
    (GaussianMixture, "random_state", -1),
    (BernoulliMixture, "n_components", True),
    (BernoulliMixture, "max_iter", np.nan),
    (BernoulliMixture, "tol", "abc"),
    (BernoulliMixture, "alpha", np.nan),
    (BernoulliMixture, "random_state", -1),
]


@pytest.mark.parametrize(("Est", "name", "value"), CASES)
def test_bad_hyperparameter_is_named(Est, name, value):
    est = Est(**{name: value})
    with pytest.raises(InvalidParameterError, match=rf"The '{name}' parameter of {Est.__name__}"):
        est.fit(X)


def test_public_functions_check_their_arguments():
    with pytest.raises(InvalidParameterError, match="'n_clusters' parameter of kmeans_plusplus"):
        kmeans_plusplus(X, True)
    with pytest.raises(InvalidParameterError, match="'random_state' parameter of kmeans_plusplus"):
        kmeans_plusplus(X, 2, -1)
    with pytest.raises(InvalidParameterError, match="'linkage' parameter of linkage_tree"):
        linkage_tree(X, "centroid")
    with pytest.raises(InvalidParameterError, match="'max_iter' parameter of em"):
        em(GaussianMixture(), X, max_iter=0)
    with pytest.raises(InvalidParameterError, match="'tol' parameter of em"):
        em(GaussianMixture(), X, tol="abc")
