"""LinearSVC against liblinear; Platt scaling and pairwise coupling against direct optimisation."""

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn import svm as sk
from sklearn.datasets import make_classification

from mathlearn.svm import SVC, LinearSVC, NuSVC
from mathlearn.svm._platt import couple_pairwise, platt_sigmoid


@pytest.mark.parametrize(
    "kw",
    [
        dict(loss="squared_hinge", dual=False),
        dict(loss="squared_hinge", dual=True),
        dict(loss="hinge", dual=True),
    ],
)
def test_linear_svc_matches_liblinear(kw):
    """The primal is strongly convex (unique w); both solvers reach it to ~1e-8 here."""
    X, y = make_classification(300, 6, random_state=0, flip_y=0.1)
    ours = LinearSVC(tol=1e-10, max_iter=100_000, **kw).fit(X, y)
    peer = sk.LinearSVC(tol=1e-10, max_iter=100_000, **kw).fit(X, y)
    np.testing.assert_allclose(ours.coef_, peer.coef_, atol=1e-6)
    np.testing.assert_allclose(ours.intercept_, peer.intercept_, atol=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_primal_line_search_is_the_exact_root(seed):
    """The line search's step against the root of phi'(s) = a + b s - 2 sum c q (m - s q)_+
    found by bisection of the same function, over directions where the full step's active
    set holds (the fast path), where samples start and stop being active before and after
    s = 1, where the root lies past 1, and with margins exactly at 1 (m = 0) and zero
    weights. phi' is piecewise linear with slopes between b and b + 2 sum c q^2, so its root
    is determined to a few units of rounding relative to its size: 1e-12 relative."""
    from scipy.optimize import brentq

    from mathlearn.svm._linear import _line_search

    rng = np.random.default_rng(seed)
    n = 200
    m = rng.standard_normal(n)
    q = rng.standard_normal(n) * [0.1, 1.0, 3.0, 0.01, 1.0, 1.0][seed]
    c = rng.uniform(0.0, 2.0, n)
    m[:5], q[5:8], c[8:10] = 0.0, 0.0, 0.0
    b = rng.uniform(0.5, 2.0)

    def slope(s, a):
        return a + b * s - 2.0 * np.sum(c * q * np.maximum(m - s * q, 0.0))

    for a in (-50.0, -5.0, -0.5, slope(0.0, 0.0) - slope(1.0, 0.0)):
        if slope(0.0, a) >= 0:
            assert _line_search(a, b, m, q, c) == 0.0
            continue
        hi = 1.0
        while slope(hi, a) < 0:
            hi *= 2.0
        ref = brentq(slope, 0.0, hi, args=(a,), xtol=1e-300, rtol=4 * np.finfo(float).eps)
        assert _line_search(a, b, m, q, c) == pytest.approx(ref, rel=1e-12, abs=1e-300)


def test_linear_svc_multiclass_and_weights():
    X, y = make_classification(400, 6, n_informative=4, n_classes=3, random_state=1)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    ours = LinearSVC(tol=1e-10, C=0.5, class_weight={1: 2.0}).fit(X, y, sample_weight=w)
    peer = sk.LinearSVC(tol=1e-10, C=0.5, class_weight={1: 2.0}, dual=False).fit(
        X, y, sample_weight=w
    )
    np.testing.assert_allclose(ours.coef_, peer.coef_, atol=1e-6)
    np.testing.assert_array_equal(ours.predict(X), peer.predict(X))


def test_linear_svc_hinge_equals_kernel_svc_with_regularised_offset():
    """Hinge LinearSVC = kernel C-SVM without offset on the kernel x^T x' + s^2."""
    X, y = make_classification(120, 3, n_informative=2, n_redundant=0, random_state=2)
    lin = LinearSVC(loss="hinge", tol=1e-11, max_iter=100_000).fit(X, y)
    K = X @ X.T + 1.0
    ker = SVC(kernel="precomputed", fit_intercept=False, tol=1e-11).fit(K, y)
    np.testing.assert_allclose(lin.decision_function(X), ker.decision_function(K), atol=1e-7)


def test_platt_sigmoid_is_the_maximum_likelihood_fit():
    rng = np.random.default_rng(0)
    f = rng.normal(size=200) * 2
    y = rng.random(200) < 1 / (1 + np.exp(-1.5 * f + 0.3))
    A, B = platt_sigmoid(f, y)
    n_pos, n_neg = y.sum(), (~y).sum()
    t = np.where(y, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def nll(ab):
        z = ab[0] * f + ab[1]
        return np.sum(np.logaddexp(0, z) - (1 - t) * z)

    ref = minimize(nll, [0.0, 0.0], method="BFGS", options={"gtol": 1e-12})
    np.testing.assert_allclose([A, B], ref.x, atol=1e-6)


def test_pairwise_coupling_solves_its_quadratic_program():
    rng = np.random.default_rng(1)
    K = 4
    r = rng.uniform(0.05, 0.95, (3, K, K))
    r = np.triu(r, 1) + np.tril(1 - np.swapaxes(np.triu(r, 1), 1, 2), -1)
    r[:, np.arange(K), np.arange(K)] = 0.5
    p = couple_pairwise(r)
    for s in range(3):

        def obj(q, s=s):
            return sum(
                (r[s, j, i] * q[i] - r[s, i, j] * q[j]) ** 2
                for i in range(K)
                for j in range(K)
                if i != j
            )

        ref = minimize(
            obj,
            np.full(K, 1 / K),
            constraints=[{"type": "eq", "fun": lambda q: q.sum() - 1}],
            method="SLSQP",
            options={"ftol": 1e-15},
        )
        np.testing.assert_allclose(p[s], ref.x, atol=1e-6)


def test_probabilities_close_to_libsvm():
    """Different CV folds give slightly different sigmoids: agreement to a few percent."""
    X, y = make_classification(300, 5, n_informative=3, n_classes=3, random_state=1)
    ours = SVC(probability=True, random_state=0).fit(X, y)
    with pytest.warns(FutureWarning):
        peer = sk.SVC(probability=True, random_state=0).fit(X, y)
    po, pp = ours.predict_proba(X), peer.predict_proba(X)
    np.testing.assert_allclose(po.sum(axis=1), 1.0, rtol=1e-12)
    assert np.abs(po - pp).max() < 0.05
    assert np.mean(po.argmax(1) == ours.predict(X)) > 0.95
    assert not hasattr(SVC(), "predict_proba")
    nu = NuSVC(probability=True, random_state=0).fit(X, y)
    assert np.all(np.isfinite(nu.predict_log_proba(X)) | (nu.predict_proba(X) == 0))


def test_integer_weights_equal_repeated_samples():
    """A weight w on a sample is the same problem as w copies of it (box bound w C)."""
    X, y = make_classification(60, 3, n_informative=2, n_redundant=0, random_state=4)
    w = np.random.default_rng(2).integers(1, 4, len(y))
    Xr, yr = np.repeat(X, w, axis=0), np.repeat(y, w)
    for est in (
        SVC(gamma=0.5, tol=1e-11),  # a fixed gamma: "scale" reads the variance of X
        LinearSVC(tol=1e-12),
        LinearSVC(loss="hinge", tol=1e-12, max_iter=100_000),
    ):
        a = est.fit(X, y, sample_weight=w).decision_function(X)
        b = est.fit(Xr, yr).decision_function(X)
        np.testing.assert_allclose(a, b, atol=1e-7)
    from mathlearn.svm import SVR

    t = X @ np.array([1.0, -1.0, 0.5])
    a = SVR(gamma=0.5, tol=1e-11).fit(X, t, sample_weight=w).predict(X)
    b = SVR(gamma=0.5, tol=1e-11).fit(Xr, np.repeat(t, w)).predict(X)
    np.testing.assert_allclose(a, b, atol=1e-7)
