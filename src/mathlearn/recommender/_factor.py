"""Shared pieces of the matrix-factorisation models: both orientations of the rating
pattern, and predictions from factors and biases."""

from __future__ import annotations

import ctypes

import numpy as np
import scipy.sparse as sp

from .. import _ext
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


def _compiled_orders():
    """The compiled counting sorts of :mod:`mathlearn._ext` (``_ratings.c``), typed, or None."""
    lib = _ext.load("_ratings")
    if lib is None:
        return None
    fn = lib.ratings_orders
    if fn.argtypes is None:
        fn.restype = None
        fn.argtypes = [ctypes.c_int64] * 3 + [ctypes.c_void_p] * 13
    return fn


def _compiled_user_major():
    """Whether a container is in user-major order, by one pass of ``_ratings.c``, typed."""
    fn = _ext.load("_ratings").ratings_user_major
    if fn.argtypes is None:
        fn.restype = ctypes.c_int64
        fn.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
    return fn


class Pattern:
    """The ratings in user-major and item-major CSR order, with the permutations that map a
    per-rating array (in the container's order) into each.

    Arrays: ``indptr_u``, ``items_u``, ``values_u`` (rows by user, items ascending within a
    user) and ``indptr_i``, ``users_i``, ``values_i`` (rows by item, users ascending within
    an item), the offsets ``indptr_*`` 64-bit, the indices 32-bit (as :class:`Ratings`
    holds them) and the values float64 (``values_i`` of ``item_values``: float32 for the
    single-precision sweeps of :class:`ImplicitALS`, which read no other copy of the
    item-major values); ``perm_u`` and ``perm_i`` (position p of each order holds the
    container's rating ``perm[p]``); ``n_user`` and ``n_item`` (ratings per user and per
    item, as floats); ``R`` and ``Rt``, the two orders as SciPy CSR arrays of shapes
    (n_users, n_items) and (n_items, n_users). These last four are formed on first use (the
    compiled routes read the arrays themselves, through :meth:`address`).

    The compiled helper forms both orders by three stable counting sorts in one pass each
    (by item, by user, by item again), or by one (by item) for a container already in
    user-major order, which then serves as that order itself (``items_u`` and ``values_u``
    are the container's arrays); without it, NumPy sorts by (user, item) (no sort for
    a container already in that order) and SciPy's CSR-to-CSC conversion, which keeps the
    users in order within each item, gives the item-major order. Both give the same arrays.
    """

    def __init__(self, ratings: Ratings, item_values=np.float64) -> None:
        n_users, n_items = self.shape = ratings.shape
        self.addresses: dict[str, int] = {}
        self._n_user: np.ndarray | None = None
        self._n_item: np.ndarray | None = None
        self.users, self.items, self.values = ratings.users, ratings.items, ratings.values
        n = self.values.size
        fn = _compiled_orders()
        if fn is not None:
            users, items = np.ascontiguousarray(self.users), np.ascontiguousarray(self.items)
            values = np.ascontiguousarray(self.values)
            # A container in user-major order (as the ones built by Ratings' constructors
            # are) is its own user-major form: only the item-major one is formed.
            a_users, a_items, a_values = users.ctypes.data, items.ctypes.data, values.ctypes.data
            user_major = bool(_compiled_user_major()(n, a_users, a_items))
            # The outputs as views of three buffers (one allocation and one address each:
            # offsets and permutations, then the sort's scratch (cursor); 32-bit indices;
            # values).
            wide_layout = [("indptr_u", n_users + 1), ("indptr_i", n_items + 1)]
            index_layout = [("users_i", n)]
            single = np.dtype(item_values) == np.float32
            float_layout = [] if single else [("values_i", n)]
            single_layout = [("values_i", n)] if single else []
            if user_major:
                self.items_u, self.values_u = items, values
                self._perm_u = self._perm_i = None
                self.addresses.update(items_u=a_items, values_u=a_values)
            else:
                wide_layout += [("perm_u", n), ("perm_i", n)]
                index_layout += [("items_u", n)]
                float_layout += [("values_u", n)]
            for layout, dtype in (
                (wide_layout, np.int64),
                (index_layout, np.int32),
                (float_layout, np.float64),
                (single_layout, np.float32),
            ):
                scratch = max(n_users, n_items, 1) if layout is wide_layout else 0
                buffer = np.empty(sum(m for _, m in layout) + scratch, dtype=dtype)
                start, address, size = 0, buffer.ctypes.data, buffer.itemsize
                for name, m in layout:
                    view = buffer[start : start + m]
                    setattr(self, f"_{name}" if name.startswith("perm") else name, view)
                    self.addresses[name] = address + size * start
                    start += m
                if scratch:
                    cursor = address + size * start
            names = ("indptr_u", "perm_u", "items_u", "indptr_i", "perm_i", "users_i")
            fn(n, n_users, n_items, a_users, a_items, a_values,
               *(None if user_major and name in ("perm_u", "items_u", "perm_i")
                 else self.addresses[name] for name in names),
               cursor, None if user_major else self.addresses["values_u"],
               None if single else self.addresses["values_i"],
               self.addresses["values_i"] if single else None)  # fmt: skip
        else:
            perm_u, identity = _order(self.users, self.items, n_users, n_items)
            self._perm_u = perm_u
            # No gathers for data already in user-major order.
            self.values_u = self.values if identity else self.values[perm_u]
            self.items_u = self.items if identity else self.items[perm_u]
            self.indptr_u = np.r_[0, np.cumsum(np.bincount(self.users, minlength=n_users))]
            by_user = sp.csr_array(
                (np.arange(n), self.items_u, self.indptr_u), shape=(n_users, n_items)
            )
            csc = by_user.tocsc()
            # the item-major position p holds user-major position csc.data[p]
            self._perm_i = perm_u[csc.data]
            self.values_i = self.values_u[csc.data].astype(item_values, copy=False)
            self.users_i = csc.indices.astype(np.int32)
            self.indptr_i = csc.indptr.astype(np.int64)
        self._R: sp.csr_array | None = None
        self._Rt: sp.csr_array | None = None

    def address(self, name: str) -> int:
        """The address of the array ``name`` (for the compiled helpers): remembered from the
        compiled route's buffers (``.ctypes.data`` costs about a microsecond a call)."""
        address = self.addresses.get(name)
        return getattr(self, name).ctypes.data if address is None else address

    @property
    def perm_u(self) -> np.ndarray:
        """Position p of the user-major order holds the container's rating ``perm_u[p]``
        (the identity, formed on first use, for a container in that order)."""
        if self._perm_u is None:
            self._perm_u = np.arange(self.values.size)
        return self._perm_u

    @property
    def perm_i(self) -> np.ndarray:
        """Position p of the item-major order holds the container's rating ``perm_i[p]``
        (formed on first use for a container in user-major order, by a stable sort of its
        items: the same order as the counting sort)."""
        if self._perm_i is None:
            self._perm_i = np.argsort(self.items, kind="stable")
        return self._perm_i

    @property
    def n_user(self) -> np.ndarray:
        """Ratings per user, as floats."""
        if self._n_user is None:
            self._n_user = np.diff(self.indptr_u).astype(float)
        return self._n_user

    @property
    def n_item(self) -> np.ndarray:
        """Ratings per item, as floats."""
        if self._n_item is None:
            self._n_item = np.diff(self.indptr_i).astype(float)
        return self._n_item

    @property
    def R(self) -> sp.csr_array:
        """The ratings in user-major order as a CSR array (n_users, n_items)."""
        if self._R is None:
            self._R = _csr(self.values_u, self.items_u, self.indptr_u, self.shape)
        return self._R

    @property
    def Rt(self) -> sp.csr_array:
        """The ratings in item-major order as a CSR array (n_items, n_users)."""
        if self._Rt is None:
            self._Rt = _csr(self.values_i, self.users_i, self.indptr_i, self.shape[::-1])
        return self._Rt


def _csr(data, indices, indptr, shape) -> sp.csr_array:
    return sp.csr_array((data, indices, indptr), shape=shape, copy=False)


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
