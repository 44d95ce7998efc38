"""Gaussians with a low-rank-plus-diagonal covariance ``C = W W^T + Psi``.

Factor analysis (``Psi`` diagonal) and probabilistic PCA (``Psi = sigma^2 I``) share this
density. Everything goes through the ``K x K`` matrix ``I + W^T Psi^{-1} W`` (``K`` the
latent dimension), never a ``D x D`` one:

* the matrix determinant lemma, ``ln|C| = ln|Psi| + ln|I + W^T Psi^{-1} W|``;
* the quadratic form in its variational (Woodbury) form,

  ``x^T C^{-1} x = min_z (x - W z)^T Psi^{-1} (x - W z) + z^T z``,

  attained at the posterior mean ``m = (I + W^T Psi^{-1} W)^{-1} W^T Psi^{-1} x`` of the
  latent-variable model ``z ~ N(0, I)``, ``x | z ~ N(W z, Psi)`` (PRML §12.2.4, eqs.
  12.64-12.66). The two terms are non-negative, so nothing cancels (the textbook
  ``x^T Psi^{-1} x - x^T Psi^{-1} W G W^T Psi^{-1} x`` subtracts two large numbers when
  ``Psi`` is small), and an error ``delta`` in ``m`` changes the sum only by
  ``delta^T (I + W^T Psi^{-1} W) delta``, to second order.

A log-density costs ``O(N D K)``; the mean log-density of data summarised by their scatter
``S`` costs ``O(D^2 K)``.
"""

from __future__ import annotations

import numpy as np

from ..utils.linalg import cho_solve, cholesky, logdet_from_cholesky

_LOG2PI = np.log(2.0 * np.pi)
# Entries up to this size square and sum (over any realistic number of terms) without
# overflow; beyond it the rows are rescaled first.
_SAFE = 1e100


class LowRankPlusDiagonal:
    """The covariance ``C = W W^T + diag(psi)`` through the factor of ``I + W^T Psi^{-1} W``.

    Parameters
    ----------
    W : ndarray of shape (D, K)
    psi : ndarray of shape (D,) or float
        Positive diagonal of ``Psi`` (a float: isotropic ``psi I``).

    Attributes
    ----------
    Wp : ndarray of shape (D, K)
        ``Psi^{-1} W``.
    L : ndarray of shape (K, K)
        Lower Cholesky factor of ``I + W^T Psi^{-1} W``.
    logdet : float
        ``ln|C|``.
    """

    def __init__(self, W, psi):
        W = np.asarray(W, dtype=float)
        d, k = W.shape
        psi = np.broadcast_to(np.asarray(psi, dtype=float), (d,))
        if not np.all(psi > 0) or not np.all(np.isfinite(psi)):
            raise ValueError("the diagonal Psi of the covariance must be positive and finite.")
        self.W, self.psi = W, psi
        self.Wp = W / psi[:, None]
        self.L = cholesky(np.eye(k) + W.T @ self.Wp, jitter=None, name="I + W^T Psi^-1 W")
        self.logdet = float(np.sum(np.log(psi))) + logdet_from_cholesky(self.L)

    def latent_mean(self, Xc):
        """Posterior means ``m = (I + W^T Psi^{-1} W)^{-1} W^T Psi^{-1} x``, shape (N, K)."""
        return cho_solve(self.L, self.Wp.T @ Xc.T).T

    def gain(self):
        """``B = (I + W^T Psi^{-1} W)^{-1} W^T Psi^{-1}``, shape (K, D): ``m = B x``."""
        return cho_solve(self.L, self.Wp.T)

    def quad(self, Xc):
        """``x^T C^{-1} x`` for each row of ``Xc``, shape (N,), without cancellation.

        Rows with entries beyond ``_SAFE`` are scaled by their largest entry first (the form
        is homogeneous of degree 2), so rows near the overflow threshold give the exact
        value when it is representable and ``inf`` otherwise, never NaN.
        """
        Xc = np.asarray(Xc, dtype=float)
        s = None
        if Xc.size and np.max(np.abs(Xc)) > _SAFE:
            s = np.max(np.abs(Xc), axis=1)
            s = np.where(s > 0, s, 1.0)
            Xc = Xc / s[:, None]
        M = self.latent_mean(Xc)
        R = Xc - M @ self.W.T
        R *= R
        q = R @ (1.0 / self.psi) + np.einsum("ij,ij->i", M, M)
        if s is not None:
            with np.errstate(over="ignore"):
                q = q * s * s  # (q s) s: a zero q stays zero
        return q

    def logpdf(self, X, mean):
        """``log N(x | mean, C)`` for each row of ``X``, shape (N,)."""
        X = np.asarray(X, dtype=float)
        mean = np.asarray(mean, dtype=float)
        d = X.shape[1]
        big = max(np.max(np.abs(X)) if X.size else 0.0, np.max(np.abs(mean)))
        if big <= _SAFE:
            return -0.5 * (d * _LOG2PI + self.logdet + self.quad(X - mean))
        # x - mean in units of the row's largest entry, so that the difference cannot
        # overflow; the scale comes back through the homogeneity of the quadratic form.
        s = np.maximum(np.max(np.abs(X), axis=1), np.max(np.abs(mean)))
        s = np.where(s > 0, s, 1.0)[:, None]
        q = self.quad(X / s - mean / s)
        with np.errstate(over="ignore"):
            q = q * s[:, 0] * s[:, 0]  # (q s) s: a zero q stays zero
        return -0.5 * (d * _LOG2PI + self.logdet + q)

    def trace_inv(self, S, B=None):
        """``tr(C^{-1} S)`` for a symmetric ``S`` (D, D), in ``O(D^2 K)``.

        The variational form summed over the data whose scatter is ``S``:
        ``tr(Psi^{-1} (I - W B) S (I - W B)^T) + tr(B S B^T)`` with ``B`` the gain (pass it
        if already computed).
        """
        if B is None:
            B = self.gain()
        BS = B @ S  # (K, D)
        BSB = BS @ B.T  # (K, K)
        resid = (
            np.diag(S)
            - 2.0 * np.einsum("ik,ki->i", self.W, BS)
            + np.einsum("ik,kl,il->i", self.W, BSB, self.W)
        )
        return float(np.sum(np.maximum(resid, 0.0) / self.psi)) + float(np.trace(BSB))

    def mean_logpdf_from_scatter(self, S, B=None):
        """Mean log-density of data with mean-centred scatter ``S = X_c^T X_c / N``."""
        d = S.shape[0]
        return -0.5 * (d * _LOG2PI + self.logdet + self.trace_inv(S, B))
