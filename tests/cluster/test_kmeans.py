"""k-means, mini-batch k-means: reference = scikit-learn from the same centres, the notes'
hand-computed examples (PRML §9.1) and closed forms."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans as SkKMeans
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

from mathlearn.cluster import KMeans, MiniBatchKMeans, kmeans_plusplus
from mathlearn.exceptions import ConvergenceWarning, NumericalWarning


def test_worked_example_1d():
    # Hand-computed (PRML §9.1): x = [1, 2, 10, 11], mu = [1, 2] -> mu = [1.5, 10.5], J = 1.
    X = np.array([[1.0], [2.0], [10.0], [11.0]])
    km = KMeans(2, init=X[:2], n_init=1).fit(X)
    np.testing.assert_allclose(km.cluster_centers_.ravel(), [1.5, 10.5])
    assert km.labels_.tolist() == [0, 0, 1, 1]
    assert km.inertia_ == pytest.approx(1.0)


def test_worked_example_2d_iterations():
    # Hand-computed (PRML §9.1), 2-D: iteration 1 gives mu = [[.5, 0], [4, 4.25]]; final J = 8/3.
    X = np.array([[0, 0], [0, 1], [1, 0], [5, 5], [5, 6], [6, 5]], dtype=float)
    one = KMeans(2, init=X[:2], n_init=1, max_iter=1)
    with pytest.warns(ConvergenceWarning):
        one.fit(X)
    np.testing.assert_allclose(one.cluster_centers_, [[0.5, 0.0], [4.0, 4.25]])
    km = KMeans(2, init=X[:2], n_init=1).fit(X)
    np.testing.assert_allclose(km.cluster_centers_, [[1 / 3, 1 / 3], [16 / 3, 16 / 3]])
    assert km.inertia_ == pytest.approx(8 / 3)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_sklearn_from_same_centres(seed):
    X, _ = make_blobs(600, n_features=5, centers=6, cluster_std=2.5, random_state=seed)
    rng = np.random.default_rng(seed)
    init = X[rng.choice(len(X), 6, replace=False)]
    ours = KMeans(6, init=init, n_init=1, max_iter=300, tol=1e-4).fit(X)
    ref = SkKMeans(6, init=init, n_init=1, max_iter=300, tol=1e-4, algorithm="lloyd").fit(X)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-10, atol=1e-10)
    assert ours.inertia_ == pytest.approx(ref.inertia_, rel=1e-10)
    assert ours.n_iter_ == ref.n_iter_
    np.testing.assert_array_equal(ours.predict(X[:50]), ref.predict(X[:50]))
    np.testing.assert_allclose(ours.transform(X[:50]), ref.transform(X[:50]), rtol=1e-9)
    assert ours.score(X) == pytest.approx(ref.score(X), rel=1e-10)


def test_inertia_is_distortion_and_labels_are_nearest(rng):
    X = rng.normal(size=(200, 3))
    km = KMeans(4, n_init=3, random_state=0).fit(X)
    d2 = ((X[:, None, :] - km.cluster_centers_[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(km.labels_, d2.argmin(1))
    assert km.inertia_ == pytest.approx(d2.min(1).sum(), rel=1e-12)
    # Fixed point: every centre is the mean of its points.
    for k in range(4):
        np.testing.assert_allclose(km.cluster_centers_[k], X[km.labels_ == k].mean(0), atol=1e-12)


def test_restarts_keep_the_best_run(rng):
    X, _ = make_blobs(300, centers=8, cluster_std=1.5, random_state=3)
    single = [KMeans(8, init="random", n_init=1, random_state=s).fit(X).inertia_ for s in range(5)]
    many = KMeans(8, init="random", n_init=10, random_state=0).fit(X).inertia_
    assert many <= np.median(single) + 1e-9


def test_kmeans_plusplus_bad_input():
    X = np.arange(6.0).reshape(3, 2)
    with pytest.raises(ValueError, match="n_samples=3 should be >= n_clusters=4"):
        kmeans_plusplus(X, 4, random_state=0)
    with pytest.raises(ValueError, match="NaN"):
        kmeans_plusplus(np.array([[0.0], [np.nan]]), 1, random_state=0)
    with pytest.raises(
        ValueError,
        match=r"'n_clusters' parameter of kmeans_plusplus must be an int in the range \[1, inf\)",
    ):
        kmeans_plusplus(X, 0, random_state=0)
    # An integer seed is accepted and reproducible.
    np.testing.assert_array_equal(kmeans_plusplus(X, 2, 5)[1], kmeans_plusplus(X, 2, 5)[1])


def test_kmeans_plusplus_draws_by_squared_distance():
    # Two points at the origin, one far: after a first centre at the origin the far point
    # has rho^2 > 0 while the others have 0, so it must be chosen second.
    X = np.array([[0.0, 0.0], [0.0, 0.0], [10.0, 0.0]])
    for seed in range(5):
        centers, _ = kmeans_plusplus(X, 2, np.random.default_rng(seed))
        assert sorted(centers[:, 0].tolist()) == [0.0, 10.0]


def test_empty_cluster_is_relocated():
    # A centre far from all the data gets no points in the first assignment.
    X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1]])
    init = np.array([[0.0], [5.0], [100.0]])
    km = KMeans(3, init=init, n_init=1).fit(X)
    assert np.bincount(km.labels_, minlength=3).min() >= 1
    assert np.all(np.isfinite(km.cluster_centers_))


@pytest.mark.parametrize("n_empty", [1, 2])
def test_empty_clusters_relocated_as_sklearn(n_empty):
    # Centres far from the data start empty; each takes the point farthest from its centre,
    # as in scikit-learn, so the whole run (partition, inertia, iterations) is identical.
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal(size=(50, 2)), rng.normal(size=(50, 2)) + 6]
    init = np.array([[0.0, 0.0], [6.0, 6.0], [100.0, 100.0], [-100.0, -100.0]])[: 2 + n_empty]
    ours = KMeans(2 + n_empty, init=init, n_init=1).fit(X)
    ref = SkKMeans(2 + n_empty, init=init, n_init=1, algorithm="lloyd").fit(X)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-12)
    assert ours.inertia_ == pytest.approx(ref.inertia_, rel=1e-12)
    assert ours.n_iter_ == ref.n_iter_


def test_blobs_recovered():
    X, y = make_blobs(500, centers=4, cluster_std=0.5, random_state=0)
    km = KMeans(4, n_init=4, random_state=0).fit(X)
    assert adjusted_rand_score(y, km.labels_) == 1.0


def test_refit_is_deterministic(rng):
    X = rng.normal(size=(100, 2))
    a = KMeans(3, random_state=1).fit(X)
    b = KMeans(3, random_state=1).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)


def test_minibatch_one_full_step_is_one_lloyd_step():
    X, _ = make_blobs(200, centers=3, random_state=0)
    init = X[:3].copy()
    with pytest.warns(ConvergenceWarning):
        mb = MiniBatchKMeans(3, init=init, batch_size=200, max_iter=1, random_state=0).fit(X)
    with pytest.warns(ConvergenceWarning):
        lloyd = KMeans(3, init=init, n_init=1, max_iter=1).fit(X)
    np.testing.assert_allclose(mb.cluster_centers_, lloyd.cluster_centers_, atol=1e-12)


def test_minibatch_close_to_full_kmeans():
    X, y = make_blobs(5000, centers=5, cluster_std=0.6, random_state=2)
    mb = MiniBatchKMeans(5, batch_size=256, random_state=0).fit(X)
    full = KMeans(5, n_init=3, random_state=0).fit(X)
    assert adjusted_rand_score(full.labels_, mb.labels_) > 0.98
    assert adjusted_rand_score(y, mb.labels_) > 0.98
    assert mb.inertia_ <= 1.002 * full.inertia_


@pytest.mark.parametrize("Est", [KMeans, MiniBatchKMeans])
def test_bad_input(Est):
    with pytest.raises(ValueError, match="n_samples=3 should be >= n_clusters=5"):
        Est(5).fit(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="NaN"):
        Est(2).fit(np.array([[0.0, 1.0], [np.nan, 1.0], [2.0, 2.0]]))
    with pytest.raises(ValueError, match="n_clusters"):
        Est(0).fit(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="init array has shape"):
        Est(2, init=np.zeros((3, 2))).fit(np.ones((5, 2)))
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(
        ValueError,
        match=r"'max_iter' parameter of \w+ must be an int in the range \[1, inf\)\. Got 0 ",
    ):
        Est(2, max_iter=0).fit(X)
    with pytest.raises(
        ValueError,
        match=r"'max_iter' parameter of \w+ must be an int in the range \[1, inf\)\. Got 1\.5 ",
    ):
        Est(2, max_iter=1.5).fit(X)
    with pytest.raises(
        ValueError, match=r"'tol' parameter of \w+ must be a float in the range \[0, inf\)"
    ):
        Est(2, tol=-1.0).fit(X)
    with pytest.raises(ValueError, match="infinity"):
        Est(2).fit(np.array([[0.0, 1.0], [np.inf, 1.0], [2.0, 2.0]]))


def test_one_sample_and_duplicates():
    km = KMeans(1).fit(np.array([[1.0, 2.0]]))
    np.testing.assert_allclose(km.cluster_centers_, [[1.0, 2.0]])
    assert km.inertia_ == 0.0
    # All points identical: k-means++ falls back to uniform draws, no NaN anywhere.
    X = np.ones((10, 2))
    with pytest.warns(ConvergenceWarning, match=r"distinct clusters \(1\)"):
        km = KMeans(3, random_state=0).fit(X)
    assert np.all(np.isfinite(km.cluster_centers_)) and km.inertia_ == 0.0


@pytest.mark.parametrize("k", [4, 5, 8, 10])
def test_fewer_distinct_points_than_clusters(k):
    # Three distinct points, ten rows. Relocating zero-distance duplicates into the empty
    # clusters made the centres hop forever (no convergence at K = 5) or emptied a cluster by
    # the relocation itself (0/0 centres at K = 8, 10). Now: J = 0 at once, finite centres,
    # every distinct point its own cluster, and scikit-learn's warning.
    X = np.repeat(np.array([[0.0, 0.0], [1.0, 0.0], [5.0, 5.0]]), [4, 3, 3], axis=0)
    for seed in range(5):
        with pytest.warns(ConvergenceWarning, match=r"distinct clusters \(3\)"):
            km = KMeans(k, random_state=seed).fit(X)
        assert np.all(np.isfinite(km.cluster_centers_))
        assert km.inertia_ < 1e-20 and km.n_iter_ <= 2
        assert adjusted_rand_score([0, 0, 0, 0, 1, 1, 1, 2, 2, 2], km.labels_) == 1.0


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 6))
def test_distortion_never_increases(seed, k):
    # PRML §9.1: J after t Lloyd iterations is non-increasing in t (ibid.).
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 2))
    init = X[rng.choice(60, k, replace=False)]
    J = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # runs cut short on purpose
        for t in range(1, 8):
            J.append(KMeans(k, init=init, n_init=1, max_iter=t, tol=0.0).fit(X).inertia_)
    assert np.all(np.diff(J) <= 1e-12 * J[0])


def test_far_from_origin_matches_sklearn():
    # Shifting the data by 1e8 must not change the clustering. The expanded squared distance
    # ||x||^2 - 2 x^T mu + ||mu||^2 is then ~1e16 with an absolute rounding error ~1, larger
    # than the distances between points, unless the data are centred first (scikit-learn
    # centres them too).
    X, _ = make_blobs(600, n_features=5, centers=6, cluster_std=2.5, random_state=0)
    off = 1e8
    init = X[:6] + off
    ours = KMeans(6, init=init, n_init=1).fit(X + off)
    ref = SkKMeans(6, init=init, n_init=1, algorithm="lloyd").fit(X + off)
    near = KMeans(6, init=X[:6], n_init=1).fit(X)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    np.testing.assert_array_equal(ours.labels_, near.labels_)
    assert ours.n_iter_ == ref.n_iter_ == near.n_iter_
    assert ours.inertia_ == pytest.approx(near.inertia_, rel=1e-9)
    np.testing.assert_array_equal(ours.predict(X + off), near.labels_)
    np.testing.assert_allclose(ours.transform(X[:20] + off), near.transform(X[:20]), atol=1e-6)
    mb = MiniBatchKMeans(6, batch_size=64, random_state=0).fit(X + off)
    mb_near = MiniBatchKMeans(6, batch_size=64, random_state=0).fit(X)
    assert adjusted_rand_score(mb_near.labels_, mb.labels_) == 1.0
    np.testing.assert_allclose(mb.cluster_centers_ - off, mb_near.cluster_centers_, atol=1e-6)


@pytest.mark.parametrize("batch_size", [256, 4096])
def test_minibatch_keeps_no_working_copy_of_the_data(batch_size):
    # The working frame (centred, power-of-two scaled) is applied to each batch and to the
    # blocks of the final pass as they are drawn: the memory a fit allocates beyond X is
    # O(batch + block + K D), not another N x D array. With batch_size >= N the one batch is
    # the transformed data itself (one copy, made once).
    import tracemalloc

    rng = np.random.default_rng(0)
    n, d = (20_000, 20) if batch_size == 256 else (4_000, 20)
    X = rng.standard_normal((n, d)) + 1e6 * (rng.integers(0, 3, n)[:, None] - 1)
    est = MiniBatchKMeans(3, batch_size=batch_size, random_state=0)
    est.fit(X)
    tracemalloc.start()
    est.fit(X)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # Below half a copy of X with batches; with one batch of everything, below two copies
    # (the one working copy plus O(N K) assignment buffers and the seeding's distances).
    copies = 0.5 if batch_size < n else 2.0
    assert peak < copies * X.nbytes
    ref = MiniBatchKMeans(3, batch_size=batch_size, random_state=0).fit(X - X.mean(axis=0))
    assert adjusted_rand_score(est.labels_, ref.labels_) == 1.0


def test_kmeans_plusplus_seed_distribution_is_exact():
    # Oxford "Advanced Topics in Statistical Machine Learning" §1.1.2 (eq. 1.17): P(mu_1 = x_i) =
    # 1/N, then P(next = x_j) = rho_j^2 / sum rho^2 with rho the distance to the nearest chosen
    # centre. Exact probabilities of the ordered triples against the frequencies of 6000 draws
    # (chi-square goodness of fit).
    from itertools import permutations

    from scipy.stats import chisquare

    X = np.array([[0.0], [1.0], [3.0], [7.0]])
    D2 = (X - X.T) ** 2
    triples = list(permutations(range(4), 3))
    prob = []
    for i, j, k in triples:
        rho2 = np.minimum(D2[i], D2[j])
        prob.append(0.25 * D2[i, j] / D2[i].sum() * rho2[k] / rho2.sum())
    prob = np.array(prob)
    assert prob.sum() == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    n_draws = 6000
    counts = dict.fromkeys(triples, 0)
    for _ in range(n_draws):
        _, idx = kmeans_plusplus(X, 3, rng)
        counts[tuple(idx.tolist())] += 1
    observed = np.array([counts[t] for t in triples])
    assert chisquare(observed, prob * n_draws).pvalue > 1e-3


def _blobs_and_weights(seed=0):
    X, _ = make_blobs(300, centers=4, cluster_std=1.5, random_state=seed)
    w = np.random.default_rng(seed).uniform(0.1, 3.0, size=300)
    return X, w


def test_sample_weight_matches_scikit_learn_from_the_same_start():
    # Weighted Lloyd from the same centres, run to a fixed partition (tol=0) by both: the
    # partitions are identical and the centres are the same weighted means; the sums of 300
    # weighted terms differ only in their order of accumulation (~300 eps relative).
    X, w = _blobs_and_weights()
    init = X[[0, 50, 100, 150]]
    ours = KMeans(4, init=init, n_init=1, tol=0.0).fit(X, sample_weight=w)
    ref = SkKMeans(4, init=init, n_init=1, tol=0.0, algorithm="lloyd").fit(X, sample_weight=w)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-12)
    assert ours.inertia_ == pytest.approx(ref.inertia_, rel=1e-12)
    assert ours.score(X, sample_weight=w) == pytest.approx(
        ref.score(X, sample_weight=w), rel=1e-12
    )


def test_integer_weights_equal_repeated_rows():
    X, _ = _blobs_and_weights(1)
    w = np.random.default_rng(1).integers(0, 4, size=X.shape[0])
    init = X[np.flatnonzero(w)[:4]]
    weighted = KMeans(4, init=init, n_init=1, tol=0.0).fit(X, sample_weight=w)
    repeated = KMeans(4, init=init, n_init=1, tol=0.0).fit(np.repeat(X, w, axis=0))
    np.testing.assert_array_equal(np.repeat(weighted.labels_, w), repeated.labels_)
    np.testing.assert_allclose(weighted.cluster_centers_, repeated.cluster_centers_, rtol=1e-12)
    assert weighted.inertia_ == pytest.approx(repeated.inertia_, rel=1e-12)
    # Mini-batch with full batches: every step sees all rows, so weights and repetitions
    # give the same running means and counts.
    mb = dict(init=init, batch_size=10_000, max_iter=5, max_no_improvement=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a fixed number of passes
        mw = MiniBatchKMeans(4, **mb).fit(X, sample_weight=w)
        mr = MiniBatchKMeans(4, **mb).fit(np.repeat(X, w, axis=0))
    np.testing.assert_allclose(mw.cluster_centers_, mr.cluster_centers_, rtol=1e-12)
    np.testing.assert_allclose(mw.counts_, mr.counts_, rtol=1e-12)


def test_zero_weights_and_kmeans_plusplus_by_weight():
    X, w = _blobs_and_weights(2)
    w[:150] = 0.0
    _, idx = kmeans_plusplus(X, 4, random_state=0, sample_weight=w)
    assert np.all(idx >= 150)  # a row of weight 0 is never a seed
    km = KMeans(4, random_state=0).fit(X, sample_weight=w)
    sub = KMeans(4, init=km.cluster_centers_, n_init=1).fit(X[150:], sample_weight=w[150:])
    np.testing.assert_allclose(km.cluster_centers_, sub.cluster_centers_, rtol=1e-12)
    with pytest.raises(ValueError, match="non-zero sample_weight"):
        KMeans(4).fit(X[:5], sample_weight=[1.0, 0, 0, 0, 1.0])


def test_init_callable():
    X, _ = _blobs_and_weights(3)
    seen = {}

    def first_rows(data, k, random_state):
        seen["data"], seen["rng"] = data, random_state
        return data[:k]

    ours = KMeans(4, init=first_rows, tol=0.0).fit(X)
    np.testing.assert_array_equal(seen["data"], X)  # the data as given, not centred
    assert isinstance(seen["rng"], np.random.Generator)
    same = KMeans(4, init=X[:4], tol=0.0).fit(X)
    np.testing.assert_array_equal(ours.labels_, same.labels_)
    # (A copy: scikit-learn updates the returned array in place, which would alter X.)
    ref = SkKMeans(
        4, init=lambda data, k, random_state: data[:k].copy(), n_init=1, tol=0.0, algorithm="lloyd"
    ).fit(X)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-12)
    with pytest.raises(ValueError, match="init callable has shape"):
        KMeans(4, init=lambda data, k, random_state: data[: k - 1]).fit(X)


@pytest.mark.parametrize("scale", [1e-300, 1e150, 1e300])
def test_extreme_magnitudes_scale_exactly(scale):
    # k-means commutes with a scaling of the data; the data of scale c are the data of scale
    # 1 rounded to 1 ulp, so the partition is the same and the centres agree to rounding.
    X, _ = _blobs_and_weights(4)
    ref = KMeans(4, init=X[:4], n_init=1, tol=0.0).fit(X)
    if scale > 1e200:
        with pytest.warns(NumericalWarning, match="inertia exceeds the largest float"):
            big = KMeans(4, init=X[:4] * scale, n_init=1, tol=0.0).fit(X * scale)
        assert big.inertia_ == np.inf
    else:
        big = KMeans(4, init=X[:4] * scale, n_init=1, tol=0.0).fit(X * scale)
        if scale > 1:
            assert big.inertia_ / scale**2 == pytest.approx(ref.inertia_, rel=1e-12)
    np.testing.assert_array_equal(big.labels_, ref.labels_)
    np.testing.assert_allclose(big.cluster_centers_ / scale, ref.cluster_centers_, rtol=1e-12)
    np.testing.assert_array_equal(big.predict(X * scale), ref.labels_)


def test_predict_and_transform_of_extreme_rows():
    X, _ = _blobs_and_weights(5)
    km = KMeans(4, random_state=0).fit(X)
    C = km.cluster_centers_
    u = np.array([0.6, -0.8])
    for t in (1e100, 1e200, 1e300):
        # As t grows, argmin_k ||t u - c_k|| is argmax_k u^T c_k, and every distance is t to
        # all its digits (the centres are ~1e-100 of it or less).
        assert km.predict((t * u)[None])[0] == np.argmax(C @ u)
        np.testing.assert_allclose(km.transform((t * u)[None]), t, rtol=1e-15)
    far = np.array([[1.7e308, -1.7e308]])
    assert km.predict(far)[0] == np.argmax(C @ np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="exceeds the largest float"):
        km.transform(far)
    with pytest.warns(NumericalWarning, match="distortion"):
        assert km.score(far) == -np.inf


@pytest.mark.parametrize("weighted", [False, True])
def test_assignment_split_between_threads(monkeypatch, rng, weighted):
    # The compiled pass split into parts (forced here: 3 parts on any machine) gives each
    # row the nearest centre by explicit differences, and per-cluster sums equal to the
    # direct ones up to summation rounding: |error| <= n eps sum_i |w_i x_i| per entry.
    import os

    from threadpoolctl import threadpool_limits

    import mathlearn.cluster._kmeans_common as kc
    import mathlearn.utils._threads as threads

    if kc._compiled() is None:
        pytest.skip("the compiled assignment helper was not built")
    n, d, k = 3000, 5, 7
    X = rng.normal(size=(n, d)) + 10.0
    C = X[rng.choice(n, k, replace=False)] + 0.1
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    monkeypatch.setattr(threads, "_PARALLEL_WORK", 0)
    monkeypatch.setattr(threads, "_MIN_PART_ROWS", 16)
    monkeypatch.setattr(threads, "blas_threads", lambda: 3)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    calls = []
    run_parts = kc.run_parts
    monkeypatch.setattr(
        kc, "run_parts", lambda parts, fn: (calls.append(parts), run_parts(parts, fn))
    )
    with threadpool_limits(1):
        labels, d2, sums, counts = kc.assign(X, C, accumulate=True, sample_weight=w)
    assert calls == [[0, 1, 2]]
    dist = ((X[:, None, :] - C[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(labels, np.argmin(dist, axis=1))
    # the expanded form ||x||^2 - 2 x.mu + ||mu||^2: rounding of (d + 3) terms of size at most
    # (||x|| + ||mu||)^2
    scale = (np.linalg.norm(X, axis=1) + np.linalg.norm(C[labels], axis=1)) ** 2
    assert np.all(np.abs(d2 - dist.min(axis=1)) <= (d + 3) * np.finfo(float).eps * scale)
    wt = np.ones(n) if w is None else w
    ref_counts = np.bincount(labels, weights=wt, minlength=k)
    ref_sums = np.stack([(wt[labels == j, None] * X[labels == j]).sum(0) for j in range(k)])
    bound = (
        n
        * np.finfo(float).eps
        * np.stack([np.abs(wt[labels == j, None] * X[labels == j]).sum(0) for j in range(k)])
    )
    assert np.all(np.abs(sums - ref_sums) <= bound)
    assert np.all(np.abs(counts - ref_counts) <= n * np.finfo(float).eps * ref_counts)
