"""CPU time of sweep cases: ours and the peer alternating in one process, many repetitions.

``python benchmarks/sweep_cpu.py CASE NxD [NxD ...] [--reps 30] [--before PATH]``

On a shared machine a wall-clock cell of the sweep swings with other processes' load; the CPU
time of this process (``time.process_time``) is far less sensitive to it. Run with one BLAS
thread (``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1``): with more, process time adds up every
thread's time. Each repetition times one fit of ours and one of the peer, in alternating
order, after a warm-up fit of each; the script prints min and median of each side and of the
per-repetition ratio.

``--wall`` times the wall clock (``time.perf_counter``) instead, for runs with more than one
BLAS thread, where process time would add up the threads; ``--settle S`` sleeps ``S`` seconds
before each timed fit, so that the thread pools the other side left spinning have gone idle
(see ``sweep.py``'s ``--settle``).

``--before PATH`` also times the case's ``ours`` with ``PATH`` (another checkout's ``src``)
imported in a second process, alternating with the peer there, so a change can be compared
against the code it replaces on the same machine at the same time.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def measure(
    name: str, shape: tuple[int, int], reps: int, wall: bool = False, settle: float = 0.0
) -> dict:
    """CPU (or wall-clock) seconds of ``reps`` alternating fits of the case ``name``."""
    import warnings

    warnings.simplefilter("ignore")
    sys.path.insert(0, str(HERE))
    from _sweep_cases import find_case

    case = find_case(name)
    data = case.data(*shape)
    ours, peer = case.ours(*data), case.peer(*data)
    ours()
    peer()
    clock = time.perf_counter if wall else time.process_time
    t_ours, t_peer, ratios = [], [], []
    for i in range(reps):
        pair = ((ours, t_ours), (peer, t_peer))
        for fn, acc in pair if i % 2 == 0 else pair[::-1]:
            gc.collect()
            if settle:
                time.sleep(settle)
            t0 = clock()
            fn()
            acc.append(clock() - t0)
        ratios.append(t_ours[-1] / max(t_peer[-1], 1e-9))
    return {
        "ours": [min(t_ours), statistics.median(t_ours)],
        "peer": [min(t_peer), statistics.median(t_peer)],
        "ratio_of_min": min(t_ours) / max(min(t_peer), 1e-9),
        "median_ratio": statistics.median(ratios),
    }


def _child(
    src: str | None, name: str, shape: tuple[int, int], reps: int, wall: bool, settle: float
) -> dict:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    code = (
        f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import sweep_cpu; "
        f"print(json.dumps(sweep_cpu.measure({name!r}, {shape!r}, {reps!r}, {wall!r}, "
        f"{settle!r})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=HERE
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case")
    parser.add_argument("shapes", nargs="+", help="NxD, e.g. 10000x20")
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--before", default=None, help="src directory of the code to compare")
    parser.add_argument("--wall", action="store_true", help="time the wall clock, not CPU time")
    parser.add_argument("--settle", type=float, default=0.0, help="seconds of sleep before a fit")
    args = parser.parse_args(argv)
    for text in args.shapes:
        n, d = (int(v) for v in text.lower().split("x"))
        sides = [("after" if args.before else "ours", None)]
        if args.before:
            sides = [("before", args.before), *sides]
        for label, src in sides:
            r = _child(src, args.case, (n, d), args.reps, args.wall, args.settle)
            print(
                f"{args.case} {n}x{d} {label}: ours min/med {r['ours'][0] * 1e3:.2f}/"
                f"{r['ours'][1] * 1e3:.2f} ms, peer {r['peer'][0] * 1e3:.2f}/"
                f"{r['peer'][1] * 1e3:.2f} ms, ratio of min {r['ratio_of_min']:.2f}, "
                f"median ratio {r['median_ratio']:.2f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
