"""Multivariate Student t distribution, stored by the Cholesky factor of its shape matrix."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from scipy.special import gammaln

from ..utils.validation import check_random_state
from ._base import Distribution, _frozen_array, _size_tuple
from ._mvn import _check_mean, _check_square, _factor_cov
from ._scipy_backed import scalar_param

__all__ = ["MultivariateStudentT"]


class MultivariateStudentT(Distribution):
    r"""Multivariate Student t distribution ``St(x | loc, shape, df)``.

    Parameters
    ----------
    df : float
        Degrees of freedom :math:`\nu > 0`.
    loc : array-like of shape (d,)
    shape : array-like of shape (d, d)
        Symmetric positive definite shape (scale) matrix :math:`\Sigma`; the covariance is
        :math:`\nu/(\nu-2)\,\Sigma` for :math:`\nu > 2`.

    See Also
    --------
    mathlearn.distributions.MultivariateNormal
        The infinite-df limit.
    mathlearn.distributions.StudentT
        The univariate case.
    scipy.stats.multivariate_t
        SciPy's equivalent.

    Notes
    -----
    :math:`p(x) = \frac{\Gamma((\nu+d)/2)}{\Gamma(\nu/2)(\nu\pi)^{d/2}|\Sigma|^{1/2}}
    [1 + \Delta^2/\nu]^{-(\nu+d)/2}` with the Mahalanobis distance :math:`\Delta`. The
    posterior predictive of the Normal–Wishart model.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.distributions import MultivariateStudentT
    >>> MultivariateStudentT(4.0, [0.0, 0.0], np.eye(2)).cov
    array([[2., 0.],
           [0., 2.]])
    """

    def __init__(self, df, loc, shape):
        loc = _check_mean(loc)
        shape = _check_square(shape, loc.shape[0], "shape")
        df = scalar_param(df, "df", low=0.0)
        L = _factor_cov(shape, jitter=None, name="shape")
        self._set(_df=df, _loc=_frozen_array(loc), _L=_frozen_array(L))

    def _params(self):
        return {"df": self._df, "loc": self._loc, "shape": self.shape}

    @property
    def df(self) -> float:
        return self._df

    @property
    def loc(self) -> np.ndarray:
        return self._loc

    @property
    def shape(self) -> np.ndarray:
        return self._L @ self._L.T

    @property
    def dim(self) -> int:
        return int(self._loc.shape[0])

    @property
    def mean(self) -> np.ndarray:
        if self._df <= 1:
            raise ValueError("the mean is undefined for df <= 1.")
        return self._loc

    @property
    def cov(self) -> np.ndarray:
        if self._df <= 2:
            raise ValueError("the covariance is infinite for df <= 2.")
        return self._df / (self._df - 2) * self.shape

    @property
    def var(self) -> np.ndarray:
        return np.diag(self.cov).copy()

    def logpdf(self, x):
        """Log-density at ``x`` of shape (..., d)."""
        x = np.asarray(x, dtype=float)
        d, nu = self.dim, self._df
        if x.ndim == 0 and d == 1:
            x = x.reshape(1)
        if x.shape[-1:] != (d,):
            raise ValueError(f"x must have last dimension {d}; got shape {x.shape}.")
        if np.any(np.isnan(x)):
            raise ValueError("x contains NaN.")
        batch = x.shape[:-1]
        dev = x.reshape(-1, d) - self._loc
        z = sla.solve_triangular(self._L, dev.T, lower=True, check_finite=False)
        maha = np.einsum("ij,ij->j", z, z)
        out = (
            gammaln((nu + d) / 2)
            - gammaln(nu / 2)
            - 0.5 * d * np.log(nu * np.pi)
            - np.sum(np.log(np.diag(self._L)))
            - 0.5 * (nu + d) * np.log1p(maha / nu)
        ).reshape(batch)
        return float(out) if out.ndim == 0 else out

    def pdf(self, x):
        return np.exp(self.logpdf(x))

    def sample(self, size=None, rng=None) -> np.ndarray:
        """``loc + L z / sqrt(u / df)`` with ``z ~ N(0, I)`` and ``u ~ chi2(df)``."""
        rng = check_random_state(rng, name="rng")
        size = _size_tuple(size)
        z = rng.standard_normal((*size, self.dim)) @ self._L.T
        u = rng.chisquare(self._df, size=size)
        return self._loc + z / np.sqrt(u / self._df)[..., None]
