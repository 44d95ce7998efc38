"""Least-mean-squares (LMS): linear regression by stochastic gradient descent."""

from __future__ import annotations

import ctypes
import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from .. import _ext
from ..base import _fit_context
from ..exceptions import ConvergenceWarning
from ..optim import constant_schedule, inverse_scaling, robbins_monro
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import check_random_state
from ._base import LinearModel, validate_xy, weights_or_none

__all__ = ["SGDRegressor"]

_SCHEDULES = ("constant", "invscaling", "robbins_monro")


# Without the compiled helper ``mathlearn._ext._sgd``: from this many samples on, an epoch
# runs in the numba loop of ._sgd_kernels (the same arithmetic, compiled at the first call);
# below, in the NumPy route here (a few microseconds per update), which needs no compilation.
_KERNEL_MIN_SAMPLES = 2000


def _compiled_sgd():
    """The compiled epochs of ``mathlearn._ext._sgd``, typed, or None where it was not built."""
    lib = _ext.load("_sgd")
    if lib is None:
        return None
    if lib.sgd_lms_epoch.argtypes is None:
        i64, dbl, ptr, c_int = ctypes.c_int64, ctypes.c_double, ctypes.c_void_p, ctypes.c_int
        lib.sgd_lms_epoch.restype = None
        lib.sgd_lms_epoch.argtypes = [i64, i64] + [ptr] * 6 + [dbl, c_int, i64, ptr, ptr]
        lib.sgd_perceptron_epoch.restype = i64
        lib.sgd_perceptron_epoch.argtypes = [i64, i64, ptr, ptr, i64, ptr, ptr, ptr, dbl, c_int]
    return lib


# Minibatches per call of the compiled epoch: the step sizes of a pass are made an eighth of
# the pass at a time (between 256 and 8 192), so that they and their temporaries take less
# memory than the visiting order, at a handful of calls per pass.
def _eta_chunk(n_batches: int) -> int:
    return min(8192, max(256, n_batches // 8))


def _lms_epoch(X, y, order, w, b, etas, alpha, fit_intercept, batch_size):
    """One pass over ``X`` in ``order``: the LMS update per minibatch, in place on ``w``.

    ``etas`` holds the step sizes of the pass's minibatches (from one of
    ``mathlearn.optim``'s schedules), or is a function ``(k0, k1) ->`` those of the
    minibatches ``k0 .. k1 - 1``; ``order`` is the visiting order (int64) or None for
    ``0 .. N - 1``. Returns the intercept and the mean loss ``1/2 r^2`` seen in
    the pass (each residual taken before the update it drives, as scikit-learn reports it).
    ``X`` and ``y`` are C-contiguous float64, ``w`` float64.
    """
    n, d = X.shape
    n_batches = -(-n // batch_size)
    if callable(etas):
        etas_of = etas
    else:
        steps = np.ascontiguousarray(etas, dtype=np.float64)

        def etas_of(k0, k1):
            return steps[k0:k1]

    lib = _compiled_sgd()
    if lib is not None:
        bias, loss = ctypes.c_double(b), ctypes.c_double(0.0)
        grad = np.empty(d) if batch_size > 1 else None  # a workspace for minibatches only
        chunk = _eta_chunk(n_batches)
        rows = chunk * batch_size
        for k0 in range(0, n_batches, chunk):
            start = k0 * batch_size
            etas = etas_of(k0, min(k0 + chunk, n_batches))
            if order is None:  # rows start, start + 1, ...: the part of X and y from there
                Xp, yp, op = X[start:], y[start:], None
            else:
                Xp, yp, op = X, y, order[start:].ctypes.data
            lib.sgd_lms_epoch(
                min(rows, n - start), d, Xp.ctypes.data, yp.ctypes.data, op, w.ctypes.data,
                ctypes.addressof(bias), etas.ctypes.data, alpha, fit_intercept, batch_size,
                None if grad is None else grad.ctypes.data, ctypes.addressof(loss),
            )  # fmt: skip
        return bias.value, (loss.value / n if n else 0.0)
    etas = etas_of(0, n_batches)
    if order is None:
        order = np.arange(n, dtype=np.int64)
    if n >= _KERNEL_MIN_SAMPLES:
        from ._sgd_kernels import _lms_epoch as kernel

        return kernel(X, y, order, w, b, etas, alpha, fit_intercept, batch_size)
    # Divergence is detected after the epoch (non-finite loss or weights), as in the kernel.
    with np.errstate(over="ignore", invalid="ignore"):
        return _lms_epoch_numpy(X[order], y[order], w, b, etas, alpha, fit_intercept, batch_size)


def _largest_squared_norm(X) -> float:
    """``max_n ||x_n||^2``, by blocks of rows (no temporary of N numbers)."""
    if not X.size:
        return 0.0
    return max(
        float(np.max(np.einsum("ij,ij->i", X[a : a + 8192], X[a : a + 8192])))
        for a in range(0, X.shape[0], 8192)
    )


def _lms_epoch_numpy(Xo, yo, w, b, etas, alpha, fit_intercept, batch_size):
    n = Xo.shape[0]
    loss = 0.0
    for k_batch, start in enumerate(range(0, n, batch_size)):
        stop = min(start + batch_size, n)
        Xb = Xo[start:stop]
        r = yo[start:stop] - b - Xb @ w
        loss += 0.5 * float(r @ r)
        eta = etas[k_batch]
        m = stop - start
        # w <- w + eta [ (t_n - w^T phi_n) phi_n - alpha w ]   (averaged over the batch)
        w += eta * ((r @ Xb) / m - alpha * w)
        if fit_intercept:
            b += eta * float(r.sum()) / m
    return b, loss / n


class SGDRegressor(LinearModel):
    """Linear regression fitted by stochastic gradient descent: the least-mean-squares rule.

    Parameters
    ----------
    learning_rate : {"invscaling", "constant", "robbins_monro"}, default="invscaling"
        Step-size schedule over updates ``t = 1, 2, ...``: ``eta0 / t**power_t``
        (scikit-learn's default), ``eta0``, or ``eta0 / (1 + (t - 1) / n_samples)``, which
        meets the Robbins-Monro conditions (Imperial "Mathematics for Machine Learning" lecture 6).
    eta0 : float or "auto", default="auto"
        Initial step size ``eta``. ``"auto"`` takes ``1 / max_n (||phi_n||^2 + 1)`` (the
        ``+ 1`` only with an intercept): a single LMS update scales the residual of its sample
        by ``1 - eta ||phi_n||^2``, so this is half the largest step that is stable for
        every sample (the per-sample form of the bound ``gamma < 2 / lambda_max`` of Imperial
        "Mathematics for Machine Learning" lecture 5), and it adapts to unscaled features.
    power_t : float, default=0.25
        Exponent of the ``"invscaling"`` schedule.
    alpha : float, default=0.0
        L2 penalty ``alpha/2 ||w||^2`` per sample (0: plain LMS; the intercept is not penalised).
    fit_intercept : bool, default=True
    max_iter : int, default=1000
        Maximum number of epochs (passes over the data).
    tol : float or None, default=1e-3
        Stop when the epoch's mean loss has not improved on the best by more than ``tol`` for
        ``n_iter_no_change`` consecutive epochs; ``None`` always runs ``max_iter`` epochs.
    n_iter_no_change : int, default=5
    batch_size : int, default=1
        Samples per update; their gradients are averaged. 1 is the LMS rule of the notes.
    shuffle : bool, default=True
        Visit the samples in a new random order every epoch.
    random_state : int, Generator, RandomState or None, default=None

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        ``w``.
    intercept_ : float
    n_iter_ : int
        Epochs run.
    t_ : int
        Updates made.
    eta0_ : float
        The initial step size used.
    loss_curve_ : ndarray of shape (n_iter_,)
        Mean per-sample loss ``1/2 (t_n - w^T phi_n - w_0)^2`` seen during each epoch.
    n_features_in_ : int

    See Also
    --------
    mathlearn.linear_model.LinearRegression
        The exact least-squares solution.
    sklearn.linear_model.SGDRegressor
        scikit-learn's equivalent.

    Notes
    -----
    PRML §3.1.3 (least-mean-squares): minimising ``sum_n (t_n - w^T phi(x_n))^2`` one term
    at a time gives the least-mean-squares update

    ``w^(k+1) = w^(k) + eta [t_n - w^(k)T phi(x_n)] phi(x_n)``,

    stochastic gradient descent on ``E_n = 1/2 (t_n - w^T phi_n)^2`` (Imperial
    "Mathematics for Inference and Machine Learning" §1.6.3, eq. 1.190; Imperial
    "Mathematics for Machine Learning" lecture 6). With ``alpha > 0`` it minimises the ridge
    objective instead. An epoch runs in the compiled helper ``mathlearn._ext._sgd``, built at
    install (without it: a numba loop with the same arithmetic from 2 000 samples on, NumPy
    below, where compiling would cost more than it saves). :meth:`partial_fit` makes one pass
    over each batch it is given, for data that arrive over time (the online use of LMS).
    Features on very different scales need standardising first, as for every gradient method
    (the step-size bound ``eta < 2 / lambda_max`` of Imperial "Mathematics for Machine
    Learning" lecture 5 is set by the largest scale).

    Complexity: ``O(N D)`` time per epoch (one dot product and one update of ``w`` per
    sample), ``O(E N D)`` for ``E`` epochs; memory ``O(N + D)`` beyond ``X`` (the visiting
    order when shuffling, the step sizes of an eighth of an epoch at a time; a weighted fit
    adds one scaled copy of ``X``).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linear_model import SGDRegressor
    >>> X = np.array([[1.0], [2.0], [3.0], [4.0]]); y = 2 * X[:, 0] + 1
    >>> reg = SGDRegressor(learning_rate="constant", eta0=0.05, tol=None, max_iter=2000,
    ...                    random_state=0).fit(X, y)
    >>> np.round(reg.coef_, 3), round(reg.intercept_, 3)
    (array([2.]), 1.0)
    """

    _common_test_params: ClassVar[dict] = {"max_iter": 20, "tol": None}
    _expected_failed_checks: ClassVar[dict] = {
        "check_sample_weight_equivalence_on_dense_data": (
            "stochastic gradient descent makes one update per row: a weight k scales one "
            "step by k, which is not k successive steps on copies of the row (scikit-learn's "
            "SGDRegressor fails this check for the same reason)"
        ),
    }
    _parameter_constraints: ClassVar[dict] = {
        "learning_rate": [StrOptions(set(_SCHEDULES))],
        "eta0": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "power_t": [Interval(Real, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        learning_rate: str = "invscaling",
        eta0: float | str = "auto",
        power_t: float = 0.25,
        alpha: float = 0.0,
        fit_intercept: bool = True,
        max_iter: int = 1000,
        tol: float | None = 1e-3,
        n_iter_no_change: int = 5,
        batch_size: int = 1,
        shuffle: bool = True,
        random_state=None,
    ):
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.power_t = power_t
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.random_state = random_state

    def _check_params(self) -> dict:
        # the constraints were checked by _fit_context; these are the kernel's arguments
        return {
            "power_t": float(self.power_t),
            "alpha": float(self.alpha),
            "fit_intercept": bool(self.fit_intercept),
            "shuffle": bool(self.shuffle),
            "max_iter": int(self.max_iter),
            "n_iter_no_change": int(self.n_iter_no_change),
            "batch_size": int(self.batch_size),
        }

    def _design(self, X, y, sample_weight, p):
        """Rows for the LMS kernel; with weights, ``sqrt(s_n)`` times ``[x_n, 1]`` and ``y_n``.

        An update on the row ``sqrt(s) [x, 1]`` with target ``sqrt(s) y`` moves ``[w, w_0]``
        by ``eta s (y - w^T x - w_0) [x, 1]``: the weighted LMS rule, with the offset as
        the last weight. Returns the rows, the targets and the kernel's ``fit_intercept``.
        """
        self._check_scale(X)
        X = np.ascontiguousarray(X)
        y = np.ascontiguousarray(y, dtype=np.float64)  # the compiled epoch reads doubles
        if sample_weight is None:
            return X, y, p["fit_intercept"]
        if p["fit_intercept"] and p["alpha"] > 0:
            raise NotImplementedError(
                "SGDRegressor: sample_weight with alpha > 0 and fit_intercept=True is not "
                "supported (the penalty would reach the offset); centre y and X and use "
                "fit_intercept=False, or alpha=0."
            )
        r = np.sqrt(sample_weight)
        Xk = X * r[:, None]
        if p["fit_intercept"]:
            Xk = np.ascontiguousarray(np.hstack([Xk, r[:, None]]))
        return Xk, y * r, False

    @staticmethod
    def _check_scale(X):
        """Gradient steps need ``||x_n||^2`` in float64: ``|x| ~ 1e+-300`` cannot be fitted."""
        if not X.size:
            return
        # without temporaries of the size of X: where the largest magnitude settles it,
        # the squared row norms are not computed at all
        amax = max(abs(float(X.max())), abs(float(X.min())))
        big = np.sqrt(np.finfo(np.float64).max / (X.shape[1] + 1))
        if amax == 0 or (np.sqrt(np.finfo(np.float64).tiny) <= amax <= big):
            return
        with np.errstate(over="ignore", under="ignore"):
            sq = _largest_squared_norm(X)
        if amax > 0 and not np.isfinite(sq):
            raise ValueError(
                "SGDRegressor: the squared norms of the rows of X overflow float64 (largest "
                f"|x| = {amax:.3g}), so no step size is representable; standardise X first."
            )
        if amax > 0 and sq < np.finfo(np.float64).tiny:
            raise ValueError(
                "SGDRegressor: the squared norms of the rows of X underflow float64 (largest "
                f"|x| = {amax:.3g}), so the gradient steps vanish; standardise X first."
            )

    def _initial_step(self, X: np.ndarray, fit_intercept: bool) -> float:
        if not isinstance(self.eta0, str):
            return float(self.eta0)
        with np.errstate(over="ignore"):
            largest = _largest_squared_norm(X) + fit_intercept
        if not np.isfinite(largest):
            raise ValueError(
                "eta0='auto': the squared norms of the rows of X overflow float64; "
                "standardise X first."
            )
        return 1.0 / largest if largest > 0 else 1.0  # all-zero X: nothing to scale

    def _schedule(self, eta0: float, n: int, p: dict):
        """The step-size schedule ``t -> eta_t`` (``t`` updates made so far) from optim."""
        if self.learning_rate == "constant":
            return constant_schedule(eta0)
        if self.learning_rate == "invscaling":
            return inverse_scaling(eta0, power=p["power_t"])
        return robbins_monro(eta0, t0=float(n), power=1.0)

    def _epoch(
        self, X, y, order, w, b, t, eta0, schedule, p, rng, epoch
    ) -> tuple[float, int, float]:
        """One LMS pass (in place on ``w``); raises if the iterates diverged."""
        if order is not None:
            rng.shuffle(order)
        n_batches = -(-X.shape[0] // p["batch_size"])

        def etas_of(k0, k1):
            return np.ascontiguousarray(schedule(np.arange(t + k0, t + k1)), dtype=np.float64)

        b, loss = _lms_epoch(
            X, y, order, w, b, etas_of, p["alpha"], p["fit_intercept"], p["batch_size"]
        )
        t += n_batches
        if not np.isfinite(loss) or not np.all(np.isfinite(w)):
            raise FloatingPointError(
                f"SGD diverged (loss {loss}) after {epoch} epochs: "
                f"eta0 = {eta0} is too large for the scale of X; standardise X or lower eta0."
            )
        return b, t, loss + 0.5 * p["alpha"] * float(w @ w)

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Run SGD epochs from ``w = 0`` until the loss stops improving or ``max_iter``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), float or None, default=None
            Weights ``s_n``: the update on sample ``n`` is scaled by ``s_n`` (scikit-learn's
            convention), so SGD minimises the weighted squared loss.

        Returns
        -------
        self
        """
        p = self._check_params()
        tol = self.tol
        X, y = validate_xy(self, X, y)
        sw = weights_or_none(sample_weight, X)
        Xk, yk, kernel_intercept = self._design(X, y, sw, p)
        p["fit_intercept"] = kernel_intercept
        rng = check_random_state(self.random_state)
        n, d = Xk.shape
        eta0 = self._initial_step(Xk, kernel_intercept)
        schedule = self._schedule(eta0, n, p)
        w = np.zeros(d)
        b, t = 0.0, 0
        order = np.arange(n, dtype=np.int64) if p["shuffle"] else None
        losses = []
        best, no_improvement, converged = np.inf, 0, False
        for _ in range(p["max_iter"]):
            b, t, loss = self._epoch(
                Xk, yk, order, w, b, t, eta0, schedule, p, rng, len(losses) + 1
            )
            losses.append(loss)
            if tol is not None:
                no_improvement = no_improvement + 1 if loss > best - tol else 0
                best = min(best, loss)
                if no_improvement >= p["n_iter_no_change"]:
                    converged = True
                    break
        if tol is not None and not converged:
            warnings.warn(
                f"SGDRegressor: max_iter = {p['max_iter']} epochs reached before the loss "
                "stopped improving; increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self._set_state(w, b, X.shape[1])
        self.n_iter_ = len(losses)
        self.t_ = int(t)
        self.eta0_ = eta0
        self.loss_curve_ = np.asarray(losses)
        self._rng = rng  # partial_fit continues with this stream
        return self

    def _set_state(self, w, b, m):
        """``coef_`` and ``intercept_`` from the kernel's weights (offset last if appended)."""
        if w.shape[0] > m:
            self.coef_, self.intercept_ = w[:m].copy(), float(w[m])
        else:
            self.coef_, self.intercept_ = w, float(b)

    @_fit_context
    def partial_fit(self, X, y, sample_weight=None):
        """One LMS pass over ``(X, y)``, continuing from the current weights.

        The online use of the rule (the data arrive in batches): the first call starts from
        ``w = 0`` and fixes ``eta0_`` (with ``eta0="auto"``, from this first batch); later
        calls continue the step-size schedule where the previous call left it (``t_``).
        ``max_iter``, ``tol`` and ``n_iter_no_change`` are not used.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), float or None, default=None
            Weights ``s_n`` of this batch's samples (see :meth:`fit`).

        Returns
        -------
        self
        """
        p = self._check_params()
        first = not hasattr(self, "coef_")
        X, y = validate_xy(self, X, y, reset=first)
        sw = weights_or_none(sample_weight, X)
        Xk, yk, kernel_intercept = self._design(X, y, sw, p)
        p["fit_intercept"] = kernel_intercept
        m = X.shape[1]
        if first:
            rng = check_random_state(self.random_state)
            coef, b, t, n_iter = np.zeros(m), 0.0, 0, 0
            eta0, curve = self._initial_step(Xk, kernel_intercept), np.zeros(0)
        else:
            rng, coef, b, t = self._rng, self.coef_.copy(), self.intercept_, self.t_
            n_iter, eta0, curve = self.n_iter_, self.eta0_, self.loss_curve_
        if Xk.shape[1] > m:  # the offset is the last weight (the kernel's own stays 0)
            w, b = np.append(coef, b), 0.0
        else:
            w = coef
        order = np.arange(Xk.shape[0], dtype=np.int64) if p["shuffle"] else None
        schedule = self._schedule(eta0, Xk.shape[0], p)
        b, t, loss = self._epoch(Xk, yk, order, w, b, t, eta0, schedule, p, rng, n_iter + 1)
        # Set only after a successful pass: a diverged call leaves the estimator as it was.
        self._rng, self.t_ = rng, int(t)
        self._set_state(w, b, m)
        self.n_iter_, self.eta0_ = n_iter + 1, eta0
        self.loss_curve_ = np.append(curve, loss)
        return self
