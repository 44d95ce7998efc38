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

The products of one step are small, so they run with one BLAS thread; the sequences of a
batch are independent, so a large enough batch (at least 16 rows and 4096 gate entries per
step for each thread) is split by rows between as many threads as BLAS may use (each runs
every step of its rows, with no synchronisation between steps); so is a convolution's batch
of images. The
input projection of all steps and the weight gradients are single large products with every
BLAS thread. In float32 the pointwise part of a step (the gates' tanh, the cell update, the
pre-activation gradients) is one call into the compiled kernels of ``mathlearn._ext._rnn``
(vectorised tanh, within 3 float32 ulp), with NumPy as the fallback.

These VJPs are first-order only (they compute with NumPy, not with recorded operations):
``hessian`` through them raises ``NotImplementedError``.
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided
from scipy import special

from .._ext import load as _load_ext
from ..utils._threads import blas_threads, serial_blas
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


_POOL: list = []
if hasattr(os, "register_at_fork"):
    # A forked child has none of the parent's pool threads: it starts a pool of its own.
    os.register_at_fork(after_in_child=_POOL.clear)
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
    """Run ``fn(rows)`` over the blocks ``(rows, data)`` that a forward pass split."""
    _run_blocks([sl for sl, _ in blocks], fn)


def _run_blocks(slices: list[slice], fn) -> None:
    with serial_blas():
        if len(slices) == 1:
            fn(slices[0])
            return
        if not _POOL:
            from concurrent.futures import ThreadPoolExecutor

            _POOL.append(ThreadPoolExecutor(thread_name_prefix="mathlearn-batch"))
        futures = [_POOL[0].submit(fn, sl) for sl in slices[1:]]
        try:
            fn(slices[0])
        finally:
            for future in futures:
                future.exception()
        for future in futures:
            future.result()


def _kernels(dtype):
    """The compiled float32 step kernels (``mathlearn._ext._rnn``), or None (NumPy route)."""
    if dtype != np.float32:
        return None
    lib = _load_ext("_rnn")
    if lib is not None and not getattr(lib, "_mathlearn_typed", False):
        i64, ptr = ctypes.c_int64, ctypes.c_void_p
        lib.rnn_tanh_f32.argtypes = [i64, ptr, ptr]
        lib.rnn_lstm_forward_f32.argtypes = [i64, i64] + [ptr] * 7
        lib.rnn_lstm_backward_f32.argtypes = [i64, i64] + [ptr] * 6
        lib.rnn_gru_forward_f32.argtypes = [i64, i64] + [ptr] * 7
        for name in ("tanh", "lstm_forward", "lstm_backward", "gru_forward"):
            getattr(lib, f"rnn_{name}_f32").restype = None
        lib._mathlearn_typed = True
    return lib


def _addresses(row: int, *arrays: np.ndarray) -> list[tuple[int, int]]:
    """For C-contiguous ``(T, N, W)`` arrays: the address of ``a[0, row]`` and the bytes
    from one step to the next (``a[k, row]`` is at ``address + k * step``)."""
    return [
        (a.ctypes.data + row * a.shape[2] * a.itemsize, a.shape[1] * a.shape[2] * a.itemsize)
        for a in arrays
    ]


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


def _check_recurrent(x, w_ih, w_hh, n_gates, name):
    if np.ndim(x) != 3:
        raise ValueError(
            f"{name} expects a batch of sequences of shape (N, T, D); got an array of rank "
            f"{np.ndim(x)}."
        )
    hidden = np.shape(w_hh)[0] // n_gates
    if np.shape(w_hh) != (n_gates * hidden, hidden):
        raise ValueError(
            f"{name}: W_hh must have shape {(n_gates * hidden, hidden)}, got {np.shape(w_hh)}."
        )
    if np.shape(w_ih) != (n_gates * hidden, np.shape(x)[2]):
        raise ValueError(
            f"{name}: W_ih must have shape {(n_gates * hidden, np.shape(x)[2])}, got "
            f"{np.shape(w_ih)}."
        )
    return hidden


def _mask_steps(mask, n, t, dtype):
    """Time-major ``(T, N, 1)`` mask (1: a real step, 0: padding after the sequence's end)."""
    if mask is None:
        return None
    m = np.asarray(mask)
    if m.shape != (n, t):
        raise ValueError(f"mask must have shape (N, T) = {(n, t)}, got {m.shape}.")
    return np.ascontiguousarray(m.T, dtype=dtype)[:, :, None]


def _initial(h0, n, hidden, dtype):
    if h0 is None:
        return np.zeros((n, hidden), dtype=dtype)
    return np.asarray(h0, dtype=dtype)


# Internal gate order [i, f, o, g]: the three sigmoid gates are contiguous, so that each
# step applies the sigmoid's affine map to one block. Weights are permuted on entry and the
# gradients permuted back.
def _lstm_perm(hidden: int) -> np.ndarray:
    h = np.arange(hidden)
    return np.concatenate([h, hidden + h, 3 * hidden + h, 2 * hidden + h])


def _lstm_forward(x, h0, c0, w_ih, w_hh, b, *, mask, cache):
    n, t, _ = x.shape
    hidden = w_hh.shape[1]
    h2, h3 = 2 * hidden, 3 * hidden
    dtype = np.result_type(x, w_ih, w_hh, b)
    perm = _lstm_perm(hidden)
    # s(a) = (1 + tanh(a / 2)) / 2: the sigmoid gates' rows are halved once (exactly, a power
    # of two), so that one tanh call per step serves all four gates.
    scale = np.full(4 * hidden, 0.5, dtype=dtype)
    scale[h3:] = 1.0
    xt = np.ascontiguousarray(np.asarray(x, dtype=dtype).transpose(1, 0, 2))
    w_in = (np.asarray(w_ih, dtype=dtype)[perm] * scale[:, None]).T
    # The input projection of every step is one large product (with every BLAS thread).
    pre = (xt.reshape(t * n, -1) @ w_in).reshape(t, n, -1)
    pre += np.asarray(b, dtype=dtype)[perm] * scale
    whh_t = np.ascontiguousarray((np.asarray(w_hh, dtype=dtype)[perm] * scale[:, None]).T)
    m = _mask_steps(mask, n, t, dtype)
    gates = np.empty((t, n, 4 * hidden), dtype=dtype)
    hs = np.empty((t + 1, n, hidden), dtype=dtype)
    cs = np.empty((t + 1, n, hidden), dtype=dtype)
    tcs = np.empty((t, n, hidden), dtype=dtype)
    hs[0] = h0
    cs[0] = c0
    lib = _kernels(dtype)

    def rows(sl):
        r0, nr = sl.start, sl.stop - sl.start
        buf = np.empty((nr, 4 * hidden), dtype=dtype)
        tmp = np.empty((nr, hidden), dtype=dtype)
        (pp, sp), (pc, sc), (pg, sg), (pt, st), (ph, sh) = _addresses(r0, pre, cs, gates, tcs, hs)
        pb = buf.ctypes.data
        for k in range(t):
            np.matmul(hs[k, sl], whh_t, out=buf)
            if lib is not None:
                lib.rnn_lstm_forward_f32(
                    nr, hidden, pb, pp + k * sp, pc + k * sc, pg + k * sg, pc + (k + 1) * sc,
                    pt + k * st, ph + (k + 1) * sh,
                )  # fmt: skip
            else:
                buf += pre[k, sl]
                gk = gates[k, sl]
                np.tanh(buf, out=gk)
                sig = gk[:, :h3]
                sig *= 0.5
                sig += 0.5
                c = cs[k + 1, sl]
                np.multiply(gk[:, hidden:h2], cs[k, sl], out=c)
                np.multiply(gk[:, :hidden], gk[:, h3:], out=tmp)
                c += tmp
                np.tanh(c, out=tcs[k, sl])
                np.multiply(gk[:, h2:h3], tcs[k, sl], out=hs[k + 1, sl])
            if m is not None:
                mk = m[k, sl]
                cs[k + 1, sl] = mk * cs[k + 1, sl] + (1 - mk) * cs[k, sl]
                hs[k + 1, sl] = mk * hs[k + 1, sl] + (1 - mk) * hs[k, sl]

    _over_rows(n, rows, 4 * hidden, _MIN_STEP_WORK)
    cache.update(xt=xt, gates=gates, hs=hs, cs=cs, tcs=tcs, m=m, dtype=dtype, perm=perm)
    out = np.empty((t + 2, n, hidden), dtype=dtype)
    out[:t] = hs[1:] if m is None else hs[1:] * m
    out[t] = hs[t]
    out[t + 1] = cs[t]
    return out


def _lstm_backward(g, w_ih, w_hh, cache):
    g = _first_order(g)
    xt, gates, hs, cs, tcs, m, dtype, perm = (
        cache[k] for k in ("xt", "gates", "hs", "cs", "tcs", "m", "dtype", "perm")
    )
    t, n, hidden = tcs.shape
    h2, h3 = 2 * hidden, 3 * hidden
    w_hh = np.asarray(w_hh, dtype=dtype)[perm]
    # Per step, gates in the internal order [i, f, o, g] and with dc the gradient on c_t,
    # dh that on h_t: da_i = dc g i(1-i), da_f = dc c_{t-1} f(1-f), da_g = dc i (1-g^2),
    # da_o = dh tanh(c_t) o(1-o), and dc gains dh o (1-tanh^2(c_t)). Small buffers reused
    # at every step (a vectorised pass over all steps is memory-bound).
    dy = g[:t] if m is None else g[:t] * m
    da = np.empty_like(gates)
    dh_0 = np.empty((n, hidden), dtype=dtype)
    dc_0 = np.empty((n, hidden), dtype=dtype)
    lib = _kernels(dtype)

    def rows(sl):
        r0, nr = sl.start, sl.stop - sl.start
        dh = np.array(g[t, sl], dtype=dtype)
        dc = np.array(g[t + 1, sl], dtype=dtype)
        deriv = np.empty((nr, 4 * hidden), dtype=dtype)
        tmp = np.empty((nr, hidden), dtype=dtype)
        (pg, sg), (pc, sc), (pt, st), (pa, sa) = _addresses(r0, gates, cs, tcs, da)
        p_dh, p_dc = dh.ctypes.data, dc.ctypes.data
        for k in range(t - 1, -1, -1):
            dh += dy[k, sl]
            if m is not None:
                # Padded steps copy the state: d(state_k) goes straight to state_{k-1}.
                mk = m[k, sl]
                dh_keep, dc_keep = (1 - mk) * dh, (1 - mk) * dc
                dh *= mk
                dc *= mk
            dak = da[k, sl]
            if lib is not None:
                lib.rnn_lstm_backward_f32(
                    nr, hidden, p_dh, p_dc, pg + k * sg, pc + k * sc, pt + k * st, pa + k * sa
                )
            else:
                gk, tc = gates[k, sl], tcs[k, sl]
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
                np.multiply(dc, cs[k, sl], out=dak[:, hidden:h2])
                np.multiply(dc, gk[:, :hidden], out=dak[:, h3:])
                dak[:, :h2] *= deriv[:, :h2]
                dak[:, h3:] *= deriv[:, h3:]
                dc *= gk[:, hidden:h2]
            np.matmul(dak, w_hh, out=dh)
            if m is not None:
                dh += dh_keep
                dc += dc_keep
        dh_0[sl] = dh
        dc_0[sl] = dc

    _over_rows(n, rows, 4 * hidden, _MIN_STEP_WORK)
    da2 = da.reshape(t * n, -1)
    inverse = np.argsort(perm)
    return {
        "x": (da2 @ np.asarray(w_ih, dtype=dtype)[perm]).reshape(t, n, -1).transpose(1, 0, 2),
        "h0": dh_0,
        "c0": dc_0,
        "w_ih": (da2.T @ xt.reshape(t * n, -1))[inverse],
        "w_hh": (da2.T @ hs[:t].reshape(t * n, -1))[inverse],
        "b": da2.sum(axis=0)[inverse],
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


def _gru_forward(x, h0, w_ih, w_hh, b_ih, b_hh, *, mask, cache):
    n, t, _ = x.shape
    hidden = w_hh.shape[1]
    dtype = np.result_type(x, w_ih, w_hh, b_ih, b_hh)
    xt = np.ascontiguousarray(np.asarray(x, dtype=dtype).transpose(1, 0, 2))
    pre = (xt.reshape(t * n, -1) @ w_ih.T.astype(dtype, copy=False)).reshape(t, n, -1)
    pre += b_ih
    whh_t = np.ascontiguousarray(w_hh.T, dtype=dtype)
    bhh = np.ascontiguousarray(b_hh, dtype=dtype)
    m = _mask_steps(mask, n, t, dtype)
    gates = np.empty((t, n, 3 * hidden), dtype=dtype)  # r, z, n
    hhn = np.empty((t, n, hidden), dtype=dtype)  # h W_hn^T + b_hn (needed by dr)
    hs = np.empty((t + 1, n, hidden), dtype=dtype)
    hs[0] = h0
    h2 = 2 * hidden
    lib = _kernels(dtype)

    def rows(sl):
        r0, nr = sl.start, sl.stop - sl.start
        hh = np.empty((nr, 3 * hidden), dtype=dtype)
        (pp, sp), (ph, sh), (pg, sg), (pn, sn) = _addresses(r0, pre, hs, gates, hhn)
        p_hh, p_b = hh.ctypes.data, bhh.ctypes.data
        for k in range(t):
            np.matmul(hs[k, sl], whh_t, out=hh)
            if lib is not None:
                lib.rnn_gru_forward_f32(
                    nr, hidden, pp + k * sp, p_hh, p_b, ph + k * sh, pg + k * sg, pn + k * sn,
                    ph + (k + 1) * sh,
                )  # fmt: skip
                h = hs[k + 1, sl]
            else:
                hh += bhh
                a = pre[k, sl]
                gk = gates[k, sl]
                a[:, :h2] += hh[:, :h2]
                special.expit(a[:, :h2], out=gk[:, :h2])
                hhn[k, sl] = hh[:, h2:]
                np.tanh(a[:, h2:] + gk[:, :hidden] * hh[:, h2:], out=gk[:, h2:])
                z, nn = gk[:, hidden:h2], gk[:, h2:]
                h = nn + z * (hs[k, sl] - nn)
            if m is not None:
                h = m[k, sl] * h + (1 - m[k, sl]) * hs[k, sl]
            hs[k + 1, sl] = h

    _over_rows(n, rows, 3 * hidden, _MIN_STEP_WORK)
    cache.update(xt=xt, gates=gates, hhn=hhn, hs=hs, m=m, dtype=dtype)
    out = np.empty((t + 1, n, hidden), dtype=dtype)
    out[:t] = hs[1:] if m is None else hs[1:] * m
    out[t] = hs[t]
    return out


def _gru_backward(g, w_ih, w_hh, cache):
    g = _first_order(g)
    xt, gates, hhn, hs, m, dtype = (cache[k] for k in ("xt", "gates", "hhn", "hs", "m", "dtype"))
    t, n, hidden = hhn.shape
    h2 = 2 * hidden
    w_hh = np.asarray(w_hh, dtype=dtype)
    dy = g[:t] if m is None else g[:t] * m
    dxa = np.empty_like(gates)  # pre-activation gradients on the input side
    dha = np.empty_like(gates)  # ... and on the recurrent side (r scales the n block)
    dh_0 = np.empty((n, hidden), dtype=dtype)

    def rows(sl):
        dh = np.array(g[t, sl], dtype=dtype)
        for k in range(t - 1, -1, -1):
            dh += dy[k, sl]
            if m is not None:
                dh_keep = (1 - m[k, sl]) * dh
                dh = m[k, sl] * dh
            gk = gates[k, sl]
            r, z, nn = gk[:, :hidden], gk[:, hidden:h2], gk[:, h2:]
            dxk, dhk = dxa[k, sl], dha[k, sl]
            dan = dh * (1 - z) * (1 - nn * nn)
            dxk[:, h2:] = dan
            np.multiply(dan, r, out=dhk[:, h2:])
            np.multiply(dan * hhn[k, sl], r * (1 - r), out=dxk[:, :hidden])
            np.multiply(dh * (hs[k, sl] - nn), z * (1 - z), out=dxk[:, hidden:h2])
            dhk[:, :h2] = dxk[:, :h2]
            dh = dh * z + dhk @ w_hh
            if m is not None:
                dh += dh_keep
        dh_0[sl] = dh

    _over_rows(n, rows, 3 * hidden, _MIN_STEP_WORK)
    dx2 = dxa.reshape(t * n, -1)
    dh2 = dha.reshape(t * n, -1)
    return {
        "x": (dx2 @ np.asarray(w_ih, dtype=dtype)).reshape(t, n, -1).transpose(1, 0, 2),
        "h0": dh_0,
        "w_ih": dx2.T @ xt.reshape(t * n, -1),
        "w_hh": dh2.T @ hs[:t].reshape(t * n, -1),
        "b": dx2.sum(axis=0),
        "b_hh": dh2.sum(axis=0),
    }


_GRU_KEYS = ("x", "h0", "w_ih", "w_hh", "b", "b_hh")
_gru = Primitive("gru", _gru_forward, tuple(_vjp_for(k, _gru_backward, 1) for k in _GRU_KEYS))


def _rnn_forward(x, h0, w_ih, w_hh, b, *, mask, cache):
    n, t, _ = x.shape
    hidden = w_hh.shape[1]
    dtype = np.result_type(x, w_ih, w_hh, b)
    xt = np.ascontiguousarray(np.asarray(x, dtype=dtype).transpose(1, 0, 2))
    pre = (xt.reshape(t * n, -1) @ w_ih.T.astype(dtype, copy=False)).reshape(t, n, -1)
    pre += b
    whh_t = np.ascontiguousarray(w_hh.T, dtype=dtype)
    m = _mask_steps(mask, n, t, dtype)
    hs = np.empty((t + 1, n, hidden), dtype=dtype)
    hs[0] = h0
    lib = _kernels(dtype)

    def rows(sl):
        a = np.empty((sl.stop - sl.start, hidden), dtype=dtype)
        for k in range(t):
            np.matmul(hs[k, sl], whh_t, out=a)
            a += pre[k, sl]
            if lib is not None:
                lib.rnn_tanh_f32(a.size, a.ctypes.data, a.ctypes.data)
            else:
                np.tanh(a, out=a)
            if m is not None:
                a = m[k, sl] * a + (1 - m[k, sl]) * hs[k, sl]
            hs[k + 1, sl] = a

    _over_rows(n, rows, hidden, _MIN_STEP_WORK)
    cache.update(xt=xt, hs=hs, m=m, dtype=dtype)
    out = np.empty((t + 1, n, hidden), dtype=dtype)
    out[:t] = hs[1:] if m is None else hs[1:] * m
    out[t] = hs[t]
    return out


def _rnn_backward(g, w_ih, w_hh, cache):
    g = _first_order(g)
    xt, hs, m, dtype = (cache[k] for k in ("xt", "hs", "m", "dtype"))
    t = hs.shape[0] - 1
    n, hidden = hs.shape[1:]
    w_hh = np.asarray(w_hh, dtype=dtype)
    dy = g[:t] if m is None else g[:t] * m
    da = np.empty((t, n, hidden), dtype=dtype)
    dh_0 = np.empty((n, hidden), dtype=dtype)

    def rows(sl):
        dh = np.array(g[t, sl], dtype=dtype)
        for k in range(t - 1, -1, -1):
            dh += dy[k, sl]
            if m is not None:
                dh_keep = (1 - m[k, sl]) * dh
                dh = m[k, sl] * dh
            # On padded steps h_{k+1} is the copied state, not tanh(a), but dh is 0 there.
            h = hs[k + 1, sl]
            np.multiply(dh, 1 - h * h, out=da[k, sl])
            dh = da[k, sl] @ w_hh
            if m is not None:
                dh += dh_keep
        dh_0[sl] = dh

    _over_rows(n, rows, hidden, _MIN_STEP_WORK)
    da2 = da.reshape(t * n, -1)
    return {
        "x": (da2 @ np.asarray(w_ih, dtype=dtype)).reshape(t, n, -1).transpose(1, 0, 2),
        "h0": dh_0,
        "w_ih": da2.T @ xt.reshape(t * n, -1),
        "w_hh": da2.T @ hs[:t].reshape(t * n, -1),
        "b": da2.sum(axis=0),
    }


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
    hidden = _check_recurrent(x, w_ih, w_hh, 4, "lstm")
    dtype = np.result_type(_value(x), _value(w_ih))
    h0 = h0 if h0 is not None else _initial(None, n, hidden, dtype)
    c0 = c0 if c0 is not None else _initial(None, n, hidden, dtype)
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
    hidden = _check_recurrent(x, w_ih, w_hh, 3, "gru")
    dtype = np.result_type(_value(x), _value(w_ih))
    h0 = h0 if h0 is not None else _initial(None, n, hidden, dtype)
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
    hidden = _check_recurrent(x, w_ih, w_hh, 1, "rnn")
    dtype = np.result_type(_value(x), _value(w_ih))
    h0 = h0 if h0 is not None else _initial(None, n, hidden, dtype)
    packed = _rnn(x, h0, w_ih, w_hh, b, mask=mask, cache={})
    return _split(packed, t, 1)  # type: ignore[return-value]
