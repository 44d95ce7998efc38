"""Linear-algebra helpers: never an explicit inverse.

Symmetric positive definite systems are solved through a Cholesky factor (with jitter added
only when needed, and a ``NumericalWarning`` saying so); log-determinants come from the
factor's diagonal; least squares goes through a QR factorisation or an SVD.

The notes recommend the same (Imperial "Mathematics for Inference and Machine Learning" and
Imperial "Mathematics for Machine Learning"): solve, do not invert, and use the Cholesky factor of
a covariance for sampling and log-densities.
"""

from __future__ import annotations

import warnings
from typing import Literal, overload

import numpy as np
import scipy.linalg as sla
from numpy.typing import ArrayLike

from ..exceptions import NumericalWarning

__all__ = [
    "cho_solve",
    "cho_solve_batched",
    "cholesky",
    "cholesky_batched",
    "gram_schmidt_qr",
    "logdet_from_cholesky",
    "logdet_psd",
    "lstsq",
    "qr_eigh",
    "solve_psd",
    "solve_psd_batched",
    "solve_triangular",
    "symmetric_operator",
    "symmetrize_in_place",
]

solve_triangular = sla.solve_triangular


@overload
def cholesky(
    A: ArrayLike,
    *,
    jitter: str | float | None = ...,
    max_tries: int = ...,
    warn: bool = ...,
    name: str = ...,
    growth: float = ...,
    return_jitter: Literal[False] = ...,
) -> np.ndarray: ...


@overload
def cholesky(
    A: ArrayLike,
    *,
    jitter: str | float | None = ...,
    max_tries: int = ...,
    warn: bool = ...,
    name: str = ...,
    growth: float = ...,
    return_jitter: Literal[True],
) -> tuple[np.ndarray, float]: ...


def cholesky(
    A: ArrayLike,
    *,
    jitter: str | float | None = "auto",
    max_tries: int = 6,
    warn: bool = True,
    name: str = "matrix",
    growth: float = 10.0,
    return_jitter: bool = False,
) -> np.ndarray | tuple[np.ndarray, float]:
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
    growth : float, default=10.0
        Factor by which the jitter grows after each failed try.
    return_jitter : bool, default=False
        Also return the jitter that was added (``0.0`` when none was needed).

    Returns
    -------
    L : ndarray of shape (n, n)
        Lower-triangular factor of ``A + jitter * I``.
    jitter : float
        Only with ``return_jitter=True``: the jitter added to the diagonal.

    Raises
    ------
    numpy.linalg.LinAlgError
        If ``A`` is not positive definite even with the largest jitter tried.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.linalg import cholesky
    >>> cholesky(np.array([[4.0, 2.0], [2.0, 2.0]]))
    array([[2., 0.],
           [1., 1.]])
    >>> L, jitter = cholesky(np.ones((2, 2)), jitter=1e-6, warn=False, return_jitter=True)
    >>> jitter  # the singular matrix needed 1e-6 on its diagonal
    1e-06
    """
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be square; got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinity.")
    if not growth > 1:
        raise ValueError(f"growth must be greater than 1; got {growth}.")
    try:
        L = sla.cholesky(A, lower=True, check_finite=False)
        return (L, 0.0) if return_jitter else L
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
            eps *= growth
            continue
        if warn:
            warnings.warn(
                f"{name} was not numerically positive definite; added {eps:.3g} to its "
                "diagonal before the Cholesky factorisation.",
                NumericalWarning,
                stacklevel=2,
            )
        return (L, eps) if return_jitter else L
    raise np.linalg.LinAlgError(
        f"{name} is not positive definite, even with {eps / growth:.3g} added to its diagonal."
    )


def symmetrize_in_place(A: np.ndarray, tile: int = 256) -> np.ndarray:
    """``A <- (A + A^T) / 2`` without a temporary of ``A``'s size; returns ``A``.

    Square tiles of ``tile`` rows: each pair of mirrored tiles is averaged once (the same
    ``0.5 * (a_ij + a_ji)`` as the expression, bit for bit, since addition commutes) and
    written to both places, so the extra memory is one tile rather than two ``N x N`` arrays.

    Parameters
    ----------
    A : ndarray of shape (N, N)
        Overwritten with its symmetric part.
    tile : int, default=256
        Rows (and columns) of a tile.

    Returns
    -------
    ndarray
        ``A`` itself.

    Examples
    --------
    >>> import numpy as np
    >>> symmetrize_in_place(np.array([[1.0, 2.0], [4.0, 3.0]]))
    array([[1., 3.],
           [3., 3.]])
    """
    n = A.shape[0]
    for i in range(0, n, tile):
        rows = slice(i, min(n, i + tile))
        T = A[rows, rows]
        T[...] = 0.5 * (T + T.T)
        for j in range(0, i, tile):
            cols = slice(j, j + tile)
            avg = 0.5 * (A[rows, cols] + A[cols, rows].T)
            A[rows, cols] = avg
            A[cols, rows] = avg.T
    return A


def symmetric_operator(A: np.ndarray):
    """A dense symmetric matrix as a :class:`scipy.sparse.linalg.LinearOperator` whose
    products are BLAS ``symv``/``symm`` in SciPy's BLAS: for a Lanczos solver (``eigsh``)
    that multiplies by ``A`` once a step.

    ``symv`` reads one triangle of ``A`` (the lower one of a C-ordered array, which is the
    upper one as Fortran sees it), so it moves half the memory of a general product: 0.07
    against 0.12 ms at N = 1 000 and 2.2 against 3.6 ms at 3 000 on one core. Running in
    SciPy's BLAS, it shares a thread pool with ARPACK's own vector operations (a switch
    between NumPy's and SciPy's pools can stall; see ``utils._threads.scipy_matmul``).
    ``A`` must be a C- or Fortran-contiguous float64 square array; it is symmetric, so
    either order is the same matrix to Fortran, and the triangle read is equal to the other
    to rounding.

    Parameters
    ----------
    A : ndarray of shape (n, n)
        Symmetric, float64, C- or Fortran-contiguous (not copied; it must outlive the
        operator).

    Returns
    -------
    scipy.sparse.linalg.LinearOperator
        ``v -> A v`` (``symv``) and ``V -> A V`` (``symm``).

    Examples
    --------
    >>> import numpy as np
    >>> op = symmetric_operator(np.array([[2.0, 1.0], [1.0, 3.0]]))
    >>> op @ np.array([1.0, 1.0])
    array([3., 4.])
    """
    from scipy.linalg.blas import dsymm, dsymv
    from scipy.sparse.linalg import LinearOperator

    if A.dtype != np.float64 or A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be a square float64 array; got {A.dtype} of shape {A.shape}.")
    # as Fortran sees it: A itself if Fortran-ordered, else its transpose (the same matrix)
    a = A if A.flags.f_contiguous else np.ascontiguousarray(A).T

    def matvec(v):
        return dsymv(1.0, a, np.asarray(v, dtype=np.float64).reshape(-1))

    def matmat(V):
        return dsymm(1.0, a, np.asfortranarray(V, dtype=np.float64))

    return LinearOperator(A.shape, matvec=matvec, matmat=matmat, rmatvec=matvec, dtype=A.dtype)


def cho_solve(L: np.ndarray, B: ArrayLike) -> np.ndarray:
    """Solve ``(L L^T) X = B`` given the lower Cholesky factor ``L``.

    Parameters
    ----------
    L : ndarray of shape (n, n)
        Lower Cholesky factor (from :func:`cholesky`).
    B : array-like of shape (n,) or (n, k)
        Right-hand side.

    Returns
    -------
    ndarray of B's shape
        The solution.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.linalg import cho_solve, cholesky
    >>> cho_solve(cholesky(np.array([[4.0, 2.0], [2.0, 2.0]])), np.array([6.0, 4.0]))
    array([1., 1.])

    Notes
    -----
    LAPACK's ``potrs`` called directly: what ``scipy.linalg.cho_solve`` calls, the same
    result bit for bit, without its per-call wrapping (2 against 7 microseconds a solve at
    n = 10, 24 against 33 at n = 100, the same at n = 1 000: ``benchmarks/bench_linalg.py``;
    and some 20 kB of short-lived objects a call: solvers that call it in a loop, the
    variational mixtures' sweeps, spent more on the wrapper than on the solve).
    """
    L, B = np.asarray(L), np.asarray(B)
    if B.ndim not in (1, 2) or L.ndim != 2 or L.shape[0] != L.shape[1] or B.shape[0] != L.shape[0]:
        raise ValueError(f"cho_solve: incompatible dimensions {np.shape(L)} and {B.shape}.")
    (potrs,) = sla.get_lapack_funcs(("potrs",), (L, B))
    if B.size == 0:
        return np.empty(B.shape, dtype=potrs.dtype)
    X, info = potrs(L, B, lower=1)
    if info != 0:  # (only for an illegal argument: potrs cannot fail otherwise)
        raise ValueError(f"cho_solve: LAPACK potrs reported info = {info}.")
    return X


def solve_psd(
    A: ArrayLike, B: ArrayLike, *, jitter: str | float | None = "auto", name: str = "matrix"
) -> np.ndarray:
    """Solve ``A X = B`` for symmetric positive definite ``A`` through its Cholesky factor.

    Parameters
    ----------
    A : array-like of shape (n, n)
        Symmetric positive definite.
    B : array-like of shape (n,) or (n, k)
        Right-hand side.
    jitter : {"auto", None} or float, default="auto"
        As in :func:`cholesky`.
    name : str, default="matrix"
        Name of ``A`` in messages.

    Returns
    -------
    ndarray of B's shape
        The solution.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.linalg import solve_psd
    >>> solve_psd(np.array([[4.0, 2.0], [2.0, 2.0]]), np.array([6.0, 4.0]))
    array([1., 1.])
    """
    return cho_solve(cholesky(A, jitter=jitter, name=name), B)


def logdet_from_cholesky(L: np.ndarray) -> float:
    """``log det(L L^T) = 2 * sum(log diag(L))``.

    Parameters
    ----------
    L : ndarray of shape (n, n)
        Lower Cholesky factor with a positive diagonal.

    Returns
    -------
    float
        The log-determinant of ``L L^T``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.linalg import logdet_from_cholesky
    >>> logdet_from_cholesky(np.diag([1.0, np.e]))
    2.0
    """
    return 2.0 * float(np.sum(np.log(np.diag(L))))


def logdet_psd(A: ArrayLike, *, jitter: str | float | None = None, name: str = "matrix") -> float:
    """Log-determinant of a symmetric positive definite matrix via its Cholesky factor.

    Parameters
    ----------
    A : array-like of shape (n, n)
        Symmetric positive definite.
    jitter : {"auto", None} or float, default=None
        As in :func:`cholesky`; by default a matrix that is not positive definite raises.
    name : str, default="matrix"
        Name of ``A`` in messages.

    Returns
    -------
    float
        ``log det A``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.linalg import logdet_psd
    >>> float(np.round(logdet_psd(np.diag([2.0, 3.0])) - np.log(6.0), 15))
    0.0
    """
    return logdet_from_cholesky(cholesky(A, jitter=jitter, name=name))


def lstsq(
    X: ArrayLike, y: ArrayLike, *, method: str = "qr", rcond: float | None = None
) -> tuple[np.ndarray, int]:
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

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.linalg import lstsq
    >>> coef, rank = lstsq(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), [1.0, 2.0, 3.0])
    >>> np.round(coef, 12), rank
    (array([1., 2.]), 2)
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


def gram_schmidt_qr(
    A: ArrayLike, *, modified: bool = True, reorthogonalize: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Thin QR factorisation ``A = Q R`` by Gram-Schmidt orthogonalisation.

    The teaching algorithm of the notes (Imperial "Mathematics for Inference and Machine Learning"
    §2.1.2.1, eqs. 2.13-2.17): column ``k`` of ``Q`` is ``a_k`` minus its projections on ``q_1 ..
    q_{k-1}``, normalised, and ``R_ik = q_i^T a_k``. LAPACK's Householder QR (``scipy.linalg.qr``)
    is the production route; this one exists to show, and to test, the algorithm of the notes.

    Parameters
    ----------
    A : array-like of shape (m, n), m >= n
        Full column rank.
    modified : bool, default=True
        Modified Gram-Schmidt: project the *running* residual instead of ``a_k`` (same result
        in exact arithmetic, much better orthogonality in floating point). ``False`` is the
        classical algorithm exactly as the notes write it.
    reorthogonalize : bool, default=False
        Orthogonalise every column twice ("twice is enough", Giraud et al. 2005), which makes
        even classical Gram-Schmidt orthogonal to machine precision.

    Returns
    -------
    Q : ndarray of shape (m, n)
        Orthonormal columns.
    R : ndarray of shape (n, n)
        Upper triangular with a positive diagonal (the unique such factorisation).

    Raises
    ------
    ValueError
        If ``A`` has more columns than rows, contains NaN/inf, or is (numerically) rank
        deficient.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.linalg import gram_schmidt_qr
    >>> Q, R = gram_schmidt_qr(np.array([[1.0, 1, 0], [1, 2, 1], [-2, -3, 1]]))
    >>> np.round(R, 4)
    array([[ 2.4495,  3.6742, -0.4082],
           [ 0.    ,  0.7071,  0.7071],
           [ 0.    ,  0.    ,  1.1547]])
    """
    A = np.asarray(A, dtype=float)
    if A.ndim != 2:
        raise ValueError(f"A must be 2-D; got shape {A.shape}.")
    m, n = A.shape
    if n > m:
        raise ValueError(f"A must have at least as many rows as columns; got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError("A contains NaN or infinity.")
    Q = np.zeros((m, n))
    R = np.zeros((n, n))
    scale = np.linalg.norm(A, axis=0)
    for k in range(n):
        v = A[:, k].copy()
        for _ in range(2 if reorthogonalize else 1):
            if modified:
                for i in range(k):
                    # (2.13) with ||q_i|| = 1, applied to the running residual.
                    r = Q[:, i] @ v
                    R[i, k] += r
                    v -= r * Q[:, i]
            else:
                # Classical (2.15): every projection uses the same vector (a_k on the first
                # pass), R_ik = q_i^T a_k (2.16).
                r = Q[:, :k].T @ v
                R[:k, k] += r
                v = v - Q[:, :k] @ r
        norm = np.linalg.norm(v)
        if norm <= max(m, n) * np.finfo(float).eps * max(scale[k], np.finfo(float).tiny):
            raise ValueError(f"A is rank deficient: column {k} lies in the span of the previous.")
        R[k, k] = norm
        Q[:, k] = v / norm
    return Q, R


def qr_eigh(
    A: ArrayLike,
    *,
    max_iter: int = 1000,
    tol: float = 1e-12,
    shift: str | None = "wilkinson",
    warn: bool = True,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Eigenvalues and eigenvectors of a symmetric matrix by the QR algorithm.

    The iteration of the notes (Imperial "Mathematics for Inference and Machine Learning" §2.1.2,
    eqs. 2.11-2.12): ``A_k = Q_k R_k``, ``A_{k+1} = R_k Q_k = Q_k^T A_k Q_k``; all ``A_k`` are
    similar and converge to a diagonal matrix. The notes' version has no shift and converges slowly
    when eigenvalues are close (for example, after 100 iterations on a 100 x 100 matrix the error
    is ~5e-3). With ``shift="wilkinson"`` each step factorises ``A_k - mu I`` with the Wilkinson
    shift from the trailing 2 x 2 block and deflates converged trailing eigenvalues, which
    converges (cubically, for symmetric matrices) in a few iterations per eigenvalue.

    Parameters
    ----------
    A : array-like of shape (n, n)
        Symmetric; it is symmetrised as ``(A + A^T) / 2`` (the notes' stability advice).
    max_iter : int, default=1000
        QR steps in total.
    tol : float, default=1e-12
        Off-diagonal entries below ``tol * ||A||_F`` count as zero.
    shift : {"wilkinson", None}, default="wilkinson"
        ``None`` is the unshifted iteration of the notes.
    warn : bool, default=True
        Emit a ``ConvergenceWarning`` if ``max_iter`` is reached.

    Returns
    -------
    w : ndarray of shape (n,)
        Eigenvalues in decreasing order.
    V : ndarray of shape (n, n)
        Orthonormal eigenvectors (columns), ``A V = V diag(w)``: the product of the ``Q_k``.
    n_iter : int

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.linalg import qr_eigh
    >>> w, V, _ = qr_eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> np.round(w, 10)
    array([3., 1.])
    """
    from ..exceptions import ConvergenceWarning

    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be square; got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError("A contains NaN or infinity.")
    if shift not in ("wilkinson", None):
        raise ValueError(f"shift must be 'wilkinson' or None; got {shift!r}.")
    scale = max(float(np.linalg.norm(A)), np.finfo(float).tiny)
    if np.max(np.abs(A - A.T)) > 1e-10 * scale:
        raise ValueError("A is not symmetric; qr_eigh handles symmetric matrices only.")
    Ak = 0.5 * (A + A.T)
    n = Ak.shape[0]
    V = np.eye(n)
    m = n  # size of the active (not yet deflated) leading block
    it = 0
    while m > 1 and it < max_iter:
        B = Ak[:m, :m]
        if shift is None:
            off = np.abs(B - np.diag(np.diag(B))).max()
            if off <= tol * scale:
                break
            mu = 0.0
        else:
            # The active block is full, not tridiagonal: the whole last row must vanish
            # before its diagonal entry is an eigenvalue (one small neighbour is not enough).
            if np.max(np.abs(B[m - 1, : m - 1])) <= tol * scale:
                m -= 1
                continue
            a, b, c = B[m - 2, m - 2], B[m - 1, m - 2], B[m - 1, m - 1]
            delta = 0.5 * (a - c)
            sign = 1.0 if delta >= 0 else -1.0
            mu = c - sign * b * b / (abs(delta) + np.hypot(delta, b))
        Q, R = np.linalg.qr(B - mu * np.eye(m))
        Ak[:m, :m] = R @ Q + mu * np.eye(m)
        # Keep the full matrix similar to A: the off-diagonal block rotates too.
        Ak[:m, m:] = Q.T @ Ak[:m, m:]
        Ak[m:, :m] = Ak[:m, m:].T
        V[:, :m] = V[:, :m] @ Q
        it += 1
    converged = (
        m <= 1 if shift is not None else (np.abs(Ak - np.diag(np.diag(Ak))).max() <= tol * scale)
    )
    if not converged and warn:
        warnings.warn(
            f"qr_eigh did not converge in max_iter={max_iter} iterations.",
            ConvergenceWarning,
            stacklevel=2,
        )
    w = np.diag(Ak).copy()
    order = np.argsort(w)[::-1]
    return w[order], V[:, order], it


def solve_psd_batched(
    A: ArrayLike, B: ArrayLike, *, jitter: str | float | None = None, name: str = "matrix"
) -> np.ndarray:
    """Solve ``A[i] X[i] = B[i]`` for a stack of symmetric positive definite matrices.

    Every member is factorised ``A[i] = L[i] L[i]^T`` (all at once through LAPACK's batched
    ``potrf``), which certifies positive definiteness, and the systems are then solved in one
    batched call; a member that is not positive definite falls back to :func:`cholesky`
    (with ``jitter``), so that the error or the jitter warning names it, and the jittered
    factors are used for the solve.

    Parameters
    ----------
    A : array-like of shape (*batch, n, n)
        Symmetric positive definite matrices; only their lower triangles are read.
    B : array-like of shape (*batch, n) or (*batch, n, k)
        Right-hand sides, one vector (or ``k`` columns) per member. The leading axes of ``A``
        and ``B`` broadcast.
    jitter : {None, "auto"} or float, default=None
        As in :func:`cholesky`; ``None`` raises on a matrix that is not positive definite.
    name : str, default="matrix"
        Name of the matrices in messages.

    Returns
    -------
    X : ndarray of shape (*batch, n) or (*batch, n, k)
        The solutions.

    Raises
    ------
    ValueError
        If the shapes do not match or an entry is NaN or infinite.
    numpy.linalg.LinAlgError
        If a member is not positive definite (even with the jitter tried), naming it.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.linalg import solve_psd_batched
    >>> A = np.array([[[2.0, 0.0], [0.0, 4.0]], [[2.0, 1.0], [1.0, 2.0]]])
    >>> solve_psd_batched(A, np.array([[2.0, 4.0], [3.0, 3.0]]))
    array([[1., 1.],
           [1., 1.]])
    """
    Ab = np.asarray(A, dtype=float)
    Bb = np.asarray(B, dtype=float)
    if Ab.ndim < 2 or Ab.shape[-1] != Ab.shape[-2]:
        raise ValueError(f"{name} must be a stack of square matrices; got shape {Ab.shape}.")
    n = Ab.shape[-1]
    vector = Bb.ndim == Ab.ndim - 1
    Bm = Bb[..., None] if vector else Bb
    if Bm.ndim < 2 or Bm.shape[-2] != n:
        raise ValueError(
            f"B must have shape (*batch, {n}) or (*batch, {n}, k) to match {name} of shape "
            f"{Ab.shape}; got {Bb.shape}."
        )
    if not (np.all(np.isfinite(Ab)) and np.all(np.isfinite(Bm))):
        raise ValueError(f"{name} or B contains NaN or infinity.")
    batch = np.broadcast_shapes(Ab.shape[:-2], Bm.shape[:-2])
    # Symmetrise from the lower triangle, as LAPACK reads it.
    Ab = np.tril(Ab) + np.swapaxes(np.tril(Ab, -1), -1, -2)
    try:
        L = np.linalg.cholesky(Ab)
        if not np.all(np.isfinite(L)):
            raise np.linalg.LinAlgError
    except np.linalg.LinAlgError:
        L = None
    if L is not None:
        # Every member is positive definite (the factorisation certifies it): one batched LU
        # solve on the exactly symmetric matrices is backward stable too, and about a third
        # of the time of the two triangular systems through NumPy's general solver (which has
        # no batched triangular solve).
        Ab = np.broadcast_to(Ab, (*batch, n, n))
        Bm = np.broadcast_to(Bm, (*batch, *Bm.shape[-2:]))
        X = np.linalg.solve(Ab, Bm)
        return X[..., 0] if vector else X
    # A member is not positive definite: factorise one at a time, so that the error (or the
    # jitter warning) names it, and solve with the (jittered) factors.
    flat = Ab.reshape(-1, n, n)
    factors = np.empty_like(flat)
    for i in range(flat.shape[0]):
        idx = [int(j) for j in np.unravel_index(i, Ab.shape[:-2])]
        member = f"{name}{idx}" if Ab.ndim > 2 else name
        factors[i] = cholesky(flat[i], jitter=jitter, name=member)
    L = factors.reshape(Ab.shape)
    L = np.broadcast_to(L, (*batch, n, n))
    Bm = np.broadcast_to(Bm, (*batch, *Bm.shape[-2:]))
    # Forward then backward substitution, batched (LAPACK gesv on the triangular factors).
    X = np.linalg.solve(np.swapaxes(L, -1, -2), np.linalg.solve(L, Bm))
    return X[..., 0] if vector else X


def cholesky_batched(A, *, name: str = "matrix") -> np.ndarray:
    """Lower Cholesky factors of a stack of symmetric positive definite matrices, no jitter.

    One LAPACK call per member from a single NumPy call (no Python loop when every member
    is positive definite). Only the lower triangles are read.

    Parameters
    ----------
    A : array-like of shape (..., n, n)
    name : str
        Name of the stack in messages.

    Returns
    -------
    L : ndarray of shape (..., n, n)
        ``L[i] @ L[i].T == A[i]``.

    Raises
    ------
    numpy.linalg.LinAlgError
        Naming the (first) member that is not numerically positive definite.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.linalg import cholesky_batched
    >>> cholesky_batched(np.array([[[4.0]], [[9.0]]])).ravel().tolist()
    [2.0, 3.0]
    """
    A = np.asarray(A, dtype=float)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"{name} must be a stack of square matrices; got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinity.")
    try:
        return np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        pass
    flat = A.reshape(-1, *A.shape[-2:])
    for i, member in enumerate(flat):
        try:
            np.linalg.cholesky(member)
        except np.linalg.LinAlgError:
            where = np.unravel_index(i, A.shape[:-2]) if A.ndim > 2 else ()
            raise np.linalg.LinAlgError(
                f"{name}{list(map(int, where))} is not positive definite."
            ) from None
    raise np.linalg.LinAlgError(f"{name} is not positive definite.")  # pragma: no cover


def cho_solve_batched(L, B) -> np.ndarray:
    """Solve ``(L_i L_i^T) X_i = B_i`` for a stack of lower Cholesky factors.

    Parameters
    ----------
    L : ndarray of shape (m, n, n)
        Lower-triangular factors.
    B : ndarray of shape (n, k) or (m, n, k)
        Right-hand sides, shared or one per factor.

    Returns
    -------
    X : ndarray of shape (m, n, k)

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.linalg import cho_solve_batched
    >>> cho_solve_batched(np.array([[[2.0]], [[3.0]]]), np.ones((1, 1))).ravel().tolist()
    [0.25, 0.1111111111111111]
    """
    L = np.asarray(L, dtype=float)
    B = np.asarray(B, dtype=float)
    if L.shape[0] == 0:
        return np.empty((0, L.shape[1], B.shape[-1]))
    shared = B.ndim == 2
    return np.stack([cho_solve(Lk, B if shared else B[k]) for k, Lk in enumerate(L)])
