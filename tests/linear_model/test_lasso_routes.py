"""The compiled lasso (``mathlearn._ext._cd``) against scikit-learn and the NumPy route.

The compiled residual route screens features by the gap safe rule and sweeps a working set
of nonzero weights between full sweeps; neither changes the optimum, only the path to it.
Every route stops at a duality gap below ``tol ||y||^2``; at ``tol = 1e-10`` on these
problems (unique solutions: continuous data in general position) the coefficients agree
to 1e-7, the bound the other lasso tests use. The routes are switched with
``MATHLEARN_DISABLE_EXT``; without the library the comparison with the NumPy route is skipped.
"""

import numpy as np
import pytest
from sklearn.linear_model import Lasso as SkLasso
from sklearn.linear_model import lasso_path as sk_lasso_path

from mathlearn import _ext
from mathlearn.linear_model import ElasticNet, Lasso, lasso_path

built = pytest.mark.skipif(_ext.load("_cd") is None, reason="mathlearn._ext._cd is not built")


def _data(shape, seed=0, k=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=shape)
    w = np.zeros(shape[1])
    w[rng.choice(shape[1], k, replace=False)] = rng.normal(size=k) * 3
    return X, X @ w + 0.3 * rng.normal(size=shape[0])


def _scaled_gap(X, y, w, alpha, positive=False):
    """P(w) - D(theta) of (1/2N)||y - Xw||^2 + alpha||w||_1 at theta = r / max(N alpha,
    ||X^T r||_inf) (the largest positive correlation with w >= 0)."""
    n = X.shape[0]
    r = y - X @ w
    c = X.T @ r
    theta = r / max(n * alpha, np.max(c if positive else np.abs(c)))
    primal = r @ r / (2 * n) + alpha * np.abs(w).sum()
    dual = y @ y / (2 * n) - n * alpha**2 / 2 * np.sum((theta - y / (n * alpha)) ** 2)
    return primal - dual


@pytest.mark.parametrize("positive", [False, True])
@pytest.mark.parametrize("shape", [(30, 150), (200, 40)])
def test_path_matches_sklearn(shape, positive):
    # wide: residual route with screening; tall with D > 32: Gram route
    X, y = _data(shape, seed=1)
    kw = dict(tol=1e-10, max_iter=100000, positive=positive)
    alphas, coefs, gaps = lasso_path(X, y, n_alphas=15, **kw)
    ref_alphas, ref_coefs, _ = sk_lasso_path(X, y, alphas=15, **kw)
    np.testing.assert_allclose(alphas, ref_alphas, rtol=1e-12)
    np.testing.assert_allclose(coefs, ref_coefs, atol=1e-7)
    assert np.all(gaps < 1e-10 * (y @ y) / shape[0])
    # the reported gap is that of every feature, screened ones included
    for k in (3, 9, 14):
        exact = _scaled_gap(X, y, coefs[:, k], alphas[k], positive)
        assert gaps[k] == pytest.approx(exact, rel=1e-6, abs=1e-13 * (y @ y))


def test_loose_tolerance_gap_is_reported_exactly():
    X, y = _data((40, 300), seed=2, k=20)
    alphas, coefs, gaps = lasso_path(X, y, n_alphas=10, tol=1e-3)
    assert np.all(gaps < 1e-3 * (y @ y) / 40)
    for k in range(1, 10):
        assert gaps[k] == pytest.approx(_scaled_gap(X, y, coefs[:, k], alphas[k]), rel=1e-6)


def test_single_fits_match_sklearn_wide():
    X, y = _data((25, 120), seed=3)
    kw = dict(alpha=0.05, tol=1e-12, max_iter=100000)
    ours = Lasso(**kw).fit(X, y)
    ref = SkLasso(**kw).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-7)
    # KKT: x_j^T r / N = alpha sign(w_j) on the support, |x_j^T r| / N <= alpha off it
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    grad = Xc.T @ (yc - Xc @ ours.coef_) / 25
    on = ours.coef_ != 0
    np.testing.assert_allclose(grad[on], 0.05 * np.sign(ours.coef_[on]), atol=1e-7)
    assert np.all(np.abs(grad[~on]) <= 0.05 + 1e-7)
    enet = ElasticNet(alpha=0.05, l1_ratio=0.5, tol=1e-12, max_iter=100000).fit(X, y)
    from sklearn.linear_model import ElasticNet as SkENet

    ref = SkENet(alpha=0.05, l1_ratio=0.5, tol=1e-12, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(enet.coef_, ref.coef_, atol=1e-7)


@built
@pytest.mark.parametrize("shape", [(60, 12), (15, 30)])
def test_compiled_and_numpy_routes_agree(shape, monkeypatch):
    # at most 32 features the fallback is the NumPy Gram route (no compilation)
    X, y = _data(shape, seed=4)
    kw = dict(n_alphas=8, tol=1e-12, max_iter=100000)
    a1, c1, g1 = lasso_path(X, y, **kw)
    monkeypatch.setenv(_ext.DISABLE_ENV, "1")
    a2, c2, g2 = lasso_path(X, y, **kw)
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_allclose(c1, c2, atol=1e-8)
    assert np.all(g1 < 1e-12 * (y @ y)) and np.all(g2 < 1e-12 * (y @ y))


def test_max_iter_one_does_not_converge():
    from mathlearn.exceptions import ConvergenceWarning

    X, y = _data((30, 80), seed=5, k=15)
    with pytest.warns(ConvergenceWarning, match="duality gap"):
        Lasso(alpha=1e-3, max_iter=1, tol=1e-12).fit(X, y)
