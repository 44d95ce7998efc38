"""Loss functions with first and second derivatives, and regularised empirical risk.

Losses are shared by several families (the hinge and epsilon-insensitive losses by the
support vector machines, the exponential loss by boosting, the logistic loss by linear models
and neural networks), so they live in their own subpackage rather than in one family's; the
empirical risk of a linear predictor, with its gradient and Hessian, sits beside them.
"""

from ._erm import EmpiricalRisk, minimize_empirical_risk
from ._losses import (
    AbsoluteLoss,
    EpsilonInsensitiveLoss,
    ExponentialLoss,
    HingeLoss,
    LogisticLoss,
    Loss,
    PinballLoss,
    SquaredLoss,
    ZeroOneLoss,
    get_loss,
)

__all__ = [
    "AbsoluteLoss",
    "EmpiricalRisk",
    "EpsilonInsensitiveLoss",
    "ExponentialLoss",
    "HingeLoss",
    "LogisticLoss",
    "Loss",
    "PinballLoss",
    "SquaredLoss",
    "ZeroOneLoss",
    "get_loss",
    "minimize_empirical_risk",
]
