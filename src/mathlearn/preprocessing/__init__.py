"""Basis functions (feature maps) for linear-in-parameters models; standardisation and whitening.

A basis turns inputs ``x`` into features ``phi(x)``; a linear model on the features,
``y = w^T phi(x)``, is then fitted by least squares, MAP or Bayesian regression
(spec 000 §2.D M18, 001 M12, 004 §2.1).
"""

from ._polynomial import PolynomialBasis
from ._univariate import (
    FourierBasis,
    GaussianBasis,
    PiecewiseConstantBasis,
    PiecewiseLinearBasis,
    SigmoidBasis,
)
from ._whitening import StandardScaler, Whitening

__all__ = [
    "FourierBasis",
    "GaussianBasis",
    "PiecewiseConstantBasis",
    "PiecewiseLinearBasis",
    "PolynomialBasis",
    "SigmoidBasis",
    "StandardScaler",
    "Whitening",
]
