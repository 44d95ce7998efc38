"""SparseGaussianProcessRegressor (Titsias' bound) against the exact GP."""

import itertools

import numpy as np
import pytest

from mathlearn.gaussian_process import GaussianProcessRegressor, SparseGaussianProcessRegressor
from mathlearn.kernels import RBF, ConstantKernel


def _data(rng, n=60):
    X = rng.uniform(-3, 3, size=(n, 2))
    return X, np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * rng.standard_normal(n)


def test_inducing_at_the_data_is_the_exact_gp(rng):
    X, y = _data(rng)
    k = ConstantKernel(1.3, "fixed") * RBF([0.9, 1.4], "fixed")
    exact = GaussianProcessRegressor(k, noise_variance=0.05, optimizer=None).fit(X, y)
    sparse = SparseGaussianProcessRegressor(k, noise_variance=0.05, inducing_points=X).fit(X, y)
    Xs = rng.uniform(-3, 3, size=(10, 2))
    m, s = exact.predict(Xs, return_std=True)
    ms, ss = sparse.predict(Xs, return_std=True)
    # K_mm = K is well conditioned here (length scales ~ spacing): agreement to ~1e-8.
    np.testing.assert_allclose(ms, m, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(ss, s, rtol=1e-6, atol=1e-8)
    assert sparse.lower_bound_ == pytest.approx(exact.log_marginal_likelihood_value_, rel=1e-8)


def test_bound_grows_to_the_exact_lml_with_nested_inducing_sets(rng):
    X, y = _data(rng, n=80)
    k = ConstantKernel(1.0, "fixed") * RBF(1.0, "fixed")
    exact = GaussianProcessRegressor(k, noise_variance=0.05, optimizer=None).fit(X, y)
    order = rng.permutation(80)
    bounds, errs = [], []
    Xs = rng.uniform(-3, 3, size=(20, 2))
    m_exact, s_exact = exact.predict(Xs, return_std=True)
    for m in (5, 10, 20, 40, 80):
        sp = SparseGaussianProcessRegressor(
            k, noise_variance=0.05, inducing_points=X[order[:m]]
        ).fit(X, y)
        bounds.append(sp.lower_bound_)
        mean, std = sp.predict(Xs, return_std=True)
        errs.append(np.abs(mean - m_exact).max() + np.abs(std - s_exact).max())
    # Adding inducing points never lowers the variational bound (Titsias 2009, §3).
    assert all(b2 >= b1 - 1e-8 for b1, b2 in itertools.pairwise(bounds))
    assert all(b <= exact.log_marginal_likelihood_value_ + 1e-8 for b in bounds)
    assert bounds[-1] == pytest.approx(exact.log_marginal_likelihood_value_, rel=1e-8)
    assert errs[-1] < 1e-6 and errs[-1] < errs[0]


def test_bad_input(rng):
    X, y = _data(rng, n=10)
    with pytest.raises(ValueError, match="features"):
        SparseGaussianProcessRegressor(inducing_points=np.zeros((3, 5))).fit(X, y)
    y[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SparseGaussianProcessRegressor().fit(X, y)
