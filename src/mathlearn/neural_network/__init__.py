"""Neural-network estimators with the scikit-learn contract.

:class:`MLPClassifier` and :class:`MLPRegressor` (multilayer perceptrons trained by
backpropagation, PRML §5; Stuttgart "Introduction to Machine Learning" §4), the latter with
MC-dropout predictive uncertainty. They are built from :mod:`mathlearn.nn` and trained with
:mod:`mathlearn.optim`.
"""

from ._multilayer_perceptron import MLPClassifier, MLPRegressor

__all__ = ["MLPClassifier", "MLPRegressor"]
