"""Feature extraction by matrix decompositions.

``PCA`` (SVD, Gram, covariance and randomised routes), ``ProbabilisticPCA`` (closed form and
EM with missing values), ``KernelPCA``, ``FactorAnalysis`` (EM), ``FastICA``, ``NMF``
(multiplicative updates), ``PLSRegression`` (NIPALS) and the
``LatentDirichletAllocation`` topic model (variational inference). Spec 000 §2.H-2.I, spec 001
M33-M39, spec 002 M1/M20/M32, spec 004 §6.1.
"""

from ._factor_analysis import FactorAnalysis
from ._fastica import FastICA
from ._kernel_pca import KernelPCA
from ._lda_topic import LatentDirichletAllocation
from ._nmf import NMF
from ._pca import PCA
from ._pls import PLSRegression
from ._ppca import ProbabilisticPCA

__all__ = [
    "NMF",
    "PCA",
    "FactorAnalysis",
    "FastICA",
    "KernelPCA",
    "LatentDirichletAllocation",
    "PLSRegression",
    "ProbabilisticPCA",
]
