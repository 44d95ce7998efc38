r"""The Laplace approximation.

A posterior known up to its normaliser, ``p(theta | D) ∝ p(theta, D) = exp(-E(theta))``, is
replaced by the Gaussian centred at its mode whose precision is the curvature there: with
``theta*`` = argmax log p(theta, D) and ``H = -∇² log p(theta, D)|_{theta*}``,

.. math::

    p(\theta \mid D) \approx \mathcal N(\theta \mid \theta^*, H^{-1}), \qquad
    \log p(D) \approx \log p(\theta^*, D) + \tfrac d2 \log 2\pi - \tfrac12 \log\det H,

the second from integrating the second-order Taylor expansion of ``log p(theta, D)`` about the
mode (Oxford "Advanced Topics in Statistical Machine Learning" §7.3, eq. 7.1; PRML §4.4,
eq. 4.135). The approximation is exact when ``log p(theta, D)`` is quadratic (a Gaussian
prior with a linear-Gaussian likelihood); otherwise its error in ``log p(D)`` is
``O(1/n)`` as the posterior concentrates with ``n`` observations.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from .. import autodiff as ad
from .. import optim
from ..distributions import MultivariateNormal
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, StrOptions, validate_params
from ..utils.linalg import cholesky, logdet_from_cholesky

__all__ = ["LaplaceResult", "laplace_approximation"]

# Above this dimension the mode is found by L-BFGS: a Newton step costs O(d^3) and L-BFGS
# needs only gradients; the Hessian is still formed once, at the mode.
_LBFGS_DIM = 200


@dataclass(frozen=True)
class LaplaceResult:
    """Result of :func:`laplace_approximation`.

    Attributes
    ----------
    mode : ndarray of shape (d,)
        The maximiser ``theta*`` of ``log p(theta, D)``.
    hessian : ndarray of shape (d, d)
        ``H = -∇² log p(theta, D)`` at the mode: the precision of the approximation.
    posterior : MultivariateNormal
        ``N(theta*, H^{-1})``, built from the precision (no inverse is formed).
    log_joint : float
        ``log p(theta*, D)``.
    log_evidence : float
        ``log p(theta*, D) + d/2 log 2 pi - 1/2 log det H``.
    n_iter : int
        Iterations of the mode search.
    converged : bool
        Whether the mode search met its gradient tolerance.

    See Also
    --------
    mathlearn.inference.laplace_approximation
        The function that returns it.
    mathlearn.distributions.MultivariateNormal
        The approximating posterior.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.inference import laplace_approximation
    >>> res = laplace_approximation(lambda t: -0.5 * (t[0] - 1.0) ** 2, np.zeros(1))
    >>> res.mode.round(8), round(res.log_evidence, 6)  # a Gaussian: exact, log sqrt(2 pi)
    (array([1.]), 0.918939)
    """

    mode: np.ndarray
    hessian: np.ndarray
    posterior: MultivariateNormal
    log_joint: float
    log_evidence: float
    n_iter: int
    converged: bool


@validate_params(
    {
        "log_joint": [callable],
        "x0": ["array-like", Real],
        "grad": [callable, None],
        "hess": [callable, None],
        "method": [StrOptions({"auto", "newton", "lbfgs"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
    }
)
def laplace_approximation(
    log_joint: Callable[[np.ndarray], float],
    x0,
    grad: Callable[[np.ndarray], np.ndarray] | None = None,
    hess: Callable[[np.ndarray], np.ndarray] | None = None,
    *,
    method: str = "auto",
    max_iter: int = 200,
    tol: float = 1e-9,
) -> LaplaceResult:
    r"""Gaussian approximation at the mode of ``log_joint`` and the Laplace log evidence.

    Parameters
    ----------
    log_joint : callable
        ``log_joint(theta) -> float``: the log of the unnormalised posterior
        ``log p(theta, D) = log p(D | theta) + log p(theta)`` for a 1-D array ``theta``.
        Without ``grad``/``hess`` it must be written with :mod:`mathlearn.autodiff`
        operations, which then supply them.
    x0 : array-like of shape (d,) or float
        Starting point of the mode search.
    grad, hess : callable, optional
        ``grad(theta) -> (d,)`` and ``hess(theta) -> (d, d)``: the gradient and Hessian of
        ``log_joint`` (not of its negative).
    method : {"auto", "newton", "lbfgs"}, default="auto"
        Mode search: Newton with a backtracking line search (:func:`mathlearn.optim.newton`),
        or L-BFGS (:func:`mathlearn.optim.lbfgs`) followed by Newton steps from where it
        stops; ``"auto"`` uses L-BFGS above 200 dimensions.
    max_iter : int, default=200
    tol : float, default=1e-9
        Gradient tolerance of the mode search (Euclidean norm of ``∇ log_joint``).

    Returns
    -------
    LaplaceResult

    Raises
    ------
    ValueError
        If ``log_joint`` is not finite at the mode, or ``-∇² log_joint`` there is not
        positive definite (the stationary point is not a strict maximum).

    Notes
    -----
    See the module docstring for the equations. The mode search warns with a
    ``ConvergenceWarning`` if it stops before meeting ``tol``.

    Examples
    --------
    A Gaussian log density is its own Laplace approximation; its evidence is 1:

    >>> import numpy as np
    >>> from mathlearn import autodiff as ad
    >>> res = laplace_approximation(lambda t: -0.5 * ad.sum((t - 1.0) ** 2 / 4.0)
    ...                             - 0.5 * np.log(2 * np.pi * 4.0), np.zeros(1))
    >>> float(res.mode[0]), float(res.posterior.cov[0, 0]), abs(res.log_evidence) < 1e-12
    (1.0, 4.0, True)
    """
    x0 = np.array(x0, dtype=float)
    if x0.ndim > 1:
        raise ValueError(f"x0 must be a 1-D array or a scalar; got shape {x0.shape}.")
    x0 = x0.reshape(-1)
    d = x0.size
    if not np.all(np.isfinite(x0)):
        raise ValueError("x0 contains NaN or infinity.")
    grad = grad if grad is not None else ad.grad(log_joint)
    hess = hess if hess is not None else ad.hessian(log_joint)

    def energy(t):
        return -float(log_joint(t))

    def energy_grad(t):
        return -np.asarray(grad(t), dtype=float).reshape(d)

    if method == "auto":
        method = "lbfgs" if d > _LBFGS_DIM else "newton"
    n_iter = 0
    if method == "lbfgs":
        # L-BFGS-B is only the approach: it may stop where rounding leaves no further
        # decrease (a few epsilons), short of the gradient tolerance, and the Newton polish
        # below (the Hessian is needed at the mode anyway) converges quadratically from there
        # and judges convergence; so the approach's own non-convergence is not a warning.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            pre = optim.lbfgs(
                lambda t: (energy(t), energy_grad(t)),
                x0,
                max_iter=max_iter,
                tol=tol,
                ftol=64 * np.finfo(float).eps,
            )
        x0, n_iter = np.asarray(pre.x, dtype=float), int(pre.nit)
    res = optim.newton(
        energy,
        x0,
        grad=energy_grad,
        hess=lambda t: -np.asarray(hess(t), dtype=float).reshape(d, d),
        max_iter=max_iter,
        tol=tol,
    )
    mode = np.asarray(res.x, dtype=float)
    n_iter += int(res.nit)
    lj = float(log_joint(mode))
    if not math.isfinite(lj):
        raise ValueError(f"log_joint is not finite at the mode found ({lj}).")
    H = -np.asarray(hess(mode), dtype=float).reshape(d, d)
    H = 0.5 * (H + H.T)
    try:
        L = cholesky(H, jitter=None, name="the negative Hessian of log_joint at the mode")
    except np.linalg.LinAlgError as exc:
        raise ValueError(
            f"{exc} The stationary point found is not a strict maximum of log_joint, so the "
            "Laplace approximation does not exist there."
        ) from None
    log_evidence = lj + 0.5 * d * math.log(2.0 * math.pi) - 0.5 * logdet_from_cholesky(L)
    return LaplaceResult(
        mode=mode,
        hessian=H,
        posterior=MultivariateNormal.from_precision(mode, H),
        log_joint=lj,
        log_evidence=float(log_evidence),
        n_iter=n_iter,
        converged=bool(res.success),
    )
