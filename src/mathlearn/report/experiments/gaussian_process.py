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
    axes[0].set(title="prior draws (gamma-exponential, l = 0.3)", xlabel="x", ylabel="f(x)")
    axes[0].legend()

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
    ax.set(title="posterior", xlabel="x", ylabel="f(x), y")
    ax.legend()
    ctx.figure(
        fig,
        "GP prior draws (left) and posterior with bands and draws (right). Notice that "
        "gamma = 1 draws are rough (the kernel is not differentiable at 0) and gamma = 2 "
        "draws smooth, and that the posterior f-band pinches at the observations while the "
        "y-band keeps the noise.",
    )

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
        "each acquisition (LCB with alpha = 0.05, PI and EI with the margin xi = 0.01 s_y) "
        "the surrogate's mean and +-2 sd "
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
        # PI and EI seek an improvement below the best value by the margin xi s_y.
        target = float(opt.y.min()) - opt.xi * float(np.std(opt.y))
        if acq == "lcb":
            a = -lower_confidence_bound(m, s, alpha=0.05)
        elif acq == "pi":
            a = probability_of_improvement(m, s, target)
        else:
            a = expected_improvement(m, s, target)
        a = (a - a.min()) / (np.ptp(a) + 1e-300)
        ax.plot(grid[:, 0], truth, "k--", lw=1, label="f")
        ax.plot(grid[:, 0], m, "C0", label="mean")
        ax.fill_between(grid[:, 0], m - 2 * s, m + 2 * s, alpha=0.2, color="C0")
        ax.plot(grid[:, 0], a * 2 - 3, "C2", label="acquisition (scaled)")
        ax.plot(opt.X[:, 0], opt.y, "ko", ms=4)
        ax.axvline(x_next[0], color="C3", lw=1, label="next")
        ax.set(title=acq.upper(), xlabel="x")
        rows.append([acq.upper(), float(opt.best()[0][0]), opt.best()[1], float(x_next[0])])
    axes[0].set_ylabel("f(x); acquisition (scaled, below)")
    axes[0].legend()
    ctx.figure(
        fig,
        "Surrogate, acquisition and next point after 6 evaluations. Notice that each "
        "acquisition peaks either where the mean is low (exploitation) or where the band is "
        "wide (exploration), and the three rules can pick different next points.",
    )
    ctx.table(
        ["acquisition", "best x so far", "best f so far", "next x"],
        rows,
        f"The global minimum of f on [-1, 2] is {truth.min():.4f} at x = "
        f"{grid[np.argmin(truth), 0]:.3f}.",
    )


@experiment(
    "gp-ard-relevance",
    title="Automatic relevance determination: learned length scales",
    section=SECTION,
    description=(
        "y = sin(2 x1) + 0.3 x2 + noise on 80 points in 4-D; x3 and x4 are irrelevant. A GP "
        "with an ARD RBF kernel (one length scale per input) and a learned noise variance, "
        "fitted by maximising the log marginal likelihood: the relevant input gets a short "
        "length scale, the weak one a longer one, the irrelevant ones run to the upper "
        "bound (the function is flat along them). Ours beside scikit-learn's with the same "
        "kernel, bounds and data."
    ),
    source='Oxford "Advanced Topics in Statistical Machine Learning" §9.3 (ARD); PRML §6.4.4',
)
def ard_relevance(ctx):
    import sklearn.gaussian_process as skgp
    import sklearn.gaussian_process.kernels as skk

    X = ctx.rng.uniform(-2, 2, size=(80, 4))
    y = np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + 0.1 * ctx.rng.standard_normal(80)
    gp = GaussianProcessRegressor(
        ConstantKernel(1.0, (1e-2, 1e2)) * RBF(np.ones(4), (1e-2, 1e3)),
        noise_variance=0.1,
        noise_variance_bounds=(1e-5, 1.0),
        n_restarts=2,
        random_state=ctx.rng,
    )
    peer = skgp.GaussianProcessRegressor(
        skk.ConstantKernel(1.0, (1e-2, 1e2)) * skk.RBF(np.ones(4), (1e-2, 1e3))
        + skk.WhiteKernel(0.1, (1e-5, 1.0)),
        n_restarts_optimizer=2,
        random_state=ctx.seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gp.fit(X, y)
        peer.fit(X, y)
    ours_ls = np.atleast_1d(gp.kernel_.k2.length_scale)
    peer_ls = np.atleast_1d(peer.kernel_.k1.k2.length_scale)
    rows = [[f"x{j + 1}", float(ours_ls[j]), float(peer_ls[j])] for j in range(4)]
    rows.append(
        [
            "log marginal likelihood",
            gp.log_marginal_likelihood_value_,
            float(peer.log_marginal_likelihood_value_),
        ]
    )
    ctx.table(["length scale", "mathlearn", "scikit-learn"], rows, "Upper bound 1000.")


@experiment(
    "gp-classification-laplace",
    title="GP classification: the Laplace predictive against the plug-in",
    section=SECTION,
    description=(
        "Binary GP classification on 30 points in 1-D (two clusters with a gap), RBF kernel "
        "with fixed hyperparameters. The Laplace approximation gives a Gaussian latent "
        "posterior; the predictive p(y = 1 | x) = E[sigma(f)] (probit approximation) is "
        "pulled towards 1/2 where the latent variance is large (the gap, the edges), while "
        "the plug-in sigma(E[f]) is not. scikit-learn's GaussianProcessClassifier with the "
        "same kernel is shown for the Laplace predictive."
    ),
    source=(
        'Oxford "Advanced Topics in Statistical Machine Learning" §9.4 (GP classification, '
        "Laplace); PRML §4.5.2, §6.4.5-6.4.6"
    ),
)
def gpc_laplace(ctx):
    import matplotlib.pyplot as plt
    import sklearn.gaussian_process as skgp
    import sklearn.gaussian_process.kernels as skk
    from scipy.special import expit

    from mathlearn.gaussian_process import GaussianProcessClassifier

    X = np.r_[ctx.rng.uniform(-4, -1, 15), ctx.rng.uniform(1.5, 4, 15)][:, None]
    p_true = expit(2.0 * np.sin(X[:, 0]))
    y = (ctx.rng.uniform(size=30) < p_true).astype(int)
    if len(np.unique(y)) < 2:
        y[:2] = [0, 1]
    gpc = GaussianProcessClassifier(
        ConstantKernel(4.0, "fixed") * RBF(1.0, "fixed"), optimizer=None
    )
    gpc.fit(X, y)
    peer = skgp.GaussianProcessClassifier(
        skk.ConstantKernel(4.0, "fixed") * skk.RBF(1.0, "fixed"), optimizer=None
    ).fit(X, y)
    g = np.linspace(-7, 7, 300)[:, None]
    m, v = gpc.predict_latent(g)
    p_laplace = gpc.predict_proba(g)[:, 1]
    p_plugin = expit(m)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    axes[0].plot(g[:, 0], m, "C0", label="latent mean")
    axes[0].fill_between(g[:, 0], m - 2 * np.sqrt(v), m + 2 * np.sqrt(v), alpha=0.2)
    axes[0].set(title="Laplace latent posterior (+-2 sd)", xlabel="x", ylabel="latent f(x)")
    axes[1].plot(g[:, 0], p_laplace, "C0", label="Laplace + probit (ours)")
    axes[1].plot(g[:, 0], peer.predict_proba(g)[:, 1], "k:", label="scikit-learn")
    axes[1].plot(g[:, 0], p_plugin, "C3--", label="plug-in sigma(E f)")
    axes[1].plot(X[:, 0], y, "k|", ms=10)
    axes[1].legend()
    axes[1].set(title="p(y = 1 | x)", xlabel="x", ylabel="p(y = 1 | x)")
    ctx.figure(
        fig,
        "Latent posterior and predictive probabilities. Notice that the averaged (probit) "
        "probability is closer to 1/2 than the plug-in sigma(E f) wherever the latent "
        "variance is large; scikit-learn's (dotted) is drawn for comparison.",
    )
    q = np.array([[-2.5], [0.25], [6.5]])
    mq, vq = gpc.predict_latent(q)
    rows = [
        [
            float(q[i, 0]),
            float(mq[i]),
            float(vq[i]),
            float(expit(mq[i])),
            float(gpc.predict_proba(q)[i, 1]),
            float(peer.predict_proba(q)[i, 1]),
        ]
        for i in range(3)
    ]
    ctx.table(
        ["x", "latent mean", "latent var", "plug-in", "Laplace (ours)", "Laplace (sklearn)"],
        rows,
        "In the data, in the gap, beyond the data.",
    )


def _co2_series(rng):
    """Monthly CO2 (statsmodels' bundled Mauna Loa series) or a synthetic stand-in."""
    try:
        import statsmodels.datasets.co2 as co2

        d = co2.load_pandas().data["co2"].resample("MS").mean().dropna()
        t = d.index.year + (d.index.month - 1) / 12.0
        return np.asarray(t, dtype=float), d.to_numpy(dtype=float), "Mauna Loa (statsmodels)"
    except ImportError:
        t = np.arange(1958.0, 2002.0, 1 / 12)
        y = (
            315
            + 1.2 * (t - 1958)
            + 0.012 * (t - 1958) ** 2
            + 3 * np.sin(2 * np.pi * t)
            + 0.4 * rng.standard_normal(t.shape[0])
        )
        return t, y, "synthetic trend + seasonal (statsmodels not installed)"


@experiment(
    "gp-mauna-loa",
    title="Mauna Loa CO2 with a composite kernel",
    section=SECTION,
    description=(
        "Monthly CO2 concentration (every fourth month, 1958-1995 for training, 1996-2001 "
        "held out), with a long-term RBF trend, a periodic component (period 1 year) decaying "
        "with an RBF, a rational-quadratic term for medium-term irregularities and learned "
        "noise. Hyperparameters by maximising the log marginal likelihood, ours beside "
        "scikit-learn's (same kernel, starting values and bounds, no restarts); the held-out "
        "RMSE of both forecasts. statsmodels bundles the series; without it a synthetic "
        "trend + seasonal series is used and the table says so."
    ),
    source=(
        'Oxford "Advanced Topics in Statistical Machine Learning" §9.2-9.3 (GP regression, '
        "marginal likelihood); PRML §6.4; GPML §5.4.3"
    ),
)
def mauna_loa(ctx):
    import matplotlib.pyplot as plt
    import sklearn.gaussian_process as skgp
    import sklearn.gaussian_process.kernels as skk

    from mathlearn.kernels import ExpSineSquared, RationalQuadratic

    t, y, source = _co2_series(ctx.rng)
    t, y = t[::4], y[::4]
    train = t < 1996
    X, Xt = t[train][:, None] - 1958, t[~train][:, None] - 1958
    yt = y[~train]
    y_tr = y[train]
    ours = GaussianProcessRegressor(
        ConstantKernel(1e3, (1.0, 1e5)) * RBF(50.0, (1.0, 1e3))
        + ConstantKernel(4.0, (1e-2, 1e2))
        * RBF(100.0, (1.0, 1e3))
        * ExpSineSquared(1.0, 1.0, periodicity_bounds="fixed")
        + ConstantKernel(0.5, (1e-3, 1e2)) * RationalQuadratic(1.0, 1.0),
        noise_variance=0.1,
        noise_variance_bounds=(1e-3, 10.0),
        normalize_y=True,
        random_state=ctx.rng,
    )
    peer = skgp.GaussianProcessRegressor(
        skk.ConstantKernel(1e3, (1.0, 1e5)) * skk.RBF(50.0, (1.0, 1e3))
        + skk.ConstantKernel(4.0, (1e-2, 1e2))
        * skk.RBF(100.0, (1.0, 1e3))
        * skk.ExpSineSquared(1.0, 1.0, periodicity_bounds="fixed")
        + skk.ConstantKernel(0.5, (1e-3, 1e2)) * skk.RationalQuadratic(1.0, 1.0)
        + skk.WhiteKernel(0.1, (1e-3, 10.0)),
        normalize_y=True,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours.fit(X, y_tr)
        peer.fit(X, y_tr)
    m, s = ours.predict(Xt, return_std=True, noisy=True)
    mp = peer.predict(Xt)
    fig, ax = plt.subplots(figsize=(10, 3.8))
    ax.plot(t, y, "k.", ms=2, label="data")
    ax.plot(Xt[:, 0] + 1958, m, "C0", label="forecast (ours)")
    ax.fill_between(Xt[:, 0] + 1958, m - 2 * s, m + 2 * s, color="C0", alpha=0.3)
    ax.plot(Xt[:, 0] + 1958, mp, "C3:", label="forecast (sklearn)")
    ax.set(xlim=(1985, 2002.5), xlabel="year", ylabel="CO2 (ppm)")
    ax.legend()
    ctx.figure(fig, f"{source}: the last years of training data and the held-out forecast.")
    ctx.table(
        ["", "mathlearn", "scikit-learn"],
        [
            [
                "log marginal likelihood (y in ppm)",
                ours.log_marginal_likelihood_value_,
                # scikit-learn reports it for the standardised y: back to ppm by the
                # Jacobian of y -> (y - mean) / sd, -n log sd.
                float(peer.log_marginal_likelihood_value_) - len(y_tr) * np.log(np.std(y_tr)),
            ],
            [
                "held-out RMSE (ppm)",
                float(np.sqrt(np.mean((m - yt) ** 2))),
                float(np.sqrt(np.mean((mp - yt) ** 2))),
            ],
        ],
        f"Data: {source}; {int(train.sum())} training and {int((~train).sum())} held-out months.",
    )
