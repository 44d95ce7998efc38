import numpy as np
import pytest
from sklearn.linear_model import Ridge as SkRidge

from mathlearn.linear_model import LinearRegression, Ridge


@pytest.mark.parametrize("shape", [(50, 6), (8, 30)])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_matches_sklearn_both_sides(shape, fit_intercept):
    rng = np.random.default_rng(0)
    X = rng.normal(size=shape) + 3.0
    y = X @ rng.normal(size=shape[1]) + 5.0 + rng.normal(size=shape[0])
    ours = Ridge(alpha=0.7, fit_intercept=fit_intercept).fit(X, y)
    ref = SkRidge(alpha=0.7, fit_intercept=fit_intercept, solver="svd").fit(X, y)
    assert ours.solver_ == ("primal" if shape[0] >= shape[1] else "dual")
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-9, atol=1e-12)
    assert ours.intercept_ == pytest.approx(ref.intercept_, rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-9)


def test_closed_form_map_and_intercept_not_penalised():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(12, 3))
    y = rng.normal(size=12) + 100.0
    lam = 2.5
    # Imperial "Mathematics for Inference and Machine Learning" eq. 1.180
    w = np.linalg.solve(X.T @ X + lam * np.eye(3), X.T @ y)
    np.testing.assert_allclose(Ridge(alpha=lam, fit_intercept=False).fit(X, y).coef_, w)
    # the offset is free: a huge alpha shrinks w to 0 and leaves intercept = mean(y)
    m = Ridge(alpha=1e12).fit(X, y)
    assert m.intercept_ == pytest.approx(y.mean(), rel=1e-9)
    assert np.max(np.abs(m.coef_)) < 1e-8


def test_alpha_zero_is_least_squares():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 4))
    y = rng.normal(size=30)
    a = Ridge(alpha=0.0).fit(X, y)
    b = LinearRegression().fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10)


def test_bad_input():
    X = np.random.default_rng(0).normal(size=(6, 2))
    y = np.arange(6.0)
    with pytest.raises(ValueError, match="alpha"):
        Ridge(alpha=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="alpha"):
        Ridge(alpha=np.nan).fit(X, y)
    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        Ridge(alpha=0.0).fit(np.hstack([X, X]), y)
    Xb = X.copy()
    Xb[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Ridge().fit(Xb, y)
    with pytest.raises(ValueError, match="inconsistent"):
        Ridge().fit(X, y[:2])
    with pytest.raises(ValueError, match="features"):
        Ridge().fit(X, y).predict(np.ones((1, 5)))
