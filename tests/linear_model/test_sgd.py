"""SGDRegressor: the LMS rule against its worked example, closed forms and scikit-learn."""

import numpy as np
import pytest
from sklearn.linear_model import SGDRegressor as SkSGDRegressor

from mathlearn.exceptions import ConvergenceWarning, NotFittedError
from mathlearn.linear_model import SGDRegressor


@pytest.fixture
def data(rng):
    X = rng.standard_normal((60, 3))
    y = X @ np.array([1.5, -2.0, 0.5]) + 0.7 + 0.1 * rng.standard_normal(60)
    return X, y


def test_t7_single_lms_step():
    # Hand-computed LMS step (PRML §3.1.3): w = [0, 0], eta = 0.1, one step on (x = 1, t = 3) gives
    # w = [0.3, 0.3].
    reg = SGDRegressor(learning_rate="constant", eta0=0.1, max_iter=1, tol=None, shuffle=False)
    reg.fit([[1.0]], [3.0])
    np.testing.assert_allclose(reg.coef_, [0.3])
    assert reg.intercept_ == pytest.approx(0.3)
    assert reg.t_ == 1 and reg.n_iter_ == 1


def test_same_iterates_as_scikit_learn(data):
    # Plain SGD on the squared loss in a fixed order is the same recurrence in both libraries.
    X, y = data
    for epochs in (1, 4):
        ours = SGDRegressor(
            learning_rate="constant", eta0=0.02, max_iter=epochs, tol=None, shuffle=False
        ).fit(X, y)
        ref = SkSGDRegressor(
            learning_rate="constant", eta0=0.02, penalty=None, max_iter=epochs, tol=None,
            shuffle=False,
        ).fit(X, y)  # fmt: skip
        np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-10)
        np.testing.assert_allclose(ours.intercept_, ref.intercept_[0], rtol=1e-10)
    # sklearn's inverse scaling schedule eta0 / t^power_t, counted from t = 1, likewise.
    ours = SGDRegressor(eta0=0.05, power_t=0.3, max_iter=3, tol=None, shuffle=False).fit(X, y)
    ref = SkSGDRegressor(
        eta0=0.05, power_t=0.3, penalty=None, max_iter=3, tol=None, shuffle=False
    ).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-10)


def test_full_batch_reaches_least_squares_solution(data):
    X, y = data
    A = np.column_stack([X, np.ones(len(y))])
    w_ls = np.linalg.lstsq(A, y, rcond=None)[0]
    reg = SGDRegressor(
        learning_rate="constant", eta0=0.5, batch_size=len(y), max_iter=3000, tol=None
    ).fit(X, y)
    np.testing.assert_allclose(reg.coef_, w_ls[:3], atol=1e-10)
    assert reg.intercept_ == pytest.approx(w_ls[3], abs=1e-10)


def test_full_batch_follows_gradient_descent_recurrence(data):
    # Averaged full-batch LMS without intercept is GD on (1/2N) ||y - X w||^2:
    # w_t = (I - eta/N X^T X)^t (w_0 - w*) + w*   (Imperial "Mathematics for Machine Learning"
    # lecture 5 with sigma^2 = N).
    X, y = data
    n = len(y)
    w_star = np.linalg.lstsq(X, y, rcond=None)[0]
    eta, t = 0.3, 7
    reg = SGDRegressor(
        learning_rate="constant", eta0=eta, batch_size=n, max_iter=t, tol=None,
        fit_intercept=False,
    ).fit(X, y)  # fmt: skip
    A = np.eye(3) - eta / n * X.T @ X
    np.testing.assert_allclose(reg.coef_, np.linalg.matrix_power(A, t) @ -w_star + w_star)


def test_per_sample_sgd_with_robbins_monro_is_close_to_least_squares(data):
    X, y = data
    A = np.column_stack([X, np.ones(len(y))])
    w_ls = np.linalg.lstsq(A, y, rcond=None)[0]
    reg = SGDRegressor(learning_rate="robbins_monro", max_iter=200, tol=None, random_state=0)
    reg.fit(X, y)
    np.testing.assert_allclose(reg.coef_, w_ls[:3], atol=5e-3)
    assert reg.score(X, y) > 0.99


def test_alpha_gives_the_ridge_solution(data):
    # Mean of 1/2 r_n^2 + alpha/2 ||w||^2 is minimised by (X^T X / N + alpha I) w = X^T y / N.
    X, y = data
    n, alpha = len(y), 0.3
    w_ridge = np.linalg.solve(X.T @ X / n + alpha * np.eye(3), X.T @ y / n)
    reg = SGDRegressor(
        learning_rate="constant", eta0=0.5, alpha=alpha, batch_size=n, max_iter=2000, tol=None,
        fit_intercept=False,
    ).fit(X, y)  # fmt: skip
    np.testing.assert_allclose(reg.coef_, w_ridge, atol=1e-10)


def test_stopping_rule_and_convergence_warning(data):
    X, y = data
    reg = SGDRegressor(max_iter=1000, tol=1e-3, random_state=0).fit(X, y)
    assert reg.n_iter_ < 1000 and len(reg.loss_curve_) == reg.n_iter_
    assert reg.t_ == reg.n_iter_ * len(y)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        SGDRegressor(max_iter=2, tol=1e-12, random_state=0).fit(X, y)


def test_auto_step_is_stable_on_unscaled_data(rng):
    X = rng.normal(loc=100.0, size=(50, 2))
    y = X @ np.array([0.02, -0.01]) + rng.normal(size=50)
    reg = SGDRegressor(max_iter=50, tol=None, random_state=0).fit(X, y)
    assert reg.eta0_ == pytest.approx(1 / (np.max(np.sum(X**2, axis=1)) + 1))
    assert np.all(np.isfinite(reg.coef_))
    with pytest.raises(FloatingPointError, match="diverged"):
        SGDRegressor(eta0=0.01, max_iter=50, tol=None, random_state=0).fit(X, y)
    # Rows so large that ||phi_n||^2 overflows: the automatic step would be 0 (no learning).
    with pytest.raises(ValueError, match="overflow"):
        SGDRegressor(max_iter=5, tol=None).fit(X * 1e160, y)


def test_reproducible_and_refit_equals_fit(data):
    X, y = data
    a = SGDRegressor(max_iter=5, tol=None, random_state=3).fit(X, y)
    b = SGDRegressor(max_iter=5, tol=None, random_state=3)
    b.fit(X[::-1], y[::-1]).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    a32 = SGDRegressor(max_iter=5, tol=None, random_state=3).fit(X.astype(np.float32), y)
    np.testing.assert_allclose(a32.predict(X), a.predict(X), rtol=1e-5)


@pytest.mark.parametrize(
    "X, y, match",
    [
        ([[np.nan, 1.0], [1.0, 2.0]], [1.0, 2.0], "NaN"),
        ([[np.inf, 1.0], [1.0, 2.0]], [1.0, 2.0], "infinity"),
        ([[0.0, 1.0], [1.0, 2.0]], [1.0, np.nan], "NaN"),
        ([[0.0, 1.0], [1.0, 2.0]], [1.0, 2.0, 3.0], "inconsistent"),
        (np.zeros((0, 2)), np.zeros(0), "0 sample"),
        ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], "2D array"),
    ],
)
def test_bad_input(X, y, match):
    with pytest.raises(ValueError, match=match):
        SGDRegressor().fit(X, y)


@pytest.mark.parametrize(
    "params, error",
    [
        ({"learning_rate": "optimal"}, ValueError),
        ({"eta0": -0.1}, ValueError),
        ({"eta0": "fast"}, (TypeError, ValueError)),
        ({"batch_size": 0}, ValueError),
        ({"max_iter": 0}, ValueError),
        ({"tol": -1.0}, ValueError),
        ({"tol": np.nan}, ValueError),
        ({"alpha": -1.0}, ValueError),
        ({"fit_intercept": "yes"}, TypeError),
    ],
)
def test_bad_hyperparameters(params, error, data):
    X, y = data
    with pytest.raises(error):
        SGDRegressor(**params).fit(X, y)


def test_partial_fit_continues_the_recurrence(data):
    # Chunks fed in order to partial_fit are one epoch of the rule over their concatenation,
    # the step-size schedule continuing across calls; k calls on all the data are k epochs.
    X, y = data
    kw = {"eta0": 0.05, "power_t": 0.3, "shuffle": False}
    online = SGDRegressor(**kw)
    for chunk in np.array_split(np.arange(len(y)), 4):
        online.partial_fit(X[chunk], y[chunk])
    batch = SGDRegressor(max_iter=1, tol=None, **kw).fit(X, y)
    np.testing.assert_allclose(online.coef_, batch.coef_, rtol=1e-12)
    assert online.intercept_ == pytest.approx(batch.intercept_, rel=1e-12)
    assert online.t_ == len(y) and online.n_iter_ == 4
    three = SGDRegressor(**kw)
    for _ in range(3):
        three.partial_fit(X, y)
    ref = SkSGDRegressor(penalty=None, **kw)
    for _ in range(3):
        ref.partial_fit(X, y)
    np.testing.assert_allclose(three.coef_, ref.coef_, rtol=1e-10)
    np.testing.assert_allclose(three.intercept_, ref.intercept_[0], rtol=1e-10)
    # The same LMS step as one online step, and partial_fit after fit continues from fit's weights.
    reg = SGDRegressor(learning_rate="constant", eta0=0.1).partial_fit([[1.0]], [3.0])
    np.testing.assert_allclose([*reg.coef_, reg.intercept_], [0.3, 0.3])
    after = SGDRegressor(max_iter=2, tol=None, **kw).fit(X, y).partial_fit(X, y)
    np.testing.assert_allclose(after.coef_, three.coef_, rtol=1e-12)


def test_partial_fit_checks(data):
    X, y = data
    reg = SGDRegressor().partial_fit(X, y)
    with pytest.raises(ValueError, match="features"):
        reg.partial_fit(X[:, :2], y)
    with pytest.raises(ValueError, match="NaN"):
        reg.partial_fit(np.full_like(X, np.nan), y)
    # A diverging call raises and leaves the fitted state untouched.
    coef, t = reg.coef_.copy(), reg.t_
    with pytest.raises(FloatingPointError, match="diverged"):
        reg.partial_fit(1e100 * X, y)
    np.testing.assert_array_equal(reg.coef_, coef)
    assert reg.t_ == t and reg.n_iter_ == 1


def test_predict_checks(data):
    X, y = data
    with pytest.raises(NotFittedError):
        SGDRegressor().predict(X)
    reg = SGDRegressor(max_iter=2, tol=None).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        reg.predict(X[:, :2])


@pytest.mark.parametrize("batch_size", [1, 7])
def test_compiled_epoch_is_the_numba_loop_bit_for_bit(rng, monkeypatch, batch_size):
    # The compiled helper (mathlearn._ext._sgd) and the numba loop (the route from 2 000
    # samples on without it) make the same IEEE operations in the same order.
    pytest.importorskip("numba")
    from mathlearn import _ext

    if _ext.load("_sgd") is None:
        pytest.skip("needs the compiled mathlearn._ext._sgd")
    X = rng.standard_normal((2500, 6))
    y = X @ rng.standard_normal(6) + 0.1 * rng.standard_normal(2500)
    kw = dict(max_iter=3, tol=None, random_state=0, batch_size=batch_size, alpha=0.01)
    compiled = SGDRegressor(**kw).fit(X, y)
    monkeypatch.setenv("MATHLEARN_DISABLE_EXT", "1")
    jitted = SGDRegressor(**kw).fit(X, y)
    np.testing.assert_array_equal(compiled.coef_, jitted.coef_)
    assert compiled.intercept_ == jitted.intercept_
    np.testing.assert_array_equal(compiled.loss_curve_, jitted.loss_curve_)


def test_integer_targets_are_fitted_as_numbers(data):
    # the compiled epoch reads float64 targets: integer ones are converted, not reinterpreted
    X, y = data
    yi = np.round(3 * y).astype(np.int64)
    kw = dict(max_iter=5, tol=None, random_state=0)
    a = SGDRegressor(**kw).fit(X, yi)
    b = SGDRegressor(**kw).fit(X, yi.astype(float))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_
