"""KernelLogisticRegression against LogisticRegression (linear kernel), a direct SciPy
minimisation of the same RKHS objective, the representer identity, and bad inputs."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.datasets import make_classification

from mathlearn.exceptions import ConvergenceWarning
from mathlearn.kernels import RBF
from mathlearn.linear_model import KernelLogisticRegression, LogisticRegression

TOL = {"newton": 1e-10, "lbfgs": 1e-8}


def _data(n_classes, n=80, seed=0):
    X, y = make_classification(
        n, 4, n_informative=3, n_redundant=0, n_classes=n_classes, random_state=seed
    )
    sw = np.random.default_rng(seed).uniform(0.2, 2.0, n)
    return X, y, sw


@pytest.mark.parametrize("solver", ["newton", "lbfgs"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_linear_kernel_equals_logistic_regression(solver, n_classes, fit_intercept):
    # With k(x, y) = x^T y, f = X w with w = X^T a and ||f||_H = ||w||: the same objective.
    X, y, sw = _data(n_classes)
    # More than two classes: the multinomial objective is always minimised by L-BFGS.
    tol = TOL[solver if n_classes == 2 else "lbfgs"]
    lr = LogisticRegression(
        C=0.7, solver="newton", tol=1e-11, fit_intercept=fit_intercept, max_iter=200
    ).fit(X, y, sample_weight=sw)
    klr = KernelLogisticRegression(
        C=0.7,
        kernel="linear",
        solver=solver,
        tol=tol,
        fit_intercept=fit_intercept,
        max_iter=2000,
    ).fit(X, y, sample_weight=sw)
    # Gradient tolerance tol and Hessian eigenvalues >= 1/(C S): the minimiser is known to
    # about tol * C * S in w, times max|x| in the scores.
    bound = 10 * tol * 0.7 * sw.sum() * np.abs(X).max() * (1 + np.abs(X).sum(1).max())
    np.testing.assert_allclose(klr.decision_function(X), lr.decision_function(X), atol=bound)
    w = np.atleast_2d(klr.dual_coef_) @ X
    np.testing.assert_allclose(w, lr.coef_, atol=bound)
    np.testing.assert_allclose(klr.predict_proba(X), lr.predict_proba(X), atol=bound)


def _objective_reference(X, y01, sw, C, gamma):
    """Minimise C Σ s ℓ(f + b) + ½ f^T K^{-1} f directly with SciPy, in u with f = L u."""
    K = np.exp(-gamma * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    L = np.linalg.cholesky(K + 1e-12 * np.eye(len(X)))

    def fun(theta):
        u, b = theta[:-1], theta[-1]
        eta = L @ u + b
        p = expit(eta)
        val = C * sw @ (np.logaddexp(0, eta) - y01 * eta) + 0.5 * u @ u
        r = C * sw * (p - y01)
        return val, np.concatenate([L.T @ r + u, [r.sum()]])

    res = minimize(
        fun,
        np.zeros(len(X) + 1),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000},
    )
    return L @ res.x[:-1] + res.x[-1], res.fun


def test_rbf_matches_direct_scipy_minimisation():
    X, y, sw = _data(2, n=50, seed=1)
    C, gamma = 2.0, 0.3
    klr = KernelLogisticRegression(C=C, kernel="rbf", gamma=gamma, tol=1e-12).fit(
        X, y, sample_weight=sw
    )
    eta_ref, f_ref = _objective_reference(X, y.astype(float), sw, C, gamma)
    eta = klr.decision_function(X)
    a = klr.dual_coef_
    K = klr.kernel_(X)
    ours = C * sw @ (np.logaddexp(0, eta) - y * eta) + 0.5 * a @ K @ a
    # Our Newton optimum is at least as low as SciPy's, which reaches it to ~1e-9.
    assert ours <= f_ref + 1e-9 * abs(f_ref)
    np.testing.assert_allclose(eta, eta_ref, atol=1e-5)
    # Representer identity at the optimum: a = C s (y - p).
    np.testing.assert_allclose(a, C * sw * (y - expit(eta)), atol=1e-10 * C * sw.max())


def test_newton_and_lbfgs_agree_rbf():
    X, y, sw = _data(2, n=60, seed=2)
    kernel = RBF(length_scale=1.5)
    a = KernelLogisticRegression(C=1.0, kernel=kernel, tol=1e-10).fit(X, y, sample_weight=sw)
    b = KernelLogisticRegression(
        C=1.0, kernel=kernel, solver="lbfgs", tol=1e-8, max_iter=5000
    ).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-5)
    assert kernel.length_scale == 1.5  # the user's kernel is not mutated


def test_string_labels_and_zero_weights():
    X, y, sw = _data(2, n=60, seed=3)
    labels = np.where(y == 1, "yes", "no")
    sw[:10] = 0.0
    full = KernelLogisticRegression(C=1.0).fit(X, labels, sample_weight=sw)
    sub = KernelLogisticRegression(C=1.0).fit(X[10:], labels[10:], sample_weight=sw[10:])
    np.testing.assert_allclose(full.decision_function(X), sub.decision_function(X), atol=1e-8)
    assert set(full.predict(X)) <= {"yes", "no"}


def test_separable_data_stays_finite():
    # The RKHS penalty keeps the optimum finite on separable data (no warning needed).
    X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    y = np.array([0, 0, 1, 1])
    clf = KernelLogisticRegression(C=1e4, kernel="rbf", gamma=1.0).fit(X, y)
    p = clf.predict_proba(X)
    assert np.all(np.isfinite(clf.dual_coef_)) and np.all((p > 0) & (p < 1))
    assert (clf.predict(X) == y).all()


def test_bad_inputs():
    X, y, _ = _data(2, n=30)
    with pytest.raises(ValueError, match="at least 2 classes"):
        KernelLogisticRegression().fit(X, np.zeros(30))
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KernelLogisticRegression().fit(Xn, y)
    with pytest.raises(ValueError, match="zero total sample weight"):
        KernelLogisticRegression().fit(X, y, sample_weight=np.where(y == 1, 0.0, 1.0))
    with pytest.raises(ValueError, match="not finite"):
        KernelLogisticRegression(kernel="linear").fit(X * 1e300, y)
    with pytest.raises(ValueError):
        KernelLogisticRegression(C=0.0).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="stopped after 1"):
        KernelLogisticRegression(max_iter=1).fit(X, y)
