"""Empirical (particle) distribution: a weighted set of samples."""

from __future__ import annotations

import numpy as np

from ..utils.validation import check_random_state
from ._base import Distribution, _frozen_array, _size_tuple

__all__ = ["Empirical"]


class Empirical(Distribution):
    r"""Particle approximation :math:`q(x) = \sum_i w_i\,\delta(x - x_i)`, :math:`\sum w_i = 1`.

    Parameters
    ----------
    samples : array-like of shape (n,) or (n, d)
        Particle locations.
    weights : array-like of shape (n,), optional
        Non-negative weights (normalised here); uniform by default. Importance sampling
        produces such weighted sets (Stuttgart "Introduction to Machine Learning" slides 9:38 and
        9:47).

    Attributes
    ----------
    samples, weights : ndarray
    mean : float or ndarray of shape (d,)
        :math:`\sum_i w_i x_i`.
    var : float or ndarray of shape (d,)
    cov : ndarray of shape (d, d)
        Weighted covariance (for 2-D samples).
    ess : float
        Effective sample size :math:`1 / \sum_i w_i^2` (Kish).

    See Also
    --------
    mathlearn.monte_carlo
        Samplers that produce weighted particles.

    Notes
    -----
    Expectations :math:`\langle f\rangle_p \approx \sum_i w_i f(x_i)` (9:38); it has no
    density, so ``logpdf`` is not defined, but ``cdf`` is for 1-D particles.

    Examples
    --------
    >>> from mathlearn.distributions import Empirical
    >>> Empirical([0.0, 1.0], weights=[1.0, 3.0]).mean
    0.75
    """

    def __init__(self, samples, weights=None):
        x = np.asarray(samples, dtype=float)
        if x.ndim not in (1, 2) or x.shape[0] == 0:
            raise ValueError(f"samples must be a non-empty (n,) or (n, d) array; got {x.shape}.")
        if not np.all(np.isfinite(x)):
            raise ValueError("samples contain NaN or infinity.")
        if weights is None:
            w = np.full(x.shape[0], 1.0 / x.shape[0])
        else:
            w = np.asarray(weights, dtype=float)
            if w.shape != (x.shape[0],):
                raise ValueError(f"weights must have shape ({x.shape[0]},); got {w.shape}.")
            if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
                raise ValueError("weights must be finite, non-negative and not all zero.")
            w = w / w.sum()
        self._set(_x=_frozen_array(x), _w=_frozen_array(w))

    def _params(self):
        return {"samples": self._x, "weights": self._w}

    @property
    def samples(self) -> np.ndarray:
        return self._x

    @property
    def weights(self) -> np.ndarray:
        return self._w

    @property
    def ess(self) -> float:
        return float(1.0 / np.sum(self._w**2))

    def expectation(self, f=None):
        r""":math:`\sum_i w_i f(x_i)`; ``f`` maps the (n, ...) samples to (n, ...) values."""
        values = self._x if f is None else np.asarray(f(self._x), dtype=float)
        return np.tensordot(self._w, values, axes=(0, 0))

    @property
    def mean(self):
        m = self.expectation()
        return float(m) if np.ndim(m) == 0 else m

    @property
    def var(self):
        v = self.expectation(lambda x: (x - self.expectation()) ** 2)
        return float(v) if np.ndim(v) == 0 else v

    @property
    def cov(self) -> np.ndarray:
        if self._x.ndim != 2:
            raise ValueError("cov is defined for (n, d) samples; use var for 1-D.")
        dev = self._x - self.expectation()
        return (dev * self._w[:, None]).T @ dev

    def cdf(self, x):
        """Weighted empirical cdf of 1-D particles at ``x``."""
        if self._x.ndim != 1:
            raise ValueError("cdf is defined for 1-D particles only.")
        x = np.asarray(x, dtype=float)
        if np.any(np.isnan(x)):
            raise ValueError("x contains NaN.")
        order = np.argsort(self._x)
        xs, cw = self._x[order], np.cumsum(self._w[order])
        idx = np.searchsorted(xs, x, side="right")
        return np.where(idx > 0, cw[np.maximum(idx - 1, 0)], 0.0)

    def sample(self, size=None, rng=None) -> np.ndarray:
        """Resample particles with probabilities ``weights`` (multinomial resampling)."""
        rng = check_random_state(rng, name="rng")
        size = _size_tuple(size)
        idx = rng.choice(self._x.shape[0], size=size, p=self._w)
        return self._x[idx]
