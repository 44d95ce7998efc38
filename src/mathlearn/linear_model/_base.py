"""What every linear model shares: preparing the data, recovering the offset, predicting.

A linear model predicts ``y = X w + w_0``. Fitting the unpenalised offset ``w_0`` is done by
centring: with (weighted) means ``x_bar``, ``y_bar`` the slopes solve the problem on
``X - x_bar``, ``y - y_bar`` without an offset, and ``w_0 = y_bar - x_bar^T w`` (Stuttgart
"Introduction to Machine Learning" slide 2:15; the centring lemma of least squares). Sample weights
``s_n`` turn the squared loss ``sum_n (y_n - x_n^T w - w_0)^2`` into ``sum_n s_n (...)^2``: after
centring with the weighted means, multiplying each row of the centred data by ``sqrt(s_n)`` reduces
weighted least squares to ordinary least squares (a weight ``k`` is the same as ``k`` copies of the
row, and a weight 0 the same as leaving it out).

Extreme scales: squaring an entry of ``1e300`` overflows, and of ``1e-300`` underflows, so
Gram matrices, norms and step sizes of such data are wrong in float64 even though the
least-squares problem itself is well posed (it is invariant under scaling). Before any such
computation the data are multiplied by powers of two, which is exact, chosen so that the
largest magnitude is about one; the coefficients are mapped back at the end (also exactly,
unless the answer itself is not representable).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..base import BaseEstimator, RegressorMixin, check_is_fitted
from ..utils._backend import is_dask
from ..utils._columns import column_max_abs, column_means
from ..utils._rowscale import _SAFE_HIGH, _SAFE_LOW, pow2_scale
from ..utils.validation import assert_all_finite, check_sample_weight, validate_data

__all__ = [
    "LinearModel",
    "Prepared",
    "pow2_scale",
    "prepare_data",
    "validate_xy",
]


def validate_xy(estimator, X, y, *, reset: bool = True, finite: bool = True):
    """Float64 ``X`` (2-D) and finite ``y`` (1-D), as scikit-learn validates them; ``X``
    finite too unless ``finite=False``, for callers whose next step is
    ``prepare_data(..., check_finite_for=estimator)``, which checks it from the column maxima it
    computes anyway (one pass over ``X`` fewer)."""
    return validate_data(
        estimator, X, y, y_numeric=True, dtype=np.float64, reset=reset, ensure_all_finite=finite
    )


def _needs_scaling(amax) -> bool:
    amax = np.asarray(amax)
    nz = amax[amax > 0]
    return bool(nz.size) and bool(np.any((nz < _SAFE_LOW) | (nz > _SAFE_HIGH)))


class Prepared(NamedTuple):
    """Data ready for a solver, and what is needed to map its solution back.

    ``X`` and ``y`` are the scaled data, centred (when an offset is fitted) and multiplied
    row-wise by ``sqrt(sample_weight)`` (when weights are given). A solution ``v`` of the
    prepared problem gives ``coef = v * x_scale / y_scale`` and ``intercept = (y_offset -
    x_offset @ v) / y_scale`` (see :meth:`LinearModel._set_coef`). An ``x_scale`` or
    ``x_offset`` with one value for every column (no scaling, one scale for all, no offset)
    is a read-only broadcast of that value: no array of ``D`` entries beside a solver's own.
    """

    X: np.ndarray
    y: np.ndarray
    x_offset: np.ndarray
    y_offset: float
    x_scale: np.ndarray
    y_scale: float
    sqrt_sw: np.ndarray | None
    sw_sum: float


def prepare_data(
    X,
    y,
    *,
    fit_intercept: bool,
    sample_weight=None,
    per_column: bool = True,
    center: bool = True,
    order: str = "C",
    check_finite_for=None,
) -> Prepared:
    """Scale (exactly, only when needed), centre and weight ``X`` and ``y``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), float64
    fit_intercept : bool
        Centre with the (weighted) means.
    sample_weight : ndarray of shape (n_samples,) or None
        Validated weights (see :func:`mathlearn.utils.validation.check_sample_weight`);
        ``None`` is unit weight without any copy.
    per_column : bool, default=True
        Scale each column on its own (least squares is invariant under it); ``False``
        uses one factor for all of ``X``, for models whose penalty is isotropic.
    center : bool, default=True
        ``False`` returns the offsets but leaves ``X`` uncentred (for solvers that centre
        on the fly); the weights are then not applied to ``X`` either.
    order : {"C", "F"}
        Memory order of the returned ``X`` when it is a copy.
    check_finite_for : estimator or None, default=None
        Given, raise scikit-learn's error (naming this estimator) for NaN or infinite entries
        of ``X``, seen in the column maxima and minima, which propagate them: for ``X``
        validated with ``validate_xy(..., finite=False)``.

    Returns
    -------
    Prepared
    """
    n, m = X.shape
    x_scale = np.broadcast_to(1.0, (m,))
    y_scale = 1.0
    # A column-ordered result is a copy in any case except for X already column-ordered and
    # used as it is: make that copy first, then scale and centre it in place, so that the
    # column statistics below run down contiguous columns (a row-ordered X is reduced over
    # its rows in folded runs instead, see mathlearn.utils._columns).
    own = (
        center
        and order == "F"
        and n > 0
        and m > 0
        and (fit_intercept or sample_weight is not None or not X.flags.f_contiguous)
    )
    if own:
        X = np.array(X, order="F", copy=True)
    if n:
        col_max = column_max_abs(X)
        if check_finite_for is not None and not np.isfinite(col_max).all():
            name = type(check_finite_for).__name__
            assert_all_finite(X, input_name="X", estimator_name=name)
        if _needs_scaling(col_max):
            x_scale = (
                pow2_scale(col_max)
                if per_column
                else np.broadcast_to(float(pow2_scale(col_max.max())), (m,))
            )
        y_max = float(np.max(np.abs(y)))
        if _needs_scaling(y_max):
            y_scale = float(pow2_scale(y_max))
    scaled = np.any(x_scale != 1.0)
    if own:
        if scaled:
            X *= x_scale
        Xs = X
    else:
        Xs = X * x_scale if scaled else X
    ys = y * y_scale if y_scale != 1.0 else y
    if sample_weight is None:
        sw_sum = float(n)
        if fit_intercept:
            x_offset = column_means(Xs)
            y_offset = float(ys.mean())
        sqrt_sw = None
    else:
        sw_sum = float(np.sum(sample_weight))
        if fit_intercept:
            x_offset = (sample_weight @ Xs) / sw_sum
            y_offset = float(sample_weight @ ys) / sw_sum
        sqrt_sw = np.sqrt(sample_weight)
    if not fit_intercept:
        x_offset = np.broadcast_to(0.0, (m,))
        y_offset = 0.0
    if center:
        if fit_intercept or sqrt_sw is not None:
            if own:
                Xc = Xs
                Xc -= x_offset
            else:
                Xc = np.subtract(Xs, x_offset, out=np.empty(X.shape, order=order))
            yc = ys - y_offset
            if sqrt_sw is not None:
                Xc *= sqrt_sw[:, None]
                yc = yc * sqrt_sw
        else:
            Xc = Xs if own else np.asarray(Xs, order=order)
            yc = ys
    else:
        Xc, yc = Xs, ys
    return Prepared(Xc, yc, x_offset, y_offset, x_scale, y_scale, sqrt_sw, sw_sum)


class LinearModel(RegressorMixin, BaseEstimator):
    """Base of the linear regressors: ``coef_``, ``intercept_`` and ``predict``.

    A subclass fits on the output of :func:`prepare_data` and calls :meth:`_set_coef` with
    the solution of the prepared problem; ``predict`` is ``X coef_ + intercept_``.
    """

    def _set_coef(self, coef, prep: Prepared) -> None:
        """Map a solution of the prepared problem back to ``coef_`` and ``intercept_``."""
        coef = np.asarray(coef, dtype=np.float64)
        intercept = prep.y_offset - float(prep.x_offset @ coef)
        with np.errstate(over="raise", under="ignore"):
            try:
                self.coef_ = coef * (prep.x_scale / prep.y_scale)
                self.intercept_ = float(intercept / prep.y_scale)
            except FloatingPointError:
                raise ValueError(
                    f"{type(self).__name__}: the coefficients of this fit are outside the "
                    "range of float64 (the scales of X and y are too far apart); rescale X "
                    "or y."
                ) from None

    def _decision_function(self, X):
        check_is_fitted(self)
        if is_dask(X):
            from ._dask import predict_dask

            coef, intercept = self.coef_, self.intercept_
            return predict_dask(self, X, lambda B: B @ coef + intercept)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_

    def predict(self, X):
        """Predicted means ``X w + w_0``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return self._decision_function(X)


def weights_or_none(sample_weight, X):
    """Validated weights, or ``None`` for unit weights (so unweighted fits copy nothing)."""
    if sample_weight is None:
        return None
    return check_sample_weight(sample_weight, X)
