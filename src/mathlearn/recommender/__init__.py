"""Collaborative filtering: a users x items ratings container, neighbourhood and
matrix-factorisation recommenders for explicit and implicit feedback, and their metrics.

Every model has ``fit(ratings)``, ``predict(users, items)``, ``recommend(user, n)`` and
``similar_items(item, n)``; ratings are a :class:`Ratings` (users are rows, items columns,
always) or anything it is built from (a SciPy sparse users x items matrix, a DataFrame).
"""

from ._als import ALS
from ._cocluster import CoClustering, SpectralCoClustering
from ._content import ContentBased
from ._implicit import ImplicitALS
from ._knn import ItemKNN, UserKNN
from ._metrics import mae, map_at_k, ndcg_at_k, precision_at_k, recall_at_k, rmse
from ._pmf import BayesianProbabilisticMatrixFactorization, ProbabilisticMatrixFactorization
from ._ratings import Ratings, leave_k_out_split, temporal_split, train_test_split
from ._sgd import SGDMatrixFactorization
from ._svd import TruncatedSVDRecommender

__all__ = [
    "ALS",
    "BayesianProbabilisticMatrixFactorization",
    "CoClustering",
    "ContentBased",
    "ImplicitALS",
    "ItemKNN",
    "ProbabilisticMatrixFactorization",
    "Ratings",
    "SGDMatrixFactorization",
    "SpectralCoClustering",
    "TruncatedSVDRecommender",
    "UserKNN",
    "leave_k_out_split",
    "mae",
    "map_at_k",
    "ndcg_at_k",
    "precision_at_k",
    "recall_at_k",
    "rmse",
    "temporal_split",
    "train_test_split",
]
