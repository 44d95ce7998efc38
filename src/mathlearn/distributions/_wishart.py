"""Wishart distribution over symmetric positive definite matrices."""

from __future__ import annotations

import numpy as np
import scipy.stats as st
from scipy.special import digamma

from ..utils.validation import check_random_state
from ._base import Distribution, _frozen_array, _size_tuple
from ._mvn import _check_square, _factor_cov
from ._scipy_backed import scalar_param

__all__ = ["Wishart"]


class Wishart(Distribution):
    r"""Wishart distribution ``W(Lambda | scale, df)`` over ``d x d`` SPD matrices.

    Parameters
    ----------
    df : float
        Degrees of freedom :math:`\nu > d - 1`.
    scale : array-like of shape (d, d)
        Symmetric positive definite scale matrix :math:`W` (``d x d``; the notes print
        "d x D"; corrected as in PRML §2.3.6).

    Attributes
    ----------
    mean : ndarray of shape (d, d)
        :math:`\nu W`.
    var : ndarray of shape (d, d)
        Element-wise variances :math:`\nu (W_{ij}^2 + W_{ii} W_{jj})`.

    See Also
    --------
    mathlearn.distributions.NormalWishart
        With a Gaussian mean.
    mathlearn.distributions.Gamma
        The one-dimensional case.
    scipy.stats.wishart
        SciPy's equivalent.

    Notes
    -----
    :math:`W(\Lambda|W,\nu) = B\,|\Lambda|^{(\nu-d-1)/2}\exp(-\tfrac12\mathrm{tr}(W^{-1}
    \Lambda))` with :math:`B = |W|^{-\nu/2}(2^{\nu d/2}\pi^{d(d-1)/4}\prod_{i=1}^d
    \Gamma(\tfrac{\nu+1-i}{2}))^{-1}` (Imperial "Mathematics for Inference and Machine Learning"
    §1.2.3.7, eq. 1.52; PRML eq. 2.155). The conjugate prior of a Gaussian precision matrix.
    Densities and sampling use ``scipy.stats.wishart``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.distributions import Wishart
    >>> Wishart(3.0, np.eye(2)).mean
    array([[3., 0.],
           [0., 3.]])
    """

    def __init__(self, df, scale):
        scale = np.asarray(scale, dtype=float)
        if scale.ndim != 2:
            raise ValueError(f"scale must be a square matrix; got shape {scale.shape}.")
        d = scale.shape[0]
        scale = _check_square(scale, d, "scale")
        L = _factor_cov(scale, jitter=None, name="scale")
        df = scalar_param(df, "df")
        if df <= d - 1:
            raise ValueError(f"df must be > d - 1 = {d - 1}; got {df}.")
        self._set(_df=df, _scale=_frozen_array(L @ L.T), _L=_frozen_array(L))

    def _params(self):
        return {"df": self._df, "scale": self._scale}

    @property
    def df(self) -> float:
        return self._df

    @property
    def scale(self) -> np.ndarray:
        return self._scale

    @property
    def dim(self) -> int:
        return int(self._scale.shape[0])

    @property
    def mean(self) -> np.ndarray:
        return self._df * self._scale

    @property
    def var(self) -> np.ndarray:
        s = self._scale
        d = np.diag(s)
        return self._df * (s**2 + np.outer(d, d))

    def expected_logdet(self) -> float:
        r"""``E[log |Lambda|] = sum_{i=1}^d psi((nu + 1 - i) / 2) + d log 2 + log |W|``.

        PRML eq. B.81 (and 10.65); with :attr:`mean` ``E[Lambda] = nu W`` these are the
        expected sufficient statistics of the Wishart.

        Returns
        -------
        float

        Examples
        --------
        >>> import numpy as np
        >>> from mathlearn.distributions import Wishart
        >>> round(Wishart(1.0, np.eye(1)).expected_logdet(), 10)  # chi^2_1: psi(1/2) + log 2
        -1.2703628455
        """
        d = self.dim
        return float(
            np.sum(digamma(0.5 * (self._df + 1 - np.arange(1, d + 1))))
            + d * np.log(2.0)
            + 2.0 * np.sum(np.log(np.diag(self._L)))
        )

    def _rv(self):
        return st.wishart(df=self._df, scale=self._scale)

    def logpdf(self, X):
        """Log-density at symmetric matrices ``X`` of shape (d, d) or (..., d, d).

        The density is zero (log-density ``-inf``) at symmetric matrices that are not
        positive definite, outside the support; non-symmetric or NaN input is an error.
        """
        X = np.asarray(X, dtype=float)
        d = self.dim
        if X.ndim < 2 or X.shape[-2:] != (d, d):
            raise ValueError(f"X must have trailing shape ({d}, {d}); got {X.shape}.")
        if np.any(np.isnan(X)):
            raise ValueError("X contains NaN.")
        batch = X.shape[:-2]
        Xs = X.reshape(-1, d, d)
        scale = np.maximum(np.abs(Xs).max(axis=(1, 2)), np.finfo(float).tiny)
        if np.any(np.abs(Xs - np.swapaxes(Xs, 1, 2)).max(axis=(1, 2)) > 1e-8 * scale):
            raise ValueError("X must be symmetric.")
        # Inside the support iff the smallest eigenvalue is positive.
        inside = np.linalg.eigvalsh(Xs)[:, 0] > 0
        out = np.full(Xs.shape[0], -np.inf)
        if np.any(inside):
            # scipy expects the matrices stacked on the LAST axis.
            lp = self._rv().logpdf(np.moveaxis(Xs[inside], 0, -1))
            out[inside] = np.atleast_1d(lp)
        out = out.reshape(batch)
        return float(out) if out.ndim == 0 else out

    def pdf(self, X):
        return np.exp(self.logpdf(X))

    def entropy(self) -> float:
        return float(self._rv().entropy())

    def sample(self, size=None, rng=None) -> np.ndarray:
        """SPD matrices of shape ``size + (d, d)`` (Bartlett decomposition, via scipy)."""
        rng = check_random_state(rng, name="rng")
        size = _size_tuple(size)
        n = int(np.prod(size)) if size else 1
        out = self._rv().rvs(size=n, random_state=rng).reshape(n, self.dim, self.dim)
        return out.reshape((*size, self.dim, self.dim))
