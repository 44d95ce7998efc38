"""Kullback–Leibler divergence ``KL(p || q)`` by a registry of closed forms per type pair.

:math:`D(p\\|q) = \\int p \\log(p/q) \\ge 0` (Stuttgart "Introduction to Machine Learning" slide
9:43). Closed forms are registered for the pairs the notes use; any other pair raises
``NotImplementedError`` naming the pair, rather than silently falling back on a Monte Carlo
estimate.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.linalg as sla
from scipy.special import betaln, digamma, gammaln, xlogy

from ._categorical import Categorical
from ._dirichlet import Dirichlet
from ._mvn import MultivariateNormal
from ._univariate import Bernoulli, Beta, ChiSquared, Exponential, Gamma, Normal

__all__ = ["kl_divergence", "register_kl"]

_KL: dict[tuple[type, type], Callable] = {}


def register_kl(type_p: type, type_q: type):
    """Decorator registering ``f(p, q)`` as the closed-form KL for ``(type_p, type_q)``.

    Parameters
    ----------
    type_p, type_q : type
        Distribution classes; subclasses inherit the registration (looked up along the
        method resolution orders of ``p`` and then ``q``).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.distributions import Normal, kl_divergence, register_kl
    >>> class Standard(Normal):
    ...     pass
    >>> @register_kl(Standard, Standard)
    ... def _kl_standard(p, q):
    ...     return 0.0
    >>> kl_divergence(Standard(0.0, 1.0), Standard(0.0, 1.0))
    0.0
    """

    def decorate(f):
        _KL[(type_p, type_q)] = f
        return f

    return decorate


def kl_divergence(p, q):
    """Kullback–Leibler divergence ``KL(p || q)`` in nats, from a closed form.

    Parameters
    ----------
    p, q : Distribution
        Batched parameters broadcast; a pair without a registered closed form raises
        ``NotImplementedError``.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> from mathlearn.distributions import Normal, kl_divergence
    >>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0))
    0.5
    """
    for tp in type(p).__mro__:
        for tq in type(q).__mro__:
            f = _KL.get((tp, tq))
            if f is not None:
                out = f(p, q)
                return float(out) if np.ndim(out) == 0 else out
    pairs = ", ".join(f"({a.__name__}, {b.__name__})" for a, b in _KL)
    raise NotImplementedError(
        f"no closed-form KL divergence for ({type(p).__name__}, {type(q).__name__}); "
        f"registered pairs: {pairs}. Estimate it by Monte Carlo instead "
        "(mathlearn.monte_carlo.mc_expectation of p.logpdf - q.logpdf under p)."
    )


@register_kl(Normal, Normal)
def _kl_normal(p, q):
    m1, v1 = p._p["mean"], p._p["var"]
    m2, v2 = q._p["mean"], q._p["var"]
    return 0.5 * (np.log(v2 / v1) + (v1 + (m1 - m2) ** 2) / v2 - 1.0)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn(p, q):
    r"""0.5 [tr(S2^-1 S1) + (m2-m1)^T S2^-1 (m2-m1) - d + log|S2|/|S1|] via the factors."""
    p._require_single("kl_divergence")
    q._require_single("kl_divergence")
    if p.dim != q.dim:
        raise ValueError(f"dimensions differ: {p.dim} and {q.dim}.")
    M = sla.solve_triangular(q._L, p._L, lower=True, check_finite=False)  # L2^-1 L1
    z = sla.solve_triangular(q._L, q._mean - p._mean, lower=True, check_finite=False)
    logdet = 2 * (np.sum(np.log(np.diag(q._L))) - np.sum(np.log(np.diag(p._L))))
    return 0.5 * (np.sum(M**2) + z @ z - p.dim + logdet)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli(p, q):
    a, b = p._p["p"], q._p["p"]
    with np.errstate(divide="ignore"):
        return xlogy(a, a) - xlogy(a, b) + xlogy(1 - a, 1 - a) - xlogy(1 - a, 1 - b)


@register_kl(Categorical, Categorical)
def _kl_categorical(p, q):
    a, b = p.probs, q.probs
    if a.shape[-1] != b.shape[-1]:
        raise ValueError("the two categoricals have different numbers of categories.")
    with np.errstate(divide="ignore"):
        return np.sum(xlogy(a, a) - xlogy(a, b), axis=-1)


@register_kl(Beta, Beta)
def _kl_beta(p, q):
    a1, b1 = p._p["a"], p._p["b"]
    a2, b2 = q._p["a"], q._p["b"]
    return (
        betaln(a2, b2)
        - betaln(a1, b1)
        + (a1 - a2) * digamma(a1)
        + (b1 - b2) * digamma(b1)
        + (a2 - a1 + b2 - b1) * digamma(a1 + b1)
    )


@register_kl(Gamma, Gamma)
def _kl_gamma(p, q):
    return _kl_gamma_params(p._p["shape"], p._p["rate"], q._p["shape"], q._p["rate"])


def _kl_gamma_params(a1, b1, a2, b2):
    # Rate parametrisation: KL(Ga(a1, b1) || Ga(a2, b2)).
    return (
        (a1 - a2) * digamma(a1)
        - gammaln(a1)
        + gammaln(a2)
        + a2 * (np.log(b1) - np.log(b2))
        + a1 * (b2 - b1) / b1
    )


@register_kl(Exponential, Exponential)
def _kl_exponential(p, q):
    r = q._p["rate"] / p._p["rate"]
    return r - np.log(r) - 1.0


def _gamma_params(d):
    """(shape, rate) of a member of the Gamma family: Exponential(r) = Gamma(1, r) and
    ChiSquared(k) = Gamma(k/2, 1/2)."""
    if isinstance(d, Exponential):
        return np.ones_like(d._p["rate"]), d._p["rate"]
    if isinstance(d, ChiSquared):
        return 0.5 * d._p["df"], np.full_like(d._p["df"], 0.5)
    return d._p["shape"], d._p["rate"]


def _kl_gamma_family(p, q):
    a1, b1 = _gamma_params(p)
    a2, b2 = _gamma_params(q)
    return _kl_gamma_params(a1, b1, a2, b2)


for _tp in (Gamma, Exponential, ChiSquared):
    for _tq in (Gamma, Exponential, ChiSquared):
        if (_tp, _tq) not in _KL:
            register_kl(_tp, _tq)(_kl_gamma_family)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet(p, q):
    a, b = p.alpha, q.alpha
    if a.shape[-1] != b.shape[-1]:
        raise ValueError("the two Dirichlets have different numbers of categories.")
    a0 = a.sum(-1)
    return (
        gammaln(a0)
        - gammaln(a).sum(-1)
        - gammaln(b.sum(-1))
        + gammaln(b).sum(-1)
        + ((a - b) * (digamma(a) - digamma(a0)[..., None])).sum(-1)
    )
