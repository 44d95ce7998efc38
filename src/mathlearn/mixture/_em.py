"""A general EM driver.

Oxford "Advanced Topics in Statistical Machine Learning" §5.2-5.3; PRML §9.3-9.4.

The derivation it implements: for any distribution ``q(z)`` over the latent variables,

    log p(X | theta) = F(q, theta) + KL(q || p(z | X, theta)),
    F(q, theta) = E_q[log p(X, z | theta)] - E_q[log q(z)]          (free energy, eq. 5.11)

and ``KL >= 0`` by Gibbs' inequality (eq. 5.4-5.8), so ``F`` is a lower bound on the
log-likelihood. EM is coordinate ascent on ``F``:

* E-step: ``q <- p(z | X, theta)``, which makes the KL zero, so ``F(q, theta) = log p(X|theta)``;
* M-step: ``theta <- argmax_theta E_q[log p(X, z | theta)]`` (the entropy of ``q`` does not
  depend on ``theta``), which cannot lower ``F``.

Hence ``log p(X | theta_t) = F(q_t, theta_t) <= F(q_t, theta_{t+1}) <= log p(X | theta_{t+1})``
(Theorem 19 of Oxford "Advanced Topics in Statistical Machine Learning" §5.3): the sequence of
log-likelihoods the driver records never decreases. An M-step that only increases ``E_q[log p]``
(generalised EM) keeps this property.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral, Real
from typing import Any, Protocol

from ..inference._coordinate_ascent import CoordinateAscentResult, check_bound, coordinate_ascent
from ..utils._param_validation import Interval, validate_params

__all__ = ["EMModel", "EMResult", "em"]


class EMModel(Protocol):
    """What a model provides to be fitted by :func:`em`: two methods, nothing else.

    A model holds its parameters ``theta`` (initialised by the caller before :func:`em`
    runs) and exposes the two steps of coordinate ascent on the free energy:

    Methods
    -------
    e_step(X) -> (float, posterior)
        Compute ``q(z) = p(z | X, theta)`` under the current parameters and return the
        **per-sample average** log-likelihood ``log p(X | theta) / N`` (plus
        ``log p(theta) / N`` for MAP-EM), which equals ``F(q, theta) / N`` once ``q`` is the
        exact posterior, together with whatever statistics of ``q`` the M-step needs (for a
        mixture: the log-responsibilities, shape (N, K); for a linear-Gaussian latent model
        such as factor analysis: the posterior means and second moments of the factors). The
        bound must be finite: :func:`em` raises on NaN or infinity.
    m_step(X, posterior) -> None
        Update the parameters in place to maximise (or merely increase) the expected
        complete-data log-likelihood ``E_q[log p(X, z | theta)]`` (plus ``log p(theta)``),
        given the ``posterior`` returned by the E-step of the same iteration.

    ``X`` is passed through untouched: it may be an array or any object the two steps
    understand (data with sample weights, say). The driver records the bounds, tests
    convergence and monotonicity, and leaves the bookkeeping to the caller, whose fitted
    attributes are named ``lower_bound_`` (last bound), ``lower_bounds_`` (history),
    ``n_iter_`` and ``converged_`` (:class:`EMResult` carries them).

    Earlier versions named the hooks ``_e_step`` and ``_m_step``; models that still do are
    accepted.

    Parameters
    ----------
    *args, **kwargs
        Not used: a protocol describes methods; it is not instantiated.

    See Also
    --------
    mathlearn.mixture.em
        The driver.
    mathlearn.inference.CoordinateAscentModel
        The general protocol.

    Examples
    --------
    Every fitted mixture qualifies (it implements both steps itself):

    >>> from mathlearn.mixture import GaussianMixture
    >>> all(callable(getattr(GaussianMixture, name)) for name in ("e_step", "m_step"))
    True
    """

    def e_step(self, X) -> tuple[float, Any]: ...

    def m_step(self, X, posterior) -> None: ...


def _hooks(model):
    """The model's ``(e_step, m_step)``, under the public names or the former private ones."""
    e_step = getattr(model, "e_step", None) or getattr(model, "_e_step", None)
    m_step = getattr(model, "m_step", None) or getattr(model, "_m_step", None)
    if not (callable(e_step) and callable(m_step)):
        raise TypeError(
            f"em needs a model with e_step(X) and m_step(X, posterior) methods; "
            f"{type(model).__name__} has {'no e_step' if not callable(e_step) else 'no m_step'}."
        )
    return e_step, m_step


class EMResult(CoordinateAscentResult):
    """Outcome of :func:`em` (a :class:`~mathlearn.inference.CoordinateAscentResult`).

    Attributes
    ----------
    lower_bounds : ndarray of shape (n_iter,)
        ``F(q_t, theta_t) / N = log p(X | theta_t) / N`` at each iteration ``t``, taken in the
        E-step before that iteration's M-step. Non-decreasing.
    converged : bool
        Whether the change of the bound fell below ``tol``.
    n_iter : int
        Number of E/M iterations run.

    See Also
    --------
    mathlearn.mixture.em
        The driver that returns it.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.mixture import EMResult
    >>> EMResult(np.array([-1.5, -1.2]), True, 2).lower_bound
    -1.2
    """


_EM_DECREASE_HINT = (
    "the M-step did not increase the expected complete-data log-likelihood: it is not "
    "an exact maximiser (e.g. GaussianMixture's reg_covar is not small against "
    "the data's variances: rescale the data or lower reg_covar) or there is "
    "numerical trouble (e.g. a collapsing component). Later decreases of this run "
    "are not reported."
)


class _EMSweep:
    """EM as one coordinate-ascent sweep: the E-step (whose bound is recorded), then the
    M-step. A non-finite bound raises before the M-step, so the model keeps the parameters
    of that E-step."""

    def __init__(self, e_step, m_step):
        self.e_step, self.m_step, self.t = e_step, m_step, 0

    def step(self, X) -> float:
        self.t += 1
        bound, posterior = self.e_step(X)
        bound = check_bound(
            bound,
            self.t,
            "EM",
            "the log-likelihood of the data under the current parameters is not a finite "
            "float (e.g. data of extreme magnitude, a point of zero density, or parameters "
            "that became NaN). Rescale the data or check the initialisation.",
        )
        self.m_step(X, posterior)
        return bound


@validate_params(
    {
        "model": "no_validation",
        "X": "no_validation",
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "callback": [callable, None],
        "monotone_rtol": [Interval(Real, 0, None, closed="left")],
    }
)
def em(
    model: EMModel,
    X,
    *,
    max_iter: int = 100,
    tol: float = 1e-3,
    callback: Callable[[EMModel, int, float], None] | None = None,
    monotone_rtol: float = 1e-9,
) -> EMResult:
    """Run EM on ``model`` (already initialised) until the bound stops increasing.

    Parameters
    ----------
    model : EMModel
        Object with ``e_step(X)`` and ``m_step(X, posterior)`` (see :class:`EMModel`); its
        parameters are updated in place.
    X : ndarray
        Data passed through to the two steps.
    max_iter : int, default=100
        Maximum number of iterations.
    tol : float, default=1e-3
        Stop when ``|bound_t - bound_{t-1}| < tol`` (per-sample units).
    callback : callable, optional
        ``callback(model, t, bound_t)`` after each M-step (to record the parameters along
        the way, e.g. for plots).
    monotone_rtol : float, default=1e-9
        Allowed relative decrease of the bound, for rounding. A larger decrease means the
        M-step did not maximise what it should (or numerical trouble) and raises a
        :class:`~mathlearn.exceptions.NumericalWarning`, once per run (the first decrease);
        the theory guarantees it never happens for an exact E-step and an M-step that
        increases ``E_q log p``.

    Returns
    -------
    EMResult

    See Also
    --------
    mathlearn.inference.coordinate_ascent : The driver :func:`em` runs on (the E- and M-steps
        form one sweep; the bound is compared in absolute, per-sample units).

    Raises
    ------
    ValueError
        If an E-step returns a bound that is NaN or infinite (parameters or data outside the
        range where the log-likelihood is a finite float); the model keeps the parameters of
        that E-step.

    Examples
    --------
    A model plugs in by providing the two steps. Here the notes' "soft k-means" (Oxford
    "Advanced Topics in Statistical Machine Learning" §5.4): an isotropic mixture with known
    ``sigma^2 = 1`` that learns ``pi`` and ``mu``.

    >>> import numpy as np
    >>> from scipy.special import logsumexp
    >>> from mathlearn.mixture import em
    >>> class SoftKMeans:
    ...     def __init__(self, means):
    ...         self.means, self.weights = np.asarray(means, float), np.full(len(means), 0.5)
    ...     def e_step(self, X):
    ...         logp = -0.5 * (X - self.means) ** 2 - 0.5 * np.log(2 * np.pi)
    ...         wlp = logp + np.log(self.weights)
    ...         norm = logsumexp(wlp, axis=1)
    ...         return norm.mean(), wlp - norm[:, None]
    ...     def m_step(self, X, log_resp):
    ...         Q = np.exp(log_resp)
    ...         self.weights = Q.sum(0) / len(X)
    ...         self.means = (Q * X).sum(0) / Q.sum(0)
    >>> X = np.array([[-2.0], [-1.0], [0.0], [4.0], [5.0], [6.0]])
    >>> model = SoftKMeans([-1.0, 1.0])
    >>> res = em(model, X, tol=1e-10)
    >>> res.converged, bool(np.all(np.diff(res.lower_bounds) >= 0))
    (True, True)
    >>> np.round(model.means, 4).tolist()
    [-1.0, 5.0]
    """
    steps = _EMSweep(*_hooks(model))
    result = coordinate_ascent(
        steps,
        X,
        max_iter=max_iter,
        tol=tol,
        criterion="absolute",
        monotone_rtol=monotone_rtol,
        on_decrease="warn",
        callback=None if callback is None else (lambda _, t, bound: callback(model, t, bound)),
        name="EM",
        decrease_hint=_EM_DECREASE_HINT,
    )
    return EMResult(result.lower_bounds, result.converged, result.n_iter)
