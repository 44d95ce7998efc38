"""Feature extraction against scikit-learn on the same data.

Sizes from issue 5: PCA full and randomised on 20 000 x 500 (10 components), KernelPCA on
3 000 points, FastICA and NMF. Run with ``python benchmarks/run.py decomposition``.

FastICA starts both from the same ``w_init``, but the whitening bases differ in the signs of
their axes (ours from the D x D covariance, scikit-learn's from an SVD of the data), so the
same ``w_init`` is a different start and the iteration counts can differ (3 against 5 here);
our whitening is also cheaper for N >> D. NMF runs a fixed 200 iterations (tol=0) from the
same W, H on both sides; the iterates agree to rounding. For the Frobenius objective ours
then solves the final W exactly (one 10 x 10 NNLS per sample, about 20 ms of the total),
which scikit-learn does not.
"""

from __future__ import annotations

import numpy as np
import sklearn.cross_decomposition as skd_cross
import sklearn.decomposition as skd

import mathlearn.decomposition as mld
from _harness import HEADER, compare
from _sweep_cases import Case


def _pca_data(rng):
    # Low-rank signal plus noise, so that 10 components mean something.
    Z = rng.normal(size=(20_000, 20)) * np.linspace(5, 1, 20)
    return Z @ rng.normal(size=(20, 500)) + rng.normal(size=(20_000, 500))


def main() -> None:
    rng = np.random.default_rng(0)
    X = _pca_data(rng)
    compare(
        "PCA full SVD, 20000x500, k=10",
        lambda: mld.PCA(10, svd_solver="full").fit(X),
        lambda: skd.PCA(10, svd_solver="full").fit(X),
        repeats=3,
        target=1.2,
    )
    compare(
        "PCA randomized, 20000x500, k=10",
        lambda: mld.PCA(10, svd_solver="randomized", random_state=0).fit(X),
        lambda: skd.PCA(10, svd_solver="randomized", random_state=0).fit(X),
        repeats=5,
        target=1.2,
    )
    compare(
        "PCA covariance route, 20000x500, k=10",
        lambda: mld.PCA(10, svd_solver="covariance").fit(X),
        lambda: skd.PCA(10, svd_solver="covariance_eigh").fit(X),
        repeats=5,
        target=1.2,
    )
    Xk = rng.normal(size=(3000, 10))
    compare(
        "KernelPCA rbf, 3000 points, k=10 (ARPACK)",
        lambda: mld.KernelPCA(10, kernel="rbf", gamma=0.1, random_state=0).fit(Xk),
        lambda: skd.KernelPCA(10, kernel="rbf", gamma=0.1, random_state=0).fit(Xk),
        repeats=3,
        target=1.2,
    )
    t = np.linspace(0, 200, 50_000)
    S = np.c_[
        np.sin(3 * t),
        np.sign(np.sin(2 * t)),
        rng.laplace(size=t.size),
        rng.uniform(-1, 1, t.size),
        np.sin(7 * t) ** 3,
        rng.exponential(size=t.size),
    ]
    Xi = S @ rng.normal(size=(6, 12)) + 0.01 * rng.normal(size=(t.size, 12))
    w0 = rng.normal(size=(6, 6))
    compare(
        "FastICA parallel logcosh, 50000x12, k=6",
        lambda: mld.FastICA(6, w_init=w0, max_iter=400).fit(Xi),
        lambda: skd.FastICA(6, w_init=w0, max_iter=400, whiten="unit-variance").fit(Xi),
        repeats=5,
        target=1.2,
    )
    Xn = np.abs(rng.normal(size=(2000, 300)))
    W0 = rng.uniform(0.1, 1, size=(2000, 10))
    H0 = rng.uniform(0.1, 1, size=(10, 300))
    for loss in ("frobenius", "kullback-leibler"):
        compare(
            f"NMF mu {loss}, 2000x300, k=10, 200 iterations",
            lambda loss=loss: mld.NMF(
                10, beta_loss=loss, init="custom", solver="mu", max_iter=200, tol=0
            ).fit_transform(Xn, W=W0.copy(), H=H0.copy()),
            lambda loss=loss: skd.NMF(
                10, beta_loss=loss, init="custom", solver="mu", max_iter=200, tol=0
            ).fit_transform(Xn, W=W0.copy(), H=H0.copy()),
            repeats=3,
            target=1.2,
        )
    compare(
        "NMF cd (HALS) frobenius, 2000x300, k=10, 200 iterations",
        lambda: mld.NMF(10, init="custom", solver="cd", max_iter=200, tol=0).fit_transform(
            Xn, W=W0.copy(), H=H0.copy()
        ),
        lambda: skd.NMF(10, init="custom", solver="cd", max_iter=200, tol=0).fit_transform(
            Xn, W=W0.copy(), H=H0.copy()
        ),
        repeats=3,
        target=1.0,
    )


def _sweep_pls_data(n, d):
    # y driven by a few latent directions of X, so that two PLS components mean something
    rng = np.random.default_rng(0)
    k = min(5, d)
    T = rng.standard_normal((n, k))
    X = T @ rng.standard_normal((k, d)) + 0.5 * rng.standard_normal((n, d))
    return X, T @ rng.standard_normal(k) + 0.1 * rng.standard_normal(n)


# The size sweep (``sweep.py``): both NIPALS with the same defaults (2 components, scaled
# data, tol 1e-6, max_iter 500).
SWEEP_CASES = [
    Case(
        "feature extraction",
        "PLSRegression",
        _sweep_pls_data,
        lambda X, y: lambda: mld.PLSRegression(2).fit(X, y),
        lambda X, y: lambda: skd_cross.PLSRegression(2).fit(X, y),
        d=20,
        wide=(200, 2_000),
    ),
]


if __name__ == "__main__":
    print(HEADER)
    main()
