"""Neural networks: MLPClassifier against scikit-learn's MLPClassifier.

Same data, same architecture (one hidden layer of 100 ReLU units), same solver (Adam, step
1e-3, batches of 200, alpha 1e-4) and the same number of epochs on both sides: ``tol=0`` and
a patience longer than ``max_iter`` make both run every epoch (checked). Our network computes
in float32 (the library's default for networks), scikit-learn's in float64 on float64 data.
Each row is a whole ``fit`` (so the first call is included: nothing is compiled or cached
between calls); the held-out accuracies of both are printed under the table, then over twelve
initialisations (mean and standard error), then for five seeds with both libraries started
from the same initial weights on the same batches (no shuffling), which leaves only the
arithmetic (float32 against float64) to differ.

Run: ``python benchmarks/run.py nn`` (or ``python benchmarks/bench_nn.py``).
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.datasets import load_digits, make_classification
from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier as SkMLP
from sklearn.neural_network import MLPRegressor as SkMLPRegressor

from _harness import compare
from _sweep_cases import Case
from mathlearn.exceptions import ConvergenceWarning
from mathlearn.neural_network import MLPClassifier, MLPRegressor


def _case(name, X, y, epochs, repeats):
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=0)
    kw = dict(
        hidden_layer_sizes=(100,),
        max_iter=epochs,
        tol=0.0,
        n_iter_no_change=epochs + 1,
        random_state=0,
    )
    fitted = {}

    def ours():
        fitted["ours"] = MLPClassifier(**kw).fit(Xtr, ytr)

    def peer():
        fitted["peer"] = SkMLP(**kw).fit(Xtr, ytr)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", SkConvergenceWarning)
        compare(f"{name}, {epochs} epochs", ours, peer, repeats=repeats, target=1.0)
    a, b = fitted["ours"], fitted["peer"]
    assert a.n_iter_ == b.n_iter_ == epochs
    acc = a.score(Xte, yte), b.score(Xte, yte)
    return f"{name}: held-out accuracy ours {acc[0]:.4f}, scikit-learn {acc[1]:.4f}"


def _accuracy_over_seeds(name, X, y, epochs, seeds):
    """Held-out accuracy of both libraries over several initialisations (mean and its SE)."""
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=0)
    acc = {"ours": [], "peer": []}
    for seed in seeds:
        kw = dict(
            hidden_layer_sizes=(100,),
            max_iter=epochs,
            tol=0.0,
            n_iter_no_change=epochs + 1,
            random_state=seed,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("ignore", SkConvergenceWarning)
            acc["ours"].append(MLPClassifier(**kw).fit(Xtr, ytr).score(Xte, yte))
            acc["peer"].append(SkMLP(**kw).fit(Xtr, ytr).score(Xte, yte))
    out = []
    for who, label in (("ours", "ours"), ("peer", "scikit-learn")):
        a = np.asarray(acc[who])
        out.append(f"{label} {a.mean():.4f} +- {a.std(ddof=1) / np.sqrt(len(a)):.4f}")
    return f"{name}: held-out accuracy over seeds {list(seeds)}: " + ", ".join(out)


def _paired_accuracy(name, X, y, epochs, seeds):
    """Both libraries from the same initial weights and the same batches (no shuffling).

    scikit-learn is given our Glorot-uniform initial weights (it draws from the same
    distribution) through ``warm_start``; what is left to differ is the arithmetic (float32
    here, float64 there). The loss curves agree to about 1e-4 and the held-out accuracies
    are listed per seed.
    """
    from mathlearn import nn
    from mathlearn.utils.validation import check_random_state

    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.2, random_state=0)
    rows = []
    for seed in seeds:
        kw = dict(
            hidden_layer_sizes=(100,),
            max_iter=epochs,
            tol=0.0,
            n_iter_no_change=epochs + 1,
            random_state=seed,
            shuffle=False,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("ignore", SkConvergenceWarning)
            ours = MLPClassifier(**kw).fit(Xtr, ytr)
            start = MLPClassifier(**kw)._build(X.shape[1], 10, check_random_state(seed))
            linears = [m for m in start if isinstance(m, nn.Linear)]
            peer = SkMLP(**{**kw, "max_iter": 1}, warm_start=True).fit(Xtr, ytr)
            peer.coefs_ = [np.asarray(m.weight.T, dtype=np.float64) for m in linears]
            peer.intercepts_ = [np.asarray(m.bias, dtype=np.float64) for m in linears]
            peer.t_, peer.n_iter_, peer.loss_curve_ = 0, 0, []
            peer.best_loss_, peer._no_improvement_count = np.inf, 0
            peer.set_params(max_iter=epochs).fit(Xtr, ytr)
        gap = np.max(np.abs(np.subtract(ours.loss_curve_, peer.loss_curve_)))
        rows.append(
            f"seed {seed}: ours {ours.score(Xte, yte):.4f}, scikit-learn "
            f"{peer.score(Xte, yte):.4f} (loss curves within {gap:.1e})"
        )
    return f"{name}, same initial weights and batches: " + "; ".join(rows)


def main() -> None:
    notes = []
    X, y = load_digits(return_X_y=True)
    notes.append(_case("MLPClassifier digits 1797x64", X / 16.0, y, 50, 3))
    X, y = make_classification(
        n_samples=50_000, n_features=100, n_informative=40, n_classes=10, random_state=0
    )
    notes.append(_case("MLPClassifier synthetic 50000x100", X, y, 5, 2))
    notes.append(
        _accuracy_over_seeds("MLPClassifier synthetic 50000x100, 5 epochs", X, y, 5, range(12))
    )
    notes.append(
        _paired_accuracy("MLPClassifier synthetic 50000x100, 5 epochs", X, y, 5, range(5))
    )
    print()
    for line in notes:
        print(line)


def _sweep_classification(n, d):
    return make_classification(
        n, d, n_informative=min(d, 10), n_classes=3, random_state=0, flip_y=0.05
    )


def _sweep_regression(n, d):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    w = rng.standard_normal((d, 5))
    y = np.tanh(X @ w) @ rng.standard_normal(5) + 0.1 * rng.standard_normal(n)
    return X, y


def _sweep_kw():
    # The same network and the same work on both sides: one hidden layer of 100 ReLU units,
    # Adam (step 1e-3), alpha 1e-4, batches of min(200, N) ("auto" on both), shuffled, and
    # exactly 10 epochs (tol=0 and a patience longer than max_iter). The arithmetic differs
    # on purpose (both defaults): ours computes in float32, scikit-learn in float64.
    return dict(
        hidden_layer_sizes=(100,), max_iter=10, tol=0.0, n_iter_no_change=11, random_state=0
    )


SWEEP_CASES = [
    Case(
        "neural networks",
        "MLPClassifier 100 relu, 10 epochs",
        _sweep_classification,
        lambda X, y: lambda: MLPClassifier(**_sweep_kw()).fit(X, y),
        lambda X, y: lambda: SkMLP(**_sweep_kw()).fit(X, y),
        d=50,
        max_n=1_000_000,
        wide=(200, 2_000),
    ),
    Case(
        "neural networks",
        "MLPRegressor 100 relu, 10 epochs",
        _sweep_regression,
        lambda X, y: lambda: MLPRegressor(**_sweep_kw()).fit(X, y),
        lambda X, y: lambda: SkMLPRegressor(**_sweep_kw()).fit(X, y),
        d=50,
        max_n=1_000_000,
        wide=(200, 2_000),
    ),
]


if __name__ == "__main__":
    main()
