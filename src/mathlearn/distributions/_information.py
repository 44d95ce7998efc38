"""Entropy, cross-entropy, KL divergence and mutual information of discrete distributions.

Definitions of Stuttgart "Introduction to Machine Learning" (slides 9:42–9:43): :math:`H(p) =
E_p[-\\log p]`, cross-entropy :math:`\\sum p(-\\log q) \\ge H(p)`, :math:`D(p\\|q) = \\sum p
\\log(p/q) \\ge 0`. All in nats, with the convention :math:`0 \\log 0 = 0`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import xlogy

__all__ = ["cross_entropy", "entropy", "mutual_information"]


def _probs(p, name: str) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    if p.size == 0:
        raise ValueError(f"{name} is empty.")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise ValueError(f"{name} must be finite and non-negative.")
    if not np.allclose(p.sum(axis=-1), 1.0, atol=1e-8):
        raise ValueError(f"{name} must sum to one over its last axis.")
    return p


def entropy(p: ArrayLike) -> float | np.ndarray:
    r"""Shannon entropy :math:`H(p) = -\sum_k p_k \log p_k` (nats) over the last axis.

    Parameters
    ----------
    p : array-like of shape (..., K)
        Probabilities summing to one over the last axis.

    Returns
    -------
    float or ndarray of shape (...)

    Notes
    -----
    :math:`H(p) = E_p[-\log p]` (Stuttgart "Introduction to Machine Learning" slide 9:42), with
    :math:`0 \log 0 = 0`.

    Examples
    --------
    >>> from mathlearn.distributions import entropy
    >>> round(entropy([0.5, 0.5]), 6)
    0.693147
    """
    p = _probs(p, "p")
    h = -np.sum(xlogy(p, p), axis=-1)
    return float(h) if np.ndim(h) == 0 else h


def cross_entropy(p: ArrayLike, q: ArrayLike) -> float | np.ndarray:
    r"""Cross-entropy :math:`H(p, q) = -\sum_k p_k \log q_k` (nats); ``inf`` if ``q`` misses
    mass of ``p``.

    Parameters
    ----------
    p, q : array-like of shape (..., K)
        Probabilities summing to one over the last axis, with the same ``K``.

    Returns
    -------
    float or ndarray of shape (...)

    Notes
    -----
    Gibbs' inequality :math:`H(p, q) \ge H(p)`, with the gap :math:`D(p\|q)` (Stuttgart
    "Introduction to Machine Learning" slide 9:42–9:43).

    Examples
    --------
    >>> from mathlearn.distributions import cross_entropy, entropy
    >>> cross_entropy([0.5, 0.5], [0.5, 0.5]) == entropy([0.5, 0.5])
    True
    """
    p = _probs(p, "p")
    q = _probs(q, "q")
    if p.shape[-1] != q.shape[-1]:
        raise ValueError(
            f"p and q must have the same number of categories; got {p.shape[-1]} and "
            f"{q.shape[-1]}."
        )
    with np.errstate(divide="ignore"):
        h = -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, q, 1.0)), 0.0), axis=-1)
    return float(h) if np.ndim(h) == 0 else h


def mutual_information(joint: ArrayLike) -> float:
    r"""Mutual information :math:`I(X;Y) = \sum_{x,y} p(x,y)\log\frac{p(x,y)}{p(x)p(y)}`.

    Parameters
    ----------
    joint : array-like of shape (n_x, n_y)
        Joint probability table of two discrete variables (summing to one).

    Examples
    --------
    >>> from mathlearn.distributions import mutual_information
    >>> mutual_information([[0.25, 0.25], [0.25, 0.25]])
    0.0
    """
    p = np.asarray(joint, dtype=float)
    if p.ndim != 2:
        raise ValueError(f"joint must be a 2-D table; got shape {p.shape}.")
    if not np.all(np.isfinite(p)) or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError("joint must be non-negative and sum to one.")
    px = p.sum(1, keepdims=True)
    py = p.sum(0, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(p / (px * py)), 0.0)
    return float(max(terms.sum(), 0.0))
