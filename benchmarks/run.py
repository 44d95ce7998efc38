"""Run every benchmark (or those named): ``python benchmarks/run.py [family ...]``.

A benchmark module is ``benchmarks/bench_<family>.py`` with a ``main()`` that prints Markdown
table rows through ``_harness.compare``. Within a family, ours and the peer run in one
process on the same data; each family gets a fresh process, so that the thread pools one
family starts (PyTorch's in the autodiff benchmark, say) cannot slow down the next.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import HEADER, machine  # noqa: E402


def _run_family(name: str) -> int:
    code = f"import sys; sys.path.insert(0, {str(HERE)!r}); import bench_{name} as b; b.main()"
    return subprocess.call([sys.executable, "-c", code], cwd=HERE)


def main(argv: list[str]) -> int:
    names = argv or sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))
    print(f"machine: {machine()}", flush=True)
    status = 0
    for name in names:
        print(f"\n### {name}\n\n{HEADER}", flush=True)
        status |= _run_family(name)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
