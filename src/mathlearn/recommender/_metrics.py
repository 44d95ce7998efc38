"""Accuracy of predicted ratings (RMSE, MAE) and of ranked lists (precision, recall, MAP, NDCG
at k)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np


def _pair(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(y_true, dtype=np.float64).ravel()
    p = np.asarray(y_pred, dtype=np.float64).ravel()
    if t.shape != p.shape:
        raise ValueError(f"y_true and y_pred have different lengths ({t.size} and {p.size}).")
    if t.size == 0:
        raise ValueError("y_true is empty.")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(p))):
        raise ValueError("y_true or y_pred contains NaN or infinity.")
    return t, p


def rmse(y_true, y_pred) -> float:
    """Root mean squared error, sqrt(mean((y - y_hat)^2)).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Observed and predicted ratings.

    Returns
    -------
    float

    Examples
    --------
    >>> from mathlearn.recommender import rmse
    >>> rmse([1.0, 3.0], [2.0, 3.0])
    0.7071067811865476
    """
    t, p = _pair(y_true, y_pred)
    return float(np.sqrt(np.mean((t - p) ** 2)))


def mae(y_true, y_pred) -> float:
    """Mean absolute error, ``mean(|y - y_hat|)``.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)
        Observed and predicted ratings.

    Returns
    -------
    float

    Examples
    --------
    >>> from mathlearn.recommender import mae
    >>> mae([1.0, 3.0], [2.0, 3.0])
    0.5
    """
    t, p = _pair(y_true, y_pred)
    return float(np.mean(np.abs(t - p)))


def _lists(recommended, relevant, k) -> list[tuple[list, set]]:
    if int(k) < 1:
        raise ValueError(f"k must be a positive integer; got {k}.")
    rec = list(recommended)
    rel = list(relevant)
    if len(rec) != len(rel):
        raise ValueError(
            f"recommended and relevant must have one entry per user ({len(rec)} and {len(rel)})."
        )
    pairs = [(list(r)[: int(k)], set(s)) for r, s in zip(rec, rel, strict=True) if len(s)]
    if not pairs:
        raise ValueError("No user has a relevant item: the ranking metrics are undefined.")
    return pairs


def precision_at_k(
    recommended: Iterable[Sequence], relevant: Iterable[Iterable], k: int = 10
) -> float:
    """Precision at k: the fraction of the top k recommendations that are relevant.

    Averaged over the users with at least one relevant item; a list shorter than ``k`` still
    divides by ``k``.

    Parameters
    ----------
    recommended : sequence of sequences
        Each user's ranked recommendations (item ids), best first.
    relevant : sequence of sets
        Each user's relevant (held-out) items.
    k : int, default=10
        Cut-off.

    Returns
    -------
    float

    Examples
    --------
    >>> from mathlearn.recommender import precision_at_k
    >>> precision_at_k([["a", "b", "c"]], [{"b", "z"}], k=2)
    0.5
    """
    pairs = _lists(recommended, relevant, k)
    return float(np.mean([sum(i in s for i in r) / k for r, s in pairs]))


def recall_at_k(
    recommended: Iterable[Sequence], relevant: Iterable[Iterable], k: int = 10
) -> float:
    """Recall at k: the fraction of a user's relevant items found in the top k.

    Parameters
    ----------
    recommended : sequence of sequences
        Each user's ranked recommendations, best first.
    relevant : sequence of sets
        Each user's relevant items (users with none are skipped).
    k : int, default=10
        Cut-off.

    Returns
    -------
    float

    Examples
    --------
    >>> from mathlearn.recommender import recall_at_k
    >>> recall_at_k([["a", "b", "c"]], [{"b", "z"}], k=2)
    0.5
    """
    pairs = _lists(recommended, relevant, k)
    return float(np.mean([sum(i in s for i in r) / len(s) for r, s in pairs]))


def map_at_k(recommended: Iterable[Sequence], relevant: Iterable[Iterable], k: int = 10) -> float:
    """Mean average precision at k.

    ``AP@k = (1 / min(k, |relevant|)) sum_{r <= k} P@r * rel_r``, with rel_r = 1 when the item at
    rank r is relevant; MAP@k is its mean over users with a relevant item.

    Parameters
    ----------
    recommended : sequence of sequences
        Each user's ranked recommendations, best first.
    relevant : sequence of sets
        Each user's relevant items.
    k : int, default=10
        Cut-off.

    Returns
    -------
    float

    Examples
    --------
    >>> from mathlearn.recommender import map_at_k
    >>> map_at_k([["a", "b", "c"]], [{"a", "c"}], k=3)  # (1/1 + 2/3) / 2
    0.8333333333333333
    """
    pairs = _lists(recommended, relevant, k)
    scores = []
    for r, s in pairs:
        hits, total = 0, 0.0
        for rank, item in enumerate(r, start=1):
            if item in s:
                hits += 1
                total += hits / rank
        scores.append(total / min(k, len(s)))
    return float(np.mean(scores))


def ndcg_at_k(recommended: Iterable[Sequence], relevant: Iterable[Iterable], k: int = 10) -> float:
    """Normalised discounted cumulative gain at k, with binary relevance.

    DCG@k = sum_{r <= k} rel_r / log2(r + 1), divided by the ideal DCG (all relevant items
    ranked first, ``min(k, |relevant|)`` of them); averaged over users with a relevant item.

    Parameters
    ----------
    recommended : sequence of sequences
        Each user's ranked recommendations, best first.
    relevant : sequence of sets
        Each user's relevant items.
    k : int, default=10
        Cut-off.

    Returns
    -------
    float

    Examples
    --------
    >>> from mathlearn.recommender import ndcg_at_k
    >>> round(ndcg_at_k([["a", "b"]], [{"b"}], k=2), 6)  # (1 / log2 3) / 1
    0.63093
    """
    pairs = _lists(recommended, relevant, k)
    discount = 1.0 / np.log2(np.arange(2, int(k) + 2))
    scores = []
    for r, s in pairs:
        gains = np.array([item in s for item in r], dtype=float)
        dcg = float(gains @ discount[: gains.size])
        scores.append(dcg / float(discount[: min(int(k), len(s))].sum()))
    return float(np.mean(scores))
