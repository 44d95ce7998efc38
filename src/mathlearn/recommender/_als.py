"""Explicit-feedback alternating least squares with biases."""

from __future__ import annotations

import ctypes
import warnings
from numbers import Integral, Real

import numpy as np

from .. import _ext
from ..base import _fit_context
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import check_random_state
from ._base import RowBlocks, _compiled_ridge, ridge_rows
from ._factor import FactorModel, Pattern
from ._implicit import _compiled_cg, cg_rows


def als_fit(
    pattern: Pattern,
    k: int,
    lam_user: float,
    lam_item: float,
    *,
    weighting: str,
    biases: bool,
    offset: float,
    max_iter: int,
    tol: float,
    init_std: float,
    rng: np.random.Generator,
    name: str,
    solver: str = "cg",
    cg_steps: int = 3,
):
    """Block coordinate descent on the regularised squared error; returns the factors,
    biases, the objective after every sweep and the number of sweeps."""
    n_users, n_items = pattern.shape
    Q = init_std * rng.standard_normal((n_items, k))
    driver = _compiled_sweeps() if solver == "cg" else None
    if driver is not None:
        return _als_compiled(driver, pattern, Q, lam_user, lam_item, weighting == "count",
                             biases, offset, max_iter, tol, cg_steps, name)  # fmt: skip
    P = np.zeros((n_users, k))
    bu, bi = np.zeros(n_users), np.zeros(n_items)
    if weighting == "count":
        reg_u, reg_i = lam_user * pattern.n_user, lam_item * pattern.n_item
    else:
        reg_u, reg_i = np.full(n_users, lam_user), np.full(n_items, lam_item)
    # The ratings and the other side's index in user-major and item-major order.
    vals_u, cols_u = pattern.values_u, pattern.items_u
    vals_i, cols_i = pattern.values_i, pattern.users_i
    ones_i, ones_u = np.ones((n_items, 1)), np.ones((n_users, 1))
    if solver == "cholesky":
        # The targets of each half-sweep, in two buffers reused every sweep (fresh arrays of
        # this size cost page faults); each serves as the other's scratch for the gather.
        t_u, t_i = np.empty(vals_u.size), np.empty(vals_i.size)
    else:
        # r_ui - mu, once: the CG kernel takes the other side's biases off entry by entry.
        c_u, c_i = vals_u - offset, vals_i - offset
    width = k + 1 if biases else k
    # The padded blocks serve the NumPy route only (the compiled one reads the CSR arrays).
    numpy_route = (_compiled_ridge() if solver == "cholesky" else _compiled_cg()) is None
    blocks_u = RowBlocks(pattern.R, width) if numpy_route else None
    blocks_i = RowBlocks(pattern.Rt, width) if numpy_route else None
    history: list[float] = []
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007
        # User step: (6.1) for every user, with x_u = [p_u, b_u] and item rows [q_i, 1].
        V = np.hstack([Q, ones_i]) if biases else Q
        if solver == "cholesky":
            np.subtract(vals_u, offset, out=t_u)
            if biases:
                t_u -= np.take(bi, cols_u, out=t_i)
            X = ridge_rows(pattern.R, t_u, V, reg_u, blocks=blocks_u)
        else:
            # A few CG steps from the current [p_u, b_u] (each step lowers the objective);
            # the targets r_ui - mu - c_i are formed entry by entry inside.
            X0 = np.hstack([P, bu[:, None]]) if biases else P
            X = cg_rows(pattern.R, None, c_u, V, X0, None, cg_steps, blocks_u, reg=reg_u,
                        copy=not biases, shift=bi if biases else None)  # fmt: skip
        P, bu = (X[:, :k], X[:, k]) if biases else (X, bu)
        # Item step: (6.2) for every item, with x_i = [q_i, c_i] and user rows [p_u, 1]; it
        # also returns the squared error of the fit it ends on.
        V = np.hstack([P, ones_u]) if biases else P
        if solver == "cholesky":
            np.subtract(vals_i, offset, out=t_i)
            if biases:
                t_i -= np.take(bu, cols_i, out=t_u)
            X, sse = ridge_rows(pattern.Rt, t_i, V, reg_i, blocks=blocks_i, return_sse=True)
        else:
            X0 = np.hstack([Q, bi[:, None]]) if biases else Q
            X, sse = cg_rows(pattern.Rt, None, c_i, V, X0, None, cg_steps, blocks_i,
                             fit_terms=True, reg=reg_i, targets=c_i, copy=not biases,
                             shift=bu if biases else None)  # fmt: skip
        Q, bi = (X[:, :k], X[:, k]) if biases else (X, bi)
        pen_u = np.sum(P**2, axis=1) + bu**2
        pen_i = np.sum(Q**2, axis=1) + bi**2
        obj = float(sse + reg_u @ pen_u + reg_i @ pen_i)
        history.append(obj)
        if tol > 0 and len(history) > 1 and history[-2] - obj <= tol * history[-2]:
            break
    else:
        _warn_unconverged(name, max_iter, tol, stacklevel=4)
    return P, Q, bu, bi, history, n_iter


def _warn_unconverged(name: str, max_iter: int, tol: float, stacklevel: int) -> None:
    if tol > 0 and max_iter > 1:
        warnings.warn(
            f"{name} did not converge in max_iter={max_iter} sweeps (relative decrease "
            f"of the objective above tol={tol}); increase max_iter.",
            ConvergenceWarning,
            stacklevel=stacklevel,
        )


def _compiled_sweeps():
    """The compiled sweeps of explicit ALS with CG (``_als.c``, ``als_explicit_cg``) and the
    size of their scratch (``als_explicit_cg_scratch``), typed, or None."""
    lib = _ext.load("_als")
    if lib is None:
        return None
    fn, size = lib.als_explicit_cg, lib.als_explicit_cg_scratch
    if fn.argtypes is None:
        i64, ptr, dbl = ctypes.c_int64, ctypes.c_void_p, ctypes.c_double
        fn.restype = size.restype = i64
        fn.argtypes = [i64, i64, i64, ctypes.c_int] + [ptr] * 6 + [dbl] * 3 + [ctypes.c_int]
        fn.argtypes += [ptr, ptr, i64, i64, dbl, ptr, ptr, ptr]
        size.argtypes = [i64, i64, i64, ptr, ptr, ctypes.c_int]
    return fn, size


def _als_compiled(
    driver, pattern, Q, lam_u, lam_i, count, biases, offset, max_iter, tol, steps, name
):
    """The CG sweeps of :func:`als_fit` in one compiled call: the same half-sweeps (the same
    kernel as :func:`cg_rows`) on factors stored with their biases as a last column. The
    factors, the objective's history and the kernel's scratch (the targets less the offset
    and the rows' penalties, formed inside, the design rows and the CG state) are views of
    one buffer (one allocation, one ``.ctypes.data``); the factors returned are copies, so
    the model does not keep it. ``driver``: :func:`_compiled_sweeps`."""
    sweeps, scratch_size = driver
    n_users, n_items = pattern.shape
    k = Q.shape[1]
    w = k + 1 if biases else k
    gemv = _ext.blas_pointer("dgemv")
    a_indptr_u, a_indptr_i = pattern.address("indptr_u"), pattern.address("indptr_i")
    head = (n_users + n_items) * w + max_iter
    scratch = scratch_size(n_users, n_items, w, a_indptr_u, a_indptr_i, int(gemv is not None))
    buffer = np.empty(head + scratch)
    base = buffer.ctypes.data
    Xu = buffer[: n_users * w].reshape(n_users, w)
    Xi = buffer[n_users * w : (n_users + n_items) * w].reshape(n_items, w)
    Xu.fill(0.0)
    Xi[:, :k] = Q
    Xi[:, k:] = 0.0
    n_iter = sweeps(
        n_users, n_items, k, int(bool(biases)),
        a_indptr_u, pattern.address("items_u"), pattern.address("values_u"),
        a_indptr_i, pattern.address("users_i"), pattern.address("values_i"),
        float(offset), float(lam_u), float(lam_i), int(bool(count)),
        base, base + 8 * n_users * w, int(steps), int(max_iter), float(tol),
        base + 8 * (n_users + n_items) * w, base + 8 * head, gemv,
    )  # fmt: skip
    hist = buffer[(n_users + n_items) * w : (n_users + n_items) * w + n_iter].tolist()
    if not (n_iter > 1 and hist[-2] - hist[-1] <= tol * hist[-2]):
        _warn_unconverged(name, max_iter, tol, stacklevel=5)
    P, Q = Xu[:, :k].copy(), Xi[:, :k].copy()
    bu = Xu[:, k].copy() if biases else np.zeros(n_users)
    bi = Xi[:, k].copy() if biases else np.zeros(n_items)
    return P, Q, bu, bi, hist, int(n_iter)


class ALS(FactorModel):
    """Alternating least squares for explicit ratings, with user and item biases.

    Fits ``r_ui ~ mu + b_u + c_i + p_u^T q_i`` by minimising

    ``sum_{(u,i) observed} (r_ui - mu - b_u - c_i - p_u^T q_i)^2
    + lambda sum_u w_u (||p_u||^2 + b_u^2) + lambda sum_i w_i (||q_i||^2 + c_i^2)``

    alternately over the users' and the items' blocks, each block a set of independent ridge
    regressions, by default lowered by a few conjugate-gradient steps started from the
    current factors (``solver="cg"``), or solved exactly (``solver="cholesky"``); both by the
    compiled helper ``mathlearn._ext._als`` where the install built it (the CG loops in AVX2
    with fused multiply-adds where the processor has them, else SSE2 with SciPy's BLAS for
    the long rows; the exact solves through SciPy's BLAS), else by batched NumPy. The
    objective is recorded after every sweep (``objective_``); it cannot increase (up to
    rounding) with either solver.

    Parameters
    ----------
    n_components : int, default=10
        Rank k of the factors.
    regularization : float, default=0.1
        lambda.
    regularization_weighting : {"count", "none"}, default="count"
        ``"count"``: w_u = number of ratings of user u, w_i of item i (the weighted-lambda
        regularisation of Zhou et al. 2008); ``"none"``: w = 1, the notes' objective (6.7).
    biases : bool, default=True
        Learn mu (the training mean, fixed), b_u and c_i. ``False`` gives the notes' model
        r_ui ~ p_u^T q_i exactly.
    max_iter : int, default=20
        Maximum number of sweeps (a sweep updates the users, then the items).
    tol : float, default=1e-4
        Stop when the objective falls by less than ``tol`` times its value over a sweep;
        ``tol=0`` runs exactly ``max_iter`` sweeps without a convergence check.
    init_std : float, default=0.1
        Standard deviation of the random initial item factors.
    solver : {"cg", "cholesky"}, default="cg"
        ``"cg"``: ``cg_steps`` conjugate-gradient iterations on each row's ridge problem,
        started from the current factors (about 2 n k multiply-adds per step for a row with
        n ratings, no normal matrix), as in Takacs, Pilaszy and Tikk (2011).
        ``"cholesky"``: each row's problem solved exactly (its k x k normal matrix formed
        and factorised, about n k^2 / 2 + k^3 / 3 multiply-adds). See Notes for the choice.
    cg_steps : int, default=3
        Conjugate-gradient iterations per row and half-sweep with ``solver="cg"``.
    random_state : int, Generator or None, default=None
        Seed of the initialisation.

    Attributes
    ----------
    user_factors_ : ndarray of shape (n_users, n_components)
        p_u (psi_j of the notes).
    item_factors_ : ndarray of shape (n_items, n_components)
        q_i (phi_i of the notes).
    user_bias_ : ndarray of shape (n_users,)
    item_bias_ : ndarray of shape (n_items,)
    offset_ : float
        mu (the training mean with biases, else 0).
    global_mean_ : float
        Mean training rating (fallback for unknown ids).
    objective_ : list of float
        The objective after each sweep.
    n_iter_ : int
        Sweeps run.
    user_ids_, item_ids_ : ndarray of shape (n_users,), (n_items,)
        The id maps.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §6.2-6.3: with the movie
    features fixed, each user's preference vector solves the ridge problem (6.1),
    ``psi_j = (sum_{i in Omega_j} phi_i phi_i^T + lambda I)^{-1} sum y_ij phi_i``, and
    symmetrically (6.2) for the movies; alternating the two minimises (6.7). Biases enter as
    an extra coordinate (item rows [q_i, 1] when solving for [p_u, b_u]). Each half-sweep is an
    exact block minimisation, so the objective is non-increasing; with ``solver="cg"`` each
    row's conjugate-gradient iterates, started from its current value, minimise its
    quadratic over growing Krylov subspaces that contain that start, so the objective is
    non-increasing too. The CG sweeps' fixed points are the exact sweeps': a row whose start
    solves its system has zero residual and stays; one that moves had a nonzero residual.
    Unknown users or items at prediction time get mu plus the known side's learned bias.

    Cost of a sweep, with N ratings, m = n_users + n_items rows and k' = k + 1 with biases
    (k without), half of it for the users' rows and half for the items': ``"cg"`` takes
    about 4 (cg_steps + 1) N k' multiply-adds (every product a pass over the row's factor
    rows, four at a time, with a dot product and an update each; the squared error of the
    objective is carried through the CG steps, not recomputed); ``"cholesky"`` about
    N k'^2 + m k'^3 / 3 (a row with n ratings forms the upper triangle of its normal matrix,
    n k'^2 / 2, and factorises it). Memory: the factors (m k'), the ratings in both
    orientations with the permutations between them (2 N values and 4 N indices), one
    target per rating, and scratch of at most k'^2 + 24 k' + (k' + 2) n_max numbers (n_max
    the longest row; 24 k' with the AVX2 loops, which gather nothing): never a dense users
    x items matrix. With the compiled helper, the CG sweeps run in one call.
    CG is the default because, on synthetic rank-32 ratings (5 000 x 1 000 with
    450 000 ratings, and 50 000 x 10 000 with 4.5 M), its sweeps (3 steps) lowered the
    objective as much as the exact sweeps, reaching each of the exact fit's objective values
    at the same sweep or one later and the same test RMSE after 20 sweeps, at 0.4-0.5 of
    the CPU time per sweep; ``"cholesky"`` remains for exact block minimisation. Count-weighted
    regularisation: Y. Zhou, D. Wilkinson, R. Schreiber, R. Pan, "Large-scale parallel
    collaborative filtering for the Netflix prize" (2008). Conjugate-gradient ALS: G. Takacs,
    I. Pilaszy, D. Tikk, "Applications of the conjugate gradient method for implicit
    feedback collaborative filtering" (RecSys 2011).

    See Also
    --------
    SGDMatrixFactorization : the same model fitted by stochastic gradient descent.
    ProbabilisticMatrixFactorization : the notes' PMF, whose MAP estimate is (6.7).

    Examples
    --------
    >>> from mathlearn.recommender import ALS, Ratings
    >>> r = Ratings.from_triples([0, 0, 1, 1, 2], [0, 1, 0, 1, 0], [5.0, 1.0, 4.0, 1.0, 5.0])
    >>> model = ALS(n_components=1, regularization=0.1, max_iter=200, random_state=0).fit(r)
    >>> bool(model.predict([2], [1])[0] < 2.5)
    True
    >>> all(a >= b for a, b in zip(model.objective_, model.objective_[1:]))
    True
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "regularization": [Interval(Real, 0, None, closed="neither")],
        "regularization_weighting": [StrOptions({"count", "none"})],
        "biases": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "init_std": [Interval(Real, 0, None, closed="neither")],
        "solver": [StrOptions({"cholesky", "cg"})],
        "cg_steps": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components: int = 10,
        *,
        regularization: float = 0.1,
        regularization_weighting: str = "count",
        biases: bool = True,
        max_iter: int = 20,
        tol: float = 1e-4,
        init_std: float = 0.1,
        solver: str = "cg",
        cg_steps: int = 3,
        random_state=None,
    ) -> None:
        self.n_components = n_components
        self.regularization = regularization
        self.regularization_weighting = regularization_weighting
        self.biases = biases
        self.max_iter = max_iter
        self.tol = tol
        self.init_std = init_std
        self.solver = solver
        self.cg_steps = cg_steps
        self.random_state = random_state

    @_fit_context
    def fit(self, ratings, y=None) -> ALS:
        """Fit the factors and biases.

        Parameters
        ----------
        ratings : Ratings, scipy.sparse matrix (users x items) or DataFrame
            Training ratings.
        y : None
            Ignored.

        Returns
        -------
        self : ALS
        """
        data = self._setup(ratings)
        pattern = Pattern(data)
        self._has_biases = bool(self.biases)
        self.offset_ = self.global_mean_ if self.biases else 0.0
        lam = float(self.regularization)
        P, Q, bu, bi, hist, n_iter = als_fit(
            pattern, int(self.n_components), lam, lam,
            weighting=self.regularization_weighting, biases=bool(self.biases),
            offset=self.offset_, max_iter=int(self.max_iter), tol=float(self.tol),
            init_std=float(self.init_std), rng=check_random_state(self.random_state),
            name="ALS", solver=self.solver, cg_steps=int(self.cg_steps),
        )  # fmt: skip
        self.user_factors_, self.item_factors_ = P, Q
        self.user_bias_, self.item_bias_ = bu, bi
        self.objective_, self.n_iter_ = hist, n_iter
        self._finish()
        return self
