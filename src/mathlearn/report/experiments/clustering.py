"""Clustering: k-means, colour quantisation, EM for Gaussian mixtures, BIC, dendrograms and
spectral clustering.

PRML §9.1-9.2; Oxford "Advanced Topics in Statistical Machine Learning" §1.1.2, §4.1 and ch. 5;
Stuttgart "Introduction to Machine Learning" §6.2 (agglomerative clustering).
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

from mathlearn.cluster import AgglomerativeClustering, KMeans, SpectralClustering, kmeans_plusplus
from mathlearn.exceptions import ConvergenceWarning
from mathlearn.mixture import GaussianMixture, em
from mathlearn.report import experiment

SECTION = "Clustering"


@contextlib.contextmanager
def _quiet():
    """Runs stopped after a few iterations on purpose (to draw them) warn; silence only that."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


def _two_clusters(rng, n=150):
    """Two elongated clusters standing in for Old Faithful (standardised), PRML Fig. 9.1."""
    a = rng.multivariate_normal([-1.0, -0.9], [[0.12, 0.06], [0.06, 0.10]], n)
    b = rng.multivariate_normal([0.9, 0.8], [[0.10, 0.05], [0.05, 0.14]], int(1.4 * n))
    return np.r_[a, b]


@experiment(
    "kmeans-iterations",
    title="k-means iterations on 2-D data",
    section=SECTION,
    description=(
        "Lloyd's algorithm from deliberately poor centres: each panel shows the assignment "
        "step (colours) and the centres it produces (crosses). The distortion J = sum_n "
        "||x_n - mu_{c_n}||^2 never increases (PRML §9.1) and the run stops when the "
        "partition stops changing."
    ),
    source=(
        "PRML §9.1, Figs. 9.1-9.2; Oxford 'Advanced Topics in Statistical Machine Learning' "
        "§1.1.2, Algorithm 1.1"
    ),
)
def kmeans_iterations(ctx):
    import matplotlib.pyplot as plt
    from sklearn.cluster import KMeans as SkKMeans

    X = _two_clusters(ctx.rng)
    centers = np.array([[-1.5, 1.5], [1.5, -1.5]])
    history = [centers]
    J = []
    with _quiet():
        for t in range(1, 8):
            km = KMeans(2, init=history[0], n_init=1, max_iter=t).fit(X)
            history.append(km.cluster_centers_)
            J.append(km.inertia_)
            if t > 1 and np.allclose(history[-1], history[-2]):
                break
    fig, axes = plt.subplots(1, 5, figsize=(16, 3.3))
    # Up to four update panels; from a lucky start Lloyd's algorithm can converge in fewer
    # (history then holds fewer than five centre sets), and the spare panels stay empty.
    n_panels = min(4, len(history) - 1)
    for ax in axes[n_panels:4]:
        ax.axis("off")
    for t, ax in enumerate(axes[:n_panels]):
        labels = np.argmin(((X[:, None] - history[t][None]) ** 2).sum(-1), axis=1)
        ax.scatter(X[:, 0], X[:, 1], c=labels, cmap="coolwarm", s=8)
        ax.scatter(*history[t + 1].T, marker="x", s=120, c="k", linewidths=3)
        ax.scatter(*history[t].T, marker="+", s=80, c="grey")
        ax.set_title(f"iteration {t + 1}")
        ax.set_xticks([])
        ax.set_yticks([])
    axes[4].plot(np.arange(1, len(J) + 1), J, "o-")
    axes[4].set_xlabel("iteration")
    axes[4].set(title="distortion J", ylabel="J")
    ctx.figure(
        fig,
        "k-means: assignments, old centres (+) and moved centres (x) per iteration; J per "
        "iteration. Notice that J never increases (each step minimises it over one block of "
        "variables) and that the centres stop moving after a few iterations.",
    )
    ours = KMeans(2, init=centers, n_init=1).fit(X)
    ref = SkKMeans(2, init=centers, n_init=1, algorithm="lloyd").fit(X)
    ctx.table(
        ["", "mathlearn", "scikit-learn"],
        [
            ["final J", ours.inertia_, ref.inertia_],
            ["iterations", ours.n_iter_, ref.n_iter_],
            ["same partition", bool(np.array_equal(ours.labels_, ref.labels_)), ""],
        ],
        "Same initial centres, n_init=1, Lloyd's algorithm.",
    )


@experiment(
    "colour-quantisation",
    title="Colour quantisation of an image with k-means",
    section=SECTION,
    description=(
        "Each pixel's RGB value is a point in R^3; k-means (fitted on 4 000 random pixels) "
        "finds K codebook colours and every pixel is replaced by its nearest one (vector "
        "quantisation). Storing a K-colour index per pixel instead of 24 bits gives the "
        "compression ratio in the table. The method ignores where pixels are (PRML §9.1.1)."
    ),
    source="PRML §9.1.1, Fig. 9.3",
)
def colour_quantisation(ctx):
    import matplotlib.pyplot as plt
    from sklearn.cluster import KMeans as SkKMeans
    from sklearn.datasets import load_sample_image

    image = load_sample_image("china.jpg")[::2, ::2] / 255.0
    h, w, _ = image.shape
    pixels = image.reshape(-1, 3)
    fit_on = pixels[ctx.rng.choice(len(pixels), 4000, replace=False)]
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.4))
    axes[0].imshow(image)
    axes[0].set_title("original")
    rows = []
    for ax, k in zip(axes[1:], [2, 3, 10], strict=True):
        init, _ = kmeans_plusplus(fit_on, k, ctx.rng)
        km = KMeans(k, init=init, n_init=1).fit(fit_on)
        quantised = km.cluster_centers_[km.predict(pixels)].reshape(h, w, 3)
        ax.imshow(np.clip(quantised, 0, 1))
        ax.set_title(f"K = {k}")
        ref = SkKMeans(k, init=init, n_init=1, algorithm="lloyd").fit(fit_on)
        bits = np.ceil(np.log2(k))
        rows.append(
            [k, km.score(pixels) / -len(pixels), -ref.score(pixels) / len(pixels), 24 / bits]
        )
    for ax in axes:
        ax.axis("off")
    ctx.figure(
        fig,
        "china.jpg (scikit-learn sample image) quantised to K colours. Notice that a handful of "
        "colours keeps the picture recognisable: k-means spends its codebook on the colours "
        "that cover most pixels.",
    )
    ctx.table(
        ["K", "mean sq. error (mathlearn)", "scikit-learn, same seeds", "compression"],
        rows,
        "Distortion per pixel on the whole image; compression = 24 bits / ceil(log2 K) bits.",
    )


def _ellipse(ax, mean, cov, color):
    from matplotlib.patches import Ellipse

    vals, vecs = np.linalg.eigh(cov)
    angle = np.degrees(np.arctan2(vecs[1, -1], vecs[0, -1]))
    for r in (1.0, 2.0):
        ax.add_patch(
            Ellipse(
                mean,
                2 * r * np.sqrt(vals[-1]),
                2 * r * np.sqrt(vals[0]),
                angle=angle,
                fill=False,
                color=color,
                lw=1.5,
            )
        )


@experiment(
    "gmm-em",
    title="EM for a Gaussian mixture: ellipses over iterations and the lower bound",
    section=SECTION,
    description=(
        "EM from poor initial means with unit covariances. The E-step computes the "
        "responsibilities in log space, the M-step re-estimates pi, mu and Sigma with the new "
        "means. The per-sample log-likelihood recorded by the general EM driver never "
        "decreases, as the free-energy argument (KL >= 0 by Gibbs' inequality) guarantees."
    ),
    source=(
        "PRML §9.2, Fig. 9.8; Oxford 'Advanced Topics in Statistical Machine Learning' §5.2-5.4 "
        "(Theorem 19)"
    ),
)
def gmm_em(ctx):
    import matplotlib.pyplot as plt
    from sklearn.mixture import GaussianMixture as SkGaussianMixture

    X = _two_clusters(ctx.rng)
    start = dict(
        weights_init=[0.5, 0.5],
        means_init=[[-1.2, 1.0], [1.2, -1.0]],
        precisions_init=np.stack([np.eye(2)] * 2),
        tol=1e-8,
        max_iter=200,
    )
    gm = GaussianMixture(2, **start)
    gm._initialize(X, ctx.rng)
    snaps = {0: (gm.means_.copy(), gm.covariances_.copy(), gm.predict_proba(X))}
    keep = {1, 5, 10}

    def snapshot(model, t, bound):
        if t in keep:
            snaps[t] = (model.means_.copy(), model.covariances_.copy(), model.predict_proba(X))

    result = em(gm, X, max_iter=200, tol=1e-8, callback=snapshot)
    snaps[result.n_iter] = (gm.means_.copy(), gm.covariances_.copy(), gm.predict_proba(X))
    fig, axes = plt.subplots(1, 6, figsize=(19, 3.3))
    for ax, t in zip(axes, sorted(snaps), strict=False):
        means, covs, resp = snaps[t]
        colours = np.c_[resp[:, 0], np.zeros(len(X)), resp[:, 1]]
        ax.scatter(X[:, 0], X[:, 1], c=colours, s=8)
        for k, col in enumerate(["red", "blue"]):
            _ellipse(ax, means[k], covs[k], col)
        ax.set_title("start" if t == 0 else f"after {t} iteration(s)")
        if t == result.n_iter:
            ax.set_title(f"converged ({t} iterations)")
        ax.set_xlim(-2.5, 2.5)
        ax.set_ylim(-2.5, 2.5)
        ax.set_xticks([])
        ax.set_yticks([])
    axes[-1].plot(np.arange(1, result.n_iter + 1), result.lower_bounds, ".-")
    axes[-1].set_xscale("log")
    axes[-1].set_xlabel("iteration")
    axes[-1].set(title="log-likelihood / N", ylabel="ln p(X) / N")
    ctx.figure(
        fig,
        "Responsibilities (colour mix), 1 and 2 sigma ellipses, and the log-likelihood. "
        "Notice that the log-likelihood rises at every EM iteration, fast at first and then "
        "slowly, while points between the components keep a mixed (purple) responsibility.",
    )
    ours = GaussianMixture(2, **start).fit(X)
    ref = SkGaussianMixture(2, **start).fit(X)
    ctx.table(
        ["", "mathlearn", "scikit-learn"],
        [
            ["final log-likelihood / N", ours.score(X), ref.score(X)],
            ["iterations", ours.n_iter_, ref.n_iter_],
            ["max |mu - mu_ref|", float(np.abs(ours.means_ - ref.means_).max()), ""],
            ["bound non-decreasing", bool(np.all(np.diff(ours.lower_bounds_) >= 0)), ""],
        ],
        "Same start (weights_init, means_init, precisions_init).",
    )


@experiment(
    "gmm-bic",
    title="Choosing the number of components with BIC and AIC",
    section=SECTION,
    description=(
        "Data from a 3-component mixture in 2-D. BIC = -2 log p(X|theta) + M ln N and "
        "AIC = -2 log p(X|theta) + 2M for K = 1..6 and the four covariance structures. With "
        "full covariances the minimum of BIC recovers K = 3; the constrained structures need "
        "more components to describe the correlated clusters. AIC penalises complexity less."
    ),
    source=(
        "Imperial 'Mathematics for Inference and Machine Learning' §1.7.6 (AIC/BIC, eqs. "
        "1.208-1.209); PRML §9.2"
    ),
)
def gmm_bic(ctx):
    import matplotlib.pyplot as plt
    from sklearn.mixture import GaussianMixture as SkGaussianMixture

    rng = ctx.rng
    X = np.r_[
        rng.multivariate_normal([0, 0], [[1.0, 0.6], [0.6, 1.0]], 160),
        rng.multivariate_normal([5, 0], [[0.5, 0.0], [0.0, 1.5]], 120),
        rng.multivariate_normal([2, 4], [[0.8, -0.3], [-0.3, 0.4]], 120),
    ]
    ks = range(1, 7)
    fig, ax = plt.subplots(1, 2, figsize=(11, 3.6))
    best = {}
    for ct in ["full", "tied", "diag", "spherical"]:
        bic, aic = [], []
        for k in ks:
            gm = GaussianMixture(k, covariance_type=ct, random_state=ctx.seed).fit(X)
            bic.append(gm.bic(X))
            aic.append(gm.aic(X))
        best[ct] = int(np.argmin(bic)) + 1
        ax[0].plot(list(ks), bic, "o-", label=ct)
        ax[1].plot(list(ks), aic, "o-", label=ct)
    ax[0].set_title("BIC")
    ax[1].set_title("AIC")
    for a, name in zip(ax, ("BIC", "AIC"), strict=True):
        a.set(xlabel="K (components)", ylabel=f"{name} (lower is better)")
        a.legend()
    ctx.figure(
        fig,
        "Information criteria against the number of components. Notice that BIC, with its "
        "heavier penalty (ln N per parameter against AIC's 2), has its minimum at the same or "
        "a smaller K than AIC.",
    )
    ours = GaussianMixture(3, random_state=ctx.seed).fit(X)
    ref = SkGaussianMixture(
        3, weights_init=ours.weights_, means_init=ours.means_, precisions_init=ours.precisions_
    ).fit(X)
    ctx.table(
        ["covariance type", "K with the lowest BIC"],
        [[ct, k] for ct, k in best.items()],
        "True K = 3.",
    )
    ctx.table(
        ["", "mathlearn", "scikit-learn"],
        [["BIC at K = 3 (full)", ours.bic(X), ref.bic(X)]],
        "scikit-learn started from our fitted parameters (a fixed point: same BIC).",
    )


@experiment(
    "dendrograms",
    title="Agglomerative clustering: dendrograms of four linkages",
    section=SECTION,
    description=(
        "Single, complete, group-average and Ward linkage on the same 30 points. Single "
        "linkage chains (merges at small heights, one long tail); complete and Ward give "
        "compact, balanced groups. Our merges are compared with scipy.cluster.hierarchy."
    ),
    source="Stuttgart 'Introduction to Machine Learning' §6.2 (slides 6:43-6:44)",
)
def dendrograms(ctx):
    import matplotlib.pyplot as plt
    from scipy.cluster.hierarchy import dendrogram, linkage

    rng = ctx.rng
    X = np.r_[
        rng.normal(0, 0.6, (10, 2)), rng.normal(3, 0.6, (10, 2)), rng.normal([0, 4], 0.6, (10, 2))
    ]
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.4))
    rows = []
    for ax, method in zip(axes, ["single", "complete", "average", "ward"], strict=True):
        agg = AgglomerativeClustering(3, linkage=method).fit(X)
        dendrogram(agg.linkage_matrix_, ax=ax, color_threshold=agg.distances_[-2])
        ax.set(title=method, ylabel="merge dissimilarity")
        ax.set_xticks([])
        ref = linkage(X, method)
        same = bool(
            np.array_equal(agg.linkage_matrix_[:, [0, 1, 3]], ref[:, [0, 1, 3]])
            and np.allclose(agg.distances_, ref[:, 2])
        )
        rows.append([method, same, agg.distances_[-1], ref[-1, 2]])
    ctx.figure(
        fig,
        "Dendrograms (heights = linkage dissimilarity), coloured at 3 clusters. Notice how "
        "single linkage chains (many merges at small heights, unbalanced trees) while Ward's "
        "last merges stand far above the rest.",
    )
    ctx.table(
        ["linkage", "merges identical to SciPy", "top height (mathlearn)", "top height (SciPy)"],
        rows,
    )


@experiment(
    "spectral-vs-kmeans",
    title="Spectral clustering against k-means on two moons and concentric circles",
    section=SECTION,
    description=(
        "k-means cuts the plane into Voronoi cells and cannot separate non-convex shapes. "
        "Spectral clustering builds the symmetric 10-nearest-neighbour graph, takes the "
        "eigenvectors of the 2 smallest eigenvalues of its Laplacian and runs k-means on "
        "them; the relaxed normalised cut follows the shapes."
    ),
    source="Oxford 'Advanced Topics in Statistical Machine Learning' §4.1 (Lemma 17, Remark 18)",
)
def spectral_vs_kmeans(ctx):
    import matplotlib.pyplot as plt
    from sklearn.cluster import SpectralClustering as SkSpectral
    from sklearn.datasets import make_circles, make_moons
    from sklearn.metrics import adjusted_rand_score

    data = {
        "two moons": make_moons(300, noise=0.05, random_state=ctx.seed),
        "circles": make_circles(300, factor=0.5, noise=0.05, random_state=ctx.seed),
    }
    fig, axes = plt.subplots(2, 4, figsize=(15, 7))
    rows = []
    for r, (name, (X, y)) in enumerate(data.items()):
        km = KMeans(2, n_init=4, random_state=ctx.seed).fit(X)
        axes[r, 0].scatter(X[:, 0], X[:, 1], c=km.labels_, cmap="coolwarm", s=8)
        axes[r, 0].set_title(f"{name}: k-means")
        row = [name, adjusted_rand_score(y, km.labels_)]
        for c, lap in enumerate(["unnormalized", "symmetric", "random_walk"], start=1):
            sc = SpectralClustering(
                2, affinity="nearest_neighbors", laplacian=lap, random_state=ctx.seed
            ).fit(X)
            axes[r, c].scatter(X[:, 0], X[:, 1], c=sc.labels_, cmap="coolwarm", s=8)
            axes[r, c].set_title(f"spectral, {lap}")
            row.append(adjusted_rand_score(y, sc.labels_))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # sklearn: graph not connected
            sk = SkSpectral(2, affinity="nearest_neighbors", random_state=ctx.seed).fit(X)
        row.append(adjusted_rand_score(y, sk.labels_))
        rows.append(row)
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
    ctx.figure(
        fig, "Cluster labels: k-means (left) and spectral clustering with three Laplacians."
    )
    ctx.table(
        [
            "data",
            "ARI k-means",
            "ARI spectral L",
            "ARI spectral L_sym",
            "ARI spectral L_rw",
            "ARI scikit-learn spectral",
        ],
        rows,
        "Adjusted Rand index against the true shapes (1 = perfect).",
    )
