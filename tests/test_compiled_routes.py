"""The NumPy routes for small problems and the compiled kernels for large ones agree.

Each estimator with a compiled kernel takes a NumPy route below a size threshold, so that a
first call on small data compiles nothing. The two routes implement the same iteration; here
each kernel is run on small data (the threshold lowered to zero) against the NumPy route.
Also: numba's cache goes to the user's cache directory, never into the package.
"""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import mathlearn
from mathlearn.cluster import _agglomerative, _kmeans_common
from mathlearn.decomposition import NMF, _nmf
from mathlearn.exceptions import ConvergenceWarning
from mathlearn.linear_model import _coordinate_descent, _sgd
from mathlearn.optim import inverse_scaling


@pytest.mark.parametrize("weighted", [False, True])
def test_kmeans_assignment_routes_agree(rng, monkeypatch, weighted):
    # The compiled helper (_ext._kmeans) against the NumPy route, over several row blocks.
    X = rng.normal(size=(9000, 5))
    C = rng.normal(size=(4, 5))
    w = rng.uniform(0.0, 2.0, size=9000) if weighted else None
    monkeypatch.setattr(_kmeans_common, "_BLOCK_DOUBLES", 4 * 1000)
    compiled = _kmeans_common.assign(X, C, accumulate=True, sample_weight=w)
    monkeypatch.setenv("MATHLEARN_DISABLE_EXT", "1")
    numpy_route = _kmeans_common.assign(X, C, accumulate=True, sample_weight=w)
    np.testing.assert_array_equal(compiled[0], numpy_route[0])
    for a, b in zip(compiled[1:], numpy_route[1:], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    labels = compiled[0]
    d_numpy = _kmeans_common._sq_dist_to_assigned(X, C, labels)
    monkeypatch.delenv("MATHLEARN_DISABLE_EXT")
    d_compiled = _kmeans_common._sq_dist_to_assigned(X, C, labels)
    np.testing.assert_allclose(d_compiled, d_numpy, rtol=1e-14)


@pytest.mark.parametrize("linkage", ["single", "complete", "average", "ward"])
def test_linkage_routes_agree(rng, monkeypatch, linkage):
    X = rng.normal(size=(80, 3))
    small = _agglomerative.linkage_tree(X, linkage)
    monkeypatch.setattr(_agglomerative, "_KERNEL_MIN_SAMPLES", 0)
    large = _agglomerative.linkage_tree(X, linkage)
    np.testing.assert_array_equal(small[:, [0, 1, 3]], large[:, [0, 1, 3]])
    np.testing.assert_allclose(small[:, 2], large[:, 2], rtol=1e-14)


def test_nnls_routes_agree(rng, monkeypatch):
    H = np.abs(rng.normal(size=(4, 12)))
    X = np.abs(rng.normal(size=(50, 12)))
    small = _nmf._nnls_weights(X, H)
    monkeypatch.setattr(_nmf, "_KERNEL_MIN_ROWS", 0)
    large = _nmf._nnls_weights(X, H)
    # both exact NNLS solutions of a well-conditioned problem (cond(H) ~ 10)
    np.testing.assert_allclose(small, large, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("k", [1, 7, 10])
def test_nmf_hals_sweep_routes_agree(rng, k, transposed):
    # The compiled HALS sweep (rows in blocks, every component within a block, each
    # gradient summed in a loop) against the NumPy route (each component's gradients by one
    # vector-matrix product), with some entries at the bound: the same updates, to rounding.
    # W is held as its transpose, within a wider buffer (row stride 1 003), and n = 1 000
    # ends in a partial block; B is read either as stored (n x k) or from its transpose
    # (k x n, the layout of the H half's W^T X).
    fn = _nmf._compiled_sweep()
    if fn is None:
        pytest.skip("_nmf not built (a source tree without `setup.py build_ext --inplace`)")
    n = 1000
    H = np.abs(rng.normal(size=(k, 15)))
    X = np.abs(rng.normal(size=(n, 15)))
    W0 = np.abs(rng.normal(size=(n, k)))
    W0[rng.uniform(size=W0.shape) < 0.3] = 0.0
    G, B = H @ H.T, X @ H.T
    numpy_F = W0.T.copy()  # a copy even where W0.T is contiguous (k = 1)
    numpy_violation = _nmf._hals_sweep_numpy(numpy_F, G, B)
    buffer = np.full((k, n + 3), -1.0)
    buffer[:, :n] = W0.T
    p = buffer.ctypes.data
    if transposed:
        Bt = np.ascontiguousarray(B.T)
        violation = fn(n, k, p, n + 3, G.ctypes.data, Bt.ctypes.data, 1, n)
    else:
        violation = fn(n, k, p, n + 3, G.ctypes.data, B.ctypes.data, k, 1)
    np.testing.assert_allclose(buffer[:, :n], numpy_F, rtol=1e-12, atol=1e-14)
    assert np.all(buffer[:, n:] == -1.0)  # nothing written past the rows
    np.testing.assert_allclose(violation, numpy_violation, rtol=1e-12)


def test_nmf_fit_without_the_compiled_sweep(rng, monkeypatch):
    # The whole HALS fit on the NumPy sweeps (W^T and H held component-major, H's right-hand
    # side read from W^T X transposed) against the compiled one: the same iterates to
    # rounding, carried through 100 contracting iterations (cond(H) about 4 for these data).
    if _nmf._compiled_sweep() is None:
        pytest.skip("_nmf not built (a source tree without `setup.py build_ext --inplace`)")
    X = rng.uniform(size=(300, 40))
    kw = {"random_state": 0, "max_iter": 100, "tol": 1e-6}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        compiled = NMF(5, **kw)
        W_compiled = compiled.fit_transform(X)
        monkeypatch.setattr(_nmf, "_compiled_sweep", lambda: None)
        numpy_route = NMF(5, **kw)
        W_numpy = numpy_route.fit_transform(X)
    assert numpy_route.n_iter_ == compiled.n_iter_
    np.testing.assert_allclose(numpy_route.components_, compiled.components_, rtol=1e-9)
    np.testing.assert_allclose(W_numpy, W_compiled, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(numpy_route.loss_curve_, compiled.loss_curve_, rtol=1e-12)


def test_lasso_routes_agree(rng, monkeypatch):
    X = rng.normal(size=(100, 6))
    y = X @ np.array([1.0, 0, 0, -2.0, 0.5, 0]) + 0.1 * rng.normal(size=100)
    G, Xty, yty = X.T @ X, X.T @ y, float(y @ y)
    from mathlearn.linear_model._cd_kernels import _cd_gram

    w0, w1 = np.zeros(6), np.zeros(6)
    args = (100 * 0.05, 1000, 1e-10, False)
    _, it0 = _coordinate_descent._cd_gram_numpy(G, Xty, yty, w0, *args)
    _, it1 = _cd_gram(np.ascontiguousarray(G), Xty, yty, w1, *args)
    assert it0 == it1
    np.testing.assert_allclose(w0, w1, rtol=1e-12, atol=1e-14)


def test_lms_epoch_routes_agree(rng, monkeypatch):
    X = rng.normal(size=(60, 4))
    y = X @ np.array([1.0, -1.0, 0.5, 2.0])
    order = rng.permutation(60)
    etas = inverse_scaling(0.05, power=0.25)(np.arange(20))  # 60 samples, batches of 3
    res = []
    for threshold in (10**9, 0):
        monkeypatch.setattr(_sgd, "_KERNEL_MIN_SAMPLES", threshold)
        w = np.zeros(4)
        b, loss = _sgd._lms_epoch(X, y, order, w, 0.0, etas, 0.01, True, 3)
        res.append((w, b, loss))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    np.testing.assert_allclose(res[0][1:], res[1][1:], rtol=1e-12)


_CACHE_CHECK = r"""
import importlib, pkgutil, sys
from pathlib import Path
from numba.core.caching import NullCache
from numba.core.registry import CPUDispatcher
import mathlearn
from mathlearn.exceptions import ConvergenceWarning
package = Path(mathlearn.__file__).resolve().parent
expected = Path(sys.argv[1]).resolve()
found = 0
for info in pkgutil.walk_packages(mathlearn.__path__, "mathlearn."):
    if not info.name.endswith("_kernels"):
        continue
    for obj in vars(importlib.import_module(info.name)).values():
        if isinstance(obj, CPUDispatcher) and not isinstance(obj._cache, NullCache):
            path = Path(obj._cache._cache_path).resolve()
            assert expected in path.parents, (path, expected)
            assert package not in path.parents and path != package, path
            found += 1
assert found, "no cached kernel found"
# compile one small kernel: its cache index lands in the expected directory
from mathlearn.cluster._agglomerative_kernels import _condensed_euclidean
import numpy as np
_condensed_euclidean(np.ones((3, 2)))
assert list(expected.rglob("*.nbi")), "nothing cached"
"""


@pytest.mark.parametrize("user_set", [False, True])
def test_numba_cache_goes_to_the_user_cache_dir(tmp_path, user_set):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(mathlearn.__file__).resolve().parents[1]), env.get("PYTHONPATH", "")]
    )
    if user_set:
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "user")
        expected = tmp_path / "user"
    else:
        expected = tmp_path / "xdg" / "mathlearn" / "numba"
    if sys.platform in ("win32", "darwin") and not user_set:
        pytest.skip("the default cache directory is not under XDG_CACHE_HOME here")
    subprocess.run(
        [sys.executable, "-c", _CACHE_CHECK, str(expected)], env=env, check=True, timeout=600
    )


def test_small_fits_import_no_numba():
    code = (
        "import sys, numpy as np\n"
        "from mathlearn.cluster import AgglomerativeClustering, DPMeans, KMeans\n"
        "from mathlearn.decomposition import NMF\n"
        "from mathlearn.linear_model import Lasso, LinearRegression, SGDRegressor\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.normal(size=(200, 5)); y = X @ np.arange(5.0) + rng.normal(size=200)\n"
        "for est in (LinearRegression(), Lasso(alpha=0.1), SGDRegressor(random_state=0)):\n"
        "    est.fit(X, y)\n"
        "for est in (KMeans(3, random_state=0), DPMeans(penalty=10.0),"
        " AgglomerativeClustering(3)):\n"
        "    est.fit(X)\n"
        "NMF(3, random_state=0, max_iter=1000).fit(np.abs(X))\n"
        "assert 'numba' not in sys.modules, 'numba imported'\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(mathlearn.__file__).resolve().parents[1]), env.get("PYTHONPATH", "")]
    )
    subprocess.run([sys.executable, "-W", "ignore", "-c", code], env=env, check=True, timeout=600)


def test_refinement_residual_routes_agree(monkeypatch):
    from mathlearn import _ext
    from mathlearn.linear_model import _refinement

    fn = _refinement._compiled_residuals()
    if fn is None:
        pytest.skip("mathlearn._ext._refine is not built")
    # degree-10 monomials on [-9, -3]: cond ~ 1e15, refinement runs several steps
    rng = np.random.default_rng(0)
    x = rng.uniform(-9, -3, 50)
    Phi = np.vander(x, 11, increasing=True)
    y = np.sin(x) + 0.1 * rng.normal(size=50)
    compiled = _refinement.accurate_lstsq(Phi, y)
    monkeypatch.setenv(_ext.DISABLE_ENV, "1")
    numpy_route = _refinement.accurate_lstsq(Phi, y)
    assert compiled[4] >= 1 and numpy_route[4] >= 1
    # both converge to the float64 rounding of the exact solution
    np.testing.assert_allclose(compiled[0], numpy_route[0], rtol=1e-12)
    # the doubled-precision residuals themselves: the same to working precision
    A = rng.normal(size=(40, 3)) * [1.0, 1e3, 1e-3]
    r, z = rng.normal(size=40), rng.normal(size=4)
    yy = A @ z[:3] + z[3] + 1e-12 * rng.normal(size=40)
    d = _refinement._pow2_scale(np.append(np.linalg.norm(A, axis=0), np.sqrt(40)))
    AT = np.vstack([A.T * d[:3, None], np.full(40, d[3])])
    f0, g0 = _refinement._residuals_dd(AT, *_refinement._split(AT), yy, r, z / d)
    f1, g1 = _refinement._residuals_dd_compiled(fn, np.ascontiguousarray(A), yy, r, z, True)
    eps = np.finfo(float).eps
    np.testing.assert_allclose(f0, f1, rtol=2 * eps, atol=0)
    np.testing.assert_allclose(g0, d * g1, rtol=2 * eps, atol=0)
    # against exact rational arithmetic
    from fractions import Fraction

    for i in (0, 7, 39):
        exact = Fraction(yy[i]) - Fraction(r[i]) - Fraction(z[3])
        exact -= sum(Fraction(A[i, j]) * Fraction(z[j]) for j in range(3))
        assert abs(Fraction(f1[i]) - exact) <= eps * abs(exact)
    exact = -sum(Fraction(A[i, 1]) * Fraction(r[i]) for i in range(40))
    assert abs(Fraction(g1[1]) - exact) <= eps * abs(exact)


def test_smo_selection_routes_agree(rng, monkeypatch):
    # Both routes evaluate the same expressions in the same order and break ties on the first
    # index; with continuous random scores there are no ties, so they pick the same pair.
    from mathlearn.svm import _smo

    n = 400
    score = rng.normal(size=n)
    can_up, can_down = rng.random(n) < 0.7, rng.random(n) < 0.7
    diag = 1.0 + rng.random(n)
    K = rng.normal(size=(n, n)) * 0.1
    cache = _smo.ColumnCache(_smo_gram(K), np.arange(n), 10.0)
    for groups in ((None,), (can_up ^ can_down, ~(can_up ^ can_down))):
        small = _smo._select_pair(score, can_up, can_down, diag, groups, 1e-3, cache, np.arange(n))
        monkeypatch.setattr(_smo, "_KERNEL_MIN_VARS", 0)
        large = _smo._select_pair(score, can_up, can_down, diag, groups, 1e-3, cache, np.arange(n))
        monkeypatch.setattr(_smo, "_KERNEL_MIN_VARS", 10**9)
        assert small[0][:2] == large[0][:2]
        assert small[1] == large[1]


def _smo_gram(K):
    class Gram:
        def columns_over(self, rows):
            return lambda point: K[rows, point]

    return Gram()


@pytest.mark.parametrize("kind", ["SVC", "SVR", "NuSVC"])
def test_smo_solver_routes_agree(rng, monkeypatch, kind):
    # Solved to a KKT gap of 1e-10, the two routes' solutions agree far below the tolerance
    # of the solver (the dual is strictly convex in the free variables here).
    from mathlearn import svm
    from mathlearn.svm import _smo

    X = rng.normal(size=(150, 4))
    y = (X[:, 0] + 0.5 * rng.normal(size=150) > 0).astype(float)
    target = X @ np.array([1.0, -1.0, 0.5, 0.0]) if kind == "SVR" else y
    small = getattr(svm, kind)(tol=1e-10).fit(X, target)
    monkeypatch.setattr(_smo, "_KERNEL_MIN_VARS", 0)
    large = getattr(svm, kind)(tol=1e-10).fit(X, target)
    np.testing.assert_array_equal(small.support_, large.support_)
    np.testing.assert_allclose(small.dual_coef_, large.dual_coef_, rtol=0, atol=1e-8)
    np.testing.assert_allclose(small.intercept_, large.intercept_, rtol=0, atol=1e-8)


@pytest.mark.parametrize("user_major", [True, False])
@pytest.mark.parametrize("shuffle", ["users", "full", "none"])
@pytest.mark.parametrize("biases", [True, False])
@pytest.mark.parametrize("k", [3, 8, 10])
def test_sgd_matrix_factorization_routes_agree(monkeypatch, biases, k, shuffle, user_major):
    # Plain SGD (batch_size=1): the compiled epoch (mathlearn._ext._sgdmf) and the Python loop
    # do the same IEEE operations in the same order (the dot product's fixed partial sums
    # included, for k below, at and past a multiple of 4), so they agree bit for bit; the
    # compiled builder of the "users" order and its Python loop make the same exchanges.
    from mathlearn import _ext
    from mathlearn.datasets import make_low_rank_ratings
    from mathlearn.recommender import SGDMatrixFactorization
    from mathlearn.recommender import _sgd as sgd_module

    if _ext.load("_sgdmf") is None:
        pytest.skip("_sgdmf not built (a source tree without `setup.py build_ext --inplace`)")
    r = make_low_rank_ratings(25, 15, 180, rank=2, noise=0.3, random_state=9)
    if not user_major:  # the ratings stored in no particular order
        p = np.random.default_rng(3).permutation(r.nnz)
        r = type(r)(r.users[p], r.items[p], r.values[p], r.user_ids, r.item_ids)
    kw = {"learning_rate": 0.01, "regularization": 0.05, "max_iter": 3, "random_state": 2}
    kw["biases"], kw["shuffle"] = biases, shuffle
    compiled = SGDMatrixFactorization(k, **kw).fit(r)
    monkeypatch.setattr(sgd_module, "_compiled_fit", lambda: None)
    monkeypatch.setattr(sgd_module, "_compiled_user_order", lambda: None)
    loop = SGDMatrixFactorization(k, **kw).fit(r)
    for name in ("user_factors_", "item_factors_", "user_bias_", "item_bias_", "objective_"):
        np.testing.assert_array_equal(getattr(compiled, name), getattr(loop, name))


@pytest.mark.parametrize("case", ["tol", "no-monitor", "diverges"])
@pytest.mark.parametrize("draw_block", [1 << 18, 200])
def test_sgd_stopping_routes_agree(monkeypatch, case, draw_block):
    # The compiled epochs stop, record the objective and detect divergence where the Python
    # loop does, also when the orders are drawn a few epochs at a time (draw_block 200: one
    # epoch's draws per call at 180 ratings and 25 users, so every epoch is its own call).
    from mathlearn import _ext
    from mathlearn.datasets import make_low_rank_ratings
    from mathlearn.recommender import SGDMatrixFactorization
    from mathlearn.recommender import _sgd as sgd_module

    if _ext.load("_sgdmf") is None:
        pytest.skip("_sgdmf not built (a source tree without `setup.py build_ext --inplace`)")
    monkeypatch.setattr(sgd_module, "_DRAW_BLOCK", draw_block)
    r = make_low_rank_ratings(25, 15, 180, rank=2, noise=0.3, random_state=9)
    kw = {"learning_rate": 0.05, "regularization": 0.05, "max_iter": 40, "random_state": 2}
    if case == "tol":
        kw["tol"] = 1e-2
    elif case == "no-monitor":
        kw["monitor_objective"] = False
    else:
        kw["learning_rate"] = 5.0

    def fit():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            if case == "diverges":
                with pytest.raises(FloatingPointError, match="diverged"):
                    SGDMatrixFactorization(4, **kw).fit(r)
                return None
            return SGDMatrixFactorization(4, **kw).fit(r)

    compiled = fit()
    monkeypatch.setattr(sgd_module, "_compiled_fit", lambda: None)
    loop = fit()
    if case == "diverges":
        return
    assert compiled.n_iter_ == loop.n_iter_
    if case == "tol":
        assert 1 < compiled.n_iter_ < 40 and len(compiled.objective_) == compiled.n_iter_
    else:
        assert compiled.n_iter_ == 40 and len(compiled.objective_) == 1
    for name in ("user_factors_", "item_factors_", "user_bias_", "item_bias_", "objective_"):
        np.testing.assert_array_equal(getattr(compiled, name), getattr(loop, name))


@pytest.mark.parametrize("user_major", [True, False])
def test_sgd_user_order(monkeypatch, user_major):
    # shuffle="users": every epoch a permutation of all ratings, each user's ratings
    # consecutive, the users and each user's ratings in uniformly random orders drawn afresh,
    # reproducible for a seed; the compiled builder and the Python loop give the same order.
    from mathlearn.recommender import _sgd as sgd_module

    rng = np.random.default_rng(0)
    users = np.sort(rng.integers(0, 30, 400))
    users[users == 7] = 8  # a user without ratings
    if not user_major:
        users = rng.permutation(users)
    order = sgd_module._VisitOrder("users", users, 31)
    a = [order(np.random.default_rng(5)) for _ in range(2)]
    np.testing.assert_array_equal(a[0], a[1])  # the same seed, the same order
    gen = np.random.default_rng(6)
    epochs = [order(gen) for _ in range(3)]
    assert not np.array_equal(epochs[0], epochs[1])  # fresh every epoch
    for o in epochs:
        np.testing.assert_array_equal(np.sort(o), np.arange(users.size))
        u = users[o]
        # consecutive: as many runs of equal users as users with ratings
        assert np.count_nonzero(np.diff(u)) + 1 == np.unique(users).size
    # The extreme draws: 0 (every exchange with the first entry) and the largest double
    # below 1 (every exchange with the entry itself: the rounded product with a + 1 stays
    # below a + 1).
    extremes = [order.from_draws(np.full(31 + 400, x)) for x in (0.0, np.nextafter(1.0, 0.0))]
    monkeypatch.setattr(sgd_module, "_compiled_user_order", lambda: None)
    gen = np.random.default_rng(6)
    for o in epochs:
        np.testing.assert_array_equal(order(gen), o)
    for x, o in zip((0.0, np.nextafter(1.0, 0.0)), extremes, strict=True):
        np.testing.assert_array_equal(order.from_draws(np.full(31 + 400, x)), o)
        np.testing.assert_array_equal(np.sort(o), np.arange(users.size))
    # Uniform within a user: a user with 3 ratings, 600 epochs, each of the 3! orders
    # expected 100 times (sd 9.1). The seed is fixed, so the test is deterministic; a bound
    # of 4 sd would fail a correct shuffle for about one seed in a thousand (six counts).
    three = np.array([0, 0, 0, 1, 1])
    small = sgd_module._VisitOrder("users", three, 2)
    gen = np.random.default_rng(7)
    seen = [tuple(o[o < 3].tolist()) for o in (small(gen) for _ in range(600))]
    counts = np.array([seen.count(p) for p in set(seen)])
    assert counts.size == 6 and np.all(np.abs(counts - 100) <= 37)


def test_sgd_full_order_is_uniform():
    # shuffle="full" on the plain-SGD route: Fisher-Yates from one uniform draw per rating
    # (the Python loop that the routes test holds the compiled one to). Each of the 3! orders
    # of 3 ratings over 600 epochs, expected 100 times (sd 9.1; bound of 4 sd as above).
    from mathlearn.recommender import _sgd as sgd_module

    full = sgd_module._VisitOrder("full", np.array([0, 1, 1]), 2)
    assert full.draws_per_epoch == 3
    gen = np.random.default_rng(8)
    seen = [tuple(full.from_draws(gen.random(3)).tolist()) for _ in range(600)]
    counts = np.array([seen.count(p) for p in set(seen)])
    assert counts.size == 6 and np.all(np.abs(counts - 100) <= 37)
    # the largest draw below 1 picks the position itself, never one past it
    assert full.from_draws(np.full(3, np.nextafter(1.0, 0.0))).tolist() == [0, 1, 2]


@pytest.mark.parametrize("case", ["explicit", "implicit"])
def test_als_ridge_routes_agree(monkeypatch, case):
    # The compiled per-row ridge solver (mathlearn._ext._als) against the NumPy route (padded
    # blocks, batch-last Cholesky): the same normal equations, summed in another order.
    from mathlearn import _ext
    from mathlearn.datasets import make_low_rank_ratings
    from mathlearn.recommender import ALS, ImplicitALS
    from mathlearn.recommender import _base as rec_base

    if _ext.load("_als") is None:
        pytest.skip("_als not built (a source tree without `setup.py build_ext --inplace`)")
    r = make_low_rank_ratings(40, 25, 400, rank=2, noise=0.3, random_state=3)
    if case == "explicit":
        make = lambda: ALS(3, regularization=0.1, max_iter=4, tol=0.0, solver="cholesky",  # noqa: E731
                           random_state=0)  # fmt: skip
    else:
        r.values[:] = 1.0 + np.arange(r.nnz) % 3
        make = lambda: ImplicitALS(3, solver="cholesky", max_iter=3, random_state=0)  # noqa: E731
    compiled = make().fit(r)
    monkeypatch.setattr(rec_base, "_compiled_ridge", lambda: None)
    numpy_route = make().fit(r)
    _check_same_factors(compiled, numpy_route)


@pytest.fixture(params=[0, 1], ids=["sse2", "avx2"])
def als_simd(request):
    """The CG kernel's loops of ``_als.c`` in their portable (SSE2) form, then in their AVX2
    form with fused multiply-adds (skipped where the processor has not both), restored after
    the test."""
    import ctypes

    from mathlearn import _ext

    lib = _ext.load("_als")
    if lib is None:
        pytest.skip("_als not built (a source tree without `setup.py build_ext --inplace`)")
    fn = lib.als_simd
    fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int]
    before = fn(-1)
    if fn(request.param) != request.param:
        fn(before)
        pytest.skip("this processor has no AVX2 with FMA")
    yield request.param
    fn(before)


@pytest.mark.parametrize("case", ["explicit", "explicit-cg", "implicit", "implicit-cg"])
def test_als_blas_and_portable_loops_agree(monkeypatch, case, als_simd):
    # The compiled helpers with SciPy's BLAS (dsyrk / dgemv on each row's gathered factors)
    # against their portable loops: the same equations, summed in another order. Rows of
    # 8 entries and more take dsyrk and rows of 16 and more dgemv (most rows here), with
    # dgemm for the CG products with the base term of blocks of rows; the rest the loops in
    # both runs. (With the AVX2 loops, the CG kernel gathers no rows for dgemv: its own
    # loops are the faster there.)
    from mathlearn import _ext
    from mathlearn.datasets import make_low_rank_ratings
    from mathlearn.recommender import ALS, ImplicitALS

    if _ext.load("_als") is None:
        pytest.skip("_als not built (a source tree without `setup.py build_ext --inplace`)")
    if _ext.blas_pointer("dsyrk") is None or _ext.blas_pointer("dgemv") is None:
        pytest.skip("this SciPy exports no C BLAS")
    r = make_low_rank_ratings(40, 25, 700, rank=2, noise=0.3, random_state=5)
    solver = "cg" if case.endswith("cg") else "cholesky"
    if case.startswith("explicit"):
        make = lambda: ALS(3, regularization=0.1, max_iter=4, tol=0.0, solver=solver,  # noqa: E731
                           random_state=0)  # fmt: skip
    else:
        r.values[:] = 1.0 + np.arange(r.nnz) % 3
        make = lambda: ImplicitALS(3, solver=solver, max_iter=3, random_state=0)  # noqa: E731
    blas = make().fit(r)
    monkeypatch.setattr(_ext, "blas_pointer", lambda name: None)
    _check_same_factors(blas, make().fit(r))


@pytest.mark.parametrize("weighting", ["count", "none"])
@pytest.mark.parametrize("biases", [True, False])
def test_als_cg_routes_agree(monkeypatch, biases, weighting, als_simd):
    # ALS(solver="cg"): the compiled sweeps (every sweep in one call, factors stored with
    # their biases as a last column, targets and penalties formed inside) against the NumPy
    # route (padded blocks).
    from mathlearn import _ext
    from mathlearn.datasets import make_low_rank_ratings
    from mathlearn.recommender import ALS

    if _ext.load("_als") is None:
        pytest.skip("_als not built (a source tree without `setup.py build_ext --inplace`)")
    r = make_low_rank_ratings(40, 25, 400, rank=2, noise=0.3, random_state=6)
    make = lambda: ALS(3, regularization=0.1, max_iter=4, tol=0.0, solver="cg",  # noqa: E731
                       biases=biases, regularization_weighting=weighting,
                       random_state=0)  # fmt: skip
    _check_als_cg_routes_agree(monkeypatch, make, r)


def test_als_cg_stops_at_the_same_sweep_on_both_routes(monkeypatch):
    # The compiled sweeps apply the tolerance as the Python loop does: the same number of
    # sweeps, and a ConvergenceWarning from both or from neither.
    import warnings

    from mathlearn import _ext
    from mathlearn.datasets import make_low_rank_ratings
    from mathlearn.recommender import ALS
    from mathlearn.recommender import _als as rec_als
    from mathlearn.recommender import _implicit as rec_implicit

    if _ext.load("_als") is None:
        pytest.skip("_als not built (a source tree without `setup.py build_ext --inplace`)")
    r = make_low_rank_ratings(40, 25, 400, rank=2, noise=0.3, random_state=6)

    def fits():
        out = []
        for max_iter in (3, 200):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                m = ALS(3, regularization=0.1, max_iter=max_iter, tol=1e-6, random_state=0)
                m.fit(r)
            out.append((m.n_iter_, len(m.objective_), len(caught)))
        return out

    compiled = fits()
    assert compiled[0] == (3, 3, 1) and compiled[1][0] < 200 and compiled[1][2] == 0
    monkeypatch.setattr(rec_als, "_compiled_sweeps", lambda: None)
    monkeypatch.setattr(rec_implicit, "_compiled_cg", lambda: None)
    assert fits() == compiled


def _check_als_cg_routes_agree(monkeypatch, make, r):
    """ALS fitted by ``make()`` on ``r`` through the compiled CG sweeps, then through the
    NumPy route (padded blocks): the same factors, biases and objectives to rounding."""
    from mathlearn.recommender import _als as rec_als
    from mathlearn.recommender import _implicit as rec_implicit

    compiled = make().fit(r)
    monkeypatch.setattr(rec_als, "_compiled_sweeps", lambda: None)
    monkeypatch.setattr(rec_implicit, "_compiled_cg", lambda: None)
    numpy_route = make().fit(r)
    _check_same_factors(compiled, numpy_route)
    for name in ("user_bias_", "item_bias_"):
        np.testing.assert_allclose(getattr(compiled, name), getattr(numpy_route, name),
                                   rtol=1e-9, atol=1e-12)  # fmt: skip


def _check_same_factors(compiled, numpy_route):
    np.testing.assert_allclose(compiled.user_factors_, numpy_route.user_factors_, rtol=1e-9,
                               atol=1e-12)  # fmt: skip
    np.testing.assert_allclose(compiled.item_factors_, numpy_route.item_factors_, rtol=1e-9,
                               atol=1e-12)  # fmt: skip
    np.testing.assert_allclose(compiled.objective_, numpy_route.objective_, rtol=1e-12)


@pytest.mark.parametrize("k", [1, 3, 6, 32])
def test_als_cg_rows_of_every_length_agree_with_the_numpy_route(monkeypatch, als_simd, k):
    # The CG kernel's loops take a row's entries four at a time (the last four padded with
    # a zero weight) and the rank four coordinates at a time (AVX2) or two (SSE2), the rest
    # one by one: rows of 1 to 13 entries and widths k + 1 = 2, 4, 7 and 33 cover every
    # remainder, against the NumPy route (padded blocks) to rounding.
    from mathlearn.recommender import ALS, Ratings

    rng = np.random.default_rng(11)
    users, items = [], []
    for u in range(26):
        n = 1 + u % 13
        users += [u] * n
        items += sorted(rng.choice(15, n, replace=False).tolist())
    r = Ratings.from_triples(users, items, rng.normal(3.0, 1.0, len(users)))
    make = lambda: ALS(k, regularization=0.1, max_iter=3, tol=0.0, solver="cg",  # noqa: E731
                       random_state=0)  # fmt: skip
    _check_als_cg_routes_agree(monkeypatch, make, r)


def test_implicit_cg_routes_agree(monkeypatch, als_simd):
    # The compiled CG kernel against the NumPy route (padded blocks, stacked products): the
    # same three CG steps per row and half-sweep, summed in another order.
    from mathlearn import _ext
    from mathlearn.datasets import make_low_rank_ratings
    from mathlearn.recommender import ImplicitALS
    from mathlearn.recommender import _implicit as rec_implicit

    if _ext.load("_als") is None:
        pytest.skip("_als not built (a source tree without `setup.py build_ext --inplace`)")
    r = make_low_rank_ratings(40, 25, 400, rank=2, noise=0.3, random_state=4)
    r.values[:] = 1.0 + np.arange(r.nnz) % 3
    compiled = ImplicitALS(4, max_iter=3, random_state=0).fit(r)
    monkeypatch.setattr(rec_implicit, "_compiled_sweeps", lambda: None)
    monkeypatch.setattr(rec_implicit, "_compiled_cg", lambda: None)
    _check_same_factors(compiled, ImplicitALS(4, max_iter=3, random_state=0).fit(r))


def test_implicit_cg_blocks_of_rows_agree_with_the_numpy_route(monkeypatch, als_simd):
    # The compiled kernel iterates up to 8 rows together (one dgemm for their products with
    # the base term Y^T Y + lam I), as many as its gather buffer (the longest row of either
    # side) holds: here short users
    # (portable loops) and long ones (gathered, dgemv) share blocks cut by the buffer, and
    # the items (all long) go one by one. Rank 20: a lone row's product with the base term
    # goes to dgemv. Against the NumPy route to rounding.
    from mathlearn import _ext
    from mathlearn.recommender import ImplicitALS, Ratings
    from mathlearn.recommender import _implicit as rec_implicit

    if _ext.load("_als") is None:
        pytest.skip("_als not built (a source tree without `setup.py build_ext --inplace`)")
    rng = np.random.default_rng(3)
    users, items = [], []
    for u in range(90):
        n = int(rng.choice([1, 3, 9, 17, 30]))  # rows on both sides of the gather threshold
        users += [u] * n
        items += sorted(rng.choice(40, n, replace=False).tolist())
    values = 1.0 + rng.integers(0, 4, len(users))
    r = Ratings.from_triples(users, items, values)
    make = lambda: ImplicitALS(20, max_iter=3, random_state=0)  # noqa: E731
    compiled = make().fit(r)
    monkeypatch.setattr(rec_implicit, "_compiled_sweeps", lambda: None)
    monkeypatch.setattr(rec_implicit, "_compiled_cg", lambda: None)
    _check_same_factors(compiled, make().fit(r))


def test_implicit_cg_stops_at_the_same_sweep_on_both_routes(monkeypatch):
    # The compiled sweeps (one call) against the Python loop over the compiled kernel: the
    # same stopping sweep for a tolerance, the same objectives to rounding.
    import warnings

    from mathlearn import _ext
    from mathlearn.datasets import make_low_rank_ratings
    from mathlearn.recommender import ImplicitALS
    from mathlearn.recommender import _implicit as rec_implicit

    if _ext.load("_als") is None:
        pytest.skip("_als not built (a source tree without `setup.py build_ext --inplace`)")
    r = make_low_rank_ratings(40, 25, 400, rank=2, noise=0.3, random_state=4)
    r.values[:] = 1.0 + np.arange(r.nnz) % 3

    def fits():
        out = []
        for max_iter in (2, 300):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                m = ImplicitALS(4, max_iter=max_iter, tol=1e-3, random_state=0).fit(r)
            out.append((m.n_iter_, len(caught), m.objective_))
        return out

    compiled = fits()
    assert compiled[0][:2] == (2, 1) and compiled[1][0] < 300 and compiled[1][1] == 0
    monkeypatch.setattr(rec_implicit, "_compiled_sweeps", lambda: None)
    loop = fits()
    for a, b in zip(compiled, loop, strict=True):
        assert a[:2] == b[:2]
        np.testing.assert_allclose(a[2], b[2], rtol=1e-12)


@pytest.mark.parametrize("order", ["user-major", "shuffled", "repeats", "user-major repeats"])
def test_rating_pattern_routes_agree(monkeypatch, order):
    # Both orientations of the ratings by the compiled counting sorts (mathlearn._ext._ratings)
    # against NumPy's sort and SciPy's CSR-to-CSC conversion: the same integers and values,
    # and each order against its definition (by user then item; by item then user; repeated
    # pairs in the container's order).
    from mathlearn import _ext
    from mathlearn.recommender import Ratings, _factor

    if _ext.load("_ratings") is None:
        pytest.skip("_ratings not built (a source tree without `setup.py build_ext --inplace`)")
    gen = np.random.default_rng(11)
    n_users, n_items = 37, 23
    cells = np.sort(gen.choice(n_users * n_items, 300, replace=False))
    if "repeats" in order:
        cells = np.concatenate([cells, cells[::7]])
    if order == "user-major repeats":
        # (the repeated pairs side by side, in the order the values were drawn)
        cells = np.sort(cells, kind="stable")
    elif order != "user-major":
        cells = gen.permutation(cells)
    u, i = np.divmod(cells, n_items)
    r = Ratings(u, i, gen.standard_normal(u.size), np.arange(n_users), np.arange(n_items))
    compiled = _factor.Pattern(r)
    # the single-precision item-major values: the same order, each value rounded once
    single = _factor.Pattern(r, item_values=np.float32)
    assert single.values_i.dtype == np.float32
    np.testing.assert_array_equal(single.values_i, compiled.values_i.astype(np.float32))
    monkeypatch.setattr(_factor, "_compiled_orders", lambda: None)
    numpy_route = _factor.Pattern(r)
    for name in ("indptr_u", "items_u", "values_u", "perm_u", "indptr_i", "users_i",
                 "values_i", "perm_i", "n_user", "n_item"):  # fmt: skip
        np.testing.assert_array_equal(getattr(compiled, name), getattr(numpy_route, name))
    np.testing.assert_array_equal(
        _factor.Pattern(r, item_values=np.float32).values_i, single.values_i
    )
    expect_u = np.lexsort((np.arange(u.size), i, u))
    expect_i = np.lexsort((np.arange(u.size), u, i))
    np.testing.assert_array_equal(compiled.perm_u, expect_u)
    np.testing.assert_array_equal(compiled.perm_i, expect_i)
    np.testing.assert_array_equal(compiled.values_i, r.values[expect_i])
    np.testing.assert_array_equal(compiled.R.toarray(), numpy_route.R.toarray())
    np.testing.assert_array_equal(compiled.Rt.toarray(), numpy_route.Rt.toarray())
