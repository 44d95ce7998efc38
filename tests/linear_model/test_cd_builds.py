"""The compiled lasso gives bit-identical results in every build of ``_cd.c``.

``_cd.c`` writes the order of every floating-point operation in its source (dot products
with sixteen partial sums combined in a fixed order; element-wise updates) and is compiled
in ISO C mode, which turns off contraction into fused multiply-adds. So the unoptimised
build, the optimised baseline x86-64 (SSE2) build, an AVX2 build and the installed library
(GCC's ``target_clones``: AVX2 where the processor has it) must round alike, bit for bit.
Each version is compiled here with ``-DML_NO_CLONES`` (one version per library); the
dispatch between clones can only be exercised on this processor, so the AVX2 build is run
only where the processor has AVX2. Needs GCC on x86-64 Linux and the C source.
"""

import ctypes

import numpy as np
import pytest

from .._c_builds import compile_builds, cpu_flags, skip_unless_buildable

pytestmark = skip_unless_buildable("_cd")


def _bind(lib):
    i64, dbl, ptr, c_int = ctypes.c_int64, ctypes.c_double, ctypes.c_void_p, ctypes.c_int
    lib.cd_residual.restype = i64
    lib.cd_residual.argtypes = [i64, i64, ptr, ptr, ptr, ptr, dbl, i64, dbl, c_int, c_int]
    lib.cd_residual.argtypes += [ptr] * 4
    lib.cd_gram.restype = i64
    lib.cd_gram.argtypes = [i64, ptr, ptr, dbl, ptr, dbl, i64, dbl, c_int, i64] + [ptr] * 6
    return lib


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    flags = {"O0": ["-O0"], "O3 baseline": ["-O3"]}
    if "avx2" in cpu_flags():
        flags["O3 avx2"] = ["-O3", "-mavx2"]
    libs = compile_builds("_cd", flags, tmp_path_factory.mktemp("cd_builds"))
    return {name: _bind(lib) for name, lib in libs.items()}


def _problem(n, m, seed):
    rng = np.random.default_rng(seed)
    X = np.asfortranarray(rng.normal(size=(n, m)))
    w = np.zeros(m)
    w[rng.choice(m, 6, replace=False)] = 3 * rng.normal(size=6)
    y = X @ w + 0.3 * rng.normal(size=n)
    return X, y - y.mean()


def _residual_run(lib, X, y, alpha, positive, screen, max_iter):
    n, m = X.shape
    norms2 = np.einsum("ij,ij->j", X, X)
    w, r, q = np.zeros(m), np.empty(n), np.empty(m)
    active, gap = np.empty(2 * m, np.int64), np.empty(1)
    a = alpha * np.max(np.abs(X.T @ y))
    n_iter = lib.cd_residual(
        n, m, X.ctypes.data, y.ctypes.data, norms2.ctypes.data, w.ctypes.data, a, max_iter,
        1e-10, positive, screen, r.ctypes.data, q.ctypes.data, active.ctypes.data,
        gap.ctypes.data,
    )  # fmt: skip
    return n_iter, w, r, gap


def _gram_run(lib, X, y, alpha, positive, max_iter, tol):
    n, m = X.shape
    G = np.ascontiguousarray(X.T @ X)
    Xty = X.T @ y
    w, q, qa, r, gap = np.zeros(m), np.empty(m), np.empty(m), np.empty(n), np.empty(1)
    a = alpha * np.max(np.abs(Xty))
    n_iter = lib.cd_gram(
        m, G.ctypes.data, Xty.ctypes.data, float(y @ y), w.ctypes.data, a, max_iter, tol,
        positive, n, X.ctypes.data, y.ctypes.data, q.ctypes.data, qa.ctypes.data,
        r.ctypes.data, gap.ctypes.data,
    )  # fmt: skip
    return n_iter, w, gap


def _assert_same(results):
    (_, first), *rest = results.items()
    for name, other in rest:
        for a, b in zip(first, other, strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=name)


@pytest.mark.parametrize("positive", [0, 1])
@pytest.mark.parametrize("screen", [1, 3])
# N = 203: sixteen-way unrolled part plus a remainder; max_iter = 7 stops mid-way, where
# the iterates are most sensitive to rounding
@pytest.mark.parametrize("max_iter", [7, 100000])
def test_residual_route_is_bit_identical_across_builds(builds, positive, screen, max_iter):
    X, y = _problem(203, 400, seed=5)
    results = {
        name: _residual_run(lib, X, y, 0.05, positive, screen, max_iter)
        for name, lib in builds.items()
    }
    assert results["installed"][1].any()
    _assert_same(results)


@pytest.mark.parametrize("positive", [0, 1])
def test_gram_route_is_bit_identical_across_builds(builds, positive):
    # a tolerance near the rounding level of the Gram route's gap, so that the gap is
    # recomputed from the residual (dot products of length N)
    X, y = _problem(301, 45, seed=6)
    results = {
        name: _gram_run(lib, X, y, 1e-3, positive, 3000, 1e-14) for name, lib in builds.items()
    }
    assert results["installed"][1].any()
    _assert_same(results)


def _bind_enet(lib):
    i64, dbl, ptr, c_int = ctypes.c_int64, ctypes.c_double, ctypes.c_void_p, ctypes.c_int
    lib.cd_residual_enet.restype = i64
    lib.cd_residual_enet.argtypes = [i64, i64, ptr, ptr, ptr, ptr, dbl, dbl, i64, dbl]
    lib.cd_residual_enet.argtypes += [c_int, c_int] + [ptr] * 4
    return lib


def _enet_run(lib, X, y, alpha, b, positive, screen, max_iter):
    n, m = X.shape
    norms2 = np.einsum("ij,ij->j", X, X) + b
    w, r, q = np.zeros(m), np.empty(n), np.empty(m)
    active, gap = np.empty(2 * m, np.int64), np.empty(1)
    a = alpha * np.max(np.abs(X.T @ y))
    n_iter = lib.cd_residual_enet(
        n, m, X.ctypes.data, y.ctypes.data, norms2.ctypes.data, w.ctypes.data, a, b,
        max_iter, 1e-10, positive, screen, r.ctypes.data, q.ctypes.data, active.ctypes.data,
        gap.ctypes.data,
    )  # fmt: skip
    return n_iter, w, r, gap


@pytest.mark.parametrize("positive", [0, 1])
@pytest.mark.parametrize("max_iter", [7, 100000])
def test_elastic_net_route_is_bit_identical_across_builds(builds, positive, max_iter):
    X, y = _problem(203, 400, seed=7)
    results = {
        name: _enet_run(_bind_enet(lib), X, y, 0.05, 30.0, positive, 1, max_iter)
        for name, lib in builds.items()
    }
    assert results["installed"][1].any()
    _assert_same(results)


def test_elastic_net_route_with_b_zero_is_the_lasso_route(builds):
    # b = 0 leaves every operation of the lasso's sweep and gap unchanged (x - 0 w = x)
    X, y = _problem(203, 400, seed=8)
    lib = builds["installed"]
    lasso = _residual_run(lib, X, y, 0.05, 0, 1, 100000)
    enet = _enet_run(_bind_enet(lib), X, y, 0.05, 0.0, 0, 1, 100000)
    _assert_same({"lasso": lasso, "enet b = 0": enet})
