"""Optimisation: gradient descent and its relatives, SGD, Newton, constrained least squares.

Imperial "Mathematics for Machine Learning" lectures 5-6 and 12-13; Imperial
"Mathematics for Inference and Machine Learning" §1.6; Stuttgart "Introduction to Machine Learning"
ch. 4 (optimisers).
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

from mathlearn import autodiff as ad
from mathlearn import optim
from mathlearn.exceptions import ConvergenceWarning
from mathlearn.report import experiment

SECTION = "Optimisation"


@contextlib.contextmanager
def _quiet():
    """Divergent and budget-limited runs are the point of some curves: silence their warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


def _quadratic(diag):
    H = np.diag(diag)
    return lambda x: (0.5 * x @ H @ x, H @ x)


@experiment(
    "gd-condition-number",
    title="Gradient descent on quadratics of growing condition number",
    section=SECTION,
    description=(
        "f(x) = 1/2 x^T diag(1, kappa) x from x0 = (1, 1). GD with step gamma = c * 2/lambda_max "
        "converges iff c < 1 (lecture 5); the error contracts by max_d |1 - gamma lambda_d| "
        "per step, so at the best fixed step the rate (kappa - 1)/(kappa + 1) degrades "
        "with the condition number."
    ),
    source=(
        "Imperial 'Mathematics for Machine Learning' lecture 5; Imperial 'Mathematics for "
        "Inference and Machine Learning' §1.6"
    ),
)
def gd_condition_number(ctx):
    import matplotlib.pyplot as plt

    kappas = [1.0, 10.0, 100.0]
    fractions = [0.25, 0.5, 0.95, 1.02]
    n_iter = 150
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), sharey=True)
    rows = []
    with np.errstate(over="ignore", invalid="ignore"):
        with _quiet():
            for ax, kappa in zip(axes, kappas, strict=True):
                lam = np.array([1.0, kappa])
                fg = _quadratic(lam)
                for c in fractions:
                    gamma = c * 2 / kappa
                    res = optim.minimize(
                        fg, np.ones(2), optim.sgd(gamma), max_iter=n_iter, tol=1e-14
                    )
                    h = np.maximum(res.history, 1e-300)
                    ax.semilogy(h, label=f"c = {c:g}")
                    predicted = np.max(np.abs(1 - gamma * lam))
                    # Observed asymptotic rate of ||x_t - x*|| (f contracts by its square),
                    # over the last 50 recorded steps with f representable and non-zero.
                    ok = np.flatnonzero(np.isfinite(res.history) & (res.history > 1e-290))
                    t2 = int(ok[-1])
                    t1 = max(0, t2 - 50)
                    observed = (h[t2] / h[t1]) ** (1 / (2 * (t2 - t1))) if t2 > t1 else 0.0
                    rows.append([kappa, c, gamma, predicted, float(observed)])
                ax.set_title(f"kappa = {kappa:g}")
                ax.set_xlabel("iteration t")
                ax.set_ylim(1e-16, 1e6)
    axes[0].set_ylabel("f(x_t)")
    axes[0].legend()
    ctx.figure(fig, "GD with step c * 2/lambda_max: converges for c < 1, diverges for c > 1.")
    ctx.table(
        ["kappa", "c", "gamma", "predicted rate max|1 - gamma lambda|", "observed rate"],
        rows,
        "Per-step contraction of ||x_t - x*||: closed form against the run (last 50 steps).",
    )


@experiment(
    "momentum-nesterov",
    title="Momentum and Nesterov against plain gradient descent",
    section=SECTION,
    description=(
        "An ill-conditioned quadratic (kappa = 100, 2-D for the picture and 50-D for the "
        "curves). GD with gamma = 1/L; heavy ball with Polyak's tuning gamma = 4/(sqrt L + "
        "sqrt mu)^2, alpha = ((sqrt kappa - 1)/(sqrt kappa + 1))^2; Nesterov with gamma = 1/L, "
        "alpha = (sqrt kappa - 1)/(sqrt kappa + 1); Adam for comparison. Momentum damps the "
        "zig-zag across the valley and moves faster along it (lecture 6)."
    ),
    source=(
        "Imperial 'Mathematics for Machine Learning' lecture 6; Imperial 'Mathematics for "
        "Inference and Machine Learning' §1.6.2; "
        "Stuttgart 'Introduction to Machine Learning' slide 4:17"
    ),
)
def momentum_nesterov(ctx):
    import matplotlib.pyplot as plt

    mu, L = 1.0, 100.0
    kappa = L / mu
    sk = np.sqrt(kappa)
    methods = {
        "GD": optim.sgd(1 / L),
        "heavy ball": optim.momentum(
            4 / (np.sqrt(L) + np.sqrt(mu)) ** 2, ((sk - 1) / (sk + 1)) ** 2
        ),
        "Nesterov": optim.nesterov(1 / L, (sk - 1) / (sk + 1)),
        "Adam": optim.adam(optim.exponential_decay(0.3, 0.98)),
    }
    with _quiet():
        # 2-D paths on the contours.
        fg2 = _quadratic(np.array([mu, L]))
        x0 = np.array([1.0, 0.1])
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4))
        g1, g2 = np.meshgrid(np.linspace(-1.1, 1.1, 200), np.linspace(-0.15, 0.15, 200))
        ax1.contour(
            g1, g2, 0.5 * (mu * g1**2 + L * g2**2), levels=np.geomspace(1e-3, 2, 12), colors="0.8"
        )
        for name, opt in methods.items():
            path = [x0]
            optim.minimize(
                fg2, x0, opt, max_iter=40, tol=0, callback=lambda t, x, f, g, p=path: p.append(x)
            )
            path = np.array(path)
            ax1.plot(path[:, 0], path[:, 1], ".-", label=name, ms=3)
        ax1.set(title="first 40 iterates, kappa = 100", xlabel="x1", ylabel="x2")
        ax1.legend()
        # 50-D curves.
        rng = ctx.rng
        Q, _ = np.linalg.qr(rng.standard_normal((50, 50)))
        lam = np.geomspace(mu, L, 50)
        H = Q @ np.diag(lam) @ Q.T
        x_star = rng.standard_normal(50)
        f_star = 0.0

        def fg(x):
            d = x - x_star
            return 0.5 * d @ H @ d, H @ d

        rows = []
        for name, opt in methods.items():
            res = optim.minimize(fg, np.zeros(50), opt, max_iter=600, tol=1e-10)
            err = np.maximum(res.history - f_star, 1e-300)
            ax2.semilogy(err, label=name)
            hit = np.flatnonzero(err <= 1e-8)
            rows.append([name, int(hit[0]) if hit.size else "> 600", float(err[-1])])
    ax2.set_xlabel("iteration")
    ax2.set_ylabel("f(x_t) - f*")
    ax2.set_title("50-D quadratic, kappa = 100")
    ax2.legend()
    ctx.figure(
        fig,
        "Momentum and Nesterov against GD on an ill-conditioned quadratic. Notice the steeper "
        "fall of the momentum methods' curves: a rate of about 1 - 1/sqrt(kappa) per step "
        "against GD's 1 - 1/kappa.",
    )
    ctx.table(
        ["method", "iterations to f - f* <= 1e-8", "final f - f*"],
        rows,
        "Theory: GD needs O(kappa log 1/eps) iterations, the tuned momentum methods "
        "O(sqrt(kappa) log 1/eps).",
    )


@experiment(
    "sgd-batch-schedules",
    title="Minibatch SGD: batch sizes and step-size schedules",
    section=SECTION,
    description=(
        "Least squares L = sum_n 1/2 (y_n - x_n^T w)^2 with N = 500, D = 5. Minibatches drawn "
        "uniformly with replacement, gradient scaled by N/M (unbiased, variance N^2/M times "
        "the per-sample variance, lecture 6). A constant step leaves the iterates "
        "swinging at a noise floor that shrinks with M; a Robbins-Monro schedule "
        "gamma_t = gamma_0/(1 + t/t_0) keeps decreasing."
    ),
    source=(
        "Imperial 'Mathematics for Machine Learning' lecture 6; Imperial 'Mathematics for "
        "Inference and Machine Learning' §1.6.3; PRML §3.1.3"
    ),
)
def sgd_batch_schedules(ctx):
    import matplotlib.pyplot as plt
    from sklearn.linear_model import SGDRegressor as SkSGDRegressor

    from mathlearn.linear_model import SGDRegressor

    rng = ctx.rng
    N, D = 500, 5
    X = rng.standard_normal((N, D))
    w_true = rng.standard_normal(D)
    y = X @ w_true + 0.5 * rng.standard_normal(N)
    w_ls = np.linalg.lstsq(X, y, rcond=None)[0]

    def full(w):
        r = y - X @ w
        return 0.5 * r @ r

    f_star = full(w_ls)

    def fgs(w, idx):
        r = y[idx] - X[idx] @ w
        return 0.5 * r @ r, -X[idx].T @ r

    # Empirical variance of the estimator at w = 0 against N^2/M V_m[grad L_m].
    per_sample = -(X * y[:, None])
    var_rows = []
    for M in (1, 10, 100):
        draws = np.array(
            [
                optim.minibatch_gradient(lambda w, i: fgs(w, i)[1], np.zeros(D), N, M, rng)[0]
                for _ in range(2000)
            ]
        )
        predicted = N**2 / M * per_sample.var(0).sum()
        var_rows.append([M, float(draws.var(0).sum()), float(predicted)])

    # With M = 1 one update moves the residual of its sample by gamma N ||x_n||^2: keep that
    # below 1 for every sample (the per-sample step-size bound).
    gamma0 = 0.5 / (N * np.max(np.sum(X**2, axis=1)))
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.8), sharey=True)
    rows = []
    for ax, (label, make) in zip(
        axes,
        [
            ("constant step", lambda: optim.sgd(gamma0)),
            ("Robbins-Monro", lambda: optim.sgd(optim.robbins_monro(gamma0, t0=50.0))),
        ],
        strict=True,
    ):
        for M in (1, 10, 100):
            res = optim.minimize_stochastic(
                fgs, np.zeros(D), N, make(), batch_size=M, max_iter=2000,
                random_state=ctx.seed, fun=full, record_every=20,
            )  # fmt: skip
            excess = np.maximum(res.full_history - f_star, 1e-12)
            ax.semilogy(res.full_history_iters, excess, label=f"M = {M}")
            rows.append([label, M, float(np.mean(excess[-10:]))])
        ax.set_title(label)
        ax.set_xlabel("update t")
    axes[0].set_ylabel("L(w_t) - L(w*)")
    axes[0].legend()
    ctx.figure(
        fig,
        "Excess loss of minibatch SGD for batch sizes M, constant vs decaying step. Notice that a "
        "constant step stalls at a noise floor that is lower for larger M, while the decaying "
        "step keeps going down.",
    )
    ctx.table(
        ["M", "empirical total variance of g_hat at w = 0", "N^2/M sum_d V_m[grad_d L_m]"],
        var_rows,
        "Variance of the minibatch gradient estimator (2000 draws) against the formula.",
    )
    ctx.table(
        ["schedule", "M", "mean excess loss over the last 200 updates"],
        rows,
        "Constant steps stall at a noise floor that shrinks with M; Robbins-Monro keeps going.",
    )
    # The LMS estimator next to scikit-learn's SGDRegressor on the same data and settings.
    ours = SGDRegressor(
        learning_rate="constant", eta0=0.01, max_iter=20, tol=None, random_state=ctx.seed
    ).fit(X, y)
    peer = SkSGDRegressor(
        learning_rate="constant", eta0=0.01, penalty=None, max_iter=20, tol=None,
        random_state=ctx.seed,
    ).fit(X, y)  # fmt: skip
    ctx.table(
        ["estimator", "||w - w_LS||", "R^2"],
        [
            [
                "mathlearn SGDRegressor (LMS)",
                float(np.linalg.norm(ours.coef_ - w_ls)),
                ours.score(X, y),
            ],
            [
                "scikit-learn SGDRegressor",
                float(np.linalg.norm(peer.coef_ - w_ls)),
                peer.score(X, y),
            ],
        ],
        "20 epochs of per-sample LMS, eta = 0.01 (both shuffle; different random streams).",
    )


def _rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def _rosenbrock_value_and_grad(x):
    # Hand-derived gradient (checked against finite differences in the experiment) keeps the
    # thousands of first-order iterations cheap; Newton uses autodiff's Hessian.
    r = x[1] - x[0] ** 2
    return _rosenbrock(x), np.array([-2 * (1 - x[0]) - 400 * x[0] * r, 200 * r])


@experiment(
    "newton-vs-gd",
    title="Newton's method against gradient descent on the Rosenbrock function",
    section=SECTION,
    description=(
        "From (-1.2, 1). Newton with a backtracking line search (gradient and Hessian by "
        "mathlearn.autodiff) converges quadratically in a few dozen steps; steepest descent "
        "with an Armijo line search, the notes' adaptive step, and Adam crawl along the "
        "curved valley. L-BFGS-B (SciPy, through optim.lbfgs) sits in between; SciPy's "
        "Newton-CG is the peer for Newton."
    ),
    source=(
        "Imperial 'Mathematics for Machine Learning' lecture 6; Imperial 'Mathematics for "
        "Inference and Machine Learning' §1.6.1"
    ),
)
def newton_vs_gd(ctx):
    import matplotlib.pyplot as plt
    from scipy.optimize import minimize as scipy_minimize

    x0 = np.array([-1.2, 1.0])
    vg = _rosenbrock_value_and_grad
    check = ad.check_grad(_rosenbrock, x0, grad=lambda x: vg(x)[1])
    with _quiet():
        runs = {}
        paths = {}
        res = optim.newton(
            _rosenbrock,
            x0,
            tol=1e-10,
            callback=lambda t, x, f: paths.setdefault("Newton", [x0]).append(x),
        )
        runs["Newton (line search)"] = res
        paths["Newton (line search)"] = np.array(paths.pop("Newton"))
        for name, opt, budget in [
            ("GD + Armijo line search", optim.backtracking_line_search(), 2000),
            ("adaptive step (undo/shrink)", optim.adaptive_step(1e-3), 2000),
            ("Adam", optim.adam(optim.exponential_decay(0.05, 0.999)), 2000),
        ]:
            path = [x0]
            runs[name] = optim.minimize(
                vg,
                x0,
                opt,
                max_iter=budget,
                tol=1e-10,
                callback=lambda t, x, f, g, p=path: p.append(x),
            )
            paths[name] = np.array(path)
        runs["L-BFGS-B (SciPy)"] = optim.lbfgs(vg, x0, tol=1e-10)
    peer = scipy_minimize(
        _rosenbrock, x0, jac=ad.grad(_rosenbrock), hess=ad.hessian(_rosenbrock),
        method="Newton-CG", options={"xtol": 1e-12},
    )  # fmt: skip

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4))
    g1, g2 = np.meshgrid(np.linspace(-1.5, 1.5, 300), np.linspace(-0.5, 1.5, 300))
    ax1.contour(
        g1, g2, _rosenbrock(np.array([g1, g2])), levels=np.geomspace(0.01, 500, 15), colors="0.8"
    )
    for name, p in paths.items():
        ax1.plot(p[:, 0], p[:, 1], ".-", ms=2, lw=0.8, label=name)
    ax1.plot(1, 1, "k*", ms=10)
    ax1.set(title="paths (every iterate)", xlabel="x1", ylabel="x2")
    ax1.legend()
    rows = []
    for name, r in runs.items():
        ax2.semilogy(np.maximum(r.history, 1e-20), label=name)
        rows.append([name, int(r.nit), float(r.fun), float(np.linalg.norm(np.ravel(r.x) - 1))])
    rows.append(
        [
            "SciPy Newton-CG (peer)",
            int(peer.nit),
            float(peer.fun),
            float(np.linalg.norm(peer.x - 1)),
        ]
    )
    ax2.set_xscale("symlog", linthresh=10)
    ax2.set_xlabel("iteration")
    ax2.set_ylabel("f(x_t)  (f* = 0)")
    ax2.legend()
    ctx.figure(
        fig,
        "Second-order against first-order methods on the Rosenbrock valley. Notice that Newton "
        "reaches the minimum (star) in a few dozen steps while steepest descent and Adam crawl "
        "along the curved valley.",
    )
    ctx.table(
        ["method", "iterations", "final f", "||x - x*||"],
        rows,
        f"Budget 2000 iterations for the first-order methods. Hand gradient: {check}.",
    )


@experiment(
    "constrained-ridge-path",
    title="Norm-constrained least squares and the ridge path",
    section=SECTION,
    description=(
        "min ||y - X theta||^2/(2 sigma^2) subject to ||theta||^2 <= delta. Below the "
        "unconstrained norm the constraint binds, and the solution is ridge regression with "
        "lambda' = 2 sigma^2 lambda (lecture 13): sweeping delta traces exactly the "
        "ridge path (scikit-learn's Ridge at the same alpha is the peer). The multiplier "
        "decreases monotonically to 0 as delta grows, and the dual function D(lambda) "
        "peaks at lambda* with zero duality gap."
    ),
    source="Imperial 'Mathematics for Machine Learning' lecture 13 (and its worked example)",
)
def constrained_ridge_path(ctx):
    import matplotlib.pyplot as plt
    from sklearn.linear_model import Ridge

    rng = ctx.rng
    N, D = 40, 6
    X = rng.standard_normal((N, D))
    theta_true = np.array([3.0, -2.0, 1.5, 0.0, 0.5, -1.0])
    y = X @ theta_true + 0.5 * rng.standard_normal(N)
    theta_ls = np.linalg.lstsq(X, y, rcond=None)[0]
    max_delta = float(theta_ls @ theta_ls)
    deltas = np.geomspace(0.01, 1.5 * max_delta, 60)
    coefs, lambdas, gaps = [], [], []
    for delta in deltas:
        res = optim.norm_constrained_least_squares(X, y, delta)
        coefs.append(res.coef)
        lambdas.append(res.lagrange_multiplier)
        if res.binding:
            peer = Ridge(alpha=res.ridge_alpha, fit_intercept=False, solver="cholesky").fit(X, y)
            gaps.append(float(np.max(np.abs(peer.coef_ - res.coef))))
    coefs = np.array(coefs)
    alphas = np.geomspace(1e-3, 1e4, 80)
    ridge = np.array(
        [Ridge(alpha=a, fit_intercept=False, solver="cholesky").fit(X, y).coef_ for a in alphas]
    )
    fig, axes = plt.subplots(1, 3, figsize=(15, 3.8))
    norms_c = np.sum(coefs**2, axis=1)
    for j in range(D):
        (line,) = axes[0].plot(norms_c, coefs[:, j], lw=2, alpha=0.5)
        axes[0].plot(np.sum(ridge**2, axis=1), ridge[:, j], "--", color=line.get_color(), lw=1)
    axes[0].axvline(max_delta, color="k", lw=0.6)
    axes[0].set_xscale("log")
    axes[0].set_xlabel("||theta||^2")
    axes[0].set(title="constrained (thick) = ridge path (dashed)", ylabel="coefficient theta_j")
    axes[1].loglog(deltas, np.maximum(lambdas, 1e-6))
    axes[1].axvline(max_delta, color="k", lw=0.6)
    axes[1].set_xlabel("delta")
    axes[1].set_ylabel("lambda* (1e-6 where 0)")
    axes[1].set_title("multiplier against radius")
    # Dual function for one binding radius: D(lambda) = min_theta L(theta; lambda).
    delta = 0.3 * max_delta
    res = optim.norm_constrained_least_squares(X, y, delta)
    lam_grid = np.linspace(0, 4 * res.lagrange_multiplier, 200)

    def dual(lam):
        theta = np.linalg.solve(X.T @ X + 2 * lam * np.eye(D), X.T @ y)
        return 0.5 * np.sum((y - X @ theta) ** 2) + lam * (theta @ theta - delta)

    primal = 0.5 * np.sum((y - X @ res.coef) ** 2)
    axes[2].plot(lam_grid, [dual(v) for v in lam_grid], label="D(lambda)")
    axes[2].axhline(primal, color="k", ls=":", label="primal optimum")
    axes[2].axvline(res.lagrange_multiplier, color="r", lw=0.8, label="lambda*")
    axes[2].set(xlabel="lambda", ylabel="D(lambda)")
    axes[2].legend()
    axes[2].set_title(f"dual function, delta = {delta:.3g}")
    ctx.figure(fig, "Constrained least squares traces the ridge path; multiplier and dual.")
    ctx.table(
        ["quantity", "value"],
        [
            ["unconstrained ||theta_LS||^2", max_delta],
            ["max |theta_constrained - theta_ridge(sklearn)| over binding radii", max(gaps)],
            [
                "duality gap at delta = 0.3 ||theta_LS||^2",
                abs(primal - dual(res.lagrange_multiplier)),
            ],
            ["lambda* there", res.lagrange_multiplier],
        ],
    )
