"""Ensembles: bagging, random forests, extra trees and AdaBoost.

Committees of models (PRML §14.2-14.3; Stuttgart "Introduction to Machine Learning" §2.6):
``BaggingClassifier`` / ``BaggingRegressor`` average models fitted on bootstrap samples;
``RandomForestClassifier`` / ``RandomForestRegressor`` and ``ExtraTreesClassifier`` bag
randomised CART trees; ``AdaBoostClassifier`` is discrete SAMME boosting;
``GradientBoostingRegressor`` / ``GradientBoostingClassifier`` boost regression trees on the
gradient of a loss, ``HistGradientBoostingRegressor`` / ``HistGradientBoostingClassifier``
on binned features; ``StackingRegressor`` / ``StackingClassifier`` and
``BayesianModelAveraging`` combine models.
"""

from ._bagging import BaggingClassifier, BaggingRegressor
from ._forest import ExtraTreesClassifier, RandomForestClassifier, RandomForestRegressor
from ._gradient_boosting import GradientBoostingClassifier, GradientBoostingRegressor
from ._hist_gradient_boosting import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from ._model_averaging import BayesianModelAveraging
from ._stacking import StackingClassifier, StackingRegressor
from ._weight_boosting import AdaBoostClassifier

__all__ = [
    "AdaBoostClassifier",
    "BaggingClassifier",
    "BaggingRegressor",
    "BayesianModelAveraging",
    "ExtraTreesClassifier",
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "HistGradientBoostingClassifier",
    "HistGradientBoostingRegressor",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "StackingClassifier",
    "StackingRegressor",
]
