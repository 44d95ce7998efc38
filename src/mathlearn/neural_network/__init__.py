"""Neural-network estimators with the scikit-learn contract.

:class:`MLPClassifier` and :class:`MLPRegressor` (multilayer perceptrons trained by
backpropagation, PRML §5; Stuttgart "Introduction to Machine Learning" §4), the latter with
MC-dropout predictive uncertainty; :class:`CNNClassifier` (convolutional network for images);
:class:`RecurrentClassifier` and :class:`RecurrentRegressor` (LSTM / GRU / RNN over
sequences); :class:`Autoencoder` and :class:`VariationalAutoencoder` (with
:func:`diagonal_gaussian_kl`). They are built from :mod:`mathlearn.nn` and trained with
:mod:`mathlearn.optim`. :class:`RandomFeatureClassifier` and
:class:`RandomFeatureRegressor` keep random hidden layers fixed and fit only the output layer
(Stuttgart §4, neural random features).
"""

from ._autoencoder import Autoencoder
from ._cnn import CNNClassifier
from ._multilayer_perceptron import MLPClassifier, MLPRegressor
from ._random_features import RandomFeatureClassifier, RandomFeatureRegressor
from ._recurrent import RecurrentClassifier, RecurrentRegressor
from ._vae import VariationalAutoencoder, diagonal_gaussian_kl

__all__ = [
    "Autoencoder",
    "CNNClassifier",
    "MLPClassifier",
    "MLPRegressor",
    "RandomFeatureClassifier",
    "RandomFeatureRegressor",
    "RecurrentClassifier",
    "RecurrentRegressor",
    "VariationalAutoencoder",
    "diagonal_gaussian_kl",
]
