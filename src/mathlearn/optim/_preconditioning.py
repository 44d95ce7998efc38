"""Preconditioned gradient descent and its largest stable step.

Imperial "Mathematics for Machine Learning" (gradient descent on quadratics,
preconditioning): for the least-squares loss ``L = ||y - X theta||^2 / (2 sigma^2)``, with
Hessian ``H = X^T X / sigma^2``, the preconditioned step ``theta <- theta - gamma P^{-1} grad L``
with a fixed SPD ``P`` gives

    theta_t - theta* = (I - gamma P^{-1} H)^t (theta_0 - theta*),

which converges from every start iff ``gamma < 2 / lambda_max(P^{-1} H)``
(``= 2 sigma^2 / lambda_max(P^{-1} X^T X)``); ``P = I`` is plain gradient descent, ``P = H``
reaches the optimum in one step with ``gamma = 1`` (a Newton step). The speed is governed by
``kappa(P^{-1} H)``. ``P^{-1} g`` is computed by a Cholesky solve (or a division for a
diagonal ``P``), never with an inverse. The eigenvalues of ``P^{-1} H`` are those of the
symmetric-definite pencil ``(H, P)``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.linalg as sla
from numpy.typing import ArrayLike

from ..utils._param_validation import validate_params
from ..utils.linalg import cho_solve, cholesky
from ..utils.validation import check_symmetric_psd
from ._transform import GradientTransformation

__all__ = ["max_stable_step", "precondition"]


def _preconditioner_solver(P, n: int) -> Callable[[np.ndarray], np.ndarray]:
    """``r -> P^{-1} r`` for a diagonal (vector), an SPD matrix, a callable, or None."""
    if P is None:
        return lambda r: r
    if callable(P):
        return lambda r: np.asarray(P(r), dtype=float)
    P = np.asarray(P, dtype=float)
    if P.ndim == 1:
        if P.shape != (n,):
            raise ValueError(f"a diagonal preconditioner must have {n} entries; got {P.shape}.")
        if not (np.all(np.isfinite(P)) and np.all(P > 0)):
            raise ValueError("a diagonal preconditioner must be finite and > 0.")
        return lambda r: r / P
    if P.shape != (n, n):
        raise ValueError(f"the preconditioner must be ({n}, {n}) or ({n},); got {P.shape}.")
    P = check_symmetric_psd(P, "the preconditioner P")
    L = cholesky(P, jitter=None, name="the preconditioner P")
    return lambda r: cho_solve(L, r)


@validate_params({"P": ["array-like"]})
def precondition(P: ArrayLike) -> GradientTransformation:
    """A transformation ``g -> P^{-1} g`` for a fixed SPD preconditioner ``P``.

    Chain it before a step size: ``chain(precondition(P), sgd(gamma))`` is preconditioned
    gradient descent ``theta <- theta - gamma P^{-1} grad``.

    Parameters
    ----------
    P : array-like of shape (n,) or (n, n)
        The diagonal of ``P`` (all > 0), or an SPD matrix (factorised once). The parameters
        must be one array of shape ``(n,)``.

    Returns
    -------
    GradientTransformation

    See Also
    --------
    max_stable_step, conjugate_gradient

    Examples
    --------
    With ``P`` the Hessian of a quadratic, one step of size 1 reaches its minimum:

    >>> import numpy as np
    >>> from mathlearn import optim
    >>> H = np.array([[10.0, 2.0], [2.0, 1.0]]); b = np.array([1.0, 1.0])
    >>> grad = lambda x: H @ x - b
    >>> opt = optim.chain(optim.precondition(H), optim.sgd(1.0))
    >>> x = np.zeros(2)
    >>> u, _ = opt.update(grad(x), opt.init(x))
    >>> bool(np.allclose(optim.apply_updates(x, u), np.linalg.solve(H, b)))
    True
    """
    P = np.asarray(P, dtype=float)
    if P.ndim not in (1, 2) or P.size == 0:
        raise ValueError(f"P must be a vector or a square matrix; got shape {P.shape}.")
    solve = _preconditioner_solver(P, P.shape[0])

    def init(params):
        return ()

    def update(updates, state, params=None, **extra):
        g = np.asarray(updates, dtype=float)
        if g.shape != (P.shape[0],):
            raise ValueError(
                f"precondition works on one parameter vector of shape ({P.shape[0]},); got "
                f"{g.shape}."
            )
        return solve(g), state

    return GradientTransformation(init, update)


@validate_params({"hessian": ["array-like"], "preconditioner": ["array-like", None]})
def max_stable_step(hessian: ArrayLike, preconditioner: ArrayLike | None = None) -> float:
    """``2 / lambda_max(P^{-1} H)``: gradient descent on a quadratic with Hessian ``H``
    converges from every start exactly for step sizes below it.

    Parameters
    ----------
    hessian : array-like of shape (n, n)
        Symmetric PSD Hessian ``H`` (for least squares ``X^T X / sigma^2``).
    preconditioner : array-like of shape (n,) or (n, n), optional
        SPD ``P`` (its diagonal as a vector); default the identity.

    Returns
    -------
    float
        ``inf`` if ``H = 0``.

    See Also
    --------
    precondition, mathlearn.linalg.condition_number

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.optim import max_stable_step
    >>> X = np.array([[1.0, 0.0], [0.0, 2.0]]); sigma2 = 1.0
    >>> max_stable_step(X.T @ X / sigma2)                     # 2 sigma^2 / lambda_max(X^T X)
    0.5
    >>> max_stable_step(X.T @ X, preconditioner=np.diag(X.T @ X))   # Jacobi: kappa = 1
    2.0
    """
    H = check_symmetric_psd(hessian, "the Hessian", strict=False)
    n = H.shape[0]
    if preconditioner is None:
        lam = float(np.linalg.eigvalsh(H)[-1])
    else:
        P = np.asarray(preconditioner, dtype=float)
        if P.ndim == 1:
            if P.shape != (n,) or not np.all(P > 0) or not np.all(np.isfinite(P)):
                raise ValueError(f"a diagonal preconditioner must be {n} finite values > 0.")
            s = 1.0 / np.sqrt(P)
            lam = float(np.linalg.eigvalsh(s[:, None] * H * s[None, :])[-1])
        else:
            P = check_symmetric_psd(P, "the preconditioner P")
            lam = float(sla.eigh(H, P, eigvals_only=True, check_finite=False)[-1])
    return 2.0 / lam if lam > 0 else float("inf")
