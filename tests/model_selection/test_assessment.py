"""Model assessment and bias-variance analysis against scikit-learn, exact arithmetic, closed
forms and simulation (Imperial "Mathematics for Machine Learning"; Stuttgart "Introduction to
Machine Learning" §2, k-fold cross-validation)."""

from fractions import Fraction

import numpy as np
import pytest
from sklearn.model_selection import KFold, cross_val_score

from mathlearn.linear_model import LinearRegression, LogisticRegression, Ridge
from mathlearn.model_selection import (
    bias_variance_decomposition,
    cross_validate_loss,
    cross_validation_path,
    loss_estimate,
    ridge_estimator_error,
    train_validation_test_split,
)


def _data(rng, n=80, d=4, noise=0.3):
    X = rng.normal(size=(n, d))
    return X, X @ np.arange(1.0, d + 1) + noise * rng.normal(size=n)


def test_cv_fold_losses_equal_scikit_learns(rng):
    X, y = _data(rng)
    folds = KFold(5, shuffle=True, random_state=3)
    ours = cross_validate_loss(Ridge(alpha=0.5), X, y, cv=folds)
    peer = -cross_val_score(Ridge(alpha=0.5), X, y, cv=folds, scoring="neg_mean_squared_error")
    np.testing.assert_allclose(ours.fold_losses, peer, rtol=1e-12)
    assert ours.mean == pytest.approx(np.mean(peer), rel=1e-12)
    assert ours.fold_sizes.sum() == len(y)


def test_cv_variance_is_the_notes_formula_without_cancellation():
    # Stuttgart slide 2:17: (1/(k-1)) [sum l_i^2 - k l_hat^2]. Evaluated literally in floating
    # point it cancels for losses that vary little around a large mean; the two-pass form
    # agrees with the exact rational value of the notes' formula to rounding.
    losses = 1e8 + np.array([0.1, 0.2, 0.4, 0.3, 0.5])
    exact_mean = sum(Fraction(v) for v in losses) / 5
    exact_var = (sum(Fraction(v) ** 2 for v in losses) - 5 * exact_mean**2) / 4
    mean = np.mean(losses)
    two_pass = np.sum((losses - mean) ** 2) / 4
    naive = (np.sum(losses**2) - 5 * mean**2) / 4
    assert two_pass == pytest.approx(float(exact_var), rel=1e-7)
    assert abs(naive - float(exact_var)) > 1e-3 * float(exact_var)  # the literal form fails

    # And the estimator reports the two-pass value: per-fold constant predictors.
    class Offset:
        def fit(self, X, y):
            self.c_ = 0.0
            return self

        def predict(self, X):
            return np.zeros(len(X))

        def get_params(self, deep=True):
            return {}

        def set_params(self, **p):
            return self

    X = np.zeros((5, 1))
    y = np.sqrt(losses)  # squared loss of predicting 0 on a one-point fold is y^2
    res = cross_validate_loss(Offset(), X, y, cv=KFold(5))
    np.testing.assert_allclose(res.fold_losses, y**2, rtol=1e-15)
    assert res.variance == pytest.approx(float(exact_var), rel=1e-6)
    assert res.std_error == pytest.approx(np.sqrt(float(exact_var) / 5), rel=1e-6)


def test_cv_classifier_losses(rng):
    X = rng.normal(size=(120, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=120) > 0).astype(int)
    folds = KFold(4, shuffle=True, random_state=0)
    zo = cross_validate_loss(LogisticRegression(), X, y, cv=folds, loss="zero_one")
    acc = cross_val_score(LogisticRegression(), X, y, cv=folds, scoring="accuracy")
    np.testing.assert_allclose(zo.fold_losses, 1 - acc, rtol=1e-12, atol=1e-15)
    ll = cross_validate_loss(LogisticRegression(), X, y, cv=folds, loss="log_loss")
    peer = -cross_val_score(LogisticRegression(), X, y, cv=folds, scoring="neg_log_loss")
    np.testing.assert_allclose(ll.fold_losses, peer, rtol=1e-10)


def test_cv_path_min_and_one_standard_error_rule(rng):
    X = rng.normal(size=(40, 10))
    y = X[:, 0] + 0.5 * rng.normal(size=40)
    alphas = [1e-4, 1e-2, 1.0, 10.0, 30.0, 1e4]
    path = cross_validation_path(Ridge(), "alpha", alphas, X, y, cv=5, random_state=1)
    assert path.best_index == int(np.argmin(path.means))
    one_se = cross_validation_path(
        Ridge(), "alpha", alphas, X, y, cv=5, random_state=1, rule="one_standard_error"
    )
    np.testing.assert_allclose(one_se.means, path.means, rtol=1e-15)  # same folds
    thr = path.means[path.best_index] + path.std_errors[path.best_index]
    expected = max(a for a, m in zip(alphas, path.means, strict=True) if m <= thr)
    assert one_se.best_value == expected >= path.best_value
    smaller = cross_validation_path(
        Ridge(),
        "alpha",
        alphas,
        X,
        y,
        cv=5,
        random_state=1,
        rule="one_standard_error",
        simpler="smaller",
    )
    assert smaller.best_value == min(
        a for a, m in zip(alphas, path.means, strict=True) if m <= thr
    )


def test_loss_estimate_standard_error_and_intervals(rng):
    model = LinearRegression().fit(*_data(rng, n=50))
    X, y = _data(rng, n=400)
    est = loss_estimate(model, X, y)
    r2 = (model.predict(X) - y) ** 2
    assert est.mean == pytest.approx(r2.mean(), rel=1e-14)
    assert est.std_error == pytest.approx(r2.std(ddof=1) / np.sqrt(400), rel=1e-12)
    lo, hi = est.interval(0.75, "chebyshev")  # k = 1 / sqrt(0.25) = 2
    assert (hi - lo) == pytest.approx(4 * est.std_error, rel=1e-14)
    lo_n, hi_n = est.interval(0.95, "normal")
    assert (hi_n - lo_n) == pytest.approx(2 * 1.959963984540054 * est.std_error, rel=1e-12)


def test_chebyshev_interval_covers_at_least_its_level():
    # Exponential(1) losses, n = 30: the true mean is 1. Chebyshev's 90% interval must cover
    # it in at least 90% of the replications (it is conservative); 4000 replications give a
    # binomial standard error of sqrt(0.9 * 0.1 / 4000) = 0.0047 on the coverage.
    from mathlearn.model_selection._assessment import _estimate

    rng = np.random.default_rng(0)
    cover = 0
    for _ in range(4000):
        lo, hi = _estimate(rng.exponential(size=30)).interval(0.9)
        cover += lo <= 1.0 <= hi
    assert cover / 4000 >= 0.9 - 4 * 0.0047


def test_three_way_split(rng):
    X, y = rng.normal(size=(100, 2)), np.repeat([0, 1], 50)
    parts = train_validation_test_split(X, y, validation_size=0.2, test_size=0.3, random_state=0)
    X_tr, X_va, X_te = parts[:3]
    assert (len(X_tr), len(X_va), len(X_te)) == (50, 20, 30)
    rows = np.concatenate([X_tr, X_va, X_te])
    assert len(np.unique(rows, axis=0)) == 100  # a partition
    strat = train_validation_test_split(X, y, random_state=0, stratify=y)
    for part in strat[3:]:
        assert abs(part.mean() - 0.5) <= 0.1


def test_ridge_closed_forms_against_simulation(rng):
    # Closed forms of the notes (with errata: Error = b b^T + V; the ridge variance has two
    # inverses). Monte Carlo over 20 000 noise draws: the standard error of each mean entry
    # is sqrt(V_jj / R); of each covariance entry about sqrt((V_ii V_jj + V_ij^2) / R).
    Phi = rng.normal(size=(15, 3))
    theta0 = np.array([1.0, -2.0, 0.5])
    s2, lam, R = 0.5, 0.7, 20_000
    err = ridge_estimator_error(Phi, theta0, s2, lam)
    A = s2 * lam * np.eye(3) + Phi.T @ Phi
    noise = np.sqrt(s2) * rng.normal(size=(R, 15))
    thetas = np.linalg.solve(A, Phi.T @ (Phi @ theta0 + noise).T).T
    se_mean = np.sqrt(np.diag(err.covariance) / R)
    assert np.all(np.abs(thetas.mean(0) - err.mean) <= 5 * se_mean)
    V = err.covariance
    se_cov = np.sqrt((np.outer(np.diag(V), np.diag(V)) + V**2) / R)
    assert np.all(np.abs(np.cov(thetas.T) - V) <= 5 * se_cov)
    np.testing.assert_allclose(err.bias, -s2 * lam * np.linalg.solve(A, theta0), rtol=1e-12)
    np.testing.assert_allclose(err.error_matrix, np.outer(err.bias, err.bias) + V, rtol=1e-14)
    ols = ridge_estimator_error(Phi, theta0, s2, 0.0)
    np.testing.assert_allclose(ols.bias, 0.0, atol=1e-13)
    np.testing.assert_allclose(ols.covariance, s2 * np.linalg.inv(Phi.T @ Phi), rtol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_ridge_dominates_least_squares_in_its_range(seed):
    rng = np.random.default_rng(seed)
    Phi = rng.normal(size=(12, 4))
    theta0 = rng.normal(size=4)
    s2 = 0.3
    ols = ridge_estimator_error(Phi, theta0, s2, 0.0)
    scale = np.abs(ols.error_matrix).max()
    for lam in np.linspace(0.0, 2.0 / (theta0 @ theta0), 6):
        diff = ols.error_matrix - ridge_estimator_error(Phi, theta0, s2, lam).error_matrix
        assert np.linalg.eigvalsh(diff).min() >= -1e-12 * scale
        phi = rng.normal(size=(10, 4))
        ridge = ridge_estimator_error(Phi, theta0, s2, lam)
        assert np.all(ridge.prediction_error(phi, s2) <= ols.prediction_error(phi, s2) + 1e-12)


def test_monte_carlo_decomposition_matches_least_squares_theory(rng):
    # Fixed design, fresh noise: least squares is unbiased and var f_D(x) = s2 x^T (X^T X)^-1 x.
    X = np.column_stack([np.ones(25), np.linspace(-1, 1, 25)])
    X_test = np.column_stack([np.ones(7), np.linspace(-1.5, 1.5, 7)])
    theta0, s2, R = np.array([0.5, 2.0]), 0.4, 400

    def draw(g):
        return X, X @ theta0 + np.sqrt(s2) * g.normal(size=25)

    bv = bias_variance_decomposition(
        LinearRegression(fit_intercept=False),
        draw,
        X_test,
        X_test @ theta0,
        s2,
        n_repeats=R,
        random_state=0,
    )
    exact_var = s2 * np.einsum("ij,jk,ik->i", X_test, np.linalg.inv(X.T @ X), X_test)
    # The sample variance of R normal draws has relative standard error sqrt(2 / (R - 1)).
    assert np.all(np.abs(bv.variance / exact_var - 1) <= 5 * np.sqrt(2 / (R - 1)))
    # bias^2 of an unbiased estimator is (mean of R draws - f)^2 ~ var / R * chi2_1.
    assert np.all(bv.bias2 <= 25 * exact_var / R)
    np.testing.assert_allclose(bv.expected_error, bv.bias2 + bv.variance + s2, rtol=1e-15)


def test_bad_input(rng):
    X, y = _data(rng, n=20)
    with pytest.raises(ValueError, match="cv"):
        cross_validate_loss(Ridge(), X, y, cv=1)
    with pytest.raises(ValueError, match="different numbers"):
        cross_validate_loss(Ridge(), X, y[:-1])
    with pytest.raises(ValueError, match="one loss per sample"):
        cross_validate_loss(Ridge(), X, y, loss=lambda t, p: np.sum((t - p) ** 2))
    with pytest.raises(ValueError, match="empty"):
        cross_validation_path(Ridge(), "alpha", [], X, y)
    with pytest.raises(ValueError, match="at least one"):
        loss_estimate(Ridge().fit(X, y), X[:0], y[:0])
    with pytest.raises(ValueError, match="< 1"):
        train_validation_test_split(X, validation_size=0.5, test_size=0.5)
    with pytest.raises(ValueError, match="singular"):
        ridge_estimator_error(np.ones((5, 2)), np.ones(2), 1.0, 0.0)
    with pytest.raises(ValueError, match="noise_var"):
        ridge_estimator_error(X, np.ones(4), 0.0, 1.0)
    with pytest.raises(ValueError, match="confidence"):
        loss_estimate(Ridge().fit(X, y), X, y).interval(1.5)
