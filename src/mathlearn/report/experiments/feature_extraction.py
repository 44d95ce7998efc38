"""Feature extraction: eigen-digits, reconstruction, 2-D embeddings, kernel PCA on circles and
probabilistic PCA with missing data.

Imperial "Mathematics for Inference and Machine Learning" ch. 2; PRML ch. 12;
Oxford "Advanced Topics in Statistical Machine Learning" §1.1.1, §3.6 and §5.5; Stuttgart
"Introduction to Machine Learning" §6.1 (PCA, kernel PCA, MDS, Isomap, spectral embedding).
"""

from __future__ import annotations

import numpy as np

from mathlearn.decomposition import PCA, KernelPCA, ProbabilisticPCA
from mathlearn.discriminant_analysis import FisherLDA
from mathlearn.manifold import MDS, Isomap, SpectralEmbedding
from mathlearn.report import experiment

SECTION = "Feature extraction"


def _digits():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return X.astype(float), y


@experiment(
    "fe-eigendigits",
    title="Eigen-digits and the explained-variance curve",
    section=SECTION,
    description=(
        "PCA of scikit-learn's 8x8 digits (1797 images, D = 64): the mean image and the "
        "leading principal axes drawn as images (the 'eigenfaces' of the notes on digits), "
        "and the cumulative explained-variance ratio, ours against scikit-learn's PCA on the "
        "same data."
    ),
    source=(
        "Imperial 'Mathematics for Inference and Machine Learning' §2.1.3-2.1.4; PRML §12.1; "
        "Stuttgart 'Introduction to Machine Learning' slides 6:7-6:9"
    ),
)
def eigendigits(ctx):
    import matplotlib.pyplot as plt
    from sklearn.decomposition import PCA as SkPCA

    X, _ = _digits()
    ours = PCA().fit(X)
    ref = SkPCA().fit(X)
    fig, axes = plt.subplots(2, 6, figsize=(9, 3.4))
    images = [ours.mean_, *ours.components_[:11]]
    titles = ["mean"] + [f"PC {i + 1}" for i in range(11)]
    for ax, img, title in zip(axes.ravel(), images, titles, strict=True):
        ax.imshow(img.reshape(8, 8), cmap="RdBu_r" if title != "mean" else "gray_r")
        ax.set_title(title, fontsize=8)
        ax.axis("off")
    ctx.figure(fig, "Mean digit and the first 11 principal axes (red positive, blue negative).")

    fig, ax = plt.subplots(figsize=(5, 3.2))
    k = np.arange(1, 65)
    ax.plot(k, np.cumsum(ours.explained_variance_ratio_), "o-", ms=3, label="mathlearn")
    ax.plot(k, np.cumsum(ref.explained_variance_ratio_), "--", label="scikit-learn")
    ax.axhline(0.9, color="gray", lw=0.8)
    ax.set_xlabel("number of components")
    ax.set_ylabel("cumulative explained variance")
    ax.legend()
    ctx.figure(fig, "Cumulative explained-variance ratio of the digits.")
    k90 = int(np.searchsorted(np.cumsum(ours.explained_variance_ratio_), 0.9) + 1)
    k90_ref = SkPCA(n_components=0.9).fit(X).n_components_
    rows = [
        (
            f"ratio of PC {i + 1}",
            ours.explained_variance_ratio_[i],
            ref.explained_variance_ratio_[i],
        )
        for i in range(5)
    ]
    rows.append(("components for 90% variance", k90, k90_ref))
    ctx.table(["quantity", "mathlearn", "scikit-learn"], rows, "Explained variance on digits.")


@experiment(
    "fe-reconstruction",
    title="Reconstruction with a growing number of components",
    section=SECTION,
    description=(
        "Digits reconstructed from k principal components, x~ = mean + V_k V_k^T (x - mean). "
        "The mean squared reconstruction error on the training data equals the sum of the "
        "discarded eigenvalues of the 1/N covariance (PRML §12.1.2); the table shows it "
        "next to the error of scikit-learn's PCA reconstruction."
    ),
    source=(
        "Imperial 'Mathematics for Inference and Machine Learning' §2.1.3.2 (Eckart-Young) and "
        "§2.1.4.2; PRML §12.1.2-12.1.3"
    ),
)
def reconstruction(ctx):
    import matplotlib.pyplot as plt
    from sklearn.decomposition import PCA as SkPCA

    X, _ = _digits()
    n = len(X)
    full = PCA().fit(X)
    ks = [1, 3, 10, 30, 64]
    picks = X[[0, 1, 2, 3]]
    fig, axes = plt.subplots(len(picks), len(ks) + 1, figsize=(6, 4.2))
    rows = []
    for j, k in enumerate(ks):
        pca = PCA(n_components=k).fit(X)
        rec = pca.inverse_transform(pca.transform(picks))
        for i in range(len(picks)):
            axes[i, j + 1].imshow(rec[i].reshape(8, 8), cmap="gray_r")
            axes[i, j + 1].axis("off")
        axes[0, j + 1].set_title(f"k={k}", fontsize=9)
        sk = SkPCA(n_components=k).fit(X)
        sk_err = float(np.mean(np.sum((X - sk.inverse_transform(sk.transform(X))) ** 2, axis=1)))
        discarded = float(np.sum(full.explained_variance_[k:]) * (n - 1) / n)
        rows.append((k, pca.reconstruction_error(X), discarded, sk_err))
    for i in range(len(picks)):
        axes[i, 0].imshow(picks[i].reshape(8, 8), cmap="gray_r")
        axes[i, 0].axis("off")
    axes[0, 0].set_title("original", fontsize=9)
    ctx.figure(
        fig,
        "Four digits reconstructed from k = 1 ... 64 components. Notice that about ten components "
        "already give a recognisable digit, and k = 64 = D reproduces it exactly.",
    )
    ctx.table(
        ["k", "mathlearn MSE", "sum of discarded eigenvalues", "scikit-learn MSE"],
        rows,
        "Mean squared reconstruction error on the 1797 training digits.",
    )


@experiment(
    "fe-embeddings",
    title="2-D embeddings of the digits",
    section=SECTION,
    description=(
        "The same 500 digits embedded in two dimensions by seven methods, coloured by the "
        "true digit. Fisher LDA uses the labels; the others do not. The table gives each "
        "embedding's trustworthiness (sklearn.metrics-style neighbourhood preservation, 10 "
        "neighbours) and the same for scikit-learn's implementation where it has the method "
        "(its MDS is the iterative SMACOF, not classical MDS, and it has no probabilistic PCA "
        "with this API). Our kNN graph joins i and j when either is among the other's "
        "neighbours with weight 1; scikit-learn averages the two directed graphs, hence the "
        "small difference for spectral embedding; Isomap differs only through ties among the "
        "integer-valued digits' distances."
    ),
    source=(
        "Imperial 'Mathematics for Inference and Machine Learning' §2.1.5 (LDA); PRML §12.1.3; "
        "Stuttgart 'Introduction to Machine Learning' slides 6:17-6:29"
    ),
)
def embeddings(ctx):
    import matplotlib.pyplot as plt
    from sklearn.decomposition import PCA as SkPCA
    from sklearn.decomposition import KernelPCA as SkKernelPCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.manifold import Isomap as SkIsomap
    from sklearn.manifold import SpectralEmbedding as SkSpectralEmbedding
    from sklearn.manifold import trustworthiness

    X, y = _digits()
    idx = ctx.rng.choice(len(X), 500, replace=False)
    X, y = X[idx], y[idx]
    Xs = X / 16.0
    gamma = 1.0 / (Xs.shape[1] * Xs.var())
    methods = [
        ("PCA", lambda: PCA(2).fit_transform(X), lambda: SkPCA(2).fit_transform(X)),
        ("probabilistic PCA", lambda: ProbabilisticPCA(2).fit(X).transform(X), None),
        (
            "kernel PCA (rbf)",
            lambda: KernelPCA(2, kernel="rbf", gamma=gamma).fit_transform(Xs),
            lambda: SkKernelPCA(2, kernel="rbf", gamma=gamma).fit_transform(Xs),
        ),
        (
            "Fisher LDA",
            lambda: FisherLDA(n_components=2).fit(X, y).transform(X),
            lambda: LinearDiscriminantAnalysis(n_components=2).fit(X, y).transform(X),
        ),
        ("classical MDS", lambda: MDS(2).fit_transform(X), None),
        (
            "Isomap (k=10)",
            lambda: Isomap(10).fit_transform(X),
            lambda: SkIsomap(n_neighbors=10).fit_transform(X),
        ),
        (
            "spectral embedding",
            lambda: SpectralEmbedding(
                2, affinity="nearest_neighbors", n_neighbors=10
            ).fit_transform(X),
            lambda: SkSpectralEmbedding(
                2, affinity="nearest_neighbors", n_neighbors=10, random_state=0
            ).fit_transform(X),
        ),
    ]
    fig, axes = plt.subplots(2, 4, figsize=(12, 6))
    rows = []
    for ax, (name, ours, peer) in zip(axes.ravel(), methods, strict=False):
        Z = ours()
        ax.scatter(Z[:, 0], Z[:, 1], c=y, cmap="tab10", s=6)
        ax.set_title(name, fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
        t_ours = trustworthiness(X, Z, n_neighbors=10)
        t_peer = trustworthiness(X, peer(), n_neighbors=10) if peer is not None else "n/a"
        rows.append((name, t_ours, t_peer))
    ax = axes.ravel()[-1]
    for digit in range(10):
        ax.scatter([], [], color=plt.cm.tab10(digit / 9), label=str(digit), s=12)
    ax.legend(ncol=2, loc="center", title="digit", frameon=False)
    ax.axis("off")
    ctx.figure(
        fig,
        "Seven 2-D embeddings of 500 digits. Only Fisher LDA sees the labels; compare the "
        "unsupervised methods by how well each colour (digit) stays together, which the "
        "table's trustworthiness measures.",
    )
    ctx.table(
        ["method", "trustworthiness (mathlearn)", "trustworthiness (scikit-learn)"],
        rows,
        "Neighbourhood preservation of the 2-D embeddings (1 is perfect).",
    )


@experiment(
    "fe-kpca-circles",
    title="Kernel PCA on concentric circles",
    section=SECTION,
    description=(
        "Two concentric circles cannot be separated by any linear projection, so PCA only "
        "rotates them; kernel PCA with an RBF kernel (gamma = 5) separates them along its first "
        "component. The last panel shows the approximate pre-images learned by kernel ridge "
        "regression (fit_inverse_transform) from 30 components. The table compares the "
        "leading eigenvalues of the centred Gram matrix and the pre-image error with "
        "scikit-learn's."
    ),
    source=(
        "Imperial 'Mathematics for Inference and Machine Learning' §2.2.1; PRML §12.3; Oxford "
        "'Advanced Topics in Statistical Machine Learning' §3.6; "
        "Stuttgart 'Introduction to Machine Learning' slides 6:17-6:21"
    ),
)
def kpca_circles(ctx):
    import matplotlib.pyplot as plt
    from sklearn.datasets import make_circles
    from sklearn.decomposition import KernelPCA as SkKernelPCA

    X, y = make_circles(n_samples=400, factor=0.3, noise=0.05, random_state=ctx.seed)
    kw = {"n_components": 2, "kernel": "rbf", "gamma": 5.0, "alpha": 0.1}
    kpca = KernelPCA(**kw).fit(X)
    Z = kpca.transform(X)
    P = PCA(2).fit_transform(X)
    # Pre-images need more than the two separating components to be faithful.
    many = KernelPCA(
        n_components=30, kernel="rbf", gamma=5.0, alpha=0.01, fit_inverse_transform=True
    ).fit(X)
    back = many.inverse_transform(many.transform(X))
    fig, axes = plt.subplots(1, 4, figsize=(13, 3.2))
    panels = [
        (X, "data", ("x1", "x2")),
        (P, "PCA", ("PC 1", "PC 2")),
        (Z, "kernel PCA (rbf)", ("kernel PC 1", "kernel PC 2")),
        (back, "pre-images (30 comp.)", ("x1", "x2")),
    ]
    for ax, (A, title, (xl, yl)) in zip(axes, panels, strict=True):
        ax.scatter(A[:, 0], A[:, 1], c=y, cmap="coolwarm", s=6)
        ax.set(title=title, xlabel=xl, ylabel=yl)
        ax.set_aspect("equal", adjustable="datalim")
    ctx.figure(
        fig,
        "Concentric circles: data, PCA, kernel PCA and kernel-ridge pre-images. Notice that "
        "PCA, a rotation, leaves the circles nested, while kernel PCA pulls them apart.",
    )
    ref = SkKernelPCA(**kw).fit(X)
    rows = [(i + 1, kpca.eigenvalues_[i], ref.eigenvalues_[i]) for i in range(2)]
    z0 = Z[:, 0]
    acc = max(max(np.mean((z0 > t) == y), np.mean((z0 < t) == y)) for t in z0)
    rows.append(("best threshold accuracy on component 1", acc, "-"))
    ref_many = SkKernelPCA(
        n_components=30, kernel="rbf", gamma=5.0, alpha=0.01, fit_inverse_transform=True
    ).fit(X)
    err = float(np.mean(np.sum((back - X) ** 2, axis=1)))
    err_ref = float(
        np.mean(np.sum((ref_many.inverse_transform(ref_many.transform(X)) - X) ** 2, axis=1))
    )
    rows.append(("pre-image mean squared error (30 components)", err, err_ref))
    ctx.table(["eigenvalue", "mathlearn", "scikit-learn"], rows, "Kernel PCA on circles.")


@experiment(
    "fe-ppca-missing",
    title="Probabilistic PCA with missing data",
    section=SECTION,
    description=(
        "Data drawn from a PPCA model (D = 10, k = 2, sigma = 0.3) have a growing fraction of "
        "entries deleted at random. EM conditions on the observed entries of each sample; its "
        "observed-data log-likelihood never decreases (left). Right: the largest principal "
        "angle between the fitted and the true principal subspace, and the RMSE of the "
        "imputed entries E[x_m | x_o] = mu_m + W_m E[z | x_o], against mean imputation. EM "
        "starts from the closed-form fit of the mean-imputed data (init='pca'), so at 0% "
        "missing it stops at once at the closed-form maximum (value in the table caption). "
        "From a random start EM crawls when sigma^2 is small next to the leading eigenvalues: "
        "the length of W along a strong direction contracts towards its fixed point at a rate "
        "of about 1 - 2 sigma^2 / lambda per iteration."
    ),
    source=(
        "Imperial 'Mathematics for Inference and Machine Learning' §2.2.1.1; PRML §12.2; Oxford "
        "'Advanced Topics in Statistical Machine Learning' §5.5 (EM)"
    ),
)
def ppca_missing(ctx):
    import matplotlib.pyplot as plt
    import scipy.linalg as sla

    rng = ctx.rng
    n, d, k = 200, 10, 2
    W = rng.normal(size=(d, k)) * [3.0, 2.0]
    X = rng.normal(size=(n, k)) @ W.T + 0.3 * rng.normal(size=(n, d)) + rng.normal(size=d)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    rows = []
    fractions = [0.0, 0.1, 0.3, 0.5]
    angles, rmse, rmse_mean = [], [], []
    for frac in fractions:
        mask = rng.random(X.shape) < frac
        mask[mask.all(axis=1), 0] = False  # keep at least one observed entry per sample
        Xm = np.where(mask, np.nan, X)
        m = ProbabilisticPCA(k, method="em", tol=1e-5, max_iter=5000, random_state=0).fit(Xm)
        axes[0].plot(m.lower_bound_history_, label=f"{int(frac * 100)}% missing")
        angle = np.degrees(np.max(sla.subspace_angles(m.components_.T, W)))
        angles.append(angle)
        Wf = m.components_.T
        imp, imp_mean = [], []
        for i in np.flatnonzero(mask.any(axis=1)):
            o, mi = ~mask[i], mask[i]
            Wo = Wf[o]
            M = Wo.T @ Wo + m.noise_variance_ * np.eye(k)
            z = np.linalg.solve(M, Wo.T @ (X[i, o] - m.mean_[o]))
            imp.append(X[i, mi] - (m.mean_[mi] + Wf[mi] @ z))
            imp_mean.append(X[i, mi] - np.nanmean(Xm, axis=0)[mi])
        r = float(np.sqrt(np.mean(np.concatenate(imp) ** 2))) if imp else 0.0
        r0 = float(np.sqrt(np.mean(np.concatenate(imp_mean) ** 2))) if imp_mean else 0.0
        rmse.append(r)
        rmse_mean.append(r0)
        rows.append((f"{int(frac * 100)}%", m.n_iter_, m.lower_bound_, angle, r, r0))
    closed = ProbabilisticPCA(k).fit(X).score(X)
    axes[0].set_xscale("log")
    axes[0].set_xlabel("EM iteration")
    axes[0].set_ylabel("mean observed log-likelihood")
    axes[0].legend()
    pct = [100 * f for f in fractions]
    axes[1].plot(pct, rmse, "o-", label="PPCA imputation RMSE")
    axes[1].plot(pct, rmse_mean, "s--", label="mean imputation RMSE")
    axes[1].plot(pct, np.array(angles) / 10, "^:", label="subspace angle / 10 (deg)")
    axes[1].set(xlabel="% entries missing", ylabel="error")
    axes[1].legend()
    ctx.figure(
        fig,
        "EM for PPCA with missing values: convergence and accuracy. Notice that the "
        "log-likelihood rises monotonically and that PPCA's imputation error stays well below "
        "mean imputation's as the fraction missing grows.",
    )
    ctx.table(
        ["missing", "EM iterations", "mean log-lik.", "angle (deg)", "RMSE PPCA", "RMSE mean"],
        rows,
        f"At 0% missing the closed-form ML fit has mean log-likelihood {closed:.6f}.",
    )


def _fisher_ratio(v, Sb, Sw):
    return float((v @ Sb @ v) / (v @ Sw @ v))


@experiment(
    "fe-fisher-two-class",
    title="Fisher's discriminant on the notes' two-class example",
    section=SECTION,
    description=(
        "The worked example of Imperial 'Mathematics for Inference and Machine Learning' "
        "§2.1.5.1: two classes of five 2-D points. The Fisher "
        "direction w ~ S_w^{-1}(mu_1 - mu_2) (arrow) separates the projected classes "
        "(histograms), and has the largest Fisher ratio J = w^T S_b w / w^T S_w w; the first "
        "principal axis ignores the labels and has a smaller J. The table puts our scatter "
        "matrices and direction next to the values printed in the notes (which truncate to "
        "two digits)."
    ),
    source="Imperial 'Mathematics for Inference and Machine Learning' §2.1.5.1 (worked example)",
)
def fisher_two_class(ctx):
    import matplotlib.pyplot as plt
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    from mathlearn.discriminant_analysis import scatter_matrices

    X = np.array(
        [[4, 1], [2, 4], [2, 3], [3, 6], [4, 4], [9, 10], [6, 8], [9, 5], [8, 7], [10, 8]],
        dtype=float,
    )
    y = np.array([0] * 5 + [1] * 5)
    lda = FisherLDA(scatter="normalized").fit(X, y)
    Sw, Sb = scatter_matrices(X, y, scatter="normalized")
    w = lda.scalings_[:, 0] / np.linalg.norm(lda.scalings_[:, 0])
    pc = PCA(1).fit(X).components_[0]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    ax = axes[0]
    ax.scatter(*X[y == 0].T, label="class 1")
    ax.scatter(*X[y == 1].T, label="class 2")
    m = X.mean(axis=0)
    ax.annotate("", m + 3 * w, m, arrowprops={"arrowstyle": "->", "color": "k"})
    ax.annotate("", m + 3 * pc, m, arrowprops={"arrowstyle": "->", "color": "gray", "ls": "--"})
    ax.text(*(m + 3.2 * w), "Fisher w")
    ax.text(*(m + 3.2 * pc), "PC 1", color="gray")
    ax.set_aspect("equal")
    ax.set(xlabel="x1", ylabel="x2")
    ax.legend()
    for ax, v, title in ((axes[1], w, "projection on w"), (axes[2], pc, "projection on PC 1")):
        z = (X - m) @ v
        ax.hist([z[y == 0], z[y == 1]], bins=8, label=["class 1", "class 2"])
        ax.set(title=title, xlabel="projection z", ylabel="count")
    ctx.figure(
        fig,
        "Fisher direction against the first principal axis. Notice that the projections on "
        "Fisher's w separate the classes while those on PC 1, the direction of largest "
        "spread, overlap: the largest variance is not the most discriminative direction.",
    )
    ref = LinearDiscriminantAnalysis().fit(X, y)
    wr = ref.scalings_[:, 0] / np.linalg.norm(ref.scalings_[:, 0])
    rows = [
        ("S_w", np.round(Sw, 4).tolist(), "[[2.64, -0.44], [-0.44, 5.28]]", "-"),
        ("S_b (two-class form = 2 x ours)", np.round(2 * Sb, 4).tolist(),
         "[[29.16, 21.6], [21.6, 16.0]]", "-"),
        ("leading eigenvalue (two-class form)", 2 * float(lda.eigenvalues_[0]), "15.65", "-"),
        ("unit direction |w|", np.round(np.abs(w), 6).tolist(), "[0.91, 0.39]",
         np.round(np.abs(wr), 6).tolist()),
        ("J(Fisher w) / J(PC 1)", _fisher_ratio(w, Sb, Sw) / _fisher_ratio(pc, Sb, Sw), "-", "-"),
        ("training accuracy", lda.score(X, y), "-", ref.score(X, y)),
    ]  # fmt: skip
    ctx.table(
        ["quantity", "mathlearn", "notes", "scikit-learn"],
        rows,
        "The worked example of Imperial 'Mathematics for Inference and Machine Learning' "
        "§2.1.5.1.",
    )
