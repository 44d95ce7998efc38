"""ElasticNet against scikit-learn, its optimality conditions and its limits (lasso, grouping)."""

import numpy as np
import pytest
import sklearn.linear_model as sk

from mathlearn.linear_model import ElasticNet, Lasso


def _data(rng, n=80, d=6):
    X = rng.normal(size=(n, d))
    w = np.zeros(d)
    w[:3] = [2.0, -1.0, 0.5]
    return X, X @ w + 0.3 * rng.normal(size=n) + 1.0


@pytest.mark.parametrize(("alpha", "l1_ratio"), [(0.1, 0.5), (0.02, 0.1), (0.5, 0.9), (0.1, 1.0)])
@pytest.mark.parametrize("d", [6, 40])  # the NumPy route and the compiled route (D > 32)
def test_matches_scikit_learn_and_kkt(rng, alpha, l1_ratio, d):
    X, y = _data(rng, d=d)
    ours = ElasticNet(alpha=alpha, l1_ratio=l1_ratio, tol=1e-12, max_iter=20000).fit(X, y)
    peer = sk.ElasticNet(alpha=alpha, l1_ratio=l1_ratio, tol=1e-12, max_iter=20000).fit(X, y)
    # Both solve the same strongly convex problem to a duality gap of 1e-12 ||y||^2: the
    # weights agree to about sqrt(gap / strong convexity) = sqrt(1e-12 / (alpha (1 - rho))).
    tol = 10 * np.sqrt(
        1e-12 * (y - y.mean()) @ (y - y.mean()) / len(y) / max(alpha * (1 - l1_ratio), 1e-3)
    )
    np.testing.assert_allclose(ours.coef_, peer.coef_, atol=tol)
    assert ours.intercept_ == pytest.approx(peer.intercept_, abs=tol * 10)
    # KKT: (1/N) x_j^T r - alpha (1 - rho) w_j = alpha rho sign(w_j) if w_j != 0, else in
    # [-alpha rho, alpha rho].
    r = y - X @ ours.coef_ - ours.intercept_
    g = X.T @ r / len(y) - alpha * (1 - l1_ratio) * ours.coef_
    nz = ours.coef_ != 0
    np.testing.assert_allclose(g[nz], alpha * l1_ratio * np.sign(ours.coef_[nz]), atol=1e-5)
    assert np.all(np.abs(g[~nz]) <= alpha * l1_ratio + 1e-5)


def test_l1_ratio_one_is_the_lasso(rng):
    X, y = _data(rng)
    a = ElasticNet(alpha=0.1, l1_ratio=1.0, tol=1e-10).fit(X, y)
    b = Lasso(alpha=0.1, tol=1e-10).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_grouping_of_identical_features(rng):
    # The L2 part makes the solution unique: identical columns get equal weights (the lasso
    # would be indifferent to how it splits them).
    x = rng.normal(size=(60, 1))
    X = np.hstack([x, x, rng.normal(size=(60, 1))])
    y = 3 * x[:, 0] + 0.1 * rng.normal(size=60)
    w = ElasticNet(alpha=0.05, l1_ratio=0.5, tol=1e-12, max_iter=10000).fit(X, y).coef_
    assert w[0] == pytest.approx(w[1], rel=1e-8)


def test_sample_weight_and_positive(rng):
    X, y = _data(rng)
    sw = rng.uniform(0.5, 2.0, size=len(y))
    ours = ElasticNet(alpha=0.05, l1_ratio=0.3, tol=1e-12, max_iter=20000, positive=True)
    peer = sk.ElasticNet(alpha=0.05, l1_ratio=0.3, tol=1e-12, max_iter=20000, positive=True)
    ours.fit(X, y, sample_weight=sw)
    peer.fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, peer.coef_, atol=1e-6)
    assert np.all(ours.coef_ >= 0)


def test_bad_input(rng):
    X, y = _data(rng)
    with pytest.raises(ValueError, match="l1_ratio"):
        ElasticNet(l1_ratio=0.0).fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        ElasticNet(alpha=0.0).fit(X, y)
    with pytest.raises(ValueError, match=r"NaN|infinity"):
        ElasticNet().fit(np.where(X > 2, np.nan, X), y)


@pytest.mark.parametrize("d", [6, 300])
def test_compiled_route_equals_the_augmented_lasso(rng, monkeypatch, d):
    # The compiled route never forms the D augmented rows sqrt(N alpha (1 - rho)) I; the
    # fallback routes solve the lasso on the augmented data. Both certify a duality gap of
    # 1e-10 ||y||^2 on the same strongly convex problem, so the weights agree to
    # sqrt(gap / strong convexity) (as against scikit-learn above).
    pytest.importorskip("numba")
    from mathlearn import _ext

    if _ext.load("_cd") is None:
        pytest.skip("needs the compiled mathlearn._ext._cd")
    X, y = _data(rng, n=120, d=d)
    alpha, l1_ratio = 0.05, 0.4
    kw = dict(alpha=alpha, l1_ratio=l1_ratio, tol=1e-10, max_iter=50000)
    compiled = ElasticNet(**kw).fit(X, y)
    monkeypatch.setenv("MATHLEARN_DISABLE_EXT", "1")
    augmented = ElasticNet(**kw).fit(X, y)
    tol = 10 * np.sqrt(1e-10 * np.var(y) / (alpha * (1 - l1_ratio)))
    np.testing.assert_allclose(compiled.coef_, augmented.coef_, atol=tol)
    assert compiled.intercept_ == pytest.approx(augmented.intercept_, abs=10 * tol)
    assert compiled.dual_gap_ <= 1e-10 * np.var(y) * 1.000001


def test_wide_data_form_no_d_by_d_block(rng):
    # D = 3 000 >> N = 50: the augmented rows would be a 72 MB block; the compiled route
    # keeps the centred copy of X (1.2 MB) and O(N + D) vectors.
    from mathlearn import _ext

    if _ext.load("_cd") is None:
        pytest.skip("needs the compiled mathlearn._ext._cd")
    import tracemalloc

    X = rng.normal(size=(50, 3000))
    y = X[:, :5].sum(axis=1) + 0.1 * rng.normal(size=50)
    tracemalloc.start()
    ElasticNet(alpha=0.1, l1_ratio=0.5).fit(X, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 4 * X.nbytes
