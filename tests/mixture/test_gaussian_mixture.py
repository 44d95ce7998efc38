"""GaussianMixture: a hand-computed example (PRML §9.2), scikit-learn from the same start,
scipy.stats densities, EM monotonicity, collapse and bad input."""

import warnings

import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.mixture import GaussianMixture as SkGaussianMixture

from mathlearn.exceptions import ConvergenceWarning, NumericalWarning
from mathlearn.mixture import GaussianMixture

COV_TYPES = ["full", "tied", "diag", "spherical"]
X_T22 = np.array([[-2.0], [-1.0], [0.0], [4.0], [5.0], [6.0]])
T22_START = dict(
    means_init=[[-1.0], [1.0]],
    weights_init=[0.5, 0.5],
    precisions_init=[[[1.0]], [[1.0]]],
    reg_covar=0.0,
)


def test_worked_example_one_step():
    gm = GaussianMixture(2, max_iter=1, **T22_START)
    with pytest.warns(ConvergenceWarning):
        gm.fit(X_T22)
    assert gm.lower_bounds_[0] * 6 == pytest.approx(-34.83390221360139, rel=1e-12)
    np.testing.assert_allclose(gm.means_.ravel(), [-1.203123771966, 4.081393054772], rtol=1e-10)
    np.testing.assert_allclose(
        gm.covariances_.ravel(), [0.590229538926, 4.56538803749], rtol=1e-10
    )
    np.testing.assert_allclose(gm.weights_, [0.393866293365, 0.606133706635], rtol=1e-10)
    assert gm.score(X_T22) * 6 == pytest.approx(-13.277798214206276, rel=1e-10)


def test_worked_example_one_step_responsibilities():
    gm = GaussianMixture(2, max_iter=1, **T22_START)
    gm._initialize(X_T22, np.random.default_rng(0))
    gamma = gm.predict_proba(X_T22)[:, 1]
    expected = [0.017986209962, 0.119202922022, 0.5, 0.99966464987, 0.999954602131, 0.999993855825]
    np.testing.assert_allclose(gamma, expected, rtol=1e-10)


def test_worked_example_converged():
    gm = GaussianMixture(2, max_iter=1000, tol=1e-12, **T22_START).fit(X_T22)
    np.testing.assert_allclose(gm.weights_, [0.5, 0.5], atol=1e-6)
    np.testing.assert_allclose(gm.means_.ravel(), [-1.0, 5.0], atol=1e-6)
    np.testing.assert_allclose(gm.covariances_.ravel(), [2 / 3, 2 / 3], atol=1e-6)
    assert gm.score(X_T22) * 6 == pytest.approx(-11.456118927799444, abs=1e-6)


def _three_blobs(seed=0):
    rng = np.random.default_rng(seed)
    A = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, 0.3], [0.0, 0.0, 1.0]])
    return np.r_[
        rng.normal(size=(150, 3)),
        0.5 * rng.normal(size=(150, 3)) + 3,
        rng.normal(size=(100, 3)) @ A - 3,
    ]


def _start(cov_type, X, k=3):
    d = X.shape[1]
    prec = {
        "full": np.stack([np.eye(d) * (j + 1) for j in range(k)]),
        "tied": np.eye(d) * 2,
        "diag": np.arange(1, k * d + 1, dtype=float).reshape(k, d) / d,
        "spherical": np.arange(1.0, k + 1),
    }[cov_type]
    return dict(
        weights_init=np.array([0.2, 0.3, 0.5]),
        means_init=X[[0, 160, 320]],
        precisions_init=prec,
    )


@pytest.mark.parametrize("cov_type", COV_TYPES)
def test_matches_sklearn_from_same_start(cov_type):
    X = _three_blobs()
    kw = dict(covariance_type=cov_type, tol=1e-8, max_iter=300, **_start(cov_type, X))
    ours = GaussianMixture(3, **kw).fit(X)
    ref = SkGaussianMixture(3, random_state=0, **kw).fit(X)
    assert ours.n_iter_ == ref.n_iter_ and ours.converged_ and ref.converged_
    np.testing.assert_allclose(ours.weights_, ref.weights_, rtol=1e-9)
    np.testing.assert_allclose(ours.means_, ref.means_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.covariances_, ref.covariances_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ours.precisions_, ref.precisions_, rtol=1e-8)
    assert ours.lower_bound_ == pytest.approx(ref.lower_bound_, rel=1e-12)
    np.testing.assert_allclose(ours.score_samples(X), ref.score_samples(X), rtol=1e-10)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-10)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    assert ours.bic(X) == pytest.approx(ref.bic(X), rel=1e-12)
    assert ours.aic(X) == pytest.approx(ref.aic(X), rel=1e-12)
    assert ours.score(X) == pytest.approx(ref.score(X), rel=1e-12)


@pytest.mark.parametrize("cov_type", COV_TYPES)
def test_density_is_scipy_mixture(cov_type, rng):
    X = _three_blobs(1)
    gm = GaussianMixture(3, covariance_type=cov_type, random_state=0, max_iter=20, tol=1e-2)
    gm.fit(X)
    covs = {
        "full": lambda c: c,
        "tied": lambda c: [c] * 3,
        "diag": lambda c: [np.diag(v) for v in c],
        "spherical": lambda c: [v * np.eye(3) for v in c],
    }[cov_type](gm.covariances_)
    Xq = rng.normal(size=(20, 3))
    dens = sum(
        w * multivariate_normal(m, c).pdf(Xq)
        for w, m, c in zip(gm.weights_, gm.means_, covs, strict=True)
    )
    np.testing.assert_allclose(gm.score_samples(Xq), np.log(dens), rtol=1e-10)


@pytest.mark.parametrize("cov_type", COV_TYPES)
@pytest.mark.parametrize("init", ["kmeans", "random", "k-means++", "random_from_data"])
def test_lower_bound_never_decreases(cov_type, init):
    X = _three_blobs(2)
    gm = GaussianMixture(
        4, covariance_type=cov_type, init_params=init, tol=1e-10, max_iter=60, random_state=3
    )
    with warnings.catch_warnings():
        # Stopping at max_iter is fine here; a decreasing bound (NumericalWarning) is not.
        warnings.simplefilter("ignore", ConvergenceWarning)
        gm.fit(X)
    assert np.all(np.diff(gm.lower_bounds_) >= -1e-12 * np.abs(gm.lower_bounds_[1:]))
    assert gm.lower_bound_ == gm.lower_bounds_[-1]


def test_responsibilities_sum_to_one(rng):
    X = _three_blobs()
    gm = GaussianMixture(3, random_state=0).fit(X)
    np.testing.assert_allclose(gm.predict_proba(X).sum(1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(gm.fit_predict(X), gm.predict(X))


@pytest.mark.parametrize("cov_type", COV_TYPES)
def test_sample_moments(cov_type):
    X = _three_blobs()
    gm = GaussianMixture(3, covariance_type=cov_type, random_state=0).fit(X)
    S, y = gm.sample(200_000, random_state=1)
    assert S.shape == (200_000, 3) and np.bincount(y).size == 3
    np.testing.assert_allclose(np.bincount(y) / 2e5, gm.weights_, atol=5e-3)
    mean = gm.weights_ @ gm.means_
    np.testing.assert_allclose(S.mean(0), mean, atol=0.02)
    k = 0
    cov_k = {
        "full": lambda c: c[k],
        "tied": lambda c: c,
        "diag": lambda c: np.diag(c[k]),
        "spherical": lambda c: c[k] * np.eye(3),
    }[cov_type](gm.covariances_)
    np.testing.assert_allclose(np.cov(S[y == k].T), cov_k, atol=0.03)


def test_bic_selects_true_number_of_components():
    rng = np.random.default_rng(0)
    X = np.r_[
        rng.normal(size=(200, 2)),
        rng.normal(size=(200, 2)) + np.array([6.0, 0.0]),
        rng.normal(size=(200, 2)) + np.array([0.0, 6.0]),
    ]
    bics = [GaussianMixture(k, n_init=2, random_state=0).fit(X).bic(X) for k in range(1, 6)]
    assert int(np.argmin(bics)) + 1 == 3
    # BIC = -2 log L + M log N with M = K D(D+1)/2 + K D + K - 1 (full covariance).
    gm = GaussianMixture(3, random_state=0).fit(X)
    m = 3 * 3 + 3 * 2 + 2
    assert gm.bic(X) == pytest.approx(-2 * gm.score_samples(X).sum() + m * np.log(600))
    assert gm.aic(X) == pytest.approx(-2 * gm.score_samples(X).sum() + 2 * m)


def test_convergence_warning():
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        GaussianMixture(3, max_iter=2, tol=0.0, random_state=0).fit(_three_blobs())


def test_collapsing_component_warns():
    # Five identical points and a spread cloud: a component sits on the duplicates and its
    # covariance shrinks to reg_covar.
    rng = np.random.default_rng(0)
    X = np.r_[np.zeros((5, 2)), rng.normal(size=(50, 2)) + 5]
    start = dict(
        means_init=[[0.0, 0.0], [5.0, 5.0]],
        weights_init=[0.5, 0.5],
        precisions_init=np.stack([np.eye(2)] * 2),
    )
    gm = GaussianMixture(2, max_iter=200, **start)
    with pytest.warns(NumericalWarning, match=r"component\(s\) \[0\] collapsed"):
        gm.fit(X)
    assert np.all(np.isfinite(gm.score_samples(X)))
    with pytest.raises(ValueError, match="singular"):
        GaussianMixture(2, reg_covar=0.0, **start).fit(X)


def test_one_sample_and_duplicates():
    with pytest.warns(NumericalWarning, match="collapsed"):
        gm = GaussianMixture(1).fit(np.array([[1.0, 2.0]]))
    np.testing.assert_allclose(gm.means_, [[1.0, 2.0]])
    np.testing.assert_allclose(gm.covariances_, [1e-6 * np.eye(2)], atol=1e-20)


def test_bad_input():
    X = _three_blobs()
    with pytest.raises(ValueError, match="n_samples=2 should be >= n_components=3"):
        GaussianMixture(3).fit(X[:2])
    with pytest.raises(ValueError, match="NaN"):
        GaussianMixture(2).fit(np.r_[X, [[np.nan, 0, 0]]])
    with pytest.raises(ValueError, match="covariance_type"):
        GaussianMixture(2, covariance_type="banana").fit(X)
    with pytest.raises(ValueError, match="init_params"):
        GaussianMixture(2, init_params="banana").fit(X)
    with pytest.raises(ValueError, match="positive definite"):
        GaussianMixture(1, precisions_init=-np.eye(3)[None]).fit(X)
    with pytest.raises(ValueError, match="precisions_init must have shape"):
        GaussianMixture(2, precisions_init=np.eye(3)).fit(X)
    with pytest.raises(ValueError, match="weights_init"):
        GaussianMixture(2, weights_init=[0.7, 0.7]).fit(X)
    with pytest.raises(ValueError, match="means_init"):
        GaussianMixture(2, means_init=np.zeros((3, 3))).fit(X)
    with pytest.raises(ValueError, match="reg_covar"):
        GaussianMixture(2, reg_covar=-1.0).fit(X)
    gm = GaussianMixture(2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        gm.predict(X[:, :2])
    for bad in (0, 2.5):
        with pytest.raises(ValueError, match="n_samples must be an integer >= 1"):
            gm.sample(bad)


@pytest.mark.parametrize("cov_type", COV_TYPES)
def test_translation_invariance_far_from_origin(cov_type):
    # The fit commutes with a shift of the data. At an offset of 1e8 the inputs carry an
    # absolute rounding error of about 1e8 * eps ~ 1.5e-8, so covariances of order 1 agree to
    # ~1e-8 (1e-6 leaves room for 15 iterations); the expanded forms E[x^2] - mu^2 and
    # ||x||^2 - 2 x^T mu + ||mu||^2 lose all digits there (negative variances, a spurious
    # "singular" error).
    X = _three_blobs()
    kw = dict(covariance_type=cov_type, tol=0.0, max_iter=15, **_start(cov_type, X))
    off = 1e8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # tol=0: fixed iteration count
        ref = GaussianMixture(3, **kw).fit(X)
        kw["means_init"] = kw["means_init"] + off
        shifted = GaussianMixture(3, **kw).fit(X + off)
    np.testing.assert_allclose(shifted.covariances_, ref.covariances_, rtol=0, atol=1e-6)
    np.testing.assert_allclose(shifted.means_ - off, ref.means_, atol=1e-6)
    np.testing.assert_allclose(shifted.weights_, ref.weights_, rtol=0, atol=1e-6)
    assert shifted.score(X + off) == pytest.approx(ref.score(X), abs=1e-6)


@pytest.mark.parametrize("cov_type", ["diag", "spherical"])
def test_collapsing_component_warns_diag_spherical(cov_type):
    rng = np.random.default_rng(0)
    X = np.r_[np.zeros((5, 2)), rng.normal(size=(50, 2)) + 5]
    prec = np.ones((2, 2)) if cov_type == "diag" else np.ones(2)
    gm = GaussianMixture(
        2,
        covariance_type=cov_type,
        max_iter=200,
        means_init=[[0.0, 0.0], [5.0, 5.0]],
        weights_init=[0.5, 0.5],
        precisions_init=prec,
    )
    with pytest.warns(NumericalWarning, match=r"component\(s\) \[0\] collapsed"):
        gm.fit(X)
    # The collapsed component's variance is exactly the regularisation.
    np.testing.assert_allclose(np.ravel(gm.covariances_[0]), 1e-6, rtol=1e-9)


def test_tied_covariance_collapse_warns():
    # Points on a line: the shared covariance has no spread across it.
    X = np.c_[np.arange(20.0), np.zeros(20)]
    with pytest.warns(NumericalWarning, match="the tied covariance collapsed"):
        GaussianMixture(2, covariance_type="tied", random_state=0).fit(X)


def test_reg_covar_breaks_monotonicity_on_small_scale_data():
    # Exact EM (reg_covar=0) never lowers the likelihood. Adding epsilon I to the covariance
    # update is not the M-step's maximiser: on data whose variances are ~1e-6 (the default
    # epsilon) the bound dips; the driver says so once per run, not once per iteration.
    from sklearn.datasets import make_blobs

    X, _ = make_blobs(400, n_features=3, centers=4, random_state=0)
    X = X * 1e-3
    kw = dict(init_params="random", max_iter=200, tol=1e-10, random_state=0)
    exact = GaussianMixture(4, reg_covar=0.0, **kw).fit(X)
    assert np.all(np.diff(exact.lower_bounds_) >= -1e-12 * np.abs(exact.lower_bounds_[1:]))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reg = GaussianMixture(4, **kw).fit(X)
    # (The variances ~1e-6 also trigger the collapse warning, which is right: reg_covar is
    # what holds them up.)
    dips = [w for w in caught if "decreased" in str(w.message)]
    assert np.diff(reg.lower_bounds_).min() < 0
    assert len(dips) == 1 and "reg_covar" in str(dips[0].message)


def _weighted_start(cov_type, X):
    s = _start(cov_type, X)
    return dict(covariance_type=cov_type, tol=1e-10, max_iter=500, **s)


@pytest.mark.parametrize("cov_type", COV_TYPES)
def test_integer_weights_equal_repeated_rows(cov_type):
    # Weighted EM: every sufficient statistic is a responsibility-times-weight sum, so weights
    # w_n are the data with row n repeated w_n times (weight 0: the row removed). Same start;
    # the fixed points agree to the rounding of sums taken in another order.
    X = _three_blobs(1)
    w = np.random.default_rng(1).integers(0, 4, size=X.shape[0])
    kw = _weighted_start(cov_type, X)
    weighted = GaussianMixture(3, **kw).fit(X, sample_weight=w)
    repeated = GaussianMixture(3, **kw).fit(np.repeat(X, w, axis=0))
    np.testing.assert_allclose(weighted.weights_, repeated.weights_, rtol=1e-9)
    np.testing.assert_allclose(weighted.means_, repeated.means_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(weighted.covariances_, repeated.covariances_, rtol=1e-9, atol=1e-12)
    assert weighted.lower_bound_ == pytest.approx(repeated.lower_bound_, rel=1e-10)
    assert weighted.n_iter_ == repeated.n_iter_
    np.testing.assert_allclose(weighted.predict_proba(X), repeated.predict_proba(X), atol=1e-9)


@pytest.mark.parametrize("init_params", ["kmeans", "k-means++", "random_from_data"])
def test_weighted_initialisations_ignore_zero_weight_rows(init_params):
    # Rows of weight 0 take no part, in the initialisation either: with a far blob of weight
    # 0 and two blobs of weight 1, the two components end on the two weighted blobs (their
    # sample means, to the blobs' standard error of 0.1 / sqrt(100) = 0.01, times a margin).
    rng = np.random.default_rng(2)
    centres = np.array([[50.0, 50.0], [0.0, 0.0], [5.0, 0.0]])
    X = np.concatenate([c + 0.1 * rng.normal(size=(100, 2)) for c in centres])
    w = np.r_[np.zeros(100), np.ones(200)]
    for seed in range(3):
        gm = GaussianMixture(2, init_params=init_params, random_state=seed)
        gm.fit(X, sample_weight=w)
        order = np.argsort(gm.means_[:, 0])
        np.testing.assert_allclose(gm.means_[order], centres[1:], atol=0.05)


@pytest.mark.parametrize("cov_type", COV_TYPES)
@pytest.mark.parametrize("scale", [1e100, 1e150])
def test_large_magnitudes(cov_type, scale):
    # Issue 10: diagonal and spherical mixtures returned NaN on data of large magnitude (sums
    # of squares overflow). A Gaussian mixture commutes with a scaling of the data (with
    # reg_covar scaled by c^2: here 1e-6 / c^2 is below every variance's rounding, so the
    # reference has reg_covar=0), and log p(c x) = log p(x) - D log c.
    X = _three_blobs()
    kw = dict(covariance_type=cov_type, tol=1e-10, max_iter=300, **_start(cov_type, X))
    ref = GaussianMixture(3, reg_covar=0.0, **kw).fit(X)
    kw["means_init"] = kw["means_init"] * scale
    kw["precisions_init"] = kw["precisions_init"] / scale**2
    big = GaussianMixture(3, **kw).fit(X * scale)
    np.testing.assert_allclose(big.means_ / scale, ref.means_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(big.covariances_ / scale**2, ref.covariances_, rtol=1e-8)
    np.testing.assert_allclose(big.weights_, ref.weights_, rtol=1e-8)
    d = X.shape[1]
    assert big.lower_bound_ == pytest.approx(ref.lower_bound_ - d * np.log(scale), rel=1e-10)
    np.testing.assert_array_equal(big.predict(X * scale), ref.predict(X))
    np.testing.assert_allclose(
        big.score_samples(X * scale), ref.score_samples(X) - d * np.log(scale), rtol=1e-10
    )


@pytest.mark.parametrize("cov_type", COV_TYPES)
def test_covariances_beyond_the_float_range_are_an_error(cov_type):
    # Variances ~1e400 are not floats: the mixture is fitted in its working frame (its
    # labels are those of the unscaled data), and reading covariances_ or precisions_ (whose
    # inverse square is ~1e-400) is the clear error.
    X = _three_blobs() * 1e200
    gm = GaussianMixture(3, covariance_type=cov_type, random_state=0).fit(X)
    ref = GaussianMixture(3, covariance_type=cov_type, random_state=0).fit(_three_blobs())
    np.testing.assert_array_equal(gm.predict(X), ref.predict(_three_blobs()))
    with pytest.raises(ValueError, match="covariances of X exceed the largest float"):
        gm.covariances_
    with pytest.raises(ValueError, match="precisions of X are outside the float range"):
        gm.precisions_


@pytest.mark.parametrize("cov_type", COV_TYPES)
def test_predictions_of_extreme_rows(cov_type):
    # Issue 10: predict/predict_proba of rows far outside the data returned NaN or a wrong
    # component without a warning. As t grows, log pi_k + log N(t u | mu_k, Sigma_k) is
    # dominated by -t^2 u^T Sigma_k^{-1} u / 2: the component with the widest spread along u
    # takes all the responsibility, and the log-density of a row beyond ~1e154 standard
    # deviations is below the float range (a ValueError naming the row).
    X = _three_blobs()
    gm = GaussianMixture(3, covariance_type=cov_type, random_state=0).fit(X)
    u = np.array([0.6, -0.8, 0.0])
    covs = _full_covariances(gm)
    quad = np.array([u @ np.linalg.solve(c, u) for c in covs])
    if cov_type == "tied":
        # One covariance: the quadratic terms cancel and the linear ones decide,
        # t u^T Sigma^{-1} mu_k.
        quad = -np.array([u @ np.linalg.solve(c, m) for c, m in zip(covs, gm.means_, strict=True)])
    for t in (1e100, 1e200, 1e300):
        row = (t * u)[None]
        expected = np.argmin(quad)
        assert gm.predict(row)[0] == expected
        proba = gm.predict_proba(row)
        assert np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba[0], np.eye(3)[expected], atol=1e-300)
        if t > 1e160:
            with pytest.raises(ValueError, match=r"row 0 of X .* below the float64 range"):
                gm.score_samples(row)
        else:
            expected_logp = np.log(gm.weights_[expected]) + multivariate_normal(
                gm.means_[expected], _full_covariances(gm)[expected]
            ).logpdf(row[0])
            assert gm.score_samples(row)[0] == pytest.approx(expected_logp, rel=1e-12)


def _full_covariances(gm):
    d = gm.means_.shape[1]
    c = gm.covariances_
    return {
        "full": c,
        "tied": np.stack([c] * gm.n_components),
        "diag": np.stack([np.diag(v) for v in np.atleast_2d(c)]),
        "spherical": np.stack([v * np.eye(d) for v in np.atleast_1d(c)]),
    }[gm.covariance_type]
