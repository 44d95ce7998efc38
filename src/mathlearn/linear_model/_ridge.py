"""Ridge regression: the MAP estimate under a Gaussian prior."""

from __future__ import annotations

from numbers import Real
from typing import ClassVar

import numpy as np

from ..base import _fit_context
from ..utils._backend import is_dask
from ..utils._param_validation import Interval
from ..utils._threads import gram_beside_scipy, matmul_beside_scipy
from ..utils.linalg import solve_psd
from ._base import LinearModel, pow2_scale, prepare_data, validate_xy, weights_or_none
from ._gram import centred_gram

__all__ = ["Ridge"]


def _solve_spd(G, b, name):
    """Solve ``G x = b`` for SPD ``G`` (Cholesky, no jitter: a singular system is an error)."""
    try:
        return solve_psd(G, b, jitter=None, name=name)
    except np.linalg.LinAlgError:
        raise np.linalg.LinAlgError(
            f"{name} is not numerically positive definite; increase alpha."
        ) from None


class Ridge(LinearModel):
    """Ridge regression ``min ||y - X w - w_0||^2 + alpha ||w||^2`` (MAP, Gaussian prior).

    Parameters
    ----------
    alpha : float, default=1.0
        Penalty ``alpha >= 0``. It is scikit-learn's ``alpha`` and the notes'
        ``lambda = sigma^2 / b^2`` (= prior precision / noise precision); the intercept is
        not penalised.
    fit_intercept : bool, default=True

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        ``w_MAP``.
    intercept_ : float
    solver_ : {"primal", "dual"}
        ``"primal"`` solved the ``D x D`` system ``(X^T X + alpha I) w = X^T y``;
        ``"dual"`` (when ``N < D``) the ``N x N`` system ``(X X^T + alpha I) a = y`` with
        ``w = X^T a`` (the push-through / Woodbury identity).
    n_features_in_ : int

    See Also
    --------
    mathlearn.linear_model.LinearRegression
        Without the penalty.
    mathlearn.linear_model.BayesianLinearRegression
        The full posterior.
    sklearn.linear_model.Ridge
        scikit-learn's equivalent.

    Notes
    -----
    With sample weights ``s_n`` each squared residual is weighted; the data are centred
    with the weighted means and each row is multiplied by ``sqrt(s_n)``, which turns the
    weighted problem into an unweighted one. Data whose squares would leave float64
    (``|x| ~ 1e+-300``) are first scaled by a power of two, exactly, with ``alpha`` rescaled
    to match.

    Negative log-posterior ``(1/2 sigma^2) ||y - Phi w||^2 + (1/2 b^2) ||w||^2``
    (Imperial "Mathematics for Inference and Machine Learning" §1.5.4.1, eq. 1.174) has the
    minimiser ``w_MAP = (Phi^T Phi + (sigma^2/b^2) I)^{-1} Phi^T y`` (eq. 1.180; PRML §1.2.5 with
    ``lambda = alpha/beta``). Corrected: Remark 13 of the notes calls lambda "twice the precision";
    it is half of it. The offset is left unpenalised by centring ``X`` and ``y`` (Stuttgart
    "Introduction to Machine Learning" slide 2:15) and recovered as ``w_0 = mean(y) - mean(X) w``.
    The SPD system is solved by Cholesky on the smaller side, never by an inverse.

    Complexity: ``O(N D^2 + D^3)`` time and ``D x D`` memory on the primal side (``N >= D``),
    ``O(N^2 D + N^3)`` time and ``N x N`` memory on the dual side, besides the data.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([1.0, 3.0, 2.0, 5.0])
    >>> Ridge(alpha=0.0).fit(X, y).coef_.round(10)
    array([1.1])
    """

    _parameter_constraints: ClassVar[dict] = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
    }

    def __init__(self, alpha: float = 1.0, *, fit_intercept: bool = True):
        self.alpha = alpha
        self.fit_intercept = fit_intercept

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit the MAP estimate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), float or None, default=None
            Weights ``s_n`` of the squared residuals, ``sum_n s_n (y_n - x_n^T w - w_0)^2
            + alpha ||w||^2`` (a weight ``k`` is ``k`` copies of the sample).

        Returns
        -------
        self
        """
        if is_dask(X):
            return self._fit_dask(X, y, sample_weight)
        # X's finiteness is checked by prepare_data, from the column maxima it needs anyway
        X, y = validate_xy(self, X, y, finite=False)
        sw = weights_or_none(sample_weight, X)
        alpha = float(self.alpha)
        prep = prepare_data(
            X, y, fit_intercept=bool(self.fit_intercept), sample_weight=sw, per_column=False,
            center=False, check_finite_for=self,
        )  # fmt: skip
        Xs, ys = prep.X, prep.y
        g = float(prep.x_scale[0]) if X.shape[1] else 1.0
        if g > 1.0 and alpha > 0:
            # Tiny X: enlarge it only until the penalty is of order one, so that both
            # X^T X and alpha g^2 stay inside float64 (below that the penalty dominates and
            # the unscaled X^T X is negligible anyway).
            g_cap = float(pow2_scale(np.sqrt(alpha)))
            if g_cap < g:
                Xs = Xs * (g_cap / g)
                prep = prep._replace(x_offset=prep.x_offset * (g_cap / g))
                prep = prep._replace(x_scale=np.full(X.shape[1], g_cap))
                g = g_cap
        # ||ys - Xs v||^2 + alpha g^2 ||v||^2 with v = w g / h (X scaled by g, y by h).
        alpha_s = alpha * g * g
        n, m = X.shape
        if prep.sqrt_sw is None:
            xo, yo = prep.x_offset, prep.y_offset
            Xw, yw = Xs, ys
        else:
            r = prep.sqrt_sw
            Xw = (Xs - prep.x_offset) * r[:, None]
            yw = (ys - prep.y_offset) * r
            xo, yo = np.zeros(m), 0.0
        if n >= m:
            G, b = centred_gram(Xw, xo, yw, yo)
            G[np.diag_indices(m)] += alpha_s
            coef = _solve_spd(G, b, "X^T X + alpha I")
            self.solver_ = "primal"
        else:
            Xc = Xw - xo
            # the Gram and the product after the Cholesky solve in SciPy's BLAS, beside its
            # LAPACK (a switch between NumPy's and SciPy's thread pools can stall; see
            # utils._threads.scipy_matmul)
            K = gram_beside_scipy()(Xc)
            K[np.diag_indices(n)] += alpha_s
            coef = matmul_beside_scipy()(Xc.T, _solve_spd(K, yw - yo, "X X^T + alpha I"))
            self.solver_ = "dual"
        self._set_coef(coef, prep)
        return self

    def _fit_dask(self, X, y, sample_weight):
        """The same fit on Dask arrays: the centred Gram matrix summed over row blocks."""
        from ..utils._backend import check_dask_input, dask_sample_weight
        from ._dask import data_scales, first_pass, ridge_stats

        X, y = check_dask_input(self, X, y)
        sw = dask_sample_weight(sample_weight, X)
        n, m = X.shape
        if n < m:
            # A wide design has few rows: the dual N x N system is solved in memory.
            Xn, yn = X.compute(), y.compute()
            return self.fit(Xn, yn, sample_weight=None if sw is None else sw.compute())
        fit_intercept = bool(self.fit_intercept)
        alpha = float(self.alpha)
        col_max, y_max, _, _, sx, sy, sw_sum = first_pass(X, y, sw)
        prep = data_scales(col_max, y_max, per_column=False)
        g = float(prep.x_scale[0])
        h = prep.y_scale
        Xs = X * g if g != 1.0 else X
        ys = y * h if h != 1.0 else y
        if g != 1.0 or h != 1.0:
            # sums of the scaled data (those of the raw data may overflow)
            _, _, _, _, sx, sy, sw_sum = first_pass(Xs, ys, sw)
        if fit_intercept:
            x_offset, y_offset = sx / sw_sum, sy / sw_sum
        else:
            x_offset, y_offset = np.zeros(m), 0.0
        if g > 1.0 and alpha > 0:
            g_cap = float(pow2_scale(np.sqrt(alpha)))
            if g_cap < g:
                Xs = Xs * (g_cap / g)
                x_offset = x_offset * (g_cap / g)
                g = g_cap
        alpha_s = alpha * g * g
        if sw is None:
            xo, yo, Xw, yw = x_offset, y_offset, Xs, ys
        else:
            import dask.array as da

            r = da.sqrt(sw)
            Xw = (Xs - x_offset) * r[:, None]
            yw = (ys - y_offset) * r
            xo, yo = np.zeros(m), 0.0
        G, b = ridge_stats(Xw, yw, xo, yo)
        G[np.diag_indices(m)] += alpha_s
        coef = _solve_spd(G, b, "X^T X + alpha I")
        self.solver_ = "primal"
        prep = prep._replace(x_offset=x_offset, y_offset=y_offset, x_scale=np.full(m, g))
        self._set_coef(coef, prep)
        return self
