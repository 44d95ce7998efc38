"""Variational Gaussian mixture against scikit-learn's ``BayesianGaussianMixture``.

Equal work: both start from the same random responsibilities (scikit-learn's
``_initialize_parameters`` is pointed at them, ours' initialisation likewise) and run the same
number of CAVI sweeps (``tol=0``, ``max_iter`` fixed), full covariances, stick-breaking prior,
``reg_covar=0`` for the peer (our model has no such term). The test suite checks that the two
give the same bounds and parameters from the same start. Sizes: 2 000 x 5, K = 5 and the
issue's 50 000 x 10, K = 10.

Run: ``python benchmarks/run.py mixture_vb`` (or ``python benchmarks/bench_mixture_vb.py``).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.datasets import make_blobs
from sklearn.mixture import BayesianGaussianMixture as SkBGM

import mathlearn.mixture._base as mixture_base
from _harness import compare
from mathlearn.mixture import BayesianGaussianMixture


def _case(n, d, k, iters):
    X, _ = make_blobs(n, n_features=d, centers=k, cluster_std=2.0, random_state=3)
    rng = np.random.default_rng(3)
    resp0 = rng.uniform(size=(n, k))
    resp0 /= resp0.sum(axis=1, keepdims=True)

    def ours():
        original = mixture_base._BaseMixture._initial_responsibilities
        mixture_base._BaseMixture._initial_responsibilities = lambda self, X, rng, sw=None: resp0
        try:
            return BayesianGaussianMixture(k, tol=0.0, max_iter=iters).fit(X)
        finally:
            mixture_base._BaseMixture._initial_responsibilities = original

    def peer():
        sk = SkBGM(n_components=k, tol=0.0, max_iter=iters, reg_covar=0.0)
        sk._initialize_parameters = lambda X, *a, **kw: sk._initialize(X, resp0)
        return sk.fit(X)

    compare(
        f"BayesianGaussianMixture full {n}x{d}, K={k}, {iters} sweeps (same start)",
        ours,
        peer,
        repeats=5 if n < 10_000 else 3,
        target=1.0,
    )


def main():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning: the sweep count is fixed
        _case(2_000, 5, 5, 50)
        _case(50_000, 10, 10, 50)


if __name__ == "__main__":
    from _harness import HEADER, machine

    print(f"machine: {machine()}\n\n{HEADER}")
    main()
