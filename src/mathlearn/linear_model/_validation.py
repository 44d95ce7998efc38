"""Argument checks shared by the linear models."""

from __future__ import annotations

import numpy as np

from ..utils.validation import check_bool, check_int, validate_data

__all__ = ["check_bool", "check_int", "validate_xy"]


def validate_xy(estimator, X, y, *, reset: bool = True):
    """Finite float64 ``X`` (2-D) and ``y`` (1-D), as scikit-learn validates them."""
    return validate_data(estimator, X, y, y_numeric=True, dtype=np.float64, reset=reset)
