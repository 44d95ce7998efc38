"""Kernels ``k(x, y)`` as composable objects with log-space hyperparameters.

Every kernel is a callable ``k(X, Y=None, eval_gradient=False)`` returning the Gram matrix
(and ``dK/dtheta``), with ``diag``, ``theta``/``bounds`` over its free hyperparameters and
``+``, ``*``, ``**`` algebra; :func:`get_kernel` builds one from a name for every kernel
estimator.
"""

from ._base import (
    ConstantKernel,
    Exponentiation,
    Hyperparameter,
    Kernel,
    Product,
    Sum,
    WhiteKernel,
)
from ._dot_product import DotProduct, Exponential, Linear, Polynomial, Sigmoid
from ._get_kernel import KERNEL_NAMES, get_kernel
from ._periodic import ExpSineSquared
from ._stationary import RBF, GammaExponential, Matern, RationalQuadratic

__all__ = [
    "KERNEL_NAMES",
    "RBF",
    "ConstantKernel",
    "DotProduct",
    "ExpSineSquared",
    "Exponential",
    "Exponentiation",
    "GammaExponential",
    "Hyperparameter",
    "Kernel",
    "Linear",
    "Matern",
    "Polynomial",
    "Product",
    "RationalQuadratic",
    "Sigmoid",
    "Sum",
    "WhiteKernel",
    "get_kernel",
]
