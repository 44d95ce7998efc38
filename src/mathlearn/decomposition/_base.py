"""Helpers shared by the decomposition estimators: sign conventions and eigen-solvers."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla


def flip_rows(V: np.ndarray) -> np.ndarray:
    """Make the largest-magnitude entry of each row positive (deterministic signs).

    Eigenvectors and singular vectors are defined up to sign; fixing the
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
    # max |a_ij| without an N x N array of absolute values
    norm = max(max(float(A.max()), -float(A.min())) * n, np.finfo(float).tiny)
    if np.max(np.abs(A @ V - V * w)) > tol * norm:
        return False
    return bool(np.max(np.abs(V.T @ V - np.eye(k))) <= tol)


# The covariance route resolves eigenvalues to about n_features * eps * lambda_max; it is
# used when the eigenvalues a method needs are within this factor of the largest (so keep
# about ten digits), and the QR/SVD route otherwise.
COVARIANCE_ROUTE_MAX_RATIO = 1e4


def centred_spectrum(
    Xc: np.ndarray, needed, rows: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (decreasing) of the ``1/N`` covariance of centred ``X_c``, and ``V^T``.

    Cheap route first (``N >= D``): the eigendecomposition of ``X_c^T X_c / N``. The
    callable ``needed(w)`` returns the smallest eigenvalue-like quantity the caller must
    resolve (the trailing mean for PPCA's ``sigma^2``, the last kept eigenvalue for
    whitening); when it is below ``lambda_max / COVARIANCE_ROUTE_MAX_RATIO`` the
    covariance route has lost too many digits, and the spectrum comes from the singular
    values of ``X_c`` (:func:`right_singular`) instead. Returns ``min(N, D)`` values.

    ``rows``: only the first ``rows`` rows of ``V^T`` are needed. Wide data (``N < D``)
    then take the Gram route, the eigendecomposition of ``X_c X_c^T / N = U diag(w) U^T``
    (the same nonzero eigenvalues, ``N x N``: about a third of the work of the SVD of the
    ``N x D`` matrix), with ``V^T``'s rows ``u_i^T X_c / sqrt(N w_i)``, accurate where
    ``w_i`` is within ``COVARIANCE_ROUTE_MAX_RATIO`` of ``w_1``, the test applied to the
    needed quantity as on the covariance route.
    """
    n, d = Xc.shape
    if n >= d:
        w, V = np.linalg.eigh(Xc.T @ Xc / n)
        w, Vt = w[::-1], V[:, ::-1].T
        if w[0] > 0 and needed(w) * COVARIANCE_ROUTE_MAX_RATIO >= w[0]:
            return w, Vt
    elif rows is not None and rows <= n:
        w, U = np.linalg.eigh(Xc @ Xc.T / n)
        w, U = w[::-1], U[:, ::-1]
        if (
            w[0] > 0
            and w[rows - 1] * COVARIANCE_ROUTE_MAX_RATIO >= w[0]
            and needed(w) * COVARIANCE_ROUTE_MAX_RATIO >= w[0]
        ):
            Vt = (U[:, :rows].T @ Xc) / np.sqrt(n * w[:rows])[:, None]
            return w, Vt
    s, Vt = right_singular(Xc)
    return s**2 / n, Vt


def right_singular(Xc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Singular values and right singular vectors ``(s, V^T)`` of ``X_c``, no ``U``.

    For a tall matrix through the triangular factor of a Householder QR, ``X_c = Q R``:
    ``R`` has the singular values and right vectors of ``X_c``, to the same backward error
    (``eps ||X_c||``), at about twice the cost of forming ``X_c^T X_c`` and without
    squaring the condition number (eigenvalues of ``X_c^T X_c`` are resolved only to
    ``eps s_max^2``, which calls data with one feature in large units rank-deficient).
    """
    n, d = Xc.shape
    A = Xc
    if n > d:
        A = sla.qr(Xc, mode="r", check_finite=False)[0][:d]
    _, s, Vt = sla.svd(A, full_matrices=False, check_finite=False, lapack_driver="gesdd")
    return s, Vt


class EMSteps:
    """The EM driver's hooks (``e_step``, ``m_step``, see :class:`mathlearn.mixture.EMModel`)
    over an estimator's private ``_e_step``/``_m_step``.

    Factor analysis and probabilistic PCA run EM on internal summaries of the data (the
    scatter matrix; the centred data or the observed mask), which would make odd public
    methods on the estimators themselves.
    """

    def __init__(self, model):
        self.model = model

    def e_step(self, data):
        return self.model._e_step(data)

    def m_step(self, data, posterior) -> None:
        self.model._m_step(data, posterior)
