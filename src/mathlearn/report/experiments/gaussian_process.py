"""Gaussian processes and Bayesian optimisation: prior/posterior samples, the marginal
likelihood landscape, and Bayesian optimisation step by step."""

from __future__ import annotations

import warnings

import numpy as np

from mathlearn.bayes_opt import (
    BayesianOptimizer,
    expected_improvement,
    lower_confidence_bound,
    probability_of_improvement,
)
from mathlearn.gaussian_process import GaussianProcessRegressor
from mathlearn.kernels import RBF, ConstantKernel, GammaExponential
from mathlearn.report import experiment

SECTION = "Gaussian processes"


@experiment(
    "gp-prior-posterior",
    title="GP prior and posterior samples with predictive bands",
    section=SECTION,
    description=(
        "Left: draws from GP priors with the gamma-exponential kernel exp(-(|x - x'| / l)^g) "
        "for g = 1, 1.5, 2 (l = 0.3). Right: the posterior after 7 noisy observations of "
        "sin(3x) (RBF kernel and noise learned by maximising the log marginal likelihood): "
        "mean, latent +-2 sd band (f) and noisy +-2 sd band (y), and three posterior draws. "
        "The table compares the learned log marginal likelihood with scikit-learn's for the "
        "same kernel and data."
    ),
    source=(
        "Oxford 'Advanced Topics in Statistical Machine Learning' §9.1-9.2; Stuttgart "
        "'Introduction to Machine Learning' slides 8:14-8:16, exercise 11.3"
    ),
)
def prior_posterior(ctx):
    import matplotlib.pyplot as plt
    import sklearn.gaussian_process as skgp
    import sklearn.gaussian_process.kernels as skk

    x = np.linspace(-1.5, 1.5, 200)[:, None]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for g in (1.0, 1.5, 2.0):
        k = GammaExponential(0.3, gamma=g)
        K = k(x) + 1e-9 * np.eye(len(x))
        w, Q = np.linalg.eigh(K)
        f = (Q * np.sqrt(np.maximum(w, 0))) @ ctx.rng.standard_normal(len(x))
        axes[0].plot(x[:, 0], f, label=f"gamma = {g:g}")
    axes[0].set_title("prior draws (gamma-exponential, l = 0.3)")
    axes[0].legend(fontsize=8)

    X = ctx.rng.uniform(-1.2, 1.2, size=(7, 1))
    y = np.sin(3 * X[:, 0]) + 0.1 * ctx.rng.standard_normal(7)
    gp = GaussianProcessRegressor(
        ConstantKernel(1.0, (1e-2, 1e2)) * RBF(0.5, (0.05, 5.0)),
        noise_variance=0.01,
        noise_variance_bounds=(1e-4, 1.0),
        n_restarts=3,
        random_state=ctx.rng,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gp.fit(X, y)
    m, s = gp.predict(x, return_std=True)
    _, sy = gp.predict(x, return_std=True, noisy=True)
    ax = axes[1]
    ax.fill_between(x[:, 0], m - 2 * sy, m + 2 * sy, color="C0", alpha=0.15, label="y: +-2 sd")
    ax.fill_between(x[:, 0], m - 2 * s, m + 2 * s, color="C0", alpha=0.3, label="f: +-2 sd")
    ax.plot(x[:, 0], m, "C0", label="mean")
    ax.plot(x[:, 0], gp.sample_y(x, 3, random_state=ctx.rng), "C1", lw=0.8, alpha=0.8)
    ax.plot(X[:, 0], y, "ko", ms=4)
    ax.set_title("posterior")
    ax.legend(fontsize=8)
    ctx.figure(fig, "GP prior draws (left) and posterior with bands and draws (right).")

    peer = skgp.GaussianProcessRegressor(
        skk.ConstantKernel(1.0, (1e-2, 1e2)) * skk.RBF(0.5, (0.05, 5.0))
        + skk.WhiteKernel(0.01, (1e-4, 1.0)),
        n_restarts_optimizer=3,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer.fit(X, y)
    ctx.table(
        ["", "mathlearn", "scikit-learn"],
        [
            [
                "log marginal likelihood",
                gp.log_marginal_likelihood_value_,
                float(peer.log_marginal_likelihood_value_),
            ],
            ["jitter added", gp.jitter_, "n/a"],
        ],
        "Same kernel family, bounds and data; scikit-learn's learnable noise is a WhiteKernel.",
    )


@experiment(
    "gp-lml-landscape",
    title="Log marginal likelihood over length scale and noise",
    section=SECTION,
    description=(
        "The log marginal likelihood of a GP with an RBF kernel (signal variance fixed at 1) "
        "on 30 noisy points of sin(2x), over log length scale and log noise variance, with "
        "the optimum found by L-BFGS-B with 4 Sobol restarts (white cross) and each start's "
        "path end (dots)."
    ),
    source="Oxford 'Advanced Topics in Statistical Machine Learning' §9.3 (eq. 9.9-9.10)",
)
def lml_landscape(ctx):
    import matplotlib.pyplot as plt

    X = ctx.rng.uniform(-3, 3, size=(30, 1))
    y = np.sin(2 * X[:, 0]) + 0.3 * ctx.rng.standard_normal(30)
    gp = GaussianProcessRegressor(
        RBF(1.0, (0.05, 20.0)),
        noise_variance=0.1,
        noise_variance_bounds=(1e-3, 3.0),
        n_restarts=4,
        random_state=ctx.rng,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gp.fit(X, y)
    ls = np.linspace(np.log(0.05), np.log(20.0), 50)
    nv = np.linspace(np.log(1e-3), np.log(3.0), 50)
    Z = np.array([[gp.log_marginal_likelihood(np.array([a, b])) for a in ls] for b in nv])
    fig, ax = plt.subplots(figsize=(6, 4.5))
    cs = ax.contourf(ls, nv, np.maximum(Z, Z.max() - 60), levels=30)
    fig.colorbar(cs, ax=ax)
    for t in gp.optimizer_trace_:
        ax.plot(*t["theta"], "o", color="C1", ms=4)
    ax.plot(*gp.theta_, "wx", ms=10, mew=2)
    ax.set_xlabel("log length scale")
    ax.set_ylabel("log noise variance")
    ctx.figure(fig, "Log marginal likelihood landscape (floored 60 below its maximum).")
    ctx.table(
        ["length scale", "noise variance", "log marginal likelihood", "grid maximum"],
        [
            [
                float(np.exp(gp.theta_[0])),
                gp.noise_variance_,
                gp.log_marginal_likelihood_value_,
                float(Z.max()),
            ]
        ],
        "The optimum is at least the best grid value (true noise variance 0.09).",
    )


@experiment(
    "bo-steps",
    title="Bayesian optimisation step by step with LCB, PI and EI",
    section=SECTION,
    description=(
        "Minimising f(x) = sin(3x) + x^2 - 0.7x on [-1, 2] from a 3-point Sobol design: for "
        "each acquisition (LCB with alpha = 0.05, PI, EI) the surrogate's mean and +-2 sd "
        "after 3 further steps, the acquisition (rescaled) and the next point chosen."
    ),
    source="Oxford 'Advanced Topics in Statistical Machine Learning' ch. 10 (§10.1-10.3)",
)
def bo_steps(ctx):
    import matplotlib.pyplot as plt

    def f(x):
        return float(np.sin(3 * x[0]) + x[0] ** 2 - 0.7 * x[0])

    grid = np.linspace(-1, 2, 300)[:, None]
    truth = np.sin(3 * grid[:, 0]) + grid[:, 0] ** 2 - 0.7 * grid[:, 0]
    seed = int(ctx.rng.integers(2**31))
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8), sharey=True)
    rows = []
    for ax, acq in zip(axes, ("lcb", "pi", "ei"), strict=True):
        opt = BayesianOptimizer([(-1.0, 2.0)], acquisition=acq, n_initial=3, random_state=seed)
        for _ in range(6):
            x = opt.ask()
            opt.tell(x, f(x))
        x_next = opt.ask()
        gp = opt.surrogate_
        u = (grid - (-1.0)) / 3.0
        m, s = gp.predict(u, return_std=True)
        y_best = float(opt.y.min())
        if acq == "lcb":
            a = -lower_confidence_bound(m, s, alpha=0.05)
        elif acq == "pi":
            a = probability_of_improvement(m, s, y_best)
        else:
            a = expected_improvement(m, s, y_best)
        a = (a - a.min()) / (np.ptp(a) + 1e-300)
        ax.plot(grid[:, 0], truth, "k--", lw=1, label="f")
        ax.plot(grid[:, 0], m, "C0", label="mean")
        ax.fill_between(grid[:, 0], m - 2 * s, m + 2 * s, alpha=0.2, color="C0")
        ax.plot(grid[:, 0], a * 2 - 3, "C2", label="acquisition (scaled)")
        ax.plot(opt.X[:, 0], opt.y, "ko", ms=4)
        ax.axvline(x_next[0], color="C3", lw=1, label="next")
        ax.set_title(acq.upper())
        rows.append([acq.upper(), float(opt.best()[0][0]), opt.best()[1], float(x_next[0])])
    axes[0].legend(fontsize=7)
    ctx.figure(fig, "Surrogate, acquisition and next point after 6 evaluations.")
    ctx.table(
        ["acquisition", "best x so far", "best f so far", "next x"],
        rows,
        f"The global minimum of f on [-1, 2] is {truth.min():.4f} at x = "
        f"{grid[np.argmin(truth), 0]:.3f}.",
    )
