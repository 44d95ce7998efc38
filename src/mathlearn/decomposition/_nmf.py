"""Non-negative matrix factorisation by coordinate descent (HALS) or multiplicative updates."""

from __future__ import annotations

import contextlib
import ctypes
import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from scipy.optimize import nnls

from .. import _ext
from ..base import (
    BaseEstimator,
    ComponentNamesMixin,
    TransformerMixin,
    _fit_context,
    check_is_fitted,
)
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, StrOptions
from ..utils._threads import row_parts, run_parts, serial_blas
from ..utils.extmath import sum_of_squares
from ..utils.linalg import cholesky
from ..utils.validation import check_random_state, validate_data
from ._pca import randomized_range_svd

__all__ = ["NMF"]

# Floor for denominators and for W H inside the KL divergence (scikit-learn uses the same).
_EPS = float(np.finfo(np.float32).eps)


def _divergence(X, W, H, beta, WH=None):
    """Frobenius ``0.5 ||X - W H||_F^2`` (beta=2) or generalised KL (beta=1)."""
    if beta == 2:
        # The residual in place of the product W H (one N x D temporary).
        R = W @ H if WH is None else WH.copy()
        np.subtract(X, R, out=R)
        return 0.5 * float(np.vdot(R, R))
    if WH is None:
        WH = W @ H
    WH = np.maximum(WH, _EPS)
    pos = X > 0
    return float(np.sum(X[pos] * np.log(X[pos] / WH[pos])) - X.sum() + WH.sum())


# From this many rows on, the final weights are solved by the compiled active set of
# ._nmf_kernels (shared normal equations, parallel over rows); below, by SciPy's NNLS row by
# row, which needs no compilation.
_KERNEL_MIN_ROWS = 2000


def _nnls_weights(X, H, W0=None):
    """Exact ``argmin_{W >= 0} ||X - W H||_F``: one non-negative least-squares problem per row.

    The rows share ``G = H H^T``, so each is a ``k x k`` problem in the normal equations
    (``c_i = H x_i``), solved by the Lawson-Hanson active-set method of the compiled helper
    ``_ext._nmf``. Where that helper was not built: the same method compiled with numba, run
    in parallel over the rows, from ``_KERNEL_MIN_ROWS`` rows on, and
    ``scipy.optimize.nnls`` row by row below. ``W0`` (optional, non-negative): a starting
    point for the compiled helper, whose positive entries are the first passive sets (the
    last iterate of the fit, where one solve per row usually settles the active set). When
    ``H H^T`` is far from positive definite (a dead part, or collinear parts), the normal
    equations would square a bad conditioning: those cases, and any row whose active set did
    not settle, use ``scipy.optimize.nnls`` on the ``D x k`` problem itself.
    """
    Xd = np.ascontiguousarray(X, dtype=np.float64)
    Hd = np.ascontiguousarray(H, dtype=np.float64)
    n, k = Xd.shape[0], Hd.shape[0]
    maxiter = 10 * max(k, 3)
    G = Hd @ Hd.T
    try:
        R = cholesky(G, jitter=None, name="H H^T")
        diag = np.abs(np.diag(R))
        well_posed = diag.min() > 1e-4 * diag.max()
    except (np.linalg.LinAlgError, ValueError):  # not positive definite, or not finite
        well_posed = False
    lib = _ext.load("_nmf") if well_posed else None
    if lib is not None:
        fn = lib.nmf_nnls_rows
        if fn.argtypes is None:
            fn.restype = None
            fn.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                           ctypes.c_void_p, ctypes.c_void_p]  # fmt: skip
        C = np.ascontiguousarray(Xd @ Hd.T)
        warm = W0 is not None
        W = np.array(W0, dtype=np.float64, order="C") if warm else np.empty((n, k))
        ok = np.empty(n, dtype=np.int8)
        work = np.empty(k * k + 3 * k)
        iwork = np.empty(2 * k, dtype=np.int64)
        fn(n, k, G.ctypes.data, C.ctypes.data, maxiter, W.ctypes.data, ok.ctypes.data,
           int(warm), work.ctypes.data, iwork.ctypes.data)  # fmt: skip
        rows = np.flatnonzero(ok == 0)
    elif well_posed and n >= _KERNEL_MIN_ROWS:
        from ._nmf_kernels import _fnnls_rows

        W, ok = _fnnls_rows(G, Xd @ Hd.T, maxiter)
        rows = np.flatnonzero(~ok)
    else:
        W = np.empty((n, k))
        rows = np.arange(n)
    A = Hd.T
    for i in rows:
        W[i] = nnls(A, Xd[i], maxiter=50 * maxiter)[0]
    return W.astype(X.dtype, copy=False)


def _compiled_sweep():
    """``nmf_hals_sweep`` of ``_ext._nmf``, typed, or None where it was not built."""
    lib = _ext.load("_nmf")
    if lib is None:
        return None
    fn = lib.nmf_hals_sweep
    if fn.argtypes is None:
        fn.restype = ctypes.c_double
        i64, ptr = ctypes.c_int64, ctypes.c_void_p
        fn.argtypes = [i64, i64, ptr, i64, ptr, ptr, i64, i64]
    return fn


def _w_half_in_parts(fn, parts, Xd, Wt, Ht, HHt, XHt, WtW, WtX) -> float:
    """The ``W`` half of a HALS iteration over the row ranges ``parts``, one thread each
    (:func:`~mathlearn.utils._threads.run_parts`), BLAS on one thread in each: a part forms
    its rows of ``X H^T``, sweeps its rows of ``W`` (columns of ``Wt``; each row's updates
    read that row alone and ``G = H H^T``), then its terms of ``W^T W`` and ``W^T X``, which
    are added in part order. Returns the sweep's stopping measure, the parts' sums added in
    order."""
    k, n = Wt.shape
    violation = [0.0] * len(parts)
    partial_wtw = [WtW] + [np.empty_like(WtW) for _ in parts[1:]]
    partial_wtx = [WtX] + [np.empty_like(WtX) for _ in parts[1:]]
    p_wt, p_hht, p_xht = Wt.ctypes.data, HHt.ctypes.data, XHt.ctypes.data

    def run(j):
        lo, hi = parts[j]
        np.matmul(Xd[lo:hi], Ht, out=XHt[lo:hi])
        violation[j] = fn(hi - lo, k, p_wt + 8 * lo, n, p_hht, p_xht + 8 * lo * k, k, 1)
        np.matmul(Wt[:, lo:hi], Wt[:, lo:hi].T, out=partial_wtw[j])
        np.matmul(Wt[:, lo:hi], Xd[lo:hi], out=partial_wtx[j])

    run_parts(list(range(len(parts))), run)
    for j in range(1, len(parts)):
        WtW += partial_wtw[j]
        WtX += partial_wtx[j]
    return sum(violation)


def _hals_sweep_numpy(F, G, B):
    """One HALS sweep for ``min_{W >= 0} 0.5 ||X - W H||^2`` given ``G = H H^T`` and
    ``B = X H^T`` (m x k; any strides), with ``W`` held as its transpose ``F`` (k x m,
    float64, updated in place); returns the sum of the absolute projected gradients met (the
    stopping measure). The NumPy route of the compiled ``nmf_hals_sweep``: component by
    component, each over all rows at once."""
    violation = 0.0
    for t in range(F.shape[0]):
        grad = G[t] @ F - B[:, t]
        pg = np.where((F[t] == 0.0) & (grad > 0.0), 0.0, grad)
        violation += float(np.abs(pg).sum())
        if G[t, t] != 0.0:
            F[t] = np.maximum(F[t] - grad / G[t, t], 0.0)
    return violation


def _nndsvd(X, k, rng, fill_average):
    """Non-negative double SVD initialisation (Boutsidis & Gallopoulos, 2008)."""
    U, s, Vt = randomized_range_svd(X, k, n_iter=4, rng=rng)
    W = np.zeros((X.shape[0], k))
    H = np.zeros((k, X.shape[1]))
    W[:, 0] = np.sqrt(s[0]) * np.abs(U[:, 0])
    H[0] = np.sqrt(s[0]) * np.abs(Vt[0])
    for j in range(1, k):
        x, y = U[:, j], Vt[j]
        xp, yp = np.maximum(x, 0), np.maximum(y, 0)
        xn, yn = np.maximum(-x, 0), np.maximum(-y, 0)
        xpn, ypn = np.linalg.norm(xp), np.linalg.norm(yp)
        xnn, ynn = np.linalg.norm(xn), np.linalg.norm(yn)
        # Keep the sign pattern with the larger rank-one mass.
        if xpn * ypn >= xnn * ynn:
            u, v, sigma = xp / max(xpn, _EPS), yp / max(ypn, _EPS), xpn * ypn
        else:
            u, v, sigma = xn / max(xnn, _EPS), yn / max(ynn, _EPS), xnn * ynn
        lbd = np.sqrt(s[j] * sigma)
        W[:, j] = lbd * u
        H[j] = lbd * v
    W[W < 1e-6] = 0.0
    H[H < 1e-6] = 0.0
    if fill_average:
        avg = X.mean()
        W[W == 0] = avg / 100
        H[H == 0] = avg / 100
    return W, H


class NMF(ComponentNamesMixin, TransformerMixin, BaseEstimator):
    """Non-negative matrix factorisation ``X ~ W H`` with ``W, H >= 0``.

    Parameters
    ----------
    n_components : int or None, default=None
        Rank ``k``; ``None``: ``n_features``.
    beta_loss : {"frobenius", "kullback-leibler"}, default="frobenius"
        Objective: ``0.5 ||X - W H||_F^2`` or the generalised KL divergence
        ``sum X log(X / W H) - X + W H``.
    init : {"random", "nndsvd", "nndsvda", "custom"}, default="random"
        ``"random"``: ``|N(0, 1)|`` scaled by ``sqrt(mean(X) / k)``; ``"nndsvd(a)"``: from the
        SVD (zeros filled with ``mean(X)/100`` for ``"nndsvda"``); ``"custom"``: ``W`` and
        ``H`` passed to ``fit_transform``.
    solver : {"cd", "mu"}, default="cd"
        ``"cd"``: coordinate descent, i.e. hierarchical alternating least squares (HALS),
        Frobenius objective only; ``"mu"``: Lee & Seung's multiplicative updates (both
        objectives).
    max_iter : int, default=200
    tol : float, default=1e-4
        Stopping rule, scikit-learn's for each solver. ``"cd"``: after each iteration, stop
        when the sum of the absolute projected gradients met in the iteration, divided by that
        of the first iteration, is at most ``tol``. ``"mu"``: every 10 iterations, stop when
        the relative drop of ``sqrt(2 * objective)`` since the last check, divided by its
        initial value, is below ``tol``.
    random_state : int, Generator, RandomState or None, default=None

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        ``H``: the non-negative parts.
    reconstruction_err_ : float
        ``sqrt(2 * objective)`` at the end (the Frobenius norm of the residual for
        ``"frobenius"``, after the final exact ``W`` step).
    loss_curve_ : list of float
        The objective after each iteration for ``"frobenius"`` (free to compute from the
        ``k x k`` and ``k x d`` products of the updates); for ``"kullback-leibler"`` after
        every tenth iteration (the convergence checks) and the last, since it needs a
        logarithm of the whole ``W H``. Non-increasing (Lee & Seung's theorem; for ``"cd"``
        each step is an exact minimisation).
    n_iter_ : int
    n_components_ : int
    n_features_in_ : int

    See Also
    --------
    mathlearn.decomposition.PCA
        Factorisation without the sign constraint.
    sklearn.decomposition.NMF
        scikit-learn's equivalent.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" §6.1 (slides 6:31-6:33) writes ``X ~ Z W`` with
    ``Z`` (n x p) and ``W`` (p x d); here, as in scikit-learn, ``W`` (n x k) are the per-sample
    weights and ``H`` (k x d) the parts. Lee & Seung's multiplicative updates (2001) are, for the
    Frobenius objective, ``W <- W * (X H^T) / (W H H^T)`` and ``H <- H * (W^T X) / (W^T W H)``; for
    KL (the updates of the notes, with ``z = W`` and ``w = H``),
    ``W <- W * ((X / W H) H^T) / (1 H^T)`` and ``H <- H * (W^T (X / W H)) / (W^T 1)``. Each is
    the minimiser of an auxiliary function, so the objective never increases. Denominators
    and ``W H`` are floored at ``float32`` machine epsilon (the stability advice of the notes).
    ``W`` is updated before ``H`` in each iteration. For the Frobenius objective the ``W``
    returned by ``fit_transform`` is then solved exactly for the final ``H`` (one
    non-negative least-squares problem per sample, ``scipy.optimize.nnls``): an exact block
    step, which can only lower the objective below ``loss_curve_[-1]``, and the same problem
    ``transform`` solves, so both return the same weights.

    The default solver ``"cd"`` (Cichocki & Phan, 2009; Gillis & Glineur, 2012) minimises the
    Frobenius objective exactly in one column of ``W`` (then of ``H^T``) at a time: with
    ``G = H H^T`` and ``B = X H^T``, ``w_t <- max(0, w_t - (W g_t - b_t) / G_tt)``, the
    columns taken in order and each update using the ones before it. The products ``G``, ``B``
    (and ``W^T W``, ``W^T X`` for ``H``) are BLAS calls; the per-component sweep, ``O(N k^2)``,
    runs in the compiled helper ``_ext._nmf`` (a NumPy route otherwise), on both factors held
    component-major (``W^T`` and ``H``) and over the rows in blocks, so that its inner loops
    run over contiguous, independent entries. Each row of ``W`` is updated from that row
    alone, so from about 4e6 multiply-adds an iteration's ``W`` half (``X H^T``, the sweep,
    ``W^T W`` and ``W^T X``) is split by rows between as many threads as BLAS may use, each
    running BLAS on one thread (the last two products are then sums over the parts, equal to
    one thread's to rounding). It needs about half the iterations of the multiplicative
    updates for the same objective.

    Complexity: each iteration costs ``O(N D k)`` time (the products ``X H^T`` and ``X^T W``,
    for either solver) plus ``O((N + D) k^2)``, in ``O(N D)`` memory (``X``, plus ``W H``-sized
    temporaries for ``"mu"`` with Kullback-Leibler only); the final exact ``W`` step solves
    ``N`` non-negative least-squares problems of size ``k`` (``O(N D k)`` to form them).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.decomposition import NMF
    >>> X = np.array([[1., 1.], [2., 1.], [3., 1.2], [4., 1.], [5., 0.8], [6., 1.]])
    >>> W = NMF(n_components=2, random_state=0, max_iter=500).fit_transform(X)
    >>> W.shape
    (6, 2)
    """

    _common_test_params: ClassVar[dict] = {"n_components": 2, "max_iter": 1000, "tol": 1e-3}

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "beta_loss": [StrOptions({"frobenius", "kullback-leibler"})],
        "init": [StrOptions({"random", "nndsvd", "nndsvda", "custom"})],
        "solver": [StrOptions({"cd", "mu"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components: int | None = None,
        *,
        beta_loss: str = "frobenius",
        init: str = "random",
        solver: str = "cd",
        max_iter: int = 200,
        tol: float = 1e-4,
        random_state=None,
    ):
        self.n_components = n_components
        self.beta_loss = beta_loss
        self.init = init
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.requires_fit = True
        return tags

    def _beta(self):
        return {"frobenius": 2, "kullback-leibler": 1}[self.beta_loss]

    def _check_X(self, X, reset):
        X = validate_data(self, X, dtype=[np.float64, np.float32], reset=reset)
        if X.size and X.min() < 0:  # a reduction: no n x d mask
            raise ValueError("Negative values in data passed to NMF: X must be non-negative.")
        return X

    @_fit_context
    def fit(self, X, y=None, **params):
        """Fit ``W`` and ``H``; returns self."""
        self.fit_transform(X, **params)
        return self

    @_fit_context
    def fit_transform(self, X, y=None, W=None, H=None):
        """Fit and return ``W`` of shape (n_samples, n_components).

        ``W`` and ``H`` are the starting point when ``init="custom"``.
        """
        X = self._check_X(X, reset=True)
        beta = self._beta()
        if beta != 2 and self.solver == "cd":
            raise ValueError(
                "solver='cd' minimises the Frobenius objective only; use solver='mu' for "
                "beta_loss='kullback-leibler'."
            )
        n, d = X.shape
        k = d if self.n_components is None else int(self.n_components)
        if X.max() == 0:
            raise ValueError("X is all zeros; NMF has nothing to factorise.")
        if beta == 2 and 2.0 * np.log2(X.max()) + np.log2(X.size) > 1020.0:
            # The Frobenius loss sums the squares of X (and of X - W H): beyond ~1e308 the
            # multiplicative updates and the stopping rule see inf.
            raise ValueError(
                f"the squared Frobenius norm of X (entries up to {float(X.max()):.3g}) "
                "overflows float64, so beta_loss='frobenius' cannot be evaluated; rescale X "
                "(the factorisation of X / c is (W / sqrt(c)) (H / sqrt(c)) for any c > 0)."
            )
        rng = check_random_state(self.random_state)
        if self.init == "custom":
            if W is None or H is None:
                raise ValueError("init='custom' needs W and H passed to fit_transform.")
            W = np.array(W, dtype=X.dtype)
            H = np.array(H, dtype=X.dtype)
            if W.shape != (n, k) or H.shape != (k, d):
                raise ValueError(f"W and H must have shapes {(n, k)} and {(k, d)}.")
            if (
                np.any(W < 0)
                or np.any(H < 0)
                or not (np.isfinite(W).all() and np.isfinite(H).all())
            ):
                raise ValueError("custom W and H must be finite and non-negative.")
        elif self.init == "random":
            avg = np.sqrt(X.mean() / k)
            # |avg z| formed in place (avg >= 0, so it equals avg |z| exactly)
            H, W = rng.standard_normal((k, d)), rng.standard_normal((n, k))
            H, W = (np.multiply(np.abs(A, out=A), avg, out=A) for A in (H, W))
            H, W = H.astype(X.dtype, copy=False), W.astype(X.dtype, copy=False)
        else:  # "nndsvd", "nndsvda"
            if k > min(n, d):
                raise ValueError(
                    f"init='{self.init}' needs n_components <= min(n_samples, n_features)."
                )
            W, H = _nndsvd(X, k, rng, self.init == "nndsvda")
            W, H = W.astype(X.dtype), H.astype(X.dtype)
        W, H, n_iter, losses = self._solve(X, W, H, beta, update_H=True)
        if beta == 2:
            # A last block step solved exactly: the weights that minimise the objective for
            # the final parts H, which can only lower it, and exactly what transform returns.
            W = _nnls_weights(X, H, W)
        self.components_ = H
        self.n_components_ = k
        self.n_iter_ = n_iter
        self.loss_curve_ = losses
        self.reconstruction_err_ = float(np.sqrt(2.0 * _divergence(X, W, H, beta)))
        return W

    def _solve(self, X, W, H, beta, update_H):
        if beta == 2 and self.solver == "cd" and update_H:
            return self._solve_cd(X, W, H)
        return self._solve_mu(X, W, H, beta, update_H)

    def _solve_cd(self, X, W, H):
        """HALS iterations (see Notes) with scikit-learn's stopping rule for ``"cd"``."""
        dtype = X.dtype
        Xd = X.astype(np.float64, copy=False)
        n, d = Xd.shape
        k = W.shape[1]
        # Both factors are held component-major, as Wt = W^T (k x n) and H (k x d): the
        # sweeps' inner loops then run over contiguous entries. X H^T is formed from a
        # contiguous copy Ht of H^T (d x k, refreshed after each H half), and X^T W as its
        # transpose W^T X (k x d): at 200 x 2 000, k = 10, on one thread, BLAS forms these in
        # 0.38 and 0.25 ms, where X H^T from a view of H takes 0.44 and X^T W 0.44.
        Wt = np.array(W.T, dtype=np.float64, order="C")
        H = np.array(H, dtype=np.float64, order="C")
        Ht = np.array(H.T, order="C")
        xsq = sum_of_squares(Xd)
        # Every product goes into a buffer of its own, reused: the compiled sweep is given
        # the same addresses at every iteration.
        HHt, WtW = np.empty((k, k)), np.empty((k, k))
        XHt, WtX = np.empty((n, k)), np.empty((k, d))
        np.matmul(H, Ht, out=HHt)
        fn = _compiled_sweep()
        if fn is not None:
            p_wt, p_h, p_hht, p_wtw, p_xht, p_wtx = (
                a.ctypes.data for a in (Wt, H, HHt, WtW, XHt, WtX)
            )
        losses = []
        violation_init = None
        converged = False
        n_iter = 0
        # Below ~1M multiply-adds per product, one BLAS thread: a pool costs more than it
        # gains on products this small (and ~20x on a busy machine). From 2M up two threads
        # were measured 1.4-1.9x faster per product on a quiet machine.
        work = n * d * k
        # From ~4e6 multiply-adds, the W half of each iteration (two products and the sweep,
        # all row-wise in the rows of X and W) runs in one part per thread, each with BLAS on
        # one thread: at N = 1e5, D = 20, k = 10 on two cores, BLAS's own threads made the
        # products slower than on one (8.7 against 7.2 ms an iteration) and left its
        # workers spinning on the cores the sweep needed.
        parts = row_parts(n, n * k * (d + k)) if fn is not None else [(0, n)]
        if len(parts) > 1:
            blas = serial_blas()
        else:
            blas = serial_blas(work) if work < 1 << 20 else contextlib.nullcontext()
        with blas:
            for it in range(1, self.max_iter + 1):
                n_iter = it
                if len(parts) > 1:
                    violation = _w_half_in_parts(fn, parts, Xd, Wt, Ht, HHt, XHt, WtW, WtX)
                else:
                    np.matmul(Xd, Ht, out=XHt)
                    if fn is None:
                        violation = _hals_sweep_numpy(Wt, HHt, XHt)
                    else:
                        violation = fn(n, k, p_wt, n, p_hht, p_xht, k, 1)
                    np.matmul(Wt, Wt.T, out=WtW)
                    np.matmul(Wt, Xd, out=WtX)
                if fn is None:
                    violation += _hals_sweep_numpy(H, WtW, WtX.T)
                else:
                    violation += fn(d, k, p_h, d, p_wtw, p_wtx, 1, d)
                np.copyto(Ht, H.T)
                np.matmul(H, Ht, out=HHt)
                # 0.5 ||X - W H||^2 from the k x k and k x d products already formed.
                loss = 0.5 * (xsq - 2.0 * float(np.vdot(WtX, H)) + float(np.vdot(WtW, HHt)))
                losses.append(max(loss, 0.0))
                if violation_init is None:
                    violation_init = violation
                if violation_init == 0.0 or violation <= self.tol * violation_init:
                    converged = True
                    break
        if not converged and self.tol > 0:
            warnings.warn(
                f"NMF did not converge in max_iter={self.max_iter} iterations; increase "
                "max_iter or tol.",
                ConvergenceWarning,
                stacklevel=3,
            )
        return Wt.T.astype(dtype, copy=False), H.astype(dtype, copy=False), n_iter, losses

    def _solve_mu(self, X, W, H, beta, update_H):
        xsq = float(np.einsum("ij,ij->", X, X)) if beta == 2 else None
        err0 = np.sqrt(2.0 * _divergence(X, W, H, beta))
        if err0 == 0.0:
            return W, H, 0, [0.0]
        prev = err0
        losses = []
        converged = False
        n_iter = 0
        for n_iter in range(1, self.max_iter + 1):
            if beta == 2:
                HHt = H @ H.T
                den = W @ HHt
                den[den == 0] = _EPS
                num = X @ H.T
                num /= den
                W *= num
                if update_H:
                    WtX = W.T @ X
                    WtW = W.T @ W
                    den = WtW @ H
                    den[den == 0] = _EPS
                    H *= WtX / den
                    HHt = H @ H.T
                    # 0.5 ||X - WH||^2 without forming W H (k x k and k x d products only).
                    loss = 0.5 * (xsq - 2.0 * np.sum(WtX * H) + np.sum(WtW * HHt))
                else:
                    WtW = W.T @ W
                    loss = 0.5 * (xsq - 2.0 * np.sum((W.T @ X) * H) + np.sum(WtW * HHt))
                losses.append(max(float(loss), 0.0))
            else:
                # X / max(W H, eps), reusing the W H buffer (two N x D temporaries saved).
                Q = W @ H
                np.maximum(Q, _EPS, out=Q)
                np.divide(X, Q, out=Q)
                den = H.sum(axis=1)[None, :]
                den = np.where(den == 0, _EPS, den)
                W *= (Q @ H.T) / den
                if update_H:
                    Q = W @ H
                    np.maximum(Q, _EPS, out=Q)
                    np.divide(X, Q, out=Q)
                    wsum = W.sum(axis=0)
                    wsum[wsum == 0] = 1.0
                    H *= (W.T @ Q) / wsum[:, None]
                    H[H < np.finfo(np.float64).eps] = 0.0
                if self.tol > 0 and n_iter % 10 == 0:
                    losses.append(_divergence(X, W, H, beta))
            if self.tol > 0 and n_iter % 10 == 0:
                err = np.sqrt(2.0 * losses[-1])
                if (prev - err) / err0 < self.tol:
                    converged = True
                    break
                prev = err
        if beta == 1 and (not losses or n_iter % 10 != 0 or self.tol <= 0):
            # KL needs a logarithm of the whole N x D matrix W H, as expensive as an update:
            # it is recorded at the convergence checks and at the end only.
            losses.append(_divergence(X, W, H, beta))
        if not converged and self.tol > 0:
            warnings.warn(
                f"NMF did not converge in max_iter={self.max_iter} iterations; increase "
                "max_iter or tol.",
                ConvergenceWarning,
                stacklevel=3,
            )
        return W, H, n_iter, losses

    def transform(self, X):
        """Non-negative weights ``W`` for new ``X`` with the parts ``H`` fixed.

        Frobenius: the exact non-negative least-squares solution, row by row (so
        ``fit(X).transform(X)`` equals ``fit_transform(X)``). Kullback-Leibler: multiplicative
        updates of ``W`` alone from a flat start, to the tolerance ``tol``.
        """
        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        beta = self._beta()
        if beta == 2:
            return _nnls_weights(X, self.components_)
        k = self.n_components_
        W = np.full((X.shape[0], k), np.sqrt(X.mean() / k), dtype=X.dtype)
        H = self.components_.astype(X.dtype, copy=False)
        W, _, _, _ = self._solve(X, W, H.copy(), beta, update_H=False)
        return W

    def inverse_transform(self, X):
        """``W @ H``: data reconstructed from weights ``X`` (n_samples, n_components)."""
        check_is_fitted(self)
        W = np.asarray(X, dtype=float)
        if W.ndim != 2 or W.shape[1] != self.n_components_:
            raise ValueError(f"expected shape (n_samples, {self.n_components_}); got {W.shape}.")
        return W @ self.components_
