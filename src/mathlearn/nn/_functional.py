"""Network operations as autodiff primitives, and the losses with their output gradients.

``linear`` and ``cross_entropy`` are primitives of their own (one graph node each instead of
three or four): the dense layer ``x W^T + b`` with VJPs ``g W``, ``g^T x`` and ``sum g``
(Stuttgart "Introduction to Machine Learning" §4, backpropagation:
``dl/dW_l = delta_l^T x_{l-1}^T``, ``dl/db_l = delta_l^T``), and the softmax cross-entropy
from logits, whose VJP is the notes' output gradient ``p(y | x) - [y = y*]``. Both VJPs are
written with autodiff operations, so they can be differentiated again.

Losses average over the samples (``reduction="mean"``) unless told otherwise; each
per-sample loss and its gradient with respect to the network output ``f`` (the output-layer
delta ``delta_L`` of backpropagation), as given by the notes (Stuttgart §4, "Losses"):

- squared error ``l = ||f - y||^2``, ``dl/df = 2 (f - y)``;
- cross-entropy ``l = -log softmax(f)_{y*}``, ``dl/df_y = p(y | x) - [y = y*]``;
- binary cross-entropy from a logit ``f``, ``l = log(1 + e^f) - y f`` with ``y in {0, 1}``,
  ``dl/df = sigmoid(f) - y``;
- hinge, binary (``y in {-1, +1}``): ``l = max(0, 1 - y f)``, ``dl/df = -y [1 - y f > 0]``;
  multi-class one-vs-all: ``l = sum_{y != y*} [1 - (f_{y*} - f_y)]_+`` with
  ``dl/df_y = [1 - f_{y*} + f_y > 0]`` for ``y != y*`` and minus their sum for ``y*``.

:func:`output_gradient` returns these closed forms; the tests check them against autodiff.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from .. import autodiff as ad
from ..autodiff import Primitive, Tensor
from ..utils._param_validation import StrOptions, validate_params

__all__ = [
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "dropout",
    "hinge_loss",
    "linear",
    "mse_loss",
    "output_gradient",
]


def _val(x):
    return x.value if isinstance(x, Tensor) else x


def _linear_forward(x, w, b):
    out = np.matmul(x, w.T)
    if b is not None:
        out += b
    return out


# First-order sweeps see plain arrays and take the NumPy path; with create_graph the rules
# see tensors and are written with autodiff operations, so they are recorded themselves.
def _linear_vjp_x(g, ans, x, w, b):
    if not isinstance(g, Tensor) and not isinstance(w, Tensor):
        return np.matmul(g, w)
    return ad.matmul(g, w)


def _linear_vjp_w(g, ans, x, w, b):
    n_out, n_in = np.shape(_val(w))
    if not isinstance(g, Tensor) and not isinstance(x, Tensor):
        if np.ndim(g) == 2 and np.ndim(x) == 2:
            return g.T @ x
        return np.reshape(g, (-1, n_out)).T @ np.reshape(x, (-1, n_in))
    g2 = ad.reshape(g, (-1, n_out))
    x2 = ad.reshape(x, (-1, n_in))
    return ad.matmul(ad.transpose(g2), x2)


def _linear_vjp_b(g, ans, x, w, b):
    n_out = np.shape(_val(b))[0]
    if not isinstance(g, Tensor):
        return np.add.reduce(g.reshape(-1, n_out), axis=0)
    return ad.sum(ad.reshape(g, (-1, n_out)), axis=0)


_linear = Primitive("linear", _linear_forward, (_linear_vjp_x, _linear_vjp_w, _linear_vjp_b))


def linear(x: Any, weight: Any, bias: Any = None) -> Any:
    """The dense layer ``x W^T + b`` (one graph node).

    Parameters
    ----------
    x : array or Tensor of shape (..., in_features)
        Inputs, one per row.
    weight : array or Tensor of shape (out_features, in_features)
        ``W``, the notes' ``W_l in R^{h_l x h_{l-1}}``.
    bias : array or Tensor of shape (out_features,), optional
        ``b``.

    Returns
    -------
    Tensor or ndarray of shape (..., out_features)

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad, nn
    >>> x = np.array([[1.0, 2.0]]); W = np.array([[1.0, 0.0], [0.0, 3.0]])
    >>> nn.linear(x, W, np.array([0.5, 0.0]))
    array([[1.5, 6. ]])
    >>> ad.grad(lambda w: ad.sum(nn.linear(x, w)))(W)  # g^T x
    array([[1., 2.],
           [1., 2.]])
    """
    return _linear(x, weight, bias)


# The VJP needs softmax(z), whose numerator and row sums the forward pass has just formed.
# The forward pass leaves them here for the VJP of the same inputs (recognised by identity;
# taken once, then recomputed if asked again), so that a training step exponentiates the
# logits once. Kept for small arrays only: the entry lives until the next forward pass.
_CE_LAST: list = [None]
_CE_KEEP_MAX = 1 << 18


def _ce_forward(z, labels):
    # mean over the rows of logsumexp(z) - z_y, with the row maximum taken out first.
    n = z.shape[0]
    shifted = z - z.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    s = np.add.reduce(e, axis=1)
    total = np.add.reduce(np.log(s)) - np.add.reduce(shifted[np.arange(n), labels])
    _CE_LAST[0] = (z, labels, e, s) if z.size <= _CE_KEEP_MAX else None
    return np.asarray(total / n, dtype=z.dtype)


def _ce_vjp(g, ans, z, labels):
    n, k = np.shape(_val(z))
    rows = np.arange(n)
    if isinstance(z, Tensor) or isinstance(g, Tensor):  # recording a graph (create_graph)
        onehot = np.zeros((n, k), dtype=np.asarray(_val(z)).dtype)
        onehot[rows, labels] = 1.0
        return g * (ad.softmax(z, axis=1) - onehot) / n
    # softmax(z) - onehot(y), scaled by g / n, in one buffer.
    last = _CE_LAST[0]
    if last is not None and last[0] is z and last[1] is labels:
        _CE_LAST[0] = None
        p = last[2]
        p /= last[3][:, None]
    else:
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
    p[rows, labels] -= 1.0
    p *= g / n
    return p


_cross_entropy_int = Primitive("cross_entropy", _ce_forward, (_ce_vjp,))


def _reduce(per_sample, reduction: str):
    if reduction == "mean":
        return ad.mean(per_sample)
    if reduction == "sum":
        return ad.sum(per_sample)
    return per_sample


def _check_finite_labels(target, n_classes: int) -> np.ndarray:
    labels = np.asarray(_val(target))
    if labels.dtype.kind not in "iu":
        if not np.all(np.isfinite(labels)) or not np.all(labels == np.round(labels)):
            raise ValueError("class labels must be integers 0 .. n_classes - 1.")
        labels = labels.astype(np.intp)
    if labels.size and (labels.min() < 0 or labels.max() >= n_classes):
        raise ValueError(
            f"class labels must lie in 0 .. {n_classes - 1}; got values from {labels.min()} "
            f"to {labels.max()}."
        )
    return labels


@validate_params({"reduction": [StrOptions({"mean", "sum", "none"})]})
def cross_entropy(logits: Any, target: Any, reduction: str = "mean") -> Any:
    """Softmax cross-entropy from logits, ``-log softmax(f)_{y*}``.

    Parameters
    ----------
    logits : array or Tensor of shape (n_samples, n_classes)
        The network outputs ``f`` (no softmax applied).
    target : array of shape (n_samples,) of int, or (n_samples, n_classes)
        Class indices, or class probabilities (soft targets) per row.
    reduction : {"mean", "sum", "none"}, default="mean"
        Average or sum over the samples, or the per-sample losses.

    Returns
    -------
    Tensor or ndarray
        The loss.

    Notes
    -----
    Computed as ``logsumexp(f) - f_{y*}``, never as ``log`` of a softmax, so logits of any
    size are safe. Its gradient is ``softmax(f) - onehot(y*)`` per sample (divided by
    ``n_samples`` for the mean).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad, nn
    >>> f = np.array([[0.0, 0.0]])
    >>> round(float(nn.cross_entropy(f, np.array([1]))), 6)  # log 2
    0.693147
    >>> ad.grad(lambda t: nn.cross_entropy(t, np.array([1])))(f)
    array([[ 0.5, -0.5]])
    """
    z = _val(logits)
    if np.ndim(z) != 2:
        raise ValueError(f"logits must have shape (n_samples, n_classes); got {np.shape(z)}.")
    t = np.asarray(_val(target))
    if t.ndim == 2:
        if t.shape != np.shape(z):
            raise ValueError(f"soft targets must have the logits' shape {np.shape(z)}.")
        per = -ad.sum(t * ad.log_softmax(logits, axis=1), axis=1)
        return _reduce(per, reduction)
    labels = _check_finite_labels(t, np.shape(z)[1])
    if labels.shape != (np.shape(z)[0],):
        raise ValueError(f"target must have shape ({np.shape(z)[0]},); got {labels.shape}.")
    if reduction == "mean":
        return _cross_entropy_int(logits, labels)
    idx = (np.arange(labels.shape[0]), labels)
    per = ad.logsumexp(logits, axis=1) - ad.getitem(logits, idx)
    return _reduce(per, reduction)


def _as_column_like(target, f) -> np.ndarray:
    t = np.asarray(_val(target), dtype=np.asarray(_val(f)).dtype)
    if t.shape != np.shape(_val(f)):
        if t.size == np.size(_val(f)):
            t = t.reshape(np.shape(_val(f)))
        else:
            raise ValueError(f"target has shape {t.shape}; the output has {np.shape(_val(f))}.")
    return t


@validate_params({"reduction": [StrOptions({"mean", "sum", "none"})]})
def binary_cross_entropy_with_logits(logits: Any, target: Any, reduction: str = "mean") -> Any:
    """Binary cross-entropy of targets in ``[0, 1]`` from logits: ``log(1 + e^f) - y f``.

    Parameters
    ----------
    logits : array or Tensor of shape (n_samples,) or (n_samples, n_outputs)
        ``f``; ``sigmoid(f)`` is the probability of class 1.
    target : array of the same number of entries
        ``y`` in ``[0, 1]``.
    reduction : {"mean", "sum", "none"}, default="mean"
        Over the samples; several outputs per sample are summed.

    Returns
    -------
    Tensor or ndarray
        The loss.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad, nn
    >>> ad.grad(lambda t: nn.binary_cross_entropy_with_logits(t, np.array([1.0])))(np.zeros(1))
    array([-0.5])
    """
    t = _as_column_like(target, logits)
    per = ad.softplus(logits) - t * logits
    if np.ndim(_val(logits)) == 2:
        per = ad.sum(per, axis=1)
    return _reduce(per, reduction)


@validate_params({"reduction": [StrOptions({"mean", "sum", "none"})]})
def mse_loss(output: Any, target: Any, reduction: str = "mean") -> Any:
    """Squared error ``||f - y||^2`` per sample (summed over outputs), averaged over samples.

    Parameters
    ----------
    output : array or Tensor of shape (n_samples,) or (n_samples, n_outputs)
        ``f``.
    target : array with the same number of entries
        ``y``.
    reduction : {"mean", "sum", "none"}, default="mean"
        Over the samples.

    Returns
    -------
    Tensor or ndarray
        The loss; its gradient per sample is ``2 (f - y)`` (the notes' form, without the
        factor ``1/2`` that the sum-of-squares error of PRML §5.2 carries).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import autodiff as ad, nn
    >>> ad.grad(lambda t: nn.mse_loss(t, np.array([1.0, 1.0])))(np.array([2.0, 0.0]))
    array([ 1., -1.])
    """
    t = _as_column_like(target, output)
    diff = output - t
    per = diff * diff
    if np.ndim(_val(output)) == 2:
        per = ad.sum(per, axis=1)
    return _reduce(per, reduction)


@validate_params({"reduction": [StrOptions({"mean", "sum", "none"})]})
def hinge_loss(output: Any, target: Any, reduction: str = "mean") -> Any:
    """Hinge loss: binary ``max(0, 1 - y f)`` or the notes' one-vs-all multi-class form.

    Parameters
    ----------
    output : array or Tensor of shape (n_samples,) or (n_samples, n_classes)
        Scores ``f``; a vector (or one column) is the binary case.
    target : array of shape (n_samples,)
        Binary case: ``y in {-1, +1}``. Multi-class: class indices.
    reduction : {"mean", "sum", "none"}, default="mean"
        Over the samples.

    Returns
    -------
    Tensor or ndarray
        The loss.

    Notes
    -----
    Multi-class (Stuttgart §3 and §4, "one-vs-all hinge"):
    ``l = sum_{y != y*} [1 - (f_{y*} - f_y)]_+`` (margin 1). At the kink the gradient taken
    is 0.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> float(nn.hinge_loss(np.array([0.5, -2.0]), np.array([1, -1])))
    0.25
    """
    f = _val(output)
    t = np.asarray(_val(target))
    if np.ndim(f) == 1 or (np.ndim(f) == 2 and np.shape(f)[1] == 1):
        y = _as_column_like(t, output)
        if not np.all(np.isin(y, (-1, 1))):
            raise ValueError("binary hinge targets must be -1 or +1.")
        per = ad.relu(1.0 - y * output)
        if np.ndim(f) == 2:
            per = ad.sum(per, axis=1)
        return _reduce(per, reduction)
    if np.ndim(f) != 2:
        raise ValueError(f"scores must have shape (n_samples, n_classes); got {np.shape(f)}.")
    labels = _check_finite_labels(t, np.shape(f)[1])
    n, k = np.shape(f)
    idx = (np.arange(n), labels)
    true_score = ad.reshape(ad.getitem(output, idx), (n, 1))
    margins = ad.relu(1.0 - true_score + output)
    others = np.ones((n, k), dtype=np.asarray(f).dtype)
    others[idx] = 0.0
    per = ad.sum(margins * others, axis=1)
    return _reduce(per, reduction)


@validate_params(
    {"loss": [StrOptions({"squared", "cross_entropy", "binary_cross_entropy", "hinge"})]},
)
def output_gradient(loss: str, output: Any, target: Any) -> np.ndarray:
    """The per-sample gradient ``dl/df`` of a loss at the network output (closed form).

    This is the output-layer delta ``delta_L`` that backpropagation starts from (Stuttgart
    §4, "Losses" and "Backpropagation"); the losses above, with ``reduction="sum"``, have
    exactly this gradient.

    Parameters
    ----------
    loss : {"squared", "cross_entropy", "binary_cross_entropy", "hinge"}
        Which loss.
    output : array of shape (n_samples,) or (n_samples, n_outputs)
        ``f``.
    target : array
        As the loss takes it.

    Returns
    -------
    ndarray of ``output``'s shape

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> nn.output_gradient("cross_entropy", np.array([[0.0, 0.0]]), np.array([0]))
    array([[-0.5,  0.5]])
    """
    f = np.asarray(_val(output))
    t = np.asarray(_val(target))
    if loss == "squared":
        return 2.0 * (f - t.reshape(f.shape))
    if loss == "binary_cross_entropy":
        return special.expit(f) - t.reshape(f.shape)
    if loss == "cross_entropy":
        p = special.softmax(f, axis=1)
        p[np.arange(f.shape[0]), t.astype(np.intp)] -= 1.0
        return p
    if f.ndim == 1 or f.shape[1] == 1:
        y = t.reshape(f.shape)
        return -y * (1.0 - y * f > 0)
    n = f.shape[0]
    labels = t.astype(np.intp)
    active = (1.0 - f[np.arange(n), labels][:, None] + f > 0).astype(f.dtype)
    active[np.arange(n), labels] = 0.0
    grad = active.copy()
    grad[np.arange(n), labels] = -active.sum(axis=1)
    return grad


def dropout(x: Any, p: float, rng: np.random.Generator, training: bool = True) -> Any:
    """Inverted dropout: zero each entry with probability ``p``, scale the rest by ``1/(1-p)``.

    Parameters
    ----------
    x : array or Tensor
        Input.
    p : float
        Drop probability in ``[0, 1)``.
    rng : numpy.random.Generator
        Source of the mask.
    training : bool, default=True
        When ``False``, ``x`` is returned unchanged.

    Returns
    -------
    Tensor or ndarray of ``x``'s shape

    Notes
    -----
    Scaling the kept units by ``1/(1-p)`` during training makes the expected output equal to
    the input, so at test time the layer is the identity: this is the notes' "take true
    averages" (weight scaling) at test time (Srivastava et al., 2014), moved to training.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn
    >>> y = nn.dropout(np.ones(8), 0.5, np.random.default_rng(0))
    >>> sorted(set(y.tolist()))
    [0.0, 2.0]
    """
    if not training or p == 0.0:
        return x
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout probability must be in [0, 1); got {p}.")
    dtype = np.asarray(_val(x)).dtype
    keep = rng.random(np.shape(_val(x))) >= p
    return x * (keep.astype(dtype) / dtype.type(1.0 - p))
