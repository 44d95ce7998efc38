"""Clustering: k-means and its variants, hierarchical and spectral clustering.

PRML §9.1; Oxford "Advanced Topics in Statistical Machine Learning" §1.1.2 and §4.1;
Stuttgart "Introduction to Machine Learning" §6.2.
"""

from ._agglomerative import AgglomerativeClustering, linkage_tree
from ._dpmeans import DPMeans
from ._kmeans import KMeans, MiniBatchKMeans
from ._kmeans_common import kmeans_plusplus
from ._kmedoids import KMedoids
from ._soft_kmeans import SoftKMeans
from ._spectral import SpectralClustering

__all__ = [
    "AgglomerativeClustering",
    "DPMeans",
    "KMeans",
    "KMedoids",
    "MiniBatchKMeans",
    "SoftKMeans",
    "SpectralClustering",
    "kmeans_plusplus",
    "linkage_tree",
]
