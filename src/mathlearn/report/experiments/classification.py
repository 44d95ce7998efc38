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
        ax.set(title=f"{label}: least squares (magenta), logistic (green)", xlabel="x1")
        ax.set_ylabel("x2")
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
    ctx.figure(
        fig,
        "Decision boundaries without and with outliers. Notice that the added "
        "outliers drag the least-squares boundary (magenta) while the logistic boundary "
        "(green) hardly moves: squared error punishes points that are correctly classified "
        "but far from the boundary.",
    )
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
        ax.clabel(cs, fontsize=9)
        ax.scatter(*X[y == 0].T, c="r", marker="x")
        ax.scatter(*X[y == 1].T, facecolors="none", edgecolors="b")
        ax.set(title=title, xlabel="x1", ylabel="x2")
    ctx.figure(
        fig,
        "p(y = 1 | x): contours at 0.1, 0.3, 0.5, 0.7, 0.9. Notice that the 0.5 contours "
        "coincide while the Laplace predictive's outer contours fan out away from the data: "
        "far from the training points it is less confident than the MAP plug-in.",
    )
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


def _three_classes(rng, n):
    """Three classes in 2-D: two blobs and a curved band between them."""
    a = rng.normal([-1.5, -1.0], 0.45, (n, 2))
    b = rng.normal([1.5, -1.0], 0.45, (n, 2))
    t = rng.uniform(0.15 * np.pi, 0.85 * np.pi, n)
    c = np.c_[1.6 * np.cos(t), 1.6 * np.sin(t) - 1.2] + rng.normal(0, 0.15, (n, 2))
    return np.vstack([a, b, c]), np.repeat([0, 1, 2], n)


@experiment(
    "classification-decision-boundaries",
    title="Three classes with linear, cubic and RBF features",
    section=SECTION,
    description=(
        "Multinomial logistic regression on the raw inputs, on all monomials up to degree 3 "
        "(PolynomialBasis) and kernel logistic regression with the RBF kernel (the kernelised "
        "Newton in the W^1/2 form for two classes, L-BFGS on the dual coefficients for three). "
        "Linear features cannot separate the curved class; cubic and RBF features can. Test "
        "accuracy and log-loss, ours beside scikit-learn's LogisticRegression on the same "
        "features and C (scikit-learn has no kernel logistic regression); Newton iterations "
        "(quadratic convergence: a handful)."
    ),
    source=(
        'Stuttgart "Introduction to Machine Learning" slides 3:14-3:22 and Ex. 4.1 (logistic '
        "regression by Newton), slide 5:8 (kernel logistic regression); PRML §4.3"
    ),
)
def decision_boundaries(ctx):
    import matplotlib.pyplot as plt
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression
    from sklearn.metrics import log_loss

    from mathlearn.linear_model import KernelLogisticRegression
    from mathlearn.preprocessing import PolynomialBasis

    X, y = _three_classes(ctx.rng, 60)
    Xt, yt = _three_classes(ctx.rng, 300)
    g = np.linspace(-3.5, 3.5, 120)
    G = np.array(np.meshgrid(g, g)).reshape(2, -1).T
    cubic = PolynomialBasis(3, include_bias=False).fit(X)
    C = 10.0
    models = [
        ("linear", LogisticRegression(C=C, solver="newton"), lambda Z: Z),
        ("cubic", LogisticRegression(C=C, solver="newton"), cubic.transform),
        ("RBF kernel", KernelLogisticRegression(C=C, kernel="rbf", gamma=1.0), lambda Z: Z),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
    rows = []
    for ax, (name, est, phi) in zip(axes, models, strict=True):
        est.fit(phi(X), y)
        ax.contourf(
            g,
            g,
            est.predict(phi(G)).reshape(120, 120),
            levels=[-0.5, 0.5, 1.5, 2.5],
            colors=["#fbb", "#bbf", "#bfb"],
            alpha=0.6,
        )
        for k, m in zip(range(3), "xo^", strict=True):
            ax.scatter(*X[y == k].T, marker=m, s=14, c="k")
        ax.set(title=name, xlabel="x1", ylabel="x2")
        if name == "RBF kernel":
            sk_acc, sk_ll = float("nan"), float("nan")
        else:
            sk = SkLogisticRegression(C=C, max_iter=5000).fit(phi(X), y)
            sk_acc = float(np.mean(sk.predict(phi(Xt)) == yt))
            sk_ll = log_loss(yt, sk.predict_proba(phi(Xt)))
        rows.append(
            [
                name,
                int(np.ravel(est.n_iter_)[0]),
                float(np.mean(est.predict(phi(Xt)) == yt)),
                sk_acc,
                log_loss(yt, est.predict_proba(phi(Xt))),
                sk_ll,
            ]
        )
    ctx.figure(
        fig,
        "Predicted class regions; training points (x, o, ^ for classes 0, 1, 2). Notice that the "
        "linear model can only cut the plane with straight lines, so it misclassifies the curved "
        "class, which the cubic and RBF features follow.",
    )
    ctx.table(
        [
            "features",
            "iterations",
            "test acc. (ours)",
            "test acc. (sklearn)",
            "test log-loss (ours)",
            "test log-loss (sklearn)",
        ],
        rows,
        f"180 training and 900 test points, C = {C:g}; NaN: scikit-learn has no such model.",
    )


def _noisy_chains(rng, n_seq, length, stay=0.9, noise=1.1):
    """Sticky three-state Markov chains observed through one-hot codes plus Gaussian noise."""
    T = np.full((3, 3), (1 - stay) / 2) + np.eye(3) * (stay - (1 - stay) / 2)
    ys = []
    for _ in range(n_seq):
        s = [rng.integers(3)]
        for _ in range(length - 1):
            s.append(rng.choice(3, p=T[s[-1]]))
        ys.append(s)
    y = np.concatenate(ys)
    X = np.eye(3)[y] + noise * rng.standard_normal((len(y), 3))
    return X, y, [length] * n_seq


@experiment(
    "classification-crf-denoising",
    title="A linear-chain CRF decoding a noisy sequence against per-position classification",
    section=SECTION,
    description=(
        "Labels follow a sticky three-state Markov chain (stay with probability 0.9); each "
        "position is observed as the one-hot code of its label plus Gaussian noise (sd 1.1). "
        "Per-position multinomial logistic regression (ours and scikit-learn's) classifies "
        "each position alone; the linear-chain CRF learns the transition scores as well and "
        "decodes each sequence jointly by Viterbi. A CRF without transitions is logistic "
        "regression (the special case of the Stuttgart notes' exercise 4.4)."
    ),
    source='Stuttgart "Introduction to Machine Learning" slides 3:23-3:31 (CRFs) and Ex. 4.4',
)
def crf_denoising(ctx):
    import matplotlib.pyplot as plt
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression

    from mathlearn.structured import LinearChainCRF

    X, y, lengths = _noisy_chains(ctx.rng, 30, 40)
    Xt, yt, lt = _noisy_chains(ctx.rng, 20, 40)
    # The CRF's penalty is alpha/2 ||W||^2 on the summed NLL: C = 1 / alpha in
    # scikit-learn's scaling.
    alpha = 1.0
    crf = LinearChainCRF(alpha=alpha).fit(X, y, lengths=lengths)
    flat = LinearChainCRF(alpha=alpha, transitions=False).fit(X, y, lengths=lengths)
    lr = LogisticRegression(C=1 / alpha, solver="newton").fit(X, y)
    sk = SkLogisticRegression(C=1 / alpha).fit(X, y)
    pred = {
        "per position, logistic (ours)": lr.predict(Xt),
        "per position, logistic (sklearn)": sk.predict(Xt),
        "CRF without transitions": flat.predict(Xt, lengths=lt),
        "linear-chain CRF (Viterbi)": crf.predict(Xt, lengths=lt),
    }
    rows = [[name, float(np.mean(p == yt))] for name, p in pred.items()]
    fig, ax = plt.subplots(figsize=(11, 3.0))
    t = np.arange(40)
    ax.step(t, yt[:40] + 0.0, where="mid", c="k", lw=2, label="true")
    ax.plot(t, pred["per position, logistic (ours)"][:40] + 0.08, "o", ms=4, label="per position")
    ax.plot(t, pred["linear-chain CRF (Viterbi)"][:40] - 0.08, "s", ms=4, label="CRF")
    ax.set_yticks([0, 1, 2])
    ax.set_xlabel("position")
    ax.set_ylabel("label")
    ax.legend(ncol=3)
    ctx.figure(
        fig,
        "The first test sequence: true labels and the two decodings. Notice that the per-position "
        "classifier flips labels on single noisy positions inside long runs, which the CRF's "
        "learned transition scores smooth away.",
    )
    ctx.table(
        ["decoder", "test accuracy"],
        rows,
        f"30 training and 20 test sequences of length 40. Learned transition scores (rows: "
        f"from): {np.round(crf.transitions_, 2).tolist()}.",
    )


def _ece(y, p, n_bins=10):
    """Expected calibration error: bin-weighted |mean prediction - frequency|."""
    bins = np.minimum((p * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in range(n_bins):
        m = bins == b
        if m.any():
            total += m.mean() * abs(p[m].mean() - y[m].mean())
    return total


@experiment(
    "classification-calibration",
    title="Calibration of the probabilistic classifiers: reliability, Brier score, log-loss",
    section=SECTION,
    description=(
        "Two overlapping classes (make_classification, 8 features, 200 training and 2000 "
        "test points). For each probabilistic classifier: the Brier score, the log-loss and "
        "the expected calibration error (10 bins) of p(y = 1 | x) on the test set, ours "
        "beside scikit-learn's where it has the model; the reliability diagram shows the "
        "frequency of class 1 against the predicted probability (scikit-learn's "
        "calibration_curve). Naive Bayes, whose independence assumption is wrong here, is "
        "the worst calibrated."
    ),
    source=(
        'Stuttgart "Introduction to Machine Learning" slide 3:8 (metrics); '
        "PRML §4.2-4.3, §4.5, §6.4.5"
    ),
)
def calibration(ctx):
    import matplotlib.pyplot as plt
    from sklearn import discriminant_analysis as sda
    from sklearn import gaussian_process as skgp
    from sklearn import naive_bayes as snb
    from sklearn.calibration import calibration_curve
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression as SkLogisticRegression
    from sklearn.metrics import brier_score_loss, log_loss

    from mathlearn.gaussian_process import GaussianProcessClassifier
    from mathlearn.kernels import RBF, ConstantKernel
    from mathlearn.linear_model import KernelLogisticRegression
    from mathlearn.naive_bayes import GaussianNB

    X, y = make_classification(
        4300,
        8,
        n_informative=4,
        n_redundant=0,
        flip_y=0.05,
        class_sep=0.8,
        random_state=ctx.seed,
    )
    X, Xt, y, yt = X[:300], X[300:], y[:300], y[300:]
    kern = ConstantKernel(4.0, "fixed") * RBF(2.0, "fixed")
    sk_kern = skgp.kernels.ConstantKernel(4.0, "fixed") * skgp.kernels.RBF(2.0, "fixed")
    pairs = [
        ("logistic regression", LogisticRegression(), SkLogisticRegression()),
        ("Bayesian logistic (Laplace)", BayesianLogisticRegression(prior_precision=1.0), None),
        ("kernel logistic (RBF)", KernelLogisticRegression(C=1.0, gamma=0.1), None),
        (
            "GP classifier (Laplace)",
            GaussianProcessClassifier(kern, optimizer=None),
            skgp.GaussianProcessClassifier(sk_kern, optimizer=None),
        ),
        ("LDA", LinearDiscriminantAnalysis(), sda.LinearDiscriminantAnalysis()),
        ("QDA", QuadraticDiscriminantAnalysis(), sda.QuadraticDiscriminantAnalysis()),
        ("Gaussian naive Bayes", GaussianNB(), snb.GaussianNB()),
    ]
    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.plot([0, 1], [0, 1], "k:", lw=1)
    rows = []
    nan = float("nan")
    for name, ours, ref in pairs:
        p = ours.fit(X, y).predict_proba(Xt)[:, 1]
        frac, mean = calibration_curve(yt, p, n_bins=10)
        ax.plot(mean, frac, "o-", ms=3, label=name)
        row = [name, brier_score_loss(yt, p), nan, log_loss(yt, p), nan, _ece(yt, p), nan]
        if ref is not None:
            q = ref.fit(X, y).predict_proba(Xt)[:, 1]
            row[2], row[4], row[6] = brier_score_loss(yt, q), log_loss(yt, q), _ece(yt, q)
        rows.append(row)
    ax.set_xlabel("predicted p(y = 1 | x)")
    ax.set_ylabel("frequency of y = 1")
    ax.legend()
    ctx.figure(
        fig,
        "Reliability diagram (ours), 10 bins. A calibrated classifier lies on the "
        "diagonal; notice how far naive Bayes, whose independence assumption is wrong here, "
        "strays from it.",
    )
    ctx.table(
        [
            "classifier",
            "Brier (ours)",
            "Brier (sklearn)",
            "log-loss (ours)",
            "log-loss (sklearn)",
            "ECE (ours)",
            "ECE (sklearn)",
        ],
        rows,
        "NaN: scikit-learn has no such model. GP classifiers with the same fixed kernel 4 RBF(2).",
    )
