"""Classification chapter: least squares vs logistic regression, the Bayesian logistic
predictive, generative classifiers and naive Bayes with and without pseudo-counts."""

from __future__ import annotations

import warnings

import numpy as np

from mathlearn.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)
from mathlearn.linear_model import (
    BayesianLogisticRegression,
    LeastSquaresClassifier,
    LogisticRegression,
)
from mathlearn.naive_bayes import MultinomialNB
from mathlearn.report import experiment

SECTION = "Classification"


def _two_blobs(rng, n=50):
    X = np.vstack([rng.normal([-1.0, -1.0], 0.6, (n, 2)), rng.normal([1.0, 1.0], 0.6, (n, 2))])
    return X, np.repeat([0, 1], n)


@experiment(
    "classification-ls-vs-logistic-outliers",
    title="Least squares against logistic regression with outliers",
    section=SECTION,
    description=(
        "Two Gaussian classes, then the same data with 20 extra points of class 1 far on the "
        "correct side of the boundary. The least-squares classifier's boundary moves towards "
        "the outliers (they have large squared error although correctly classified); logistic "
        "regression's barely moves. Training accuracy on the original points, ours beside "
        "scikit-learn's LogisticRegression (same C)."
    ),
    source="PRML §4.1.3 and §4.3.2, Fig. 4.4",
)
def ls_vs_logistic(ctx):
    import matplotlib.pyplot as plt
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression

    rng = ctx.rng
    X, y = _two_blobs(rng)
    Xo = np.vstack([X, rng.normal([7.0, 7.0], 0.7, (20, 2))])
    yo = np.r_[y, np.ones(20, dtype=int)]
    g = np.linspace(-4, 9, 200)
    G = np.array(np.meshgrid(g, g)).reshape(2, -1).T
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    rows = []
    for ax, (Xd, yd, label) in zip(
        axes, ((X, y, "no outliers"), (Xo, yo, "with outliers")), strict=True
    ):
        ls = LeastSquaresClassifier().fit(Xd, yd)
        lr = LogisticRegression(C=100.0, solver="newton").fit(Xd, yd)
        sk = SkLogisticRegression(C=100.0).fit(Xd, yd)
        for est, color in ((ls, "m"), (lr, "g")):
            ax.contour(g, g, est.decision_function(G).reshape(200, 200), [0.0], colors=color)
        ax.scatter(*Xd[yd == 0].T, c="r", marker="x", s=15)
        ax.scatter(*Xd[yd == 1].T, facecolors="none", edgecolors="b", s=15)
        ax.set_title(f"{label}: least squares (magenta), logistic (green)", fontsize=9)
        ax.set_xlim(-4, 9)
        ax.set_ylim(-4, 9)
        rows.append(
            [
                label,
                float(np.mean(ls.predict(X) == y)),
                float(np.mean(lr.predict(X) == y)),
                float(np.mean(sk.predict(X) == y)),
            ]
        )
    ctx.figure(fig, "Decision boundaries without and with outliers.")
    ctx.table(
        ["data", "least squares acc.", "logistic acc. (ours)", "logistic acc. (sklearn)"],
        rows,
        "Accuracy on the 100 original points.",
    )


@experiment(
    "classification-bayesian-logistic-predictive",
    title="Bayesian logistic regression: the predictive against the MAP plug-in",
    section=SECTION,
    description=(
        "Twenty points in two classes; the Laplace posterior over the weights (prior "
        "N(0, I)). The probit-approximated predictive sigma(mu / sqrt(1 + pi "
        "s^2 / 8)) stays near 1/2 where data are sparse (s^2 grows away from the data), while "
        "the MAP plug-in sigma(mu) is as confident there as its slope allows. The Monte Carlo "
        "predictive (2000 draws of the latent f) checks the probit approximation."
    ),
    source=(
        "Stuttgart 'Introduction to Machine Learning' slides 8:19-8:21; Oxford 'Advanced Topics "
        "in Statistical Machine Learning' §7.3; "
        "PRML §4.5"
    ),
)
def bayes_logistic_predictive(ctx):
    import matplotlib.pyplot as plt
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression

    X, y = _two_blobs(ctx.rng, n=10)
    # A fixed prior: with 20 points the classes may be separable, and then the evidence has
    # no finite maximiser over the prior precision.
    m = BayesianLogisticRegression(prior_precision=1.0, random_state=ctx.seed).fit(X, y)
    g = np.linspace(-6, 6, 150)
    G = np.array(np.meshgrid(g, g)).reshape(2, -1).T
    p_map = m.predict_proba_with(G, "map")[:, 1].reshape(150, 150)
    p_bayes = m.predict_proba(G)[:, 1].reshape(150, 150)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    for ax, p, title in ((axes[0], p_map, "MAP plug-in"), (axes[1], p_bayes, "Laplace + probit")):
        cs = ax.contour(g, g, p, levels=[0.1, 0.3, 0.5, 0.7, 0.9], cmap="coolwarm")
        ax.clabel(cs, fontsize=7)
        ax.scatter(*X[y == 0].T, c="r", marker="x")
        ax.scatter(*X[y == 1].T, facecolors="none", edgecolors="b")
        ax.set_title(title)
    ctx.figure(fig, "p(y = 1 | x): contours at 0.1, 0.3, 0.5, 0.7, 0.9.")
    near = np.array([[0.0, 0.0], [1.0, 1.0]])
    far = np.array([[5.0, -5.0], [-5.0, 5.0]])
    # scikit-learn's LogisticRegression with the same (all-weights-penalised) objective is
    # the MAP: C = 1 / alpha on [X, 1] without its own intercept.
    sk = SkLogisticRegression(C=1 / m.prior_precision_, fit_intercept=False, tol=1e-10)
    sk.fit(np.hstack([X, np.ones((len(X), 1))]), y)
    rows = []
    for name, Q in (("near the data", near), ("far from the data", far)):
        sk_p = sk.predict_proba(np.hstack([Q, np.ones((2, 1))]))[:, 1]
        for q, pm, pb, pmc, ps, s2 in zip(
            Q,
            m.predict_proba_with(Q, "map")[:, 1],
            m.predict_proba(Q)[:, 1],
            m.predict_proba_with(Q, "mc")[:, 1],
            sk_p,
            m.predict_latent(Q)[1],
            strict=True,
        ):
            rows.append([name, str(q.tolist()), s2, pm, ps, pb, pmc])
    ctx.table(
        ["where", "x", "s^2", "MAP (ours)", "MAP (sklearn)", "probit", "Monte Carlo"],
        rows,
        f"Prior precision {m.prior_precision_:.3g}; Laplace log evidence {m.log_evidence_:.3f}.",
    )


@experiment(
    "classification-generative-vs-discriminative",
    title="Generative (LDA, QDA) against discriminative (logistic) classifiers",
    section=SECTION,
    description=(
        "Three Gaussian classes with different covariances: test accuracy and test log-loss "
        "of LDA (shared covariance), QDA (one per class) and multinomial logistic regression, "
        "ours beside scikit-learn's."
    ),
    source="PRML §4.2-4.3; Stuttgart 'Introduction to Machine Learning' §3.3 (slides 3:14-3:17)",
)
def generative_vs_discriminative(ctx):
    from sklearn import discriminant_analysis as sda
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression
    from sklearn.metrics import log_loss

    rng = ctx.rng
    covs = [
        np.array([[1.0, 0.8], [0.8, 1.0]]),
        np.eye(2) * 0.3,
        np.array([[2.0, -0.5], [-0.5, 0.5]]),
    ]
    means = [np.array([0.0, 0.0]), np.array([2.0, 2.0]), np.array([-2.0, 2.0])]

    def sample(n):
        Xs = [rng.multivariate_normal(mu, c, n) for mu, c in zip(means, covs, strict=True)]
        return np.vstack(Xs), np.repeat([0, 1, 2], n)

    X, y = sample(100)
    Xt, yt = sample(1000)
    pairs = [
        ("LDA", LinearDiscriminantAnalysis(), sda.LinearDiscriminantAnalysis()),
        ("QDA", QuadraticDiscriminantAnalysis(), sda.QuadraticDiscriminantAnalysis()),
        ("logistic", LogisticRegression(solver="newton"), SkLogisticRegression()),
    ]
    rows = []
    for name, ours, ref in pairs:
        ours.fit(X, y)
        ref.fit(X, y)
        rows.append(
            [
                name,
                float(np.mean(ours.predict(Xt) == yt)),
                float(np.mean(ref.predict(Xt) == yt)),
                log_loss(yt, ours.predict_proba(Xt)),
                log_loss(yt, ref.predict_proba(Xt)),
            ]
        )
    ctx.table(
        [
            "model",
            "accuracy (ours)",
            "accuracy (sklearn)",
            "log-loss (ours)",
            "log-loss (sklearn)",
        ],
        rows,
        "300 training and 3000 test points.",
    )


@experiment(
    "classification-naive-bayes-pseudocounts",
    title="Naive Bayes: maximum likelihood against the Bayesian (pseudo-count) estimate",
    section=SECTION,
    description=(
        "Word counts from two topics with 200 words each, 20 training documents. Test "
        "documents contain words never seen with a class in training: under the "
        "maximum-likelihood estimate (alpha = 0) such a document has probability zero under "
        "that class, and zero under every class if it holds unseen words of both; the "
        "Dirichlet posterior predictive (alpha = 1) has no zeros. Ours beside scikit-learn's "
        "MultinomialNB."
    ),
    source="Oxford 'Advanced Topics in Statistical Machine Learning' §7.2 (Bayesian naive Bayes)",
)
def naive_bayes_pseudocounts(ctx):
    from sklearn.naive_bayes import MultinomialNB as SkMultinomialNB

    rng = ctx.rng
    V = 200
    topics = rng.dirichlet(np.full(V, 0.1), size=2)

    def docs(n):
        y = rng.integers(0, 2, n)
        lengths = rng.integers(20, 60, n)
        X = np.array([rng.multinomial(L, topics[k]) for L, k in zip(lengths, y, strict=True)])
        return X.astype(float), y

    X, y = docs(20)
    Xt, yt = docs(500)
    rows = []
    for alpha in (0.0, 0.01, 1.0):
        ours = MultinomialNB(alpha=alpha).fit(X, y)
        jll = ours.predict_joint_log_proba(Xt)
        dead = ~np.isfinite(jll).any(axis=1)
        ok = ~dead
        acc = float(np.mean(ours.classes_[np.argmax(jll[ok], axis=1)] == yt[ok]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = SkMultinomialNB(alpha=max(alpha, 1e-10), force_alpha=True).fit(X, y)
        rows.append([alpha, int(dead.sum()), acc, float(np.mean(ref.predict(Xt) == yt))])
    ctx.table(
        [
            "alpha",
            "test docs with p = 0 under every class (ours)",
            "accuracy on the others (ours)",
            "accuracy (sklearn, alpha >= 1e-10)",
        ],
        rows,
        "scikit-learn clips alpha to 1e-10, so its 'maximum likelihood' is a tiny pseudo-count "
        "that hides the zeros; ours reports them (predict raises for such a document).",
    )
