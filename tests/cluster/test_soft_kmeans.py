"""Soft k-means (fixed-variance isotropic mixture): EM steps against a NumPy transcription of
the notes' equations, monotone log-likelihood, and the sigma2 -> 0 limit (hard k-means)."""

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal

from mathlearn.cluster import KMeans, SoftKMeans
from mathlearn.exceptions import InvalidParameterError


def _blobs(seed=0, n=90, d=2):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 4, size=(3, d))
    return centres[rng.integers(0, 3, n)] + rng.normal(size=(n, d))


def _reference_em(X, means, sigma2, iters, learn_weights=True):
    """Eq. 5.13-5.18 of the notes written out (log-sum-exp E-step)."""
    k = len(means)
    means, pi = means.copy(), np.full(k, 1.0 / k)
    ll = []
    for _ in range(iters):
        logf = np.column_stack(
            [multivariate_normal(m, sigma2 * np.eye(X.shape[1])).logpdf(X) for m in means]
        )
        lj = np.log(pi) + logf
        norm = logsumexp(lj, axis=1)
        ll.append(norm.mean())
        Q = np.exp(lj - norm[:, None])
        if learn_weights:
            pi = Q.mean(axis=0)
        means = (Q.T @ X) / Q.sum(axis=0)[:, None]
    return means, pi, np.array(ll)


@pytest.mark.parametrize("learn_weights", [True, False])
def test_matches_reference_em(learn_weights):
    X = _blobs()
    init = X[[0, 1, 2]]
    skm = SoftKMeans(3, sigma2=2.0, init=init, learn_weights=learn_weights, tol=0.0, max_iter=25)
    with pytest.warns(Warning):  # ConvergenceWarning: the iteration count is the point
        skm.fit(X)
    means, pi, ll = _reference_em(X, init, 2.0, 25, learn_weights)
    np.testing.assert_allclose(skm.cluster_centers_, means, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(skm.weights_, pi, rtol=1e-10)
    np.testing.assert_allclose(skm.lower_bounds_, ll, rtol=1e-12)
    np.testing.assert_allclose(skm.score_samples(X).mean(), skm.score(X))


@pytest.mark.parametrize("seed", range(5))
def test_log_likelihood_monotone(seed):
    rng = np.random.default_rng(seed)
    X = _blobs(seed, n=int(rng.integers(10, 100)), d=int(rng.integers(1, 4)))
    skm = SoftKMeans(
        int(rng.integers(1, 5)), sigma2=float(rng.uniform(0.05, 5)), random_state=seed
    ).fit(X)  # a decrease would warn, and warnings are errors
    assert np.all(np.diff(skm.lower_bounds_) >= -1e-12 * np.abs(skm.lower_bounds_[1:]))


def test_small_variance_limit_is_kmeans():
    X = _blobs(3, n=150)
    init = X[[0, 5, 9]]
    km = KMeans(3, init=init, n_init=1, tol=0.0, max_iter=300).fit(X)
    for sigma2 in (1e-2, 1e-4):
        skm = SoftKMeans(3, sigma2=sigma2, init=init, max_iter=500).fit(X)
        np.testing.assert_array_equal(skm.labels_, km.labels_)
        np.testing.assert_allclose(skm.cluster_centers_, km.cluster_centers_, rtol=1e-9, atol=1e-9)
        # Responsibilities are within exp(-margin / (2 sigma2)) of one-hot, margin the gap
        # between the nearest and second-nearest squared distances.
        Q = skm.predict_proba(X)
        d2 = ((X[:, None, :] - km.cluster_centers_[None]) ** 2).sum(-1)
        d2s = np.sort(d2, axis=1)
        margin = d2s[:, 1] - d2s[:, 0]
        w = skm.weights_
        bound = (w.max() / w.min()) * 2 * np.exp(-margin / (2 * sigma2))
        assert np.all(1 - Q.max(axis=1) <= bound + 1e-15)


def test_large_variance_limit_is_one_centre():
    # sigma2 -> infinity: every responsibility tends to pi_k, so every mean tends to the
    # data mean.
    X = _blobs(4)
    skm = SoftKMeans(3, sigma2=1e8, random_state=0, tol=1e-14, max_iter=1000).fit(X)
    np.testing.assert_allclose(skm.cluster_centers_, np.tile(X.mean(0), (3, 1)), atol=1e-4)


def test_bad_input():
    X = _blobs()
    with pytest.raises(InvalidParameterError, match="sigma2"):
        SoftKMeans(sigma2=0.0).fit(X)
    with pytest.raises(InvalidParameterError, match="sigma2"):
        SoftKMeans(sigma2=-1.0).fit(X)
    with pytest.raises(ValueError, match=r"init must have shape \(2, 2\)"):
        SoftKMeans(2, init=[[0.0, 0.0]]).fit(X)
    with pytest.raises(ValueError, match="n_clusters"):
        SoftKMeans(5).fit(X[:3])
    with pytest.raises(ValueError, match="NaN"):
        SoftKMeans(2).fit(np.where(np.eye(len(X), 2, dtype=bool), np.nan, X))
    skm = SoftKMeans(2, sigma2=1.0, random_state=0).fit(X)
    with pytest.raises(ValueError, match="so far from every centre"):
        skm.predict(X[:2] * 1e300)
