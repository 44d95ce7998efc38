"""What every recommender shares: the id maps, predict / recommend / similar_items with the
documented fallback for unknown ids, and the batched per-row ridge solves of ALS."""

from __future__ import annotations

import ctypes
from collections.abc import Hashable, Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from .. import _ext
from ..base import BaseEstimator
from ..utils.linalg import cholesky_batched, solve_psd_batched
from ._ratings import Ratings, as_ratings

# Ratings are modelled in their own units (initial factors, regularisation, learning rates,
# confidences): magnitudes outside this range overflow the squared errors or drown in them.
_MAX_ABS, _MIN_SPREAD = 1e100, 1e-100


def _prepare(ratings) -> Ratings:
    ratings = as_ratings(ratings)
    if ratings.nnz == 0:
        raise ValueError(
            f"The ratings matrix is empty ({ratings.shape[0]} users x {ratings.shape[1]} "
            "items, no ratings): there is nothing to fit."
        )
    top, bottom = float(ratings.values.max()), float(ratings.values.min())
    big, spread = max(top, -bottom), top - bottom
    if big > _MAX_ABS or 0.0 < spread < _MIN_SPREAD:
        raise ValueError(
            f"Ratings of magnitude {big:.3g} varying by {spread:.3g}: the models work in "
            f"rating units and need |r| <= {_MAX_ABS:g} and differences >= {_MIN_SPREAD:g} "
            "(or none); rescale the ratings."
        )
    return ratings


# Entries x columns per padded block of rows (about 2 MB of float64): larger fresh arrays cost
# page faults on a loaded machine.
_BLOCK = 1 << 18


class RowBlocks:
    """The rows of a CSR pattern grouped, by their number of entries, into padded blocks.

    Block ``b`` holds ``rows`` (``m`` row indices with similar counts), ``pos`` of shape
    ``(m, n_max)`` (the positions of each row's entries in the CSR data, padded with
    ``nnz``, which points at an appended zero) and ``cols`` (their column indices, padded with
    ``n_cols``, which points at an appended zero row). A gather ``V_ext[cols]`` then gives every
    row's design matrix at once, and one stacked product its Gram matrix ``A^T A`` (the
    padding rows are zero and add exact zeros). Rows without entries form their own blocks,
    with ``n_max = 0``.
    """

    def __init__(self, R: sp.csr_array, width: int, block: int = _BLOCK) -> None:
        indptr = R.indptr
        counts = np.diff(indptr)
        order = np.argsort(counts, kind="stable")
        c = counts[order]
        ext = np.append(R.indices, R.shape[1])
        nnz = int(indptr[-1])
        cap = max(block // max(width, 1), 1)
        self.blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        n, s = order.size, 0
        while s < n:
            if c[s] == 0:
                e = int(np.searchsorted(c, 0, side="right"))
            else:
                # The largest m with m * c[s + m - 1] <= cap (c is non-decreasing), at least 1.
                m = max(cap // int(c[s]), 1)
                while m > 1 and m * int(c[min(s + m, n) - 1]) > cap:
                    m = max(cap // int(c[min(s + m, n) - 1]), 1)
                e = min(s + m, n)
            rows = order[s:e]
            n_max = int(c[e - 1])
            ar = np.arange(n_max)
            pos = np.where(ar < counts[rows, None], indptr[rows, None] + ar, nnz)
            self.blocks.append((rows, pos, ext[pos]))
            s = e


# Rows per batched solve: the Cholesky factorisations run with the batch as the last axis,
# so that each of the k^2 / 2 steps is one vector operation over this many systems.
_SOLVE_ROWS = 1024


class _BatchLastSolver:
    """Solves stacks of small symmetric positive definite systems with the batch as the last
    axis, so that each step of the Cholesky and substitution recurrences is one vector
    operation over the whole stack (the workspaces are reused from call to call: fresh
    multi-megabyte arrays cost page faults).

    For the thousands of small (k <= 100) systems of an ALS sweep this is several times
    faster than one LAPACK call per matrix, whose per-call overhead dominates at these sizes.
    """

    def __init__(self, k: int, capacity: int) -> None:
        self._reserve(k, capacity)

    def _reserve(self, k: int, capacity: int) -> None:
        self.A = np.empty((k, k, capacity))
        self.L = np.empty((k, k, capacity))
        self.y = np.empty((k, capacity))
        self.x = np.empty((k, capacity))

    def load(self, G: np.ndarray, start: int) -> None:
        """Copy a (m, k, k) stack into columns [start, start + m) of the workspace."""
        self.A[:, :, start : start + G.shape[0]] = np.moveaxis(G, 0, -1)

    def cholesky(self, n: int) -> bool:
        """Lower factors of the first n systems by the column recurrence
        ``l_jj = sqrt(a_jj - sum_{p<j} l_jp^2)``, ``l_ij = (a_ij - sum_{p<j} l_ip l_jp) / l_jj``
        (lower triangles read, upper ones never touched); False when a pivot is not
        positive (a member is not numerically positive definite)."""
        A, L = self.A[:, :, :n], self.L[:, :, :n]
        k = A.shape[0]
        for j in range(k):
            Lj = L[j, :j]
            d = A[j, j] - np.einsum("pb,pb->b", Lj, Lj)
            if not np.all(d > 0):
                return False
            d = np.sqrt(d)
            L[j, j] = d
            if j + 1 < k:
                L[j + 1 :, j] = (A[j + 1 :, j] - np.einsum("ipb,pb->ib", L[j + 1 :, :j], Lj)) / d
        return True

    def forward(self, b: np.ndarray) -> np.ndarray:
        """Solve ``L y = b`` for the first ``b.shape[1]`` systems; b has shape (k, n)."""
        n = b.shape[1]
        L, y = self.L[:, :, :n], self.y[:, :n]
        for j in range(L.shape[0]):
            y[j] = (b[j] - np.einsum("pb,pb->b", L[j, :j], y[:j])) / L[j, j]
        return y

    def backward(self, y: np.ndarray) -> np.ndarray:
        """Solve ``L^T x = y`` for the first ``y.shape[1]`` systems."""
        n = y.shape[1]
        L, x = self.L[:, :, :n], self.x[:, :n]
        for j in range(L.shape[0] - 1, -1, -1):
            x[j] = (y[j] - np.einsum("pb,pb->b", L[j + 1 :, j], x[j + 1 :])) / L[j, j]
        return x

    def solve(self, Gs: list, rhs: np.ndarray, name: str) -> np.ndarray:
        """``G x = rhs`` for the stacks in ``Gs`` (in order; rhs of shape (n, k)); a stack with
        a member that is not positive definite (or not finite) goes to
        :func:`~mathlearn.utils.linalg.solve_psd_batched`, which names it in its error."""
        n = rhs.shape[0]
        if n > self.A.shape[2]:
            self._reserve(self.A.shape[0], n)
        start = 0
        for G in Gs:
            self.load(G, start)
            start += G.shape[0]
        if np.all(np.isfinite(self.A[:, :, :n])) and np.all(np.isfinite(rhs)):
            if self.cholesky(n):
                return self.backward(self.forward(rhs.T)).T.copy()
        return solve_psd_batched(np.concatenate(Gs), rhs, name=name)


def _grams(V_ext: np.ndarray, cols: np.ndarray, pos: np.ndarray, sw) -> tuple:
    """The gathered (and weight-scaled) design matrices of a block and their Grams."""
    A = V_ext[cols]
    if sw is not None:
        A *= sw[pos][..., None]
    # A^T A through the stacked product (NumPy calls BLAS's syrk for it).
    return A, np.matmul(np.swapaxes(A, 1, 2), A)


def _compiled_ridge():
    """The compiled per-row ridge solver of :mod:`mathlearn._ext` (``_als.c``), typed, or
    None where it was not built (the NumPy route then computes the same thing)."""
    lib = _ext.load("_als")
    if lib is None:
        return None
    fn = lib.als_ridge_rows
    if fn.argtypes is None:
        fn.restype = ctypes.c_int64
        fn.argtypes = [ctypes.c_int64, ctypes.c_int64] + [ctypes.c_void_p] * 13
    return fn


def _ptr(a: np.ndarray | None):
    return None if a is None else a.ctypes.data


def _c64(a):
    return None if a is None else np.ascontiguousarray(a, dtype=np.float64)


def _ridge_rows_compiled(fn, R, wt, V, reg, weights, base_gram, targets, return_sse):
    """The compiled route of :func:`ridge_rows`: one pass over each row's entries that
    accumulates its normal equations (through BLAS dsyrk on the row's gathered factors, where
    SciPy exports it) and Cholesky-solves them in place."""
    n_rows, k = R.shape[0], V.shape[1]
    indptr = np.ascontiguousarray(R.indptr, dtype=np.int64)
    # (column indices below R.shape[1], which Ratings keeps within 32 bits: SciPy's own
    # indices, no copy)
    indices = np.ascontiguousarray(R.indices, dtype=np.int32)
    V, wt, w, base = _c64(V), _c64(wt), _c64(weights), _c64(base_gram)
    reg, t = _c64(reg), _c64(targets) if return_sse else None
    if not (np.all(np.isfinite(V)) and np.all(np.isfinite(wt))):
        raise ValueError("ALS normal matrix or B contains NaN or infinity.")
    X = np.empty((n_rows, k))
    sse = np.zeros(1)
    syrk, gemv = _ext.blas_pointer("dsyrk"), _ext.blas_pointer("dgemv")
    if syrk is None or gemv is None:
        syrk = gemv = None
    longest = int(np.max(np.diff(indptr), initial=0)) if syrk is not None else 0
    work = np.empty(k * k + 3 * k + (k + 1) * longest)
    bad = fn(n_rows, k, _ptr(indptr), _ptr(indices), _ptr(V), _ptr(wt), _ptr(w), _ptr(base),
             _ptr(reg), _ptr(t), _ptr(X), _ptr(sse), _ptr(work), syrk, gemv)  # fmt: skip
    if bad >= 0:
        raise np.linalg.LinAlgError(f"ALS normal matrix[{int(bad)}] is not positive definite.")
    return (X, float(sse[0])) if return_sse else X


def ridge_rows(
    R: sp.csr_array,
    targets: np.ndarray,
    V: np.ndarray,
    reg: np.ndarray,
    *,
    weights: np.ndarray | None = None,
    base_gram: np.ndarray | None = None,
    rhs_coef: np.ndarray | None = None,
    blocks: RowBlocks | None = None,
    return_sse: bool = False,
):
    """Solve, for every row u of a sparse pattern, the ridge regression on its entries.

    ``x_u = argmin sum_{i in row u} w_ui (t_ui - v_i^T x)^2 + reg_u ||x||^2`` (plus
    ``x^T base_gram x`` when given), i.e.
    ``(sum w v v^T + base_gram + reg_u I) x_u = sum w t v`` — equations (6.1) and (6.2) of the
    Oxford notes, Cholesky-solved in batches. ``rhs_coef`` replaces ``w t`` on the right
    (implicit feedback). Rows without entries and no base term get 0. Where the compiled
    helper ``mathlearn._ext._als`` is built, each row's equations are accumulated and
    Cholesky-solved in one pass over its entries; otherwise the NumPy route below (padded
    blocks, stacked Gram products, batch-last Cholesky) computes the same. With ``return_sse``,
    also the residual sum of squares ``sum (t_ui - v_i^T x_u)^2`` at the solution (unweighted
    problems), from the design matrices already gathered.
    """
    n_rows, k = R.shape[0], V.shape[1]
    if rhs_coef is not None:
        wt = rhs_coef
    else:
        wt = targets if weights is None else weights * targets
    fn = _compiled_ridge()
    if fn is not None:
        return _ridge_rows_compiled(fn, R, wt, V, reg, weights, base_gram, targets, return_sse)
    rhs = sp.csr_array((wt, R.indices, R.indptr), shape=R.shape) @ V
    X = np.zeros((n_rows, k))
    if blocks is None:
        blocks = RowBlocks(R, k)
    V_ext = np.vstack([V, np.zeros((1, k))])
    sw = None if weights is None else np.sqrt(np.append(weights, 0.0))
    t_ext = np.append(targets, 0.0) if return_sse else None
    sse = 0.0
    pending: list = []
    solver = _BatchLastSolver(k, 2 * _SOLVE_ROWS)

    def flush() -> float:
        rows = np.concatenate([p[0] for p in pending])
        x = solver.solve([p[1] for p in pending], rhs[rows], "ALS normal matrix")
        X[rows] = x
        out = 0.0
        if t_ext is not None:
            start = 0
            for r_b, _, pos, A in pending:
                xb = x[start : start + r_b.size]
                start += r_b.size
                res = (t_ext[pos] - np.matmul(A, xb[..., None])[..., 0]).ravel()
                out += float(res @ res)
        pending.clear()
        return out

    n_pending = held = 0
    for rows, pos, cols in blocks.blocks:
        if pos.shape[1] == 0 and base_gram is None:
            continue
        A, G = _grams(V_ext, cols, pos, sw)
        if base_gram is not None:
            G += base_gram
        G.reshape(rows.size, k * k)[:, :: k + 1] += reg[rows, None]
        pending.append((rows, G, pos, A if t_ext is not None else None))
        n_pending += rows.size
        held += A.size if t_ext is not None else 0
        # Solve once enough rows are pending, or the kept design matrices pass ~16 MB.
        if n_pending >= _SOLVE_ROWS or held > 8 * _BLOCK:
            sse += flush()
            n_pending = held = 0
    if pending:
        sse += flush()
    return (X, sse) if return_sse else X


def sample_rows(
    R: sp.csr_array,
    targets: np.ndarray,
    V: np.ndarray,
    noise_precision: float,
    prior_precision,
    rng: np.random.Generator,
    *,
    prior_mean: np.ndarray | None = None,
    blocks: RowBlocks | None = None,
) -> np.ndarray:
    """Draw every row's factor from its Gaussian full conditional (Bayesian PMF).

    Precision ``Lambda_u = Lambda_0 + tau sum v v^T`` (``Lambda_0``: ``prior_precision``, a
    scalar times I or a (k, k) matrix), mean
    ``Lambda_u^{-1} (tau sum t v + Lambda_0 mu_0)`` (``mu_0``: ``prior_mean``, default 0); a
    draw is ``mean + L^{-T} z`` with ``Lambda_u = L L^T`` and z standard normal, i.e.
    ``L^{-T} (L^{-1} b + z)``.
    """
    n_rows, k = R.shape[0], V.shape[1]
    T = sp.csr_array((targets, R.indices, R.indptr), shape=R.shape)
    rhs = noise_precision * (T @ V)
    P0 = np.asarray(prior_precision, dtype=float)
    P0 = P0 * np.eye(k) if P0.ndim == 0 else P0
    if prior_mean is not None:
        rhs += P0 @ np.asarray(prior_mean, dtype=float)
    if blocks is None:
        blocks = RowBlocks(R, k)
    V_ext = np.vstack([V, np.zeros((1, k))])
    X = np.empty((n_rows, k))
    for rows, pos, cols in blocks.blocks:
        _, G = _grams(V_ext, cols, pos, None)
        L = cholesky_batched(noise_precision * G + P0, name="BPMF conditional precision")
        y = np.linalg.solve(L, rhs[rows][..., None])
        z = rng.standard_normal((rows.size, k, 1))
        X[rows] = np.linalg.solve(np.swapaxes(L, -1, -2), y + z)[..., 0]
    return X


class RecommenderBase(BaseEstimator):
    """Base of the recommenders: id maps, predictions with fallbacks, top-n lists.

    A subclass's ``fit`` calls :meth:`_setup` (which validates the ratings and records the
    id maps, the global mean and the fallback offsets) and implements ``_predict_known(u, i)``
    (index arrays of known users and items) and ``_score_user(u)`` (scores of all items for
    one known user); factor models set ``_item_vectors`` for :meth:`similar_items`.
    """

    # The offsets of the unknown-id fallbacks (see _fallbacks).
    _fallback_user: np.ndarray | None
    _fallback_item: np.ndarray | None

    def _setup(self, ratings) -> Ratings:
        ratings = _prepare(ratings)
        self.user_ids_ = ratings.user_ids
        self.item_ids_ = ratings.item_ids
        self._user_index = ratings.user_index
        self._item_index = ratings.item_index
        self.n_users_, self.n_items_ = ratings.shape
        # np.mean's sum and division, without its Python-level wrapper
        self.global_mean_ = float(np.add.reduce(ratings.values)) / ratings.values.size
        # The unknown-id fallbacks, set by the model or formed on first use (_fallbacks).
        self._fallback_user = self._fallback_item = None
        # The users x items matrix of the training ratings (for exclude_seen and the
        # neighbourhood models) is built on first use: the factor models never need it in fit.
        self._train_ratings = ratings
        self._seen_csr = None
        return ratings

    def _fallbacks(self) -> tuple[np.ndarray, np.ndarray]:
        """The offsets added to the global mean for an unknown item of a known user and for
        an unknown user of a known item: the model's own where it set them (its learned
        biases), else the mean deviation of that user's / item's training ratings from the
        global mean (0 without ratings)."""
        r = self._train_ratings

        def mean_deviation(codes: np.ndarray, size: int) -> np.ndarray:
            n = np.bincount(codes, minlength=size)
            total = np.bincount(codes, weights=r.values - self.global_mean_, minlength=size)
            return np.divide(total, n, out=np.zeros_like(total), where=n > 0)

        if self._fallback_user is None:
            self._fallback_user = mean_deviation(r.users, self.n_users_)
        if self._fallback_item is None:
            self._fallback_item = mean_deviation(r.items, self.n_items_)
        return self._fallback_user, self._fallback_item

    @property
    def _seen(self) -> sp.csr_array:
        if self._seen_csr is None:
            self._seen_csr = self._train_ratings.to_csr()
        return self._seen_csr

    def _codes(self, ids, index: dict) -> np.ndarray:
        return np.fromiter((index.get(x, -1) for x in ids), dtype=np.int64)

    def _ids(self, values, name: str) -> list:
        if isinstance(values, np.ndarray):
            return values.ravel().tolist()
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise TypeError(f"{name} must be a sequence of ids; got {values!r}.")
        return list(values)

    def predict(self, users: Sequence[Hashable], items: Sequence[Hashable]) -> np.ndarray:
        """Predicted ratings for pairs (users[t], items[t]).

        An unknown user or item (not in the training ratings) gets the fallback: the global
        mean plus the known side's bias (the learned bias for models that have biases, else
        the mean deviation of that user's or item's training ratings from the global mean);
        both unknown gives the global mean.

        Parameters
        ----------
        users, items : sequences of hashable of equal length
            User and item ids.

        Returns
        -------
        ndarray of shape (n_pairs,)

        Examples
        --------
        >>> from mathlearn.recommender import ALS, Ratings
        >>> r = Ratings.from_triples([0, 0, 1], [0, 1, 0], [4.0, 2.0, 5.0])
        >>> model = ALS(n_components=1, random_state=0).fit(r)
        >>> model.predict([7], [99]).tolist()  # both unknown: the global mean
        [3.6666666666666665]
        """
        check_is_fitted(self, "user_ids_")
        u_list, i_list = self._ids(users, "users"), self._ids(items, "items")
        if len(u_list) != len(i_list):
            raise ValueError(
                f"users and items have different lengths ({len(u_list)} and {len(i_list)})."
            )
        u = self._codes(u_list, self._user_index)
        i = self._codes(i_list, self._item_index)
        out = np.full(u.size, self.global_mean_)
        ku, ki = u >= 0, i >= 0
        both = ku & ki
        fallback_user, fallback_item = self._fallbacks()
        out[ku & ~ki] += fallback_user[u[ku & ~ki]]
        out[ki & ~ku] += fallback_item[i[ki & ~ku]]
        if np.any(both):
            out[both] = self._predict_known(u[both], i[both])
        return out

    def _predict_known(self, u: np.ndarray, i: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _score_user(self, u: int) -> np.ndarray:
        return self._predict_known(np.full(self.n_items_, u), np.arange(self.n_items_))

    def recommend(
        self, user: Hashable, n: int = 10, exclude_seen: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ``n`` items with the highest predicted score for a user.

        Ties are broken by the item's position in ``item_ids_``. An unknown user gets the
        items with the highest fallback score (global mean plus item bias).

        Parameters
        ----------
        user : hashable
            User id.
        n : int, default=10
            Length of the list.
        exclude_seen : bool, default=True
            Leave out the items the user rated in training.

        Returns
        -------
        items : ndarray of shape (m,)
            Item ids, best first (m <= n when fewer items are left).
        scores : ndarray of shape (m,)
            Their scores.

        Examples
        --------
        >>> from mathlearn.recommender import ALS, Ratings
        >>> r = Ratings.from_triples([0, 0, 1], ["a", "b", "a"], [4.0, 2.0, 5.0])
        >>> model = ALS(n_components=1, random_state=0).fit(r)
        >>> model.recommend(1, n=5)[0].tolist()
        ['b']
        """
        check_is_fitted(self, "user_ids_")
        if int(n) < 1:
            raise ValueError(f"n must be a positive integer; got {n}.")
        u = self._user_index.get(user, -1)
        if u < 0:
            scores = self.global_mean_ + self._fallbacks()[1]
        else:
            scores = np.array(self._score_user(u), dtype=np.float64)
            if exclude_seen:
                lo, hi = self._seen.indptr[u], self._seen.indptr[u + 1]
                scores[self._seen.indices[lo:hi]] = -np.inf
        return self._top(scores, int(n), self.item_ids_)

    @staticmethod
    def _top(scores: np.ndarray, n: int, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        valid = np.flatnonzero(np.isfinite(scores))
        n = min(n, valid.size)
        if n == 0:
            return ids[:0], scores[:0]
        s = scores[valid]
        if n < valid.size:
            # Keep every candidate tied with the n-th best, then sort by (score desc, index).
            cut = np.partition(s, s.size - n)[s.size - n]
            keep = s >= cut
            valid, s = valid[keep], s[keep]
        order = np.lexsort((valid, -s))[:n]
        return ids[valid[order]], s[order]

    def similar_items(self, item: Hashable, n: int = 10) -> tuple[np.ndarray, np.ndarray]:
        """The ``n`` items most similar to an item (the item itself left out).

        For factor models the similarity is the cosine of the item vectors; neighbourhood
        models use their item-item similarity.

        Parameters
        ----------
        item : hashable
            Item id (must be known).
        n : int, default=10
            Length of the list.

        Returns
        -------
        items : ndarray of shape (m,)
            Item ids, most similar first.
        similarities : ndarray of shape (m,)

        Examples
        --------
        >>> from mathlearn.recommender import ALS, Ratings
        >>> r = Ratings.from_triples([0, 0, 1, 1], [0, 1, 0, 1], [5.0, 5.0, 1.0, 1.0])
        >>> ALS(n_components=1, random_state=0).fit(r).similar_items(0, n=1)[0].tolist()
        [1]
        """
        check_is_fitted(self, "user_ids_")
        if int(n) < 1:
            raise ValueError(f"n must be a positive integer; got {n}.")
        i = self._item_index.get(item, -1)
        if i < 0:
            raise KeyError(f"Unknown item {item!r}: it has no ratings in the training data.")
        sims = np.array(self._item_similarity(i), dtype=np.float64)
        sims[i] = -np.inf
        return self._top(sims, int(n), self.item_ids_)

    def _item_similarity(self, i: int) -> np.ndarray:
        V = self._item_vectors()
        norms = np.linalg.norm(V, axis=1)
        dots = V @ V[i]
        denom = norms * norms[i]
        return np.divide(dots, denom, out=np.full(dots.shape, -np.inf), where=denom > 0)

    def _item_vectors(self) -> np.ndarray:
        raise NotImplementedError
