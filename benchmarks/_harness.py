"""Timing harness: ours against the peer, on the same data, in one process.

Each case is timed ``repeats`` times after one warm-up call (which also triggers any numba
compilation), alternating ours and the peer so that machine noise hits both alike; the
median of each is reported with the ratio ours/peer (below 1 means we are faster).
"""

from __future__ import annotations

import gc
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Timing:
    name: str
    ours: float
    peer: float
    target: float | None = None

    @property
    def ratio(self) -> float:
        return self.ours / self.peer

    def row(self) -> str:
        verdict = ""
        if self.target is not None:
            verdict = "met" if self.ratio <= self.target else "NOT met"
            verdict = f"{self.target:g} ({verdict})"
        return (
            f"| {self.name} | {self.ours * 1e3:.1f} | {self.peer * 1e3:.1f} | "
            f"{self.ratio:.2f} | {verdict} |"
        )


HEADER = (
    "| case | ours (ms) | peer (ms) | ratio ours/peer | target |\n| --- | --- | --- | --- | --- |"
)


def compare(
    name: str,
    ours: Callable[[], object],
    peer: Callable[[], object],
    *,
    repeats: int = 5,
    target: float | None = None,
) -> Timing:
    """Time ``ours()`` against ``peer()`` and print a Markdown table row."""
    ours()
    peer()
    t_ours, t_peer = [], []
    for _ in range(repeats):
        for fn, acc in ((ours, t_ours), (peer, t_peer)):
            gc.collect()
            t0 = time.perf_counter()
            fn()
            acc.append(time.perf_counter() - t0)
    timing = Timing(name, statistics.median(t_ours), statistics.median(t_peer), target)
    print(timing.row(), flush=True)
    return timing


def machine() -> str:
    """One line describing where the figures were measured."""
    return f"{platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores"
