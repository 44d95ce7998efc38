"""Primitives for convolutional and recurrent networks, each with a hand-written VJP.

Composing a convolution or a recurrent network from elementwise primitives records a graph
of thousands of small nodes; these fused primitives record one node each and keep, from the
forward pass, exactly what their backward pass needs (the im2col matrix of a convolution,
the gate activations of every time step of an LSTM), which is what makes them fast.

Convolution (Stuttgart "Introduction to Machine Learning", §2.3, CNNs): every output neuron
sees a ``k x k`` receptive field of every input channel with weights shared over positions,

``y[n, o, i, j] = sum_{c, a, b} w[o, c, a, b] x_pad[n, c, s i + d a, s j + d b]``

(stride ``s``, dilation ``d``, zero padding ``p``; a cross-correlation, as in every deep
learning library). Writing the receptive fields of each image
as the columns of a matrix ``X_col`` (``C k k`` rows, one column per output position:
"im2col") turns it into one matrix product per image, ``Y_n = W X_col,n``, whose result is
already in the ``(N, O, H, W)`` layout; its VJPs are ``dW = sum_n dY_n X_col,n^T`` and
``dX_col,n = W^T dY_n``, the latter scattered back onto the image ("col2im", repeated
pixels accumulate).

Recurrent cells (the notes describe LSTM and GRU qualitatively only, Stuttgart §2.3; the
equations below are the standard ones of Hochreiter & Schmidhuber (1997) with a forget gate
and of Cho et al. (2014), in PyTorch's parametrisation so that weights can be compared):

LSTM: ``[i, f, g, o] = [s, s, tanh, s](x_t W_ih^T + h_{t-1} W_hh^T + b)``,
``c_t = f * c_{t-1} + i * g``, ``h_t = o * tanh(c_t)``.

GRU: ``r = s(x W_ir^T + b_ir + h W_hr^T + b_hr)``, ``z = s(x W_iz^T + b_iz + h W_hz^T + b_hz)``,
``n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))``, ``h_t = (1 - z) * n + z * h_{t-1}``.

Elman RNN: ``h_t = tanh(x_t W_ih^T + h_{t-1} W_hh^T + b)``.

Their VJP is backpropagation through time: one reverse loop over the steps carrying
``dL/dh_t`` (and ``dL/dc_t``), collecting the pre-activation gradients of every step, then
one matrix product each for ``dW_ih``, ``dW_hh`` and ``dx``.

The sequences of a batch are independent, so a large enough batch (at least 16 rows and
4096 gate entries per step for each thread) is split by rows between as many threads as
BLAS may use, and each thread does everything for its block of rows with one BLAS thread:
the input projection of all its steps (one product), every step of the recurrence, and
going back, its share of ``dx`` and of the weight gradients (products over all its steps,
summed over the blocks at the end). Nothing is synchronised between steps, and no product
runs on BLAS's own thread pool, whose idle threads keep spinning after a call and would
take a core from the recurrence (on two cores that cost as much as the split gained). So is
a convolution's batch of images split. In float32 each block's whole recurrence, forward or
back, is one call into the compiled kernels of ``mathlearn._ext._rnn`` (per step one
``sgemm`` of the BLAS that SciPy exports and one fused pointwise pass: gates, cell update,
vectorised tanh within 3 float32 ulp), which holds no interpreter lock for the whole
sequence; NumPy, one step at a time, is the fallback and the float64 route. The large
arrays of a pass are reused from call to call (fresh ones cost page faults).

These VJPs are first-order only (they compute with NumPy, not with recorded operations):
``hessian`` through them raises ``NotImplementedError``.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided
from scipy import special

from .._ext import blas_pointer as _ext_blas
from .._ext import load as _load_ext
from ..utils._threads import blas_threads, run_parts, serial_blas
from ._primitives import reshape, transpose
from ._tensor import Primitive, Tensor, _value

__all__ = ["avg_pool2d", "conv2d", "gru", "lstm", "max_pool2d", "rnn"]


def _pair(v, name: str) -> tuple[int, int]:
    if isinstance(v, int | np.integer):
        return (int(v), int(v))
    out = tuple(int(a) for a in v)
    if len(out) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, got {v!r}.")
    return (out[0], out[1])


def _first_order(g) -> np.ndarray:
    if isinstance(g, Tensor):
        raise NotImplementedError(
            "the convolution and recurrent primitives have first-order VJPs only; "
            "higher derivatives (create_graph=True, hessian) through them are not supported."
        )
    return np.asarray(g)


def _memo(cache: dict, g, compute):
    """Run ``compute()`` once per cotangent: the VJP of every input comes from one pass."""
    if cache.get("g") is not g:
        cache["grads"] = compute()
        cache["g"] = g
    return cache["grads"]


# A batch is split between threads only where each thread gets at least 16 rows and enough
# work to outweigh handing it over: per thread, _MIN_STEP_WORK gate entries per time step of
# a recurrence, _MIN_CONV_WORK im2col entries of a convolution.
_MIN_ROWS_PER_THREAD = 16
_MIN_STEP_WORK = 1 << 12
_MIN_CONV_WORK = 1 << 18


def _over_rows(n: int, fn, work_per_row: int, min_work: int) -> None:
    """Run ``fn(rows)`` over the batch, split between as many threads as BLAS may use.

    The sequences (or images) of a batch are independent, so a recurrence splits by rows
    with no synchronisation between steps: each thread runs every step of its block of rows
    (the products with one BLAS thread, the pointwise work in NumPy or the compiled kernels,
    both of which release the interpreter lock). The thread count follows the BLAS thread
    count in force (``threadpoolctl.threadpool_limits(1)`` gives one), at most one thread
    per 16 rows and per ``min_work`` units of work (``work_per_row`` per row).
    """
    rows = max(_MIN_ROWS_PER_THREAD, -(-min_work // max(work_per_row, 1)))
    workers = min(blas_threads(), os.cpu_count() or 1, n // rows)
    workers = max(workers, 1)
    bounds = [n * j // workers for j in range(workers + 1)]
    _run_blocks([slice(bounds[j], bounds[j + 1]) for j in range(workers)], fn)


def _over_blocks(blocks, fn) -> None:
    """Run ``fn(rows)`` over the blocks ``(rows, *data)`` that a forward pass split."""
    _run_blocks([blk[0] for blk in blocks], fn)


def _run_blocks(slices: list[slice], fn) -> None:
    with serial_blas():
        run_parts(slices, fn)


def _kernels(dtype):
    """The compiled float32 recurrences (``mathlearn._ext._rnn``), or None (NumPy route)."""
    if dtype != np.float32:
        return None
    lib = _load_ext("_rnn")
    if lib is not None and not getattr(lib, "_mathlearn_typed", False):
        i64, ptr = ctypes.c_int64, ctypes.c_void_p
        lib.rnn_tanh_f32.argtypes = [i64, ptr, ptr]
        lib.rnn_lstm_forward_seq_f32.argtypes = [i64] * 3 + [ptr] * 8
        lib.rnn_lstm_backward_seq_f32.argtypes = [i64] * 3 + [ptr] * 6 + [i64] + [ptr] * 4
        lib.rnn_gru_forward_seq_f32.argtypes = [i64] * 3 + [ptr] * 9
        lib.rnn_gru_backward_seq_f32.argtypes = [i64] * 3 + [ptr] * 6 + [i64] + [ptr] * 4
        lib.rnn_elman_forward_seq_f32.argtypes = [i64] * 3 + [ptr] * 5
        lib.rnn_elman_backward_seq_f32.argtypes = [i64] * 3 + [ptr] * 4 + [i64] + [ptr] * 3
        for name in ("tanh", "lstm_forward_seq", "lstm_backward_seq", "gru_forward_seq",
                     "gru_backward_seq", "elman_forward_seq", "elman_backward_seq"):  # fmt: skip
            getattr(lib, f"rnn_{name}_f32").restype = None
        lib._mathlearn_typed = True
    return lib


def _out_size(n: int, k: int, s: int, p: int, d: int) -> int:
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def _windows(xp: np.ndarray, kh, kw, ho, wo, stride, dilation) -> np.ndarray:
    """View ``(N, C, kh, kw, Ho, Wo)`` of the receptive fields of a padded ``(N, C, H, W)``."""
    sn, sc, sh, sw = xp.strides
    return as_strided(
        xp,
        shape=(xp.shape[0], xp.shape[1], kh, kw, ho, wo),
        strides=(sn, sc, sh * dilation[0], sw * dilation[1], sh * stride[0], sw * stride[1]),
        writeable=False,
    )


def _conv_geometry(x_shape, w_shape, stride, padding, dilation):
    if len(x_shape) != 4:
        raise ValueError(
            f"conv2d expects an input of shape (N, C, H, W); got an array of rank {len(x_shape)}."
        )
    if len(w_shape) != 4:
        raise ValueError(
            f"conv2d expects weights of shape (out_channels, in_channels, kh, kw); got rank "
            f"{len(w_shape)}."
        )
    if x_shape[1] != w_shape[1]:
        raise ValueError(
            f"conv2d: the input has {x_shape[1]} channels but the weights expect {w_shape[1]}."
        )
    kh, kw = w_shape[2:]
    ho = _out_size(x_shape[2], kh, stride[0], padding[0], dilation[0])
    wo = _out_size(x_shape[3], kw, stride[1], padding[1], dilation[1])
    if ho < 1 or wo < 1:
        raise ValueError(
            f"conv2d: a {kh}x{kw} kernel (dilation {dilation}) does not fit in a "
            f"{x_shape[2]}x{x_shape[3]} image with padding {padding}."
        )
    return kh, kw, ho, wo


def _pad(x: np.ndarray, padding, value=0.0) -> np.ndarray:
    ph, pw = padding
    if ph == 0 and pw == 0:
        return x
    return np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=value)


def _conv_forward(x, w, *, stride, padding, dilation, cache):
    kh, kw, ho, wo = _conv_geometry(x.shape, w.shape, stride, padding, dilation)
    dtype = np.result_type(x, w)
    xp = _pad(np.asarray(x, dtype=dtype), padding)
    w2 = np.asarray(w, dtype=dtype).reshape(w.shape[0], -1)
    n, o = x.shape[0], w.shape[0]
    out = np.empty((n, o, ho, wo), dtype=dtype)
    blocks: dict[int, tuple[slice, np.ndarray]] = {}

    def rows(sl):
        # im2col of each image of the block, (n, C kh kw, Ho Wo), and one product per image
        # written straight into the (N, O, Ho, Wo) result.
        cols = np.ascontiguousarray(_windows(xp[sl], kh, kw, ho, wo, stride, dilation))
        cols = cols.reshape(sl.stop - sl.start, w2.shape[1], ho * wo)
        blocks[sl.start] = (sl, cols)
        np.matmul(w2, cols, out=out[sl].reshape(-1, o, ho * wo))

    # Images are independent: the batch is split between as many threads as BLAS may use.
    _over_rows(n, rows, w2.shape[1] * ho * wo, _MIN_CONV_WORK)
    cache["blocks"] = [blocks[k] for k in sorted(blocks)]
    return out


def _conv_vjp_x(g, ans, x, w, *, stride, padding, dilation, cache):
    g = _first_order(g)
    kh, kw, ho, wo = _conv_geometry(x.shape, w.shape, stride, padding, dilation)
    n, c, h, wd = x.shape
    ph, pw = padding
    w_t = np.asarray(w).reshape(w.shape[0], -1).T
    dxp = np.zeros((n, c, h + 2 * ph, wd + 2 * pw), dtype=np.result_type(w_t, g))

    def rows(sl):
        g3 = np.ascontiguousarray(g[sl]).reshape(sl.stop - sl.start, w.shape[0], ho * wo)
        dcols = np.matmul(w_t, g3).reshape(-1, c, kh, kw, ho, wo)
        block = dxp[sl]
        for a in range(kh):
            r0 = a * dilation[0]
            rs = slice(r0, r0 + stride[0] * (ho - 1) + 1, stride[0])
            for b in range(kw):
                c0 = b * dilation[1]
                cs = slice(c0, c0 + stride[1] * (wo - 1) + 1, stride[1])
                block[:, :, rs, cs] += dcols[:, :, a, b]

    _over_blocks(cache["blocks"], rows)
    out = dxp[:, :, ph : ph + h, pw : pw + wd]
    return out.astype(np.asarray(x).dtype, copy=False)


def _conv_vjp_w(g, ans, x, w, *, stride, padding, dilation, cache):
    g = _first_order(g)
    blocks = cache["blocks"]
    parts = [None] * len(blocks)
    index = {sl.start: j for j, (sl, _) in enumerate(blocks)}

    def rows(sl):
        j = index[sl.start]
        cols = blocks[j][1]
        g3 = np.ascontiguousarray(g[sl]).reshape(len(cols), w.shape[0], -1)
        # sum over the block's images of g_n cols_n^T, as one product over (image, position)
        parts[j] = np.matmul(g3, cols.transpose(0, 2, 1)).sum(axis=0)

    _over_blocks(blocks, rows)
    dw = parts[0]
    for p in parts[1:]:
        dw = dw + p
    return dw.reshape(w.shape).astype(np.asarray(w).dtype, copy=False)


_conv2d = Primitive("conv2d", _conv_forward, (_conv_vjp_x, _conv_vjp_w))


def conv2d(x: Any, weight: Any, *, stride=1, padding=0, dilation=1) -> Any:
    """Two-dimensional cross-correlation of a batch of images with a bank of filters.

    ``y[n, o, i, j] = sum_{c, a, b} weight[o, c, a, b] x_pad[n, c, s i + d a, s j + d b]``.

    Parameters
    ----------
    x : array-like or Tensor of shape (N, C, H, W)
        Batch of images with ``C`` channels.
    weight : array-like or Tensor of shape (O, C, kh, kw)
        ``O`` filters.
    stride : int or (int, int), default=1
        Step ``s`` between receptive fields.
    padding : int or (int, int), default=0
        Zeros added on each border.
    dilation : int or (int, int), default=1
        Spacing ``d`` between the kernel's taps.

    Returns
    -------
    Tensor or ndarray of shape (N, O, Ho, Wo)
        ``Ho = (H + 2 p - d (kh - 1) - 1) // s + 1`` and likewise ``Wo``; a Tensor,
        recorded for differentiation, when an input is one.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad
    >>> x = np.arange(9.0).reshape(1, 1, 3, 3)
    >>> ad.conv2d(x, np.ones((1, 1, 2, 2)))[0, 0]
    array([[ 8., 12.],
           [20., 24.]])
    """
    return _conv2d(
        x,
        weight,
        stride=_pair(stride, "stride"),
        padding=_pair(padding, "padding"),
        dilation=_pair(dilation, "dilation"),
        cache={},
    )


def _pool_geometry(shape, kernel, stride, padding, name):
    if len(shape) != 4:
        raise ValueError(
            f"{name} expects an input of shape (N, C, H, W); got an array of rank {len(shape)}."
        )
    if padding[0] * 2 > kernel[0] or padding[1] * 2 > kernel[1]:
        raise ValueError(f"{name}: padding {padding} must be at most half the kernel {kernel}.")
    ho = _out_size(shape[2], kernel[0], stride[0], padding[0], 1)
    wo = _out_size(shape[3], kernel[1], stride[1], padding[1], 1)
    if ho < 1 or wo < 1:
        raise ValueError(f"{name}: a {kernel} window does not fit in a {shape[2:]} image.")
    return ho, wo


def _pool_windows(xp, kernel, stride, ho, wo):
    """View ``(N, C, Ho, Wo, kh, kw)`` of the pooling windows."""
    sn, sc, sh, sw = xp.strides
    return as_strided(
        xp,
        shape=(xp.shape[0], xp.shape[1], ho, wo, kernel[0], kernel[1]),
        strides=(sn, sc, sh * stride[0], sw * stride[1], sh, sw),
        writeable=False,
    )


def _max_pool_forward(x, *, kernel, stride, padding, cache):
    ho, wo = _pool_geometry(x.shape, kernel, stride, padding, "max_pool2d")
    x = np.asarray(x)
    xp = _pad(x, padding, -np.inf)
    win = _pool_windows(xp, kernel, stride, ho, wo).reshape(*x.shape[:2], ho, wo, -1)
    # The first maximiser of each window takes the whole gradient (as PyTorch does).
    arg = np.argmax(win, axis=-1)
    cache["arg"] = arg
    return np.take_along_axis(win, arg[..., None], axis=-1)[..., 0]


def _scatter_windows(x_shape, dtype, kernel, stride, padding, ho, wo, contribution):
    """Add ``contribution(a, b)`` (shape (N, C, Ho, Wo)) at tap ``(a, b)`` of every window."""
    n, c, h, w = x_shape
    ph, pw = padding
    dxp = np.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=dtype)
    for a in range(kernel[0]):
        rows = slice(a, a + stride[0] * (ho - 1) + 1, stride[0])
        for b in range(kernel[1]):
            cols = slice(b, b + stride[1] * (wo - 1) + 1, stride[1])
            dxp[:, :, rows, cols] += contribution(a, b)
    return dxp[:, :, ph : ph + h, pw : pw + w]


def _max_pool_vjp(g, ans, x, *, kernel, stride, padding, cache):
    g = _first_order(g)
    ho, wo = g.shape[2:]
    arg = cache["arg"]
    return _scatter_windows(
        np.shape(x),
        np.asarray(x).dtype,
        kernel,
        stride,
        padding,
        ho,
        wo,
        lambda a, b: g * (arg == a * kernel[1] + b),
    )


_max_pool2d = Primitive("max_pool2d", _max_pool_forward, (_max_pool_vjp,))


def _avg_pool_forward(x, *, kernel, stride, padding):
    ho, wo = _pool_geometry(x.shape, kernel, stride, padding, "avg_pool2d")
    x = np.asarray(x)
    xp = _pad(x, padding)
    return _pool_windows(xp, kernel, stride, ho, wo).mean(axis=(-2, -1))


def _avg_pool_vjp(g, ans, x, *, kernel, stride, padding):
    g = _first_order(g)
    ho, wo = g.shape[2:]
    share = g / (kernel[0] * kernel[1])
    return _scatter_windows(
        np.shape(x), np.asarray(x).dtype, kernel, stride, padding, ho, wo, lambda a, b: share
    )


_avg_pool2d = Primitive("avg_pool2d", _avg_pool_forward, (_avg_pool_vjp,))


def max_pool2d(x: Any, kernel_size, *, stride=None, padding=0) -> Any:
    """Maximum over each ``kh x kw`` window of every channel.

    Parameters
    ----------
    x : array-like or Tensor of shape (N, C, H, W)
        Batch of images.
    kernel_size : int or (int, int)
        Window size.
    stride : int or (int, int), optional
        Step between windows; default: the window size (non-overlapping windows).
    padding : int or (int, int), default=0
        ``-inf`` added on each border (at most half the window).

    Returns
    -------
    Tensor or ndarray of shape (N, C, Ho, Wo)
        The window maxima. The gradient goes to the first maximiser of each window.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> ad.max_pool2d(x, 2)[0, 0]
    array([[ 5.,  7.],
           [13., 15.]])
    """
    kernel = _pair(kernel_size, "kernel_size")
    stride = kernel if stride is None else _pair(stride, "stride")
    return _max_pool2d(
        x, kernel=kernel, stride=stride, padding=_pair(padding, "padding"), cache={}
    )


def avg_pool2d(x: Any, kernel_size, *, stride=None, padding=0) -> Any:
    """Mean over each ``kh x kw`` window of every channel (zero padding counts in the mean).

    Parameters
    ----------
    x : array-like or Tensor of shape (N, C, H, W)
        Batch of images.
    kernel_size : int or (int, int)
        Window size.
    stride : int or (int, int), optional
        Step between windows; default: the window size.
    padding : int or (int, int), default=0
        Zeros added on each border (at most half the window).

    Returns
    -------
    Tensor or ndarray of shape (N, C, Ho, Wo)
        The window means.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad
    >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
    >>> ad.avg_pool2d(x, 2)[0, 0]
    array([[ 2.5,  4.5],
           [10.5, 12.5]])
    """
    kernel = _pair(kernel_size, "kernel_size")
    stride = kernel if stride is None else _pair(stride, "stride")
    return _avg_pool2d(x, kernel=kernel, stride=stride, padding=_pair(padding, "padding"))


def _check_recurrent(x, w_ih, w_hh, n_gates, name, biases=()):
    if np.ndim(x) != 3:
        raise ValueError(
            f"{name} expects a batch of sequences of shape (N, T, D); got an array of rank "
            f"{np.ndim(x)}."
        )
    if min(np.shape(x)) < 1:
        raise ValueError(
            f"{name} needs at least one sequence, one step and one feature; got a batch of "
            f"shape (N, T, D) = {np.shape(x)}."
        )
    hidden = np.shape(w_hh)[0] // n_gates
    if hidden < 1:
        raise ValueError(
            f"{name}: W_hh must have shape ({n_gates} H, H) with H >= 1, got {np.shape(w_hh)}."
        )
    if np.shape(w_hh) != (n_gates * hidden, hidden):
        raise ValueError(
            f"{name}: W_hh must have shape {(n_gates * hidden, hidden)}, got {np.shape(w_hh)}."
        )
    if np.shape(w_ih) != (n_gates * hidden, np.shape(x)[2]):
        raise ValueError(
            f"{name}: W_ih must have shape {(n_gates * hidden, np.shape(x)[2])}, got "
            f"{np.shape(w_ih)}."
        )
    for label, bias in biases:
        if np.shape(bias) != (n_gates * hidden,):
            raise ValueError(
                f"{name}: {label} must have shape {(n_gates * hidden,)}, got {np.shape(bias)}."
            )
    return hidden


def _mask_blocks(mask, n, t, dtype):
    """Time-major ``(T, N)`` mask (1: a real step, 0: padding after the sequence's end)."""
    if mask is None:
        return None
    m = np.asarray(mask)
    if m.shape != (n, t):
        raise ValueError(f"mask must have shape (N, T) = {(n, t)}, got {m.shape}.")
    return np.ascontiguousarray(m.T, dtype=dtype)


def _initial(h0, n, hidden, dtype, name="h0"):
    """The initial state: zeros by default, else the given ``(N, H)`` array or Tensor."""
    if h0 is None:
        return np.zeros((n, hidden), dtype=dtype)
    if np.shape(h0) != (n, hidden):
        raise ValueError(f"{name} must have shape (N, H) = {(n, hidden)}, got {np.shape(h0)}.")
    return h0


class _Workspace:
    """The recurrent primitives' large arrays, kept for reuse from call to call.

    A fresh array of several megabytes costs a page fault per page at its first touch
    (the operating system zeroes every page it hands out): for an LSTM of hidden size 128
    over 50 steps of 64 sequences, a quarter of the forward and backward pass. Arrays are
    taken here and given back when their pass (scratch) or their graph (what a forward pass
    keeps for its backward pass, through :class:`_Lease`) is done with them; at most
    ``limit`` bytes are kept, the least recently given dropped first.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        # Free buffers (1-D uint8) by size, and all of them by id in the order given back.
        self._free: dict[int, list[np.ndarray]] = {}
        self._order: dict[int, np.ndarray] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def take(self, shape: tuple[int, ...], dtype) -> np.ndarray:
        dtype = np.dtype(dtype)
        nbytes = int(np.prod(shape)) * dtype.itemsize
        raw = None
        with self._lock:
            stack = self._free.get(nbytes)
            if stack:
                raw = stack.pop()
                del self._order[id(raw)]
                self._bytes -= nbytes
        if raw is None:
            raw = np.empty(nbytes, dtype=np.uint8)
        return raw.view(dtype).reshape(shape)

    def give(self, arrays) -> None:
        with self._lock:
            for a in arrays:
                raw = a.base
                if not isinstance(raw, np.ndarray) or raw.dtype != np.uint8:
                    continue
                if raw.nbytes > self.limit or id(raw) in self._order:
                    continue
                while self._bytes + raw.nbytes > self.limit:
                    old = self._order.pop(next(iter(self._order)))
                    stack = self._free[old.nbytes]
                    del stack[next(j for j, b in enumerate(stack) if b is old)]
                    self._bytes -= old.nbytes
                self._free.setdefault(raw.nbytes, []).append(raw)
                self._order[id(raw)] = raw
                self._bytes += raw.nbytes


_WORKSPACE = _Workspace(limit=1 << 26)


class _Lease:
    """Gives a forward pass's saved arrays back to the workspace when its graph is dropped
    (they are held by the primitive's cache alone: nothing handed to the caller is among
    them)."""

    __slots__ = ("arrays",)

    def __init__(self, arrays: list[np.ndarray]) -> None:
        self.arrays = arrays

    def __del__(self) -> None:
        workspace = globals().get("_WORKSPACE")
        if workspace is not None:  # None while the interpreter shuts down
            workspace.give(self.arrays)


def _compiled(dtype):
    """``(kernels, sgemm address)`` for the compiled float32 recurrences, or None (NumPy)."""
    lib = _kernels(dtype)
    if lib is None:
        return None
    gemm = _ext_blas("sgemm")
    return None if gemm is None else (lib, gemm)


def _ptr(a) -> int | None:
    return None if a is None else a.ctypes.data


def _block_inputs(x, sl, w_in, bias, dtype, out=None):
    """A block's inputs time-major ``(T, n, D)`` and their projection ``x W_in`` (plus
    ``bias`` unless None) as ``(T, n, width)``: one product over every step of the block."""
    t, d = x.shape[1], x.shape[2]
    nr = sl.stop - sl.start
    xt = _WORKSPACE.take((t, nr, d), dtype)
    xt[...] = x[sl].transpose(1, 0, 2)
    if out is None:
        out = _WORKSPACE.take((t, nr, w_in.shape[1]), dtype)
    np.matmul(xt.reshape(t * nr, d), w_in, out=out.reshape(t * nr, -1))
    if bias is not None:
        out += bias
    return xt, out


def _select(mk, new, old):
    """``mk new + (1 - mk) old`` for a 0/1 mask column: padded rows keep the old state."""
    return mk * new + (1 - mk) * old


def _write_outputs(out, sl, hs, mb, *finals):
    """Outputs of every step (0 on padding) and the final states into the packed result."""
    t = hs.shape[0] - 1
    if mb is None:
        out[:t, sl] = hs[1:]
    else:
        np.multiply(hs[1:], mb[:, :, None], out=out[:t, sl])
    for j, final in enumerate(finals):
        out[t + j, sl] = final


def _weight_grads(parts):
    """The weight gradients summed over the blocks, in block order."""
    total = list(parts[0])
    for p in parts[1:]:
        for j, a in enumerate(p):
            total[j] = total[j] + a
    return total


# Internal gate order [i, f, o, g]: the three sigmoid gates are contiguous, so that each
# step applies the sigmoid's affine map to one block. Weights are permuted on entry and the
# gradients permuted back.
def _lstm_perm(hidden: int) -> np.ndarray:
    h = np.arange(hidden)
    return np.concatenate([h, hidden + h, 3 * hidden + h, 2 * hidden + h])


def _lstm_steps(whh_t, gates, hs, cs, tcs, mb):
    """NumPy route of the forward recurrence of one block (see the compiled kernel)."""
    t, nr, hidden = tcs.shape
    h2, h3 = 2 * hidden, 3 * hidden
    buf = np.empty((nr, 4 * hidden), dtype=gates.dtype)
    tmp = np.empty((nr, hidden), dtype=gates.dtype)
    for k in range(t):
        gk = gates[k]
        np.matmul(hs[k], whh_t, out=buf)
        gk += buf
        np.tanh(gk, out=gk)
        sig = gk[:, :h3]
        sig *= 0.5
        sig += 0.5
        c = cs[k + 1]
        np.multiply(gk[:, hidden:h2], cs[k], out=c)
        np.multiply(gk[:, :hidden], gk[:, h3:], out=tmp)
        c += tmp
        np.tanh(c, out=tcs[k])
        np.multiply(gk[:, h2:h3], tcs[k], out=hs[k + 1])
        if mb is not None:
            mk = mb[k][:, None]
            cs[k + 1] = _select(mk, cs[k + 1], cs[k])
            hs[k + 1] = _select(mk, hs[k + 1], hs[k])


def _lstm_forward(x, h0, c0, w_ih, w_hh, b, *, mask, cache):
    n, t, _ = x.shape
    hidden = w_hh.shape[1]
    dtype = np.result_type(x, w_ih, w_hh, b)
    perm = _lstm_perm(hidden)
    # s(a) = (1 + tanh(a / 2)) / 2: the sigmoid gates' rows are halved once (exactly, a power
    # of two), so that one tanh call per step serves all four gates.
    scale = np.full(4 * hidden, 0.5, dtype=dtype)
    scale[3 * hidden :] = 1.0
    x = np.asarray(x, dtype=dtype)
    w_in = (np.asarray(w_ih, dtype=dtype)[perm] * scale[:, None]).T
    bias = np.asarray(b, dtype=dtype)[perm] * scale
    whh_t = np.ascontiguousarray((np.asarray(w_hh, dtype=dtype)[perm] * scale[:, None]).T)
    mt = _mask_blocks(mask, n, t, dtype)
    compiled = _compiled(dtype)
    out = np.empty((t + 2, n, hidden), dtype=dtype)
    blocks: dict[int, tuple] = {}

    def run(sl):
        nr = sl.stop - sl.start
        # The gates start as the input projection; each step adds h_{k-1} W_hh^T in place
        # (and the bias: in the compiled step, or here on the NumPy route).
        xt, gates = _block_inputs(x, sl, w_in, None if compiled else bias, dtype)
        hs = _WORKSPACE.take((t + 1, nr, hidden), dtype)
        cs = _WORKSPACE.take((t + 1, nr, hidden), dtype)
        tcs = _WORKSPACE.take((t, nr, hidden), dtype)
        hs[0] = h0[sl]
        cs[0] = c0[sl]
        mb = None if mt is None else np.ascontiguousarray(mt[:, sl])
        if compiled is not None:
            lib, gemm = compiled
            lib.rnn_lstm_forward_seq_f32(
                t, nr, hidden, gemm, whh_t.ctypes.data, bias.ctypes.data, gates.ctypes.data,
                hs.ctypes.data, cs.ctypes.data, tcs.ctypes.data, _ptr(mb),
            )  # fmt: skip
        else:
            _lstm_steps(whh_t, gates, hs, cs, tcs, mb)
        _write_outputs(out, sl, hs, mb, hs[t], cs[t])
        blocks[sl.start] = (sl, xt, gates, hs, cs, tcs, mb)

    _over_rows(n, run, 4 * hidden, _MIN_STEP_WORK)
    saved = [blocks[k] for k in sorted(blocks)]
    lease = _Lease([a for blk in saved for a in blk[1:6]])
    cache.update(blocks=saved, lease=lease, dtype=dtype, perm=perm)
    return out


def _lstm_back_steps(g, sl, w_hh, gates, cs, tcs, mb, dh, dc, da):
    """NumPy route of one block's backpropagation through time (see the compiled kernel).

    Per step, gates in the internal order [i, f, o, g] and with dc the gradient on c_t, dh
    that on h_t: da_i = dc g i(1-i), da_f = dc c_{t-1} f(1-f), da_g = dc i (1-g^2),
    da_o = dh tanh(c_t) o(1-o), and dc gains dh o (1-tanh^2(c_t)).
    """
    t, nr, hidden = tcs.shape
    h2, h3 = 2 * hidden, 3 * hidden
    dy = g[:t, sl] if mb is None else g[:t, sl] * mb[:, :, None]
    deriv = np.empty((nr, 4 * hidden), dtype=gates.dtype)
    tmp = np.empty((nr, hidden), dtype=gates.dtype)
    for k in range(t - 1, -1, -1):
        dh += dy[k]
        if mb is not None:
            # Padded steps copy the state: d(state_k) goes straight to state_{k-1}.
            mk = mb[k][:, None]
            dh_keep, dc_keep = (1 - mk) * dh, (1 - mk) * dc
            dh *= mk
            dc *= mk
        gk, tc, dak = gates[k], tcs[k], da[k]
        np.subtract(1, gk, out=deriv)
        deriv *= gk
        np.multiply(gk[:, h3:], gk[:, h3:], out=deriv[:, h3:])
        np.subtract(1, deriv[:, h3:], out=deriv[:, h3:])
        np.multiply(dh, tc, out=dak[:, h2:h3])
        dak[:, h2:h3] *= deriv[:, h2:h3]
        np.multiply(tc, tc, out=tmp)
        np.subtract(1, tmp, out=tmp)
        tmp *= gk[:, h2:h3]
        tmp *= dh
        dc += tmp
        np.multiply(dc, gk[:, h3:], out=dak[:, :hidden])
        np.multiply(dc, cs[k], out=dak[:, hidden:h2])
        np.multiply(dc, gk[:, :hidden], out=dak[:, h3:])
        dak[:, :h2] *= deriv[:, :h2]
        dak[:, h3:] *= deriv[:, h3:]
        dc *= gk[:, hidden:h2]
        np.matmul(dak, w_hh, out=dh)
        if mb is not None:
            dh += dh_keep
            dc += dc_keep


def _lstm_backward(g, w_ih, w_hh, cache):
    blocks, dtype, perm = cache["blocks"], cache["dtype"], cache["perm"]
    g = np.ascontiguousarray(_first_order(g), dtype=dtype)
    t, n, hidden = g.shape[0] - 2, g.shape[1], g.shape[2]
    d = blocks[0][1].shape[2]
    w_hh = np.ascontiguousarray(np.asarray(w_hh, dtype=dtype)[perm])
    w_ih = np.asarray(w_ih, dtype=dtype)[perm]
    compiled = _compiled(dtype)
    dx = np.empty((n, t, d), dtype=dtype)
    dh_0 = np.empty((n, hidden), dtype=dtype)
    dc_0 = np.empty((n, hidden), dtype=dtype)
    parts: dict[int, tuple] = {}
    index = {blk[0].start: blk for blk in blocks}

    def run(sl):
        _, xt, gates, hs, cs, tcs, mb = index[sl.start]
        nr = sl.stop - sl.start
        da = _WORKSPACE.take((t, nr, 4 * hidden), dtype)
        dh = np.array(g[t, sl])
        dc = np.array(g[t + 1, sl])
        if compiled is not None:
            lib, gemm = compiled
            lib.rnn_lstm_backward_seq_f32(
                t, nr, hidden, gemm, w_hh.ctypes.data, gates.ctypes.data, cs.ctypes.data,
                tcs.ctypes.data, g[0, sl].ctypes.data, n * hidden, _ptr(mb), dh.ctypes.data,
                dc.ctypes.data, da.ctypes.data,
            )  # fmt: skip
        else:
            _lstm_back_steps(g, sl, w_hh, gates, cs, tcs, mb, dh, dc, da)
        # The block's share of dx and of the weight gradients: products over all its steps.
        da2 = da.reshape(t * nr, -1)
        dx[sl] = (da2 @ w_ih).reshape(t, nr, d).transpose(1, 0, 2)
        parts[sl.start] = (
            da2.T @ xt.reshape(t * nr, d),
            da2.T @ hs[:t].reshape(t * nr, hidden),
            da2.sum(axis=0),
        )
        dh_0[sl] = dh
        dc_0[sl] = dc
        _WORKSPACE.give([da])

    _over_blocks(blocks, run)
    dw_ih, dw_hh, db = _weight_grads([parts[k] for k in sorted(parts)])
    inverse = np.argsort(perm)
    return {
        "x": dx,
        "h0": dh_0,
        "c0": dc_0,
        "w_ih": dw_ih[inverse],
        "w_hh": dw_hh[inverse],
        "b": db[inverse],
    }


def _vjp_for(key, backward, n_state):
    def vjp(g, ans, x, *args, mask, cache):
        w_ih, w_hh = args[n_state], args[n_state + 1]
        like = {"x": x, "h0": args[0]}
        if n_state == 2:
            like["c0"] = args[1]
        names = ("w_ih", "w_hh", "b", "b_hh")
        for j, nm in enumerate(names):
            if n_state + j < len(args):
                like[nm] = args[n_state + j]
        grads = _memo(cache, g, lambda: backward(g, w_ih, w_hh, cache))
        out = grads[key]
        dtype = np.asarray(like[key]).dtype
        return np.asarray(out, dtype=dtype).reshape(np.shape(like[key]))

    return vjp


_LSTM_KEYS = ("x", "h0", "c0", "w_ih", "w_hh", "b")
_lstm = Primitive("lstm", _lstm_forward, tuple(_vjp_for(k, _lstm_backward, 2) for k in _LSTM_KEYS))


def _gru_steps(whh_t, bhh, gates, hhn, hs, mb):
    """NumPy route of the GRU's forward recurrence of one block."""
    t, nr, hidden = hhn.shape
    h2 = 2 * hidden
    hh = np.empty((nr, 3 * hidden), dtype=gates.dtype)
    for k in range(t):
        np.matmul(hs[k], whh_t, out=hh)
        hh += bhh
        gk = gates[k]
        gk[:, :h2] += hh[:, :h2]
        special.expit(gk[:, :h2], out=gk[:, :h2])
        hhn[k] = hh[:, h2:]
        np.tanh(gk[:, h2:] + gk[:, :hidden] * hh[:, h2:], out=gk[:, h2:])
        z, nn = gk[:, hidden:h2], gk[:, h2:]
        h = nn + z * (hs[k] - nn)
        if mb is not None:
            h = _select(mb[k][:, None], h, hs[k])
        hs[k + 1] = h


def _gru_forward(x, h0, w_ih, w_hh, b_ih, b_hh, *, mask, cache):
    n, t, _ = x.shape
    hidden = w_hh.shape[1]
    dtype = np.result_type(x, w_ih, w_hh, b_ih, b_hh)
    x = np.asarray(x, dtype=dtype)
    w_in = np.asarray(w_ih, dtype=dtype).T
    bih = np.ascontiguousarray(b_ih, dtype=dtype)
    whh_t = np.ascontiguousarray(w_hh.T, dtype=dtype)
    bhh = np.ascontiguousarray(b_hh, dtype=dtype)
    mt = _mask_blocks(mask, n, t, dtype)
    compiled = _compiled(dtype)
    out = np.empty((t + 1, n, hidden), dtype=dtype)
    blocks: dict[int, tuple] = {}

    def run(sl):
        nr = sl.stop - sl.start
        # gates: r, z, n, starting as the input side x W_ih^T (+ b_ih on the NumPy route).
        xt, gates = _block_inputs(x, sl, w_in, None if compiled else bih, dtype)
        hhn = _WORKSPACE.take((t, nr, hidden), dtype)  # h W_hn^T + b_hn (needed by dr)
        hs = _WORKSPACE.take((t + 1, nr, hidden), dtype)
        hs[0] = h0[sl]
        mb = None if mt is None else np.ascontiguousarray(mt[:, sl])
        if compiled is not None:
            lib, gemm = compiled
            work = np.empty((nr, 3 * hidden), dtype=dtype)
            lib.rnn_gru_forward_seq_f32(
                t, nr, hidden, gemm, whh_t.ctypes.data, bih.ctypes.data, bhh.ctypes.data,
                gates.ctypes.data, hhn.ctypes.data, hs.ctypes.data, _ptr(mb), work.ctypes.data,
            )  # fmt: skip
        else:
            _gru_steps(whh_t, bhh, gates, hhn, hs, mb)
        _write_outputs(out, sl, hs, mb, hs[t])
        blocks[sl.start] = (sl, xt, gates, hhn, hs, mb)

    _over_rows(n, run, 3 * hidden, _MIN_STEP_WORK)
    saved = [blocks[k] for k in sorted(blocks)]
    cache.update(blocks=saved, lease=_Lease([a for blk in saved for a in blk[1:5]]))
    cache["dtype"] = dtype
    return out


def _gru_back_steps(g, sl, w_hh, gates, hhn, hs, mb, dh, dxa, dha):
    """NumPy route of one block's backpropagation through time for the GRU."""
    t, _, hidden = hhn.shape
    h2 = 2 * hidden
    dy = g[:t, sl] if mb is None else g[:t, sl] * mb[:, :, None]
    for k in range(t - 1, -1, -1):
        dh += dy[k]
        if mb is not None:
            dh_keep = (1 - mb[k][:, None]) * dh
            dh *= mb[k][:, None]
        gk = gates[k]
        r, z, nn = gk[:, :hidden], gk[:, hidden:h2], gk[:, h2:]
        dxk, dhk = dxa[k], dha[k]
        dan = dh * (1 - z) * (1 - nn * nn)
        dxk[:, h2:] = dan
        np.multiply(dan, r, out=dhk[:, h2:])
        np.multiply(dan * hhn[k], r * (1 - r), out=dxk[:, :hidden])
        np.multiply(dh * (hs[k] - nn), z * (1 - z), out=dxk[:, hidden:h2])
        dhk[:, :h2] = dxk[:, :h2]
        dh[...] = dh * z + dhk @ w_hh
        if mb is not None:
            dh += dh_keep


def _gru_backward(g, w_ih, w_hh, cache):
    blocks, dtype = cache["blocks"], cache["dtype"]
    g = np.ascontiguousarray(_first_order(g), dtype=dtype)
    t, n, hidden = g.shape[0] - 1, g.shape[1], g.shape[2]
    d = blocks[0][1].shape[2]
    w_hh = np.ascontiguousarray(w_hh, dtype=dtype)
    w_ih = np.asarray(w_ih, dtype=dtype)
    compiled = _compiled(dtype)
    dx = np.empty((n, t, d), dtype=dtype)
    dh_0 = np.empty((n, hidden), dtype=dtype)
    parts: dict[int, tuple] = {}
    index = {blk[0].start: blk for blk in blocks}

    def run(sl):
        _, xt, gates, hhn, hs, mb = index[sl.start]
        nr = sl.stop - sl.start
        dxa = _WORKSPACE.take((t, nr, 3 * hidden), dtype)  # pre-activation gradients, input side
        dha = _WORKSPACE.take((t, nr, 3 * hidden), dtype)  # ... recurrent side (r scales n)
        dh = np.array(g[t, sl])
        if compiled is not None:
            lib, gemm = compiled
            lib.rnn_gru_backward_seq_f32(
                t, nr, hidden, gemm, w_hh.ctypes.data, gates.ctypes.data, hhn.ctypes.data,
                hs.ctypes.data, g[0, sl].ctypes.data, n * hidden, _ptr(mb), dh.ctypes.data,
                dxa.ctypes.data, dha.ctypes.data,
            )  # fmt: skip
        else:
            _gru_back_steps(g, sl, w_hh, gates, hhn, hs, mb, dh, dxa, dha)
        dx2 = dxa.reshape(t * nr, -1)
        dh2 = dha.reshape(t * nr, -1)
        dx[sl] = (dx2 @ w_ih).reshape(t, nr, d).transpose(1, 0, 2)
        parts[sl.start] = (
            dx2.T @ xt.reshape(t * nr, d),
            dh2.T @ hs[:t].reshape(t * nr, hidden),
            dx2.sum(axis=0),
            dh2.sum(axis=0),
        )
        dh_0[sl] = dh
        _WORKSPACE.give([dxa, dha])

    _over_blocks(blocks, run)
    dw_ih, dw_hh, db_ih, db_hh = _weight_grads([parts[k] for k in sorted(parts)])
    return {"x": dx, "h0": dh_0, "w_ih": dw_ih, "w_hh": dw_hh, "b": db_ih, "b_hh": db_hh}


_GRU_KEYS = ("x", "h0", "w_ih", "w_hh", "b", "b_hh")
_gru = Primitive("gru", _gru_forward, tuple(_vjp_for(k, _gru_backward, 1) for k in _GRU_KEYS))


def _rnn_steps(whh_t, hs, mb):
    """NumPy route of the Elman recurrence of one block (slab k + 1 of ``hs`` holds the
    input projection of step k on entry)."""
    t = hs.shape[0] - 1
    buf = np.empty(hs.shape[1:], dtype=hs.dtype)
    for k in range(t):
        a = hs[k + 1]
        np.matmul(hs[k], whh_t, out=buf)
        a += buf
        np.tanh(a, out=a)
        if mb is not None:
            hs[k + 1] = _select(mb[k][:, None], a, hs[k])


def _rnn_forward(x, h0, w_ih, w_hh, b, *, mask, cache):
    n, t, _ = x.shape
    hidden = w_hh.shape[1]
    dtype = np.result_type(x, w_ih, w_hh, b)
    x = np.asarray(x, dtype=dtype)
    w_in = np.asarray(w_ih, dtype=dtype).T
    bias = np.ascontiguousarray(b, dtype=dtype)
    whh_t = np.ascontiguousarray(w_hh.T, dtype=dtype)
    mt = _mask_blocks(mask, n, t, dtype)
    compiled = _compiled(dtype)
    out = np.empty((t + 1, n, hidden), dtype=dtype)
    blocks: dict[int, tuple] = {}

    def run(sl):
        nr = sl.stop - sl.start
        # Slab k + 1 of hs starts as the input projection of step k (+ b on the NumPy route).
        hs = _WORKSPACE.take((t + 1, nr, hidden), dtype)
        hs[0] = h0[sl]
        xt, _ = _block_inputs(x, sl, w_in, None if compiled else bias, dtype, out=hs[1:])
        mb = None if mt is None else np.ascontiguousarray(mt[:, sl])
        if compiled is not None:
            lib, gemm = compiled
            lib.rnn_elman_forward_seq_f32(
                t, nr, hidden, gemm, whh_t.ctypes.data, bias.ctypes.data, hs.ctypes.data,
                _ptr(mb),
            )  # fmt: skip
        else:
            _rnn_steps(whh_t, hs, mb)
        _write_outputs(out, sl, hs, mb, hs[t])
        blocks[sl.start] = (sl, xt, hs, mb)

    _over_rows(n, run, hidden, _MIN_STEP_WORK)
    saved = [blocks[k] for k in sorted(blocks)]
    cache.update(blocks=saved, lease=_Lease([a for blk in saved for a in blk[1:3]]))
    cache["dtype"] = dtype
    return out


def _rnn_back_steps(g, sl, w_hh, hs, mb, dh, da):
    """NumPy route of one block's backpropagation through time for the Elman network."""
    t = hs.shape[0] - 1
    dy = g[:t, sl] if mb is None else g[:t, sl] * mb[:, :, None]
    for k in range(t - 1, -1, -1):
        dh += dy[k]
        if mb is not None:
            dh_keep = (1 - mb[k][:, None]) * dh
            dh *= mb[k][:, None]
        # On padded steps h_{k+1} is the copied state, not tanh(a), but dh is 0 there.
        h = hs[k + 1]
        np.multiply(dh, 1 - h * h, out=da[k])
        np.matmul(da[k], w_hh, out=dh)
        if mb is not None:
            dh += dh_keep


def _rnn_backward(g, w_ih, w_hh, cache):
    blocks, dtype = cache["blocks"], cache["dtype"]
    g = np.ascontiguousarray(_first_order(g), dtype=dtype)
    t, n, hidden = g.shape[0] - 1, g.shape[1], g.shape[2]
    d = blocks[0][1].shape[2]
    w_hh = np.ascontiguousarray(w_hh, dtype=dtype)
    w_ih = np.asarray(w_ih, dtype=dtype)
    compiled = _compiled(dtype)
    dx = np.empty((n, t, d), dtype=dtype)
    dh_0 = np.empty((n, hidden), dtype=dtype)
    parts: dict[int, tuple] = {}
    index = {blk[0].start: blk for blk in blocks}

    def run(sl):
        _, xt, hs, mb = index[sl.start]
        nr = sl.stop - sl.start
        da = _WORKSPACE.take((t, nr, hidden), dtype)
        dh = np.array(g[t, sl])
        if compiled is not None:
            lib, gemm = compiled
            lib.rnn_elman_backward_seq_f32(
                t, nr, hidden, gemm, w_hh.ctypes.data, hs.ctypes.data, g[0, sl].ctypes.data,
                n * hidden, _ptr(mb), dh.ctypes.data, da.ctypes.data,
            )  # fmt: skip
        else:
            _rnn_back_steps(g, sl, w_hh, hs, mb, dh, da)
        da2 = da.reshape(t * nr, -1)
        dx[sl] = (da2 @ w_ih).reshape(t, nr, d).transpose(1, 0, 2)
        parts[sl.start] = (
            da2.T @ xt.reshape(t * nr, d),
            da2.T @ hs[:t].reshape(t * nr, hidden),
            da2.sum(axis=0),
        )
        dh_0[sl] = dh
        _WORKSPACE.give([da])

    _over_blocks(blocks, run)
    dw_ih, dw_hh, db = _weight_grads([parts[k] for k in sorted(parts)])
    return {"x": dx, "h0": dh_0, "w_ih": dw_ih, "w_hh": dw_hh, "b": db}


_RNN_KEYS = ("x", "h0", "w_ih", "w_hh", "b")
_rnn = Primitive("rnn", _rnn_forward, tuple(_vjp_for(k, _rnn_backward, 1) for k in _RNN_KEYS))


def _place(g, ans, x, *, start, stop):
    # The VJP of a slice along the first axis: zeros with g written in place (no repeated
    # indices, so an assignment, much cheaper than a general scatter-add).
    g = _first_order(g)
    out = np.zeros(np.shape(x), dtype=g.dtype)
    out[start:stop] = g
    return out


_rows = Primitive("rows", lambda x, *, start, stop: x[start:stop], (_place,))


def _split(packed, t, n_state):
    """Outputs ``(N, T, H)`` and the final states ``(N, H)`` from a packed time-major result."""
    outputs = transpose(_rows(packed, start=0, stop=t), (1, 0, 2))
    states = tuple(
        reshape(_rows(packed, start=t + j, stop=t + j + 1), np.shape(packed)[1:])
        for j in range(n_state)
    )
    return (outputs, *states)


def lstm(
    x: Any,
    w_ih: Any,
    w_hh: Any,
    b: Any,
    *,
    h0: Any = None,
    c0: Any = None,
    mask: Any = None,
) -> tuple[Any, Any, Any]:
    """Long short-term memory over a batch of sequences (batch first), one fused primitive.

    ``[i, f, g, o] = [s, s, tanh, s](x_t W_ih^T + h_{t-1} W_hh^T + b)``,
    ``c_t = f * c_{t-1} + i * g``, ``h_t = o * tanh(c_t)`` (gates in PyTorch's order).

    Parameters
    ----------
    x : array-like or Tensor of shape (N, T, D)
        ``N`` sequences of ``T`` steps of ``D`` features.
    w_ih : array-like or Tensor of shape (4 H, D)
        Input weights of the gates ``i, f, g, o`` stacked.
    w_hh : array-like or Tensor of shape (4 H, H)
        Recurrent weights.
    b : array-like or Tensor of shape (4 H,)
        Bias (PyTorch's ``b_ih + b_hh``).
    h0, c0 : array-like or Tensor of shape (N, H), optional
        Initial hidden and cell states; zeros by default.
    mask : array-like of shape (N, T), optional
        1 on real steps, 0 on the padding after each sequence's end: the state is carried
        unchanged through padding (so the final states are those at each sequence's last real
        step) and the outputs there are 0.

    Returns
    -------
    outputs : Tensor or ndarray of shape (N, T, H)
        ``h_t`` for every step.
    h_n, c_n : Tensor or ndarray of shape (N, H)
        Final hidden and cell states.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad
    >>> x = np.ones((1, 2, 1)); w = np.zeros((4, 1)); u = np.zeros((4, 1))
    >>> out, h, c = ad.lstm(x, w, u, np.array([0.0, 0.0, 1.0, 0.0]))
    >>> np.round(c, 4)  # c_1 = tanh(1) / 2, c_2 = c_1 / 2 + tanh(1) / 2
    array([[0.5712]])
    """
    n, t = np.shape(x)[:2]
    hidden = _check_recurrent(x, w_ih, w_hh, 4, "lstm", [("b", b)])
    dtype = np.result_type(_value(x), _value(w_ih))
    h0 = _initial(h0, n, hidden, dtype)
    c0 = _initial(c0, n, hidden, dtype, "c0")
    packed = _lstm(x, h0, c0, w_ih, w_hh, b, mask=mask, cache={})
    return _split(packed, t, 2)  # type: ignore[return-value]


def gru(
    x: Any,
    w_ih: Any,
    w_hh: Any,
    b_ih: Any,
    b_hh: Any,
    *,
    h0: Any = None,
    mask: Any = None,
) -> tuple[Any, Any]:
    """Gated recurrent unit over a batch of sequences (batch first), one fused primitive.

    ``r = s(x W_ir^T + b_ir + h W_hr^T + b_hr)``, ``z = s(x W_iz^T + b_iz + h W_hz^T + b_hz)``,
    ``n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))``, ``h_t = (1 - z) n + z h_{t-1}``
    (PyTorch's parametrisation: the reset gate multiplies the recurrent term with its bias).

    Parameters
    ----------
    x : array-like or Tensor of shape (N, T, D)
        ``N`` sequences of ``T`` steps of ``D`` features.
    w_ih : array-like or Tensor of shape (3 H, D)
        Input weights of ``r, z, n`` stacked.
    w_hh : array-like or Tensor of shape (3 H, H)
        Recurrent weights.
    b_ih, b_hh : array-like or Tensor of shape (3 H,)
        Input and recurrent biases.
    h0 : array-like or Tensor of shape (N, H), optional
        Initial state; zeros by default.
    mask : array-like of shape (N, T), optional
        1 on real steps, 0 on padding (see :func:`lstm`).

    Returns
    -------
    outputs : Tensor or ndarray of shape (N, T, H)
        ``h_t`` for every step.
    h_n : Tensor or ndarray of shape (N, H)
        Final state.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad
    >>> z = np.zeros((3, 1))
    >>> out, h = ad.gru(np.ones((1, 1, 1)), z, z, np.zeros(3), np.zeros(3))
    >>> h  # z = 1/2, n = 0: h = (1 - 1/2) 0 + 1/2 0
    array([[0.]])
    """
    n, t = np.shape(x)[:2]
    hidden = _check_recurrent(x, w_ih, w_hh, 3, "gru", [("b_ih", b_ih), ("b_hh", b_hh)])
    dtype = np.result_type(_value(x), _value(w_ih))
    h0 = _initial(h0, n, hidden, dtype)
    packed = _gru(x, h0, w_ih, w_hh, b_ih, b_hh, mask=mask, cache={})
    return _split(packed, t, 1)  # type: ignore[return-value]


def rnn(
    x: Any, w_ih: Any, w_hh: Any, b: Any, *, h0: Any = None, mask: Any = None
) -> tuple[Any, Any]:
    """Elman recurrent network ``h_t = tanh(x_t W_ih^T + h_{t-1} W_hh^T + b)``, batch first.

    Parameters
    ----------
    x : array-like or Tensor of shape (N, T, D)
        ``N`` sequences of ``T`` steps of ``D`` features.
    w_ih : array-like or Tensor of shape (H, D)
        Input weights.
    w_hh : array-like or Tensor of shape (H, H)
        Recurrent weights.
    b : array-like or Tensor of shape (H,)
        Bias (PyTorch's ``b_ih + b_hh``).
    h0 : array-like or Tensor of shape (N, H), optional
        Initial state; zeros by default.
    mask : array-like of shape (N, T), optional
        1 on real steps, 0 on padding (see :func:`lstm`).

    Returns
    -------
    outputs : Tensor or ndarray of shape (N, T, H)
        ``h_t`` for every step.
    h_n : Tensor or ndarray of shape (N, H)
        Final state.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad
    >>> out, h = ad.rnn(np.ones((1, 2, 1)), np.ones((1, 1)), np.zeros((1, 1)), np.zeros(1))
    >>> np.round(out[0, :, 0], 4)
    array([0.7616, 0.7616])
    """
    n, t = np.shape(x)[:2]
    hidden = _check_recurrent(x, w_ih, w_hh, 1, "rnn", [("b", b)])
    dtype = np.result_type(_value(x), _value(w_ih))
    h0 = _initial(h0, n, hidden, dtype)
    packed = _rnn(x, h0, w_ih, w_hh, b, mask=mask, cache={})
    return _split(packed, t, 1)  # type: ignore[return-value]
