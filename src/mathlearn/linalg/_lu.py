"""One LU factorisation for the toolkit: a clear error, not a warning, on a singular matrix."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla


def lu_or_raise(M: np.ndarray, name: str, hint: str = ""):
    """``scipy.linalg.lu_factor(M)``; ``LinAlgError`` naming ``M`` if a pivot is exactly zero."""
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"{name} must be square; got shape {M.shape}.")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sla.LinAlgWarning)  # singularity is raised below
        lu = sla.lu_factor(M, check_finite=False)
    if np.any(np.diag(lu[0]) == 0):
        raise np.linalg.LinAlgError(f"{name} is singular.{hint}")
    return lu
