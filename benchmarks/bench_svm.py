"""Support vector machines against scikit-learn (libsvm, liblinear) on the same data.

* SVC, RBF kernel, C = 1, gamma = "scale", tol = 1e-3 (both), two overlapping classes
  (``make_classification`` with ``class_sep=0.5`` and 10% flipped labels, D = 20), at
  N = 100, 1 000, 2 000, 20 000 (and 50 000 with ``--large``). Both solve the same dual to the
  same KKT gap; the dual objectives are printed beside the times, so "equal work" is checked,
  not assumed.
* SVR, RBF, N = 10 000, D = 20.
* LinearSVC (squared hinge), N = 100 000, D = 100, against liblinear's primal solver.

Run: ``python benchmarks/run.py svm`` (``python benchmarks/bench_svm.py --large`` adds
N = 50 000, several minutes for each library). The kernel SVMs run their SMO iterations in the
compiled helper ``mathlearn._ext._smo``, built by ``pip install -e .`` (from a source tree on
``PYTHONPATH``: ``python setup.py build_ext --inplace``); the header says which route ran.
Nothing is compiled at the first call, which the timings include.
"""

from __future__ import annotations

import sys
import warnings

import numpy as np
from sklearn import svm as sk
from sklearn.datasets import make_classification, make_regression

from _harness import compare
from _sweep_cases import Case
from mathlearn.svm import SVC, SVR, LinearSVC, NuSVC


def _classification(n, d=20):
    return make_classification(n, d, n_informative=10, class_sep=0.5, flip_y=0.1, random_state=0)


def _dual_objective(model, X):
    """``1/2 c^T K c - sum |c|`` over the support vectors (c = y alpha), RBF kernel."""
    gamma = 1.0 / (X.shape[1] * X.var())
    S = model.support_vectors_
    sq = (S * S).sum(1)
    K = np.exp(-gamma * np.maximum(sq[:, None] + sq[None, :] - 2 * S @ S.T, 0))
    c = model.dual_coef_[0]
    return 0.5 * c @ K @ c - np.abs(c).sum()


def bench_svc(sizes):
    for n in sizes:
        X, y = _classification(n)
        ours, peer = SVC(), sk.SVC()
        compare(
            f"SVC rbf {n}x20",
            lambda X=X, y=y, m=ours: m.fit(X, y),
            lambda X=X, y=y, m=peer: m.fit(X, y),
            repeats=3 if n <= 2000 else 1,
            target=1.0 if n >= 1000 else 1.5,
        )
        if n <= 20_000:
            o, p = _dual_objective(ours, X), _dual_objective(peer, X)
            print(
                f"|   dual objective ours {o:.6f}, libsvm {p:.6f} (rel. diff "
                f"{abs(o - p) / abs(p):.1e}); SVs {len(ours.support_)} / "
                f"{len(peer.support_)} | | | | |"
            )


def bench_svr():
    X, y = make_regression(10_000, 20, noise=10.0, random_state=0)
    y = y / y.std()
    compare(
        "SVR rbf 10000x20",
        lambda: SVR().fit(X, y),
        lambda: sk.SVR().fit(X, y),
        repeats=1,
        target=1.0,
    )


def bench_linear_svc():
    X, y = make_classification(100_000, 100, random_state=0, flip_y=0.1)
    compare(
        "LinearSVC squared hinge 100000x100",
        lambda: LinearSVC().fit(X, y),
        lambda: sk.LinearSVC(dual=False).fit(X, y),
        repeats=3,
    )


def main(large: bool = False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sizes = [100, 1_000, 2_000, 20_000] + ([50_000] if large else [])
        bench_svc(sizes)
        bench_svr()
        bench_linear_svc()


def _regression(n, d=20):
    X, y = make_regression(n, d, noise=10.0, random_state=0)
    return X, y / y.std()


SWEEP_CASES = [
    Case(
        "svm",
        "SVC rbf",
        lambda n, d: _classification(n, d),
        lambda X, y: lambda: SVC().fit(X, y),
        lambda X, y: lambda: sk.SVC().fit(X, y),
        d=20,
        max_n=20_000,
        wide=(200, 2_000),
    ),
    Case(
        "svm",
        "LinearSVC",
        lambda n, d: _classification(n, d),
        lambda X, y: lambda: LinearSVC().fit(X, y),
        lambda X, y: lambda: sk.LinearSVC(dual=False).fit(X, y),
        d=20,
        wide=(500, 5_000),
    ),
    Case(
        "svm",
        "SVR rbf",
        _regression,
        lambda X, y: lambda: SVR().fit(X, y),
        lambda X, y: lambda: sk.SVR().fit(X, y),
        d=20,
        max_n=20_000,
        wide=(200, 2_000),
    ),
    Case(
        "svm",
        "NuSVC rbf",
        lambda n, d: _classification(n, d),
        lambda X, y: lambda: NuSVC().fit(X, y),
        lambda X, y: lambda: sk.NuSVC().fit(X, y),
        d=20,
        max_n=20_000,
        wide=(200, 2_000),
    ),
]


if __name__ == "__main__":
    from _harness import HEADER, machine
    from mathlearn._ext import load

    route = "compiled" if load("_smo") is not None else "NumPy (mathlearn._ext._smo not built)"
    print(f"machine: {machine()}\nSMO route: {route}\n\n{HEADER}")
    main(large="--large" in sys.argv)
