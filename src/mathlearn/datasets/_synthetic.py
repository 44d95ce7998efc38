"""Synthetic regression data of the notes."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..utils._param_validation import Interval, validate_params
from ..utils.validation import check_random_state

_CONSTRAINTS = {
    "n_samples": [Interval(Integral, 1, None, closed="left")],
    "noise": [Interval(Real, 0, None, closed="left")],
    "random_state": ["random_state"],
}

__all__ = ["make_sinusoidal", "make_sinusoidal_imperial"]


@validate_params(_CONSTRAINTS)
def make_sinusoidal(n_samples: int = 10, *, noise: float = 0.3, random_state=None):
    """Noisy samples of ``t = sin(2 pi x) + eps``, ``x ~ U[0, 1]``, ``eps ~ N(0, noise^2)``.

    The curve-fitting data of Bishop's PRML §1.1 that the notes following PRML use for the
    polynomial and Bayesian regression figures (PRML Figs. 1.4, 3.7–3.9).

    Parameters
    ----------
    n_samples : int, default=10
    noise : float, default=0.3
        Standard deviation of the Gaussian noise.
    random_state : int, Generator or None

    Returns
    -------
    X : ndarray of shape (n_samples, 1)
    y : ndarray of shape (n_samples,)

    Examples
    --------
    >>> X, y = make_sinusoidal(10, random_state=0)
    >>> X.shape, y.shape
    ((10, 1), (10,))
    """
    rng = check_random_state(random_state)
    x = rng.uniform(0.0, 1.0, n_samples)
    y = np.sin(2 * np.pi * x) + noise * rng.standard_normal(n_samples)
    return x[:, None], y


@validate_params(_CONSTRAINTS)
def make_sinusoidal_imperial(n_samples: int = 20, *, noise: float = 0.2, random_state=None):
    """Noisy samples of ``y = -sin(x / 5) + cos(x) + eps``, ``x ~ U[-5, 5]``.

    The regression data of Imperial "Mathematics for Inference and Machine Learning" §1.5 (the
    polynomial-fit examples: N = 20, noise standard deviation 0.2).

    Parameters
    ----------
    n_samples : int, default=20
    noise : float, default=0.2
        Standard deviation of the Gaussian noise.
    random_state : int, Generator or None

    Returns
    -------
    X : ndarray of shape (n_samples, 1)
    y : ndarray of shape (n_samples,)

    Examples
    --------
    >>> X, y = make_sinusoidal_imperial(20, random_state=0)
    >>> bool(X.min() >= -5.0 and X.max() <= 5.0), y.shape
    (True, (20,))
    """
    rng = check_random_state(random_state)
    x = rng.uniform(-5.0, 5.0, n_samples)
    y = -np.sin(x / 5.0) + np.cos(x) + noise * rng.standard_normal(n_samples)
    return x[:, None], y
