"""Alternating least squares for implicit feedback with confidence weights."""

from __future__ import annotations

import ctypes
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from .. import _ext
from ..base import _fit_context
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, Options, StrOptions
from ..utils.validation import check_random_state
from ._base import RowBlocks, ridge_rows
from ._factor import FactorModel, Pattern, pair_dots


def _compiled_cg():
    """The compiled CG kernel of :mod:`mathlearn._ext` (``_als.c``), typed, or None."""
    lib = _ext.load("_als")
    if lib is None:
        return None
    fn = lib.als_cg_rows
    if fn.argtypes is None:
        fn.restype = None
        fn.argtypes = [ctypes.c_int64, ctypes.c_int64] + [ctypes.c_void_p] * 9
        fn.argtypes += [ctypes.c_int64] + [ctypes.c_void_p] * 5
    return fn


def cg_work_size(k: int, longest: int) -> int:
    """The doubles of scratch of the compiled CG kernel (``als_cg_work`` of ``_als.c``) for
    rank ``k`` and rows of at most ``longest`` entries: the state of a block of rows iterated
    together, and, with SciPy's BLAS and without the kernel's AVX2 loops, the gathered
    factor rows of the block's long rows."""
    lib = _ext.load("_als")
    assert lib is not None, "called on the compiled routes only"
    fn = lib.als_cg_work
    if fn.argtypes is None:
        fn.restype = ctypes.c_int64
        fn.argtypes = [ctypes.c_int64, ctypes.c_int64, ctypes.c_int]
    return int(fn(k, longest, int(_ext.blas_pointer("dgemv") is not None)))


def cg_work(k: int, longest: int) -> np.ndarray:
    """The scratch of :func:`cg_work_size` as a fresh array."""
    return np.empty(cg_work_size(k, longest))


def _compiled_sweeps():
    """The compiled sweeps of implicit ALS with CG (``_als.c``, ``als_implicit_cg``), typed,
    or None."""
    lib = _ext.load("_als")
    if lib is None:
        return None
    fn = lib.als_implicit_cg
    if fn.argtypes is None:
        fn.restype = ctypes.c_int64
        fn.argtypes = [ctypes.c_int64] * 3 + [ctypes.c_void_p] * 6 + [ctypes.c_double] * 2
        fn.argtypes += [ctypes.c_void_p] * 2 + [ctypes.c_int64] * 2 + [ctypes.c_double]
        fn.argtypes += [ctypes.c_void_p] * 6
    return fn


def _compiled_sweeps32():
    """The single-precision sweeps (``_als32.c``, ``als32_implicit_cg``), typed, or None."""
    lib = _ext.load("_als32")
    if lib is None:
        return None
    fn = lib.als32_implicit_cg
    if fn.argtypes is None:
        fn.restype = ctypes.c_int64
        fn.argtypes = [ctypes.c_int64] * 3 + [ctypes.c_void_p] * 6 + [ctypes.c_double] * 2
        fn.argtypes += [ctypes.c_void_p] * 2 + [ctypes.c_int64] * 2 + [ctypes.c_double]
        fn.argtypes += [ctypes.c_void_p] * 4
    return fn


def _implicit_compiled32(driver, pattern, X, Y, alpha, lam, steps, max_iter, tol):
    """The sweeps of :meth:`ImplicitALS.fit` with ``dtype=np.float32``, in one compiled
    call, in place on the float32 X and Y; returns the objectives and the number of sweeps."""
    n_users, n_items = pattern.shape
    k = X.shape[1]
    history = np.empty(max_iter)
    G, work = np.empty(k * k, dtype=np.float32), np.empty(4 * k, dtype=np.float32)
    n_iter = driver(n_users, n_items, k, *(pattern.address(name) for name in (
        "indptr_u", "items_u", "values_u", "indptr_i", "users_i", "values_i")), alpha, lam,
        X.ctypes.data, Y.ctypes.data, steps, max_iter, tol,
        *(a.ctypes.data for a in (history, G, work)), _ext.blas_pointer("ssyrk"))  # fmt: skip
    return history[:n_iter].tolist(), int(n_iter)


def _normal_rows(rng, n: int, k: int, scale: float, dtype) -> np.ndarray:
    """``scale`` times standard normal draws, shape (n, k), in ``dtype``: for float32 drawn
    in blocks of rows and rounded (the same numbers as the float64 draw, rounded once).
    A block holds about a 64th of the factors, at least 1 000 numbers: its float64
    temporaries stay a few per cent of the float32 result, in at most about 64 draws."""
    if dtype == np.float64:
        out = rng.standard_normal((n, k))
        out *= scale  # (in place: no second array of the factors' size)
        return out
    out = np.empty((n, k), dtype=dtype)
    step = max(1, max(1024, n * k // 64) // max(k, 1))
    for s in range(0, n, step):
        block = rng.standard_normal((min(step, n - s), k))
        block *= scale
        out[s : s + step] = block
    return out


def _implicit_compiled(driver, pattern, X, Y, alpha, lam, steps, max_iter, tol):
    """The CG sweeps of :meth:`ImplicitALS.fit` in one compiled call, in place on X and Y
    (the same half-sweeps, by the same kernel as :func:`cg_rows`, which forms each entry's
    weight ``alpha r`` and confidence ``1 + alpha r`` from the stored values as it goes);
    returns the objectives and the number of sweeps."""
    n_users, n_items = pattern.shape
    k = X.shape[1]
    history = np.empty(max_iter)
    longest = max(int(pattern.n_user.max(initial=0)), int(pattern.n_item.max(initial=0)))
    blas = (_ext.blas_pointer(name) for name in ("dgemv", "dsyrk", "dgemm"))
    work = cg_work(k, longest)
    G = np.empty(k * k)
    n_iter = driver(n_users, n_items, k, *(pattern.address(name) for name in (
        "indptr_u", "items_u", "values_u", "indptr_i", "users_i", "values_i")), alpha, lam,
        X.ctypes.data, Y.ctypes.data, steps, max_iter, tol,
        *(a.ctypes.data for a in (history, G, work)), *blas)  # fmt: skip
    return history[:n_iter].tolist(), int(n_iter)


def cg_plan(indptr: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """What the compiled CG kernel reads of a CSR pattern, formed once per fit: the offsets
    as 64-bit integers, the column indices as 32-bit ones, and the longest row's number of
    entries."""
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    indices = np.ascontiguousarray(indices, dtype=np.int32)
    return indptr, indices, int(np.max(np.diff(indptr), initial=0))


def _ptr(a: np.ndarray | None) -> int | None:
    return None if a is None else a.ctypes.data


def _cg_rows_compiled(fn, R, w, c, Y, X, base, reg, steps, targets, fit_terms, shift, plan):
    """The compiled route of :func:`cg_rows`: each row's CG iterations in one pass, in place
    on a copy of X."""
    indptr, indices, longest = cg_plan(R.indptr, R.indices) if plan is None else plan
    n_rows, k = indptr.size - 1, Y.shape[1]
    same = targets is c
    Y, c = (np.ascontiguousarray(a, dtype=np.float64) for a in (Y, c))
    w, base, reg, t, shift = (
        None if a is None else np.ascontiguousarray(a, dtype=np.float64)
        for a in (w, base, reg, targets, shift)
    )
    # The same array for both: the kernel then follows the squared error through the CG
    # steps instead of a last pass over the row.
    t = c if same else t
    X = np.ascontiguousarray(X, dtype=np.float64)  # already a copy
    terms = np.zeros(1)
    # With SciPy's dgemv (and the SSE2 loops), long rows are gathered once and each product
    # is two BLAS calls; with its dgemm, the products with base of a block of rows are one
    # call.
    work = cg_work(k, longest)
    fn(n_rows, k, _ptr(indptr), _ptr(indices), _ptr(Y), _ptr(w), _ptr(c), _ptr(shift),
       _ptr(base), _ptr(reg), _ptr(X), int(steps), _ptr(t),
       _ptr(terms) if fit_terms else None, _ptr(work),
       _ext.blas_pointer("dgemv"), _ext.blas_pointer("dgemm"))  # fmt: skip
    return (X, float(terms[0])) if fit_terms else X


def cg_rows(
    R: sp.csr_array, w: np.ndarray | None, c: np.ndarray, Y: np.ndarray, X: np.ndarray,
    base: np.ndarray | None, steps: int, blocks: RowBlocks | None = None,
    fit_terms: bool = False, *, reg: np.ndarray | None = None,
    targets: np.ndarray | None = None, copy: bool = True, shift: np.ndarray | None = None,
    plan: tuple | None = None,
):  # fmt: skip
    """``steps`` conjugate-gradient iterations, from X, on every row's system
    ``(base + reg_u I + sum_i w_ui y_i y_i^T) x_u = sum_i c_ui y_i``.

    ``base`` None is zero, ``reg`` None is zero (else one number per row), ``w`` None is all
    ones. The rows go by padded blocks of similar length (:class:`RowBlocks`): a block's item
    vectors are gathered once, ``A`` of shape (m, n_max, k), and every product of the CG
    iterations is then two stacked matrix-vector products on it,
    ``A^T (w * (A v)) + base v + reg v``, for all the block's rows at once. With
    ``fit_terms``, also a sum over the stored entries at the result
    (``s_ui = y_i^T x_u``): ``sum_ui (targets_ui - s_ui)^2`` where ``targets`` is given (the
    explicit model's squared error), else ``sum_ui c_ui (1 - s_ui)^2 - s_ui^2`` (the observed
    pairs' part of the implicit objective). ``copy=False`` works in place on X (a float64
    C-contiguous array the caller no longer needs). ``shift`` (one number per column) is
    taken off c entry by entry, ``c_ui - shift_i`` (and off ``targets`` when it is c).
    ``plan``, from :func:`cg_plan` on ``R``'s arrays, saves the compiled route forming it per
    call (R is then not read on that route).
    """
    X = X.copy() if copy else X
    k = Y.shape[1]
    fn = _compiled_cg()
    if fn is not None:
        return _cg_rows_compiled(
            fn, R, w, c, Y, X, base, reg, steps, targets, fit_terms, shift, plan
        )
    if shift is not None:
        same = targets is c
        c = c - shift[R.indices]
        targets = c if same else targets
    if blocks is None:
        blocks = RowBlocks(R, k)
    rhs = sp.csr_array((c, R.indices, R.indptr), shape=R.shape) @ Y
    Y_ext = np.vstack([Y, np.zeros((1, k))])
    w_ext = np.append(np.ones(R.nnz) if w is None else w, 0.0)
    c_ext = np.append(c, 0.0)
    t_ext = None if targets is None else np.append(targets, 0.0)
    terms = 0.0
    for rows, pos, cols in blocks.blocks:
        A = Y_ext[cols]
        wb = w_ext[pos]
        db = None if reg is None else reg[rows, None]

        def matvec(V, A=A, wb=wb, db=db):
            d = np.matmul(A, V[:, :, None])[..., 0]
            d *= wb
            out = np.matmul(d[:, None, :], A)[:, 0]
            if base is not None:
                out += V @ base
            if db is not None:
                out += db * V
            return out

        x = X[rows]
        r = rhs[rows] - matvec(x)
        p = r.copy()
        rs = np.einsum("nk,nk->n", r, r)
        for _ in range(steps):
            Ap = matvec(p)
            pAp = np.einsum("nk,nk->n", p, Ap)
            alpha = np.divide(rs, pAp, out=np.zeros_like(rs), where=pAp > 0)
            x += alpha[:, None] * p
            r -= alpha[:, None] * Ap
            rs_new = np.einsum("nk,nk->n", r, r)
            beta = np.divide(rs_new, rs, out=np.zeros_like(rs), where=rs > 0)
            p = r + beta[:, None] * p
            rs = rs_new
        X[rows] = x
        if fit_terms:
            # Padding entries have s = 0, c = 0 and target 0: they add nothing.
            s = np.matmul(A, x[:, :, None])[..., 0]
            if t_ext is not None:
                terms += float(np.sum((t_ext[pos] - s) ** 2))
            else:
                terms += float(np.sum(c_ext[pos] * (1.0 - s) ** 2 - s**2))
    return (X, terms) if fit_terms else X


class ImplicitALS(FactorModel):
    """Matrix factorisation for implicit feedback (Hu, Koren and Volinsky).

    Every (user, item) pair has a preference ``p_ui = 1`` if the user interacted with the
    item (a stored positive value r_ui, e.g. a count) and 0 otherwise, with confidence
    ``c_ui = 1 + alpha r_ui`` (1 for the pairs never seen). The factors minimise, over **all**
    pairs,

    ``sum_{u,i} c_ui (p_ui - x_u^T y_i)^2 + lambda (sum ||x_u||^2 + sum ||y_i||^2)``,

    alternating exact-in-block updates ``x_u = (Y^T C^u Y + lambda I)^{-1} Y^T C^u p(u)``; the
    sum over the unobserved pairs enters only through the shared ``Y^T Y``, since
    ``Y^T C^u Y = Y^T Y + Y^T (C^u - I) Y`` and C^u - I is zero off the user's items.

    Parameters
    ----------
    n_components : int, default=10
        Rank k.
    regularization : float, default=0.01
        lambda.
    alpha : float, default=40.0
        Confidence slope.
    max_iter : int, default=15
        Sweeps.
    solver : {"cg", "cholesky"}, default="cg"
        ``"cg"``: ``cg_steps`` conjugate-gradient iterations per sweep for each row, started
        from the previous sweep's vector (Takacs, Pilaszy, Tikk; compiled in
        ``mathlearn._ext._als`` where the install built it, each product a pass over the
        row's item vectors in AVX2 with fused multiply-adds where the processor has them,
        else SSE2 with two calls of SciPy's BLAS dgemv for the long rows; else batched
        NumPy);
        ``"cholesky"``: the exact solve.
    cg_steps : int, default=3
        CG iterations per row and half-sweep.
    tol : float, default=0.0
        Stop when the objective falls by less than ``tol`` times its value (0: run all).
    init_std : float, default=0.01
        Standard deviation of the random initial factors.
    dtype : {np.float64, np.float32}, default=np.float64
        Precision of the factors. ``np.float32`` halves their memory (``(U + I) k`` numbers),
        as implicit feedback libraries commonly do: with ``solver="cg"`` and the compiled
        helper, the sweeps run in single precision (``mathlearn._ext._als32``: factors,
        Gram matrix, CG vectors and the stored values rounded to float32, the objective
        summed in float64); otherwise they run in double precision and the factors are
        rounded at the end. Predictions are float64 either way.
    random_state : int, Generator or None, default=None
        Seed.

    Attributes
    ----------
    user_factors_ : ndarray of shape (n_users, n_components)
        x_u (of ``dtype``).
    item_factors_ : ndarray of shape (n_items, n_components)
        y_i (of ``dtype``).
    user_bias_, item_bias_ : ndarray
        Zeros.
    offset_ : float
        0.
    global_mean_ : float
        Mean preference over all pairs, nnz / (n_users n_items).
    objective_ : list of float
        The objective after each sweep (non-increasing: each half-sweep, exact or CG from
        the previous point, does not increase it).
    n_iter_ : int
        Sweeps run.
    user_ids_, item_ids_ : ndarray
        The id maps.

    Notes
    -----
    Y. Hu, Y. Koren, C. Volinsky, "Collaborative filtering for implicit feedback datasets"
    (ICDM 2008); G. Takacs, I. Pilaszy, D. Tikk, "Applications of the conjugate gradient
    method for implicit feedback collaborative filtering" (RecSys 2011). The weighted
    counterpart of the notes' alternating regressions (Oxford "Advanced Topics in
    Statistical Machine Learning" §6.2). ``predict`` returns the estimated preference
    x_u^T y_i; unknown ids get the mean preference (over all pairs, plus the known side's
    offset, e.g. an item's interaction rate for an unknown user, which ranks items by
    popularity).

    Complexity: with ``U`` users, ``I`` items, ``N`` observed pairs and rank ``k``, a sweep
    with ``solver="cg"`` costs ``O(s (N k + (U + I) k^2))`` for ``s = cg_steps + 1``
    products per row (each a pass over the row's item or user factors, a dot product and an
    update each, ``2 n k`` multiply-adds for a row with ``n`` entries, plus the shared ``k x k``
    Gram term, ``k^2``: with the compiled route, one matrix-matrix product for up to 8
    consecutive rows, which reads the Gram matrix once for them), and ``O((U + I) k^2)``
    for the Gram matrices ``X^T X``, ``Y^T Y``
    and the objective; with ``solver="cholesky"``, ``O(N k^2 + (U + I) k^3)`` (each row's
    normal matrix formed and factorised) plus ``O(N k)`` for the objective. A fit runs
    ``max_iter`` sweeps (fewer with ``tol > 0``). The unobserved pairs enter only through
    the Gram matrices: there is no ``U x I`` array. Memory: the factors (``(U + I) k``
    numbers, 4 bytes each with ``dtype=np.float32``, else 8), the pairs in item-major order
    (a 32-bit index and a value each, the value in float32 for the single-precision sweeps:
    8 or 12 bytes a pair; the container, in user-major order as :class:`Ratings`' builders
    leave it, serves as the other), one ``k x k`` Gram matrix, and per-row scratch of
    ``O(k + k n_max)`` numbers (``n_max`` the longest row; ``O(k)`` with the compiled AVX2
    loops, which gather nothing, and in single precision). The compiled route forms each
    pair's weight ``alpha r_ui`` and confidence as it goes; the NumPy route stores them
    (``4 N`` more). ``predict`` costs ``O(k)`` per pair, ``recommend`` ``O(I k)``.

    See Also
    --------
    ALS : explicit ratings, squared error on the observed entries only.

    Examples
    --------
    >>> from mathlearn.recommender import ImplicitALS, Ratings
    >>> # users 0-2 took items 0 and 1; user 3 item 0 only, user 4 item 2 only
    >>> r = Ratings.from_triples([0, 0, 1, 1, 2, 2, 3, 4], [0, 1, 0, 1, 0, 1, 0, 2], None)
    >>> m = ImplicitALS(n_components=2, regularization=0.1, random_state=0).fit(r)
    >>> m.recommend(3, n=1)[0].tolist()
    [1]
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "regularization": [Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"cg", "cholesky"})],
        "cg_steps": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "init_std": [Interval(Real, 0, None, closed="neither")],
        "dtype": [Options(type, {np.float64, np.float32}), StrOptions({"float64", "float32"})],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components: int = 10,
        *,
        regularization: float = 0.01,
        alpha: float = 40.0,
        max_iter: int = 15,
        solver: str = "cg",
        cg_steps: int = 3,
        tol: float = 0.0,
        init_std: float = 0.01,
        dtype=np.float64,
        random_state=None,
    ) -> None:
        self.n_components = n_components
        self.regularization = regularization
        self.alpha = alpha
        self.max_iter = max_iter
        self.solver = solver
        self.cg_steps = cg_steps
        self.tol = tol
        self.init_std = init_std
        self.dtype = dtype
        self.random_state = random_state

    @_fit_context
    def fit(self, ratings, y=None) -> ImplicitALS:
        """Fit the factors.

        Parameters
        ----------
        ratings : Ratings, scipy.sparse matrix (users x items) or DataFrame
            Interactions; the stored values (counts, > 0) set the confidence.
        y : None
            Ignored.

        Returns
        -------
        self : ImplicitALS
        """
        data = self._setup(ratings)
        if np.any(data.values <= 0):
            raise ValueError(
                "Implicit feedback values must be positive (counts or strengths of the "
                "interactions); drop the pairs without interaction instead of storing 0."
            )
        n_users, n_items = data.shape
        self.global_mean_ = data.nnz / (n_users * n_items)
        self._fallback_user = (
            np.bincount(data.users, minlength=n_users) / n_items - self.global_mean_
        )
        self._fallback_item = (
            np.bincount(data.items, minlength=n_items) / n_users - self.global_mean_
        )
        # float32 with the compiled CG sweeps: single precision throughout (the item-major
        # values too); otherwise the double-precision sweeps (the factors rounded at the
        # end, _finish_fit).
        driver32 = _compiled_sweeps32() if self.solver == "cg" else None
        single = np.dtype(self.dtype) == np.float32 and driver32 is not None
        pattern = Pattern(data, item_values=np.float32 if single else np.float64)
        rng = check_random_state(self.random_state)
        k, lam, alpha = int(self.n_components), float(self.regularization), float(self.alpha)
        dtype = np.dtype(np.float32 if single else np.float64)
        X = _normal_rows(rng, n_users, k, float(self.init_std), dtype)
        Y = _normal_rows(rng, n_items, k, float(self.init_std), dtype)
        if single:
            top = alpha * float(data.values.max())
            if top > float(np.finfo(np.float32).max):
                raise ValueError(
                    f"alpha * the largest stored value ({top:.3g}) overflows single "
                    "precision; use dtype=np.float64."
                )
            objectives, sweeps = _implicit_compiled32(driver32, pattern, X, Y, alpha, lam,
                                                      int(self.cg_steps), int(self.max_iter),
                                                      float(self.tol))  # fmt: skip
            if not (np.isfinite(objectives).all() and np.isfinite(X).all()
                    and np.isfinite(Y).all()):  # fmt: skip
                raise ValueError(
                    "The single-precision sweeps overflowed (stored values or alpha too "
                    "large for float32); use dtype=np.float64."
                )
            return self._finish_fit(X, Y, objectives, sweeps)
        driver = _compiled_sweeps() if self.solver == "cg" else None
        if driver is not None:
            objectives, sweeps = _implicit_compiled(driver, pattern, X, Y, alpha, lam,
                                                    int(self.cg_steps), int(self.max_iter),
                                                    float(self.tol))  # fmt: skip
            return self._finish_fit(X, Y, objectives, sweeps)
        w_u, w_i = alpha * pattern.values_u, alpha * pattern.values_i
        c_u, c_i = 1.0 + w_u, 1.0 + w_i
        eye = lam * np.eye(k)
        # The padded blocks serve the NumPy routes only (the compiled ones read the CSR arrays).
        numpy_route = _compiled_cg() is None
        blocks_u = RowBlocks(pattern.R, k) if numpy_route else None
        blocks_i = RowBlocks(pattern.Rt, k) if numpy_route else None
        plan_u = None if numpy_route else cg_plan(pattern.indptr_u, pattern.items_u)
        plan_i = None if numpy_route else cg_plan(pattern.indptr_i, pattern.users_i)
        # (the compiled CG route reads the plans' arrays, not SciPy matrices)
        need_R = numpy_route or self.solver == "cholesky"
        R_u, R_i = (pattern.R, pattern.Rt) if need_R else (None, None)
        history: list[float] = []
        n_iter = 0
        for n_iter in range(1, int(self.max_iter) + 1):  # noqa: B007
            if self.solver == "cholesky":
                X = ridge_rows(R_u, c_u, Y, np.full(n_users, lam), weights=w_u,
                               base_gram=Y.T @ Y, rhs_coef=c_u, blocks=blocks_u)  # fmt: skip
                Y = ridge_rows(R_i, c_i, X, np.full(n_items, lam), weights=w_i,
                               base_gram=X.T @ X, rhs_coef=c_i, blocks=blocks_i)  # fmt: skip
            else:
                steps = int(self.cg_steps)
                X = cg_rows(R_u, w_u, c_u, Y, X, Y.T @ Y + eye, steps, blocks_u,
                            plan=plan_u)  # fmt: skip
                Y, terms = cg_rows(R_i, w_i, c_i, X, Y, X.T @ X + eye, steps, blocks_i,
                                   fit_terms=True, plan=plan_i)  # fmt: skip
            if self.solver == "cholesky":
                history.append(self._objective(pattern, X, Y, lam, alpha))
            else:
                total = float(np.sum((X.T @ X) * (Y.T @ Y))) + terms
                history.append(total + lam * float(np.sum(X**2) + np.sum(Y**2)))
            if (
                self.tol > 0
                and len(history) > 1
                and history[-2] - history[-1] <= (self.tol * history[-2])
            ):
                break
        return self._finish_fit(X, Y, history, n_iter)

    def _finish_fit(self, X, Y, history: list, n_iter: int) -> ImplicitALS:
        converged = len(history) > 1 and history[-2] - history[-1] <= self.tol * history[-2]
        if self.tol > 0 and self.max_iter > 1 and not converged:
            warnings.warn(
                f"ImplicitALS did not converge in max_iter={self.max_iter} sweeps.",
                ConvergenceWarning,
                stacklevel=3,
            )
        dtype = np.dtype(self.dtype)
        self.user_factors_, self.item_factors_ = (
            X.astype(dtype, copy=False),
            Y.astype(dtype, copy=False),
        )
        self.user_bias_, self.item_bias_ = np.zeros(X.shape[0]), np.zeros(Y.shape[0])
        self.offset_ = 0.0
        self.objective_, self.n_iter_ = history, n_iter
        return self

    @staticmethod
    def _objective(pattern: Pattern, X, Y, lam: float, alpha: float) -> float:
        # All pairs: sum (x.y)^2 = tr(X^T X Y^T Y); observed pairs replace it by c (1 - s)^2.
        s = pair_dots(X, Y, pattern.users, pattern.items)
        c = 1.0 + alpha * pattern.values
        total = float(np.sum((X.T @ X) * (Y.T @ Y)))
        total += float(np.sum(c * (1.0 - s) ** 2 - s**2))
        return total + lam * float(np.sum(X**2) + np.sum(Y**2))
