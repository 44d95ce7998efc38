"""Variational inference: a variational Gaussian mixture switching off components, variational
against evidence-maximised Bayesian regression, and soft k-means tending to hard k-means.

Each experiment is a self-contained function (data, fits, figure, table)."""

from __future__ import annotations

import warnings

import numpy as np

from mathlearn.report import experiment

SECTION = "Variational inference"


@experiment(
    "variational-gmm-concentration",
    title="A variational Gaussian mixture switches off components as the concentration falls",
    section=SECTION,
    description=(
        "Three Gaussian clusters, a variational mixture with K = 10 components and a "
        "Dirichlet prior on the weights, fitted by coordinate ascent for a range of "
        "concentrations alpha_0. A large alpha_0 keeps every component in use; as alpha_0 "
        "falls, the bound prefers to empty the superfluous ones (their weight tends to "
        "alpha_0 / (K alpha_0 + N)), leaving the three the data need. Left: the weights "
        "E[pi_k], sorted, per alpha_0; middle: the bound along the sweeps (never decreasing); "
        "right: the fit at the smallest alpha_0. The table puts scikit-learn's "
        "BayesianGaussianMixture (same priors, k-means++ initialisation) beside ours: the "
        "number of components with weight above 1% and the bound (theirs with its dropped "
        "constants restored)."
    ),
    source="PRML §10.2 (variational mixture of Gaussians, Fig. 10.6); Oxford 'Advanced "
    "Topics in Statistical Machine Learning' §2.8 (ELBO, CAVI)",
)
def gmm_concentration(ctx):
    import matplotlib.pyplot as plt
    from scipy.special import gammaln
    from sklearn.mixture import BayesianGaussianMixture as SkBGM
    from threadpoolctl import threadpool_limits

    from mathlearn.mixture import BayesianGaussianMixture

    rng = ctx.rng
    centres = np.array([[-4.0, 0.0], [3.0, 3.0], [2.0, -4.0]])
    X = np.vstack([c + rng.normal(size=(120, 2)) for c in centres])
    n, d = X.shape
    k = 10
    seed = int(rng.integers(2**31))
    concentrations = [1e3, 10.0, 1.0, 1e-2, 1e-6]
    rows, weights, history = [], [], None
    for a0 in concentrations:
        common = dict(
            n_components=k,
            weight_concentration_prior_type="dirichlet_distribution",
            weight_concentration_prior=a0,
            max_iter=300,
            init_params="k-means++",
        )
        # One BLAS/OpenMP thread: small problems only lose time to thread start-up.
        with warnings.catch_warnings(), threadpool_limits(1):
            warnings.simplefilter("ignore")  # a ConvergenceWarning would only add noise here
            ours = BayesianGaussianMixture(tol=1e-8, random_state=seed, **common).fit(X)
            peer = SkBGM(tol=1e-6, random_state=seed, reg_covar=0.0, **common).fit(X)
        b0, nu0 = peer.mean_precision_prior_, peer.degrees_of_freedom_prior_
        i = np.arange(1, d + 1)
        log_z0 = (
            -d / 2 * np.log(b0)
            + nu0 * d / 2 * np.log(2)
            - nu0 / 2 * np.linalg.slogdet(peer.covariance_prior_)[1]
            + gammaln((nu0 + 1 - i) / 2).sum()
        )
        const = -n * d / 2 * np.log(2 * np.pi) - k * log_z0 - (k * gammaln(a0) - gammaln(k * a0))
        weights.append(np.sort(ours.weights_)[::-1])
        if a0 == concentrations[-1]:
            history, last = ours.lower_bounds_, ours
        rows.append(
            [
                f"{a0:g}",
                int(np.sum(ours.weights_ > 0.01)),
                int(np.sum(peer.weights_ > 0.01)),
                float(ours.lower_bound_),
                float(peer.lower_bound_ + const),
            ]
        )
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    for a0, w in zip(concentrations, weights, strict=True):
        axes[0].semilogy(np.arange(1, k + 1), np.maximum(w, 1e-12), "o-", label=f"alpha_0={a0:g}")
    axes[0].set_xlabel("component (sorted by weight)")
    axes[0].set_ylabel("E[pi_k]")
    axes[0].legend()
    axes[1].plot(np.arange(1, len(history) + 1), history)
    axes[1].set_xlabel("CAVI sweep")
    axes[1].set_ylabel("ELBO (nats)")
    axes[1].set_title(f"alpha_0 = {concentrations[-1]:g}")
    labels = last.predict(X)
    axes[2].scatter(X[:, 0], X[:, 1], c=labels, cmap="tab10", s=8)
    active = last.weights_ > 0.01
    axes[2].scatter(*last.means_[active].T, c="k", marker="x", s=80)
    axes[2].set(title=f"{int(active.sum())} active components", xlabel="x1", ylabel="x2")
    ctx.figure(
        fig,
        "Weights per concentration; the bound along the sweeps; the sparse fit. Notice that "
        "a small concentration alpha_0 empties the surplus components (their weights fall "
        "to about zero) and that the ELBO never decreases along the CAVI sweeps.",
    )
    ctx.table(
        ["alpha_0", "active (ours)", "active (scikit-learn)", "ELBO (ours)", "ELBO (sklearn + C)"],
        rows,
        "Active: E[pi_k] > 1%. C = -N D/2 log 2 pi - K log Z_NW(prior) - log Z_Dir(prior), the "
        "terms scikit-learn's bound omits. The two start from their own k-means++ seeds, so "
        "bounds "
        "differ where they reach different local optima.",
    )


@experiment(
    "variational-vs-evidence-regression",
    title="Variational Bayesian regression against evidence maximisation",
    section=SECTION,
    description=(
        "Polynomial regression (degree 6, 7 weights) of noisy sin(2 pi x). The variational "
        "model integrates over the prior precision alpha and the noise precision beta "
        "(Gamma hyperpriors, mean-field q(w) q(alpha) q(beta)); evidence maximisation "
        "(type-II maximum likelihood) sets them to the evidence's maximiser. Left: the two "
        "predictive means and two-standard-deviation bands at N = 15; right: the distance "
        "between the two posterior means, relative, as N grows, which shrinks as the "
        "hyperposteriors concentrate. The table gives E[alpha], E[beta] against the "
        "evidence-maximising alpha, beta, and the ELBO beside the log evidence."
    ),
    source="PRML §10.3 (variational linear regression) and §3.5 (evidence approximation)",
)
def vb_vs_evidence(ctx):
    import matplotlib.pyplot as plt

    from mathlearn.linear_model import BayesianLinearRegression, VariationalLinearRegression

    rng = ctx.rng
    degree = 6

    def design(x):
        return np.column_stack([x**p for p in range(1, degree + 1)])

    def draw(n):
        x = rng.uniform(0, 1, n)
        return x, np.sin(2 * np.pi * x) + 0.2 * rng.normal(size=n)

    sizes = [15, 30, 100, 300, 1000, 3000]
    gaps, rows = [], []
    for n in sizes:
        x, t = draw(n)
        Phi = design(x)
        vb = VariationalLinearRegression().fit(Phi, t)
        eb = BayesianLinearRegression().fit(Phi, t)
        gaps.append(np.linalg.norm(vb.coef_ - eb.coef_) / np.linalg.norm(eb.coef_))
        rows.append(
            [
                n,
                f"{vb.alpha_:.3g} / {eb.prior_precision_:.3g}",
                f"{vb.noise_precision_:.3g} / {eb.noise_precision_:.3g}",
                float(vb.lower_bound_),
                float(eb.log_evidence_),
                float(gaps[-1]),
            ]
        )
        if n == sizes[0]:
            small = (x, t, vb, eb)
    x, t, vb, eb = small
    grid = np.linspace(0, 1, 200)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.3))
    for model, name, style in [(vb, "variational", "-"), (eb, "evidence max.", "--")]:
        mean, std = model.predict(design(grid), return_std=True)
        axes[0].plot(grid, mean, style, label=name)
        axes[0].fill_between(grid, mean - 2 * std, mean + 2 * std, alpha=0.15)
    axes[0].scatter(x, t, c="k", s=12)
    axes[0].plot(grid, np.sin(2 * np.pi * grid), "k:", label="sin(2 pi x)")
    axes[0].legend()
    axes[0].set(title=f"N = {sizes[0]}", xlabel="x", ylabel="t")
    axes[1].loglog(sizes, gaps, "o-")
    axes[1].set_xlabel("N")
    axes[1].set_ylabel("||m_VB - m_EB|| / ||m_EB||")
    ctx.figure(
        fig,
        "Predictive means and bands at small N; the gap between the two as N grows. Notice "
        "that the relative gap between the variational and the evidence-maximising means "
        "shrinks as N grows.",
    )
    ctx.table(
        ["N", "alpha: E_q / EB", "beta: E_q / EB", "ELBO (VB)", "log evidence (EB)", "rel. gap"],
        rows,
        "The ELBO bounds the evidence of the model with hyperpriors; the EB column is the "
        "evidence at the maximising precisions (no hyperprior), so the two are not ordered: "
        "the vague Gamma(1e-6, 1e-6) hyperpriors cost about log(1e-6) = -13.8 nats each in "
        "the ELBO (the price of integrating over alpha and beta), while the posterior means "
        "agree closely. Both centre the data and fit the offset without a prior.",
    )


@experiment(
    "variational-soft-kmeans-limit",
    title="Soft k-means tends to hard k-means as the variance falls",
    section=SECTION,
    description=(
        "EM for the isotropic mixture with a fixed variance sigma^2 (soft k-means), from the "
        "same initial centres as Lloyd's k-means, for decreasing sigma^2. Responsibilities "
        "Q_ik sharpen into the hard assignments, and the fitted centres reach k-means' "
        "(the notes' limit sigma^2 -> 0). Left: the soft assignments at a large sigma^2 "
        "(colour mixes by responsibility); middle: the same at a small one; right: the "
        "largest distance between soft and hard centres and the mean of 1 - max_k Q_ik "
        "against sigma^2."
    ),
    source="Oxford 'Advanced Topics in Statistical Machine Learning' §5.4 (EM for "
    "mixtures, soft k-means, the sigma^2 -> 0 limit); PRML §9.3.2",
)
def soft_kmeans_limit(ctx):
    import matplotlib.pyplot as plt

    from mathlearn.cluster import KMeans, SoftKMeans

    rng = ctx.rng
    centres = np.array([[0.0, 0.0], [3.0, 0.5], [1.5, 2.5]])
    X = np.vstack([c + 0.8 * rng.normal(size=(80, 2)) for c in centres])
    init = X[rng.choice(len(X), 3, replace=False)]
    hard = KMeans(3, init=init, n_init=1, max_iter=300).fit(X)
    sigmas = [4.0, 1.0, 0.3, 0.1, 0.03, 0.01, 1e-3]
    dist, soft = [], []
    fits = {}
    for s2 in sigmas:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ConvergenceWarning at large sigma^2 only
            m = SoftKMeans(3, sigma2=s2, init=init, max_iter=1000).fit(X)
        fits[s2] = m
        Q = m.predict_proba(X)
        # match the soft centres to the hard ones by the labels' overlap
        order = [
            int(np.argmin(((hard.cluster_centers_ - c) ** 2).sum(1))) for c in m.cluster_centers_
        ]
        dist.append(float(np.max(np.abs(m.cluster_centers_ - hard.cluster_centers_[order]))))
        soft.append(float(np.mean(1 - Q.max(axis=1))))
    colours = np.array([[0.85, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.3, 0.85]])
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    for ax, s2 in [(axes[0], 1.0), (axes[1], 0.01)]:
        Q = fits[s2].predict_proba(X)
        ax.scatter(X[:, 0], X[:, 1], c=np.clip(Q @ colours, 0, 1), s=10)
        ax.scatter(*fits[s2].cluster_centers_.T, c="k", marker="x", s=80)
        ax.set(title=f"sigma^2 = {s2:g}", xlabel="x1", ylabel="x2")
    axes[2].loglog(sigmas, np.maximum(dist, 1e-16), "o-", label="max |mu_soft - mu_hard|")
    axes[2].loglog(sigmas, np.maximum(soft, 1e-16), "s-", label="mean 1 - max_k Q_ik")
    axes[2].set(xlabel="sigma^2", ylabel="gap to k-means")
    axes[2].legend()
    ctx.figure(
        fig,
        "Soft assignments at a large and a small variance; the gap to k-means. Notice that "
        "as sigma^2 shrinks the colours become pure (hard assignments) and both gaps to "
        "k-means fall towards zero.",
    )
    agree = [
        float(np.mean(fits[s2].labels_ == hard.labels_)) if dist[i] < 1e-6 else "-"
        for i, s2 in enumerate(sigmas)
    ]
    ctx.table(
        ["sigma^2", "max centre gap", "mean 1 - max Q", "label agreement (when centres match)"],
        [[s2, dist[i], soft[i], agree[i]] for i, s2 in enumerate(sigmas)],
        "At large sigma^2 the centres are pulled together (every point is shared); below the "
        "clusters' spread they lock onto k-means' fixed point and the assignments harden.",
    )
