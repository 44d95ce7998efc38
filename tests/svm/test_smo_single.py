"""Single-precision kernel columns in the compiled SMO solver, and the nu-SVMs' start.

Where ``single_columns_suffice`` allows it, the compiled solver stores its cached columns
rounded to single precision and runs the iterations of the problem with the rounded matrix.
Its promise (see its docstring): the KKT gap of the *true* problem at the solution is within
``1.1 tol``, because every score is within ``tol / 20`` of the true one. Both are checked
here against the scores recomputed in double precision from the kernel written out.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression

from mathlearn import _ext
from mathlearn.svm._smo import _U32, KernelSpec, single_columns_suffice, solve_dual

pytestmark = pytest.mark.skipif(
    _ext.load("_smo") is None, reason="mathlearn._ext._smo is not built"
)


class _Gram:
    """An RBF Gram matrix for ``solve_dual``: the compiled solver evaluates it from ``c_spec``;
    ``block`` (the nu start's products) is written out here."""

    def __init__(self, X, gamma):
        self.X, self.gamma = X, gamma
        self.c_spec = KernelSpec("rbf", X, np.einsum("ij,ij->i", X, X), gamma)

    def block(self, rows, cols):
        d = ((self.X[rows][:, None, :] - self.X[cols][None, :, :]) ** 2).sum(-1)
        return np.exp(-self.gamma * d)


def _problem(kind, n=600):
    if kind == "svr":
        X, y = make_regression(n, 8, noise=10.0, random_state=1)
        y = y / y.std()
        sign = np.r_[np.ones(n), -np.ones(n)]
        index = np.r_[np.arange(n), np.arange(n)]
        p = np.r_[0.1 - y, 0.1 + y]
        upper = np.ones(2 * n)
        return X, sign, index, p, upper, None, "single"
    X, y = make_classification(n, 8, flip_y=0.1, class_sep=0.7, random_state=2)
    sign = np.where(y == 1, 1.0, -1.0)
    index = np.arange(n)
    if kind == "svc":
        return X, sign, index, -np.ones(n), np.ones(n), None, "single"
    # nu-SVC in libsvm's form: box [0, 1], sum over each class = nu n / 2, p = 0
    nu = 0.4
    alpha0 = np.zeros(n)
    for s in (1.0, -1.0):
        members = np.flatnonzero(sign == s)
        mass = nu * n / 2
        full = int(mass)
        alpha0[members[:full]] = 1.0
        alpha0[members[full]] = mass - full
    return X, sign, index, np.zeros(n), np.ones(n), alpha0, "per_sign"


def _true_scores(X, gamma, sign, index, p, alpha):
    d = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.exp(-gamma * d)
    grad = sign * (K[np.ix_(index, index)] @ (sign * alpha)) + p
    return -sign * grad


def _kkt_gap(score, sign, alpha, upper, per_sign):
    up = np.where(sign > 0, alpha < upper, alpha > 0)
    low = np.where(sign > 0, alpha > 0, alpha < upper)
    groups = [sign > 0, sign < 0] if per_sign else [np.ones_like(up)]
    return max(score[up & g].max() - score[low & g].min() for g in groups)


@pytest.mark.parametrize("kind", ["svc", "svr", "nusvc"])
def test_single_columns_keep_the_true_kkt_gap_within_tol(kind):
    X, sign, index, p, upper, alpha0, equality = _problem(kind)
    gamma, tol = 1.0 / X.shape[1], 1e-3
    gram = _Gram(X, gamma)
    assert single_columns_suffice(gram.c_spec, upper, tol)
    kdiag = np.ones(X.shape[0])
    kw = dict(alpha0=alpha0, equality=equality, tol=tol, compiled=True)
    single = solve_dual(gram, kdiag, sign, index, p, upper, single_columns=True, **kw)
    double = solve_dual(gram, kdiag, sign, index, p, upper, single_columns=False, **kw)
    assert single.converged and double.converged
    for result in (single, double):
        true = _true_scores(X, gamma, sign, index, p, result.alpha)
        assert _kkt_gap(true, sign, result.alpha, upper, equality == "per_sign") <= 1.1 * tol
    # the scores the single-precision solver worked with are within tol / 20 of the true ones
    true = _true_scores(X, gamma, sign, index, p, single.alpha)
    assert np.max(np.abs(-sign * single.grad - true)) <= tol / 20
    # ... and in double precision within rounding of them
    true = _true_scores(X, gamma, sign, index, p, double.alpha)
    assert np.max(np.abs(-sign * double.grad - true)) <= 1e-10


def test_the_rule_follows_the_rounding_bound():
    # u K_max ||C||_2 <= tol sqrt(3) / 120: with K_max = 1, C = 1 and tol = 1e-3 the limit
    # is l = (tol sqrt(3) / 120 / u)^2 variables, about 58 640.
    limit = (1e-3 * np.sqrt(3) / 120 / _U32) ** 2
    rbf = KernelSpec("rbf", np.zeros((1, 1)))
    assert single_columns_suffice(rbf, np.ones(int(0.99 * limit)), 1e-3)
    assert not single_columns_suffice(rbf, np.ones(int(1.01 * limit)), 1e-3)
    # a tight tolerance keeps double precision; so does C large enough
    assert not single_columns_suffice(rbf, np.ones(100), 1e-8)
    assert not single_columns_suffice(rbf, np.full(100, 1e4), 1e-3)
    # linear kernel: K_max = max |x|^2, which must sit in single precision's normal range
    X = np.array([[3.0, 4.0], [1.0, 0.0]])
    assert single_columns_suffice(KernelSpec("linear", X), np.ones(50), 1e-3)
    limit_c = 1e-3 * np.sqrt(3) / 120 / _U32 / 25.0 / np.sqrt(100)
    linear = KernelSpec("linear", X)
    assert not single_columns_suffice(linear, np.full(100, 1.01 * limit_c), 1e-3)
    assert single_columns_suffice(linear, np.full(100, 0.99 * limit_c), 1e-3)
    for scale in (1e-70, 1e70):
        assert not single_columns_suffice(KernelSpec("linear", X * scale), np.ones(9), 1e-3)
    # polynomial: (gamma max |x|^2 + |coef0|)^degree, overflow included
    poly = KernelSpec("poly", X, gamma=0.05, coef0=-1.0, degree=3)  # K_max = 2.25^3
    limit_c = 1e-3 * np.sqrt(3) / 120 / _U32 / 2.25**3 / 3.0
    assert single_columns_suffice(poly, np.full(9, 0.99 * limit_c), 1e-3)
    assert not single_columns_suffice(poly, np.full(9, 1.01 * limit_c), 1e-3)
    huge = KernelSpec("poly", X * 1e100, gamma=1.0, coef0=0.0, degree=4)
    assert not single_columns_suffice(huge, np.ones(9), 1e-3)
    assert not single_columns_suffice(KernelSpec("precomputed", np.eye(3)), np.ones(3), 1)


@pytest.mark.parametrize("single", [False, True])
def test_nu_start_by_products_equals_the_solvers_own(single):
    # max_iter=0: the returned scores are the start's (after the final rebuild, which has
    # nothing to do with every variable active). With the products (gram given) and with
    # the solver's own kernel columns (gram without block: the C start), they agree to the
    # rounding of two summation orders in double, on kernel values rounded alike.
    X, sign, index, p, upper, alpha0, _ = _problem("nusvc", n=300)
    gram = _Gram(X, 0.125)
    kw = dict(alpha0=alpha0, equality="per_sign", max_iter=0, compiled=True)
    kdiag = np.ones(X.shape[0])
    a = solve_dual(gram, kdiag, sign, index, p, upper, single_columns=single, **kw)

    from mathlearn.svm import _smo

    b = _smo._solve_compiled(
        gram.c_spec,
        kdiag,
        sign,
        index,
        p,
        upper,
        alpha0.copy(),
        True,
        1e-3,
        0,
        200.0,
        True,
        single,
        None,
    )
    # |score| sums about 120 kernel values of at most 1: a few hundred eps in double
    # In single precision an entry that the two routes compute a few eps apart can round to
    # neighbouring floats: each such entry moves a score by at most 2u (|K| <= 1, a <= 1).
    np.testing.assert_allclose(a.grad, b.grad, rtol=0, atol=4 * _U32 if single else 1e-12)
