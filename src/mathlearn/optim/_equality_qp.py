"""Equality-constrained quadratic programmes by Lagrange multipliers.

For a quadratic objective with linear equality constraints, stationarity of the Lagrangian
and feasibility form one linear system, the KKT system (Imperial "Mathematics for Machine Learning"
lecture 12), solved directly.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from numpy.typing import ArrayLike

from ._arrays import _as_2d

__all__ = ["solve_equality_qp"]


def solve_equality_qp(
    Q: ArrayLike, c: ArrayLike, A: ArrayLike, b: ArrayLike
) -> tuple[np.ndarray, np.ndarray]:
    """Minimise ``1/2 x^T Q x + c^T x`` subject to ``A x = b`` by Lagrange multipliers.

    Parameters
    ----------
    Q : array-like of shape (n, n)
        Symmetric; positive definite on the null space of ``A`` for a unique minimiser.
    c : array-like of shape (n,)
    A : array-like of shape (p, n)
        Constraint matrix with linearly independent rows.
    b : array-like of shape (p,)

    Returns
    -------
    x : ndarray of shape (n,)
        The minimiser.
    nu : ndarray of shape (p,)
        Lagrange multipliers of the Lagrangian ``1/2 x^T Q x + c^T x + nu^T (A x - b)``.

    Notes
    -----
    Setting the gradients of the Lagrangian to zero (Imperial "Mathematics for Machine Learning"
    lecture 12: stationarity ``Q x + c + A^T nu = 0`` and primal feasibility ``A x = b``) gives the
    KKT system

    ``[[Q, A^T], [A, 0]] [x; nu] = [-c; b]``,

    symmetric and indefinite, solved by an LDL^T factorisation. Its inertia (``n`` positive
    and ``p`` negative eigenvalues) certifies that the solution is a minimiser.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.optim import solve_equality_qp
    >>> x, nu = solve_equality_qp(np.eye(2), np.zeros(2), [[1.0, 1.0]], [1.0])
    >>> x, nu  # closest point to the origin on x1 + x2 = 1
    (array([0.5, 0.5]), array([-0.5]))
    """
    Q = _as_2d(Q, "Q")
    n = Q.shape[0]
    if Q.shape != (n, n):
        raise ValueError(f"Q must be square; got shape {Q.shape}.")
    if not np.allclose(Q, Q.T, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(Q).max())):
        raise ValueError("Q must be symmetric.")
    A = _as_2d(A, "A", n)
    c = np.asarray(c, dtype=float).reshape(-1)
    b = np.asarray(b, dtype=float).reshape(-1)
    if c.shape != (n,) or b.shape != (A.shape[0],):
        raise ValueError(
            f"c must have shape ({n},) and b shape ({A.shape[0]},); got {c.shape}, {b.shape}."
        )
    p = A.shape[0]
    K = np.block([[Q, A.T], [A, np.zeros((p, p))]])
    rhs = np.concatenate([-c, b])
    # Inertia of the KKT matrix: it is nonsingular with exactly n positive and p negative
    # eigenvalues iff A has full row rank and Q is positive definite on the null space of A
    # (Gould 1985); only then is the stationary point of the Lagrangian a minimiser rather
    # than a saddle of f on the constraint set.
    eig = np.linalg.eigvalsh(K)
    small = np.abs(eig) <= eig.size * np.finfo(float).eps * max(np.abs(eig).max(), 1e-300)
    if np.any(small):
        raise np.linalg.LinAlgError(
            "the KKT matrix is singular: the constraints are linearly dependent or Q is not "
            "positive definite on the null space of A."
        )
    if np.count_nonzero(eig > 0) != n:
        raise ValueError(
            "Q is not positive definite on the null space of A: the stationary point of the "
            "Lagrangian is a saddle, not a minimiser, of the objective on the constraint set."
        )
    sol = sla.solve(K, rhs, assume_a="sym", check_finite=False)
    return sol[:n], sol[n:]
