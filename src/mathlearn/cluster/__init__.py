"""Clustering: k-means and its variants, hierarchical and spectral clustering.

Spec 001 M40-M42, spec 002 M2-M4 and M23-M26, spec 004 §6.2.
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
