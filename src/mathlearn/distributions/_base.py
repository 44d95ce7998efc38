"""Base class of the distributions: immutable value objects.

A distribution stores its parameters once, at construction, as read-only arrays; every
operation (conditioning, a conjugate update, an affine map) returns a new object. Public
methods validate and broadcast; private ``_formulas`` compute.
"""

from __future__ import annotations

import operator

import numpy as np

__all__ = ["Distribution"]


def _frozen_array(x, dtype=float) -> np.ndarray:
    """A read-only float copy of ``x`` so that a distribution cannot be changed in place."""
    a = np.array(x, dtype=dtype, copy=True)
    a.setflags(write=False)
    return a


def _size_tuple(size) -> tuple[int, ...]:
    if size is None:
        return ()
    if isinstance(size, int | np.integer):
        size = (int(size),)
    try:
        size = tuple(operator.index(s) for s in size)
    except TypeError:
        raise TypeError(f"size must be an int or a tuple of ints; got {size!r}.") from None
    if any(s < 0 for s in size):
        raise ValueError(f"size must be non-negative; got {size}.")
    return size


class Distribution:
    """Base class: parameters are set once in ``__init__`` and never change afterwards.

    Subclasses set their attributes with ``self._set(name=value, ...)``; plain assignment
    raises ``AttributeError`` so that a distribution is a value, safe to share.
    """

    __slots__ = ("__dict__",)

    def _set(self, **attrs) -> None:
        for k, v in attrs.items():
            object.__setattr__(self, k, v)

    def __setattr__(self, name, value):
        raise AttributeError(
            f"{type(self).__name__} is immutable; build a new distribution instead of "
            f"setting {name!r}."
        )

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} is immutable.")

    def _params(self) -> dict:
        return {}

    def __repr__(self) -> str:
        def fmt(v):
            if isinstance(v, np.ndarray):
                return np.array2string(v, precision=4, threshold=8)
            return repr(v)

        args = ", ".join(f"{k}={fmt(v)}" for k, v in self._params().items())
        return f"{type(self).__name__}({args})"

    def pdf(self, x):
        """Density (or mass) at ``x``: ``exp(logpdf(x))``."""
        return np.exp(self.logpdf(x))

    def logpdf(self, x):  # pragma: no cover - abstract
        raise NotImplementedError
