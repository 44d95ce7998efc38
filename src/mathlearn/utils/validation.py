"""Input validation at the library's boundary.

Arrays are validated with scikit-learn's public helpers (``check_array``, ``validate_data``),
which already reject NaN/inf, wrong dimensionality and empty input with clear messages; the
two are wrapped here so that a plain float ``ndarray`` needing no conversion is answered
directly, without their generic dispatch (everything else, and every failed check, still
goes to scikit-learn's functions and their messages). This module adds the checks that
scikit-learn lacks: symmetric positive (semi-)definite matrices, positive scalars,
probability vectors, sample weights, finiteness of large arrays without a temporary
(``all_finite``), and a ``check_random_state`` that accepts NumPy's ``Generator`` as well as
``RandomState``.

Hyperparameters are not checked here but declared: see
:mod:`mathlearn.utils._param_validation` and ``mathlearn.base._fit_context``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from sklearn.utils import assert_all_finite
from sklearn.utils import check_array as _sk_check_array
from sklearn.utils.validation import check_is_fitted
from sklearn.utils.validation import validate_data as _sk_validate_data

#: What a ``random_state`` / ``rng`` argument may be (see :func:`check_random_state`).
RandomStateLike = int | np.integer | np.random.Generator | np.random.RandomState | None

__all__ = [
    "all_finite",
    "assert_all_finite",
    "check_array",
    "check_bool",
    "check_int",
    "check_is_fitted",
    "check_positive",
    "check_probability_vector",
    "check_random_state",
    "check_sample_weight",
    "check_symmetric",
    "check_symmetric_psd",
    "validate_data",
]


# The common case without scikit-learn's generic machinery. ``check_array`` and
# ``validate_data`` accept lists, DataFrames, sparse matrices, array-API namespaces and every
# dtype, and their generic dispatch costs 35 us for one array and 95 us for ``(X, y)``
# (scikit-learn 1.9), more than a whole fit of many small models. For the case that
# dominates, a plain ``numpy.ndarray`` of floats that needs no conversion, the checks below
# are the same ones (shape, emptiness, finiteness, the feature count and names) done
# directly; anything else, and any check that fails, goes to scikit-learn's functions, so
# that every error and warning is theirs, word for word.

# keyword arguments whose meaning the fast path reproduces (any other one: scikit-learn)
_FAST_KEYS = frozenset(
    {"dtype", "ensure_all_finite", "ensure_min_samples", "ensure_2d", "accept_sparse",
     "y_numeric", "multi_output", "estimator", "input_name"}
)  # fmt: skip


def _keeps_dtype(dt: np.dtype, requested) -> bool:
    """Whether ``check_array(..., dtype=requested)`` returns an array of dtype ``dt`` as it is."""
    if isinstance(requested, str):
        return requested == "numeric"
    if isinstance(requested, (list, tuple)):
        return any(dt == np.dtype(r) for r in requested)
    return requested is None or dt == np.dtype(requested)


def _finite_sum(a: np.ndarray) -> bool:
    """True when ``a`` (floats) is surely finite: its sum is (scikit-learn's own first test;
    a NaN or inf makes the sum non-finite, and a finite sum of floats has no inf term). A sum
    that overflows on huge finite values says nothing: scikit-learn's element-wise check then
    decides."""
    with np.errstate(over="ignore", invalid="ignore"):
        return math.isfinite(a.sum(dtype=np.float64))


def all_finite(a: np.ndarray) -> bool:
    """Whether every entry of a float array is finite, without a boolean array of its size.

    ``np.isfinite(a).all()`` makes an ``a``-sized boolean temporary (100 MB for a 10 000 x
    10 000 Gram matrix). The sum of ``a`` is finite exactly when no entry is NaN or infinite,
    unless it overflows on huge finite entries; only then are the entries tested, a block of
    rows at a time.

    Parameters
    ----------
    a : ndarray
        Floats, of any shape.

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.validation import all_finite
    >>> all_finite(np.array([[1.0, 1e308], [1e308, 2.0]])), all_finite(np.array([0.0, np.nan]))
    (True, False)
    """
    a = np.asarray(a)
    if _finite_sum(a):
        return True
    rows = a.reshape(a.shape[0], -1) if a.ndim > 1 else a.reshape(-1, 1)
    step = max(1, (1 << 20) // max(1, rows.shape[1]))
    return all(bool(np.isfinite(rows[i : i + step]).all()) for i in range(0, rows.shape[0], step))


def _plain_array(a, params: dict, *, ndims=(2,)) -> bool:
    """True when ``check_array(a, **params)`` would return ``a`` itself without a message."""
    if type(a) is not np.ndarray or a.ndim not in ndims or a.dtype.kind != "f":
        return False
    if a.dtype.itemsize not in (4, 8) or not _keeps_dtype(a.dtype, params.get("dtype", "numeric")):
        return False
    if a.shape[0] < max(1, params.get("ensure_min_samples", 1)):
        return False
    if a.ndim == 2 and not a.shape[1]:
        return False
    finite = params.get("ensure_all_finite", True)
    if finite is True:
        return _finite_sum(a)
    return finite is False


def check_array(array, accept_sparse=False, **params):
    """scikit-learn's ``check_array``, answered directly for a float ``ndarray`` that needs no
    conversion.

    A ``numpy.ndarray`` (not a subclass) of float32 or float64 that the requested ``dtype``
    keeps, of the required dimensionality, not empty and (unless ``ensure_all_finite=False``)
    finite, is returned as it is, as scikit-learn would return it, without its generic
    dispatch (about 35 us). Any other input, any other keyword argument, and any input that
    fails a check goes to :func:`sklearn.utils.check_array`, so every conversion, error and
    warning is scikit-learn's.

    Parameters
    ----------
    array : object
        The input to check.
    accept_sparse : str, bool or list of str, default=False
        As in :func:`sklearn.utils.check_array`.
    **params
        The other keyword arguments of :func:`sklearn.utils.check_array`.

    Returns
    -------
    array_converted : object
        The validated array.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.validation import check_array
    >>> X = np.ones((3, 2))
    >>> check_array(X) is X
    True
    >>> check_array([[1, 2], [3, 4]], dtype=np.float64).dtype
    dtype('float64')
    """
    if params.keys() <= _FAST_KEYS - {"y_numeric", "multi_output"}:
        ndims = (2,) if params.get("ensure_2d", True) else (1, 2)
        if _plain_array(array, params, ndims=ndims):
            return array
    return _sk_check_array(array, accept_sparse, **params)


def _plain_target(y, n: int, params: dict) -> bool:
    """True when ``check_X_y``'s validation of ``y`` would return ``y``'s values unchanged."""
    if type(y) is not np.ndarray or y.shape[0] != n or y.dtype.kind not in "fiub":
        return False
    if y.ndim != 1 and not (params.get("multi_output", False) and y.ndim == 2 and y.shape[1]):
        return False
    return y.dtype.kind != "f" or _finite_sum(y)


def validate_data(
    _estimator,
    /,
    X="no_validation",
    y="no_validation",
    reset=True,
    validate_separately=False,
    skip_check_array=False,
    **check_params,
):
    """scikit-learn's ``validate_data``, answered directly for float ``ndarray`` input that
    needs no conversion.

    When ``X`` passes :func:`check_array`'s direct route and ``y`` is absent or a 1-D
    ``numpy.ndarray`` of numbers (2-D with ``multi_output=True``), finite, of ``X``'s length,
    the arrays are returned as they are, ``n_features_in_`` is set (``reset=True``) or checked,
    and ``feature_names_in_`` is removed on ``reset``: what scikit-learn does for such input,
    without its generic dispatch (about 95 us for ``(X, y)``). Everything else, and any check
    that fails, goes to :func:`sklearn.utils.validation.validate_data`, so every conversion,
    error and warning is scikit-learn's.

    Parameters
    ----------
    _estimator : estimator instance
        The estimator whose ``n_features_in_`` and ``feature_names_in_`` are set or checked.
    X : object, default="no_validation"
        The samples.
    y : object, default="no_validation"
        The targets.
    reset : bool, default=True
        Set the attributes (``fit``) rather than check against them (``predict``).
    validate_separately : False or tuple of dicts, default=False
        As in :func:`sklearn.utils.validation.validate_data`.
    skip_check_array : bool, default=False
        As in :func:`sklearn.utils.validation.validate_data`.
    **check_params
        Keyword arguments of :func:`sklearn.utils.check_array` / ``check_X_y``.

    Returns
    -------
    out : object or tuple
        The validated ``X``, ``y`` or ``(X, y)``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linear_model import Ridge
    >>> from mathlearn.utils.validation import validate_data
    >>> est = Ridge()
    >>> X, y = np.ones((4, 3)), np.arange(4.0)
    >>> Xv, yv = validate_data(est, X, y, y_numeric=True)
    >>> est.n_features_in_, Xv is X
    (3, True)
    """
    if not (validate_separately or skip_check_array) and check_params.keys() <= _FAST_KEYS:
        no_y = isinstance(y, str) and y == "no_validation"
        plain = (
            _plain_array(X, check_params)
            and (no_y or _plain_target(y, X.shape[0], check_params))
            and check_params.get("ensure_2d", True)
        )
        if plain and reset:
            if hasattr(_estimator, "feature_names_in_"):
                delattr(_estimator, "feature_names_in_")
            _estimator.n_features_in_ = X.shape[1]
            return X if no_y else (X, y)
        if plain and getattr(_estimator, "feature_names_in_", None) is None:
            expected = getattr(_estimator, "n_features_in_", X.shape[1])
            if expected == X.shape[1]:
                return X if no_y else (X, y)
    return _sk_validate_data(
        _estimator,
        X,
        y,
        reset=reset,
        validate_separately=validate_separately,
        skip_check_array=skip_check_array,
        **check_params,
    )


_SEED_SEQUENCES: dict[int, np.random.SeedSequence] = {}


def _seed_sequence(seed: int) -> np.random.SeedSequence:
    """``SeedSequence(seed)``, formed once per seed and shared by the generators seeded with
    it (a new one once a generator has spawned children from it, so that ``spawn`` on a
    fresh generator starts its count at 0, as on ``default_rng(seed)``)."""
    seq = _SEED_SEQUENCES.get(seed)
    if seq is None or seq.n_children_spawned:
        if len(_SEED_SEQUENCES) >= 256:
            _SEED_SEQUENCES.clear()
        seq = _SEED_SEQUENCES[seed] = np.random.SeedSequence(seed)
    return seq


def check_random_state(seed: RandomStateLike, name: str = "random_state") -> np.random.Generator:
    """Turn ``seed`` into a ``numpy.random.Generator``.

    Parameters
    ----------
    seed : None, int, numpy.random.Generator or numpy.random.RandomState
        ``None`` gives a fresh generator seeded from the operating system; an int in
        ``[0, 2**32 - 1]`` seeds a new PCG64 generator; a ``Generator`` is returned as it
        is; a ``RandomState`` is wrapped so that draws continue its stream (scikit-learn
        passes those in its common checks).
    name : str, default="random_state"
        The caller's name for the argument (``"rng"``, ...), for the error message.

    Returns
    -------
    numpy.random.Generator
        The generator to draw from.

    Raises
    ------
    ValueError
        Naming ``name``, for anything else (a negative or too large int, a float, a bool).

    Examples
    --------
    >>> from mathlearn.utils.validation import check_random_state
    >>> float(check_random_state(0).random()) == float(check_random_state(0).random())
    True
    """
    if seed is None:
        return np.random.default_rng()
    if type(seed) is int or (
        isinstance(seed, numbers.Integral | np.integer) and not isinstance(seed, bool | np.bool_)
    ):
        if not 0 <= int(seed) <= 2**32 - 1:
            raise ValueError(
                f"{name} must be None, an int in [0, 4294967295], a numpy Generator or "
                f"RandomState; got {seed!r}."
            )
        # default_rng(seed) is PCG64 on SeedSequence(seed); the sequence (the costly part
        # of seeding, a fifth of a small fit) is formed once per seed.
        return np.random.Generator(np.random.PCG64(_seed_sequence(int(seed))))
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        # Draw a seed from the RandomState so that repeated calls advance its stream.
        return np.random.default_rng(seed.randint(np.iinfo(np.int32).max))
    raise ValueError(
        f"{name} must be None, an int in [0, 4294967295], a numpy Generator or RandomState; "
        f"got {seed!r}."
    )


def check_positive(value, name: str, *, strict: bool = True, allow_none: bool = False) -> Any:
    """Check that a scalar parameter is a finite positive number and return it as float.

    Parameters
    ----------
    value : float
        The value to check.
    name : str
        Its name, for the message.
    strict : bool, default=True
        Require ``value > 0``; otherwise ``value >= 0``.
    allow_none : bool, default=False
        Let ``None`` through (returned as is).

    Returns
    -------
    float or None
        ``float(value)``.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (bools are not).
    ValueError
        If ``value`` is not finite, or not positive (``strict``) / non-negative.

    Examples
    --------
    >>> from mathlearn.utils.validation import check_positive
    >>> check_positive(2, "alpha")
    2.0
    >>> check_positive(0.0, "alpha")
    Traceback (most recent call last):
    ...
    ValueError: alpha must be > 0; got 0.0.
    """
    if value is None and allow_none:
        return None
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number; got {type(value).__name__}.")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value}.")
    if strict and value <= 0:
        raise ValueError(f"{name} must be > 0; got {value}.")
    if not strict and value < 0:
        raise ValueError(f"{name} must be >= 0; got {value}.")
    return value


def check_int(value, name: str, minimum: int = 1) -> int:
    """Check that a parameter is an integer (not a bool) of at least ``minimum``; return it.

    Parameters
    ----------
    value : int
        The value to check.
    name : str
        Its name, for the message.
    minimum : int, default=1
        The smallest value allowed.

    Returns
    -------
    int
        ``int(value)``.

    Examples
    --------
    >>> from mathlearn.utils.validation import check_int
    >>> check_int(3, "n_components")
    3
    """
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def check_bool(value, name: str) -> bool:
    """Check that a parameter is a bool (Python's or NumPy's); return it as ``bool``.

    Parameters
    ----------
    value : bool
        The value to check.
    name : str
        Its name, for the message.

    Returns
    -------
    bool
        ``bool(value)``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.validation import check_bool
    >>> check_bool(np.True_, "fit_intercept")
    True
    """
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a bool; got {value!r}.")
    return bool(value)


def check_probability_vector(
    p, name: str = "p", *, axis: int = -1, atol: float = 1e-8
) -> np.ndarray:
    """Validate probabilities that lie in [0, 1] and sum to one along ``axis``.

    Parameters
    ----------
    p : array-like
        The probabilities.
    name : str, default="p"
        Their name, for the message.
    axis : int, default=-1
        The axis along which they sum to one.
    atol : float, default=1e-8
        Tolerance on the sums.

    Returns
    -------
    ndarray
        The probabilities as a float array.

    Examples
    --------
    >>> from mathlearn.utils.validation import check_probability_vector
    >>> check_probability_vector([0.25, 0.75])
    array([0.25, 0.75])
    """
    p = np.asarray(p, dtype=float)
    if not np.all(np.isfinite(p)):
        raise ValueError(f"{name} contains NaN or infinity.")
    if np.any(p < 0) or np.any(p > 1):
        raise ValueError(f"{name} must lie in [0, 1].")
    s = p.sum(axis=axis)
    if not np.allclose(s, 1.0, rtol=0.0, atol=atol):
        raise ValueError(f"{name} must sum to 1 along axis {axis}; sums are {s}.")
    return p


def check_symmetric(A, name: str = "matrix", *, rtol: float = 1e-10) -> np.ndarray:
    """Check that ``A`` is a finite, square, symmetric matrix (definiteness is not checked).

    For a matrix that is meant to be symmetric but was computed in floating point (a
    precomputed kernel ``K_ij = k(x_i, x_j)`` whose two triangles came from two evaluations,
    or ``X X^T`` by a product that does not mirror one triangle): each entry of such a
    matrix carries a relative error of a few ``eps`` per term summed, so ``max|A - A^T|``
    stays far below ``1e3 rtol max|A|`` (``1e-7 max|A|`` by default) for any sum of fewer
    than about 10^8 terms, while a matrix that is not symmetric by construction exceeds it.

    Parameters
    ----------
    A : array-like of shape (n, n)
    name : str
        Name used in error messages.
    rtol : float, default=1e-10
        The same tolerance as :func:`check_symmetric_psd`'s symmetry check.

    Returns
    -------
    A : ndarray of shape (n, n)
        The input as a float array (not symmetrised: callers that read one triangle read the
        lower one).

    Raises
    ------
    ValueError
        If the matrix is not square, is empty, contains NaN/inf, or is not symmetric.

    Examples
    --------
    >>> from mathlearn.utils.validation import check_symmetric
    >>> check_symmetric([[2.0, 1.0], [1.0, 2.0]], "kernel")
    array([[2., 1.],
           [1., 2.]])
    """
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be a square 2-D matrix; got shape {A.shape}.")
    if A.shape[0] == 0:
        raise ValueError(f"{name} is empty.")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinity.")
    scale = max(float(np.max(np.abs(A))), np.finfo(float).tiny)
    gap = float(np.max(np.abs(A - A.T)))
    if gap > rtol * scale * 1e3:
        raise ValueError(
            f"{name} is not symmetric: max|A - A^T| = {gap:.3g} against max|A| = {scale:.3g}."
        )
    return A


def check_symmetric_psd(
    A,
    name: str = "matrix",
    *,
    strict: bool = True,
    rtol: float = 1e-10,
    copy: bool = False,
) -> np.ndarray:
    """Check that ``A`` is a finite, square, symmetric positive (semi-)definite matrix.

    Parameters
    ----------
    A : array-like of shape (n, n)
    name : str
        Name used in error messages ("covariance", "kernel matrix", ...).
    strict : bool, default=True
        Require positive definiteness (a Cholesky factorisation must succeed); otherwise only
        require the smallest eigenvalue to be above ``-max(10 rtol, n eps) max|A_ii|``
        (tested by one Cholesky factorisation of the shifted matrix).
    rtol : float
        Relative tolerance for the symmetry check and for semi-definiteness.
    copy : bool, default=False
        Work on a copy even where the input could be used as it is.

    Returns
    -------
    A : ndarray of shape (n, n)
        The symmetrised matrix ``(A + A.T) / 2``.

    Raises
    ------
    ValueError
        If the matrix is not square, not symmetric, contains NaN/inf, or is not PSD/PD.

    Examples
    --------
    >>> from mathlearn.utils.validation import check_symmetric_psd
    >>> check_symmetric_psd([[2.0, 1.0], [1.0, 2.0]], "cov")
    array([[2., 1.],
           [1., 2.]])
    """
    A = check_symmetric(np.array(A, dtype=float, copy=copy or None), name, rtol=rtol)
    A = 0.5 * (A + A.T)
    if strict:
        try:
            np.linalg.cholesky(A)
        except np.linalg.LinAlgError:
            raise ValueError(f"{name} is not positive definite.") from None
    else:
        # A + tau I has a Cholesky factor exactly when the smallest eigenvalue of A exceeds
        # -tau (up to the factorisation's own rounding, about n eps max|A_ii|), so one
        # factorisation (n^3/3 flops, against about 4n^3/3 for eigenvalues) decides
        # semi-definiteness at the tolerance tau = max(10 rtol, n eps) max|A_ii|; the largest
        # eigenvalue of a PSD matrix lies between max A_ii and n max A_ii.
        from .linalg import cholesky

        n = A.shape[0]
        dmax = max(float(np.max(np.abs(np.diag(A)))), np.finfo(float).tiny)
        tau = max(10.0 * rtol, n * np.finfo(float).eps) * dmax
        try:
            cholesky(A + tau * np.eye(n), jitter=None, name=name)
        except np.linalg.LinAlgError:
            raise ValueError(
                f"{name} is not positive semi-definite (it has an eigenvalue below -{tau:.3g})."
            ) from None
    return A


def check_sample_weight(sample_weight, X, *, dtype: Any = np.float64) -> np.ndarray:
    """Validate per-sample weights for ``X`` and return them as a 1-D array.

    Parameters
    ----------
    sample_weight : None, float or array-like of shape (n_samples,)
        ``None`` gives unit weights; a number gives that weight to every sample.
    X : array-like of shape (n_samples, ...)
        The data the weights belong to (only its length is read).
    dtype : dtype, default=float64

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        If the weights have the wrong shape, are NaN/inf or negative, or are all zero.

    Examples
    --------
    >>> import numpy as np
    >>> check_sample_weight(None, np.zeros((3, 2)))
    array([1., 1., 1.])
    """
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    if sample_weight is None:
        return np.ones(n, dtype=dtype)
    if isinstance(sample_weight, numbers.Real) and not isinstance(sample_weight, bool):
        sample_weight = np.full(n, sample_weight, dtype=dtype)
    else:
        sample_weight = check_array(
            sample_weight, ensure_2d=False, dtype=dtype, input_name="sample_weight"
        )
    if sample_weight.ndim != 1:
        raise ValueError(f"sample_weight must be 1-D; got shape {sample_weight.shape}.")
    if sample_weight.shape[0] != n:
        raise ValueError(
            f"sample_weight has {sample_weight.shape[0]} entries for {n} samples; they must match."
        )
    if not np.all(np.isfinite(sample_weight)):
        raise ValueError("sample_weight contains NaN or infinity.")
    if np.any(sample_weight < 0):
        raise ValueError("sample_weight must be non-negative.")
    if not np.any(sample_weight > 0):
        raise ValueError("sample_weight must contain at least one non-zero weight.")
    return sample_weight
