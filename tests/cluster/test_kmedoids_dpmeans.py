"""k-medoids against exhaustive search, DP-means against the notes' algorithm worked by hand."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

from mathlearn.cluster import DPMeans, KMeans, KMedoids


def _brute_force_medoids(D, k):
    best = (np.inf, None)
    for comb in itertools.combinations(range(D.shape[0]), k):
        cost = D[:, comb].min(axis=1).sum()
        if cost < best[0]:
            best = (cost, comb)
    return best


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "manhattan"])
def test_kmedoids_finds_global_optimum_on_separated_data(metric):
    X, _ = make_blobs(12, centers=3, cluster_std=0.3, random_state=4)
    if metric == "sqeuclidean":
        D = ((X[:, None] - X[None]) ** 2).sum(-1)
    elif metric == "euclidean":
        D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    else:
        D = np.abs(X[:, None] - X[None]).sum(-1)
    cost, comb = _brute_force_medoids(D, 3)
    km = KMedoids(3, metric=metric, random_state=0).fit(X)
    assert km.inertia_ == pytest.approx(cost)
    assert sorted(km.medoid_indices_.tolist()) == sorted(comb)
    # Same answer from the precomputed matrix.
    kp = KMedoids(3, metric="precomputed", random_state=0).fit(D)
    assert kp.inertia_ == pytest.approx(cost)
    np.testing.assert_array_equal(kp.predict(D), kp.labels_)


def test_kmedoids_medoid_minimises_within_cluster_cost(rng):
    X = rng.normal(size=(60, 2))
    km = KMedoids(4, random_state=0).fit(X)
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    for k, m in enumerate(km.medoid_indices_):
        members = np.flatnonzero(km.labels_ == k)
        costs = D[np.ix_(members, members)].sum(1)
        assert D[m, members].sum() == pytest.approx(costs.min())
    np.testing.assert_array_equal(km.predict(X), km.labels_)


def test_kmedoids_bad_input():
    with pytest.raises(ValueError, match="n_clusters"):
        KMedoids(5).fit(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="metric"):
        KMedoids(2, metric="cosine").fit(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="square"):
        KMedoids(2, metric="precomputed").fit(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="NaN"):
        KMedoids(2).fit(np.array([[0.0], [np.nan], [1.0]]))
    with pytest.raises(ValueError, match="distinct row indices"):
        KMedoids(2, init=[0, 0]).fit(np.arange(6.0).reshape(3, 2))
    with pytest.raises(
        ValueError,
        match=r"'max_iter' parameter of KMedoids must be an int in the range \[1, inf\)",
    ):
        KMedoids(2, max_iter=0).fit(np.arange(6.0).reshape(3, 2))


def test_dpmeans_hand_example():
    # DP-means (Oxford "Advanced Topics in Statistical Machine Learning" §1.1.2) by hand: mean
    # 2.55; x=0 has 6.5 > 1 -> new cluster; 0.1 joins it; x=5 has min(6.0, 25) > 1 -> new cluster;
    # 5.1 joins it; the mean's cluster is empty.
    X = np.array([[0.0], [0.1], [5.0], [5.1]])
    dp = DPMeans(penalty=1.0).fit(X)
    assert dp.n_clusters_ == 2
    np.testing.assert_allclose(np.sort(dp.cluster_centers_.ravel()), [0.05, 5.05])
    assert dp.objective_ == pytest.approx(4 * 0.05**2 + 2 * 1.0)


def test_dpmeans_limits(rng):
    X = rng.normal(size=(30, 2))
    big = DPMeans(penalty=1e6).fit(X)
    assert big.n_clusters_ == 1
    np.testing.assert_allclose(big.cluster_centers_[0], X.mean(0))
    # Penalty below every squared pairwise distance: every point is its own cluster.
    d2 = ((X[:, None] - X[None]) ** 2).sum(-1)
    small = DPMeans(penalty=0.5 * d2[np.triu_indices(30, 1)].min()).fit(X)
    assert small.n_clusters_ == 30 and small.inertia_ == pytest.approx(0.0, abs=1e-20)


def test_dpmeans_objective_non_increasing_and_is_kmeans_fixed_point():
    X, y = make_blobs(400, centers=4, cluster_std=0.5, random_state=1)
    dp = DPMeans(penalty=20.0).fit(X)
    assert np.all(np.diff(dp.objective_history_) <= 1e-9)
    assert dp.n_clusters_ == 4
    assert adjusted_rand_score(y, dp.labels_) == 1.0
    # Its centres are a fixed point of Lloyd's iteration with K = n_clusters_.
    km = KMeans(dp.n_clusters_, init=dp.cluster_centers_, n_init=1).fit(X)
    np.testing.assert_allclose(km.cluster_centers_, dp.cluster_centers_, atol=1e-12)
    np.testing.assert_array_equal(dp.predict(X), dp.labels_)


def test_dpmeans_bad_input():
    with pytest.raises(ValueError, match="penalty"):
        DPMeans(penalty=-1.0).fit(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="NaN"):
        DPMeans().fit(np.array([[np.nan, 0.0]]))
    dp = DPMeans().fit(np.array([[1.0, 2.0]]))
    assert dp.n_clusters_ == 1


def test_kmedoids_duplicates_and_one_sample():
    X = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [4.0, 4.0], [4.0, 4.0]])
    km = KMedoids(2, random_state=0).fit(X)
    assert adjusted_rand_score([0, 0, 0, 1, 1], km.labels_) == 1.0
    assert km.inertia_ == 0.0
    one = KMedoids(1).fit(np.array([[1.0, 2.0]]))
    assert one.medoid_indices_.tolist() == [0] and one.inertia_ == 0.0


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), penalty=st.floats(0.05, 20.0))
def test_dpmeans_objective_monotone_on_random_data(seed, penalty):
    # Oxford "Advanced Topics in Statistical Machine Learning" §1.1.2: every step (assign or open,
    # update, drop empty) lowers W_lambda (eq. 1.19), so the recorded history never increases; at
    # the end each centre is its cluster's mean and W_lambda equals its definition.
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 2)) * rng.uniform(0.5, 3.0)
    dp = DPMeans(penalty=penalty, max_iter=200).fit(X)
    h = dp.objective_history_
    assert np.all(np.diff(h) <= 1e-12 * h[0])
    assert dp.objective_ == pytest.approx(h[-1], rel=1e-12)
    assert dp.objective_ == pytest.approx(
        ((X - dp.cluster_centers_[dp.labels_]) ** 2).sum() + penalty * dp.n_clusters_, rel=1e-12
    )
    for k in range(dp.n_clusters_):
        np.testing.assert_allclose(dp.cluster_centers_[k], X[dp.labels_ == k].mean(0), atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_kmedoids_non_symmetric_dissimilarity(seed):
    # J~ = sum_n V(x_n, m_{c_n}) with V read as (point, medoid). The update must minimise
    # sum_{j in C_k} V(x_j, m) (a column sum); the row sum cycled without converging.
    rng = np.random.default_rng(seed)
    D = rng.uniform(size=(30, 30))
    np.fill_diagonal(D, 0.0)
    km = KMedoids(3, metric="precomputed", random_state=0).fit(D)  # no ConvergenceWarning
    np.testing.assert_array_equal(km.labels_, np.argmin(D[:, km.medoid_indices_], axis=1))
    assert km.inertia_ == pytest.approx(D[np.arange(30), km.medoid_indices_[km.labels_]].sum())
    for k, m in enumerate(km.medoid_indices_):
        members = np.flatnonzero(km.labels_ == k)
        assert D[members, m].sum() == pytest.approx(D[np.ix_(members, members)].sum(0).min())


@pytest.mark.parametrize("offset", [1e6, 1e8])
@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "manhattan"])
def test_kmedoids_far_from_the_origin(offset, metric):
    # Issue 10: the expanded squared distance lost digits for iris + 1e6 (inertia_ off by
    # 1.4e-4) and chose other medoids at + 1e8. Distances are translation invariant; the only
    # difference left is the rounding of the shifted data themselves, at most half an ulp of
    # the offset per coordinate (u), so a distance moves by at most 2 * sqrt(D) * u
    # (euclidean; D * 2u manhattan) and the inertia by N times that (sqeuclidean: times
    # twice the largest distance).
    from scipy.spatial.distance import cdist
    from sklearn.datasets import load_iris

    X = load_iris().data
    n, d = X.shape
    u = np.spacing(offset + X.max()) / 2
    ref = KMedoids(3, metric=metric, random_state=0).fit(X)
    sh = KMedoids(3, metric=metric, random_state=0).fit(X + offset)
    np.testing.assert_array_equal(sh.medoid_indices_, ref.medoid_indices_)
    D = cdist(X, X[ref.medoid_indices_], {"manhattan": "cityblock"}.get(metric, metric))
    step = {"euclidean": 2 * np.sqrt(d) * u, "manhattan": 2 * d * u}.get(
        metric, 2 * np.sqrt(d) * u * 2 * np.sqrt(D.max())
    )
    # Labels agree wherever the two nearest medoids are farther apart than rounding can move.
    two = np.sort(D, axis=1)[:, :2]
    clear = two[:, 1] - two[:, 0] > 2 * step
    np.testing.assert_array_equal(sh.labels_[clear], ref.labels_[clear])
    assert abs(sh.inertia_ - ref.inertia_) <= n * step
    # The unshifted inertia is the sum of the exact distances; every medoid is at distance 0
    # from itself (the expanded form gave ~1e-7).
    assert ref.inertia_ == pytest.approx(D[np.arange(n), ref.labels_].sum(), rel=1e-14)
    assert np.all(D[ref.medoid_indices_, np.arange(3)] == 0)
    np.testing.assert_array_equal(ref.predict(X[ref.medoid_indices_]), np.arange(3))


def test_dpmeans_far_from_the_origin():
    # W_lambda does not depend on the origin: data shifted by 1e8 (rounded to ~1.5e-8, far
    # below the clusters' spacing and the threshold's margin) give the same partition.
    X, _ = make_blobs(200, centers=4, cluster_std=0.5, random_state=7)
    ref = DPMeans(penalty=20.0).fit(X)
    sh = DPMeans(penalty=20.0).fit(X + 1e8)
    np.testing.assert_array_equal(sh.labels_, ref.labels_)
    np.testing.assert_allclose(sh.cluster_centers_ - 1e8, ref.cluster_centers_, atol=1e-6)
    np.testing.assert_array_equal(sh.predict(X + 1e8), ref.labels_)


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "manhattan"])
def test_kmedoids_extreme_magnitudes(metric):
    # The medoids of X * c are those of X (distances scale with c, or c^2), for c = 1e-300
    # and 1e300; a prediction batch may mix ordinary rows with rows of any magnitude: as
    # t grows, the nearest medoid of t u maximises u^T m (the distances agree to all digits).
    X, _ = make_blobs(60, centers=3, random_state=3)
    ref = KMedoids(3, metric=metric, random_state=0).fit(X)
    for c in (1e-300, 1e300):
        if metric == "sqeuclidean":  # squared distances ~1e600 / 1e-600: not floats
            with pytest.raises(ValueError, match="largest float" if c > 1 else "smallest"):
                KMedoids(3, metric=metric, random_state=0).fit(X * c)
            continue
        big = KMedoids(3, metric=metric, random_state=0).fit(X * c)
        np.testing.assert_array_equal(big.medoid_indices_, ref.medoid_indices_)
        np.testing.assert_array_equal(big.labels_, ref.labels_)
    u = np.array([0.6, -0.8])
    rows = np.r_[X[:5], [1e200 * u], [1e300 * u]]
    pred = ref.predict(rows)
    np.testing.assert_array_equal(pred[:5], ref.labels_[:5])
    if metric != "manhattan":
        assert np.all(pred[5:] == np.argmax(ref.cluster_centers_ @ u))


@pytest.mark.parametrize("c", [2.0**500, 2.0**-500])
def test_dpmeans_at_extreme_scales(c):
    # W_lambda(c X) = c^2 W_{lambda / c^2}(X): the same partition with the penalty in the
    # data's squared units. Scaling by a power of two is exact, so labels agree exactly and
    # centres and objective to rounding.
    X, _ = make_blobs(n_samples=60, n_features=3, centers=3, random_state=0)
    ref = DPMeans(penalty=20.0).fit(X)
    dp = DPMeans(penalty=20.0 * c * c).fit(c * X)
    np.testing.assert_array_equal(dp.labels_, ref.labels_)
    np.testing.assert_allclose(dp.cluster_centers_, c * ref.cluster_centers_, rtol=1e-13)
    assert dp.objective_ == pytest.approx(c * c * ref.objective_, rel=1e-12)
    np.testing.assert_allclose(dp.objective_history_, c * c * ref.objective_history_, rtol=1e-12)


def test_dpmeans_penalty_negligible_at_extreme_scale():
    X, _ = make_blobs(n_samples=60, n_features=3, centers=3, random_state=0)
    c = 2.0**997
    dp = DPMeans(penalty=1.0).fit(c * X)
    # A penalty of 1 is negligible against squared distances of ~2^1994: every distinct point
    # opens its own cluster, exactly as the mathematics says, and the objective is 60 * 1.
    assert dp.n_clusters_ == 60
    np.testing.assert_array_equal(np.sort(dp.labels_), np.arange(60))
    # Centres are formed about the data mean: (x - m) + m is x to an ulp of the largest entry.
    tol = 4 * np.finfo(float).eps * np.max(np.abs(c * X))
    np.testing.assert_allclose(dp.cluster_centers_[dp.labels_], c * X, rtol=0, atol=tol)
    assert dp.inertia_ == 0.0 and dp.objective_ == 60.0
