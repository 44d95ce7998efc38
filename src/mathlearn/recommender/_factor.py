"""Shared pieces of the matrix-factorisation models: both orientations of the rating
pattern, and predictions from factors and biases."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._base import RecommenderBase
from ._ratings import Ratings


def _order(
    major: np.ndarray, minor: np.ndarray, n_major: int, n_minor: int
) -> tuple[np.ndarray, bool]:
    """The permutation sorting by (major, minor), stably, and whether it is the identity:
    it is for data already in that order (as the containers built from a sparse matrix or a
    generator usually are); else two radix sorts (by minor, then by major) when both index
    ranges fit 16 bits, else one sort of a combined integer key, lexsort where that key
    could overflow."""
    step_major, step_minor = np.diff(major), np.diff(minor)
    if np.all((step_major > 0) | ((step_major == 0) & (step_minor >= 0))):
        return np.arange(major.size), True
    if n_major <= 1 << 16 and n_minor <= 1 << 16:
        p = np.argsort(minor.astype(np.uint16), kind="stable")
        return p[np.argsort(major[p].astype(np.uint16), kind="stable")], False
    if n_major * max(n_minor, 1) < 2**62:
        return np.argsort(major.astype(np.int64) * n_minor + minor, kind="stable"), False
    return np.lexsort((minor, major)), False


class Pattern:
    """The ratings in user-major and item-major CSR order, with the permutations that map a
    per-rating array (in the container's order) into each (``perm_i`` formed on first use).

    The item-major arrays come from one counting-sort pass over the user-major ones
    (SciPy's CSR-to-CSC conversion, which keeps the users in order within each item: the
    stable sort by item of the user-major order)."""

    def __init__(self, ratings: Ratings) -> None:
        n_users, n_items = ratings.shape
        self.users, self.items, self.values = ratings.users, ratings.items, ratings.values
        self.perm_u, identity = _order(ratings.users, ratings.items, n_users, n_items)
        # No gathers for data already in user-major order.
        values_u = ratings.values if identity else ratings.values[self.perm_u]
        items_u = ratings.items if identity else ratings.items[self.perm_u]
        indptr_u = np.r_[0, np.cumsum(np.bincount(ratings.users, minlength=n_users))]
        self.R = sp.csr_array((values_u, items_u, indptr_u), shape=(n_users, n_items))
        csc = self.R.tocsc()
        # 64-bit indices throughout (SciPy narrows them where they fit 32 bits).
        self.Rt = sp.csr_array(
            (csc.data, csc.indices.astype(np.int64), csc.indptr.astype(np.int64)),
            shape=(n_items, n_users),
        )
        self.n_user = np.diff(indptr_u).astype(float)
        self.n_item = np.diff(self.Rt.indptr).astype(float)
        self._perm_i: np.ndarray | None = None

    @property
    def perm_i(self) -> np.ndarray:
        """The container's indices of the ratings in item-major order."""
        if self._perm_i is None:
            by_user = sp.csr_array((self.perm_u, self.R.indices, self.R.indptr), self.R.shape)
            self._perm_i = by_user.tocsc().data
        return self._perm_i


def pair_dots(P: np.ndarray, Q: np.ndarray, u: np.ndarray, i: np.ndarray) -> np.ndarray:
    """``P[u[t]] . Q[i[t]]`` for every t, in chunks whose temporaries stay near 2 MB (large
    fresh arrays cost page faults: ten times slower on a loaded machine)."""
    out = np.empty(u.size)
    step = max((1 << 18) // max(P.shape[1], 1), 1)
    for s in range(0, u.size, step):
        out[s : s + step] = np.einsum(
            "nk,nk->n", P[u[s : s + step]], Q[i[s : s + step]], optimize=False
        )
    return out


class FactorModel(RecommenderBase):
    """Predictions ``mu + b_u + c_i + p_u^T q_i`` from ``user_factors_``, ``item_factors_``,
    ``user_bias_``, ``item_bias_`` and ``offset_`` (mu; 0 for models without it)."""

    def _finish(self) -> None:
        # Unknown-id fallback: the learned biases where the model has them.
        if getattr(self, "_has_biases", False):
            self._fallback_user = self.user_bias_ + self.offset_ - self.global_mean_
            self._fallback_item = self.item_bias_ + self.offset_ - self.global_mean_

    def _predict_known(self, u: np.ndarray, i: np.ndarray) -> np.ndarray:
        return (
            self.offset_
            + self.user_bias_[u]
            + self.item_bias_[i]
            + pair_dots(self.user_factors_, self.item_factors_, u, i)
        )

    def _score_user(self, u: int) -> np.ndarray:
        return (
            self.offset_
            + self.user_bias_[u]
            + self.item_bias_
            + self.item_factors_ @ self.user_factors_[u]
        )

    def _item_vectors(self) -> np.ndarray:
        return self.item_factors_
