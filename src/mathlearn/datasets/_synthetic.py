"""Synthetic regression data of the notes."""

from __future__ import annotations

import numpy as np

from ..utils.validation import check_positive, check_random_state

__all__ = ["make_sinusoidal", "make_sinusoidal_imperial"]


def make_sinusoidal(n_samples: int = 10, *, noise: float = 0.3, random_state=None):
    """Noisy samples of ``t = sin(2 pi x) + eps``, ``x ~ U[0, 1]``, ``eps ~ N(0, noise^2)``.

    The curve-fitting data of Bishop's PRML §1.1 that notes 001 use for the polynomial and
    Bayesian regression figures (spec 001 §4, experiments E1, E3, E4).

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
    n_samples = int(n_samples)
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1; got {n_samples}.")
    noise = check_positive(noise, "noise", strict=False)
    rng = check_random_state(random_state)
    x = rng.uniform(0.0, 1.0, n_samples)
    y = np.sin(2 * np.pi * x) + noise * rng.standard_normal(n_samples)
    return x[:, None], y


def make_sinusoidal_imperial(n_samples: int = 20, *, noise: float = 0.2, random_state=None):
    """Noisy samples of ``y = -sin(x / 5) + cos(x) + eps``, ``x ~ U[-5, 5]``.

    The regression data of notes 000 (spec 000 §4, experiments E1–E5: N = 20, noise standard
    deviation 0.2).

    Parameters
    ----------
    n_samples : int, default=20
        Number of points.
    noise : float, default=0.2
        Standard deviation of the Gaussian noise ``eps``.
    random_state : None, int or numpy.random.Generator
        Seed or generator.

    Returns
    -------
    X : ndarray of shape (n_samples, 1)
    y : ndarray of shape (n_samples,)

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.datasets import make_sinusoidal_imperial
    >>> X, y = make_sinusoidal_imperial(50, noise=0.0, random_state=0)
    >>> X.shape, bool(np.allclose(y, -np.sin(X[:, 0] / 5) + np.cos(X[:, 0])))
    ((50, 1), True)
    """
    n_samples = int(n_samples)
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1; got {n_samples}.")
    noise = check_positive(noise, "noise", strict=False)
    rng = check_random_state(random_state)
    x = rng.uniform(-5.0, 5.0, n_samples)
    y = -np.sin(x / 5.0) + np.cos(x) + noise * rng.standard_normal(n_samples)
    return x[:, None], y
