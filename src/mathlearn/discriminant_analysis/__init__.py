"""Discriminant analysis: Fisher's directions and Gaussian generative classifiers.

``FisherLDA`` (two- and multi-class, by the generalised eigenproblem, simultaneous
diagonalisation or PCA-then-LDA, with a Gaussian classifier on top), ``scatter_matrices``,
``LinearDiscriminantAnalysis`` and ``QuadraticDiscriminantAnalysis`` (Gaussian class
conditionals with a shared or per-class covariance), and ``KernelFisherDiscriminant``.
"""

from ._fisher import FisherLDA, scatter_matrices
from ._gaussian import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from ._kernel_fisher import KernelFisherDiscriminant

__all__ = [
    "FisherLDA",
    "KernelFisherDiscriminant",
    "LinearDiscriminantAnalysis",
    "QuadraticDiscriminantAnalysis",
    "scatter_matrices",
]
