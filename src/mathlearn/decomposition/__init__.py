"""Feature extraction by matrix decompositions.

``PCA`` (SVD, Gram, covariance and randomised routes), ``ProbabilisticPCA`` (closed form and
EM with missing values), ``KernelPCA``, ``FactorAnalysis`` (EM), ``FastICA``, ``NMF``
(multiplicative updates), ``PLSRegression`` (NIPALS) and the
``LatentDirichletAllocation`` topic model (variational inference). Imperial
"Mathematics for Inference and Machine Learning" ch. 2; PRML ch. 12; Oxford
"Advanced Topics in Statistical Machine Learning" §1.1.1, §3.6 and §5.5; Stuttgart
"Introduction to Machine Learning" §6.1.
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
