"""KernelRidge against scikit-learn's KernelRidge, the GP posterior mean and ridge regression.

Tolerances: the dual weights solve ``(K + alpha I) a = y`` by Cholesky, backward stable, so
two correct solvers agree to ``||da|| / ||a|| <= c n kappa eps`` with ``kappa = cond(K + alpha
I)``; the two Gram matrices themselves differ by rounding (scikit-learn forms squared
distances as ``|x|^2 + |y|^2 - 2 x.y``, an absolute error ``~ eps (|x|^2 + |y|^2)`` in the
exponent), which enters through the same ``kappa``. Predictions ``K_* a`` are compared in norm
against ``||K_*|| ||a||``.
"""

import numpy as np
import pytest
import sklearn.gaussian_process.kernels as skk
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.model_selection import GridSearchCV

from mathlearn.exceptions import NumericalWarning
from mathlearn.kernel_ridge import KernelRidge
from mathlearn.kernels import RBF, Matern
from mathlearn.linear_model import Ridge

EPS = np.finfo(float).eps


def _data(n=40, d=3, t=None, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    shape = (n,) if t is None else (n, t)
    y = np.sin(X).sum(axis=1).reshape(-1, 1) + 0.1 * rng.normal(size=(n, t or 1))
    return X, y.reshape(shape), rng.normal(size=(15, d))


def _close(pred, ref, K_star, K, alpha, A, scale=1.0):
    """``||pred - ref|| <= 10 n kappa eps scale ||K_*|| ||a||`` (see the module docstring)."""
    n = K.shape[0]
    kappa = np.linalg.cond(K + alpha * np.eye(n))
    bound = 10 * n * kappa * EPS * scale * np.linalg.norm(K_star, 2) * np.linalg.norm(A)
    assert np.linalg.norm(pred - ref) <= bound, (np.linalg.norm(pred - ref), bound)


@pytest.mark.parametrize(
    "params",
    [
        dict(kernel="linear", alpha=0.5),
        dict(kernel="rbf", gamma=0.3, alpha=0.1),
        dict(kernel="rbf", alpha=1e-3),  # gamma=None: 1 / n_features on both sides
        dict(kernel="poly", degree=2, gamma=0.5, coef0=1.0, alpha=1.0),
        dict(kernel="poly", alpha=2.0),
        dict(kernel="sigmoid", gamma=0.1, coef0=0.0, alpha=5.0),
    ],
)
def test_matches_sklearn_kernel_ridge(params):
    X, y, Xt = _data()
    ours = KernelRidge(**params).fit(X, y)
    peer = SkKernelRidge(**params).fit(X, y)
    K, Ks = ours.kernel_(X), ours.kernel_(Xt, X)
    scale = 1.0 + 4.0 * np.max(np.sum(X**2, axis=1)) * (params.get("gamma") or 1.0)
    _close(ours.predict(Xt), peer.predict(Xt), Ks, K, params["alpha"], ours.dual_coef_, scale)
    _close(ours.predict(X), peer.predict(X), K, K, params["alpha"], ours.dual_coef_, scale)


def test_kernel_object_matches_sklearn_on_its_gram():
    """A Matérn 5/2 kernel object against scikit-learn given its own Matérn Gram matrix."""
    X, y, Xt = _data()
    ours = KernelRidge(alpha=0.2, kernel=Matern(1.3, nu=2.5)).fit(X, y)
    K, Ks = skk.Matern(1.3, nu=2.5)(X), skk.Matern(1.3, nu=2.5)(Xt, X)
    peer = SkKernelRidge(alpha=0.2, kernel="precomputed").fit(K, y)
    _close(ours.predict(Xt), peer.predict(Ks), Ks, K, 0.2, ours.dual_coef_, 10.0)


def test_multi_output_with_one_alpha_per_target():
    X, y, Xt = _data(t=3)
    alpha = np.array([0.1, 1.0, 0.1])
    ours = KernelRidge(alpha=alpha, kernel="rbf", gamma=0.5).fit(X, y)
    peer = SkKernelRidge(alpha=alpha, kernel="rbf", gamma=0.5).fit(X, y)
    assert ours.predict(Xt).shape == (15, 3)
    K, Ks = ours.kernel_(X), ours.kernel_(Xt, X)
    for j in range(3):
        one = KernelRidge(alpha=alpha[j], kernel="rbf", gamma=0.5).fit(X, y[:, j])
        _close(one.predict(Xt), ours.predict(Xt)[:, j], Ks, K, alpha[j], one.dual_coef_)
        _close(ours.predict(Xt)[:, j], peer.predict(Xt)[:, j], Ks, K, alpha[j], one.dual_coef_, 50)
    # A single column stays 2-D, as in scikit-learn.
    assert KernelRidge().fit(X, y[:, :1]).predict(Xt).shape == (15, 1)


def test_sample_weight_matches_sklearn_and_repetition():
    X, y, Xt = _data()
    rng = np.random.default_rng(1)
    w = rng.integers(0, 4, size=X.shape[0]).astype(float)
    ours = KernelRidge(alpha=0.3, kernel="rbf", gamma=0.4).fit(X, y, sample_weight=w)
    peer = SkKernelRidge(alpha=0.3, kernel="rbf", gamma=0.4).fit(X, y, sample_weight=w)
    K, Ks = ours.kernel_(X), ours.kernel_(Xt, X)
    root = np.sqrt(w)
    Kw = root[:, None] * K * root[None, :]
    _close(ours.predict(Xt), peer.predict(Xt), Ks, Kw, 0.3, ours.dual_coef_, 50)
    # Integer weights = repeated rows: the objective is the same function of f.
    rep = np.repeat(np.arange(X.shape[0]), w.astype(int))
    again = KernelRidge(alpha=0.3, kernel="rbf", gamma=0.4).fit(X[rep], y[rep])
    Kr = again.kernel_(X[rep])
    _close(ours.predict(Xt), again.predict(Xt), Ks, Kr, 0.3, again.dual_coef_, 50)


def test_equals_gp_posterior_mean_when_alpha_is_the_noise_variance():
    """KRR with lambda = sigma^2 is the GP mean ``K_* (K + sigma^2 I)^{-1} y``."""
    X, y, Xt = _data(n=60)
    sigma2 = 0.05
    kernel = 1.7 * RBF(0.8)
    K, Ks = skk.ConstantKernel(1.7) * skk.RBF(0.8), None
    K, Ks = K(X), K(Xt, X)
    gp_mean = Ks @ np.linalg.solve(K + sigma2 * np.eye(len(X)), y)
    krr = KernelRidge(alpha=sigma2, kernel=kernel).fit(X, y)
    _close(krr.predict(Xt), gp_mean, Ks, K, sigma2, krr.dual_coef_, 10.0)


@pytest.mark.parametrize("shape", [(50, 4), (8, 30)])
def test_linear_kernel_is_ridge_without_intercept(shape):
    """Push-through: ``X^T (X X^T + a I)^{-1} = (X^T X + a I)^{-1} X^T``, tall and wide."""
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=shape), rng.normal(size=shape[0])
    Xt = rng.normal(size=(10, shape[1]))
    krr = KernelRidge(alpha=0.7, kernel="linear").fit(X, y)
    ridge = Ridge(alpha=0.7, fit_intercept=False).fit(X, y)
    K = X @ X.T
    _close(krr.predict(Xt), Xt @ ridge.coef_, Xt @ X.T, K, 0.7, krr.dual_coef_)
    # The primal weights are X^T a.
    kappa = np.linalg.cond(K + 0.7 * np.eye(shape[0]))
    np.testing.assert_allclose(
        X.T @ krr.dual_coef_, ridge.coef_, rtol=0, atol=10 * max(shape) * kappa * EPS
        * np.linalg.norm(ridge.coef_))  # fmt: skip


def test_precomputed_equals_named_kernel_and_rejects_bad_kernels():
    X, y, Xt = _data()
    named = KernelRidge(alpha=0.1, kernel="rbf", gamma=0.5).fit(X, y)
    K, Ks = named.kernel_(X), named.kernel_(Xt, X)
    pre = KernelRidge(alpha=0.1, kernel="precomputed").fit(K, y)
    np.testing.assert_array_equal(pre.predict(Ks), named.predict(Xt))
    with pytest.raises(ValueError, match="not positive semi-definite"):
        KernelRidge(kernel="precomputed").fit(K - 2.0 * np.eye(len(K)), y)
    asym = K.copy()
    asym[0, 1] += 0.1
    with pytest.raises(ValueError, match="not symmetric"):
        KernelRidge(kernel="precomputed").fit(asym, y)
    with pytest.raises(ValueError, match="square"):
        KernelRidge(kernel="precomputed").fit(K[:, :10], y)
    with pytest.raises(ValueError, match="expecting 40 features"):
        pre.predict(Ks[:, :5])


def test_bad_inputs_raise_clearly():
    X, y, _ = _data()
    for bad in (np.nan, np.inf):
        Xb = X.copy()
        Xb[3, 1] = bad
        with pytest.raises(ValueError, match=r"NaN|infinity"):
            KernelRidge().fit(Xb, y)
        yb = y.copy()
        yb[0] = bad
        with pytest.raises(ValueError, match=r"NaN|infinity"):
            KernelRidge().fit(X, yb)
    with pytest.raises(ValueError, match="one entry per target"):
        KernelRidge(alpha=[1.0, 2.0]).fit(X, y)
    with pytest.raises(ValueError, match=">= 0"):
        KernelRidge(alpha=[-1.0]).fit(X, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        KernelRidge().fit(X, y[:-1])
    with pytest.raises(ValueError, match="sample_weight"):
        KernelRidge().fit(X, y, sample_weight=np.full(len(y), np.nan))
    # A sigmoid Gram matrix with eigenvalues near -10 cannot be rescued by alpha = 1e-8.
    with pytest.raises(ValueError, match="not positive definite"):
        KernelRidge(alpha=1e-8, kernel="sigmoid", gamma=1.0, coef0=-1.0).fit(X, y)
    # Overflow of a linear kernel at 1e200 is an error, not inf predictions.
    with pytest.raises(ValueError, match="overflow"):
        KernelRidge().fit(X * 1e200, y)


def test_singular_kernel_with_alpha_zero_gets_reported_jitter():
    X, y, _ = _data(n=10)
    X = np.vstack([X, X[:2]])  # repeated rows: K is singular
    y = np.concatenate([y, y[:2]])
    with pytest.warns(NumericalWarning, match="added"):
        krr = KernelRidge(alpha=0.0, kernel="rbf", gamma=0.5).fit(X, y)
    pred = krr.predict(X)
    assert np.all(np.isfinite(pred))
    # Jitter ~ 1e-10 relative: the consistent data are still interpolated.
    np.testing.assert_allclose(pred, y, atol=1e-4)


def test_far_from_origin_is_translation_invariant_for_rbf():
    X, y, Xt = _data()
    base = KernelRidge(alpha=0.1, kernel="rbf", gamma=0.5).fit(X, y).predict(Xt)
    shifted = KernelRidge(alpha=0.1, kernel="rbf", gamma=0.5).fit(X + 1e6, y).predict(Xt + 1e6)
    # The squared distances lose eps * |1e6|^2 relative digits at most: ~2e-4 absolute in the
    # exponent, times kappa(K + alpha I) <= (n + alpha) / alpha, times ||K_*|| ||a||.
    K = KernelRidge(alpha=0.1, kernel="rbf", gamma=0.5).fit(X, y)
    _close(shifted, base, K.kernel_(Xt, X), K.kernel_(X), 0.1, K.dual_coef_, 1e12 * 4)


def test_grid_search_over_kernel_hyperparameters_and_no_mutation():
    X, y, _ = _data()
    kernel = RBF(1.0)
    search = GridSearchCV(
        KernelRidge(kernel=kernel), {"kernel__length_scale": [0.3, 1.0, 3.0], "alpha": [0.1, 1]}
    )
    search.fit(X, y)
    assert search.best_estimator_.kernel_.length_scale in (0.3, 1.0, 3.0)
    assert kernel.length_scale == 1.0
    krr = KernelRidge(kernel=kernel, kernel_params={"length_scale": 2.0}).fit(X, y)
    assert krr.kernel_.length_scale == 2.0 and kernel.length_scale == 1.0
