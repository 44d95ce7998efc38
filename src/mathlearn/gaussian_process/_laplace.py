"""The Laplace approximation specialised to a Gaussian-process prior, and the likelihoods.

This is the generic Laplace approximation (a Gaussian at the posterior mode with the
negative Hessian as precision) written for a prior ``f ~ N(0, K)`` and a factorising
likelihood, where the Newton iteration can be made stable without ever inverting ``K``:
with ``W = -d^2 log p(y | f) / df^2`` (diagonal) and ``B = I + W^1/2 K W^1/2``, whose
eigenvalues lie in ``[1, 1 + n max K_ij / 4]`` for the logistic link,

    b = W f + d log p(y | f) / df
    a = b - W^1/2 B^{-1} W^1/2 K b
    f_new = K a

(Oxford "Advanced Topics in Statistical Machine Learning" §9.3, the stable Newton step;
Rasmussen and Williams, *Gaussian Processes for Machine Learning*, Algorithms 3.1-3.2 and
5.1). At the mode ``a = K^{-1} f = d log p / df``, the approximate log marginal likelihood is
``-1/2 a^T f + log p(y | f) - sum log diag chol(B)`` and its gradient over the kernel's
hyperparameters includes the implicit dependence of the mode (RW eq. 5.23-5.24).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from scipy.special import log_ndtr

from ..utils.extmath import sigmoid

__all__ = ["LogisticLikelihood", "ProbitLikelihood", "laplace_mode"]

_LOG_SQRT_2PI = 0.5 * float(np.log(2.0 * np.pi))


class LogisticLikelihood:
    """``p(y = +1 | f) = sigma(f)`` for labels ``y`` in ``{-1, +1}``.

    Oxford notes eq. 9.12-9.14: gradient ``sigma(-y f) y``, ``W = sigma(f) sigma(-f)``.

    See Also
    --------
    mathlearn.gaussian_process.ProbitLikelihood
        The probit link.
    mathlearn.gaussian_process.GaussianProcessClassifier
        Where it is used.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.gaussian_process import LogisticLikelihood
    >>> round(LogisticLikelihood().log_lik(np.array([1.0]), np.array([0.0])), 6)  # log 1/2
    -0.693147
    """

    name = "logistic"

    def log_lik(self, y, f):
        """``sum log sigma(y f)``, computed as ``-softplus(-y f)``."""
        z = y * f
        return float(-np.sum(np.logaddexp(0.0, -z)))

    def derivatives(self, y, f):
        """First, minus second, and third derivative of ``log p(y_i | f_i)`` in ``f_i``."""
        pi = sigmoid(f)
        t = 0.5 * (y + 1.0)
        W = pi * (1.0 - pi)
        return t - pi, W, -W * (1.0 - 2.0 * pi)

    def log_proba_latent(self, f):
        """``log p(y = +1 | f)`` and ``log p(y = -1 | f)`` for latent values ``f``."""
        return -np.logaddexp(0.0, -f), -np.logaddexp(0.0, f)

    def log_proba_probit_approx(self, mean, var):
        """MacKay's approximation ``sigma(mean / sqrt(1 + pi var / 8))`` (log of both classes)."""
        return self.log_proba_latent(mean / np.sqrt(1.0 + np.pi * var / 8.0))


class ProbitLikelihood:
    """``p(y = +1 | f) = Phi(f)`` for labels ``y`` in ``{-1, +1}``.

    Oxford notes eq. 9.17: gradient ``y phi(f) / Phi(y f)``, and
    ``W = phi(f)^2 / Phi(y f)^2 + y f phi(f) / Phi(y f)`` (``>= 0``: log-concave).

    See Also
    --------
    mathlearn.gaussian_process.LogisticLikelihood
        The logistic link.
    mathlearn.gaussian_process.GaussianProcessClassifier
        Where it is used.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.gaussian_process import ProbitLikelihood
    >>> round(ProbitLikelihood().log_lik(np.array([-1.0]), np.array([0.0])), 6)  # log 1/2
    -0.693147
    """

    name = "probit"

    def log_lik(self, y, f):
        """``sum log Phi(y f)`` via ``log_ndtr`` (accurate far in the tail)."""
        return float(np.sum(log_ndtr(y * f)))

    def derivatives(self, y, f):
        """First, minus second, and third derivative of ``log p(y_i | f_i)`` in ``f_i``."""
        z = y * f
        # r = phi(z) / Phi(z), computed in log space so that it stays finite for z << 0.
        r = np.exp(-0.5 * z * z - _LOG_SQRT_2PI - log_ndtr(z))
        W = r * (r + z)
        dr = -r * (z + r)
        third = -y * (dr * (2.0 * r + z) + r)
        return y * r, W, third

    def log_proba_latent(self, f):
        """``log Phi(f)`` and ``log Phi(-f)``."""
        return log_ndtr(f), log_ndtr(-f)

    def log_proba_probit_approx(self, mean, var):
        """``Phi(mean / sqrt(1 + var))``: exact for the probit link."""
        return self.log_proba_latent(mean / np.sqrt(1.0 + var))


def laplace_mode(K, y, likelihood, *, f0=None, max_iter=100, tol=1e-10):
    """Posterior mode of ``f`` under ``N(0, K)`` and the likelihood, by stable Newton.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Prior covariance.
    y : ndarray of shape (n,)
        Labels in ``{-1, +1}``.
    likelihood : LogisticLikelihood or ProbitLikelihood
    f0 : ndarray of shape (n,), optional
        Starting point (a warm start); zero by default.
    max_iter : int
    tol : float
        Stop when the objective ``Psi = -1/2 a^T f + log p(y | f)`` changes by at most
        ``tol * (1 + |Psi|)``.

    Returns
    -------
    dict with ``f``, ``a``, ``grad`` (d log p / df at the mode), ``W``, ``sW``, ``L``
    (Cholesky factor of ``B``), ``lml`` (approximate log marginal likelihood), ``n_iter``,
    ``converged`` and ``history`` (the Newton iterates of ``f``).
    """
    n = K.shape[0]
    f = np.zeros(n) if f0 is None else np.asarray(f0, dtype=float).copy()
    # a with f = K a: for a warm start solve it through the same stable step below.
    a = np.zeros(n)
    psi_old = -np.inf
    history = [f.copy()]
    converged = False
    n_iter = 0
    for _ in range(max_iter):
        n_iter += 1
        g, W, _ = likelihood.derivatives(y, f)
        sW = np.sqrt(W)
        B = np.eye(n) + sW[:, None] * K * sW[None, :]
        L = sla.cholesky(B, lower=True, check_finite=False)
        b = W * f + g
        a_new = b - sW * sla.cho_solve((L, True), sW * (K @ b), check_finite=False)
        f_new = K @ a_new
        psi = -0.5 * float(a_new @ f_new) + likelihood.log_lik(y, f_new)
        # Newton on a concave objective can overshoot far from the mode: halve the step in
        # a until Psi does not decrease (RW §3.4.3, the step-size remark).
        step = 1.0
        while psi < psi_old and step > 1e-10:
            step *= 0.5
            a_try = a + step * (a_new - a)
            f_try = K @ a_try
            psi = -0.5 * float(a_try @ f_try) + likelihood.log_lik(y, f_try)
            a_new, f_new = a_try, f_try
        a, f = a_new, f_new
        history.append(f.copy())
        if abs(psi - psi_old) <= tol * (1.0 + abs(psi)):
            converged = True
            break
        psi_old = psi
    g, W, third = likelihood.derivatives(y, f)
    sW = np.sqrt(W)
    B = np.eye(n) + sW[:, None] * K * sW[None, :]
    L = sla.cholesky(B, lower=True, check_finite=False)
    lml = -0.5 * float(a @ f) + likelihood.log_lik(y, f) - float(np.sum(np.log(np.diag(L))))
    return {
        "f": f,
        "a": a,
        "grad": g,
        "W": W,
        "sW": sW,
        "third": third,
        "L": L,
        "lml": lml,
        "n_iter": n_iter,
        "converged": converged,
        "history": history,
    }


def laplace_lml_gradient(K, dK, state):
    """Gradient of the approximate log marginal likelihood over ``theta`` (RW Alg. 5.1).

    ``dK`` has shape (n_theta, n, n). The explicit part is
    ``1/2 a^T dK a - 1/2 tr(R dK)`` with ``R = W^1/2 B^{-1} W^1/2``; the implicit part goes
    through the mode: ``s2^T (dK grad - K R dK grad)`` with
    ``s2 = 1/2 diag((K^{-1} + W)^{-1}) * d^3 log p / df^3`` (RW write the sign with their
    ``W``'s derivative folded in).
    """
    sW, L, a, g = state["sW"], state["L"], state["a"], state["grad"]
    n = K.shape[0]
    R = sW[:, None] * sla.cho_solve((L, True), np.diag(sW), check_finite=False)
    C = sla.solve_triangular(L, sW[:, None] * K, lower=True, check_finite=False)
    # d(-1/2 log|B|)/df_i = -1/2 [(K^{-1} + W)^{-1}]_ii dW_ii/df_i and dW/df = -d^3 log p.
    s2 = 0.5 * (np.diag(K) - np.einsum("ij,ij->j", C, C)) * state["third"]
    G = dK.reshape(dK.shape[0], n * n)
    s1 = 0.5 * ((dK @ a) @ a) - 0.5 * (G @ R.ravel())
    b = dK @ g  # (n_theta, n)
    s3 = b - (K @ (R @ b.T)).T
    return s1 + s3 @ s2


def latent_predictive(K_star, prior_var, state):
    """Latent predictive mean ``k_*^T grad`` and variance ``k** - ||L \\ (W^1/2 k_*)||^2``."""
    mean = K_star @ state["grad"]
    v = sla.solve_triangular(
        state["L"], state["sW"][:, None] * K_star.T, lower=True, check_finite=False
    )
    return mean, prior_var - np.einsum("ij,ij->j", v, v)
