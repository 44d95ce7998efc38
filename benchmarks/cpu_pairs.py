"""CPU time of sweep cases, ours and the peer alternating in one process.

``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/cpu_pairs.py --cases NAME ...
--sizes 1000 10000 [--wide] [--reps 10]``

On a machine shared with other jobs, wall-clock ratios move by tens of percent with the
load; the CPU time a process spends (``time.process_time``) is far less sensitive to it. For
each case and size this runs one warm-up fit of each side, then ``--reps`` rounds of (ours,
peer), each fit timed by the CPU time of this process (so set one BLAS / OpenMP thread: the
time of other threads is counted too, which would favour neither side but blur both), and
prints the minimum and median of each side and the median and range of the per-round
ratios. Rounds stop early after two minutes (at least three rounds).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", required=True)
    parser.add_argument("--sizes", nargs="+", type=int, default=[1_000])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--wide", action="store_true", help="also the case's wide shape")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    sys.path.insert(0, str(HERE))
    import sweep

    cases = {c.name: c for c in sweep.all_cases()}
    print(
        "| case | N x D | ours min / median (ms) | peer min / median (ms) | ratio median [range] |"
    )
    print("| --- | --- | --- | --- | --- |")
    for name in args.cases:
        case = cases[name]
        shapes = [(n, case.d) for n in args.sizes if n <= case.max_n]
        if args.wide and case.wide is not None:
            shapes.append(case.wide)
        for n, d in shapes:
            data = case.data(n, d)
            ours, peer = case.ours(*data), case.peer(*data)
            ours()
            peer()
            t_ours, t_peer = [], []
            start = time.perf_counter()
            for r in range(args.reps):
                for fn, acc in ((ours, t_ours), (peer, t_peer)):
                    gc.collect()
                    t0 = time.process_time()
                    fn()
                    acc.append(time.process_time() - t0)
                if time.perf_counter() - start > 120 and r >= 2:
                    break
            ratios = [a / b for a, b in zip(t_ours, t_peer, strict=True)]
            print(
                f"| {name} | {n}x{d} | {min(t_ours) * 1e3:.1f} / "
                f"{statistics.median(t_ours) * 1e3:.1f} | {min(t_peer) * 1e3:.1f} / "
                f"{statistics.median(t_peer) * 1e3:.1f} | {statistics.median(ratios):.2f} "
                f"[{min(ratios):.2f}-{max(ratios):.2f}] ({len(ratios)} rounds) |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
