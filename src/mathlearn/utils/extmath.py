"""Numerically stable elementwise and reduction functions.

``logsumexp``, the sigmoid and its logarithm come from ``scipy.special``, which computes them
stably; this module names them the way the notes do and adds ``softplus``, the softmaxes and
squared Euclidean distances computed through BLAS without ``(N, M, D)`` temporaries.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit, log_expit, log_softmax, logsumexp, softmax

from ._threads import faulted_empty, gram_beside_scipy

__all__ = [
    "log_sigmoid",
    "log_softmax",
    "logsumexp",
    "sigmoid",
    "softmax",
    "softplus",
    "squared_distances",
]

#: The logistic sigmoid ``1 / (1 + exp(-x))``, stable for large ``|x|``.
sigmoid = expit
#: ``log sigmoid(x) = -softplus(-x)``, stable for large ``|x|``.
log_sigmoid = log_expit


def softplus(x: ArrayLike) -> np.ndarray:
    """``log(1 + exp(x))`` without overflow: ``logaddexp(0, x)``.

    Parameters
    ----------
    x : array-like
        Input values.

    Returns
    -------
    ndarray
        ``softplus(x)``, elementwise.

    Examples
    --------
    >>> from mathlearn.utils.extmath import softplus
    >>> float(softplus(1000.0)), float(softplus(0.0)) == float(np.log(2.0))
    (1000.0, True)
    """
    return np.logaddexp(0.0, x)


# Pairs whose squared distance is below this fraction of ``||x||^2 + ||y||^2`` (after
# centring) are recomputed from the difference ``x - y``: the norm expansion's rounding error
# is at most about ``2 (D + 2) eps (||x||^2 + ||y||^2)``, so every entry left from the
# expansion keeps a relative error below ``2 (D + 2) eps / _RECOMPUTE`` (~1e-9 for D = 10).
_RECOMPUTE = 1e-6

# Arrays up to this many entries take BLAS rank-one updates (``dger``) for a sum or
# difference broadcast along one axis: on arrays this small NumPy buffers a broadcast
# operation in a temporary as large as the array; on larger ones that buffer is a small part
# of them and NumPy's own operation is kept (used by the k-NN blocks of ``utils.graph`` and
# the centring of ``linear_model._bayes``).
_GER_MAX_ENTRIES = 2**15


# Entries below which a sum of squares is taken without BLAS (see sum_of_squares).
_UNTHREADED_SUM = 1 << 20


def sum_of_squares(X: np.ndarray) -> float:
    """``sum_ij X_ij^2`` of a float array.

    Below ``2^20`` entries by NumPy's ``einsum`` (no BLAS): OpenBLAS runs ``ddot`` on its
    thread pool from 10 000 entries, and waking a pool whose worker has slept costs a
    scheduler tick or more on a machine with no idle core to spare. On the project's 2-core
    machine, right after scikit-learn's KMeans (its OpenMP pool) had run, ``np.vdot`` of
    2e4 entries took 0.1-0.2 ms or 4-9 ms (5 calls in 12), ``einsum`` 0.05 ms every time.
    From ``2^20`` entries up, ``vdot``: a pass over 8 MB, where the pool pays (at 2e7
    entries, one thread: 4.7 ms against 8.4 ms for ``einsum``).
    """
    X = np.asarray(X)
    if X.size < _UNTHREADED_SUM:
        flat = X.reshape(-1)  # (a copy only for a non-contiguous X)
        return float(np.einsum("i,i->", flat, flat))
    return float(np.vdot(X, X))


def _power_of_two_below(m: float) -> float:
    """The power of two ``2**e`` with ``2**e <= m < 2**(e + 1)``: dividing by it is exact."""
    return float(np.ldexp(1.0, int(np.frexp(m)[1]) - 1))


def _direct(X: np.ndarray, Y: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    out = np.empty(rows.size)
    step = max(1, 2**22 // max(X.shape[1], 1))
    for a in range(0, rows.size, step):
        diff = X[rows[a : a + step]] - Y[cols[a : a + step]]
        out[a : a + step] = np.einsum("ij,ij->i", diff, diff)
    return out


def squared_distances(
    X: ArrayLike,
    Y: ArrayLike | None = None,
    *,
    X_norm_sq: np.ndarray | None = None,
    Y_norm_sq: np.ndarray | None = None,
) -> np.ndarray:
    """Squared Euclidean distances ``||x_i - y_j||^2`` as an ``(N, M)`` matrix.

    The work is one matrix product (BLAS) through ``||x||^2 + ||y||^2 - 2 x^T y``, made
    accurate wherever the data lie:

    * both sets are scaled by a power of two (exact) and, in every coordinate where the mean
      of ``X`` is farther from 0 than the spread around it, shifted by that mean before the
      expansion: data far from the origin lose no digits to cancellation, and values near
      ``1e300`` or ``1e-300`` neither overflow nor underflow in the intermediate sums;
    * pairs whose expansion is small against their norms (near duplicates, where the
      expansion's rounding error would dominate) are recomputed from the difference
      ``x - y``, so identical rows are exactly 0 apart;
    * the result is clipped at 0, and with ``Y=None`` the diagonal is exactly 0.

    A squared distance beyond the largest float (``> 1.8e308``) is ``inf``; nothing else is.

    Parameters
    ----------
    X : array-like of shape (N, D)
        First set of points (finite).
    Y : array-like of shape (M, D), optional
        Second set; ``None`` means ``X`` itself.
    X_norm_sq, Y_norm_sq : ndarray of shape (N,) / (M,), optional
        Precomputed squared row norms, to save work in iterative algorithms. Giving one skips
        the centring and scaling: pass them only for data that are already centred and of
        moderate scale (as k-means does once per fit).

    Returns
    -------
    ndarray of shape (N, M)
        ``D[i, j] = ||X[i] - Y[j]||^2``.

    Raises
    ------
    ValueError
        If ``X`` or ``Y`` contains NaN or infinity, or their numbers of columns differ.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils.extmath import squared_distances
    >>> X = 1e8 + np.array([[0.0, 0.0], [3.0, 4.0]])
    >>> squared_distances(X)
    array([[ 0., 25.],
           [25.,  0.]])
    """
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.floating):
        X = X.astype(float)
    same = Y is None
    Y = X if same else np.asarray(Y, dtype=X.dtype)
    if X.ndim != 2 or Y.ndim != 2 or X.shape[1] != Y.shape[1]:
        raise ValueError(
            f"X and Y must be 2-D with the same number of columns; got {X.shape} and {Y.shape}."
        )
    if X_norm_sq is not None or (Y_norm_sq is not None and not same):
        # The caller's fast path: data already centred and scaled.
        if X_norm_sq is None:
            X_norm_sq = np.einsum("ij,ij->i", X, X)
        if same:
            Y_norm_sq = X_norm_sq
        elif Y_norm_sq is None:
            Y_norm_sq = np.einsum("ij,ij->i", Y, Y)
        D = _expand(X, Y, X_norm_sq, Y_norm_sq)
        if same:
            np.fill_diagonal(D, 0.0)
        return D
    D, factor = _scaled_squared_distances(X, None if same else Y)
    # Undo the scaling one factor at a time, so that only squared distances beyond the float
    # range overflow.
    with np.errstate(over="ignore"):
        D *= factor
        D *= factor
    return D


def _scaled_squared_distances(X: np.ndarray, Y: np.ndarray | None) -> tuple[np.ndarray, float]:
    """``(S, c)`` with ``||x_i - y_j||^2 = c^2 S_ij``, ``S`` of order one (no overflow).

    ``c`` is a power of two, so ``sqrt(S) * c`` gives the distances themselves even where
    their squares would overflow.
    """
    same = Y is None
    if Y is None:
        Y = X
    if not (np.isfinite(X).all() and (same or np.isfinite(Y).all())):
        raise ValueError("squared_distances: X or Y contains NaN or infinity.")
    scaled = _scaled_points(X, None if same else Y)
    if scaled is None:
        return np.zeros((X.shape[0], Y.shape[0]), dtype=X.dtype), 1.0
    Xs, Ys, factor = scaled
    return expanded_squared_distances(Xs, None if same else Ys), factor


def _scaled_points(
    X: np.ndarray, Y: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, float] | None:
    """``(Xs, Ys, c)`` with ``x - y = c (xs - ys)`` for every pair: the points (finite)
    scaled by a power of two ``c`` and shifted by a common offset, entries of order one.

    ``None`` when every distance is 0 (no points, or all of them coincide). ``Ys`` is ``Xs``
    when ``Y`` is None. The offset is ``X``'s mean in each coordinate whose offset exceeds
    its spread (there the expansion ``||x||^2 + ||y||^2 - 2 x^T y`` would lose digits); a
    coordinate already near the origin is left as it is, so that data such as a grid keep
    exact squared distances (a shift that is not representable exactly would cost an ulp).
    Either way ``|xs_j| <= 2 spread_j``, within a factor 4 of full centring.
    """
    same = Y is None
    Y = X if Y is None else Y
    if X.size == 0 or Y.size == 0:
        return None
    m = _max_abs(X) if same else max(_max_abs(X), _max_abs(Y))
    if m == 0.0:
        return None
    s1 = _power_of_two_below(m)
    Xs = X / s1
    mean = Xs.mean(axis=0)
    shift = np.where(np.abs(mean) > np.max(np.abs(Xs - mean), axis=0), mean, 0.0)
    Xs -= shift
    Ys = Xs if same else Y / s1 - shift
    spread = _max_abs(Xs)
    if not same:
        spread = max(spread, _max_abs(Ys))
    if spread == 0.0:
        return None
    s2 = _power_of_two_below(spread)
    Xs /= s2
    if not same:
        Ys /= s2
    return Xs, Ys, s1 * s2


def _max_abs(A: np.ndarray) -> float:
    """``max |a|`` by two reductions, without an ``|A|`` temporary."""
    return max(float(A.max()), -float(A.min()))


# Rows of a cross-distance matrix expanded at a time: a block of about this many entries
# (512 kB) stays in cache through the product, the norms, the clipping and the near-pair scan.
_BLOCK = 1 << 16


def expanded_squared_distances(
    X: np.ndarray, Y: np.ndarray | None = None, post: Callable | None = None
) -> np.ndarray:
    """The core of :func:`squared_distances` for data already centred and scaled.

    ``||x||^2 + ||y||^2 - 2 x^T y`` through one BLAS product, clipped at 0, with every pair
    below ``_RECOMPUTE * (max ||x||^2 + max ||y||^2)`` recomputed from the difference, and
    an exact 0 diagonal when ``Y`` is None. Accurate where the entries are of moderate size
    (their squares far from under- and overflow) and the rows are centred about a common
    point, as the caller guarantees. ``X`` against a different ``Y`` is expanded in blocks of
    rows that stay in cache (the same arithmetic, entry by entry); ``X`` against itself in
    one symmetric product, exactly symmetric.

    ``post(block)``, when given, is applied in place to each finished block of rows while
    it is in cache (an elementwise map such as a kernel's profile): the result is then
    ``post`` of the distances, without further passes over the whole array.
    """
    same = Y is None
    Ys: np.ndarray = X if Y is None else Y
    if X.shape[0] == 0 or Ys.shape[0] == 0:
        D = np.zeros((X.shape[0], Ys.shape[0]), dtype=X.dtype)
        if post is not None:
            post(D)
        return D
    xn = np.einsum("ij,ij->i", X, X)
    yn = xn if same else np.einsum("ij,ij->i", Ys, Ys)
    # A scalar threshold (no (N, M) temporary of floats): it selects every pair below
    # _RECOMPUTE * (||x_i||^2 + ||y_j||^2), and a few more close pairs, recomputed exactly too.
    threshold = _RECOMPUTE * (float(xn.max()) + float(yn.max()))
    if same:
        # One symmetric product (exactly symmetric), then the rest of _expand's arithmetic
        # and the near-pair scan by blocks of rows that stay in cache: one pass over the
        # N x N result instead of five, the same operations on every entry. The diagonal is
        # kept out of the recomputation (inf) and set to 0.
        # (in SciPy's BLAS when threaded: a square kernel matrix goes next to SciPy's
        # Cholesky or eigensolver, see utils._threads.scipy_matmul; a cross-kernel, in
        # _expand, stays in NumPy's, since NumPy products of it follow: a prediction's
        # K(X*, X) alpha, Nystroem's K(X, C) times its normalisation, which after a
        # cross-kernel in SciPy's pool took 2.1 times as long at two threads)
        D = gram_beside_scipy()(X, out=faulted_empty((X.shape[0], X.shape[0]), X.dtype))
        step = max(1, _BLOCK // D.shape[1])
        for start in range(0, D.shape[0], step):
            stop = min(start + step, D.shape[0])
            Db = D[start:stop]
            Db *= -2.0
            Db += xn[start:stop, None]
            Db += xn[None, :]
            np.maximum(Db, 0.0, out=Db)
            diag = np.arange(start, stop)
            Db[diag - start, diag] = np.inf
            _recompute_near(Db, X[start:stop], X, threshold)
            Db[diag - start, diag] = 0.0
            if post is not None:
                post(Db)
        return D
    n, m = X.shape[0], Ys.shape[0]
    D = faulted_empty((n, m), np.result_type(X.dtype, Ys.dtype))
    step = max(1, _BLOCK // m)
    for start in range(0, n, step):
        Xb = X[start : start + step]
        Db = D[start : start + step]
        _expand(Xb, Ys, xn[start : start + step], yn, out=Db)
        _recompute_near(Db, Xb, Ys, threshold)
        if post is not None:
            post(Db)
    return D


def _recompute_near(D: np.ndarray, X: np.ndarray, Y: np.ndarray, threshold: float) -> None:
    """Entries of ``D`` at or below ``threshold`` recomputed from the differences."""
    # Flat indices of the near pairs (NumPy's 2-D nonzero costs five times as much as the
    # flat one on a large mask), then their rows and columns.
    near = np.flatnonzero(D <= threshold)
    if near.size:
        rows, cols = np.divmod(near, D.shape[1])
        D[rows, cols] = _direct(X, Y, rows, cols)


@contextlib.contextmanager
def small_ufunc_buffers(size: int = 1024) -> Iterator[None]:
    """NumPy's ufunc buffers of ``size`` elements in this context (the setting is
    context-local): a ufunc with a broadcast operand, ``D += v[:, None]``, iterates through
    buffers of 8 192 elements per operand by default, 64 kB allocated for the call even where
    nothing is copied, which at small sizes outweighs the arrays themselves. With 1 024 (8 kB)
    the two broadcast adds of a 1 000 x 1 000 block took 355 instead of 670-720 us, of a
    10 000 x 10 one 122 instead of 127-129 us, and of a 100 x 100 one 13 instead of 9 us
    (the setting and its restoring)."""
    old = np.setbufsize(size)
    try:
        yield
    finally:
        np.setbufsize(old)


def _expand(
    X: np.ndarray, Y: np.ndarray, xn: np.ndarray, yn: np.ndarray, out: np.ndarray | None = None
) -> np.ndarray:
    """``||x||^2 + ||y||^2 - 2 x^T y`` through one BLAS product, clipped at 0 (into ``out``
    when given)."""
    if Y is not X and X.shape[1] < Y.shape[0]:
        # -2 x^T y with the factor on the smaller operand: scaling by -2 is exact, so this is
        # bit for bit (-2) (x^T y), one pass over the (N, M) result fewer. (X X^T itself stays
        # one symmetric product, exactly symmetric.)
        D = np.matmul(X * -2.0, Y.T, out=out)
    else:
        D = np.matmul(X, Y.T, out=out)
        D *= -2.0
    with small_ufunc_buffers():
        D += xn[:, None]
        D += yn[None, :]
    np.maximum(D, 0.0, out=D)
    return D
