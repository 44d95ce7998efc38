"""Peak resident memory that one fit of a sweep case adds, ours and the peer (Linux only).

``python benchmarks/sweep_rss.py CASE NxD [NxD ...] [--runs 3]``

The sweep's memory column is ``tracemalloc``'s peak, which sees NumPy's allocations but not
those made in C: libsvm's kernel cache and the SMO helper's cache, for instance, are
invisible to it, so for the kernel SVMs it compares our Python-side arrays with almost
nothing. Here each side fits in a fresh process: the case's libraries are loaded and a
small fit is made first (first-call allocations), the data are made, the peak resident
set size is reset (``/proc/self/clear_refs``, value 5), one fit runs, and the figure is
``VmHWM`` minus the ``VmRSS`` just before the fit. The minimum over ``--runs`` processes is
reported (page-granular, so sizes below about 0.1 MB are noise).

``--warm-same`` makes the unmeasured fit one of the measured shape instead, as the sweep's
memory child does: one-time allocations on code paths that a 50-row fit does not reach
(ARPACK and LAPACK buffers for a spectral embedding, which takes dense LAPACK below 500
points) then stay out of the figure. Use it with the sweep's allocator settings
(``MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=131072``): with glibc's defaults the
measured fit reuses the pages the first one freed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

_CHILD = r"""
import gc, sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {here!r})
from _sweep_cases import find_case
case = find_case({name!r})
getattr(case, {side!r})(*case.data({warm_n}, {d}))()
fit = getattr(case, {side!r})(*case.data({n}, {d}))
gc.collect()

def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1])

with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
base = status("VmRSS:")
fit()
print(status("VmHWM:") - base)
"""


def peak_kib(name: str, side: str, n: int, d: int, warm_same: bool = False) -> int:
    """kB of resident memory one fit adds, in a fresh process."""
    warm_n = n if warm_same else 50
    code = _CHILD.format(here=str(HERE), name=name, side=side, n=n, d=d, warm_n=warm_n)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=HERE)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return int(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("case")
    parser.add_argument("shapes", nargs="+", help="NxD")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--warm-same", action="store_true", help="warm up with a fit of the measured shape"
    )
    args = parser.parse_args(argv)
    for shape in args.shapes:
        n, d = (int(v) for v in shape.split("x"))
        mb = [
            min(peak_kib(args.case, side, n, d, args.warm_same) for _ in range(args.runs)) / 1024
            for side in ("ours", "peer")
        ]
        print(
            f"{args.case} {n}x{d}: peak RSS added by one fit, ours {mb[0]:.1f} MB, "
            f"peer {mb[1]:.1f} MB",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
