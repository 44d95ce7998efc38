import mpmath
import numpy as np
import pytest
from sklearn.linear_model import LinearRegression as SkLinearRegression

from mathlearn.linear_model import LinearRegression
from mathlearn.preprocessing import PolynomialBasis


def _mp_lstsq(A, y, intercept=False):
    """Exact least squares of the float64 data via the normal equations at 80 digits."""
    if intercept:
        A = np.hstack([A, np.ones((A.shape[0], 1))])
    with mpmath.workdps(80):
        M = mpmath.matrix(A.tolist())
        b = mpmath.matrix(y.tolist())
        sol = mpmath.lu_solve(M.T * M, M.T * b)
        return np.array([float(v) for v in sol])


def _assert_digits(coef, ref, digits=7):
    rel = np.abs(coef - ref) / np.abs(ref)
    assert np.all(rel <= 10.0**-digits), rel.max()


def test_worked_example_spec_001_T6():
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([1.0, 3.0, 2.0, 5.0])
    m = LinearRegression().fit(X, y)
    np.testing.assert_allclose([m.intercept_, m.coef_[0]], [1.1, 1.1], rtol=1e-14)
    assert m.noise_variance_ == pytest.approx(0.675, rel=1e-14)
    # the explicit-bias formula w0 = mean(t) - w1 mean(x) (PRML eq. 3.19)
    assert m.intercept_ == pytest.approx(y.mean() - m.coef_[0] * X.mean(), rel=1e-14)
    Phi = PolynomialBasis(degree=1).fit_transform(X)
    m2 = LinearRegression(fit_intercept=False).fit(Phi, y)
    np.testing.assert_allclose(m2.coef_, [1.1, 1.1], rtol=1e-14)


def test_matches_sklearn_and_standard_errors():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 4))
    y = X @ [1.0, -2.0, 0.5, 3.0] + 0.7 + 0.3 * rng.normal(size=40)
    ours = LinearRegression().fit(X, y)
    ref = SkLinearRegression().fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-12)
    assert ours.intercept_ == pytest.approx(ref.intercept_, rel=1e-12)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-12)
    # classical standard errors: s^2 (A^T A)^{-1}, A = [X, 1], s^2 = RSS / (N - p)
    A = np.hstack([X, np.ones((40, 1))])
    resid = y - ours.predict(X)
    s2 = resid @ resid / (40 - 5)
    se = np.sqrt(s2 * np.diag(np.linalg.inv(A.T @ A)))
    np.testing.assert_allclose(ours.coef_std_error_, se[:4], rtol=1e-10)
    assert ours.intercept_std_error_ == pytest.approx(se[4], rel=1e-10)
    assert ours.noise_variance_ == pytest.approx(resid @ resid / 40, rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_polynomial_degree_10_on_minus9_minus3_mpmath(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-9, -3, 50)
    Phi = np.vander(x, 11, increasing=True)
    assert np.linalg.cond(Phi) > 1e14
    y = np.sin(x) + 0.1 * rng.normal(size=50)
    ref = _mp_lstsq(Phi, y)
    model = LinearRegression(fit_intercept=False).fit(Phi, y)
    _assert_digits(model.coef_, ref, 7)
    # the ML noise variance from the exact residual of the same data
    with mpmath.workdps(60):
        resid = [
            mpmath.mpf(y[i]) - mpmath.fsum(mpmath.mpf(Phi[i, j]) * ref[j] for j in range(11))
            for i in range(50)
        ]
        rss = float(mpmath.fsum(r * r for r in resid))
    assert model.noise_variance_ == pytest.approx(rss / 50, rel=1e-7)
    # with the intercept as an implicit column, same exact solution
    m = LinearRegression().fit(Phi[:, 1:], y)
    _assert_digits(np.append(m.coef_, m.intercept_), _mp_lstsq(Phi[:, 1:], y, True), 7)


@pytest.mark.parametrize(("lo", "hi", "degree", "n"), [(-9, -3, 12, 40), (-9, -3, 10, 11)])
def test_extreme_condition_numbers_mpmath(lo, hi, degree, n):
    # cond ~ 1e18 (degree 12) and a square interpolation system with cond ~ 1e17
    rng = np.random.default_rng(5)
    x = rng.uniform(lo, hi, n)
    Phi = np.vander(x, degree + 1, increasing=True)
    y = np.cos(x) + 0.01 * rng.normal(size=n)
    model = LinearRegression(fit_intercept=False).fit(Phi, y)
    _assert_digits(model.coef_, _mp_lstsq(Phi, y), 7)


@pytest.mark.parametrize(("degree", "n"), [(14, 300), (15, 60)])
def test_full_rank_design_is_not_treated_as_rank_deficient(degree, n):
    # cond(X) ~ 1e21-1e23 but cond(X D) ~ 1e13-1e14 after equilibration: the exact solution
    # is well defined and refinement reaches it. A rank threshold growing with N (N eps)
    # used to send these to the minimum-norm SVD solution, which has no correct digit.
    rng = np.random.default_rng(7)
    x = rng.uniform(-9, -3, n)
    Phi = np.vander(x, degree + 1, increasing=True)
    y = np.cos(x) + 0.01 * rng.normal(size=n)
    model = LinearRegression(fit_intercept=False).fit(Phi, y)
    assert model.rank_ == degree + 1
    _assert_digits(model.coef_, _mp_lstsq(Phi, y), 7)


def test_duplicated_column_many_samples_gives_minimum_norm():
    # rounding in the QR of 2000 rows lifts the estimated rcond of an exactly singular
    # design above eps; refinement stalls there and the minimum-norm solution is returned
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 3))
    X = np.hstack([X, X[:, :1]])
    y = rng.normal(size=2000)
    m = LinearRegression(fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(m.coef_, np.linalg.pinv(X) @ y, rtol=1e-10)
    assert m.rank_ == 3


def test_columns_scaled_by_1e10_mpmath():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 5)) * np.array([1e-5, 1.0, 1e5, 1e-3, 1e3])
    X[:, 3] = X[:, 2] * 1e-8 + 1e-9 * rng.normal(size=30)  # nearly collinear too
    y = rng.normal(size=30)
    ref = _mp_lstsq(X, y, True)
    m = LinearRegression().fit(X, y)
    _assert_digits(np.append(m.coef_, m.intercept_), ref, 7)


def test_rank_deficient_gives_minimum_norm():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    X = np.hstack([X, X[:, :1]])
    y = rng.normal(size=20)
    m = LinearRegression(fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(m.coef_, np.linalg.pinv(X) @ y, rtol=1e-10)
    assert m.rank_ == 3
    assert np.all(np.isinf(m.coef_std_error_))


def _mp_min_norm(B, y):
    """Minimum-norm solution ``B^T (B B^T)^{-1} y`` of a full-row-rank system, 80 digits."""
    with mpmath.workdps(80):
        M = mpmath.matrix(B.tolist())
        b = mpmath.matrix(y.tolist())
        sol = M.T * mpmath.lu_solve(M * M.T, b)
        return np.array([float(v) for v in sol])


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_wide_design_gives_minimum_norm_solution_mpmath(fit_intercept):
    # N < D: the QR of B^T and gelsd on the N x N factor (see _wide_min_norm)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(12, 40)) * np.exp(rng.uniform(-3, 3, 40))
    y = rng.normal(size=12)
    m = LinearRegression(fit_intercept=fit_intercept).fit(X, y)
    B = np.hstack([X, np.ones((12, 1))]) if fit_intercept else X
    ref = _mp_min_norm(B, y)
    got = np.append(m.coef_, m.intercept_) if fit_intercept else m.coef_
    # cond(B) < 1e3 here: the error bound eps cond(B) ||x|| is far below the tolerance
    assert np.linalg.cond(B) < 1e3
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-11 * np.abs(ref).max())
    assert m.rank_ == 12
    np.testing.assert_allclose(m.predict(X), y, rtol=0, atol=1e-11 * np.abs(y).max())


def test_wide_rank_deficient_design_gives_minimum_norm():
    # rank 2 < N = 8 < D: the singular values below max(N, D) eps times the largest are
    # dropped, as LAPACK gelsd does on the whole design
    rng = np.random.default_rng(5)
    X = rng.normal(size=(8, 2)) @ rng.normal(size=(2, 30))
    y = rng.normal(size=8)
    m = LinearRegression().fit(X, y)
    B = np.hstack([X, np.ones((8, 1))])
    ref = np.linalg.pinv(B, rcond=31 * np.finfo(float).eps) @ y
    np.testing.assert_allclose(np.append(m.coef_, m.intercept_), ref, rtol=1e-10)
    assert m.rank_ == 3
    assert np.all(np.isinf(m.coef_std_error_))


def test_bad_input():
    X = np.ones((5, 2))
    y = np.arange(5.0)
    for bad in (np.nan, np.inf):
        Xb = np.random.default_rng(0).normal(size=(5, 2))
        Xb[1, 1] = bad
        with pytest.raises(ValueError, match=r"NaN|infinity"):
            LinearRegression().fit(Xb, y)
        yb = y.copy()
        yb[0] = bad
        with pytest.raises(ValueError, match=r"NaN|infinity"):
            LinearRegression().fit(X, yb)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        LinearRegression().fit(X, y[:3])
    with pytest.raises(ValueError, match="0 sample"):
        LinearRegression().fit(np.empty((0, 2)), np.empty(0))
    with pytest.raises(ValueError, match="2D array"):
        LinearRegression().fit(np.arange(5.0), y)
    with pytest.raises(TypeError, match="fit_intercept"):
        LinearRegression(fit_intercept="yes").fit(X, y)
    m = LinearRegression().fit(np.random.default_rng(0).normal(size=(5, 2)), y)
    with pytest.raises(ValueError, match="features"):
        m.predict(np.ones((2, 3)))
