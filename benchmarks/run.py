"""Run every benchmark (or those named): ``python benchmarks/run.py [family ...]``.

A benchmark module is ``benchmarks/bench_<family>.py`` with a ``main()`` that prints Markdown
table rows through ``_harness.compare``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _harness import HEADER, machine  # noqa: E402


def main(argv: list[str]) -> int:
    names = argv or sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))
    print(f"machine: {machine()}")
    for name in names:
        print(f"\n### {name}\n\n{HEADER}")
        importlib.import_module(f"bench_{name}").main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
