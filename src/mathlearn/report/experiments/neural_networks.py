"""Neural networks: small tanh networks fitting PRML's four functions, decision boundaries
with the hinge and the cross-entropy losses, learning curves of three optimisers, and MC
dropout bands."""

from __future__ import annotations

import warnings

import numpy as np

from mathlearn import nn, optim
from mathlearn.exceptions import ConvergenceWarning
from mathlearn.neural_network import MLPClassifier, MLPRegressor, RandomFeatureClassifier
from mathlearn.report import experiment

SECTION = "Neural networks"


def _one_thread(func):
    """Run ``func(ctx)`` with BLAS limited to one thread.

    These networks are tiny: a multi-threaded BLAS only adds synchronisation to every small
    product, which on a busy machine makes them an order of magnitude slower.
    """
    import functools

    @functools.wraps(func)
    def wrapper(ctx):
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1, user_api="blas"):
            return func(ctx)

    return wrapper


@experiment(
    "nn-tanh-three-units",
    title="A two-layer network with 3 tanh hidden units fitting x², sin, |x| and a step",
    section=SECTION,
    description=(
        "PRML's Fig. 5.3: N = 50 points of each function on [-1, 1], a network with three "
        "tanh hidden units and a linear output, fitted by minimising the sum-of-squares error "
        "(L-BFGS) from three random starts and keeping the best (the error surface has many "
        "minima, among them the tanh sign-flip copies of each). Solid: the network; dashed: "
        "the three hidden units' outputs (scaled by their output weights); dots: the data. "
        "The table gives the training mean squared error, ours beside scikit-learn's "
        "MLPRegressor with the same settings."
    ),
    source="PRML §5.1 (Fig. 5.3), §5.2 (local minima, restarts)",
)
@_one_thread
def tanh_three_units(ctx):
    import matplotlib.pyplot as plt
    from sklearn.neural_network import MLPRegressor as SkMLP

    x = np.linspace(-1, 1, 50)
    X = x[:, None]
    targets = {
        "x^2": x**2,
        "sin(pi x)": np.sin(np.pi * x),
        "|x|": np.abs(x),
        "step": (x > 0).astype(float),
    }
    seeds = [int(s) for s in ctx.rng.integers(0, 2**31 - 1, size=3)]
    kw = dict(
        hidden_layer_sizes=(3,),
        activation="tanh",
        solver="lbfgs",
        alpha=0.0,
        max_iter=150,
        tol=1e-6,
    )
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6))
    rows = []
    grid = np.linspace(-1, 1, 200)[:, None]
    for ax, (name, t) in zip(axes, targets.items(), strict=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            fits = [MLPRegressor(random_state=s, **kw).fit(X, t) for s in seeds]
            mse = [float(np.mean((m.predict(X) - t) ** 2)) for m in fits]
            best = fits[int(np.argmin(mse))]
            # The peer from the same start as our best one.
            peer = SkMLP(random_state=seeds[int(np.argmin(mse))], **kw).fit(X, t)
        peer_mse = float(np.mean((peer.predict(X) - t) ** 2))
        ax.plot(x, t, "o", ms=3, color="tab:blue")
        ax.plot(grid[:, 0], best.predict(grid), "r-", lw=2)
        hidden = np.tanh(grid @ best.coefs_[0] + best.intercepts_[0]) * best.coefs_[1][:, 0]
        ax.plot(grid[:, 0], hidden, "--", lw=1)
        ax.set(title=name, xlabel="x", ylabel="t")
        rows.append([name, min(mse), max(mse), peer_mse])
    ctx.figure(
        fig,
        "Best of three starts per function; dashed lines: the hidden units' contributions. "
        "Notice that each red fit is the sum of its three dashed tanh curves (plus a bias): "
        "a sharp feature such as the step's jump needs one steep unit.",
    )
    ctx.table(
        ["function", "ours: best MSE", "ours: worst start", "scikit-learn (best start)"],
        rows,
        caption=(
            "Training mean squared error over three random starts; scikit-learn's from the "
            "start that was best for ours (the initial weights differ: each library draws "
            "its own)."
        ),
    )


def _moons(rng, n):
    t = rng.uniform(0, np.pi, n)
    X = np.vstack(
        [
            np.column_stack([np.cos(t), np.sin(t)]),
            np.column_stack([1 - np.cos(t), 0.5 - np.sin(t)]),
        ]
    )
    return X + 0.15 * rng.standard_normal((2 * n, 2)), np.repeat([0, 1], n)


@experiment(
    "nn-hinge-vs-cross-entropy",
    title="Decision boundaries of one network trained with the hinge and the cross-entropy loss",
    section=SECTION,
    description=(
        "A network with two hidden layers of 20 leaky-ReLU units and one linear output f(x) "
        "classifies two moons by the sign of f. Left: trained on the binary hinge loss "
        "max(0, 1 - y f) with y in {-1, +1}; middle: on the binary cross-entropy from the logit "
        "f. Both use full-batch Adam from the same initial weights. The hinge network's "
        "contours of f stop changing once every point is beyond the margin; the cross-entropy "
        "keeps pushing f outward. Right: a random-feature network (200 random ReLU units, "
        "never trained; logistic regression on top). Background: sigmoid(f)."
    ),
    source=("Stuttgart 'Introduction to Machine Learning' §4 (losses, exercises 5.1c, 5.2, 6.2)"),
)
@_one_thread
def hinge_vs_cross_entropy(ctx):
    import matplotlib.pyplot as plt
    from sklearn.neural_network import MLPClassifier as SkMLP

    X, y = _moons(ctx.rng, 100)
    pm = 2.0 * y - 1.0
    seed = int(ctx.rng.integers(2**31 - 1))

    def net():
        rng = np.random.default_rng(seed)
        return nn.Sequential(
            nn.Linear(2, 20, bias_init="uniform", random_state=rng),
            nn.LeakyReLU(),
            nn.Linear(20, 20, bias_init="uniform", random_state=rng),
            nn.LeakyReLU(),
            nn.Linear(20, 1, random_state=rng),
        )

    models, rows = {}, []
    for name, loss, target in [
        ("hinge", nn.hinge_loss, pm[:, None]),
        ("cross-entropy", nn.binary_cross_entropy_with_logits, y[:, None].astype(float)),
    ]:
        m = net()
        h = nn.fit_module(
            m,
            loss,
            X,
            target,
            optimizer=optim.adam(0.02),
            epochs=200,
            batch_size=None,
            random_state=seed,
        )
        m.eval()
        acc = float(np.mean((np.asarray(m(X))[:, 0] > 0) == (y == 1)))
        models[name] = m
        rows.append([name, acc, h["loss"][-1]])
    rf = RandomFeatureClassifier((200,), C=100.0, random_state=seed).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer = SkMLP((20, 20), max_iter=200, learning_rate_init=0.02, random_state=seed).fit(X, y)
    rows.append(["random features + logistic regression", float(rf.score(X, y)), float("nan")])
    rows.append(
        ["scikit-learn MLPClassifier (cross-entropy)", float(peer.score(X, y)), float(peer.loss_)]
    )

    lo, hi = X.min(0) - 0.4, X.max(0) + 0.4
    gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], 100), np.linspace(lo[1], hi[1], 100))
    G = np.column_stack([gx.ravel(), gy.ravel()]).astype(np.float32)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    panels = [
        ("hinge loss", np.asarray(models["hinge"](G))[:, 0]),
        ("cross-entropy", np.asarray(models["cross-entropy"](G))[:, 0]),
        ("random features", rf.decision_function(G)),
    ]
    for ax, (title, f) in zip(axes, panels, strict=True):
        F = f.reshape(gx.shape)
        ax.contourf(
            gx, gy, 1 / (1 + np.exp(-np.clip(F, -30, 30))), levels=20, cmap="coolwarm", alpha=0.6
        )
        ax.contour(gx, gy, F, levels=[0.0], colors="k")
        ax.scatter(X[:, 0], X[:, 1], c=y, cmap="coolwarm", s=10, edgecolors="k", linewidths=0.3)
        ax.set(title=title, xlabel="x1", ylabel="x2")
    ctx.figure(
        fig,
        "Decision boundaries f(x) = 0 (black) on sigmoid(f(x)). Notice the background: the "
        "cross-entropy keeps pushing f outward (saturated colours), while the hinge loss "
        "stops once every point is beyond the margin.",
    )
    ctx.table(["model", "training accuracy", "final training loss"], rows)


@experiment(
    "nn-optimiser-learning-curves",
    title="Learning curves of SGD, momentum and Adam on the same network",
    section=SECTION,
    description=(
        "One network (64 inputs, 32 ReLU units, softmax over 10 digits), one initialisation, "
        "batches of 50: plain SGD (step 0.05), heavy-ball momentum 0.9 (same step) and Adam "
        "(step 1e-3). Training loss per epoch (left) and held-out accuracy (table), with "
        "scikit-learn's MLPClassifier under Adam as the peer curve."
    ),
    source="Stuttgart 'Introduction to Machine Learning' §4 (optimizers: SGD, momentum, Adam)",
)
@_one_thread
def optimiser_learning_curves(ctx):
    import matplotlib.pyplot as plt
    from sklearn.datasets import load_digits
    from sklearn.neural_network import MLPClassifier as SkMLP

    X, y = load_digits(return_X_y=True)
    idx = ctx.rng.permutation(len(X))[:900]
    X, y = X[idx] / 16.0, y[idx]
    Xtr, Xte, ytr, yte = X[:600], X[600:], y[:600], y[600:]
    seed = int(ctx.rng.integers(2**31 - 1))
    common = dict(
        hidden_layer_sizes=(32,),
        batch_size=50,
        max_iter=25,
        tol=0.0,
        n_iter_no_change=100,
        random_state=seed,
    )
    settings = {
        "SGD": dict(solver="sgd", learning_rate_init=0.05, momentum=0.0),
        "momentum 0.9": dict(
            solver="sgd", learning_rate_init=0.05, momentum=0.9, nesterovs_momentum=False
        ),
        "Adam": dict(solver="adam", learning_rate_init=1e-3),
    }
    fig, ax = plt.subplots(figsize=(7, 4.2))
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, kw in settings.items():
            m = MLPClassifier(**common, **kw).fit(Xtr, ytr)
            ax.plot(np.arange(1, len(m.loss_curve_) + 1), m.loss_curve_, label=name)
            rows.append([name, m.loss_curve_[-1], float(m.score(Xte, yte))])
        peer = SkMLP(**common, **settings["Adam"]).fit(Xtr, ytr)
    ax.plot(
        np.arange(1, len(peer.loss_curve_) + 1), peer.loss_curve_, "k:", label="scikit-learn Adam"
    )
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel("training loss")
    ax.legend()
    rows.append(["scikit-learn Adam", peer.loss_curve_[-1], float(peer.score(Xte, yte))])
    ctx.figure(
        fig,
        "Training loss per epoch (log scale). Compare the three optimisers from the same "
        "initialisation: the gap between the curves is the optimiser's doing alone.",
    )
    ctx.table(["optimiser", "final training loss", "held-out accuracy"], rows)


@experiment(
    "nn-mc-dropout",
    title="MC dropout: predictive mean and bands of a dropout network on 1-D regression",
    section=SECTION,
    description=(
        "A network with two hidden layers of 64 ReLU units and dropout p = 0.1, trained on "
        "noisy samples of sin(3x) with a gap in the middle. At prediction time dropout stays "
        "on: the mean of T = 100 stochastic passes is the prediction, their variance plus "
        "1/tau (here estimated by the training residual variance) the predictive variance. "
        "The band (two standard deviations) widens in the gap and outside the data."
    ),
    source=(
        "Stuttgart 'Introduction to Machine Learning' §8 (Bayesian neural networks, MC "
        "dropout; Gal and Ghahramani, 2016)"
    ),
)
@_one_thread
def mc_dropout(ctx):
    import matplotlib.pyplot as plt

    x = np.concatenate([ctx.rng.uniform(-2, -0.5, 60), ctx.rng.uniform(0.7, 2, 60)])
    y = np.sin(3 * x) + 0.1 * ctx.rng.standard_normal(x.size)
    seed = int(ctx.rng.integers(2**31 - 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reg = MLPRegressor(
            (64, 64),
            dropout=0.1,
            learning_rate_init=0.01,
            max_iter=300,
            batch_size=40,
            alpha=1e-4,
            random_state=seed,
        ).fit(x[:, None], y)
    grid = np.linspace(-3, 3, 300)
    mean, std = reg.predict(grid[:, None], return_std=True)
    fig, ax = plt.subplots(figsize=(8, 4.2))
    ax.fill_between(grid, mean - 2 * std, mean + 2 * std, alpha=0.3, label="mean ± 2 sd")
    ax.plot(grid, mean, "r-", label="MC mean")
    ax.plot(grid, np.sin(3 * grid), "k:", label="sin(3x)")
    ax.plot(x, y, "o", ms=3, label="data")
    ax.set(ylim=(-3, 3), xlabel="x", ylabel="y")
    ax.legend(loc="lower left")
    ctx.figure(
        fig,
        "MC-dropout predictive mean and two-standard-deviation band. Notice the band "
        "widening in the gap in the middle of the data and outside its range.",
    )
    inside = (np.abs(grid) > 0.9) & (np.abs(grid) < 1.9)
    gap = np.abs(grid - 0.1) < 0.3
    outside = np.abs(grid) > 2.5
    ctx.table(
        ["region", "mean predictive sd"],
        [
            ["where the data are", float(std[inside].mean())],
            ["in the gap (-0.2, 0.4)", float(std[gap].mean())],
            ["outside |x| > 2.5", float(std[outside].mean())],
            ["1/tau (noise sd)", float(np.sqrt(reg.noise_variance_))],
        ],
    )
