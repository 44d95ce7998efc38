"""LogisticRegression against scikit-learn on the same data and C, the notes' worked example,
and bad inputs."""

import warnings

import numpy as np
import pytest
from scipy.special import expit, softmax
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression as SkLogisticRegression
from sklearn.metrics import log_loss

from mathlearn.exceptions import ConvergenceWarning, InvalidParameterError
from mathlearn.linear_model import LogisticRegression

TOL = {"newton": 1e-10, "lbfgs": 1e-8}  # L-BFGS's line search cannot go much below ~1e-8
SK_TOL = 1e-12


def _data(n_classes, seed=0, n=300):
    X, y = make_classification(
        n, 6, n_informative=4, n_redundant=0, n_classes=n_classes, random_state=seed
    )
    sw = np.random.default_rng(seed).uniform(0.2, 2.0, n)
    return X, y, sw


def _mean_hessian(X, sw, coef, intercept, C, fit_intercept):
    """Hessian of (1/S)[C Σ s_i ℓ_i + ½‖W‖²] at scikit-learn's solution (numpy, by hand)."""
    S = sw.sum()
    Xt = np.hstack([X, np.ones((len(X), 1))]) if fit_intercept else X
    Dp = Xt.shape[1]
    if coef.shape[0] == 1:
        p = expit(X @ coef[0] + intercept[0])
        H = (Xt.T * (sw * p * (1 - p))) @ Xt / S
        H[: X.shape[1], : X.shape[1]] += np.eye(X.shape[1]) / (C * S)
        return H
    K = coef.shape[0]
    P = softmax(X @ coef.T + intercept, axis=1)
    H = np.zeros((K * Dp, K * Dp))
    for k in range(K):
        for m in range(K):
            d = sw * P[:, k] * ((k == m) - P[:, m])
            H[k * Dp : (k + 1) * Dp, m * Dp : (m + 1) * Dp] = (Xt.T * d) @ Xt / S
    for k in range(K):
        idx = k * Dp + np.arange(X.shape[1])
        H[idx, idx] += 1 / (C * S)
    return H


@pytest.mark.parametrize("solver", ["newton", "lbfgs"])
@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_matches_sklearn(solver, n_classes, fit_intercept):
    X, y, sw = _data(n_classes)
    C = 0.7
    ours = LogisticRegression(
        C=C, solver=solver, tol=TOL[solver], max_iter=500, fit_intercept=fit_intercept
    ).fit(X, y, sample_weight=sw)
    ref = SkLogisticRegression(
        C=C, solver="newton-cholesky", tol=SK_TOL, max_iter=1000, fit_intercept=fit_intercept
    ).fit(X, y, sample_weight=sw)
    assert ours.coef_.shape == ref.coef_.shape
    assert ours.intercept_.shape == ref.intercept_.shape
    # Both stop with max|∇F| below their tolerances, F the objective divided by S = Σ s_i;
    # then ‖Δθ‖ <= sqrt(P) (tol + tol_ref) / λ_min(∇²F) on the identifiable subspace (the
    # symmetric intercepts Σ b_k = 0 are chosen by both). Rounding adds ~1e-15 relative.
    H = _mean_hessian(X, sw, ref.coef_, ref.intercept_, C, fit_intercept)
    ev = np.linalg.eigvalsh(H)
    lam_min = ev[ev > 1e-10 * ev[-1]][0]
    theta_ref = np.hstack([ref.coef_, ref.intercept_[:, None]]) if fit_intercept else ref.coef_
    bound = (
        np.sqrt(H.shape[0]) * (TOL[solver] + SK_TOL) / lam_min + 1e-13 * np.abs(theta_ref).max()
    )
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=0, atol=bound)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=0, atol=bound)
    if solver == "newton":
        # The target: coefficients to 1e-6 relative and the log-loss to 1e-9.
        np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=0)
    ll_ours = log_loss(y, ours.predict_proba(X), sample_weight=sw)
    ll_ref = log_loss(y, ref.predict_proba(X), sample_weight=sw)
    # |∇ log-loss| at the optimum is the penalty's gradient ‖W‖/(C S) (plus the tolerance).
    ll_bound = (np.abs(ref.coef_).max() / (C * sw.sum()) + TOL[solver]) * bound * H.shape[0]
    assert abs(ll_ours - ll_ref) <= max(ll_bound, 1e-14)
    if solver == "newton":
        assert abs(ll_ours - ll_ref) <= 1e-9
    np.testing.assert_allclose(
        ours.predict_proba(X), ref.predict_proba(X), atol=10 * bound * np.abs(X).max()
    )
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    df = ours.decision_function(X)
    assert df.shape == ((300,) if n_classes == 2 else (300, n_classes))
    np.testing.assert_allclose(df, ref.decision_function(X), atol=10 * bound * np.abs(X).max())


@pytest.mark.parametrize("solver", ["newton", "lbfgs"])
def test_prml_worked_example(solver):
    # Hand-computed example (PRML §4.3.2): Φ = [[1,0],[1,1],[1,2],[1,3]], t = [0,1,0,1]; the ML
    # estimate is w* = [-1.36227639384, 0.90818426256] (given to 12 digits).
    Phi = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0], [1.0, 3.0]])
    t = np.array([0, 1, 0, 1])
    clf = LogisticRegression(penalty=None, fit_intercept=False, solver=solver, tol=TOL[solver])
    clf.fit(Phi, t)
    w_star = np.array([-1.36227639384, 0.90818426256])
    p = expit(Phi @ w_star)
    H = (Phi.T * (p * (1 - p))) @ Phi / 4  # Hessian of the mean negative log-likelihood
    bound = np.sqrt(2) * TOL[solver] / np.linalg.eigvalsh(H)[0] + 1e-11  # + digits given
    np.testing.assert_allclose(clf.coef_[0], w_star, rtol=0, atol=bound)
    # At the ML estimate the gradient Φ^T (y - t) vanishes.
    y = clf.predict_proba(Phi)[:, 1]
    np.testing.assert_allclose(Phi.T @ (y - t), 0.0, atol=4 * np.sqrt(2) * TOL[solver])


@pytest.mark.parametrize("solver", ["newton", "lbfgs"])
def test_separable_without_penalty_warns_and_stays_finite(solver):
    # Hand-computed example (PRML §4.3.2), first data set t = [0,0,1,1]: separable, the ML estimate
    # diverges.
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    t = np.array([0, 0, 1, 1])
    with pytest.warns(ConvergenceWarning, match="separable"):
        clf = LogisticRegression(penalty=None, solver=solver).fit(X, t)
    assert np.all(np.isfinite(clf.coef_)) and np.all(np.isfinite(clf.intercept_))
    np.testing.assert_array_equal(clf.predict(X), t)
    P = clf.predict_proba(X)
    assert np.all(np.isfinite(P))
    # C = inf is the same model.
    with pytest.warns(ConvergenceWarning, match="separable"):
        LogisticRegression(C=np.inf, solver=solver).fit(X, t)
    # With a penalty there is a unique finite optimum and no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LogisticRegression(C=1.0, solver=solver).fit(X, t)


def test_separable_multiclass_without_penalty_warns():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    X = np.vstack([c + rng.standard_normal((10, 2)) for c in centres])
    y = np.repeat([0, 1, 2], 10)
    for solver in ("newton", "lbfgs"):
        with pytest.warns(ConvergenceWarning, match="separable"):
            clf = LogisticRegression(penalty=None, solver=solver).fit(X, y)
        np.testing.assert_array_equal(clf.predict(X), y)
        assert np.all(np.isfinite(clf.predict_proba(X)))


def test_unpenalised_multinomial_matches_sklearn_on_overlapping_classes():
    X, y, _ = _data(3, seed=3)
    ours = LogisticRegression(penalty=None, solver="newton", tol=1e-10).fit(X, y)
    ref = SkLogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-12).fit(X, y)
    # Both return the symmetric solution Σ_k w_k = 0, Σ_k b_k = 0.
    np.testing.assert_allclose(ours.coef_.sum(axis=0), 0, atol=1e-10)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-8)


def test_integer_sample_weight_equals_repetition_and_zero_equals_removal():
    X, y, _ = _data(3, seed=1, n=60)
    w = np.random.default_rng(1).integers(0, 3, 60).astype(float)
    a = LogisticRegression(solver="newton", tol=1e-12).fit(X, y, sample_weight=w)
    rep = np.repeat(np.arange(60), w.astype(int))
    b = LogisticRegression(solver="newton", tol=1e-12).fit(X[rep], y[rep])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("class_weight", ["balanced", {0: 2.0, 2: 0.5}])
def test_class_weight_matches_sklearn(class_weight):
    X, y, sw = _data(3, seed=2)
    ours = LogisticRegression(solver="newton", tol=1e-10, class_weight=class_weight)
    ref = SkLogisticRegression(solver="newton-cholesky", tol=1e-12, class_weight=class_weight)
    ours.fit(X, y, sample_weight=sw)
    ref.fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-9)


def test_string_labels():
    X, y, _ = _data(3, seed=4, n=90)
    names = np.array(["cat", "dog", "eel"])[y]
    a = LogisticRegression(solver="newton", tol=1e-10).fit(X, names)
    b = LogisticRegression(solver="newton", tol=1e-10).fit(X, y)
    np.testing.assert_array_equal(a.classes_, ["cat", "dog", "eel"])
    np.testing.assert_array_equal(
        a.predict(X),
        np.array(["cat", "dog", "eel"])[b.predict(X)],
    )
    np.testing.assert_allclose(a.coef_, b.coef_)


def test_bad_inputs():
    X, y, _ = _data(2, n=40)
    with pytest.raises(ValueError, match="at least 2 classes"):
        LogisticRegression().fit(X, np.zeros(40))
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        LogisticRegression().fit(Xn, y)
    with pytest.raises(ValueError, match="non-zero"):
        LogisticRegression().fit(X, y, sample_weight=np.zeros(40))
    with pytest.raises(ValueError, match="zero total sample weight"):
        LogisticRegression().fit(X, y, sample_weight=(y == 0).astype(float))
    with pytest.raises(ValueError, match="Rescale X"):
        LogisticRegression().fit(X * 1e300, y)
    with pytest.raises(ValueError, match="not among the classes"):
        LogisticRegression(class_weight={7: 1.0}).fit(X, y)
    with pytest.raises(InvalidParameterError, match="C"):
        LogisticRegression(C=0.0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="solver"):
        LogisticRegression(solver="sag").fit(X, y)
    clf = LogisticRegression().fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :3])


def test_tiny_features_are_handled():
    # Features of size 1e-300: the penalised optimum has weights of size ~1e-300 that
    # scikit-learn finds too; probabilities come from the intercept alone.
    X, y, _ = _data(2, n=50)
    ours = LogisticRegression(solver="newton").fit(X * 1e-300, y)
    assert np.all(np.isfinite(ours.coef_))
    np.testing.assert_allclose(ours.predict_proba(X * 1e-300)[:, 1], np.mean(y == 1), rtol=1e-4)


@pytest.mark.parametrize("penalty", ["l2", None])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_multinomial_newton_converges_quadratically(penalty, fit_intercept):
    # Overlapping classes (a finite maximum-likelihood estimate). With the exact block
    # Hessian Newton converges quadratically: a handful of steps to a gradient of 1e-10
    # (a wrong Hessian leaves a linearly convergent iteration needing many more).
    X, y, sw = _data(4, seed=3)
    ours = LogisticRegression(
        penalty=penalty, solver="newton", tol=1e-10, fit_intercept=fit_intercept
    ).fit(X, y, sample_weight=sw)
    assert ours.n_iter_[0] <= 10
    ref = SkLogisticRegression(
        C=1.0 if penalty else np.inf,
        solver="newton-cholesky",
        tol=SK_TOL,
        max_iter=1000,
        fit_intercept=fit_intercept,
    ).fit(X, y, sample_weight=sw)
    # Both at a gradient of ~1e-10: the probabilities agree far inside 1e-7.
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-7)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_newton_converges_below_the_rounding_of_the_objective(n_classes, fit_intercept):
    # Near the minimiser a Newton step lowers F by g^T H^-1 g / 2, below F's own rounding
    # once |g| is about sqrt(eps |F| lambda_min(H)) ~ 1e-9 here; Armijo's test then compares
    # rounding noise (it stalled near 1e-10 on some of these problems). The gradient itself
    # is computed to about gamma_n sum_i s_i |x_ij| (the normalised weights sum to 1), so a
    # tolerance a few times that bound must be reached, quadratically, on any CPU.
    eps = np.finfo(float).eps
    for seed in range(6):
        X, y = make_classification(
            80, 4, n_informative=3, n_redundant=0, n_classes=n_classes, random_state=seed
        )
        sw = np.random.default_rng(seed).uniform(0.2, 2.0, 80)
        floor = (X.shape[0] + 4) * eps * (1 + np.abs(X).max())
        model = LogisticRegression(
            C=0.7, solver="newton", tol=8 * floor, max_iter=30, fit_intercept=fit_intercept
        )
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            model.fit(X, y, sample_weight=sw)
        assert model.n_iter_ <= 12
