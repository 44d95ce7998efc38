"""Spectral clustering.

Oxford "Advanced Topics in Statistical Machine Learning" §4.1; Stuttgart
"Introduction to Machine Learning" §6.1.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import scipy.linalg as sla
import scipy.linalg.lapack as lapack
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..base import BaseEstimator, ClusterMixin, _fit_context
from ..utils._param_validation import Interval, StrOptions
from ..utils.graph import knn_graph, laplacian, rbf_affinity
from ..utils.validation import check_random_state, validate_data
from ._kmeans import KMeans, _check_n_clusters

__all__ = ["SpectralClustering"]

# Below this many points (or for many eigenvectors) the Laplacian is eigendecomposed
# densely (LAPACK); above it the bottom eigenpairs come from shift-invert Lanczos (ARPACK)
# on the Laplacian as it is stored, factorised by _shift_invert (a sparse LU with diagonal
# pivots for a k-NN graph, packed Cholesky for RBF or a dense graph).
_DENSE_LIMIT = 500
# The shift of the shift-invert Lanczos iteration: just below the spectrum's zero, so that
# L - sigma I is positive definite (even for a disconnected graph) and the bottom
# eigenvalues, mapped to 1 / (lambda - sigma), are far apart from the rest.
_SIGMA = -1e-5
# A sparse Laplacian with more than this fraction of its N^2 entries set is factorised
# densely between these numbers of points (packed: 2.6 MB at 800, 1.6 GB at 20 000): from
# about 5% the sparse LU of a k-NN graph costs as much as dense Cholesky and beyond it much
# more. Below 800 points a fit through ARPACK's pivoted LU holds less memory than one
# through the packed factor, from 800 points more (SpectralEmbedding, N / 10 neighbours,
# peak memory of a fit, LU / packed /
# the peer: 5.19 / 5.35 / 4.60 MB at 700 points, 6.57 / 6.06 at 800, 9.85 / 8.63 / 10.16 at
# 1 000, 16.85 / 14.51 / 16.67 at 1 300), and the packed factor is about twice as fast at
# every size (fit 35 / 21 ms at 700 points, 82 / 43 at 1 000, 158 / 76 at 1 300).
_DENSE_FRACTION = 0.05
_DENSE_FACTOR_MIN_N = 800
_DENSE_FACTOR_MAX_N = 20_000


def dense_route(n: int, m: int, solver: str = "auto") -> bool:
    """Whether :func:`bottom_eigenpairs` takes the dense route for ``m`` pairs of ``N``:
    ``"dense"``; ``"auto"`` up to 500 points or for more than ``N / 10`` pairs; and
    ``"arpack"`` where ARPACK cannot serve (it needs ``m < N - 1``; such tiny problems are
    dense anyway). The callers build a dense Laplacian directly for it."""
    if solver == "auto":
        solver = "arpack" if n > _DENSE_LIMIT and m <= n // 10 else "dense"
    return solver == "dense" or m >= n - 1


def knn_rows(n: int) -> int:
    """Rows of the k-NN search's blocks (of distances and partial-sort indices, each as many
    entries as rows times ``N``) where the dense eigensolver follows: an eighth of ``N``,
    clipped to 16 to 32 rows, so that the two hold about a quarter of the numbers of its
    ``N x N`` Laplacian (a third at 100 points), and the heap pages the search leaves,
    which the Laplacian cannot reuse, stay small against it. At 100 points (16 rows) the
    search's arrays take about 70 kB traced, against 100 kB with 32 rows and 200 kB with
    the default blocks, for about 0.1 ms more; from 256 points 32 rows, under 5% more
    time."""
    return min(32, max(16, n // 8))


def bottom_eigenpairs(
    L, m: int, rng, solver: str = "auto", laplacian: bool = False, overwrite: bool = False
):
    """The ``m`` smallest eigenpairs of a symmetric PSD Laplacian ``L`` (dense or sparse).

    ``"arpack"``: shift-invert Lanczos, ``(L - sigma I)^{-1}`` with ``sigma = -1e-5`` (so the
    factorised matrix is positive definite even with the zero eigenvalues of a disconnected
    graph), converged to machine precision (``tol=0``); ``L - sigma I`` is factorised as the
    positive definite matrix it is (:func:`_shift_invert`): packed Cholesky, ``O(N^3 / 3)``
    time and ``N^2 / 2`` memory, when dense or a graph over 5% full (from 800 points;
    below, ARPACK's own sparse LU), an unpivoted sparse LU on a minimum-degree ordering
    (the fill of a sparse Cholesky) for a sparse k-NN graph; each Lanczos step is one pair
    of triangular solves.
    ``"dense"``: LAPACK ``eigh`` of the dense matrix, ``O(N^3)`` with a larger constant (a
    tridiagonal reduction). ``"auto"``: ARPACK above 500 points when ``m <= N / 10``.
    ``laplacian=True``: ``L`` was built by :func:`mathlearn.utils.graph.laplacian` from
    symmetric non-negative weights, so it is positive semidefinite by construction (its
    computed eigenvalues are above ``-O(eps ||L||)``, far from ``sigma``) and the sparse
    factorisation's pivots need no sign check (see :func:`_shift_invert`).
    ``overwrite=True``: a dense ``L`` is the caller's scratch, which the dense route's
    ``eigh`` may destroy where it is in Fortran order (a sparse one is copied to such an
    array, which the route owns anyway): no second ``N x N`` array.
    """
    n = L.shape[0]
    if not dense_route(n, m, solver):
        # (no CSC copy of a sparse L: the factorisations below make their own matrices, and
        # shift-invert ARPACK never multiplies by L)
        L = L if sp.issparse(L) else np.asarray(L)
        # a dense graph (scikit-learn's default of N / 10 neighbours): its sparse factor
        # fills in to a large part of N^2 at a sparse code's speed; dense Cholesky is
        # cheaper (5 000 points, 500 neighbours: 1.3 s against 3.7-5.8 s)
        if not sp.issparse(L):
            op = _shift_invert(L, _SIGMA, dense=True)
        elif L.nnz <= _DENSE_FRACTION * n * n:
            op = _shift_invert(L, _SIGMA, dense=False, known_psd=laplacian)
        elif _DENSE_FACTOR_MIN_N <= n <= _DENSE_FACTOR_MAX_N:
            op = _shift_invert(L, _SIGMA, dense=True)
        else:
            # a small dense graph (there ARPACK's pivoted sparse LU holds the least memory,
            # see _DENSE_FACTOR_MIN_N), or one too large to be factorised densely
            op = None
        v0 = rng.uniform(-1, 1, n)
        vals, vecs = spla.eigsh(L, k=m, sigma=_SIGMA, which="LM", v0=v0, tol=0.0, OPinv=op)
        order = np.argsort(vals)
        return vals[order], vecs[:, order]
    if sp.issparse(L):
        # in LAPACK's column order: eigh factorises this copy in place, not a copy of it
        L, overwrite = L.toarray(order="F"), True
    # (no finiteness check: it would allocate an N x N mask; a Laplacian of validated data
    # is finite)
    return sla.eigh(L, subset_by_index=[0, m - 1], overwrite_a=overwrite, check_finite=False)


def _shift_invert(L, sigma: float, dense: bool, known_psd: bool = False):
    """``(L - sigma I)^{-1}`` as a linear operator, from a factorisation that uses the
    matrix's symmetry and definiteness; None where that fails (then ARPACK's own LU).

    With ``L`` positive semidefinite and ``sigma < 0``, ``L - sigma I`` is symmetric positive
    definite: Gaussian elimination needs no pivoting (its growth is bounded as Cholesky's),
    so a sparse ``L`` is factorised with the pivots kept on the diagonal and a symmetric
    fill-reducing ordering (minimum degree on ``A^T + A``, SuperLU's symmetric mode), and a
    dense one (or a sparse one with ``dense``) by Cholesky, half the flops of LU, in the
    rectangular full packed format (half an ``N x N`` array). ARPACK's shift-invert mode
    only applies this operator, never ``L``. A sparse factorisation's pivots are checked to
    be positive (else ``None``) unless ``known_psd``: reading them materialises SuperLU's
    ``U`` factor, half the factorisation's memory again (0.57 MB at 1 000 points of a
    10-NN graph, the largest array of a spectral clustering there).
    Partial pivoting on a matrix this close to singular (``sigma = -1e-5``) instead leaves
    the diagonal and multiplies the fill: at 10 000 points of a 10-NN graph, 0.81 s against
    0.36 s for the whole eigensolve.
    """
    n = L.shape[0]
    try:
        if sp.issparse(L) and not dense:
            A = sp.csc_matrix(L - sigma * sp.identity(n, format="csc"))
            lu = spla.splu(
                A,
                permc_spec="MMD_AT_PLUS_A",
                diag_pivot_thresh=0.0,
                options={"SymmetricMode": True},
            )
            # pivots on the diagonal (the row order is the column order) and all positive:
            # A = P^T L D L^T P with D > 0, positive definite; otherwise (elimination without
            # pivoting is not stable for an indefinite matrix) leave it to ARPACK
            if not np.array_equal(lu.perm_r, lu.perm_c):
                return None
            if not known_psd and not np.all(lu.U.diagonal() > 0):
                return None
            solve = lu.solve
        else:
            packed = _packed_shifted(L, sigma)
            packed, info = lapack.dpftrf(n, packed, transr="N", uplo="L", overwrite_a=1)
            if info != 0:
                return None  # a non-positive pivot: not positive definite

            def solve(b):
                x, _ = lapack.dpftrs(n, packed, b.reshape(n, -1), transr="N", uplo="L")
                return x.reshape(b.shape)

    except (RuntimeError, np.linalg.LinAlgError):
        # not numerically positive definite (an exactly zero pivot)
        return None
    return spla.LinearOperator((n, n), matvec=solve, dtype=np.float64)


def _rfp_position(i, j, n: int):
    """Positions of the lower-triangle entries ``(i, j)``, ``i >= j``, of an ``n x n``
    symmetric matrix in LAPACK's rectangular full packed format (``TRANSR="N"``,
    ``UPLO="L"``): ``n (n + 1) / 2`` numbers, the leading ``k`` columns of the lower triangle
    shifted down one row (``n`` even, ``k = n / 2``, leading dimension ``n + 1``) or not
    (``n`` odd, ``k = (n + 1) / 2``, leading dimension ``n``), the trailing triangle
    transposed into the space left above them."""
    if n % 2 == 0:
        k, lda, down, right = n // 2, n + 1, 1, 0
    else:
        k, lda, down, right = (n + 1) // 2, n, 0, 1
    return np.where(j < k, j * lda + i + down, (i - k + right) * lda + (j - k))


def _packed_shifted(L, sigma: float) -> np.ndarray:
    """``L - sigma I`` (symmetric, dense or sparse) in rectangular full packed format: half
    the memory of the square array, factorised by LAPACK's ``dpftrf`` at ``dpotrf``'s
    speed. A sparse CSR ``L`` is brought to canonical form in place."""
    n = L.shape[0]
    if not sp.issparse(L):
        # the lower triangle of L^T, an F-ordered view of C-ordered L (no copy)
        L = np.asarray(L, dtype=np.float64)
        src = L.T if L.flags.c_contiguous else np.asfortranarray(L)
        packed, info = lapack.dtrttf(src, transr="N", uplo="L")
        if info != 0:
            raise np.linalg.LinAlgError("dtrttf failed")
    else:
        L = sp.csr_matrix(L)
        # in place (the same matrix, its indices sorted and repeated entries summed): a copy
        # would add the whole sparse matrix to the peak
        L.sum_duplicates()
        packed = np.zeros(n * (n + 1) // 2)
        # by blocks of rows, so that the index arrays stay small
        step = max(1, (1 << 15) // max(1, L.nnz // max(n, 1)))
        for start in range(0, n, step):
            stop = min(n, start + step)
            lo, hi = L.indptr[start], L.indptr[stop]
            rows = np.repeat(np.arange(start, stop), np.diff(L.indptr[start : stop + 1]))
            cols = L.indices[lo:hi].astype(np.int64)
            low = rows >= cols
            packed[_rfp_position(rows[low], cols[low], n)] = L.data[lo:hi][low]
    diag = np.arange(n)
    packed[_rfp_position(diag, diag, n)] -= sigma
    return packed


def spectral_embedding_vectors(W, n_components: int, kind: str, rng, solver: str = "auto"):
    """Eigenvectors of the ``n_components`` smallest eigenvalues of a graph Laplacian.

    For ``kind="random_walk"`` these solve ``L u = lambda D u`` and are obtained as
    ``D^{-1/2} v`` from the eigenvectors ``v`` of ``L_sym`` (Remark 18 of Oxford
    "Advanced Topics in Statistical Machine Learning" §4.1.2).

    Returns
    -------
    eigenvalues : ndarray of shape (n_components,)
    vectors : ndarray of shape (N, n_components)
    """
    lap_kind = "symmetric" if kind == "random_walk" else kind
    dense = dense_route(W.shape[0], n_components, solver)
    L, deg = laplacian(W, lap_kind, dense=dense)
    vals, vecs = bottom_eigenpairs(L, n_components, rng, solver, laplacian=True, overwrite=True)
    if kind == "random_walk":
        vecs = vecs / np.sqrt(deg)[:, None]
    return vals, vecs


class SpectralClustering(ClusterMixin, BaseEstimator):
    """Spectral clustering: k-means on the bottom eigenvectors of a graph Laplacian.

    Parameters
    ----------
    n_clusters : int, default=8
        ``K``: number of clusters and of eigenvectors kept.
    affinity : {"rbf", "nearest_neighbors", "precomputed"}, default="rbf"
        Similarity graph: fully connected ``w_ij = exp(-gamma ||x_i - x_j||^2)``; the
        symmetric k-nearest-neighbour graph (``i ~ j`` when either is among the other's
        ``n_neighbors`` nearest, weight 1); or ``X`` itself is the adjacency matrix.
    gamma : float, default=1.0
        RBF width (``gamma = 1 / (2 sigma^2)`` in the notes' ``exp(-||.||^2 / (2 sigma^2))``).
    n_neighbors : int, default=10
    laplacian : {"random_walk", "symmetric", "unnormalized"}, default="random_walk"
        ``L_rw = I - D^{-1} W`` (normalised cut), ``L_sym = I - D^{-1/2} W D^{-1/2}`` or the
        unnormalised ``L = D - W`` (ratio cut).
    n_init : int, default=10
        Restarts of the k-means on the embedding.
    eigen_solver : {"auto", "dense", "arpack"}, default="auto"
        LAPACK on the dense Laplacian, or shift-invert Lanczos (ARPACK) on the sparse one;
        "auto" takes ARPACK above 500 points when ``n_clusters <= N / 10``.
    random_state : int, Generator, RandomState or None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    affinity_matrix_ : ndarray or sparse matrix of shape (n_samples, n_samples)
        ``W``.
    embedding_ : ndarray of shape (n_samples, n_clusters)
        Rows ``z_i`` of ``Z = [u_1 .. u_K]`` that k-means clusters.
    eigenvalues_ : ndarray of shape (n_clusters,)
        The ``K`` smallest eigenvalues (of ``L``, or of ``L_sym`` for both normalised kinds).
    n_features_in_ : int

    See Also
    --------
    mathlearn.manifold.SpectralEmbedding
        The embedding it clusters.
    mathlearn.utils.graph.ratio_cut
        The graph cut it relaxes.
    sklearn.cluster.SpectralClustering
        scikit-learn's equivalent.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" ch. 4 and §4.1: for the indicator
    vectors ``h_{k,i} = 1{i in C_k} / sqrt(|C_k|)``, ``RatioCut = sum_k h_k^T L h_k`` (Lemma 17);
    relaxing ``h`` to real orthonormal vectors gives the ``K`` eigenvectors of the smallest
    eigenvalues, and k-means on their rows rounds the relaxation back to a partition. The
    normalised Laplacians relax the normalised cut instead (Remark 18). A graph with ``c``
    connected components has ``c`` zero eigenvalues whose eigenvectors are the indicators of
    the components. Graph and Laplacians come from :mod:`mathlearn.utils.graph`, shared with
    the spectral embedding.

    Complexity: the RBF affinity costs ``O(N^2 D)`` time and ``O(N^2)`` memory; the k-NN
    graph ``O(N log N)`` time by the compiled kd-tree above 2 000 points in at most 12
    dimensions, otherwise ``O(N^2 D)`` by BLAS distances in blocks of about ``2^16``
    entries, each row's nearest picked in one compiled pass; its memory is
    ``O(N n_neighbors)``. The bottom ``K`` eigenpairs
    come from shift-invert Lanczos: a dense LU (``O(N^3 / 3)``) for RBF, a sparse LU of the
    k-NN Laplacian (its fill-in) for k-NN, then ``O(K)`` restarts of cost ``O(N K)`` plus the
    solves; the k-means on the ``N x K`` embedding ``O(n_init N K^2)`` per iteration.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from mathlearn.cluster import SpectralClustering
    >>> X, y = make_moons(200, noise=0.05, random_state=0)
    >>> sc = SpectralClustering(2, affinity="nearest_neighbors", random_state=0).fit(X)
    >>> bool((sc.labels_ == y).all() or (sc.labels_ != y).all())
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "affinity": [StrOptions({"rbf", "nearest_neighbors", "precomputed"})],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "laplacian": [StrOptions({"random_walk", "symmetric", "unnormalized"})],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "eigen_solver": [StrOptions({"auto", "dense", "arpack"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        affinity: str = "rbf",
        gamma: float = 1.0,
        n_neighbors: int = 10,
        laplacian: str = "random_walk",
        n_init: int = 10,
        eigen_solver: str = "auto",
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.affinity = affinity
        self.gamma = gamma
        self.n_neighbors = n_neighbors
        self.laplacian = laplacian
        self.n_init = n_init
        self.eigen_solver = eigen_solver
        self.random_state = random_state

    @_fit_context
    def fit(self, X, y=None):
        """Cluster ``X`` (or the adjacency matrix ``X`` when ``affinity="precomputed"``).

        Returns
        -------
        self : SpectralClustering
        """
        # A graph needs an edge: one point has no neighbour and zero degree.
        X = validate_data(
            self,
            X,
            dtype=np.float64,
            accept_sparse=self.affinity == "precomputed",
            ensure_min_samples=2,
        )
        n = X.shape[0]
        _check_n_clusters(self.n_clusters, n)
        rng = check_random_state(self.random_state)
        if self.affinity == "rbf":
            W = rbf_affinity(X, float(self.gamma))
        elif self.affinity == "nearest_neighbors":
            W = knn_graph(
                X,
                min(int(self.n_neighbors), n - 1),
                mode="connectivity",
                max_chunk_rows=knn_rows(n)
                if dense_route(n, self.n_clusters, self.eigen_solver)
                else None,
            )
        else:  # "precomputed"
            if X.shape[0] != X.shape[1]:
                raise ValueError(f"a precomputed affinity must be square; got {X.shape}.")
            W = X
            asym = abs(W - W.T)
            if (asym.max() if sp.issparse(W) else np.max(asym)) > 1e-10 * abs(W).max():
                raise ValueError("a precomputed affinity must be symmetric.")
        vals, Z = spectral_embedding_vectors(
            W, self.n_clusters, self.laplacian, rng, self.eigen_solver
        )
        km = KMeans(self.n_clusters, n_init=self.n_init, random_state=rng).fit(Z)
        self.affinity_matrix_ = W
        self.embedding_ = Z
        self.eigenvalues_ = vals
        self.labels_ = km.labels_
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.affinity == "precomputed"
        tags.input_tags.sparse = self.affinity == "precomputed"
        return tags
