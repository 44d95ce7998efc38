"""The ``Module`` base: parameters as a flat dict pytree, submodules, train/eval modes.

A module owns named arrays of two kinds: *parameters* (learned by gradient descent) and
*buffers* (state updated in the forward pass, such as BatchNorm's running statistics).
Submodules assigned as attributes are registered under their attribute name, and the
parameters of the whole tree are addressed by dotted names (``"0.weight"``,
``"encoder.1.bias"``). ``parameters()`` returns them as one flat ``dict`` of arrays, which is
a pytree that :mod:`mathlearn.autodiff` differentiates and :mod:`mathlearn.optim` updates.

Training is functional: :func:`functional_call` runs the module with a given dict of
parameters (tensors while a gradient is taken) in place of its own, so
``ad.value_and_grad(lambda p: loss(functional_call(model, p, X), y))(model.parameters())``
is the gradient of the loss with respect to every parameter, and
``model.load_parameters(optim.apply_updates(params, updates))`` writes the step back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from ..autodiff import Tensor

__all__ = ["Module", "Sequential", "functional_call"]


class Module:
    """Base class of the network building blocks.

    A subclass calls ``super().__init__()`` first, registers its arrays with
    :meth:`register_parameter` / :meth:`register_buffer` (or assigns submodules as
    attributes), and defines ``forward``. Calling the module calls ``forward``.

    Attributes
    ----------
    training : bool
        ``True`` in training mode (dropout active, batch statistics used), ``False`` after
        :meth:`eval`.

    See Also
    --------
    mathlearn.nn.Sequential
        A chain of modules.
    mathlearn.nn.Trainer
        Minibatch training of a module.
    torch.nn.Module
        PyTorch's equivalent.

    Notes
    -----
    Parameters are stored as NumPy arrays. Inside :func:`functional_call` they are
    temporarily replaced by the values given (autodiff tensors during a gradient
    evaluation), so ``forward`` is written once with :mod:`mathlearn.autodiff` operations and
    serves both prediction (arrays in, arrays out) and training (tensors recorded).

    Stochastic modules (dropout) draw from a NumPy ``Generator`` set with
    :meth:`set_random_state`, which passes it to every submodule.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> class Scale(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.register_parameter("s", np.array([2.0]))
    ...     def forward(self, x):
    ...         return self.s * x
    >>> m = Scale()
    >>> m(np.array([1.0, 3.0]))
    array([2., 6.])
    >>> m.parameters()
    {'s': array([2.])}
    """

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_rng", None)

    def _check_init(self) -> None:
        if "_parameters" not in self.__dict__:
            raise RuntimeError(
                f"{type(self).__name__}.__init__ must call super().__init__() before "
                "assigning parameters or submodules."
            )

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, Module):
            self._check_init()
            self._parameters.pop(name, None)
            self._buffers.pop(name, None)
            self._modules[name] = value
            return
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            d["_parameters"][name] = value
        elif "_buffers" in d and name in d["_buffers"]:
            d["_buffers"][name] = value
        elif "_modules" in d and name in d["_modules"]:
            del d["_modules"][name]
            object.__setattr__(self, name, value)
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: parameters, buffers and submodules.
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def register_parameter(self, name: str, value: Any) -> None:
        """Add a learned array under ``name``.

        Parameters
        ----------
        name : str
            Attribute name, without dots.
        value : array-like
            The initial value (kept with its dtype; integers become float64).
        """
        self._check_init()
        if "." in name or not name:
            raise ValueError(f"parameter names must be non-empty and without dots; got {name!r}.")
        arr = np.asarray(value)
        if arr.dtype.kind not in "fc":
            arr = arr.astype(np.float64)
        self._parameters[name] = arr

    def register_buffer(self, name: str, value: Any) -> None:
        """Add a non-learned state array (for example running statistics) under ``name``.

        Parameters
        ----------
        name : str
            Attribute name, without dots.
        value : array-like
            The initial value.
        """
        self._check_init()
        if "." in name or not name:
            raise ValueError(f"buffer names must be non-empty and without dots; got {name!r}.")
        self._buffers[name] = np.asarray(value)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation; subclasses define it with :mod:`mathlearn.autodiff` operations.

        Parameters
        ----------
        *args, **kwargs
            Inputs (arrays or tensors).
        """
        raise NotImplementedError(f"{type(self).__name__} does not define forward().")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """This module and every submodule, depth first, with dotted names (``""`` for self).

        Parameters
        ----------
        prefix : str, default=""
            Prepended to every name.
        """
        yield prefix, self
        for name, child in self._modules.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def modules(self) -> Iterator[Module]:
        """This module and every submodule, depth first."""
        for _, m in self.named_modules():
            yield m

    def children(self) -> Iterator[Module]:
        """The direct submodules, in the order they were assigned."""
        yield from self._modules.values()

    def named_parameters(self) -> Iterator[tuple[str, Any]]:
        """``(dotted name, array)`` for every parameter of the tree, in registration order."""
        for prefix, m in self.named_modules():
            for name, value in m._parameters.items():
                yield (f"{prefix}.{name}" if prefix else name), value

    def parameters(self) -> dict[str, Any]:
        """All parameters as a flat dict ``{dotted name: array}`` (a pytree for ``optim``).

        The arrays are the module's own (not copies); replace them with
        :meth:`load_parameters`, never by writing into them during a gradient step.
        """
        return dict(self.named_parameters())

    def named_buffers(self) -> Iterator[tuple[str, Any]]:
        """``(dotted name, array)`` for every buffer of the tree."""
        for prefix, m in self.named_modules():
            for name, value in m._buffers.items():
                yield (f"{prefix}.{name}" if prefix else name), value

    def n_parameters(self) -> int:
        """Total number of learned scalars."""
        return int(sum(np.size(v) for _, v in self.named_parameters()))

    def _owner(self, dotted: str) -> tuple[Module, str]:
        *path, leaf = dotted.split(".")
        m = self
        for p in path:
            if p not in m._modules:
                raise KeyError(f"no submodule {p!r} on the way to {dotted!r}.")
            m = m._modules[p]
        return m, leaf

    def load_parameters(self, params: Mapping[str, Any], *, strict: bool = True) -> None:
        """Set parameters from a dict of dotted names (as returned by :meth:`parameters`).

        Parameters
        ----------
        params : mapping of str to array
            New values; each must have the shape of the parameter it replaces. Tensors are
            unwrapped to their values.
        strict : bool, default=True
            Require exactly the module's parameter names.
        """
        own = self.parameters()
        if strict and set(params) != set(own):
            missing = sorted(set(own) - set(params))
            extra = sorted(set(params) - set(own))
            raise KeyError(f"parameter names differ: missing {missing}, unexpected {extra}.")
        for name, value in params.items():
            if name not in own:
                raise KeyError(f"unknown parameter {name!r}.")
            value = value.value if isinstance(value, Tensor) else value
            if np.shape(value) != np.shape(own[name]):
                raise ValueError(
                    f"parameter {name!r} has shape {np.shape(own[name])}; got {np.shape(value)}."
                )
            m, leaf = self._owner(name)
            m._parameters[leaf] = value

    def state_dict(self) -> dict[str, np.ndarray]:
        """Copies of every parameter and buffer, by dotted name."""
        out = {k: np.array(v, copy=True) for k, v in self.named_parameters()}
        out.update({k: np.array(v, copy=True) for k, v in self.named_buffers()})
        return out

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Set every parameter and buffer from :meth:`state_dict`'s output (names must match).

        Parameters
        ----------
        state : mapping of str to array
            Values by dotted name.
        """
        params = dict(self.named_parameters())
        buffers = dict(self.named_buffers())
        expected = set(params) | set(buffers)
        if set(state) != expected:
            missing = sorted(expected - set(state))
            extra = sorted(set(state) - expected)
            raise KeyError(f"state names differ: missing {missing}, unexpected {extra}.")
        self.load_parameters({k: np.array(state[k], copy=True) for k in params})
        for name in buffers:
            value = np.array(state[name], copy=True)
            if value.shape != np.shape(buffers[name]):
                raise ValueError(
                    f"buffer {name!r} has shape {np.shape(buffers[name])}; got {value.shape}."
                )
            m, leaf = self._owner(name)
            m._buffers[leaf] = value

    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and every submodule; returns ``self``.

        Parameters
        ----------
        mode : bool, default=True
            ``False`` is the same as :meth:`eval`.
        """
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self) -> Module:
        """Set evaluation mode (dropout off, running statistics used); returns ``self``."""
        return self.train(False)

    def set_random_state(self, rng: np.random.Generator) -> Module:
        """Give every module of the tree the generator its random draws come from.

        Parameters
        ----------
        rng : numpy.random.Generator
            Shared by all submodules (draws are taken in forward order).
        """
        for m in self.modules():
            object.__setattr__(m, "_rng", rng)
        return self

    def astype(self, dtype: Any) -> Module:
        """Convert every floating parameter and buffer to ``dtype`` in place; returns ``self``.

        Parameters
        ----------
        dtype : numpy dtype
            Typically ``numpy.float32`` (the default of the layers) or ``numpy.float64``.
        """
        for m in self.modules():
            for k, v in m._parameters.items():
                m._parameters[k] = np.asarray(v, dtype=dtype)
            for k, v in m._buffers.items():
                if np.asarray(v).dtype.kind == "f":
                    m._buffers[k] = np.asarray(v, dtype=dtype)
        return self

    def extra_repr(self) -> str:
        """One-line description of the module's own settings, shown by ``repr``."""
        return ""

    def __repr__(self) -> str:
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not self._modules:
            return head + ")"
        lines = [head]
        for name, child in self._modules.items():
            sub = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {sub}")
        return "\n".join(lines) + "\n)"


@contextlib.contextmanager
def _bound(module: Module, params: Mapping[str, Any]):
    saved = module.parameters()
    unknown = set(params) - set(saved)
    if unknown:
        raise KeyError(f"unknown parameters {sorted(unknown)} for {type(module).__name__}.")
    owners = {name: module._owner(name) for name in params}
    try:
        for name, value in params.items():
            m, leaf = owners[name]
            m._parameters[leaf] = value
        yield module
    finally:
        for name in params:
            m, leaf = owners[name]
            m._parameters[leaf] = saved[name]


def functional_call(module: Module, params: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``module(*args, **kwargs)`` with ``params`` in place of its own parameters.

    The module's parameters are restored afterwards, even on error. ``params`` may hold
    autodiff tensors (that is how gradients with respect to the parameters are taken) and
    may name only some parameters; the others keep their values.

    Parameters
    ----------
    module : Module
        The network.
    params : mapping of str to array or Tensor
        Values by dotted name, as returned by ``module.parameters()``.
    *args, **kwargs
        The inputs of ``module.forward``.

    Returns
    -------
    object
        What ``forward`` returns.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad, nn
    >>> layer = nn.Linear(2, 1, dtype=np.float64, random_state=0)
    >>> X = np.array([[1.0, 2.0]])
    >>> g = ad.grad(lambda p: ad.sum(nn.functional_call(layer, p, X)))(layer.parameters())
    >>> g["weight"], g["bias"]
    (array([[1., 2.]]), array([1.]))
    """
    with _bound(module, params):
        return module(*args, **kwargs)


class Sequential(Module):
    """A chain of modules applied in order; submodules are named ``"0"``, ``"1"``, ...

    Parameters
    ----------
    *layers : Module
        The modules, first applied first.

    See Also
    --------
    mathlearn.nn.Module
        The base class.
    torch.nn.Sequential
        PyTorch's equivalent.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> net = nn.Sequential(nn.Linear(3, 4, random_state=0), nn.Tanh(), nn.Linear(4, 2))
    >>> net(np.zeros((5, 3), dtype=np.float32)).shape
    (5, 2)
    >>> sorted(net.parameters())
    ['0.bias', '0.weight', '2.bias', '2.weight']
    """

    def __init__(self, *layers: Module) -> None:
        super().__init__()
        for layer in layers:
            self.append(layer)

    def append(self, layer: Module) -> Sequential:
        """Add ``layer`` at the end; returns ``self``.

        Parameters
        ----------
        layer : Module
            The module appended.
        """
        if not isinstance(layer, Module):
            raise TypeError(f"Sequential takes Modules; got {type(layer).__name__}.")
        self._modules[str(len(self._modules))] = layer
        return self

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __getitem__(self, i: int) -> Module:
        return list(self._modules.values())[i]

    def forward(self, x: Any) -> Any:
        """Apply the layers in order.

        Parameters
        ----------
        x : array or Tensor
            Input of the first layer.
        """
        for layer in self._modules.values():
            x = layer(x)
        return x
