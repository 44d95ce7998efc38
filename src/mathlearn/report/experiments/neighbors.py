"""Local learning: k-NN and kernel smoothers against their bandwidth (bias and variance)."""

from __future__ import annotations

import numpy as np

from mathlearn.neighbors import KNeighborsRegressor, LocallyWeightedRegression, NadarayaWatson
from mathlearn.report import experiment

SECTION = "Local learning"


def _f(x):
    return np.sin(2.0 * np.pi * x) + 2.0 * x


@experiment(
    "neighbors-bandwidth",
    title="k-NN and kernel smoothers against the bandwidth: bias and variance",
    section=SECTION,
    description=(
        "Twelve training sets of 100 points, y = sin(2 pi x) + 2x + noise (sd 0.3) on "
        "[0, 1], "
        "are smoothed by the k-NN average, the Nadaraya-Watson average with the Epanechnikov "
        "kernel and locally weighted linear regression with the same kernel. At 60 test "
        "points the squared bias of the mean fit and the variance across training sets are "
        "averaged, for a range of window sizes (k for k-NN; the bandwidth h, in units where "
        "h = k / (2 n) holds about k points, for the kernels). Notice the trade-off: small "
        "windows have little bias and much variance, large windows the reverse; the local "
        "line has less bias than the local averages at the same window, most at the "
        "boundaries, where the averages flatten out. The k-NN column of the table is "
        "computed again with scikit-learn's KNeighborsRegressor on the same data."
    ),
    source=(
        "Stuttgart 'Introduction to Machine Learning' §7.1 (slides 7:3-7:5: weighted local "
        "least squares, k-NN and Epanechnikov smoothing kernels); PRML §2.5.2, §3.2"
    ),
)
def bandwidth(ctx):
    import matplotlib.pyplot as plt
    from sklearn.neighbors import KNeighborsRegressor as SkKNN

    n, reps, sd = 100, 12, 0.3
    xt = np.linspace(0.02, 0.98, 60)[:, None]
    ks = np.array([3, 8, 20, 50])
    hs = ks / (2.0 * n)
    data = []
    for _ in range(reps):
        x = ctx.rng.uniform(0, 1, n)[:, None]
        data.append((x, _f(x[:, 0]) + sd * ctx.rng.standard_normal(n)))
    truth = _f(xt[:, 0])
    makers = {
        "k-NN": lambda i: KNeighborsRegressor(int(ks[i])),
        "Nadaraya-Watson (Epanechnikov)": lambda i: NadarayaWatson(
            kernel="epanechnikov", bandwidth=hs[i]
        ),
        "local linear (Epanechnikov)": lambda i: LocallyWeightedRegression(
            kernel="epanechnikov", bandwidth=hs[i], alpha=1e-8
        ),
    }
    results = {}
    for name, make in makers.items():
        bias2, var = [], []
        for i in range(len(ks)):
            P = np.array([make(i).fit(x, y).predict(xt) for x, y in data])
            v = P.var(axis=0, ddof=1)
            # E (mean fit - f)^2 = bias^2 + var / reps: subtract the second term.
            bias2.append(float(np.mean((P.mean(axis=0) - truth) ** 2 - v / reps)))
            var.append(float(np.mean(v)))
        results[name] = (np.array(bias2), np.array(var))
    peer_var = []
    for k in ks:
        P = np.array([SkKNN(int(k)).fit(x, y).predict(xt) for x, y in data])
        peer_var.append(float(np.mean(P.var(axis=0, ddof=1))))

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for (name, (b2, v)), c in zip(results.items(), ["C0", "C1", "C2"], strict=True):
        axes[0].plot(ks, b2, "-o", color=c, label=f"{name}: bias^2")
        axes[0].plot(ks, v, "--s", color=c, label=f"{name}: variance")
        axes[1].plot(ks, b2 + v, "-o", color=c, label=name)
    for ax in axes:
        ax.set_yscale("log")
        ax.set_xlabel("window: k (k-NN), 2 n h (kernels)")
    axes[0].set(title="squared bias and variance", ylabel="bias^2, variance")
    axes[1].set(
        title="expected squared error (excluding the noise sd^2 = 0.09)",
        ylabel="bias^2 + variance",
    )
    axes[0].legend(loc="upper center")
    axes[1].legend(loc="upper center")
    ctx.figure(
        fig,
        "Notice that bias^2 grows and variance falls with the window, for every smoother, "
        "so that the expected error (right) has its minimum at an intermediate window.",
    )
    name0 = "k-NN"
    ctx.table(
        [
            "k",
            "k-NN bias^2",
            "k-NN variance",
            "k-NN variance (scikit-learn)",
            "NW bias^2",
            "NW variance",
            "local linear bias^2",
            "local linear variance",
        ],
        [
            [int(k), results[name0][0][i], results[name0][1][i], peer_var[i]]
            + [results[m][j][i] for m in list(makers)[1:] for j in (0, 1)]
            for i, k in enumerate(ks)
        ],
        "Averages over 60 test points and 12 training sets (bias^2 corrected for the "
        "variance of the mean fit, so it can dip below 0 where it is tiny). Uniform k-NN "
        "variance is about "
        "sd^2 / k away from ties; scikit-learn's column uses its own k-NN on the same sets.",
    )
