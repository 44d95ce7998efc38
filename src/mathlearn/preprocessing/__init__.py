"""Basis functions (feature maps) for linear-in-parameters models; standardisation and whitening.

A basis turns inputs ``x`` into features ``phi(x)``; a linear model on the features,
``y = w^T phi(x)``, is then fitted by least squares, MAP or Bayesian regression
(Imperial "Mathematics for Inference and Machine Learning" §1.5.1.3, eq. 1.160;
PRML §3.1; Stuttgart "Introduction to Machine Learning" slides 2:6–2:10).
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
