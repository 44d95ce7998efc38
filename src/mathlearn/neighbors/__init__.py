"""Local ("lazy") learning: kd-trees, nearest-neighbour estimators and kernel smoothers.

Stuttgart "Introduction to Machine Learning" §7.1 (local & lazy learning, smoothing kernels,
kd-trees) and PRML §2.5.2 (nearest-neighbour methods).
"""

from ._kd_tree import KDTree, brute_force_kneighbors
from ._knn import KNeighborsClassifier, KNeighborsRegressor
from ._prototypes import KMeansPrototypeClassifier
from ._smoothers import LocallyWeightedRegression, NadarayaWatson

__all__ = [
    "KDTree",
    "KMeansPrototypeClassifier",
    "KNeighborsClassifier",
    "KNeighborsRegressor",
    "LocallyWeightedRegression",
    "NadarayaWatson",
    "brute_force_kneighbors",
]
