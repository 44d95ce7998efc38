"""BLAS thread control for loops of small matrix products (one controller for the package)."""

from __future__ import annotations

import contextlib

_CONTROLLER: list = []


def blas_controller():
    """The package's :class:`threadpoolctl.ThreadpoolController`, built once (it scans the
    loaded libraries, which takes milliseconds)."""
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


_BLAS_LIBS: list = []


def _blas_libs() -> list:
    """The controllers of the BLAS libraries among the package controller's (selected once)."""
    if not _BLAS_LIBS:
        _BLAS_LIBS.append(blas_controller().select(user_api="blas").lib_controllers)
    return _BLAS_LIBS[0]


def blas_threads() -> int:
    """The number of threads the loaded BLAS libraries may use now (the largest of them)."""
    return max((lib.num_threads for lib in _blas_libs()), default=1)


def serial_blas(work: float = float("inf"), threshold: float = float(1 << 16)):
    """A context in which BLAS runs on one thread when ``work`` (multiply-adds of a single
    product) is at least ``threshold``, else a no-op context (BLAS does not start its pool
    for smaller products anyway). Without ``work``: always one thread.

    For iterations made of many small products (a block of rows by ``K`` centres, ``N x D``
    by ``D x k``, a recurrence's per-step ``batch x hidden`` by ``hidden x gates``): a thread
    pool costs more than it gains there, and on a busy machine spinning BLAS threads slowed
    such loops ~20x. The large products before and after such loops keep the pool.
    """
    if work < threshold or blas_threads() <= 1:
        # (already one thread: setting and restoring every library's count costs more than
        # a small product)
        return contextlib.nullcontext()
    return blas_controller().limit(limits=1, user_api="blas")
