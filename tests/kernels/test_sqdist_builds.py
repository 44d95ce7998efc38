"""The compiled direct differences give bit-identical distances in every build of
``_sqdist.c``.

Each squared distance is a sum over the features in ascending order, written in the
source, and the helper is compiled in ISO C mode, which turns off contraction into fused
multiply-adds; vectorising runs several pairs side by side, never reorders one pair's sum.
So the unoptimised build, the optimised baseline x86-64 (SSE2) build, an AVX2 build and the
installed library (GCC's ``target_clones``: AVX2 where the processor has it) must agree
bit for bit. Each version is compiled here with ``-DML_NO_CLONES``; the AVX2 build runs only
where the processor has AVX2. Needs GCC on x86-64 Linux and the C source.
"""

import ctypes

import numpy as np
import pytest

from .._c_builds import compile_builds, cpu_flags, skip_unless_buildable

pytestmark = skip_unless_buildable("_sqdist")


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    flags = {"O0": ["-O0"], "O3 baseline": ["-O3"]}
    if "avx2" in cpu_flags():
        flags["O3 avx2"] = ["-O3", "-mavx2"]
    libs = compile_builds("_sqdist", flags, tmp_path_factory.mktemp("sqdist_builds"))
    for lib in libs.values():
        fn = lib.sqdist_direct
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_int64] * 3 + [ctypes.c_void_p, ctypes.c_int64]
        fn.argtypes += [ctypes.c_void_p] * 2 + [ctypes.c_int, ctypes.c_void_p]
    return libs


def _run(lib, X, Y, w):
    same = Y is None
    Xt = np.ascontiguousarray(X.T)
    Yt = Xt if same else np.ascontiguousarray(Y.T)
    n, d = X.shape
    m = n if same else Y.shape[0]
    out = np.full((n, m), np.nan)
    w_ = None if w is None else w.ctypes.data
    overflow = lib.sqdist_direct(n, m, d, Xt.ctypes.data, n, Yt.ctypes.data, w_, int(same),
                                 out.ctypes.data)  # fmt: skip
    assert overflow == 0
    return out


# 37 and 23 points: vector bodies plus remainders in every row; 1 and 13 features
@pytest.mark.parametrize("d", [1, 13])
@pytest.mark.parametrize("cross", [False, True], ids=["X with X", "X with Y"])
@pytest.mark.parametrize("weighted", [False, True], ids=["w = 1", "w given"])
def test_direct_differences_are_bit_identical_across_builds(builds, d, cross, weighted):
    rng = np.random.default_rng(d)
    X = rng.normal(size=(37, d)) * np.exp(rng.normal(size=d))
    Y = rng.normal(size=(23, d)) if cross else None
    w = 1.0 / rng.uniform(0.3, 3.0, size=d) if weighted else None
    results = {name: _run(lib, X, Y, w) for name, lib in builds.items()}
    first = results["installed"]
    assert np.all(np.isfinite(first)) and np.all(first >= 0)
    for name, other in results.items():
        np.testing.assert_array_equal(other, first, err_msg=name)
