"""Support vector machines: the maximum-margin hyperplane, C and the RBF width, the SVR tube,
the perceptron's updates; each next to libsvm / scikit-learn on the same data."""

from __future__ import annotations

import numpy as np

from mathlearn.linear_model import Perceptron
from mathlearn.report import experiment
from mathlearn.svm import SVC, SVR

SECTION = "Support vector machines"


def _blobs(rng, n, sep):
    X = np.vstack([rng.normal(-sep, 1.0, (n, 2)), rng.normal(sep, 1.0, (n, 2))])
    return X, np.repeat([0, 1], n)


def _grid(X, m=200):
    lo, hi = X.min(0) - 1, X.max(0) + 1
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], m), np.linspace(lo[1], hi[1], m))
    return gx, gy, np.column_stack([gx.ravel(), gy.ravel()])


@experiment(
    "svm-margin",
    title="The maximum-margin hyperplane and its support vectors",
    section=SECTION,
    description=(
        "A linear C-SVM on two separable clouds (C = 1e6, the hard margin) and on overlapping "
        "ones (C = 1): the decision line f(x) = 0, the margins f(x) = +-1 and the support "
        "vectors (circled). Notice that only the support vectors fix the line, and that on "
        "overlapping data points inside the margin or on the wrong side are support vectors "
        "too (margin errors, alpha = C). The table puts scikit-learn's libsvm beside ours."
    ),
    source=(
        "Oxford 'Advanced Topics in Statistical Machine Learning' §2.2, Figs 2.4-2.6; Imperial "
        "'Mathematics for Inference and Machine Learning' §3.1, Figs 3.1-3.5"
    ),
)
def margin(ctx):
    import matplotlib.pyplot as plt
    from sklearn.svm import SVC as SkSVC

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    rows = []
    for ax, (sep, C) in zip(axes, [(2.2, 1e6), (0.9, 1.0)], strict=True):
        X, y = _blobs(ctx.rng, 40, sep)
        ours = SVC(kernel="linear", C=C, tol=1e-8).fit(X, y)
        peer = SkSVC(kernel="linear", C=C, tol=1e-8).fit(X, y)
        gx, gy, G = _grid(X)
        f = ours.decision_function(G).reshape(gx.shape)
        ax.contour(gx, gy, f, levels=[-1, 0, 1], colors="k", linestyles=["--", "-", "--"])
        ax.scatter(X[:, 0], X[:, 1], c=y, cmap="coolwarm", s=14)
        sv = ours.support_vectors_
        ax.scatter(sv[:, 0], sv[:, 1], s=80, facecolors="none", edgecolors="k", label="SV")
        w = (ours.dual_coef_ @ ours.support_vectors_)[0]
        ax.set_title(f"C = {C:g}: margin 2/||w|| = {2 / np.linalg.norm(w):.3f}")
        ax.set_xlabel("x1")
        ax.set_ylabel("x2")
        ax.legend(loc="lower right")
        rows.append(
            [
                f"{C:g}",
                len(ours.support_),
                len(peer.support_),
                float(np.abs(ours.decision_function(X) - peer.decision_function(X)).max()),
            ]
        )
    ctx.figure(fig, "Decision line (solid), margins (dashed) and support vectors (circled).")
    ctx.table(
        ["C", "SVs (ours)", "SVs (libsvm)", "max |f_ours - f_libsvm|"],
        rows,
        "Both solvers stop at a KKT gap of 1e-8, so the decision values agree to about that.",
    )


@experiment(
    "svm-c-and-gamma",
    title="RBF SVM: the effect of C and of the kernel width",
    section=SECTION,
    description=(
        "An RBF C-SVM on two noisy interleaved classes for C in {0.1, 10} and gamma in {0.2, "
        "5}. Small gamma (wide kernel) and small C give smooth boundaries with many support "
        "vectors; large gamma and large C wrap the boundary around individual points. The "
        "titles give the training accuracy and the number of support vectors."
    ),
    source="Oxford 'Advanced Topics in Statistical Machine Learning' §3.5 (kernel SVM)",
)
def c_and_gamma(ctx):
    import matplotlib.pyplot as plt

    n = 100
    t = ctx.rng.uniform(0, np.pi, n)
    X = np.vstack(
        [
            np.column_stack([np.cos(t), np.sin(t)]),
            np.column_stack([1 - np.cos(t), 0.5 - np.sin(t)]),
        ]
    ) + 0.25 * ctx.rng.standard_normal((2 * n, 2))
    y = np.repeat([0, 1], n)
    fig, axes = plt.subplots(2, 2, figsize=(10, 8.4))
    gx, gy, G = _grid(X, 150)
    for ax, (C, gamma) in zip(
        axes.ravel(), [(0.1, 0.2), (10, 0.2), (0.1, 5), (10, 5)], strict=True
    ):
        m = SVC(C=C, gamma=gamma).fit(X, y)
        f = m.decision_function(G).reshape(gx.shape)
        ax.contourf(gx, gy, f, levels=[-100, 0, 100], colors=["#c6dbef", "#fcbba1"], alpha=0.6)
        ax.contour(gx, gy, f, levels=[-1, 0, 1], colors="k", linestyles=["--", "-", "--"])
        ax.scatter(X[:, 0], X[:, 1], c=y, cmap="coolwarm", s=10)
        acc = float(np.mean(m.predict(X) == y))
        ax.set_title(f"C = {C}, gamma = {gamma}: acc {acc:.2f}, {len(m.support_)} SVs")
        ax.set_xlabel("x1")
        ax.set_ylabel("x2")
    ctx.figure(
        fig,
        "Boundaries (solid) and margins (dashed) for four (C, gamma). Notice that large gamma and "
        "large C wrap the boundary around individual points, while small gamma and small C give "
        "smooth boundaries with many support vectors.",
    )


@experiment(
    "svm-svr-tube",
    title="epsilon-SVR and its tube",
    section=SECTION,
    description=(
        "epsilon-SVR with an RBF kernel on a noisy sine for epsilon in {0.1, 0.4}: points "
        "strictly inside the tube f(x) +- epsilon are not support vectors; a wider tube "
        "needs fewer of them and gives a flatter function."
    ),
    source="Imperial 'Mathematics for Inference and Machine Learning' §3.2.2, Figs 3.6-3.9",
)
def svr_tube(ctx):
    import matplotlib.pyplot as plt
    from sklearn.svm import SVR as SkSVR

    x = np.sort(ctx.rng.uniform(0, 2 * np.pi, 80))
    y = np.sin(x) + 0.2 * ctx.rng.standard_normal(80)
    X = x[:, None]
    grid = np.linspace(0, 2 * np.pi, 400)[:, None]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    rows = []
    for ax, eps in zip(axes, [0.1, 0.4], strict=True):
        m = SVR(C=5.0, epsilon=eps, gamma=0.5).fit(X, y)
        peer = SkSVR(C=5.0, epsilon=eps, gamma=0.5).fit(X, y)
        f = m.predict(grid)
        ax.plot(grid[:, 0], f, "k", label="f(x)")
        ax.fill_between(grid[:, 0], f - eps, f + eps, color="0.85", label="tube")
        ax.scatter(x, y, s=10, c="tab:blue", label="data")
        ax.scatter(
            x[m.support_], y[m.support_], s=50, facecolors="none", edgecolors="r", label="SV"
        )
        ax.set_title(f"epsilon = {eps}: {len(m.support_)} support vectors")
        ax.set_xlabel("x")
        ax.legend(loc="lower left")
        rows.append(
            [
                eps,
                len(m.support_),
                len(peer.support_),
                float(np.abs(m.predict(X) - peer.predict(X)).max()),
            ]
        )
    axes[0].set_ylabel("y")
    ctx.figure(fig, "The epsilon-tube (grey) around the SVR fit; support vectors circled.")
    ctx.table(
        ["epsilon", "SVs (ours)", "SVs (libsvm)", "max |f_ours - f_libsvm|"],
        rows,
        "Same data, C = 5, gamma = 0.5, tol = 1e-3 for both.",
    )


@experiment(
    "svm-perceptron",
    title="The perceptron converges on separable data",
    section=SECTION,
    description=(
        "The perceptron rule (update when t_n w^T phi(x_n) <= 0) on separable clouds: the "
        "number of mistakes per epoch falls to zero in finitely many epochs, as the "
        "perceptron convergence theorem says, and the final boundary separates the data; "
        "the maximum-margin SVM on the same data for comparison."
    ),
    source="PRML §4.1.7 (the perceptron), the PRML-based notes' perceptron example",
)
def perceptron(ctx):
    import matplotlib.pyplot as plt

    X, y = _blobs(ctx.rng, 50, 1.8)
    t = np.where(y == 1, 1.0, -1.0)
    Phi = np.hstack([np.ones((100, 1)), X])
    w = np.zeros(3)
    mistakes = []
    for _ in range(100):
        count = 0
        for n in range(100):
            if t[n] * (Phi[n] @ w) <= 0:
                w += t[n] * Phi[n]
                count += 1
        mistakes.append(count)
        if count == 0:
            break
    clf = Perceptron().fit(X, y)
    svm = SVC(kernel="linear", C=1e6).fit(X, y)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    axes[0].plot(np.arange(1, len(mistakes) + 1), mistakes, "o-")
    axes[0].set_xlabel("epoch")
    axes[0].set_ylabel("mistakes (updates)")
    axes[0].set_title(f"{len(mistakes)} epochs to an epoch without mistakes")
    gx, gy, G = _grid(X)
    axes[1].contour(
        gx, gy, clf.decision_function(G).reshape(gx.shape), levels=[0], colors="tab:green"
    )
    axes[1].contour(
        gx, gy, svm.decision_function(G).reshape(gx.shape), levels=[0], colors="k", linestyles="--"
    )
    axes[1].scatter(X[:, 0], X[:, 1], c=y, cmap="coolwarm", s=12)
    axes[1].plot([], [], color="tab:green", label="perceptron")
    axes[1].plot([], [], "k--", label="max-margin SVM")
    axes[1].legend(loc="lower right")
    axes[1].set_xlabel("x1")
    axes[1].set_ylabel("x2")
    ctx.figure(
        fig,
        "Mistakes per epoch (left); the perceptron's and the SVM's boundaries. Notice that the "
        "mistakes reach zero after finitely many epochs (the convergence theorem) and that the "
        "perceptron stops at the first separating line, not the widest-margin one.",
    )
    ctx.table(
        ["epochs (loop above)", "epochs (Perceptron.fit)", "training errors"],
        [[len(mistakes), clf.n_iter_, int(np.sum(clf.predict(X) != y))]],
    )
