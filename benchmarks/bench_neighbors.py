"""Nearest neighbours against scikit-learn on the same data.

* KDTree: build on 100 000 points (standard normal, 5 and 20 features), then the 10 nearest
  neighbours of fresh query points from the same distribution (10 000 queries at 5
  features; 500 at 20, where a kd-tree prunes little and the peer's search takes tens of
  milliseconds per query on a loaded machine). Same ``leaf_size = 40``.
* The same at N = 100 and 1 000 (all N points queried), where fixed costs dominate.
* KNeighborsClassifier: fit + predict, 5 neighbours, 3 classes, 20 000 x 5 with 5 000
  queries (both through their kd-trees) and 2 000 x 20 (both exhaustive).

Run: ``python benchmarks/run.py neighbors`` (or ``python benchmarks/bench_neighbors.py``).
"""

from __future__ import annotations

import sys

import numpy as np
from sklearn import neighbors as sk

from _harness import compare
from _sweep_cases import Case
from mathlearn.neighbors import KDTree, KNeighborsClassifier, KNeighborsRegressor


def _points(n, d, m, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), rng.standard_normal((m, d))


def bench_kdtree(large=True):
    cases = [(100, 5, 100), (1_000, 5, 1_000), (1_000, 20, 1_000)]
    if large:
        cases += [(100_000, 5, 10_000), (100_000, 20, 500)]
    for n, d, m in cases:
        X, Q = _points(n, d, m)
        compare(
            f"KDTree build + 10-NN query, {n}x{d}, {m} queries",
            lambda X=X, Q=Q: KDTree(X, leaf_size=40).query(Q, k=10),
            lambda X=X, Q=Q: sk.KDTree(X, leaf_size=40).query(Q, k=10),
            repeats=3 if n == 100_000 else 5,
            target=1.0 if n == 100_000 else None,
        )


def bench_knn_classifier():
    for n, d, m, algo in [(20_000, 5, 5_000, "kd_tree"), (2_000, 20, 2_000, "brute")]:
        X, Q = _points(n, d, m, seed=1)
        y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 1)
        compare(
            f"KNeighborsClassifier fit + predict, {n}x{d}, {m} queries ({algo})",
            lambda X=X, y=y, Q=Q, a=algo: (
                KNeighborsClassifier(5, algorithm=a).fit(X, y).predict(Q)
            ),
            lambda X=X, y=y, Q=Q, a=algo: (
                sk.KNeighborsClassifier(5, algorithm=a).fit(X, y).predict(Q)
            ),
            repeats=3,
        )


def main(large=True):
    bench_kdtree(large)
    bench_knn_classifier()


def _classification(n, d):
    X, _ = _points(n, d, 0, seed=2)
    return X, (X[:, 0] > 0).astype(int)


def _regression(n, d):
    X, _ = _points(n, d, 0, seed=2)
    return X, np.sin(2 * X[:, 0]) + X[:, 1] ** 2


SWEEP_CASES = [
    Case(
        "neighbors",
        "KNeighborsClassifier fit+predict (self)",
        _classification,
        lambda X, y: lambda: KNeighborsClassifier(5).fit(X, y).predict(X),
        lambda X, y: lambda: sk.KNeighborsClassifier(5).fit(X, y).predict(X),
        d=5,
        max_n=100_000,
        wide=None,
    ),
    Case(
        "neighbors",
        "KNeighborsRegressor fit+predict (self)",
        _regression,
        lambda X, y: lambda: KNeighborsRegressor(5).fit(X, y).predict(X),
        lambda X, y: lambda: sk.KNeighborsRegressor(5).fit(X, y).predict(X),
        d=5,
        max_n=100_000,
        wide=None,
    ),
]


if __name__ == "__main__":
    from _harness import HEADER, machine

    print(f"machine: {machine()}\n\n{HEADER}")
    main(large="--small" not in sys.argv)
