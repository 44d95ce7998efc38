"""Regression demos of the Stuttgart notes: piece-wise fits and the variance of an
over-flexible RBF fit; DP-means' penalty against the number of clusters."""

from __future__ import annotations

import numpy as np
from sklearn.pipeline import make_pipeline

from mathlearn.cluster import DPMeans
from mathlearn.linear_model import LinearRegression, Ridge
from mathlearn.preprocessing import GaussianBasis, PiecewiseConstantBasis, PiecewiseLinearBasis
from mathlearn.report import experiment


@experiment(
    "piecewise-fits",
    title="Piece-wise constant, piece-wise linear and continuous piece-wise linear fits",
    section="Regression",
    description=(
        "Forty noisy points of a sine are fitted by least squares on three feature maps with "
        "the same eight knots: indicators of the intervals (piece-wise constant), indicators "
        "times x (piece-wise linear, discontinuous), and hinge functions max(0, x - knot) "
        "(continuous piece-wise linear). Notice that each is a linear model in its features; "
        "only the features change the shape of the fit. The fits are computed again with "
        "scikit-learn's LinearRegression on the same features."
    ),
    source="Stuttgart 'Introduction to Machine Learning' §2 (slide 2:8, non-linear features)",
)
def piecewise(ctx):
    import matplotlib.pyplot as plt
    from sklearn.linear_model import LinearRegression as SkLR

    x = np.sort(ctx.rng.uniform(0, 1, 40))[:, None]
    y = np.sin(2 * np.pi * x[:, 0]) + 0.2 * ctx.rng.normal(size=40)
    grid = np.linspace(0, 1, 400)[:, None]
    knots = np.linspace(0, 1, 10)[1:-1]
    bases = {
        "piece-wise constant": PiecewiseConstantBasis(knots=knots, include_bias=False),
        "piece-wise linear": PiecewiseLinearBasis(knots=knots, continuous=False),
        "continuous piece-wise linear": PiecewiseLinearBasis(knots=knots, continuous=True),
    }
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.6), sharey=True)
    rows = []
    for ax, (name, basis) in zip(axes, bases.items(), strict=True):
        model = make_pipeline(basis, LinearRegression(fit_intercept=False)).fit(x, y)
        F = basis.fit(x).transform(x)
        peer = SkLR(fit_intercept=False).fit(F, y)
        ax.plot(x[:, 0], y, "k.", ms=4, label="data")
        ax.plot(grid[:, 0], model.predict(grid), "C0", label="least-squares fit")
        ax.plot(grid[:, 0], np.sin(2 * np.pi * grid[:, 0]), "C2--", lw=1, label="sin(2 pi x)")
        for k in knots:
            ax.axvline(k, color="grey", lw=0.4)
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("x")
        rows.append([name, F.shape[1], float(np.max(np.abs(model.predict(x) - peer.predict(F))))])
    axes[0].set_ylabel("y")
    axes[0].legend(loc="lower left")
    ctx.figure(fig, "The same knots, three feature maps, three shapes of fit.")
    ctx.table(
        ["features", "number of features", "max |ours - scikit-learn| on the data"],
        rows,
        "Both solve the same least-squares problem; differences are rounding.",
    )


@experiment(
    "rbf-overfitting-variance",
    title="An over-flexible RBF fit of a noisy sine, and the variance of the estimator",
    section="Regression",
    description=(
        "Forty points of a sine with noise sd 0.5 are fitted with 40 Gaussian features of "
        "width 0.1 and almost no regularisation (lambda = 1e-10), then again with lambda = "
        "1; each setting is re-run on 8 fresh training sets. Notice that the unregularised "
        "fit chases the noise and changes wildly from one training set to the next (high "
        "estimator variance), while the ridge fits vary little; the table gives the average "
        "variance of the fits and their average squared distance to the sine."
    ),
    source=(
        "Stuttgart 'Introduction to Machine Learning' §2 (slides 2:11-2:13, overfitting and "
        "estimator variance)"
    ),
)
def rbf_overfitting(ctx):
    import matplotlib.pyplot as plt

    grid = np.linspace(0, 1, 300)[:, None]
    truth = np.sin(2 * np.pi * grid[:, 0])
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    rows = []
    for ax, lam in zip(axes, (1e-10, 1.0), strict=True):
        fits = []
        for _ in range(8):
            x = ctx.rng.uniform(0, 1, 40)[:, None]
            y = np.sin(2 * np.pi * x[:, 0]) + 0.5 * ctx.rng.normal(size=40)
            model = make_pipeline(GaussianBasis(n_centres=40, width=0.1), Ridge(alpha=lam))
            fits.append(model.fit(x, y).predict(grid))
        F = np.array(fits)
        for f in F:
            ax.plot(grid[:, 0], f, lw=0.8, alpha=0.7)
        ax.plot(grid[:, 0], truth, "k--", lw=1.5, label="sin(2 pi x)")
        ax.set_ylim(-3, 3)
        ax.set_title(f"lambda = {lam:g}: 8 training sets", fontsize=10)
        ax.set_xlabel("x")
        ax.legend(loc="lower left")
        rows.append(
            [lam, float(F.var(axis=0, ddof=1).mean()), float(np.mean((F.mean(0) - truth) ** 2))]
        )
    axes[0].set_ylabel("fitted f(x)")
    ctx.figure(fig, "Without a penalty the fit follows each sample's noise.")
    ctx.table(
        ["lambda", "mean variance of the fits", "squared bias of the mean fit"],
        rows,
        "Averages over 300 grid points and 8 training sets.",
    )


@experiment(
    "dpmeans-penalty",
    title="DP-means: the penalty lambda against the number of clusters",
    section="Clustering",
    description=(
        "DP-means opens a new cluster whenever a point is farther than sqrt(lambda) from "
        "every centre, minimising the k-means objective plus lambda times the number of "
        "clusters. On 300 points from five Gaussian blobs the number of clusters found falls "
        "as lambda grows, from one cluster per few points to a single cluster, with a plateau "
        "at the true five clusters; the data are shuffled with a seed for every run (the "
        "result depends on the order of the points)."
    ),
    source=(
        "Oxford 'Advanced Topics in Statistical Machine Learning' §1.1.2 (DP-means; Kulis and "
        "Jordan 2012)"
    ),
)
def dpmeans_penalty(ctx):
    import matplotlib.pyplot as plt

    centres = np.array([[0, 0], [6, 0], [0, 6], [6, 6], [3, 10]], dtype=float)
    X = np.vstack([c + ctx.rng.normal(size=(60, 2)) for c in centres])
    lams = np.geomspace(0.5, 400, 25)
    ks, objs = [], []
    for lam in lams:
        m = DPMeans(penalty=lam).fit(X[ctx.rng.permutation(len(X))])
        ks.append(m.n_clusters_)
        objs.append(m.objective_)
    fig, ax = plt.subplots(figsize=(7, 3.8))
    ax.semilogx(lams, ks, "o-", ms=4)
    ax.axhline(5, color="grey", ls=":", label="true number of blobs")
    ax.set_xlabel("penalty lambda")
    ax.set_ylabel("number of clusters")
    ax.set_yscale("log")
    ax.legend(loc="upper right")
    ctx.figure(fig, "A larger penalty per cluster gives fewer clusters.")
    ctx.table(
        ["lambda", "clusters", "objective"],
        [[float(lams[i]), int(ks[i]), float(objs[i])] for i in range(0, len(lams), 4)],
        "The objective is the within-cluster sum of squares plus lambda times the clusters.",
    )
