"""The compiled SMO route (``mathlearn._ext._smo``) against the NumPy route, on the same problems.

Both routes take the same steps (same pair selection, same clipping, same shrinking
schedule); they differ only in the rounding of the kernel entries and of the running
gradient, so they stop at solutions that both satisfy the KKT conditions to ``tol``. For
the dual objective ``f``, a feasible point with KKT gap ``delta`` is within ``delta * sum_t
C_t`` of the optimum (see ``test_svm.py``); at ``tol = 1e-10`` this is below 1e-10 of
``|f|`` on the problems here (``sum C`` is a few times ``|f|`` at most), so the objectives
must agree to 1e-10 relative. The dual coefficients of a problem whose optimum is unique
(an RBF kernel on distinct points is positive definite) then agree to within the distance
the gap allows, ``delta`` over the smallest curvature of the free block; at ``tol = 1e-12``
that is below 1e-9 of the largest coefficient here, and the test asks for 1e-8.

The routes are switched with ``MATHLEARN_DISABLE_EXT``. Without the library (a source tree
that was never built) the comparison is skipped, unless ``MATHLEARN_REQUIRE_EXT`` is set.
"""

import numpy as np
import pytest
from sklearn import svm as sk
from sklearn.datasets import make_classification, make_regression

from mathlearn import _ext
from mathlearn.svm import SVC, SVR, NuSVC, NuSVR

pytestmark = pytest.mark.skipif(
    _ext.load("_smo") is None, reason="mathlearn._ext._smo is not built"
)


def _data(kind, n=160, seed=0):
    if kind == "regression":
        X, y = make_regression(n, 5, noise=5.0, random_state=seed)
        return X, y / y.std()
    X, y = make_classification(
        n, 6, n_informative=4, class_sep=0.6, flip_y=0.1, random_state=seed,
        n_classes=3 if kind == "three" else 2, n_clusters_per_class=1,
    )  # fmt: skip
    return X, y


def _gram(model, X, Y):
    """The model's kernel between X and Y, written out here."""
    gamma = model._gamma if model.kernel != "linear" else 1.0
    if model.kernel == "rbf":
        sq = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)
        return np.exp(-gamma * sq)
    G = X @ Y.T
    if model.kernel == "poly":
        return (gamma * G + model.coef0) ** model.degree
    if model.kernel == "sigmoid":
        return np.tanh(gamma * G + model.coef0)
    return G


def _fit_both(monkeypatch, make, X, y, **fit):
    compiled = make().fit(X, y, **fit)
    monkeypatch.setenv(_ext.DISABLE_ENV, "1")
    numpy_route = make().fit(X, y, **fit)
    monkeypatch.delenv(_ext.DISABLE_ENV)
    return compiled, numpy_route


def _objective(model, X, y=None):
    """The binary C-SVC dual ``1/2 c^T K c - sum |c|`` or the epsilon-SVR dual, from the model."""
    S = X[model.support_]
    c = model.dual_coef_[0]
    K = X[np.ix_(model.support_, model.support_)] if model.kernel == "precomputed" else None
    K = _gram(model, S, S) if K is None else K
    if y is None:
        return 0.5 * c @ K @ c - np.abs(c).sum()
    return 0.5 * c @ K @ c + model.epsilon * np.abs(c).sum() - y[model.support_] @ c


CLASSIFIERS = [
    ("rbf", {}),
    ("linear", {"C": 0.1}),
    ("poly", {"degree": 2, "coef0": 1.0, "C": 0.5}),
    ("sigmoid", {"gamma": 0.02, "coef0": -0.5}),
    ("rbf", {"shrinking": False}),
    ("rbf", {"class_weight": {0: 3.0, 1: 0.5}, "C": 10.0}),
]


@pytest.mark.parametrize(("kernel", "params"), CLASSIFIERS)
def test_svc_routes_reach_the_same_dual_objective(monkeypatch, kernel, params):
    X, y = _data("binary")
    a, b = _fit_both(monkeypatch, lambda: SVC(kernel=kernel, tol=1e-10, **params), X, y)
    fa, fb = _objective(a, X), _objective(b, X)
    assert abs(fa - fb) <= 1e-10 * abs(fb)
    # ... and both are libsvm's optimum (the same problem solved by another solver).
    ref = sk.SVC(kernel=kernel, tol=1e-10, **params).fit(X, y)
    ref.epsilon, ref._gamma = None, a._gamma
    fr = (
        0.5
        * ref.dual_coef_[0]
        @ _gram(a, ref.support_vectors_, ref.support_vectors_)
        @ (ref.dual_coef_[0])
        - np.abs(ref.dual_coef_[0]).sum()
    )
    assert abs(fa - fr) <= 1e-8 * abs(fr)


def test_routes_reach_the_same_coefficients(monkeypatch):
    X, y = _data("binary")
    a, b = _fit_both(monkeypatch, lambda: SVC(tol=1e-12), X, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    scale = np.abs(b.dual_coef_).max()
    np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-8)


def test_precomputed_and_multiclass_routes_agree(monkeypatch):
    X, y = _data("three")
    K = _gram(SVC(kernel="linear"), X, X)
    a, b = _fit_both(monkeypatch, lambda: SVC(kernel="precomputed", tol=1e-12, C=0.1), K, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    scale = np.abs(b.dual_coef_).max()
    np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(a.decision_function(K), b.decision_function(K), atol=1e-7)
    np.testing.assert_array_equal(a.predict(K), b.predict(K))


def test_precomputed_columns_are_read_in_place_whatever_the_cache():
    # The compiled solver reads a precomputed matrix's columns in place (its rows: the
    # validated matrix is exactly symmetric) instead of copying them into its cache; a cache
    # of a few columns (evictions) must reach the very same machine as the default budget,
    # and the NuSVC route, whose start touches a fraction nu of the columns, as well.
    X, y = _data("three")
    K = _gram(SVC(kernel="linear"), X, X)
    for make in (
        lambda cs: SVC(kernel="precomputed", C=0.1, cache_size=cs),
        lambda cs: NuSVC(nu=0.3, kernel="precomputed", cache_size=cs),
    ):
        a, b = make(200).fit(K, y), make(0.01).fit(K, y)
        for key in ("dual_coef_", "intercept_", "support_", "n_iter_"):
            np.testing.assert_array_equal(getattr(a, key), getattr(b, key))


def test_svr_routes_reach_the_same_dual_objective(monkeypatch):
    X, y = _data("regression")
    a, b = _fit_both(monkeypatch, lambda: SVR(tol=1e-10, C=3.0), X, y)
    fa, fb = _objective(a, X, y), _objective(b, X, y)
    assert abs(fa - fb) <= 1e-10 * abs(fb)
    np.testing.assert_allclose(a.predict(X), b.predict(X), atol=1e-7)


@pytest.mark.parametrize("make", [lambda: NuSVC(nu=0.4, tol=1e-12), lambda: NuSVR(tol=1e-12)])
def test_nu_routes_agree(monkeypatch, make):
    kind = "binary" if isinstance(make(), NuSVC) else "regression"
    X, y = _data(kind, n=160 if kind == "binary" else 70)
    a, b = _fit_both(monkeypatch, make, X, y)
    np.testing.assert_array_equal(a.support_, b.support_)
    scale = np.abs(b.dual_coef_).max()
    np.testing.assert_allclose(a.dual_coef_, b.dual_coef_, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=0, atol=1e-8)


def test_sample_weights_and_a_small_cache(monkeypatch):
    """Zero weights (variables boxed at 0), and a cache of a few columns (evictions)."""
    X, y = _data("binary", n=300, seed=3)
    w = np.random.default_rng(0).uniform(0, 2, size=y.shape[0])
    w[::7] = 0.0
    make = lambda: SVC(tol=1e-10, C=2.0, cache_size=0.01)  # noqa: E731
    a, b = _fit_both(monkeypatch, make, X, y, sample_weight=w)
    fa, fb = _objective(a, X), _objective(b, X)
    assert abs(fa - fb) <= 1e-10 * abs(fb)
    assert not np.isin(np.flatnonzero(w == 0), a.support_).any()


def test_kernel_overflow_inside_the_solver_is_an_error():
    """``k(x, x) = (x^2 - x^2)^4 = 0`` but ``k(x, -x) = (-2 x^2)^4 = 2^1284``: a clear error."""
    x = 2.0**160  # x^2 = 2^320 exactly
    X = np.array([[x], [-x], [x], [-x]])
    model = SVC(kernel="poly", degree=4, gamma=1.0, coef0=-(x**2))
    with pytest.raises(ValueError, match="polynomial kernel overflowed"):
        model.fit(X, [0, 1, 1, 0])


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: SVC(tol=1e-12, **kw),
        lambda **kw: NuSVC(nu=0.4, tol=1e-12, **kw),
        lambda **kw: SVR(tol=1e-12, C=3.0, **kw),
    ],
)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_whole_gram_matrix_and_columns_agree(make, n_classes):
    # From 128 features an RBF Gram matrix that fits in the cache is evaluated whole before
    # the iterations; a cache of 0.01 MB makes the solver evaluate columns instead. Kernel
    # entries then differ by rounding only, and both stop at a KKT gap of 1e-12 on a
    # positive definite problem: the coefficients agree to the distance that gap allows, far
    # below 1e-8 of the largest (as between the routes above).
    regression = isinstance(make(), SVR)
    if regression and n_classes == 3:
        pytest.skip("one regression problem")
    rng = np.random.default_rng(n_classes)
    X = rng.normal(size=(90, 150))
    w = rng.normal(size=150)
    y = X @ w / 12.0 if regression else np.digitize(X @ w, [-8.0, 8.0][: n_classes - 1])
    whole, columns = make().fit(X, y), make(cache_size=0.01).fit(X, y)
    np.testing.assert_array_equal(whole.support_, columns.support_)
    scale = np.abs(columns.dual_coef_).max()
    np.testing.assert_allclose(whole.dual_coef_, columns.dual_coef_, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(whole.intercept_, columns.intercept_, rtol=0, atol=1e-8)


def test_rows_used_uncentred_and_centred_give_the_same_machine():
    # Data near the origin are used as they are (no copy); the same data moved far away
    # are centred first. The RBF kernel only sees differences, so both are the same
    # problem up to rounding of the kernel entries (a few eps times |x|^2 either way), and
    # at tol 1e-12 on a positive definite problem the coefficients agree to far below 1e-8.
    X, y = _data("binary")
    near = SVC(tol=1e-12).fit(X, y)
    far = SVC(tol=1e-12).fit(X + 1e3, y)
    assert not np.any(near._rbf_units[1]) and np.all(far._rbf_units[1] != 0)
    np.testing.assert_array_equal(near.support_, far.support_)
    scale = np.abs(near.dual_coef_).max()
    np.testing.assert_allclose(near.dual_coef_, far.dual_coef_, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(
        near.decision_function(X), far.decision_function(X + 1e3), atol=1e-7
    )


def _compiled_exp(x):
    import ctypes

    fn = _ext.load("_smo").smo_exp_nonpositive
    fn.restype, fn.argtypes = None, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    x = np.ascontiguousarray(x, dtype=np.float64)
    out = np.empty_like(x)
    fn(x.ctypes.data, out.ctypes.data, x.size)
    return out


def test_kernel_exponential_against_mpmath():
    """The RBF columns' exp (a polynomial after reduction by ln 2, evaluated lane-parallel)
    against mpmath at 200 bits. Its error analysis (the comment of ``exp_nonpositive`` in
    ``_smo.c``) bounds it by two units in the last place of the result in the normal range; in
    the subnormal range the one rounding there adds half a unit of 2^-1074 to an error of at most
    2^-1074, so two such units bound it; below ln(2^-1075) it gives 0, and exactly 1 at 0."""
    mpmath = pytest.importorskip("mpmath")
    rng = np.random.default_rng(3)
    normal = np.concatenate([
        -rng.uniform(0, 0.35, 4000), -rng.uniform(0, 40, 4000), -rng.uniform(690, 708.39, 1000),
        -rng.exponential(1e-9, 500),
        # multiples of ln(2) / 2: where r = 0, and where |r| is largest and k changes
        -np.arange(1, 2040) * (0.5 * np.log(2.0)),
    ])  # fmt: skip
    sub = -rng.uniform(708.4, 745.1, 500)

    def errors(x, got):
        with mpmath.workprec(200):
            exact = [mpmath.exp(mpmath.mpf(v)) for v in x]
            pairs = zip(got, exact, strict=True)
            return np.array([float(abs(mpmath.mpf(g) - e)) for g, e in pairs])

    got = _compiled_exp(normal)
    assert np.all(errors(normal, got) <= 2 * np.spacing(got))
    assert np.all(errors(sub, _compiled_exp(sub)) <= 2 * 2.0**-1074)
    edge = _compiled_exp([0.0, -0.0, -1e-300, -745.2, -746.0, -1e300, -np.inf])
    assert edge[:3].tolist() == [1.0, 1.0, 1.0]
    assert edge[3:].tolist() == [0.0, 0.0, 0.0, 0.0]
