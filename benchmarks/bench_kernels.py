"""Kernel Gram matrices (and their gradients) against scikit-learn's kernels, same data.

Target of the kernels issue: the ARD RBF Gram matrix with its gradient at N = 2 000, D = 10,
ratio <= 1.0. The other rows (no gradient, Y given, Matérn 5/2, rational quadratic, a small
size) show the general cost. Run with ``python benchmarks/run.py kernels``.
"""

from __future__ import annotations

import numpy as np
import sklearn.gaussian_process.kernels as skk

import mathlearn.kernels as mlk
from _harness import HEADER, compare
from _sweep_cases import Case


def _sweep_data(n, d):
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, d)), rng.uniform(0.5, 2.0, size=d)


# The size sweep (``sweep.py``): the Gram matrix with its (N, N, D) gradient is quadratic in
# memory, so N stops at 4 000 (1.3 GB of gradient at D = 10).
SWEEP_CASES = [
    Case(
        "kernels",
        "ARD RBF with gradient",
        _sweep_data,
        lambda X, ls: lambda: mlk.RBF(ls)(X, eval_gradient=True),
        lambda X, ls: lambda: skk.RBF(ls)(X, eval_gradient=True),
        d=10,
        max_n=4_000,
        wide=None,
    ),
    Case(
        "kernels",
        "ARD RBF Gram",
        _sweep_data,
        lambda X, ls: lambda: mlk.RBF(ls)(X),
        lambda X, ls: lambda: skk.RBF(ls)(X),
        d=10,
        max_n=10_000,
        wide=None,
    ),
]


def main() -> None:
    rng = np.random.default_rng(0)
    for n, d, reps in ((200, 10, 20), (2000, 10, 5)):
        X = rng.normal(size=(n, d))
        ls = rng.uniform(0.5, 2.0, size=d)
        ours, peer = mlk.RBF(ls), skk.RBF(ls)
        compare(
            f"ARD RBF with gradient, N={n}, D={d}",
            lambda X=X, ours=ours: ours(X, eval_gradient=True),
            lambda X=X, peer=peer: peer(X, eval_gradient=True),
            repeats=reps,
            target=1.0,
        )
        compare(
            f"ARD RBF Gram, N={n}, D={d}",
            lambda X=X, ours=ours: ours(X),
            lambda X=X, peer=peer: peer(X),
            repeats=reps,
        )
        Y = rng.normal(size=(n // 2, d))
        compare(
            f"ARD RBF k(X, Y), N={n}, M={n // 2}, D={d}",
            lambda X=X, Y=Y, ours=ours: ours(X, Y),
            lambda X=X, Y=Y, peer=peer: peer(X, Y),
            repeats=reps,
        )
        compare(
            f"Matern 5/2 isotropic with gradient, N={n}, D={d}",
            lambda X=X: mlk.Matern(1.3, nu=2.5)(X, eval_gradient=True),
            lambda X=X: skk.Matern(1.3, nu=2.5)(X, eval_gradient=True),
            repeats=reps,
        )
        compare(
            f"1.5 * RationalQuadratic + White with gradient, N={n}, D={d}",
            lambda X=X: (1.5 * mlk.RationalQuadratic(1.1, 0.7) + mlk.WhiteKernel(0.1))(
                X, eval_gradient=True
            ),
            lambda X=X: (1.5 * skk.RationalQuadratic(1.1, 0.7) + skk.WhiteKernel(0.1))(
                X, eval_gradient=True
            ),
            repeats=reps,
        )


if __name__ == "__main__":
    print(HEADER)
    main()
