"""Recurrent layers: Elman RNN, LSTM and GRU over batches of sequences (batch first).

Convention: inputs are ``(N, T, D)`` (batch first, like the rows-are-samples convention of
every estimator), outputs ``(N, T, H)``. Sequences of different lengths are padded at the
end to a common ``T`` and described by ``lengths`` (or a ``mask`` of shape ``(N, T)``); the
state is then carried unchanged through the padding, so the last state of each sequence is
the one at its own last step, and the padded outputs are 0. A list of sequences of different
lengths without ``lengths`` or ``mask`` is refused (padding would silently enter the state);
:func:`pad_sequences` builds the padded batch and the lengths.

The cells (Stuttgart "Introduction to Machine Learning", §2.3 gives LSTM and GRU
qualitatively; the equations are the standard ones, in PyTorch's parametrisation so that
weights can be copied from ``torch.nn.LSTM`` / ``GRU`` / ``RNN``) are fused autodiff
primitives, :func:`mathlearn.autodiff.lstm`, :func:`~mathlearn.autodiff.gru` and
:func:`~mathlearn.autodiff.rnn`, whose VJP is backpropagation through time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import autodiff as ad
from ..autodiff import Tensor
from ..utils.validation import check_random_state
from ._module import Module

__all__ = ["GRU", "LSTM", "RNN", "pad_sequences"]


def _val(x):
    return x.value if isinstance(x, Tensor) else x


def pad_sequences(
    sequences: Sequence[Any], *, dtype: Any = None, value: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Stack sequences of different lengths into one zero-padded batch.

    Parameters
    ----------
    sequences : sequence of array-like of shape (T_i, D) or (T_i,)
        The sequences (1-D ones are one feature per step).
    dtype : numpy dtype, optional
        Type of the batch; default the common type of the sequences.
    value : float, default=0.0
        Fill value of the padding.

    Returns
    -------
    batch : ndarray of shape (N, max T_i, D)
        The sequences, padded at the end.
    lengths : ndarray of shape (N,)
        ``T_i``.

    Examples
    --------
    >>> from mathlearn import nn
    >>> batch, lengths = nn.pad_sequences([[1.0, 2.0, 3.0], [4.0]])
    >>> batch[..., 0], lengths
    (array([[1., 2., 3.],
           [4., 0., 0.]]), array([3, 1]))
    """
    seqs = [np.asarray(s) for s in sequences]
    if not seqs:
        raise ValueError("pad_sequences needs at least one sequence.")
    seqs = [s[:, None] if s.ndim == 1 else s for s in seqs]
    if any(s.ndim != 2 for s in seqs):
        raise ValueError("each sequence must have shape (T_i, D) or (T_i,).")
    features = {s.shape[1] for s in seqs}
    if len(features) != 1:
        raise ValueError(f"the sequences have different feature counts {sorted(features)}.")
    lengths = np.array([s.shape[0] for s in seqs])
    if np.any(lengths < 1):
        raise ValueError("every sequence needs at least one step.")
    dtype = np.result_type(*seqs) if dtype is None else dtype
    batch = np.full((len(seqs), int(lengths.max()), features.pop()), value, dtype=dtype)
    for i, s in enumerate(seqs):
        batch[i, : len(s)] = s
    return batch, lengths


def _mask_from(x, lengths, mask):
    """The ``(N, T)`` mask of real steps, or None when every sequence is full length."""
    n, t = np.shape(_val(x))[:2]
    if lengths is not None and mask is not None:
        raise ValueError("pass lengths or mask, not both.")
    if lengths is not None:
        lengths = np.asarray(lengths)
        if lengths.shape != (n,) or lengths.dtype.kind not in "iu":
            raise ValueError(f"lengths must be {n} integers; got shape {lengths.shape}.")
        if np.any(lengths < 1) or np.any(lengths > t):
            raise ValueError(f"lengths must lie in 1..{t}; got {lengths.min()}..{lengths.max()}.")
        if np.all(lengths == t):
            return None
        return np.arange(t) < lengths[:, None]
    if mask is not None:
        m = np.asarray(mask)
        if m.shape != (n, t):
            raise ValueError(f"mask must have shape (N, T) = {(n, t)}; got {m.shape}.")
        m = m.astype(bool)
        # Real steps must come first: padding only at the end of each sequence.
        if np.any(m[:, 1:] & ~m[:, :-1]) or not np.all(m[:, 0]):
            raise ValueError(
                "mask must be 1 on a prefix of each sequence (at least one step) and 0 after."
            )
        return m
    return None


def _as_batch(x):
    """A ``(N, T, D)`` array or tensor; a ragged list is refused with the way out."""
    if isinstance(x, list | tuple) and x and not isinstance(x[0], int | float):
        lengths = {np.shape(s)[0] if np.ndim(s) else 0 for s in x}
        if len(lengths) > 1:
            raise ValueError(
                f"the sequences have different lengths {sorted(lengths)} and no lengths or "
                "mask was given: pad them with nn.pad_sequences and pass the lengths."
            )
        x = np.stack([np.asarray(s) for s in x])
    if np.ndim(_val(x)) != 3:
        raise ValueError(
            f"recurrent layers expect a batch of sequences of shape (N, T, D) (batch first); "
            f"got an array of rank {np.ndim(_val(x))}."
        )
    return x


class _Recurrent(Module):
    _gates = 1
    _kind = "rnn"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        output: str = "sequence",
        dtype: Any = np.float32,
        random_state: Any = None,
    ) -> None:
        super().__init__()
        if int(input_size) < 1 or int(hidden_size) < 1:
            raise ValueError(
                f"{type(self).__name__} needs positive sizes; got {input_size}, {hidden_size}."
            )
        if output not in ("sequence", "last"):
            raise ValueError(f"output must be 'sequence' or 'last'; got {output!r}.")
        self.input_size = int(input_size)
        self.hidden_size = int(hidden_size)
        self.output = output
        rng = check_random_state(random_state)
        g, h = self._gates, self.hidden_size
        # PyTorch's initialisation: every weight and bias U(-1/sqrt(H), 1/sqrt(H)).
        s = 1.0 / np.sqrt(h)
        self.register_parameter(
            "weight_ih", rng.uniform(-s, s, (g * h, self.input_size)).astype(dtype)
        )
        self.register_parameter("weight_hh", rng.uniform(-s, s, (g * h, h)).astype(dtype))
        self.register_parameter("bias", rng.uniform(-s, s, g * h).astype(dtype))
        if self._kind == "gru":
            self.register_parameter("bias_hh", rng.uniform(-s, s, g * h).astype(dtype))

    def _run(self, x, h0, c0, mask):
        if self._kind == "lstm":
            return ad.lstm(x, self.weight_ih, self.weight_hh, self.bias, h0=h0, c0=c0, mask=mask)
        if self._kind == "gru":
            return ad.gru(
                x, self.weight_ih, self.weight_hh, self.bias, self.bias_hh, h0=h0, mask=mask
            )
        return ad.rnn(x, self.weight_ih, self.weight_hh, self.bias, h0=h0, mask=mask)

    def forward_with_state(
        self, x: Any, *, lengths: Any = None, mask: Any = None, h0: Any = None, c0: Any = None
    ) -> tuple[Any, ...]:
        """Outputs of every step and the final state(s).

        Parameters
        ----------
        x : array or Tensor of shape (N, T, input_size), or list of (T, input_size) arrays
            Batch of sequences (batch first).
        lengths : array of int of shape (N,), optional
            Length of each sequence (padded at the end).
        mask : array of shape (N, T), optional
            1 on real steps, 0 on padding (alternative to ``lengths``).
        h0, c0 : array or Tensor of shape (N, hidden_size), optional
            Initial states (``c0`` for the LSTM only); zeros by default.

        Returns
        -------
        outputs : array or Tensor of shape (N, T, hidden_size)
            The hidden state of every step (0 on padding).
        h_n : array or Tensor of shape (N, hidden_size)
            Final hidden state (at each sequence's last real step).
        c_n : array or Tensor of shape (N, hidden_size)
            Final cell state (LSTM only).
        """
        x = _as_batch(x)
        if np.shape(_val(x))[2] != self.input_size:
            raise ValueError(
                f"{type(self).__name__} expects {self.input_size} features per step; got "
                f"{np.shape(_val(x))[2]}."
            )
        m = _mask_from(x, lengths, mask)
        return self._run(x, h0, c0, m)

    def forward(self, x: Any, *, lengths: Any = None, mask: Any = None) -> Any:
        """Every step's output (``output="sequence"``) or the last state (``"last"``).

        Parameters
        ----------
        x : array or Tensor of shape (N, T, input_size), or list of (T, input_size) arrays
            Batch of sequences (batch first).
        lengths : array of int of shape (N,), optional
            Length of each sequence (padded at the end).
        mask : array of shape (N, T), optional
            1 on real steps, 0 on padding.
        """
        out = self.forward_with_state(x, lengths=lengths, mask=mask)
        return out[0] if self.output == "sequence" else out[1]

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}, output={self.output!r}"


_COMMON_PARAMS = """    input_size : int
        Features per step ``D``.
    hidden_size : int
        ``H``.
    output : {"sequence", "last"}, default="sequence"
        What ``forward`` returns: the outputs of every step ``(N, T, H)`` or the final
        hidden state ``(N, H)`` (see also ``forward_with_state``).
    dtype : numpy dtype, default=numpy.float32
        Type of the parameters.
    random_state : int, Generator or None, default=None
        Source of the initial values (every weight ``U(-1/sqrt(H), 1/sqrt(H))``)."""


class RNN(_Recurrent):
    __doc__ = f"""Elman recurrent layer ``h_t = tanh(x_t W_ih^T + h_{{t-1}} W_hh^T + b)``.

    Parameters
    ----------
{_COMMON_PARAMS}

    Attributes
    ----------
    weight_ih : ndarray of shape (hidden_size, input_size)
    weight_hh : ndarray of shape (hidden_size, hidden_size)
    bias : ndarray of shape (hidden_size,)
        PyTorch's ``bias_ih + bias_hh``.

    See Also
    --------
    mathlearn.nn.LSTM
        A gated recurrence.
    mathlearn.nn.GRU
        A lighter gated recurrence.
    torch.nn.RNN
        PyTorch's equivalent.

    Notes
    -----
    Batch first: inputs ``(N, T, D)``. Ragged batches need ``lengths`` or ``mask``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> rnn = nn.RNN(2, 5, output="last", random_state=0)
    >>> rnn(np.zeros((4, 7, 2), dtype=np.float32)).shape
    (4, 5)
    """

    _gates = 1
    _kind = "rnn"


class LSTM(_Recurrent):
    __doc__ = f"""Long short-term memory layer.

    ``[i, f, g, o] = [s, s, tanh, s](x_t W_ih^T + h_{{t-1}} W_hh^T + b)``,
    ``c_t = f * c_{{t-1}} + i * g``, ``h_t = o * tanh(c_t)``.

    Parameters
    ----------
{_COMMON_PARAMS}

    Attributes
    ----------
    weight_ih : ndarray of shape (4 hidden_size, input_size)
        Gates ``i, f, g, o`` stacked (PyTorch's order).
    weight_hh : ndarray of shape (4 hidden_size, hidden_size)
    bias : ndarray of shape (4 hidden_size,)
        PyTorch's ``bias_ih + bias_hh``.

    See Also
    --------
    mathlearn.nn.GRU
        A lighter gated unit.
    mathlearn.nn.RNN
        The ungated recurrence.
    torch.nn.LSTM
        PyTorch's equivalent.

    Notes
    -----
    The memory ``c_t`` is multiplied by the forget gate (near 1 it keeps the memory and
    passes gradients unchanged), the input gate writes the candidate ``g``, the output gate
    exposes the memory (Stuttgart "Introduction to Machine Learning", §2.3, LSTM). Batch
    first: inputs ``(N, T, D)``; ragged batches need ``lengths`` or ``mask``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> lstm = nn.LSTM(3, 8, random_state=0)
    >>> lstm(np.zeros((2, 5, 3), dtype=np.float32)).shape
    (2, 5, 8)
    """

    _gates = 4
    _kind = "lstm"


class GRU(_Recurrent):
    __doc__ = f"""Gated recurrent unit layer.

    ``r = s(x W_ir^T + b_ir + h W_hr^T + b_hr)``, ``z = s(x W_iz^T + b_iz + h W_hz^T + b_hz)``,
    ``n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))``, ``h_t = (1 - z) n + z h_{{t-1}}``.

    Parameters
    ----------
{_COMMON_PARAMS}

    Attributes
    ----------
    weight_ih : ndarray of shape (3 hidden_size, input_size)
        ``r, z, n`` stacked (PyTorch's order).
    weight_hh : ndarray of shape (3 hidden_size, hidden_size)
    bias : ndarray of shape (3 hidden_size,)
        Input-side bias ``b_i``.
    bias_hh : ndarray of shape (3 hidden_size,)
        Recurrent bias ``b_h`` (the reset gate scales ``b_hn``, so it is kept apart).

    See Also
    --------
    mathlearn.nn.LSTM
        A gated unit with a separate cell state.
    mathlearn.nn.RNN
        The ungated recurrence.
    torch.nn.GRU
        PyTorch's equivalent.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning", §2.3 (GRU). Batch first: inputs
    ``(N, T, D)``; ragged batches need ``lengths`` or ``mask``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> gru = nn.GRU(3, 4, output="last", random_state=0)
    >>> gru(np.zeros((2, 5, 3), dtype=np.float32)).shape
    (2, 4)
    """

    _gates = 3
    _kind = "gru"
