"""Truncated-SVD factorisation of the (centred, zero-filled) ratings matrix."""

from __future__ import annotations

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import svds

from ..base import _fit_context
from ..utils._param_validation import Interval
from ..utils.validation import check_random_state
from ._factor import FactorModel


class TruncatedSVDRecommender(FactorModel):
    """Rank-k truncated SVD of the ratings matrix, split as ``P = U D^{1/2}``,
    ``Q = V D^{1/2}``.

    With ``center=True`` the SVD is taken of the residuals ``r_ui - mu - b_u - c_i`` (b, c
    the users' and items' mean offsets, computed in that order) on the observed entries, the
    missing entries counting as 0 (no residual); predictions add the baseline back. With
    ``center=False`` it is the SVD of the zero-filled ratings matrix itself. The sparse
    matrix is never densified (Lanczos / ARPACK via :func:`scipy.sparse.linalg.svds`).

    Parameters
    ----------
    n_components : int, default=10
        Rank k; must be below min(n_users, n_items).
    center : bool, default=True
        Remove the mean and bias baseline first.
    random_state : int, Generator or None, default=None
        Seed of the Lanczos start vector.

    Attributes
    ----------
    user_factors_ : ndarray of shape (n_users, n_components)
        U_k D_k^{1/2}.
    item_factors_ : ndarray of shape (n_items, n_components)
        V_k D_k^{1/2}.
    singular_values_ : ndarray of shape (n_components,)
        Largest first.
    user_bias_, item_bias_ : ndarray of shape (n_users,), (n_items,)
        The baseline offsets (zeros without centring).
    offset_ : float
        mu (0 without centring).
    global_mean_ : float
        Mean training rating.
    user_ids_, item_ids_ : ndarray
        The id maps.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §6.3: for a fully observed Y =
    U D V^T, Phi = U_k D_k^{1/2}, Psi = V_k D_k^{1/2} minimise (6.5) (Eckart-Young; the
    split of D is arbitrary). With missing entries this is not the minimiser of (6.6); filling
    them with the baseline is the "PureSVD" recommender of P. Cremonesi, Y. Koren, R. Turrin,
    "Performance of recommender algorithms on top-N recommendation tasks" (RecSys 2010).

    Complexity: with ``U`` users, ``I`` items, ``N`` observed ratings and rank ``k``, the
    baseline costs ``O(N)`` and the sparse residual matrix ``R`` ``O(N log N)`` at most (its
    conversion to CSR); ARPACK finds the ``k`` leading eigenvectors of the smaller of
    ``R^T R`` and ``R R^T`` (never formed) at ``O(N + m c)`` per application of that
    operator (two sparse products and the Lanczos orthogonalisation; ``m = min(U, I)``,
    ``c = max(2 k + 1, 20)`` Lanczos vectors) times the number of applications, which the
    gaps between the leading singular values set, plus ``O(N k + (U + I) k^2)`` to form the
    factors. Memory: ``R`` (``O(N)``), the Lanczos basis (``m c``) and the factors
    (``(U + I) k``); never a dense ``U x I`` array. ``predict`` costs ``O(k)`` per pair,
    ``recommend`` ``O(I k)``.

    See Also
    --------
    ALS : minimises the squared error on the observed entries only.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse as sp
    >>> from mathlearn.recommender import Ratings, TruncatedSVDRecommender
    >>> Y = np.outer([1.0, 2.0, 3.0], [1.0, 0.5, 2.0, 1.0])
    >>> r = Ratings.from_sparse(sp.csr_array(Y))
    >>> m = TruncatedSVDRecommender(1, center=False, random_state=0).fit(r)
    >>> bool(np.allclose(m.predict([2], [2]), 6.0))
    True
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "center": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components: int = 10, *, center: bool = True, random_state=None):
        self.n_components = n_components
        self.center = center
        self.random_state = random_state

    @_fit_context
    def fit(self, ratings, y=None) -> TruncatedSVDRecommender:
        """Compute the truncated SVD.

        Parameters
        ----------
        ratings : Ratings, scipy.sparse matrix (users x items) or DataFrame
            Training ratings.
        y : None
            Ignored.

        Returns
        -------
        self : TruncatedSVDRecommender
        """
        data = self._setup(ratings)
        k = int(self.n_components)
        if k >= min(data.shape):
            raise ValueError(
                f"n_components={k} must be below min(n_users, n_items) = {min(data.shape)}."
            )
        n_users, n_items = data.shape
        u, i, v = data.users, data.items, data.values
        if self.center:
            mu = self.global_mean_
            nu = np.bincount(u, minlength=n_users)
            bu = np.bincount(u, weights=v - mu, minlength=n_users) / np.maximum(nu, 1)
            ni = np.bincount(i, minlength=n_items)
            bi = np.bincount(i, weights=v - mu - bu[u], minlength=n_items) / np.maximum(ni, 1)
        else:
            mu, bu, bi = 0.0, np.zeros(n_users), np.zeros(n_items)
        resid = v - mu - bu[u] - bi[i]
        scale = float(np.max(np.abs(resid))) if resid.size else 0.0
        R = sp.csr_array((resid / scale if scale > 0 else resid, (u, i)), shape=data.shape)
        rng = check_random_state(self.random_state)
        v0 = rng.uniform(-1.0, 1.0, size=min(data.shape))
        if scale > 0:
            U, s, Vt = svds(R, k=k, v0=v0, solver="arpack")
        else:
            U, s, Vt = np.zeros((n_users, k)), np.zeros(k), np.zeros((k, n_items))
        order = np.argsort(-s, kind="stable")
        U, s, Vt = U[:, order], s[order] * scale, Vt[order]
        root = np.sqrt(s)
        self.user_factors_ = U * root
        self.item_factors_ = Vt.T * root
        self.singular_values_ = s
        self.user_bias_, self.item_bias_, self.offset_ = bu, bi, float(mu)
        self._has_biases = bool(self.center)
        self._finish()
        return self
