"""The compiled SMO solver gives bit-identical results in every build of ``_smo.c``.

Its kernel columns use dot products with sixteen partial sums combined in a fixed order, in
ISO C mode (no contraction into fused multiply-adds); GCC's ``target_clones`` adds an AVX2
version of the column evaluation. So the unoptimised build, the optimised baseline x86-64
build, an AVX2 build (each with ``-DML_NO_CLONES``) and the installed library must reach the
same dual coefficients, bit for bit. Needs GCC on x86-64 Linux and the C source.
"""

import ctypes
import warnings

import numpy as np
import pytest

from mathlearn.exceptions import ConvergenceWarning
from mathlearn.svm import SVC, _smo

from .._c_builds import compile_builds, cpu_flags, skip_unless_buildable

pytestmark = skip_unless_buildable("_smo")


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    flags = {"O0": ["-O0"], "O3 baseline": ["-O3"]}
    if "avx2" in cpu_flags():
        flags["O3 avx2"] = ["-O3", "-mavx2"]
    libs = compile_builds("_smo", flags, tmp_path_factory.mktemp("smo_builds"))
    kinds = {"i64": ctypes.c_int64, "ptr": ctypes.c_void_p, "f64": ctypes.c_double,
             "int": ctypes.c_int}  # fmt: skip
    for lib in libs.values():
        lib.smo_solve.restype = ctypes.c_int
        lib.smo_solve.argtypes = [kinds[kind] for _, kind in _smo._SIGNATURE]
    return libs


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly"])
def test_svc_is_bit_identical_across_builds(builds, kernel, monkeypatch):
    # D = 37: the sixteen-way unrolled part plus a remainder; max_iter = 40 stops mid-way,
    # where the iterates are most sensitive to rounding, and the full run converges
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 37))
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=120) > 0).astype(int)
    for max_iter in (40, 10**6):
        results = {}
        for name, lib in builds.items():
            monkeypatch.setattr(_smo, "_library", lambda lib=lib: lib)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # max_iter = 40
                model = SVC(kernel=kernel, max_iter=max_iter).fit(X, y)
            results[name] = (model.dual_coef_, model.intercept_, model.n_iter_)
        (_, first), *rest = results.items()
        for name, other in rest:
            for a, b in zip(first, other, strict=True):
                np.testing.assert_array_equal(a, b, err_msg=name)
