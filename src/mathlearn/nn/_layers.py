"""Layers: dense, activations, dropout, batch normalisation, flatten, embedding.

The multilayer perceptron of the notes (Stuttgart "Introduction to Machine Learning" §4;
PRML §5.1) is ``z_l = W_l x_{l-1} + b_l``, ``x_l = sigma(z_l)`` for the hidden layers and a
linear output ``f(x) = z_L``: ``Sequential(Linear, Tanh, Linear)`` and so on. Activations
are autodiff primitives (``relu``, ``leaky_relu``, ``sigmoid``, ``tanh``, ``gelu``,
``softmax``, ``log_softmax``), so their VJPs are the elementwise derivatives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import autodiff as ad
from ..autodiff import Tensor
from ..utils.validation import check_random_state
from ._functional import _linear, dropout
from ._init import get_initializer
from ._module import Module

__all__ = [
    "GELU",
    "BatchNorm1d",
    "BatchNorm2d",
    "Dropout",
    "Embedding",
    "Flatten",
    "Identity",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "ReLU",
    "Sigmoid",
    "Softmax",
    "Tanh",
]


def _val(x):
    return x.value if isinstance(x, Tensor) else x


class Linear(Module):
    """Dense layer ``y = x W^T + b``.

    Parameters
    ----------
    in_features : int
        ``h_{l-1}``.
    out_features : int
        ``h_l``.
    bias : bool, default=True
        Whether to learn ``b``.
    weight_init : str or callable, default="fan_in_normal"
        Initialiser of ``W`` (see :func:`get_initializer`); the default is the notes'
        ``N(0, 1 / h_{l-1})``.
    bias_init : {"zeros", "uniform"} or callable, default="zeros"
        ``"uniform"`` draws ``b ~ U(-1, 1)`` (the notes' choice, so that ReLU kinks cover
        the input region); a callable gets ``(shape, random_state, dtype)``.
    dtype : numpy dtype, default=numpy.float32
        Type of the parameters.
    random_state : int, Generator or None, default=None
        Source of the initial values.

    Attributes
    ----------
    weight : ndarray of shape (out_features, in_features)
        ``W_l``.
    bias : ndarray of shape (out_features,)
        ``b_l`` (absent when ``bias=False``).

    See Also
    --------
    mathlearn.nn.Sequential
        Chains layers.
    torch.nn.Linear
        PyTorch's equivalent (same weight layout).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> layer = nn.Linear(3, 2, random_state=0)
    >>> layer.weight.shape, layer.weight.dtype
    ((2, 3), dtype('float32'))
    >>> layer(np.ones((4, 3), dtype=np.float32)).shape
    (4, 2)
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        *,
        weight_init: str | Callable = "fan_in_normal",
        bias_init: str | Callable = "zeros",
        dtype: Any = np.float32,
        random_state: Any = None,
    ) -> None:
        super().__init__()
        if int(in_features) < 1 or int(out_features) < 1:
            raise ValueError(
                f"Linear needs positive sizes; got in={in_features}, out={out_features}."
            )
        self.in_features = int(in_features)
        self.out_features = int(out_features)
        rng = check_random_state(random_state)
        shape = (self.out_features, self.in_features)
        self.register_parameter("weight", get_initializer(weight_init)(shape, rng, dtype))
        self.has_bias = bool(bias)
        if self.has_bias:
            if callable(bias_init):
                b = bias_init((self.out_features,), rng, dtype)
            elif bias_init == "uniform":
                b = rng.uniform(-1.0, 1.0, size=self.out_features)
            elif bias_init == "zeros":
                b = np.zeros(self.out_features)
            else:
                raise ValueError(
                    f"bias_init must be 'zeros', 'uniform' or a callable; got {bias_init!r}."
                )
            self.register_parameter("bias", np.asarray(b, dtype=dtype))

    def forward(self, x: Any) -> Any:
        """``x W^T + b``.

        Parameters
        ----------
        x : array or Tensor of shape (..., in_features)
            Inputs.
        """
        if np.shape(_val(x))[-1:] != (self.in_features,):
            raise ValueError(
                f"Linear expects inputs with {self.in_features} features in the last axis; "
                f"got shape {np.shape(_val(x))}."
            )
        return _linear(x, self.weight, self.bias if self.has_bias else None)

    def extra_repr(self) -> str:
        return f"{self.in_features}, {self.out_features}, bias={self.has_bias}"


class _Elementwise(Module):
    _fn: Callable[[Any], Any]

    def forward(self, x: Any) -> Any:
        """Apply the activation entrywise.

        Parameters
        ----------
        x : array or Tensor
            Input.
        """
        return type(self)._fn(x)


class ReLU(_Elementwise):
    """``max(x, 0)`` entrywise.

    See Also
    --------
    mathlearn.nn.LeakyReLU
        A small slope for negative inputs.
    mathlearn.nn.GELU
        A smooth alternative.
    torch.nn.ReLU
        PyTorch's equivalent.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> nn.ReLU()(np.array([-1.0, 2.0]))
    array([0., 2.])
    """

    _fn = ad.relu


class Sigmoid(_Elementwise):
    """``1 / (1 + exp(-x))`` entrywise, stable for large ``|x|``.

    See Also
    --------
    mathlearn.nn.Tanh
        The zero-centred squashing unit.
    torch.nn.Sigmoid
        PyTorch's equivalent.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> nn.Sigmoid()(np.array([0.0]))
    array([0.5])
    """

    _fn = ad.sigmoid


class Tanh(_Elementwise):
    """``tanh(x)`` entrywise (PRML §5.1's hidden unit).

    See Also
    --------
    mathlearn.nn.Sigmoid
        tanh(x) = 2 sigma(2x) - 1.
    torch.nn.Tanh
        PyTorch's equivalent.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> nn.Tanh()(np.array([0.0]))
    array([0.])
    """

    _fn = ad.tanh


class GELU(_Elementwise):
    """``x Phi(x)`` entrywise (exact form; ``Phi`` the standard normal cdf).

    See Also
    --------
    mathlearn.nn.ReLU
        The piecewise-linear unit.
    torch.nn.GELU
        PyTorch's equivalent.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> nn.GELU()(np.array([0.0, 1.0])).round(4)
    array([0.    , 0.8413])
    """

    _fn = ad.gelu


class Identity(Module):
    """Returns its input (a placeholder layer).

    See Also
    --------
    mathlearn.nn.Sequential
        A chain of modules.
    torch.nn.Identity
        PyTorch's equivalent.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> nn.Identity()(np.array([1.0]))
    array([1.])
    """

    def forward(self, x: Any) -> Any:
        """Return ``x``.

        Parameters
        ----------
        x : array or Tensor
            Input.
        """
        return x


class LeakyReLU(Module):
    """``max(a x, x)`` entrywise, slope ``a`` for negative inputs.

    Parameters
    ----------
    negative_slope : float, default=0.01
        ``a`` in ``[0, 1)``; the notes' value is 0.01.

    See Also
    --------
    mathlearn.nn.ReLU
        Slope zero for negative inputs.
    torch.nn.LeakyReLU
        PyTorch's equivalent.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> nn.LeakyReLU()(np.array([-1.0, 2.0]))
    array([-0.01,  2.  ])
    """

    def __init__(self, negative_slope: float = 0.01) -> None:
        super().__init__()
        if not 0.0 <= negative_slope < 1.0:
            raise ValueError(f"negative_slope must be in [0, 1); got {negative_slope}.")
        self.negative_slope = float(negative_slope)

    def forward(self, x: Any) -> Any:
        """Apply the activation.

        Parameters
        ----------
        x : array or Tensor
            Input.
        """
        return ad.leaky_relu(x, negative_slope=self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class Softmax(Module):
    """``exp(x) / sum(exp(x))`` along ``axis``.

    Parameters
    ----------
    axis : int, default=-1
        The axis normalised.

    See Also
    --------
    mathlearn.nn.LogSoftmax
        Its logarithm, computed stably.
    torch.nn.Softmax
        PyTorch's equivalent.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> nn.Softmax()(np.array([[0.0, 0.0]]))
    array([[0.5, 0.5]])
    """

    def __init__(self, axis: int = -1) -> None:
        super().__init__()
        self.axis = int(axis)

    def forward(self, x: Any) -> Any:
        """Normalise along ``axis``.

        Parameters
        ----------
        x : array or Tensor
            Input.
        """
        return ad.softmax(x, axis=self.axis)


class LogSoftmax(Module):
    """``x - logsumexp(x)`` along ``axis``.

    Parameters
    ----------
    axis : int, default=-1
        The axis normalised.

    See Also
    --------
    mathlearn.nn.Softmax
        The probabilities themselves.
    torch.nn.LogSoftmax
        PyTorch's equivalent.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> nn.LogSoftmax()(np.array([[0.0, 0.0]])).round(4)
    array([[-0.6931, -0.6931]])
    """

    def __init__(self, axis: int = -1) -> None:
        super().__init__()
        self.axis = int(axis)

    def forward(self, x: Any) -> Any:
        """Log-normalise along ``axis``.

        Parameters
        ----------
        x : array or Tensor
            Input.
        """
        return ad.log_softmax(x, axis=self.axis)


class Dropout(Module):
    """Inverted dropout: in training, zero entries with probability ``p``, scale by ``1/(1-p)``.

    In evaluation mode (``eval()``) it is the identity. The mask is drawn from the generator
    given by ``set_random_state`` (or a fresh one when none was given).

    Parameters
    ----------
    p : float, default=0.5
        Drop probability in ``[0, 1)``; the notes call 0.5 near-optimal.

    See Also
    --------
    mathlearn.neural_network.MLPRegressor
        MC dropout for predictive uncertainty.
    torch.nn.Dropout
        PyTorch's equivalent.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" §4 (regularisation; Srivastava et al.,
    2014). Keeping dropout on at prediction time gives MC dropout (§8).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> d = nn.Dropout(0.5).set_random_state(np.random.default_rng(0))
    >>> sorted(set(d(np.ones(10)).tolist()))
    [0.0, 2.0]
    >>> d.eval()(np.ones(3))
    array([1., 1., 1.])
    """

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout probability must be in [0, 1); got {p}.")
        self.p = float(p)

    def forward(self, x: Any) -> Any:
        """Apply the mask (training) or return ``x`` (evaluation).

        Parameters
        ----------
        x : array or Tensor
            Input.
        """
        if not self.training or self.p == 0.0:
            return x
        if self._rng is None:
            object.__setattr__(self, "_rng", np.random.default_rng())
        return dropout(x, self.p, self._rng)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class _BatchNorm(Module):
    _min_ndim = 2

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        *,
        dtype: Any = np.float32,
    ) -> None:
        super().__init__()
        if int(num_features) < 1:
            raise ValueError(f"num_features must be positive; got {num_features}.")
        if not eps > 0:
            raise ValueError(f"eps must be positive; got {eps}.")
        if not 0.0 < momentum <= 1.0:
            raise ValueError(f"momentum must be in (0, 1]; got {momentum}.")
        self.num_features = int(num_features)
        self.eps = float(eps)
        self.momentum = float(momentum)
        self.affine = bool(affine)
        if self.affine:
            self.register_parameter("weight", np.ones(self.num_features, dtype=dtype))
            self.register_parameter("bias", np.zeros(self.num_features, dtype=dtype))
        self.register_buffer("running_mean", np.zeros(self.num_features, dtype=dtype))
        self.register_buffer("running_var", np.ones(self.num_features, dtype=dtype))
        self.register_buffer("num_batches_tracked", np.array(0))

    def _check(self, x) -> tuple[int, ...]:
        shape = np.shape(_val(x))
        if len(shape) not in self._ndims or shape[1] != self.num_features:
            raise ValueError(
                f"{type(self).__name__}({self.num_features}) expects inputs of "
                f"{' or '.join(str(n) for n in self._ndims)} axes with {self.num_features} "
                f"channels in axis 1; got shape {shape}."
            )
        return shape

    def forward(self, x: Any) -> Any:
        """Normalise each channel (axis 1) by batch or running statistics.

        Parameters
        ----------
        x : array or Tensor of shape (N, C, ...)
            Input.
        """
        shape = self._check(x)
        axes = (0, *range(2, len(shape)))
        bshape = (1, self.num_features) + (1,) * (len(shape) - 2)
        if self.training:
            count = int(np.prod([shape[a] for a in axes]))
            if count < 2:
                raise ValueError(
                    f"{type(self).__name__} in training mode needs more than one value per "
                    "channel to estimate a variance; got a batch of one."
                )
            mean = ad.mean(x, axis=axes, keepdims=True)
            centred = x - mean
            var = ad.mean(centred * centred, axis=axes, keepdims=True)
            xhat = centred / ad.sqrt(var + self.eps)
            m = self.momentum
            mv = np.reshape(_val(mean), -1)
            vv = np.reshape(_val(var), -1) * (count / (count - 1))  # unbiased, as PyTorch
            dtype = self.running_mean.dtype
            self._buffers["running_mean"] = ((1 - m) * self.running_mean + m * mv).astype(dtype)
            self._buffers["running_var"] = ((1 - m) * self.running_var + m * vv).astype(dtype)
            self._buffers["num_batches_tracked"] = self.num_batches_tracked + 1
        else:
            mean = np.reshape(self.running_mean, bshape)
            std = np.sqrt(np.reshape(self.running_var, bshape) + self.eps)
            xhat = (x - mean.astype(np.asarray(_val(x)).dtype)) / std.astype(
                np.asarray(_val(x)).dtype
            )
        if self.affine:
            xhat = xhat * ad.reshape(self.weight, bshape) + ad.reshape(self.bias, bshape)
        return xhat

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}"


class BatchNorm1d(_BatchNorm):
    """Batch normalisation over a batch of vectors ``(N, C)`` or sequences ``(N, C, L)``.

    Training mode: ``y = gamma (x - mean_B) / sqrt(var_B + eps) + beta`` with the batch's
    per-channel mean and (biased) variance, and the running statistics updated as
    ``r <- (1 - momentum) r + momentum * stat`` (unbiased variance, as PyTorch does).
    Evaluation mode: the running statistics replace the batch's.

    Parameters
    ----------
    num_features : int
        ``C``.
    eps : float, default=1e-5
        Added to the variance.
    momentum : float, default=0.1
        Weight of the new batch in the running statistics.
    affine : bool, default=True
        Learn ``gamma`` (``weight``) and ``beta`` (``bias``).
    dtype : numpy dtype, default=numpy.float32
        Type of the parameters and buffers.

    Attributes
    ----------
    running_mean, running_var : ndarray of shape (num_features,)
        Buffers.

    See Also
    --------
    mathlearn.nn.BatchNorm2d
        Images, statistics per channel.
    torch.nn.BatchNorm1d
        PyTorch's equivalent.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> bn = nn.BatchNorm1d(2, dtype=np.float64)
    >>> y = bn(np.array([[1.0, 10.0], [3.0, 30.0]]))
    >>> y.round(3)
    array([[-1., -1.],
           [ 1.,  1.]])
    >>> bn.running_mean
    array([0.2, 2. ])
    """

    _ndims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation over images ``(N, C, H, W)``, statistics per channel.

    See :class:`BatchNorm1d` for the equations.

    Parameters
    ----------
    num_features : int
        ``C``.
    eps : float, default=1e-5
        Added to the variance.
    momentum : float, default=0.1
        Weight of the new batch in the running statistics.
    affine : bool, default=True
        Learn ``gamma`` and ``beta``.
    dtype : numpy dtype, default=numpy.float32
        Type of the parameters and buffers.

    See Also
    --------
    mathlearn.nn.BatchNorm1d
        Vectors and sequences.
    torch.nn.BatchNorm2d
        PyTorch's equivalent.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> nn.BatchNorm2d(3)(np.ones((2, 3, 4, 4), dtype=np.float32)).shape
    (2, 3, 4, 4)
    """

    _ndims = (4,)


class Flatten(Module):
    """Merge axes ``start_dim`` .. last into one: ``(N, C, H, W) -> (N, C*H*W)``.

    Parameters
    ----------
    start_dim : int, default=1
        First axis merged.

    See Also
    --------
    mathlearn.nn.Sequential
        Where it joins convolutional and dense layers.
    torch.nn.Flatten
        PyTorch's equivalent.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> nn.Flatten()(np.zeros((2, 3, 4))).shape
    (2, 12)
    """

    def __init__(self, start_dim: int = 1) -> None:
        super().__init__()
        self.start_dim = int(start_dim)

    def forward(self, x: Any) -> Any:
        """Reshape.

        Parameters
        ----------
        x : array or Tensor
            Input.
        """
        shape = np.shape(_val(x))
        return ad.reshape(x, (*shape[: self.start_dim], -1))


class Embedding(Module):
    """Lookup table: integer ids ``(...)`` to vectors ``(..., embedding_dim)``.

    Parameters
    ----------
    num_embeddings : int
        Number of ids.
    embedding_dim : int
        Length of each vector.
    dtype : numpy dtype, default=numpy.float32
        Type of the table.
    random_state : int, Generator or None, default=None
        The table starts ``N(0, 1)``.

    Attributes
    ----------
    weight : ndarray of shape (num_embeddings, embedding_dim)
        The table; its gradient adds up the rows of repeated ids.

    See Also
    --------
    mathlearn.nn.Linear
        A dense layer on one-hot inputs, computed by lookup here.
    torch.nn.Embedding
        PyTorch's equivalent.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> emb = nn.Embedding(10, 3, random_state=0)
    >>> emb(np.array([[1, 2], [1, 9]])).shape
    (2, 2, 3)
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        *,
        dtype: Any = np.float32,
        random_state: Any = None,
    ) -> None:
        super().__init__()
        self.num_embeddings = int(num_embeddings)
        self.embedding_dim = int(embedding_dim)
        rng = check_random_state(random_state)
        table = rng.standard_normal((self.num_embeddings, self.embedding_dim))
        self.register_parameter("weight", table.astype(dtype))

    def forward(self, ids: Any) -> Any:
        """Rows of the table for ``ids``.

        Parameters
        ----------
        ids : array of int
            Indices in ``0 .. num_embeddings - 1``.
        """
        idx = np.asarray(_val(ids))
        if idx.dtype.kind not in "iu":
            raise TypeError(f"Embedding takes integer ids; got dtype {idx.dtype}.")
        if idx.size and (idx.min() < 0 or idx.max() >= self.num_embeddings):
            raise IndexError(
                f"ids must lie in 0 .. {self.num_embeddings - 1}; got {idx.min()} .. {idx.max()}."
            )
        return ad.getitem(self.weight, idx)

    def extra_repr(self) -> str:
        return f"{self.num_embeddings}, {self.embedding_dim}"
