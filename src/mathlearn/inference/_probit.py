r"""The probit approximation to the logistic-Gaussian integral.

For ``f ~ N(mu, s^2)``, ``E[σ(f)] = ∫ σ(f) N(f | mu, s^2) df`` has no closed form. Replacing
the logistic sigmoid by the probit ``Φ(λ f)`` with ``λ² = π/8`` (the two agree in slope at
0) makes the integral ``Φ(λ mu / sqrt(1 + λ² s²))``, and mapping back gives

.. math::

    \mathbb E[\sigma(f)] \approx \sigma\!\left(\frac{\mu}{\sqrt{1 + \pi s^2 / 8}}\right)

(Stuttgart "Introduction to Machine Learning" slide 8:20; PRML §4.5.2, eq. 4.153-4.155).
"""

from __future__ import annotations

import numpy as np

from ..utils.extmath import sigmoid

__all__ = ["probit_approximation"]


def probit_approximation(mean, var) -> np.ndarray:
    r"""``σ(mean / sqrt(1 + π var / 8))``: the approximate ``E[σ(f)]`` for Gaussian ``f``.

    Parameters
    ----------
    mean : array-like
        Mean of the latent ``f``.
    var : array-like
        Variance of ``f`` (non-negative); broadcasts against ``mean``.

    Returns
    -------
    ndarray
        The approximate predictive probability ``p(y = 1)``.

    Examples
    --------
    The Stuttgart notes' example, ``f* = 2`` and ``s² = 4``:

    >>> round(float(probit_approximation(2.0, 4.0)), 5)
    0.77684
    """
    mean = np.asarray(mean, dtype=float)
    var = np.asarray(var, dtype=float)
    if np.any(var < 0) or not np.all(np.isfinite(var)):
        raise ValueError("var must be finite and non-negative.")
    return sigmoid(mean / np.sqrt(1.0 + np.pi * var / 8.0))
