"""User- and item-based collaborative filtering with Pearson, cosine or adjusted-cosine
similarity over co-rated entries."""

from __future__ import annotations

import ctypes
import itertools
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .. import _ext
from ..base import _fit_context
from ..utils._param_validation import Interval, StrOptions
from ._base import RecommenderBase
from ._factor import Pattern


class _Rows(NamedTuple):
    """A CSR pattern's arrays (column indices sorted within each row), with the addresses of
    the three arrays where known (:meth:`Pattern.address`; None: formed when needed)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    shape: tuple[int, int]
    addresses: tuple[int, int, int] | None = None

    @classmethod
    def of_pattern(cls, p: Pattern, by_item: bool) -> _Rows:
        """The item-major (``by_item``) or user-major order of a :class:`Pattern`."""
        names = (
            ("indptr_i", "users_i", "values_i") if by_item else ("indptr_u", "items_u", "values_u")
        )
        shape = p.shape[::-1] if by_item else p.shape
        indptr, indices, data = (getattr(p, name) for name in names)
        if not p.addresses:
            return cls(indptr, indices, data, shape)
        a, b, c = (p.address(name) for name in names)
        return cls(indptr, indices, data, shape, (a, b, c))

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    @classmethod
    def of(cls, A) -> _Rows:
        """The rows of a SciPy sparse matrix (converted to CSR, indices sorted)."""
        A = sp.csr_array(A)
        A.sort_indices()
        return cls(A.indptr, A.indices, A.data, A.shape)


def _row_means(A: _Rows) -> np.ndarray:
    """Each row's mean over its entries (0 for a row without any)."""
    counts = np.diff(A.indptr)
    if not A.nnz:
        return np.zeros(A.shape[0])
    # (reduceat gives an empty row the next row's first value: masked by the division)
    sums = np.add.reduceat(A.data, A.indptr[:-1])
    return np.divide(sums, counts, out=np.zeros(A.shape[0]), where=counts > 0)


# Rows (users or items) up to which the dense route's n x n sums may be formed (32 MiB each).
_DENSE_MAX_ROWS = 2048


def _dense_pays(A: sp.csr_array, compiled: bool = False) -> bool:
    """Whether BLAS products of dense column blocks beat the pairs' loop for the pair sums.

    The pairs' loop costs about ``S = sum_j m_j^2`` updates (``m_j`` entries in column j):
    tens of nanoseconds each in sparse products (index arithmetic, scattered writes, then a
    search for every pair), about 2 ns in the compiled loop (``compiled``). The dense
    products cost ``n^2 m`` multiply-adds at a fraction of a nanosecond, plus NumPy passes
    over the entries and the n x n sums (scatters, sorts, gathers) at tens of nanoseconds a
    number. Dense is taken, with at most 2 048 rows, when ``n^2 m < 50 S`` against sparse
    products and when ``n^2 m + 100 (nnz + n^2) < 9 S`` against the compiled loop (on this
    project's sweep, half-full rating matrices of 11 to 201 rows: the compiled loop up to
    1e4 ratings, dense from 3e4)."""
    n, m = A.shape
    nnz = A.nnz
    if n > _DENSE_MAX_ROWS or nnz == 0:
        return False
    dense = float(n) * n * m
    if compiled and dense + 100.0 * (nnz + float(n) * n) >= 9.0 * nnz * n:
        return False  # S <= nnz n (no column has more than n entries): no count needed
    per_col = np.bincount(A.indices, minlength=m).astype(np.float64)
    S = float(per_col @ per_col)
    if compiled:
        return dense + 100.0 * (nnz + float(n) * n) < 9.0 * S
    return dense < 50.0 * S


def _pair_sums_dense(A: sp.csr_array, rows: np.ndarray, dev: np.ndarray):
    """The co-observed pairs ``(r, c)`` (row-major, diagonal left out) with their counts,
    ``sum d_r d_c``, ``sum_{co-observed} d_r^2`` and ``sum_{co-observed} d_c^2``, accumulated
    over dense blocks of columns (at most 2 MiB each) by BLAS products."""
    n, m = A.shape
    width = max(1, min(m, (1 << 18) // n))
    by_col = np.argsort(A.indices, kind="stable")
    cols, rws, dv = A.indices[by_col], rows[by_col], dev[by_col]
    edges = np.searchsorted(cols, np.arange(0, m + width, width))
    num = np.zeros((n, n))
    S = np.zeros((n, n))  # S[a, b] = sum over columns both observe of d_a^2
    C = np.zeros((n, n))
    for j0, lo, hi in zip(range(0, m, width), edges[:-1], edges[1:], strict=False):
        if lo == hi:
            continue
        w = min(width, m - j0)
        D = np.zeros((n, w))
        E = np.zeros((n, w))
        D[rws[lo:hi], cols[lo:hi] - j0] = dv[lo:hi]
        E[rws[lo:hi], cols[lo:hi] - j0] = 1.0
        num += D @ D.T
        D *= D
        S += D @ E.T
        C += E @ E.T
    np.fill_diagonal(C, 0.0)
    r, c = np.nonzero(C)
    return r, c, C[r, c], num[r, c], S[r, c], S[c, r]


def _compiled_similarities():
    """The compiled pairs' loop (``_knn.c``: ``knn_pair_counts``, ``knn_similarities``),
    typed, or None."""
    lib = _ext.load("_knn")
    if lib is None:
        return None
    counts, sims = lib.knn_pair_counts, lib.knn_similarities
    if sims.argtypes is None:
        i64, ptr = ctypes.c_int64, ctypes.c_void_p
        counts.restype = i64
        counts.argtypes = [i64] + [ptr] * 6
        sims.restype = i64
        sims.argtypes = [i64] + [ptr] * 6 + [ctypes.c_double] + [ptr] * 6
    return counts, sims


def _similarities_compiled(fns, A: _Rows, dev, At: _Rows, dev_t, shrinkage: float):
    """The similarity matrix by the compiled pairs' loop (see ``_knn.c``): A's rows with their
    deviations ``dev``, and the same entries in column-major order (``At``, whose rows are
    A's columns, and ``dev_t``). Addresses known from the pattern are used as they are
    (``.ctypes.data`` costs about a microsecond a call: a tenth of the whole fit on a
    hundred ratings)."""
    counts_fn, sims_fn = fns
    n = A.shape[0]

    def addresses(rows: _Rows, dev) -> list[int]:
        if rows.addresses is None or rows.indptr.dtype != np.int64:
            # 64-bit offsets, 32-bit indices (a pattern's own; SciPy's, when they fit)
            arrays: list[np.ndarray] = [
                np.ascontiguousarray(rows.indptr, dtype=np.int64),
                np.ascontiguousarray(rows.indices, dtype=np.int32),
            ]
            out = [a.ctypes.data for a in arrays]
            keep.extend(arrays)
        else:
            out = list(rows.addresses[:2])
        if dev is rows.data and rows.addresses is not None:
            out.append(rows.addresses[2])
        else:
            dev = np.ascontiguousarray(dev, dtype=np.float64)
            keep.append(dev)
            out.append(dev.ctypes.data)
        return out

    keep: list[np.ndarray] = []  # converted inputs, alive through the calls
    ip_r, col_r, dev_r = addresses(A, dev)
    ip_c, row_c, dev_c = addresses(At, dev_t)
    # One buffer of integers: the output's indptr, the partner counts, then marks and one
    # row's partners (scratch).
    ints = np.empty(4 * n + 1, dtype=np.int64)
    base = ints.ctypes.data
    total = counts_fn(n, ip_r, col_r, ip_c, row_c, base + 8 * (n + 1), base + 8 * (2 * n + 1))
    indices, data, acc = np.empty(total, dtype=np.int64), np.empty(total), np.empty(4 * n)
    stored = sims_fn(n, ip_r, col_r, dev_r, ip_c, row_c, dev_c, float(shrinkage), base,
                     indices.ctypes.data, data.ctypes.data, base + 8 * (2 * n + 1),
                     base + 8 * (3 * n + 1), acc.ctypes.data)  # fmt: skip
    if stored < total:
        indices, data = indices[:stored].copy(), data[:stored].copy()
    return _CSRParts(data, indices, ints[: n + 1], (n, n))


class _CSRParts(NamedTuple):
    """A CSR matrix's arrays, as the compiled route writes them (indices sorted within each
    row); :meth:`csr` makes the SciPy array (its checks cost about ten microseconds: a sixth
    of a whole fit on a hundred ratings, so a fit keeps the parts until they are asked for)."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    shape: tuple[int, int]

    def csr(self) -> sp.csr_array:
        S = sp.csr_array((self.data, self.indices, self.indptr), shape=self.shape, copy=False)
        S.has_sorted_indices = True
        return S


def _values_at(M, r: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Entries ``M[r, c]`` of a sparse product, 0 where it stores none (a sum that cancelled):
    the keys ``row * n + col`` of both, sorted, are matched by a binary search."""
    M = sp.coo_array(M)
    n = M.shape[1]
    keys = M.row.astype(np.int64) * n + M.col
    order = np.argsort(keys, kind="stable")
    keys, vals = keys[order], M.data[order]
    want = r.astype(np.int64) * n + c
    pos = np.minimum(np.searchsorted(keys, want), max(keys.size - 1, 0))
    out = np.zeros(want.size)
    if keys.size:
        hit = keys[pos] == want
        out[hit] = vals[pos[hit]]
    return out


def similarity_matrix(
    A,
    kind: str,
    shrinkage: float,
    col_means: np.ndarray | None = None,
    At: _Rows | None = None,
) -> tuple[sp.csr_array, np.ndarray]:
    """Similarities between the rows of A over their co-observed columns (see
    :func:`_similarities`), as a SciPy CSR array, and the row means."""
    S, means = _similarities(A, kind, shrinkage, col_means, At)
    return (S.csr() if isinstance(S, _CSRParts) else S), means


def _similarities(
    A,
    kind: str,
    shrinkage: float,
    col_means: np.ndarray | None = None,
    At: _Rows | None = None,
) -> tuple[sp.csr_array | _CSRParts, np.ndarray]:
    """Similarities between the rows of A over their co-observed columns.

    ``kappa_ab = sum_{o in I_ab} d_ao d_bo / sqrt(sum_{I_ab} d_ao^2 sum_{I_ab} d_bo^2)`` with
    d the ratings centred by the row means over all the row's entries (Pearson, (6.9)), by
    the column means (adjusted cosine) or not at all (cosine). Pairs with no co-observed
    column, or a zero denominator (0/0: undefined), are not stored; the diagonal is not
    stored. Returns the CSR similarity matrix (explicit zeros kept; as :class:`_CSRParts`
    from the compiled route) and the row means.

    ``A`` is a SciPy sparse matrix or a :class:`_Rows`; ``col_means``, the column means
    where the caller has them (adjusted cosine), else formed from ``A``; ``At``, the same
    entries in column-major order (the rows of A's transpose, rows ascending within each),
    where the caller has them, else formed from ``A`` where needed.

    Three routes give the pair sums: the compiled pairs' loop (``mathlearn._ext._knn``,
    ``O(sum_o m_o^2)`` for ``m_o`` rows observing column o), BLAS products of dense column
    blocks where their ``n^2 m`` count is smaller (:func:`_dense_pays`), and, without the
    compiled helper, sparse products.
    """
    A = A if isinstance(A, _Rows) else _Rows.of(A)
    means = _row_means(A)
    fns = _compiled_similarities()
    if kind == "adjusted_cosine" and col_means is None:
        if At is None:
            At = _Rows.of(sp.csr_array((A.data, A.indices, A.indptr), shape=A.shape).T)
        col_means = _row_means(At)
    col_means = np.asarray(col_means) if kind == "adjusted_cosine" else np.zeros(0)
    if kind == "pearson":
        dev = A.data - np.repeat(means, np.diff(A.indptr))
    elif kind == "adjusted_cosine":
        dev = A.data - col_means[A.indices]
    else:
        dev = A.data if A.data.dtype == np.float64 else A.data.astype(float)
    if fns is not None and not _dense_pays(A, compiled=True):
        if At is None:
            At = _Rows.of(sp.csr_array((A.data, A.indices, A.indptr), shape=A.shape).T)
        # The same deviations in column-major order (the same subtraction for each entry).
        if kind == "pearson":
            dev_t = At.data - means[At.indices]
        elif kind == "adjusted_cosine":
            dev_t = At.data - np.repeat(col_means, np.diff(At.indptr))
        else:
            dev_t = At.data
        return _similarities_compiled(fns, A, dev, At, dev_t, shrinkage), means
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    if _dense_pays(A, compiled=fns is not None):
        r, c, n_common, num, S_rc, S_cr = _pair_sums_dense(A, rows, dev)
        den = np.sqrt(S_rc * S_cr)
    else:
        D = sp.csr_array((dev, A.indices, A.indptr), shape=A.shape)
        E = sp.csr_array((np.ones(A.nnz), A.indices, A.indptr), shape=A.shape)
        D2 = sp.csr_array((dev**2, A.indices, A.indptr), shape=A.shape)
        counts = sp.coo_array(E @ E.T)  # co-observed counts: the pattern of defined pairs
        r, c = counts.row, counts.col
        off = r != c
        r, c, n_common = r[off], c[off], counts.data[off]
        num = _values_at(D @ D.T, r, c)
        S = D2 @ E.T
        den = np.sqrt(_values_at(S, r, c) * _values_at(S, c, r))
    ok = den > 0
    sim = num[ok] / den[ok]
    # One co-observed column gives exactly +-1; set it so, so that ties (the notes' k = 1
    # example) do not depend on rounding.
    single = n_common[ok] == 1
    sim[single] = np.sign(num[ok][single])
    if shrinkage > 0:
        sim *= n_common[ok] / (n_common[ok] + shrinkage)
    n = A.shape[0]
    r, c = r[ok], c[ok]
    if r.size and np.all(np.diff(r * n + c) > 0):
        # pairs already in row-major order (the dense route's): the CSR arrays directly
        indptr = np.r_[0, np.cumsum(np.bincount(r, minlength=n))]
        return sp.csr_array((sim, c, indptr), shape=(n, n)), means
    K = sp.coo_array((sim, (r, c)), shape=(n, n)).tocsr()
    K.sort_indices()
    return K, means


def aggregate_top_k(target, s, d, nbr, k, n_targets):
    """Equation (6.10) for many targets at once: for each target keep the k entries with the
    largest similarity s (ties: smaller neighbour index first) and return
    ``sum s d`` and ``sum |s|`` over them."""
    order = np.lexsort((nbr, -s, target))
    t = target[order]
    if t.size:
        first = np.r_[True, t[1:] != t[:-1]]
        starts = np.flatnonzero(first)
        rank = np.arange(t.size) - np.repeat(starts, np.diff(np.r_[starts, t.size]))
        keep = order[rank < k]
    else:
        keep = order
    num = np.bincount(target[keep], weights=s[keep] * d[keep], minlength=n_targets)
    den = np.bincount(target[keep], weights=np.abs(s[keep]), minlength=n_targets)
    return num, den


_CONSTRAINTS = {
    "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    "similarity": [StrOptions({"pearson", "cosine", "adjusted_cosine"})],
    "shrinkage": [Interval(Real, 0, None, closed="left")],
}


class _KNNBase(RecommenderBase):
    _parameter_constraints = _CONSTRAINTS

    def __init__(
        self, n_neighbors: int = 40, *, similarity: str = "pearson", shrinkage: float = 0.0
    ) -> None:
        self.n_neighbors = n_neighbors
        self.similarity = similarity
        self.shrinkage = shrinkage

    @property
    def similarity_(self) -> sp.csr_array:
        """kappa for every pair with a defined value, as a CSR array (made from the fit's
        arrays on first use)."""
        S = self.__dict__.get("_similarity")
        if S is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute 'similarity_'")
        if isinstance(S, _CSRParts):
            S = self._similarity = S.csr()
        return S

    def _predict_known(self, u: np.ndarray, i: np.ndarray) -> np.ndarray:
        out = np.empty(u.size)
        order = np.argsort(u, kind="stable")
        us = u[order]
        bounds = np.flatnonzero(np.r_[True, us[1:] != us[:-1], True])
        for a, b in itertools.pairwise(bounds):
            scores = self._score_user(int(us[a]))
            out[order[a:b]] = scores[i[order[a:b]]]
        return out


class UserKNN(_KNNBase):
    """User-based collaborative filtering (UBCF) with a top-k neighbourhood.

    The prediction for user u and item i is (6.10) of the notes,

    ``r_hat_ui = rbar_u + sum_{v in N_k(u, i)} kappa_uv (r_vi - rbar_v) / sum |kappa_uv|``,

    where N_k(u, i) are the k users most similar to u **among those who rated i** whose
    similarity to u is defined, and rbar_v is the mean of all of v's ratings.

    Parameters
    ----------
    n_neighbors : int, default=40
        k.
    similarity : {"pearson", "cosine", "adjusted_cosine"}, default="pearson"
        kappa over the co-rated items I_uv: Pearson (6.9) with deviations from each user's
        mean over **all** their ratings; cosine of the raw ratings; adjusted cosine, the
        ratings centred by the item means.
    shrinkage : float, default=0.0
        Multiply kappa_uv by n_uv / (n_uv + shrinkage), ``n_uv = |I_uv|``, so that similarities
        resting on few co-rated items count less (0: the notes' plain similarity).

    Attributes
    ----------
    similarity_ : scipy.sparse.csr_array of shape (n_users, n_users)
        kappa for every pair with a defined value (at least one co-rated item and a nonzero
        denominator); undefined pairs (0 co-rated, or 0/0) and the diagonal are not stored.
    user_means_ : ndarray of shape (n_users,)
        rbar_u.
    global_mean_ : float
        Mean training rating.
    user_ids_, item_ids_ : ndarray
        The id maps.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §6.5, equations (6.9)-(6.10).
    Ties in kappa are broken by the neighbour's index in ``user_ids_`` (the smaller first);
    on the notes' toy table, k = 1 for (Alice, Happy Gilmore) ties Bob and Eve (kappa = 1
    both) and picks Bob, giving 2.0. When no neighbour with a defined similarity rated the
    item (or the kept similarities are all 0) the prediction is rbar_u. Unknown users get
    the global mean plus the item's mean offset, unknown items the user's mean.

    Complexity: with ``U`` users, ``I`` items, ``N`` observed ratings, ``m_i`` the ratings of
    item ``i`` and ``P`` the number of user pairs with a co-rated item
    (``P <= min(U^2, sum_i m_i^2)``), ``fit`` forms the pairs' co-rating counts, numerators
    and sums of squares in one compiled pass over the pairs (``mathlearn._ext._knn``: for
    each user, the users who rated each of its items, accumulated in a dense row),
    ``O(sum_i m_i^2)`` time and ``O(U + P)`` memory; without the compiled helper, by three
    sparse products, ``O(sum_i m_i^2)``, then a binary search for each pair's values over
    their sorted keys, ``O(P log P)``, memory ``O(N + P)``. Where the dense count is smaller
    (``U <= 2048``; the rule is in ``_knn._dense_pays``), the same sums come from BLAS
    products of dense blocks of item columns instead: ``O(U^2 I)`` time, ``O(U^2)`` memory.
    Scoring a user
    (``recommend``, and ``predict`` once per distinct user among its pairs) gathers the
    ratings of the user's neighbours, ``E = sum_v n_v`` entries over the users ``v`` with a
    defined similarity to it (``n_v`` the ratings of ``v``), and sorts them:
    ``O(E log E + I)`` time, ``O(E + I)`` memory. The first ``similar_items`` call computes
    the item-item similarities, at the cost of :class:`ItemKNN`'s ``fit``.

    See Also
    --------
    ItemKNN : the item-based counterpart.

    Examples
    --------
    >>> from mathlearn.datasets import load_toy_ratings
    >>> from mathlearn.recommender import UserKNN
    >>> model = UserKNN(n_neighbors=2).fit(load_toy_ratings())
    >>> model.predict(["Alice"], ["Happy Gilmore"]).round(6).tolist()
    [3.166667]
    """

    @_fit_context
    def fit(self, ratings, y=None) -> UserKNN:
        """Compute the user-user similarities.

        Parameters
        ----------
        ratings : Ratings, scipy.sparse matrix (users x items) or DataFrame
            Training ratings.
        y : None
            Ignored.

        Returns
        -------
        self : UserKNN
        """
        p = Pattern(self._setup(ratings))
        users, items = _Rows.of_pattern(p, by_item=False), _Rows.of_pattern(p, by_item=True)
        item_means = _row_means(items) if self.similarity == "adjusted_cosine" else None
        self._similarity, self.user_means_ = _similarities(
            users, self.similarity, float(self.shrinkage), item_means, At=items
        )
        self._fallback_user = self.user_means_ - self.global_mean_
        return self

    def _score_user(self, u: int) -> np.ndarray:
        K, R = self.similarity_, self._seen
        lo, hi = K.indptr[u], K.indptr[u + 1]
        nbrs, s = K.indices[lo:hi], K.data[lo:hi]
        sub = R[nbrs]
        nnz_each = np.diff(sub.indptr)
        owner = np.repeat(nbrs, nnz_each)
        num, den = aggregate_top_k(
            sub.indices, np.repeat(s, nnz_each), sub.data - self.user_means_[owner], owner,
            int(self.n_neighbors), self.n_items_,
        )  # fmt: skip
        out = np.full(self.n_items_, self.user_means_[u])
        ok = den > 0
        out[ok] += num[ok] / den[ok]
        return out

    def _item_similarity(self, i: int) -> np.ndarray:
        # Items compared by the same similarity over their co-rating users (computed once).
        if getattr(self, "_item_sim", None) is None:
            self._item_sim, _ = similarity_matrix(
                sp.csr_array(self._seen.T), self.similarity, float(self.shrinkage),
                At=_Rows.of(self._seen),
            )  # fmt: skip
        row = np.full(self.n_items_, -np.inf)
        K = self._item_sim
        row[K.indices[K.indptr[i] : K.indptr[i + 1]]] = K.data[K.indptr[i] : K.indptr[i + 1]]
        return row


class ItemKNN(_KNNBase):
    """Item-based collaborative filtering (IBCF) with a top-k neighbourhood.

    The notes' construction with the roles of users and items exchanged:

    ``r_hat_ui = rbar_i + sum_{j in N_k(i, u)} kappa_ij (r_uj - rbar_j) / sum |kappa_ij|``,

    N_k(i, u) the k items most similar to i among those u rated, rbar_j item j's mean rating.

    Parameters
    ----------
    n_neighbors : int, default=40
        k.
    similarity : {"pearson", "cosine", "adjusted_cosine"}, default="pearson"
        kappa over the users who rated both items: Pearson with deviations from each item's
        mean over all its ratings; cosine of the raw ratings; adjusted cosine (Sarwar et
        al.), the ratings centred by the users' means.
    shrinkage : float, default=0.0
        Multiply kappa_ij by n_ij / (n_ij + shrinkage), n_ij the number of co-rating users.

    Attributes
    ----------
    similarity_ : scipy.sparse.csr_array of shape (n_items, n_items)
        kappa where defined; the diagonal is not stored.
    item_means_ : ndarray of shape (n_items,)
        rbar_i.
    global_mean_ : float
        Mean training rating.
    user_ids_, item_ids_ : ndarray
        The id maps.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §6.5 ("IBCF works
    analogously"); B. Sarwar, G. Karypis, J. Konstan, J. Riedl, "Item-based collaborative
    filtering recommendation algorithms" (WWW 2001). Ties in kappa go to the smaller item
    index; with no usable neighbour the prediction is rbar_i. Unknown items get the global
    mean plus the user's mean offset, unknown users the item's mean.

    Complexity: with ``U`` users, ``I`` items, ``N`` observed ratings, ``n_u`` the ratings of
    user ``u`` and ``P`` the number of item pairs rated by a common user
    (``P <= min(I^2, sum_u n_u^2)``), ``fit`` forms the pairs' co-rating counts, numerators
    and sums of squares in one compiled pass over the pairs (``mathlearn._ext._knn``: for
    each item, the items rated by each of its users, accumulated in a dense row),
    ``O(sum_u n_u^2)`` time and ``O(I + P)`` memory; without the compiled helper, by three
    sparse products, ``O(sum_u n_u^2)``, then a binary search for each pair's values over
    their sorted keys, ``O(P log P)``, memory ``O(N + P)``. Where the dense count is smaller
    (``I <= 2048``; the rule is in ``_knn._dense_pays``), the same sums come from BLAS
    products of dense blocks of user columns instead: ``O(I^2 U)`` time, ``O(I^2)`` memory.
    Scoring a user
    (``recommend``, and ``predict`` once per distinct user among its pairs) gathers the
    similarity rows of the items ``j`` the user rated, ``E <= sum_j d_j`` entries, and sorts
    them: ``O(E log E + I)`` time, ``O(E + I)`` memory; ``similar_items`` costs ``O(I)``.

    See Also
    --------
    UserKNN : the user-based version.

    Examples
    --------
    >>> from mathlearn.datasets import load_toy_ratings
    >>> from mathlearn.recommender import ItemKNN
    >>> model = ItemKNN(n_neighbors=2, similarity="cosine").fit(load_toy_ratings())
    >>> items, sims = model.similar_items("The Matrix", n=3)
    >>> items.tolist(), sims.round(3).tolist()  # one co-rater each for the first two: 1
    (['Blade Runner', 'Click', 'Ex Machina'], [1.0, 1.0, 0.978])
    """

    @_fit_context
    def fit(self, ratings, y=None) -> ItemKNN:
        """Compute the item-item similarities.

        Parameters
        ----------
        ratings : Ratings, scipy.sparse matrix (users x items) or DataFrame
            Training ratings.
        y : None
            Ignored.

        Returns
        -------
        self : ItemKNN
        """
        p = Pattern(self._setup(ratings))
        users, items = _Rows.of_pattern(p, by_item=False), _Rows.of_pattern(p, by_item=True)
        user_means = _row_means(users) if self.similarity == "adjusted_cosine" else None
        self._similarity, self.item_means_ = _similarities(
            items, self.similarity, float(self.shrinkage), user_means, At=users
        )
        self._fallback_item = self.item_means_ - self.global_mean_
        return self

    def _score_user(self, u: int) -> np.ndarray:
        K, R = self.similarity_, self._seen
        lo, hi = R.indptr[u], R.indptr[u + 1]
        rated, r = R.indices[lo:hi], R.data[lo:hi]
        sub = K[rated]  # rows j (rated items); K is symmetric, so columns are targets i
        nnz_each = np.diff(sub.indptr)
        owner = np.repeat(rated, nnz_each)
        d = np.repeat(r - self.item_means_[rated], nnz_each)
        num, den = aggregate_top_k(
            sub.indices, sub.data, d, owner, int(self.n_neighbors), self.n_items_
        )
        out = self.item_means_.copy()
        ok = den > 0
        out[ok] += num[ok] / den[ok]
        return out

    def _item_similarity(self, i: int) -> np.ndarray:
        K = self.similarity_
        row = np.full(self.n_items_, -np.inf)
        row[K.indices[K.indptr[i] : K.indptr[i + 1]]] = K.data[K.indptr[i] : K.indptr[i + 1]]
        return row
