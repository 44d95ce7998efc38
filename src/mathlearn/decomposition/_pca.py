"""Principal component analysis: by SVD, by the N x N Gram matrix, by the D x D covariance,
or by a randomised range finder."""

from __future__ import annotations

from numbers import Integral
from typing import ClassVar

import numpy as np
import scipy.linalg as sla

from ..base import (
    BaseEstimator,
    ComponentNamesMixin,
    InformationCriterionMixin,
    TransformerMixin,
    _fit_context,
    check_is_fitted,
)
from ..utils._backend import is_dask
from ..utils._columns import column_means, column_sumsq
from ..utils._param_validation import (
    Interval,
    RealNotInt,
    StrOptions,
    validate_parameter_constraints,
)
from ..utils._rowscale import InUnits, centred_linear_map, check_log_density, unit_of
from ..utils._threads import matmul_beside_scipy
from ..utils.validation import assert_all_finite, check_random_state, validate_data
from ._base import flip_rows

__all__ = ["PCA"]

_SOLVERS = ("auto", "full", "gram", "covariance", "randomized")


def _householder_qr(A):
    """LAPACK's ``geqrf`` of ``A`` in place where ``A`` is column-major (its packed factor and
    the reflectors' scalars), with the workspace it asks for: the default of the wrapper is
    too small for the blocked code, which then factorises a column at a time (2 000 x 200:
    16 against 13 ms)."""
    geqrf = sla.get_lapack_funcs("geqrf", (A,))
    # (a workspace query reads nothing of A; overwrite_a keeps the wrapper from copying it)
    lwork = int(geqrf(A, lwork=-1, overwrite_a=True)[2][0].real)
    qr, tau, _, info = geqrf(A, lwork=max(lwork, 1), overwrite_a=True)
    if info != 0:
        raise np.linalg.LinAlgError(f"geqrf failed (info = {info}).")
    return qr, tau


def _apply_q(qr, tau, B):
    """``Q [B; 0]`` for the orthogonal factor ``Q`` (``M x M``) packed in ``qr`` by
    :func:`_householder_qr` and ``B`` of ``N`` rows (``ormqr``, ``Q`` not formed)."""
    m, k = qr.shape[0], B.shape[1]
    C = np.zeros((m, k), dtype=qr.dtype, order="F")
    C[: B.shape[0]] = B
    ormqr = sla.get_lapack_funcs("ormqr", (qr,))
    lwork = int(ormqr("L", "N", qr, tau, C, lwork=-1, overwrite_c=1)[1][0].real)
    out, _, info = ormqr("L", "N", qr, tau, C, lwork=max(lwork, 1, k), overwrite_c=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"ormqr failed (info = {info}).")
    return out


def randomized_range_svd(
    X: np.ndarray, k: int, *, n_oversamples: int = 10, n_iter: int = 4, rng=None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Truncated SVD ``X ~ U_k diag(s_k) V_k^T`` by a randomised range finder.

    Halko, Martinsson & Tropp (2011), Algorithms 4.4 and 5.1: sample the range of ``X``
    with a Gaussian test matrix, sharpen it with ``n_iter`` subspace (power) iterations, then
    take the exact SVD of the small ``(k + p) x D`` projection ``Q^T X``. Between the
    products each block is re-normalised so that its columns do not collapse onto the top
    singular vector. Only the block's column space matters there, not an orthonormal basis
    of it, so the intermediate passes use the permuted unit-lower-trapezoidal factor ``P L``
    of a partially pivoted LU (``Y = P L U`` spans the same space as ``Y``; ``|L_ij| <= 1``
    keeps the scale bounded), about half the work of a Householder QR with its explicit
    ``Q``. The last pass, whose basis enters ``Q^T X``, is a thin QR. Wide data (``N < D``)
    are handled as ``X^T = V S U^T``, so that the exact SVD is of a ``(k + p) x N`` matrix.
    """
    rng = check_random_state(rng)
    if X.shape[0] < X.shape[1]:
        V, s, Ut = randomized_range_svd(
            X.T, k, n_oversamples=n_oversamples, n_iter=n_iter, rng=rng
        )
        return Ut.T, s, V.T
    n, d = X.shape
    size = min(k + n_oversamples, n, d)
    Q = rng.standard_normal((d, size))
    # With BLAS threads, every product on SciPy's BLAS like the LU and QR factorisations
    # between them: the passes alternate product and factorisation, and a switch between
    # NumPy's and SciPy's OpenBLAS thread pools can stall for a scheduler tick (scipy_matmul).
    mm = matmul_beside_scipy()
    for _ in range(n_iter):
        # (X Q in row-major order: SciPy's LU of a row-major block, copied inside, was
        # measured 5% faster over product and factorisation than the column-major product
        # factorised in place)
        Q = _lu_basis(mm(X, Q))
        Q = _lu_basis(mm(X.T, Q))
    Q = sla.qr(_tall_product(X, Q, mm), mode="economic", overwrite_a=True, check_finite=False)[0]
    B = mm(Q.T, X)
    Uh, s, Vt = sla.svd(B, full_matrices=False, check_finite=False)
    U = mm(Q, Uh[:, :k])
    return U, s[:k], Vt[:k]


def _tall_product(X: np.ndarray, Q: np.ndarray, mm) -> np.ndarray:
    """``X Q`` (N x size) in column-major order, as ``(Q^T X^T)^T`` (``mm`` the product):
    LAPACK factorises it in place (``overwrite_a``), where a row-major product would be
    copied first; the tall N x size blocks are the method's memory beyond X."""
    return mm(Q.T, X.T).T


def _lu_basis(Y: np.ndarray) -> np.ndarray:
    """``P L`` of the partially pivoted ``Y = P L U``: a well-scaled basis of ``range(Y)``."""
    return sla.lu(Y, permute_l=True, overwrite_a=True, check_finite=False)[0]


def _scatter(X: np.ndarray, mean: np.ndarray, gram: np.ndarray | None = None):
    """``X_c^T X_c`` and the refinement of the mean (see :func:`_centred_scatter`).

    ``X^T X - N m m^T`` needs no centred pass, and its rounding error, about
    ``eps N (var_j + m_j^2)`` in row and column ``j``, is of the size of the eigensolver's
    own (``eps N var``) when every ``m_j^2 <= var_j``: data whose offset is within a standard
    deviation of the origin take that route. Otherwise the offset would cancel digits (off
    by a factor for iris + 1e8), and the rows are centred first. The test uses the
    uncentred estimate of ``var_j``, which is accurate exactly when it passes. ``gram``, where
    given, is ``X^T X`` already formed (its diagonal then serves as ``sumsq``); it is
    overwritten.
    """
    n = X.shape[0]
    sumsq = column_sumsq(X) if gram is None else np.diag(gram).copy()
    if np.all(mean * mean * n <= sumsq - n * mean * mean):
        C = X.T @ X if gram is None else gram
        C -= n * np.outer(mean, mean)
        return C, np.zeros_like(mean)
    return _centred_scatter(X, mean)


def _centred_scatter(X: np.ndarray, mean: np.ndarray, block: int = 4096):
    """``X_c^T X_c`` of the data centred at their refined mean, without a centred copy.

    ``X^T X - N m m^T`` would cancel the digits of the spread when ``|mean| >> std`` (off by
    a factor for iris + 1e8), so each block of rows is centred before its product. The
    first mean is off by its rounding, about ``eps |mean|``; the mean ``s`` of the centred
    rows measures that error, and ``sum (x - m - s)(x - m - s)^T = sum (x - m)(x - m)^T -
    N s s^T`` corrects the scatter with no cancellation (``s`` is tiny). Returns the scatter
    and ``s``.
    """
    n, d = X.shape
    C = np.zeros((d, d), dtype=np.result_type(X.dtype, np.float32))
    total = np.zeros(d, dtype=C.dtype)
    buf = np.empty((min(block, n), d), dtype=np.result_type(X.dtype, mean.dtype))
    for start in range(0, n, block):
        Xb = X[start : start + block]
        B = buf[: Xb.shape[0]]
        np.subtract(Xb, mean, out=B)
        C += B.T @ B
        total += B.sum(axis=0)
    shift = total / n
    C -= n * np.outer(shift, shift)
    return C, shift


def _column_blocks(n: int, d: int):
    """Column slices of an N x D array in blocks of about 1 MiB (at least 256 columns, so
    that each block's product keeps the BLAS busy)."""
    width = max(256, (1 << 17) // max(n, 1))
    return [slice(j, min(j + width, d)) for j in range(0, d, width)]


def _centred_gram(X: np.ndarray, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``G = X_c X_c^T`` with ``X_c = (X - mean) - shift``, ``shift`` the column means of
    ``X - mean`` (the rounding error of ``mean``, refined away), formed one block of
    columns at a time: ``sum_blocks B B^T``, without an N x D centred copy."""
    n, d = X.shape
    G = np.zeros((n, n), dtype=X.dtype)
    shift = np.empty(d, dtype=X.dtype)
    for cols in _column_blocks(n, d):
        B = np.subtract(X[:, cols], mean[cols], dtype=X.dtype)
        shift[cols] = B.mean(axis=0)
        B -= shift[cols]
        G += B @ B.T
    return G, shift


def _centred_product(A: np.ndarray, X: np.ndarray, mean: np.ndarray, shift: np.ndarray):
    """``A X_c`` for ``X_c = (X - mean) - shift``, one block of columns at a time."""
    out = np.empty((A.shape[0], X.shape[1]), dtype=np.result_type(A, X))
    for cols in _column_blocks(*X.shape):
        B = np.subtract(X[:, cols], mean[cols], dtype=X.dtype)
        B -= shift[cols]
        out[:, cols] = A @ B
    return out


class PCA(InformationCriterionMixin, ComponentNamesMixin, TransformerMixin, BaseEstimator):
    """Principal component analysis.

    Projects centred data onto the ``k`` orthonormal directions of largest variance: the top
    eigenvectors of the sample covariance, equivalently the top right singular vectors of the
    centred data matrix.

    Parameters
    ----------
    n_components : int, float or None, default=None
        Number of components kept. An int in ``[1, min(n_samples, n_features)]``; a float in
        ``(0, 1)``: the fewest components whose explained variance ratio reaches that fraction;
        ``None``: ``min(n_samples, n_features)``.
    whiten : bool, default=False
        Scale the projections to unit variance (Imperial
        "Mathematics for Inference and Machine Learning" §2.1.4.3, eq. 2.58; PRML §12.1.3): ``y =
        Lambda^{-1/2} U^T (x - mean)``.
    svd_solver : {"auto", "full", "gram", "covariance", "randomized"}, default="auto"
        ``"full"``: thin SVD of the centred ``(N, D)`` data (LAPACK ``gesdd``); ``fit`` on
        tall data (``N > D``), which needs no left vectors, takes the SVD of the triangular
        factor of ``X_c = Q R`` instead (the same singular values and right vectors to the
        same backward error, in ``2 N D^2`` operations and no ``N x D`` factor besides the
        centred copy, factorised in place). On wide data (``N < D``) it factorises
        ``X_c^T = Q R`` in place and takes the SVD of the ``N x N`` factor: ``X_c = V_R S
        (Q U_R)^T``, the kept axes ``Q U_R[:, :k]`` formed by applying the reflectors to
        ``N x k`` numbers (``2 N^2 D + O(N^3 + N D k)`` operations, no ``D x N`` factor;
        gesdd forms one, about 2.5 times the time at 200 x 2 000).
        ``"gram"``: eigendecomposition of the ``N x N`` Gram matrix ``X_c X_c^T`` and
        ``U = X_c^T V Lambda^{-1/2}`` (Imperial "Mathematics for Inference and Machine Learning"
        §2.1.4.3, Lemma 1 and Algorithm 1): ``O(N^2 D)`` time and no ``D x D`` matrix, the route
        for ``D >> N`` (the faces case); both products are formed from blocks of centred
        columns (about 1 MiB each), so no centred ``N x D`` copy is made either. Components
        of zero variance cannot be recovered this way; if more are asked for than the rank,
        the thin SVD is used instead.
        ``"covariance"``: eigendecomposition of the ``D x D`` scatter matrix
        ``X_c^T X_c`` of the centred data, the cheap route for ``N >> D`` (it squares the
        condition number: eigenvalues are accurate to about ``eps`` times the largest, so use
        ``"full"`` for small trailing eigenvalues). The data are centred first, so an offset
        (data far from the origin) costs no accuracy, unlike ``X^T X - N m m^T``.
        ``"randomized"``: randomised range finder (Halko et al. 2011), for large data and few
        components; approximate.
        ``"auto"``: for ``D > N``, ``"gram"`` unless ``"randomized"`` (allowed for an int
        ``n_components < 0.8 N`` and ``D > 500``) costs fewer operations: about
        ``2 (2 q + 2) N D (k + p)`` for ``q`` power passes of ``k + p`` vectors against
        ``N^2 D + 10 N^3`` for the Gram matrix and its eigendecomposition;
        ``"covariance"`` when ``N >= 10 D`` and ``D <= 1000``; ``"randomized"`` when
        ``max(N, D) > 500`` and an int ``n_components < 0.8 min(N, D)``; otherwise
        ``"full"``.
    iterated_power : int or "auto", default="auto"
        Power iterations of the randomised solver (``"auto"``: 7 when
        ``n_components < 0.1 min(N, D)``, else 4).
    n_oversamples : int, default=10
        Extra random directions of the randomised solver.
    random_state : int, Generator, RandomState or None, default=None
        Randomness of the randomised solver.

    Attributes
    ----------
    components_ : ndarray of shape (n_components_, n_features)
        Principal axes (rows, orthonormal), sorted by decreasing variance. Signs are fixed so
        that the largest-magnitude entry of each row is positive.
    explained_variance_ : ndarray of shape (n_components_,)
        Variance along each axis, ``s_i^2 / (N - 1)`` (scikit-learn's unbiased scaling; the
        notes' ``1/N`` scaling, PRML §12.1, is ``explained_variance_ * (N - 1) / N``).
        For data of extreme magnitude (variances beyond float64, e.g. ``X * 1e300``) the
        fit runs in units of a power of two, and reading ``explained_variance_``,
        ``singular_values_`` or ``noise_variance_`` raises a ``ValueError`` when the value
        is not a float64 in the data's units; the axes, ratios, projections and
        log-likelihoods are unaffected.
    explained_variance_ratio_ : ndarray of shape (n_components_,)
        Fraction of the total variance along each axis.
    singular_values_ : ndarray of shape (n_components_,)
        Singular values of the centred data.
    mean_ : ndarray of shape (n_features,)
    n_components_ : int
    noise_variance_ : float
        Mean variance of the discarded directions (the PPCA ``sigma^2`` in scikit-learn's
        scaling); 0 when all are kept.
    n_samples_ : int
    n_features_in_ : int
    solver_ : str
        The solver actually used.

    See Also
    --------
    mathlearn.decomposition.ProbabilisticPCA
        PCA as a latent-variable model with a likelihood.
    mathlearn.decomposition.KernelPCA
        Principal components in a feature space.
    sklearn.decomposition.PCA
        scikit-learn's equivalent.

    Notes
    -----
    With centred data ``X_c = U S V^T`` (rows are samples), the principal axes are the rows of
    ``V^T``, the projections ``X_c V = U S`` and the eigenvalues of the covariance
    ``S^2 / (N - 1)`` (Imperial "Mathematics for Inference and Machine Learning" §2.1.4.1 and
    §2.1.4.4; Oxford "Advanced Topics in Statistical Machine Learning" §1.1.1). The reconstruction
    ``x~ = mean + V_k V_k^T (x - mean)`` minimises the squared error among rank-``k``
    reconstructions (Imperial "Mathematics for Inference and Machine Learning" §2.1.4.2;
    Eckart-Young, §2.1.3.2, Theorem 1); its mean squared error on the training data is the sum of
    the discarded eigenvalues of the ``1/N`` covariance (PRML §12.1.2). Lemma 1 of Imperial
    "Mathematics for Inference and Machine Learning" §2.1.4.3: ``X_c X_c^T`` and ``X_c^T X_c``
    share their positive eigenvalues and ``U = X_c^T V Lambda^{-1/2}``; zero eigenvalues are
    discarded before the division.

    ``score``, ``score_samples`` and ``get_covariance`` read the fit as probabilistic PCA
    (PRML §12.2) with ``sigma^2 = noise_variance_``, as scikit-learn's ``PCA.score`` does,
    so ``GridSearchCV`` can choose ``n_components`` by held-out likelihood; ``aic(X)`` and
    ``bic(X)`` use that likelihood with ``M = D q - q (q - 1) / 2 + D`` free parameters, plus
    one for ``sigma^2`` when ``q < D`` (those of :class:`ProbabilisticPCA`).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.decomposition import PCA
    >>> X = np.array([[2., 1.], [0., 3.], [-2., -1.], [0., -3.], [1., 1.], [-1., -1.]])
    >>> pca = PCA(n_components=1).fit(X)
    >>> np.round(pca.components_, 6)
    array([[0.382683, 0.92388 ]])
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="neither"),
            None,
        ],
        "whiten": ["boolean"],
        "svd_solver": [StrOptions(set(_SOLVERS))],
        "iterated_power": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
        "n_oversamples": [Interval(Integral, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components: int | float | None = None,
        *,
        whiten: bool = False,
        svd_solver: str = "auto",
        iterated_power: int | str = "auto",
        n_oversamples: int = 10,
        random_state=None,
    ):
        self.n_components = n_components
        self.whiten = whiten
        self.svd_solver = svd_solver
        self.iterated_power = iterated_power
        self.n_oversamples = n_oversamples
        self.random_state = random_state

    def _choose_solver(self, n, d, k):
        solver = self.svd_solver
        if solver != "auto":
            if solver == "randomized" and not isinstance(k, Integral):
                raise ValueError("svd_solver='randomized' needs an integer n_components.")
            return solver
        if d > n:
            if d > 500 and isinstance(k, Integral) and k < 0.8 * n:
                q = self._power_passes(n, d, k)
                size = min(k + self.n_oversamples, n)
                if 2.0 * (2 * q + 2) * n * d * size < float(n) * n * d + 10.0 * float(n) ** 3:
                    return "randomized"
            return "gram"
        if n >= 10 * d and d <= 1000:
            return "covariance"
        if max(n, d) > 500 and isinstance(k, Integral) and k < 0.8 * min(n, d):
            return "randomized"
        return "full"

    def _power_passes(self, n, d, k) -> int:
        """Power iterations of the randomised solver (``iterated_power``, resolved)."""
        if self.iterated_power == "auto":
            return 7 if k < 0.1 * min(n, d) else 4
        return int(self.iterated_power)

    def _checked_k(self, n, d):
        k = self.n_components
        if isinstance(k, Integral):
            if k > min(n, d):
                raise ValueError(
                    f"n_components={k} must be between 1 and {min(n, d)} "
                    "(min(n_samples, n_features) for these data)."
                )
            k = int(k)
        elif k is not None:
            k = float(k)
        return k

    @_fit_context
    def fit(self, X, y=None):
        """Fit the principal axes to ``X`` of shape (n_samples, n_features); returns self."""
        self._fit(X, need_u=False)
        return self

    @_fit_context
    def fit_transform(self, X, y=None):
        """Fit and return the projections of ``X``, shape (n_samples, n_components_)."""
        U, s = self._fit(X)
        if U is None or self._unit != 1.0:
            return self.transform(X)
        Z = U[:, : self.n_components_] * (
            np.sqrt(self.n_samples_ - 1) if self.whiten else s[: self.n_components_]
        )
        return Z

    def _fit(self, X, need_u=True):
        """Fit; returns ``(U, s)``, ``U`` None where the solver did not form it
        (``need_u`` false lets the full solver skip it on tall data)."""
        if is_dask(X):
            return self._fit_dask(X)
        # finiteness is checked below, by a pass that the fit needs anyway where it can be
        X = validate_data(self, X, dtype=[np.float64, np.float32], ensure_all_finite=False)
        n, d = X.shape
        if n < 2:
            raise ValueError(f"PCA needs at least 2 samples; got n_samples = {n} (1 sample).")
        k = self._checked_k(n, d)
        solver = self._choose_solver(n, d, k)
        # Data of extreme magnitude (squares beyond float64) are fitted in units of a power
        # of two, exactly; lengths and variances are read back in the data's units (InUnits).
        unit = mean = gram = None
        if solver == "covariance" and X.dtype == np.float64:
            # X^T X, which the scatter needs, also settles what unit_of and the finiteness
            # check would: its diagonal holds the column sums of squares, which a NaN or
            # infinite entry makes NaN or inf; each computed sum is at least the largest
            # computed square and at most N times the largest possible one (rounding is
            # monotone, every term >= 0, in any order of summation), so a largest sum in
            # (N 2^-480, 2^480) puts max |x| in [2^-240, 2^240], the range that unit_of
            # leaves in unit 1. Otherwise both run as they did (the product is dropped).
            with np.errstate(over="ignore", invalid="ignore"):  # checked below
                mean, gram = column_means(X), X.T @ X
            top = float(np.max(np.diag(gram)))
            if n * 2.0**-480 < top < 2.0**480:
                unit = 1.0
            else:
                gram = None
        if unit is None:
            assert_all_finite(X, input_name="X", estimator_name=type(self).__name__)
            unit = unit_of(X)
            if unit != 1.0:
                X = X / unit
                mean = None
        self._unit = unit
        # Our own centred copy (the solvers below may overwrite it), with one refinement of
        # the mean: the mean of the centred data is the rounding error of the first mean,
        # which for data far from the origin is of the order of eps * |offset|.
        if mean is None:
            mean = column_means(X)
        if solver == "covariance":
            C, shift = _scatter(X, mean, gram=gram)
        elif solver == "gram":
            # Block of columns at a time: no N x D centred copy (wide data: the largest array)
            G, shift = _centred_gram(X, mean)
        else:
            # (column-major where the full solver factorises it in place without U)
            order = "F" if solver == "full" and not need_u and n > d else "C"
            X = np.subtract(X, mean, out=np.empty(X.shape, dtype=X.dtype, order=order))
            shift = X.mean(axis=0)
            X -= shift
        self.mean_ = mean + shift
        U = None
        total_var = None
        if solver == "gram":
            w, V = np.linalg.eigh(G)
            del G
            w, V = w[::-1], V[:, ::-1]
            # Rank after centring is at most N - 1 (Imperial
            # "Mathematics for Inference and Machine Learning" §2.1.4.3): drop the (numerically)
            # zero eigenvalues before forming Lambda^{-1/2}.
            tol = max(w[0], 0.0) * max(n, d) * np.finfo(X.dtype).eps
            rank = int(np.sum(w > tol))
            want = min(n, d) if k is None else k
            if isinstance(want, int) and want > rank:
                solver = "full"
                X = np.subtract(X, mean, dtype=X.dtype)  # the full solver's centred copy
                X -= shift
            else:
                s_all = np.sqrt(np.clip(w, 0.0, None))[: min(n, d)]
                s = s_all[:rank]
                # Only the axes that will be kept (all of them for a variance fraction,
                # which is resolved later): a rank x D array for k of them is D x N memory
                # spent on wide data.
                rows = min(want, rank) if isinstance(want, int) else rank
                Vt = _centred_product(V[:, :rows].T, X, mean, shift)
                Vt /= s[:rows, None]
                U = V[:, :rank]
        if solver == "covariance":
            w, V = np.linalg.eigh(C)
            s_all = np.sqrt(np.clip(w[::-1], 0.0, None))[: min(n, d)]
            s = s_all
            Vt = V[:, ::-1].T[: min(n, d)]
        elif solver == "full" and not need_u and n > d:
            # fit() needs no U: the SVD of the triangular factor of X_c = Q R has the
            # singular values and right vectors of X_c to the same backward error, without
            # forming the N x D factors Q and U (LAPACK's gesdd would, at about three times
            # the cost on tall data)
            R = np.triu(_householder_qr(X)[0][:d])
            _, s, Vt = sla.svd(R, full_matrices=False, check_finite=False, lapack_driver="gesdd")
            s_all = s
        elif solver == "full" and n < d:
            # Wide data: X_c^T = Q R (X_c^T is the C-ordered copy read column-major, factorised
            # in place), so X_c = R^T Q^T and, with R = U_R S V_R^T, X_c = V_R S (Q U_R)^T:
            # the singular values, U = V_R, and the kept right vectors Q U_R[:, :k] (Q
            # applied to N x k numbers, not formed). gesdd takes the same steps (an LQ
            # factorisation first) but forms the D x N factor and multiplies by it: about
            # 2.5 times the time at 200 x 2 000.
            qr, tau = _householder_qr(X.T)
            Ur, s, Vr = sla.svd(
                np.triu(qr[:n]), full_matrices=False, check_finite=False, lapack_driver="gesdd"
            )
            rows = n if not isinstance(k, Integral) else int(k)
            Vt = _apply_q(qr, tau, Ur[:, :rows]).T
            U = Vr.T if need_u else None
            s_all = s
        elif solver == "full":
            U, s, Vt = sla.svd(
                X,
                full_matrices=False,
                check_finite=False,
                overwrite_a=True,
                lapack_driver="gesdd",
            )
            s_all = s
        elif solver == "randomized":
            n_iter = self._power_passes(n, d, k)
            U, s, Vt = randomized_range_svd(
                X, k, n_oversamples=self.n_oversamples, n_iter=int(n_iter), rng=self.random_state
            )
            s_all = None
            total_var = float(np.einsum("ij,ij->", X, X)) / (n - 1)
        return self._finish(U, s, Vt, s_all, total_var, n, d, k, solver, X.dtype, unit)

    def _fit_dask(self, X):
        from ._dask import pca_fit_dask

        return pca_fit_dask(self, X)

    def _finish(self, U, s, Vt, s_all, total_var, n, d, k, solver, dtype, unit):
        """The fitted attributes from the spectrum (``s_all`` None: only the top ``k``)."""
        ev_all = None if s_all is None else s_all**2 / (n - 1)
        if total_var is None:
            total_var = float(np.sum(ev_all))
        if k is None:
            k = min(n, d)
        elif isinstance(k, float):
            ratio_cum = np.cumsum(ev_all) / total_var if total_var > 0 else np.ones_like(ev_all)
            k = int(np.searchsorted(ratio_cum, k, side="right") + 1)
            k = min(k, len(ev_all))
        signs = flip_rows(Vt[:k])
        self.components_ = (Vt[:k] * signs[:, None]).astype(dtype, copy=False)
        self.singular_values_ = s[:k].copy()
        self.explained_variance_ = ev_k = s[:k] ** 2 / (n - 1)
        if total_var > 0:
            self.explained_variance_ratio_ = ev_k / total_var
        else:
            self.explained_variance_ratio_ = np.zeros(k)
        rest = min(n, d) - k
        if rest > 0:
            if ev_all is not None:
                self.noise_variance_ = float(np.mean(ev_all[k:]))
            else:
                self.noise_variance_ = max(total_var - ev_k.sum(), 0.0) / rest
        else:
            self.noise_variance_ = 0.0
        if self.whiten and np.any(ev_k <= np.finfo(float).tiny):
            raise ValueError(
                "whiten=True but a kept component has zero variance (constant or collinear "
                "features); lower n_components."
            )
        self.n_components_ = k
        self.n_samples_ = n
        self.solver_ = solver
        self.mean_ = self.mean_ * unit
        if U is not None:
            U = U[:, :k] * signs
        return U, s

    # Fits in units of a power of two (see _map_back); 1.0 for ordinary data.
    _unit = 1.0

    # Scale-carrying attributes, stored in the units of the fit (see _fit and InUnits):
    # a variance of data of size 1e300 (1e600) is not a float, while the axes, ratios,
    # projections and log-likelihoods computed from the fit's units all are.
    singular_values_ = InUnits(1)
    explained_variance_ = InUnits(2)
    noise_variance_ = InUnits(2)

    def _std_unit(self):
        """``sqrt(explained_variance_)`` without forming the variance in the data's units."""
        return np.sqrt(PCA.explained_variance_.fitted(self)) * self._unit

    def transform(self, X):
        """Project ``X`` onto the principal axes: ``(X - mean_) @ components_.T``.

        Whitened (``whiten=True``) projections are divided by ``sqrt(explained_variance_)``.
        A Dask array gives a lazy Dask array.
        """
        check_is_fitted(self)
        if is_dask(X):
            from ._dask import pca_transform_dask

            return pca_transform_dask(self, X)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        if self.whiten:
            scale = self._std_unit()

            def project(Xc):
                return (Xc @ self.components_.T) / scale
        else:

            def project(Xc):
                return Xc @ self.components_.T

        return centred_linear_map(X, self.mean_, project, what="the projection")

    def inverse_transform(self, X):
        """Map projections back to data space: ``mean_ + Z @ components_``."""
        check_is_fitted(self)
        Z = np.asarray(X, dtype=self.components_.dtype)  # float32 fits stay float32
        if Z.ndim != 2 or Z.shape[1] != self.n_components_:
            raise ValueError(
                f"inverse_transform expects shape (n_samples, {self.n_components_}); "
                f"got {Z.shape}."
            )
        if self.whiten:
            Z = Z * self._std_unit()
        return Z @ self.components_ + self.mean_

    def reconstruction_error(self, X, n_components: int | None = None) -> float:
        """Mean squared reconstruction error ``mean_i ||x_i - x~_i||^2`` with the first
        ``n_components`` axes (default: all kept).

        On the training data this equals the sum of the discarded eigenvalues of the ``1/N``
        covariance (the distortion of PRML §12.1.2).
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        m = self.n_components_ if n_components is None else n_components
        validate_parameter_constraints(
            {"n_components": [Interval(Integral, 1, self.n_components_, closed="both")]},
            {"n_components": m},
            "PCA.reconstruction_error",
        )
        Xc = X - self.mean_
        V = self.components_[:m]
        R = Xc - (Xc @ V.T) @ V
        return float(np.mean(np.einsum("ij,ij->i", R, R)))

    def _ppca_spectrum(self):
        """Eigenvalues of the PPCA covariance along the kept axes, and ``sigma^2``, in units
        of ``_unit^2``."""
        check_is_fitted(self)
        d = self.n_features_in_
        s2 = float(PCA.noise_variance_.fitted(self))
        ev = np.maximum(np.asarray(PCA.explained_variance_.fitted(self), dtype=float), s2)
        if (self.n_components_ < d and not s2 > 0) or not np.all(ev > 0):
            raise ValueError(
                "the PPCA density of this PCA is degenerate (noise_variance_ = 0 or a kept "
                "component of zero variance); fit with fewer components than the rank."
            )
        return ev, s2

    def get_covariance(self) -> np.ndarray:
        """PPCA model covariance ``V^T diag(lambda - sigma^2) V + sigma^2 I``, (D, D).

        ``lambda`` are ``explained_variance_`` (clipped below at ``sigma^2 =
        noise_variance_``), ``V`` the rows of ``components_``; as scikit-learn's
        ``PCA.get_covariance`` without whitening (PRML §12.2; whitening does not change
        the model here).
        """
        check_is_fitted(self)
        s2 = float(self.noise_variance_)
        V = np.asarray(self.components_, dtype=float)
        diff = np.maximum(np.asarray(self.explained_variance_, dtype=float) - s2, 0.0)
        C = (V.T * diff) @ V
        C.flat[:: C.shape[0] + 1] += s2
        return C

    def score_samples(self, X):
        """Log-likelihood of each sample under the PPCA model of the fit, shape (n_samples,).

        ``C = V^T diag(lambda) V + sigma^2 (I - V^T V)`` has eigenvalues ``lambda`` along the
        kept axes and ``sigma^2`` across them, so ``ln|C|`` and ``x^T C^{-1} x`` need no
        ``D x D`` matrix (PRML §12.2; scikit-learn's ``PCA.score_samples``).
        """
        ev, s2 = self._ppca_spectrum()
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        X = np.asarray(X, dtype=float)
        mean = np.asarray(self.mean_, dtype=float)
        # Each row in units of its largest entry (the quadratic form is homogeneous), so that
        # rows near the overflow threshold never give NaN; a log-likelihood below the float
        # range is an error naming the row.
        sc = np.maximum(np.max(np.abs(X), axis=1), np.max(np.abs(mean)))
        sc = np.where(sc > 0, sc, 1.0)
        Xc = X / sc[:, None] - mean / sc[:, None]
        d = Xc.shape[1]
        V = np.asarray(self.components_, dtype=float)
        P = Xc @ V.T
        quad = np.einsum("ij,ij->i", P, P / ev)
        logdet = float(np.sum(np.log(ev)))
        if self.n_components_ < d:
            # The part of x - mean off the kept axes, formed as a residual (no cancellation
            # of ||x||^2 - ||P||^2).
            R = Xc - P @ V
            quad += np.einsum("ij,ij->i", R, R) / s2
            logdet += (d - self.n_components_) * np.log(s2)
        # ev and s2 are in units of _unit^2 (see InUnits).
        logdet += 2.0 * d * np.log(self._unit)
        with np.errstate(over="ignore"):
            ratio = sc / self._unit
            quad = quad * ratio * ratio
            out = -0.5 * (d * np.log(2.0 * np.pi) + logdet + quad)
        return check_log_density(out, X, what="the log-likelihood")

    def score(self, X, y=None) -> float:
        """Mean PPCA log-likelihood of ``X`` (scikit-learn's ``PCA.score``)."""
        return float(np.mean(self.score_samples(X)))

    def _total_log_likelihood(self, X, y=None) -> float:
        return float(np.sum(self.score_samples(X)))

    def _n_parameters(self) -> int:
        D, q = self.components_.shape[1], self.components_.shape[0]
        return D * q - q * (q - 1) // 2 + D + int(q < D)
