"""The size sweep's cases for the first half of the library (see ``sweep.py``).

A :class:`Case` names an estimator and its peer, makes data of a given size, and returns a
zero-argument function for each side that does one fit on that data. Both sides get the same
data and, where the methods allow it, the same amount of work (same start, same number of
components, same stopping rule); where the defaults differ on purpose (a default solver that
converges in fewer iterations), the case compares the defaults and says so.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

warnings.simplefilter("ignore")


@dataclass
class Case:
    """One estimator against its peer.

    Attributes
    ----------
    family : str
        The table the case goes in.
    name : str
        Unique name of the case.
    data : callable (n, d) -> tuple
        Makes the arguments passed to ``ours`` and ``peer``.
    ours, peer : callable (*data) -> callable () -> object
        Each returns a thunk that runs one fit.
    d : int
        Number of features at the tall sizes.
    max_n : int
        Largest N the case is run at (quadratic-memory methods stop early).
    wide : (n, d) or None
        The wide shape, ``D >> N``, where the method has one.
    memory_ours, memory_peer : callable (*data) -> callable () -> object, optional
        The thunks whose memory is measured, where a fit alone is not like for like (the
        recommenders: the peer's training container, built once outside its fit, holds the
        rating orders that our fit builds; there each side's measured call builds its own
        container from the same raw triples, then fits). Default: ``ours`` and ``peer``.
    """

    family: str
    name: str
    data: Callable
    ours: Callable
    peer: Callable
    d: int = 20
    max_n: int = 1_000_000
    wide: tuple[int, int] | None = (200, 2_000)
    memory_ours: Callable | None = None
    memory_peer: Callable | None = None

    def memory_thunks(self, data: tuple) -> tuple[Callable, Callable]:
        """The two thunks whose memory is measured on ``data``."""
        return (
            (self.memory_ours or self.ours)(*data),
            (self.memory_peer or self.peer)(*data),
        )


def _regression(n, d):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    y = X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n)
    return X, y


def _blobs(n, d):
    rng = np.random.default_rng(0)
    centres = 6.0 * rng.standard_normal((10, d))
    labels = rng.integers(0, 10, n)
    return (centres[labels] + rng.standard_normal((n, d)),)


def _low_rank(n, d):
    rng = np.random.default_rng(0)
    k = min(10, d)
    X = rng.standard_normal((n, k)) @ rng.standard_normal((k, d)) * 3.0
    return (X + 0.5 * rng.standard_normal((n, d)),)


def _nonneg(n, d):
    rng = np.random.default_rng(0)
    k = min(10, d)
    return (rng.random((n, k)) @ rng.random((k, d)) + 0.01 * rng.random((n, d)),)


def _classes(n, d):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, n)
    means = 2.0 * rng.standard_normal((3, d))
    return means[y] + rng.standard_normal((n, d)), y


def _swiss(n, d):
    rng = np.random.default_rng(0)
    t = 1.5 * np.pi * (1 + 2 * rng.random(n))
    X = np.column_stack([t * np.cos(t), 21 * rng.random(n), t * np.sin(t)])
    return (X + 0.05 * rng.standard_normal(X.shape),)


def _swiss_graph(n, d):
    """Isomap's graph on the swiss roll: each point's 10 nearest, as a CSR matrix of lengths."""
    import scipy.sparse as sp

    from mathlearn.utils.graph import kneighbors

    (X,) = _swiss(n, d)
    dist, ind = kneighbors(X, 10)
    return (sp.csr_matrix((dist.ravel(), ind.ravel(), np.arange(0, n * 10 + 1, 10)), (n, n)),)


def _geodesics():
    from scipy.sparse.csgraph import shortest_path

    from mathlearn.utils.graph import geodesic_distances

    return (
        lambda G: lambda: geodesic_distances(G),
        lambda G: lambda: shortest_path(G, method="D", directed=False),
    )


def _lin():
    from sklearn.linear_model import LinearRegression as Sk

    from mathlearn.linear_model import LinearRegression

    return (
        lambda X, y: lambda: LinearRegression().fit(X, y),
        lambda X, y: lambda: Sk().fit(X, y),
    )


def _ridge():
    from sklearn.linear_model import Ridge as Sk

    from mathlearn.linear_model import Ridge

    return (lambda X, y: lambda: Ridge(1.0).fit(X, y), lambda X, y: lambda: Sk(1.0).fit(X, y))


def _lasso():
    from sklearn.linear_model import Lasso as Sk

    from mathlearn.linear_model import Lasso

    return (
        lambda X, y: lambda: Lasso(0.05).fit(X, y),
        lambda X, y: lambda: Sk(0.05).fit(X, y),
    )


def _lasso_path():
    from sklearn.linear_model import lasso_path as sk_path

    from mathlearn.linear_model import lasso_path

    return (
        lambda X, y: lambda: lasso_path(X, y, n_alphas=30),
        lambda X, y: lambda: sk_path(X, y, n_alphas=30),
    )


def _blr():
    from sklearn.linear_model import BayesianRidge

    from mathlearn.linear_model import BayesianLinearRegression

    return (
        lambda X, y: lambda: BayesianLinearRegression(fit_intercept=True).fit(X, y),
        lambda X, y: lambda: BayesianRidge().fit(X, y),
    )


def _pca(solver):
    from sklearn.decomposition import PCA as Sk

    from mathlearn.decomposition import PCA

    kw = {"svd_solver": solver} if solver != "auto" else {}
    rs = {"random_state": 0} if solver == "randomized" else {}
    return (
        lambda X: lambda: PCA(10, **kw, **rs).fit(X),
        lambda X: lambda: Sk(10, **kw, **rs).fit(X),
    )


def _factor_analysis():
    from sklearn.decomposition import FactorAnalysis as Sk

    from mathlearn.decomposition import FactorAnalysis

    return (lambda X: lambda: FactorAnalysis(5).fit(X), lambda X: lambda: Sk(5).fit(X))


def _fastica():
    from sklearn.decomposition import FastICA as Sk

    from mathlearn.decomposition import FastICA

    return (
        lambda X: lambda: FastICA(5, random_state=0).fit(X),
        lambda X: lambda: Sk(5, random_state=0, whiten="unit-variance").fit(X),
    )


def _nmf():
    from sklearn.decomposition import NMF as Sk

    from mathlearn.decomposition import NMF

    # The defaults against each other (the comparison): both coordinate descent
    # (HALS) with scikit-learn's stopping rule (ours multiplicative updates before the third
    # session).
    return (
        lambda X: lambda: NMF(10, random_state=0).fit(X),
        lambda X: lambda: Sk(10, init="random", random_state=0).fit(X),
    )


def _kernel_pca():
    from sklearn.decomposition import KernelPCA as Sk

    from mathlearn.decomposition import KernelPCA

    return (
        lambda X: lambda: KernelPCA(5, kernel="rbf", gamma=0.05).fit(X),
        lambda X: lambda: Sk(5, kernel="rbf", gamma=0.05).fit(X),
    )


def _kmeans():
    from sklearn.cluster import KMeans as Sk

    from mathlearn.cluster import KMeans, kmeans_plusplus

    def ours(X):
        init, _ = kmeans_plusplus(X, 10, np.random.default_rng(0))
        return lambda: KMeans(10, init=init, n_init=1).fit(X)

    def peer(X):
        init, _ = kmeans_plusplus(X, 10, np.random.default_rng(0))
        return lambda: Sk(10, init=init, n_init=1).fit(X)

    return ours, peer


def _kmeans_default():
    from sklearn.cluster import KMeans as Sk

    from mathlearn.cluster import KMeans

    return (
        lambda X: lambda: KMeans(10, random_state=0).fit(X),
        lambda X: lambda: Sk(10, random_state=0).fit(X),
    )


def _minibatch():
    from sklearn.cluster import MiniBatchKMeans as Sk

    from mathlearn.cluster import MiniBatchKMeans

    # Five seeds per timed call on both sides: the early-stopping rule (no improvement of the
    # smoothed batch distortion in 10 steps) fires after a number of steps that depends on
    # the seed on both sides (12 to 280 at N = 1e5), so one seed times the luck of its draws,
    # not the implementation.
    return (
        lambda X: lambda: [MiniBatchKMeans(10, random_state=s).fit(X) for s in range(5)],
        lambda X: lambda: [Sk(10, random_state=s, n_init=1).fit(X) for s in range(5)],
    )


def _ward():
    from sklearn.cluster import AgglomerativeClustering as Sk

    from mathlearn.cluster import AgglomerativeClustering

    return (
        lambda X: lambda: AgglomerativeClustering(10, linkage="ward").fit(X),
        lambda X: lambda: Sk(10, linkage="ward").fit(X),
    )


def _spectral(affinity):
    from sklearn.cluster import SpectralClustering as Sk

    from mathlearn.cluster import SpectralClustering

    kw = {"affinity": "nearest_neighbors"} if affinity == "knn" else {"gamma": 0.01}
    # scikit-learn's k-NN affinity counts each point among its own 10 neighbours (a self-loop
    # the Laplacian then ignores): the same graph is ours with 9 other points
    ours_kw = {"affinity": "nearest_neighbors", "n_neighbors": 9} if affinity == "knn" else kw
    return (
        lambda X: lambda: SpectralClustering(10, random_state=0, **ours_kw).fit(X),
        lambda X: lambda: Sk(10, random_state=0, **kw).fit(X),
    )


def _isomap():
    from sklearn.manifold import Isomap as Sk

    from mathlearn.manifold import Isomap

    return (lambda X: lambda: Isomap(10).fit(X), lambda X: lambda: Sk(n_neighbors=10).fit(X))


def _spectral_embedding():
    from sklearn.manifold import SpectralEmbedding as Sk

    from mathlearn.manifold import SpectralEmbedding

    def ours(X):
        # scikit-learn's default N / 10 neighbours count each point itself (a self-loop the
        # Laplacian ignores): the same graph is ours with one other point fewer
        nn = max(max(X.shape[0] // 10, 1) - 1, 1)
        return lambda: SpectralEmbedding(2, affinity="nearest_neighbors", n_neighbors=nn).fit(X)

    return ours, lambda X: lambda: Sk(2, random_state=0).fit(X)


def _gmm(cov):
    from sklearn.mixture import GaussianMixture as Sk

    from mathlearn.mixture import GaussianMixture

    def start(X):
        rng = np.random.default_rng(1)
        d = X.shape[1]
        k = 5
        prec = {
            "full": np.stack([np.eye(d)] * k),
            "diag": np.ones((k, d)),
        }[cov]
        return dict(
            weights_init=np.full(k, 1 / k),
            means_init=X[rng.choice(len(X), k, replace=False)],
            precisions_init=prec,
            tol=1e-3,
            max_iter=100,
            covariance_type=cov,
        )

    return (
        lambda X: lambda: GaussianMixture(5, **start(X)).fit(X),
        lambda X: lambda: Sk(5, init_params="random_from_data", **start(X)).fit(X),
    )


def _fisher():
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as Sk

    from mathlearn.discriminant_analysis import FisherLDA

    return (lambda X, y: lambda: FisherLDA().fit(X, y), lambda X, y: lambda: Sk().fit(X, y))


def _case(family, name, pair, data, **kw):
    def ours(*args):
        return pair()[0](*args)

    def peer(*args):
        return pair()[1](*args)

    return Case(family, name, data, ours, peer, **kw)


CASES = [
    _case("regression", "LinearRegression", _lin, _regression, wide=(500, 5_000)),
    _case("regression", "Ridge", _ridge, _regression, wide=(500, 5_000)),
    _case("regression", "Lasso", _lasso, _regression, wide=(500, 5_000)),
    _case("regression", "lasso_path", _lasso_path, _regression, max_n=100_000, wide=(500, 5_000)),
    _case("regression", "BayesianLinearRegression", _blr, _regression, wide=(500, 5_000)),
    _case("feature extraction", "PCA auto", lambda: _pca("auto"), _low_rank, d=50),
    _case("feature extraction", "PCA full", lambda: _pca("full"), _low_rank, d=50),
    _case("feature extraction", "PCA randomized", lambda: _pca("randomized"), _low_rank, d=100),
    _case("feature extraction", "FactorAnalysis", _factor_analysis, _low_rank),
    _case("feature extraction", "FastICA", _fastica, _low_rank, max_n=100_000),
    _case("feature extraction", "NMF defaults", _nmf, _nonneg, max_n=100_000),
    _case("feature extraction", "KernelPCA rbf", _kernel_pca, _low_rank, max_n=5_000, wide=None),
    _case("feature extraction", "FisherLDA", _fisher, _classes, wide=(200, 2_000)),
    _case("feature extraction", "Isomap", _isomap, _swiss, d=3, max_n=5_000, wide=None),
    _case(
        "feature extraction",
        "geodesic distances (Dijkstra from every vertex) vs scipy.sparse.csgraph",
        _geodesics,
        _swiss_graph,
        d=3,
        max_n=5_000,
        wide=None,
    ),
    _case(
        "feature extraction",
        "SpectralEmbedding",
        _spectral_embedding,
        _swiss,
        d=3,
        max_n=5_000,
        wide=None,
    ),
    _case("clustering", "KMeans same init", _kmeans, _blobs),
    _case("clustering", "KMeans defaults", _kmeans_default, _blobs),
    _case("clustering", "MiniBatchKMeans", _minibatch, _blobs),
    _case("clustering", "Ward", _ward, _blobs, max_n=20_000, wide=None),
    _case(
        "clustering",
        "SpectralClustering rbf",
        lambda: _spectral("rbf"),
        _blobs,
        max_n=5_000,
        wide=None,
    ),
    _case(
        "clustering",
        "SpectralClustering knn",
        lambda: _spectral("knn"),
        _blobs,
        max_n=5_000,
        wide=None,
    ),
    _case("mixtures", "GaussianMixture full", lambda: _gmm("full"), _blobs, d=10, wide=None),
    _case("mixtures", "GaussianMixture diag", lambda: _gmm("diag"), _blobs, d=10, wide=None),
]


def find_case(name: str) -> Case:
    """The case called ``name``, among these and those of the ``bench_*.py`` modules."""
    import sweep

    return next(c for c in sweep.all_cases() if c.name == name)
