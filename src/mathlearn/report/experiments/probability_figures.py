"""The distribution figures of the Imperial notes, and the QR algorithm's convergence."""

from __future__ import annotations

import warnings

import numpy as np

from mathlearn.distributions import Beta, Binomial, Gamma, Uniform
from mathlearn.exceptions import ConvergenceWarning
from mathlearn.report import experiment
from mathlearn.utils.linalg import qr_eigh


@experiment(
    "distribution-figures",
    title="Uniform, Binomial, Beta and Gamma: the notes' figures",
    section="Probability",
    description=(
        "The densities and mass functions of the Imperial notes' figures with their "
        "parameters: U[0.5, 1] and U[0, 2]; Binomial(15, mu) for mu = 0.1, 0.4, 0.75; Beta "
        "with (alpha, beta) in {(0.5, 0.5), (1, 1), (2, 2), (4, 10), (5, 1)}; Gamma in the "
        "rate parametrisation with (a, b) in {(0.5, 0.5), (2, 1), (3, 1), (3, 3), (9, 0.5)}. "
        "Notice the Binomial's mean N mu, the U-shaped Beta(0.5, 0.5), and that a Gamma's "
        "rate b compresses it while the shape a moves the mode to (a - 1) / b. Each curve "
        "is checked against scipy.stats (largest difference in the table)."
    ),
    source=(
        "Imperial 'Mathematics for Inference and Machine Learning' §1.2.3 (Figs. 1.2, 1.4, "
        "1.5, 1.10)"
    ),
)
def distribution_figures(ctx):
    import matplotlib.pyplot as plt
    from scipy import stats

    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6))
    diffs = []
    x = np.linspace(-0.2, 2.2, 600)
    for lo, hi in [(0.5, 1.0), (0.0, 2.0)]:
        d = Uniform(lo, hi)
        p = np.exp(d.logpdf(x))
        axes[0].plot(x, p, label=f"U[{lo}, {hi}]")
        diffs.append(np.max(np.abs(p - stats.uniform(lo, hi - lo).pdf(x))))
    axes[0].set(title="uniform densities", xlabel="x", ylabel="density p(x)")
    m = np.arange(16)
    for mu, c in zip((0.1, 0.4, 0.75), ("C0", "C1", "C2"), strict=True):
        p = np.exp(Binomial(15, mu).logpmf(m))
        axes[1].bar(m + (mu - 0.4) * 0.6, p, width=0.25, color=c, label=f"mu = {mu}")
        diffs.append(np.max(np.abs(p - stats.binom(15, mu).pmf(m))))
    axes[1].set_title("Binomial(N = 15, mu)")
    axes[1].set(xlabel="m (successes)", ylabel="probability p(m)")
    t = np.linspace(0.001, 0.999, 500)
    for a, b in [(0.5, 0.5), (1, 1), (2, 2), (4, 10), (5, 1)]:
        p = np.exp(Beta(a, b).logpdf(t))
        axes[2].plot(t, p, label=f"a = {a}, b = {b}")
        diffs.append(np.max(np.abs(p - stats.beta(a, b).pdf(t)) / np.maximum(p, 1.0)))
    axes[2].set_ylim(0, 5)
    axes[2].set_title("Beta(alpha, beta)")
    axes[2].set(xlabel="mu", ylabel="density p(mu)")
    tau = np.linspace(0.01, 20, 600)
    for a, b in [(0.5, 0.5), (2.0, 1.0), (3.0, 1.0), (3.0, 3.0), (9.0, 0.5)]:
        p = np.exp(Gamma(a, b).logpdf(tau))
        axes[3].plot(tau, p, label=f"a = {a}, b = {b}")
        diffs.append(np.max(np.abs(p - stats.gamma(a, scale=1 / b).pdf(tau)) / np.maximum(p, 1.0)))
    axes[3].set_ylim(0, 0.45)
    axes[3].set_title("Gamma(a, rate b)")
    axes[3].set(xlabel="tau", ylabel="density p(tau)")
    for ax in axes:
        ax.legend(loc="upper right")
    ctx.figure(
        fig,
        "The notes' four figures of distributions, with their parameters. Notice the Beta "
        "family's range of shapes (U-shaped for a, b < 1, flat for a = b = 1, skewed for "
        "a != b) and the Gamma's mode at (a - 1)/b, which moves off zero once a > 1.",
    )
    ctx.table(
        ["check", "value"],
        [["largest difference from scipy.stats (relative where > 1)", float(max(diffs))]],
        "",
    )


@experiment(
    "qr-algorithm",
    title="Eigenvalues by the QR algorithm: unshifted against Wilkinson shifts",
    section="Feature extraction",
    description=(
        "The notes' exercise: B = A A^T for a random 100 x 100 matrix A, symmetrised; the "
        "QR iteration A_{k+1} = R_k Q_k is run without shifts for 100, 1000 and 5000 "
        "iterations and with Wilkinson shifts to convergence, and the diagonal is compared "
        "with numpy.linalg.eigvalsh. Notice how slowly the unshifted iteration converges "
        "where eigenvalues are close (the error after k steps falls like (lambda_{i+1} / "
        "lambda_i)^k) and that shifts make it converge in a few steps per eigenvalue. The "
        "matrix here is 60 x 60 to keep the report fast."
    ),
    source=(
        "Imperial 'Mathematics for Inference and Machine Learning' §2.1.2 (the QR algorithm "
        "exercise)"
    ),
)
def qr_algorithm(ctx):
    import matplotlib.pyplot as plt

    n = 60
    A = ctx.rng.normal(size=(n, n))
    B = A @ A.T
    B = 0.5 * (B + B.T)
    exact = np.linalg.eigvalsh(B)[::-1]
    rows, errs = [], {}
    for label, kw in [
        ("unshifted, 100 iterations", {"shift": None, "max_iter": 100}),
        ("unshifted, 1000 iterations", {"shift": None, "max_iter": 1000}),
        ("unshifted, 5000 iterations", {"shift": None, "max_iter": 5000}),
        ("Wilkinson shifts", {"shift": "wilkinson"}),
    ]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            w, _, n_iter = qr_eigh(B, warn=False, **kw)
        w = np.sort(w)[::-1]
        rel = np.abs(w - exact) / exact
        errs[label] = rel
        rows.append([label, int(n_iter), float(rel.max())])
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for label, rel in errs.items():
        ax.semilogy(np.arange(1, n + 1), np.maximum(rel, 1e-17), ".-", ms=3, label=label)
    ax.set_xlabel("eigenvalue index (decreasing)")
    ax.set_ylabel("relative error")
    ax.legend(loc="lower right")
    ctx.figure(fig, "Unshifted QR converges slowly where neighbouring eigenvalues are close.")
    ctx.table(
        ["method", "iterations", "largest relative eigenvalue error"],
        rows,
        "Errors against LAPACK's eigvalsh.",
    )
