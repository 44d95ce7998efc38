"""Sample weights, extreme scales and bad hyperparameters for the linear models.

References: scikit-learn's estimators with the same ``sample_weight`` (weighted least
squares, ridge, lasso, SGD), repeating samples (an integer weight is that many copies), exact
scale invariance (``X -> c X`` maps the solution ``w -> w / c`` and, for the penalised
models, ``alpha`` as derived in each test), and mpmath for the posterior mean on an
ill-conditioned design.
"""

import mpmath
import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Lasso as SkLasso
from sklearn.linear_model import LinearRegression as SkLinearRegression
from sklearn.linear_model import Ridge as SkRidge
from sklearn.linear_model import SGDRegressor as SkSGDRegressor

from mathlearn.exceptions import InvalidParameterError
from mathlearn.linear_model import (
    BayesianLinearRegression,
    Lasso,
    LinearRegression,
    Ridge,
    SGDRegressor,
    lasso_path,
)


def _data(n=40, m=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m)) + 2.0
    y = X @ rng.normal(size=m) + 0.7 + 0.3 * rng.normal(size=n)
    w = rng.integers(0, 4, size=n).astype(float)
    w[0] = 0.0
    return X, y, w


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_weighted_least_squares_matches_sklearn_and_repetition(fit_intercept):
    X, y, w = _data()
    ours = LinearRegression(fit_intercept=fit_intercept).fit(X, y, sample_weight=w)
    ref = SkLinearRegression(fit_intercept=fit_intercept).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-11)
    assert ours.intercept_ == pytest.approx(ref.intercept_, rel=1e-11, abs=1e-12)
    rep = LinearRegression(fit_intercept=fit_intercept).fit(
        np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int))
    )
    np.testing.assert_allclose(ours.coef_, rep.coef_, rtol=1e-11)
    # frequency weights: the noise variance and standard errors are those of the copies
    assert ours.noise_variance_ == pytest.approx(rep.noise_variance_, rel=1e-10)
    np.testing.assert_allclose(ours.coef_std_error_, rep.coef_std_error_, rtol=1e-10)


@pytest.mark.parametrize("shape", [(40, 4), (8, 20)])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_weighted_ridge_matches_sklearn(shape, fit_intercept):
    X, y, w = _data(*shape, seed=1)
    w += 0.5  # the dual route needs every row (alpha > 0 keeps it definite anyway)
    ours = Ridge(alpha=0.7, fit_intercept=fit_intercept).fit(X, y, sample_weight=w)
    ref = SkRidge(alpha=0.7, fit_intercept=fit_intercept, solver="svd").fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-9, atol=1e-12)
    assert ours.intercept_ == pytest.approx(ref.intercept_, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_weighted_lasso_matches_sklearn(fit_intercept):
    X, y, w = _data(50, 8, seed=2)
    kw = dict(alpha=0.05, fit_intercept=fit_intercept, tol=1e-12, max_iter=100000)
    ours = Lasso(**kw).fit(X, y, sample_weight=w)
    ref = SkLasso(**kw).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-8)
    assert ours.intercept_ == pytest.approx(ref.intercept_, abs=1e-8)
    rep = Lasso(**kw).fit(np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int)))
    np.testing.assert_allclose(ours.coef_, rep.coef_, atol=1e-8)
    assert ours.dual_gap_ == pytest.approx(rep.dual_gap_, rel=1e-3, abs=1e-14)


def test_weighted_sgd_is_sklearns_recurrence():
    # a weight s scales the update of its sample by s in both libraries
    X, y, w = _data(30, 3, seed=3)
    for epochs in (1, 3):
        kw = dict(learning_rate="constant", eta0=0.01, max_iter=epochs, tol=None, shuffle=False)
        ours = SGDRegressor(**kw).fit(X, y, sample_weight=w)
        ref = SkSGDRegressor(penalty=None, **kw).fit(X, y, sample_weight=w)
        np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-10)
        assert ours.intercept_ == pytest.approx(ref.intercept_[0], rel=1e-10)
    online = SGDRegressor(learning_rate="constant", eta0=0.01, shuffle=False)
    online.partial_fit(X[:10], y[:10], sample_weight=w[:10])
    online.partial_fit(X[10:], y[10:], sample_weight=w[10:])
    ref = SkSGDRegressor(penalty=None, learning_rate="constant", eta0=0.01, shuffle=False)
    ref.partial_fit(X[:10], y[:10], sample_weight=w[:10])
    ref.partial_fit(X[10:], y[10:], sample_weight=w[10:])
    np.testing.assert_allclose(online.coef_, ref.coef_, rtol=1e-10)
    with pytest.raises(NotImplementedError, match="sample_weight"):
        SGDRegressor(alpha=0.1).fit(X, y, sample_weight=w)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_weighted_bayesian_regression_equals_repeated_samples(fit_intercept):
    X, y, w = _data(30, 4, seed=4)
    reps = w.astype(int)
    for kw in ({}, {"prior_precision": 0.5, "noise_precision": 3.0}):
        ours = BayesianLinearRegression(fit_intercept=fit_intercept, tol=1e-12, **kw)
        ours.fit(X, y, sample_weight=w)
        rep = BayesianLinearRegression(fit_intercept=fit_intercept, tol=1e-12, **kw)
        rep.fit(np.repeat(X, reps, axis=0), np.repeat(y, reps))
        assert ours.prior_precision_ == pytest.approx(rep.prior_precision_, rel=1e-9)
        assert ours.noise_precision_ == pytest.approx(rep.noise_precision_, rel=1e-9)
        np.testing.assert_allclose(ours.coef_, rep.coef_, rtol=1e-9)
        np.testing.assert_allclose(ours.coef_cov_, rep.coef_cov_, rtol=1e-8, atol=1e-14)
        assert ours.log_evidence_ == pytest.approx(rep.log_evidence_, rel=1e-10)
    if not fit_intercept:
        seq = BayesianLinearRegression(
            fit_intercept=False, prior_precision=0.5, noise_precision=3.0
        )
        seq.partial_fit(X[:10], y[:10], sample_weight=w[:10])
        seq.partial_fit(X[10:], y[10:], sample_weight=w[10:])
        np.testing.assert_allclose(seq.coef_, rep.coef_, rtol=1e-9)
        assert seq.log_evidence_ == pytest.approx(rep.log_evidence_, rel=1e-10)


def test_bayesian_posterior_mean_on_ill_conditioned_design_mpmath():
    # raw powers 0-7 of the diabetes ages: cond(Phi) ~ 6e15. The mean is the refined
    # solution of the augmented least-squares system, so it is the float64 rounding of the
    # exact posterior mean up to the rounding of sqrt(alpha / beta): a few eps (the
    # SVD route had 1.7e-4 relative error here).
    X, y = load_diabetes(return_X_y=True, scaled=False)
    Phi = np.vander(X[:, 0], 8, increasing=True)
    for alpha, beta in [(1.0, 1 / float(np.var(y))), (1e-3, 1e-3), (1e2, 1.0)]:
        m = BayesianLinearRegression(
            fit_intercept=False, prior_precision=alpha, noise_precision=beta
        ).fit(Phi, y)
        with mpmath.workdps(80):
            M = mpmath.matrix(Phi.tolist())
            A = mpmath.mpf(alpha) * mpmath.eye(8) + mpmath.mpf(beta) * (M.T * M)
            ref = mpmath.lu_solve(A, mpmath.mpf(beta) * (M.T * mpmath.matrix(y.tolist())))
            ref = np.array([float(v) for v in ref])
        np.testing.assert_allclose(m.coef_, ref, rtol=1e-12)


# Extreme scales: least squares is invariant under X -> c X (w -> w / c); the data are
# scaled by exact powers of two inside, so the answers must agree to rounding.
SCALES = [1e300, 1e-300]


@pytest.mark.parametrize("c", SCALES)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_linear_regression_extreme_scales(c, fit_intercept):
    X, y, w = _data()
    a = LinearRegression(fit_intercept=fit_intercept).fit(X, y)
    b = LinearRegression(fit_intercept=fit_intercept).fit(X * c, y)
    np.testing.assert_allclose(b.coef_ * c, a.coef_, rtol=1e-12)
    assert b.intercept_ == pytest.approx(a.intercept_, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(b.predict(X * c), a.predict(X), rtol=1e-12)
    np.testing.assert_allclose(b.coef_std_error_ * c, a.coef_std_error_, rtol=1e-10)
    # and with weights
    bw = LinearRegression(fit_intercept=fit_intercept).fit(X * c, y, sample_weight=w)
    aw = LinearRegression(fit_intercept=fit_intercept).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(bw.predict(X * c), aw.predict(X), rtol=1e-12)


def test_ridge_extreme_scales():
    X, y, _ = _data()
    ls = LinearRegression().fit(X, y)
    # X * 1e300: alpha = 1 is alpha = 1e-600 on X, negligible: the least-squares solution
    big = Ridge(alpha=1.0).fit(X * 1e300, y)
    np.testing.assert_allclose(big.coef_ * 1e300, ls.coef_, rtol=1e-12)
    np.testing.assert_allclose(big.predict(X * 1e300), ls.predict(X), rtol=1e-12)
    # X * 1e-300: alpha = 1 is alpha = 1e600 on X, so w = Xc^T yc / alpha to within 1e-600
    Xs = X * 1e-300
    small = Ridge(alpha=2.0).fit(Xs, y)
    expected = (Xs - Xs.mean(axis=0)).T @ (y - y.mean()) / 2.0
    np.testing.assert_allclose(small.coef_, expected, rtol=1e-12)
    assert small.intercept_ == pytest.approx(y.mean(), rel=1e-12)
    # least squares (alpha = 0) at 1e-300 needs the scaling: X^T X underflows to 0
    zero = Ridge(alpha=0.0).fit(Xs, y)
    np.testing.assert_allclose(zero.predict(Xs), ls.predict(X), rtol=1e-10)


@pytest.mark.parametrize("c", SCALES)
def test_lasso_extreme_scales(c):
    # (1/2N)||y - c X w'||^2 + alpha c ||w'||_1 is the lasso of (X, alpha) in w = c w'
    X, y, _ = _data(50, 6, seed=5)
    kw = dict(tol=1e-12, max_iter=100000)
    a = Lasso(alpha=0.05, **kw).fit(X, y)
    b = Lasso(alpha=0.05 * c, **kw).fit(X * c, y)
    np.testing.assert_allclose(b.coef_ * c, a.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.predict(X * c), a.predict(X), rtol=1e-10)
    assert np.isfinite(b.dual_gap_)
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    alphas, coefs, _ = lasso_path(Xc, yc, n_alphas=5, **kw)
    alphas_c, coefs_c, gaps_c = lasso_path(Xc * c, yc, n_alphas=5, **kw)
    np.testing.assert_allclose(alphas_c / c, alphas, rtol=1e-13)
    np.testing.assert_allclose(coefs_c * c, coefs, atol=1e-10)
    assert np.all(np.isfinite(gaps_c)) and np.all(gaps_c < 1e-12 * (yc @ yc))
    same = lasso_path(Xc * c, yc, alphas=alphas * c, **kw)[1]
    np.testing.assert_allclose(same * c, coefs, atol=1e-10)


def test_bayesian_regression_extreme_scales():
    X, y, _ = _data()
    # a given prior dominates at X * 1e-300: m_N = (beta / alpha) Xc^T tc to within 1e-600
    Xs = X * 1e-300
    m = BayesianLinearRegression(prior_precision=2.0, noise_precision=8.0).fit(Xs, y)
    expected = 4.0 * (Xs - Xs.mean(axis=0)).T @ (y - y.mean())
    np.testing.assert_allclose(m.coef_, expected, rtol=1e-12)
    np.testing.assert_allclose(m.coef_cov_, np.eye(4) / 2.0, rtol=1e-12, atol=1e-15)
    # where the evidence-maximising prior precision (~1e+-600) or the posterior covariance
    # (~1e-600 at X * 1e300) is not a float64, the fit says so
    for c in SCALES:
        with pytest.raises(ValueError, match="outside the range"):
            BayesianLinearRegression().fit(X * c, y)
    with pytest.raises(ValueError, match="outside the range"):
        BayesianLinearRegression(prior_precision=1.0, noise_precision=1.0).fit(X * 1e300, y)
    # moderate extremes (X * 1e100) are fitted: the fixed point runs on scaled data
    a = BayesianLinearRegression(tol=1e-12).fit(X, y)
    b = BayesianLinearRegression(tol=1e-12).fit(X * 2.0**400, y)
    np.testing.assert_allclose(b.predict(X * 2.0**400), a.predict(X), rtol=1e-9)
    assert b.prior_precision_ == pytest.approx(a.prior_precision_ * 2.0**800, rel=1e-9)


@pytest.mark.parametrize("c", SCALES)
def test_sgd_extreme_scales_are_named(c):
    X, y, _ = _data()
    with pytest.raises(ValueError, match="overflow" if c > 1 else "underflow"):
        SGDRegressor(max_iter=5, tol=None).fit(X * c, y)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Lasso(max_iter="10"),
        lambda: Lasso(max_iter=np.nan),
        lambda: Lasso(tol="abc"),
        lambda: Lasso(tol=np.nan),
        lambda: BayesianLinearRegression(max_iter=2.5),
        lambda: BayesianLinearRegression(tol="1e-3"),
        lambda: SGDRegressor(max_iter=np.nan),
        lambda: SGDRegressor(tol="abc"),
        lambda: SGDRegressor(learning_rate="abc"),
        lambda: SGDRegressor(eta0="abc"),
        lambda: SGDRegressor(random_state=-1),
        lambda: Ridge(alpha="1"),
        lambda: LinearRegression(fit_intercept=1),
    ],
)
def test_bad_hyperparameters_name_the_parameter(make):
    X, y, _ = _data()
    est = make()
    with pytest.raises(
        InvalidParameterError, match=rf"The '\w+' parameter of {type(est).__name__}"
    ):
        est.fit(X, y)


def test_lasso_path_arguments_are_validated():
    X, y, _ = _data()
    for kw, name in [
        ({"max_iter": "5"}, "max_iter"),
        ({"tol": np.nan}, "tol"),
        ({"eps": 0.0}, "eps"),
        ({"positive": "no"}, "positive"),
        ({"alphas": -3}, "n_alphas"),
        ({"n_alphas": 2.5}, "n_alphas"),
    ]:
        with pytest.raises(InvalidParameterError, match=f"The '{name}' parameter of lasso_path"):
            lasso_path(X, y, **kw)
    with pytest.raises(ValueError, match="sample_weight"):
        LinearRegression().fit(X, y, sample_weight=-np.ones(len(y)))
    with pytest.raises(ValueError, match="sample_weight"):
        Ridge().fit(X, y, sample_weight=np.ones(3))


def test_noise_variance_of_targets_near_the_range_limits():
    # Targets at 2^515 (about 1e155): the variance (about 1e304) is representable, although
    # the square of the targets' scale factor (2^-1030) underflows. Scaling y by a power of
    # two is exact, so the variance scales by 2^1030 exactly, up to the rounding of the fit.
    import warnings

    from mathlearn.exceptions import NumericalWarning

    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 3))
    y = X @ [1.0, -2.0, 0.5] + 1e-3 * rng.standard_normal(60)
    base = LinearRegression().fit(X, y)
    big = LinearRegression().fit(X, y * 2.0**515)
    expected = base.noise_variance_ * 2.0**515 * 2.0**515
    assert np.isfinite(big.noise_variance_)
    assert big.noise_variance_ == pytest.approx(expected, rel=1e-12)
    # At 2^700 (about 1e211) the variance (about 1e416) is beyond float64: inf, with a
    # warning that names it, and the coefficients are still right.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        huge = LinearRegression().fit(X, y * 2.0**700)
    assert huge.noise_variance_ == np.inf
    assert any(
        issubclass(w.category, NumericalWarning)
        and "beyond the range of float64" in str(w.message)
        for w in caught
    )
    np.testing.assert_allclose(huge.coef_ / 2.0**700, base.coef_, rtol=1e-12)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize(
    "make", [LinearRegression, Ridge, lambda: Lasso(0.1), BayesianLinearRegression]
)
def test_non_finite_x_is_refused_by_the_column_maxima(make, bad):
    # these fits check X's finiteness from the column maxima of prepare_data (no pass of
    # their own): a bad entry anywhere, in the folded runs or the remainder rows, is seen
    rng = np.random.default_rng(0)
    for row in (3, 4999):
        X = rng.normal(size=(5000, 7))
        X[row, 5] = bad
        with pytest.raises(ValueError, match="NaN" if np.isnan(bad) else "infinity"):
            make().fit(X, rng.normal(size=5000))


@pytest.mark.parametrize("scale", [1.0, 1e-300, 1e300])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("per_column", [False, True])
def test_column_ordered_preparation_equals_the_row_route(scale, weighted, per_column):
    # order="F" with centring prepares one column-ordered copy in place; the row route
    # computes the same values (exact power-of-two scales, the same elementwise operations;
    # the means to rounding, summed in another order).
    from mathlearn.linear_model._base import prepare_data

    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 7)) * scale + 5 * scale
    X[:, 2] *= 1e-3
    y = rng.normal(size=300) * scale
    sw = rng.uniform(0.2, 3.0, 300) if weighted else None
    kw = dict(fit_intercept=True, sample_weight=sw, per_column=per_column)
    f = prepare_data(X, y, order="F", **kw)
    c = prepare_data(X, y, order="C", **kw)
    assert f.X.flags.f_contiguous and not np.shares_memory(f.X, X)
    np.testing.assert_array_equal(f.x_scale, c.x_scale)
    assert f.y_scale == c.y_scale and f.sw_sum == c.sw_sum
    # centred values of size ~ scale * 1: rounding of the means, a few ulps of 5 * scale
    np.testing.assert_allclose(f.X, c.X, rtol=0, atol=1e-13 * np.abs(c.X).max() * 10)
    np.testing.assert_allclose(f.x_offset, c.x_offset, rtol=1e-14)
    np.testing.assert_array_equal(f.y, c.y)


@pytest.mark.parametrize("scale", [1.0, 1e-300, 1e300])
def test_uniform_scale_and_no_offset_are_broadcasts(scale):
    # per_column=False gives one power of two for every column, and fit_intercept=False no
    # offset: both are stride-0 views of one value (no length-D arrays beside the solver's),
    # equal entry for entry to the arrays they stand for, and read-only.
    from mathlearn.linear_model._base import prepare_data
    from mathlearn.utils._rowscale import pow2_scale

    rng = np.random.default_rng(4)
    X = rng.normal(size=(50, 40)) * scale
    y = rng.normal(size=50)
    p = prepare_data(X, y, fit_intercept=False, per_column=False, order="F")
    expected = 1.0 if scale == 1.0 else float(pow2_scale(np.abs(X).max()))
    for arr, value in ((p.x_scale, expected), (p.x_offset, 0.0)):
        assert arr.shape == (40,) and arr.strides == (0,) and not arr.flags.writeable
        np.testing.assert_array_equal(arr, np.full(40, value))
    np.testing.assert_array_equal(p.X, X * expected)
