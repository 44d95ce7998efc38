"""Fisher's linear discriminant analysis (spec 000 M55-M58).

``FisherLDA`` (two- and multi-class, by the generalised eigenproblem, simultaneous
diagonalisation or PCA-then-LDA, with a Gaussian classifier on top) and
``scatter_matrices``.
"""

from ._fisher import FisherLDA, scatter_matrices
from ._gaussian import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis

__all__ = [
    "FisherLDA",
    "LinearDiscriminantAnalysis",
    "QuadraticDiscriminantAnalysis",
    "scatter_matrices",
]
