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
from _sweep_cases import Case
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


def _sweep_data(n, d, k=5):
    X, _ = make_blobs(n, n_features=d, centers=k, cluster_std=2.0, random_state=3)
    rng = np.random.default_rng(3)
    resp0 = rng.uniform(size=(n, k))
    resp0 /= resp0.sum(axis=1, keepdims=True)
    return X, resp0


def _sweep_pair(prior_type, sweeps=50):
    """Both sides from the same random responsibilities, ``sweeps`` CAVI sweeps each
    (``tol=0``), K = 5, full covariances, the given weight prior; ``reg_covar=0`` for the
    peer (our model has no such term)."""

    def ours(X, resp0):
        def fit():
            original = mixture_base._BaseMixture._initial_responsibilities
            mixture_base._BaseMixture._initial_responsibilities = lambda self, X, rng, sw=None: (
                resp0
            )
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    return BayesianGaussianMixture(
                        resp0.shape[1],
                        tol=0.0,
                        max_iter=sweeps,
                        weight_concentration_prior_type=prior_type,
                    ).fit(X)
            finally:
                mixture_base._BaseMixture._initial_responsibilities = original

        return fit

    def peer(X, resp0):
        def fit():
            sk = SkBGM(
                n_components=resp0.shape[1],
                tol=0.0,
                max_iter=sweeps,
                reg_covar=0.0,
                weight_concentration_prior_type=prior_type,
            )
            sk._initialize_parameters = lambda X, *a, **kw: sk._initialize(X, resp0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return sk.fit(X)

        return fit

    return ours, peer


SWEEP_CASES = [
    Case(
        "variational mixtures",
        f"BayesianGaussianMixture {name}, 50 sweeps",
        _sweep_data,
        *_sweep_pair(prior),
        d=10,
        max_n=1_000_000,
        wide=None,
    )
    for name, prior in (
        ("dirichlet_process", "dirichlet_process"),
        ("dirichlet_distribution", "dirichlet_distribution"),
    )
]


if __name__ == "__main__":
    from _harness import HEADER, machine

    print(f"machine: {machine()}\n\n{HEADER}")
    main()
