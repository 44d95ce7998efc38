"""The Bayesian-optimisation loop: a GP surrogate, an acquisition, ask/tell and minimize."""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from scipy.optimize import OptimizeResult
from scipy.optimize import minimize as _scipy_minimize
from scipy.stats import qmc

from ..exceptions import ConvergenceWarning, NumericalWarning
from ..gaussian_process import GaussianProcessRegressor
from ..kernels import ConstantKernel, Matern
from ..utils.validation import check_random_state
from ._acquisition import (
    expected_improvement,
    log_expected_improvement,
    lower_confidence_bound,
    noisy_expected_improvement,
    noisy_probability_of_improvement,
    probability_of_improvement,
)
from ._space import Real, Space

__all__ = ["BayesianOptimizer", "minimize"]

_ACQUISITIONS = {"lcb", "pi", "ei", "log_ei", "noisy_ei", "noisy_pi"}
_BATCH_STRATEGIES = {"kriging_believer", "cl_min", "cl_mean", "cl_max"}


def _sobol(d: int, n: int, rng) -> np.ndarray:
    """The first ``n`` points of a scrambled Sobol sequence of a power-of-two length."""
    m = int(np.ceil(np.log2(max(n, 2))))
    return qmc.Sobol(d, scramble=True, seed=rng).random_base2(m)[:n]


class BayesianOptimizer:
    """Ask/tell Bayesian optimisation of a black-box function (minimisation).

    Each ``ask`` refits a GP surrogate (Matérn 5/2 ARD times a constant, learned noise,
    normalised targets) to the evaluations told so far and returns the maximiser of the
    acquisition, found by L-BFGS-B from the best of ``n_candidates`` Sobol points
    (``n_starts`` starts). The first ``n_initial`` points are a scrambled Sobol design.

    Parameters
    ----------
    bounds : sequence of dimensions
        One per input: a ``(low, high)`` pair or :class:`Real` (a real interval),
        :class:`Integer` (the integers ``low..high``) or :class:`Categorical` (a finite set
        of labels). Integer and categorical dimensions enter the surrogate rounded and
        one-hot coded (see Notes).
    acquisition : {"ei", "log_ei", "pi", "lcb", "noisy_ei", "noisy_pi"}, default="ei"
        ``"lcb"`` is minimised, the others maximised (``log_ei`` is ``log EI``: the same
        maximiser, without underflow far from the incumbent). The noisy variants use the
        posterior mean at the incumbent and the posterior sd of ``f(x~) - f(x)`` (the notes'
        eq. 10.1); the others use the best observed value.
    alpha : float, default=0.05
        LCB's ``z_{1 - alpha}``.
    n_initial : int, default=5
    n_candidates : int, default=512
    n_starts : int, default=3
    kernel : Kernel or None
        The surrogate's kernel (on the kernel inputs: unit-cube reals and integers, one-hot
        categories).
    noise_variance_bounds : (float, float) or "fixed", default=(1e-8, 1.0)
        On the normalised target's scale.
    batch_strategy : {"kriging_believer", "cl_min", "cl_mean", "cl_max"}, \
default="kriging_believer"
        How ``ask(n_points=q)`` chooses ``q > 1`` points: after each choice, a fantasy
        observation at the chosen point is added to the surrogate's data (with the same
        hyperparameters) before the next choice — the posterior mean there (Kriging
        believer) or the smallest, mean or largest value observed (constant liar).
    random_state : int, Generator, RandomState or None

    Attributes
    ----------
    X : ndarray of shape (n_told, n_dims) or list of lists
        The points told (an array when every dimension is real, else a list of rows).
    y : ndarray of shape (n_told,)
    surrogate_ : GaussianProcessRegressor or None
        The last surrogate fitted to the told evaluations (on kernel inputs).
    space : Space
        The search space (``space.to_kernel`` maps search coordinates to kernel inputs).

    See Also
    --------
    mathlearn.bayes_opt.minimize
        The one-call interface to the same loop.
    mathlearn.gaussian_process.GaussianProcessRegressor
        The surrogate model.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §10 (the loop, GP-LCB, PI, EI
    with Lemma 24, noise-aware variants).

    Integer and categorical inputs: the acquisition is optimised over a cube with one
    coordinate per real or integer dimension and one per category, and the surrogate sees
    ``T(u)``: integer coordinates rounded to their value, each categorical block replaced by
    the one-hot code of its largest coordinate. The acquisition is then constant wherever the
    evaluated point is the same, and never proposes a value that cannot be evaluated
    (Garrido-Merchán and Hernández-Lobato, Neurocomputing 2020).

    Batches: the Kriging believer and constant liar heuristics (Ginsbourger, Le Riche and
    Carraro, "Kriging is well-suited to parallelize optimization", 2010): each fantasy
    shrinks the posterior variance at its point, so the next maximiser of the acquisition
    moves away from it. Points of a batch are distinct (for discrete spaces a candidate whose
    kernel input was already chosen or evaluated is skipped).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.bayes_opt import BayesianOptimizer
    >>> opt = BayesianOptimizer([(-1.0, 1.0)], n_initial=4, random_state=0)
    >>> for _ in range(9):
    ...     x = opt.ask()
    ...     opt.tell(x, float((x[0] - 0.3) ** 2))
    >>> bool(abs(opt.best()[0][0] - 0.3) < 0.05)
    True
    """

    def __init__(
        self,
        bounds,
        *,
        acquisition: str = "ei",
        alpha: float = 0.05,
        n_initial: int = 5,
        n_candidates: int = 512,
        n_starts: int = 3,
        kernel=None,
        noise_variance_bounds=(1e-8, 1.0),
        batch_strategy: str = "kriging_believer",
        random_state=None,
    ):
        self.space = Space(bounds)
        if acquisition not in _ACQUISITIONS:
            raise ValueError(
                f"acquisition must be one of {sorted(_ACQUISITIONS)}; got {acquisition!r}."
            )
        if batch_strategy not in _BATCH_STRATEGIES:
            raise ValueError(
                f"batch_strategy must be one of {sorted(_BATCH_STRATEGIES)}; got "
                f"{batch_strategy!r}."
            )
        for name, v in (
            ("n_initial", n_initial),
            ("n_candidates", n_candidates),
            ("n_starts", n_starts),
        ):
            if isinstance(v, bool) or not isinstance(v, Integral) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}.")
        self.acquisition = acquisition
        self.alpha = alpha
        self.n_initial = int(n_initial)
        self.n_candidates = int(n_candidates)
        self.n_starts = int(n_starts)
        self.kernel = kernel
        self.noise_variance_bounds = noise_variance_bounds
        self.batch_strategy = batch_strategy
        self._rng = check_random_state(random_state)
        self._initial = _sobol(self.space.n_search, self.n_initial, self._rng)
        self._U = np.empty((0, self.space.n_search))
        self._X: list = []
        self.y = np.empty(0)
        self.surrogate_ = None

    @property
    def bounds(self) -> np.ndarray | None:
        """``(n_dims, 2)`` bounds when every dimension is real, else ``None``."""
        if all(isinstance(d, Real) for d in self.space.dims):
            return np.array([[d.low, d.high] for d in self.space.dims])
        return None

    @property
    def X(self):
        if self.space.numeric and self.bounds is not None:
            return np.array(self._X, dtype=float).reshape(-1, self.space.n_dims)
        return [list(r) for r in self._X]

    def _user_point(self, u):
        row = self.space.decode(u[None, :])[0]
        return np.array(row, dtype=float) if self.bounds is not None else row

    def _fit_surrogate(self):
        d = self.space.to_kernel(self._U[:1]).shape[1] if len(self._U) else self.space.n_search
        # Warm start: the previous surrogate's hyperparameters are the next fit's start.
        kernel = self.surrogate_.kernel_ if self.surrogate_ is not None else self.kernel
        if kernel is None:
            kernel = ConstantKernel(1.0, (1e-3, 1e3)) * Matern(
                np.full(d, 0.3), length_scale_bounds=(1e-2, 1e1), nu=2.5
            )
        gp = GaussianProcessRegressor(
            kernel,
            noise_variance=1e-4,
            noise_variance_bounds=self.noise_variance_bounds,
            normalize_y=True,
            n_restarts=0 if self.surrogate_ is not None else 1,
            random_state=self._rng,
        )
        with warnings.catch_warnings():
            # A surrogate fit at a bound or with jitter is routine inside the loop.
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("ignore", NumericalWarning)
            gp.fit(self.space.to_kernel(self._U), self.y)
        self.surrogate_ = gp
        return gp

    @staticmethod
    def _refit_fixed(gp, Z, y):
        """The surrogate with the same hyperparameters on other data (fantasies added)."""
        g = GaussianProcessRegressor(
            gp.kernel_,
            noise_variance=gp.noise_variance_,
            noise_variance_bounds="fixed",
            normalize_y=True,
            optimizer=None,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumericalWarning)
            return g.fit(Z, y)

    def _score(self, gp, Z, incumbent, y):
        """Acquisition to *minimise* at kernel inputs ``Z``."""
        mu, sd = gp.predict(Z, return_std=True)
        kind = self.acquisition
        if kind == "lcb":
            return lower_confidence_bound(mu, sd, alpha=self.alpha)
        if kind in ("noisy_ei", "noisy_pi"):
            z_best, mu_best = incumbent
            both = np.vstack([z_best[None, :], Z])
            _, cov = gp.predict(both, return_cov=True)
            rho2 = np.diag(cov)[1:] + cov[0, 0] - 2.0 * cov[0, 1:]
            rho = np.sqrt(np.maximum(rho2, 0.0))
            f = (
                noisy_expected_improvement
                if kind == "noisy_ei"
                else noisy_probability_of_improvement
            )
            return -f(mu, mu_best, rho)
        y_best = float(np.min(y))
        if kind == "pi":
            return -probability_of_improvement(mu, sd, y_best)
        if kind == "ei":
            return -expected_improvement(mu, sd, y_best)
        return -log_expected_improvement(mu, sd, y_best)

    def _propose(self, gp, U_data, y_data):
        """Maximise the acquisition of ``gp`` (fitted to ``U_data``, ``y_data``)."""
        space = self.space
        Z_data = space.to_kernel(U_data)
        incumbent = None
        if self.acquisition in ("noisy_ei", "noisy_pi"):
            mu_data = gp.predict(Z_data)
            i = int(np.argmin(mu_data))
            incumbent = (Z_data[i], float(mu_data[i]))
        cand = _sobol(space.n_search, self.n_candidates, self._rng)
        cand = np.vstack([cand, U_data[np.argmin(y_data)][None, :]])
        Zc = space.to_kernel(cand)
        scores = self._score(gp, Zc, incumbent, y_data)
        if not all(isinstance(d, Real) for d in space.dims):
            # Discrete dimensions: a candidate that rounds to an evaluated (or already
            # chosen) point would be wasted.
            seen = {z.tobytes() for z in Z_data}
            taken = np.array([z.tobytes() in seen for z in Zc])
            if not taken.all():
                scores = np.where(taken, np.inf, scores)
        order = np.argsort(scores)[: self.n_starts]
        best_u, best_s = cand[order[0]], float(scores[order[0]])

        def obj(u):
            return float(self._score(gp, space.to_kernel(u[None, :]), incumbent, y_data)[0])

        for i in order:
            if not np.isfinite(scores[i]):
                continue
            res = _scipy_minimize(
                obj,
                cand[i],
                method="L-BFGS-B",
                bounds=[(0.0, 1.0)] * space.n_search,
                options={"maxiter": 50},
            )
            if np.isfinite(res.fun) and res.fun < best_s:
                z_new = space.to_kernel(np.clip(res.x, 0.0, 1.0)[None, :])[0]
                if not any(np.array_equal(z_new, z) for z in Z_data):
                    best_u, best_s = np.clip(res.x, 0.0, 1.0), float(res.fun)
        return best_u

    def ask(self, n_points: int | None = None):
        """The next point to evaluate, or a batch of ``n_points`` distinct points.

        Parameters
        ----------
        n_points : int or None, default=None
            ``None``: one point. An integer ``q >= 1``: a list of ``q`` points chosen by
            ``batch_strategy`` (the rest of the Sobol design first, while it lasts).

        Returns
        -------
        x : ndarray of shape (n_dims,), or list
            The point (a list of values when some dimension is not real); with ``n_points``
            an array of shape (q, n_dims) or a list of ``q`` points.
        """
        q = 1 if n_points is None else n_points
        if isinstance(q, bool) or not isinstance(q, Integral) or q < 1:
            raise ValueError(f"n_points must be a positive integer or None; got {n_points!r}.")
        n = self.y.shape[0]
        chosen: list[np.ndarray] = []
        gp = None
        U, y = self._U, self.y
        for j in range(q):
            if n + j < self.n_initial:
                u = self._initial[n + j]
            elif n == 0:
                # Nothing observed to fit a surrogate to: the next Sobol points.
                u = _sobol(self.space.n_search, self.n_initial + q, self._rng)[self.n_initial + j]
            else:
                if gp is None:
                    gp = self._fit_surrogate()
                    base = gp
                    if chosen:  # pending design points become fantasies
                        U, y = self._with_fantasies(base, self._U, self.y, chosen)
                        gp = self._refit_fixed(base, self.space.to_kernel(U), y)
                u = self._propose(gp, U, y)
                if j + 1 < q:
                    U, y = self._with_fantasies(base, U, y, [u], gp=gp)
                    gp = self._refit_fixed(base, self.space.to_kernel(U), y)
            chosen.append(u)
        points = [self._user_point(u) for u in chosen]
        if n_points is None:
            return points[0]
        return np.array(points) if self.bounds is not None else points

    def _with_fantasies(self, base, U, y, new, gp=None):
        """``U``, ``y`` with fantasy observations at the search points ``new``."""
        new = np.asarray(new, dtype=float).reshape(-1, self.space.n_search)
        if self.batch_strategy == "kriging_believer":
            model = gp if gp is not None else base
            fant = model.predict(self.space.to_kernel(new))
        else:
            value = {"cl_min": np.min, "cl_mean": np.mean, "cl_max": np.max}[self.batch_strategy](
                self.y
            )
            fant = np.full(len(new), float(value))
        return np.vstack([U, new]), np.append(y, fant)

    def tell(self, x, y) -> None:
        """Record the evaluation ``y = f(x)``, or a batch of them.

        Parameters
        ----------
        x : array-like of shape (n_dims,) or a sequence of such points
        y : float or sequence of floats
            One value per point.
        """
        ys = np.atleast_1d(np.asarray(y, dtype=float))
        if ys.ndim != 1:
            raise ValueError("y must be a number or a 1-D sequence of numbers.")
        if ys.shape[0] == 1 and np.ndim(y) == 0:
            rows = [list(np.ravel(np.asarray(x, dtype=object)))]
        else:
            rows = [list(np.ravel(np.asarray(r, dtype=object))) for r in x]
        if len(rows) != ys.shape[0]:
            raise ValueError(f"got {len(rows)} points and {ys.shape[0]} values.")
        for r in rows:
            if len(r) != self.space.n_dims:
                raise ValueError(f"x must have {self.space.n_dims} entries; got {len(r)}.")
        if not np.all(np.isfinite(ys)):
            raise ValueError(f"x and y must be finite; got y={ys}.")
        try:
            U = self.space.encode(rows)
        except ValueError as exc:
            if self.bounds is not None:
                raise ValueError(f"x and y must be finite and inside the bounds; {exc}") from None
            raise
        self._U = np.vstack([self._U, U])
        self._X.extend(rows)
        self.y = np.append(self.y, ys)

    def best(self) -> tuple:
        """The best evaluated point and its value.

        Returns
        -------
        x : ndarray of shape (n_dims,) or list
        fun : float
        """
        if self.y.shape[0] == 0:
            raise ValueError("No evaluation has been told yet.")
        i = int(np.argmin(self.y))
        x = self._X[i]
        return (np.array(x, dtype=float) if self.bounds is not None else list(x)), float(self.y[i])


def minimize(
    f, bounds, n_calls: int = 30, *, acquisition: str = "ei", random_state=None, **kwargs
):
    """Minimise ``f`` over the box ``bounds`` by Bayesian optimisation.

    Parameters
    ----------
    f : callable
        ``f(x) -> float`` for ``x`` of shape (n_dims,).
    bounds : sequence of (low, high)
    n_calls : int, default=30
        Evaluations of ``f`` in all (the Sobol design included).
    acquisition : str, default="ei"
        See :class:`BayesianOptimizer`.
    random_state : int, Generator, RandomState or None
    **kwargs
        Passed to :class:`BayesianOptimizer`.

    Returns
    -------
    scipy.optimize.OptimizeResult
        ``x`` and ``fun`` (the best evaluation), ``x_iters`` (n_calls, n_dims) and
        ``func_vals`` (the history, in order), ``surrogate`` (the last fitted GP), ``nfev``.

    Examples
    --------
    >>> from mathlearn.bayes_opt import minimize
    >>> res = minimize(lambda x: (x[0] - 0.3) ** 2, [(-1.0, 1.0)], n_calls=9, n_initial=4,
    ...                random_state=0)
    >>> bool(abs(res.x[0] - 0.3) < 0.05)
    True
    """
    if isinstance(n_calls, bool) or not isinstance(n_calls, Integral) or n_calls < 1:
        raise ValueError(f"n_calls must be a positive integer; got {n_calls!r}.")
    opt = BayesianOptimizer(bounds, acquisition=acquisition, random_state=random_state, **kwargs)
    for _ in range(n_calls):
        x = opt.ask()
        opt.tell(x, f(x))
    x_best, y_best = opt.best()
    return OptimizeResult(
        x=x_best,
        fun=y_best,
        x_iters=opt.X.copy(),
        func_vals=opt.y.copy(),
        surrogate=opt.surrogate_,
        nfev=n_calls,
    )
