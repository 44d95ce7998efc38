"""Regularised empirical risk of a linear predictor, with gradient and Hessian, and its minimiser.

Oxford "Advanced Topics in Statistical Machine Learning" §1.2 (eqs. 1.22-1.23 and the ERM
examples of §1.2.3). For ``f(x) = w^T phi(x) + b`` and a loss ``rho``:

    R(w, b) = (1/n) sum_i rho(u_i) + (lambda / n) ||w||^2,

with ``u_i = y_i f(x_i)`` (margin losses, ``y_i in {-1, +1}``) or ``u_i = y_i - f(x_i)``
(regression losses); the offset ``b`` is not penalised. The gradient is
``(1/n) sum_i rho'(u_i) s_i phi_i + (2 lambda / n) w`` with ``s_i = y_i`` (margin) or ``-1``
(regression), and the Hessian ``(1/n) sum_i rho''(u_i) phi_i phi_i^T + (2 lambda / n) I``,
positive semi-definite for a convex loss: the risk is convex and Newton's method applies.
With the hinge loss and ``C = 1 / (2 lambda)`` this is the C-SVM (eq. 1.33); with the
logistic loss, L2-regularised logistic regression (eq. 1.28); with the squared loss, ridge
regression (eq. 1.25).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

from ..exceptions import ConvergenceWarning
from ..optim import newton
from ..utils._param_validation import Interval, validate_params
from ..utils.validation import check_array
from ._losses import get_loss

__all__ = ["EmpiricalRisk", "minimize_empirical_risk"]


class EmpiricalRisk:
    """The regularised empirical risk ``R(params)`` of a linear predictor, as a function.

    Parameters
    ----------
    loss : str or Loss
    X : array-like of shape (n_samples, n_features)
        The features ``phi(x_i)``.
    y : array-like of shape (n_samples,)
        Labels in ``{-1, +1}`` for a margin loss, real targets for a regression loss.
    alpha : float, default=1.0
        ``lambda >= 0`` in ``(lambda / n) ||w||^2``.
    fit_intercept : bool, default=True
        Append an unpenalised offset ``b`` as the last parameter.

    Attributes
    ----------
    n_params : int
        ``n_features + fit_intercept``; ``params = (w, b)``.

    See Also
    --------
    mathlearn.losses.get_loss
        Losses by name.
    mathlearn.optim
        Optimisers to minimise it.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.losses import EmpiricalRisk
    >>> R = EmpiricalRisk("hinge", np.array([[1.0], [-1.0]]), np.array([1, -1]), alpha=0.0)
    >>> float(R.value(np.array([0.5, 0.0])))  # both margins 0.5: hinge 0.5
    0.5
    """

    def __init__(self, loss, X, y, *, alpha: float = 1.0, fit_intercept: bool = True):
        self.loss = get_loss(loss)
        X = check_array(X, dtype=np.float64)
        y = np.asarray(y)
        if np.iscomplexobj(y):
            raise ValueError("y must be real.")
        y = y.astype(float)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(
                f"y must be 1-D with one entry per row of X; got shape {y.shape} for X "
                f"of shape {X.shape}."
            )
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinity.")
        if self.loss.kind == "margin" and not np.all(np.abs(y) == 1.0):
            raise ValueError("a margin loss needs labels y in {-1, +1}.")
        if isinstance(alpha, bool) or not np.isfinite(alpha) or alpha < 0:
            raise ValueError(f"alpha must be finite and >= 0; got {alpha!r}.")
        self.X, self.y, self.alpha = X, y, float(alpha)
        self.fit_intercept = bool(fit_intercept)
        self.n_params = X.shape[1] + int(self.fit_intercept)

    def _split(self, params):
        params = np.asarray(params, dtype=float)
        if params.shape != (self.n_params,):
            raise ValueError(f"params must have shape ({self.n_params},); got {params.shape}.")
        if self.fit_intercept:
            return params[:-1], params[-1]
        return params, 0.0

    def _u(self, params):
        w, b = self._split(params)
        f = self.X @ w + b
        return self.y * f if self.loss.kind == "margin" else self.y - f

    def _s(self):
        return self.y if self.loss.kind == "margin" else -np.ones_like(self.y)

    def value(self, params) -> float:
        """``R(params)``."""
        w, _ = self._split(params)
        n = self.X.shape[0]
        return float(np.mean(self.loss(self._u(params))) + self.alpha / n * (w @ w))

    def gradient(self, params) -> np.ndarray:
        """``dR/dparams`` (a subgradient where the loss has a kink), shape (n_params,)."""
        w, _ = self._split(params)
        n = self.X.shape[0]
        c = self.loss.derivative(self._u(params)) * self._s() / n
        g = np.empty(self.n_params)
        g[: self.X.shape[1]] = self.X.T @ c + (2.0 * self.alpha / n) * w
        if self.fit_intercept:
            g[-1] = c.sum()
        return g

    def hessian(self, params) -> np.ndarray:
        """``d^2R/dparams^2`` of shape (n_params, n_params) (needs a smooth loss)."""
        if not self.loss.smooth:
            raise ValueError(f"{self.loss!r} has no second derivative at its kinks.")
        n, d = self.X.shape
        h = self.loss.second_derivative(self._u(params)) / n
        A = self.X if not self.fit_intercept else np.hstack([self.X, np.ones((n, 1))])
        H = (A * h[:, None]).T @ A
        H[np.arange(d), np.arange(d)] += 2.0 * self.alpha / n
        return H


@validate_params(
    {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }
)
def minimize_empirical_risk(
    loss,
    X,
    y,
    *,
    alpha: float = 1.0,
    fit_intercept: bool = True,
    max_iter: int = 100,
    tol: float = 1e-10,
):
    """Minimise the regularised empirical risk by Newton's method (:func:`mathlearn.optim.newton`).

    Parameters
    ----------
    loss : str or Loss
        A smooth convex loss (``"logistic"``, ``"exponential"``, ``"squared"``). The
        piecewise-linear losses (hinge, absolute, pinball, epsilon-insensitive) have no
        Hessian: their regularised risks are quadratic programmes, solved by the support
        vector machines (hinge, epsilon-insensitive); :class:`EmpiricalRisk` still gives their
        value and a subgradient, to check a solution's optimality.
    X, y, alpha, fit_intercept
        As in :class:`EmpiricalRisk`.
    max_iter : int, default=100
    tol : float, default=1e-10
        Stop when the gradient's norm is at most ``tol``.

    Returns
    -------
    scipy.optimize.OptimizeResult
        Newton's result with ``coef`` (shape (n_features,)) and ``intercept`` added.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.losses import minimize_empirical_risk
    >>> X = np.array([[0.0], [1.0], [2.0]]); y = np.array([1.0, 3.0, 5.0])
    >>> res = minimize_empirical_risk("squared", X, y, alpha=0.0)
    >>> np.round([res.coef[0], res.intercept], 10)
    array([2., 1.])
    """
    risk = EmpiricalRisk(loss, X, y, alpha=alpha, fit_intercept=fit_intercept)
    if not (risk.loss.smooth and risk.loss.convex):
        raise ValueError(
            f"{risk.loss!r} is not smooth and convex; Newton's method needs a second "
            "derivative (use an SVM for the hinge and epsilon-insensitive losses)."
        )
    res = newton(
        risk.value,
        np.zeros(risk.n_params),
        grad=risk.gradient,
        hess=risk.hessian,
        max_iter=max_iter,
        tol=tol,
    )
    if not res.success:
        warnings.warn(
            f"Newton's method did not reach ||grad|| <= {tol} in {max_iter} iterations "
            f"({res.message}); with alpha=0 a separable problem has no minimiser.",
            ConvergenceWarning,
            stacklevel=2,
        )
    res.coef, res.intercept = risk._split(res.x)
    res.intercept = float(res.intercept)
    return res
