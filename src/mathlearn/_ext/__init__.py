"""Compiled helpers, built when mathlearn is installed, loaded with :mod:`ctypes`.

Each ``_<name>.c`` next to this file is plain C99 (no Python C API, no NumPy headers),
compiled by ``setup.py`` at install time (``pip install .`` or ``pip install -e .``; from a
source tree, ``python setup.py build_ext --inplace``) into ``_<name>`` plus one of the
interpreter's extension suffixes. Nothing is compiled when a user first calls an estimator.

:func:`load` returns the library, or ``None`` when it was never built (a source tree on
``PYTHONPATH``) or was built from another version of its source; callers then take their
NumPy route, which computes the same thing more slowly. Setting the environment variable
``MATHLEARN_REQUIRE_EXT=1`` turns a missing library into an error instead (CI sets it, so a
broken build cannot hide behind the fallback); ``MATHLEARN_DISABLE_EXT=1`` makes :func:`load`
return ``None`` (the NumPy routes, e.g. to compare them with the compiled ones), read at
every call.
"""

from __future__ import annotations

import ctypes
import os
from functools import cache
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

__all__ = ["ABI_VERSIONS", "blas_pointer", "find", "load"]

# The interface version each library must report through ``<name>_abi_version()``; bumped
# whenever a signature changes, so that a stale build is never called with new arguments.
ABI_VERSIONS = {
    "_als": 12,
    "_als32": 2,
    "_cart": 10,
    "_cd": 3,
    "_hgb": 4,
    "_kdtree": 4,
    "_kmeans": 1,
    "_knn": 2,
    "_linkage": 1,
    "_nmf": 2,
    "_paths": 3,
    "_ratings": 5,
    "_refine": 1,
    "_rnn": 2,
    "_sgd": 1,
    "_sgdmf": 7,
    "_smo": 4,
    "_sqdist": 3,
}

REQUIRE_ENV = "MATHLEARN_REQUIRE_EXT"
DISABLE_ENV = "MATHLEARN_DISABLE_EXT"


def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


def find(name: str) -> Path | None:
    """The built library ``name`` (e.g. ``"_smo"``) next to this package, or None."""
    here = Path(__file__).resolve().parent
    for suffix in EXTENSION_SUFFIXES:
        path = here / f"{name}{suffix}"
        if path.is_file():
            return path
    return None


def load(name: str) -> ctypes.CDLL | None:
    """The compiled library ``name`` as a :class:`ctypes.CDLL`, or None when unavailable.

    None as well while ``MATHLEARN_DISABLE_EXT`` is set (to anything but ``""`` or ``"0"``).

    Raises
    ------
    ImportError
        When ``MATHLEARN_REQUIRE_EXT`` is set (to anything but ``""`` or ``"0"``) and the
        library is missing, cannot be loaded, or reports another interface version.
    """
    if _flag(DISABLE_ENV):
        return None
    # A library that loads is returned whatever REQUIRE_ENV says (one environment lookup
    # fewer on every call: estimators ask for their helpers at each fit).
    return _load(name, False) or _load(name, _flag(REQUIRE_ENV))


@cache
def _load(name: str, required: bool) -> ctypes.CDLL | None:
    path = find(name)
    problem = None
    lib = None
    if path is None:
        problem = f"the compiled library {name} was not built (run `pip install -e .`)"
    else:
        try:
            lib = ctypes.CDLL(str(path))
            version = getattr(lib, f"{name.lstrip('_')}_abi_version")
            version.restype = ctypes.c_int
            version.argtypes = []
            if version() != ABI_VERSIONS[name]:
                problem = (
                    f"{path} reports interface version {version()}, this source expects "
                    f"{ABI_VERSIONS[name]}: rebuild it (`pip install -e .`)"
                )
                lib = None
        except (OSError, AttributeError) as exc:
            problem = f"{path} cannot be loaded: {exc}"
            lib = None
    if lib is None and required:
        raise ImportError(f"{problem}; {REQUIRE_ENV} is set, so the fallback is refused.")
    return lib


@cache
def blas_pointer(name: str) -> int | None:
    """The address of SciPy's BLAS or LAPACK routine ``name`` (e.g. ``"dsyrk"``), or None.

    SciPy exports its BLAS and LAPACK to C through ``scipy.linalg.cython_blas`` and
    ``cython_lapack``: Fortran calling convention (every argument by pointer), 32-bit
    integers. A compiled helper given this address calls the optimised BLAS, which picks SIMD
    kernels for the processor at run time, as the helpers' portable build flags cannot.
    None where this SciPy does not export the routine; callers then use their own loops.
    """
    try:
        from scipy.linalg import cython_blas, cython_lapack

        capsule = {**cython_blas.__pyx_capi__, **cython_lapack.__pyx_capi__}[name]
    except (ImportError, AttributeError, KeyError):
        return None
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return api.PyCapsule_GetPointer(capsule, api.PyCapsule_GetName(capsule)) or None
