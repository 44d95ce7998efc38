"""A convolutional network classifier for image arrays."""

from __future__ import annotations

from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .. import nn
from ..base import BaseClassifier, _fit_context
from ..utils._param_validation import Interval
from ..utils.validation import validate_data
from ._network_base import (
    TRAINING_CONSTRAINTS,
    center_scale,
    make_rng,
    predict_batches,
    standardize,
    train_network,
)

__all__ = ["CNNClassifier"]


def _log_softmax_rows(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


class CNNClassifier(BaseClassifier):
    """Convolutional neural network classifier for images ``(N, C, H, W)``.

    The network is ``[Conv2d(3x3, padding 1) -> ReLU -> MaxPool2d(2)]`` for each entry of
    ``conv_channels``, then ``Flatten -> [Linear -> ReLU]`` for each of ``hidden_sizes``,
    then a linear layer to the class scores, trained on the softmax cross-entropy.

    Parameters
    ----------
    conv_channels : tuple of int, default=(8, 16)
        Filters of each convolutional block.
    kernel_size : int, default=3
        Side of the square filters (padding keeps the image size: ``kernel_size // 2``).
    hidden_sizes : tuple of int, default=(64,)
        Widths of the dense layers after the convolutions.
    image_shape : tuple of int, optional
        ``(H, W)`` or ``(C, H, W)`` of flattened images: 2-D ``X`` of shape
        ``(n_samples, C H W)`` is reshaped to it. Without it, 2-D ``X`` is read as one row
        of pixels per sample, ``(n_samples, 1, 1, n_features)``.
    learning_rate : float, default=1e-2
        Adam's step size.
    max_iter : int, default=100
        Maximum number of epochs.
    batch_size : int, default=64
        Minibatch size (capped at the number of samples).
    alpha : float, default=1e-4
        Weight decay: ``(alpha / 2) ||W||^2`` on every weight matrix and filter bank.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the data, stop when its loss has not improved
        by ``tol`` for ``n_iter_no_change`` epochs and keep the best weights.
    validation_fraction : float, default=0.1
        Share of the data held out for early stopping.
    n_iter_no_change : int, default=10
        Patience, in epochs.
    tol : float, default=1e-4
        Least decrease of the (training or validation) loss that counts as progress.
    random_state : int, Generator, RandomState or None, default=None
        Source of the initial weights, the shuffling and the validation split.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    network_ : mathlearn.nn.Sequential
        The trained network (float32), mapping standardised images to class scores.
    image_shape_ : tuple of int
        ``(C, H, W)`` of the images the network reads.
    input_mean_ : ndarray of shape (1, C, 1, 1)
        Per-channel mean subtracted from the images.
    input_scale_ : float
        Standard deviation that divides the centred images.
    history_ : dict of lists
        ``"loss"`` per epoch (and ``"val_loss"``, ``"val_score"`` with early stopping).
    loss_curve_ : list of float
        Mean training loss per epoch.
    n_iter_ : int
        Number of epochs run.
    n_features_in_ : int
        ``X.shape[1]`` of the training input (channels for 4-D input).

    Notes
    -----
    Convolutional layers (Stuttgart "Introduction to Machine Learning", §2.3, CNNs): each
    output neuron sees a ``k x k`` receptive field with weights shared over positions, several
    filters give several channels, pooling (no parameters) downsamples. The loss is the
    softmax cross-entropy of the notes' multiclass output layer; the gradients are the fused
    convolution/pooling VJPs of :mod:`mathlearn.autodiff` (im2col and one matrix product).
    Images are centred per channel and divided by one overall standard deviation.

    Complexity (``N`` images of ``C_0`` channels, ``k = kernel_size``, ``L`` convolutional
    blocks, block ``l`` mapping ``C_{l-1}`` to ``C_l`` channels on an ``H_l x W_l`` image that
    its 2 x 2 pooling halves, dense widths ``h_1, ..., h_J`` after the flattened
    ``F = C_L H_{L+1} W_{L+1}`` features, ``K`` classes, ``B = batch_size``): a forward pass
    costs ``Q = sum_l k^2 C_{l-1} C_l H_l W_l + F h_1 + h_1 h_2 + ... + h_J K`` multiply-adds
    per image (im2col and one matrix product per convolution), the backward pass about twice
    that, so an epoch costs ``O(N Q)`` time and ``E`` epochs ``O(E N Q)``: linear in the
    number of images and of pixels. Memory beyond ``X``: its standardised float32 copy
    (``N C_0 H_1 W_1`` entries), the weights with Adam's two moments, and for one minibatch
    the im2col matrices and activations, ``O(B sum_l (k^2 C_{l-1} + C_l) H_l W_l)``.
    Prediction of ``M`` images costs ``O(M Q)``, in batches of 1 024.

    See Also
    --------
    mathlearn.nn.Conv2d : The layer.
    mathlearn.neural_network.MLPClassifier : The dense network.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neural_network import CNNClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((40, 1, 6, 6)); y = np.repeat([0, 1], 20)
    >>> X[y == 1, :, :3] += 2.0  # class 1: bright top half
    >>> clf = CNNClassifier(conv_channels=(4,), hidden_sizes=(8,), tol=1e-2,
    ...                     random_state=0).fit(X, y)
    >>> clf.score(X, y)
    1.0
    """

    _parameter_constraints: ClassVar[dict] = {
        "conv_channels": [tuple, list],
        "kernel_size": [Interval(Integral, 1, None, closed="left")],
        "hidden_sizes": [tuple, list],
        "image_shape": [tuple, list, None],
        **TRAINING_CONSTRAINTS,
    }
    # The common checks' blobs (300 points, 3 classes) need training accuracy > 0.83: twelve
    # epochs give at least 0.90 over 30 seeds (binary, multiclass and float32 data).
    _common_test_params = {"max_iter": 12, "conv_channels": (4,), "hidden_sizes": (16,)}
    _common_test_convergence_warning_expected = True

    def __init__(
        self,
        *,
        conv_channels: tuple[int, ...] = (8, 16),
        kernel_size: int = 3,
        hidden_sizes: tuple[int, ...] = (64,),
        image_shape: tuple[int, ...] | None = None,
        learning_rate: float = 1e-2,
        max_iter: int = 100,
        batch_size: int = 64,
        alpha: float = 1e-4,
        early_stopping: bool = False,
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 10,
        tol: float = 1e-4,
        random_state: Any = None,
    ) -> None:
        self.conv_channels = conv_channels
        self.kernel_size = kernel_size
        self.hidden_sizes = hidden_sizes
        self.image_shape = image_shape
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.alpha = alpha
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.random_state = random_state

    def _images(self, X: np.ndarray) -> np.ndarray:
        """``X`` as ``(N, C, H, W)``."""
        if X.ndim == 4:
            return X
        if X.ndim == 3:
            return X[:, None]
        if X.ndim != 2:
            raise ValueError(
                f"CNNClassifier expects images of rank 4 (N, C, H, W), 3 (N, H, W) or 2 "
                f"(flattened, with image_shape); got an array of rank {X.ndim}."
            )
        if self.image_shape is None:
            return X[:, None, None, :]
        shape = tuple(int(s) for s in self.image_shape)
        if len(shape) == 2:
            shape = (1, *shape)
        if len(shape) != 3 or int(np.prod(shape)) != X.shape[1]:
            raise ValueError(
                f"image_shape {tuple(self.image_shape)} does not match the {X.shape[1]} "
                "features of X (their product must equal n_features)."
            )
        return X.reshape(len(X), *shape)

    def _check_X(self, X, y=None, reset: bool = False):
        if reset:
            X, y = validate_data(self, X, y, dtype=np.float64, allow_nd=True)
        else:
            X = validate_data(self, X, dtype=np.float64, allow_nd=True, reset=False)
        images = self._images(X)
        if reset:
            self.image_shape_ = tuple(int(s) for s in images.shape[1:])
        elif images.shape[1:] != self.image_shape_:
            raise ValueError(
                f"CNNClassifier was fitted on images of shape {self.image_shape_}; got "
                f"{images.shape[1:]}."
            )
        return images, y

    def _build(self, rng) -> nn.Sequential:
        for name in ("conv_channels", "hidden_sizes"):
            sizes = getattr(self, name)
            if not all(isinstance(s, Integral) and int(s) >= 1 for s in sizes):
                raise ValueError(f"{name} must hold positive integers; got {sizes!r}.")
        if not isinstance(self.kernel_size, Integral) or self.kernel_size < 1:
            raise ValueError(f"kernel_size must be a positive integer; got {self.kernel_size!r}.")
        c, h, w = self.image_shape_
        layers: list[nn.Module] = []
        k = int(self.kernel_size)
        for out in self.conv_channels:
            layers += [nn.Conv2d(c, int(out), k, padding=k // 2, random_state=rng), nn.ReLU()]
            # Even kernels grow the image by one with this padding.
            h, w = h + 2 * (k // 2) - k + 1, w + 2 * (k // 2) - k + 1
            ph, pw = min(2, h), min(2, w)
            if ph * pw > 1:
                layers.append(nn.MaxPool2d((ph, pw)))
                h, w = h // ph, w // pw
            c = int(out)
        layers.append(nn.Flatten())
        width = c * h * w
        for size in self.hidden_sizes:
            layers += [nn.Linear(width, int(size), weight_init="he_normal", random_state=rng)]
            layers.append(nn.ReLU())
            width = int(size)
        layers.append(nn.Linear(width, len(self.classes_), random_state=rng))
        return nn.Sequential(*layers)

    @_fit_context
    def fit(self, X: Any, y: Any) -> CNNClassifier:
        """Train the network on labelled images.

        Parameters
        ----------
        X : array-like of shape (n_samples, C, H, W), (n_samples, H, W) or (n_samples, n_features)
            Images (flattened ones are reshaped with ``image_shape``).
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).

        Returns
        -------
        self : CNNClassifier
            The fitted classifier.
        """
        images, y = self._check_X(X, y, reset=True)
        y_idx = self._encode_labels(y)
        self.input_mean_, self.input_scale_ = center_scale(images, (0, 2, 3))
        Z = standardize(images, self.input_mean_, self.input_scale_, np.float32)
        rng = make_rng(self.random_state)
        self.network_ = self._build(rng)

        def accuracy(module, Xv, yv):
            return float(np.mean(np.argmax(predict_batches(module, Xv), axis=1) == yv))

        train_network(
            self,
            self.network_,
            nn.cross_entropy,
            Z,
            y_idx,
            rng=rng,
            score=accuracy if self.early_stopping else None,
        )
        return self

    def _validate_X_predict(self, X):
        check_is_fitted(self)
        images, _ = self._check_X(X)
        return standardize(images, self.input_mean_, self.input_scale_, np.float64)

    def _joint_log_likelihood(self, X):
        return _log_softmax_rows(predict_batches(self.network_, X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        return tags
