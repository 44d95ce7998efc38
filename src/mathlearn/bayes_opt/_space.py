r"""Search spaces of Bayesian optimisation: real, integer and categorical dimensions.

Three spaces are involved:

* the user's points ``x`` (numbers and category labels);
* the *search* cube ``[0, 1]^S`` where the acquisition is optimised: one coordinate per real
  or integer dimension, one per category of a categorical dimension;
* the surrogate's *kernel inputs* ``z = T(u)``: a real coordinate as it is, an integer
  coordinate rounded to the nearest allowed value (rescaled to ``[0, 1]``), a categorical
  block replaced by the one-hot code of its largest entry.

Because the GP sees only ``T(u)``, the acquisition is constant wherever the rounded point is
the same: it never rewards a fractional integer or a mixture of categories that cannot be
evaluated (Garrido-Merchán and Hernández-Lobato, "Dealing with categorical and integer-valued
variables in Bayesian optimization with Gaussian processes", Neurocomputing 2020).
"""

from __future__ import annotations

from numbers import Integral
from numbers import Real as RealNumber

import numpy as np

__all__ = ["Categorical", "Integer", "Real"]


class Real:
    """A real dimension ``low <= x <= high``.

    Parameters
    ----------
    low, high : float
        Finite bounds with ``low < high``.

    See Also
    --------
    mathlearn.bayes_opt.Integer
        An integer dimension.
    mathlearn.bayes_opt.Categorical
        A dimension of unordered labels.

    Examples
    --------
    >>> from mathlearn.bayes_opt import Real
    >>> Real(-1.0, 2.0)
    Real(-1.0, 2.0)
    """

    def __init__(self, low: float, high: float):
        if not (
            isinstance(low, RealNumber)
            and isinstance(high, RealNumber)
            and np.isfinite(low)
            and np.isfinite(high)
            and low < high
        ):
            raise ValueError(
                f"a Real dimension needs finite bounds with low < high; got ({low!r}, {high!r})."
            )
        self.low: float = float(low)
        self.high: float = float(high)

    def __repr__(self) -> str:
        return f"Real({self.low!r}, {self.high!r})"

    n_search = 1

    def to_kernel(self, u: np.ndarray) -> np.ndarray:
        return np.clip(u, 0.0, 1.0)

    def decode(self, u: np.ndarray) -> np.ndarray:
        return self.low + np.clip(u[:, 0], 0.0, 1.0) * (self.high - self.low)

    def encode(self, values) -> np.ndarray:
        v = np.asarray(values, dtype=float)
        if np.any(~np.isfinite(v)) or np.any(v < self.low) or np.any(v > self.high):
            raise ValueError(f"a value is outside {self!r}.")
        return ((v - self.low) / (self.high - self.low))[:, None]


class Integer:
    """An integer dimension ``x ∈ {low, low + 1, ..., high}``.

    Parameters
    ----------
    low, high : int
        ``low < high``.

    See Also
    --------
    mathlearn.bayes_opt.Real
        A continuous dimension.
    mathlearn.bayes_opt.Categorical
        A dimension of unordered labels.

    Examples
    --------
    >>> from mathlearn.bayes_opt import Integer
    >>> Integer(1, 5)
    Integer(1, 5)
    """

    def __init__(self, low: int, high: int):
        ok = (
            isinstance(low, Integral)
            and isinstance(high, Integral)
            and not isinstance(low, bool)
            and not isinstance(high, bool)
            and low < high
        )
        if not ok:
            raise ValueError(
                f"an Integer dimension needs integers low < high; got ({low!r}, {high!r})."
            )
        self.low: int = int(low)
        self.high: int = int(high)

    def __repr__(self) -> str:
        return f"Integer({self.low!r}, {self.high!r})"

    n_search = 1

    def _round(self, u):
        # Equal-width bins of [0, 1], one per allowed value.
        m = self.high - self.low + 1
        return np.minimum(np.floor(np.clip(u, 0.0, 1.0) * m), m - 1)

    def to_kernel(self, u: np.ndarray) -> np.ndarray:
        return self._round(u) / (self.high - self.low)

    def decode(self, u: np.ndarray) -> np.ndarray:
        return (self.low + self._round(u[:, 0])).astype(np.int64)

    def encode(self, values) -> np.ndarray:
        v = np.asarray(values, dtype=float)
        if np.any(v != np.round(v)) or np.any(v < self.low) or np.any(v > self.high):
            raise ValueError(f"a value is not an integer of {self!r}.")
        m = self.high - self.low + 1
        return ((v - self.low + 0.5) / m)[:, None]  # the centre of the value's bin


class Categorical:
    """A categorical dimension: one of a finite set of labels (numbers or strings).

    Parameters
    ----------
    categories : sequence
        At least two distinct labels.

    See Also
    --------
    mathlearn.bayes_opt.Real
        A continuous dimension.
    mathlearn.bayes_opt.Integer
        An integer dimension.

    Examples
    --------
    >>> from mathlearn.bayes_opt import Categorical
    >>> Categorical(["relu", "tanh", "logistic"])
    Categorical(['relu', 'tanh', 'logistic'])
    """

    def __init__(self, categories):
        cats = list(categories)
        if len(cats) < 2 or len(set(map(repr, cats))) != len(cats):
            raise ValueError(
                f"a Categorical dimension needs at least two distinct categories; got {cats!r}."
            )
        self.categories = cats

    def __repr__(self) -> str:
        return f"Categorical({self.categories!r})"

    @property
    def n_search(self) -> int:
        return len(self.categories)

    def to_kernel(self, u: np.ndarray) -> np.ndarray:
        return np.eye(self.n_search)[np.argmax(u, axis=1)]

    def decode(self, u: np.ndarray) -> np.ndarray:
        idx = np.argmax(u, axis=1)
        out = np.empty(len(idx), dtype=object)
        out[:] = [self.categories[i] for i in idx]
        return out

    def encode(self, values) -> np.ndarray:
        index = {repr(c): i for i, c in enumerate(self.categories)}
        try:
            idx = [index[repr(v)] for v in values]
        except KeyError as exc:
            raise ValueError(f"{exc.args[0]} is not a category of {self!r}.") from None
        return np.eye(self.n_search)[idx]


def _as_dimension(spec):
    if isinstance(spec, (Real, Integer, Categorical)):
        return spec
    try:
        b = np.asarray(spec, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"a dimension must be a (low, high) pair, Real, Integer or Categorical; got {spec!r}."
        ) from None
    if b.shape != (2,):
        raise ValueError(f"bounds must have shape (n_dims, 2); got a dimension {spec!r}.")
    if not np.all(np.isfinite(b)):
        raise ValueError("bounds must be finite.")
    if not b[0] < b[1]:
        raise ValueError(f"bounds must satisfy low < high in every dimension; got {spec!r}.")
    return Real(float(b[0]), float(b[1]))


class Space:
    """The dimensions of a search space and the maps between its three coordinate systems."""

    def __init__(self, dims):
        if isinstance(dims, np.ndarray) and dims.ndim == 2 and dims.shape[1] == 2:
            dims = list(dims)
        try:
            dims = list(dims)
        except TypeError:
            raise ValueError(f"bounds must be a sequence of dimensions; got {dims!r}.") from None
        if not dims:
            raise ValueError("bounds must have shape (n_dims, 2); got no dimension.")
        self.dims = [_as_dimension(d) for d in dims]
        sizes = [d.n_search for d in self.dims]
        self._slices = []
        start = 0
        for s in sizes:
            self._slices.append(slice(start, start + s))
            start += s
        self.n_search = start
        self.numeric = not any(isinstance(d, Categorical) for d in self.dims)

    @property
    def n_dims(self) -> int:
        return len(self.dims)

    def to_kernel(self, U: np.ndarray) -> np.ndarray:
        """Kernel inputs ``T(u)`` of search points ``U`` (n, n_search)."""
        U = np.atleast_2d(U)
        return np.hstack(
            [d.to_kernel(U[:, s]) for d, s in zip(self.dims, self._slices, strict=True)]
        )

    def decode(self, U: np.ndarray) -> list:
        """User points (one list per row) of search points ``U``."""
        U = np.atleast_2d(U)
        cols = [d.decode(U[:, s]) for d, s in zip(self.dims, self._slices, strict=True)]
        return [
            [c[i].item() if hasattr(c[i], "item") else c[i] for c in cols]
            for i in range(U.shape[0])
        ]

    def encode(self, points) -> np.ndarray:
        """Search coordinates of user points (a list of rows), shape (n, n_search)."""
        rows = [list(p) for p in points]
        if any(len(r) != self.n_dims for r in rows):
            raise ValueError(f"x must have {self.n_dims} entries.")
        return np.hstack([d.encode([r[j] for r in rows]) for j, d in enumerate(self.dims)])
