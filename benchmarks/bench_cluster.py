"""Clustering and mixtures against scikit-learn on the same data with equal work.

* KMeans, 100 000 x 20, K = 10: both start from the same k-means++ centres (drawn once,
  passed as ``init``), ``n_init=1``, Lloyd's algorithm, the default tolerance; both stop at
  the same iteration (the test suite checks they give identical partitions).
* GaussianMixture, full covariances, 50 000 x 10, K = 5: same ``weights_init``,
  ``means_init`` and ``precisions_init``, same ``tol`` and ``max_iter``, so both run the same
  EM iterations (scikit-learn still runs its k-means for the unused initial responsibilities,
  so it is given ``init_params="random_from_data"``, the cheapest, to keep the work equal).
* AgglomerativeClustering, Ward, 5 000 x 10: the full dendrogram and a cut into 10 clusters
  (scikit-learn's unstructured Ward tree goes through SciPy's nearest-neighbour chain).

Run: ``python benchmarks/run.py cluster`` (or ``python benchmarks/bench_cluster.py``).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.cluster import AgglomerativeClustering as SkAgglomerative
from sklearn.cluster import KMeans as SkKMeans
from sklearn.datasets import make_blobs
from sklearn.mixture import GaussianMixture as SkGaussianMixture

from _harness import compare
from _sweep_cases import Case, _blobs
from mathlearn.cluster import AgglomerativeClustering, KMeans, kmeans_plusplus
from mathlearn.mixture import GaussianMixture


def bench_kmeans():
    X, _ = make_blobs(100_000, n_features=20, centers=10, cluster_std=4.0, random_state=0)
    init, _ = kmeans_plusplus(X, 10, np.random.default_rng(0))
    compare(
        "KMeans 100000x20, K=10 (same init, n_init=1)",
        lambda: KMeans(10, init=init, n_init=1).fit(X),
        lambda: SkKMeans(10, init=init, n_init=1, algorithm="lloyd").fit(X),
        repeats=5,
        target=1.2,
    )


def bench_gmm():
    X, _ = make_blobs(50_000, n_features=10, centers=5, cluster_std=2.0, random_state=1)
    rng = np.random.default_rng(1)
    start = dict(
        weights_init=np.full(5, 0.2),
        means_init=X[rng.choice(len(X), 5, replace=False)],
        precisions_init=np.stack([np.eye(10) / 4.0] * 5),
        tol=1e-3,
        max_iter=100,
    )
    compare(
        "GaussianMixture full 50000x10, K=5 (same start)",
        lambda: GaussianMixture(5, **start).fit(X),
        lambda: SkGaussianMixture(5, init_params="random_from_data", **start).fit(X),
        repeats=3,
        target=1.2,
    )


def bench_gmm_diag():
    # Issue 11: the diagonal mixture was 1.5-2.3x slower than the peer (densities and M-step
    # one component at a time, SciPy's logsumexp). Same start for both, as for "full"; a small
    # and a large size.
    for n in (1_000, 50_000):
        X, _ = make_blobs(n, n_features=10, centers=5, cluster_std=2.0, random_state=1)
        rng = np.random.default_rng(1)
        start = dict(
            covariance_type="diag",
            weights_init=np.full(5, 0.2),
            means_init=X[rng.choice(len(X), 5, replace=False)],
            precisions_init=np.full((5, 10), 0.25),
            tol=1e-3,
            max_iter=100,
        )
        compare(
            f"GaussianMixture diag {n}x10, K=5 (same start)",
            lambda X=X, start=start: GaussianMixture(5, **start).fit(X),
            lambda X=X, start=start: SkGaussianMixture(
                5, init_params="random_from_data", **start
            ).fit(X),
            repeats=5 if n < 10_000 else 3,
            target=1.2,
        )


def bench_ward():
    X, _ = make_blobs(5_000, n_features=10, centers=10, random_state=2)
    compare(
        "AgglomerativeClustering Ward 5000x10",
        lambda: AgglomerativeClustering(10, linkage="ward").fit(X),
        lambda: SkAgglomerative(10, linkage="ward").fit(X),
        repeats=3,
        target=1.2,
    )


def main():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a ConvergenceWarning would only add noise here
        bench_kmeans()
        bench_gmm()
        bench_gmm_diag()
        bench_ward()


def _linkage_case(linkage):
    # The full dendrogram and a cut into 10 clusters, Euclidean distances, on both sides
    # (Ward is a case of ``_sweep_cases``). Quadratic memory on both sides: stops at 1e4.
    return Case(
        "clustering",
        f"AgglomerativeClustering {linkage}",
        _blobs,
        lambda X: lambda: AgglomerativeClustering(10, linkage=linkage).fit(X),
        lambda X: lambda: SkAgglomerative(10, linkage=linkage).fit(X),
        d=20,
        max_n=20_000,
        wide=None,
    )


SWEEP_CASES = [_linkage_case(linkage) for linkage in ("average", "complete", "single")]


if __name__ == "__main__":
    from _harness import HEADER, machine

    print(f"machine: {machine()}\n\n{HEADER}")
    main()
