"""Shared pieces of the kernel tests: input checks, the median heuristic, the kernel."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import pdist

from ..kernels import RBF, Kernel, get_kernel
from ..utils._param_validation import validate_params
from ..utils.validation import all_finite, check_array

__all__ = ["median_heuristic"]


def as_samples(X, name: str, min_samples: int) -> np.ndarray:
    """A finite 2-D float array; a 1-D input is one feature (``(n,)`` -> ``(n, 1)``)."""
    X = check_array(X, ensure_2d=False, dtype=np.float64, input_name=name)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D (n_samples, n_features); got {X.shape}.")
    if X.shape[0] < min_samples:
        raise ValueError(
            f"{name} needs at least {min_samples} samples for this statistic; got "
            f"n_samples = {X.shape[0]}."
        )
    return X


@validate_params({"X": ["array-like"], "Y": ["array-like", None]})
def median_heuristic(X, Y=None) -> float:
    """The median heuristic for the RBF length scale: the median pairwise distance.

    ``l = median{ ||z_i - z_j|| : i < j }`` over the pooled sample ``Z = [X; Y]`` (Gretton
    et al., "A kernel two-sample test", JMLR 2012, §8), the length scale of
    ``k(x, y) = exp(-||x - y||^2 / (2 l^2))``. If more than half of the pairs coincide, the
    median of the positive distances is used instead.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features) or (n_samples,)
    Y : array-like of shape (m_samples, n_features) or (m_samples,), optional

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Fewer than two points, NaN/inf, or all points equal (no scale to take).

    Examples
    --------
    >>> from mathlearn.stats import median_heuristic
    >>> median_heuristic([0.0, 1.0, 3.0])
    2.0
    """
    Z = as_samples(X, "X", 1)
    if Y is not None:
        Y = as_samples(Y, "Y", 1)
        if Y.shape[1] != Z.shape[1]:
            raise ValueError(
                f"X and Y have {Z.shape[1]} and {Y.shape[1]} features; they must match."
            )
        Z = np.vstack([Z, Y])
    if Z.shape[0] < 2:
        raise ValueError("the median heuristic needs at least 2 points.")
    d = pdist(Z)
    med = float(np.median(d))
    if med == 0.0:
        pos = d[d > 0]
        if pos.size == 0:
            raise ValueError(
                "all points coincide: the median heuristic has no scale; give a kernel."
            )
        med = float(np.median(pos))
    return med


def resolve_kernel(kernel, *samples) -> Kernel:
    """``None``: RBF with the median heuristic on ``samples``; a name or object: a copy."""
    if kernel is None:
        return RBF(median_heuristic(*samples), length_scale_bounds="fixed")
    return get_kernel(kernel)


def gram(kernel: Kernel, X, Y=None) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        K = kernel(X, Y)
    if not all_finite(K):
        raise ValueError("the kernel matrix is not finite (overflow): rescale the data.")
    return K


def permutation_pvalue(statistic: float, null: np.ndarray) -> float:
    """``(1 + #{null >= statistic}) / (1 + B)``: exactly valid for ``B`` random permutations.

    The observed statistic and the ``B`` permuted ones are exchangeable under the null, so the
    rank of the observed one is uniform; counting it in numerator and denominator makes
    ``P(p <= a) <= a`` for every ``a`` (Phipson & Smyth 2010). A relative slack of ``1e-12``
    counts permuted values equal to the observed one up to rounding as ties.
    """
    slack = 1e-12 * max(abs(statistic), float(np.max(np.abs(null))) if null.size else 0.0)
    return float((1 + np.count_nonzero(null >= statistic - slack)) / (1 + null.size))
