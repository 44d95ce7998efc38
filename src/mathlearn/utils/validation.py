"""Input validation at the library's boundary.

Arrays are validated with scikit-learn's public helpers (``check_array``, ``validate_data``),
which already reject NaN/inf, wrong dimensionality and empty input with clear messages. This
module adds the checks that scikit-learn lacks: symmetric positive (semi-)definite matrices,
positive scalars, probability vectors, sample weights, and a ``check_random_state`` that
accepts NumPy's ``Generator`` as well as ``RandomState``.

Hyperparameters are not checked here but declared: see
:mod:`mathlearn.utils._param_validation` and ``mathlearn.base._fit_context``.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from sklearn.utils import assert_all_finite, check_array
from sklearn.utils.validation import check_is_fitted, validate_data

#: What a ``random_state`` / ``rng`` argument may be (see :func:`check_random_state`).
RandomStateLike = int | np.integer | np.random.Generator | np.random.RandomState | None

__all__ = [
    "assert_all_finite",
    "check_array",
    "check_bool",
    "check_int",
    "check_is_fitted",
    "check_positive",
    "check_probability_vector",
    "check_random_state",
    "check_sample_weight",
    "check_symmetric_psd",
    "validate_data",
]


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
    if isinstance(seed, numbers.Integral | np.integer) and not isinstance(seed, bool | np.bool_):
        if not 0 <= int(seed) <= 2**32 - 1:
            raise ValueError(
                f"{name} must be None, an int in [0, 4294967295], a numpy Generator or "
                f"RandomState; got {seed!r}."
            )
        return np.random.default_rng(int(seed))
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
    A = np.array(A, dtype=float, copy=copy or None)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"{name} must be a square 2-D matrix; got shape {A.shape}.")
    if A.shape[0] == 0:
        raise ValueError(f"{name} is empty.")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinity.")
    scale = max(np.max(np.abs(A)), np.finfo(float).tiny)
    if np.max(np.abs(A - A.T)) > rtol * scale * 1e3:
        raise ValueError(f"{name} is not symmetric.")
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
