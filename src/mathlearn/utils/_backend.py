"""The one place that decides "NumPy or Dask" for an estimator's input.

The sufficient-statistic estimators (least squares, ridge, Bayesian linear regression, PCA,
k-means, the EM mixtures, naive Bayes) reduce the data to sums over rows. On a
``dask.array.Array`` (or a Dask DataFrame) they compute those sums block by block and combine
them, so the data need never fit in memory, and a ``distributed.Client`` spreads the blocks over
a cluster. This module holds what every such estimator needs for that:

* :func:`is_dask` answers whether an input is a Dask collection. It imports nothing: when Dask
  has not been imported by the user (``"dask" not in sys.modules``), no input can be a Dask
  collection, so the NumPy path costs one dictionary look-up.
* :func:`check_dask_input` validates a Dask input the way ``validate_data`` validates an array
  (2-D, float64, the number of features and the feature names of a fitted estimator), without
  computing it; finiteness is checked by the first pass over the data (:func:`block_sums`
  returns it with the first statistics).
* :func:`block_sums` maps a function over the row blocks and adds the results (tuples of
  arrays) with a balanced tree of additions: the order of the additions is fixed by the
  chunking, so a fit is reproducible, and a lost worker only costs its blocks (the scheduler
  recomputes them).
* :func:`map_row_blocks` applies a fitted estimator's NumPy method block by block and returns a
  lazy Dask array (``predict`` / ``transform`` on Dask input).

Dask is an optional dependency (``pip install 'mathlearn[dask]'``); nothing here imports it
unless a Dask collection was passed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["block_sums", "check_dask_input", "is_dask", "map_row_blocks"]


def is_dask(X) -> bool:
    """Whether ``X`` is a Dask collection (array, DataFrame or Series).

    Parameters
    ----------
    X : object

    Returns
    -------
    bool
        ``False`` for anything when Dask has not been imported (no import happens here).

    Examples
    --------
    >>> import numpy as np
    >>> is_dask(np.zeros((2, 2)))
    False
    """
    if "dask" not in sys.modules:
        return False
    return hasattr(X, "__dask_graph__") and hasattr(X, "ndim")


def _as_array(X, name: str, dtype):
    """A Dask array from a Dask array, DataFrame or Series (row lengths made known)."""
    import dask.array as da

    if isinstance(X, da.Array):
        arr = X
    elif hasattr(X, "to_dask_array"):
        arr = X.to_dask_array(lengths=True)
    else:
        raise TypeError(
            f"{name} is a Dask collection of type {type(X).__name__}; pass a dask.array.Array "
            "or a Dask DataFrame."
        )
    if dtype is not None and arr.dtype != dtype:
        if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
            raise ValueError(f"{name} must be numeric; got dtype {arr.dtype}.")
        arr = arr.astype(dtype)
    if any(np.isnan(c) for c in arr.chunks[0]):
        arr = arr.compute_chunk_sizes()
    return arr


def check_dask_input(
    estimator,
    X,
    y=None,
    *,
    reset: bool = True,
    dtype=np.float64,
    y_dtype=np.float64,
    min_samples: int = 1,
):
    """Validate Dask ``X`` (and ``y``) as ``validate_data`` does, lazily.

    ``X`` becomes a 2-D Dask array of ``dtype`` with one block per group of rows (the
    features in one block: every statistic is a sum over rows), ``y`` a 1-D array chunked
    like the rows of ``X``. With ``reset`` the estimator's ``n_features_in_`` (and
    ``feature_names_in_`` for a DataFrame with string column names) are set, otherwise
    checked. NaN and infinity are not looked for here (that would read the data): the
    estimators test :func:`block_sums`' ``finite`` flag from their first pass.

    Parameters
    ----------
    estimator : estimator instance
    X : dask.array.Array or dask DataFrame of shape (n_samples, n_features)
    y : dask.array.Array, dask Series, ndarray or None
    reset : bool, default=True
    dtype, y_dtype : dtype or None
        ``None`` keeps the input's dtype.
    min_samples : int, default=1

    Returns
    -------
    X : dask.array.Array
    y : dask.array.Array or None (only when ``y`` was given)
    """
    import dask.array as da

    columns = getattr(X, "columns", None)
    X = _as_array(X, "X", dtype)
    if X.ndim != 2:
        raise ValueError(
            f"Expected a 2D array, got a {X.ndim}D Dask array instead; reshape your data."
        )
    n, d = X.shape
    if n < min_samples:
        raise ValueError(
            f"Found array with {n} sample(s) (shape={X.shape}) while a minimum of "
            f"{min_samples} is required."
        )
    if d < 1:
        raise ValueError(f"Found array with 0 feature(s) (shape={X.shape}).")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    names = None
    if columns is not None and all(isinstance(c, str) for c in columns):
        names = np.asarray(list(columns), dtype=object)
    if reset:
        estimator.n_features_in_ = d
        if names is not None:
            estimator.feature_names_in_ = names
        elif hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
    else:
        expected = getattr(estimator, "n_features_in_", None)
        if expected is not None and d != expected:
            raise ValueError(
                f"X has {d} features, but {type(estimator).__name__} is expecting {expected} "
                "features as input."
            )
        fitted = getattr(estimator, "feature_names_in_", None)
        if fitted is not None and names is not None and list(fitted) != list(names):
            raise ValueError("The feature names of X differ from those seen in fit.")
    if y is None:
        return X
    if is_dask(y):
        y = _as_array(y, "y", y_dtype)
    else:
        y = np.asarray(y) if y_dtype is None else np.asarray(y, dtype=y_dtype)
        if y.shape[:1] != (n,):
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{n}, {y.shape[0] if y.ndim else 1}]"
            )
        y = da.from_array(y, chunks=(X.chunks[0], *y.shape[1:]))
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D; got shape {y.shape}.")
    if y.shape[0] != n:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n}, {y.shape[0]}]"
        )
    if y.chunks[0] != X.chunks[0]:
        y = y.rechunk((X.chunks[0],))
    return X, y


def _add(a, b):
    if isinstance(a, tuple):
        return tuple(_add(u, v) for u, v in zip(a, b, strict=True))
    if isinstance(a, bool | np.bool_):
        return bool(a) and bool(b)
    return a + b


def _tree_sum(parts):
    from dask import delayed

    add = delayed(_add, pure=True)
    while len(parts) > 1:
        nxt = [add(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        if len(parts) % 2:
            nxt.append(parts[-1])
        parts = nxt
    return parts[0]


def block_sums(
    func: Callable[..., Any],
    X,
    *aligned,
    compute: bool = True,
):
    """``sum_b func(X_b, a_b, ...)`` over the row blocks ``X_b`` of ``X``.

    Parameters
    ----------
    func : callable
        Called on NumPy blocks: the rows of ``X`` in one block (all its columns), and the
        matching rows of each array in ``aligned`` (1-D or 2-D, chunked like ``X``'s rows).
        Returns an array, a float, a bool (combined by ``and``) or a tuple of them.
    X : dask.array.Array of shape (n, d)
    *aligned : dask.array.Array
    compute : bool, default=True
        ``False`` returns the delayed total (to compute with other work in one pass).

    Returns
    -------
    The total, with the structure ``func`` returns.
    """
    import dask
    from dask import delayed

    # Unoptimised graphs keep the keys of shared inputs (``y`` computed from ``X``, say), so
    # each block of the data is computed once per pass.
    blocks = X.to_delayed(optimize_graph=False)[:, 0].tolist()
    others = []
    for a in aligned:
        if a.chunks[0] != X.chunks[0]:
            a = a.rechunk({0: X.chunks[0]})
        if a.ndim == 2 and len(a.chunks[1]) > 1:
            a = a.rechunk({1: -1})
        d = a.to_delayed(optimize_graph=False)
        others.append(d[:, 0].tolist() if a.ndim == 2 else d.tolist())
    f = delayed(func, pure=True)
    parts = [f(b, *(o[i] for o in others)) for i, b in enumerate(blocks)]
    total = _tree_sum(parts)
    if not compute:
        return total
    return dask.compute(total)[0]


def map_row_blocks(func: Callable, X, *, out_cols: int | None, dtype=np.float64):
    """Apply ``func`` to each row block of Dask ``X``: a lazy Dask array.

    Parameters
    ----------
    func : callable
        NumPy rows ``(n_b, d)`` to an array of shape ``(n_b,)`` (``out_cols=None``) or
        ``(n_b, out_cols)``.
    X : dask.array.Array of shape (n, d), one block of columns
    out_cols : int or None
    dtype : dtype of the result

    Returns
    -------
    dask.array.Array
    """
    if out_cols is None:
        return X.map_blocks(func, drop_axis=1, dtype=dtype, chunks=(X.chunks[0],))
    return X.map_blocks(func, dtype=dtype, chunks=(X.chunks[0], (out_cols,)))


def finite_block(Xb) -> bool:
    """Whether every entry of a NumPy block is finite (for :func:`block_sums`)."""
    return bool(np.isfinite(Xb).all())


def raise_if_not_finite(finite: bool, name: str = "X") -> None:
    """The error ``validate_data`` gives for NaN or infinity, after the first pass."""
    if not finite:
        raise ValueError(f"Input {name} contains NaN or infinity.")


def row_chunks(X) -> Sequence[int]:
    """Row counts of the blocks of a Dask array."""
    return X.chunks[0]


def dask_sample_weight(sample_weight, X):
    """Sample weights for Dask ``X``: a 1-D Dask array chunked like its rows (or ``None``).

    A scalar is a constant weight; NumPy or Dask vectors must have one entry per row. The
    weights are read once here for the checks ``check_sample_weight`` makes (finite,
    non-negative, not all zero); they are ``1 / n_features`` of the data.
    """
    import dask.array as da

    if sample_weight is None:
        return None
    if np.ndim(sample_weight) == 0 and not is_dask(sample_weight):
        sw = da.full(X.shape[0], float(sample_weight), chunks=(X.chunks[0],))
    elif is_dask(sample_weight):
        sw = _as_array(sample_weight, "sample_weight", np.float64)
    else:
        sw = da.from_array(np.asarray(sample_weight, dtype=np.float64), chunks=(X.chunks[0],))
    if sw.ndim != 1 or sw.shape[0] != X.shape[0]:
        raise ValueError(f"sample_weight.shape == {sw.shape}, expected ({X.shape[0]},)!")
    if sw.chunks[0] != X.chunks[0]:
        sw = sw.rechunk((X.chunks[0],))
    import dask

    lo, total, finite = dask.compute(sw.min(), sw.sum(), da.isfinite(sw).all())
    if not finite:
        raise ValueError("Input sample_weight contains NaN or infinity.")
    if lo < 0:
        raise ValueError("Negative values in data passed to `sample_weight`")
    if not total > 0:
        raise ValueError("Sample weights must not all be zero.")
    return sw
