"""Convolution and pooling layers on the fused autodiff primitives.

A convolutional layer (Stuttgart "Introduction to Machine Learning", §2.3, CNNs) lets every
output neuron see a ``k x k`` receptive field of every input channel, with the weights shared
over positions (``k^2`` weights per filter and input channel), several filters giving several
output channels; a stride downsamples and padding keeps the borders. Pooling (max or average)
summarises windows and has no parameters. The computation is
:func:`mathlearn.autodiff.conv2d` (im2col and one matrix product) and
:func:`~mathlearn.autodiff.max_pool2d` / :func:`~mathlearn.autodiff.avg_pool2d`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import autodiff as ad
from ..autodiff import Tensor
from ..utils.validation import check_random_state
from ._init import get_initializer
from ._module import Module

__all__ = ["AvgPool2d", "Conv2d", "MaxPool2d"]


def _val(x):
    return x.value if isinstance(x, Tensor) else x


def _check_images(x, name: str, channels: int | None = None) -> None:
    shape = np.shape(_val(x))
    if len(shape) != 4:
        raise ValueError(
            f"{name} expects images of shape (N, C, H, W); got an array of rank {len(shape)} "
            f"(shape {shape})."
        )
    if channels is not None and shape[1] != channels:
        raise ValueError(f"{name} expects {channels} input channels; got {shape[1]}.")


class Conv2d(Module):
    """Two-dimensional convolution layer ``y = w * x + b`` over ``(N, C, H, W)`` images.

    Parameters
    ----------
    in_channels : int
        ``C``.
    out_channels : int
        Number of filters ``O``.
    kernel_size : int or (int, int)
        ``(kh, kw)``.
    stride : int or (int, int), default=1
        Step between receptive fields.
    padding : int or (int, int), default=0
        Zeros added on each border.
    dilation : int or (int, int), default=1
        Spacing between the kernel's taps.
    bias : bool, default=True
        Whether to learn one bias per filter.
    weight_init : str or callable, default="he_normal"
        Initialiser of the filters (see :func:`mathlearn.nn.get_initializer`), with
        ``fan_in = C kh kw``.
    dtype : numpy dtype, default=numpy.float32
        Type of the parameters.
    random_state : int, Generator or None, default=None
        Source of the initial values.

    Attributes
    ----------
    weight : ndarray of shape (out_channels, in_channels, kh, kw)
        The filters (PyTorch's layout).
    bias : ndarray of shape (out_channels,)
        Present when ``bias=True``.

    Notes
    -----
    ``y[n, o, i, j] = b_o + sum_{c, a, b} w[o, c, a, b] x_pad[n, c, s i + d a, s j + d b]``,
    output size ``(H + 2 p - d (k - 1) - 1) // s + 1`` (Stuttgart "Introduction to Machine
    Learning", §2.3: receptive field, weight sharing, stride, padding).

    See Also
    --------
    mathlearn.autodiff.conv2d : The primitive, with its VJP.
    MaxPool2d, AvgPool2d : Pooling layers.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> conv = nn.Conv2d(1, 4, 3, padding=1, random_state=0)
    >>> conv(np.zeros((2, 1, 8, 8), dtype=np.float32)).shape
    (2, 4, 8, 8)
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | tuple[int, int],
        *,
        stride: int | tuple[int, int] = 1,
        padding: int | tuple[int, int] = 0,
        dilation: int | tuple[int, int] = 1,
        bias: bool = True,
        weight_init: str | Callable = "he_normal",
        dtype: Any = np.float32,
        random_state: Any = None,
    ) -> None:
        super().__init__()
        if int(in_channels) < 1 or int(out_channels) < 1:
            raise ValueError(
                f"Conv2d needs positive channel counts; got {in_channels}, {out_channels}."
            )
        kh, kw = np.broadcast_to(np.asarray(kernel_size, dtype=int), 2)
        if kh < 1 or kw < 1:
            raise ValueError(f"kernel_size must be positive; got {kernel_size}.")
        self.in_channels = int(in_channels)
        self.out_channels = int(out_channels)
        self.kernel_size = (int(kh), int(kw))
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.has_bias = bool(bias)
        rng = check_random_state(random_state)
        shape = (self.out_channels, self.in_channels, *self.kernel_size)
        self.register_parameter("weight", get_initializer(weight_init)(shape, rng, dtype))
        if self.has_bias:
            self.register_parameter("bias", np.zeros(self.out_channels, dtype=dtype))

    def forward(self, x: Any) -> Any:
        """The convolution of a batch.

        Parameters
        ----------
        x : array or Tensor of shape (N, in_channels, H, W)
            Images.
        """
        _check_images(x, "Conv2d", self.in_channels)
        y = ad.conv2d(
            x, self.weight, stride=self.stride, padding=self.padding, dilation=self.dilation
        )
        if self.has_bias:
            y = y + ad.reshape(self.bias, (-1, 1, 1))
        return y

    def extra_repr(self) -> str:
        return (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, padding={self.padding}, dilation={self.dilation}"
        )


class _Pool2d(Module):
    _name = ""

    def __init__(
        self,
        kernel_size: int | tuple[int, int],
        *,
        stride: int | tuple[int, int] | None = None,
        padding: int | tuple[int, int] = 0,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding

    def _pool(self, x):
        raise NotImplementedError

    def forward(self, x: Any) -> Any:
        """Pool every channel.

        Parameters
        ----------
        x : array or Tensor of shape (N, C, H, W)
            Images.
        """
        _check_images(x, self._name)
        return self._pool(x)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool2d(_Pool2d):
    """Max pooling: the largest value of each ``kh x kw`` window of every channel.

    Parameters
    ----------
    kernel_size : int or (int, int)
        Window size.
    stride : int or (int, int), optional
        Step between windows; default the window size.
    padding : int or (int, int), default=0
        ``-inf`` added on each border (at most half the window).

    See Also
    --------
    mathlearn.nn.AvgPool2d
        The window mean.
    torch.nn.MaxPool2d
        PyTorch's equivalent.

    Notes
    -----
    No parameters (Stuttgart "Introduction to Machine Learning", §2.3). The gradient goes to
    the first maximiser of each window.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> nn.MaxPool2d(2)(np.arange(16.0).reshape(1, 1, 4, 4))[0, 0]
    array([[ 5.,  7.],
           [13., 15.]])
    """

    _name = "MaxPool2d"

    def _pool(self, x):
        return ad.max_pool2d(x, self.kernel_size, stride=self.stride, padding=self.padding)


class AvgPool2d(_Pool2d):
    """Average pooling: the mean of each ``kh x kw`` window of every channel.

    Parameters
    ----------
    kernel_size : int or (int, int)
        Window size.
    stride : int or (int, int), optional
        Step between windows; default the window size.
    padding : int or (int, int), default=0
        Zeros added on each border; they count in the mean.

    See Also
    --------
    mathlearn.nn.MaxPool2d
        The window maximum.
    torch.nn.AvgPool2d
        PyTorch's equivalent.

    Notes
    -----
    No parameters (Stuttgart "Introduction to Machine Learning", §2.3).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> nn.AvgPool2d(2)(np.arange(16.0).reshape(1, 1, 4, 4))[0, 0]
    array([[ 2.5,  4.5],
           [10.5, 12.5]])
    """

    _name = "AvgPool2d"

    def _pool(self, x):
        return ad.avg_pool2d(x, self.kernel_size, stride=self.stride, padding=self.padding)
