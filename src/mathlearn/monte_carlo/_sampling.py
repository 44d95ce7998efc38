"""Monte Carlo estimation and sampling: plain MC, rejection, importance, inverse cdf.

The methods of Stuttgart "Introduction to Machine Learning" (slides 9:45–9:47) and PRML §1.2.2:
:math:`E_p[f] \\approx \\frac1N\\sum_n f(x_n)` with :math:`x_n \\sim p` (corrected: the notes
following PRML put a "lim" inside the sum); rejection sampling with a proposal :math:`q` and a
bound :math:`p \\le Mq`; importance sampling with weights :math:`w = p/q`, self-normalised when
:math:`p` is known only up to a constant.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, validate_params
from ..utils.validation import RandomStateLike, check_random_state
from ._results import ImportanceResult, MCEstimate, RejectionResult

__all__ = [
    "effective_sample_size",
    "importance_sampling",
    "inverse_cdf_sample",
    "mc_expectation",
    "rejection_sample",
]


def _draw(sampler, n: int, rng) -> np.ndarray:
    if hasattr(sampler, "sample"):
        return np.asarray(sampler.sample(n, rng))
    if callable(sampler):
        return np.asarray(sampler(n, rng))
    raise TypeError("sampler must have a sample(size, rng) method or be callable(n, rng).")


def _logpdf(dist_or_fn) -> Callable:
    if hasattr(dist_or_fn, "logpdf"):
        return dist_or_fn.logpdf
    if callable(dist_or_fn):
        return dist_or_fn
    raise TypeError("expected a distribution with logpdf or a callable log-density.")


def _check_proposal(proposal) -> None:
    # The proposal is both sampled and evaluated: a bare sampler function would otherwise be
    # called as a log-density.
    if not (hasattr(proposal, "sample") and hasattr(proposal, "logpdf")):
        raise TypeError(
            "proposal must be a distribution with sample(size, rng) and logpdf(x); got "
            f"{type(proposal).__name__}."
        )


def _check_n(n, name="n_samples", minimum=1) -> int:
    if not isinstance(n, int | np.integer) or n < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {n!r}.")
    return int(n)


def _values(f, x, n) -> np.ndarray:
    v = np.asarray(x if f is None else f(x), dtype=float)
    if v.shape[:1] != (n,):
        raise ValueError(f"f must return one value per sample (leading axis {n}).")
    if not np.all(np.isfinite(v)):
        raise ValueError("f returned NaN or infinity.")
    return v


@validate_params(
    {
        "n_samples": [Interval(Integral, 2, None, closed="left")],
        "rng": ["random_state"],
    }
)
def mc_expectation(
    f: Callable | None, sampler: Any, n_samples: int, rng: RandomStateLike = None
) -> MCEstimate:
    r"""Plain Monte Carlo estimate of :math:`E_p[f(x)]` with its standard error.

    Parameters
    ----------
    f : callable or None
        Maps the samples (leading axis ``n``) to values of shape (n, ...); ``None`` is the
        identity.
    sampler : distribution or callable
        A distribution with ``sample(size, rng)``, or ``sampler(n, rng)``.
    n_samples : int
        Number of samples, at least 2 (the standard error needs a sample variance).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    MCEstimate
        ``estimate = mean f(x_n)`` and ``std_error = std(f(x_n), ddof=1) / sqrt(n)``.

    Notes
    -----
    :math:`E_p[f] \approx \frac1N\sum_n f(x_n)`, :math:`x_n \sim p` (Stuttgart
    "Introduction to Machine Learning" slide 9:45; PRML §1.2.2, without the notes' "lim" inside the
    sum); its standard deviation is :math:`\sqrt{V_p[f]/N}`, estimated with the sample variance.

    Examples
    --------
    >>> from mathlearn.distributions import Normal
    >>> from mathlearn.monte_carlo import mc_expectation
    >>> r = mc_expectation(lambda x: x**2, Normal(0.0, 1.0), 10_000, rng=0)
    >>> abs(r.estimate - 1.0) < 5 * r.std_error
    True
    """
    n = _check_n(n_samples, minimum=2)
    rng = check_random_state(rng, name="rng")
    v = _values(f, _draw(sampler, n, rng), n)
    est = v.mean(axis=0)
    se = v.std(axis=0, ddof=1) / np.sqrt(n)
    if np.ndim(est) == 0:
        est, se = float(est), float(se)
    return MCEstimate(est, se, n)


@validate_params(
    {
        "size": [Interval(Integral, 1, None, closed="left")],
        "rng": ["random_state"],
        "max_proposals": [Interval(Integral, 1, None, closed="left"), None],
        "rtol": [Interval(Real, 0, None, closed="left")],
    }
)
def rejection_sample(
    target_logpdf: Callable,
    proposal: Any,
    log_bound: float,
    size: int,
    rng: RandomStateLike = None,
    *,
    max_proposals: int | None = None,
    rtol: float = 1e-9,
) -> RejectionResult:
    r"""Draw ``size`` independent samples from ``p`` by rejection from a proposal ``q``.

    Each proposal :math:`x \sim q` is accepted with probability :math:`p(x) / (M q(x))`.

    Parameters
    ----------
    target_logpdf : callable or distribution
        :math:`\log p`, possibly unnormalised, vectorised over samples.
    proposal : distribution
        With ``sample(size, rng)`` and ``logpdf``.
    log_bound : float
        :math:`\log M` with :math:`p(x) \le M q(x)` for all :math:`x`.
    size : int
        Number of accepted samples wanted.
    rng : None, int or numpy.random.Generator
    max_proposals : int, optional
        Give up (``RuntimeError``) after this many proposals; default ``1000 * size``
        plus a margin.
    rtol : float
        Relative slack allowed in the envelope check.

    Returns
    -------
    RejectionResult

    Raises
    ------
    ValueError
        If a proposal violates the envelope, :math:`p(x) > M q(x)`: the samples would not
        follow ``p``, so the bound is checked at every proposed point.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" slide 9:46. Accepted points are i.i.d. draws from
    the normalised :math:`p/Z`; the probability of acceptance is :math:`Z/M`, so a loose bound
    costs proposals. The check is exact only at the points proposed: a violation elsewhere goes
    unseen, so ``M`` should come from an analytic bound.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.distributions import Beta, Uniform
    >>> from mathlearn.monte_carlo import rejection_sample
    >>> r = rejection_sample(Beta(2, 2).logpdf, Uniform(0, 1), np.log(1.5), 1000, rng=0)
    >>> r.samples.shape, abs(r.acceptance_rate - 1 / 1.5) < 0.05
    ((1000,), True)
    """
    size = _check_n(size, "size")
    _check_proposal(proposal)
    rng = check_random_state(rng, name="rng")
    log_p = _logpdf(target_logpdf)
    log_q = _logpdf(proposal)
    log_bound = float(log_bound)
    if not np.isfinite(log_bound):
        raise ValueError("log_bound must be finite.")
    if max_proposals is None:
        max_proposals = 1000 * size + 10_000
    accepted: list[np.ndarray] = []
    n_acc = 0
    n_prop = 0
    batch = max(2 * size, 64)
    while n_acc < size:
        if n_prop >= max_proposals:
            raise RuntimeError(
                f"rejection sampling drew {n_prop} proposals but accepted only {n_acc} of "
                f"{size}; the bound M may be far too loose."
            )
        x = _draw(proposal, batch, rng)
        lr = np.asarray(log_p(x), dtype=float) - np.asarray(log_q(x), dtype=float)
        if np.any(np.isnan(lr)):
            raise ValueError("the target or proposal log-density returned NaN.")
        excess = lr - log_bound
        if np.any(excess > np.log1p(rtol)):
            i = int(np.argmax(excess))
            raise ValueError(
                f"the envelope p <= M q is violated: at x = {x[i]!r}, "
                f"log p - log q = {lr[i]:.6g} > log M = {log_bound:.6g}. Increase the bound."
            )
        u = rng.random(batch)
        keep = np.log(u) < lr - log_bound
        accepted.append(x[keep])
        n_acc += int(keep.sum())
        n_prop += batch
        # Size the next batch from the acceptance rate seen so far.
        rate = max(n_acc / n_prop, 1e-3)
        batch = int(min(max((size - n_acc) / rate * 1.2, 64), 1_000_000))
    samples = np.concatenate(accepted)
    # The rate uses every proposal drawn (batches may overshoot `size`), which is an
    # unbiased estimate of P(accept) = Z / M.
    return RejectionResult(samples[:size], n_prop, n_acc / n_prop)


@validate_params(
    {
        "log": ["boolean"],
    }
)
def effective_sample_size(weights: ArrayLike, *, log: bool = False) -> float:
    r"""Kish's effective sample size :math:`(\sum_i w_i)^2 / \sum_i w_i^2`.

    Parameters
    ----------
    weights : array-like of shape (n,)
        Non-negative (possibly unnormalised) importance weights, or log-weights with
        ``log=True``.
    log : bool, default=False
        Whether ``weights`` are log-weights (the way to pass weights beyond the float
        range).

    Returns
    -------
    float
        The effective sample size, between 1 and ``n``.

    Notes
    -----
    ``n`` equal weights give ``n``; one weight carrying all the mass gives 1. The variance
    of a self-normalised importance estimate is roughly that of a plain Monte Carlo
    estimate with ESS samples.

    Examples
    --------
    >>> from mathlearn.monte_carlo import effective_sample_size
    >>> effective_sample_size([1.0, 1.0, 1.0, 1.0])
    4.0
    """
    w = np.asarray(weights, dtype=float).ravel()
    if w.size == 0:
        raise ValueError("weights are empty.")
    if log:
        if np.any(np.isnan(w)) or np.all(np.isneginf(w)):
            raise ValueError("log-weights must not be NaN or all -inf.")
        return float(np.exp(2 * logsumexp(w) - logsumexp(2 * w)))
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("weights must be finite, non-negative and not all zero.")
    # Scale-free: divide by the largest weight first, so that neither sum overflows (nor
    # underflows) whatever the weights' magnitude.
    v = w / w.max()
    return float(v.sum() ** 2 / np.sum(v**2))


@validate_params(
    {
        "n_samples": [Interval(Integral, 2, None, closed="left")],
        "rng": ["random_state"],
        "self_normalised": ["boolean"],
    }
)
def importance_sampling(
    f: Callable | None,
    target_logpdf: Callable,
    proposal: Any,
    n_samples: int,
    rng: RandomStateLike = None,
    *,
    self_normalised: bool = True,
) -> ImportanceResult:
    r"""Importance-sampling estimate of :math:`E_p[f(x)]` with draws from ``proposal``.

    Parameters
    ----------
    f : callable or None
        Integrand, vectorised over samples; ``None`` is the identity.
    target_logpdf : callable or distribution
        :math:`\log p`; it must be normalised when ``self_normalised=False``.
    proposal : distribution
        :math:`q`, with ``sample`` and ``logpdf``; its support must cover that of ``p``.
    n_samples : int
    rng : None, int or numpy.random.Generator
    self_normalised : bool, default=True
        ``False``: :math:`\hat I = \frac1N\sum_n w_n f(x_n)`, unbiased, needs a normalised
        ``p``. ``True``: :math:`\hat I = \sum_n w_n f(x_n) / \sum_n w_n`, consistent for an
        unnormalised ``p`` (a standard result beyond Stuttgart "Introduction to Machine Learning"
        slide 9:47).

    Returns
    -------
    ImportanceResult

    Notes
    -----
    Weights are computed in log space, :math:`\log w = \log p - \log q`, and normalised with
    log-sum-exp. The standard error of the self-normalised estimate uses the delta method,
    :math:`\sqrt{\sum_n \bar w_n^2 (f(x_n) - \hat I)^2}` with normalised weights
    :math:`\bar w`.

    Examples
    --------
    >>> from mathlearn.distributions import Normal
    >>> from mathlearn.monte_carlo import importance_sampling
    >>> r = importance_sampling(lambda x: x, Normal(1.0, 1.0).logpdf, Normal(0.0, 4.0),
    ...                         20_000, rng=0)
    >>> abs(r.estimate - 1.0) < 5 * r.std_error
    True
    """
    n = _check_n(n_samples, minimum=2)
    _check_proposal(proposal)
    rng = check_random_state(rng, name="rng")
    x = _draw(proposal, n, rng)
    logw = np.asarray(_logpdf(target_logpdf)(x), dtype=float) - np.asarray(
        _logpdf(proposal)(x), dtype=float
    )
    if logw.shape != (n,):
        raise ValueError(f"log-densities must return one value per sample; got {logw.shape}.")
    if np.any(np.isnan(logw)) or np.any(logw == np.inf):
        raise ValueError("log-weights are NaN or +inf: the proposal misses target mass.")
    if np.all(np.isneginf(logw)):
        raise ValueError("every importance weight is zero.")
    v = _values(f, x, n)
    lse = logsumexp(logw)
    wbar = np.exp(logw - lse)
    log_z = float(lse - np.log(n))
    ess = float(np.exp(2 * lse - logsumexp(2 * logw)))
    wshape = (n,) + (1,) * (v.ndim - 1)
    if self_normalised:
        est = np.tensordot(wbar, v, axes=(0, 0))
        se = np.sqrt(np.tensordot(wbar**2, (v - est) ** 2, axes=(0, 0)))
    else:
        wf = np.exp(logw).reshape(wshape) * v
        est = wf.mean(axis=0)
        se = wf.std(axis=0, ddof=1) / np.sqrt(n)
    if np.ndim(est) == 0:
        return ImportanceResult(float(est), float(se), x, wbar, logw, ess, log_z, self_normalised)
    return ImportanceResult(est, se, x, wbar, logw, ess, log_z, self_normalised)


@validate_params(
    {
        "rng": ["random_state"],
        "ppf": [callable, None],
        "cdf": [callable, None],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }
)
def inverse_cdf_sample(
    size: int | tuple[int, ...],
    rng: RandomStateLike = None,
    *,
    ppf: Callable | None = None,
    cdf: Callable | None = None,
    bounds: tuple[float, float] | None = None,
    tol: float = 1e-12,
    max_iter: int = 200,
) -> np.ndarray:
    r"""Sample by inverting a cumulative distribution function: :math:`x = F^{-1}(u)`.

    Parameters
    ----------
    size : int or tuple of int
    rng : None, int or numpy.random.Generator
    ppf : callable, optional
        The quantile function :math:`F^{-1}` (vectorised), when known in closed form.
    cdf : callable, optional
        Otherwise, a non-decreasing vectorised cdf, inverted numerically by bisection on
        ``bounds`` (all points at once).
    bounds : (float, float)
        Finite interval containing (essentially) all the mass; required with ``cdf``.
    tol : float
        Absolute tolerance of the bisection in ``x``; the bisection also stops when the
        intervals reach the resolution of floating point (which can be coarser than ``tol``
        for large ``|x|``).
    max_iter : int
        Maximum number of bisection steps; a ``ConvergenceWarning`` is raised if they run
        out before the tolerance is met.

    Returns
    -------
    ndarray of shape ``size``

    Notes
    -----
    If :math:`u \sim U[0, 1]` then :math:`F^{-1}(u)` has cdf :math:`F`. Bisection halves
    every interval per step, so about :math:`\log_2((b - a)/\mathrm{tol})` cdf evaluations
    are needed.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.monte_carlo import inverse_cdf_sample
    >>> x = inverse_cdf_sample(5, rng=0, ppf=lambda u: -np.log1p(-u))  # Exponential(1)
    >>> x.shape
    (5,)
    """
    rng = check_random_state(rng, name="rng")
    if (ppf is None) == (cdf is None):
        raise ValueError("give exactly one of ppf and cdf.")
    u = rng.random(size)
    if ppf is not None:
        x = np.asarray(ppf(u), dtype=float)
        if not np.all(np.isfinite(x)):
            raise ValueError("ppf returned NaN or infinity.")
        return x
    assert cdf is not None  # exactly one of ppf and cdf was given
    if bounds is None:
        raise ValueError("bounds=(low, high) are required with cdf.")
    lo, hi = float(bounds[0]), float(bounds[1])
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"bounds must be finite with low < high; got {bounds}.")
    flo, fhi = float(np.asarray(cdf(lo))), float(np.asarray(cdf(hi)))
    if flo > 1e-6 or fhi < 1 - 1e-6:
        raise ValueError(
            f"bounds miss probability mass: cdf(low) = {flo:.3g}, cdf(high) = {fhi:.3g}."
        )
    max_iter = _check_n(max_iter, "max_iter")
    a = np.full(np.shape(u), lo)
    b = np.full(np.shape(u), hi)
    for _ in range(max_iter):
        mid = 0.5 * (a + b)
        # An interval with no double strictly inside it cannot shrink any further.
        if np.all((b - a < tol) | (mid == a) | (mid == b)):
            break
        below = np.asarray(cdf(mid), dtype=np.float64) < u
        a = np.where(below, mid, a)
        b = np.where(below, b, mid)
    else:
        mid = 0.5 * (a + b)
        if not np.all((b - a < tol) | (mid == a) | (mid == b)):
            warnings.warn(
                f"inverse_cdf_sample: bisection stopped at max_iter={max_iter} with intervals "
                f"up to {np.max(b - a):.3g} wide (tol={tol:g}); increase max_iter.",
                ConvergenceWarning,
                stacklevel=2,
            )
    return 0.5 * (a + b)
