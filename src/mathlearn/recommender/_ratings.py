"""The ratings container (users x items, sparse) and its train/test splits."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..utils.validation import check_random_state

_AGGREGATIONS = ("error", "mean", "sum", "last")


def _id_map(ids: Sequence[Hashable]) -> tuple[np.ndarray, dict]:
    """Distinct ids in sorted order when they can be sorted, else in order of appearance."""
    distinct = list(dict.fromkeys(ids))
    try:
        distinct = sorted(distinct)  # type: ignore[type-var]
    except TypeError:
        pass
    arr = np.empty(len(distinct), dtype=object)
    arr[:] = distinct
    return arr, {key: k for k, key in enumerate(distinct)}


def _integer_codes(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct ids (sorted) and each entry's position among them, for a 1-D integer array.

    Ids that are small non-negative integers (at most a few times as many as there are
    entries, the usual 0 .. n - 1 numbering) go by a table of which values occur, in
    ``O(n + max)`` time and one table; others by :func:`numpy.unique`. Both give the order of
    :func:`sorted` on the same ids as Python integers.
    """
    if ids.size and ids.min() >= 0 and int(ids.max()) <= 4 * ids.size + 1024:
        present = np.zeros(int(ids.max()) + 1, dtype=bool)
        present[ids] = True
        distinct = np.flatnonzero(present)
        position = np.cumsum(present, dtype=np.int64)
        position -= 1
        codes = position[ids]
    else:
        distinct, codes = np.unique(ids, return_inverse=True)
        codes = codes.astype(np.int64, copy=False)
    arr = np.empty(distinct.size, dtype=object)
    arr[:] = distinct.tolist()
    return arr, codes


def _codes(ids, name: str) -> tuple[np.ndarray, np.ndarray, dict | None]:
    """The id map of a sequence of ids and each entry's row or column index (with the
    id -> index dictionary when it was formed on the way)."""
    if isinstance(ids, np.ndarray) and ids.ndim == 1 and ids.dtype.kind in "iu":
        distinct, codes = _integer_codes(ids)
        return distinct, codes, None
    values = _as_list(ids, name)
    distinct, index = _id_map(values)
    codes = np.fromiter((index[v] for v in values), dtype=np.int64, count=len(values))
    return distinct, codes, index


# The largest row or column index: 32-bit indices, as SciPy's sparse arrays and the
# compiled kernels use them (4 bytes a rating each instead of 8).
_INDEX_MAX = np.iinfo(np.int32).max


def _index_array(a) -> np.ndarray:
    """An index array as given when it holds integers (any width), else as 64-bit integers
    (the conversion NumPy makes of a list or of floats)."""
    a = np.asarray(a)
    return a if a.dtype.kind in "iu" else np.asarray(a, dtype=np.int64)


def _as_list(values, name: str) -> list:
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional; got shape {values.shape}.")
        return values.tolist()
    values = list(values)
    return values


class Ratings:
    """Explicit or implicit feedback as a sparse users x items matrix with id maps.

    Build one with :meth:`from_triples`, :meth:`from_sparse` or :meth:`from_dataframe`.
    Rows are always users and columns always items, whatever the source; user and item ids
    may be any hashable values and are mapped to row and column indices by ``user_ids`` and
    ``item_ids`` (sorted when the ids can be sorted, otherwise in order of first appearance).
    Only the observed entries are stored (``nnz`` of them, 16 bytes each: two 32-bit indices
    and the value): no dense users x items array is ever formed. A stored rating may be 0
    (an observed zero), which is distinct from a missing entry. The builders store the
    ratings in user-major order (by user, then item), which the models then use as it is;
    the constructor keeps the order given.

    Parameters
    ----------
    users : ndarray of shape (nnz,)
        Row (user) index of each rating (stored as 32-bit integers, as in SciPy's sparse
        arrays: at most 2**31 users and 2**31 items; widen them, ``astype(np.int64)``,
        before forming keys such as ``users * n_items + items``).
    items : ndarray of shape (nnz,)
        Column (item) index of each rating (32-bit, likewise).
    values : ndarray of shape (nnz,)
        The ratings (finite floats).
    user_ids : ndarray of shape (n_users,)
        The user id of each row.
    item_ids : ndarray of shape (n_items,)
        The item id of each column.
    timestamps : ndarray of shape (nnz,) or None, default=None
        When each rating was given (any orderable numbers), for :func:`temporal_split`.

    Attributes
    ----------
    shape : tuple of int
        ``(n_users, n_items)``.
    nnz : int
        Number of ratings.

    See Also
    --------
    mathlearn.recommender.ALS
        A model fitted to it.
    mathlearn.recommender.ImplicitALS
        Implicit feedback.

    Notes
    -----
    In the Oxford "Advanced Topics in Statistical Machine Learning" notes §6.1 the ratings
    matrix Y has movies as rows and users as columns, with exposure indicators
    e_ij = 1 where y_ij is observed; here the matrix is its transpose (users x items, the
    orientation of most software), and the exposure matrix is the sparsity pattern.

    Examples
    --------
    >>> from mathlearn.recommender import Ratings
    >>> r = Ratings.from_triples(["ann", "bob", "ann"], ["x", "y", "y"], [4.0, 2.0, 5.0])
    >>> r.shape, r.nnz
    ((2, 2), 3)
    >>> r.to_csr().toarray()
    array([[4., 5.],
           [0., 2.]])
    """

    def __init__(
        self,
        users: np.ndarray,
        items: np.ndarray,
        values: np.ndarray,
        user_ids: np.ndarray,
        item_ids: np.ndarray,
        timestamps: np.ndarray | None = None,
    ) -> None:
        self.user_ids = np.asarray(user_ids, dtype=object)
        self.item_ids = np.asarray(item_ids, dtype=object)
        if max(len(self.user_ids), len(self.item_ids)) > _INDEX_MAX + 1:
            raise ValueError(
                f"At most {_INDEX_MAX + 1} users and {_INDEX_MAX + 1} items (32-bit row and "
                f"column indices); got {len(self.user_ids)} users and {len(self.item_ids)} "
                "items."
            )
        users, items = (_index_array(a) for a in (users, items))
        self.values = np.asarray(values, dtype=np.float64)
        self.timestamps = None if timestamps is None else np.asarray(timestamps)
        n = self.values.shape[0]
        if not (users.shape == items.shape == self.values.shape == (n,)):
            raise ValueError("users, items and values must be 1-D arrays of one length.")
        if self.timestamps is not None and self.timestamps.shape != (n,):
            raise ValueError("timestamps must have one entry per rating.")
        if not np.all(np.isfinite(self.values)):
            raise ValueError(
                "Ratings contain NaN or infinity; remove the missing ratings instead of "
                "storing NaN (a missing rating is simply an absent triple)."
            )
        if n and (
            users.min() < 0
            or items.min() < 0
            or users.max() >= len(self.user_ids)
            or items.max() >= len(self.item_ids)
        ):
            raise ValueError("A user or item index is outside its id map.")
        # (in range, so 32 bits hold them: a copy only for wider integers)
        self.users = users.astype(np.int32, copy=False)
        self.items = items.astype(np.int32, copy=False)
        self._user_index: dict | None = None
        self._item_index: dict | None = None

    @property
    def shape(self) -> tuple[int, int]:
        """``(n_users, n_items)``."""
        return (len(self.user_ids), len(self.item_ids))

    @property
    def nnz(self) -> int:
        """Number of stored ratings."""
        return int(self.values.shape[0])

    @property
    def user_index(self) -> dict:
        """Map from user id to row index."""
        if self._user_index is None:
            self._user_index = {key: k for k, key in enumerate(self.user_ids.tolist())}
        return self._user_index

    @property
    def item_index(self) -> dict:
        """Map from item id to column index."""
        if self._item_index is None:
            self._item_index = {key: k for k, key in enumerate(self.item_ids.tolist())}
        return self._item_index

    def __repr__(self) -> str:
        return f"Ratings(n_users={self.shape[0]}, n_items={self.shape[1]}, nnz={self.nnz})"

    @classmethod
    def from_triples(
        cls,
        users: Sequence[Hashable],
        items: Sequence[Hashable],
        ratings: Sequence[float] | None = None,
        timestamps: Sequence[Any] | None = None,
        *,
        duplicates: str = "error",
    ) -> Ratings:
        """Build from parallel sequences of user ids, item ids and ratings.

        Parameters
        ----------
        users, items : sequence of hashable
            The user and the item of each rating. Integer NumPy arrays are mapped to rows
            and columns by array operations (no Python object per rating); other sequences
            through a dictionary of their distinct ids.
        ratings : sequence of float or None, default=None
            The ratings; ``None`` means implicit feedback, every pair counted once.
        timestamps : sequence or None, default=None
            When each rating was given.
        duplicates : {"error", "mean", "sum", "last"}, default="error"
            What a repeated (user, item) pair does: raise, average the ratings, add them
            (counts of implicit interactions), or keep the last one given (in the order of the
            sequences). The timestamp kept for an aggregated pair is the latest.

        Returns
        -------
        Ratings

        Examples
        --------
        >>> from mathlearn.recommender import Ratings
        >>> r = Ratings.from_triples([1, 1], ["a", "a"], [2.0, 4.0], duplicates="mean")
        >>> r.values
        array([3.])
        """
        if duplicates not in _AGGREGATIONS:
            raise ValueError(f"duplicates must be one of {_AGGREGATIONS}; got {duplicates!r}.")
        user_ids, rows, user_index = _codes(users, "users")
        item_ids, cols, item_index = _codes(items, "items")
        n = rows.shape[0]
        if n != cols.shape[0]:
            raise ValueError(f"users and items have different lengths ({n} and {cols.shape[0]}).")
        if ratings is None:
            vals = np.ones(n)
        else:
            if isinstance(ratings, np.ndarray) and ratings.ndim != 1:
                raise ValueError(f"ratings must be one-dimensional; got shape {ratings.shape}.")
            vals = np.asarray(
                ratings if isinstance(ratings, np.ndarray) else list(ratings), dtype=np.float64
            )
            if vals.shape != (n,):
                raise ValueError(
                    f"ratings has {vals.shape[0]} entries for {n} (user, item) pairs."
                )
        ts = None if timestamps is None else np.asarray(_as_list(timestamps, "timestamps"))
        if ts is not None and ts.shape != (n,):
            raise ValueError("timestamps must have one entry per rating.")
        if not np.all(np.isfinite(vals)):
            raise ValueError(
                "Ratings contain NaN or infinity; drop the missing ratings instead of storing NaN."
            )
        out = cls._from_codes(rows, cols, vals, user_ids, item_ids, ts, duplicates)
        out._user_index, out._item_index = user_index, item_index
        return out

    @classmethod
    def _from_codes(cls, rows, cols, vals, user_ids, item_ids, ts, duplicates) -> Ratings:
        """The container from each rating's row and column, sorted by user then item, with
        repeated cells raised or aggregated as ``duplicates`` says.

        ``rows`` and ``cols`` are the caller's scratch (fresh 64-bit integer arrays): their
        buffers take the cells' keys ``row * n_items + column`` and the sorted keys, and,
        without repeated cells, the first one then takes the sorted values; the 32-bit rows
        and columns are split off the sorted keys. The sort holds three arrays of 8 bytes a
        rating (the keys, the sorted keys and the order); the end holds two (the sorted keys
        and values) and the container's indices, 8 bytes a rating.
        """
        n_items = max(len(item_ids), 1)
        key = rows
        key *= n_items
        key += cols
        order = np.argsort(key, kind="stable")
        key_sorted = np.take(key, order, out=cols)
        first = np.ones(key_sorted.shape[0], dtype=bool)
        first[1:] = key_sorted[1:] != key_sorted[:-1]
        if not np.all(first):
            if duplicates == "error":
                row, col = divmod(int(key_sorted[np.flatnonzero(~first)[0]]), n_items)
                raise ValueError(
                    f"Duplicate rating for user {user_ids[row]!r} and item "
                    f"{item_ids[col]!r}; pass duplicates='mean', 'sum' or 'last' to "
                    "aggregate repeated pairs."
                )
            group = np.cumsum(first) - 1
            starts = np.flatnonzero(first)
            v_sorted = vals[order]
            if duplicates == "last":
                ends = np.r_[starts[1:], key_sorted.shape[0]] - 1
                vals = v_sorted[ends]
            else:
                sums = np.bincount(group, weights=v_sorted)
                vals = sums / np.bincount(group) if duplicates == "mean" else sums
            if ts is not None:
                ts_sorted = ts[order]
                ts = np.maximum.reduceat(ts_sorted, starts) if ts_sorted.size else ts_sorted
            key_sorted = key_sorted[starts]
        else:
            # (the keys are no longer needed: their buffer takes the sorted values)
            vals = np.take(vals, order, out=key.view(np.float64))
            ts = None if ts is None else ts[order]
        del order, first, key, rows, cols
        # Written as 32-bit integers through NumPy's cast buffers (no 64-bit temporary of the
        # ratings' length); more than 2**31 ids is refused by the constructor before the
        # indices are read.
        users = np.floor_divide(key_sorted, n_items, out=np.empty(key_sorted.shape, np.int32),
                                casting="unsafe")  # fmt: skip
        items = np.remainder(key_sorted, n_items, out=np.empty(key_sorted.shape, np.int32),
                             casting="unsafe")  # fmt: skip
        del key_sorted
        return cls(users, items, vals, user_ids, item_ids, ts)

    @classmethod
    def from_sparse(
        cls,
        matrix,
        user_ids: Sequence[Hashable] | None = None,
        item_ids: Sequence[Hashable] | None = None,
    ) -> Ratings:
        """Build from a SciPy sparse users x items matrix; its stored entries are the ratings.

        Parameters
        ----------
        matrix : scipy.sparse matrix or array of shape (n_users, n_items)
            Rows are users, columns items. Explicitly stored zeros count as ratings of 0;
            duplicate COO entries are an error.
        user_ids, item_ids : sequence of hashable or None, default=None
            Ids of the rows and columns (default ``0 .. n - 1``), kept in the order given.

        Returns
        -------
        Ratings

        Examples
        --------
        >>> import scipy.sparse as sp
        >>> from mathlearn.recommender import Ratings
        >>> Ratings.from_sparse(sp.csr_array([[0.0, 3.0], [1.0, 0.0]])).nnz
        2
        """
        if not sp.issparse(matrix):
            raise TypeError(
                "from_sparse expects a scipy.sparse matrix (users x items); use "
                "from_triples for lists of ratings."
            )
        coo = sp.coo_array(matrix)
        n_users, n_items = coo.shape
        uids = np.arange(n_users) if user_ids is None else _as_list(user_ids, "user_ids")
        iids = np.arange(n_items) if item_ids is None else _as_list(item_ids, "item_ids")
        if len(uids) != n_users or len(iids) != n_items:
            raise ValueError(
                f"Got {len(uids)} user ids and {len(iids)} item ids for a matrix of shape "
                f"{coo.shape} (users x items)."
            )
        if len(set(uids)) != len(uids) or len(set(iids)) != len(iids):
            raise ValueError("user_ids and item_ids must be distinct.")
        u_arr = np.empty(n_users, dtype=object)
        u_arr[:] = list(uids)
        i_arr = np.empty(n_items, dtype=object)
        i_arr[:] = list(iids)
        return cls._from_codes(
            coo.row.astype(np.int64), coo.col.astype(np.int64),
            np.asarray(coo.data, dtype=np.float64), u_arr, i_arr, None, "error",
        )  # fmt: skip

    @classmethod
    def from_dataframe(
        cls,
        frame,
        user_col: str = "user",
        item_col: str = "item",
        rating_col: str | None = "rating",
        timestamp_col: str | None = None,
        *,
        duplicates: str = "error",
    ) -> Ratings:
        """Build from a DataFrame (pandas or anything with columns and ``to_numpy``).

        Parameters
        ----------
        frame : DataFrame
            One row per rating.
        user_col, item_col : str, default="user", "item"
            Columns holding the user and item ids.
        rating_col : str or None, default="rating"
            Column of ratings; ``None`` for implicit feedback (every row counts 1).
        timestamp_col : str or None, default=None
            Column of timestamps.
        duplicates : {"error", "mean", "sum", "last"}, default="error"
            As in :meth:`from_triples`.

        Returns
        -------
        Ratings

        Examples
        --------
        >>> import pandas as pd
        >>> from mathlearn.recommender import Ratings
        >>> df = pd.DataFrame({"user": ["a", "b"], "item": [1, 2], "rating": [3.0, 4.0]})
        >>> Ratings.from_dataframe(df).shape
        (2, 2)
        """
        columns = [user_col, item_col] + [c for c in (rating_col, timestamp_col) if c]
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise ValueError(f"The DataFrame has no column(s) {missing}.")

        def col(name):
            return np.asarray(frame[name].to_numpy())

        return cls.from_triples(
            col(user_col),
            col(item_col),
            None if rating_col is None else col(rating_col).astype(np.float64),
            None if timestamp_col is None else col(timestamp_col),
            duplicates=duplicates,
        )

    def to_csr(self) -> sp.csr_array:
        """The ratings as a CSR array of shape ``(n_users, n_items)``.

        Returns
        -------
        scipy.sparse.csr_array

        Examples
        --------
        >>> from mathlearn.recommender import Ratings
        >>> Ratings.from_triples([0], [0], [2.5]).to_csr().toarray()
        array([[2.5]])
        """
        m = sp.csr_array((self.values, (self.users, self.items)), shape=self.shape)
        m.sort_indices()
        return m

    def subset(self, mask: np.ndarray) -> Ratings:
        """The ratings selected by a boolean mask (or index array), with the same id maps.

        Parameters
        ----------
        mask : ndarray of bool of shape (nnz,) or ndarray of int
            Which ratings to keep.

        Returns
        -------
        Ratings
            Same users and items (same shape), fewer ratings.

        Examples
        --------
        >>> import numpy as np
        >>> from mathlearn.recommender import Ratings
        >>> r = Ratings.from_triples([0, 1], [0, 0], [1.0, 2.0])
        >>> r.subset(np.array([False, True])).shape
        (2, 1)
        """
        ts = None if self.timestamps is None else self.timestamps[mask]
        out = Ratings(
            self.users[mask], self.items[mask], self.values[mask], self.user_ids,
            self.item_ids, ts,
        )  # fmt: skip
        out._user_index, out._item_index = self._user_index, self._item_index
        return out

    def user_codes(self, users) -> np.ndarray:
        """Row indices of user ids; -1 for an id not in the map.

        Parameters
        ----------
        users : sequence of hashable
            User ids.

        Returns
        -------
        ndarray of int64

        Examples
        --------
        >>> from mathlearn.recommender import Ratings
        >>> Ratings.from_triples(["a"], ["x"], [1.0]).user_codes(["a", "zz"])
        array([ 0, -1])
        """
        index = self.user_index
        return np.fromiter((index.get(u, -1) for u in users), dtype=np.int64)

    def item_codes(self, items) -> np.ndarray:
        """Column indices of item ids; -1 for an id not in the map.

        Parameters
        ----------
        items : sequence of hashable
            Item ids.

        Returns
        -------
        ndarray of int64

        Examples
        --------
        >>> from mathlearn.recommender import Ratings
        >>> Ratings.from_triples(["a"], ["x"], [1.0]).item_codes(["x"])
        array([0])
        """
        index = self.item_index
        return np.fromiter((index.get(i, -1) for i in items), dtype=np.int64)


def as_ratings(data) -> Ratings:
    """Coerce a :class:`Ratings`, a SciPy sparse users x items matrix or a DataFrame."""
    if isinstance(data, Ratings):
        return data
    if sp.issparse(data):
        return Ratings.from_sparse(data)
    if hasattr(data, "columns") and hasattr(data, "to_numpy"):
        return Ratings.from_dataframe(data)
    raise TypeError(
        "Expected a Ratings container, a scipy.sparse users x items matrix or a DataFrame "
        f"with columns user, item, rating; got {type(data).__name__}. A dense array is "
        "ambiguous (is 0 a rating or missing?): build Ratings.from_triples or from_sparse."
    )


def train_test_split(
    ratings: Ratings, test_size: float = 0.2, *, random_state=None
) -> tuple[Ratings, Ratings]:
    """Split the ratings at random: each rating goes to the test set with ``test_size``.

    Both parts keep the full id maps (the same rows and columns), so a model fitted on the
    training part predicts for the test part's ids directly.

    Parameters
    ----------
    ratings : Ratings
        The ratings to split.
    test_size : float, default=0.2
        Fraction of ratings held out, in (0, 1); rounded to a whole number of ratings.
    random_state : int, Generator or None, default=None
        Seed for the permutation.

    Returns
    -------
    train, test : Ratings

    Examples
    --------
    >>> from mathlearn.recommender import Ratings, train_test_split
    >>> r = Ratings.from_triples(range(10), range(10), [1.0] * 10)
    >>> train, test = train_test_split(r, 0.3, random_state=0)
    >>> train.nnz, test.nnz, test.shape
    (7, 3, (10, 10))
    """
    ratings = as_ratings(ratings)
    if not 0.0 < float(test_size) < 1.0:
        raise ValueError(f"test_size must be in (0, 1); got {test_size}.")
    if ratings.nnz < 2:
        raise ValueError(f"Cannot split {ratings.nnz} rating(s) into train and test.")
    rng = check_random_state(random_state)
    n_test = min(max(round(test_size * ratings.nnz), 1), ratings.nnz - 1)
    test = np.zeros(ratings.nnz, dtype=bool)
    test[rng.permutation(ratings.nnz)[:n_test]] = True
    return ratings.subset(~test), ratings.subset(test)


def leave_k_out_split(
    ratings: Ratings, k: int = 1, *, min_train: int = 1, random_state=None
) -> tuple[Ratings, Ratings]:
    """Hold out ``k`` ratings of every user chosen at random (leave-k-out).

    Users with fewer than ``k + min_train`` ratings keep them all in the training set.

    Parameters
    ----------
    ratings : Ratings
        The ratings to split.
    k : int, default=1
        Ratings held out per user.
    min_train : int, default=1
        Ratings a user must keep in training for any to be held out.
    random_state : int, Generator or None, default=None
        Seed.

    Returns
    -------
    train, test : Ratings

    Examples
    --------
    >>> from mathlearn.recommender import Ratings, leave_k_out_split
    >>> r = Ratings.from_triples([0, 0, 0, 1], [0, 1, 2, 0], [1.0, 2.0, 3.0, 4.0])
    >>> train, test = leave_k_out_split(r, k=1, random_state=0)
    >>> test.nnz, sorted(test.users.tolist())
    (1, [0])
    """
    ratings = as_ratings(ratings)
    if int(k) < 1 or int(min_train) < 0:
        raise ValueError(f"k must be >= 1 and min_train >= 0; got {k} and {min_train}.")
    rng = check_random_state(random_state)
    # Random order within each user: sort by (user, random key).
    order = np.lexsort((rng.random(ratings.nnz), ratings.users))
    u_sorted = ratings.users[order]
    counts = np.bincount(ratings.users, minlength=ratings.shape[0])
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    rank = np.arange(ratings.nnz) - starts[u_sorted]
    eligible = counts[u_sorted] >= k + min_train
    test = np.zeros(ratings.nnz, dtype=bool)
    test[order[eligible & (rank < k)]] = True
    return ratings.subset(~test), ratings.subset(test)


def temporal_split(ratings: Ratings, test_size: float = 0.2) -> tuple[Ratings, Ratings]:
    """Hold out the latest ratings: the ``test_size`` fraction with the largest timestamps.

    Ties at the cut go by the order the ratings are stored (user, then item).

    Parameters
    ----------
    ratings : Ratings
        Ratings with timestamps.
    test_size : float, default=0.2
        Fraction held out, in (0, 1).

    Returns
    -------
    train, test : Ratings

    Examples
    --------
    >>> from mathlearn.recommender import Ratings, temporal_split
    >>> r = Ratings.from_triples([0, 0, 1, 1], [0, 1, 0, 1], [1.0] * 4, [4, 1, 3, 2])
    >>> train, test = temporal_split(r, 0.25)
    >>> test.timestamps
    array([4])
    """
    ratings = as_ratings(ratings)
    if ratings.timestamps is None:
        raise ValueError("temporal_split needs ratings built with timestamps.")
    if not 0.0 < float(test_size) < 1.0:
        raise ValueError(f"test_size must be in (0, 1); got {test_size}.")
    if ratings.nnz < 2:
        raise ValueError(f"Cannot split {ratings.nnz} rating(s) into train and test.")
    n_test = min(max(round(test_size * ratings.nnz), 1), ratings.nnz - 1)
    order = np.argsort(ratings.timestamps, kind="stable")
    test = np.zeros(ratings.nnz, dtype=bool)
    test[order[ratings.nnz - n_test :]] = True
    return ratings.subset(~test), ratings.subset(test)
