"""Decision theory: expected utility, the certainty equivalent, Bayes decisions.

Stuttgart "Introduction to Machine Learning", appendix A.3 (slide 9:41, utilities and
decision theory): a utility ``U`` maps outcomes to reals and a rational agent maximises the
expected utility ``E_p[U] = sum_x U(x) p(x)`` (or ``int U(x) p(x) dx``). For a concave ``U``
Jensen's inequality gives ``E[U(x)] <= U(E[x])``: the agent prefers the sure amount
``E[x]`` to the gamble (risk aversion). The certainty equivalent ``CE = U^{-1}(E[U(x)])`` is
the sure amount worth as much as the gamble, and the risk premium ``E[x] - CE >= 0`` is what
the agent would pay to avoid the risk.

With a posterior ``p(theta | D)`` over states and a utility ``U(a, theta)`` of each action,
the Bayes decision is ``argmax_a sum_theta U(a, theta) p(theta | D)`` (for a loss, the
argmin of the posterior expected loss).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq

from ..utils._param_validation import validate_params

__all__ = ["ExpectedUtility", "bayes_decision", "expected_utility"]


def _probabilities(outcomes, probs):
    x = np.asarray(outcomes, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"outcomes must be a non-empty vector; got shape {x.shape}.")
    if not np.all(np.isfinite(x)):
        raise ValueError("outcomes contain NaN or infinity.")
    if probs is None:
        return x, np.full(x.shape[0], 1.0 / x.shape[0]), True
    p = np.asarray(probs, dtype=float)
    if p.shape != x.shape:
        raise ValueError(f"probs must have the shape of outcomes {x.shape}; got {p.shape}.")
    if not np.all(np.isfinite(p)) or np.any(p < 0) or not np.isclose(p.sum(), 1.0, atol=1e-10):
        raise ValueError("probs must be non-negative and sum to one.")
    return x, p, False


@dataclass
class ExpectedUtility:
    """Expected utility of a gamble, its certainty equivalent and risk premium.

    Attributes
    ----------
    expected_utility : float
        ``E[U(x)]``.
    expected_value : float
        ``E[x]``.
    certainty_equivalent : float
        ``U^{-1}(E[U(x)])`` (for a strictly increasing ``U``).
    risk_premium : float
        ``E[x] - CE``: positive for a concave (risk-averse) utility.
    std_error : float
        Monte Carlo standard error of ``E[U(x)]`` when ``outcomes`` are samples (no
        ``probs``); 0 for an exact discrete expectation.

    See Also
    --------
    mathlearn.stats.expected_utility
        The function that returns it.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.stats import expected_utility
    >>> eu = expected_utility(np.log, [50.0, 200.0], [0.5, 0.5])
    >>> round(eu.certainty_equivalent, 9), eu.expected_value   # the geometric mean
    (100.0, 125.0)
    """

    expected_utility: float
    expected_value: float
    certainty_equivalent: float
    risk_premium: float
    std_error: float


@validate_params(
    {"utility": [callable], "outcomes": ["array-like"], "probs": ["array-like", None]}
)
def expected_utility(
    utility: Callable[[np.ndarray], np.ndarray],
    outcomes: ArrayLike,
    probs: ArrayLike | None = None,
) -> ExpectedUtility:
    """Expected utility of a discrete gamble (or of samples), with the certainty equivalent.

    Parameters
    ----------
    utility : callable
        ``U``, vectorised over outcomes; strictly increasing for the certainty equivalent
        (found by bracketing and Brent's method between the smallest and the largest outcome).
    outcomes : array-like of shape (n,)
        The possible outcomes, or samples of the gamble when ``probs`` is None.
    probs : array-like of shape (n,), optional
        Their probabilities (summing to one); None for equally weighted samples.

    Returns
    -------
    ExpectedUtility

    See Also
    --------
    bayes_decision

    Examples
    --------
    An exponential utility ``U(x) = -exp(-a x)`` and a Gaussian gamble: the certainty
    equivalent is ``mu - a sigma^2 / 2``.

    >>> import numpy as np
    >>> from mathlearn.stats import expected_utility
    >>> x, w = np.polynomial.hermite_e.hermegauss(40)
    >>> eu = expected_utility(lambda v: -np.exp(-0.5 * v), 1.0 + 2.0 * x, w / w.sum())
    >>> round(eu.certainty_equivalent, 10)        # 1 - 0.5 * 4 / 2
    0.0
    """
    x, p, samples = _probabilities(outcomes, probs)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        u = np.asarray(utility(x), dtype=float)
    if u.shape != x.shape or not np.all(np.isfinite(u)):
        raise ValueError("the utility must return one finite value per outcome.")
    eu = float(p @ u)
    ev = float(p @ x)
    se = float(np.std(u, ddof=1) / np.sqrt(x.size)) if samples and x.size > 1 else 0.0
    lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        ce = lo
    else:
        u_lo, u_hi = float(utility(np.array([lo]))[0]), float(utility(np.array([hi]))[0])
        if not u_lo < u_hi:
            raise ValueError(
                "the certainty equivalent needs a strictly increasing utility; U(min outcome) "
                f"= {u_lo:.6g} >= U(max outcome) = {u_hi:.6g}."
            )
        eu_clipped = min(max(eu, u_lo), u_hi)  # rounding may put E[U] a hair outside
        ce = float(
            brentq(
                lambda c: float(utility(np.array([c]))[0]) - eu_clipped,
                lo,
                hi,
                xtol=1e-15 * max(abs(lo), abs(hi), 1e-300),
                rtol=4 * np.finfo(float).eps,
            )
        )
    return ExpectedUtility(eu, ev, ce, ev - ce, se)


@validate_params({"utility": ["array-like"], "posterior": ["array-like"], "loss": ["boolean"]})
def bayes_decision(utility: ArrayLike, posterior: ArrayLike, *, loss: bool = False):
    """The action of maximal posterior expected utility (or minimal expected loss).

    Parameters
    ----------
    utility : array-like of shape (n_actions, n_states)
        ``U(a, theta)`` (or a loss ``L(a, theta)`` with ``loss=True``).
    posterior : array-like of shape (n_states,)
        ``p(theta | D)``.
    loss : bool, default=False
        Whether ``utility`` holds losses (then the expected loss is minimised).

    Returns
    -------
    action : int
        The chosen row (the first on ties).
    expected : ndarray of shape (n_actions,)
        The posterior expected utility (or loss) of every action.

    See Also
    --------
    expected_utility

    Examples
    --------
    Treat (action 1) or not (action 0) with posterior probability 0.3 of disease:

    >>> from mathlearn.stats import bayes_decision
    >>> L = [[0.0, 10.0],    # no treatment: cost 10 if diseased
    ...      [1.0, 1.0]]     # treatment: cost 1 either way
    >>> bayes_decision(L, [0.7, 0.3], loss=True)[0]
    1
    """
    U = np.asarray(utility, dtype=float)
    p = np.asarray(posterior, dtype=float)
    if U.ndim != 2 or p.shape != (U.shape[1],):
        raise ValueError(
            f"utility must be (n_actions, n_states) and posterior (n_states,); got {U.shape} "
            f"and {p.shape}."
        )
    if not np.all(np.isfinite(U)):
        raise ValueError("utility contains NaN or infinity.")
    if np.any(p < 0) or not np.isclose(p.sum(), 1.0, atol=1e-10):
        raise ValueError("posterior must be non-negative and sum to one.")
    expected = U @ p
    action = int(np.argmin(expected) if loss else np.argmax(expected))
    return action, expected
