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

__all__ = ["BayesianOptimizer", "minimize"]

_ACQUISITIONS = {"lcb", "pi", "ei", "log_ei", "noisy_ei", "noisy_pi"}


def _check_bounds(bounds) -> np.ndarray:
    try:
        b = np.asarray(bounds, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(
            f"bounds must be a sequence of (low, high) pairs; got {bounds!r}."
        ) from None
    if b.ndim != 2 or b.shape[1] != 2 or b.shape[0] == 0:
        raise ValueError(f"bounds must have shape (n_dims, 2); got {b.shape}.")
    if not np.all(np.isfinite(b)):
        raise ValueError("bounds must be finite.")
    if not np.all(b[:, 0] < b[:, 1]):
        raise ValueError(f"bounds must satisfy low < high in every dimension; got {b.tolist()}.")
    return b


def _sobol(d: int, n: int, rng) -> np.ndarray:
    """The first ``n`` points of a scrambled Sobol sequence of a power-of-two length."""
    m = int(np.ceil(np.log2(max(n, 2))))
    return qmc.Sobol(d, scramble=True, seed=rng).random_base2(m)[:n]


class BayesianOptimizer:
    """Ask/tell Bayesian optimisation of a black-box function over a box (minimisation).

    Each ``ask`` refits a GP surrogate (Matérn 5/2 ARD times a constant, learned noise,
    normalised targets, on inputs scaled to the unit cube) to the evaluations told so far and
    returns the maximiser of the acquisition, found by L-BFGS-B from the best of
    ``n_candidates`` Sobol points (``n_starts`` starts). The first ``n_initial`` points are a
    scrambled Sobol design.

    Parameters
    ----------
    bounds : sequence of (low, high)
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
        The surrogate's kernel (on unit-cube inputs).
    noise_variance_bounds : (float, float) or "fixed", default=(1e-8, 1.0)
        On the normalised target's scale.
    random_state : int, Generator, RandomState or None

    Attributes
    ----------
    X : ndarray of shape (n_told, n_dims)
    y : ndarray of shape (n_told,)
    surrogate_ : GaussianProcessRegressor or None
        The last fitted surrogate.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §10 (the loop, GP-LCB, PI, EI
    with Lemma 24, noise-aware variants).

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
        random_state=None,
    ):
        self.bounds = _check_bounds(bounds)
        if acquisition not in _ACQUISITIONS:
            raise ValueError(
                f"acquisition must be one of {sorted(_ACQUISITIONS)}; got {acquisition!r}."
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
        self._rng = check_random_state(random_state)
        d = self.bounds.shape[0]
        self._initial = _sobol(d, self.n_initial, self._rng)
        self._U = np.empty((0, d))
        self.X = np.empty((0, d))
        self.y = np.empty(0)
        self.surrogate_ = None

    def _to_unit(self, X):
        lo, hi = self.bounds[:, 0], self.bounds[:, 1]
        return (np.asarray(X, dtype=float) - lo) / (hi - lo)

    def _from_unit(self, U):
        lo, hi = self.bounds[:, 0], self.bounds[:, 1]
        return lo + np.clip(U, 0.0, 1.0) * (hi - lo)

    def _fit_surrogate(self):
        d = self.bounds.shape[0]
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
            gp.fit(self._U, self.y)
        self.surrogate_ = gp
        return gp

    def _score(self, gp, U, incumbent):
        """Acquisition to *minimise* at unit-cube points ``U``."""
        mu, sd = gp.predict(U, return_std=True)
        kind = self.acquisition
        if kind == "lcb":
            return lower_confidence_bound(mu, sd, alpha=self.alpha)
        if kind in ("noisy_ei", "noisy_pi"):
            u_best, mu_best = incumbent
            both = np.vstack([u_best[None, :], U])
            _, cov = gp.predict(both, return_cov=True)
            rho2 = np.diag(cov)[1:] + cov[0, 0] - 2.0 * cov[0, 1:]
            rho = np.sqrt(np.maximum(rho2, 0.0))
            f = (
                noisy_expected_improvement
                if kind == "noisy_ei"
                else noisy_probability_of_improvement
            )
            return -f(mu, mu_best, rho)
        y_best = float(np.min(self.y))
        if kind == "pi":
            return -probability_of_improvement(mu, sd, y_best)
        if kind == "ei":
            return -expected_improvement(mu, sd, y_best)
        return -log_expected_improvement(mu, sd, y_best)

    def ask(self) -> np.ndarray:
        """The next point to evaluate, shape (n_dims,)."""
        n = self.y.shape[0]
        if n < self.n_initial:
            return self._from_unit(self._initial[n])
        gp = self._fit_surrogate()
        d = self.bounds.shape[0]
        incumbent = None
        if self.acquisition in ("noisy_ei", "noisy_pi"):
            mu_data = gp.predict(self._U)
            i = int(np.argmin(mu_data))
            incumbent = (self._U[i], float(mu_data[i]))
        cand = _sobol(d, self.n_candidates, self._rng)
        cand = np.vstack([cand, self._U[np.argmin(self.y)][None, :]])
        scores = self._score(gp, cand, incumbent)
        order = np.argsort(scores)[: self.n_starts]
        best_u, best_s = cand[order[0]], float(scores[order[0]])

        def obj(u):
            return float(self._score(gp, u[None, :], incumbent)[0])

        for u0 in cand[order]:
            res = _scipy_minimize(
                obj, u0, method="L-BFGS-B", bounds=[(0.0, 1.0)] * d, options={"maxiter": 50}
            )
            if np.isfinite(res.fun) and res.fun < best_s:
                best_u, best_s = np.clip(res.x, 0.0, 1.0), float(res.fun)
        return self._from_unit(best_u)

    def tell(self, x, y) -> None:
        """Record the evaluation ``y = f(x)``."""
        x = np.asarray(x, dtype=float).ravel()
        if x.shape[0] != self.bounds.shape[0]:
            raise ValueError(f"x must have {self.bounds.shape[0]} entries; got {x.shape[0]}.")
        y = float(y)
        if not np.isfinite(y) or not np.all(np.isfinite(x)):
            raise ValueError(f"x and y must be finite; got x={x}, y={y}.")
        self.X = np.vstack([self.X, x[None, :]])
        self._U = np.vstack([self._U, self._to_unit(x)[None, :]])
        self.y = np.append(self.y, y)

    def best(self) -> tuple[np.ndarray, float]:
        """The best evaluated point and its value."""
        if self.y.shape[0] == 0:
            raise ValueError("No evaluation has been told yet.")
        i = int(np.argmin(self.y))
        return self.X[i], float(self.y[i])


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
