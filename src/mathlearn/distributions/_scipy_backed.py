"""Machinery shared by the distributions whose densities come from ``scipy.stats``.

A subclass validates its parameters, broadcasts them to a common batch shape, and builds a
frozen ``scipy.stats`` object once; ``logpdf``/``cdf``/``sample``/moments delegate to it.
"""

from __future__ import annotations

import numpy as np

from ..utils.validation import check_random_state
from ._base import Distribution, _frozen_array, _size_tuple

__all__ = ["ScipyBacked", "check_param", "scalar_param"]


def check_param(value, name: str, *, low=None, high=None, strict=True, integer=False):
    """Validate a (possibly batched) parameter: finite, and within ``(low, high)``.

    ``strict`` makes the bounds exclusive. Raises ``ValueError`` naming the parameter.
    Returns a read-only copy: the frozen scipy objects keep these arrays, so they must not
    alias an array of the caller's, whose later changes would alter the distribution.
    """
    a = np.array(value, dtype=float, copy=True)
    a.setflags(write=False)
    if a.size == 0:
        raise ValueError(f"{name} is empty.")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite; got {value!r}.")
    if integer and np.any(a != np.round(a)):
        raise ValueError(f"{name} must be an integer; got {value!r}.")
    if low is not None:
        bad = a <= low if strict else a < low
        if np.any(bad):
            op = ">" if strict else ">="
            raise ValueError(f"{name} must be {op} {low}; got {value!r}.")
    if high is not None:
        bad = a >= high if strict else a > high
        if np.any(bad):
            op = "<" if strict else "<="
            raise ValueError(f"{name} must be {op} {high}; got {value!r}.")
    return a


def scalar_param(value, name: str, **bounds) -> float:
    """Validate a parameter that must be a single number (see :func:`check_param`)."""
    a = check_param(value, name, **bounds)
    if a.ndim != 0:
        raise ValueError(f"{name} must be a scalar; got an array of shape {a.shape}.")
    return float(a)


def _out(a):
    """Scalars come back as Python floats; batches as arrays."""
    a = np.asarray(a)
    return float(a) if a.ndim == 0 else a


class ScipyBacked(Distribution):
    """Base of the univariate (batched) distributions delegating to a frozen scipy object.

    Subclasses call ``self._init(params, rv)`` with their validated parameters (a dict of
    arrays already broadcast together) and the frozen scipy object.
    """

    _discrete = False

    def _init(self, params: dict, rv) -> None:
        arrays = np.broadcast_arrays(*[np.asarray(v, dtype=float) for v in params.values()])
        frozen = {k: _frozen_array(v) for k, v in zip(params, arrays, strict=True)}
        self._set(_p=frozen, _rv=rv, _batch_shape=arrays[0].shape if arrays else ())

    def _params(self) -> dict:
        return {k: _out(v) for k, v in self._p.items()}

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """Shape of the batch of parameters (``()`` for a single distribution)."""
        return self._batch_shape

    def _check_x(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if np.any(np.isnan(x)):
            raise ValueError("x contains NaN.")
        return x

    def logpdf(self, x):
        """Log-density (log-mass for discrete distributions) at ``x``; broadcasts."""
        x = self._check_x(x)
        return _out(self._rv.logpmf(x) if self._discrete else self._rv.logpdf(x))

    def pdf(self, x):
        """Density (mass for discrete distributions) at ``x``; broadcasts."""
        x = self._check_x(x)
        return _out(self._rv.pmf(x) if self._discrete else self._rv.pdf(x))

    def cdf(self, x):
        """Cumulative distribution function ``P(X <= x)``."""
        return _out(self._rv.cdf(self._check_x(x)))

    def ppf(self, q):
        """Quantile function (inverse of the cdf)."""
        q = check_param(q, "q", low=0.0, high=1.0, strict=False)
        return _out(self._rv.ppf(q))

    @property
    def mean(self):
        return _out(self._rv.mean())

    @property
    def var(self):
        return _out(self._rv.var())

    @property
    def std(self):
        return _out(np.sqrt(self._rv.var()))

    def entropy(self):
        """Differential entropy (Shannon entropy for discrete distributions), in nats."""
        return _out(self._rv.entropy())

    def sample(self, size=None, rng=None) -> np.ndarray:
        """Draw samples of shape ``size + batch_shape`` using ``rng``."""
        rng = check_random_state(rng, name="rng")
        shape = _size_tuple(size) + self._batch_shape
        out = self._rv.rvs(size=shape, random_state=rng)
        return np.asarray(out, dtype=float) if not self._discrete else np.asarray(out)
