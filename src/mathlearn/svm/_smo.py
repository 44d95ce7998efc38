"""Sequential minimal optimisation for the SVM duals: a box and at most one linear equality.

Every kernel machine of this package solves a problem of the form

    min_a  f(a) = 1/2 a^T Q a + p^T a
    s.t.   0 <= a_t <= C_t                       (the box)
           s^T a = Delta                         (one equality, s_t in {-1, +1}; or none)

with ``Q`` positive semi-definite and ``Q_tu = s_t s_u K_tu`` for a kernel matrix ``K``:

* C-SVC (Oxford notes "Advanced Topics in Statistical Machine Learning" §2.2.2; PRML §7.1.1):
  ``s = y``, ``p = -1``, ``C_t = C w_t``, ``Delta = 0``;
* epsilon-SVR (Imperial "Mathematics for Inference and Machine Learning" §3.2.2): ``2N``
  variables ``(a, a*)``, ``s = (+1, -1)``, ``p = (eps - y, eps + y)``, ``Delta = 0``;
* nu-SVC and nu-SVR (Schölkopf et al. 2000): two equalities, one per sign of ``s``, which
  the ``per_sign`` mode keeps by only pairing variables of the same sign;
* the offset-free nu-SVM and kernel SVM of the Oxford notes §2.2.3 and §3.5: ``sum a = nu``
  (``s = 1``) or no equality at all (``equality="none"``: single-variable steps).

The gradient ``G = Q a + p`` is kept up to date. A step changes two variables along the
direction that keeps ``s^T a`` fixed, ``a_i += s_i t``, ``a_j -= s_j t``; along it

    f(a + t d) = f(a) + t (s_i G_i - s_j G_j) + t^2/2 (K_ii + K_jj - 2 K_ij),

so the best step is ``t* = -(s_i G_i - s_j G_j) / (K_ii + K_jj - 2 K_ij)`` clipped to the
interval that keeps both variables in their boxes. The pair is chosen by the second-order
rule of Fan, Chen and Lin (2005, "Working set selection using second order information for
training SVM"): ``i`` maximises ``-s_t G_t`` over the variables that can move up,
``I_up = {t : a_t < C_t, s_t = +1} | {t : a_t > 0, s_t = -1}``, and ``j`` maximises the
decrease ``b_tj^2 / a_tj`` of the two-variable step among the variables that can move down,
``b_t = -s_i G_i + s_t G_t > 0``. The KKT conditions hold exactly when
``m(a) = max_{I_up} -s G <= M(a) = min_{I_low} -s G``; the solver stops when the gap
``m - M`` falls below ``tol`` (libsvm's rule, so that ``tol`` means the same in both).

Columns of ``Q`` come from a callback and are kept in an LRU cache with a memory budget.

Two routes run these iterations. The compiled one (``mathlearn/_ext/_smo.c``, built when the
package is installed, called through ``ctypes``) serves the built-in kernels (linear,
polynomial, RBF, sigmoid, evaluated in C on the float64 rows) and precomputed Gram matrices,
with one equality or one per sign: it takes the same steps with the same shrinking schedule,
caches whole kernel columns per point, and rebuilds the gradient of the variables set aside
from ``H = sum over upper-bound variables of s_u C_u K(., x_u)`` (kept up to date as variables
reach or leave their bound) and the free variables' columns. The NumPy route below serves
kernel objects and callables, the box-only problems (``equality="none"``), and every problem
when the library was not built (or ``MATHLEARN_DISABLE_EXT=1``); both reach the same solution
(``tests/svm/test_smo_routes.py``). The compiled route stores its cached columns in single
precision, half the memory, as libsvm does, where ``single_columns_suffice`` shows from a
rounding bound that this cannot move the KKT gap by more than a tenth of ``tol``; the NumPy
route keeps double precision.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

_TAU = 1e-12  # curvature used where K_ii + K_jj - 2 K_ij <= 0 (a non-PSD kernel, or a tie)


class ColumnCache:
    """Least-recently-used cache of kernel columns over the active variables, with a budget.

    A column is ``K[active_points, point]``; when the active set shrinks, every cached column
    is cut down to the rows that stay, so nothing is recomputed.

    Parameters
    ----------
    gram : object
        The kernel matrix over the distinct points: ``gram.columns_over(rows)`` returns a
        function ``point -> K[rows, point]``.
    rows : ndarray of int
        The points of the active variables (one row per variable).
    cache_size : float
        Budget in megabytes (at least two columns are always kept).
    """

    def __init__(self, gram, rows: np.ndarray, cache_size: float):
        self._gram = gram
        self._budget = cache_size * 2**20
        self._cols: OrderedDict[int, np.ndarray] = OrderedDict()
        self.reset(rows)

    def reset(self, rows: np.ndarray) -> None:
        """Start over with a new set of rows (after the active set grew back)."""
        self._rows = rows
        self._compute = self._columns(rows)
        self._cols.clear()
        self._capacity = max(2, int(self._budget // max(8 * rows.shape[0], 1)))

    def shrink(self, keep: np.ndarray) -> None:
        """Keep only the rows ``keep`` (a boolean mask over the current rows)."""
        self._rows = self._rows[keep]
        self._compute = self._columns(self._rows)
        for t, col in self._cols.items():
            self._cols[t] = col[keep]
        self._capacity = max(2, int(self._budget // max(8 * self._rows.shape[0], 1)))

    def _columns(self, rows: np.ndarray):
        """``point -> K[rows, point]``, evaluating the kernel once per distinct row point.

        The two variables ``a_t`` and ``a_t*`` of a regression machine share a point: their
        kernel entries are computed once and copied.
        """
        distinct, row_of = np.unique(rows, return_inverse=True)
        if distinct.shape[0] == rows.shape[0]:
            return self._gram.columns_over(rows)
        compute = self._gram.columns_over(distinct)
        return lambda point: compute(point)[row_of]

    def column(self, point: int) -> np.ndarray:
        """``K[rows, point]``."""
        col = self._cols.get(point)
        if col is None:
            col = np.ascontiguousarray(self._compute(point))
            self._cols[point] = col
            if len(self._cols) > self._capacity:
                self._cols.popitem(last=False)
        else:
            self._cols.move_to_end(point)
        return col


@dataclass
class DualResult:
    """Solution of the dual and what the offset rules need.

    Attributes
    ----------
    alpha : ndarray of shape (l,)
    grad : ndarray of shape (l,)
        ``G = Q alpha + p`` at the solution.
    objective : float
        ``1/2 alpha^T Q alpha + p^T alpha``.
    n_iter : int
    converged : bool
    gap : float
        The final KKT gap ``m(alpha) - M(alpha)`` (the largest over the sign groups in
        ``per_sign`` mode).
    """

    alpha: np.ndarray
    grad: np.ndarray
    objective: float
    n_iter: int
    converged: bool
    gap: float


def _full_score(gram, sign, index, p, alpha, rows_var, chunk_entries=2**22):
    """``score_t = -s_t G_t = -s_t p_t - sum_u K_tu s_u a_u`` for the variables ``rows_var``.

    The kernel rows are computed once per distinct point: the two variables ``a_t`` and
    ``a_t*`` of a regression machine share theirs.
    """
    nz = np.flatnonzero(alpha)
    out = -sign[rows_var] * p[rows_var]
    if nz.size == 0 or rows_var.size == 0:
        return out
    pts, inverse = np.unique(index[nz], return_inverse=True)
    weights = np.zeros(pts.shape[0])
    np.add.at(weights, inverse, sign[nz] * alpha[nz])
    row_pts, row_of = np.unique(index[rows_var], return_inverse=True)
    kw = np.empty(row_pts.shape[0])
    step = max(1, chunk_entries // pts.shape[0])
    for start in range(0, row_pts.size, step):
        sl = slice(start, start + step)
        kw[sl] = gram.block(row_pts[sl], pts) @ weights
    out -= kw[row_of]
    return out


def solve_dual(
    gram,
    kernel_diag: np.ndarray,
    sign: np.ndarray,
    index: np.ndarray,
    p: np.ndarray,
    upper: np.ndarray,
    *,
    alpha0: np.ndarray | None = None,
    equality: str = "single",
    tol: float = 1e-3,
    max_iter: int | None = None,
    cache_size: float = 200.0,
    shrinking: bool = True,
    compiled: bool | None = None,
    single_columns: bool | None = None,
) -> DualResult:
    """Minimise ``1/2 a^T Q a + p^T a`` over the box, keeping the equality of ``alpha0``.

    Parameters
    ----------
    gram : object
        The kernel matrix over the distinct points: ``gram.block(rows, cols)`` gives
        ``K[rows][:, cols]`` and ``gram.columns_over(rows)`` a function ``point -> K[rows,
        point]`` (see ``mathlearn.svm._base._Gram``).
    kernel_diag : ndarray of shape (n,)
        ``K_tt``.
    sign : ndarray of shape (l,)
        ``s_t`` in ``{-1, +1}``; ``Q_tu = s_t s_u K[index_t, index_u]``.
    index : ndarray of shape (l,)
        The point each variable belongs to (``l = 2n`` for regression).
    p : ndarray of shape (l,)
        Linear term.
    upper : ndarray of shape (l,)
        Box upper bounds ``C_t >= 0``.
    alpha0 : ndarray of shape (l,), optional
        A feasible start (zeros by default); it fixes ``Delta = s^T alpha0``.
    equality : {"single", "per_sign", "none"}
        One equality ``s^T a = Delta``; one per sign of ``s`` (nu-SVMs); or none.
    tol : float
        Stopping tolerance on the KKT gap.
    max_iter : int or None
        Iteration cap (``None``: ``max(10^7, 100 l)``, effectively unbounded).
    cache_size : float
        Kernel cache budget in MB.
    shrinking : bool
        Set aside, every ``min(l, 1000)`` steps, the bounded variables that the KKT
        conditions say will stay bounded (libsvm's heuristic); their gradient is rebuilt, and
        they are checked again, before the solver declares convergence.
    compiled : bool or None
        Run the iterations in the compiled library ``mathlearn._ext._smo`` (the same
        steps, in C). ``None``: whenever it is built, ``gram`` describes its kernel
        (``gram.c_spec``: a built-in kernel on float64 rows, or a precomputed matrix) and
        there is an equality; otherwise, and with ``False``, the NumPy route below.
    single_columns : bool or None
        Compiled route only: store the cached kernel columns in single precision (half the
        memory; the iterations then solve the problem with the rounded kernel matrix).
        ``None``: where ``single_columns_suffice`` shows the rounding cannot matter against
        ``tol``. The NumPy route and precomputed matrices always use double precision.

    Returns
    -------
    DualResult
    """
    sign = np.asarray(sign, dtype=float)
    index = np.asarray(index, dtype=np.intp)
    p = np.asarray(p, dtype=float)
    upper = np.asarray(upper, dtype=float)
    n_var = sign.shape[0]
    alpha = np.zeros(n_var) if alpha0 is None else np.array(alpha0, dtype=float)
    max_iter = max(10_000_000, 100 * n_var) if max_iter is None else int(max_iter)
    spec = getattr(gram, "c_spec", None)
    if compiled is None:
        compiled = spec is not None and equality != "none" and _library() is not None
    if compiled:
        if spec is None or equality == "none" or _library() is None:
            raise ValueError(
                "the compiled SMO route needs the built library, a built-in or precomputed "
                "kernel and an equality constraint."
            )
        return _solve_compiled(
            spec,
            kernel_diag,
            sign,
            index,
            p,
            upper,
            alpha,
            equality == "per_sign",
            tol,
            max_iter,
            cache_size,
            shrinking,
            single_columns,
            gram,
        )
    diag_all = kernel_diag[index]
    score_all = _full_score(gram, sign, index, p, alpha, np.arange(n_var))

    # Working copies over the active variables ``act``.
    act = np.arange(n_var)
    cache = ColumnCache(gram, index, cache_size)

    def load(active):
        return (
            sign[active],
            upper[active],
            diag_all[active],
            index[active],
            alpha[active].copy(),
            score_all[active].copy(),
        )

    s, c, d, pts, a, score = load(act)
    pos = s > 0
    can_up = np.where(pos, a < c, a > 0)
    can_down = np.where(pos, a > 0, a < c)
    compiled = n_var >= _KERNEL_MIN_VARS
    shrink_every = min(n_var, 1000)
    counter = shrink_every
    unshrunk = False
    n_iter = 0
    converged = False
    gap = np.inf

    def groups_of(pos_mask):
        return (pos_mask, ~pos_mask) if equality == "per_sign" else (None,)

    while n_iter < max_iter:
        if shrinking and equality != "none":
            counter -= 1
            if counter == 0:
                counter = shrink_every
                keep, thresholds = _shrink_mask(score, can_up, can_down, groups_of(pos))
                gap_now = max((m - lo for m, lo in thresholds), default=0.0)
                if not unshrunk and gap_now <= 10 * tol:
                    # Close to the end: rebuild the gradient and let every variable back once.
                    unshrunk = True
                    alpha[act] = a
                    score_all[act] = score
                    rest = np.setdiff1d(np.arange(n_var), act, assume_unique=True)
                    score_all[rest] = _full_score(gram, sign, index, p, alpha, rest)
                    act = np.arange(n_var)
                    s, c, d, pts, a, score = load(act)
                    pos = s > 0
                    can_up = np.where(pos, a < c, a > 0)
                    can_down = np.where(pos, a > 0, a < c)
                    cache.reset(pts)
                    keep, _ = _shrink_mask(score, can_up, can_down, groups_of(pos))
                # Cutting the cached columns costs a pass over the cache: only worth it when
                # a tenth of the active variables or more can go.
                if 2 <= keep.sum() <= 0.9 * keep.size:
                    alpha[act] = a
                    score_all[act] = score
                    act = act[keep]
                    s, c, d, pts = s[keep], c[keep], d[keep], pts[keep]
                    a, score = a[keep], score[keep]
                    pos, can_up, can_down = pos[keep], can_up[keep], can_down[keep]
                    cache.shrink(keep)
        step_pair = None
        if equality == "none":
            grad = -s * score
            i = _select_single(grad, a, c, d, tol)
            gap = 0.0 if i is None else np.inf
            if i is not None:
                col = cache.column(pts[i])
                new = min(max(a[i] - grad[i] / max(d[i], _TAU), 0.0), c[i])
                score -= ((new - a[i]) * s[i]) * col
                a[i] = new
                n_iter += 1
                continue
        else:
            step_pair, gap = _select_pair(
                score, can_up, can_down, d, groups_of(pos), tol, cache, pts, compiled
            )
        if step_pair is None:
            if act.size == n_var:
                converged = True
                break
            # Converged on the active set: rebuild the gradient of the shrunk variables and
            # go on with all of them (the KKT check must hold for every variable).
            alpha[act] = a
            score_all[act] = score
            rest = np.setdiff1d(np.arange(n_var), act, assume_unique=True)
            score_all[rest] = _full_score(gram, sign, index, p, alpha, rest)
            act = np.arange(n_var)
            s, c, d, pts, a, score = load(act)
            pos = s > 0
            can_up = np.where(pos, a < c, a > 0)
            can_down = np.where(pos, a > 0, a < c)
            cache.reset(pts)
            unshrunk = True
            counter = shrink_every
            continue
        i, j, k_it = step_pair
        curv = d[i] + d[j] - 2.0 * k_it[j]
        curv = curv if curv > 0 else _TAU
        step = (score[i] - score[j]) / curv  # -(s_i G_i - s_j G_j) / curv, > 0
        # Largest step keeping a_i + s_i t and a_j - s_j t inside their boxes.
        hi_i = c[i] - a[i] if s[i] > 0 else a[i]
        hi_j = a[j] if s[j] > 0 else c[j] - a[j]
        hi = min(hi_i, hi_j)
        step = min(step, hi)
        new_i = a[i] + s[i] * step
        new_j = a[j] - s[j] * step
        if step == hi:  # land exactly on the bound that was reached (no 1e-17 leftovers)
            if hi == hi_i:
                new_i = c[i] if s[i] > 0 else 0.0
            if hi == hi_j:
                new_j = 0.0 if s[j] > 0 else c[j]
        c_i = (new_i - a[i]) * s[i]
        c_j = (new_j - a[j]) * s[j]
        a[i], a[j] = new_i, new_j
        delta = k_it * c_i
        delta += cache.column(pts[j]) * c_j
        score -= delta
        for t in (i, j):
            can_up[t] = a[t] < c[t] if s[t] > 0 else a[t] > 0
            can_down[t] = a[t] > 0 if s[t] > 0 else a[t] < c[t]
        n_iter += 1
    alpha[act] = a
    score_all[act] = score
    if act.size < n_var:
        rest = np.setdiff1d(np.arange(n_var), act, assume_unique=True)
        score_all[rest] = _full_score(gram, sign, index, p, alpha, rest)
    grad = -sign * score_all
    objective = 0.5 * float(alpha @ (grad - p)) + float(p @ alpha)
    return DualResult(alpha, grad, objective, n_iter, converged, float(max(gap, 0.0)))


@dataclass
class KernelSpec:
    """A kernel the compiled solver evaluates itself, on float64 rows ``X`` (``n x d``).

    ``kind``: ``"precomputed"`` (``X`` is the symmetric ``n x n`` Gram matrix), ``"linear"``
    (``x^T y``), ``"poly"`` (``(gamma x^T y + coef0)^degree``), ``"rbf"`` (``exp(-gamma
    (|x|^2 + |y|^2 - 2 x^T y))`` with the squared norms ``norms``, clipped at 0) or
    ``"sigmoid"`` (``tanh(gamma x^T y + coef0)``).
    """

    kind: str
    X: np.ndarray
    norms: np.ndarray | None = None
    gamma: float = 1.0
    coef0: float = 0.0
    degree: int = 3

    def restricted(self, members: np.ndarray) -> KernelSpec:
        """The same kernel over the points ``members``."""
        if self.kind == "precomputed":
            X = self.X[np.ix_(members, members)]
        else:
            X = self.X[members]
        norms = None if self.norms is None else self.norms[members]
        return KernelSpec(self.kind, X, norms, self.gamma, self.coef0, self.degree)


_KINDS = {"precomputed": 0, "linear": 1, "poly": 2, "rbf": 3, "sigmoid": 4}
_ERRORS = {
    -1: (MemoryError, "the compiled SMO solver ran out of memory; lower cache_size."),
    -2: (
        ValueError,
        "the polynomial kernel overflowed (|gamma x^T y + coef0|^degree > 1e308); rescale X "
        "or lower gamma/degree.",
    ),
    -3: (ValueError, "the compiled SMO solver was given inconsistent arguments."),
}
_DECLARED: set = set()
# smo_solve's arguments, in order: sizes and the problem's arrays; the kernel; the options;
# three outputs (iterations, converged, final gap).
_SIGNATURE = (
    ("l", "i64"), ("n", "i64"), ("index", "ptr"), ("sign", "ptr"), ("p", "ptr"),
    ("upper", "ptr"), ("kdiag", "ptr"), ("alpha", "ptr"), ("score", "ptr"),
    ("kind", "int"), ("d", "i64"), ("X", "ptr"), ("norms", "ptr"), ("gamma", "f64"),
    ("coef0", "f64"), ("degree", "int"),
    ("per_sign", "int"), ("tol", "f64"), ("max_iter", "i64"), ("cache_bytes", "f64"),
    ("shrinking", "int"), ("single", "int"), ("start_score", "ptr"), ("start_H", "ptr"),
    ("n_iter", "ptr"), ("converged", "ptr"), ("gap", "ptr"),
)  # fmt: skip


def _library():
    """The compiled solver (``mathlearn._ext._smo``) with its signature declared, or None."""
    from .._ext import load

    lib = load("_smo")
    if lib is not None and id(lib) not in _DECLARED:
        import ctypes

        types = {"i64": ctypes.c_int64, "ptr": ctypes.c_void_p, "f64": ctypes.c_double,
                 "int": ctypes.c_int}  # fmt: skip
        lib.smo_solve.restype = ctypes.c_int
        lib.smo_solve.argtypes = [types[kind] for _, kind in _SIGNATURE]
        _DECLARED.add(id(lib))
    return lib


_U32 = 2.0**-24  # unit roundoff of single precision


def _start_scores(gram, sign, index, p, alpha, upper, n_points, single, chunk_entries=2**16):
    """The compiled solver's start from a non-zero ``alpha``, by products over row blocks.

    ``score_t = -s_t p_t - sum_u K(x_pt(t), x_pt(u)) s_u a_u`` and, over the points, ``H_q =
    sum over u at its upper bound of s_u C_u K(x_q, x_pt(u))``: two columns of weights on
    the distinct points of the non-zero coefficients, multiplied by blocks of kernel rows of
    at most ``chunk_entries`` entries (512 KiB), rounded to single precision first when the
    solver's columns are (so that the start uses the kernel values the iterations use).
    """
    nz = np.flatnonzero(alpha)
    pts, inverse = np.unique(index[nz], return_inverse=True)
    weights = np.zeros((pts.shape[0], 2))
    np.add.at(weights[:, 0], inverse, sign[nz] * alpha[nz])
    bound = alpha[nz] >= upper[nz]
    np.add.at(weights[:, 1], inverse[bound], sign[nz][bound] * upper[nz][bound])
    # A nu-SVR start puts a_t = a*_t on each point: the weights cancel there.
    used = np.flatnonzero(weights.any(axis=1))
    pts, weights = pts[used], weights[used]
    score = -sign * p
    if pts.shape[0] == 0:
        return score, np.zeros(n_points)
    kw = np.empty((n_points, 2))
    step = max(1, chunk_entries // pts.shape[0])
    for start in range(0, n_points, step):
        # a slice: the block's rows of the data are a view, not a gathered copy
        rows = slice(start, min(start + step, n_points))
        block = gram.block(rows, pts)
        if single:
            block[...] = block.astype(np.float32)
        kw[rows] = block @ weights
    score -= kw[index, 0]
    return score, np.ascontiguousarray(kw[:, 1])


# The start's kernel evaluations (entries times features, plus about 16 for the
# exponential and the sums) below which the compiled solver's own loop over the columns of
# the non-zero coefficients is as fast as the products of ``_start_scores``, whose fixed
# cost (the block's gathers, its squared distances, a BLAS call) is some 100 microseconds:
# measured for nu-SVC, from 60 x 120 to 200 x 5 (N x D). Those small starts are left to the
# solver, which needs no N x n_nz block and its temporaries (at 100 x 20, 100 kB of a fit's
# 120 kB).
_START_PRODUCTS_MIN_WORK = 2**18


def _products_pay(n_points: int, n_nonzero: int, n_features: int) -> bool:
    """Whether the start from a non-zero ``alpha`` is worth ``_start_scores``' products."""
    return n_points * n_nonzero * (n_features + 16) > _START_PRODUCTS_MIN_WORK


def single_columns_suffice(spec, upper, tol) -> bool:
    """Whether storing the kernel columns in single precision cannot matter against ``tol``.

    Rounding an entry to single precision changes it by at most ``u |K_tu|`` (``u = 2^-24``;
    ``2^-150`` below the normal range, which is ``u 2^-126``). The solver then runs exactly
    the iterations of the problem with the rounded matrix, so each score ``-s_t G_t`` at its
    solution is off from the true problem's by ``e_t = sum_u s_t s_u (fl(K_tu) - K_tu) a_u``.
    With the rounding errors modelled as independent and uniform on ``[-u, u] |K_tu|`` (the
    probabilistic model of rounding, Higham, "Accuracy and Stability of Numerical
    Algorithms", 2nd ed., §2.8), ``e_t`` has standard deviation at most ``u K_max ||C||_2 /
    sqrt(3)``, with ``K_max`` a bound on ``|K|`` and ``C`` the box bounds. The KKT gap of the
    true problem exceeds the one the solver stops at by at most ``2 max |e_t|``; single
    precision is used when six standard deviations are below ``tol / 20``, i.e. when
    ``u K_max ||C||_2 <= tol sqrt(3) / 120``: the gap is then within ``1.1 tol``. With the
    defaults (``C = 1``, ``tol = 1e-3``) this holds up to about 58 000 variables.

    ``K_max``: 1 for the RBF and sigmoid kernels, ``max ||x||^2`` for the linear one (by
    Cauchy-Schwarz), ``(gamma max ||x||^2 + |coef0|)^degree`` for the polynomial one; it must
    lie in the normal range of single precision. A precomputed matrix is read in place, in
    double precision.
    """
    if spec.kind == "precomputed" or not tol > 0:
        return False
    with np.errstate(over="ignore", invalid="ignore"):
        if spec.kind in ("rbf", "sigmoid"):
            k_max = 1.0
        else:
            X = spec.X
            r2 = float(np.einsum("ij,ij->i", X, X).max()) if X.size else 0.0
            if spec.kind == "linear":
                k_max = r2
            else:
                k_max = float(np.float64(abs(spec.gamma) * r2 + abs(spec.coef0)) ** spec.degree)
        c_norm = float(np.sqrt(np.sum(np.square(upper))))
        bound = _U32 * k_max * c_norm
    if not (2.0**-126 <= k_max <= 2.0**127) or not np.isfinite(bound):
        return False
    return bool(bound <= tol * np.sqrt(3.0) / 120.0)


def _solve_compiled(
    spec,
    kernel_diag,
    sign,
    index,
    p,
    upper,
    alpha,
    per_sign,
    tol,
    max_iter,
    cache_size,
    shrinking,
    single,
    gram=None,
):
    """``solve_dual`` through the compiled library (arguments validated by the caller).

    A start with non-zero coefficients (the nu-SVMs') has its scores computed here by
    matrix products over blocks of ``gram`` rather than one kernel column at a time in C,
    unless it is small (``_products_pay``): the same sums, in another order.
    """
    lib = _library()
    n_var = sign.shape[0]
    X = np.ascontiguousarray(spec.X, dtype=np.float64)
    n_points = X.shape[0]
    kdiag = np.ascontiguousarray(kernel_diag, dtype=np.float64)
    if kdiag.shape[0] != n_points or (spec.kind == "precomputed" and X.shape[1] != n_points):
        raise ValueError("the kernel description does not match the kernel diagonal.")
    norms = X[:0, 0] if spec.norms is None else np.ascontiguousarray(spec.norms, np.float64)
    arrays = {
        "index": np.ascontiguousarray(index, dtype=np.int64),
        "sign": np.ascontiguousarray(sign),
        "p": np.ascontiguousarray(p),
        "upper": np.ascontiguousarray(upper),
    }
    # solve_dual's own array (zeros, or a copy of the caller's start): updated in place
    alpha = np.ascontiguousarray(alpha, dtype=np.float64)
    score = np.empty(n_var)
    if single is None:
        single = single_columns_suffice(spec, upper, tol)
    start = None
    if (
        gram is not None
        and spec.kind != "precomputed"
        and np.any(alpha)
        and _products_pay(n_points, np.count_nonzero(alpha), X.shape[1])
    ):
        start = _start_scores(gram, sign, arrays["index"], p, alpha, upper, n_points, single)
    n_iter = np.zeros(1, dtype=np.int64)
    converged = np.zeros(1, dtype=np.intc)
    gap = np.zeros(1)
    status = lib.smo_solve(
        n_var,
        n_points,
        arrays["index"].ctypes.data,
        arrays["sign"].ctypes.data,
        arrays["p"].ctypes.data,
        arrays["upper"].ctypes.data,
        kdiag.ctypes.data,
        alpha.ctypes.data,
        score.ctypes.data,
        _KINDS[spec.kind],
        X.shape[1],
        X.ctypes.data,
        norms.ctypes.data,
        float(spec.gamma),
        float(spec.coef0),
        int(spec.degree),
        int(per_sign),
        float(tol),
        min(int(max_iter), 2**62),  # any larger cap is never reached
        float(cache_size) * 2**20,
        int(bool(shrinking)),
        int(single),
        None if start is None else start[0].ctypes.data,
        None if start is None else start[1].ctypes.data,
        n_iter.ctypes.data,
        converged.ctypes.data,
        gap.ctypes.data,
    )
    if status != 0:
        error, message = _ERRORS.get(status, (RuntimeError, f"SMO solver error {status}"))
        raise error(message)
    grad = score  # -s_t score_t, in the score's buffer
    grad *= sign
    np.negative(grad, out=grad)
    ap = float(p @ alpha)
    objective = 0.5 * (float(alpha @ grad) - ap) + ap
    return DualResult(
        alpha, grad, objective, int(n_iter[0]), bool(converged[0]), float(max(gap[0], 0.0))
    )


# Above this many active variables the working-set selection runs as two compiled passes
# (``_smo_kernels``) instead of about fifteen NumPy passes with temporaries; below it the
# NumPy route is as fast and compiles nothing.
_KERNEL_MIN_VARS = 6000


def _select_pair(score, can_up, can_down, diag, groups, tol, cache, pts, compiled=None):
    """Second-order working-set selection; ``(None, gap)`` when the KKT gap is below tol.

    ``compiled`` picks the route (default: the compiled one from ``_KERNEL_MIN_VARS``
    variables); the solver decides once per problem, from its full size.
    """
    if compiled is None:
        compiled = score.shape[0] >= _KERNEL_MIN_VARS
    if compiled:
        from ._smo_kernels import extremes, second_order_partner
    best = None
    gap = -np.inf
    for group in groups:
        if compiled:
            mask = can_up if group is None else group  # any bool array when unused
            i, g_max, g_min = extremes(score, can_up, can_down, mask, group is not None)
            if i < 0 or not np.isfinite(g_min):
                continue
            gap = max(gap, g_max - g_min)
            if g_max - g_min < tol:
                continue
            k_it = cache.column(pts[i])
            j, gain_j = second_order_partner(
                score, can_down, mask, group is not None, k_it, diag, diag[i], g_max
            )
            if best is None or gain_j > best[0]:
                best = (gain_j, (i, j, k_it))
            continue
        up = can_up if group is None else can_up & group
        if not up.any():
            continue
        low = can_down if group is None else can_down & group
        up_scores = np.where(up, score, -np.inf)
        i = int(np.argmax(up_scores))
        g_max = up_scores[i]
        low_scores = np.where(low, score, np.inf)
        g_min = float(low_scores.min())
        if not (np.isfinite(g_max) and np.isfinite(g_min)):
            continue
        gap = max(gap, g_max - g_min)
        if g_max - g_min < tol:
            continue
        k_it = cache.column(pts[i])
        b = g_max - low_scores  # > 0 exactly for the variables that can go down usefully
        curv = k_it * -2.0
        curv += diag
        curv += diag[i]
        curv[curv <= 0] = _TAU
        gain = b * b
        gain /= curv
        gain[~(b > 0)] = -np.inf
        j = int(np.argmax(gain))
        if best is None or gain[j] > best[0]:
            best = (gain[j], (i, j, k_it))
    return (None if best is None else best[1]), gap


def _shrink_mask(score, can_up, can_down, groups):
    """Variables to keep: free ones, and bounded ones that could still enter a working set.

    With ``m = max_{I_up} score`` and ``M = min_{I_low} score``: a variable that can only move
    down is a candidate for ``j`` only while ``score_t < m``, one that can only move up is a
    candidate for ``i`` only while ``score_t > M``; the others are set aside.
    """
    keep = np.ones(score.shape[0], dtype=bool)
    thresholds = []
    for group in groups:
        g = np.ones_like(keep) if group is None else group
        up = can_up & g
        low = can_down & g
        if not up.any() or not low.any():
            continue
        m = float(score[up].max())
        lo = float(score[low].min())
        thresholds.append((m, lo))
        only_down = low & ~up
        only_up = up & ~low
        keep &= ~(only_down & (score > m))
        keep &= ~(only_up & (score < lo))
    return keep, thresholds


def _select_single(grad, alpha, upper, diag, tol):
    """Coordinate with the largest decrease among KKT violators (box only), or None."""
    viol = np.where(
        alpha <= 0, np.minimum(grad, 0.0), np.where(alpha >= upper, np.maximum(grad, 0.0), grad)
    )
    if np.max(np.abs(viol)) < tol:
        return None
    return int(np.argmax(viol * viol / np.maximum(diag, _TAU)))


def offset_from_kkt(result: DualResult, sign: np.ndarray, upper: np.ndarray, mask=None):
    """The offset ``rho`` of the decision function ``sum_t s_t a_t K(x_t, x) - rho``.

    At the optimum every free variable (``0 < a_t < C_t``) has ``s_t G_t = rho``; the mean
    over them is returned (the Oxford notes §2.2.2 average over margin support vectors for
    stability). With no free variable, ``rho`` may be anything in the interval the bounded
    variables allow, ``max_{lower side} s G <= rho <= min_{upper side} s G``; its midpoint is
    returned (errata to the notes: the averaging rule does not apply then).
    """
    alpha, grad = result.alpha, result.grad
    keep = np.ones(alpha.shape[0], dtype=bool) if mask is None else mask
    yg = sign * grad
    free = keep & (alpha > 0) & (alpha < upper)
    if free.any():
        return float(np.mean(yg[free]))
    at_upper = alpha >= upper
    at_lower = alpha <= 0
    # s G - rho >= 0 at a lower bound with s = +1 (and <= 0 with s = -1); the reverse at C.
    lower_side = keep & ((at_upper & (sign > 0)) | (at_lower & (sign < 0)))
    upper_side = keep & ((at_upper & (sign < 0)) | (at_lower & (sign > 0)))
    ub = float(np.min(yg[upper_side])) if upper_side.any() else np.inf
    lb = float(np.max(yg[lower_side])) if lower_side.any() else -np.inf
    if np.isinf(ub) and np.isinf(lb):
        return 0.0
    if np.isinf(ub):
        return lb
    if np.isinf(lb):
        return ub
    return 0.5 * (ub + lb)
