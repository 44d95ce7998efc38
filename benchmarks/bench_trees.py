"""CART trees and random forests against scikit-learn on the same data.

* DecisionTreeClassifier, full depth, Gini, all features: N = 100, 1 000, 100 000, D = 20
  (``make_classification``, 10 informative features, 10% flipped labels). Both grow the
  same tree up to ties, so the node counts are printed beside the times.
* RandomForestClassifier, 100 trees, max_features="sqrt", bootstrap: N = 1 000 and 50 000,
  D = 20, the same ``n_jobs`` on both sides (2, the machine's cores).
* DecisionTreeRegressor, N = 100 000, D = 20.
* GradientBoostingClassifier / Regressor, 100 stages of depth-3 trees: N = 1 000 and 20 000,
  D = 20 (scikit-learn's exact-split gradient boosting).
* HistGradientBoostingClassifier, 100 iterations, no early stopping: N = 1 000, 20 000 and
  200 000, D = 20, scikit-learn's on one OpenMP thread (ours is single-threaded; on a
  loaded machine scikit-learn's OpenMP threads stall and its times would mean nothing) and
  on two.

Run: ``python benchmarks/run.py trees``.
"""

from __future__ import annotations

import warnings

from sklearn import ensemble as ske
from sklearn import tree as sk
from sklearn.datasets import make_classification, make_regression

from _harness import compare
from _sweep_cases import Case
from mathlearn.ensemble import (
    AdaBoostClassifier,
    BaggingClassifier,
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from mathlearn.tree import DecisionTreeClassifier, DecisionTreeRegressor


def _classification(n, d=20):
    return make_classification(n, d, n_informative=10, flip_y=0.1, random_state=0)


def _regression(n, d=20):
    return make_regression(n, d, n_informative=10, noise=10.0, random_state=0)


def bench_tree(sizes):
    for n in sizes:
        X, y = _classification(n)
        ours, peer = (
            DecisionTreeClassifier(random_state=0),
            sk.DecisionTreeClassifier(random_state=0),
        )
        compare(
            f"DecisionTreeClassifier {n}x20",
            lambda X=X, y=y, m=ours: m.fit(X, y),
            lambda X=X, y=y, m=peer: m.fit(X, y),
            repeats=3 if n <= 1000 else 1,
            target=1.0,
        )
        print(f"|   nodes ours {ours.tree_.node_count}, sklearn {peer.tree_.node_count} | | | | |")


def bench_regressor():
    X, y = make_regression(100_000, 20, noise=10.0, random_state=0)
    compare(
        "DecisionTreeRegressor 100000x20",
        lambda: DecisionTreeRegressor(random_state=0).fit(X, y),
        lambda: sk.DecisionTreeRegressor(random_state=0).fit(X, y),
        repeats=1,
    )


def bench_forest(sizes, n_jobs=2):
    for n in sizes:
        X, y = _classification(n)
        compare(
            f"RandomForestClassifier 100 trees {n}x20 n_jobs={n_jobs}",
            lambda X=X, y=y: RandomForestClassifier(100, n_jobs=n_jobs, random_state=0).fit(X, y),
            lambda X=X, y=y: ske.RandomForestClassifier(100, n_jobs=n_jobs, random_state=0).fit(
                X, y
            ),
            repeats=1,
            target=1.0,
        )


def bench_gradient_boosting(sizes):
    for n in sizes:
        X, y = _classification(n)
        compare(
            f"GradientBoostingClassifier 100 stages {n}x20",
            lambda X=X, y=y: GradientBoostingClassifier(random_state=0).fit(X, y),
            lambda X=X, y=y: ske.GradientBoostingClassifier(random_state=0).fit(X, y),
            repeats=1,
        )
        Xr, yr = make_regression(n, 20, noise=10.0, random_state=0)
        compare(
            f"GradientBoostingRegressor 100 stages {n}x20",
            lambda X=Xr, y=yr: GradientBoostingRegressor(random_state=0).fit(X, y),
            lambda X=Xr, y=yr: ske.GradientBoostingRegressor(random_state=0).fit(X, y),
            repeats=1,
        )


def bench_hist_gradient_boosting(sizes, threads=(1, 2)):
    from threadpoolctl import threadpool_limits

    for n in sizes:
        X, y = _classification(n)
        for t in threads:

            def peer(X=X, y=y, t=t):
                with threadpool_limits(t):
                    m = ske.HistGradientBoostingClassifier(max_iter=100, early_stopping=False)
                    return m.fit(X, y)

            compare(
                f"HistGradientBoostingClassifier 100 iter {n}x20 (sklearn {t} thread)",
                lambda X=X, y=y: HistGradientBoostingClassifier(
                    max_iter=100, early_stopping=False
                ).fit(X, y),
                peer,
                repeats=1,
                target=1.0,
            )
        bench_lightgbm(X, y, n)


def bench_lightgbm(X, y, n):
    """Beside LightGBM (one thread, the same 100 iterations, 31 leaves, 255 bins, 20 samples
    per leaf, learning rate 0.1, no L2), where it is installed; no target is set."""
    try:
        import lightgbm
    except ImportError:
        print(f"|   LightGBM not installed: no row for {n}x20 | | | | |")
        return
    params = dict(
        n_estimators=100,
        num_leaves=31,
        max_bin=255,
        min_child_samples=20,
        learning_rate=0.1,
        reg_lambda=0.0,
        min_child_weight=1e-3,
        num_threads=1,
        verbose=-1,
    )
    compare(
        f"HistGradientBoostingClassifier 100 iter {n}x20 vs LightGBM (1 thread)",
        lambda: HistGradientBoostingClassifier(max_iter=100, early_stopping=False).fit(X, y),
        lambda: lightgbm.LGBMClassifier(**params).fit(X, y),
        repeats=1,
    )


def main():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench_tree([100, 1_000, 100_000])
        bench_regressor()
        bench_forest([1_000, 50_000])
        bench_gradient_boosting([1_000, 20_000])
        bench_hist_gradient_boosting([1_000, 20_000, 200_000])


def _hgb_kw():
    # 100 iterations on both sides, no early stopping (scikit-learn's "auto" switches it on
    # from N = 10 000, ours likewise): the same 100 trees of at most 31 leaves, 255 bins,
    # learning rate 0.1, 20 samples per leaf, no L2. scikit-learn's OpenMP pool runs at the
    # sweep's thread count.
    return dict(max_iter=100, early_stopping=False)


# Every case grows the same ensembles on both sides: the same number of trees (stages),
# depth, features per split, bootstrap and learning rate; random_state=0 on both (the
# random streams differ, so randomised ensembles grow different but equally sized trees).
SWEEP_CASES = [
    Case(
        "trees",
        "DecisionTreeClassifier",
        lambda n, d: _classification(n, d),
        lambda X, y: lambda: DecisionTreeClassifier(random_state=0).fit(X, y),
        lambda X, y: lambda: sk.DecisionTreeClassifier(random_state=0).fit(X, y),
        d=20,
        max_n=200_000,
        wide=(200, 2_000),
    ),
    Case(
        "trees",
        "DecisionTreeRegressor",
        lambda n, d: _regression(n, d),
        lambda X, y: lambda: DecisionTreeRegressor(random_state=0).fit(X, y),
        lambda X, y: lambda: sk.DecisionTreeRegressor(random_state=0).fit(X, y),
        d=20,
        max_n=200_000,
        wide=(200, 2_000),
    ),
    Case(
        "trees",
        "RandomForestClassifier 20 trees",
        lambda n, d: _classification(n, d),
        lambda X, y: lambda: RandomForestClassifier(20, random_state=0).fit(X, y),
        lambda X, y: lambda: ske.RandomForestClassifier(20, random_state=0).fit(X, y),
        d=20,
        max_n=100_000,
        wide=None,
    ),
    Case(
        "trees",
        "RandomForestRegressor 10 trees",
        # both defaults: all features at every split (max_features=1.0), bootstrap
        lambda n, d: _regression(n, d),
        lambda X, y: lambda: RandomForestRegressor(10, random_state=0).fit(X, y),
        lambda X, y: lambda: ske.RandomForestRegressor(10, random_state=0).fit(X, y),
        d=20,
        max_n=100_000,
        wide=(200, 2_000),
    ),
    Case(
        "trees",
        "ExtraTreesClassifier 20 trees",
        # both defaults: sqrt(D) features, random thresholds, no bootstrap
        lambda n, d: _classification(n, d),
        lambda X, y: lambda: ExtraTreesClassifier(20, random_state=0).fit(X, y),
        lambda X, y: lambda: ske.ExtraTreesClassifier(20, random_state=0).fit(X, y),
        d=20,
        max_n=100_000,
        wide=(200, 2_000),
    ),
    Case(
        "trees",
        "BaggingClassifier 10 trees",
        # both defaults: 10 full-depth CART trees on bootstrap samples of size N
        lambda n, d: _classification(n, d),
        lambda X, y: lambda: BaggingClassifier(random_state=0).fit(X, y),
        lambda X, y: lambda: ske.BaggingClassifier(random_state=0).fit(X, y),
        d=20,
        max_n=100_000,
        wide=(200, 2_000),
    ),
    Case(
        "trees",
        "AdaBoostClassifier 50 stumps",
        # both defaults: discrete SAMME, 50 rounds of depth-1 trees, learning rate 1
        lambda n, d: _classification(n, d),
        lambda X, y: lambda: AdaBoostClassifier(random_state=0).fit(X, y),
        lambda X, y: lambda: ske.AdaBoostClassifier(random_state=0).fit(X, y),
        d=20,
        max_n=1_000_000,
        wide=(200, 2_000),
    ),
    Case(
        "trees",
        "GradientBoostingClassifier 100 stages",
        # both defaults: 100 stages of depth-3 trees, learning rate 0.1, log-loss
        lambda n, d: _classification(n, d),
        lambda X, y: lambda: GradientBoostingClassifier(random_state=0).fit(X, y),
        lambda X, y: lambda: ske.GradientBoostingClassifier(random_state=0).fit(X, y),
        d=20,
        max_n=100_000,
        wide=(200, 2_000),
    ),
    Case(
        "trees",
        "GradientBoostingRegressor 100 stages",
        # both defaults: 100 stages of depth-3 trees, learning rate 0.1, squared error
        lambda n, d: _regression(n, d),
        lambda X, y: lambda: GradientBoostingRegressor(random_state=0).fit(X, y),
        lambda X, y: lambda: ske.GradientBoostingRegressor(random_state=0).fit(X, y),
        d=20,
        max_n=100_000,
        wide=(200, 2_000),
    ),
    Case(
        "trees",
        "HistGradientBoostingClassifier 100 iter",
        lambda n, d: _classification(n, d),
        lambda X, y: lambda: HistGradientBoostingClassifier(**_hgb_kw()).fit(X, y),
        lambda X, y: lambda: ske.HistGradientBoostingClassifier(**_hgb_kw()).fit(X, y),
        d=20,
        max_n=1_000_000,
        wide=(200, 2_000),
    ),
    Case(
        "trees",
        "HistGradientBoostingRegressor 100 iter",
        lambda n, d: _regression(n, d),
        lambda X, y: lambda: HistGradientBoostingRegressor(**_hgb_kw()).fit(X, y),
        lambda X, y: lambda: ske.HistGradientBoostingRegressor(**_hgb_kw()).fit(X, y),
        d=20,
        max_n=1_000_000,
        wide=(200, 2_000),
    ),
]

if __name__ == "__main__":
    from _harness import HEADER, machine

    print(f"machine: {machine()}\n\n{HEADER}")
    main()
