"""Co-clustering (biclustering) of a partially observed ratings matrix into blocks with
constant means."""

from __future__ import annotations

from numbers import Integral

import numpy as np
import scipy.sparse as sp

from ..base import _fit_context
from ..utils._param_validation import Interval
from ..utils.validation import check_random_state
from ._base import RecommenderBase


def _block_stats(R: sp.csr_array, E: sp.csr_array, rl, cl, kr, kc):
    n_rows, n_cols = R.shape
    Cr = sp.csr_array((np.ones(n_rows), (rl, np.arange(n_rows))), shape=(kr, n_rows))
    Cc = sp.csr_array((np.ones(n_cols), (np.arange(n_cols), cl)), shape=(n_cols, kc))
    return (Cr @ R @ Cc).toarray(), (Cr @ E @ Cc).toarray()


class CoClustering(RecommenderBase):
    """Co-clustering: users and items in clusters, ratings constant within each block.

    Users get labels r_u in {1..K_r}, items c_i in {1..K_c}, and ``y_ui ~ N(mu_{r_u c_i},
    sigma^2)`` independently over the observed entries. The labels and block means
    maximise the likelihood by classification EM (hard assignments): with the means fixed,
    each user takes the cluster minimising ``sum_{i rated} (y_ui - mu_{r c_i})^2`` (all users
    at once, from the sparse block sums), the means are recomputed, then the items likewise;
    the squared error never increases. The best of ``n_init`` random starts is kept.

    Parameters
    ----------
    n_user_clusters : int, default=3
        K_r.
    n_item_clusters : int, default=3
        K_c.
    max_iter : int, default=50
        Maximum rounds (a user pass and an item pass).
    n_init : int, default=3
        Random restarts.
    random_state : int, Generator or None, default=None
        Seed.

    Attributes
    ----------
    user_labels_ : ndarray of shape (n_users,)
        r_u (0-based).
    item_labels_ : ndarray of shape (n_items,)
        c_i (0-based).
    block_means_ : ndarray of shape (n_user_clusters, n_item_clusters)
        mu_rc; a block without observed ratings gets the global mean.
    block_counts_ : ndarray of shape (n_user_clusters, n_item_clusters)
        Observed ratings per block.
    objective_ : list of float
        Sum of squared errors after each round (best start).
    n_iter_ : int
        Rounds run (best start).
    global_mean_ : float
        Mean training rating.
    user_ids_, item_ids_ : ndarray
        The id maps.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §6.6: the block likelihood
    ``p(Y | r, c, theta) = prod_{e_ij = 1} p(y_ij | theta_{r_i c_j})`` with Gaussian blocks
    ("inference can proceed similarly as in the EM algorithm"; here its hard-assignment
    form, as k-means is to a Gaussian mixture). T. George and S. Merugu, "A scalable
    collaborative filtering framework based on co-clustering" (ICDM 2005) add user and item
    offsets to the block means. The prediction for (u, i) is mu_{r_u c_i}; similar items are
    those whose clusters have the closest mean profiles over the user clusters.

    Complexity: with ``U`` users, ``I`` items, ``N`` observed ratings and ``K_r`` user and
    ``K_c`` item clusters, a round costs ``O(N + (U + I) K_r K_c)``: every user's sums and
    counts over the item clusters by a sparse product (``O(N)``, densified to ``U x K_c``),
    every user's cost for every user cluster by dense products (``O(U K_r K_c)``), then the
    items likewise (``O(N + I K_r K_c)``) and the block sums (``O(N)``); a fit runs at most
    ``max_iter`` rounds (fewer once the labels stop changing) for each of the ``n_init``
    starts. Memory: the ratings and their 0/1 pattern in both orientations (``O(N)``) and
    ``O((U + I)(K_r + K_c))`` for the dense per-cluster sums, counts, costs and one-hot
    labels. ``predict`` is a table look-up, ``O(1)`` per pair; ``recommend`` costs ``O(I)``,
    ``similar_items`` ``O(I K_r)``.

    See Also
    --------
    ALS : a continuous low-rank model of the same matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.recommender import CoClustering, Ratings
    >>> u = [0, 0, 1, 1, 2, 2, 3, 3]
    >>> i = [0, 2, 1, 2, 0, 3, 1, 3]
    >>> y = [5.0, 1.0, 5.0, 1.0, 1.0, 5.0, 1.0, 5.0]
    >>> m = CoClustering(n_user_clusters=2, n_item_clusters=2, random_state=0)
    >>> m.fit(Ratings.from_triples(u, i, y)).objective_[-1]
    0.0
    """

    _parameter_constraints = {
        "n_user_clusters": [Interval(Integral, 1, None, closed="left")],
        "n_item_clusters": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_user_clusters: int = 3,
        n_item_clusters: int = 3,
        *,
        max_iter: int = 50,
        n_init: int = 3,
        random_state=None,
    ) -> None:
        self.n_user_clusters = n_user_clusters
        self.n_item_clusters = n_item_clusters
        self.max_iter = max_iter
        self.n_init = n_init
        self.random_state = random_state

    @_fit_context
    def fit(self, ratings, y=None) -> CoClustering:
        """Find the co-clusters.

        Parameters
        ----------
        ratings : Ratings, scipy.sparse matrix (users x items) or DataFrame
            Training ratings.
        y : None
            Ignored.

        Returns
        -------
        self : CoClustering
        """
        data = self._setup(ratings)
        kr, kc = int(self.n_user_clusters), int(self.n_item_clusters)
        n_users, n_items = data.shape
        if kr > n_users or kc > n_items:
            raise ValueError(
                f"Cannot form {kr} user clusters of {n_users} users or {kc} item clusters of "
                f"{n_items} items."
            )
        R = self._seen
        E = sp.csr_array((np.ones(R.nnz), R.indices, R.indptr), shape=R.shape)
        Rt, Et = sp.csr_array(R.T), sp.csr_array(E.T)
        total_sq = float(R.data @ R.data)
        rng = check_random_state(self.random_state)
        best: tuple | None = None
        for _ in range(int(self.n_init)):
            rl = rng.permutation(np.arange(n_users) % kr)
            cl = rng.permutation(np.arange(n_items) % kc)
            history: list[float] = []
            n_iter = 0
            for n_iter in range(1, int(self.max_iter) + 1):  # noqa: B007
                old = (rl.copy(), cl.copy())
                rl = self._assign(R, E, cl, kc, rl, kr)
                cl = self._assign(Rt, Et, rl, kr, cl, kc, transpose=True)
                S, N = _block_stats(R, E, rl, cl, kr, kc)
                mu = np.divide(S, N, out=np.zeros_like(S), where=N > 0)
                history.append(max(total_sq - float(np.sum(mu * S)), 0.0))
                if np.array_equal(old[0], rl) and np.array_equal(old[1], cl):
                    break
            if best is None or history[-1] < best[2][-1]:
                best = (rl, cl, history, n_iter)
        assert best is not None
        rl, cl, history, n_iter = best
        S, N = _block_stats(R, E, rl, cl, kr, kc)
        self.block_means_ = np.where(N > 0, S / np.maximum(N, 1), self.global_mean_)
        self.block_counts_ = N.astype(np.int64)
        self.user_labels_, self.item_labels_ = rl, cl
        self.objective_, self.n_iter_ = history, n_iter
        return self

    @staticmethod
    def _assign(R, E, other, k_other, labels, k, transpose=False):
        """Each row's best cluster given the other side's labels and the current means."""
        n_other = R.shape[1]
        C = sp.csr_array((np.ones(n_other), (np.arange(n_other), other)), shape=(n_other, k_other))
        S_row, N_row = R @ C, E @ C  # (n_rows, k_other): sums and counts per column cluster
        S_row, N_row = np.asarray(S_row.todense()), np.asarray(N_row.todense())
        onehot = np.zeros((k, R.shape[0]))
        onehot[labels, np.arange(R.shape[0])] = 1.0
        S, N = onehot @ S_row, onehot @ N_row
        mu = np.divide(S, N, out=np.zeros_like(S), where=N > 0)  # (k, k_other)
        # cost_{row, r} = sum_c n_c mu_rc^2 - 2 s_c mu_rc (the row's own sum of squares is
        # the same for every r).
        cost = N_row @ (mu**2).T - 2.0 * S_row @ mu.T
        return np.argmin(cost, axis=1)

    def _predict_known(self, u: np.ndarray, i: np.ndarray) -> np.ndarray:
        return self.block_means_[self.user_labels_[u], self.item_labels_[i]]

    def _score_user(self, u: int) -> np.ndarray:
        return self.block_means_[self.user_labels_[u], self.item_labels_]

    def _item_similarity(self, i: int) -> np.ndarray:
        profiles = self.block_means_.T[self.item_labels_]  # (n_items, K_r)
        return -np.linalg.norm(profiles - profiles[i], axis=1)


class SpectralCoClustering(CoClustering):
    """Spectral co-clustering of the bipartite user-item graph (Dhillon's algorithm).

    The ratings (non-negative) are the weights of a bipartite graph between users and items.
    With row and column degree matrices D_1, D_2, the normalised matrix
    ``A_n = D_1^{-1/2} A D_2^{-1/2}`` is factorised by a truncated SVD; singular vectors 2 to
    ``l + 1`` (``l = ceil(log2 K)``) give the embedding
    ``Z = [D_1^{-1/2} U; D_2^{-1/2} V]`` of users and items together, and k-means on Z puts
    users and items in the same K co-clusters (a relaxation of the normalised cut of the
    bipartite graph). Predictions are the block means of the resulting user x item blocks,
    as in :class:`CoClustering`.

    Parameters
    ----------
    n_clusters : int, default=3
        K, shared by users and items.
    n_init : int, default=10
        k-means restarts.
    random_state : int, Generator or None, default=None
        Seed (Lanczos start vector and k-means).

    Attributes
    ----------
    user_labels_ : ndarray of shape (n_users,)
        Co-cluster of each user.
    item_labels_ : ndarray of shape (n_items,)
        Co-cluster of each item.
    block_means_ : ndarray of shape (n_clusters, n_clusters)
        Mean observed rating of each user-cluster x item-cluster block (global mean where
        empty).
    block_counts_ : ndarray of shape (n_clusters, n_clusters)
        Observed ratings per block.
    global_mean_ : float
        Mean training rating.
    user_ids_, item_ids_ : ndarray
        The id maps.

    Notes
    -----
    I. S. Dhillon, "Co-clustering documents and words using bipartite spectral graph
    partitioning" (KDD 2001). Biclustering as in the Oxford "Advanced Topics in Statistical
    Machine Learning" §6.6, found here by a graph cut instead of the block likelihood.
    Users or items without ratings have degree 0 and are refused.

    Complexity: with ``U`` users, ``I`` items, ``N`` observed ratings, ``K`` clusters and
    ``l = ceil(log2 K)``, the degrees and ``A_n`` cost ``O(N)``; ARPACK finds the ``l + 1``
    singular triplets as eigenvectors of the smaller of ``A_n^T A_n`` and ``A_n A_n^T``
    (never formed), at ``O(N + m c)`` per application of that operator (two sparse products
    and the Lanczos orthogonalisation; ``m = min(U, I)``, ``c = max(2 l + 3, 20)`` Lanczos
    vectors) times the number of applications, which the spectral gap sets, plus
    ``O(N l + (U + I) l^2)`` to finish; k-means on the ``(U + I) x l`` embedding costs
    ``O(n_init t (U + I) K l)`` for ``t`` Lloyd iterations per start, and the block means
    ``O(N + K^2)``. Memory: ``O(N)`` for the copies of the matrix (``A_n``, the 0/1
    pattern), ``m c`` for the Lanczos basis and ``O((U + I) l)`` for the embedding and
    k-means. Predictions cost as in :class:`CoClustering`.

    See Also
    --------
    CoClustering : the notes' Gaussian block model.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from mathlearn.recommender import Ratings, SpectralCoClustering
    >>> A = np.kron(np.eye(2), np.ones((3, 2))) + 0.1
    >>> m = SpectralCoClustering(2, random_state=0).fit(Ratings.from_sparse(sp.csr_array(A)))
    >>> len(set(m.user_labels_[:3])), m.user_labels_[0] != m.user_labels_[3]
    (1, np.True_)
    """

    _parameter_constraints = {
        "n_clusters": [Interval(Integral, 2, None, closed="left")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_clusters: int = 3, *, n_init: int = 10, random_state=None) -> None:
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.random_state = random_state

    @_fit_context
    def fit(self, ratings, y=None) -> SpectralCoClustering:
        """Find the co-clusters.

        Parameters
        ----------
        ratings : Ratings, scipy.sparse matrix (users x items) or DataFrame
            Non-negative ratings (edge weights).
        y : None
            Ignored.

        Returns
        -------
        self : SpectralCoClustering
        """
        from scipy.sparse.linalg import svds

        from ..cluster import KMeans

        data = self._setup(ratings)
        K = int(self.n_clusters)
        if np.any(data.values < 0):
            raise ValueError("SpectralCoClustering needs non-negative ratings (edge weights).")
        R = self._seen
        n_users, n_items = R.shape
        d1 = np.asarray(R.sum(axis=1)).ravel()
        d2 = np.asarray(R.sum(axis=0)).ravel()
        if np.any(d1 <= 0) or np.any(d2 <= 0):
            raise ValueError(
                "Every user and item needs a positive total rating (a graph degree); drop "
                "the users or items whose ratings are all 0."
            )
        n_sv = 1 + int(np.ceil(np.log2(K)))
        if n_sv >= min(n_users, n_items) or K > min(n_users, n_items):
            raise ValueError(
                f"n_clusters={K} is too large for a {n_users} x {n_items} ratings matrix."
            )
        s1, s2 = 1.0 / np.sqrt(d1), 1.0 / np.sqrt(d2)
        An = sp.csr_array(R.multiply(s1[:, None]).multiply(s2[None, :]))
        rng = check_random_state(self.random_state)
        U, s, Vt = svds(An, k=n_sv, v0=rng.uniform(-1.0, 1.0, min(An.shape)), solver="arpack")
        order = np.argsort(-s, kind="stable")[1:]
        Z = np.vstack([s1[:, None] * U[:, order], s2[:, None] * Vt[order].T])
        seed = int(rng.integers(2**31 - 1))
        labels = KMeans(K, n_init=int(self.n_init), random_state=seed).fit(Z).labels_
        rl, cl = labels[:n_users], labels[n_users:]
        E = sp.csr_array((np.ones(R.nnz), R.indices, R.indptr), shape=R.shape)
        S, N = _block_stats(R, E, rl, cl, K, K)
        self.block_means_ = np.where(N > 0, S / np.maximum(N, 1), self.global_mean_)
        self.block_counts_ = N.astype(np.int64)
        self.user_labels_, self.item_labels_ = rl, cl
        return self
