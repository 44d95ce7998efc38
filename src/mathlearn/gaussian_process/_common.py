"""Pieces shared by the Gaussian-process estimators: Cholesky with reported jitter, the
rounding bound for predictive variances, and the multi-start hyperparameter optimiser."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla
from scipy.stats import qmc

from ..exceptions import ConvergenceWarning, NumericalWarning
from ..optim import lbfgs
from ..utils.linalg import cholesky

_EPS = np.finfo(float).eps
# A huge but finite objective for hyperparameters where the Gram matrix cannot be factorised
# even with jitter: L-BFGS-B backtracks from it (an infinite value would stop the search).
_BAD_OBJECTIVE = 1e25
# L-BFGS-B's stopping tests for hyperparameter fits (SciPy's defaults, as scikit-learn uses):
# projected gradient <= 1e-5, relative decrease of the LML in one iteration <= 1e7 eps.
LML_GTOL = 1e-5
LML_FTOL = 1e7 * _EPS


def cholesky_with_jitter(A: np.ndarray, name: str) -> tuple[np.ndarray, float]:
    """Lower Cholesky factor of ``A`` and the jitter that had to be added (0.0 if none).

    The jitter is recovered from the factor itself: ``L[0, 0]^2 - A[0, 0]`` is the value the
    shared helper added to the diagonal (exact up to one rounding of ``A[0, 0]``).
    """
    try:
        return sla.cholesky(A, lower=True, check_finite=False), 0.0
    except np.linalg.LinAlgError:
        pass
    L = cholesky(A, jitter="auto", warn=False, name=name)
    return L, max(float(L[0, 0] ** 2 - A[0, 0]), 0.0)


def variance_rounding_bound(n: int, trace: float, prior_var: np.ndarray) -> np.ndarray:
    """Largest negative predictive variance that rounding alone can produce.

    The predictive variance ``k(x, x) - v^T v`` is the last pivot of the Cholesky
    factorisation of the joint ``(n + 1) x (n + 1)`` covariance of the training targets and
    ``f(x)``. The computed factor is the exact factor of that matrix plus ``E`` with
    ``|E| <= gamma_{n+2} |L||L^T|`` (Higham, *Accuracy and Stability of Numerical
    Algorithms*, Thm 10.3), and a Schur complement of a PSD matrix perturbed by ``E`` is at
    least ``-||E||_2 >= -gamma_{n+2} trace(joint)``, with ``gamma_m = m eps / (1 - m eps)``.
    """
    m = n + 2
    gamma = m * _EPS / (1.0 - m * _EPS)
    return gamma * (trace + prior_var)


def clip_variance(var: np.ndarray, bound: np.ndarray, what: str) -> np.ndarray:
    """Clip negative variances that rounding explains to 0; warn about larger ones."""
    neg = var < 0
    if np.any(neg):
        bad = neg & (var < -bound)
        if np.any(bad):
            warnings.warn(
                f"{what}: negative predictive variance {float(np.min(var)):.3g}, larger in "
                f"magnitude than the rounding bound {float(np.max(bound[bad])):.3g}; the Gram "
                "matrix is badly conditioned (clipped to 0).",
                NumericalWarning,
                stacklevel=3,
            )
        var = np.where(neg, 0.0, var)
    return var


def check_log_bounds(bounds: np.ndarray, names: list[str]) -> None:
    """Raise when a hyperparameter's bounds are empty or degenerate (low >= high)."""
    for (lo, hi), name in zip(bounds, names, strict=True):
        if not lo < hi:
            raise ValueError(
                f"The bounds of hyperparameter {name!r} must satisfy low < high to be "
                f"optimised; got ({np.exp(lo):.6g}, {np.exp(hi):.6g}). Declare it 'fixed' "
                "instead."
            )


def starting_points(bounds: np.ndarray, n_restarts: int, rng: np.random.Generator) -> np.ndarray:
    """``n_restarts`` points of a scrambled Sobol sequence spread over the log-space box."""
    if n_restarts == 0:
        return np.empty((0, bounds.shape[0]))
    sampler = qmc.Sobol(d=bounds.shape[0], scramble=True, seed=rng)
    # Sobol's balance properties want a power of two; take the first n_restarts points.
    m = int(np.ceil(np.log2(max(n_restarts, 2))))
    u = sampler.random_base2(m)[:n_restarts]
    return bounds[:, 0] + u * (bounds[:, 1] - bounds[:, 0])


def maximize_lml(
    objective,
    theta0: np.ndarray,
    bounds: np.ndarray,
    n_restarts: int,
    rng,
    name,
    ftol: float | None = LML_FTOL,
):
    """Maximise a log marginal likelihood by L-BFGS-B from ``theta0`` and Sobol restarts.

    ``objective(theta) -> (lml, grad)``. Returns the best ``theta``, its value and the trace:
    one dict per start with ``theta0``, ``theta``, ``log_marginal_likelihood``, ``n_iter``,
    ``converged``, ``message`` and ``history`` (the LML after each iteration).

    Each start stops at the first of L-BFGS-B's two tests (SciPy's defaults, and so
    scikit-learn's): the projected gradient has no entry above ``1e-5``, or one iteration
    raised the LML by at most ``LML_FTOL = 1e7 eps`` (about ``2.2e-9``) relative to
    ``max(|LML|, 1)``. Both apply to the raw log marginal likelihood, not one divided by
    ``N``: its relative changes then mean the same as in scikit-learn. At ``|LML| ~ 10^3`` the
    gradient test alone asks for more than the rounding of the LML's ``N``-term sums allows
    near the optimum, where line searches then fail and repeat (the benchmark's ``N = 2000``
    fit with 3 restarts: 196 evaluations with the gradient test alone, 100 with both, the
    same best LML, 1725.04447).
    ``converged`` is true when either test stopped the start. ``ftol=None`` keeps the
    gradient test alone.
    """

    def neg(theta):
        try:
            value, grad = objective(theta)
        except np.linalg.LinAlgError:
            return _BAD_OBJECTIVE, np.zeros_like(theta)
        if not np.isfinite(value) or not np.all(np.isfinite(grad)):
            return _BAD_OBJECTIVE, np.zeros_like(theta)
        return -value, -grad

    starts = np.vstack([np.clip(theta0, bounds[:, 0], bounds[:, 1])[None, :]])
    starts = np.vstack([starts, starting_points(bounds, n_restarts, rng)])
    trace = []
    for x0 in starts:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = lbfgs(
                neg,
                x0,
                bounds=(bounds[:, 0], bounds[:, 1]),
                tol=LML_GTOL,
                ftol=ftol,
                max_iter=2000,
            )
        trace.append(
            {
                "theta0": x0,
                "theta": np.asarray(res.x, dtype=float),
                "log_marginal_likelihood": -float(res.fun),
                "n_iter": int(res.nit),
                # SciPy's status 0: stopped by the gradient or by the relative-decrease test.
                "converged": bool(res.status == 0 and np.isfinite(res.fun)),
                "message": str(res.message),
                "history": -np.asarray(res.history),
                "projected_gradient": _projected_gradient(res.x, -np.asarray(res.jac), bounds),
            }
        )
    best = max(trace, key=lambda t: t["log_marginal_likelihood"])
    if best["log_marginal_likelihood"] <= -_BAD_OBJECTIVE / 2:
        raise np.linalg.LinAlgError(
            f"{name}: the Gram matrix could not be factorised at any hyperparameter tried."
        )
    # L-BFGS-B may stop with ABNORMAL_TERMINATION_IN_LNSRCH at an optimum where the gradient
    # is dominated by rounding; only a large projected gradient is a real failure.
    scale = 1.0 + abs(best["log_marginal_likelihood"])
    if not best["converged"] and best["projected_gradient"] > 1e-3 * scale:
        warnings.warn(
            f"{name}: hyperparameter optimisation did not converge ({best['message']}; "
            f"projected gradient {best['projected_gradient']:.3g}). Consider more restarts or "
            "other bounds.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return best["theta"], best["log_marginal_likelihood"], trace


def _projected_gradient(x, grad, bounds) -> float:
    """Infinity norm of the gradient of a maximisation projected on the box."""
    x = np.asarray(x, dtype=float)
    g = np.asarray(grad, dtype=float).copy()
    at_low = x <= bounds[:, 0] + 1e-12 * np.maximum(1.0, np.abs(bounds[:, 0]))
    at_high = x >= bounds[:, 1] - 1e-12 * np.maximum(1.0, np.abs(bounds[:, 1]))
    g[at_low & (g < 0)] = 0.0
    g[at_high & (g > 0)] = 0.0
    return float(np.max(np.abs(g))) if g.size else 0.0
