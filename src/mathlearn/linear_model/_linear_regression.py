"""Maximum-likelihood linear regression."""

from __future__ import annotations

import warnings
from typing import ClassVar

import numpy as np

from ..base import InformationCriterionMixin, _fit_context, check_is_fitted
from ..exceptions import NumericalWarning
from ..utils._backend import is_dask
from ..utils.validation import check_array
from ._base import LinearModel, prepare_data, validate_xy, weights_or_none
from ._refinement import accurate_lstsq

__all__ = ["LinearRegression"]


class LinearRegression(InformationCriterionMixin, LinearModel):
    """Least squares = maximum likelihood under Gaussian noise, accurate to float64 rounding.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Fit an unpenalised offset ``w_0`` (an implicit column of ones). Set it to ``False``
        when the design already holds a constant feature (e.g. ``PolynomialBasis``).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        ``w_ML``.
    intercept_ : float
        ``w_0`` (0.0 when ``fit_intercept=False``).
    noise_variance_ : float
        ``sigma^2_ML = (1/N) sum_n (y_n - w_ML^T x_n - w_0)^2``, the ML estimate of the notes
        (``1 / beta_ML``); it is biased low by the factor ``(N - p) / N``. With sample
        weights ``s_n`` (frequency weights) the sum is weighted and ``N = sum_n s_n``.
    coef_std_error_ : ndarray of shape (n_features,)
        Standard errors ``sqrt(s^2 [(X^T X)^{-1}]_jj)`` with the unbiased ``s^2 = RSS/(N-p)``
        (``p`` coefficients including the intercept; ``X^T S X`` with weights), the
        classical sampling standard deviation of ``w_ML`` (Stuttgart
        "Introduction to Machine Learning" slides 2:12–2:13). ``inf`` where they are undefined
        (rank-deficient design or ``N <= p``).
    intercept_std_error_ : float
        Standard error of ``intercept_`` (``nan``-free: 0.0 without an intercept).
    rank_ : int
        Numerical rank of the design (with the intercept column).
    n_iter_ : int
        Refinement steps taken (0 for a rank-deficient design, solved by SVD, and for a
        well-conditioned one, whose QR solution needs no refinement).
    n_features_in_ : int
    n_parameters_ : int
        ``rank_ + 1``: the coefficients (with the intercept) and ``sigma^2``, the ``M`` of
        :meth:`aic` and :meth:`bic`.

    See Also
    --------
    mathlearn.linear_model.Ridge
        With an L2 penalty.
    mathlearn.linear_model.BayesianLinearRegression
        With a posterior and the evidence.
    sklearn.linear_model.LinearRegression
        scikit-learn's equivalent.

    Notes
    -----
    Model ``y = x^T w + w_0 + eps``, ``eps ~ N(0, sigma^2)`` (Imperial
    "Mathematics for Inference and Machine Learning" §1.5.1, eq. 1.2, 1.146–1.158; PRML §3.1.1,
    with the log-likelihood corrected as in PRML eq. 3.11). The maximiser is ``w_ML = (X^T X)^{-1}
    X^T y`` (eq. 1.158), which we never compute that way: the design is equilibrated by exact
    powers of two, factorised by Householder QR, and the solution of the augmented system ``[I X;
    X^T 0][r; w] = [y; 0]`` is refined with residuals computed in doubled precision (Björck 1967)
    wherever the a priori error bound of the plain QR solution, ``eps kappa (2 + (kappa + 1) ||r||
    / (||X D|| ||w||))`` with ``kappa`` the condition number of the equilibrated design (LAPACK's
    estimate from ``R``, sharpened by the singular values of ``R`` when it calls for refinement
    and ``R`` is small), exceeds ``2^-48``. The result is the float64 rounding of the exact
    least-squares solution of the given data (to within ``2^-48`` of the largest coefficient
    where refinement is skipped) even when ``cond(X) ~ 1e15`` (raw polynomial features), where
    LAPACK's QR or SVD solvers lose every digit. A numerically rank-deficient design falls back
    to the minimum-norm solution (SVD).

    Cost: ``O(N D^2)`` time for the QR (``D`` features with the intercept), plus ``O(N D)`` per
    refinement step where one runs (a few steps, each about 30 flops per entry of ``X``), and
    ``O(D^3)`` for the singular values of ``R`` when the bound needs them; memory ``O(N D)``
    (one equilibrated copy of ``X``, and its split halves during refinement). ``D > N`` gives
    the minimum-norm solution from the QR of ``X^T`` (with the column of ones) and the SVD of
    its ``N x N`` factor (Golub & Van Loan, "Matrix Computations", §5.6.2), ``O(N^2 D)`` time
    and one copy of ``X``.

    Information criteria: ``aic(X, y)`` and ``bic(X, y)`` use the Gaussian log-likelihood with
    the ML noise variance, ``ln p(y | X) = -(N/2) ln(2 pi sigma^2_ML) - RSS / (2 sigma^2_ML)``,
    which on the training data is ``-(N/2) (ln(2 pi RSS / N) + 1)``, and ``M = rank_ + 1``
    parameters: ``sigma^2`` is counted (statsmodels' ``OLS`` does not count it, so its AIC is
    ours minus 2 and its BIC ours minus ``ln N``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([1.0, 3.0, 2.0, 5.0])
    >>> model = LinearRegression().fit(X, y)
    >>> round(model.intercept_, 10), model.coef_.round(10), round(model.noise_variance_, 10)
    (1.1, array([1.1]), 0.675)
    """

    _parameter_constraints: ClassVar[dict] = {"fit_intercept": ["boolean"]}

    def __init__(self, *, fit_intercept: bool = True):
        self.fit_intercept = fit_intercept

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit by (weighted) least squares.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), float or None, default=None
            Non-negative weights ``s_n`` of the squared residuals; an integer weight is the
            same as repeating the sample, a zero weight the same as leaving it out.

        Returns
        -------
        self
        """
        if is_dask(X):
            return self._fit_dask(X, y, sample_weight)
        # X's finiteness is checked by prepare_data, from the column maxima it needs anyway
        X, y = validate_xy(self, X, y, finite=False)
        sw = weights_or_none(sample_weight, X)
        fit_intercept = bool(self.fit_intercept)
        n, m = X.shape
        # Exact power-of-two scaling of X and y where their squares would leave float64.
        prep = prepare_data(X, y, fit_intercept=False, sample_weight=None, check_finite_for=self)
        A, t = prep.X, prep.y
        if sw is None:
            n_eff = n
            coef, resid, inv_diag, rank, n_iter = accurate_lstsq(A, t, intercept=fit_intercept)
        else:
            # Weighted least squares is ordinary least squares on rows scaled by sqrt(s_n);
            # the offset's column becomes sqrt(s_n) too, so it is passed explicitly.
            n_eff = float(np.sum(sw))
            r = np.sqrt(sw)
            A = A * r[:, None]
            if fit_intercept:
                A = np.hstack([A, r[:, None]])
            coef, resid, inv_diag, rank, n_iter = accurate_lstsq(A, t * r, intercept=False)
        # (einsum rather than NumPy's threaded dot right after SciPy's LAPACK, see
        # utils._threads.scipy_matmul)
        rss = float(np.einsum("i,i->", resid, resid))
        self._store(coef, rss, inv_diag, rank, n_iter, m, n_eff, prep)
        return self

    def _store(self, coef, rss, inv_diag, rank, n_iter, m, n_eff, prep):
        """The fitted attributes from the solution of the scaled problem."""
        fit_intercept = bool(self.fit_intercept)
        k = m + int(fit_intercept)
        self.coef_ = coef[:m] * (prep.x_scale / prep.y_scale)
        self.intercept_ = float(coef[m]) / prep.y_scale if fit_intercept else 0.0
        # Divided twice: y_scale**2 underflows to 0 for targets near 1e+-200 although the
        # variance itself may be representable.
        self.noise_variance_ = rss / n_eff / prep.y_scale / prep.y_scale
        if not np.isfinite(self.noise_variance_):
            warnings.warn(
                "The residual variance of these targets is beyond the range of float64 "
                f"(targets scaled by {prep.y_scale:.3g} to fit), so noise_variance_ is inf; "
                "coef_ and intercept_ are unaffected. Rescale y to use the variance, "
                "the standard errors or the information criteria.",
                NumericalWarning,
                stacklevel=3,
            )
        if inv_diag is None or n_eff <= k:
            se = np.full(k, np.inf)
        else:
            se = np.sqrt(rss / (n_eff - k) * inv_diag) / prep.y_scale
        self.coef_std_error_ = se[:m] * prep.x_scale
        self.intercept_std_error_ = float(se[m]) if fit_intercept else 0.0
        self.rank_ = int(rank)
        self.n_iter_ = int(n_iter)

    def _total_log_likelihood(self, X, y=None) -> float:
        if y is None:
            raise ValueError("LinearRegression.aic / bic need the targets y: aic(X, y).")
        check_is_fitted(self)
        y = check_array(y, ensure_2d=False, dtype=np.float64)
        r = y - self.predict(X)
        if r.shape[0] != y.shape[0] or y.ndim != 1:
            raise ValueError(f"y must have shape ({r.shape[0]},); got {y.shape}.")
        var = float(self.noise_variance_)
        if not (np.isfinite(var) and var > 0):
            raise ValueError(
                f"the ML noise variance is {var}: the fit interpolates the training data (or "
                "its residuals are beyond the float64 range), so the Gaussian log-likelihood "
                "and the information criteria are unbounded."
            )
        # RSS / sigma^2 in scaled form, so that residuals of magnitude 1e200 do not overflow.
        s = float(np.max(np.abs(r))) if r.size else 0.0
        ratio = 0.0 if s == 0.0 else float(np.sum((r / s) ** 2)) * (s / np.sqrt(var)) ** 2
        n = r.shape[0]
        return -0.5 * n * np.log(2 * np.pi) - 0.5 * n * np.log(var) - 0.5 * ratio

    def _n_parameters(self) -> int:
        return int(self.rank_) + 1

    def _fit_dask(self, X, y, sample_weight):
        """The same fit on Dask arrays: TSQR and refinement by row blocks (see ``_dask``)."""
        from ..utils._backend import check_dask_input, dask_sample_weight
        from ._dask import accurate_lstsq_dask, data_scales, lstsq_first_pass

        X, y = check_dask_input(self, X, y)
        sw = dask_sample_weight(sample_weight, X)
        fit_intercept = bool(self.fit_intercept)
        n, m = X.shape
        # One pass: validation, scales, column sums of squares and the local QR factors of
        # the unscaled design (see lstsq_first_pass), used where no scaling is needed.
        stats, first = lstsq_first_pass(X, y, sw, intercept=fit_intercept)
        col_max, y_max, _, sumsq, _, _, sw_sum = stats
        prep = data_scales(col_max, y_max, per_column=True)
        scaled = np.any(prep.x_scale != 1.0)
        A = X * prep.x_scale if scaled else X
        t = y * prep.y_scale if prep.y_scale != 1.0 else y
        if sw is None:
            n_eff = n
            intercept = fit_intercept
        else:
            import dask.array as da

            n_eff = sw_sum
            r = da.sqrt(sw)
            A = A * r[:, None]
            t = t * r
            if fit_intercept:
                A = da.concatenate([A, r[:, None]], axis=1).rechunk({1: -1})
                sumsq = np.append(sumsq, sw_sum)
            intercept = False
        if scaled or prep.y_scale != 1.0 or not _in_safe_range(sumsq, first):
            first = None
        coef, rss, inv_diag, rank, n_iter = accurate_lstsq_dask(
            A, t, intercept=intercept, sumsq=None if scaled else sumsq, first=first
        )
        self._store(coef, rss, inv_diag, rank, n_iter, m, n_eff, prep)
        return self


def _in_safe_range(sumsq, first) -> bool:
    """Whether the QR of the unscaled design met no underflow or overflow that its
    equilibrated version would not: finite factors, column norms within ``2^+-480``."""
    norms = np.sqrt(sumsq)
    nz = norms[norms > 0]
    if not (np.all(np.isfinite(norms)) and np.all((nz > 2.0**-480) & (nz < 2.0**480))):
        return False
    return all(
        np.isfinite(p[1]) and np.all(np.isfinite(p[0])) and np.all(np.isfinite(p[2]))
        for p in first
    )
