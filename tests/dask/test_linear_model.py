"""Linear regressors on Dask arrays equal their NumPy fits on the same data.

The closed forms are compared at 1e-10 relative: both paths compute the float64 rounding of
the same exact solution (least squares after refinement) or solve the same well-conditioned
small system (ridge, the Bayesian posterior), so they differ by rounding only, ~1e-15 times
the condition numbers involved (at most ~1e3 here for the unrefined quantities).
"""

import mpmath
import numpy as np
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")

from mathlearn.linear_model import BayesianLinearRegression, LinearRegression, Ridge  # noqa: E402

RTOL = 1e-10


def _chunked(X, y, rows):
    return da.from_array(X, chunks=(rows, X.shape[1])), da.from_array(y, chunks=rows)


def _close(a, b, rtol=RTOL):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert np.all(np.abs(a - b) <= rtol * np.max(np.abs(b))), np.max(np.abs(a - b))


def _data(n=600, d=5, seed=0, offset=3.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) + offset
    y = X @ rng.normal(size=d) + 0.7 + 0.3 * rng.normal(size=n)
    return X, y, rng.uniform(0.0, 2.0, n)


@pytest.mark.parametrize(
    ("weighted", "fit_intercept"), [(False, True), (True, False), (True, True)]
)
def test_linear_regression_matches_numpy(weighted, fit_intercept):
    X, y, sw = _data()
    w = sw if weighted else None
    ref = LinearRegression(fit_intercept=fit_intercept).fit(X, y, sample_weight=w)
    Xd, yd = _chunked(X, y, 160)
    m = LinearRegression(fit_intercept=fit_intercept).fit(Xd, yd, sample_weight=w)
    _close(m.coef_, ref.coef_)
    assert m.intercept_ == pytest.approx(ref.intercept_, rel=RTOL, abs=RTOL * abs(ref.coef_).max())
    assert m.noise_variance_ == pytest.approx(ref.noise_variance_, rel=RTOL)
    _close(m.coef_std_error_, ref.coef_std_error_)
    assert m.rank_ == ref.rank_
    pred = m.predict(Xd)
    assert isinstance(pred, da.Array)
    _close(pred.compute(), ref.predict(X))


def _mp_lstsq(A, y):
    with mpmath.workdps(80):
        M = mpmath.matrix(A.tolist())
        b = mpmath.matrix(y.tolist())
        return np.array([float(v) for v in mpmath.lu_solve(M.T * M, M.T * b)])


@pytest.mark.parametrize(("degree", "n"), [(10, 50), (12, 40), (15, 60)])
def test_ill_conditioned_designs_split_into_chunks(degree, n):
    # The ill-conditioned cases of the NumPy tests (cond(X) ~ 1e14 .. 1e23): the TSQR and its
    # refinement across blocks reach the same float64 solution as the in-memory QR, and the
    # exact solution (mpmath at 80 digits) to 7 digits, as the NumPy path does.
    rng = np.random.default_rng(7)
    x = rng.uniform(-9, -3, n)
    Phi = np.vander(x, degree + 1, increasing=True)
    y = np.cos(x) + 0.01 * rng.normal(size=n)
    ref = LinearRegression(fit_intercept=False).fit(Phi, y)
    Xd, yd = _chunked(Phi, y, n // 4 + 1)
    m = LinearRegression(fit_intercept=False).fit(Xd, yd)
    assert m.rank_ == degree + 1
    assert m.n_iter_ > 0  # refinement ran, across the blocks
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=RTOL)
    np.testing.assert_allclose(m.coef_, _mp_lstsq(Phi, y), rtol=1e-7)
    assert m.noise_variance_ == pytest.approx(ref.noise_variance_, rel=1e-8)


def test_rank_deficient_design_gives_minimum_norm():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 3))
    X = np.hstack([X, X[:, :1]])
    y = rng.normal(size=2000)
    m = LinearRegression(fit_intercept=False).fit(*_chunked(X, y, 300))
    np.testing.assert_allclose(m.coef_, np.linalg.pinv(X) @ y, rtol=RTOL)
    assert m.rank_ == 3


@pytest.mark.parametrize(("weighted", "fit_intercept"), [(False, True), (True, False)])
def test_ridge_matches_numpy(weighted, fit_intercept):
    X, y, sw = _data(offset=0.5)
    w = sw if weighted else None
    ref = Ridge(alpha=3.0, fit_intercept=fit_intercept).fit(X, y, sample_weight=w)
    m = Ridge(alpha=3.0, fit_intercept=fit_intercept).fit(*_chunked(X, y, 160), sample_weight=w)
    _close(m.coef_, ref.coef_)
    assert m.intercept_ == pytest.approx(ref.intercept_, rel=RTOL, abs=1e-12)
    # and the closed form itself, (Xc^T Xc + alpha I)^{-1} Xc^T yc with weighted centring
    W = np.ones(len(y)) if w is None else w
    xm = W @ X / W.sum() if fit_intercept else np.zeros(X.shape[1])
    ym = W @ y / W.sum() if fit_intercept else 0.0
    Xc, yc = (X - xm) * np.sqrt(W)[:, None], (y - ym) * np.sqrt(W)
    direct = np.linalg.solve(Xc.T @ Xc + 3.0 * np.eye(X.shape[1]), Xc.T @ yc)
    _close(m.coef_, direct, rtol=1e-9)


@pytest.mark.parametrize(
    ("params", "weighted"),
    [
        ({}, False),
        ({"fit_intercept": False}, True),
        ({"prior_precision": 0.5}, True),
        ({"prior_precision": 0.1, "noise_precision": 2.0}, False),
    ],
)
def test_bayesian_linear_regression_matches_numpy(params, weighted):
    X, y, sw = _data(n=400, offset=1.0)
    w = sw if weighted else None
    ref = BayesianLinearRegression(**params).fit(X, y, sample_weight=w)
    Xd, yd = _chunked(X, y, 110)
    m = BayesianLinearRegression(**params).fit(Xd, yd, sample_weight=w)
    _close(m.coef_, ref.coef_)
    assert m.intercept_ == pytest.approx(ref.intercept_, rel=RTOL, abs=1e-12)
    assert m.prior_precision_ == pytest.approx(ref.prior_precision_, rel=RTOL)
    assert m.noise_precision_ == pytest.approx(ref.noise_precision_, rel=RTOL)
    assert m.log_evidence_ == pytest.approx(ref.log_evidence_, rel=RTOL)
    _close(m.coef_cov_, ref.coef_cov_)
    assert m.n_iter_ == ref.n_iter_
    mean, std = m.predict(Xd, return_std=True)
    assert isinstance(mean, da.Array) and isinstance(std, da.Array)
    ref_mean, ref_std = ref.predict(X, return_std=True)
    _close(mean.compute(), ref_mean)
    _close(std.compute(), ref_std)


def test_dask_dataframe_input_keeps_feature_names():
    X, y, _ = _data(n=300, d=3)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    ddf = dd.from_pandas(frame, npartitions=3)
    ys = dd.from_pandas(pd.Series(y), npartitions=3)
    m = LinearRegression().fit(ddf, ys)
    ref = LinearRegression().fit(frame, y)
    _close(m.coef_, ref.coef_)
    assert list(m.feature_names_in_) == ["a", "b", "c"]


def test_bad_dask_input_is_reported():
    X, y, _ = _data(n=100, d=3)
    bad = X.copy()
    bad[57, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        LinearRegression().fit(*_chunked(bad, y, 30))
    with pytest.raises(ValueError, match="2D"):
        LinearRegression().fit(da.from_array(y, chunks=30), y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        LinearRegression().fit(da.from_array(X, chunks=(30, 3)), y[:-1])
    m = LinearRegression().fit(*_chunked(X, y, 30))
    with pytest.raises(ValueError, match="features"):
        m.predict(da.from_array(X[:, :2], chunks=(30, 2)))
    with pytest.raises(ValueError, match="Negative"):
        LinearRegression().fit(*_chunked(X, y, 30), sample_weight=-np.ones(100))


def _counted(X, y, rows):
    """Dask ``X`` whose blocks are made by a function counting its calls, and ``y``."""
    calls = [0]

    def block(block_info=None):
        calls[0] += 1
        (start, stop), _ = block_info[None]["array-location"]
        return X[start:stop]

    chunks = (tuple(np.diff(np.r_[0 : X.shape[0] : rows, X.shape[0]])), (X.shape[1],))
    Xd = da.map_blocks(block, chunks=chunks, dtype=np.float64, meta=np.empty((0, 0)))
    return Xd, da.from_array(y, chunks=(chunks[0],)), calls


@pytest.mark.parametrize(
    ("noise", "offset", "n_iter", "passes"),
    [(1e-3, 0.0, 0, 1), (0.3, 3.0, 1, 2)],
)
def test_passes_over_the_data(noise, offset, n_iter, passes):
    # Every pass over a lazily generated design generates it again, so the number of passes
    # is the cost out of core. Validation, scales, column sums of squares and the TSQR share
    # one pass; a design whose QR solution provably carries the digits (the rule of the NumPy
    # path) needs no other; one that needs a refinement step adds one pass for it (the
    # final residual's sum of squares comes from that pass).
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1200, 6)) + offset
    y = X @ rng.normal(size=6) + 0.7 + noise * rng.normal(size=1200)
    ref = LinearRegression().fit(X, y)
    assert ref.n_iter_ == n_iter
    Xd, yd, calls = _counted(X, y, 250)
    with dask.config.set(scheduler="synchronous"):
        m = LinearRegression().fit(Xd, yd)
    assert m.n_iter_ == n_iter
    assert calls[0] == passes * len(Xd.chunks[0])
    _close(m.coef_, ref.coef_)
    assert m.noise_variance_ == pytest.approx(ref.noise_variance_, rel=RTOL)
    _close(m.coef_std_error_, ref.coef_std_error_)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize(("scale", "y_scale"), [(1e-200, 1.0), (1e200, 1.0), (1.0, 1e154)])
def test_extreme_scales_take_the_equilibrated_route(scale, y_scale, weighted):
    # Data that needs exact power-of-two scaling is not factorised unscaled in the first
    # pass (its QR could underflow or overflow): the equilibrated TSQR gives the NumPy fit.
    X, y, sw = _data(n=400, d=4)
    w = sw if weighted else None
    ref = LinearRegression().fit(X * scale, y * y_scale, sample_weight=w)
    m = LinearRegression().fit(*_chunked(X * scale, y * y_scale, 90), sample_weight=w)
    _close(m.coef_, ref.coef_)
    assert m.intercept_ == pytest.approx(ref.intercept_, rel=RTOL)
    assert m.noise_variance_ == pytest.approx(ref.noise_variance_, rel=RTOL)
