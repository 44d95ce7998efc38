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


if __name__ == "__main__":
    main()
