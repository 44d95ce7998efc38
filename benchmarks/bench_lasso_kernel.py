"""The compiled lasso (``mathlearn._ext._cd``) against scikit-learn, and against another build.

Alternates, in one process on the sweep's regression data, our fit, scikit-learn's, and
(with ``--before PATH``) our fit through another build of ``_cd`` (e.g. a copy of the
library saved before a change to ``_cd.c``), and prints the minimum and median times and
the ratios. Run with one BLAS thread::

    cd benchmarks && OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONPATH=../src \\
        python bench_lasso_kernel.py --reps 7 [--before /path/to/old/_cd.so]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import Lasso as SkLasso
from sklearn.linear_model import lasso_path as sk_lasso_path

from mathlearn import _ext
from mathlearn.linear_model import Lasso, lasso_path


def _data(n, d):
    # the data of sweep.py's regression cases
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    y = X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n)
    return X, y


CASES = {
    "Lasso 500x5000": (
        (500, 5000),
        lambda X, y: Lasso(0.05).fit(X, y).coef_,
        lambda X, y: SkLasso(0.05).fit(X, y).coef_,
    ),
    "Lasso 10000x20": (
        (10000, 20),
        lambda X, y: Lasso(0.05).fit(X, y).coef_,
        lambda X, y: SkLasso(0.05).fit(X, y).coef_,
    ),
    "lasso_path 500x5000": (
        (500, 5000),
        lambda X, y: lasso_path(X, y, n_alphas=30)[1],
        lambda X, y: sk_lasso_path(X, y, n_alphas=30)[1],
    ),
}


def _use(path):
    """Route ``_ext.load("_cd")`` to ``path`` (None: the installed build)."""
    _ext.find = (lambda name: path if name == "_cd" else _FIND(name)) if path else _FIND
    _ext._load.cache_clear()


_FIND = _ext.find


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--cases", nargs="*", default=list(CASES))
    parser.add_argument("--before", type=Path, default=None, help="another build of _cd")
    args = parser.parse_args()
    if _ext.load("_cd") is None:
        raise SystemExit("mathlearn._ext._cd is not built")
    warnings.simplefilter("ignore")  # the wide single fit stops at max_iter on both sides
    runs = ["ours", "peer"] + (["before"] if args.before else [])
    for name in args.cases:
        shape, ours, peer = CASES[name]
        X, y = _data(*shape)
        times = {k: [] for k in runs}
        out = {}
        for _ in range(args.reps):
            for k in runs:
                _use(args.before if k == "before" else None)
                t0 = time.perf_counter()
                out[k] = (peer if k == "peer" else ours)(X, y)
                times[k].append(time.perf_counter() - t0)
        _use(None)

        def stat(k, times=times):
            return min(times[k]), statistics.median(times[k])

        line = f"{name}: ours {stat('ours')[0] * 1e3:.1f} / {stat('ours')[1] * 1e3:.1f} ms"
        line += f", peer {stat('peer')[0] * 1e3:.1f} / {stat('peer')[1] * 1e3:.1f} ms"
        ratio = [a / b for a, b in zip(stat("ours"), stat("peer"), strict=True)]
        line += f", ours/peer (min / median) {ratio[0]:.2f} / {ratio[1]:.2f}"
        if args.before:
            before = [a / b for a, b in zip(stat("before"), stat("peer"), strict=True)]
            line += f"; before/peer {before[0]:.2f} / {before[1]:.2f}"
            change = np.max(np.abs(out["ours"] - out["before"]))
            line += f", ours/before {stat('ours')[0] / stat('before')[0]:.2f} (min)"
            line += f", max |coef - before| {change:.1e}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
