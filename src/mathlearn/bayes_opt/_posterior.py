"""A fast view of a fitted GP surrogate for acquisition optimisation.

The acquisition is evaluated at thousands of candidates and then polished by L-BFGS-B, so the
posterior mean and standard deviation (and their gradients in ``x``) are computed here from
the fitted factors directly, without the estimator's input validation per call:

``mu(x) = s_y k(x, X) alpha + m_y``, ``var(x) = s_y^2 (k(x, x) - |v|^2)`` with ``v = L^{-1}
k(X, x)``, ``d mu / dx = s_y (dk(x, X) / dx) alpha`` and ``d var / dx = -2 s_y^2 v^T L^{-1}
dk(X, x) / dx`` (``L`` the Cholesky factor of ``K + sigma^2 I``; ``s_y, m_y`` the target
scaling): Rasmussen and Williams, "Gaussian Processes for Machine Learning", 2006,
Algorithm 2.1, as in ``GaussianProcessRegressor.predict``. The variance of ``f(x) - f(x0)``
(the noise-aware acquisitions) is ``k(x, x) + k(x0, x0) - 2 k(x, x0) - |L^{-1} (k(X, x) -
k(X, x0))|^2``, one solve of the difference.

Why triangular solves and not ``K^{-1}``: near the data the posterior variance is a small
difference ``k(x, x) - k^T K^{-1} k`` of two numbers of the size of the prior variance ``c``.
Through an explicit inverse its rounding error is of order ``eps c cond(K)``; late in a run
with exact evaluations ``cond(K)`` reaches ``1e11``-``1e13`` (length scales long against
the spacing of clustered points, noise ``1e-10``), which swamps the variance itself (measured
on Branin after 25 evaluations: a posterior sd of 0.03-0.1 where the exact one, computed in
60-digit arithmetic, is ``1e-5``-``1e-3``), so PI and EI near the incumbent were scored
from rounding noise. Forward substitution keeps the error near ``eps c`` in practice (the
same points: four correct digits at an sd of ``1e-5``).

``dk/dx`` is in closed form for ``c * RBF`` and ``c * Matern(nu)`` with ``nu`` in
{1/2, 3/2, 5/2, inf} (``r`` the length-scaled distance): ``dk/dx = -c w(r) (x - x') / l^2``
with ``w = e^{-r^2/2}`` (RBF), ``5/3 (1 + sqrt5 r) e^{-sqrt5 r}`` (5/2), ``3 e^{-sqrt3 r}``
(3/2) and ``e^{-r} / r`` (1/2). Any other kernel falls back to central differences, all
``2 d + 1`` points in one kernel evaluation.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..kernels import RBF, ConstantKernel, Matern
from ..kernels._base import Product

_CBRT_EPS = float(np.cbrt(np.finfo(float).eps))


def _parse(kernel):
    """``(c, length_scale, nu)`` of ``c * RBF`` / ``c * Matern``; ``None`` if not of that form."""
    c = 1.0
    k = kernel
    if isinstance(k, Product):
        if isinstance(k.k1, ConstantKernel):
            c, k = float(k.k1.constant_value), k.k2
        elif isinstance(k.k2, ConstantKernel):
            c, k = float(k.k2.constant_value), k.k1
        else:
            return None
    if isinstance(k, RBF):
        return c, np.asarray(k.length_scale, dtype=float), np.inf
    if isinstance(k, Matern) and float(k.nu) in (0.5, 1.5, 2.5, np.inf):
        return c, np.asarray(k.length_scale, dtype=float), float(k.nu)
    return None


class Posterior:
    """Posterior mean and standard deviation of a fitted ``GaussianProcessRegressor``
    (single output), on the original target scale, with gradients in the kernel inputs."""

    def __init__(self, gp):
        self.gp = gp
        self.X = gp.X_train_
        self.alpha = gp.alpha_
        self.scale = float(gp._y_scale[0])
        self.offset = float(np.broadcast_to(gp._y_offset, (1,))[0])
        self.L = gp.L_
        self.spec = _parse(gp.kernel_)
        if self.spec is not None:
            c, ls, nu = self.spec
            self.c, self.nu = c, nu
            self.inv_l2 = 1.0 / np.broadcast_to(ls, (self.X.shape[1],)) ** 2
            self.Xs = self.X * np.sqrt(self.inv_l2)

    def _kx(self, Z):
        """``k(Z, X)`` and (closed-form kernels) the weights ``w`` of ``dk/dz``."""
        if self.spec is None:
            return self.gp.kernel_._eval(Z, self.X, False)[0], None
        Zs = Z * np.sqrt(self.inv_l2)
        q = (
            np.einsum("ij,ij->i", Zs, Zs)[:, None]
            + np.einsum("ij,ij->i", self.Xs, self.Xs)[None, :]
            - 2.0 * Zs @ self.Xs.T
        )
        np.maximum(q, 0.0, out=q)
        nu, c = self.nu, self.c
        if nu == np.inf:
            K = c * np.exp(-0.5 * q)
            return K, K
        r = np.sqrt(q)
        if nu == 2.5:
            a = np.sqrt(5.0) * r
            E = c * np.exp(-a)
            return E * (1.0 + a + a * a / 3.0), (5.0 / 3.0) * (1.0 + a) * E
        if nu == 1.5:
            a = np.sqrt(3.0) * r
            E = c * np.exp(-a)
            return E * (1.0 + a), 3.0 * E
        E = c * np.exp(-r)
        w = np.zeros_like(r)
        np.divide(E, r, out=w, where=r > 0)
        return E, w

    def _prior_var(self, Z):
        if self.spec is not None:
            return np.full(Z.shape[0], self.c)
        return self.gp.kernel_._diag(Z)

    def _solve(self, B):
        """``L^{-1} B`` by forward substitution."""
        return sla.solve_triangular(self.L, B, lower=True, check_finite=False)

    def _k_to(self, Z, z0):
        """``k(Z_i, z0)`` for the rows of ``Z``."""
        if self.spec is not None:
            return self._kx_pair(Z, z0)
        return self.gp.kernel_._eval(Z, z0[None, :], False)[0][:, 0]

    def mean_std(self, Z):
        """Posterior mean and standard deviation of ``f`` at the rows of ``Z``."""
        Kx, _ = self._kx(Z)
        mu = Kx @ self.alpha * self.scale + self.offset
        V = self._solve(Kx.T)
        var = self._prior_var(Z) - np.einsum("ij,ij->j", V, V)
        return mu, np.sqrt(np.maximum(var, 0.0)) * self.scale

    def diff_std(self, Z, z0):
        """Posterior standard deviation of ``f(z0) - f(Z_i)`` for the rows of ``Z``."""
        Kx, _ = self._kx(np.vstack([z0[None, :], Z]))
        prior = self._prior_var(Z) + self._prior_var(z0[None, :])[0] - 2.0 * self._k_to(Z, z0)
        U = self._solve((Kx[1:] - Kx[0]).T)
        var = prior - np.einsum("ij,ij->j", U, U)
        return np.sqrt(np.maximum(var, 0.0)) * self.scale

    def _kx_pair(self, Z, z0):
        saved = self.Xs
        self.Xs = (z0 * np.sqrt(self.inv_l2))[None, :]
        try:
            return self._kx(Z)[0][:, 0]
        finally:
            self.Xs = saved

    def mean_std_grad(self, z, z0=None):
        """At one point ``z``: ``mu, s, dmu/dz, ds/dz``; ``s`` is the posterior sd of ``f(z)``,
        or with ``z0`` the sd of ``f(z0) - f(z)``."""
        if self.spec is None:
            return self._fd(z, z0)
        Kx, w = self._kx(z[None, :])
        kx, w = Kx[0], w[0]
        dK = -(w[:, None] * (z[None, :] - self.X)) * self.inv_l2  # (n, d): dk(z, x_i)/dz
        mu = float(kx @ self.alpha) * self.scale + self.offset
        dmu = (dK.T @ self.alpha) * self.scale
        if z0 is None:
            VW = self._solve(np.column_stack([kx, dK]))
            v, W = VW[:, 0], VW[:, 1:]
            var = self.c - float(v @ v)
            dvar = -2.0 * (W.T @ v)
        else:
            K0, _ = self._kx(z0[None, :])
            kzz0, wz = self._kx_pair_w(z, z0)
            UW = self._solve(np.column_stack([kx - K0[0], dK]))
            u, W = UW[:, 0], UW[:, 1:]
            var = 2.0 * (self.c - kzz0) - float(u @ u)
            dvar = 2.0 * wz * (z - z0) * self.inv_l2 - 2.0 * (W.T @ u)
        var = max(var, 0.0)
        sd = np.sqrt(var)
        dsd = dvar / (2.0 * sd) if sd > 0 else np.zeros_like(dvar)
        return mu, sd * self.scale, dmu, dsd * self.scale

    def _kx_pair_w(self, z, z0):
        saved = self.Xs
        self.Xs = (z0 * np.sqrt(self.inv_l2))[None, :]
        try:
            K, w = self._kx(z[None, :])
            return float(K[0, 0]), float(w[0, 0])
        finally:
            self.Xs = saved

    def _fd(self, z, z0):
        """Central differences (error ``O(eps^(2/3))``), the ``2 d + 1`` points in one call."""
        d = z.shape[0]
        h = _CBRT_EPS * np.maximum(1.0, np.abs(z))
        Z = np.vstack([z[None, :], z[None, :] + np.diag(h), z[None, :] - np.diag(h)])
        mu, sd = self.mean_std(Z)
        if z0 is not None:
            sd = self.diff_std(Z, z0)
        dmu = (mu[1 : d + 1] - mu[d + 1 :]) / (2.0 * h)
        dsd = (sd[1 : d + 1] - sd[d + 1 :]) / (2.0 * h)
        return float(mu[0]), float(sd[0]), dmu, dsd
