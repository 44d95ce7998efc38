"""Preconditioned gradient descent and conjugate gradients on an ill-conditioned least squares."""

from __future__ import annotations

import numpy as np

from mathlearn import optim
from mathlearn.report import experiment


@experiment(
    "preconditioning",
    title="Preconditioning: gradient descent with P = I, diagonal P, P = X^T X; CG",
    section="Optimisation",
    description=(
        "Least squares L = ||y - X theta||^2 / (2 sigma^2) with 200 points and 8 features of "
        "very different scales (standard deviations from 0.1 to 10), so that X^T X has "
        "condition number about 1e4. Gradient descent runs with each preconditioner at 0.9 of "
        "its largest stable step 2 / lambda_max(P^-1 H); conjugate gradients solve the normal "
        "equations with and without the Jacobi preconditioner. Notice that P = X^T X (the "
        "Hessian) reaches the optimum in one step at gamma = sigma^2 (a Newton step), the "
        "diagonal P removes most of the ill-conditioning caused by the scales, and plain "
        "gradient descent crawls along the flat directions; conjugate gradients need at most "
        "8 steps (the number of features) and fewer with the preconditioner."
    ),
    source=(
        "Imperial 'Mathematics for Machine Learning' (preconditioned gradient descent, the "
        "stable step 2 sigma^2 / lambda_max(P^-1 X^T X)); Imperial 'Mathematics for Inference "
        "and Machine Learning' §1.6.4 (conjugate gradients and preconditioning named)"
    ),
)
def preconditioning(ctx):
    import matplotlib.pyplot as plt

    n, d, s2 = 200, 8, 1.0
    X = ctx.rng.normal(size=(n, d)) * np.geomspace(0.1, 10.0, d)
    theta0 = ctx.rng.normal(size=d)
    y = X @ theta0 + np.sqrt(s2) * ctx.rng.normal(size=n)
    H = X.T @ X / s2
    b = X.T @ y / s2
    theta_star = np.linalg.solve(H, b)
    f_star = 0.5 * np.sum((y - X @ theta_star) ** 2) / s2

    def excess(th):
        return 0.5 * np.sum((y - X @ th) ** 2) / s2 - f_star

    runs = {}
    steps = 300
    for name, P in (("P = I", None), ("P = diag(X^T X)", np.diag(H)), ("P = X^T X", H)):
        gamma = 0.9 * optim.max_stable_step(H, preconditioner=P) if name != "P = X^T X" else 1.0
        opt = optim.chain(optim.precondition(np.ones(d) if P is None else P), optim.sgd(gamma))
        th = np.zeros(d)
        state = opt.init(th)
        curve = [excess(th)]
        for _ in range(steps):
            u, state = opt.update(H @ th - b, state)
            th = optim.apply_updates(th, u)
            curve.append(excess(th))
        runs[name] = (gamma, np.maximum(curve, 1e-300))
    cg = optim.conjugate_gradient(H, b, tol=1e-13)
    pcg = optim.conjugate_gradient(H, b, tol=1e-13, preconditioner=np.diag(H))

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for name, (gamma, curve) in runs.items():
        axes[0].semilogy(curve, label=f"{name} (gamma = {gamma:.3g})")
    axes[0].set_xlabel("iteration")
    axes[0].set_ylabel("L(theta_t) - L(theta*)")
    axes[0].set_title("preconditioned gradient descent")
    axes[0].legend(loc="upper right")
    axes[1].semilogy(cg.residual_norms / cg.residual_norms[0], "-o", ms=3, label="CG")
    axes[1].semilogy(pcg.residual_norms / pcg.residual_norms[0], "-s", ms=3, label="CG, Jacobi")
    axes[1].set_xlabel("iteration")
    axes[1].set_ylabel("||r_k|| / ||r_0||")
    axes[1].set_title("conjugate gradients on the normal equations")
    axes[1].legend(loc="upper right")
    ctx.figure(fig, "The better P approximates the Hessian, the fewer steps are needed.")
    kappa = {
        "P = I": np.linalg.cond(H),
        "P = diag(X^T X)": np.linalg.cond(H / np.sqrt(np.outer(np.diag(H), np.diag(H)))),
        "P = X^T X": 1.0,
    }
    ctx.table(
        ["method", "kappa(P^-1 H)", "step", "excess loss after 300 steps"],
        [[k, float(kappa[k]), g, float(c[-1])] for k, (g, c) in runs.items()]
        + [
            ["CG", float(kappa["P = I"]), "", f"{cg.nit} steps to ||r|| <= 1e-13 ||b||"],
            ["CG, Jacobi", float(kappa["P = diag(X^T X)"]), "", f"{pcg.nit} steps"],
        ],
        "Gradient descent converges at the rate (1 - 1/kappa) per step, conjugate gradients at "
        "(sqrt(kappa) - 1) / (sqrt(kappa) + 1), and in at most d = 8 steps in exact arithmetic.",
    )


@experiment(
    "lagrange-geometry",
    title="Equality constraints: the gradients of objective and constraint align at the optimum",
    section="Optimisation",
    description=(
        "Minimise f(x) = x1^2 + 2 x2^2 subject to h(x) = x1 + x2 - 1 = 0. The contours of f "
        "and the constraint line are drawn with the gradients at the constrained optimum, "
        "found by solving the KKT system [[H, a], [a^T, 0]] [x; lambda] = [0; 1] "
        "(mathlearn.optim.solve_equality_qp). Notice that at the optimum the contour of f "
        "touches the line: grad f = -lambda grad h, the condition of Lagrange multipliers; "
        "elsewhere on the line grad f has a component along it, so f can still decrease."
    ),
    source=(
        "Imperial 'Mathematics for Machine Learning' (Lagrange multipliers, equality constraints)"
    ),
)
def lagrange_geometry(ctx):
    import matplotlib.pyplot as plt

    H = np.diag([2.0, 4.0])
    a = np.array([[1.0, 1.0]])
    x_opt, lam = optim.solve_equality_qp(H, np.zeros(2), a, np.array([1.0]))
    g = np.linspace(-0.5, 1.5, 200)
    G1, G2 = np.meshgrid(g, g)
    F = G1**2 + 2 * G2**2
    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.contour(G1, G2, F, levels=12, linewidths=0.8)
    ax.plot(g, 1 - g, "k-", label="h(x) = x1 + x2 - 1 = 0")
    grad_f = H @ x_opt
    ax.quiver(
        *x_opt,
        *grad_f,
        color="C3",
        angles="xy",
        scale_units="xy",
        scale=4,
        label="grad f at the optimum",
    )
    ax.quiver(*x_opt, 1.0, 1.0, color="C2", angles="xy", scale_units="xy", scale=4, label="grad h")
    other = np.array([0.1, 0.9])
    ax.quiver(
        *other,
        *(H @ other),
        color="C1",
        angles="xy",
        scale_units="xy",
        scale=4,
        label="grad f elsewhere on h = 0",
    )
    ax.plot(*x_opt, "ko")
    ax.set_xlim(-0.5, 1.5)
    ax.set_ylim(-0.5, 1.5)
    ax.set_aspect("equal")
    ax.set_xlabel("x1")
    ax.set_ylabel("x2")
    ax.legend(loc="upper right")
    ctx.figure(fig, "At the optimum the contour of f is tangent to the constraint.")
    exact = np.array([2.0 / 3.0, 1.0 / 3.0])
    ctx.table(
        ["quantity", "KKT solve", "closed form"],
        [
            ["x1", float(x_opt[0]), float(exact[0])],
            ["x2", float(x_opt[1]), float(exact[1])],
            ["grad f + lambda grad h (max abs)", float(np.max(np.abs(grad_f + lam[0]))), 0.0],
        ],
        "Closed form: x = (2/3, 1/3), lambda = -4/3 (grad f = (4/3, 4/3)).",
    )
