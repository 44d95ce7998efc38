"""The multivariate normal distribution, stored by its Cholesky factor, and its algebra.

Notes
-----
The Gaussian identities implemented here are those of Imperial "Mathematics for Inference and
Machine Learning" §1.2.3.5 (the marginal and conditional Gaussian, the linear-Gaussian model), PRML
§2.3 and Stuttgart "Introduction to Machine Learning" appendix A:

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

Batches (issue 3): ``mean`` of shape ``(*batch_m, d)`` and the factor of shape
``(*batch_L, d, d)`` are stored as given, unbroadcast, so a factor shared by the whole batch
is stored (and factorised) once; ``batch_shape`` is the broadcast of the two. A single
distribution (``mean`` 1-D, factor 2-D) runs exactly the code it ran before batching.
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


def _check_batch_mean(mean) -> np.ndarray:
    """A mean of shape (..., d): leading axes form a batch."""
    mean = np.asarray(mean, dtype=float)
    if mean.ndim == 0:
        mean = mean.reshape(1)
    if mean.ndim == 1:
        return _check_mean(mean)
    if mean.size == 0:
        raise ValueError(f"mean is empty; got shape {mean.shape}.")
    if not np.all(np.isfinite(mean)):
        raise ValueError("mean contains NaN or infinity.")
    return mean


def _check_batch_square(A, d: int, name: str) -> np.ndarray:
    """A matrix of shape (d, d) or a batch of them, (..., d, d)."""
    A = np.asarray(A, dtype=float)
    if A.ndim <= 2:
        return _check_square(A, d, name)
    if A.shape[-2:] != (d, d):
        raise ValueError(
            f"{name} must have shape ({d}, {d}) or (..., {d}, {d}) to match the mean; "
            f"got {A.shape}."
        )
    if A.size == 0:
        raise ValueError(f"{name} is empty; got shape {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return A


def _member(flat_index: int, shape: tuple[int, ...]) -> str:
    """``"[i, j]"``: the batch index of member ``flat_index`` of a batch of shape ``shape``."""
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(flat_index, shape)) + "]"


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

    Stored by the lower Cholesky factor of its covariance, ``cov = L L^T``. Leading axes of
    the parameters form a batch of independent distributions that broadcast against each
    other, as NumPy arrays do.

    Parameters
    ----------
    mean : array-like of shape (d,) or (*batch_m, d)
        Mean vector :math:`\mu`; leading axes form a batch.
    cov : array-like of shape (d, d) or (*batch_c, d, d), optional
        Symmetric positive definite covariance :math:`\Sigma`, one per batch member or one
        shared by all (stored and factorised once). ``batch_m`` and ``batch_c`` must
        broadcast. Give exactly one of ``cov`` and ``scale_tril``.
    scale_tril : array-like of shape (d, d) or (*batch_c, d, d), optional
        Lower-triangular factor ``L`` with positive diagonal, ``cov = L L^T`` (only the lower
        triangle is read).
    jitter : {None, "auto"} or float, default=None
        ``None``: a covariance that is not numerically positive definite raises
        ``ValueError`` (naming the batch member). Otherwise jitter is added to its diagonal
        (with a ``NumericalWarning``), see :func:`mathlearn.utils.linalg.cholesky`.

    Attributes
    ----------
    batch_shape : tuple of int
        ``np.broadcast_shapes(batch_m, batch_c)``; ``()`` for a single distribution.
    event_shape : tuple of int
        ``(d,)``.
    mean : ndarray of shape (*batch_shape, d)
    cov : ndarray of shape (*batch_shape, d, d)
    var : ndarray of shape (*batch_shape, d)
        Marginal variances, the diagonal of ``cov``.
    scale_tril : ndarray of shape (*batch_shape, d, d)
        Lower Cholesky factor of ``cov``.
    precision : ndarray of shape (*batch_shape, d, d)
        ``cov^{-1}`` (computed from the factor on request).
    dim : int
        ``d``.

    See Also
    --------
    mathlearn.distributions.Normal
        The univariate case.
    mathlearn.distributions.MultivariateStudentT
        Heavier tails.
    scipy.stats.multivariate_normal
        SciPy's equivalent.

    Notes
    -----
    .. math:: \log N(x | \mu, \Sigma) = -\tfrac{d}{2}\log 2\pi - \sum_i \log L_{ii}
              - \tfrac12 \lVert L^{-1}(x - \mu) \rVert^2

    (Imperial "Mathematics for Inference and Machine Learning" §1.2.3.5;
    PRML §2.3). The log-density of a batch of points costs one triangular solve
    per distinct factor with all its points as right-hand sides.

    ``logpdf``, ``pdf`` and ``mahalanobis`` take ``x`` of shape ``(..., d)`` and return the
    broadcast of ``x.shape[:-1]`` and ``batch_shape``; ``sample(size)`` returns
    ``(*size, *batch_shape, d)``; ``entropy()`` returns shape ``batch_shape``. The Gaussian
    algebra (``marginal``, ``condition``, ``affine``, ``add_independent``, ``multiply``,
    ``to_canonical``) is defined for a single distribution only and raises ``ValueError``
    on a batch.

    Examples
    --------
    >>> from mathlearn.distributions import MultivariateNormal
    >>> p = MultivariateNormal([0.0, 1.0], [[2.0, 0.5], [0.5, 1.0]])
    >>> round(float(p.logpdf([0.0, 1.0])), 4)
    -2.1177
    >>> p.condition([1], [2.0]).mean
    array([0.5])

    A batch of three means sharing one covariance, evaluated at one point:

    >>> q = MultivariateNormal([[0.0, 1.0], [1.0, 1.0], [2.0, 1.0]], [[2.0, 0.5], [0.5, 1.0]])
    >>> q.batch_shape, q.event_shape
    ((3,), (2,))
    >>> q.logpdf([0.0, 1.0]).round(4)
    array([-2.1177, -2.4034, -3.2605])
    >>> q.sample((5,), rng=0).shape
    (5, 3, 2)
    """

    def __init__(self, mean, cov=None, *, scale_tril=None, jitter=None):
        mean = _check_batch_mean(mean)
        d = mean.shape[-1]
        if (cov is None) == (scale_tril is None):
            raise ValueError("give exactly one of cov and scale_tril.")
        name = "cov" if scale_tril is None else "scale_tril"
        A = _check_batch_square(cov if scale_tril is None else scale_tril, d, name)
        try:
            np.broadcast_shapes(mean.shape[:-1], A.shape[:-2])
        except ValueError:
            raise ValueError(
                f"the batch shapes of mean {mean.shape[:-1]} and {name} {A.shape[:-2]} do "
                "not broadcast."
            ) from None
        if scale_tril is not None:
            L = np.tril(A)
            bad = np.any(np.diagonal(L, axis1=-2, axis2=-1) <= 0, axis=-1)
            if np.any(bad):
                where = (
                    "" if L.ndim == 2 else f" (batch member {_member(np.argmax(bad), bad.shape)})"
                )
                raise ValueError(f"scale_tril must have a strictly positive diagonal{where}.")
        elif A.ndim == 2:
            L = _factor_cov(A, jitter=jitter)
        else:
            # One factorisation per member: the error names the member that is not PD.
            flat = A.reshape(-1, d, d)
            L = np.empty_like(flat)
            for i in range(flat.shape[0]):
                L[i] = _factor_cov(flat[i], jitter=jitter, name=f"cov{_member(i, A.shape[:-2])}")
            L = L.reshape(A.shape)
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
        (x_n-\bar x)^T` (PRML §2.3.4; Stuttgart "Introduction to Machine Learning" slide 9:36),
        biased by :math:`(N-1)/N` like the univariate ML variance; ``unbiased=True`` divides by ``N
        - 1`` instead. The factor comes from a QR of the centred data, never from forming the
        scatter matrix.
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

    @property
    def dim(self) -> int:
        return int(self._mean.shape[-1])

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return np.broadcast_shapes(self._mean.shape[:-1], self._L.shape[:-2])

    @property
    def event_shape(self) -> tuple[int, ...]:
        return (self.dim,)

    @property
    def _batched(self) -> bool:
        return self._mean.ndim > 1 or self._L.ndim > 2

    def _require_single(self, what: str) -> None:
        if self._batched:
            raise ValueError(
                f"{what} is defined for a single distribution; batching is not supported "
                f"there (this MultivariateNormal has batch_shape {self.batch_shape}). Build "
                "one MultivariateNormal per batch member."
            )

    def _full(self, a: np.ndarray, event: tuple[int, ...]) -> np.ndarray:
        """``a`` broadcast (a read-only view) to ``batch_shape + event``."""
        return np.broadcast_to(a, (*self.batch_shape, *event))

    @property
    def mean(self) -> np.ndarray:
        if self._L.ndim == 2:
            return self._mean
        return self._full(self._mean, (self.dim,))

    @property
    def scale_tril(self) -> np.ndarray:
        if self._mean.ndim == 1:
            return self._L
        return self._full(self._L, (self.dim, self.dim))

    @property
    def cov(self) -> np.ndarray:
        if not self._batched:
            return self._L @ self._L.T
        return self._full(self._L @ np.swapaxes(self._L, -1, -2), (self.dim, self.dim))

    @property
    def var(self) -> np.ndarray:
        if not self._batched:
            return np.einsum("ij,ij->i", self._L, self._L)
        return self._full(np.einsum("...ij,...ij->...i", self._L, self._L), (self.dim,))

    @property
    def precision(self) -> np.ndarray:
        d = self.dim
        if not self._batched:
            Linv = sla.solve_triangular(self._L, np.eye(d), lower=True, check_finite=False)
            return Linv.T @ Linv
        flat = self._L.reshape(-1, d, d)
        J = np.empty_like(flat)
        for i in range(flat.shape[0]):
            Linv = sla.solve_triangular(flat[i], np.eye(d), lower=True, check_finite=False)
            J[i] = Linv.T @ Linv
        return self._full(J.reshape(self._L.shape), (d, d))

    def to_canonical(self) -> tuple[np.ndarray, np.ndarray]:
        """Canonical (information) parameters ``(h, J) = (Sigma^{-1} mu, Sigma^{-1})``."""
        self._require_single("to_canonical")
        J = self.precision
        return J @ self._mean, J

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
        r"""Mahalanobis distance :math:`\sqrt{(x-\mu)^T\Sigma^{-1}(x-\mu)}`.

        ``x`` of shape (..., d); returns ``broadcast(x.shape[:-1], batch_shape)``.
        """
        return np.sqrt(self._maha_sq(x))

    def _maha_sq(self, x) -> np.ndarray:
        x = self._check_x(x)
        if not self._batched:
            batch = x.shape[:-1]
            z = self._whiten(x.reshape(-1, self.dim))
            return np.einsum("ij,ij->i", z, z).reshape(batch)
        try:
            shape = np.broadcast_shapes(x.shape[:-1], self.batch_shape)
        except ValueError:
            raise ValueError(
                f"x of shape {x.shape} does not broadcast against the batch_shape "
                f"{self.batch_shape} (x must have shape (..., {self.dim}))."
            ) from None
        return self._batched_maha_sq(x - self._mean, shape)

    def _batched_maha_sq(self, dev: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        """``|L^{-1} dev|^2`` of shape ``shape`` for deviations broadcasting to ``shape + (d,)``.

        One triangular solve per distinct factor: the axes along which the factor does not
        vary are gathered into the right-hand sides of that solve.
        """
        d = self.dim
        dev = np.broadcast_to(dev, (*shape, d))
        if self._L.ndim == 2:
            z = sla.solve_triangular(self._L, dev.reshape(-1, d).T, lower=True, check_finite=False)
            return np.einsum("ij,ij->j", z, z).reshape(shape)
        n = len(shape)
        lshape = (1,) * (n - (self._L.ndim - 2)) + self._L.shape[:-2]
        l_axes = [i for i in range(n) if lshape[i] != 1]
        r_axes = [i for i in range(n) if lshape[i] == 1]
        Ls = self._L.reshape(-1, d, d)  # the members in the C order of l_axes
        m = Ls.shape[0]
        r = int(np.prod([shape[i] for i in r_axes], dtype=int))
        rhs = dev.transpose(*l_axes, *r_axes, n).reshape(m, r, d)
        out = np.empty((m, r))
        if r > 0:
            for k in range(m):
                z = sla.solve_triangular(Ls[k], rhs[k].T, lower=True, check_finite=False)
                out[k] = np.einsum("ij,ij->j", z, z)
        out = out.reshape([shape[i] for i in l_axes] + [shape[i] for i in r_axes])
        return out.transpose(np.argsort(l_axes + r_axes))

    def _log_det_half(self):
        """``sum_i log L_ii`` (half the log-determinant): a float, or shape ``batch_L``."""
        if self._L.ndim == 2:
            return float(np.sum(np.log(np.diag(self._L))))
        return np.sum(np.log(np.diagonal(self._L, axis1=-2, axis2=-1)), axis=-1)

    def _log_norm(self):
        return -0.5 * self.dim * _LOG_2PI - self._log_det_half()

    def logpdf(self, x) -> np.ndarray:
        """Log-density at ``x`` of shape (..., d); returns ``broadcast(x.shape[:-1], batch)``."""
        return self._log_norm() - 0.5 * self._maha_sq(x)

    def entropy(self):
        r""":math:`\tfrac{d}{2}(1 + \log 2\pi) + \tfrac12 \log|\Sigma|`; shape ``batch_shape``."""
        h = 0.5 * self.dim * (1.0 + _LOG_2PI) + self._log_det_half()
        if not self._batched:
            return h
        return np.array(np.broadcast_to(h, self.batch_shape))

    def sample(self, size=None, rng=None) -> np.ndarray:
        """Draw samples ``mu + L eps`` with ``eps ~ N(0, I)``.

        Returns shape ``size + batch_shape + (d,)``.
        """
        rng = check_random_state(rng, name="rng")
        size = _size_tuple(size)
        eps = rng.standard_normal((*size, *self.batch_shape, self.dim))
        if self._L.ndim == 2:
            out = eps @ np.ascontiguousarray(self._L.T)
        else:
            out = np.matmul(self._L, eps[..., None])[..., 0]
        out += self._mean
        return out

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
        self._require_single("marginal")
        idx = self._index(idx)
        # Sigma_aa = L_a L_a^T with L_a the rows idx of L; its factor is the R of a QR of L_a^T.
        La = self._L[idx]
        return MultivariateNormal._from_factor(self._mean[idx], _factor_of_gram(La))

    def condition(self, idx, value) -> MultivariateNormal:
        """Distribution of the other components given ``x[idx] = value``.

        Returns ``N(mu_a + Sigma_ab Sigma_bb^{-1}(x_b - mu_b), Sigma_aa - Sigma_ab
        Sigma_bb^{-1} Sigma_ba)`` over the components not in ``idx``, in their original order.
        """
        self._require_single("condition")
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
        self._require_single("affine")
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
        self._require_single("add_independent")
        if isinstance(other, MultivariateNormal):
            other._require_single("add_independent")
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
        self._require_single("multiply")
        other._require_single("multiply")
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
