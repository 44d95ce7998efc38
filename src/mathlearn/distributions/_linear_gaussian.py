"""The linear-Gaussian model ``p(x) p(y | x)``: its joint, the marginal of ``y`` and the
posterior ``p(x | y)`` (Bayes' theorem for Gaussians)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._mvn import MultivariateNormal, _check_offset, _factor_cov

__all__ = ["linear_gaussian_joint", "linear_gaussian_marginal", "linear_gaussian_posterior"]


def _check(prior, A, noise_cov, b):
    if not isinstance(prior, MultivariateNormal):
        raise TypeError("prior must be a MultivariateNormal.")
    A = np.asarray(A, dtype=float)
    if A.ndim == 0:
        A = A.reshape(1, 1)
    if A.ndim != 2 or A.shape[1] != prior.dim:
        raise ValueError(f"A must have shape (k, {prior.dim}); got {A.shape}.")
    if not np.all(np.isfinite(A)):
        raise ValueError("A contains NaN or infinity.")
    k = A.shape[0]
    R = np.asarray(noise_cov, dtype=float)
    if R.ndim == 0:
        R = R * np.eye(k)
    if R.shape != (k, k):
        raise ValueError(f"noise_cov must have shape ({k}, {k}); got {R.shape}.")
    if not np.all(np.isfinite(R)):
        raise ValueError("noise_cov contains NaN or infinity.")
    LR = _factor_cov(R, jitter=None, name="noise_cov")
    b = _check_offset(b, k, "b")
    return A, LR, b


def linear_gaussian_joint(
    prior: Any, A: ArrayLike, noise_cov: ArrayLike, b: ArrayLike | None = None
) -> MultivariateNormal:
    r"""Joint of ``x ~ prior`` and ``y | x ~ N(A x + b, noise_cov)`` over ``[x, y]``.

    Parameters
    ----------
    prior : MultivariateNormal
        :math:`p(x) = N(\mu, \Lambda^{-1})` of dimension ``d``.
    A : array-like of shape (k, d)
    noise_cov : array-like of shape (k, k) or float
        Covariance :math:`L^{-1}` of the observation noise (a float means isotropic).
    b : array-like of shape (k,), optional

    Returns
    -------
    MultivariateNormal of dimension ``d + k``
        Mean ``[mu, A mu + b]``; its Cholesky factor is assembled in block form,
        ``[[L0, 0], [A L0, L_R]]``, without any new factorisation.

    Notes
    -----
    PRML §2.3.3 (eqs. 2.113–2.117, with the notes' errata corrected: precisions inverted) and
    Stuttgart "Introduction to Machine Learning" slide 9:35 ("joint = marginal x conditional").

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.distributions import MultivariateNormal, linear_gaussian_joint
    >>> joint = linear_gaussian_joint(MultivariateNormal([1.0], [[2.0]]), [[3.0]], 0.5)
    >>> joint.mean, joint.cov  # Cov[y] = 3 * 2 * 3 + 0.5, Cov[x, y] = 2 * 3
    (array([1., 3.]), array([[ 2. ,  6. ],
           [ 6. , 18.5]]))
    """
    A, LR, b = _check(prior, A, noise_cov, b)
    d, k = prior.dim, A.shape[0]
    L = np.zeros((d + k, d + k))
    L[:d, :d] = prior.scale_tril
    L[d:, :d] = A @ prior.scale_tril
    L[d:, d:] = LR
    mean = np.concatenate([prior.mean, A @ prior.mean + b])
    return MultivariateNormal._from_factor(mean, L)


def linear_gaussian_marginal(
    prior: Any, A: ArrayLike, noise_cov: ArrayLike, b: ArrayLike | None = None
) -> MultivariateNormal:
    r"""Marginal :math:`p(y) = N(A\mu + b, L^{-1} + A\Lambda^{-1}A^T)` (PRML §2.3.3, eq. 2.115).

    Parameters
    ----------
    prior, A, noise_cov, b
        As in :func:`linear_gaussian_joint`.

    Returns
    -------
    MultivariateNormal of dimension ``k``

    Notes
    -----
    The propagation identity :math:`\int N(y|Ax+b, L^{-1})N(x|\mu,\Lambda^{-1})dx`
    (Stuttgart "Introduction to Machine Learning" slide 9:35), taken as the trailing block of the
    joint's factor (a QR, no inverse).

    Examples
    --------
    >>> from mathlearn.distributions import MultivariateNormal, linear_gaussian_marginal
    >>> p = linear_gaussian_marginal(MultivariateNormal([1.0], [[0.5]]), [[3.0]], 0.25, b=1.0)
    >>> p.mean, p.cov
    (array([4.]), array([[4.75]]))
    """
    joint = linear_gaussian_joint(prior, A, noise_cov, b)
    return joint.marginal(np.arange(prior.dim, joint.dim))


def linear_gaussian_posterior(
    prior: Any, A: ArrayLike, noise_cov: ArrayLike, y: ArrayLike, b: ArrayLike | None = None
) -> MultivariateNormal:
    r"""Posterior :math:`p(x | y)` of the linear-Gaussian model.

    :math:`p(x|y) = N(\Sigma\{A^T L (y - b) + \Lambda\mu\}, \Sigma)`,
    :math:`\Sigma = (\Lambda + A^T L A)^{-1}` (PRML eq. 2.116: "+Λμ"; the notes print "+Aμ"),
    computed by conditioning the joint on ``y`` (a QR of the joint factor; no inverse).

    Parameters
    ----------
    prior, A, noise_cov
        As in :func:`linear_gaussian_joint`.
    y : array-like of shape (k,)
        The observation.
    b : array-like of shape (k,), optional

    Returns
    -------
    MultivariateNormal of dimension ``d``

    Notes
    -----
    Bayes' theorem for Gaussians (PRML §2.3.3, eqs. 2.116–2.117).

    Examples
    --------
    >>> from mathlearn.distributions import MultivariateNormal, linear_gaussian_posterior
    >>> post = linear_gaussian_posterior(MultivariateNormal([1.0], [[0.5]]), [[3.0]], 0.25,
    ...                                  y=[2.0], b=1.0)
    >>> round(float(post.mean[0]), 10), round(float(post.cov[0, 0]), 10)
    (0.3684210526, 0.0263157895)
    """
    joint = linear_gaussian_joint(prior, A, noise_cov, b)
    y = np.asarray(y, dtype=float).reshape(-1)
    return joint.condition(np.arange(prior.dim, joint.dim), y)
