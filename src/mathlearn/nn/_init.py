"""Weight initialisers.

Shapes follow the layers' convention ``(fan_out, fan_in, *receptive_field)``: a dense weight
is ``(h_l, h_{l-1})`` as in the notes (``W_l in R^{h_l x h_{l-1}}``), a convolution kernel
``(out_channels, in_channels, kh, kw)``; ``fan_in = shape[1] * prod(shape[2:])`` and
``fan_out = shape[0] * prod(shape[2:])``.

- :func:`fan_in_normal`: ``N(0, 1 / fan_in)``, the notes' rule (Stuttgart "Introduction to
  Machine Learning" §4, "Initialization": each row of ``W_l`` has about unit norm, so the
  scale of the activations is kept from layer to layer).
- :func:`glorot_uniform`, :func:`glorot_normal`: variance ``2 / (fan_in + fan_out)``
  (Glorot and Bengio, 2010).
- :func:`he_normal`, :func:`he_uniform`: variance ``2 / fan_in`` (He et al., 2015), for ReLU.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..utils.validation import check_random_state

__all__ = [
    "fan_in_normal",
    "get_initializer",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
]


def _fans(shape: tuple[int, ...]) -> tuple[int, int]:
    if len(shape) < 2:
        raise ValueError(f"initialisers need a shape of at least 2 axes; got {shape}.")
    field = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return int(shape[1]) * field, int(shape[0]) * field


def _draw(kind: str, scale: float, shape, random_state, dtype) -> np.ndarray:
    rng = check_random_state(random_state)
    if kind == "normal":
        out = rng.standard_normal(shape) * scale
    else:  # uniform on [-a, a] with variance a^2 / 3 = scale^2
        a = np.sqrt(3.0) * scale
        out = rng.uniform(-a, a, size=shape)
    return out.astype(dtype)


def fan_in_normal(
    shape: tuple[int, ...], random_state: Any = None, dtype: Any = np.float32
) -> np.ndarray:
    """Entries ``N(0, 1 / fan_in)``: the notes' initialisation.

    Parameters
    ----------
    shape : tuple of int
        ``(fan_out, fan_in, *receptive_field)``.
    random_state : int, Generator or None, default=None
        Source of the draws.
    dtype : numpy dtype, default=numpy.float32
        Type of the result.

    Returns
    -------
    ndarray of ``shape``

    Examples
    --------
    >>> from mathlearn.nn import fan_in_normal
    >>> W = fan_in_normal((2000, 50), random_state=0)
    >>> round(float(W.var() * 50), 1)
    1.0
    """
    fan_in, _ = _fans(tuple(shape))
    return _draw("normal", 1.0 / np.sqrt(fan_in), shape, random_state, dtype)


def glorot_uniform(
    shape: tuple[int, ...], random_state: Any = None, dtype: Any = np.float32
) -> np.ndarray:
    """Entries ``U(-a, a)`` with ``a = sqrt(6 / (fan_in + fan_out))`` (Glorot and Bengio).

    Parameters
    ----------
    shape : tuple of int
        ``(fan_out, fan_in, *receptive_field)``.
    random_state : int, Generator or None, default=None
        Source of the draws.
    dtype : numpy dtype, default=numpy.float32
        Type of the result.

    Returns
    -------
    ndarray of ``shape``

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.nn import glorot_uniform
    >>> W = glorot_uniform((30, 20), random_state=0)
    >>> bool(np.abs(W).max() <= np.sqrt(6 / 50))
    True
    """
    fan_in, fan_out = _fans(tuple(shape))
    return _draw("uniform", np.sqrt(2.0 / (fan_in + fan_out)), shape, random_state, dtype)


def glorot_normal(
    shape: tuple[int, ...], random_state: Any = None, dtype: Any = np.float32
) -> np.ndarray:
    """Entries ``N(0, 2 / (fan_in + fan_out))`` (Glorot and Bengio).

    Parameters
    ----------
    shape : tuple of int
        ``(fan_out, fan_in, *receptive_field)``.
    random_state : int, Generator or None, default=None
        Source of the draws.
    dtype : numpy dtype, default=numpy.float32
        Type of the result.

    Returns
    -------
    ndarray of ``shape``

    Examples
    --------
    >>> from mathlearn.nn import glorot_normal
    >>> glorot_normal((3, 2), random_state=0).shape
    (3, 2)
    """
    fan_in, fan_out = _fans(tuple(shape))
    return _draw("normal", np.sqrt(2.0 / (fan_in + fan_out)), shape, random_state, dtype)


def he_normal(
    shape: tuple[int, ...], random_state: Any = None, dtype: Any = np.float32
) -> np.ndarray:
    """Entries ``N(0, 2 / fan_in)`` (He et al.), for ReLU layers.

    Parameters
    ----------
    shape : tuple of int
        ``(fan_out, fan_in, *receptive_field)``.
    random_state : int, Generator or None, default=None
        Source of the draws.
    dtype : numpy dtype, default=numpy.float32
        Type of the result.

    Returns
    -------
    ndarray of ``shape``

    Examples
    --------
    >>> from mathlearn.nn import he_normal
    >>> W = he_normal((4000, 25), random_state=0)
    >>> round(float(W.var() * 25 / 2), 1)
    1.0
    """
    fan_in, _ = _fans(tuple(shape))
    return _draw("normal", np.sqrt(2.0 / fan_in), shape, random_state, dtype)


def he_uniform(
    shape: tuple[int, ...], random_state: Any = None, dtype: Any = np.float32
) -> np.ndarray:
    """Entries ``U(-a, a)`` with ``a = sqrt(6 / fan_in)`` (variance ``2 / fan_in``, He et al.).

    Parameters
    ----------
    shape : tuple of int
        ``(fan_out, fan_in, *receptive_field)``.
    random_state : int, Generator or None, default=None
        Source of the draws.
    dtype : numpy dtype, default=numpy.float32
        Type of the result.

    Returns
    -------
    ndarray of ``shape``

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.nn import he_uniform
    >>> bool(np.abs(he_uniform((10, 6), random_state=0)).max() <= 1.0)
    True
    """
    fan_in, _ = _fans(tuple(shape))
    return _draw("uniform", np.sqrt(2.0 / fan_in), shape, random_state, dtype)


_INITIALIZERS: dict[str, Callable[..., np.ndarray]] = {
    "fan_in_normal": fan_in_normal,
    "glorot_uniform": glorot_uniform,
    "glorot_normal": glorot_normal,
    "he_normal": he_normal,
    "he_uniform": he_uniform,
}


def get_initializer(init: str | Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """The initialiser called ``init`` (or ``init`` itself when it is callable).

    Parameters
    ----------
    init : str or callable
        One of ``"fan_in_normal"``, ``"glorot_uniform"``, ``"glorot_normal"``,
        ``"he_normal"``, ``"he_uniform"``, or ``f(shape, random_state, dtype) -> ndarray``.

    Returns
    -------
    callable
        ``f(shape, random_state, dtype) -> ndarray``.

    Examples
    --------
    >>> from mathlearn.nn import get_initializer
    >>> get_initializer("he_normal").__name__
    'he_normal'
    """
    if callable(init):
        return init
    if init not in _INITIALIZERS:
        raise ValueError(f"unknown initialiser {init!r}; choose from {sorted(_INITIALIZERS)}.")
    return _INITIALIZERS[init]
