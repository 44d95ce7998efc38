"""Experiments of the notes not covered elsewhere in the report.

The polynomial-regression figures of Imperial "Mathematics for Inference and Machine Learning"
§1.5 and §1.8 on their own data generator (N = 20, ``x ~ U[-5, 5]``, ``y = -sin(x/5) + cos(x)
+ eps``, noise 0.2), and demonstrations from Stuttgart "Introduction to Machine Learning" and
PRML.
"""

from __future__ import annotations

import warnings

import numpy as np

from mathlearn.datasets import make_sinusoidal_imperial
from mathlearn.linear_model import BayesianLinearRegression, Lasso, LinearRegression, Ridge
from mathlearn.preprocessing import PolynomialBasis
from mathlearn.report import experiment

_IMPERIAL = "Imperial 'Mathematics for Inference and Machine Learning'"
_STUTTGART = "Stuttgart 'Introduction to Machine Learning'"
_GRID = np.linspace(-5.0, 5.0, 200)[:, None]


def _fill_labels(fig, x, y, by_title=()):
    """Label every axis of ``fig`` that has none: ``(x, y)``, or the pair of the first
    ``(title fragment, (x, y))`` in ``by_title`` that the axes' title contains."""
    for ax in fig.axes:
        lx, ly = x, y
        for fragment, pair in by_title:
            if fragment in ax.get_title():
                lx, ly = pair
                break
        if not ax.get_xlabel():
            ax.set_xlabel(lx)
        if not ax.get_ylabel():
            ax.set_ylabel(ly)


def _rmse(a, b):
    return float(np.sqrt(np.mean((a - b) ** 2)))


def _truth(x):
    return -np.sin(x / 5.0) + np.cos(x)


def _imperial_data(ctx, noise=0.2):
    """The notes' training set (N = 20) and test set (100 points on a grid, fresh noise)."""
    X, y = make_sinusoidal_imperial(20, noise=noise, random_state=ctx.rng)
    Xt = np.linspace(-5.0, 5.0, 100)[:, None]
    yt = _truth(Xt[:, 0]) + noise * ctx.rng.standard_normal(100)
    return X, y, Xt, yt


def _degree_sweep(X, y, Xt, yt, degrees):
    """ML fits on monomials of x / 5 (cond stays moderate up to degree 19), ours and sklearn's."""
    from sklearn.linear_model import LinearRegression as SkLinearRegression

    rows, fits = [], {}
    for d in degrees:
        basis = PolynomialBasis(degree=d)
        Phi, Phit = basis.fit_transform(X / 5.0), basis.transform(Xt / 5.0)
        ours = LinearRegression(fit_intercept=False).fit(Phi, y)
        ref = SkLinearRegression(fit_intercept=False).fit(Phi, y)
        rows.append(
            [
                d,
                _rmse(ours.predict(Phi), y),
                _rmse(ref.predict(Phi), y),
                _rmse(ours.predict(Phit), yt),
                _rmse(ref.predict(Phit), yt),
            ]
        )
        fits[d] = ours.predict(basis.transform(_GRID / 5.0))
    return rows, fits


@experiment(
    "imperial-ml-polynomial",
    title="Maximum-likelihood polynomials on the Imperial data: degree 4, and degrees 0-19",
    section="Regression",
    description=(
        "The notes' own data: N = 20 points, x ~ U[-5, 5], y = -sin(x/5) + cos(x) + noise of "
        "standard deviation 0.2; the test set is 100 points on a grid of [-5, 5] with fresh "
        "noise. Maximum-likelihood polynomial fits for every degree M = 0..19 and their "
        "training and test RMSE. Notice that the training error never increases and reaches "
        "zero at M = 19 = N - 1 (interpolation), while the test error is low and flat for "
        "moderate degrees and explodes for the highest ones (the notes find the best test "
        "error at M = 6 for their draw; which moderate degree wins changes with the draw). The "
        "features are monomials of x / 5: on raw monomials of [-5, 5] the design has "
        "cond ~ 1e13 at M = 19 and any solver loses digits."
    ),
    source=f"{_IMPERIAL} §1.5.1.4 (Fig. 1.19) and §1.5.2 (Figs. 1.20-1.21, eq. 1.166)",
)
def imperial_ml_polynomial(ctx):
    import matplotlib.pyplot as plt

    X, y, Xt, yt = _imperial_data(ctx)
    degrees = list(range(20))
    rows, fits = _degree_sweep(X, y, Xt, yt, degrees)
    shown = (0, 1, 4, 6, 12, 19)
    fig, axes = plt.subplots(1, len(shown) + 1, figsize=(20, 3.2))
    for ax, d in zip(axes[:-1], shown, strict=True):
        ax.plot(_GRID, _truth(_GRID), "g", lw=1, label="truth")
        ax.plot(_GRID, fits[d], "r", label="ML fit")
        ax.plot(X, y, "bo", mfc="none", ms=4)
        ax.set_ylim(-3, 3)
        ax.set_title(f"M = {d}" + (" (Fig. 1.19)" if d == 4 else ""))
    axes[0].legend(loc="lower left", fontsize=7)
    rows_a = np.array(rows, dtype=float)
    axes[-1].plot(degrees, rows_a[:, 1], "bo-", ms=3, label="training")
    axes[-1].plot(degrees, rows_a[:, 3], "ro-", ms=3, label="test")
    axes[-1].set_ylim(0, 2)
    axes[-1].set_xlabel("degree M")
    axes[-1].set_ylabel("RMSE")
    axes[-1].legend()
    best = int(np.argmin(rows_a[:, 3]))
    _fill_labels(fig, "x", "y")
    ctx.figure(
        fig,
        f"ML polynomial fits of the Imperial data and RMSE against the degree (best test "
        f"RMSE at M = {best} for this draw). The training RMSE decreases monotonically to 0 "
        "at M = 19.",
    )
    ctx.table(
        ["degree M", "train RMSE (ours)", "train RMSE (sklearn)", "test RMSE (ours)",
         "test RMSE (sklearn)"],
        rows,
        "Same design (monomials of x/5) for both libraries. At M = 19 the fit interpolates the "
        "20 points: our training RMSE is near 0 (the design's condition number limits it), "
        "scikit-learn's stalls where its solver loses accuracy on the high degrees.",
    )  # fmt: skip


@experiment(
    "imperial-noise-free-fit",
    title="Noise-free data: the degree-19 fit does not overfit",
    section="Regression",
    description=(
        "The same generator with noise 0: y = -sin(x/5) + cos(x) exactly. Now the ML fit of "
        "degree 19 interpolates points that lie on the smooth function, and the test error "
        "falls towards 0 as the degree grows instead of rising. Notice that overfitting in the "
        "previous experiment came from the noise, not from the degree itself; between the "
        "20 training inputs a degree-19 interpolant can still swing where the inputs leave "
        "gaps (the notes' Fig. 1.22 shows the same)."
    ),
    source=f"{_IMPERIAL} §1.5.2 (Fig. 1.22)",
)
def imperial_noise_free_fit(ctx):
    import matplotlib.pyplot as plt

    X, y, Xt, yt = _imperial_data(ctx, noise=0.0)
    degrees = list(range(20))
    rows, fits = _degree_sweep(X, y, Xt, yt, degrees)
    rows_a = np.array(rows, dtype=float)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    axes[0].plot(_GRID, _truth(_GRID), "g", lw=1, label="truth")
    axes[0].plot(_GRID, fits[19], "r--", label="ML fit, M = 19")
    axes[0].plot(X, y, "bo", mfc="none", ms=4)
    axes[0].set_ylim(-3, 3)
    axes[0].legend(loc="lower left", fontsize=7)
    axes[1].semilogy(degrees, np.maximum(rows_a[:, 1], 1e-16), "bo-", ms=3, label="training")
    axes[1].semilogy(degrees, np.maximum(rows_a[:, 3], 1e-16), "ro-", ms=3, label="test")
    axes[1].set_xlabel("degree M")
    axes[1].set_ylabel("RMSE (log scale)")
    axes[1].legend()
    _fill_labels(fig, "x", "y")
    ctx.figure(fig, "Noise-free data: the degree-19 ML fit and the RMSE against the degree.")
    ctx.table(
        ["degree M", "train RMSE (ours)", "train RMSE (sklearn)", "test RMSE (ours)",
         "test RMSE (sklearn)"],
        [rows[d] for d in (4, 6, 9, 12, 16, 19)],
        "Without noise the test RMSE keeps falling with the degree (up to the gaps between "
        "the random training inputs).",
    )  # fmt: skip


def _map_vs_ml(X, y, Xt, yt, degree, lam):
    basis = PolynomialBasis(degree=degree)
    Phi, Phit = basis.fit_transform(X), basis.transform(Xt)
    ml = LinearRegression(fit_intercept=False).fit(Phi, y)
    mp = Ridge(alpha=lam, fit_intercept=False).fit(Phi, y)
    return basis, ml, mp, _rmse(ml.predict(Phit), yt), _rmse(mp.predict(Phit), yt)


@experiment(
    "imperial-map-vs-ml",
    title="MAP against ML at degrees 6 and 14 (prior N(0, 0.1^2 I), sigma = 0.2)",
    section="Regression",
    description=(
        "The Imperial data, raw monomials, the prior p(theta) = N(0, 0.1^2 I) and noise "
        "sigma = 0.2: theta_MAP minimises ||y - Phi theta||^2 + (sigma^2 / 0.1^2) "
        "||theta||^2, a ridge with lambda = 4 (eq. 1.180). At degree 6 the prior barely moves "
        "the fit; at degree 14 it keeps the polynomial smoother between the data. The table "
        "repeats the comparison over 20 draws of the data: MAP only pushes the boundary of "
        "overfitting back, it does not remove it. scikit-learn's Ridge on the same design "
        "gives the same test RMSE."
    ),
    source=f"{_IMPERIAL} §1.5.4, eq. 1.174-1.180 (Fig. 1.23)",
)
def imperial_map_vs_ml(ctx):
    import matplotlib.pyplot as plt
    from sklearn.linear_model import Ridge as SkRidge

    lam = 0.2**2 / 0.1**2
    X, y, Xt, yt = _imperial_data(ctx)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.4))
    rows = []
    for ax, degree in zip(axes, (6, 14), strict=True):
        basis, ml, mp, e_ml, e_map = _map_vs_ml(X, y, Xt, yt, degree, lam)
        G = basis.transform(_GRID)
        ref = SkRidge(alpha=lam, fit_intercept=False, solver="svd").fit(basis.transform(X), y)
        rows.append([degree, e_ml, e_map, _rmse(ref.predict(basis.transform(Xt)), yt)])
        ax.plot(_GRID, _truth(_GRID), "g", lw=1, label="truth")
        ax.plot(_GRID, ml.predict(G), "r--", label="ML")
        ax.plot(_GRID, mp.predict(G), "b", label="MAP")
        ax.plot(X, y, "ko", mfc="none", ms=4)
        ax.set_ylim(-3, 3)
        ax.set_title(f"degree {degree}")
    axes[0].legend(loc="lower left", fontsize=7)
    _fill_labels(fig, "x", "y")
    ctx.figure(fig, "ML (dashed) and MAP (solid) polynomials of degree 6 and 14.")
    ctx.table(
        ["degree", "test RMSE ML (ours)", "test RMSE MAP (ours)", "test RMSE MAP (sklearn)"],
        rows,
        "This draw of the data. MAP = ridge with lambda = sigma^2 / s^2 = 4 on raw monomials.",
    )
    wins, med_ml, med_map = {}, {}, {}
    for degree in (6, 14):
        e = []
        for _ in range(20):
            Xs, ys, Xts, yts = _imperial_data(ctx)
            e.append(_map_vs_ml(Xs, ys, Xts, yts, degree, lam)[3:])
        e = np.array(e)
        wins[degree] = int(np.sum(e[:, 1] < e[:, 0]))
        med_ml[degree], med_map[degree] = np.median(e, axis=0)
    ctx.table(
        ["degree", "draws where MAP beats ML (of 20)", "median test RMSE ML",
         "median test RMSE MAP"],
        [[d, wins[d], med_ml[d], med_map[d]] for d in (6, 14)],
        "Twenty fresh draws of the training and test sets. Notice the large median ML error "
        "at degree 14 and how much of it the prior removes.",
    )  # fmt: skip


@experiment(
    "imperial-blr-posterior",
    title="Bayesian linear regression on the Imperial data: 95% bands and posterior samples",
    section="Regression",
    description=(
        "Polynomials of degree 4, 6 and 10 with the prior theta ~ N(0, 0.1^2 I) (a general "
        "prior_covariance S0) and noise sigma = 0.2. Left: the ML fit, the posterior mean "
        "(which is the MAP estimate), the 95% predictive band of a noisy target "
        "(+-1.96 sqrt(phi^T S_N phi + sigma^2)) and the narrower band of the noise-free "
        "function. Right: functions drawn from the posterior, theta_i ~ N(m_N, S_N). Notice "
        "that the band widens towards the ends of the data and with the degree, and that the "
        "samples agree at degree 4 but spread at degree 10. The table checks the posterior "
        "against the closed form m_N = S_N Phi^T y / sigma^2, S_N^-1 = S0^-1 + Phi^T Phi / "
        "sigma^2 computed directly."
    ),
    source=f"{_IMPERIAL} §1.8.2-1.8.3, eq. 1.245-1.249 (Fig. 1.30)",
)
def imperial_blr_posterior(ctx):
    import matplotlib.pyplot as plt

    X, y, _, _ = _imperial_data(ctx)
    sigma, s0 = 0.2, 0.1
    fig, axes = plt.subplots(3, 2, figsize=(11, 9), sharex=True)
    rows = []
    for (ax_l, ax_r), degree in zip(axes, (4, 6, 10), strict=True):
        basis = PolynomialBasis(degree=degree)
        Phi, G = basis.fit_transform(X), basis.transform(_GRID)
        m = Phi.shape[1]
        blr = BayesianLinearRegression(
            fit_intercept=False,
            noise_precision=1.0 / sigma**2,
            prior_covariance=s0**2 * np.eye(m),
        ).fit(Phi, y)
        ml = LinearRegression(fit_intercept=False).fit(Phi, y)
        mean, std = blr.predict(G, return_std=True)
        latent = blr.predict(G, return_std=True, noisy=False)[1]
        # Closed form (small, well-scaled system): S_N^-1 = S0^-1 + Phi^T Phi / sigma^2.
        prec = np.eye(m) / s0**2 + Phi.T @ Phi / sigma**2
        m_n = np.linalg.solve(prec, Phi.T @ y / sigma**2)
        ridge = Ridge(alpha=sigma**2 / s0**2, fit_intercept=False).fit(Phi, y)
        scale = np.max(np.abs(m_n))
        rows.append(
            [
                degree,
                float(np.max(np.abs(blr.coef_ - m_n)) / scale),
                float(np.max(np.abs(blr.coef_ - ridge.coef_)) / scale),
                float(np.max(np.abs(std**2 - latent**2 - sigma**2))),
            ]
        )
        ax_l.fill_between(_GRID[:, 0], mean - 1.96 * std, mean + 1.96 * std, color="C0",
                          alpha=0.2, label="95% band (noisy y)")  # fmt: skip
        ax_l.fill_between(_GRID[:, 0], mean - 1.96 * latent, mean + 1.96 * latent, color="C0",
                          alpha=0.35, label="95% band (f)")  # fmt: skip
        ax_l.plot(_GRID, mean, "b", label="posterior mean = MAP")
        ax_l.plot(_GRID, ml.predict(G), "r--", lw=1, label="ML")
        ax_l.plot(X, y, "ko", mfc="none", ms=4)
        ax_l.set_ylim(-3, 3)
        ax_l.set_ylabel(f"degree {degree}")
        samples = blr.sample_y(G, n_samples=10, random_state=ctx.rng)
        ax_r.plot(_GRID, samples, lw=0.8)
        ax_r.plot(X, y, "ko", mfc="none", ms=4)
        ax_r.set_ylim(-3, 3)
    axes[0, 0].legend(loc="lower left", fontsize=7)
    axes[0, 1].set_title("ten functions from the posterior")
    _fill_labels(fig, "x", "y")
    ctx.figure(fig, "Posterior over polynomials of degree 4, 6 and 10 (rows).")
    ctx.table(
        ["degree", "|m_N - closed form| / |m_N|", "|m_N - theta_MAP (Ridge)| / |m_N|",
         "|noisy var - latent var - sigma^2|"],
        rows,
        "The posterior mean equals the closed form and the ridge (MAP) solution with lambda = "
        "sigma^2 / s0^2 (to the accuracy of the directly solved normal equations, whose "
        "condition number grows with the degree), and the two predictive variances differ by "
        "sigma^2.",
    )  # fmt: skip


@experiment(
    "stuttgart-linear-data",
    title="Linear regression on linear data (with the classical standard errors)",
    section="Regression",
    description=(
        "The first demonstration of the Stuttgart course: 40 points from y = 1 + 2 x + noise "
        "of standard deviation 0.5, x ~ U[-3, 3], and the least-squares line beta = (X^T "
        "X)^-1 X^T y with the 95% band of the estimated line (+-1.96 standard errors of "
        "x^T beta). Notice that the true line lies inside the band and that the coefficient "
        "standard errors match statsmodels' (when installed) and the sample spread of the "
        "estimates over 200 fresh data sets."
    ),
    source=f"{_STUTTGART} slides 2:3-2:5 and 2:12-2:13",
)
def stuttgart_linear_data(ctx):
    import matplotlib.pyplot as plt
    from sklearn.linear_model import LinearRegression as SkLinearRegression

    def draw(n=40):
        x = ctx.rng.uniform(-3, 3, n)
        return x[:, None], 1.0 + 2.0 * x + 0.5 * ctx.rng.standard_normal(n)

    X, y = draw()
    ours = LinearRegression().fit(X, y)
    ref = SkLinearRegression().fit(X, y)
    g = np.linspace(-3, 3, 100)[:, None]
    A = np.hstack([np.ones((40, 1)), X])
    s2 = np.sum((y - ours.predict(X)) ** 2) / (40 - 2)
    C = s2 * np.linalg.inv(A.T @ A)
    Ag = np.hstack([np.ones((100, 1)), g])
    band = 1.96 * np.sqrt(np.einsum("ij,jk,ik->i", Ag, C, Ag))
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.plot(X, y, "ko", mfc="none", ms=4)
    ax.plot(g, 1 + 2 * g, "g", lw=1, label="truth 1 + 2x")
    ax.plot(g, ours.predict(g), "r", label="least squares")
    ax.fill_between(g[:, 0], ours.predict(g) - band, ours.predict(g) + band, color="r",
                    alpha=0.2, label="95% band of the line")  # fmt: skip
    ax.legend(fontsize=7)
    _fill_labels(fig, "x", "y")
    ctx.figure(fig, "Least-squares line and its 95% confidence band.")
    est = np.array([LinearRegression().fit(*draw()).coef_[0] for _ in range(200)])
    se_sm = float("nan")
    try:
        import statsmodels.api as sm

        se_sm = float(sm.OLS(y, sm.add_constant(X)).fit().bse[1])
    except ImportError:
        pass
    ctx.table(
        ["quantity", "ours", "peer"],
        [
            ["slope", float(ours.coef_[0]), float(ref.coef_[0])],
            ["intercept", ours.intercept_, float(ref.intercept_)],
            ["slope standard error", float(ours.coef_std_error_[0]), se_sm],
            ["slope SD over 200 data sets", float(np.std(est, ddof=1)),
             float(np.sqrt(0.25 / (40 * 3.0)))],
        ],
        "Peer: scikit-learn for the coefficients, statsmodels for the standard error (nan when "
        "not installed); for the sample spread the population value sigma / sqrt(N Var(x)) "
        "with Var(x) = 3 for U[-3, 3].",
    )  # fmt: skip


def _lq_norm(B, q):
    """``||beta||_q = (sum_j |beta_j|^q)^(1/q)`` over the last axis (``q = inf``: the max)."""
    A = np.abs(B)
    if np.isinf(q):
        return A.max(axis=-1)
    return np.sum(A**q, axis=-1) ** (1.0 / q)


def _constrained_on_ball(Q, c, q, t, n=20000):
    """``argmin 1/2 b^T Q b - c^T b`` on the sphere ``||b||_q = t`` in 2-D, by dense search."""
    phi = np.linspace(0.0, 2 * np.pi, n, endpoint=False)
    U = np.column_stack([np.cos(phi), np.sin(phi)])
    B = t * U / _lq_norm(U, q)[:, None]
    f = 0.5 * np.einsum("ij,jk,ik->i", B, Q, B) - B @ c
    return B[int(np.argmin(f))]


@experiment(
    "lq-balls-lasso-ridge",
    title="L^q unit balls, and why the lasso is sparse and ridge is not",
    section="Regression",
    description=(
        "Left: the unit balls ||beta||_q = 1 for q = 0.5, 1, 2, 4 and infinity; for q <= 1 "
        "they have corners on the axes (for q < 1 the penalty is not convex). Right: the "
        "contours of the squared error of a two-feature problem, and the constrained minimisers "
        "on the L1 ball and the L2 ball of the radii reached by our Lasso and Ridge at one "
        "penalty each. Notice that the loss contours first touch the L1 ball at a corner, a "
        "sparse solution, and the L2 ball at a point with both coefficients non-zero. The "
        "table checks the penalised fits (ours and scikit-learn's) against a dense search "
        "over the ball of the same radius (the constrained-penalised equivalence)."
    ),
    source=f"{_STUTTGART} slides 2:19-2:21 (and the dual forms, slides 2:24-2:25)",
)
def lq_balls_lasso_ridge(ctx):
    import matplotlib.pyplot as plt
    from sklearn.linear_model import Lasso as SkLasso
    from sklearn.linear_model import Ridge as SkRidge

    rng = ctx.rng
    n = 50
    Z = rng.standard_normal((n, 2)) @ np.array([[1.0, 0.0], [0.6, 0.5]])
    y = Z @ np.array([2.0, 0.7]) + 0.3 * rng.standard_normal(n)
    Z = Z - Z.mean(0)
    y = y - y.mean()
    Q, c = Z.T @ Z, Z.T @ y
    b_ols = np.linalg.solve(Q, c)
    fig, axes = plt.subplots(1, 2, figsize=(11, 5))
    phi = np.linspace(0, 2 * np.pi, 400)
    U = np.column_stack([np.cos(phi), np.sin(phi)])
    for q, style in ((0.5, "m"), (1, "b"), (2, "g"), (4, "c"), (np.inf, "k")):
        B = U / _lq_norm(U, q)[:, None]
        axes[0].plot(B[:, 0], B[:, 1], style, label=f"q = {q}")
    axes[0].set_aspect("equal")
    axes[0].legend(fontsize=7)
    axes[0].set_title("unit balls ||beta||_q = 1")
    lam = 0.5 * float(np.abs(c).max())
    # Our Lasso minimises (1/(2n)) ||y - Z b||^2 + alpha ||b||_1, scikit-learn's objective.
    lasso = Lasso(alpha=lam / n, fit_intercept=False).fit(Z, y)
    sk_lasso = SkLasso(alpha=lam / n, fit_intercept=False).fit(Z, y)
    ridge = Ridge(alpha=lam, fit_intercept=False).fit(Z, y)
    sk_ridge = SkRidge(alpha=lam, fit_intercept=False).fit(Z, y)
    rows = []
    for name, ours, peer, q in (("lasso", lasso, sk_lasso, 1), ("ridge", ridge, sk_ridge, 2)):
        t = float(_lq_norm(ours.coef_, q))
        brute = _constrained_on_ball(Q, c, q, t)
        rows.append([name, t, *ours.coef_, *peer.coef_, float(np.max(np.abs(brute - ours.coef_)))])
    g = np.linspace(-0.5, 1.5 * max(abs(b_ols).max(), 1.0), 200)
    G1, G2 = np.meshgrid(g, g)
    Bg = np.stack([G1, G2], axis=-1)
    F = 0.5 * np.einsum("...i,ij,...j->...", Bg, Q, Bg) - Bg @ c
    axes[1].contour(G1, G2, F, levels=15, colors="0.6", linewidths=0.7)
    for (name, t, b1, b2, *_), q, col in zip(rows, (1, 2), ("b", "g"), strict=True):
        B = t * U / _lq_norm(U, q)[:, None]
        axes[1].plot(B[:, 0], B[:, 1], col, label=f"{name}: ||beta||_{q} = {t:.2f}")
        axes[1].plot(b1, b2, col + "o")
    axes[1].plot(*b_ols, "r*", ms=10, label="least squares")
    axes[1].axhline(0, color="k", lw=0.5)
    axes[1].axvline(0, color="k", lw=0.5)
    axes[1].set_aspect("equal")
    axes[1].legend(fontsize=7, loc="lower right")
    _fill_labels(fig, "beta_1", "beta_2")
    ctx.figure(fig, "L^q balls (left); the lasso's and ridge's constrained minimisers (right).")
    ctx.table(
        ["penalty", "radius t", "beta_1 (ours)", "beta_2 (ours)", "beta_1 (sklearn)",
         "beta_2 (sklearn)", "max |dense search on the ball - ours|"],
        rows,
        "The penalised solution is the constrained one on the ball of its own radius; the "
        "dense search over 20000 points of the ball boundary is accurate to about 3e-4 t. The "
        "lasso's beta_2 is exactly 0.",
    )  # fmt: skip


@experiment(
    "isomap-swiss-roll",
    title="ISOMAP unrolls the swiss roll",
    section="Feature extraction",
    description=(
        "800 points of a swiss roll in 3-D. Geodesic distances along a 10-nearest-neighbour "
        "graph, then classical MDS, give a 2-D embedding whose first coordinate follows the "
        "position along the roll (colour); linear PCA of the same points folds the roll onto "
        "itself. The table gives the rank correlation of the embedding's first coordinate with "
        "the position along the roll, for our Isomap and scikit-learn's."
    ),
    source=f"{_STUTTGART} slide 6:29 (ISOMAP, after Tenenbaum et al.)",
)
def isomap_swiss_roll(ctx):
    import matplotlib.pyplot as plt
    from scipy.stats import spearmanr
    from sklearn.datasets import make_swiss_roll
    from sklearn.manifold import Isomap as SkIsomap

    from mathlearn.decomposition import PCA
    from mathlearn.manifold import Isomap

    seed = int(ctx.rng.integers(2**31))
    X, t = make_swiss_roll(800, noise=0.05, random_state=seed)
    ours = Isomap(n_neighbors=10, n_components=2).fit_transform(X)
    ref = SkIsomap(n_neighbors=10, n_components=2).fit_transform(X)
    lin = PCA(n_components=2).fit_transform(X)
    fig = plt.figure(figsize=(15, 4))
    ax = fig.add_subplot(1, 3, 1, projection="3d")
    ax.scatter(X[:, 0], X[:, 1], X[:, 2], c=t, s=5, cmap="viridis")
    ax.set_title("swiss roll")
    for k, (Y, title) in enumerate(((ours, "Isomap (ours)"), (lin, "PCA")), start=2):
        a = fig.add_subplot(1, 3, k)
        a.scatter(Y[:, 0], Y[:, 1], c=t, s=5, cmap="viridis")
        a.set_title(title)
    _fill_labels(fig, "embedding coordinate 1", "embedding coordinate 2")
    ctx.figure(fig, "The roll (colour = position along it), its Isomap embedding and its PCA.")
    rho = [abs(spearmanr(Y[:, 0], t)[0]) for Y in (ours, ref, lin)]
    ctx.table(
        ["embedding", "|Spearman correlation| of coordinate 1 with the roll position"],
        [["Isomap (ours)", rho[0]], ["Isomap (sklearn)", rho[1]], ["PCA (ours)", rho[2]]],
        "Isomap recovers the position along the roll (close to 1); PCA mixes the turns.",
    )


@experiment(
    "nmf-parts-digits",
    title="NMF learns parts, PCA learns global patterns (digits)",
    section="Feature extraction",
    description=(
        "Non-negative matrix factorisation X ~ W H with W, H >= 0 (multiplicative updates) on "
        "the 8x8 digit images bundled with scikit-learn, against PCA with the same number of "
        "components. Notice that the NMF components are localised strokes that add up, while "
        "the PCA components are signed, global patterns. The notes show this on face images, "
        "which cannot be bundled here; the digits show the same contrast. The table compares "
        "the reconstruction errors with scikit-learn's NMF (same initialisation scheme, "
        "different local optimum)."
    ),
    source=f"{_STUTTGART} slides 6:31-6:33 (NMF, after Lee & Seung)",
)
def nmf_parts_digits(ctx):
    import matplotlib.pyplot as plt
    from sklearn.datasets import load_digits
    from sklearn.decomposition import NMF as SkNMF

    from mathlearn.decomposition import NMF, PCA

    X = load_digits().data[:600]
    k = 10
    seed = int(ctx.rng.integers(2**31))
    nmf = NMF(n_components=k, init="nndsvda", max_iter=500, tol=1e-3, random_state=seed)
    W = nmf.fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the peer's ConvergenceWarning at max_iter
        sk = SkNMF(n_components=k, init="nndsvda", max_iter=500, tol=1e-3, random_state=seed)
        Wsk = sk.fit_transform(X)
    pca = PCA(n_components=k).fit(X)
    fig, axes = plt.subplots(2, k, figsize=(1.4 * k, 3.2))
    for j in range(k):
        axes[0, j].imshow(nmf.components_[j].reshape(8, 8), cmap="gray_r")
        axes[1, j].imshow(pca.components_[j].reshape(8, 8), cmap="RdBu")
        for a in axes[:, j]:
            a.set_xticks([])
            a.set_yticks([])
    axes[0, 0].set_ylabel("NMF")
    axes[1, 0].set_ylabel("PCA")
    ctx.figure(fig, "Ten NMF components (top, non-negative parts) and ten PCA components.")
    rel = np.linalg.norm(X)
    pca_err = np.linalg.norm(X - pca.inverse_transform(pca.transform(X))) / rel
    ctx.table(
        ["model", "relative reconstruction error ||X - X_hat||_F / ||X||_F"],
        [
            ["NMF (ours)", float(np.linalg.norm(X - W @ nmf.components_) / rel)],
            ["NMF (sklearn)", float(np.linalg.norm(X - Wsk @ sk.components_) / rel)],
            ["PCA (ours)", float(pca_err)],
        ],
        "PCA is the best rank-10 approximation; NMF pays a little for non-negativity.",
    )


def _sparse_quadratic(rng, n, d, nnz=10):
    """Rows ``J_i`` with ``nnz`` random positions of N(0, sigma_i^2), sigma_i in {1, 100}."""
    cols = rng.integers(0, d, (n, nnz))
    vals = rng.standard_normal((n, nnz)) * np.where(rng.random(n) < 0.5, 1.0, 100.0)[:, None]
    return cols, vals


def _sq_error(J, x):
    """``(1 / 2n) sum_i (J_i x)^2 = x^T H x / (2n)``."""
    r = J @ x
    return 0.5 * float(np.sum(r * r)) / r.shape[0]


def _batch_grad(cols, vals, x, idx, d):
    """``(1/K) sum_k J_{i_k}^T (J_{i_k} x)``."""
    c, v = cols[idx], vals[idx]
    r = np.sum(v * x[c], axis=1)
    return np.bincount(c.ravel(), weights=(v * r[:, None]).ravel(), minlength=d) / len(idx)


@experiment(
    "sgd-sparse-quadratic",
    title="SGD on a sparse quadratic: step sizes, cooling, Nesterov and Adam",
    section="Optimisation",
    description=(
        "The exercise's problem: f(x) = x^T H x / (2n) with H = J^T J, d = 1000, each row of "
        "J with 10 random entries of N(0, sigma^2), sigma = 1 or 100 per row (n = 20000 rows "
        "here instead of 1e5, which changes nothing but the run time), x0 = 1, minibatches of "
        "K = 32 rows. Every row's loss is minimised at x = 0, so a stable fixed step converges "
        "to 0 (no noisy stationary distribution); too large a step diverges at once and too "
        "small a step crawls. Exponential cooling, Nesterov momentum and Adam from "
        "mathlearn.optim are run on the same minibatch sequence; PyTorch's SGD, Nesterov SGD "
        "and Adam on that sequence end at the same point (table, when torch is installed)."
    ),
    source=f"{_STUTTGART} exercise 6.3 (bonus SGD), slides 4:16-4:19",
)
def sgd_sparse_quadratic(ctx):
    import matplotlib.pyplot as plt
    from scipy.sparse import csr_matrix

    from mathlearn import optim

    rng = ctx.rng
    n, d, K, T, every = 20000, 1000, 32, 1000, 25
    cols, vals = _sparse_quadratic(rng, n, d)
    J = csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, cols.size + 1, cols.shape[1])))
    batches = rng.integers(0, n, (T, K))
    runs = {
        "SGD eta = 1e-3": optim.sgd(1e-3),
        "SGD eta = 3e-4": optim.sgd(3e-4),
        "SGD eta = 1e-4": optim.sgd(1e-4),
        "SGD eta = 1e-5": optim.sgd(1e-5),
        "SGD, cooling 3e-4 * 0.998^t": optim.sgd(optim.exponential_decay(3e-4, 0.998)),
        "Nesterov eta = 2e-5, 0.9": optim.nesterov(2e-5, 0.9),
        "Adam lr = 1e-2": optim.adam(1e-2),
    }
    curves, finals, xs = {}, {}, {}
    for name, opt in runs.items():
        x = np.ones(d)
        state = opt.init(x)
        hist = [_sq_error(J, x)]
        for t in range(T):
            g = _batch_grad(cols, vals, x, batches[t], d)
            upd, state = opt.update(g, state, x)
            x = optim.apply_updates(x, upd)
            if (t + 1) % every == 0:
                err = _sq_error(J, x) if np.all(np.isfinite(x)) else np.inf
                hist.append(err)
                if not err < 1e12:
                    break
        curves[name], finals[name], xs[name] = hist, hist[-1], x
    fig, ax = plt.subplots(figsize=(8, 4))
    for name, hist in curves.items():
        h = np.asarray(hist)
        ok = np.isfinite(h) & (h < 1e12)
        ax.semilogy(every * np.arange(len(h))[ok], np.maximum(h[ok], 1e-300), label=name)
    ax.set_xlabel("iteration")
    ax.set_ylabel("full error x^T H x / (2n)")
    ax.set_ylim(1e-14, 1e8)
    ax.legend(fontsize=7)
    ctx.figure(fig, "Learning curves (full error every 25 iterations); a curve that stops "
                    "early diverged.")  # fmt: skip
    peer = {}
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        for name, make in (
            ("SGD eta = 3e-4", lambda p: torch.optim.SGD([p], lr=3e-4)),
            ("Nesterov eta = 2e-5, 0.9",
             lambda p: torch.optim.SGD([p], lr=2e-5, momentum=0.9, nesterov=True)),
            ("Adam lr = 1e-2", lambda p: torch.optim.Adam([p], lr=1e-2)),
        ):  # fmt: skip
            p = torch.ones(d, dtype=torch.float64, requires_grad=False)
            opt = make(p)
            for t in range(T):
                g = _batch_grad(cols, vals, p.numpy(), batches[t], d)
                p.grad = torch.from_numpy(g)
                opt.step()
            peer[name] = (
                _sq_error(J, p.numpy()),
                float(np.max(np.abs(p.numpy() - xs[name]))),
            )
    e0 = curves["SGD eta = 3e-4"][0]
    rows = [["initial error (measured; expected 10 (1 + 1e4) / 4 = 25002.5)", e0, "", ""]]
    for name in runs:
        f = finals[name]
        pe = peer.get(name, (float("nan"), float("nan")))
        rows.append([name, f if f < 1e12 else "diverged", *pe])
    ctx.table(
        ["run", "final full error (ours)", "final full error (torch)",
         "max |x_ours - x_torch|"],
        rows,
        f"After {T} minibatches of K = {K}. A row with sigma = 100 has squared norm about "
        "1e5; inside a minibatch it contributes a step of curvature eta 1e5 / K along itself: "
        "2.9 for eta = 1e-3 (above 2, the iterates blow up), 0.9 for eta = 3e-4 (stable and "
        "fast); smaller steps are stable but slow, as the exercise finds. The torch columns "
        "are filled for the runs repeated with torch.optim on the same minibatches.",
    )  # fmt: skip


@experiment(
    "blr-sequential-weight-space",
    title="Sequential Bayesian learning of a straight line, in weight space",
    section="Regression",
    description=(
        "PRML's Fig. 3.7: targets from f(x) = -0.3 + 0.5 x with noise sd 0.2 (beta = 25), "
        "prior w ~ N(0, I / 2) (alpha = 2), x ~ U(-1, 1). Rows: before any data, after 1, 2 "
        "and 20 points. Columns: the likelihood of the latest point as a function of (w0, w1), "
        "the posterior (the prior in the first row), and six lines drawn from it with the data "
        "seen. Notice that each likelihood is a ridge (one point constrains one combination "
        "of w0 and w1), that multiplying it in narrows the posterior, and that after 20 points "
        "the posterior is concentrated near the true (-0.3, 0.5) (white cross). The posterior "
        "comes from BayesianLinearRegression.partial_fit, one point at a time, and equals the "
        "batch fit and the closed form (table)."
    ),
    source="PRML §3.3.1 (Fig. 3.7), eq. 3.49-3.51",
)
def blr_sequential_weight_space(ctx):
    import matplotlib.pyplot as plt
    from scipy.stats import multivariate_normal

    rng = ctx.rng
    alpha, beta, w_true = 2.0, 25.0, np.array([-0.3, 0.5])
    x = rng.uniform(-1, 1, 20)
    Phi = np.column_stack([np.ones(20), x])
    t = Phi @ w_true + rng.standard_normal(20) / np.sqrt(beta)
    g = np.linspace(-1, 1, 120)
    W0, W1 = np.meshgrid(g, g)
    grid = np.stack([W0, W1], axis=-1)
    model = BayesianLinearRegression(
        fit_intercept=False, prior_precision=alpha, noise_precision=beta
    )
    fig, axes = plt.subplots(4, 3, figsize=(10, 12))
    seen = 0
    for row, upto in enumerate((0, 1, 2, 20)):
        if upto > seen:
            for i in range(seen, upto):
                model.partial_fit(Phi[i : i + 1], t[i : i + 1])
            seen = upto
        ax_l, ax_p, ax_d = axes[row]
        if upto == 0:
            mean, cov = np.zeros(2), np.eye(2) / alpha
            ax_l.axis("off")
        else:
            mean, cov = model.coef_, model.coef_cov_
            phi = Phi[upto - 1]
            like = np.exp(-0.5 * beta * (t[upto - 1] - grid @ phi) ** 2)
            ax_l.contourf(W0, W1, like, levels=20, cmap="jet")
            ax_l.plot(*w_true, "w+", ms=12, mew=2)
            ax_l.set_title(f"likelihood of point {upto}", fontsize=9)
        ax_p.contourf(W0, W1, multivariate_normal(mean, cov).pdf(grid), levels=20, cmap="jet")
        ax_p.plot(*w_true, "w+", ms=12, mew=2)
        ax_p.set_title("prior" if upto == 0 else f"posterior after {upto}", fontsize=9)
        for w in rng.multivariate_normal(mean, cov, 6):
            ax_d.plot(g, w[0] + w[1] * g, "r", lw=0.8)
        ax_d.plot(x[:upto], t[:upto], "bo", mfc="none")
        ax_d.set_xlim(-1, 1)
        ax_d.set_ylim(-1, 1)
        ax_d.set_title("data space", fontsize=9)
    _fill_labels(fig, "w_0", "w_1", [("data space", ("x", "y"))])
    ctx.figure(fig, "Likelihood (left), prior/posterior (middle) and sampled lines (right).")
    batch = BayesianLinearRegression(
        fit_intercept=False, prior_precision=alpha, noise_precision=beta
    ).fit(Phi, t)
    S_inv = alpha * np.eye(2) + beta * Phi.T @ Phi
    m_closed = np.linalg.solve(S_inv, beta * Phi.T @ t)
    ctx.table(
        ["quantity", "w0", "w1"],
        [
            ["truth", *w_true],
            ["posterior mean, sequential (ours)", *model.coef_],
            ["posterior mean, batch (ours)", *batch.coef_],
            ["closed form m_N = beta S_N Phi^T t", *m_closed],
            ["posterior sd, sequential", *np.sqrt(np.diag(model.coef_cov_))],
        ],
        "After 20 points the sequential and batch posteriors and the closed form agree to "
        "rounding.",
    )


@experiment(
    "loss-parabola",
    title="The loss of f(x) = a x as a function of a: a parabola with one minimum",
    section="Regression",
    description=(
        "Twenty points y = 1.5 x + noise, the model f(x) = a x and the mean squared loss L(a) = "
        "(1/N) sum (y_n - a x_n)^2, a parabola in a. Its minimum a* = sum x y / sum x^2 is "
        "where the derivative dL/da = -(2/N) sum x (y - a x) vanishes; the table gives a* from "
        "the formula, from our LinearRegression and from scikit-learn's, and the central "
        "finite difference of L at a*, which is zero to rounding."
    ),
    source="Imperial 'Mathematics for Machine Learning' lectures 1.1-1.2",
)
def loss_parabola(ctx):
    import matplotlib.pyplot as plt
    from sklearn.linear_model import LinearRegression as SkLinearRegression

    x = ctx.rng.uniform(-2, 2, 20)
    y = 1.5 * x + 0.5 * ctx.rng.standard_normal(20)
    a_grid = np.linspace(-1, 4, 300)
    L = np.mean((y[None, :] - a_grid[:, None] * x[None, :]) ** 2, axis=1)
    a_star = float(x @ y / (x @ x))
    ours = float(LinearRegression(fit_intercept=False).fit(x[:, None], y).coef_[0])
    ref = float(SkLinearRegression(fit_intercept=False).fit(x[:, None], y).coef_[0])

    def loss(a):
        return float(np.mean((y - a * x) ** 2))

    h = 1e-5
    fd = (loss(ours + h) - loss(ours - h)) / (2 * h)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    axes[0].plot(x, y, "bo", mfc="none")
    axes[0].plot([-2, 2], [-2 * ours, 2 * ours], "r", label=f"f(x) = {ours:.3f} x")
    axes[0].legend(fontsize=8)
    axes[1].plot(a_grid, L, "k")
    axes[1].plot(ours, loss(ours), "ro", label="minimum a*")
    axes[1].set_xlabel("a")
    axes[1].set_ylabel("L(a)")
    axes[1].legend(fontsize=8)
    _fill_labels(fig, "x", "y")
    ctx.figure(fig, "The data with the best line (left) and the loss against a (right).")
    ctx.table(
        ["a* (formula)", "a* (ours)", "a* (sklearn)", "dL/da at a* (finite difference)"],
        [[a_star, ours, ref, fd]],
        "The finite difference has error of order h^2 L''' (zero here: L is quadratic) plus "
        "rounding of order eps L / h, about 1e-11.",
    )


@experiment(
    "test-loss-estimator",
    title="The test-loss estimator: its variance, cross-validation, and reusing the test set",
    section="Regression",
    description=(
        "Three facts about estimating the generalisation loss, on the Imperial sin/cos data "
        "(N = 20) with polynomial models. (1) For a fixed fitted model the test-set mean "
        "loss is unbiased and its variance falls as 1/N_test: the spread over 200 test sets "
        "of each size against the standard error that loss_estimate reports from one test "
        "set. (2) 5-fold cross-validation over the degree (cross_validation_path) with the "
        "mean fold loss and its standard error. (3) Choosing the degree by the smallest "
        "test loss and reporting that same test loss is optimistic: over 40 repetitions the "
        "reported loss is below the loss of the chosen model on fresh data."
    ),
    source="Imperial 'Mathematics for Machine Learning' lecture 4",
)
def test_loss_estimator(ctx):
    import matplotlib.pyplot as plt
    from sklearn.pipeline import make_pipeline

    from mathlearn.model_selection import cross_validation_path, loss_estimate

    rng = ctx.rng

    def draw(n):
        X, y = make_sinusoidal_imperial(n, random_state=rng)
        return X / 5.0, y

    def poly(degree):
        return make_pipeline(PolynomialBasis(degree=degree), LinearRegression(fit_intercept=False))

    X, y = draw(20)
    model = poly(4).fit(X, y)
    big_X, big_y = draw(50000)
    true_loss = float(np.mean((model.predict(big_X) - big_y) ** 2))
    sizes = [10, 30, 100, 300]
    spread, reported = [], []
    for m in sizes:
        # 200 test sets of size m, drawn and predicted in one batch.
        Xt, yt = draw(200 * m)
        means = np.mean(((model.predict(Xt) - yt) ** 2).reshape(200, m), axis=1)
        spread.append(float(np.std(means, ddof=1)))
        reported.append(loss_estimate(model, *draw(m)).std_error)
    degrees = list(range(0, 10))
    path = cross_validation_path(
        poly(1), "polynomialbasis__degree", degrees, X, y, cv=5, random_state=rng
    )
    reuse, fresh = [], []
    basis = PolynomialBasis(degree=8).fit(X)
    for _ in range(40):
        Xr, yr = draw(20)
        Xv, yv = draw(20)
        Xf, yf = draw(2000)
        Pr, Pv, Pf = basis.transform(Xr), basis.transform(Xv), basis.transform(Xf)
        # Monomial columns are nested: degree d uses the first d + 1 of them.
        fits = [LinearRegression(fit_intercept=False).fit(Pr[:, : d + 1], yr) for d in range(1, 9)]
        losses = [_rmse(f.predict(Pv[:, : d + 2]), yv) ** 2 for d, f in enumerate(fits)]
        best = int(np.argmin(losses))
        reuse.append(losses[best])
        fresh.append(_rmse(fits[best].predict(Pf[:, : best + 2]), yf) ** 2)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    axes[0].loglog(sizes, spread, "bo-", label="sd of the test loss over 200 test sets")
    axes[0].loglog(sizes, reported, "r^--", label="standard error from one test set")
    axes[0].set_xlabel("N_test")
    axes[0].legend(fontsize=7)
    axes[1].errorbar(degrees, path.means, yerr=path.std_errors, fmt="o-", capsize=3)
    axes[1].set_yscale("log")
    axes[1].set_xlabel("degree")
    axes[1].set_ylabel("5-fold CV loss")
    axes[1].set_title(f"CV chooses degree {path.best_value}", fontsize=9)
    _fill_labels(fig, "N_test", "test loss spread")
    ctx.figure(
        fig,
        "Spread of the test loss against N_test (left, slope -1/2 on log-log axes); 5-fold CV "
        "loss with standard errors against the degree (right).",
    )
    ctx.table(
        ["N_test", "sd over 200 test sets", "std_error (one test set)"],
        [[m, s, r] for m, s, r in zip(sizes, spread, reported, strict=True)],
        f"The degree-4 model's generalisation loss is {true_loss:.4f} (50000 fresh points); "
        "the test-set estimate scatters around it with sd proportional to 1/sqrt(N_test).",
    )
    ctx.table(
        ["quantity (40 repetitions)", "mean"],
        [
            ["test loss of the degree chosen on that test set (reported)", np.mean(reuse)],
            ["loss of the same model on fresh data (true)", np.mean(fresh)],
        ],
        "Selecting on the test set makes its loss optimistic: use a validation set (or CV) "
        "to choose and keep the test set for one final estimate.",
    )


def _best_time(func, repeat=3):
    import time

    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - t0)
    return best, out


@experiment(
    "blr-prior-posterior-methods",
    title="Bayesian linear regression: prior and posterior functions, and the two ways to "
    "compute the posterior",
    section="Regression",
    description=(
        "Gaussian radial features (12 centres on [-4, 4], width 0.8), prior theta ~ N(0, I), "
        "noise sigma = 0.3, data in two clusters. Left: functions drawn from the prior. "
        "Right: functions drawn from the posterior with the mean, the +-2 sd band of the "
        "latent function (epistemic: it grows away from the data and between the clusters) "
        "and the +-2 sd band of a noisy target (which never shrinks below the aleatoric "
        "floor 2 sigma). The table times the notes' two routes to the posterior mean: method "
        "1 conditions the joint Gaussian of (theta, y), an N x N solve "
        "Phi^T (Phi Phi^T + sigma^2 I)^-1 y; method 2 completes the square, an M x M solve "
        "(Phi^T Phi + sigma^2 I)^-1 Phi^T y. They agree (Woodbury), and the cheaper one is "
        "the one on the smaller side; BayesianLinearRegression gives the same mean."
    ),
    source="Imperial 'Mathematics for Machine Learning' lecture 11",
)
def blr_prior_posterior_methods(ctx):
    import matplotlib.pyplot as plt

    from mathlearn.preprocessing import GaussianBasis
    from mathlearn.utils.linalg import solve_psd

    rng = ctx.rng
    sigma = 0.3
    x = np.concatenate([rng.uniform(-3, -1.5, 8), rng.uniform(0.5, 2, 8)])
    y = np.sin(x) + sigma * rng.standard_normal(16)
    basis = GaussianBasis(centres=np.linspace(-4, 4, 12), width=0.8).fit(x[:, None])
    Phi = basis.transform(x[:, None])
    grid = np.linspace(-5, 5, 200)[:, None]
    G = basis.transform(grid)
    blr = BayesianLinearRegression(
        fit_intercept=False, prior_precision=1.0, noise_precision=1 / sigma**2
    ).fit(Phi, y)
    mean, noisy = blr.predict(G, return_std=True)
    latent = blr.predict(G, return_std=True, noisy=False)[1]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), sharey=True)
    prior = G @ rng.standard_normal((12, 8))
    axes[0].plot(grid, prior, lw=0.8)
    axes[0].set_title("functions from the prior", fontsize=9)
    axes[1].fill_between(grid[:, 0], mean - 2 * noisy, mean + 2 * noisy, color="C0", alpha=0.15,
                         label="+-2 sd, noisy y")  # fmt: skip
    axes[1].fill_between(grid[:, 0], mean - 2 * latent, mean + 2 * latent, color="C0",
                         alpha=0.35, label="+-2 sd, f (epistemic)")  # fmt: skip
    axes[1].plot(grid, blr.sample_y(G, 5, random_state=rng), lw=0.7)
    axes[1].plot(grid, mean, "k", label="posterior mean")
    axes[1].plot(x, y, "ko", mfc="none", ms=4)
    axes[1].legend(fontsize=7, loc="lower left")
    axes[1].set_title("posterior", fontsize=9)
    _fill_labels(fig, "x", "f(x)")
    ctx.figure(fig, "Prior draws (left); posterior draws and bands (right).")
    rows = []
    for n, m in ((60, 600), (600, 60)):
        P = rng.standard_normal((n, m)) / np.sqrt(m)
        t = P @ rng.standard_normal(m) + sigma * rng.standard_normal(n)
        t1, m1 = _best_time(
            lambda P=P, t=t, n=n: P.T @ solve_psd(P @ P.T + sigma**2 * np.eye(n), t)
        )
        t2, m2 = _best_time(
            lambda P=P, t=t, m=m: solve_psd(P.T @ P + sigma**2 * np.eye(m), P.T @ t)
        )
        ours = BayesianLinearRegression(
            fit_intercept=False, prior_precision=1.0, noise_precision=1 / sigma**2
        ).fit(P, t)
        scale = np.max(np.abs(m2))
        rows.append(
            [
                f"N = {n}, M = {m}",
                1e3 * t1,
                1e3 * t2,
                float(np.max(np.abs(m1 - m2)) / scale),
                float(np.max(np.abs(ours.coef_ - m2)) / scale),
            ]
        )
    ctx.table(
        ["problem", "method 1, N x N (ms)", "method 2, M x M (ms)",
         "max |m1 - m2| / max |m2|", "max |BLR - m2| / max |m2|"],
        rows,
        "Times are the best of three on this machine (they vary with the load); the point is "
        "the ratio: O(N^3) against O(M^3), so solve on the smaller side.",
    )  # fmt: skip


@experiment(
    "imperial-information-criteria",
    title="AIC, BIC and the evidence against the polynomial degree (Imperial data)",
    section="Regression",
    description=(
        "Maximum-likelihood polynomials of degree 0..12 on the Imperial data (N = 20, monomials "
        "of x / 5), scored by AIC = -2 ln p(y | theta_ML) + 2 M and BIC = -2 ln p(y | theta_ML) "
        "+ M ln N, with M = degree + 2 (the coefficients and sigma^2), from "
        "LinearRegression.aic / .bic, against -2 times the log evidence of the Bayesian model "
        "with the prior N(0, 0.1^2 I) on the coefficients of the raw monomials (on these "
        "features that is a diagonal prior_covariance). Notice that BIC penalises each extra "
        "coefficient by ln 20 = 3.0 instead of AIC's 2, so it picks a degree no larger than "
        "AIC's, and that the evidence also turns up once extra degrees stop paying for "
        "themselves. statsmodels' OLS AIC (which does not count sigma^2) plus 2 is shown "
        "beside ours when installed."
    ),
    source=f"{_IMPERIAL} §1.7.4-1.7.6, eqs. 1.198-1.209",
)
def imperial_information_criteria(ctx):
    import matplotlib.pyplot as plt

    X, y, _, _ = _imperial_data(ctx)
    n = X.shape[0]
    try:
        import statsmodels.api as sm
    except ImportError:
        sm = None
    degrees = list(range(13))
    rows, aic, bic, ev = [], [], [], []
    for d in degrees:
        Phi = PolynomialBasis(degree=d).fit_transform(X / 5.0)
        ols = LinearRegression(fit_intercept=False).fit(Phi, y)
        # theta_j of x^j is 5^j times the coefficient of (x/5)^j: prior sd 0.1 * 5^j here.
        S0 = np.diag((0.1 * 5.0 ** np.arange(d + 1)) ** 2)
        blr = BayesianLinearRegression(
            fit_intercept=False, noise_precision=1 / 0.2**2, prior_covariance=S0
        ).fit(Phi, y)
        a, b = ols.aic(Phi, y), ols.bic(Phi, y)
        ref = sm.OLS(y, Phi).fit().aic + 2 if sm is not None else float("nan")
        aic.append(a)
        bic.append(b)
        ev.append(-2 * blr.log_evidence_)
        rows.append([d, ols.n_parameters_, a, ref, b, -2 * blr.log_evidence_])
    fig, ax = plt.subplots(figsize=(7, 3.8))
    ax.plot(degrees, aic, "bo-", ms=3, label="AIC")
    ax.plot(degrees, bic, "rs-", ms=3, label="BIC")
    ax.plot(degrees, ev, "g^-", ms=3, label="-2 ln evidence (prior N(0, 0.1^2 I))")
    ax.set_xlabel("degree")
    ax.legend(fontsize=8)
    _fill_labels(fig, "degree", "criterion (lower is better)")
    ctx.figure(
        fig,
        f"Lower is better. AIC picks degree {int(np.argmin(aic))}, BIC degree "
        f"{int(np.argmin(bic))}, the evidence degree {int(np.argmin(ev))} for this draw.",
    )
    ctx.table(
        ["degree", "M", "AIC (ours)", "AIC (statsmodels + 2)", "BIC (ours)", "-2 ln evidence"],
        rows,
        f"N = {n}. The statsmodels column is nan when statsmodels is not installed.",
    )


@experiment(
    "gaussian-confidence-regions",
    title="Gaussians with their 95% regions and 100 samples; a bivariate mesh",
    section="Probability",
    description=(
        "A univariate N(1, 1.5^2) with its 95% interval mu +- 1.96 sigma and a bivariate "
        "Gaussian with its 95% ellipse (x - mu)^T Sigma^-1 (x - mu) = 5.991, the 0.95 quantile "
        "of chi^2 with 2 degrees of freedom, each overlaid with 100 samples, and the density "
        "of the bivariate one as a mesh with its contours. On average 95 of the 100 samples "
        "fall inside; the table gives the count for this draw and the probability content of "
        "the regions from scipy.stats, computed independently."
    ),
    source=f"{_IMPERIAL} §1.2.3.5 (Figs. 1.6-1.7), eq. 1.36",
)
def gaussian_confidence_regions(ctx):
    import matplotlib.pyplot as plt
    from scipy import stats

    from mathlearn.distributions import MultivariateNormal

    rng = ctx.rng
    mu1, s1 = 1.0, 1.5
    mu2 = np.array([1.0, -1.0])
    S2 = np.array([[2.0, 1.2], [1.2, 1.5]])
    p1 = MultivariateNormal([mu1], [[s1**2]])
    p2 = MultivariateNormal(mu2, S2)
    x1 = p1.sample(100, rng)[:, 0]
    x2 = p2.sample(100, rng)
    c2 = float(stats.chi2.ppf(0.95, 2))
    inside1 = int(np.sum(np.abs(x1 - mu1) <= 1.96 * s1))
    inside2 = int(np.sum(p2.mahalanobis(x2) ** 2 <= c2))
    fig = plt.figure(figsize=(15, 4))
    ax = fig.add_subplot(1, 3, 1)
    g = np.linspace(-4, 6, 400)
    ax.plot(g, np.exp(p1.logpdf(g[:, None])), "b")
    ax.axvline(mu1 - 1.96 * s1, color="r")
    ax.axvline(mu1 + 1.96 * s1, color="r")
    ax.plot(mu1, 0, "kx", ms=10)
    ax.plot(x1, np.full(100, 0.01), "k|", alpha=0.6)
    ax.set_title(f"95% interval: {inside1}/100 samples inside", fontsize=9)
    G1, G2 = np.meshgrid(np.linspace(-3, 5, 120), np.linspace(-5, 3, 120))
    pts = np.stack([G1, G2], axis=-1)
    dens = np.exp(p2.logpdf(pts))
    ax = fig.add_subplot(1, 3, 2)
    ax.contour(G1, G2, dens, levels=8, colors="0.6", linewidths=0.7)
    ax.contour(G1, G2, p2.mahalanobis(pts) ** 2, levels=[c2], colors="r")
    ax.plot(*mu2, "kx", ms=10)
    ax.plot(x2[:, 0], x2[:, 1], "b.", ms=4)
    ax.set_title(f"95% ellipse: {inside2}/100 samples inside", fontsize=9)
    ax = fig.add_subplot(1, 3, 3, projection="3d")
    ax.plot_surface(G1, G2, dens, cmap="viridis", linewidth=0)
    ax.contour(G1, G2, dens, zdir="z", offset=0, levels=8, cmap="viridis")
    ax.set_title("density mesh (Fig. 1.6)", fontsize=9)
    _fill_labels(fig, "x_1", "x_2", [("interval", ("x", "density"))])
    ctx.figure(fig, "Univariate and bivariate Gaussians with their 95% regions and samples.")
    content1 = float(stats.norm.cdf(1.96) - stats.norm.cdf(-1.96))
    # Probability content of the ellipse by scipy's bivariate CDF is not available; use the
    # chi^2 law of the squared Mahalanobis distance of an independent scipy sample.
    ref = stats.multivariate_normal(mu2, S2).rvs(20000, random_state=rng)
    content2 = float(np.mean(p2.mahalanobis(ref) ** 2 <= c2))
    ctx.table(
        ["region", "samples inside (of 100)", "probability content"],
        [["interval mu +- 1.96 sigma", inside1, content1],
         ["ellipse at chi^2_2(0.95) = 5.991", inside2, content2]],
        "The interval's content is exact (scipy's normal CDF); the ellipse's is the fraction "
        "of 20000 scipy samples inside (standard error 0.0015). The count of 100 samples "
        "inside is Binomial(100, 0.95): 95 +- 2.2.",
    )  # fmt: skip


@experiment(
    "kfold-diagram",
    title="K-fold cross-validation (K = 5): the folds and the fold losses",
    section="Regression",
    description=(
        "The notes' diagram of 5-fold cross-validation, drawn from the actual folds of "
        "scikit-learn's KFold on the Imperial data (N = 20, shuffled): each row is one split, "
        "validation fold in red. Below it, the validation loss of a degree-4 ML polynomial on "
        "each fold from cross_validate_loss, with their mean and standard error "
        "sqrt(var / K) from the unbiased fold variance, next to scikit-learn's "
        "cross_val_score on the same folds."
    ),
    source=f"{_IMPERIAL} §1.7 (Fig. 1.25)",
)
def kfold_diagram(ctx):
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle
    from sklearn.model_selection import KFold, cross_val_score
    from sklearn.pipeline import make_pipeline

    from mathlearn.model_selection import cross_validate_loss

    X, y, _, _ = _imperial_data(ctx)
    X = X / 5.0
    folds = KFold(5, shuffle=True, random_state=int(ctx.rng.integers(2**31)))
    model = make_pipeline(PolynomialBasis(degree=4), LinearRegression(fit_intercept=False))
    cv = cross_validate_loss(model, X, y, cv=folds)
    ref = -cross_val_score(model, X, y, cv=folds, scoring="neg_mean_squared_error")
    fig, axes = plt.subplots(1, 2, figsize=(11, 3))
    for k, (_, val) in enumerate(folds.split(X)):
        for i in range(len(y)):
            colour = "tab:red" if i in val else "tab:blue"
            axes[0].add_patch(Rectangle((i, 4 - k), 0.9, 0.8, color=colour))
    axes[0].set_xlim(0, len(y))
    axes[0].set_ylim(0, 5)
    axes[0].set_yticks(np.arange(5) + 0.4, [f"split {5 - k}" for k in range(5)])
    axes[0].set_xlabel("sample index (blue: training, red: validation)")
    axes[1].bar(np.arange(1, 6), cv.fold_losses, color="tab:red")
    axes[1].axhline(cv.mean, color="k", label="mean")
    axes[1].axhspan(cv.mean - cv.std_error, cv.mean + cv.std_error, color="0.8",
                    label="+-1 standard error")  # fmt: skip
    axes[1].set_xlabel("fold")
    axes[1].set_ylabel("validation MSE")
    axes[1].legend(fontsize=7)
    _fill_labels(fig, "sample index", "split")
    ctx.figure(fig, "The five splits (left) and the validation loss of each fold (right).")
    ctx.table(
        ["fold", "MSE (ours)", "MSE (sklearn cross_val_score)"],
        [[k + 1, a, b] for k, (a, b) in enumerate(zip(cv.fold_losses, ref, strict=True))]
        + [["mean +- s.e.", f"{cv.mean:.4g} +- {cv.std_error:.2g}", float(np.mean(ref))]],
        "Same folds, same model: the fold losses agree.",
    )


@experiment(
    "pca-recipe-2d",
    title="PCA on a 2-D toy, step by step; SVD and eigendecomposition agree",
    section="Feature extraction",
    description=(
        "200 correlated 2-D points in different units (x2 about 3 times x1), one direction "
        "of low variance. The recipe of the notes: (1) centre, (2) standardise each feature, "
        "(3) eigendecompose the covariance, (4) project onto the leading eigenvector, (5) map "
        "back and (6) undo the standardisation. Panels show the data with the principal axes, "
        "the standardised data with the eigenvectors, and the rank-1 reconstruction in the "
        "original units. The table checks that our PCA through the SVD of the data, through "
        "the eigendecomposition of the covariance, and scikit-learn's PCA find the same "
        "directions and eigenvalues, and that the reconstruction error with M components is "
        "the sum of the discarded eigenvalues."
    ),
    source="Imperial 'Mathematics for Machine Learning' lectures 7-8",
)
def pca_recipe_2d(ctx):
    import matplotlib.pyplot as plt
    from sklearn.decomposition import PCA as SkPCA

    from mathlearn.decomposition import PCA
    from mathlearn.preprocessing import StandardScaler

    rng = ctx.rng
    z = rng.standard_normal((200, 2)) * np.array([1.0, 0.25])
    X = z @ np.array([[1.0, 2.5], [-0.9, 0.8]]) + np.array([3.0, -1.0])
    scaler = StandardScaler().fit(X)
    Z = scaler.transform(X)
    svd = PCA(n_components=2, svd_solver="full").fit(Z)
    eig = PCA(n_components=2, svd_solver="covariance").fit(Z)
    ref = SkPCA(n_components=2, svd_solver="full").fit(Z)
    one = PCA(n_components=1, svd_solver="full").fit(Z)
    back = scaler.inverse_transform(one.inverse_transform(one.transform(Z)))
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    axes[0].plot(X[:, 0], X[:, 1], ".", ms=3)
    axes[0].set_title("(1) data in its units", fontsize=9)
    axes[1].plot(Z[:, 0], Z[:, 1], ".", ms=3)
    for v, lam in zip(svd.components_, svd.explained_variance_, strict=True):
        axes[1].arrow(0, 0, *(2 * np.sqrt(lam) * v), width=0.03, color="r")
    axes[1].set_title("(2)-(3) standardised, eigenvectors (2 sd long)", fontsize=9)
    axes[2].plot(X[:, 0], X[:, 1], ".", ms=3, alpha=0.4, label="data")
    axes[2].plot(back[:, 0], back[:, 1], "r.", ms=3, label="rank-1 reconstruction")
    axes[2].legend(fontsize=7)
    axes[2].set_title("(4)-(6) project, map back, un-standardise", fontsize=9)
    for a in axes:
        a.set_aspect("equal", adjustable="datalim")
    _fill_labels(fig, "x_1", "x_2", [("standardised", ("z_1", "z_2"))])
    ctx.figure(fig, "The PCA recipe on 2-D data.")
    lam = svd.explained_variance_
    rows = []
    for name, model in (("SVD (ours)", svd), ("eigendecomposition (ours)", eig),
                        ("sklearn PCA", ref)):  # fmt: skip
        cos = np.abs(np.sum(model.components_ * svd.components_, axis=1))
        rows.append([name, *model.explained_variance_, float(np.min(cos))])
    ctx.table(
        ["solver", "lambda_1", "lambda_2", "min |cos| with the SVD directions"],
        rows,
        "Eigenvalues of the sample covariance (divisor N - 1, scikit-learn's convention).",
    )
    n = Z.shape[0]
    errs = []
    for m in (1, 2):
        model = PCA(n_components=m, svd_solver="full").fit(Z)
        R = Z - model.inverse_transform(model.transform(Z))
        errs.append([m, float(np.sum(R * R) / (n - 1)), float(np.sum(lam[m:]))])
    ctx.table(
        ["M", "reconstruction error sum ||z - z_hat||^2 / (N - 1)", "sum of discarded lambdas"],
        errs,
        "The reconstruction error equals the variance left in the discarded directions.",
    )


@experiment(
    "kmeans-restarts-error-vs-k",
    title="k-means with restarts: the error of each run, and the error against K",
    section="Clustering",
    description=(
        "The exercise on the digit images bundled with scikit-learn (the course's face images "
        "cannot be bundled): 10 runs of k-means from random k-means++ starts at K = 10, the "
        "error sum_i ||x_i - mu_c(i)||^2 of each run (keep the best), and the best error "
        "against K, on the raw 64 pixels and on the first 20 principal components. Notice "
        "that restarts end in different local optima, that the error falls monotonically with "
        "K (so it cannot choose K by itself), and that on 20 PCs the clustering is nearly the "
        "same at a third of the dimension (PCA as a precursor). scikit-learn's KMeans with "
        "the same number of restarts reaches the same best error to within its local optima."
    ),
    source=f"{_STUTTGART} exercise 9.1 (k-means, slides 6:37-6:40)",
)
def kmeans_restarts_error_vs_k(ctx):
    import matplotlib.pyplot as plt
    from sklearn.cluster import KMeans as SkKMeans
    from sklearn.datasets import load_digits

    from mathlearn.cluster import KMeans
    from mathlearn.decomposition import PCA

    X = load_digits().data[:500]
    P = PCA(n_components=20).fit_transform(X)
    seed = int(ctx.rng.integers(2**31))
    runs = [KMeans(10, n_init=1, random_state=seed + r).fit(X).inertia_ for r in range(10)]
    ks = list(range(2, 13, 2))
    raw, pcs, peer = [], [], []
    for k in ks:
        raw.append(KMeans(k, n_init=5, random_state=seed).fit(X).inertia_)
        pcs.append(KMeans(k, n_init=5, random_state=seed).fit(P).inertia_)
        peer.append(SkKMeans(k, n_init=5, random_state=seed).fit(X).inertia_)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.5))
    axes[0].bar(np.arange(1, 11), runs)
    axes[0].set_ylim(0.97 * min(runs), 1.01 * max(runs))
    axes[0].set_xlabel("restart")
    axes[0].set_ylabel("error at K = 10")
    axes[1].plot(ks, raw, "bo-", label="raw pixels (ours)")
    axes[1].plot(ks, peer, "k+--", label="raw pixels (sklearn)")
    axes[1].plot(ks, pcs, "rs-", label="20 principal components (ours)")
    axes[1].set_xlabel("K")
    axes[1].set_ylabel("best error of 5 restarts")
    axes[1].legend(fontsize=7)
    ctx.figure(fig, "Error of 10 restarts at K = 10 (left); best error against K (right).")
    ctx.table(
        ["K", "error, raw (ours)", "error, raw (sklearn)", "error, 20 PCs (ours)"],
        [[k, a, b, c] for k, a, b, c in zip(ks, raw, peer, pcs, strict=True)],
        "On 20 PCs the error is lower by the variance in the 44 discarded directions, which "
        "is the same for every clustering.",
    )


@experiment(
    "gmm-init-schemes",
    title="EM for a Gaussian mixture: two initialisations and random restarts",
    section="Clustering",
    description=(
        "The exercise on 300 2-D points from three overlapping Gaussians (the course's "
        "mixture.txt is not bundled), K = 3. Scheme (a): means at 3 distinct random data "
        "points, Sigma_k = I, equal weights, starting with the E-step. Scheme (b): a random "
        "hard assignment of the points, starting with the M-step (its means and covariances "
        "are the initial parameters). 8 restarts each: the final mean log-likelihood of each "
        "run and how often the best optimum found is reached. scikit-learn's "
        "GaussianMixture from the same initial parameters ends at the same log-likelihoods "
        "(largest difference in the table)."
    ),
    source=f"{_STUTTGART} exercise 9.2 (mixture of Gaussians, slides 6:41-6:42)",
)
def gmm_init_schemes(ctx):
    import matplotlib.pyplot as plt
    from sklearn.mixture import GaussianMixture as SkGaussianMixture

    from mathlearn.mixture import GaussianMixture

    rng = ctx.rng
    centres = np.array([[0.0, 0.0], [3.0, 1.0], [1.0, 3.5]])
    X = np.vstack([rng.standard_normal((100, 2)) @ np.diag([1.0, 0.6]) + c for c in centres])
    K, n = 3, X.shape[0]
    kw = dict(covariance_type="full", max_iter=200, tol=1e-5)

    def init_a():
        means = X[rng.choice(n, K, replace=False)]
        return np.full(K, 1 / K), means, np.tile(np.eye(2), (K, 1, 1))

    def init_b():
        while True:
            labels = rng.integers(0, K, n)
            if np.all(np.bincount(labels, minlength=K) >= 3):
                break
        weights = np.bincount(labels, minlength=K) / n
        means = np.array([X[labels == k].mean(0) for k in range(K)])
        covs = np.array([np.cov(X[labels == k].T, bias=True) for k in range(K)])
        return weights, means, np.linalg.inv(covs)

    results, diffs = {}, []
    for name, init in (("(a) random data points, Sigma = I", init_a),
                       ("(b) random hard assignment, M-step first", init_b)):  # fmt: skip
        lls = []
        for _ in range(8):
            w, m, p = init()
            ours = GaussianMixture(K, weights_init=w, means_init=m, precisions_init=p, **kw)
            ref = SkGaussianMixture(K, weights_init=w, means_init=m, precisions_init=p, **kw)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # either library's ConvergenceWarning
                lls.append(ours.fit(X).score(X))
                diffs.append(abs(lls[-1] - ref.fit(X).score(X)))
        results[name] = np.array(lls)
    best = max(float(v.max()) for v in results.values())
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for j, (name, lls) in enumerate(results.items()):
        ax.plot(np.arange(1, 9) + 0.15 * j, lls, "o", label=name)
    ax.axhline(best, color="k", lw=0.7)
    ax.set_xlabel("restart")
    ax.set_ylabel("final mean log-likelihood")
    ax.legend(fontsize=7)
    ctx.figure(fig, "Final log-likelihood of each restart; the line is the best found.")
    ctx.table(
        ["scheme", "restarts (of 8) reaching the best (to 1e-3)", "worst final", "best final"],
        [[name, int(np.sum(lls > best - 1e-3)), float(lls.min()), float(lls.max())]
         for name, lls in results.items()]
        + [["max |ours - sklearn| over all 16 runs", float(max(diffs)), "", ""]],
        "Same starting parameters in both libraries; EM is deterministic from there, so the "
        "runs agree to the convergence tolerance unless a run sits on a saddle.",
    )  # fmt: skip
