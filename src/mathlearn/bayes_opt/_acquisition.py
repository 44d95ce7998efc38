"""Acquisition functions for Bayesian optimisation (minimisation convention).

Oxford "Advanced Topics in Statistical Machine Learning" §10: GP-LCB (to be minimised),
probability of improvement and expected improvement (to be maximised), their noise-aware
variants (eq. 10.1), and Lemma 24, ``E max(0, S) = Phi(m / tau) m + phi(m / tau) tau`` for
``S ~ N(m, tau^2)``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import erfcx, log_ndtr, ndtr
from scipy.stats import norm

__all__ = [
    "expected_improvement",
    "expected_positive_part",
    "log_expected_improvement",
    "log_probability_of_improvement",
    "lower_confidence_bound",
    "noisy_expected_improvement",
    "noisy_probability_of_improvement",
    "probability_of_improvement",
]

_LOG_SQRT_2PI = 0.5 * float(np.log(2.0 * np.pi))
_LOG_SQRT_PI_2 = 0.5 * float(np.log(np.pi / 2.0))
_INV_SQRT_EPS = 1.0 / np.sqrt(np.finfo(float).eps)


def _phi(z):
    return np.exp(-0.5 * z * z - _LOG_SQRT_2PI)


def _as_arrays(*args):
    out = [np.asarray(a, dtype=float) for a in args]
    for a in out:
        if np.any(np.isnan(a)):
            raise ValueError("Acquisition inputs contain NaN.")
    if np.any(out[1] < 0):
        raise ValueError("sigma must be >= 0.")
    return out


def expected_positive_part(m, tau):
    """``E max(0, S)`` for ``S ~ N(m, tau^2)`` (the notes' Lemma 24); ``max(0, m)`` at tau 0.

    Parameters
    ----------
    m : array-like
        Mean of ``S``.
    tau : array-like
        Standard deviation of ``S`` (>= 0).

    Returns
    -------
    ndarray or float
        ``Phi(m / tau) m + phi(m / tau) tau``.

    Examples
    --------
    >>> round(float(expected_positive_part(1.0, 1.0)), 6)
    1.083315
    """
    m, tau = _as_arrays(m, tau)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = m / tau
        out = ndtr(z) * m + _phi(z) * tau
    return np.where(tau > 0, out, np.maximum(m, 0.0))


def lower_confidence_bound(mu, sigma, *, alpha: float = 0.05):
    """GP-LCB ``mu - z_{1 - alpha} sigma`` with ``z_{1-alpha} = Phi^{-1}(1 - alpha)``; minimise.

    Parameters
    ----------
    mu : array-like
        Posterior mean of ``f`` at the candidates.
    sigma : array-like
        Posterior standard deviation of ``f`` at the candidates (>= 0).
    alpha : float, default=0.05
        The bound holds with probability ``1 - alpha`` under the posterior; in (0, 1).

    Returns
    -------
    ndarray or float

    Examples
    --------
    >>> round(float(lower_confidence_bound(0.5, 1.0, alpha=0.05)), 6)
    -1.144854
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha}.")
    mu, sigma = _as_arrays(mu, sigma)
    return mu - norm.ppf(1.0 - alpha) * sigma


def probability_of_improvement(mu, sigma, y_best):
    """``Phi((y_best - mu) / sigma)``; ``1{mu < y_best}`` at sigma 0. Maximise.

    Parameters
    ----------
    mu : array-like
        Posterior mean of ``f`` at the candidates.
    sigma : array-like
        Posterior standard deviation of ``f`` at the candidates (>= 0).
    y_best : float or array-like
        The best (smallest) value observed so far.

    Returns
    -------
    ndarray or float

    Examples
    --------
    >>> round(float(probability_of_improvement(0.5, 1.0, 0.0)), 6)
    0.308538
    """
    mu, sigma, y_best = _as_arrays(mu, sigma, y_best)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = ndtr((y_best - mu) / sigma)
    return np.where(sigma > 0, p, (mu < y_best).astype(float))


def expected_improvement(mu, sigma, y_best):
    """``E max(0, y_best - f(x))`` = ``Phi(gamma)(y_best - mu) + phi(gamma) sigma``. Maximise.

    At ``sigma = 0`` it is ``max(0, y_best - mu)``.

    Parameters
    ----------
    mu : array-like
        Posterior mean of ``f`` at the candidates.
    sigma : array-like
        Posterior standard deviation of ``f`` at the candidates (>= 0).
    y_best : float or array-like
        The best (smallest) value observed so far.

    Returns
    -------
    ndarray or float

    Examples
    --------
    >>> round(float(expected_improvement(0.5, 1.0, 0.0)), 6)
    0.197797
    """
    mu, sigma, y_best = _as_arrays(mu, sigma, y_best)
    return expected_positive_part(y_best - mu, sigma)


def _log_h(z):
    """``log(z Phi(z) + phi(z))``, accurate for every real ``z`` (no cancellation).

    For ``z > -1`` directly. Below, ``h(z) = phi(z) (1 - |z| Phi(z) / phi(z))`` and
    ``Phi(z) / phi(z) = sqrt(pi / 2) erfcx(-z / sqrt 2)`` (the Mills ratio), so
    ``log h = log phi(z) + log(1 - exp(log|z| + log sqrt(pi/2) + log erfcx(-z/sqrt 2)))``;
    beyond ``|z| > 1/sqrt(eps)`` the asymptotic ``h(z) ~ phi(z) / z^2`` is exact to rounding.
    """
    z = np.asarray(z, dtype=float)
    out = np.empty_like(z)
    a = z > -1
    with np.errstate(divide="ignore"):
        out[a] = np.log(z[a] * ndtr(z[a]) + _phi(z[a]))
    b = (~a) & (z > -_INV_SQRT_EPS)
    zb = z[b]
    x = np.log(-zb) + _LOG_SQRT_PI_2 + np.log(erfcx(-zb / np.sqrt(2.0)))
    out[b] = -0.5 * zb * zb - _LOG_SQRT_2PI + np.log(-np.expm1(x))
    c = ~(a | b)
    zc = z[c]
    out[c] = -0.5 * zc * zc - _LOG_SQRT_2PI - 2.0 * np.log(-zc)
    return out


def log_expected_improvement(mu, sigma, y_best):
    """``log EI``, finite and accurate far in the tail where EI underflows to 0.

    ``log EI = log sigma + log(gamma Phi(gamma) + phi(gamma))``, ``gamma = (y_best - mu) /
    sigma``. At ``sigma = 0`` it is ``log max(0, y_best - mu)`` (``-inf`` when no
    improvement is possible).

    Parameters
    ----------
    mu : array-like
        Posterior mean of ``f`` at the candidates.
    sigma : array-like
        Posterior standard deviation of ``f`` at the candidates (>= 0).
    y_best : float or array-like
        The best (smallest) value observed so far.

    Returns
    -------
    ndarray or float

    Examples
    --------
    >>> float(log_expected_improvement(40.0, 1.0, 0.0)) < -800  # EI itself underflows
    True
    """
    mu, sigma, y_best = np.broadcast_arrays(*_as_arrays(mu, sigma, y_best))
    out = np.empty(mu.shape)
    pos = sigma > 0
    gamma = (y_best[pos] - mu[pos]) / sigma[pos]
    out[pos] = np.log(sigma[pos]) + _log_h(gamma)
    with np.errstate(divide="ignore"):
        out[~pos] = np.log(np.maximum(y_best[~pos] - mu[~pos], 0.0))
    return out if out.ndim else float(out)


def log_probability_of_improvement(mu, sigma, y_best):
    """``log Phi(gamma)``, ``gamma = (y_best - mu) / sigma``, via ``log_ndtr`` (accurate far
    in the tail, where PI underflows to 0).

    Parameters
    ----------
    mu : array-like
        Posterior mean of ``f`` at the candidates.
    sigma : array-like
        Posterior standard deviation of ``f`` at the candidates (>= 0).
    y_best : float or array-like
        The best (smallest) value observed so far.

    Returns
    -------
    ndarray or float

    Examples
    --------
    >>> float(log_probability_of_improvement(40.0, 1.0, 0.0)) < -800  # PI itself underflows
    True
    """
    mu, sigma, y_best = np.broadcast_arrays(*_as_arrays(mu, sigma, y_best))
    with np.errstate(divide="ignore", invalid="ignore"):
        lp = log_ndtr((y_best - mu) / sigma)
        return np.where(sigma > 0, lp, np.log((mu < y_best).astype(float)))


def noisy_expected_improvement(mu, mu_best, rho):
    """Noise-aware EI, the notes' eq. 10.1: ``Phi(g)(mu_best - mu) + phi(g) rho``.

    ``mu_best = mu(x~)`` is the posterior mean at the incumbent and ``rho(x, x~) =
    sqrt(kappa(x, x) + kappa(x~, x~) - 2 kappa(x, x~))`` the posterior standard deviation of
    ``f(x~) - f(x)``; ``g = (mu_best - mu) / rho`` (the notes do not restate ``g``; this is
    the form consistent with Lemma 24).

    Parameters
    ----------
    mu : array-like
        Posterior mean of ``f`` at the candidates.
    mu_best : float or array-like
        Posterior mean at the incumbent ``x~``.
    rho : array-like
        Posterior standard deviation of ``f(x~) - f(x)`` (>= 0).

    Returns
    -------
    ndarray or float

    Examples
    --------
    >>> round(float(noisy_expected_improvement(0.5, 0.0, 1.0)), 6)  # = EI at sigma = rho
    0.197797
    """
    mu, rho, mu_best = _as_arrays(mu, rho, mu_best)
    return expected_positive_part(mu_best - mu, rho)


def noisy_probability_of_improvement(mu, mu_best, rho):
    """Noise-aware PI ``Phi((mu_best - mu) / rho)`` (``1{mu < mu_best}`` at ``rho = 0``).

    Parameters
    ----------
    mu : array-like
        Posterior mean of ``f`` at the candidates.
    mu_best : float or array-like
        Posterior mean at the incumbent ``x~``.
    rho : array-like
        Posterior standard deviation of ``f(x~) - f(x)`` (>= 0).

    Returns
    -------
    ndarray or float

    Examples
    --------
    >>> round(float(noisy_probability_of_improvement(0.5, 0.0, 1.0)), 6)
    0.308538
    """
    return probability_of_improvement(mu, rho, mu_best)
