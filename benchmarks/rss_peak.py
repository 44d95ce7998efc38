"""Peak resident memory of one fit of a sweep case, ours and the peer, each in a fresh process.

``python benchmarks/rss_peak.py --cases NAME ... --sizes 10000 100000 [--repeats 3]``

The sweep's memory column is ``tracemalloc``'s peak, which sees what Python and NumPy allocate
but not what compiled code allocates with ``malloc`` (scikit-learn's Cython trees keep their
sample indices, sort buffers and nodes there; our C helpers keep their workspaces there). This
script measures what the operating system sees instead: in a fresh process, after the
libraries are imported, the data made and one warm-up fit done, the kernel's high-water mark
of resident memory is reset (``/proc/self/clear_refs``), one fit runs, and the new
high-water mark minus the resident memory before the fit is reported (Linux only). The
fitted model is kept alive until after the reading, as in the sweep. Each side runs in its
own process, ``--repeats`` times; the median is reported. glibc is told to give freed
memory back at once (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``), so that what
the warm-up freed does not absorb the fit's allocations.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

_CHILD = """
import sys, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {here!r})
from _sweep_cases import find_case

def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(key)

case = find_case({name!r})
data = case.data({n}, {d})
fn = case.{side}(*data)
fn()  # warm-up: first-call allocations (imports, caches) are not the fit's
before = status("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
model = fn()
print(status("VmHWM") - before)
"""


def peak(name: str, side: str, n: int, d: int) -> int:
    code = _CHILD.format(here=str(HERE), name=name, side=side, n=n, d=d)
    # glibc: a fixed mmap threshold and immediate trimming, so that memory freed by the
    # warm-up goes back to the system instead of hiding the fit's allocations.
    env = {
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MALLOC_MMAP_THRESHOLD_": "65536",
        "MALLOC_TRIM_THRESHOLD_": "0",
    }
    import os

    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        cwd=HERE,
        check=True,
    )
    return int(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", required=True)
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000])
    parser.add_argument("--d", type=int, default=None, help="features (default: the case's)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from _sweep_cases import find_case

    print("| case | N x D | ours (MB) | peer (MB) | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for name in args.cases:
        case = find_case(name)
        d = args.d or case.d
        for n in args.sizes:
            ours = statistics.median(peak(name, "ours", n, d) for _ in range(args.repeats))
            peer = statistics.median(peak(name, "peer", n, d) for _ in range(args.repeats))
            print(
                f"| {name} | {n}x{d} | {ours / 2**20:.1f} | {peer / 2**20:.1f} | "
                f"{ours / max(peer, 1):.2f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
