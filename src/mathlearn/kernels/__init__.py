"""Kernel functions ``k(x, y)`` evaluated as Gram matrices.

``Linear``, ``RBF``, ``Polynomial`` and ``Sigmoid`` (spec 000 M59); each is a callable
``k(X, Y=None)`` with its hyperparameters as plain attributes.
"""

from ._kernels import RBF, Kernel, Linear, Polynomial, Sigmoid

__all__ = ["RBF", "Kernel", "Linear", "Polynomial", "Sigmoid"]
