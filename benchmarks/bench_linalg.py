"""Benchmarks of mathlearn.utils.linalg's solves against SciPy's, on the same data.

``cho_solve`` calls LAPACK's ``potrs`` directly, the routine ``scipy.linalg.cho_solve``
calls after wrapping its inputs (array-API conversion and batching, per call). The two give
the same numbers bit for bit; what differs is the per-call overhead, which the variational
mixtures' sweeps and the Gaussian processes pay once per component or per step. Each case
times 1 000 solves in a loop (the harness reports the loop, in ms).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from _harness import compare
from mathlearn.utils.linalg import cho_solve, cholesky


def _loop(fn, L, B, times=1000):
    def run():
        for _ in range(times):
            fn(L, B)

    return run


def main() -> None:
    rng = np.random.default_rng(0)
    for n, k in ((10, 1), (10, 3), (100, 10), (1000, 10)):
        A = rng.normal(size=(n, n))
        L = cholesky(A @ A.T + n * np.eye(n))
        B = rng.normal(size=(n, k)) if k > 1 else rng.normal(size=n)
        times = 1000 if n <= 100 else 20
        compare(
            f"cho_solve n={n}, {k} right-hand side(s), {times} solves",
            _loop(cho_solve, L, B, times),
            _loop(lambda L, B: sla.cho_solve((L, True), B, check_finite=False), L, B, times),
            repeats=7,
        )


if __name__ == "__main__":
    from _harness import HEADER

    print(HEADER)
    main()
