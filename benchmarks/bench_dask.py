"""The sufficient-statistic estimators on Dask arrays.

(a) In memory (``--part memory``): the Dask path on a ~1 GB float64 array (threaded
    scheduler, ~64 MB row blocks) against the NumPy path of the same estimator on the same
    array; target: Dask at most 2x NumPy. Equal work: LinearRegression (a well-conditioned
    design: no refinement on either path), PCA(10) by the covariance route (the one "auto"
    takes on both paths), KMeans(10) from the same centres for exactly 10 Lloyd steps
    (``tol=0``, ``max_iter=10``).

(b) Out of core (``--part ooc``): a float64 design of ``--size`` GB (default 40, the issue's
    size), generated lazily by ``dask.array.random`` (never materialised: each pass draws
    its blocks again), fitted by LinearRegression, PCA(10) and KMeans(10) on a
    ``LocalCluster`` of 2 worker processes (1 thread each) with a memory limit of
    ``max(size / 10, 1)`` GB each (4 GB at the issue's size: the design is 5x the workers'
    memory), in row blocks of 32 MB,
    against dask-ml's equivalents on the same lazy design in the same cluster:
    ``dask_ml.linear_model.LinearRegression`` (its default ADMM solver, ``max_iter=100``,
    as shipped), ``dask_ml.decomposition.PCA(10)`` (its "auto" solver) and
    ``dask_ml.cluster.KMeans(10)`` (k-means‖, its defaults); ours: defaults (KMeans with
    k-means‖ seeding, ``n_init=1`` as dask-ml). Peak resident memory is the largest sum, over
    the scheduler's process and the workers, of their resident set sizes, sampled every
    0.2 s. Each fit is timed once, first call included (numba compiles in each worker).

Run: ``python benchmarks/bench_dask.py --part memory`` and
``python benchmarks/bench_dask.py --part ooc --size 40`` (``--size`` in GB).
"""

from __future__ import annotations

import argparse
import os
import threading
import time
import warnings

import numpy as np

from _harness import compare, machine


def bench_memory(gb: float = 1.0, only: str | None = None) -> None:
    import dask.array as da

    import dask
    from mathlearn.cluster import KMeans
    from mathlearn.decomposition import PCA
    from mathlearn.linear_model import LinearRegression

    d = 50
    n = int(gb * 1e9 / 8 / d)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    y = X @ rng.standard_normal(d) + rng.standard_normal(n)
    rows = max(1, int(64e6 / 8 / d))
    Xd = da.from_array(X, chunks=(rows, d))
    yd = da.from_array(y, chunks=rows)
    init = X[:10].copy()
    print(f"in memory: {n} x {d} float64 = {X.nbytes / 1e9:.2f} GB, blocks of {rows} rows")
    with dask.config.set(scheduler="threads"):
        if only in (None, "LinearRegression"):
            compare(
                "LinearRegression, Dask / NumPy",
                lambda: LinearRegression().fit(Xd, yd),
                lambda: LinearRegression().fit(X, y),
                repeats=1,
                target=2.0,
            )
        if only is not None:
            return
        compare(
            "PCA(10), Dask / NumPy",
            lambda: PCA(10).fit(Xd),
            lambda: PCA(10).fit(X),
            repeats=1,
            target=2.0,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # max_iter=10 on purpose
            compare(
                "KMeans(10), 10 Lloyd steps, Dask / NumPy",
                lambda: KMeans(10, init=init, n_init=1, max_iter=10, tol=0.0).fit(Xd),
                lambda: KMeans(10, init=init, n_init=1, max_iter=10, tol=0.0).fit(X),
                repeats=1,
                target=2.0,
            )


class _PeakRSS:
    """Largest total resident memory of this process and its children, sampled."""

    def __init__(self, interval: float = 0.2):
        import psutil

        self._proc = psutil.Process()
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _total(self) -> int:
        total = 0
        for p in [self._proc, *self._proc.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except Exception:  # a worker restarting
                pass
        return total

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self._total())
            time.sleep(self.interval)

    def __enter__(self):
        self.peak = self._total()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def bench_out_of_core(size_gb: float, d: int = 20, only: str | None = None) -> None:
    import dask.array as da
    import dask_ml.cluster
    import dask_ml.decomposition
    import dask_ml.linear_model
    from distributed import Client, LocalCluster

    from mathlearn.cluster import KMeans
    from mathlearn.decomposition import PCA
    from mathlearn.linear_model import LinearRegression

    n = int(size_gb * 1e9 / 8 / d)
    rows = max(1, int(32e6 / 8 / d))
    # the 4 GB per worker for 40 GB; never below 1 GB (a worker process with NumPy,
    # SciPy and numba loaded holds ~0.3 GB before any data)
    mem = max(size_gb / 10, 1.0)
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        memory_limit=f"{mem:.3f}GB",
        dashboard_address=":0",  # a free port: never the default 8787 another cluster holds
        silence_logs=40,
    )
    client = Client(cluster)

    def _warm():
        # Both libraries' imports on every worker before any timing, so neither side pays
        # a worker's first import (several seconds of NumPy/SciPy/scikit-learn loading).
        import dask_ml.cluster
        import dask_ml.decomposition
        import dask_ml.linear_model  # noqa: F401

        import mathlearn.cluster
        import mathlearn.decomposition
        import mathlearn.linear_model  # noqa: F401

    client.run(_warm)
    rng = da.random.default_rng(0)
    # Ten Gaussian clusters (row i about centre i mod 10; centres ~6 standard deviations
    # apart): k-means has structure to find, and the design is well conditioned.
    centres = np.random.default_rng(1).normal(scale=6.0, size=(10, d))

    def add_centres(B, block_info=None):
        start = block_info[0]["array-location"][0][0]
        return B + centres[(start + np.arange(B.shape[0])) % 10]

    X = rng.standard_normal((n, d), chunks=(rows, d)).map_blocks(add_centres, dtype=float)
    w = np.linspace(-1.0, 1.0, d)
    y = X @ w + 0.5 + rng.standard_normal(n, chunks=rows)
    print(
        f"out of core: {n} x {d} float64 = {n * d * 8 / 1e9:.1f} GB (lazy, {len(X.chunks[0])} "
        f"blocks of {rows} rows), LocalCluster 2 workers x {mem:.2f} GB"
    )
    print(
        "| estimator | ours (s) | peak RSS ours (GB) | dask-ml (s) "
        "| peak RSS dask-ml (GB) | ratio |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    cases = {
        "PCA(10)": (
            lambda: PCA(10).fit(X),
            lambda: dask_ml.decomposition.PCA(10, random_state=0).fit(X),
        ),
        "KMeans(10)": (
            lambda: KMeans(10, random_state=0, n_init=1).fit(X),
            lambda: dask_ml.cluster.KMeans(10, random_state=0).fit(X),
        ),
        "LinearRegression": (
            lambda: LinearRegression().fit(X, y),
            lambda: dask_ml.linear_model.LinearRegression().fit(X, y),
        ),
    }
    for name, (ours, peer) in cases.items():
        if only and only != name:
            continue
        out = []
        for fn in (ours, peer):
            client.run(__import__("gc").collect)
            with _PeakRSS() as rss, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                try:
                    fn()
                except MemoryError as exc:  # a library that gathers more than a worker holds
                    print(f"|   {name}: {type(exc).__name__}: {str(exc)[:120]} | | | | | |")
                    out.append(None)
                    continue
                dt = time.perf_counter() - t0
            out.append((dt, rss.peak / 1e9))
        cells = [f"{r[0]:.1f} | {r[1]:.2f}" if r else "failed | -" for r in out]
        ratio = f"{out[0][0] / out[1][0]:.2f}" if out[0] and out[1] else "-"
        print(f"| {name} | {cells[0]} | {cells[1]} | {ratio} |", flush=True)
    client.close()
    cluster.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["memory", "ooc", "all"], default="all")
    parser.add_argument("--size", type=float, default=40.0, help="out-of-core design, GB")
    parser.add_argument("--memory-size", type=float, default=1.0, help="in-memory array, GB")
    parser.add_argument(
        "--only", default=None, help="one estimator (LinearRegression only for --part memory)"
    )
    args = parser.parse_args()
    print(machine(), f"(load average {os.getloadavg()[0]:.1f})")
    if args.part in ("memory", "all"):
        bench_memory(args.memory_size, only=args.only)
    if args.part in ("ooc", "all"):
        bench_out_of_core(args.size, only=args.only)


if __name__ == "__main__":
    main()
