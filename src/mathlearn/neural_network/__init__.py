"""Neural-network estimators with the scikit-learn contract.

:class:`CNNClassifier` (convolutional network for images), :class:`RecurrentClassifier` and
:class:`RecurrentRegressor` (LSTM / GRU / RNN over sequences), :class:`Autoencoder` and
:class:`VariationalAutoencoder`. They are built from :mod:`mathlearn.nn` and trained with
:mod:`mathlearn.optim`.
"""

from ._cnn import CNNClassifier

__all__ = ["CNNClassifier"]
