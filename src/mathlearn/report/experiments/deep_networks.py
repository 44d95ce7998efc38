"""Deep networks: a CNN on digits with its filters, autoencoders against PCA, a VAE's samples
and latent space. Training is kept tiny (a few epochs on a few hundred digits)."""

from __future__ import annotations

import warnings

import numpy as np

from mathlearn.decomposition import PCA
from mathlearn.exceptions import ConvergenceWarning
from mathlearn.neural_network import (
    Autoencoder,
    CNNClassifier,
    VariationalAutoencoder,
)
from mathlearn.report import experiment

SECTION = "Neural networks"


def _digits(rng, n_train, n_test):
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    order = rng.permutation(len(X))
    tr, te = order[:n_train], order[n_train : n_train + n_test]
    return X[tr], y[tr], X[te], y[te]


def _quiet_fit(est, *args):
    # A few epochs only, on purpose: the warning that training could go on is expected.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(*args)


@experiment(
    "deep-cnn-digits",
    title="A small convolutional network on 8x8 digits and its first-layer filters",
    section=SECTION,
    description=(
        "One convolutional block (eight 3x3 filters, ReLU, 2x2 max pooling) and a dense layer "
        "of 32 ReLU units, trained with Adam for a few epochs on 600 digits. Left: the eight "
        "learned filters (weights shared over positions, k^2 = 9 weights each); right: test "
        "images with their predicted labels. The table sets the test accuracy beside that of "
        "scikit-learn's MLPClassifier and logistic regression on the same split."
    ),
    source="Stuttgart 'Introduction to Machine Learning' §2.3 (CNNs: receptive field, "
    "weight sharing, stride, padding, pooling)",
)
def cnn_digits(ctx):
    import matplotlib.pyplot as plt
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier as SkMLP

    Xtr, ytr, Xte, yte = _digits(ctx.rng, 600, 400)
    seed = int(ctx.rng.integers(2**31))
    cnn = CNNClassifier(
        conv_channels=(8,),
        hidden_sizes=(32,),
        image_shape=(8, 8),
        max_iter=6,
        batch_size=32,
        random_state=seed,
    )
    _quiet_fit(cnn, Xtr, ytr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp = SkMLP(hidden_layer_sizes=(32,), max_iter=100, random_state=seed).fit(Xtr, ytr)
        logistic = LogisticRegression(max_iter=2000).fit(Xtr / 16, ytr)
    filters = cnn.network_.parameters()["0.weight"][:, 0]
    fig, axes = plt.subplots(2, 8, figsize=(13, 3.6))
    lim = float(np.abs(filters).max())
    for k in range(8):
        axes[0, k].imshow(filters[k], cmap="RdBu_r", vmin=-lim, vmax=lim)
        axes[0, k].set_title(f"filter {k}", fontsize=9)
        axes[1, k].imshow(Xte[k].reshape(8, 8), cmap="gray_r")
        axes[1, k].set_title(f"predicted {cnn.predict(Xte[k : k + 1])[0]}", fontsize=9)
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
    ctx.figure(fig, "Top: learned 3x3 filters (red positive); bottom: test digits.")
    ctx.table(
        ["model", "test accuracy", "epochs"],
        [
            ["CNN (ours)", cnn.score(Xte, yte), cnn.n_iter_],
            ["MLP 32 (scikit-learn)", mlp.score(Xte, yte), mlp.n_iter_],
            ["logistic regression (scikit-learn)", logistic.score(Xte / 16, yte), ""],
        ],
        "600 training and 400 test digits drawn with the report's seed.",
    )


def _oriented_bars(rng, n, size=28, length=19):
    """Images of one line segment (anywhere) on Gaussian noise; class: its orientation."""
    y = rng.integers(0, 4, n)
    X = 0.2 * rng.standard_normal((n, size, size))
    half = length // 2
    t = np.arange(-half, half + 1)
    steps = np.array([(0, 1), (1, 0), (1, 1), (1, -1)])
    centres = rng.integers(half, size - half, (n, 2))
    for i in range(n):
        dy, dx = steps[y[i]]
        X[i, centres[i, 0] + dy * t, centres[i, 1] + dx * t] += 1.0
    return X, y


_BAR_NAMES = ("horizontal", "vertical", "diagonal", "anti-diagonal")


@experiment(
    "deep-cnn-bars-28",
    title="The convolutional network on 28x28 images: the orientation of a line anywhere",
    section=SECTION,
    description=(
        "Synthetic 28x28 images, each one line segment of 19 pixels at a random position on "
        "Gaussian noise (sd 0.2); the class is its orientation (horizontal, vertical, "
        "diagonal, anti-diagonal). Two convolutional blocks (8 and 16 filters of 3x3, ReLU, "
        "2x2 max pooling) and 32 dense ReLU units, trained with Adam for 6 epochs on 400 "
        "images. Weight sharing lets the 3x3 filters detect a local orientation wherever the "
        "line lies; a model on the raw pixels has to learn every position separately. Left: "
        "the eight first-layer filters; bottom: test images with their predicted orientation. "
        "The table compares test accuracy with scikit-learn's logistic regression and MLP on "
        "the same pixels."
    ),
    source="Stuttgart 'Introduction to Machine Learning' §2.3 (CNNs: receptive field, "
    "weight sharing, pooling)",
)
def cnn_bars_28(ctx):
    import matplotlib.pyplot as plt
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier as SkMLP
    from threadpoolctl import threadpool_limits

    Xtr, ytr = _oriented_bars(ctx.rng, 400)
    Xte, yte = _oriented_bars(ctx.rng, 200)
    seed = int(ctx.rng.integers(2**31))
    # Small products: one BLAS thread (a busy machine makes a thread pool much slower).
    with threadpool_limits(limits=1, user_api="blas"):
        cnn = CNNClassifier(
            conv_channels=(8, 16), hidden_sizes=(32,), max_iter=6, batch_size=32, random_state=seed
        )
        _quiet_fit(cnn, Xtr, ytr)
        flat_tr, flat_te = Xtr.reshape(len(Xtr), -1), Xte.reshape(len(Xte), -1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            logistic = LogisticRegression(max_iter=500).fit(flat_tr, ytr)
            mlp = SkMLP(hidden_layer_sizes=(32,), max_iter=60, random_state=seed).fit(flat_tr, ytr)
        predicted = cnn.predict(Xte[:8])
    filters = cnn.network_.parameters()["0.weight"][:, 0]
    fig, axes = plt.subplots(2, 8, figsize=(13, 3.8))
    lim = float(np.abs(filters).max())
    for k in range(8):
        axes[0, k].imshow(filters[k], cmap="RdBu_r", vmin=-lim, vmax=lim)
        axes[0, k].set_title(f"filter {k}", fontsize=9)
        axes[1, k].imshow(Xte[k], cmap="gray_r")
        axes[1, k].set_title(f"predicted\n{_BAR_NAMES[predicted[k]]}", fontsize=8)
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
    ctx.figure(fig, "Top: learned 3x3 filters (red positive); bottom: 28x28 test images.")
    ctx.table(
        ["model", "test accuracy"],
        [
            ["CNN (ours)", cnn.score(Xte, yte)],
            ["logistic regression on pixels (scikit-learn)", logistic.score(flat_te, yte)],
            ["MLP 32 on pixels (scikit-learn)", mlp.score(flat_te, yte)],
        ],
        "400 training and 200 test images drawn with the report's seed; chance is 0.25.",
    )


@experiment(
    "deep-autoencoder-pca",
    title="Autoencoders against PCA: reconstructions of digits through a bottleneck",
    section=SECTION,
    description=(
        "A linear autoencoder with a 10-unit bottleneck, trained by L-BFGS (300 iterations), "
        "approaches PCA's 10-dimensional subspace and reconstruction error (PCA is the optimal "
        "linear autoencoder); a tanh autoencoder with one hidden layer of 64 units trained for a "
        "few epochs is shown beside them. Rows: originals, PCA, the linear and the nonlinear "
        "autoencoder; the table gives the unexplained variance on training and test digits and "
        "the largest principal angle between the linear autoencoder's and PCA's subspaces."
    ),
    source="Stuttgart 'Introduction to Machine Learning' §6.1 (autoencoders; PCA as the "
    "optimal linear autoencoder; exercise 12.1 on faces, here on digits)",
)
def autoencoder_pca(ctx):
    import matplotlib.pyplot as plt
    from scipy.linalg import subspace_angles
    from sklearn.decomposition import PCA as SkPCA

    Xtr, _, Xte, _ = _digits(ctx.rng, 500, 200)
    k = 10
    seed = int(ctx.rng.integers(2**31))
    pca = PCA(n_components=k).fit(Xtr)
    sk = SkPCA(n_components=k).fit(Xtr)
    linear = Autoencoder(
        n_components=k,
        activation="identity",
        solver="lbfgs",
        tol=1e-4,
        max_iter=300,
        random_state=seed,
    )
    _quiet_fit(linear, Xtr)
    deep = Autoencoder(
        n_components=k,
        hidden_layer_sizes=(64,),
        max_iter=40,
        batch_size=100,
        learning_rate=1e-2,
        random_state=seed,
    )
    _quiet_fit(deep, Xtr)

    def unexplained(recon, X):
        return float(np.sum((X - recon) ** 2) / np.sum((X - Xtr.mean(0)) ** 2))

    models = {
        "PCA (ours)": lambda X: pca.inverse_transform(pca.transform(X)),
        "PCA (scikit-learn)": lambda X: sk.inverse_transform(sk.transform(X)),
        "linear autoencoder": lambda X: linear.inverse_transform(linear.transform(X)),
        "tanh autoencoder 64-10-64": lambda X: deep.inverse_transform(deep.transform(X)),
    }
    angle = float(
        np.max(subspace_angles(linear.decoder_.parameters()["0.weight"], pca.components_.T))
    )
    rows = [
        [name, unexplained(f(Xtr), Xtr), unexplained(f(Xte), Xte)] for name, f in models.items()
    ]
    shown = ["PCA (ours)", "linear autoencoder", "tanh autoencoder 64-10-64"]
    fig, axes = plt.subplots(4, 8, figsize=(12, 6.4))
    for j in range(8):
        axes[0, j].imshow(Xte[j].reshape(8, 8), cmap="gray_r")
        for i, name in enumerate(shown, start=1):
            axes[i, j].imshow(models[name](Xte[j : j + 1]).reshape(8, 8), cmap="gray_r")
    for i, name in enumerate(["original", *shown]):
        axes[i, 0].set_ylabel(name, fontsize=8)
    for ax in axes.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
    ctx.figure(fig, "Test digits and their reconstructions through 10 numbers.")
    ctx.table(
        ["model", "unexplained variance (train)", "unexplained variance (test)"],
        rows,
        f"Largest principal angle between the linear autoencoder's decoder subspace and PCA's: "
        f"{angle:.2e} rad.",
    )


@experiment(
    "deep-vae-digits",
    title="A variational autoencoder on digits: samples, latent space, ELBO and IWAE bounds",
    section=SECTION,
    description=(
        "A VAE with a two-dimensional latent space (Gaussian encoder, Bernoulli decoder on "
        "intensities scaled to [0, 1], one hidden layer of 64 tanh units) trained for a few "
        "epochs on 600 digits by the reparameterisation trick. Left: the posterior means of "
        "test digits, coloured by label; right: decoded prior draws. The table gives the "
        "held-out ELBO (closed-form KL) and IWAE bounds for k = 1, 10, 100: they increase with "
        "k towards log p(x)."
    ),
    source="Oxford 'Advanced Topics in Statistical Machine Learning' §8.5 (variational "
    "autoencoders, reparameterisation, IWAE)",
)
def vae_digits(ctx):
    import matplotlib.pyplot as plt

    Xtr, _, Xte, yte = _digits(ctx.rng, 600, 300)
    seed = int(ctx.rng.integers(2**31))
    vae = VariationalAutoencoder(
        n_components=2,
        hidden_layer_sizes=(64,),
        likelihood="bernoulli",
        max_iter=15,
        batch_size=50,
        learning_rate=1e-2,
        random_state=seed,
    )
    _quiet_fit(vae, Xtr / 16.0)
    Z = vae.transform(Xte / 16.0)
    samples = vae.sample(16, random_state=seed)
    fig = plt.figure(figsize=(12, 5))
    grid = fig.add_gridspec(4, 8)
    ax = fig.add_subplot(grid[:, :4])
    sc = ax.scatter(Z[:, 0], Z[:, 1], c=yte, cmap="tab10", s=12)
    fig.colorbar(sc, ax=ax, label="digit")
    ax.set_xlabel("z1")
    ax.set_ylabel("z2")
    ax.set_title("posterior means of test digits")
    for j in range(16):
        sub = fig.add_subplot(grid[j // 4, 4 + j % 4])
        sub.imshow(samples[j].reshape(8, 8), cmap="gray_r", vmin=0, vmax=1)
        sub.set_xticks([])
        sub.set_yticks([])
    ctx.figure(fig, "Latent space (left) and decoded prior samples (right).")
    rows = [["ELBO (closed-form KL, 10 draws)", float(vae.elbo(Xte / 16, 10, seed).mean())]]
    for k in (1, 10, 100):
        rows.append([f"IWAE bound, k = {k}", float(vae.iwae_bound(Xte / 16, k, seed).mean())])
    ctx.table(
        ["bound on log p(x) (nats per test digit)", "value"],
        rows,
        "One Monte Carlo draw of each bound, averaged over 300 test digits.",
    )
