"""Random Fourier features of the RBF kernel (Bochner's theorem)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from ..base import (
    BaseEstimator,
    ComponentNamesMixin,
    TransformerMixin,
    _fit_context,
    check_is_fitted,
)
from ..utils._param_validation import Interval
from ..utils.validation import check_random_state, validate_data

__all__ = ["RandomFourierFeatures"]


class RandomFourierFeatures(ComponentNamesMixin, TransformerMixin, BaseEstimator):
    r"""Random Fourier features of the RBF kernel ``exp(-||x - y||^2 / (2 l^2))``.

    ``transform`` maps ``x`` to ``phi(x) = m^{-1/2} [cos(w_1^T x), ..., cos(w_m^T x),
    sin(w_1^T x), ..., sin(w_m^T x)]`` with ``w_j ~ N(0, l^{-2} I)`` (``2 m`` features),
    so that ``phi(x)^T phi(y) = (1/m) sum_j cos(w_j^T (x - y))`` is an unbiased estimate of
    the kernel, with error ``O(1 / sqrt(m))``.

    Parameters
    ----------
    n_frequencies : int, default=50
        Number ``m`` of frequencies drawn; there are ``2 m`` features (a cosine and a sine
        per frequency), the notes' parametrisation. scikit-learn's ``RBFSampler(
        n_components=D)`` draws ``D`` frequencies with a random phase and gives ``D``
        features; ``n_frequencies = D / 2`` gives as many features at half the matrix
        product, and a smaller variance per feature pair.
    length_scale : float, default=1.0
        ``l`` (the notes' ``gamma``); scikit-learn's ``RBFSampler(gamma=g)`` is ``l =
        1 / sqrt(2 g)``.
    random_state : int, Generator, RandomState or None, default=None
        Draws the frequencies.

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_features, n_frequencies)
        The frequencies ``w_j`` (columns).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when ``X`` has string feature names.

    See Also
    --------
    Nystroem : Data-dependent features for any kernel.
    mathlearn.kernels.RBF : The kernel approximated.
    sklearn.kernel_approximation.RBFSampler : The peer (one cosine with a random phase per
        frequency).

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning", §9.6.2. Bochner's theorem
    writes a stationary kernel as the Fourier transform of a spectral measure ``Lambda``,

    .. math::

        k(x, x') = \int e^{i\omega^\top(x - x')}\,d\Lambda(\omega)
        = \int \big(\cos\omega^\top x\cos\omega^\top x' + \sin\omega^\top x
        \sin\omega^\top x'\big)\,d\Lambda(\omega),

    and the RBF kernel's ``Lambda`` is ``N(0, l^{-2} I)``. Averaging the integrand over ``m``
    draws gives the features above (the notes interleave cosine and sine; the order does
    not change any inner product). Each entry of the approximate Gram matrix is a mean of
    ``m`` independent terms in ``[-1, 1]``, so by Hoeffding ``P(|k~ - k| > t) <= 2 exp(-m
    t^2 / 2)``, and its variance is ``((1 + k^4) / 2 - k^2) / m``. Cost: ``transform``
    ``O(N D m)`` time and ``O(N m)`` memory.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernel_approximation import RandomFourierFeatures
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> rff = RandomFourierFeatures(n_frequencies=10000, random_state=0).fit(X)
    >>> Phi = rff.transform(X)
    >>> bool(abs(Phi[0] @ Phi[1] - np.exp(-0.5)) < 0.03)  # 3 standard errors is 0.012
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_frequencies": [Interval(Integral, 1, None, closed="left")],
        "length_scale": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    _n_features_out_attr = "_n_out"

    def __init__(self, n_frequencies: int = 50, *, length_scale: float = 1.0, random_state=None):
        self.n_frequencies = n_frequencies
        self.length_scale = length_scale
        self.random_state = random_state

    @property
    def _n_out(self):
        check_is_fitted(self, "random_weights_")
        return np.empty(2 * self.random_weights_.shape[1])

    @_fit_context
    def fit(self, X, y=None):
        """Draw the frequencies ``w_j ~ N(0, l^{-2} I)`` for ``X``'s number of features.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self : RandomFourierFeatures
        """
        X = validate_data(self, X, dtype=np.float64)
        rng = check_random_state(self.random_state)
        m = self.n_frequencies
        self.random_weights_ = rng.standard_normal((X.shape[1], m)) / float(self.length_scale)
        return self

    def transform(self, X):
        """The features ``m^{-1/2} [cos(X W), sin(X W)]``, shape (n_samples, 2 n_frequencies)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        W = self.random_weights_
        m = W.shape[1]
        n = X.shape[0]
        out = np.empty((n, 2 * m))
        scale = 1.0 / np.sqrt(m)
        # The projections X W by blocks of about 32 kB, with their cosines and sines formed in
        # contiguous scratch and copied into the output's halves: an N x m temporary would add
        # half the output's size to the peak memory, and a ufunc writing a strided half
        # allocates its own 128 kB buffers.
        step = max(1, min(n, (1 << 12) // max(m, 1)))
        P, T = np.empty((step, m)), np.empty((step, m))
        for s in range(0, n, step):
            rows = min(step, n - s)
            p, t = P[:rows], T[:rows]
            np.matmul(X[s : s + rows], W, out=p)
            np.cos(p, out=t)
            t *= scale
            out[s : s + rows, :m] = t
            np.sin(p, out=p)
            p *= scale
            out[s : s + rows, m:] = p
        return out
