"""Explicit finite-dimensional feature maps that approximate a kernel: Nyström, random features."""

from ._nystroem import Nystroem
from ._random_features import RandomFourierFeatures

__all__ = ["Nystroem", "RandomFourierFeatures"]
