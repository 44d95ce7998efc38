"""Least-mean-squares (LMS): linear regression by stochastic gradient descent (spec 001 M15)."""

from __future__ import annotations

import numbers
import warnings
from typing import ClassVar

import numpy as np

from ..base import BaseEstimator, RegressorMixin, check_is_fitted
from ..exceptions import ConvergenceWarning
from ..utils.validation import check_positive, check_random_state, validate_data
from ._validation import check_bool, check_int, validate_xy

__all__ = ["SGDRegressor"]

_SCHEDULES = {"constant": 0, "invscaling": 1, "robbins_monro": 2}


# From this many samples on, an epoch runs in the compiled loop of ._sgd_kernels; below, in
# the NumPy route here (a few microseconds per update), which needs no compilation.
_KERNEL_MIN_SAMPLES = 2000


def _lms_epoch(X, y, order, w, b, t, eta0, power_t, mode, t0, alpha, fit_intercept, batch_size):
    """One pass over ``X`` in ``order``: the LMS update per minibatch, in place on ``w``.

    Returns the intercept, the update counter and the mean loss ``1/2 r^2`` seen in the pass
    (each residual taken before the update it drives, as scikit-learn reports it).
    """
    n = X.shape[0]
    if n >= _KERNEL_MIN_SAMPLES:
        from ._sgd_kernels import _lms_epoch as kernel

        args = (eta0, power_t, mode, t0, alpha, fit_intercept, batch_size)
        return kernel(X, y, order, w, b, t, *args)
    # Divergence is detected after the epoch (non-finite loss or weights), as in the kernel.
    with np.errstate(over="ignore", invalid="ignore"):
        return _lms_epoch_numpy(
            X[order], y[order], w, b, t, eta0, power_t, mode, t0, alpha, fit_intercept, batch_size
        )


def _lms_epoch_numpy(Xo, yo, w, b, t, eta0, power_t, mode, t0, alpha, fit_intercept, batch_size):
    n = Xo.shape[0]
    loss = 0.0
    for start in range(0, n, batch_size):
        stop = min(start + batch_size, n)
        Xb = Xo[start:stop]
        r = yo[start:stop] - b - Xb @ w
        loss += 0.5 * float(r @ r)
        t += 1
        if mode == 0:
            eta = eta0
        elif mode == 1:
            eta = eta0 / t**power_t
        else:
            eta = eta0 / (1.0 + (t - 1) / t0)
        m = stop - start
        # w <- w + eta [ (t_n - w^T phi_n) phi_n - alpha w ]   (averaged over the batch)
        w += eta * ((r @ Xb) / m - alpha * w)
        if fit_intercept:
            b += eta * float(r.sum()) / m
    return b, t, loss / n


class SGDRegressor(RegressorMixin, BaseEstimator):
    """Linear regression fitted by stochastic gradient descent: the least-mean-squares rule.

    Parameters
    ----------
    learning_rate : {"invscaling", "constant", "robbins_monro"}, default="invscaling"
        Step-size schedule over updates ``t = 1, 2, ...``: ``eta0 / t**power_t``
        (scikit-learn's default), ``eta0``, or ``eta0 / (1 + (t - 1) / n_samples)``, which
        meets the Robbins-Monro conditions (notes 003 L911-913).
    eta0 : float or "auto", default="auto"
        Initial step size ``eta``. ``"auto"`` takes ``1 / max_n (||phi_n||^2 + 1)`` (the
        ``+ 1`` only with an intercept): a single LMS update scales the residual of its sample
        by ``1 - eta ||phi_n||^2``, so this is half the largest step that is stable for
        every sample (the per-sample form of the bound ``gamma < 2 / lambda_max`` of notes 003
        L792), and it adapts to unscaled features.
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

    Notes
    -----
    Spec 001 M15 (seeds/001 L165-169): minimising ``sum_n (t_n - w^T phi(x_n))^2`` one term
    at a time gives the least-mean-squares update

    ``w^(k+1) = w^(k) + eta [t_n - w^(k)T phi(x_n)] phi(x_n)``,

    stochastic gradient descent on ``E_n = 1/2 (t_n - w^T phi_n)^2`` (spec 000 M27, eq. 1.190;
    spec 003 §2.4 item 36). With ``alpha > 0`` it minimises the ridge objective instead. The
    loop over samples is compiled with numba from 2 000 samples on (below, NumPy, with no
    compilation). :meth:`partial_fit` makes one pass over each
    batch it is given, for data that arrive over time (the online use of LMS). Features on
    very different scales need standardising first, as for every gradient method (the
    step-size bound ``eta < 2 / lambda_max`` of notes 003 L792 is set by the largest scale).

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
        if self.learning_rate not in _SCHEDULES:
            raise ValueError(
                f"learning_rate must be one of {sorted(_SCHEDULES)}; got {self.learning_rate!r}."
            )
        if not (isinstance(self.eta0, str) and self.eta0 == "auto"):
            check_positive(self.eta0, "eta0")
        params = {
            "power_t": check_positive(self.power_t, "power_t", strict=False),
            "alpha": check_positive(self.alpha, "alpha", strict=False),
            "fit_intercept": check_bool(self.fit_intercept, "fit_intercept"),
            "shuffle": check_bool(self.shuffle, "shuffle"),
            "max_iter": check_int(self.max_iter, "max_iter"),
            "n_iter_no_change": check_int(self.n_iter_no_change, "n_iter_no_change"),
            "batch_size": check_int(self.batch_size, "batch_size"),
        }
        tol = self.tol
        if tol is not None and (not isinstance(tol, numbers.Real) or not 0 <= tol < np.inf):
            raise ValueError(f"tol must be a non-negative finite number or None; got {tol!r}.")
        return params

    def _initial_step(self, X: np.ndarray, fit_intercept: bool) -> float:
        if not isinstance(self.eta0, str):
            return float(self.eta0)
        with np.errstate(over="ignore"):
            largest = float(np.max(np.einsum("ij,ij->i", X, X))) + fit_intercept
        if not np.isfinite(largest):
            raise ValueError(
                "eta0='auto': the squared norms of the rows of X overflow float64; "
                "standardise X first."
            )
        return 1.0 / largest if largest > 0 else 1.0  # all-zero X: nothing to scale

    def _epoch(self, X, y, order, w, b, t, eta0, p, rng, epoch) -> tuple[float, int, float]:
        """One LMS pass (in place on ``w``); raises if the iterates diverged."""
        if p["shuffle"]:
            rng.shuffle(order)
        b, t, loss = _lms_epoch(
            X, y, order, w, b, t, eta0, p["power_t"], _SCHEDULES[self.learning_rate],
            float(X.shape[0]), p["alpha"], p["fit_intercept"], p["batch_size"],
        )  # fmt: skip
        if not np.isfinite(loss) or not np.all(np.isfinite(w)):
            raise FloatingPointError(
                f"SGD diverged (loss {loss}) after {epoch} epochs: "
                f"eta0 = {eta0} is too large for the scale of X; standardise X or lower eta0."
            )
        return b, t, loss + 0.5 * p["alpha"] * float(w @ w)

    def fit(self, X, y):
        """Run SGD epochs from ``w = 0`` until the loss stops improving or ``max_iter``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        p = self._check_params()
        tol = self.tol
        X, y = validate_xy(self, X, y)
        X = np.ascontiguousarray(X)
        y = np.ascontiguousarray(y)
        rng = check_random_state(self.random_state)
        n, d = X.shape
        eta0 = self._initial_step(X, p["fit_intercept"])
        w = np.zeros(d)
        b, t = 0.0, 0
        order = np.arange(n)
        losses = []
        best, no_improvement, converged = np.inf, 0, False
        for _ in range(p["max_iter"]):
            b, t, loss = self._epoch(X, y, order, w, b, t, eta0, p, rng, len(losses) + 1)
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
        self.coef_ = w
        self.intercept_ = float(b)
        self.n_iter_ = len(losses)
        self.t_ = int(t)
        self.eta0_ = eta0
        self.loss_curve_ = np.asarray(losses)
        self._rng = rng  # partial_fit continues with this stream
        return self

    def partial_fit(self, X, y):
        """One LMS pass over ``(X, y)``, continuing from the current weights.

        The online use of the rule (the data arrive in batches): the first call starts from
        ``w = 0`` and fixes ``eta0_`` (with ``eta0="auto"``, from this first batch); later
        calls continue the step-size schedule where the previous call left it (``t_``).
        ``max_iter``, ``tol`` and ``n_iter_no_change`` are not used.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        p = self._check_params()
        first = not hasattr(self, "coef_")
        X, y = validate_xy(self, X, y, reset=first)
        X = np.ascontiguousarray(X)
        y = np.ascontiguousarray(y)
        if first:
            rng = check_random_state(self.random_state)
            w, b, t, n_iter = np.zeros(X.shape[1]), 0.0, 0, 0
            eta0, curve = self._initial_step(X, p["fit_intercept"]), np.zeros(0)
        else:
            rng, w, b, t = self._rng, self.coef_.copy(), self.intercept_, self.t_
            n_iter, eta0, curve = self.n_iter_, self.eta0_, self.loss_curve_
        order = np.arange(X.shape[0])
        b, t, loss = self._epoch(X, y, order, w, b, t, eta0, p, rng, n_iter + 1)
        # Set only after a successful pass: a diverged call leaves the estimator as it was.
        self._rng, self.coef_, self.intercept_, self.t_ = rng, w, float(b), int(t)
        self.n_iter_, self.eta0_ = n_iter + 1, eta0
        self.loss_curve_ = np.append(curve, loss)
        return self

    def predict(self, X):
        """Predictions ``X w + w_0``, shape (n_samples,)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_
