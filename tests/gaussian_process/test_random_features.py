"""The random-feature GP against the function-space GP with the same finite-feature kernel
(an exact identity), the exact RBF GP as the number of features grows, and the evidence."""

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from mathlearn.gaussian_process import (
    GaussianProcessRegressor,
    RandomFeatureGaussianProcessRegressor,
)
from mathlearn.kernels import RBF, ConstantKernel


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n, 2))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.1 * rng.standard_normal(n)
    return X, y, rng.uniform(-3, 3, (15, 2))


def test_weight_space_equals_function_space_with_the_same_features():
    # f = phi^T w, w ~ N(0, s_f^2 I) is the GP with kernel s_f^2 phi(x)^T phi(x'): posterior
    # mean, variance and log evidence must agree with the N x N computation to rounding.
    X, y, Xt = _data()
    sf2, s2 = 1.7, 0.02
    gp = RandomFeatureGaussianProcessRegressor(
        30, length_scale=1.3, signal_variance=sf2, noise_variance=s2, random_state=3
    ).fit(X, y)
    P, Pt = gp.features_.transform(X), gp.features_.transform(Xt)
    K = sf2 * P @ P.T + s2 * np.eye(len(X))
    Ks = sf2 * Pt @ P.T
    mean = Ks @ np.linalg.solve(K, y)
    cov = sf2 * Pt @ Pt.T - Ks @ np.linalg.solve(K, Ks.T)
    m, c = gp.predict(Xt, return_cov=True)
    np.testing.assert_allclose(m, mean, atol=1e-10)
    np.testing.assert_allclose(c, cov, atol=1e-10)
    _, sd = gp.predict(Xt, return_std=True, noisy=True)
    np.testing.assert_allclose(sd**2, np.diag(cov) + s2, atol=1e-10)
    lml = multivariate_normal(np.zeros(len(X)), K).logpdf(y)
    np.testing.assert_allclose(gp.log_marginal_likelihood_value_, lml, rtol=1e-10)


def test_approaches_the_exact_gp_as_features_grow():
    # The feature kernel converges to the RBF kernel at rate m^{-1/2}; so do the posterior
    # mean and sd (averaged over draws of the frequencies).
    X, y, Xt = _data(seed=1)
    exact = GaussianProcessRegressor(
        ConstantKernel(1.5, "fixed") * RBF(1.2, "fixed"), noise_variance=0.01, optimizer=None
    ).fit(X, y)
    me, se = exact.predict(Xt, return_std=True)

    def err(m):
        out = []
        for s in range(4):
            gp = RandomFeatureGaussianProcessRegressor(
                m, length_scale=1.2, signal_variance=1.5, noise_variance=0.01, random_state=s
            ).fit(X, y)
            mr, sr = gp.predict(Xt, return_std=True)
            out.append([np.abs(mr - me).max(), np.abs(sr - se).max()])
        return np.mean(out, axis=0)

    small, large = err(16), err(256)
    # 16x the features: about 4x smaller errors; ask for a factor 2 (rate m^{-1/2} with
    # the variability of four draws).
    assert np.all(large * 2 < small)


def test_evidence_maximisation_is_a_stationary_point():
    X, y, _ = _data(n=80, seed=2)
    gp = RandomFeatureGaussianProcessRegressor(40, length_scale=1.0, random_state=0).fit(X, y)
    sf2, s2 = gp.signal_variance_, gp.noise_variance_

    def lml(a, b):
        return (
            RandomFeatureGaussianProcessRegressor(
                40, length_scale=1.0, signal_variance=a, noise_variance=b, random_state=0
            )
            .fit(X, y)
            .log_marginal_likelihood_value_
        )

    h = 1e-4
    g_a = (lml(sf2 * np.exp(h), s2) - lml(sf2 * np.exp(-h), s2)) / (2 * h)
    g_b = (lml(sf2, s2 * np.exp(h)) - lml(sf2, s2 * np.exp(-h))) / (2 * h)
    assert abs(g_a) < 1e-4 and abs(g_b) < 1e-4
    assert gp.log_marginal_likelihood_value_ >= lml(sf2 * 1.5, s2)
    assert gp.log_marginal_likelihood_value_ >= lml(sf2, s2 * 1.5)


def test_normalize_y_and_bad_inputs():
    X, y, Xt = _data(seed=3)
    a = RandomFeatureGaussianProcessRegressor(50, random_state=0).fit(X, 1e6 * y + 3e6)
    b = RandomFeatureGaussianProcessRegressor(50, random_state=0, normalize_y=True).fit(
        X, 1e6 * y + 3e6
    )
    ref = RandomFeatureGaussianProcessRegressor(50, random_state=0).fit(X, y)
    # Normalising makes the fit equivariant to an affine change of units of y.
    np.testing.assert_allclose(
        (b.predict(Xt) - 3e6) / 1e6,
        RandomFeatureGaussianProcessRegressor(50, random_state=0, normalize_y=True)
        .fit(X, y)
        .predict(Xt),
        atol=1e-8,
    )
    assert np.all(np.isfinite(a.predict(Xt))) and np.all(np.isfinite(ref.predict(Xt)))
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RandomFeatureGaussianProcessRegressor().fit(Xn, y)
    with pytest.raises(ValueError, match="NaN"):
        RandomFeatureGaussianProcessRegressor().fit(X, np.r_[np.nan, y[1:]])
    with pytest.raises(ValueError):
        RandomFeatureGaussianProcessRegressor(n_frequencies=0).fit(X, y)
    with pytest.raises(ValueError, match="At most one"):
        ref.predict(Xt, return_std=True, return_cov=True)
