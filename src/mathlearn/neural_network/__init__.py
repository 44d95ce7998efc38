"""Neural-network estimators with the scikit-learn contract.

:class:`CNNClassifier` (convolutional network for images), :class:`RecurrentClassifier` and
:class:`RecurrentRegressor` (LSTM / GRU / RNN over sequences), :class:`Autoencoder` and
:class:`VariationalAutoencoder`. They are built from :mod:`mathlearn.nn` and trained with
:mod:`mathlearn.optim`.
"""

from ._autoencoder import Autoencoder
from ._cnn import CNNClassifier
from ._recurrent import RecurrentClassifier, RecurrentRegressor
from ._vae import VariationalAutoencoder, diagonal_gaussian_kl

__all__ = [
    "Autoencoder",
    "CNNClassifier",
    "RecurrentClassifier",
    "RecurrentRegressor",
    "VariationalAutoencoder",
    "diagonal_gaussian_kl",
]
