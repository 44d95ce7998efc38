r"""Effective degrees of freedom of ridge regression.

Stuttgart "Introduction to Machine Learning" slides 2:15-2:16 (and Hastie, Tibshirani and
Friedman, *The Elements of Statistical Learning*, eq. 3.50): with the centred design
``X_c = U D V^T`` (singular values ``d_j``), the ridge fit is ``y_hat = H_lambda y`` with the
hat matrix ``H_lambda = X_c (X_c^T X_c + lambda I)^{-1} X_c^T``, and

.. math::

    \mathrm{df}(\lambda) = \operatorname{tr} H_\lambda = \sum_j \frac{d_j^2}{d_j^2 + \lambda},

which falls from the rank of ``X_c`` at ``lambda = 0`` (least squares) to 0 as
``lambda -> infinity``. The unpenalised intercept adds one more degree of freedom.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

from ..utils._param_validation import Interval, validate_params
from ..utils._rowscale import unit_of
from ..utils.validation import check_array

__all__ = ["ridge_degrees_of_freedom"]


@validate_params(
    {
        "X": ["array-like"],
        "alpha": [Interval(Real, 0.0, None, closed="left"), "array-like"],
        "fit_intercept": ["boolean"],
    }
)
def ridge_degrees_of_freedom(X, alpha, *, fit_intercept: bool = True):
    """Effective degrees of freedom ``df(lambda) = tr H_lambda`` of ridge regression.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The design.
    alpha : float or array-like of shape (n_alphas,)
        The penalty ``lambda >= 0`` of :class:`Ridge` (``alpha``), one or several.
    fit_intercept : bool, default=True
        Centre the columns first (the intercept is not penalised) and count the intercept's
        degree of freedom, as :class:`Ridge` with ``fit_intercept=True`` fits.

    Returns
    -------
    df : float or ndarray of shape (n_alphas,)
        ``sum_j d_j^2 / (d_j^2 + lambda)`` over the singular values ``d_j`` of the (centred)
        design, plus 1 with ``fit_intercept``. At ``lambda = 0`` it is the rank (plus 1).

    See Also
    --------
    Ridge : The estimator whose hat matrix this is the trace of.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" slides 2:15-2:16; The Elements of
    Statistical Learning, eq. 3.50. The singular values come from the design divided by a
    power of two near its largest entry (exact), so designs at scales near ``1e+-300``
    give the same ``df`` as at scale 1 for correspondingly scaled ``lambda``; singular
    values below ``max(n, d) eps d_max`` count as zero (the numerical rank).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linear_model import ridge_degrees_of_freedom
    >>> X = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    >>> float(ridge_degrees_of_freedom(X, 0.0, fit_intercept=False))  # the rank
    2.0
    >>> float(ridge_degrees_of_freedom(X, 1.0, fit_intercept=False))  # 1/2 + 4/5
    1.3
    """
    X = check_array(X, dtype=np.float64)
    alphas = np.asarray(alpha, dtype=np.float64)
    if not np.all(np.isfinite(alphas)) or np.any(alphas < 0):
        raise ValueError(f"alpha must be finite and non-negative; got {alpha!r}.")
    if fit_intercept:
        X = X - X.mean(axis=0)
        X = X - X.mean(axis=0)  # the mean of the centred columns, for data far from 0
    unit = unit_of(X)
    d = np.linalg.svd(X / unit, compute_uv=False)
    if d.size:
        d = d[d > max(X.shape) * np.finfo(float).eps * d[0]]
    d2 = d * d
    with np.errstate(over="ignore"):
        lam = alphas / unit / unit  # in the units of X / unit (inf: df contribution 0)
    # d2 > 0 after the rank cut, so lambda = 0 gives 1 per direction and lambda = inf 0.
    df = (d2 / (d2 + lam[..., None])).sum(axis=-1) + (1.0 if fit_intercept else 0.0)
    return float(df) if np.ndim(alpha) == 0 else df
