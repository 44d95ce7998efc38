"""Margin and regression losses with their first and second derivatives.

Oxford "Advanced Topics in Statistical Machine Learning" §1.2.1 (loss and risk, Figs 1.1 and
1.2). Classification losses are functions of the margin ``t = y f(x)``, ``y in {-1, +1}``:

- 0/1 ``[t <= 0]``; hinge ``max(0, 1 - t)``; exponential ``e^-t``; logistic
  ``log(1 + e^-t)``, divided by ``log 2`` (``normalized=True``) an upper bound on the 0/1
  loss that equals it at ``t = 0``.

Regression losses are functions of the residual ``r = y - f(x)``:

- squared ``r^2``; absolute ``|r|``; tau-pinball ``2 max(tau r, (tau - 1) r)`` (the factor 2
  makes ``tau = 1/2`` the absolute loss); epsilon-insensitive ``max(0, |r| - epsilon)``.

``derivative`` is the derivative where it exists and a subgradient at a kink (the value at
the kink is stated per class); ``second_derivative`` is zero almost everywhere for the
piecewise-linear losses, which are therefore marked ``smooth = False``.
"""

from __future__ import annotations

import numpy as np

from ..utils.extmath import sigmoid, softplus

__all__ = [
    "AbsoluteLoss",
    "EpsilonInsensitiveLoss",
    "ExponentialLoss",
    "HingeLoss",
    "LogisticLoss",
    "Loss",
    "PinballLoss",
    "SquaredLoss",
    "ZeroOneLoss",
    "get_loss",
]


def _arr(t) -> np.ndarray:
    if np.iscomplexobj(t):
        raise ValueError("losses take real arguments; got a complex array.")
    t = np.asarray(t, dtype=float)
    if np.isnan(t).any():
        raise ValueError("the loss argument contains NaN.")
    return t


class Loss:
    """Base class: ``loss(u)`` is the value, with ``derivative`` and ``second_derivative``.

    Attributes
    ----------
    kind : {"margin", "regression"}
        The argument is the margin ``t = y f(x)`` or the residual ``r = y - f(x)``.
    smooth : bool
        Whether the second derivative exists everywhere (Newton's method applies).
    convex : bool

    See Also
    --------
    mathlearn.losses.get_loss
        Losses by name.
    mathlearn.losses.EmpiricalRisk
        A loss averaged over data with a penalty.

    Examples
    --------
    >>> from mathlearn.losses import HingeLoss
    >>> loss = HingeLoss()
    >>> loss([-1.0, 0.5, 2.0]), loss.derivative([-1.0, 0.5, 2.0])
    (array([2. , 0.5, 0. ]), array([-1., -1.,  0.]))
    """

    kind = "margin"
    smooth = True
    convex = True

    def __call__(self, u) -> np.ndarray:
        return self._value(_arr(u))

    def derivative(self, u) -> np.ndarray:
        """First derivative (a subgradient at a kink)."""
        return self._d1(_arr(u))

    def second_derivative(self, u) -> np.ndarray:
        """Second derivative (0 almost everywhere for piecewise-linear losses)."""
        return self._d2(_arr(u))

    def _d2(self, u):
        return np.zeros_like(u)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(vars(self).items()))))


class ZeroOneLoss(Loss):
    """0/1 loss ``[t <= 0]`` (not convex; its empirical risk is NP-hard to minimise).

    See Also
    --------
    mathlearn.losses.HingeLoss
        A convex upper bound.
    mathlearn.losses.LogisticLoss
        A smooth convex upper bound.

    Examples
    --------
    >>> from mathlearn.losses import ZeroOneLoss
    >>> ZeroOneLoss()([-1.0, 0.0, 0.5])
    array([1., 1., 0.])
    """

    smooth = False
    convex = False

    def _value(self, t):
        return (t <= 0).astype(float)

    def _d1(self, t):
        return np.zeros_like(t)


class HingeLoss(Loss):
    """Hinge loss ``max(0, 1 - t)``; derivative ``-1`` for ``t < 1``, ``0`` from ``t = 1`` on.

    Regularised hinge-loss ERM is the C-SVM with ``C = 1 / (2 lambda)`` (Oxford "Advanced
    Topics in Statistical Machine Learning" §1.2.3, eqs. 1.32-1.33).

    See Also
    --------
    mathlearn.losses.LogisticLoss
        A smooth surrogate.
    mathlearn.svm.SVC
        The classifier that minimises it.

    Examples
    --------
    >>> from mathlearn.losses import HingeLoss
    >>> HingeLoss()([0.5, 2.0])
    array([0.5, 0. ])
    """

    smooth = False

    def _value(self, t):
        return np.maximum(0.0, 1.0 - t)

    def _d1(self, t):
        return np.where(t < 1.0, -1.0, 0.0)


class ExponentialLoss(Loss):
    """Exponential loss ``e^-t`` (AdaBoost's); derivatives ``-e^-t`` and ``e^-t``.

    See Also
    --------
    mathlearn.losses.LogisticLoss
        A loss that grows linearly.
    mathlearn.ensemble.AdaBoostClassifier
        The boosting it drives.

    Examples
    --------
    >>> from mathlearn.losses import ExponentialLoss
    >>> round(float(ExponentialLoss()(0.5)), 6)
    0.606531
    """

    def _value(self, t):
        return np.exp(-t)

    def _d1(self, t):
        return -np.exp(-t)

    def _d2(self, t):
        return np.exp(-t)


class LogisticLoss(Loss):
    """Logistic loss ``log(1 + e^-t)`` (divided by ``log 2`` if ``normalized``).

    Computed as ``softplus(-t)``, exact for large ``|t|``. Derivatives
    ``-sigma(-t)`` and ``sigma(t) sigma(-t)`` (over ``log 2`` if normalized).

    Parameters
    ----------
    normalized : bool, default=False
        Divide by ``log 2``: an upper bound on the 0/1 loss, equal to it (1) at ``t = 0``.

    See Also
    --------
    mathlearn.losses.HingeLoss
        The SVM's surrogate.
    mathlearn.linear_model.LogisticRegression
        The classifier that minimises it.

    Examples
    --------
    >>> from mathlearn.losses import LogisticLoss
    >>> round(float(LogisticLoss()(0.5)), 6), round(float(LogisticLoss(normalized=True)(0.5)), 6)
    (0.474077, 0.683949)
    """

    def __init__(self, normalized: bool = False):
        if not isinstance(normalized, (bool, np.bool_)):
            raise ValueError(f"normalized must be True or False; got {normalized!r}.")
        self.normalized = bool(normalized)

    def _scale(self):
        return 1.0 / np.log(2.0) if self.normalized else 1.0

    def _value(self, t):
        return softplus(-t) * self._scale()

    def _d1(self, t):
        return -sigmoid(-t) * self._scale()

    def _d2(self, t):
        return sigmoid(t) * sigmoid(-t) * self._scale()


class SquaredLoss(Loss):
    """Squared loss ``r^2`` of the residual; derivatives ``2 r`` and ``2``.

    Its risk minimiser is the conditional mean ``E[Y | x]``.

    See Also
    --------
    mathlearn.losses.AbsoluteLoss
        The median's loss.
    mathlearn.linear_model.LinearRegression
        Its minimiser over linear functions.

    Examples
    --------
    >>> from mathlearn.losses import SquaredLoss
    >>> SquaredLoss()([-2.0, 0.5])
    array([4.  , 0.25])
    """

    kind = "regression"

    def _value(self, r):
        return r * r

    def _d1(self, r):
        return 2.0 * r

    def _d2(self, r):
        return np.full_like(r, 2.0)


class AbsoluteLoss(Loss):
    """Absolute loss ``|r|``; derivative ``sign(r)`` (0 at ``r = 0``); conditional median.

    See Also
    --------
    mathlearn.losses.SquaredLoss
        The conditional mean's loss.
    mathlearn.losses.PinballLoss
        Other quantiles.

    Examples
    --------
    >>> from mathlearn.losses import AbsoluteLoss
    >>> AbsoluteLoss()([-2.0, 0.5])
    array([2. , 0.5])
    """

    kind = "regression"
    smooth = False

    def _value(self, r):
        return np.abs(r)

    def _d1(self, r):
        return np.sign(r)


class PinballLoss(Loss):
    """Pinball (quantile) loss ``2 max(tau r, (tau - 1) r)``; its minimiser is the tau-quantile.

    The factor 2 follows the notes, so that ``tau = 1/2`` is the absolute loss. Derivative
    ``2 tau`` for ``r > 0``, ``2 (tau - 1)`` for ``r < 0``, and 0 at ``r = 0``.

    Parameters
    ----------
    tau : float, default=0.5
        ``0 < tau < 1``.

    See Also
    --------
    mathlearn.losses.AbsoluteLoss
        The median (tau = 1/2, up to a factor).

    Examples
    --------
    >>> from mathlearn.losses import PinballLoss
    >>> PinballLoss(0.25)([1.0, -1.0])
    array([0.5, 1.5])
    """

    kind = "regression"
    smooth = False

    def __init__(self, tau: float = 0.5):
        if isinstance(tau, bool) or not isinstance(tau, (int, float, np.floating)):
            raise ValueError(f"tau must be a number in (0, 1); got {tau!r}.")
        if not 0.0 < tau < 1.0:
            raise ValueError(f"tau must be in (0, 1); got {tau}.")
        self.tau = float(tau)

    def _value(self, r):
        return 2.0 * np.maximum(self.tau * r, (self.tau - 1.0) * r)

    def _d1(self, r):
        return np.where(r > 0, 2.0 * self.tau, np.where(r < 0, 2.0 * (self.tau - 1.0), 0.0))


class EpsilonInsensitiveLoss(Loss):
    """Vapnik's epsilon-insensitive loss ``max(0, |r| - epsilon)`` (support vector regression).

    Derivative ``sign(r)`` outside the tube ``|r| <= epsilon``, 0 inside and on its edge.

    Parameters
    ----------
    epsilon : float, default=0.1
        ``epsilon >= 0``.

    See Also
    --------
    mathlearn.svm.SVR
        The regressor that minimises it.
    mathlearn.losses.AbsoluteLoss
        epsilon = 0.

    Examples
    --------
    >>> from mathlearn.losses import EpsilonInsensitiveLoss
    >>> EpsilonInsensitiveLoss(0.5)([0.2, -2.0])
    array([0. , 1.5])
    """

    kind = "regression"
    smooth = False

    def __init__(self, epsilon: float = 0.1):
        if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating)):
            raise ValueError(f"epsilon must be a number >= 0; got {epsilon!r}.")
        if not (np.isfinite(epsilon) and epsilon >= 0):
            raise ValueError(f"epsilon must be finite and >= 0; got {epsilon}.")
        self.epsilon = float(epsilon)

    def _value(self, r):
        return np.maximum(0.0, np.abs(r) - self.epsilon)

    def _d1(self, r):
        return np.where(np.abs(r) > self.epsilon, np.sign(r), 0.0)


_LOSSES = {
    "zero_one": ZeroOneLoss,
    "hinge": HingeLoss,
    "exponential": ExponentialLoss,
    "logistic": LogisticLoss,
    "squared": SquaredLoss,
    "absolute": AbsoluteLoss,
    "pinball": PinballLoss,
    "epsilon_insensitive": EpsilonInsensitiveLoss,
}


def get_loss(loss: str | Loss, **params) -> Loss:
    """A loss object from its name (``"hinge"``, ``"logistic"``, ``"pinball"``, ...) or as is.

    Parameters
    ----------
    loss : str or Loss
        A loss name, or a :class:`Loss` returned unchanged.
    **params
        Parameters of the named loss (for example ``tau`` of the pinball loss, ``epsilon``
        of the epsilon-insensitive loss).

    Returns
    -------
    Loss

    Examples
    --------
    >>> from mathlearn.losses import get_loss
    >>> get_loss("pinball", tau=0.9)
    PinballLoss(tau=0.9)
    """
    if isinstance(loss, Loss):
        if params:
            raise ValueError("parameters can only be given with a loss name.")
        return loss
    if loss not in _LOSSES:
        raise ValueError(f"loss must be a Loss or one of {sorted(_LOSSES)}; got {loss!r}.")
    try:
        return _LOSSES[loss](**params)
    except TypeError as exc:
        raise ValueError(f"bad parameters for the {loss} loss: {exc}") from None
