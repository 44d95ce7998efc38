"""Helpers shared by the decomposition estimators: sign conventions and eigen-solvers."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg as sla


def flip_rows(V: np.ndarray) -> np.ndarray:
    """Make the largest-magnitude entry of each row positive (deterministic signs).

    Eigenvectors and singular vectors are defined up to sign (spec 000 §6.3); fixing the
    sign this way makes every fit reproducible. It is scikit-learn's ``svd_flip`` convention
    for ``components_`` (decided by the rows of ``V^T``).
    """
    idx = np.argmax(np.abs(V), axis=1)
    signs = np.sign(V[np.arange(V.shape[0]), idx])
    signs[signs == 0] = 1.0
    return signs


def top_eigh(A: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest eigenpairs of a symmetric matrix, in decreasing order.

    Uses LAPACK ``syevx`` restricted to the wanted indices (``subset_by_index``) when ``k``
    is small, which is cheaper than the full spectrum (``syevr`` with an index range was
    ten times slower than the full ``syevd`` in our measurements); otherwise the full
    divide-and-conquer ``syevd``.
    """
    n = A.shape[0]
    k = min(k, n)
    if k > n // 4:
        w, V = np.linalg.eigh(A)
        w, V = w[n - k :], V[:, n - k :]
    else:
        w, V = sla.eigh(A, subset_by_index=[n - k, n - 1], check_finite=False, driver="evx")
    return w[::-1], V[:, ::-1]


def check_n_components(n_components, upper: int, name: str = "n_components", *, allow_float=False):
    """Validate an integer (or, with ``allow_float``, a variance fraction) ``n_components``."""
    if n_components is None:
        return None
    if (
        allow_float
        and isinstance(n_components, numbers.Real)
        and not isinstance(n_components, numbers.Integral | bool)
    ):
        if not 0.0 < float(n_components) < 1.0:
            raise ValueError(
                f"{name} given as a float must be a variance fraction in (0, 1); "
                f"got {n_components}."
            )
        return float(n_components)
    if not isinstance(n_components, numbers.Integral) or isinstance(n_components, bool):
        raise ValueError(f"{name} must be an int or None; got {n_components!r}.")
    if not 1 <= n_components <= upper:
        raise ValueError(
            f"{name}={n_components} must be between 1 and {upper} "
            "(min(n_samples, n_features) for these data)."
        )
    return int(n_components)
