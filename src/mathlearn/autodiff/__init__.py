"""Reverse-mode automatic differentiation over NumPy arrays.

A :class:`Tensor` records the operations applied to it; each operation is a primitive that
defines its forward rule and its vector-Jacobian product in one place (``_primitives.py``);
one reverse sweep over the recorded graph gives the gradient of a scalar with respect to
every input (backpropagation, Imperial "Mathematics for Machine Learning" lecture 2;
Stuttgart "Introduction to Machine Learning" §4.1).

Examples
--------
>>> import numpy as np
>>> from mathlearn import autodiff as ad
>>> A = np.array([[0.5, -1.0], [2.0, 0.1]]); b = np.array([0.0, 0.1])
>>> x = np.array([1.0, 2.0]); y = np.array([0.5, -0.5])
>>> loss = lambda p: 0.5 * ad.sum((y - ad.tanh(p["A"] @ x + p["b"])) ** 2)
>>> g = ad.grad(loss)({"A": A, "b": b})
>>> np.round(g["b"], 7)
array([-0.2539196,  0.0583322])
"""

from ._check import GradCheckResult, check_grad, numerical_grad
from ._functional import grad, hessian, hvp, jacobian, value_and_grad
from ._nn_primitives import avg_pool2d, conv2d, gru, lstm, max_pool2d, rnn
from ._primitives import (
    abs,
    add,
    broadcast_to,
    cholesky,
    concatenate,
    cos,
    diagonal,
    divide,
    erf,
    exp,
    gelu,
    getitem,
    leaky_relu,
    log,
    log_softmax,
    logdet,
    logsumexp,
    matmul,
    max,
    mean,
    multiply,
    negative,
    power,
    relu,
    reshape,
    sigmoid,
    sin,
    softmax,
    softplus,
    solve,
    solve_triangular,
    sqrt,
    stack,
    subtract,
    sum,
    tanh,
    transpose,
    where,
)
from ._tensor import Primitive, Tensor, backward, is_grad_enabled, no_grad
from ._tree import tree_flatten, tree_map, tree_unflatten, tree_vdot

__all__ = [
    "GradCheckResult",
    "Primitive",
    "Tensor",
    "abs",
    "add",
    "avg_pool2d",
    "backward",
    "broadcast_to",
    "check_grad",
    "cholesky",
    "concatenate",
    "conv2d",
    "cos",
    "diagonal",
    "divide",
    "erf",
    "exp",
    "gelu",
    "getitem",
    "grad",
    "gru",
    "hessian",
    "hvp",
    "is_grad_enabled",
    "jacobian",
    "leaky_relu",
    "log",
    "log_softmax",
    "logdet",
    "logsumexp",
    "lstm",
    "matmul",
    "max",
    "max_pool2d",
    "mean",
    "multiply",
    "negative",
    "no_grad",
    "numerical_grad",
    "power",
    "relu",
    "reshape",
    "rnn",
    "sigmoid",
    "sin",
    "softmax",
    "softplus",
    "solve",
    "solve_triangular",
    "sqrt",
    "stack",
    "subtract",
    "sum",
    "tanh",
    "transpose",
    "tree_flatten",
    "tree_map",
    "tree_unflatten",
    "tree_vdot",
    "value_and_grad",
    "where",
]
