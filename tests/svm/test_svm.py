"""Kernel SVMs: the notes' worked examples, the KKT conditions, and libsvm on the same data.

scikit-learn's SVC/NuSVC/SVR/NuSVR wrap libsvm, which solves the same duals; both solvers
stop when the KKT gap ``m(a) - M(a)`` falls below ``tol``. For a convex quadratic over a box
with one equality, a feasible point with gap ``delta`` is within ``delta * sum_t C_t`` of the
optimal objective (the gap bounds every directional derivative along the feasible pair
directions, and ``|a - a*|_1 <= sum_t C_t``). At ``tol = 1e-9`` that bound is ~1e-7 of the
objectives here, so the two objectives must agree to 1e-6 relative; and with a strictly
convex problem in the kernel's feature space (``w`` is unique) the decision values agree to
the issue's 1e-5.
"""

from itertools import combinations

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn import svm as sk
from sklearn.datasets import make_classification, make_regression

from mathlearn.exceptions import InvalidParameterError
from mathlearn.svm import SVC, SVR, NuSVC, NuSVR

TOL = 1e-9


def _rbf(A, B, gamma):
    d = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return np.exp(-gamma * d)


def _dual_objective_classification(model, K_sv):
    """``1/2 c^T K c - sum |c|`` for a binary C-SVC with dual coefficients ``c = y a``."""
    c = model.dual_coef_[0]
    return 0.5 * c @ K_sv @ c - np.abs(c).sum()


# --- the notes' worked examples --------------------------------------------------------


def test_hard_margin_prml_notes_example():
    """PRML-notes hard-margin example: a = [1, 0, 1, 0], w = [1, 1], b = -1."""
    X = np.array([[1.0, 1.0], [2.0, 2.0], [0.0, 0.0], [-1.0, 0.0]])
    t = np.array([1, 1, -1, -1])
    m = SVC(kernel="linear", C=1e8, tol=TOL).fit(X, t)
    np.testing.assert_allclose(m.dual_coef_ @ m.support_vectors_, [[1.0, 1.0]], atol=1e-8)
    np.testing.assert_allclose(m.intercept_, [-1.0], atol=1e-8)
    alpha = np.zeros(4)
    alpha[m.support_] = np.abs(m.dual_coef_[0])
    np.testing.assert_allclose(alpha, [1.0, 0.0, 1.0, 0.0], atol=1e-8)
    np.testing.assert_allclose(t * m.decision_function(X), [1.0, 3.0, 1.0, 2.0], atol=1e-8)


def test_soft_margin_prml_notes_example():
    """C = 1: a = [0, 1/18, 1, 1/18, 1], w = 2/3, b = -1/3, objective 17/9."""
    X = np.array([[-2.0], [-1.0], [1.0], [2.0], [0.5]])
    t = np.array([-1, -1, 1, 1, -1])
    m = SVC(kernel="linear", C=1.0, tol=TOL).fit(X, t)
    alpha = np.zeros(5)
    alpha[m.support_] = np.abs(m.dual_coef_[0])
    np.testing.assert_allclose(alpha, [0, 1 / 18, 1, 1 / 18, 1], atol=1e-9)
    w = float((m.dual_coef_ @ m.support_vectors_)[0, 0])
    assert w == pytest.approx(2 / 3, abs=1e-9)
    assert m.intercept_[0] == pytest.approx(-1 / 3, abs=1e-9)
    xi = np.maximum(0.0, 1 - t * (w * X[:, 0] + m.intercept_[0]))
    assert 0.5 * w**2 + xi.sum() == pytest.approx(17 / 9, abs=1e-9)


def test_imperial_one_dimensional_toy():
    """x = 1 (+1), x = 0 (-1): w = 2, b = -1, a = [2, 2], hyperplane at x = 1/2."""
    m = SVC(kernel="linear", C=1e8, tol=TOL).fit([[1.0], [0.0]], [1, -1])
    np.testing.assert_allclose(m.dual_coef_ @ m.support_vectors_, [[2.0]], atol=1e-8)
    np.testing.assert_allclose(m.intercept_, [-1.0], atol=1e-8)
    np.testing.assert_allclose(np.sort(np.abs(m.dual_coef_[0])), [2.0, 2.0], atol=1e-8)


@pytest.mark.parametrize(
    ("C", "alpha", "w"), [(1.0, 0.5, 1.0), (0.6, 0.5, 1.0), (0.25, 0.25, 0.5)]
)
def test_oxford_tiny_svm(C, alpha, w):
    """x = (1, 0) (+1), (-1, 0) (-1). For C <= 1/2 no margin SV exists: b is the midpoint 0."""
    X = np.array([[1.0, 0.0], [-1.0, 0.0]])
    m = SVC(kernel="linear", C=C, tol=TOL).fit(X, [1, -1])
    np.testing.assert_allclose(np.abs(m.dual_coef_[0]), [alpha, alpha], atol=1e-12)
    np.testing.assert_allclose(m.dual_coef_ @ m.support_vectors_, [[w, 0.0]], atol=1e-12)
    assert m.intercept_[0] == pytest.approx(0.0, abs=1e-12)


def test_oxford_tiny_svm_without_offset():
    X = np.array([[1.0, 0.0], [-1.0, 0.0]])
    m = SVC(kernel="linear", C=10.0, fit_intercept=False, tol=TOL).fit(X, [1, -1])
    alpha = np.zeros(2)
    alpha[m.support_] = np.abs(m.dual_coef_[0])
    assert alpha.sum() == pytest.approx(1.0, abs=1e-9)  # any split with a1 + a2 = 1
    np.testing.assert_allclose(m.dual_coef_ @ m.support_vectors_, [[1.0, 0.0]], atol=1e-9)
    assert m.intercept_[0] == 0.0
    for nu in (0.3, 0.6, 0.95):
        m = NuSVC(nu=nu, kernel="linear", fit_intercept=False, tol=TOL).fit(X, [1, -1])
        assert np.abs(m.dual_coef_).sum() == pytest.approx(nu, abs=1e-12)
        assert np.linalg.norm(m.dual_coef_ @ m.support_vectors_) == pytest.approx(nu, abs=1e-12)
        assert m.rho_[0] == pytest.approx(nu, abs=1e-12)


def test_nu_svm_without_offset_bounds_the_fractions():
    """|N(a)|/n <= nu <= (|N(a)| + |M(a)|)/n: errors at a = 1/n, margin SVs in (0, 1/n)."""
    X, y = make_classification(120, 4, random_state=3, flip_y=0.2)
    n = len(y)
    for nu in (0.2, 0.5, 0.8):
        m = NuSVC(nu=nu, kernel="rbf", gamma=0.5, fit_intercept=False, tol=TOL).fit(X, y)
        alpha = np.zeros(n)
        alpha[m.support_] = np.abs(m.dual_coef_[0])
        assert alpha.sum() == pytest.approx(nu, rel=1e-10)
        at_bound = np.isclose(alpha, 1 / n, rtol=0, atol=1e-12)
        free = (alpha > 1e-12) & ~at_bound
        assert at_bound.sum() / n <= nu + 1e-12
        assert nu <= (at_bound.sum() + free.sum()) / n + 1e-12


# --- KKT conditions and libsvm ----------------------------------------------------------


def _kkt_violation(model, X, y, C):
    """Largest violation of the C-SVC KKT conditions, in units of the margin."""
    f = model.decision_function(X)
    yy = np.where(y == model.classes_[1], 1.0, -1.0)
    alpha = np.zeros(len(y))
    alpha[model.support_] = np.abs(model.dual_coef_[0])
    margin = yy * f
    free = (alpha > 0) & (alpha < C)
    viol = np.zeros(len(y))
    viol[alpha == 0] = np.maximum(0, 1 - margin[alpha == 0])
    viol[alpha == C] = np.maximum(0, margin[alpha == C] - 1)
    viol[free] = np.abs(margin[free] - 1)
    return viol.max(), abs(float(yy @ alpha))


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly", "sigmoid"])
def test_svc_matches_libsvm_binary(kernel):
    X, y = make_classification(150, 5, random_state=0, flip_y=0.1)
    params = dict(kernel=kernel, C=1.0, tol=TOL, degree=2, coef0=0.5 if kernel != "linear" else 0)
    if kernel == "sigmoid":
        params.update(gamma=0.01)
    ours = SVC(**params).fit(X, y)
    peer = sk.SVC(**params).fit(X, y)
    np.testing.assert_array_equal(ours.support_, peer.support_)
    np.testing.assert_allclose(ours.decision_function(X), peer.decision_function(X), atol=1e-5)
    if kernel == "rbf":
        K = _rbf(ours.support_vectors_, ours.support_vectors_, 1.0 / (5 * X.var()))
        o, p = _dual_objective_classification(ours, K), _dual_objective_classification(peer, K)
        assert o == pytest.approx(p, rel=1e-6)
        viol, eq = _kkt_violation(ours, X, y, 1.0)
        assert viol < 1e-6 and eq < 1e-10


def test_svc_matches_libsvm_multiclass_layout():
    X, y = make_classification(240, 6, n_informative=4, n_classes=4, random_state=1)
    y = np.array(["a", "b", "c", "d"])[y]
    ours = SVC(C=2.0, tol=TOL).fit(X, y)
    peer = sk.SVC(C=2.0, tol=TOL).fit(X, y)
    np.testing.assert_array_equal(ours.support_, peer.support_)
    np.testing.assert_array_equal(ours.n_support_, peer.n_support_)
    # The dual coefficients are unique only up to the null space of the pair's Gram matrix;
    # the layout is checked through the decision values, which are unique.
    assert ours.dual_coef_.shape == peer.dual_coef_.shape
    np.testing.assert_allclose(ours.intercept_, peer.intercept_, atol=1e-5)
    for shape in ("ovr", "ovo"):
        ours.set_params(decision_function_shape=shape)
        peer.set_params(decision_function_shape=shape)
        np.testing.assert_allclose(ours.decision_function(X), peer.decision_function(X), atol=1e-5)
    np.testing.assert_array_equal(ours.predict(X), peer.predict(X))


def test_weights_match_libsvm():
    X, y = make_classification(150, 4, random_state=2, flip_y=0.1)
    w = np.random.default_rng(0).uniform(0.2, 3.0, len(y))
    ours = SVC(C=0.7, tol=TOL, class_weight={0: 2.0}).fit(X, y, sample_weight=w)
    peer = sk.SVC(C=0.7, tol=TOL, class_weight={0: 2.0}).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(ours.support_, peer.support_)
    np.testing.assert_allclose(ours.decision_function(X), peer.decision_function(X), atol=1e-5)
    bal = SVC(class_weight="balanced", tol=TOL).fit(X[:110], y[:110])
    bal_peer = sk.SVC(class_weight="balanced", tol=TOL).fit(X[:110], y[:110])
    np.testing.assert_allclose(bal.decision_function(X), bal_peer.decision_function(X), atol=1e-5)


def _nu_objective(model, K, nu, y):
    """``1/2 a^T Q a`` of libsvm's unscaled nu-SVC dual (``sum a = nu n``), from ``dual_coef_``.

    The fitted coefficients are ``y a / r``; ``r`` is recovered from ``sum_{y=+1} a = nu n/2``.
    """
    c = np.zeros(len(y))
    c[model.support_] = model.dual_coef_[0]
    r = nu * len(y) / 2 / np.abs(c[y == 1]).sum()
    return 0.5 * r * r * c @ K @ c, r


def test_nusvc_matches_libsvm():
    X, y = make_classification(150, 5, random_state=4, flip_y=0.1)
    K = _rbf(X, X, 1.0 / (5 * X.var()))
    for nu in (0.3, 0.6):
        ours = NuSVC(nu=nu, tol=TOL).fit(X, y)
        peer = sk.NuSVC(nu=nu, tol=TOL).fit(X, y)
        np.testing.assert_array_equal(ours.support_, peer.support_)
        (o, r), (p, _) = _nu_objective(ours, K, nu, y), _nu_objective(peer, K, nu, y)
        assert o == pytest.approx(p, rel=1e-6)
        # The fitted decision values are the unscaled ones divided by r, so their agreement
        # is 1e-5 / r (at nu = 0.3 here r ~ 1e-3 and the scaled values carry 1e3 times the
        # solvers' difference).
        np.testing.assert_allclose(
            ours.decision_function(X), peer.decision_function(X), atol=1e-5 / min(r, 1.0)
        )


def test_svr_and_nusvr_match_libsvm():
    X, y = make_regression(150, 4, noise=5.0, random_state=0)
    y = y / y.std()
    for ours, peer in [
        (SVR(C=2.0, epsilon=0.2, tol=TOL), sk.SVR(C=2.0, epsilon=0.2, tol=TOL)),
        (SVR(kernel="linear", tol=TOL), sk.SVR(kernel="linear", tol=TOL)),
        (NuSVR(nu=0.4, C=3.0, tol=TOL), sk.NuSVR(nu=0.4, C=3.0, tol=TOL)),
    ]:
        ours.fit(X, y)
        peer.fit(X, y)
        np.testing.assert_array_equal(ours.support_, peer.support_)
        np.testing.assert_allclose(ours.predict(X), peer.predict(X), atol=1e-5)


def test_svr_tube():
    """Training points strictly inside the epsilon-tube are not support vectors."""
    X, y = make_regression(80, 2, noise=1.0, random_state=5)
    y = y / y.std()
    m = SVR(C=5.0, epsilon=0.3, tol=TOL).fit(X, y)
    resid = np.abs(m.predict(X) - y)
    inside = np.setdiff1d(np.arange(80), m.support_)
    assert np.all(resid[inside] <= 0.3 + 1e-7)
    assert np.all(resid[m.support_] >= 0.3 - 1e-7)


def test_hinge_erm_equals_c_svm():
    """(1/n) sum hinge + (lambda/n) ||w||^2 has the C-SVM's minimiser for C = 1/(2 lambda)."""
    X, y = make_classification(40, 2, n_redundant=0, n_informative=2, random_state=6, flip_y=0.15)
    t = np.where(y == 1, 1.0, -1.0)
    lam = 0.4
    m = SVC(kernel="linear", C=1 / (2 * lam), tol=1e-12).fit(X, y)
    w_svm = (m.dual_coef_ @ m.support_vectors_)[0]
    n = len(t)

    # The hinge ERM as a smooth QP in (w, b, xi): minimise with SLSQP (independent solver).
    def obj(z):
        return z[3:].sum() / n + lam / n * z[:2] @ z[:2]

    cons = [
        {"type": "ineq", "fun": lambda z: t * (X @ z[:2] + z[2]) - 1 + z[3:]},
        {"type": "ineq", "fun": lambda z: z[3:]},
    ]
    res = minimize(
        obj,
        np.zeros(3 + n),
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    np.testing.assert_allclose(res.x[:2], w_svm, atol=1e-5)


def test_precomputed_kernel_equals_rbf():
    X, y = make_classification(100, 3, n_informative=2, n_redundant=0, random_state=7)
    gamma = 0.3
    K = _rbf(X, X, gamma)
    pre = SVC(kernel="precomputed", tol=TOL).fit(K, y)
    direct = SVC(gamma=gamma, tol=TOL).fit(X, y)
    np.testing.assert_allclose(pre.decision_function(K), direct.decision_function(X), atol=1e-8)


def test_far_from_origin_rbf_unchanged():
    """The RBF kernel is shift-invariant: moving the data by 1e8 changes nothing."""
    X, y = make_classification(80, 3, n_informative=2, n_redundant=0, random_state=8)
    a = SVC(gamma=0.5, tol=TOL).fit(X, y)
    b = SVC(gamma=0.5, tol=TOL).fit(X + 1e8, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    # The shifted data carry rounding of 1e8 * eps ~ 1.5e-8 per coordinate.
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X + 1e8), atol=1e-6)


# --- bad input ------------------------------------------------------------------------


def test_bad_inputs():
    X, y = make_classification(30, 3, n_informative=2, n_redundant=0, random_state=0)
    with pytest.raises(ValueError, match="at least 2 classes"):
        SVC().fit(X, np.zeros(30))
    with pytest.raises(InvalidParameterError, match="'C' parameter"):
        SVC(C=0).fit(X, y)
    with pytest.raises(InvalidParameterError, match="'C' parameter"):
        SVR(C=-1).fit(X, y)
    for nu in (0.0, 1.5):
        with pytest.raises(InvalidParameterError, match="'nu' parameter"):
            NuSVC(nu=nu).fit(X, y)
    yy = np.array([0] * 27 + [1] * 3)
    with pytest.raises(ValueError, match="infeasible"):
        NuSVC(nu=0.5).fit(X, yy)
    K = X @ X.T - 5 * np.eye(30)  # not PSD
    with pytest.raises(ValueError, match="not positive semi-definite"):
        SVC(kernel="precomputed").fit(K, y)
    with pytest.raises(ValueError, match="square"):
        SVC(kernel="precomputed").fit(X, y)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SVC().fit(Xn, y)


def test_one_pair_with_a_single_label_per_class():
    """A three-class problem where one class has a single sample still trains every pair."""
    X = np.array([[0.0, 0.0], [0.1, 0.2], [3.0, 3.0], [3.1, 2.9], [6.0, 0.0]])
    y = np.array([0, 0, 1, 1, 2])
    m = SVC(kernel="linear", C=10.0).fit(X, y)
    np.testing.assert_array_equal(m.predict(X), y)
    assert m.dual_coef_.shape == (2, len(m.support_))
    assert len(list(combinations(range(3), 2))) == m.intercept_.shape[0]


@pytest.mark.parametrize("scale", [1e300, 1e-300, 2.0**500])
def test_rbf_with_gamma_scale_is_invariant_to_the_data_scale(scale):
    """gamma='scale' makes gamma ||x - y||^2 scale-free: the same machine at any magnitude."""
    X, y = make_classification(80, 3, n_informative=2, n_redundant=0, random_state=9)
    a = SVC(tol=TOL).fit(X, y)
    b = SVC(tol=TOL).fit(X * scale, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X * scale), atol=1e-7)
    r = SVR(tol=TOL).fit(X * scale, X[:, 0])
    np.testing.assert_allclose(
        r.predict(X * scale), SVR(tol=TOL).fit(X, X[:, 0]).predict(X), atol=1e-7
    )


def test_kernels_that_overflow_are_refused_by_name():
    X, y = make_classification(40, 3, n_informative=2, n_redundant=0, random_state=0)
    for est in (SVC(kernel="linear"), SVC(kernel="poly"), NuSVC(kernel="sigmoid")):
        with pytest.raises(ValueError, match="overflows? float64"):
            est.fit(X * 1e300, y)
    with pytest.raises(ValueError, match="not representable"):
        SVC(gamma=1.0).fit(X * 1e-300, y)
