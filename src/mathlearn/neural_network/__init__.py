"""Neural-network estimators with the scikit-learn contract.

:class:`MLPClassifier` and :class:`MLPRegressor` (multilayer perceptrons trained by
backpropagation, PRML §5; Stuttgart "Introduction to Machine Learning" §4), the latter with
MC-dropout predictive uncertainty. They are built from :mod:`mathlearn.nn` and trained with
:mod:`mathlearn.optim`. :class:`RandomFeatureClassifier` and :class:`RandomFeatureRegressor`
keep random hidden layers fixed and fit only the output layer (Stuttgart §4, neural random
features).
"""

from ._multilayer_perceptron import MLPClassifier, MLPRegressor
from ._random_features import RandomFeatureClassifier, RandomFeatureRegressor

__all__ = ["MLPClassifier", "MLPRegressor", "RandomFeatureClassifier", "RandomFeatureRegressor"]
