"""The multivariate normal distribution, stored by its Cholesky factor, and its algebra.

Notes
-----
The Gaussian identities implemented here are those of spec 000 §2.A (equations of the
marginal and conditional Gaussian, the linear-Gaussian model), 001 M3 and 004 appendix A:

* marginal of ``x_a``: ``N(mu_a, Sigma_aa)``;
* conditional ``x_a | x_b``: ``N(mu_a + Sigma_ab Sigma_bb^{-1} (x_b - mu_b),
  Sigma_aa - Sigma_ab Sigma_bb^{-1} Sigma_ba)``;
* affine map ``y = A x + b``: ``N(A mu + b, A Sigma A^T)``;
* product ``N(x | a, A) N(x | b, B) = N(a | b, A + B) N(x | c, C)`` with
  ``C = (A^{-1} + B^{-1})^{-1}``, ``c = C (A^{-1} a + B^{-1} b)``;
* canonical (information) form ``h = Sigma^{-1} mu``, ``J = Sigma^{-1}``.

Everything goes through the lower Cholesky factor ``L`` (``Sigma = L L^T``): the
log-density solves ``L z = x - mu`` once for the whole batch, samples are ``mu + L eps``,
the conditional covariance is the trailing block of the factor of the permuted covariance.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ..utils.linalg import cholesky
from ..utils.validation import check_random_state
from ._base import Distribution, _frozen_array, _size_tuple

__all__ = ["MultivariateNormal"]

_LOG_2PI = float(np.log(2.0 * np.pi))


def _check_mean(mean) -> np.ndarray:
    mean = np.asarray(mean, dtype=float)
    if mean.ndim == 0:
        mean = mean.reshape(1)
    if mean.ndim != 1:
        raise ValueError(f"mean must be a 1-D vector; got shape {mean.shape}.")
    if mean.size == 0:
        raise ValueError("mean is empty.")
    if not np.all(np.isfinite(mean)):
        raise ValueError("mean contains NaN or infinity.")
    return mean


def _check_square(A, d: int, name: str) -> np.ndarray:
    A = np.asarray(A, dtype=float)
    if A.ndim == 0 and d == 1:
        A = A.reshape(1, 1)
    if A.shape != (d, d):
        raise ValueError(f"{name} must have shape ({d}, {d}) to match the mean; got {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return A


def _check_offset(b, k: int, name: str) -> np.ndarray:
    """A shift vector of length ``k`` (a scalar is repeated), finite, as a float array."""
    if b is None:
        return np.zeros(k)
    b = np.asarray(b, dtype=float)
    if b.ndim > 1 or (b.ndim == 1 and b.shape[0] not in (1, k)):
        raise ValueError(f"{name} must be a scalar or a vector of length {k}; got {b.shape}.")
    if not np.all(np.isfinite(b)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return np.broadcast_to(b, (k,))


def _factor_cov(cov: np.ndarray, *, jitter, name: str = "cov") -> np.ndarray:
    scale = max(float(np.max(np.abs(cov))), np.finfo(float).tiny)
    if np.max(np.abs(cov - cov.T)) > 1e-8 * scale:
        raise ValueError(f"{name} is not symmetric.")
    try:
        return cholesky(0.5 * (cov + cov.T), jitter=jitter, name=name)
    except np.linalg.LinAlgError as exc:
        raise ValueError(f"{name} is not positive definite: {exc}") from None


class MultivariateNormal(Distribution):
    r"""Multivariate normal (Gaussian) distribution ``N(mean, cov)`` in ``d`` dimensions.

    Stored by the lower Cholesky factor of its covariance, ``cov = L L^T``.

    Parameters
    ----------
    mean : array-like of shape (d,)
        Mean vector :math:`\mu`.
    cov : array-like of shape (d, d), optional
        Symmetric positive definite covariance :math:`\Sigma`. Give exactly one of ``cov``
        and ``scale_tril``.
    scale_tril : array-like of shape (d, d), optional
        Lower-triangular factor ``L`` with positive diagonal, ``cov = L L^T`` (only the lower
        triangle is read).
    jitter : {None, "auto"} or float, default=None
        ``None``: a covariance that is not numerically positive definite raises
        ``ValueError``. Otherwise jitter is added to its diagonal (with a
        ``NumericalWarning``), see :func:`mathlearn.utils.linalg.cholesky`.

    Attributes
    ----------
    mean : ndarray of shape (d,)
    cov : ndarray of shape (d, d)
    var : ndarray of shape (d,)
        Marginal variances, the diagonal of ``cov``.
    scale_tril : ndarray of shape (d, d)
        Lower Cholesky factor of ``cov``.
    precision : ndarray of shape (d, d)
        ``cov^{-1}`` (computed from the factor on request).
    dim : int

    Notes
    -----
    .. math:: \log N(x | \mu, \Sigma) = -\tfrac{d}{2}\log 2\pi - \sum_i \log L_{ii}
              - \tfrac12 \lVert L^{-1}(x - \mu) \rVert^2

    (spec 000 §2.A, 001 M3). The log-density of a batch costs one triangular solve with all
    points as right-hand sides.

    Examples
    --------
    >>> from mathlearn.distributions import MultivariateNormal
    >>> p = MultivariateNormal([0.0, 1.0], [[2.0, 0.5], [0.5, 1.0]])
    >>> round(float(p.logpdf([0.0, 1.0])), 4)
    -2.1177
    >>> p.condition([1], [2.0]).mean
    array([0.5])
    """

    def __init__(self, mean, cov=None, *, scale_tril=None, jitter=None):
        mean = _check_mean(mean)
        d = mean.shape[0]
        if (cov is None) == (scale_tril is None):
            raise ValueError("give exactly one of cov and scale_tril.")
        if scale_tril is not None:
            L = np.tril(_check_square(scale_tril, d, "scale_tril"))
            diag = np.diag(L)
            if np.any(diag <= 0):
                raise ValueError("scale_tril must have a strictly positive diagonal.")
        else:
            L = _factor_cov(_check_square(cov, d, "cov"), jitter=jitter)
        self._set(_mean=_frozen_array(mean), _L=_frozen_array(L))

    @classmethod
    def _from_factor(cls, mean, L) -> MultivariateNormal:
        """Trusted constructor: skips validation (internal use on computed factors)."""
        obj = cls.__new__(cls)
        obj._set(_mean=_frozen_array(mean), _L=_frozen_array(L))
        return obj

    @classmethod
    def from_canonical(cls, precision_mean, precision) -> MultivariateNormal:
        r"""Build from the canonical (information) form ``h = J mu``, ``J = Sigma^{-1}``.

        Parameters
        ----------
        precision_mean : array-like of shape (d,)
            :math:`h = \Sigma^{-1}\mu`.
        precision : array-like of shape (d, d)
            Symmetric positive definite :math:`J = \Sigma^{-1}`.
        """
        h = _check_mean(precision_mean)
        J = _check_square(precision, h.shape[0], "precision")
        R = _factor_cov(J, jitter=None, name="precision")  # J = R R^T
        # mu = J^{-1} h; Sigma = U U^T with the upper-triangular U = R^{-T}, whose lower
        # Cholesky factor comes from a QR of U^T (no inverse of J is formed).
        mu = sla.cho_solve((R, True), h, check_finite=False)
        Rinv_T = sla.solve_triangular(R, np.eye(h.shape[0]), lower=True, trans="T")
        L = _lower_factor_from_upper(Rinv_T)
        return cls._from_factor(mu, L)

    @classmethod
    def from_precision(cls, mean, precision) -> MultivariateNormal:
        """Build from a mean and a precision matrix ``J = Sigma^{-1}``."""
        mean = _check_mean(mean)
        J = _check_square(precision, mean.shape[0], "precision")
        R = _factor_cov(J, jitter=None, name="precision")
        Rinv_T = sla.solve_triangular(R, np.eye(mean.shape[0]), lower=True, trans="T")
        return cls._from_factor(mean, _lower_factor_from_upper(Rinv_T))

    @classmethod
    def fit(cls, X, *, unbiased: bool = False) -> MultivariateNormal:
        r"""Maximum-likelihood fit to samples ``X`` of shape (n, d).

        :math:`\mu_{ML} = \bar x`, :math:`\Sigma_{ML} = \frac1N\sum_n (x_n-\bar x)
        (x_n-\bar x)^T` (spec 001 M7, 004 9:36), biased by :math:`(N-1)/N` like the
        univariate ML variance; ``unbiased=True`` divides by ``N - 1`` instead. The factor
        comes from a QR of the centred data, never from forming the scatter matrix.
        """
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"X must have shape (n, d); got {X.shape}.")
        n, d = X.shape
        if n < d + 1:
            raise ValueError(f"need at least d + 1 = {d + 1} samples for a non-singular fit.")
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains NaN or infinity.")
        mean = X.mean(axis=0)
        L = _factor_of_gram((X - mean).T) / np.sqrt(n - 1 if unbiased else n)
        if np.min(np.diag(L)) <= 1e-12 * max(1.0, float(np.max(np.diag(L)))):
            raise ValueError("the sample covariance is singular (collinear samples).")
        return cls._from_factor(mean, L)

    def _params(self) -> dict:
        return {"mean": self.mean, "cov": self.cov}

    # ------------------------------------------------------------------ parameters
    @property
    def dim(self) -> int:
        return int(self._mean.shape[0])

    @property
    def mean(self) -> np.ndarray:
        return self._mean

    @property
    def scale_tril(self) -> np.ndarray:
        return self._L

    @property
    def cov(self) -> np.ndarray:
        return self._L @ self._L.T

    @property
    def var(self) -> np.ndarray:
        return np.einsum("ij,ij->i", self._L, self._L)

    @property
    def precision(self) -> np.ndarray:
        Linv = sla.solve_triangular(self._L, np.eye(self.dim), lower=True, check_finite=False)
        return Linv.T @ Linv

    def to_canonical(self) -> tuple[np.ndarray, np.ndarray]:
        """Canonical (information) parameters ``(h, J) = (Sigma^{-1} mu, Sigma^{-1})``."""
        J = self.precision
        return J @ self._mean, J

    # ------------------------------------------------------------------ densities
    def _check_x(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        d = self.dim
        if x.ndim == 0 and d == 1:
            x = x.reshape(1)
        if x.shape[-1:] != (d,):
            raise ValueError(f"x must have last dimension {d}; got shape {x.shape}.")
        if np.any(np.isnan(x)):
            raise ValueError("x contains NaN.")
        return x

    def _whiten(self, x: np.ndarray) -> np.ndarray:
        """``z = L^{-1}(x - mu)`` for a batch ``x`` of shape (n, d): returns (n, d)."""
        dev = x - self._mean
        # Solve z L^T = dev (right side), i.e. L z^T = dev^T, with the whole batch in one
        # BLAS-3 triangular solve; dev.T is Fortran-ordered so no copy is made.
        return sla.solve_triangular(self._L, dev.T, lower=True, check_finite=False).T

    def mahalanobis(self, x) -> np.ndarray:
        r"""Mahalanobis distance :math:`\sqrt{(x-\mu)^T\Sigma^{-1}(x-\mu)}`, shape (...)."""
        return np.sqrt(self._maha_sq(x))

    def _maha_sq(self, x) -> np.ndarray:
        x = self._check_x(x)
        batch = x.shape[:-1]
        z = self._whiten(x.reshape(-1, self.dim))
        return np.einsum("ij,ij->i", z, z).reshape(batch)

    def _log_norm(self) -> float:
        return -0.5 * self.dim * _LOG_2PI - float(np.sum(np.log(np.diag(self._L))))

    def logpdf(self, x) -> np.ndarray:
        """Log-density at ``x`` of shape (..., d); returns shape (...)."""
        return self._log_norm() - 0.5 * self._maha_sq(x)

    def entropy(self) -> float:
        r""":math:`\tfrac{d}{2}(1 + \log 2\pi) + \tfrac12 \log|\Sigma|`."""
        return 0.5 * self.dim * (1.0 + _LOG_2PI) + float(np.sum(np.log(np.diag(self._L))))

    def sample(self, size=None, rng=None) -> np.ndarray:
        """Draw samples ``mu + L eps`` with ``eps ~ N(0, I)``; returns shape ``size + (d,)``."""
        rng = check_random_state(rng)
        size = _size_tuple(size)
        eps = rng.standard_normal((*size, self.dim))
        out = eps @ np.ascontiguousarray(self._L.T)
        out += self._mean
        return out

    # ------------------------------------------------------------------ algebra
    def _index(self, idx) -> np.ndarray:
        idx = np.atleast_1d(np.asarray(idx))
        if idx.dtype == bool:
            if idx.shape != (self.dim,):
                raise ValueError(f"a boolean mask must have length {self.dim}.")
            idx = np.flatnonzero(idx)
        if idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError("idx must be a non-empty sequence of integer indices.")
        idx = np.where(idx < 0, idx + self.dim, idx)
        if np.any(idx < 0) or np.any(idx >= self.dim) or np.unique(idx).size != idx.size:
            raise ValueError(f"idx must hold distinct indices in [0, {self.dim}); got {idx}.")
        return idx

    def marginal(self, idx) -> MultivariateNormal:
        """Marginal distribution of the components ``idx``: ``N(mu_a, Sigma_aa)``."""
        idx = self._index(idx)
        # Sigma_aa = L_a L_a^T with L_a the rows idx of L; its factor is the R of a QR of L_a^T.
        La = self._L[idx]
        return MultivariateNormal._from_factor(self._mean[idx], _factor_of_gram(La))

    def condition(self, idx, value) -> MultivariateNormal:
        """Distribution of the other components given ``x[idx] = value``.

        Returns ``N(mu_a + Sigma_ab Sigma_bb^{-1}(x_b - mu_b), Sigma_aa - Sigma_ab
        Sigma_bb^{-1} Sigma_ba)`` over the components not in ``idx``, in their original order.
        """
        b = self._index(idx)
        a = np.setdiff1d(np.arange(self.dim), b)
        if a.size == 0:
            raise ValueError("cannot condition on every component.")
        value = np.asarray(value, dtype=float).reshape(-1)
        if value.shape != (b.size,):
            raise ValueError(f"value must have length {b.size}; got shape {value.shape}.")
        if not np.all(np.isfinite(value)):
            raise ValueError("value contains NaN or infinity.")
        # Factor the covariance permuted to (b, a): [[Lbb, 0], [Lab, Laa]]. Then
        # x_a | x_b = mu_a + Lab Lbb^{-1}(x_b - mu_b) + Laa eps.
        perm = np.concatenate([b, a])
        M = _factor_of_gram(self._L[perm])
        nb = b.size
        Lbb, Lab, Laa = M[:nb, :nb], M[nb:, :nb], M[nb:, nb:]
        z = sla.solve_triangular(Lbb, value - self._mean[b], lower=True, check_finite=False)
        return MultivariateNormal._from_factor(self._mean[a] + Lab @ z, Laa)

    def affine(self, A, b=None) -> MultivariateNormal:
        """Distribution of ``y = A x + b``: ``N(A mu + b, A Sigma A^T)``.

        ``A`` of shape (k, d) must have full row rank (otherwise ``y`` has no density).
        ``A`` may also be a scalar.
        """
        A = np.asarray(A, dtype=float)
        if A.ndim == 0:
            A = A * np.eye(self.dim)
        if A.ndim != 2 or A.shape[1] != self.dim:
            raise ValueError(f"A must have shape (k, {self.dim}); got {A.shape}.")
        if not np.all(np.isfinite(A)):
            raise ValueError("A contains NaN or infinity.")
        k = A.shape[0]
        b = _check_offset(b, k, "b")
        AL = A @ self._L
        L = _factor_of_gram(AL)
        if np.any(np.abs(np.diag(L)) <= 1e-14 * max(1.0, float(np.max(np.abs(AL))))):
            raise ValueError("A Sigma A^T is singular: A must have full row rank.")
        return MultivariateNormal._from_factor(A @ self._mean + b, L)

    def add_independent(self, other) -> MultivariateNormal:
        """Distribution of ``x + y`` for independent ``x ~ self``, ``y ~ other``.

        ``N(mu_x + mu_y, Sigma_x + Sigma_y)``. ``other`` may be a ``MultivariateNormal`` or a
        constant vector (a shift).
        """
        if isinstance(other, MultivariateNormal):
            if other.dim != self.dim:
                raise ValueError(f"dimensions differ: {self.dim} and {other.dim}.")
            L = _factor_of_gram(np.hstack([self._L, other._L]))
            return MultivariateNormal._from_factor(self._mean + other._mean, L)
        shift = _check_offset(other, self.dim, "the shift")
        return MultivariateNormal._from_factor(self._mean + shift, self._L)

    def __add__(self, other) -> MultivariateNormal:
        return self.add_independent(other)

    __radd__ = __add__

    def multiply(self, other: MultivariateNormal) -> tuple[MultivariateNormal, float]:
        r"""Product of two Gaussian densities in the same variable.

        :math:`N(x|a, A)\,N(x|b, B) = Z\,N(x|c, C)`, with :math:`Z = N(a|b, A+B)`,
        :math:`C = (A^{-1}+B^{-1})^{-1}`, :math:`c = C(A^{-1}a + B^{-1}b)`.

        Returns
        -------
        product : MultivariateNormal
            The normalised product ``N(c, C)``.
        log_normaliser : float
            ``log Z``.
        """
        if not isinstance(other, MultivariateNormal):
            raise TypeError("multiply expects a MultivariateNormal.")
        if other.dim != self.dim:
            raise ValueError(f"dimensions differ: {self.dim} and {other.dim}.")
        # C = A (A + B)^{-1} B and c = B (A+B)^{-1} a + A (A+B)^{-1} b avoid inverting A, B.
        Sa, Sb = self.cov, other.cov
        S = _factor_of_gram(np.hstack([self._L, other._L]))  # chol(A + B)
        ZS = MultivariateNormal._from_factor(other._mean, S)
        log_z = float(ZS.logpdf(self._mean))
        X = sla.cho_solve((S, True), Sb, check_finite=False)  # (A+B)^{-1} B
        C = Sa @ X
        c = Sb @ sla.cho_solve((S, True), self._mean, check_finite=False) + Sa @ sla.cho_solve(
            (S, True), other._mean, check_finite=False
        )
        L = _factor_cov(0.5 * (C + C.T), jitter="auto", name="product covariance")
        return MultivariateNormal._from_factor(c, L), log_z

    def __mul__(self, other):
        if isinstance(other, MultivariateNormal):
            return self.multiply(other)[0]
        return NotImplemented


def _factor_of_gram(B: np.ndarray) -> np.ndarray:
    """Lower Cholesky factor of ``B B^T`` from a QR of ``B^T``, without forming ``B B^T``."""
    k = B.shape[0]
    if B.shape[1] < k:
        # Fewer columns than rows: B B^T is singular; pad so QR is square and detect it.
        B = np.hstack([B, np.zeros((k, k - B.shape[1]))])
    R = sla.qr(B.T, mode="r", check_finite=False)[0][:k, :k]
    L = R.T
    # Make the diagonal positive (QR leaves signs free).
    s = np.sign(np.diag(L))
    s[s == 0] = 1.0
    return L * s


def _lower_factor_from_upper(U: np.ndarray) -> np.ndarray:
    """Lower factor ``L`` with ``L L^T = U U^T`` for an upper-triangular ``U``."""
    return _factor_of_gram(U)
