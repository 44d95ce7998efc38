"""Worked examples of the probability chapters: a bandit's posterior, a bigram table, the
Beta and Dirichlet densities."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
from scipy.integrate import trapezoid

from mathlearn.distributions import (
    Beta,
    Dirichlet,
    NormalKnownVarianceModel,
    ProbabilityTable,
)
from mathlearn.report import experiment

SECTION = "Probability"


@experiment(
    "bandit-posterior",
    title="A fruit machine's return: posterior against maximum likelihood",
    section=SECTION,
    description=(
        "A bandit pays x ~ N(r, sigma^2) around an unknown return r, and the manufacturer's "
        "returns are r ~ N(mu, tau). One play pays x = 10. The maximum-likelihood estimate "
        "is r = 10, overconfident after one observation; the posterior is Gaussian with mean "
        "(tau x + sigma^2 mu) / (tau + sigma^2) and variance tau sigma^2 / (tau + sigma^2) "
        "(the notes print tau + sigma^2 - tau^2 / (tau + sigma^2), corrected here). The "
        "closed form (NormalKnownVarianceModel) is drawn over the posterior normalised "
        "numerically on a grid. Notice the shrinkage of the estimate towards the prior mean "
        "and that the posterior is narrower than both prior and likelihood."
    ),
    source="Imperial 'Mathematics for Machine Learning' (Bayesian inference with Gaussians)",
)
def bandit(ctx):
    import matplotlib.pyplot as plt

    mu, tau, s2, x = 2.0 + ctx.rng.normal(scale=0.1), 9.0, 16.0, 10.0
    post = NormalKnownVarianceModel(mu, tau, s2).update([x]).prior
    grid = np.linspace(-15, 25, 4001)
    prior = np.exp(-0.5 * (grid - mu) ** 2 / tau)
    lik = np.exp(-0.5 * (x - grid) ** 2 / s2)
    numeric = prior * lik
    numeric /= trapezoid(numeric, grid)
    closed = np.exp(post.logpdf(grid))
    fig, ax = plt.subplots(figsize=(7, 3.8))
    ax.plot(grid, prior / trapezoid(prior, grid), label=f"prior N({mu:.2f}, {tau:g})")
    ax.plot(grid, lik / trapezoid(lik, grid), label="likelihood of x = 10 (normalised in r)")
    ax.plot(grid, closed, "k-", lw=2, label="posterior (closed form)")
    ax.plot(grid[::100], numeric[::100], "o", ms=3, label="posterior (grid normalisation)")
    ax.axvline(x, color="grey", ls=":", label="maximum likelihood r = 10")
    ax.set_xlabel("return r")
    ax.set_ylabel("density")
    ax.legend(loc="upper left")
    ctx.figure(fig, "The posterior shrinks the single observation towards the prior mean.")
    mean_num = trapezoid(grid * numeric, grid)
    var_num = trapezoid((grid - mean_num) ** 2 * numeric, grid)
    ctx.table(
        ["quantity", "closed form", "grid"],
        [
            ["posterior mean", float(post.mean), float(mean_num)],
            ["posterior variance tau sigma^2 / (tau + sigma^2)", float(post.var), float(var_num)],
            ["maximum likelihood", x, ""],
        ],
        "The grid (spacing 0.01, trapezoid rule) agrees with the closed form to about 1e-9.",
    )


@experiment(
    "bigram-table",
    title="A joint table of consecutive letters: marginals, conditionals and Bayes' rule",
    section=SECTION,
    description=(
        "The joint distribution of two consecutive letters (x, y) is estimated from the "
        "letter pairs of a short English text (27 symbols: a-z and space, add-one smoothing). "
        "The marginal p(x) sums the rows, the conditional p(y | x) normalises them, and "
        "Bayes' rule inverts it: p(x | y) = p(y | x) p(x) / p(y). Notice that p(y | x = 'q') "
        "puts almost all its mass on 'u', while p(x | y = 'u') is spread over many letters: "
        "conditioning is not symmetric."
    ),
    source=(
        "Imperial 'Mathematics for Machine Learning' (joint, marginal and conditional "
        "probability; MacKay's bigram example)"
    ),
)
def bigram(ctx):
    import matplotlib.pyplot as plt

    text = (
        "the quick brown fox jumps over the lazy dog while the quiet queen quotes a "
        "question about quantum quarks and the equal quality of unique antique squares "
        "probability theory is nothing but common sense reduced to calculation "
        "learning from data requires inference under uncertainty and good questions"
    )
    letters = "abcdefghijklmnopqrstuvwxyz "
    index = {c: i for i, c in enumerate(letters)}
    counts = np.ones((27, 27))  # add-one smoothing
    for a, b in pairwise(text):
        counts[index[a], index[b]] += 1
    table = ProbabilityTable(counts / counts.sum(), names=("x", "y"))
    px = table.marginal("x").probs
    py = table.marginal("y").probs
    y_given_x = table.conditional("y", "x")  # [y, x]
    x_given_y = table.conditional("x", "y")  # [x, y]
    bayes = (y_given_x * px[None, :]).T / py[None, :]  # p(x | y) by Bayes' rule, [x, y]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8))
    axes[0].imshow(table.probs, cmap="Greys")
    axes[0].set_title("joint p(x, y)")
    for ax in axes:
        ax.set_xticks(range(27), [c if c != " " else "_" for c in letters], fontsize=6)
        ax.set_yticks(range(27), [c if c != " " else "_" for c in letters], fontsize=6)
        ax.set_xlabel("second letter y")
        ax.set_ylabel("first letter x")
    axes[1].imshow(y_given_x.T, cmap="Greys")
    axes[1].set_title("conditional p(y | x) (rows normalised)")
    ctx.figure(fig, "Rows of the joint normalised give the conditional of the next letter.")
    q, u = index["q"], index["u"]
    ctx.table(
        ["quantity", "value"],
        [
            ["p(y = u | x = q)", float(y_given_x[u, q])],
            ["p(x = q | y = u) by conditioning the joint", float(x_given_y[q, u])],
            ["p(x = q | y = u) by Bayes' rule", float(bayes[q, u])],
            [
                "max |Bayes - conditioning| over the table",
                float(np.max(np.abs(bayes - x_given_y))),
            ],
        ],
        "Bayes' rule and direct conditioning of the joint agree to rounding.",
    )


@experiment(
    "beta-dirichlet-densities",
    title="Beta densities and Dirichlet densities on the simplex",
    section=SECTION,
    description=(
        "Beta(a, b) densities for several (a, b), and three Dirichlet densities on the "
        "2-simplex drawn as heat maps in barycentric coordinates, with 300 samples each. "
        "Notice that a, b < 1 push mass to the edges, a = b = 1 is uniform, and large equal "
        "parameters concentrate the mass at the centre; the Dirichlet behaves the same way in "
        "each coordinate, the Beta being its two-category case."
    ),
    source=(
        "Stuttgart 'Introduction to Machine Learning', appendix A.2 (slides 9:22-9:29: Beta, "
        "Dirichlet); PRML §2.1-2.2"
    ),
)
def beta_dirichlet(ctx):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(15, 3.6))
    x = np.linspace(0.002, 0.998, 500)
    for a, b in [(0.5, 0.5), (1, 1), (2, 5), (5, 2), (10, 10)]:
        axes[0].plot(x, np.exp(Beta(a, b).logpdf(x)), label=f"Beta({a}, {b})")
    axes[0].set_ylim(0, 4.5)
    axes[0].set_xlabel("mu")
    axes[0].set_ylabel("density")
    axes[0].legend(loc="upper center")
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])
    g = np.linspace(0.01, 0.99, 120)
    A, B = np.meshgrid(g, g)
    mask = A + B < 0.99
    P = np.column_stack([A[mask], B[mask], 1 - A[mask] - B[mask]])
    XY = P @ corners
    for ax, alpha in zip(
        axes[1:], ([0.7, 0.7, 0.7], [2.0, 2.0, 2.0], [2.0, 5.0, 10.0]), strict=True
    ):
        d = Dirichlet(alpha)
        dens = np.exp(d.logpdf(P))
        ax.tricontourf(XY[:, 0], XY[:, 1], np.minimum(dens, np.quantile(dens, 0.98)), levels=20)
        s = d.sample(300, rng=ctx.rng) @ corners
        ax.plot(s[:, 0], s[:, 1], "w.", ms=2)
        ax.set_title(f"Dirichlet{tuple(alpha)}", fontsize=9)
        ax.set_aspect("equal")
        ax.axis("off")
    ctx.figure(fig, "Parameters below 1 favour the corners, above 1 the centre.")
