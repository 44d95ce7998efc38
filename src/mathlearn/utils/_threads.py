"""One BLAS thread for loops of small matrix products."""

from __future__ import annotations

import contextlib

_CONTROLLER: list = []


def serial_blas(work: float, threshold: float = float(1 << 16)):
    """A context in which BLAS runs on one thread when ``work`` (multiply-adds of a single
    product) is at least ``threshold``, else a no-op context (BLAS does not start its pool
    for smaller products anyway).

    For iterations made of many small products (a block of rows by ``K`` centres, ``N x D``
    by ``D x k``): a thread pool costs more than it gains there, and on a busy machine spinning
    BLAS threads slowed such loops ~20x. The controller (which scans the loaded libraries,
    milliseconds) is built once.
    """
    if work < threshold:
        return contextlib.nullcontext()
    if not _CONTROLLER:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")
