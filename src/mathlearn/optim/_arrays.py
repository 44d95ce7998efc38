"""Argument checks shared by the constrained-optimisation modules."""

from __future__ import annotations

import numpy as np


def _as_2d(a, name: str, n: int | None = None) -> np.ndarray:
    a = np.atleast_2d(np.asarray(a, dtype=float))
    if a.ndim != 2:
        raise ValueError(f"{name} must be 2-D; got shape {a.shape}.")
    if n is not None and a.shape[1] != n:
        raise ValueError(f"{name} must have {n} columns; got shape {a.shape}.")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return a
