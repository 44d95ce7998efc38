"""Linear-algebra helpers: never an explicit inverse.

Symmetric positive definite systems are solved through a Cholesky factor (with jitter added
only when needed, and a ``NumericalWarning`` saying so); log-determinants come from the
factor's diagonal; least squares goes through a QR factorisation or an SVD.

The notes recommend the same (spec 000 §6.2 and 003 §6.2): solve, do not invert, and use the
Cholesky factor of a covariance for sampling and log-densities.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla

from ..exceptions import NumericalWarning

__all__ = [
    "cho_solve",
    "cholesky",
    "logdet_from_cholesky",
    "logdet_psd",
    "lstsq",
    "solve_psd",
    "solve_triangular",
]

solve_triangular = sla.solve_triangular


def cholesky(
    A,
    *,
    jitter: str | float | None = "auto",
    max_tries: int = 6,
    warn: bool = True,
    name: str = "matrix",
) -> np.ndarray:
    """Lower Cholesky factor ``L`` with ``L @ L.T == A``, adding jitter only if needed.

    Parameters
    ----------
    A : array-like of shape (n, n)
        Symmetric positive (semi-)definite matrix. Only the lower triangle is read.
    jitter : "auto", float or None, default="auto"
        ``None``: no jitter; a failed factorisation raises. A float: the first jitter tried.
        ``"auto"``: start at ``1e-10 * mean(diag(A))`` and grow tenfold per try.
    max_tries : int, default=6
        Number of jitter values tried before giving up.
    warn : bool, default=True
        Emit a ``NumericalWarning`` naming the jitter that was added.
    name : str
        Name of the matrix in messages.

    Returns
    -------
    L : ndarray of shape (n, n)
        Lower-triangular factor of ``A + jitter * I``.

    Raises
    ------
    numpy.linalg.LinAlgError
        If ``A`` is not positive definite even with the largest jitter tried.
    """
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be square; got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinity.")
    try:
        return sla.cholesky(A, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        if jitter is None:
            raise np.linalg.LinAlgError(f"{name} is not positive definite.") from None
    diag_mean = float(np.mean(np.diag(A))) if A.size else 1.0
    if jitter == "auto":
        eps = 1e-10 * (diag_mean if diag_mean > 0 else 1.0)
    else:
        eps = float(jitter)
    eye = np.eye(A.shape[0])
    for _ in range(max_tries):
        try:
            L = sla.cholesky(A + eps * eye, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            eps *= 10.0
            continue
        if warn:
            warnings.warn(
                f"{name} was not numerically positive definite; added {eps:.3g} to its "
                "diagonal before the Cholesky factorisation.",
                NumericalWarning,
                stacklevel=2,
            )
        return L
    raise np.linalg.LinAlgError(
        f"{name} is not positive definite, even with {eps / 10:.3g} added to its diagonal."
    )


def cho_solve(L: np.ndarray, B) -> np.ndarray:
    """Solve ``(L L^T) X = B`` given the lower Cholesky factor ``L``."""
    return sla.cho_solve((L, True), B, check_finite=False)


def solve_psd(A, B, *, jitter: str | float | None = "auto", name: str = "matrix"):
    """Solve ``A X = B`` for symmetric positive definite ``A`` through its Cholesky factor."""
    return cho_solve(cholesky(A, jitter=jitter, name=name), B)


def logdet_from_cholesky(L: np.ndarray) -> float:
    """``log det(L L^T) = 2 * sum(log diag(L))``."""
    return 2.0 * float(np.sum(np.log(np.diag(L))))


def logdet_psd(A, *, jitter: str | float | None = None, name: str = "matrix") -> float:
    """Log-determinant of a symmetric positive definite matrix via its Cholesky factor."""
    return logdet_from_cholesky(cholesky(A, jitter=jitter, name=name))


def lstsq(X, y, *, method: str = "qr", rcond: float | None = None):
    """Least-squares solution of ``min ||X b - y||``.

    Parameters
    ----------
    X : array-like of shape (n, m)
    y : array-like of shape (n,) or (n, k)
    method : {"qr", "svd"}, default="qr"
        ``"qr"``: Householder QR with column pivoting (LAPACK ``geqp3``); rank deficiency is
        detected from the diagonal of ``R`` and the minimum-norm-like basic solution is
        returned. ``"svd"``: the minimum-norm solution from LAPACK ``gelsd``.
    rcond : float, optional
        Relative cut-off for small singular values / diagonal entries of ``R``. Defaults to
        ``max(n, m) * eps``.

    Returns
    -------
    coef : ndarray of shape (m,) or (m, k)
    rank : int
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n, m = X.shape
    if rcond is None:
        rcond = max(n, m) * np.finfo(float).eps
    if method == "svd":
        coef, _, rank, _ = sla.lstsq(X, y, cond=rcond, lapack_driver="gelsd", check_finite=False)
        return coef, int(rank)
    if method != "qr":
        raise ValueError(f"method must be 'qr' or 'svd'; got {method!r}.")
    Q, R, piv = sla.qr(X, mode="economic", pivoting=True, check_finite=False)
    d = np.abs(np.diag(R))
    rank = int(np.sum(d > rcond * (d[0] if d.size else 0.0))) if d.size else 0
    qty = Q.T @ y
    coef = np.zeros((m, *y.shape[1:]))
    if rank:
        coef[piv[:rank]] = sla.solve_triangular(R[:rank, :rank], qty[:rank], check_finite=False)
    return coef, rank
