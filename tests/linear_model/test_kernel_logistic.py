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
    tol = TOL[solver]
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


def _rbf(X, Y, gamma):
    return np.exp(-gamma * ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1))


def _multinomial_reference(X, y, sw, C, gamma, n_classes):
    """Minimise C Σ s_i [logsumexp(F_i + b) - F_{i y_i} - b_{y_i}] + ½ Σ_k f_kᵀ K⁻¹ f_k with
    SciPy, in u with f_k = L u_k (K = L Lᵀ), from zero."""
    n = len(X)
    L = np.linalg.cholesky(_rbf(X, X, gamma) + 1e-12 * np.eye(n))
    Y = np.eye(n_classes)[y]

    def fun(theta):
        U = theta[: n * n_classes].reshape(n, n_classes)
        b = theta[n * n_classes :]
        Z = L @ U + b
        lse = np.logaddexp.reduce(Z, axis=1)
        P = np.exp(Z - lse[:, None])
        val = C * sw @ (lse - (Z * Y).sum(1)) + 0.5 * np.sum(U * U)
        R = C * sw[:, None] * (P - Y)
        return val, np.concatenate([(L.T @ R + U).ravel(), R.sum(0)])

    res = minimize(
        fun,
        np.zeros(n * n_classes + n_classes),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-11, "ftol": 1e-16, "maxiter": 20000, "maxcor": 30},
    )
    U = res.x[: n * n_classes].reshape(n, n_classes)
    return L @ U + res.x[n * n_classes :], res.fun


@pytest.mark.parametrize("solver", ["newton", "lbfgs"])
def test_multinomial_rbf_matches_direct_scipy_minimisation(solver):
    X, y, sw = _data(3, n=45, seed=4)
    C, gamma = 2.0, 0.3
    klr = KernelLogisticRegression(
        C=C, kernel="rbf", gamma=gamma, solver=solver, tol=TOL[solver], max_iter=5000
    ).fit(X, y, sample_weight=sw)
    Z_ref, f_ref = _multinomial_reference(X, y, sw, C, gamma, 3)
    Z = klr.decision_function(X)
    A = klr.dual_coef_  # (3, n)
    K = _rbf(X, X, gamma)
    lse = np.logaddexp.reduce(Z, axis=1)
    ours = C * sw @ (lse - Z[np.arange(len(y)), y]) + 0.5 * np.einsum("kn,nm,km->", A, K, A)
    # Ours reaches the reference's objective (which is accurate to about its gtol).
    assert ours <= f_ref + 1e-9 * abs(f_ref)
    # The objective is strongly convex in f (Hessian >= I/C on the RKHS norm, eigenvalues of
    # K up to ~n): the latent values agree to the solvers' gradient tolerances times C n.
    atol = 1e-5 if solver == "lbfgs" else 1e-6
    np.testing.assert_allclose(
        Z - Z.mean(1, keepdims=True), Z_ref - Z_ref.mean(1, keepdims=True), atol=atol
    )
    # Representer identity for each class at the optimum: a_k = C s ⊙ (y_k - p_k).
    P = np.exp(Z - lse[:, None])
    np.testing.assert_allclose(A, (C * sw[:, None] * (np.eye(3)[y] - P)).T, atol=1e3 * TOL[solver])


def test_multinomial_newton_converges_quadratically():
    X, y, sw = _data(3, n=60, seed=5)
    newton = KernelLogisticRegression(C=1.0, gamma=0.5, tol=1e-10).fit(X, y, sample_weight=sw)
    lbfgs = KernelLogisticRegression(
        C=1.0, gamma=0.5, solver="lbfgs", tol=1e-8, max_iter=5000
    ).fit(X, y, sample_weight=sw)
    # The exact block Hessian: a handful of steps (L-BFGS needs far more iterations).
    assert newton.n_iter_ <= 12 < lbfgs.n_iter_
    np.testing.assert_allclose(newton.predict_proba(X), lbfgs.predict_proba(X), atol=1e-6)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("solver", ["newton", "lbfgs"])
def test_precomputed_equals_kernel_computed_inside(n_classes, solver):
    X, y, sw = _data(n_classes, n=50, seed=6)
    Xq = X[:7] + 0.3
    gamma = 0.4
    inside = KernelLogisticRegression(C=1.5, kernel="rbf", gamma=gamma, solver=solver).fit(
        X, y, sample_weight=sw
    )
    pre = KernelLogisticRegression(C=1.5, kernel="precomputed", solver=solver).fit(
        _rbf(X, X, gamma), y, sample_weight=sw
    )
    # Same matrices up to rounding in the kernel evaluation (a few ulps): same iterates.
    np.testing.assert_allclose(pre.dual_coef_, inside.dual_coef_, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(
        pre.decision_function(_rbf(Xq, X, gamma)), inside.decision_function(Xq), atol=1e-9
    )
    np.testing.assert_array_equal(pre.predict(_rbf(Xq, X, gamma)), inside.predict(Xq))
    assert pre.kernel_ is None


def test_bad_precomputed_kernels_are_refused():
    X, y, _ = _data(2, n=20, seed=7)
    K = _rbf(X, X, 0.5)
    clf = KernelLogisticRegression(kernel="precomputed")
    with pytest.raises(ValueError, match="square"):
        clf.fit(K[:, :15], y)
    with pytest.raises(ValueError, match="not symmetric"):
        clf.fit(K + np.triu(np.ones_like(K), 1), y)
    indefinite = K - 2.0 * np.outer(X[:, 0], X[:, 0]) / np.sum(X[:, 0] ** 2) * K.max()
    with pytest.raises(ValueError, match="not positive semi-definite"):
        clf.fit(indefinite, y)
    fitted = KernelLogisticRegression(kernel="precomputed").fit(K, y)
    with pytest.raises(ValueError, match="features"):
        fitted.predict(K[:, :15])  # the cross-kernel must have one column per training sample
