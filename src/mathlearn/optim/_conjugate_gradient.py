"""Conjugate gradients for symmetric positive definite systems, with preconditioning.

Minimising the quadratic ``f(x) = 1/2 x^T A x - b^T x`` (gradient ``A x - b``) for SPD ``A``
is solving ``A x = b``. Conjugate gradients (Hestenes and Stiefel 1952; named among the
optimisers of Imperial "Mathematics for Inference and Machine Learning" §1.6.4) take steps along
directions ``p_k`` that are ``A``-conjugate, ``p_i^T A p_j = 0``:

    r_0 = b - A x_0,  z_0 = M^{-1} r_0,  p_0 = z_0
    alpha_k = r_k^T z_k / p_k^T A p_k
    x_{k+1} = x_k + alpha_k p_k,          r_{k+1} = r_k - alpha_k A p_k
    z_{k+1} = M^{-1} r_{k+1},  beta_k = r_{k+1}^T z_{k+1} / r_k^T z_k
    p_{k+1} = z_{k+1} + beta_k p_k

In exact arithmetic the solution is reached in at most ``n`` steps (in as many steps as ``A``
has distinct eigenvalues), and the error in the ``A``-norm falls at least as
``2 ((sqrt(kappa) - 1) / (sqrt(kappa) + 1))^k`` with ``kappa`` the condition number of
``M^{-1} A``: gradient descent's rate with ``kappa`` replaced by its square root. The
preconditioner ``M`` (SPD, applied by solving, never inverted) should make ``M^{-1} A`` well
conditioned while being cheap to solve with: its diagonal (Jacobi) is the simplest choice,
the preconditioned gradient descent of Imperial "Mathematics for Machine Learning" with a
fixed ``P``.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import OptimizeResult

from ..utils._param_validation import Interval, validate_params
from ._preconditioning import _preconditioner_solver

__all__ = ["conjugate_gradient"]


def _matvec(A, n):
    if callable(A):
        return A
    A = np.asarray(A, dtype=float)
    if A.shape != (n, n):
        raise ValueError(f"A must be ({n}, {n}) to match b; got {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError("A contains NaN or infinity.")
    return lambda v: A @ v


@validate_params(
    {
        "A": ["array-like", callable],
        "b": ["array-like"],
        "x0": ["array-like", None],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "preconditioner": ["array-like", callable, None],
    }
)
def conjugate_gradient(
    A: ArrayLike | Callable,
    b: ArrayLike,
    x0: ArrayLike | None = None,
    *,
    tol: float = 1e-10,
    max_iter: int | None = None,
    preconditioner: ArrayLike | Callable | None = None,
) -> OptimizeResult:
    """Solve ``A x = b`` for symmetric positive definite ``A`` by (preconditioned) CG.

    Parameters
    ----------
    A : array-like of shape (n, n) or callable
        The SPD matrix, or a function ``v -> A v`` (only products are needed).
    b : array-like of shape (n,)
        Right-hand side.
    x0 : array-like of shape (n,), optional
        Starting point (zeros).
    tol : float, default=1e-10
        Stop when ``||r_k|| <= tol ||b||``.
    max_iter : int, optional
        Iteration cap (default ``10 n``: rounding can delay the ``n``-step termination).
    preconditioner : array-like of shape (n,) or (n, n), or callable, optional
        ``M``: its diagonal (a vector), an SPD matrix (factorised once by Cholesky), or a
        function ``r -> M^{-1} r``.

    Returns
    -------
    scipy.optimize.OptimizeResult
        ``x``, ``success`` (the tolerance was met), ``nit``, ``residual_norms`` (``||r_k||``
        for ``k = 0..nit``) and ``message``.

    Raises
    ------
    ValueError
        Shapes that do not match, NaN/inf, or ``p^T A p <= 0`` (``A`` is not positive
        definite) or ``r^T M^{-1} r < 0`` (``M`` is not).

    See Also
    --------
    mathlearn.optim.precondition, mathlearn.optim.max_stable_step

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.optim import conjugate_gradient
    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]]); b = np.array([1.0, 2.0])
    >>> res = conjugate_gradient(A, b)
    >>> res.nit, bool(np.allclose(A @ res.x, b))         # n = 2 steps
    (2, True)
    """
    b = np.asarray(b, dtype=float)
    if b.ndim != 1 or b.size == 0:
        raise ValueError(f"b must be a non-empty vector; got shape {b.shape}.")
    if not np.all(np.isfinite(b)):
        raise ValueError("b contains NaN or infinity.")
    n = b.shape[0]
    matvec = _matvec(A, n)
    apply_m = _preconditioner_solver(preconditioner, n)
    x = np.zeros(n) if x0 is None else np.array(x0, dtype=float)
    if x.shape != (n,):
        raise ValueError(f"x0 must have shape ({n},); got {x.shape}.")
    max_iter = 10 * n if max_iter is None else int(max_iter)
    r = b - matvec(x)
    z = apply_m(r)
    rz = float(r @ z)
    if rz < 0:
        raise ValueError("the preconditioner is not positive definite (r^T M^{-1} r < 0).")
    p = z.copy()
    target = tol * float(np.linalg.norm(b))
    norms = [float(np.linalg.norm(r))]
    k = 0
    while norms[-1] > target and k < max_iter:
        Ap = np.asarray(matvec(p), dtype=float)
        curvature = float(p @ Ap)
        if not curvature > 0:
            raise ValueError(
                f"p^T A p = {curvature:.3g} <= 0 at step {k}: A is not positive definite "
                "(conjugate gradients needs an SPD matrix; use a least-squares or indefinite "
                "solver)."
            )
        alpha = rz / curvature
        x += alpha * p
        r -= alpha * Ap
        z = apply_m(r)
        rz_new = float(r @ z)
        if rz_new < 0:
            raise ValueError("the preconditioner is not positive definite (r^T M^{-1} r < 0).")
        p = z + (rz_new / rz) * p if rz > 0 else z
        rz = rz_new
        k += 1
        norms.append(float(np.linalg.norm(r)))
        if not np.isfinite(norms[-1]):
            raise ValueError("the residual became NaN or infinite (overflow).")
    success = norms[-1] <= target
    return OptimizeResult(
        x=x,
        success=bool(success),
        nit=k,
        residual_norms=np.asarray(norms),
        message="converged" if success else f"max_iter = {max_iter} reached",
    )
