"""Helpers shared by the decomposition estimators: sign conventions and eigen-solvers."""

from __future__ import annotations

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
    if k <= n // 4:
        w, V = sla.eigh(A, subset_by_index=[n - k, n - 1], check_finite=False, driver="evx")
        if _eigenpairs_ok(A, w, V, k):
            return w[::-1], V[:, ::-1]
        # syevx can return fewer, or unconverged, eigenvectors inside a cluster of equal
        # eigenvalues (the centred Gram matrix of np.eye(N) has one of multiplicity N - 1):
        # fall back to the full divide and conquer.
    w, V = np.linalg.eigh(A)
    return w[::-1][:k], V[:, ::-1][:, :k]


def _eigenpairs_ok(A, w, V, k) -> bool:
    """Whether ``(w, V)`` are ``k`` finite eigenpairs of ``A`` with orthonormal vectors.

    The residual ``||A V - V diag(w)||`` of a backward-stable symmetric eigensolver is a
    small multiple of ``n eps ||A||``; orthogonality within ``n eps`` likewise. The bound
    used here (``100 n eps``) leaves ample room for that and catches a failed solver, whose
    errors are of order one.
    """
    if w.shape != (k,) or V.shape != (A.shape[0], k):
        return False
    if not (np.all(np.isfinite(w)) and np.all(np.isfinite(V))):
        return False
    n = A.shape[0]
    tol = 100.0 * n * np.finfo(float).eps
    norm = max(float(np.max(np.abs(A))) * n, np.finfo(float).tiny)
    if np.max(np.abs(A @ V - V * w)) > tol * norm:
        return False
    return bool(np.max(np.abs(V.T @ V - np.eye(k))) <= tol)
