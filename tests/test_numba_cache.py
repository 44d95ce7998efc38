"""Numba's on-disk cache must never mix up two compiled kernels.

Numba names a cached compilation after the function's module, qualified name and first line,
not after its options: two ``cache=True`` dispatchers of one Python function (say a parallel
and a serial compilation) share a cache entry, and one silently runs the other's machine
code. The k-means kernel once ran serially for that reason. This test walks every module and
checks that no two cached dispatchers share a key.
"""

import importlib
import pkgutil

from numba.core.caching import NullCache
from numba.core.registry import CPUDispatcher

import mathlearn


def test_cached_kernels_have_distinct_cache_keys():
    seen = {}
    for info in pkgutil.walk_packages(mathlearn.__path__, "mathlearn."):
        if info.name.endswith("__main__") or info.name.startswith("mathlearn._ext."):
            # the compiled helpers are ctypes libraries, not Python modules
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if not isinstance(obj, CPUDispatcher) or isinstance(obj._cache, NullCache):
                continue
            f = obj.py_func
            key = (f.__module__, f.__qualname__, f.__code__.co_firstlineno)
            other = seen.setdefault(key, (id(obj), f"{info.name}.{name}"))
            assert other[0] == id(obj), f"{info.name}.{name} shares a cache key with {other[1]}"
    assert seen, "no cached numba kernels found; the walk is broken"
