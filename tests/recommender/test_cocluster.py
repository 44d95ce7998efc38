"""Co-clustering against exhaustive search and the fixed-point property of its updates."""

import itertools

import numpy as np
from sklearn.metrics import adjusted_rand_score

from mathlearn.recommender import CoClustering, Ratings


def _sse(Y, M, rl, cl, kr, kc):
    total = 0.0
    for a in range(kr):
        for b in range(kc):
            block = M & (rl[:, None] == a) & (cl[None, :] == b)
            if block.any():
                v = Y[block]
                total += np.sum((v - v.mean()) ** 2)
    return total


def _planted(seed, n_u=40, n_i=30, noise=0.3, density=0.5):
    rng = np.random.default_rng(seed)
    rl, cl = rng.integers(0, 3, n_u), rng.integers(0, 2, n_i)
    means = np.array([[1.0, 5.0], [4.0, 2.0], [3.0, 3.0]])
    Y = means[rl][:, cl] + noise * rng.standard_normal((n_u, n_i))
    M = rng.uniform(size=Y.shape) < density
    u, i = np.nonzero(M)
    return Ratings.from_triples(u, i, Y[u, i]), Y, M, rl, cl


def test_recovers_planted_blocks_and_objective_is_the_block_sse():
    r, Y, M, rl, cl = _planted(0)
    m = CoClustering(3, 2, random_state=0).fit(r)
    assert adjusted_rand_score(rl, m.user_labels_) == 1.0
    assert adjusted_rand_score(cl, m.item_labels_) == 1.0
    sse = _sse(Y, M, m.user_labels_, m.item_labels_, 3, 2)
    assert m.objective_[-1] == np.float64(sse) or abs(m.objective_[-1] - sse) < 1e-9 * sse
    h = np.array(m.objective_)
    assert np.all(np.diff(h) <= 1e-9 * h[:-1])


def test_reaches_the_exhaustive_optimum_on_tiny_data():
    rng = np.random.default_rng(1)
    Y = rng.integers(1, 6, size=(6, 5)).astype(float)
    M = rng.uniform(size=Y.shape) < 0.8
    u, i = np.nonzero(M)
    r = Ratings.from_triples(u, i, Y[u, i])
    Y, M = Y[np.unique(u)][:, np.unique(i)], M[np.unique(u)][:, np.unique(i)]
    best = min(
        _sse(Y, M, np.array(a), np.array(b), 2, 2)
        for a in itertools.product(range(2), repeat=Y.shape[0])
        for b in itertools.product(range(2), repeat=Y.shape[1])
    )
    m = CoClustering(2, 2, n_init=20, random_state=0).fit(r)
    assert m.objective_[-1] <= best + 1e-9


def test_fixed_point_each_user_in_its_best_cluster():
    r, Y, M, _, _ = _planted(2, noise=1.5)
    m = CoClustering(3, 2, random_state=0).fit(r)
    mu = m.block_means_
    for a in range(Y.shape[0]):
        costs = [
            np.sum((Y[a, M[a]] - mu[c, m.item_labels_[M[a]]]) ** 2) for c in range(mu.shape[0])
        ]
        assert costs[m.user_labels_[a]] <= min(costs) + 1e-9


def test_spectral_coclustering_matches_scikit_learn():
    from sklearn.cluster import SpectralCoclustering as SkSpectral

    from mathlearn.recommender import SpectralCoClustering

    rng = np.random.default_rng(3)
    rows, cols = rng.integers(0, 3, 45), rng.integers(0, 3, 36)
    A = np.where(rows[:, None] == cols[None, :], 5.0, 0.5) + rng.uniform(0, 1.0, (45, 36))
    import scipy.sparse as sp

    r = Ratings.from_sparse(sp.csr_array(A))
    ours = SpectralCoClustering(3, random_state=0).fit(r)
    theirs = SkSpectral(3, random_state=0).fit(A)
    assert adjusted_rand_score(theirs.row_labels_, ours.user_labels_) == 1.0
    assert adjusted_rand_score(theirs.column_labels_, ours.item_labels_) == 1.0
    assert adjusted_rand_score(rows, ours.user_labels_) == 1.0
    # co-clusters pair users with items: each user cluster's own items have the high block
    own = ours.block_means_[ours.user_labels_[0], ours.user_labels_[0]]
    assert own == ours.block_means_.max(axis=1)[ours.user_labels_[0]]


def test_spectral_coclustering_bad_input():
    import pytest

    from mathlearn.recommender import SpectralCoClustering

    with pytest.raises(ValueError, match="non-negative"):
        SpectralCoClustering(2).fit(Ratings.from_triples([0, 1, 2], [0, 1, 2], [1.0, -1, 2]))
