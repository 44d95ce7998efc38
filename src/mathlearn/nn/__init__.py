"""Neural-network building blocks on :mod:`mathlearn.autodiff` and :mod:`mathlearn.optim`.

API in brief (for users and for layers built on it):

- :class:`Module`: subclass it, call ``super().__init__()`` first, register learned arrays
  with ``self.register_parameter(name, array)`` and state with ``self.register_buffer``;
  assign submodules as attributes (``self.fc = Linear(...)``); write ``forward`` with
  :mod:`mathlearn.autodiff` operations (``ad.tanh``, ``@``, ``ad.reshape``...), which accept
  arrays and tensors alike. ``module(x)`` calls ``forward``. Inside ``forward`` read the
  parameters as attributes (``self.weight``), never cache them elsewhere.
- ``module.parameters()`` is a flat ``dict`` ``{"0.weight": array, "fc.bias": array, ...}``
  (dotted names through submodules): the pytree that ``ad.value_and_grad`` differentiates
  and ``optim`` updates. ``module.load_parameters(params)`` writes new values back;
  ``state_dict()`` / ``load_state_dict()`` copy parameters and buffers.
- :func:`functional_call` ``(module, params, *inputs)`` runs the module with ``params``
  substituted (tensors while differentiating), so a gradient step is::

      loss_fn = lambda p: nn.cross_entropy(nn.functional_call(net, p, X), y)
      value, grads = ad.value_and_grad(loss_fn)(net.parameters())
      updates, state = opt.update(grads, state, net.parameters())
      net.load_parameters(optim.apply_updates(net.parameters(), updates))

  :func:`fit_module` runs that loop with minibatches, validation, early stopping, callbacks
  and divergence checks.
- Modes: ``train()`` / ``eval()`` set ``module.training`` on the whole tree (dropout and
  batch normalisation read it). Randomness (dropout masks) comes from the generator given to
  ``set_random_state(rng)``, shared by the tree; modules read it as ``self._rng``.
- Layers default to float32 parameters (``dtype=`` to change; ``module.astype(dtype)``
  converts a built network). Weight shapes are ``(out, in, ...)`` as in the notes' ``W_l`` and
  PyTorch, so weights can be copied from PyTorch modules as they are.

Contents: :class:`Linear`, activations (:class:`ReLU`, :class:`LeakyReLU`,
:class:`Sigmoid`, :class:`Tanh`, :class:`GELU`, :class:`Softmax`, :class:`LogSoftmax`),
:class:`Dropout`, :class:`BatchNorm1d`, :class:`BatchNorm2d`, :class:`Flatten`,
:class:`Embedding`, :class:`Identity`, :class:`Sequential`; losses (:func:`mse_loss`,
:func:`cross_entropy`, :func:`binary_cross_entropy_with_logits`, :func:`hinge_loss`) and their
closed-form output gradients (:func:`output_gradient`); initialisers; the training loop
(:class:`Trainer`, :func:`fit_module`, :class:`TrainingDivergedError`). Rprop is
:func:`mathlearn.optim.rprop`.

Examples
--------
>>> import numpy as np
>>> from mathlearn import autodiff as ad, nn
>>> net = nn.Sequential(
...     nn.Linear(2, 3, random_state=0), nn.Tanh(), nn.Linear(3, 1, random_state=1)
... )
>>> X = np.ones((4, 2), dtype=np.float32)
>>> loss = lambda p: nn.mse_loss(nn.functional_call(net, p, X), np.zeros((4, 1)))
>>> grads = ad.grad(loss)(net.parameters())
>>> sorted(grads), grads["0.weight"].shape, grads["0.weight"].dtype
(['0.bias', '0.weight', '2.bias', '2.weight'], (3, 2), dtype('float32'))
"""

from ._conv import AvgPool2d, Conv2d, MaxPool2d
from ._functional import (
    binary_cross_entropy_with_logits,
    cross_entropy,
    dropout,
    hinge_loss,
    linear,
    mse_loss,
    output_gradient,
)
from ._init import (
    fan_in_normal,
    get_initializer,
    glorot_normal,
    glorot_uniform,
    he_normal,
    he_uniform,
)
from ._layers import (
    GELU,
    BatchNorm1d,
    BatchNorm2d,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    LeakyReLU,
    Linear,
    LogSoftmax,
    ReLU,
    Sigmoid,
    Softmax,
    Tanh,
)
from ._module import Module, Sequential, functional_call
from ._recurrent import GRU, LSTM, RNN, pad_sequences
from ._training import Trainer, TrainingDivergedError, fit_module

__all__ = [
    "GELU",
    "GRU",
    "LSTM",
    "RNN",
    "AvgPool2d",
    "BatchNorm1d",
    "BatchNorm2d",
    "Conv2d",
    "Dropout",
    "Embedding",
    "Flatten",
    "Identity",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "MaxPool2d",
    "Module",
    "ReLU",
    "Sequential",
    "Sigmoid",
    "Softmax",
    "Tanh",
    "Trainer",
    "TrainingDivergedError",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "dropout",
    "fan_in_normal",
    "fit_module",
    "functional_call",
    "get_initializer",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "hinge_loss",
    "linear",
    "mse_loss",
    "output_gradient",
    "pad_sequences",
]
