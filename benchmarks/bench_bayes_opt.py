"""Bayesian optimisation against scikit-optimize: ``python benchmarks/run.py bayes_opt``.

Branin (2-D, 30 evaluations), Hartmann-6 (60) and a noisy 10-D quadratic (60): the median
and interquartile range over seeds of the simple regret, and the seconds per iteration, for
``mathlearn.bayes_opt.minimize`` with its defaults and ``skopt.gp_minimize`` with its
defaults (``gp_hedge``), both with 10 initial points.

Simple regret: the noise-free ``f`` at the *recommended* point minus the global minimum. For
the noise-free problems the recommended point is the best evaluation; for the noisy problem
it is the evaluated point of smallest posterior mean under the surrogate fitted to the first
``n`` evaluations (ours: ``BayesianOptimizer.recommend()``; scikit-optimize: its model
fitted to those ``n`` points), never the best noisy observation.

scikit-optimize is slow (seconds per iteration), so its runs are cached in a JSON file
(``BO_CACHE``, default ``/tmp/bo_skopt_cache.json``; never committed) and reused when ours
is re-run. ``--peer`` fills the cache only; ``BO_SEEDS`` (default 10) sets the seeds;
``BO_PROBLEMS`` (comma-separated names: branin, hartmann6, quadratic10) restricts the
problems; ``BO_CACHE`` may list several files (read all, write the first) and
``BO_CACHED_ONLY=1`` keeps only the seeds whose scikit-optimize run is cached.
``BO_OURS_CACHE`` names a JSON file where our runs are kept the same way (to run the problems
in separate processes and print one table from both caches afterwards). ``--timing`` times
seconds per iteration only, the two sides alternating in one process (25 evaluations).

A run is deterministic given its seed on one machine, but a trajectory amplifies rounding
differences: scikit-optimize's regrets change with the BLAS thread count and the CPU (ours,
with matrices too small for BLAS to thread, with the CPU). Compare figures taken with the same
``OPENBLAS_NUM_THREADS=1`` on the same machine, and re-run the peer there rather than reuse a
cache from elsewhere.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings

import numpy as np

from mathlearn.bayes_opt import BayesianOptimizer


def branin(x):
    b, c = 5.1 / (4 * np.pi**2), 5 / np.pi
    r, s, t = 6.0, 10.0, 1 / (8 * np.pi)
    return float((x[1] - b * x[0] ** 2 + c * x[0] - r) ** 2 + s * (1 - t) * np.cos(x[0]) + s)


_H_A = np.array(
    [
        [10, 3, 17, 3.5, 1.7, 8],
        [0.05, 10, 17, 0.1, 8, 14],
        [3, 3.5, 1.7, 10, 17, 8],
        [17, 8, 0.05, 10, 0.1, 14],
    ]
)
_H_P = 1e-4 * np.array(
    [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
)
_H_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])


def hartmann6(x):
    x = np.asarray(x, dtype=float)
    return float(-_H_ALPHA @ np.exp(-np.sum(_H_A * (x - _H_P) ** 2, axis=1)))


# f(x) = sum_i a_i (x_i - c_i)^2 on [-1, 1]^10, minimum 0 at c; observed with N(0, 0.1^2).
_Q_WEIGHT = np.linspace(0.5, 2.0, 10)
_Q_CENTRE = np.linspace(-0.6, 0.7, 10)


def quadratic10(x):
    return float(np.sum(_Q_WEIGHT * (np.asarray(x, dtype=float) - _Q_CENTRE) ** 2))


# name, f, bounds, f_min, noise sd, n_calls, checkpoints
PROBLEMS = {
    "branin": ("Branin", branin, [(-5.0, 10.0), (0.0, 15.0)], 0.397887357729738, 0.0, 30, (30,)),
    "hartmann6": ("Hartmann-6", hartmann6, [(0.0, 1.0)] * 6, -3.32236801141551, 0.0, 60, (30, 60)),
    "quadratic10": (
        "noisy quadratic 10-D (sd 0.1)",
        quadratic10,
        [(-1.0, 1.0)] * 10,
        0.0,
        0.1,
        60,
        (30, 60),
    ),
}
N_INITIAL = 10


def _noisy(f, noise, seed):
    rng = np.random.default_rng(1000 + seed)

    def g(x):
        return f(x) + noise * float(rng.standard_normal())

    return g


def run_ours(key, seed):
    """Regrets at the checkpoints and seconds per iteration of our optimiser's defaults."""
    _, f, bounds, f_min, noise, n_calls, checkpoints = PROBLEMS[key]
    g = _noisy(f, noise, seed)
    t0 = time.perf_counter()
    opt = BayesianOptimizer(
        bounds, n_initial=N_INITIAL, noise="gaussian" if noise > 0 else 1e-10, random_state=seed
    )
    regrets, t_rec = [], 0.0
    for i in range(n_calls):
        x = opt.ask()
        opt.tell(x, g(x))
        if i + 1 in checkpoints:
            t1 = time.perf_counter()
            x_rec = opt.recommend()[0]
            t_rec += time.perf_counter() - t1
            regrets.append(f(x_rec) - f_min)
    elapsed = time.perf_counter() - t0 - t_rec
    return regrets, elapsed / n_calls


def run_skopt(key, seed):
    """The same for ``skopt.gp_minimize`` with its defaults."""
    import skopt

    _, f, bounds, f_min, noise, n_calls, checkpoints = PROBLEMS[key]
    g = _noisy(f, noise, seed)
    t0 = time.perf_counter()
    res = skopt.gp_minimize(
        g,
        bounds,
        n_calls=n_calls,
        n_initial_points=N_INITIAL,
        noise="gaussian" if noise > 0 else 1e-10,
        random_state=seed,
    )
    elapsed = time.perf_counter() - t0
    xs = np.asarray(res.x_iters, dtype=float)
    ys = np.asarray(res.func_vals, dtype=float)
    regrets = []
    for n in checkpoints:
        if noise > 0:
            # res.models[k] was fitted to the first N_INITIAL + k evaluations.
            model = res.models[n - N_INITIAL]
            mu = model.predict(res.space.transform(res.x_iters[:n]))
            i = int(np.argmin(mu))
        else:
            i = int(np.argmin(ys[:n]))
        regrets.append(f(xs[i]) - f_min)
    return regrets, elapsed / n_calls


def _load(paths):
    cache = {}
    for path in paths:
        if os.path.exists(path):
            with open(path) as fh:
                cache.update(json.load(fh))
    return cache


def _save(path, cache):
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(cache, fh, indent=1)
    os.replace(tmp, path)


def _peer(cache, path, key, seed):
    tag = f"{key}/{seed}"
    if tag not in cache:
        r, t = run_skopt(key, seed)
        cache[tag] = {"regret": r, "s_per_iter": t}
        _save(path, cache)
    return cache[tag]["regret"], cache[tag]["s_per_iter"]


def _fmt(a):
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    return f"{med:.3g} [{q1:.3g}, {q3:.3g}]"


def timing(n_calls: int = 25, rounds: int = 2) -> None:
    """Seconds per iteration only: ours and ``gp_minimize`` alternating in one process on
    each problem, ``n_calls`` evaluations (10 initial), seeds ``0..rounds-1``, medians."""
    import skopt

    for key in PROBLEMS:
        _, f, bounds, _, noise, *_ = PROBLEMS[key]
        t_o, t_p = [], []
        for seed in range(rounds):
            g = _noisy(f, noise, seed)
            t0 = time.perf_counter()
            opt = BayesianOptimizer(
                bounds,
                n_initial=N_INITIAL,
                noise="gaussian" if noise > 0 else 1e-10,
                random_state=seed,
            )
            for _ in range(n_calls):
                x = opt.ask()
                opt.tell(x, g(x))
            t_o.append((time.perf_counter() - t0) / n_calls)
            g = _noisy(f, noise, seed)
            t0 = time.perf_counter()
            skopt.gp_minimize(
                g,
                bounds,
                n_calls=n_calls,
                n_initial_points=N_INITIAL,
                noise="gaussian" if noise > 0 else 1e-10,
                random_state=seed,
            )
            t_p.append((time.perf_counter() - t0) / n_calls)
        print(
            f"| {PROBLEMS[key][0]} | {n_calls} | {np.median(t_o):.3f} | {np.median(t_p):.3f} "
            f"| {np.median(t_o) / np.median(t_p):.2f} |",
            flush=True,
        )


def main() -> None:
    warnings.simplefilter("ignore")
    if "--timing" in sys.argv:
        timing()
        return
    paths = os.environ.get("BO_CACHE", "/tmp/bo_skopt_cache.json").split(",")
    path = paths[0]
    cached_only = bool(os.environ.get("BO_CACHED_ONLY"))
    seeds = range(int(os.environ.get("BO_SEEDS", "10")))
    keys = os.environ.get("BO_PROBLEMS", ",".join(PROBLEMS)).split(",")
    peer_only = "--peer" in sys.argv
    cache = _load(paths)
    ours_path = os.environ.get("BO_OURS_CACHE")
    ours_cache = _load([ours_path]) if ours_path else {}
    if not peer_only:
        print(
            "| problem | evaluations | regret ours: median [IQR] | regret skopt: median [IQR] "
            "| s / iteration ours | s / iteration skopt |"
        )
        print("| --- | --- | --- | --- | --- | --- |")
    for key in keys:
        name, *_, checkpoints = PROBLEMS[key]
        ours, peer, t_o, t_p = [], [], [], []
        for s in seeds:
            if cached_only and f"{key}/{s}" not in cache:
                continue
            r_p, tp = _peer(cache, path, key, s)
            peer.append(r_p)
            t_p.append(tp)
            if peer_only:
                print(key, s, r_p, f"{tp:.2f} s/it", flush=True)
                continue
            tag = f"{key}/{s}"
            if tag in ours_cache:
                r_o, to = ours_cache[tag]["regret"], ours_cache[tag]["s_per_iter"]
            else:
                r_o, to = run_ours(key, s)
                if ours_path:
                    ours_cache[tag] = {"regret": r_o, "s_per_iter": to}
                    _save(ours_path, ours_cache)
            ours.append(r_o)
            t_o.append(to)
            if os.environ.get("BO_VERBOSE"):
                print(key, s, "ours", r_o, f"{to:.2f}", "skopt", r_p, f"{tp:.2f}", flush=True)
        if peer_only or not ours:
            continue
        ours_a, peer_a = np.array(ours), np.array(peer)
        for j, n in enumerate(checkpoints):
            print(
                f"| {name} | {n} ({len(ours)} seeds) | {_fmt(ours_a[:, j])} "
                f"| {_fmt(peer_a[:, j])} "
                f"| {np.median(t_o):.2f} | {np.median(t_p):.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
