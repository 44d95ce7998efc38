import numpy as np
import pytest
from sklearn.linear_model import Lasso as SkLasso
from sklearn.linear_model import lasso_path as sk_lasso_path

from mathlearn.exceptions import ConvergenceWarning
from mathlearn.linear_model import Lasso, LinearRegression, lasso_path


def _data(shape, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=shape) + 1.0
    w = rng.normal(size=shape[1]) * (rng.random(shape[1]) < 0.5)
    return X, X @ w + 2.0 + 0.1 * rng.normal(size=shape[0])


@pytest.mark.parametrize("shape", [(50, 8), (10, 30)])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_matches_sklearn(shape, fit_intercept):
    X, y = _data(shape)
    kw = dict(alpha=0.05, fit_intercept=fit_intercept, tol=1e-10, max_iter=100000)
    ours = Lasso(**kw).fit(X, y)
    ref = SkLasso(**kw).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-8)
    assert ours.intercept_ == pytest.approx(ref.intercept_, abs=1e-8)
    assert np.all((ours.coef_ == 0) == (np.abs(ref.coef_) < 1e-12))


def test_optimality_conditions():
    # KKT of (1/2N)||y - Xw||^2 + alpha ||w||_1: x_j^T r / N = alpha sign(w_j) on the support,
    # |x_j^T r| / N <= alpha off it.
    X, y = _data((40, 10), seed=1)
    alpha = 0.5
    m = Lasso(alpha=alpha, fit_intercept=False, tol=1e-12, max_iter=100000).fit(X, y)
    grad = X.T @ (y - X @ m.coef_) / 40
    on = m.coef_ != 0
    assert on.any() and (~on).any()
    np.testing.assert_allclose(grad[on], alpha * np.sign(m.coef_[on]), atol=1e-7)
    assert np.all(np.abs(grad[~on]) <= alpha + 1e-7)


def test_path_matches_sklearn_and_warm_start():
    for shape in [(60, 7), (12, 25)]:
        X, y = _data(shape, seed=2)
        alphas, coefs, gaps = lasso_path(X, y, n_alphas=12, tol=1e-10, max_iter=100000)
        ref_alphas, ref_coefs, _ = sk_lasso_path(X, y, alphas=12, tol=1e-10, max_iter=100000)
        np.testing.assert_allclose(alphas, ref_alphas, rtol=1e-12)
        np.testing.assert_allclose(coefs, ref_coefs, atol=1e-7)
        # scikit-learn's spelling: an int alphas is the number of alphas
        same = lasso_path(X, y, alphas=12, tol=1e-10, max_iter=100000)
        np.testing.assert_array_equal(same[0], alphas)
        np.testing.assert_array_equal(same[1], coefs)
        assert np.all(coefs[:, 0] == 0)  # alpha_max gives the zero solution
        assert np.all(gaps < 1e-10 * (y @ y))
    # warm start from a neighbouring alpha reaches the same solution in fewer sweeps
    X, y = _data((60, 7), seed=3)
    cold = Lasso(alpha=0.01, tol=1e-10, max_iter=100000).fit(X, y)
    warm = Lasso(alpha=0.011, tol=1e-10, max_iter=100000, warm_start=True).fit(X, y)
    warm.set_params(alpha=0.01).fit(X, y)
    np.testing.assert_allclose(warm.coef_, cold.coef_, atol=1e-8)
    assert warm.n_iter_ <= cold.n_iter_


def test_tiny_alpha_approaches_least_squares():
    X, y = _data((30, 4), seed=4)
    a = Lasso(alpha=1e-9, tol=1e-14, max_iter=100000).fit(X, y)
    b = LinearRegression().fit(X, y)
    # the penalty moves the solution by O(alpha N ||(X^T X)^{-1}||) ~ 1e-8 here
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-7)
    with pytest.raises(ValueError, match="alpha"):
        Lasso(alpha=0.0).fit(X, y)


def test_convergence_warning():
    X, y = _data((30, 10), seed=5)
    with pytest.warns(ConvergenceWarning, match="duality gap"):
        Lasso(alpha=1e-4, max_iter=1, tol=1e-12).fit(X, y)


def test_bad_input():
    X, y = _data((10, 3))
    with pytest.raises(ValueError, match="alpha"):
        Lasso(alpha=-0.1).fit(X, y)
    with pytest.raises(ValueError, match="max_iter"):
        Lasso(max_iter=0).fit(X, y)
    with pytest.raises(ValueError, match="tol"):
        Lasso(tol=-1.0).fit(X, y)
    Xb = X.copy()
    Xb[2, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        Lasso().fit(Xb, y)
    with pytest.raises(ValueError, match="inconsistent"):
        Lasso().fit(X, y[:4])
    with pytest.raises(ValueError, match="shape"):
        lasso_path(X, y[:4])
    with pytest.raises(ValueError, match="alphas"):
        lasso_path(X, y, alphas=[-1.0])
    with pytest.raises(ValueError, match="n_alphas"):
        lasso_path(X, y, alphas=0)
    with pytest.raises(ValueError, match="features"):
        Lasso().fit(X, y).predict(X[:, :2])


def _scaled_gap(X, y, w, alpha):
    """P(w) - D(theta) for (1/2N)||y - Xw||^2 + alpha||w||_1 and its dual
    max (1/2N)||y||^2 - (N alpha^2 / 2)||theta - y / (N alpha)||^2, |X^T theta| <= 1,
    at the feasible point theta = r / max(N alpha, ||X^T r||_inf)."""
    n = X.shape[0]
    r = y - X @ w
    primal = r @ r / (2 * n) + alpha * np.abs(w).sum()
    theta = r / max(n * alpha, np.max(np.abs(X.T @ r)))
    dual = y @ y / (2 * n) - n * alpha**2 / 2 * np.sum((theta - y / (n * alpha)) ** 2)
    return primal - dual


def test_dual_gap_is_that_of_the_scaled_objective():
    # scikit-learn reports the gap of its (1/2N)-scaled objective; ours must mean the same
    X, y = _data((40, 12), seed=6)
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    m = Lasso(alpha=0.02, tol=1e-3).fit(X, y)
    ref = _scaled_gap(Xc, yc, m.coef_, 0.02)
    assert ref > 1e-10  # a loose tol leaves a gap worth comparing
    assert m.dual_gap_ == pytest.approx(ref, rel=1e-6)
    alphas, coefs, gaps = lasso_path(Xc, yc, alphas=[0.05, 0.02], tol=1e-3)
    for k in range(2):
        assert gaps[k] == pytest.approx(_scaled_gap(Xc, yc, coefs[:, k], alphas[k]), rel=1e-6)


@pytest.mark.parametrize("shape", [(50, 8), (10, 30)])
def test_positive_matches_sklearn(shape):
    X, y = _data(shape, seed=7)
    kw = dict(alpha=0.02, tol=1e-10, max_iter=100000, positive=True)
    ours = Lasso(**kw).fit(X, y)
    ref = SkLasso(**kw).fit(X, y)
    assert np.all(ours.coef_ >= 0)
    assert np.any(Lasso(alpha=0.02, tol=1e-10, max_iter=100000).fit(X, y).coef_ < 0)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-8)
    assert ours.intercept_ == pytest.approx(ref.intercept_, abs=1e-8)
    # KKT with w >= 0: x_j^T r / N = alpha on the support, <= alpha off it
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    grad = Xc.T @ (yc - Xc @ ours.coef_) / shape[0]
    on = ours.coef_ > 0
    np.testing.assert_allclose(grad[on], 0.02, atol=1e-7)
    assert np.all(grad[~on] <= 0.02 + 1e-7)
    alphas, coefs, gaps = lasso_path(Xc, yc, alphas=6, tol=1e-10, max_iter=100000, positive=True)
    assert np.all(gaps < 1e-10 * (yc @ yc) / shape[0])
    ref_alphas, ref_coefs, _ = sk_lasso_path(
        Xc, yc, alphas=6, tol=1e-10, max_iter=100000, positive=True
    )
    np.testing.assert_allclose(alphas, ref_alphas, rtol=1e-12)
    np.testing.assert_allclose(coefs, ref_coefs, atol=1e-7)
    with pytest.raises(TypeError, match="positive"):
        Lasso(positive="yes").fit(X, y)
