"""What every recommender shares: the id maps, predict / recommend / similar_items with the
documented fallback for unknown ids, and the batched per-row ridge solves of ALS."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted

from ..base import BaseEstimator
from ..utils.linalg import cholesky_batched, solve_psd_batched
from ._ratings import Ratings, as_ratings

# Rows per batched solve: (chunk, k, k) stacks of a few MB (fresh large arrays cost page
# faults).
_CHUNK = 512
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
    big = float(np.max(np.abs(ratings.values)))
    spread = float(np.max(np.abs(ratings.values - ratings.values[0])))
    if big > _MAX_ABS or 0.0 < spread < _MIN_SPREAD:
        raise ValueError(
            f"Ratings of magnitude {big:.3g} varying by {spread:.3g}: the models work in "
            f"rating units and need |r| <= {_MAX_ABS:g} and differences >= {_MIN_SPREAD:g} "
            "(or none); rescale the ratings."
        )
    return ratings


def _row_grams(R: sp.csr_array, V: np.ndarray, rows: np.ndarray, weights=None) -> np.ndarray:
    """``sum_{i in row u} w_ui v_i v_i^T`` for the given rows of a CSR pattern.

    One small BLAS product per row (a gather of the row's item vectors, then ``A^T A``),
    which is faster than any batched outer-product scheme at the sizes of rating data; the
    ``(len(rows), k, k)`` result is solved in one batched LAPACK call by the caller.
    """
    k = V.shape[1]
    out = np.empty((rows.size, k, k))
    indptr, indices = R.indptr, R.indices
    data = R.data if weights is None else weights
    for t, u in enumerate(rows):
        lo, hi = indptr[u], indptr[u + 1]
        A = V[indices[lo:hi]]
        if weights is None:
            np.matmul(A.T, A, out=out[t])
        else:
            np.matmul(A.T * data[lo:hi], A, out=out[t])
    return out


def ridge_rows(
    R: sp.csr_array,
    targets: np.ndarray,
    V: np.ndarray,
    reg: np.ndarray,
    *,
    weights: np.ndarray | None = None,
    base_gram: np.ndarray | None = None,
    rhs_coef: np.ndarray | None = None,
) -> np.ndarray:
    """Solve, for every row u of a sparse pattern, the ridge regression on its entries.

    ``x_u = argmin sum_{i in row u} w_ui (t_ui - v_i^T x)^2 + reg_u ||x||^2`` (plus
    ``x^T base_gram x`` when given), i.e.
    ``(sum w v v^T + base_gram + reg_u I) x_u = sum w t v`` — equations (6.1) and (6.2) of the
    Oxford notes, Cholesky-solved in batches. ``rhs_coef`` replaces ``w t`` on the right
    (implicit feedback). Rows without entries and no base term get 0.
    """
    n_rows, k = R.shape[0], V.shape[1]
    if rhs_coef is not None:
        wt = rhs_coef
    else:
        wt = targets if weights is None else weights * targets
    T = sp.csr_array((wt, R.indices, R.indptr), shape=R.shape)
    rhs = T @ V
    X = np.zeros((n_rows, k))
    counts = np.diff(R.indptr)
    active = np.flatnonzero((counts > 0) | (base_gram is not None))
    for start in range(0, active.size, _CHUNK):
        rows = active[start : start + _CHUNK]
        G = _row_grams(R, V, rows, weights)
        if base_gram is not None:
            G += base_gram
        G.reshape(rows.size, k * k)[:, :: k + 1] += reg[rows, None]
        X[rows] = solve_psd_batched(G, rhs[rows], name="ALS normal matrix")
    return X


def sample_rows(
    R: sp.csr_array,
    targets: np.ndarray,
    V: np.ndarray,
    noise_precision: float,
    prior_precision: float,
    rng: np.random.Generator,
) -> np.ndarray:
    """Draw every row's factor from its Gaussian full conditional (Bayesian PMF).

    Precision ``Lambda_u = prior I + tau sum v v^T``, mean ``Lambda_u^{-1} tau sum t v``;
    a draw is ``mean + L^{-T} z`` with ``Lambda_u = L L^T`` and z standard normal.
    """
    n_rows, k = R.shape[0], V.shape[1]
    T = sp.csr_array((targets, R.indices, R.indptr), shape=R.shape)
    rhs = noise_precision * (T @ V)
    X = np.empty((n_rows, k))
    eye = np.eye(k)
    for start in range(0, n_rows, _CHUNK):
        rows = np.arange(start, min(start + _CHUNK, n_rows))
        P = noise_precision * _row_grams(R, V, rows) + prior_precision * eye
        L = cholesky_batched(P, name="BPMF conditional precision")
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

    def _setup(self, ratings) -> Ratings:
        ratings = _prepare(ratings)
        self.user_ids_ = ratings.user_ids
        self.item_ids_ = ratings.item_ids
        self._user_index = ratings.user_index
        self._item_index = ratings.item_index
        self.n_users_, self.n_items_ = ratings.shape
        self.global_mean_ = float(np.mean(ratings.values))
        dev = ratings.values - self.global_mean_
        nu = np.bincount(ratings.users, minlength=self.n_users_)
        ni = np.bincount(ratings.items, minlength=self.n_items_)
        su = np.bincount(ratings.users, weights=dev, minlength=self.n_users_)
        si = np.bincount(ratings.items, weights=dev, minlength=self.n_items_)
        self._fallback_user = np.divide(su, nu, out=np.zeros_like(su), where=nu > 0)
        self._fallback_item = np.divide(si, ni, out=np.zeros_like(si), where=ni > 0)
        self._seen = ratings.to_csr()
        return ratings

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
        out[ku & ~ki] += self._fallback_user[u[ku & ~ki]]
        out[ki & ~ku] += self._fallback_item[i[ki & ~ku]]
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
            scores = self.global_mean_ + self._fallback_item
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
