"""Argument checks shared by the linear models."""

from __future__ import annotations

import numbers

import numpy as np

from ..utils.validation import validate_data

__all__ = ["check_bool", "check_int", "validate_xy"]


def validate_xy(estimator, X, y, *, reset: bool = True):
    """Finite float64 ``X`` (2-D) and ``y`` (1-D), as scikit-learn validates them."""
    return validate_data(estimator, X, y, y_numeric=True, dtype=np.float64, reset=reset)


def check_int(value, name: str, minimum: int = 1) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def check_bool(value, name: str) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a bool; got {value!r}.")
    return bool(value)
