"""Numba kernels compiled on demand, cached in the user's cache directory.

mathlearn's numba kernels live in ``_*_kernels.py`` modules that the estimators import only
when a problem is large enough for a compiled kernel to pay for itself; small problems take
NumPy routes, so ``import mathlearn`` and a first fit on small data import no numba and
compile nothing.

Numba's own default writes a compiled kernel's cache next to its source file (into
``site-packages``) when that directory is writable. :func:`njit` caches instead in
``NUMBA_CACHE_DIR`` when the user has set it, otherwise in a ``mathlearn/numba`` folder of
the user's cache directory (``$XDG_CACHE_HOME``, ``~/.cache``, ``~/Library/Caches`` or
``%LOCALAPPDATA%``); where that cannot be written, the kernel is compiled in every process
and nothing is written anywhere.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numba
from numba.core import config
from numba.core.caching import UserProvidedCacheLocator

__all__ = ["cache_dir", "njit"]


def cache_dir() -> Path:
    """Where mathlearn's compiled kernels are cached when ``NUMBA_CACHE_DIR`` is unset."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "mathlearn" / "numba"


def njit(*, cache: bool = True, **options):
    """``numba.njit(**options)`` whose on-disk cache goes to the user's cache directory."""

    def decorate(func):
        dispatcher = numba.njit(**options)(func)
        if not cache:
            return dispatcher
        user_dir = config.CACHE_DIR
        if user_dir:  # NUMBA_CACHE_DIR: numba's own locator honours it
            dispatcher.enable_caching()
            return dispatcher
        # Numba's user-provided locator reads config.CACHE_DIR when it is created; point it
        # at our directory for this one dispatcher only.
        config.CACHE_DIR = str(cache_dir())
        try:
            source = func.__code__.co_filename
            if UserProvidedCacheLocator.from_function(func, source) is not None:
                dispatcher.enable_caching()
        except OSError:  # pragma: no cover - an unusable cache directory: compile each time
            pass
        finally:
            config.CACHE_DIR = user_dir
        return dispatcher

    return decorate
