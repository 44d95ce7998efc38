"""Bad inputs shared by every decomposition estimator: each gets a clear error."""

import numpy as np
import pytest

from mathlearn.decomposition import (
    NMF,
    PCA,
    FactorAnalysis,
    FastICA,
    KernelPCA,
    PLSRegression,
    ProbabilisticPCA,
)

ESTIMATORS = [
    PCA(1),
    ProbabilisticPCA(1),
    ProbabilisticPCA(1, method="em"),
    KernelPCA(1),
    FactorAnalysis(1),
    FastICA(1, random_state=0),
    NMF(1, random_state=0),
    PLSRegression(1),
]


def _fit(est, X):
    if isinstance(est, PLSRegression):
        return est.fit(X, np.arange(len(X), dtype=float))
    return est.fit(X)


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: repr(e))
def test_infinity_empty_and_shape(est):
    X = np.abs(np.random.default_rng(0).normal(size=(12, 3)))
    X_inf = X.copy()
    X_inf[2, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        _fit(est, X_inf)
    with pytest.raises(ValueError, match="0 sample"):
        _fit(est, np.empty((0, 3)))
    with pytest.raises(ValueError, match="2D array"):
        _fit(est, X[:, 0])
    fitted = _fit(est, X)
    with pytest.raises(ValueError, match="features"):
        fitted.transform(X[:, :2])
    with pytest.raises(ValueError, match="infinity"):
        fitted.transform(X_inf)
