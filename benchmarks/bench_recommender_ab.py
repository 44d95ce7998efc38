"""Explicit-feedback epochs against scikit-surprise's SVD, paired: ours and the peer alternate
(the order swapped every pair) and each pair gives one ratio, of wall-clock and of CPU time.

``bench_recommender.py explicit`` times one call of each side, which at 100 ms a fit (450 000
ratings, 3 epochs) swings with the machine; this script repeats the pairs and prints the
median ratio and its range. Same data, split and settings as ``bench_recommender.py``: rank
32, learning rate 0.005, lambda 0.02, 3 sweeps / epochs; SGD MF with its defaults (the
objective after every epoch, which surprise does not compute) and with
``monitor_objective=False`` (the objective once, after the last epoch), as the harness.

Run: ``OPENBLAS_NUM_THREADS=1 python benchmarks/bench_recommender_ab.py [PAIRS] [--full]``
(``--full``: 50 000 users x 10 000 items, 4.5 M training ratings).
"""

from __future__ import annotations

import statistics
import sys
import time

from threadpoolctl import threadpool_limits

from bench_recommender import _surprise_trainset
from mathlearn.datasets import make_low_rank_ratings
from mathlearn.recommender import ALS, SGDMatrixFactorization, train_test_split


def main(pairs: int, full: bool) -> None:
    import surprise

    n_u, n_i, nnz = (50_000, 10_000, 5_000_000) if full else (5_000, 1_000, 500_000)
    r = make_low_rank_ratings(n_u, n_i, nnz, rank=32, noise=0.5, random_state=0)
    train, _ = train_test_split(r, 0.1, random_state=0)
    ts = _surprise_trainset(train)
    lr, reg, ep = 0.005, 0.02, 3
    cases = {
        "ALS (default: 3 CG steps)": lambda: ALS(
            32, regularization=reg, max_iter=ep, tol=0.0, random_state=0
        ).fit(train),
        "ALS solver='cholesky'": lambda: ALS(
            32, regularization=reg, max_iter=ep, tol=0.0, solver="cholesky", random_state=0
        ).fit(train),
        "SGD MF (defaults: users order, objective every epoch)": lambda: SGDMatrixFactorization(
            32, learning_rate=lr, regularization=reg, max_iter=ep, random_state=0
        ).fit(train),
        "SGD MF monitor_objective=False": lambda: SGDMatrixFactorization(
            32,
            learning_rate=lr,
            regularization=reg,
            max_iter=ep,
            monitor_objective=False,
            random_state=0,
        ).fit(train),
    }

    def peer():
        return surprise.SVD(n_factors=32, n_epochs=ep, lr_all=lr, reg_all=reg, random_state=0).fit(
            ts
        )

    print(f"{n_u} x {n_i}, {train.nnz} training ratings, {ep} sweeps / epochs, {pairs} pairs")
    with threadpool_limits(1):
        for fn in [*cases.values(), peer]:
            fn()
        for name, fn in cases.items():
            wall, cpu, last = [], [], {}
            for k in range(pairs):
                sides = [("ours", fn), ("peer", peer)]
                for side, g in sides if k % 2 == 0 else sides[::-1]:
                    t0, c0 = time.perf_counter(), time.process_time()
                    g()
                    last[side] = (time.perf_counter() - t0, time.process_time() - c0)
                wall.append(last["ours"][0] / last["peer"][0])
                cpu.append(last["ours"][1] / last["peer"][1])
            print(
                f"{name}: wall ratio {statistics.median(wall):.2f} [{min(wall):.2f}, "
                f"{max(wall):.2f}], CPU ratio {statistics.median(cpu):.2f} [{min(cpu):.2f}, "
                f"{max(cpu):.2f}] (last pair: ours {last['ours'][0] * 1e3:.0f} ms, surprise "
                f"{last['peer'][0] * 1e3:.0f} ms)",
                flush=True,
            )


if __name__ == "__main__":
    counts = [int(a) for a in sys.argv[1:] if a.isdigit()]
    main(counts[0] if counts else 7, "--full" in sys.argv)
