"""Classical (Torgerson-Gower) multidimensional scaling."""

from __future__ import annotations

from numbers import Integral
from typing import ClassVar

import numpy as np
import scipy.linalg as sla
import scipy.sparse.linalg as spla

from ..base import BaseEstimator, _fit_context
from ..utils._param_validation import Interval, StrOptions
from ..utils._rowscale import InUnits, unit_of
from ..utils.extmath import squared_distances
from ..utils.linalg import symmetric_operator
from ..utils.validation import check_array, validate_data

__all__ = ["MDS"]


# Above this many points (and for few components) the top eigenpairs come from Lanczos
# (ARPACK), O(N^2) per product, instead of a dense tridiagonal reduction, O(N^3).
_LANCZOS_MIN_N = 500


def classical_mds(D2: np.ndarray, n_components: int, *, overwrite: bool = False):
    """Classical MDS of a squared-dissimilarity matrix.

    Double-centres ``B = -0.5 H D2 H`` (``H = I - 11^T/N``) and returns the embedding
    ``V_k Lambda_k^{1/2}`` of its top ``k`` eigenpairs (negative eigenvalues, which a
    non-Euclidean ``D2`` can produce, give zero coordinates), plus what is needed to embed
    new points: the eigenvalues, the eigenvectors, the column means of ``-0.5 D2`` and their
    mean.

    ``overwrite=True`` lets ``B`` be formed in the memory of ``D2`` (one ``N x N`` array in
    all). For ``N >= 500`` and ``k <= N / 10`` the top ``k`` eigenpairs are computed by
    implicitly restarted Lanczos (ARPACK ``eigsh``, ``which="LA"``, converged to machine
    precision, ``tol=0``): ``O(N^2)`` per matrix-vector product and a few dozen products,
    against ``O(N^3)`` for the dense route; both give the same eigenpairs to the eigensolver
    tolerance (``eps ||B||`` for the eigenvalues, ``eps ||B|| / gap`` for the vectors).

    Returns
    -------
    embedding : ndarray of shape (N, k)
    eigenvalues : ndarray of shape (k,)
    eigenvectors : ndarray of shape (N, k)
    col_means : ndarray of shape (N,)
    grand_mean : float
    """
    n = D2.shape[0]
    if overwrite:
        B = D2
        B *= -0.5
    else:
        B = -0.5 * D2
    col_means = B.mean(axis=0)
    grand = float(col_means.mean())
    B -= col_means[None, :]
    B -= col_means[:, None]
    B += grand
    k = min(n_components, n)
    if n >= _LANCZOS_MIN_N and k <= n // 10:
        # A fixed start vector keeps the result deterministic.
        v0 = np.random.default_rng(0).uniform(-1.0, 1.0, n)
        # (symv products in SciPy's BLAS: half the memory traffic of a general product)
        w, V = spla.eigsh(symmetric_operator(B), k=k, which="LA", tol=0.0, v0=v0)
        order = np.argsort(w)
        w, V = w[order], V[:, order]
    elif k > n // 4:
        w, V = np.linalg.eigh(B)
        w, V = w[n - k :], V[:, n - k :]
    else:
        w, V = sla.eigh(B, subset_by_index=[n - k, n - 1], check_finite=False, driver="evx")
    w, V = w[::-1], V[:, ::-1]
    idx = np.argmax(np.abs(V), axis=0)
    signs = np.sign(V[idx, np.arange(k)])
    signs[signs == 0] = 1.0
    V = V * signs
    emb = V * np.sqrt(np.clip(w, 0.0, None))
    return emb, w, V, col_means, grand


class MDS(BaseEstimator):
    """Classical multidimensional scaling.

    Parameters
    ----------
    n_components : int, default=2
        Dimension of the embedding.
    dissimilarity : {"euclidean", "precomputed"}, default="euclidean"
        ``"euclidean"``: Euclidean distances between the rows of ``X``;
        ``"precomputed"``: ``X`` is a symmetric matrix of dissimilarities ``d_ij``
        (not squared) with a zero diagonal.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components)
        ``V_k Lambda_k^{1/2}``, column signs fixed (largest-magnitude entry positive).
    eigenvalues_ : ndarray of shape (n_components,)
        Top eigenvalues of the double-centred matrix ``B = -0.5 H D^2 H``.
    n_features_in_ : int

    See Also
    --------
    mathlearn.manifold.SStressMDS
        Squared-distance stress.
    mathlearn.decomposition.PCA
        The same embedding for Euclidean distances.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" §6.1 (slides 6:26-6:27) and
    Oxford "Advanced Topics in Statistical Machine Learning" §3.6: with ``D_ij = -d_ij^2 / 2``,
    ``K~ = H D H`` has entries ``(x_i - x_bar)^T (x_j - x_bar)`` when the ``d_ij`` are
    Euclidean, so classical MDS is kernel PCA of ``K~`` and, for Euclidean distances, the
    PCA scores (up to sign). The embedding ``Z = V_p Lambda_p^{1/2}`` minimises the strain
    ``||Z Z^T - K~||_F`` among rank-``p`` Gram matrices.

    Complexity: for ``N`` samples with ``D`` features, the squared distances cost
    ``O(N^2 D)`` time (BLAS, over blocks of rows; ``O(N^2)`` to check a precomputed matrix)
    and the double centring ``O(N^2)``. The top ``p`` eigenpairs cost ``O(N^2)`` per
    Lanczos product (ARPACK, for ``N >= 500`` and ``p <= N / 10``; a few dozen products for
    small ``p``) and ``O(N^3)`` otherwise (dense tridiagonal reduction). Memory: the
    ``N x N`` matrix of squared distances, centred in place (precomputed input also holds a
    few ``N x N`` temporaries during its checks), plus ``O(N p)`` for the eigenvectors and
    the embedding. There is no out-of-sample ``transform``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.manifold import MDS
    >>> X = np.array([[0., 0.], [3., 0.], [0., 4.]])
    >>> Z = MDS(n_components=2).fit_transform(X)
    >>> round(float(np.linalg.norm(Z[1] - Z[2])), 6)
    5.0
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "dissimilarity": [StrOptions({"euclidean", "precomputed"})],
    }

    def __init__(self, n_components: int = 2, *, dissimilarity: str = "euclidean"):
        self.n_components = n_components
        self.dissimilarity = dissimilarity

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.dissimilarity == "precomputed"
        return tags

    @_fit_context
    def fit(self, X, y=None):
        """Compute the embedding of ``X``; returns self."""
        self.fit_transform(X)
        return self

    @_fit_context
    def fit_transform(self, X, y=None):
        """Compute and return the embedding, shape (n_samples, n_components)."""
        X = validate_data(self, X, dtype=np.float64)
        n = X.shape[0]
        if n < 2:
            raise ValueError(f"MDS needs at least 2 samples; got n_samples = {n}.")
        k = int(self.n_components)
        if k > n:
            raise ValueError(f"n_components={k} must be an int in [1, n_samples={n}].")
        # Scale equivariant: data (or dissimilarities) of extreme magnitude are embedded in
        # units of a power of two (exact), the embedding mapped back and the eigenvalues read
        # in the data's units (InUnits); squared distances of 1e300 are not floats.
        self._unit = unit = unit_of(X)
        if self.dissimilarity == "euclidean":
            # Translation invariant: centre first, so data far from the origin keep their
            # digits whatever route the distance helper takes.
            X = X / unit if unit != 1.0 else X
            D2 = squared_distances(X - X.mean(axis=0))
        else:  # "precomputed"
            D = check_array(X, dtype=np.float64)
            if D.shape[0] != D.shape[1]:
                raise ValueError(f"precomputed dissimilarities must be square; got {D.shape}.")
            if np.any(D < 0):
                raise ValueError("dissimilarities must be non-negative.")
            if not np.allclose(D, D.T, atol=1e-10 * max(D.max(), 1.0)):
                raise ValueError("dissimilarity matrix is not symmetric.")
            if np.any(np.diag(D) != 0):
                raise ValueError("dissimilarity matrix must have a zero diagonal.")
            D = D / unit if unit != 1.0 else D
            D2 = (0.5 * (D + D.T)) ** 2
        emb, w, _, _, _ = classical_mds(D2, k, overwrite=True)
        if unit != 1.0:
            emb = emb * unit
        self.embedding_ = emb
        self.eigenvalues_ = w
        return emb

    # Fitted in units of a power of two (1.0 for ordinary data); see fit_transform.
    _unit = 1.0
    eigenvalues_ = InUnits(2)
