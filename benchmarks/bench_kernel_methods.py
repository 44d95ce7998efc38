"""Kernel ridge regression, Nyström and random Fourier features against scikit-learn.

Targets of the kernels issue: ``KernelRidge`` fit at N = 5 000 (RBF, D = 10) ratio <= 1.0
against ``sklearn.kernel_ridge.KernelRidge``; ``Nystroem`` (100 landmarks) and
``RandomFourierFeatures`` (50 frequencies = 100 features, against ``RBFSampler`` with 100
components) transforming 100 000 points, ratio <= 1.0. N = 100 and 1 000 show the small sizes.
Run with ``python benchmarks/run.py kernel_methods``.
"""

from __future__ import annotations

import numpy as np
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.kernel_approximation import RBFSampler
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge

from _harness import HEADER, compare
from _sweep_cases import Case
from mathlearn.kernel_approximation import Nystroem, RandomFourierFeatures
from mathlearn.kernel_ridge import KernelRidge

GAMMA = 0.05  # exp(-0.05 ||x - y||^2) on standard normal data in 10 dimensions


def _regression(n, d):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    return X, np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n)


def _points(n, d):
    return (np.random.default_rng(0).standard_normal((n, d)),)


def _krr(cls):
    return lambda X, y: lambda: cls(alpha=0.1, kernel="rbf", gamma=GAMMA).fit(X, y)


def _nystroem_fit_transform(cls):
    return lambda X: (
        lambda: (
            cls(kernel="rbf", gamma=GAMMA, n_components=100, random_state=0)
            .fit(X[:1000])
            .transform(X)
        )
    )


SWEEP_CASES = [
    Case(
        "kernel_methods",
        "KernelRidge RBF fit",
        _regression,
        _krr(KernelRidge),
        _krr(SkKernelRidge),
        d=10,
        max_n=5_000,
        wide=None,
    ),
    Case(
        "kernel_methods",
        "Nystroem fit (1000 rows) + transform",
        _points,
        _nystroem_fit_transform(Nystroem),
        _nystroem_fit_transform(SkNystroem),
        d=10,
        max_n=1_000_000,
        wide=None,
    ),
    Case(
        "kernel_methods",
        "RandomFourierFeatures fit + transform (100 features)",
        _points,
        lambda X: (
            lambda: RandomFourierFeatures(
                50, length_scale=1 / np.sqrt(2 * GAMMA), random_state=0
            ).fit_transform(X)
        ),
        lambda X: (
            lambda: RBFSampler(gamma=GAMMA, n_components=100, random_state=0).fit_transform(X)
        ),
        d=10,
        max_n=1_000_000,
        wide=None,
    ),
]


def main() -> None:
    for n, reps in ((100, 20), (1000, 10), (5000, 3)):
        X, y = _regression(n, 10)
        compare(
            f"KernelRidge RBF fit, N={n}, D=10",
            _krr(KernelRidge)(X, y),
            _krr(SkKernelRidge)(X, y),
            repeats=reps,
            target=1.0 if n == 5000 else None,
        )
    (Xfit,) = _points(1000, 10)
    ours = Nystroem(kernel="rbf", gamma=GAMMA, n_components=100, random_state=0).fit(Xfit)
    peer = SkNystroem(kernel="rbf", gamma=GAMMA, n_components=100, random_state=0).fit(Xfit)
    rff = RandomFourierFeatures(50, length_scale=1 / np.sqrt(2 * GAMMA), random_state=0)
    rbs = RBFSampler(gamma=GAMMA, n_components=100, random_state=0)
    rff.fit(Xfit)
    rbs.fit(Xfit)
    for n, reps in ((100, 50), (1000, 20), (100_000, 5)):
        (X,) = _points(n, 10)
        target = 1.0 if n == 100_000 else None
        compare(
            f"Nystroem transform (100 landmarks), N={n}, D=10",
            lambda X=X: ours.transform(X),
            lambda X=X: peer.transform(X),
            repeats=reps,
            target=target,
        )
        compare(
            f"RandomFourierFeatures transform (100 features) vs RBFSampler, N={n}, D=10",
            lambda X=X: rff.transform(X),
            lambda X=X: rbs.transform(X),
            repeats=reps,
            target=target,
        )
    (Xfit,) = _points(5000, 10)
    compare(
        "Nystroem fit, 1000 landmarks of N=5000, D=10",
        lambda: Nystroem(gamma=GAMMA, n_components=1000, random_state=0).fit(Xfit),
        lambda: SkNystroem(gamma=GAMMA, n_components=1000, random_state=0).fit(Xfit),
        repeats=3,
    )


if __name__ == "__main__":
    print(HEADER)
    main()
