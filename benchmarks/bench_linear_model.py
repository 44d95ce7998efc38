"""Linear models against scikit-learn: ``python benchmarks/run.py linear_model``.

Sizes N x D = 100 x 10 and 1 000 x 10 (small problems, where fixed costs dominate), 10 000 x 100
and 200 000 x 50 (issue 2). Targets: LinearRegression <= 1.5
(it refines its QR solution to full accuracy), Ridge <= 1.0, Lasso <= 1.5,
BayesianLinearRegression vs BayesianRidge <= 1.0.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.linear_model import BayesianRidge
from sklearn.linear_model import Lasso as SkLasso
from sklearn.linear_model import LinearRegression as SkLinearRegression
from sklearn.linear_model import Ridge as SkRidge

from _harness import compare
from _sweep_cases import Case
from mathlearn.linear_model import BayesianLinearRegression, Lasso, LinearRegression, Ridge

SIZES = [(100, 10), (1_000, 10), (10_000, 100), (200_000, 50)]


def _data(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d) * (rng.random(d) < 0.3)
    return X, X @ w + 1.0 + rng.normal(size=n)


def _cases(X, y):
    """(name, ours, peer, target) for one data set; X and y are bound here, not in a loop."""
    return [
        (
            "LinearRegression",
            lambda: LinearRegression().fit(X, y),
            lambda: SkLinearRegression().fit(X, y),
            1.5,
        ),
        ("Ridge", lambda: Ridge(alpha=1.0).fit(X, y), lambda: SkRidge(alpha=1.0).fit(X, y), 1.0),
        ("Lasso", lambda: Lasso(alpha=0.01).fit(X, y), lambda: SkLasso(alpha=0.01).fit(X, y), 1.5),
        (
            "BayesianLinearRegression vs BayesianRidge",
            lambda: BayesianLinearRegression(fit_intercept=True).fit(X, y),
            lambda: BayesianRidge().fit(X, y),
            1.0,
        ),
    ]


def main() -> None:
    warnings.simplefilter("ignore")  # a peer's convergence notice must not stop the timing
    for n, d in SIZES:
        X, y = _data(n, d)
        repeats = 5 if n <= 10_000 else 3
        for name, ours, peer, target in _cases(X, y):
            compare(f"{name} {n}x{d}", ours, peer, repeats=repeats, target=target)


# The size sweep (``sweep.py``).
def _sweep_regression(n, d):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    return X, X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n)


def _sweep_separable_noisy(n, d):
    # a linear rule with 5 % of the labels flipped: never separable, so both perceptrons run
    # every one of their epochs
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    y = (X @ rng.standard_normal(d) > 0).astype(int)
    flip = rng.random(n) < 0.05
    return X, np.where(flip, 1 - y, y)


def _sweep_enet():
    from sklearn.linear_model import ElasticNet as Sk

    from mathlearn.linear_model import ElasticNet

    return (
        lambda X, y: lambda: ElasticNet(0.05, l1_ratio=0.5).fit(X, y),
        lambda X, y: lambda: Sk(0.05, l1_ratio=0.5).fit(X, y),
    )


def _sweep_sgd():
    from sklearn.linear_model import SGDRegressor as Sk

    from mathlearn.linear_model import SGDRegressor

    # The same work on both sides: plain least-mean-squares (no penalty), the inverse-scaling
    # schedule eta0 / t^0.25 from the same eta0, 5 epochs in a shuffled order, no early
    # stopping. eta0 is our default ("auto", 1 / max ||[x, 1]||^2, half the largest stable
    # step), given to scikit-learn explicitly: its own default 0.01 diverges on the wide data.
    def eta0(X):
        return 1.0 / (float(np.max(np.einsum("ij,ij->i", X, X))) + 1.0)

    kw = dict(learning_rate="invscaling", power_t=0.25, max_iter=5, tol=None, random_state=0)
    return (
        lambda X, y: lambda: SGDRegressor(alpha=0.0, eta0=eta0(X), **kw).fit(X, y),
        lambda X, y: lambda: Sk(penalty=None, alpha=0.0, eta0=eta0(X), **kw).fit(X, y),
    )


def _sweep_perceptron():
    from sklearn.linear_model import Perceptron as Sk

    from mathlearn.linear_model import Perceptron

    # The same rule on both sides (update w += t_n phi_n when t_n w^T phi_n <= 0, eta 1, from
    # w = 0, the samples in their order), for 10 epochs: scikit-learn's stopping rule (no
    # improvement of its loss by tol in 5 epochs) is turned off; ours stops at an epoch
    # without mistakes, which never comes on these data.
    return (
        lambda X, y: lambda: Perceptron(max_iter=10).fit(X, y),
        lambda X, y: lambda: Sk(max_iter=10, tol=None, shuffle=False).fit(X, y),
    )


def _sweep_case(family, name, pair, data, **kw):
    return Case(
        family,
        name,
        data,
        lambda *a: pair()[0](*a),
        lambda *a: pair()[1](*a),
        **kw,
    )


SWEEP_CASES = [
    _sweep_case("regression", "ElasticNet", _sweep_enet, _sweep_regression, wide=(500, 5_000)),
    _sweep_case(
        "regression", "SGDRegressor 5 epochs", _sweep_sgd, _sweep_regression, wide=(200, 2_000)
    ),
    # No wide shape: N < D data are linearly separable, where ours stops at the first epoch
    # without mistakes and scikit-learn's (no stopping rule here) runs on.
    _sweep_case(
        "classification",
        "Perceptron 10 epochs",
        _sweep_perceptron,
        _sweep_separable_noisy,
        wide=None,
    ),
]


if __name__ == "__main__":
    main()
