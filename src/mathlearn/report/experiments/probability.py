"""Probability: sequential Bayesian updating, Gaussian conditioning, the Normal–Gamma
posterior, and Monte Carlo (rejection and importance sampling).

Imperial "Mathematics for Inference and Machine Learning" §1.2; PRML §1.2 and §2.3;
Stuttgart "Introduction to Machine Learning" appendix A (slides 9:13–9:47).
"""

from __future__ import annotations

import numpy as np

from mathlearn.distributions import (
    Bernoulli,
    Beta,
    BetaBernoulliModel,
    MultivariateNormal,
    Normal,
    NormalGammaModel,
    StudentT,
    bayes_factor,
    bayes_rule,
)
from mathlearn.monte_carlo import importance_sampling, rejection_sample
from mathlearn.report import experiment

SECTION = "Probability"


@experiment(
    "beta-coin-posterior",
    title="Sequential Beta posterior for coin flips",
    section=SECTION,
    description=(
        "A coin with P(heads) = 0.7 is flipped 200 times. Starting from a uniform Beta(1, 1) "
        "prior, each flip updates the posterior to Beta(1 + heads, 1 + tails) (conjugacy, "
        "Imperial 'Mathematics for Inference and Machine Learning' eq. 1.53-1.56): it narrows "
        "around the true bias. The table follows the "
        "posterior mean and 95% interval and the Bayes factor of a fair coin against a coin "
        "of unknown bias (ratio of marginal likelihoods), then reproduces the notes' "
        "fair-versus-double-headed coin posterior ratios."
    ),
    source=(
        "Imperial 'Mathematics for Inference and Machine Learning' §1.2.4; Stuttgart "
        "'Introduction to Machine Learning' slides 9:16-9:18, 9:22"
    ),
)
def beta_coin_posterior(ctx):
    import matplotlib.pyplot as plt

    flips = (ctx.rng.random(200) < 0.7).astype(float)
    model = BetaBernoulliModel(1.0, 1.0)
    mu = np.linspace(0, 1, 501)
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.8))
    rows = []
    checkpoints = [0, 1, 2, 5, 10, 20, 50, 200]
    colors = plt.cm.viridis(np.linspace(0, 0.9, len(checkpoints)))
    for n, c in zip(checkpoints, colors, strict=True):
        post = model.posterior(flips[:n]) if n else model.prior
        axes[0].plot(mu, post.pdf(mu), color=c, label=f"n = {n}")
        h = int(flips[:n].sum())
        lo, hi = post.ppf(0.025), post.ppf(0.975)
        bf = bayes_factor(Bernoulli(0.5), model, flips[:n], log=True) if n else 0.0
        rows.append([n, h, post.mean, f"[{lo:.3f}, {hi:.3f}]", bf / np.log(10)])
    axes[0].axvline(0.7, color="k", ls=":", label="true bias")
    axes[0].set_xlabel("mu = P(heads)")
    axes[0].set_title("posterior Beta(1 + h, 1 + t)")
    axes[0].set_ylabel("density p(mu | flips)")
    axes[0].legend()
    # Posterior mean and interval against the number of flips.
    ns = np.arange(0, 201)
    h = np.r_[0, np.cumsum(flips)]
    post = Beta(1 + h, 1 + ns - h)
    axes[1].fill_between(ns, post.ppf(0.025), post.ppf(0.975), alpha=0.3, label="95% interval")
    axes[1].plot(ns, post.mean, label="posterior mean")
    axes[1].plot(ns[1:], h[1:] / ns[1:], ":", label="ML estimate h / n")
    axes[1].axhline(0.7, color="k", ls=":")
    axes[1].set_xlabel("number of flips n")
    axes[1].set_ylabel("mu = P(heads)")
    axes[1].legend()
    ctx.figure(
        fig,
        "Sequential updating of the Beta posterior over the coin's bias. Notice the posterior "
        "narrowing around the true bias 0.7 roughly as 1/sqrt(n), and the posterior mean "
        "staying between the prior mean 1/2 and the ML estimate h/n, closer to the latter as "
        "n grows.",
    )
    ctx.table(
        ["flips n", "heads", "posterior mean", "95% interval", "log10 BF (fair : unknown)"],
        rows,
        "A negative log Bayes factor favours the biased-coin model.",
    )
    worked = []
    for seq, printed in [("HHTHT", "inf"), ("HHHHH", "~30"), ("HHHHHHHHHH", "~1")]:
        n, heads = len(seq), seq.count("H")
        lik = np.array([0.5**n, 1.0 if heads == n else 0.0])
        post = bayes_rule([0.999, 0.001], lik)
        ratio = post[0] / post[1] if post[1] > 0 else np.inf
        worked.append([seq, printed, float(ratio)])
    ctx.table(
        ["data", "notes (Stuttgart slides 9:16-9:18)", "P(fair | D) / P(double-headed | D)"],
        worked,
        "Fair coin (prior 999/1000) against a double-headed coin (prior 1/1000).",
    )


@experiment(
    "gaussian-condition-marginal",
    title="Conditioning and marginalising a 2-D Gaussian",
    section=SECTION,
    description=(
        "Contours of a correlated 2-D Gaussian p(x1, x2). Conditioning on x2 = 1.5 gives a "
        "Gaussian with shifted mean and smaller variance (the Schur complement), computed from "
        "the Cholesky factor of the permuted covariance; marginalising x2 out keeps the block "
        "Sigma_11. The right panel checks the conditional against samples whose x2 falls in a "
        "thin slice around 1.5."
    ),
    source=(
        "Imperial 'Mathematics for Inference and Machine Learning' §1.2.3.5, eq. 1.38-1.41; PRML "
        "§2.3.1-2.3.2"
    ),
)
def gaussian_condition_marginal(ctx):
    import matplotlib.pyplot as plt

    p = MultivariateNormal([0.5, 0.0], [[1.0, 0.8], [0.8, 1.2]])
    x2 = 1.5
    cond = p.condition([1], [x2])
    marg = p.marginal([0])
    g1, g2 = np.meshgrid(np.linspace(-3, 4, 200), np.linspace(-3.5, 3.5, 200))
    dens = p.pdf(np.stack([g1, g2], -1))
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    axes[0].contour(g1, g2, dens, levels=8, cmap="Blues")
    axes[0].axhline(x2, color="C3", ls="--", label=f"x2 = {x2}")
    axes[0].plot(*p.mean, "k+", ms=12)
    axes[0].set_xlabel("x1")
    axes[0].set_ylabel("x2")
    axes[0].legend()
    axes[0].set_title("joint p(x1, x2)")
    x1 = np.linspace(-3, 4, 400)
    axes[1].plot(x1, cond.pdf(x1[:, None]), "C3", label="p(x1 | x2 = 1.5)")
    axes[1].plot(x1, marg.pdf(x1[:, None]), "C0", label="p(x1)")
    X = p.sample(200_000, ctx.rng)
    near = X[np.abs(X[:, 1] - x2) < 0.05, 0]
    axes[1].hist(near, bins=40, density=True, alpha=0.3, color="C3", label="samples, x2 near 1.5")
    axes[1].hist(X[:, 0], bins=60, density=True, alpha=0.2, color="C0", label="samples, all")
    axes[1].legend()
    axes[1].set_xlabel("x1")
    axes[1].set_ylabel("density")
    ctx.figure(
        fig,
        "Left: contours of the joint and the conditioning line x2 = 1.5. Right: notice "
        "that the conditional is narrower than the marginal (conditioning never widens a "
        "Gaussian) and that the histograms of samples follow the closed forms.",
    )
    S = p.cov
    schur_mean = p.mean[0] + S[0, 1] / S[1, 1] * (x2 - p.mean[1])
    schur_var = S[0, 0] - S[0, 1] ** 2 / S[1, 1]
    ctx.table(
        ["", "mathlearn (Cholesky)", "Schur-complement formula", "samples in slice"],
        [
            ["conditional mean", float(cond.mean[0]), schur_mean, float(near.mean())],
            ["conditional variance", float(cond.cov[0, 0]), schur_var, float(near.var())],
            ["marginal variance", float(marg.cov[0, 0]), S[0, 0], float(X[:, 0].var())],
        ],
        f"{near.size} of {len(X)} samples fall within 0.05 of x2 = 1.5.",
    )


@experiment(
    "normal-gamma-posterior",
    title="Conjugate Normal-Gamma posterior over a mean and a precision",
    section=SECTION,
    description=(
        "Data from N(mu = 1, sigma = 0.5) (precision tau = 4). The Normal-Gamma prior "
        "N(mu | 0, (kappa tau)^-1) Gam(tau | a = 2, rate b = 1) is updated in closed form; the "
        "contours of the posterior over (mu, tau) tighten around the truth as n grows, and the "
        "posterior predictive is a Student t. The table contrasts the posterior with the ML "
        "estimates, whose variance 1/N sum (x - x_bar)^2 is biased low by the factor "
        "(N - 1)/N (PRML §1.2.4)."
    ),
    source=(
        "Imperial 'Mathematics for Inference and Machine Learning' §1.2.3.6, §1.2.4 (Table 1.1); "
        "PRML §1.2.4; Stuttgart 'Introduction to Machine Learning' slide 9:31"
    ),
)
def normal_gamma_posterior(ctx):
    import matplotlib.pyplot as plt

    data = ctx.rng.normal(1.0, 0.5, size=100)
    model = NormalGammaModel(0.0, 1.0, 2.0, 1.0)
    mu = np.linspace(-0.5, 2.0, 200)
    tau = np.linspace(0.05, 12.0, 200)
    M, T = np.meshgrid(mu, tau)
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.8))
    rows = []
    for ax, n in zip(axes[:3], [3, 15, 100], strict=True):
        post = model.posterior(data[:n])
        dens = post.pdf(M, T)
        ax.contour(
            M, T, dens, levels=dens.max() * np.array([0.05, 0.2, 0.4, 0.6, 0.8]), cmap="viridis"
        )
        ax.plot(1.0, 4.0, "r*", ms=12, label="truth")
        ax.plot(data[:n].mean(), 1 / data[:n].var(), "kx", ms=9, label="ML")
        ax.set_ylim(0, 12)
        ax.set_title(f"posterior p(mu, tau | D), n = {n}")
        ax.set_xlabel("mu")
        ax.set_ylabel("tau")
        ax.legend()
        m_post, tau_post = post.mean
        ml_var = data[:n].var()
        rows.append(
            [n, m_post, tau_post, data[:n].mean(), 1 / ml_var, ml_var, ml_var * n / (n - 1)]
        )
    x = np.linspace(-1, 3, 300)
    for n, style in [(3, ":"), (15, "--"), (100, "-")]:
        pred = model.update(data[:n]).predictive()
        axes[3].plot(x, pred.pdf(x), style, label=f"predictive Student t, n = {n}")
    axes[3].plot(x, Normal(1.0, 0.25).pdf(x), "k", lw=0.8, label="true N(1, 0.25)")
    axes[3].legend()
    axes[3].set(title="posterior predictive", xlabel="x", ylabel="density p(x | D)")
    ctx.figure(
        fig,
        "Normal-Gamma posterior contours at 5-80% of the peak (truth: red star; ML estimate: "
        "cross, off the axes when n = 3 gives a very large ML precision).",
    )
    ctx.table(
        [
            "n",
            "E[mu | D]",
            "E[tau | D]",
            "ML mean",
            "ML precision",
            "ML variance (1/N)",
            "unbiased variance (1/(N-1))",
        ],
        rows,
        "True mu = 1, tau = 4 (variance 0.25).",
    )
    # The bias of the ML variance, E[sigma^2_ML] = (N-1)/N sigma^2, by simulation.
    bias_rows = []
    for N in (2, 5, 20):
        sims = ctx.rng.normal(0.0, 1.0, size=(20_000, N))
        ml = sims.var(axis=1)
        bias_rows.append([N, float(ml.mean()), (N - 1) / N, float(ml.std() / np.sqrt(len(ml)))])
    ctx.table(
        ["N", "mean of sigma^2_ML over 20 000 samples", "(N-1)/N (sigma^2 = 1)", "std. error"],
        bias_rows,
        "The ML variance is biased low; rescaling by N/(N-1) removes the bias (PRML §1.2.4).",
    )


def _bimodal_logpdf(x):
    """log of 0.3 N(-2, 0.5^2) + 0.7 N(1.5, 1): a target with no closed-form sampler here."""
    a = np.log(0.3) + Normal(-2.0, 0.25).logpdf(x)
    b = np.log(0.7) + Normal(1.5, 1.0).logpdf(x)
    return np.logaddexp(a, b)


@experiment(
    "rejection-importance-sampling",
    title="Rejection and importance sampling against the exact density",
    section=SECTION,
    description=(
        "Target: the bimodal density 0.3 N(-2, 0.5^2) + 0.7 N(1.5, 1). Rejection sampling "
        "uses a Student t proposal (3 dof, scale 2) and a bound M found on a grid (and checked "
        "at every proposal); importance sampling uses the same proposal with self-normalised "
        "weights. Both estimate E[x^2] = 3.55; their errors fall like 1/sqrt(n), as the "
        "reported standard errors predict."
    ),
    source="Stuttgart 'Introduction to Machine Learning' slides 9:45-9:47; PRML §1.2.2",
)
def rejection_importance_sampling(ctx):
    import matplotlib.pyplot as plt

    q = StudentT(3.0, 0.0, 2.0)
    grid = np.linspace(-15, 15, 20_001)
    log_m = float(np.max(_bimodal_logpdf(grid) - q.logpdf(grid))) + 0.05
    exact_m2 = 0.3 * (4.0 + 0.25) + 0.7 * (2.25 + 1.0)
    sizes = [100, 300, 1000, 3000, 10_000, 30_000]
    rows, rej_err, rej_se, is_err, is_se = [], [], [], [], []
    for n in sizes:
        r = rejection_sample(_bimodal_logpdf, q, log_m, n, ctx.rng)
        x2 = r.samples**2
        est, se = x2.mean(), x2.std(ddof=1) / np.sqrt(n)
        s = importance_sampling(lambda x: x**2, _bimodal_logpdf, q, n, ctx.rng)
        rej_err.append(abs(est - exact_m2))
        rej_se.append(se)
        is_err.append(abs(s.estimate - exact_m2))
        is_se.append(s.std_error)
        rows.append([n, est, se, r.acceptance_rate, s.estimate, s.std_error, s.ess])
    fig, axes = plt.subplots(1, 3, figsize=(16, 3.8))
    x = np.linspace(-5, 6, 400)
    exact = np.exp(_bimodal_logpdf(x))
    axes[0].hist(r.samples, bins=80, density=True, alpha=0.4, label="rejection samples")
    axes[0].plot(x, exact, "k", label="exact p(x)")
    axes[0].plot(x, np.exp(log_m + q.logpdf(x)), "C3--", label="envelope M q(x)")
    axes[0].set_xlim(-5, 6)
    axes[0].legend()
    axes[0].set_title(f"rejection sampling (acceptance {r.acceptance_rate:.2f} = 1/M)")
    axes[0].set(xlabel="x", ylabel="density")
    axes[1].hist(
        s.samples,
        bins=np.linspace(-5, 6, 80),
        weights=s.weights,
        density=True,
        alpha=0.4,
        label="weighted proposal samples",
    )
    axes[1].plot(x, exact, "k", label="exact p(x)")
    axes[1].plot(x, q.pdf(x), "C2:", label="proposal q(x)")
    axes[1].legend()
    axes[1].set_title(f"importance sampling (ESS {s.ess:.0f} of {sizes[-1]})")
    axes[1].set(xlabel="x", ylabel="density")
    axes[2].loglog(sizes, rej_err, "o-", label="|error|, rejection")
    axes[2].loglog(sizes, rej_se, "o:", color="C0", label="std. error, rejection")
    axes[2].loglog(sizes, is_err, "s-", color="C1", label="|error|, importance")
    axes[2].loglog(sizes, is_se, "s:", color="C1", label="std. error, importance")
    ref = np.array(sizes, dtype=float)
    axes[2].loglog(ref, 3 * rej_se[0] * np.sqrt(sizes[0] / ref), "k--", lw=0.8, label="1/sqrt(n)")
    axes[2].set_xlabel("samples n")
    axes[2].set_ylabel("error in E[x^2]")
    axes[2].set_title("error in E[x^2] as the sample grows")
    axes[2].legend()
    ctx.figure(
        fig,
        "Samples against the exact density, and the error against n. Notice that both "
        "errors follow the 1/sqrt(n) slope of Monte Carlo and stay near their estimated "
        "standard errors (dotted).",
    )
    ctx.table(
        [
            "n",
            "rejection E[x^2]",
            "std. error",
            "acceptance rate",
            "importance E[x^2]",
            "std. error",
            "ESS",
        ],
        rows,
        f"Exact E[x^2] = {exact_m2:.4f}; 1/M = {np.exp(-log_m):.3f}.",
    )
