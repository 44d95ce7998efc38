"""The lasso by cyclic coordinate descent with a duality-gap stopping rule.

Objective (scikit-learn's scaling, so that ``alpha`` means the same in both libraries):

    (1 / (2N)) ||y - X w - w_0||^2 + alpha ||w||_1.

Stuttgart "Introduction to Machine Learning" slides 2:19–2:21 give the lasso without an algorithm
("can be found by solving a quadratic program"); Imperial
"Mathematics for Inference and Machine Learning" §1.5.3, footnote 31, names it. Each
coordinate step minimises exactly over one weight: with ``rho_j = x_j^T (r + x_j w_j)`` the
new weight is ``S(rho_j, N alpha) / ||x_j||^2``, ``S(a, t) = sign(a) max(|a| - t, 0)``
(soft thresholding). A single fit sweeps over the residual (``O(N)`` per coordinate); a
path with ``N >= D`` sweeps on the Gram matrix ``X^T X`` (one ``O(N D^2)`` product shared by
all alphas, then ``O(D)`` per coordinate). Convergence
is certified by the duality gap of Kim et al. / Friedman et al., as scikit-learn does.

Sweeps over the residual screen features by the gap safe rule (Fercoq, Gramfort & Salmon,
"Mind the duality gap: safer rules for the lasso", ICML 2015): the dual optimum lies in
the ball of radius ``sqrt(2 G) / (N alpha)`` around the dual point of the current residual
(``G`` the duality gap of the unscaled objective), so a feature with ``|x_j^T theta| +
radius ||x_j|| < 1`` has a zero weight at the optimum and is dropped from later sweeps; the
screening runs at every gap evaluation and every 10 sweeps, an interval that doubles (up to
1 280 sweeps) after each screening that removes nothing, since a gap evaluation costs about
as much as a sweep and cannot remove anything while the gap is large. Along a path (warm starts,
a support that changes little) sweeps over the working set of nonzero weights run between
full sweeps until those settle, each counted against ``max_iter`` as its share of a full
sweep (a cold single fit sweeps every kept feature: there the working set can stall while
the support is still wrong). Neither changes the
optimum; the gap that stops the iteration is checked over every feature. These run in the
compiled helper ``mathlearn._ext._cd`` (without it: NumPy on the Gram matrix for at most 32
features, the numba kernels of ``_cd_kernels`` for more).
"""

from __future__ import annotations

import ctypes
import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from .. import _ext
from ..base import _fit_context
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, validate_parameter_constraints, validate_params
from ..utils.validation import check_array
from ._base import LinearModel, prepare_data, validate_xy, weights_or_none

__all__ = ["ElasticNet", "Lasso", "lasso_path"]


def _gap(r2, ry, l1, dual_norm, alpha_n):
    """Duality gap at the dual point ``nu = r * min(1, N alpha / ||X^T r||_inf)``."""
    if dual_norm > alpha_n:
        const = alpha_n / dual_norm
        gap = 0.5 * (r2 + r2 * const * const)
    else:
        const = 1.0
        gap = r2
    return gap + alpha_n * l1 - const * ry


def _cd_gram_numpy(G, Xty, yty, w, alpha_n, max_iter, tol, positive, X=None, y=None):
    """Coordinate descent on the Gram matrix in Python and NumPy; ``w`` is updated in place.

    The same iteration and stopping rule as the compiled kernel; with few features each
    coordinate step is a handful of scalar operations and one length-``D`` update of
    ``q = X^T r``, so no compilation is needed. Given ``X`` and ``y``, the duality gap is
    computed from the residual ``r = y - X w`` itself (as the compiled residual route does),
    free of the cancellation in ``y^T y - w^T X^T y - w^T q`` near convergence.
    """
    m = w.shape[0]
    q = Xty - G @ w  # X^T r
    diag = np.diag(G).tolist()
    rows = list(G)  # G is symmetric: row j is column j, contiguous
    gap = tol + 1.0
    n_iter = 0
    for it in range(max_iter):
        n_iter = it + 1
        w_max = 0.0
        d_w_max = 0.0
        for j in range(m):
            gjj = diag[j]
            if gjj == 0.0:
                continue
            w_j = float(w[j])
            rho = float(q[j]) + gjj * w_j
            if rho > alpha_n:
                new = (rho - alpha_n) / gjj
            elif rho < -alpha_n and not positive:
                new = (rho + alpha_n) / gjj
            else:
                new = 0.0
            delta = new - w_j
            if delta != 0.0:
                q -= rows[j] * delta
                w[j] = new
            d_w_max = max(d_w_max, abs(delta))
            w_max = max(w_max, abs(new))
        if w_max == 0.0 or d_w_max / w_max < tol or it == max_iter - 1:
            # recompute q from scratch so that rounding drift cannot fake convergence
            if X is None:
                q = Xty - G @ w
                wXty = float(w @ Xty)
                r2 = max(yty - wXty - float(w @ q), 0.0)
                ry = yty - wXty
            else:
                r = y - X @ w
                q = X.T @ r
                r2 = float(r @ r)
                ry = float(r @ y)
            dual_norm = float(np.max(q if positive else np.abs(q), initial=0.0))
            gap = _gap(r2, ry, float(np.abs(w).sum()), dual_norm, alpha_n)
            if gap < tol * max(yty, 1e-300):
                break
    return gap, n_iter


# Without the compiled helper, problems with at most this many features are solved on the
# Gram matrix by the NumPy route (each sweep costs O(D) Python steps whatever N); wider ones
# by the numba kernels.
_NUMPY_MAX_FEATURES = 32


def _compiled_cd():
    """The compiled coordinate descent of :mod:`mathlearn._ext` (``_cd.c``), or None where it
    was not built (the NumPy and numba routes then compute the same thing)."""
    lib = _ext.load("_cd")
    if lib is None:
        return None
    if lib.cd_residual.argtypes is None:
        i64, dbl, ptr, c_int = ctypes.c_int64, ctypes.c_double, ctypes.c_void_p, ctypes.c_int
        lib.cd_residual.restype = i64
        lib.cd_residual.argtypes = [i64, i64, ptr, ptr, ptr, ptr, dbl, i64, dbl, c_int, c_int]
        lib.cd_residual.argtypes += [ptr] * 4
        lib.cd_residual_enet.restype = i64
        lib.cd_residual_enet.argtypes = [i64, i64, ptr, ptr, ptr, ptr, dbl, dbl, i64, dbl]
        lib.cd_residual_enet.argtypes += [c_int, c_int] + [ptr] * 4
        lib.cd_gram.restype = i64
        lib.cd_gram.argtypes = [i64, ptr, ptr, dbl, ptr, dbl, i64, dbl, c_int, i64]
        lib.cd_gram.argtypes += [ptr] * 6
    return lib


class _Problem:
    """The data of one lasso problem, prepared once for any number of alphas.

    Routes: the compiled helper ``_ext._cd`` (sweeps over the residual with gap safe
    screening, or over the Gram matrix); without it, NumPy on the Gram matrix for few
    features and the numba kernels of ``_cd_kernels`` for more.

    ``ridge = b > 0`` adds ``(b / 2) ||w||^2`` (the elastic net): the lasso on ``X`` augmented
    by the rows ``sqrt(b) I`` with targets 0. The compiled residual route solves it without
    forming those rows (``_cd.c``); the other routes are given the augmented data.
    """

    def __init__(self, X, y, use_gram, n_eff=None, ridge=0.0):
        self.n, self.m = X.shape
        if n_eff is not None:
            # weighted rows (scaled by sqrt(s_n)): the 1/(2N) of the objective is 1/(2 sum s)
            self.n = n_eff
        self.yty = float(y @ y)  # the augmented targets are 0
        self.lib = _compiled_cd()
        self.ridge = float(ridge)
        if self.ridge > 0 and (self.lib is None or use_gram):
            X = np.vstack([X, np.sqrt(self.ridge) * np.eye(self.m)])
            y = np.concatenate([y, np.zeros(self.m)])
            self.ridge = 0.0
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.compiled = self.lib is not None or self.m > _NUMPY_MAX_FEATURES
        self.use_gram = use_gram or not self.compiled
        if self.use_gram:
            self.G = np.ascontiguousarray(X.T @ X)
            self.Xty = X.T @ y
        # the residual route, the NumPy route's gap and the compiled Gram route's check of a
        # gap near rounding level need X by columns
        if not self.use_gram or not self.compiled or self.lib is not None:
            self.X = np.asfortranarray(X)
        if self.lib is not None:
            rows = X.shape[0]
            if not self.use_gram:
                # squared column norms (of the augmented columns), once for every alpha
                self.norms2 = np.einsum("ij,ij->j", self.X, self.X) + self.ridge
                self.work = (np.empty(rows), np.empty(self.m), np.empty(2 * self.m, np.int64))
            else:
                self.work = (np.empty(self.m), np.empty(self.m), np.empty(rows))

    def solve(self, w, alpha, max_iter, tol, positive=False, working_set=False):
        alpha_n = alpha * self.n
        if self.lib is not None:
            gap = np.empty(1)
            p = [a.ctypes.data for a in self.work]
            if self.use_gram:
                n_iter = self.lib.cd_gram(
                    self.m, self.G.ctypes.data, self.Xty.ctypes.data, self.yty, w.ctypes.data,
                    alpha_n, max_iter, tol, positive, self.X.shape[0], self.X.ctypes.data,
                    self.y.ctypes.data, *p, gap.ctypes.data,
                )  # fmt: skip
            elif self.ridge > 0:
                n_iter = self.lib.cd_residual_enet(
                    self.X.shape[0], self.m, self.X.ctypes.data, self.y.ctypes.data,
                    self.norms2.ctypes.data, w.ctypes.data, alpha_n, self.ridge, max_iter,
                    tol, positive, 1 + 2 * bool(working_set), *p, gap.ctypes.data,
                )  # fmt: skip
            else:
                n_iter = self.lib.cd_residual(
                    self.X.shape[0], self.m, self.X.ctypes.data, self.y.ctypes.data,
                    self.norms2.ctypes.data, w.ctypes.data, alpha_n, max_iter, tol, positive,
                    1 + 2 * bool(working_set), *p, gap.ctypes.data,
                )  # fmt: skip
            return float(gap[0]), int(n_iter)
        if not self.compiled:
            args = (self.G, self.Xty, self.yty, w, alpha_n, max_iter, tol, positive)
            return _cd_gram_numpy(*args, X=self.X, y=self.y)
        from ._cd_kernels import _cd_gram, _cd_residual

        if self.use_gram:
            return _cd_gram(self.G, self.Xty, self.yty, w, alpha_n, max_iter, tol, positive)
        return _cd_residual(self.X, self.y, w, alpha_n, max_iter, tol, positive)


def _warn_not_converged(gap, tol_abs, alpha):
    warnings.warn(
        f"Coordinate descent did not converge for alpha={alpha:.4g}: duality gap {gap:.3g} "
        f"> tolerance {tol_abs:.3g}. Increase max_iter or tol.",
        ConvergenceWarning,
        stacklevel=3,
    )


_N_ALPHAS = {"n_alphas": [Interval(Integral, 1, None, closed="left")]}


@validate_params(
    {
        "X": ["array-like"],
        "y": ["array-like"],
        # an int is the number of alphas (scikit-learn >= 1.7's spelling of n_alphas)
        "alphas": ["array-like", Interval(Integral, None, None, closed="neither"), None],
        **_N_ALPHAS,
        "eps": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "positive": ["boolean"],
    }
)
def lasso_path(
    X,
    y,
    *,
    alphas=None,
    n_alphas: int = 100,
    eps: float = 1e-3,
    max_iter: int = 1000,
    tol: float = 1e-4,
    positive: bool = False,
):
    """Lasso solutions along a decreasing grid of ``alpha`` with warm starts.

    No intercept is fitted (centre ``X`` and ``y`` first for one), as in scikit-learn's
    ``lasso_path``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    alphas : array-like or int, default=None
        Penalties; sorted in decreasing order. Default: ``n_alphas`` values log-spaced from
        ``alpha_max = ||X^T y||_inf / N`` (``max_j x_j^T y / N`` with ``positive``; the
        smallest alpha with ``w = 0``) down to
        ``eps * alpha_max``. An int is the number of such values (scikit-learn >= 1.7
        spells ``n_alphas`` this way).
    n_alphas : int, default=100
    eps : float, default=1e-3
    max_iter : int, default=1000
        Maximum coordinate sweeps per alpha.
    tol : float, default=1e-4
        Stop when the duality gap of the unscaled objective
        ``(1/2) ||y - X w||^2 + N alpha ||w||_1`` is below ``tol * ||y||^2``.
    positive : bool, default=False
        Constrain the weights to ``w >= 0``.

    Returns
    -------
    alphas : ndarray of shape (n_alphas,)
    coefs : ndarray of shape (n_features, n_alphas)
    dual_gaps : ndarray of shape (n_alphas,)
        Duality gaps of the ``(1/(2N))``-scaled objective, as scikit-learn reports them.

    Notes
    -----
    Cyclic coordinate descent with warm starts along the grid (see the module docstring).
    Time: for ``N >= D`` one ``O(N D^2)`` Gram matrix, then ``O(D^2)`` per sweep; for
    ``N < D``, ``O(N D)`` per sweep over every feature and ``O(N |A|)`` per sweep over the
    ``|A|`` features the gap safe screening keeps (or over the working set of nonzero
    weights, at most ``N`` at the end of a path in practice). Memory: ``O(N D)`` (one
    column-ordered copy of ``X``), plus ``O(D^2)`` for the Gram matrix.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]); y = np.array([1.0, 0.0, 1.0])
    >>> alphas, coefs, gaps = lasso_path(X, y, n_alphas=3)
    >>> coefs.shape
    (2, 3)
    """
    X = check_array(X, dtype=np.float64)
    y = check_array(y, dtype=np.float64, ensure_2d=False)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must have shape ({X.shape[0]},); got {y.shape}.")
    n = X.shape[0]
    if isinstance(alphas, Integral):
        n_alphas, alphas = alphas, None
        validate_parameter_constraints(_N_ALPHAS, {"n_alphas": n_alphas}, "lasso_path")
    # Exact power-of-two scaling where squares would leave float64 (X or y ~ 1e+-300):
    # with Xs = g X, ys = h y and v = h w / g the problem is the lasso with alpha g h. Every
    # route needs X by columns (see _Problem): the copy is made first and scaled in place.
    prep = prepare_data(X, y, fit_intercept=False, per_column=False, order="F")
    Xs, ys = prep.X, prep.y
    gh = float(prep.x_scale[0] if X.shape[1] else 1.0) * prep.y_scale
    if alphas is None:
        Xty = Xs.T @ ys
        # the smallest alpha whose solution is w = 0 (only positive correlations count
        # when w >= 0)
        alpha_max = float(np.max(Xty if positive else np.abs(Xty))) / n  # scaled units
        del Xty
        if alpha_max <= np.finfo(float).resolution:
            alphas = np.full(n_alphas, np.finfo(float).resolution / gh)
        else:
            alpha_max /= gh
            alphas = np.geomspace(alpha_max, alpha_max * eps, n_alphas)
    else:
        alphas = np.sort(np.asarray(alphas, dtype=float).ravel())[::-1]
        if alphas.size == 0 or not np.all(np.isfinite(alphas)) or np.any(alphas <= 0):
            raise ValueError("alphas must be a non-empty array of finite values > 0.")
    # Many alphas amortise the O(N D^2) Gram matrix when N >= D (scikit-learn's 'auto').
    problem = _Problem(Xs, ys, use_gram=X.shape[0] >= X.shape[1])
    w = np.zeros(X.shape[1])
    coefs = np.empty((X.shape[1], alphas.shape[0]))
    gaps = np.empty(alphas.shape[0])
    # one scale for every column (per_column=False)
    back = (float(prep.x_scale[0]) if X.shape[1] else 1.0) / prep.y_scale
    for k, alpha in enumerate(alphas):
        gap, _ = problem.solve(w, float(alpha) * gh, max_iter, tol, positive, working_set=True)
        if gap >= tol * max(problem.yty, 1e-300):
            _warn_not_converged(gap / prep.y_scale**2, tol * problem.yty / prep.y_scale**2, alpha)
        np.multiply(w, back, out=coefs[:, k])
        gaps[k] = gap / problem.n / prep.y_scale**2
    return alphas, coefs, gaps


class Lasso(LinearModel):
    """L1-penalised least squares by coordinate descent.

    Minimises ``(1 / (2N)) ||y - X w - w_0||^2 + alpha ||w||_1`` (scikit-learn's scaling);
    the intercept ``w_0`` is not penalised.

    Parameters
    ----------
    alpha : float, default=1.0
        Penalty ``alpha > 0``. In the notes' unscaled form ``||y - X w||^2 + lambda ||w||_1``
        (Stuttgart "Introduction to Machine Learning" slide 2:19), ``lambda = 2 N alpha``.
    fit_intercept : bool, default=True
    max_iter : int, default=1000
        Maximum number of coordinate sweeps.
    tol : float, default=1e-4
        Stop when the duality gap of the unscaled objective
        ``(1/2) ||y - X w - w_0||^2 + N alpha ||w||_1`` is below ``tol * ||y - mean(y)||^2``
        (scikit-learn's rule).
    warm_start : bool, default=False
        Start from the previous ``coef_`` (useful along a path of alphas).
    positive : bool, default=False
        Constrain the weights to ``w >= 0`` (the coordinate step clips at zero; the dual
        constraint becomes ``x_j^T r <= N alpha``).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    dual_gap_ : float
        Duality gap at the solution in the ``(1/(2N))``-scaled objective above (the
        unscaled gap divided by ``N``), as scikit-learn reports it.
    n_iter_ : int
        Coordinate sweeps run.
    n_features_in_ : int

    See Also
    --------
    mathlearn.linear_model.ElasticNet
        L1 plus L2 penalties.
    mathlearn.linear_model.lasso_path
        The solutions along the penalty.
    sklearn.linear_model.Lasso
        scikit-learn's equivalent.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" slides 2:19–2:21 (lasso;
    sparsity figure 2:20) and Imperial "Mathematics for Inference and Machine Learning" §1.5.3,
    footnote 31. Coordinate update: soft thresholding ``w_j <- S(x_j^T r_{-j}, N alpha) /
    ||x_j||^2``. Stopping: the duality gap of the dual point ``nu = r min(1, N alpha / ||X^T
    r||_inf)``; not reaching ``tol`` within ``max_iter`` sweeps raises a ``ConvergenceWarning``.
    Features are screened by the gap safe rule (see :func:`lasso_path`). Time ``O(N D)`` per
    full sweep (``O(N |A|)`` over the ``|A|`` features kept by the screening); memory
    ``O(N D)`` (one centred, column-ordered copy of ``X``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([1.0, 3.0, 2.0, 5.0])
    >>> Lasso(alpha=0.1).fit(X, y).coef_.round(6)
    array([1.02])
    """

    _parameter_constraints: ClassVar[dict] = {
        # alpha = 0 is least squares (use LinearRegression): the duality gap is not defined.
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "warm_start": ["boolean"],
        "positive": ["boolean"],
    }

    def __init__(
        self,
        alpha: float = 1.0,
        *,
        fit_intercept: bool = True,
        max_iter: int = 1000,
        tol: float = 1e-4,
        warm_start: bool = False,
        positive: bool = False,
    ):
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.warm_start = warm_start
        self.positive = positive

    def _penalties(self) -> tuple[float, float]:
        """``(l1, l2)`` of the objective ``... + l1 ||w||_1 + (l2 / 2) ||w||^2``."""
        return float(self.alpha), 0.0

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit by coordinate descent.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), float or None, default=None
            Weights ``s_n``: the objective becomes ``(1 / (2 sum_n s_n)) sum_n s_n
            (y_n - x_n^T w - w_0)^2 + alpha ||w||_1``, scikit-learn's convention (a weight
            ``k`` is ``k`` copies of the sample).

        Returns
        -------
        self
        """
        warm_start = bool(self.warm_start)
        # X's finiteness is checked by prepare_data, from the column maxima it needs anyway
        reset = not (warm_start and hasattr(self, "coef_"))
        X, y = validate_xy(self, X, y, reset=reset, finite=False)
        sw = weights_or_none(sample_weight, X)
        m = X.shape[1]
        # Scaled exactly where squares would leave float64 (Xs = g X, ys = h y, v = h w / g,
        # penalty alpha g h), centred with the (weighted) means, rows times sqrt(s_n).
        prep = prepare_data(
            X, y, fit_intercept=bool(self.fit_intercept), sample_weight=sw, per_column=False,
            order="F", check_finite_for=self,
        )  # fmt: skip
        gh = float(prep.x_scale[0] if m else 1.0) * prep.y_scale
        if warm_start and hasattr(self, "coef_") and self.coef_.shape == (m,):
            w = np.array(self.coef_, dtype=float) / (prep.x_scale / prep.y_scale)
        else:
            w = np.zeros(m)
        # One alpha: sweeps over the residual cost O(N D) each, cheaper than a Gram matrix
        # unless very many sweeps are needed.
        l1, l2 = self._penalties()
        Xp, yp, t, ridge = prep.X, prep.y, 1.0, 0.0
        if l2 > 0:
            # The ridge part is a lasso on data augmented by D rows with targets 0 (same
            # 1/(2N) scaling, n_eff = N), so the solver and the duality gap apply unchanged;
            # the compiled route never forms the rows (see _Problem). In the scaled units v
            # (X_s = g X) the ridge term is (N l2 g^2 / 2) ||v||^2; tiny data (g > 1) are
            # solved in u = t v with t = g, where it is (N l2 / 2) ||u||^2 and no square of
            # g can overflow.
            g = float(prep.x_scale[0]) if m else 1.0
            t = max(g, 1.0)
            if t != 1.0:
                Xp = np.asfortranarray(Xp / t)
            ridge = prep.sw_sum * l2 * (g / t) ** 2
            w *= t
        problem = _Problem(Xp, yp, use_gram=False, n_eff=prep.sw_sum, ridge=ridge)
        alpha, tol = l1, float(self.tol)
        gap, n_iter = problem.solve(
            w, alpha * gh / t, int(self.max_iter), tol, bool(self.positive)
        )
        w /= t
        h2 = prep.y_scale**2
        yty = problem.yty
        del problem, Xp  # its work arrays (and a rescaled copy of X) before the coefficients
        if gap >= tol * max(yty, 1e-300):
            _warn_not_converged(gap / h2, tol * yty / h2, alpha)
        self._set_coef(w, prep)
        self.dual_gap_ = float(gap) / h2 / prep.sw_sum
        self.n_iter_ = int(n_iter)
        return self


class ElasticNet(Lasso):
    """Least squares with a mixed L1 and L2 penalty, by coordinate descent.

    Minimises ``(1 / (2N)) ||y - X w - w_0||^2 + alpha rho ||w||_1
    + (alpha (1 - rho) / 2) ||w||^2`` with ``rho = l1_ratio`` (scikit-learn's scaling); the
    intercept is not penalised. ``l1_ratio = 1`` is the lasso.

    Parameters
    ----------
    alpha : float, default=1.0
        Overall penalty ``alpha > 0``.
    l1_ratio : float, default=0.5
        ``rho`` in ``(0, 1]``: the share of the L1 term (``rho -> 0`` approaches ridge, which
        :class:`Ridge` solves in closed form).
    fit_intercept : bool, default=True
        Fit an unpenalised intercept.
    max_iter : int, default=1000
        Maximum number of coordinate sweeps.
    tol : float, default=1e-4
        Duality-gap tolerance, relative to ``||y - mean(y)||^2`` (as for :class:`Lasso`).
    warm_start : bool, default=False
        Start from the previous ``coef_``.
    positive : bool, default=False
        Constrain the weights to ``w >= 0``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The weights ``w``.
    intercept_ : float
        ``w_0``.
    dual_gap_ : float
        Duality gap at the solution in the ``(1/(2N))``-scaled objective.
    n_iter_ : int
        Coordinate sweeps run.
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    Lasso, Ridge

    Notes
    -----
    The elastic net (Zou and Hastie 2005; the Oxford notes "Advanced Topics in Statistical
    Machine Learning" §1 name it beside ridge and the lasso) keeps the lasso's sparsity while
    the L2 part groups correlated features and makes the solution unique. Its coordinate
    step is ``w_j <- S(x_j^T r_{-j}, N alpha rho) / (||x_j||^2 + N alpha (1 - rho))``. It is
    solved as a lasso on augmented data: the rows ``sqrt(N alpha (1 - rho)) I`` with targets
    0 turn the ridge term into squared residuals, so the same solver and the same duality
    gap certify convergence. The compiled solver never forms those rows (their part of a
    column's inner product with the residual is ``-N alpha (1 - rho) w_j``); time ``O(N D)``
    per sweep and memory ``O(N D)`` (one centred, column-ordered copy of ``X``), as for
    :class:`Lasso`. Without the compiled helper the rows are formed (``D^2`` more memory).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linear_model import ElasticNet
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    >>> y = np.array([0.0, 2.0, 4.0, 6.0])
    >>> enet = ElasticNet(alpha=0.01, l1_ratio=0.5, tol=1e-10, max_iter=100_000).fit(X, y)
    >>> enet.coef_.round(3)          # two identical features share the weight equally
    array([0.996, 0.996])
    """

    _parameter_constraints: ClassVar[dict] = {
        **Lasso._parameter_constraints,
        "l1_ratio": [Interval(Real, 0, 1, closed="right")],
    }

    def __init__(
        self,
        alpha: float = 1.0,
        *,
        l1_ratio: float = 0.5,
        fit_intercept: bool = True,
        max_iter: int = 1000,
        tol: float = 1e-4,
        warm_start: bool = False,
        positive: bool = False,
    ):
        super().__init__(
            alpha,
            fit_intercept=fit_intercept,
            max_iter=max_iter,
            tol=tol,
            warm_start=warm_start,
            positive=positive,
        )
        self.l1_ratio = l1_ratio

    def _penalties(self) -> tuple[float, float]:
        a, r = float(self.alpha), float(self.l1_ratio)
        return a * r, a * (1.0 - r)
