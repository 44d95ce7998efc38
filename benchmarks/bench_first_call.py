"""First calls: import + first fit of every estimator in a fresh process.

``python benchmarks/bench_first_call.py [--repeats R] [--n N] [Name ...]``

Every public estimator (``mathlearn.utils.all_estimators()``) is fitted on 500 x 10 data
(the data suit its kind: targets for regressors, labels for classifiers, non-negative data
for NMF, binary data for the Bernoulli mixture, one column for the univariate bases) in a
fresh Python process, three ways:

- cold: ``NUMBA_CACHE_DIR`` an empty directory, as after an install or a numba upgrade, or
  where no cache can be written; every numba kernel the fit reaches is compiled;
- warm: a fresh process on the cache the cold run left;
- peer: scikit-learn's equivalent, where it has one, in a fresh process too.

Each is repeated ``R`` times (a fresh process and, for cold, a fresh empty cache each time)
and the minimum is reported: the machine has two cores shared with other work, and the
minimum is the figure least disturbed by it. Each cell gives the wall-clock time and, in
brackets, the CPU time of the process (all its threads), which other work on the machine
disturbs less. ``import`` is the time to import the estimator's subpackage
(``import mathlearn.cluster``, say; the peer's likewise), ``fit`` the first call of ``fit``
after it. Targets: first fit under 1 s cold and under 0.2 s warm.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

N_FEATURES = 10

# scikit-learn's equivalent of each estimator: (module, class, keyword arguments).
PEERS = {
    "AgglomerativeClustering": ("sklearn.cluster", "AgglomerativeClustering", {}),
    "BayesianLinearRegression": ("sklearn.linear_model", "BayesianRidge", {}),
    "FactorAnalysis": ("sklearn.decomposition", "FactorAnalysis", {}),
    "FastICA": ("sklearn.decomposition", "FastICA", {}),
    "FisherLDA": ("sklearn.discriminant_analysis", "LinearDiscriminantAnalysis", {}),
    "GaussianMixture": ("sklearn.mixture", "GaussianMixture", {}),
    "Isomap": ("sklearn.manifold", "Isomap", {}),
    "KMeans": ("sklearn.cluster", "KMeans", {"n_init": 1}),
    "KernelPCA": ("sklearn.decomposition", "KernelPCA", {}),
    "Lasso": ("sklearn.linear_model", "Lasso", {}),
    "LinearRegression": ("sklearn.linear_model", "LinearRegression", {}),
    "MDS": ("sklearn.manifold", "MDS", {}),
    "MiniBatchKMeans": ("sklearn.cluster", "MiniBatchKMeans", {"n_init": 1}),
    "NMF": ("sklearn.decomposition", "NMF", {}),
    "PCA": ("sklearn.decomposition", "PCA", {}),
    "PLSRegression": ("sklearn.cross_decomposition", "PLSRegression", {}),
    "Ridge": ("sklearn.linear_model", "Ridge", {}),
    "SGDRegressor": ("sklearn.linear_model", "SGDRegressor", {}),
    "SpectralClustering": ("sklearn.cluster", "SpectralClustering", {}),
    "SpectralEmbedding": ("sklearn.manifold", "SpectralEmbedding", {}),
}

# Run in the child: build the data (untimed), then time the import and the first fit.
_CHILD = r"""
import importlib, json, sys, time
import numpy as np

kind, module, cls, kwargs, n, d = json.loads(sys.argv[1])
rng = np.random.default_rng(0)
X = rng.normal(size=(n, d))
y = X @ rng.normal(size=d) + 0.5 * rng.normal(size=n)
if kind == "classifier":
    y = (y > 0).astype(int)
elif kind == "nonnegative":
    X = np.abs(X)
elif kind == "binary":
    X = (X > 0).astype(float)
elif kind == "univariate":
    X = X[:, :1]
t0, c0 = time.perf_counter(), time.process_time()
est_cls = getattr(importlib.import_module(module), cls)
t1, c1 = time.perf_counter(), time.process_time()
est = est_cls(**kwargs)
if kind in ("regressor", "classifier"):
    est.fit(X, y)
else:
    est.fit(X)
t2, c2 = time.perf_counter(), time.process_time()
print(json.dumps([t1 - t0, t2 - t1, c1 - c0, c2 - c1]))
"""


def _kind(name: str, est) -> str:
    from sklearn.base import is_classifier, is_regressor

    if name == "NMF":
        return "nonnegative"
    if name == "BernoulliMixture":
        return "binary"
    if name.endswith("Basis"):
        return "univariate"
    if is_classifier(est):
        return "classifier"
    if is_regressor(est):
        return "regressor"
    return "unsupervised"


def _child(spec, cache_dir: str) -> tuple[float, float, float, float]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(spec)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return tuple(json.loads(out.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--no-peer", action="store_true", help="skip scikit-learn's fits")
    args = parser.parse_args(argv)

    from mathlearn.utils import all_estimators

    print(
        f"first fit on {args.n}x{N_FEATURES}, minimum of {args.repeats} fresh processes (s); "
        "ratio = ours cold / peer\n"
    )
    print(
        "| estimator | import | fit, cold cache | fit, warm cache | peer import | peer fit "
        "| ratio cold | ratio warm |\n| --- | --- | --- | --- | --- | --- | --- | --- |"
    )
    for name, cls in all_estimators():
        if args.names and name not in args.names:
            continue
        module = cls.__module__.rsplit(".", 1)[0]
        kind = _kind(name, cls())
        spec = [kind, module, name, {}, args.n, N_FEATURES]
        cold, warm = [], []
        for _ in range(args.repeats):
            with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
                cold.append(_child(spec, cache))
                warm.append(_child(spec, cache))

        def cell(runs, i, fmt=".3f"):
            return f"{min(r[i] for r in runs):{fmt}} ({min(r[i + 2] for r in runs):{fmt}})"

        t_cold = min(c[1] for c in cold)
        t_warm = min(w[1] for w in warm)
        peer_cells = ["", "", "", ""]
        if name in PEERS and not args.no_peer:
            pmod, pcls, pkw = PEERS[name]
            with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
                peer = [
                    _child([kind, pmod, pcls, pkw, args.n, N_FEATURES], cache)
                    for _ in range(args.repeats)
                ]
            p_fit = min(p[1] for p in peer)
            peer_cells = [
                cell(peer, 0),
                cell(peer, 1, ".4f"),
                f"{t_cold / p_fit:.1f}",
                f"{t_warm / p_fit:.1f}",
            ]
        cells = [cell(cold + warm, 0), cell(cold, 1), cell(warm, 1, ".4f"), *peer_cells]
        print(f"| {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    t = time.perf_counter()
    main()
    print(f"\n(total {time.perf_counter() - t:.0f} s)")
