"""Coordinate ascent on a lower bound: the one driver behind EM and variational inference.

Both EM and coordinate-ascent variational inference (CAVI) maximise a lower bound on the log
evidence,

    log p(X) >= L(q) = E_q[log p(X, Z)] - E_q[log q(Z)],     log p(X) - L(q) = KL(q || p(Z|X)),

by updating one block of ``q`` (or of the parameters) at a time, each update maximising ``L``
over its block with the others held fixed (Oxford "Advanced Topics in Statistical Machine
Learning" §2.8 and §5.3; PRML §9.4 and §10.1.1). Each block update cannot lower ``L``, so the
sequence of bounds a full sweep produces never decreases. For a mean-field factor
``q_j(z_j)`` the optimal update is ``log q_j* = E_{-j}[log p(X, Z)] + const`` (PRML eq. 10.9),
which for conjugate-exponential models is a closed-form update of natural parameters.

:func:`coordinate_ascent` iterates the sweeps, records the bound, checks that it does not
decrease beyond rounding (a decrease is a bug in an update or in the bound, and warns or
raises) and stops when the change of the bound is small. :func:`mathlearn.mixture.em` is this
driver with the E- and M-steps as the sweep.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Protocol

import numpy as np

from ..exceptions import NumericalWarning
from ..utils._param_validation import Interval, StrOptions, validate_params

__all__ = [
    "BoundDecreaseError",
    "CoordinateAscentModel",
    "CoordinateAscentResult",
    "coordinate_ascent",
]


class BoundDecreaseError(ArithmeticError):
    """The lower bound decreased during coordinate ascent (``on_decrease="raise"``).

    Coordinate ascent cannot lower the bound when every update maximises it over its block,
    so a decrease beyond rounding means an update or the bound itself is wrong. Tests run the
    driver with ``on_decrease="raise"`` to turn such a bug into a failure.

    See Also
    --------
    mathlearn.inference.coordinate_ascent
        The driver that raises it.

    Examples
    --------
    >>> from mathlearn.inference import BoundDecreaseError
    >>> issubclass(BoundDecreaseError, ArithmeticError)
    True
    """


class CoordinateAscentModel(Protocol):
    """What a model provides to be fitted by :func:`coordinate_ascent`.

    The model holds its variational factors (or parameters), initialised by the caller, and
    provides **either** of

    Methods
    -------
    step(X) -> float
        One full sweep of coordinate updates, returning the bound it certifies. When the
        model has ``step``, ``update`` and ``elbo`` are not used. (EM uses this form: the
        bound is ``log p(X | theta_t)``, computed in the E-step before the M-step.)
    update(X) -> None
        One full sweep of coordinate updates, in place (every factor once).
    elbo(X) -> float
        The lower bound ``L(q) = E_q[log p(X, Z)] - E_q[log q(Z)]`` at the current factors,
        called after each :meth:`update`. Any scaling (total, or per sample) is allowed as
        long as it is the same at every iteration.

    ``X`` is passed through untouched (an array, a sparse matrix, a tuple with weights...).
    The bound must be a finite float: the driver raises on NaN or infinity.

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol describes methods; it is not instantiated.

    See Also
    --------
    mathlearn.inference.coordinate_ascent
        The driver.
    mathlearn.mixture.EMModel
        The EM special case.

    Examples
    --------
    Any object with the two methods qualifies (structural typing); a constant bound
    converges after two sweeps.

    >>> from mathlearn.inference import coordinate_ascent
    >>> class Flat:
    ...     def update(self, X):
    ...         pass
    ...     def elbo(self, X):
    ...         return -1.0
    >>> coordinate_ascent(Flat(), None).n_iter
    2
    """

    def update(self, X: Any) -> None: ...

    def elbo(self, X: Any) -> float: ...


@dataclass
class CoordinateAscentResult:
    """Outcome of :func:`coordinate_ascent`.

    Attributes
    ----------
    lower_bounds : ndarray of shape (n_iter,)
        The bound recorded at each iteration. Non-decreasing up to rounding.
    converged : bool
        Whether the change of the bound fell below ``tol``.
    n_iter : int
        Number of sweeps run.

    See Also
    --------
    mathlearn.inference.coordinate_ascent
        The driver that returns it.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.inference import CoordinateAscentResult
    >>> res = CoordinateAscentResult(np.array([-3.0, -2.0, -2.0]), True, 3)
    >>> res.lower_bound, res.elbo_history.tolist()
    (-2.0, [-3.0, -2.0, -2.0])
    """

    lower_bounds: np.ndarray
    converged: bool
    n_iter: int

    @property
    def lower_bound(self) -> float:
        """The last recorded bound (``-inf`` if none)."""
        return float(self.lower_bounds[-1]) if self.lower_bounds.size else -np.inf

    @property
    def elbo_history(self) -> np.ndarray:
        """Alias of :attr:`lower_bounds` (the name variational models use)."""
        return self.lower_bounds


def _sweep(model) -> Callable[[Any], float]:
    """The model's sweep as a function ``X -> bound``."""
    step = getattr(model, "step", None)
    if callable(step):
        return step
    update = getattr(model, "update", None)
    elbo = getattr(model, "elbo", None)
    if not (callable(update) and callable(elbo)):
        missing = "no update" if not callable(update) else "no elbo"
        raise TypeError(
            "coordinate_ascent needs a model with step(X) -> bound, or with update(X) and "
            f"elbo(X); {type(model).__name__} has {missing}."
        )

    def sweep(X):
        update(X)
        return elbo(X)

    return sweep


def check_bound(bound, t: int, name: str = "The", what: str = "") -> float:
    """``bound`` as a float, or a ValueError naming the iteration if it is NaN or infinite.

    Parameters
    ----------
    bound : float
    t : int
        Iteration (1-based), for the message.
    name : str
        Method name opening the message (``"EM"`` gives "EM's lower bound is ...").
    what : str
        Explanation appended to the message.

    Returns
    -------
    float
    """
    bound = float(bound)
    if not np.isfinite(bound):
        owner = "The" if name == "The" else f"{name}'s"
        raise ValueError(
            f"{owner} lower bound is {bound} at iteration {t}"
            + (
                f": {what}"
                if what
                else ": the updates produced parameters (or data) outside the range where the "
                "bound is a finite float. Rescale the data or check the initialisation and "
                "the priors."
            )
        )
    return bound


@validate_params(
    {
        "model": "no_validation",
        "X": "no_validation",
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "criterion": [StrOptions({"relative", "absolute"})],
        "monotone_rtol": [Interval(Real, 0, None, closed="left")],
        "on_decrease": [StrOptions({"warn", "raise", "ignore"})],
        "callback": [callable, None],
        "name": [str],
        "decrease_hint": [str, None],
    }
)
def coordinate_ascent(
    model: CoordinateAscentModel,
    X: Any,
    *,
    max_iter: int = 100,
    tol: float = 1e-6,
    criterion: str = "relative",
    monotone_rtol: float = 1e-9,
    on_decrease: str = "warn",
    callback: Callable[[Any, int, float], None] | None = None,
    name: str = "Coordinate ascent",
    decrease_hint: str | None = None,
) -> CoordinateAscentResult:
    r"""Run coordinate ascent on ``model`` (already initialised) until the bound settles.

    Each iteration ``t`` runs one sweep of the model's coordinate updates and records the
    bound ``L_t`` it returns (:class:`CoordinateAscentModel`). Coordinate ascent guarantees
    ``L_t >= L_{t-1}``; the driver checks it and stops when the change is below ``tol``.

    Parameters
    ----------
    model : CoordinateAscentModel
        Object with ``step(X) -> bound``, or with ``update(X)`` and ``elbo(X) -> bound``;
        its factors or parameters are updated in place.
    X : object
        Data passed through to the model's methods.
    max_iter : int, default=100
        Maximum number of sweeps.
    tol : float, default=1e-6
        Convergence threshold on the change of the bound between two sweeps.
    criterion : {"relative", "absolute"}, default="relative"
        ``"relative"``: stop when ``|L_t - L_{t-1}| < tol * |L_t|``; ``"absolute"``: stop
        when ``|L_t - L_{t-1}| < tol`` (EM's convention, with per-sample bounds).
    monotone_rtol : float, default=1e-9
        Decrease allowed for rounding: ``L_t < L_{t-1} - monotone_rtol * max(1, |L_{t-1}|)``
        counts as a decrease.
    on_decrease : {"warn", "raise", "ignore"}, default="warn"
        What a decrease does: a :class:`~mathlearn.exceptions.NumericalWarning` (once per
        run, at the first decrease), a :class:`BoundDecreaseError` (use it in tests), or
        nothing.
    callback : callable, optional
        ``callback(model, t, L_t)`` after each sweep (to record the factors along the way).
    name : str, default="Coordinate ascent"
        Name of the method in messages (``"EM"``, ``"CAVI"``...).
    decrease_hint : str, optional
        Explanation added to the decrease message (what usually causes it for this model).

    Returns
    -------
    CoordinateAscentResult
        ``lower_bounds`` (also ``elbo_history``), ``lower_bound`` (the last), ``converged``,
        ``n_iter``. An estimator copies them to ``lower_bounds_``, ``lower_bound_``,
        ``converged_`` and ``n_iter_``.

    Raises
    ------
    ValueError
        If a sweep returns a bound that is NaN or infinite.
    BoundDecreaseError
        If the bound decreases and ``on_decrease="raise"``.

    See Also
    --------
    mathlearn.mixture.em : EM, this driver with the E- and M-steps as the sweep.

    Notes
    -----
    For any ``q``, ``log p(X) = L(q) + KL(q || p(Z | X))`` with ``KL >= 0`` (Gibbs'
    inequality), so ``L`` is a lower bound on the evidence (Oxford "Advanced Topics in
    Statistical Machine Learning" §2.8, the ELBO; PRML eq. 10.2-10.4). With the mean-field
    family ``q(Z) = prod_j q_j(Z_j)`` the bound is maximised over one factor, the others
    fixed, by ``log q_j*(Z_j) = E_{i != j}[log p(X, Z)] + const`` (PRML eq. 10.9): each
    update is an exact block maximisation, so the bound is non-decreasing along the sweeps,
    and a decrease beyond rounding is a bug.

    Examples
    --------
    CAVI for a Gaussian with unknown mean and precision under the factorised posterior
    ``q(mu) q(tau)`` (PRML §10.1.3): prior ``mu | tau ~ N(mu0, (lambda0 tau)^-1)``,
    ``tau ~ Gam(a0, b0)``, here with ``mu0 = 0``, ``lambda0 = a0 = b0 = 1``.

    >>> import numpy as np
    >>> from scipy.special import gammaln, digamma
    >>> from mathlearn.inference import coordinate_ascent
    >>> class GaussianCAVI:
    ...     def __init__(self):
    ...         self.m, self.lam, self.a, self.b = 0.0, 1.0, 1.0, 1.0
    ...     def update(self, x):
    ...         n, e_tau = len(x), self.a / self.b
    ...         self.m, self.lam = x.sum() / (1 + n), (1 + n) * e_tau      # q(mu)
    ...         e_sq = ((x - self.m) ** 2).sum() + n / self.lam             # E sum (x - mu)^2
    ...         e_sq0 = self.m**2 + 1 / self.lam                            # E mu^2
    ...         self.a = 1 + (n + 1) / 2                                    # q(tau)
    ...         self.b = 1 + 0.5 * (e_sq + e_sq0)
    ...     def elbo(self, x):
    ...         n, e_tau, e_log_tau = len(x), self.a / self.b, digamma(self.a) - np.log(self.b)
    ...         e_sq = ((x - self.m) ** 2).sum() + n / self.lam
    ...         e_sq0 = self.m**2 + 1 / self.lam
    ...         lik = 0.5 * n * (e_log_tau - np.log(2 * np.pi)) - 0.5 * e_tau * e_sq
    ...         p_mu = 0.5 * (e_log_tau - np.log(2 * np.pi)) - 0.5 * e_tau * e_sq0
    ...         p_tau = -self.a / self.b                                    # log Gam(tau|1,1)
    ...         h_mu = 0.5 * (1 + np.log(2 * np.pi / self.lam))
    ...         h_tau = self.a - np.log(self.b) + gammaln(self.a) + (1 - self.a) * digamma(self.a)
    ...         return lik + p_mu + p_tau + h_mu + h_tau
    >>> x = np.array([0.5, 1.5, 2.0, 1.0, 1.5])
    >>> res = coordinate_ascent(GaussianCAVI(), x, tol=1e-12, on_decrease="raise")
    >>> res.converged, bool(np.all(np.diff(res.elbo_history) >= 0))
    (True, True)
    """
    sweep = _sweep(model)
    lower_bounds: list[float] = []
    prev = -np.inf
    converged = False
    warned = False
    for t in range(1, int(max_iter) + 1):
        bound = check_bound(sweep(X), t, name)
        lower_bounds.append(bound)
        if callback is not None:
            callback(model, t, bound)
        if on_decrease != "ignore" and bound < prev - monotone_rtol * max(1.0, abs(prev)):
            message = (
                f"{name} lower bound decreased at iteration {t} ({prev:.12g} -> {bound:.12g})"
            )
            message += (
                f"; {decrease_hint}"
                if decrease_hint
                else (
                    ": every coordinate update should maximise the bound over its block, so an "
                    "update or the bound is wrong, or there is numerical trouble."
                )
            )
            if on_decrease == "raise":
                raise BoundDecreaseError(message)
            if not warned:
                # Once per run: a systematic cause would otherwise repeat it every iteration.
                warned = True
                warnings.warn(message, NumericalWarning, stacklevel=3)
        delta = abs(bound - prev)
        limit = tol * abs(bound) if criterion == "relative" else tol
        if delta < limit or delta == 0.0:
            converged = True
            break
        prev = bound
    return CoordinateAscentResult(
        np.asarray(lower_bounds, dtype=float), converged, len(lower_bounds)
    )
