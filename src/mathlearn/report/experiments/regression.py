"""Regression chapter: least squares, MAP, Bayesian linear regression, evidence, lasso."""

from __future__ import annotations

import warnings

import numpy as np

from mathlearn.datasets import make_sinusoidal
from mathlearn.linear_model import (
    BayesianLinearRegression,
    LinearRegression,
    Ridge,
    lasso_path,
)
from mathlearn.preprocessing import GaussianBasis, PolynomialBasis
from mathlearn.report import experiment

SECTION = "Regression"
_GRID = np.linspace(0.0, 1.0, 200)[:, None]


def _rmse(a, b):
    return float(np.sqrt(np.mean((a - b) ** 2)))


def _data(ctx, n_train=10, n_test=100, noise=0.3):
    X, y = make_sinusoidal(n_train, noise=noise, random_state=ctx.rng)
    Xt, yt = make_sinusoidal(n_test, noise=noise, random_state=ctx.rng)
    return X, y, Xt, yt


@experiment(
    "regression-overfitting",
    title="Polynomial least squares: under- and over-fitting",
    section=SECTION,
    description=(
        "Maximum-likelihood polynomial fits of N = 10 noisy samples of sin(2 pi x) and the "
        "training/test RMSE against the degree: training error falls to zero at degree 9 "
        "while the test error explodes. Raw monomials are used on purpose; scikit-learn's "
        "LinearRegression is fitted on the same design for comparison."
    ),
    source=(
        "PRML §1.1, Figs. 1.4–1.5; Imperial 'Mathematics for Inference and Machine Learning' "
        "§1.5, eq. 1.160–1.166"
    ),
)
def overfitting(ctx):
    import matplotlib.pyplot as plt
    from sklearn.linear_model import LinearRegression as SkLinearRegression

    X, y, Xt, yt = _data(ctx)
    degrees = list(range(10))
    rows, train, test = [], [], []
    fits = {}
    for d in degrees:
        basis = PolynomialBasis(degree=d)
        Phi, Phit = basis.fit_transform(X), basis.transform(Xt)
        ours = LinearRegression(fit_intercept=False).fit(Phi, y)
        ref = SkLinearRegression(fit_intercept=False).fit(Phi, y)
        tr, te = _rmse(ours.predict(Phi), y), _rmse(ours.predict(Phit), yt)
        train.append(tr)
        test.append(te)
        rows.append(
            [
                d,
                tr,
                _rmse(ref.predict(Phi), y),
                te,
                _rmse(ref.predict(Phit), yt),
                ours.noise_variance_,
            ]
        )
        fits[d] = ours.predict(basis.transform(_GRID))
    fig, axes = plt.subplots(1, 5, figsize=(17, 3.2))
    for ax, d in zip(axes[:4], (0, 1, 3, 9), strict=True):
        ax.plot(_GRID, np.sin(2 * np.pi * _GRID), "g", lw=1, label="sin(2πx)")
        ax.plot(_GRID, fits[d], "r", label="ML fit")
        ax.plot(X, y, "bo", mfc="none")
        ax.set_ylim(-1.8, 1.8)
        ax.set(title=f"degree M = {d}", xlabel="x", ylabel="t")
    axes[0].legend(loc="lower left")
    axes[4].plot(degrees, train, "bo-", label="training")
    axes[4].plot(degrees, test, "ro-", label="test")
    axes[4].set_xlabel("degree M")
    axes[4].set_ylabel("RMSE")
    axes[4].set_ylim(0, 1.5)
    axes[4].legend()
    ctx.figure(
        fig,
        "ML polynomial fits to N = 10 points and RMSE against the degree. Notice that M = 9 "
        "passes through every training point yet swings wildly between them: its training "
        "error is near zero while its test error shoots up.",
    )
    ctx.table(
        [
            "degree",
            "train RMSE (ours)",
            "train RMSE (sklearn)",
            "test RMSE (ours)",
            "test RMSE (sklearn)",
            "sigma^2_ML (ours)",
        ],
        rows,
        "Same design matrix for both libraries; sigma^2_ML = RSS/N (PRML §1.2.5). At degree 9 the "
        "exact least-squares fit interpolates the 10 points (zero training error); on the "
        "ill-conditioned raw monomials scikit-learn's SVD solver loses that to rounding.",
    )


@experiment(
    "regression-map-prior",
    title="MAP estimation: the Gaussian prior tames the degree-9 fit",
    section=SECTION,
    description=(
        "Degree-9 polynomial, N = 10: the MAP estimate (ridge with lambda = alpha/beta, "
        "all weights penalised) for several ln lambda, and the training/test RMSE against "
        "ln lambda. Our Ridge next to scikit-learn's Ridge on the same design."
    ),
    source=(
        "PRML §1.1, Figs. 1.7–1.8; Imperial 'Mathematics for Inference and Machine Learning' "
        "§1.5.2-1.5.4, eq. 1.174–1.180"
    ),
)
def map_prior(ctx):
    import matplotlib.pyplot as plt
    from sklearn.linear_model import Ridge as SkRidge

    X, y, Xt, yt = _data(ctx)
    basis = PolynomialBasis(degree=9)
    Phi, Phit, Phig = basis.fit_transform(X), basis.transform(Xt), basis.transform(_GRID)
    log_lams = np.arange(-30, 1, 2.5)
    train, test, rows = [], [], []
    for ll in log_lams:
        ours = Ridge(alpha=float(np.exp(ll)), fit_intercept=False).fit(Phi, y)
        train.append(_rmse(ours.predict(Phi), y))
        test.append(_rmse(ours.predict(Phit), yt))
    for ll in (-18.0, -10.0, 0.0):
        ours = Ridge(alpha=float(np.exp(ll)), fit_intercept=False).fit(Phi, y)
        ref = SkRidge(alpha=float(np.exp(ll)), fit_intercept=False).fit(Phi, y)
        rows.append(
            [
                ll,
                _rmse(ours.predict(Phit), yt),
                _rmse(ref.predict(Phit), yt),
                float(np.max(np.abs(ours.coef_))),
                float(np.max(np.abs(ref.coef_))),
            ]
        )
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.2))
    for ax, ll in zip(axes[:3], (-18.0, -10.0, 0.0), strict=True):
        fit = Ridge(alpha=float(np.exp(ll)), fit_intercept=False).fit(Phi, y).predict(Phig)
        ax.plot(_GRID, np.sin(2 * np.pi * _GRID), "g", lw=1)
        ax.plot(_GRID, fit, "r")
        ax.plot(X, y, "bo", mfc="none")
        ax.set_ylim(-1.8, 1.8)
        ax.set(title=f"ln λ = {ll:g}", xlabel="x", ylabel="t")
    axes[3].plot(log_lams, train, "bo-", label="training")
    axes[3].plot(log_lams, test, "ro-", label="test")
    axes[3].set_xlabel("ln λ")
    axes[3].set_ylabel("RMSE")
    axes[3].legend()
    ctx.figure(
        fig,
        "MAP fits of a degree-9 polynomial and RMSE against ln λ. Notice that ln λ = -18 "
        "still over-fits (wiggles), ln λ = 0 under-fits (a flattened curve), and the test "
        "RMSE is lowest in between.",
    )
    ctx.table(
        [
            "ln lambda",
            "test RMSE (ours)",
            "test RMSE (sklearn)",
            "max|w| (ours)",
            "max|w| (sklearn)",
        ],
        rows,
        "The prior shrinks the huge ML weights (max|w|) and the test error with them.",
    )


@experiment(
    "regression-bayesian-sequential",
    title="Bayesian linear regression: sequential updating and predictive uncertainty",
    section=SECTION,
    description=(
        "Nine Gaussian basis functions plus a bias, prior precision alpha = 2, noise "
        "precision beta = 25 (the true noise). After 1, 2, 10 and all 25 points (partial_fit, "
        "the posterior becoming the next prior): predictive mean, ±2σ band of the noisy "
        "target, and five functions drawn from the posterior."
    ),
    source=(
        "PRML §3.3, Figs. 3.8–3.9; Imperial 'Mathematics for Inference and Machine Learning' "
        "§1.8, eq. 1.213–1.258"
    ),
)
def bayesian_sequential(ctx):
    import matplotlib.pyplot as plt

    X, y = make_sinusoidal(25, noise=0.2, random_state=ctx.rng)
    basis = GaussianBasis(centres=np.linspace(0, 1, 9), width=0.1, include_bias=True).fit(X)
    Phi, Phig = basis.transform(X), basis.transform(_GRID)
    model = BayesianLinearRegression(
        prior_precision=2.0, noise_precision=25.0, fit_intercept=False
    )
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.2), sharey=True)
    seen = 0
    rows = []
    for ax, upto in zip(axes, (1, 2, 10, 25), strict=True):
        model.partial_fit(Phi[seen:upto], y[seen:upto])
        seen = upto
        mean, std = model.predict(Phig, return_std=True)
        draws = model.sample_y(Phig, n_samples=5, random_state=ctx.rng)
        ax.fill_between(_GRID[:, 0], mean - 2 * std, mean + 2 * std, color="r", alpha=0.2)
        ax.plot(_GRID, draws, "r", lw=0.6, alpha=0.7)
        ax.plot(_GRID, mean, "r", lw=2)
        ax.plot(_GRID, np.sin(2 * np.pi * _GRID), "g", lw=1)
        ax.plot(X[:upto], y[:upto], "bo", mfc="none")
        ax.set_ylim(-2, 2)
        ax.set(title=f"N = {upto}", xlabel="x")
        batch = BayesianLinearRegression(
            prior_precision=2.0, noise_precision=25.0, fit_intercept=False
        ).fit(Phi[:upto], y[:upto])
        rows.append(
            [
                upto,
                model.log_evidence_,
                batch.log_evidence_,
                float(np.max(np.abs(model.coef_ - batch.coef_))),
                float(std.mean()),
            ]
        )
    axes[0].set_ylabel("t")
    ctx.figure(
        fig,
        "Predictive mean (thick), ±2σ band and posterior function samples (thin). Notice the "
        "band pinching near the observed points and the samples agreeing more as N grows.",
    )
    ctx.table(
        [
            "N",
            "log evidence (sequential)",
            "log evidence (batch)",
            "max|m_seq - m_batch|",
            "mean predictive std",
        ],
        rows,
        "Sequential updating equals the batch posterior (PRML §3.3.1); the evidence "
        "accumulates by the chain rule.",
    )


@experiment(
    "regression-evidence-degree",
    title="Model selection: log evidence against polynomial degree",
    section=SECTION,
    description=(
        "For each degree the precisions alpha and beta are set by evidence maximisation "
        "(MacKay/Bishop re-estimation); the maximised log evidence peaks at a moderate "
        "degree (Occam's razor). Next to it, scikit-learn's BayesianRidge on the same design "
        "with its Gamma hyperpriors made flat (1e-12), which maximises the same evidence. "
        "Where the two differ, scikit-learn's single fixed-point run stopped at a poorer local "
        "maximum (most variance explained as noise); ours keeps the best of three starts."
    ),
    source=(
        "PRML §3.5, Fig. 3.14; Imperial 'Mathematics for Inference and Machine Learning' §1.7, "
        "eq. 1.192–1.207"
    ),
)
def evidence_degree(ctx):
    import matplotlib.pyplot as plt
    from sklearn.linear_model import BayesianRidge

    X, y, Xt, yt = _data(ctx, n_train=20, noise=0.3)
    degrees = list(range(10))
    ours_ev, rows = [], []
    tiny = 1e-12
    for d in degrees:
        basis = PolynomialBasis(degree=d)
        Phi, Phit = basis.fit_transform(X), basis.transform(Xt)
        ours = BayesianLinearRegression(fit_intercept=False, max_iter=2000, tol=1e-10).fit(Phi, y)
        ref = BayesianRidge(
            fit_intercept=False,
            alpha_1=tiny,
            alpha_2=tiny,
            lambda_1=tiny,
            lambda_2=tiny,
            compute_score=True,
            max_iter=2000,
            tol=1e-8,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a non-converged peer is reported as is
            ref.fit(Phi, y)
        ours_ev.append(ours.log_evidence_)
        rows.append(
            [
                d,
                ours.log_evidence_,
                float(ref.scores_[-1]),
                ours.prior_precision_,
                float(ref.lambda_),
                ours.noise_precision_,
                float(ref.alpha_),
                ours.effective_params_,
                _rmse(ours.predict(Phit), yt),
            ]
        )
    best = int(np.argmax(ours_ev))
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot(degrees, ours_ev, "ko-")
    ax.plot(degrees[best], ours_ev[best], "r*", ms=14, label=f"best M = {best}")
    ax.set_xlabel("degree M")
    ax.set_ylabel("ln p(t | α, β)")
    ax.legend()
    ctx.figure(
        fig,
        "Maximised log evidence against degree (N = 20). Notice that it peaks at a moderate "
        "degree (starred) and does not keep rising with the degree as the training fit does: the "
        "evidence penalises complexity (Occam's razor).",
    )
    ctx.table(
        [
            "degree",
            "log evidence (ours)",
            "log evidence (sklearn)",
            "alpha (ours)",
            "alpha (sklearn)",
            "beta (ours)",
            "beta (sklearn)",
            "gamma (ours)",
            "test RMSE (ours)",
        ],
        rows,
        "alpha: prior precision (sklearn lambda_), beta: noise precision (sklearn alpha_), "
        "gamma: effective number of parameters.",
    )


@experiment(
    "regression-lasso-path",
    title="Lasso: sparsity along the regularisation path",
    section=SECTION,
    description=(
        "Coefficients of the lasso on scikit-learn's bundled diabetes data (standardised) "
        "along a path of alpha with warm starts: weights leave zero one by one. Dashed: "
        "scikit-learn's lasso_path on the same data."
    ),
    source="Stuttgart 'Introduction to Machine Learning' slides 2:19–2:21 (sparsity figure 2:20)",
)
def lasso_sparsity(ctx):
    import matplotlib.pyplot as plt
    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import lasso_path as sk_lasso_path

    X, y = load_diabetes(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    y = y - y.mean()
    alphas, coefs, _ = lasso_path(X, y, n_alphas=60, tol=1e-8)
    _, ref, _ = sk_lasso_path(X, y, alphas=alphas, tol=1e-8)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot(np.log10(alphas), coefs.T)
    ax.set_prop_cycle(None)
    ax.plot(np.log10(alphas), ref.T, "--", lw=0.8)
    ax.set_xlabel("log10 alpha")
    ax.set_ylabel("coefficient")
    ax.invert_xaxis()
    ctx.figure(
        fig,
        "Lasso path on the diabetes data (solid: ours, dashed: scikit-learn). Notice that the "
        "weights leave zero one at a time as alpha decreases, and that the dashed lines lie on "
        "the solid ones.",
    )
    picks = [0, 15, 30, 45, 59]
    ctx.table(
        ["alpha", "non-zero (ours)", "non-zero (sklearn)", "max |ours - sklearn|"],
        [
            [
                float(alphas[k]),
                int(np.sum(coefs[:, k] != 0)),
                int(np.sum(np.abs(ref[:, k]) > 0)),
                float(np.max(np.abs(coefs[:, k] - ref[:, k]))),
            ]
            for k in picks
        ],
        "Objective (1/2N)||y - Xw||^2 + alpha ||w||_1 in both libraries.",
    )


@experiment(
    "regression-ridge-dof",
    title="Ridge: coefficient profiles against the effective degrees of freedom",
    section=SECTION,
    description=(
        "Ridge coefficients on scikit-learn's bundled diabetes data (standardised) plotted "
        "against df(lambda) = sum_j d_j^2 / (d_j^2 + lambda), the trace of the hat matrix, "
        "rather than against lambda: df runs from 1 (the intercept alone, lambda -> inf) to "
        "p + 1 = 11 (least squares, lambda = 0), so the axis reads as the model's size. "
        "Unlike the lasso's, no coefficient reaches zero before the end. The table checks "
        "df(lambda) against the trace of the explicitly formed n x n hat matrix and our "
        "coefficients against scikit-learn's Ridge."
    ),
    source=(
        "Stuttgart 'Introduction to Machine Learning' slides 2:15-2:16 (ridge regression, "
        "effective degrees of freedom); The Elements of Statistical Learning §3.4.1, eq. 3.50 "
        "and figure 3.8"
    ),
)
def ridge_dof(ctx):
    import matplotlib.pyplot as plt
    from sklearn.datasets import load_diabetes
    from sklearn.linear_model import Ridge as SkRidge

    from mathlearn.linear_model import ridge_degrees_of_freedom

    X, y = load_diabetes(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    n, p = X.shape
    alphas = np.logspace(-2, 5, 50)
    coefs = np.array([Ridge(alpha=a).fit(X, y).coef_ for a in alphas])
    dof = ridge_degrees_of_freedom(X, alphas)
    fig, ax = plt.subplots(figsize=(6, 3.6))
    ax.plot(dof, coefs)
    ax.axhline(0.0, color="k", lw=0.6)
    ax.set_xlabel("effective degrees of freedom df(lambda)")
    ax.set_ylabel("coefficient")
    ctx.figure(
        fig,
        "Ridge coefficient profiles against df(lambda) on the diabetes data. Notice that all "
        "ten weights shrink together towards zero as df falls, none reaching it, and that the "
        "right end (df = 11) is the least-squares fit.",
    )
    Xc = np.column_stack([np.ones(n), X])
    penalty = np.diag([0.0] + [1.0] * p)
    rows = []
    for a in (0.0, 1.0, 100.0, 1e4):
        hat = Xc @ np.linalg.solve(Xc.T @ Xc + a * penalty, Xc.T)
        ours = Ridge(alpha=a).fit(X, y).coef_ if a > 0 else LinearRegression().fit(X, y).coef_
        peer = SkRidge(alpha=a, solver="cholesky").fit(X, y).coef_
        rows.append(
            [
                a,
                float(ridge_degrees_of_freedom(X, a)),
                float(np.trace(hat)),
                float(np.max(np.abs(ours - peer)) / np.max(np.abs(peer))),
            ]
        )
    ctx.table(
        [
            "lambda",
            "df (ours, from the singular values)",
            "trace of the hat matrix",
            "rel. diff. of coef. vs scikit-learn",
        ],
        rows,
        "df(0) = p + 1 = 11 with the intercept; the two columns agree to rounding, and the "
        "coefficients agree with scikit-learn's Ridge (Cholesky solver) to rounding; at "
        "lambda = 0 ours is the refined least-squares solution and the difference is the "
        "normal equations' error, about cond(X)^2 eps, on scikit-learn's side.",
    )


def _exact_lstsq(A, y):
    """Exact least squares of float64 data: normal equations in rational arithmetic."""
    from fractions import Fraction

    Af = [[Fraction(v) for v in row] for row in A.tolist()]
    yf = [Fraction(v) for v in y.tolist()]
    m = A.shape[1]
    M = [[sum(r[i] * r[j] for r in Af) for j in range(m)] for i in range(m)]
    b = [sum(r[i] * t for r, t in zip(Af, yf, strict=True)) for i in range(m)]
    for k in range(m):  # Gaussian elimination; exact, so no pivoting is needed
        for i in range(k + 1, m):
            f = M[i][k] / M[k][k]
            for j in range(k, m):
                M[i][j] -= f * M[k][j]
            b[i] -= f * b[k]
    x = [Fraction(0)] * m
    for i in reversed(range(m)):
        x[i] = (b[i] - sum(M[i][j] * x[j] for j in range(i + 1, m))) / M[i][i]
    return np.array([float(v) for v in x])


@experiment(
    "regression-ill-conditioned",
    title="Least squares on ill-conditioned designs: correct digits",
    section=SECTION,
    description=(
        "Raw polynomial features of degree 10 on x in [-9, -3] (condition number ~1e15) and "
        "a design whose columns differ in scale by 1e10. Reference: the exact least-squares "
        "solution of the same float64 data, computed in rational arithmetic. Our "
        "LinearRegression (equilibrated QR with iterative refinement in doubled precision) "
        "against scikit-learn's LinearRegression and numpy.linalg.lstsq (both SVD based)."
    ),
    source=(
        "Imperial 'Mathematics for Inference and Machine Learning' §1.5.1.1, eq. 1.158 (solve, "
        "never invert); Stuttgart 'Introduction to Machine Learning' ch. 2"
    ),
)
def ill_conditioned(ctx):
    from sklearn.linear_model import LinearRegression as SkLinearRegression

    rng = ctx.rng
    x = rng.uniform(-9, -3, 40)
    poly = np.vander(x, 11, increasing=True)
    y_poly = np.sin(x) + 0.1 * rng.standard_normal(40)
    scaled = rng.standard_normal((40, 5)) * np.array([1e-5, 1.0, 1e5, 1e-3, 1e3])
    y_scaled = scaled @ rng.standard_normal(5) + 0.1 * rng.standard_normal(40)
    rows = []
    for name, A, y in (
        ("degree-10 polynomial", poly, y_poly),
        ("scales 1e-5..1e5", scaled, y_scaled),
    ):
        exact = _exact_lstsq(A, y)

        def digits(coef, exact=exact):
            rel = np.max(np.abs(coef - exact) / np.abs(exact))
            return round(float(np.clip(-np.log10(max(rel, 1e-17)), 0.0, 16.0)), 1)

        ours = LinearRegression(fit_intercept=False).fit(A, y).coef_
        sk = SkLinearRegression(fit_intercept=False).fit(A, y).coef_
        npl = np.linalg.lstsq(A, y, rcond=None)[0]
        rows.append([name, f"{np.linalg.cond(A):.1e}", digits(ours), digits(sk), digits(npl)])
    ctx.table(
        ["design", "cond(X)", "digits (ours)", "digits (sklearn)", "digits (numpy lstsq)"],
        rows,
        "Correct significant digits of the worst coefficient, -log10 max_j |b_j - b*_j|/|b*_j|.",
    )
