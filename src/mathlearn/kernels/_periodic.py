"""Periodic (exp-sine-squared) kernel."""

from __future__ import annotations

import numpy as np

from ._base import Kernel, _grad_buffer, _Spec
from ._stationary import _centre_and_scale, _sqdist

__all__ = ["ExpSineSquared"]


class ExpSineSquared(Kernel):
    """Periodic kernel ``k(x, y) = exp(-2 sin^2(pi ||x - y|| / p) / l^2)``.

    Parameters
    ----------
    length_scale : float, default=1.0
        ``l > 0``.
    periodicity : float, default=1.0
        ``p > 0``.
    length_scale_bounds, periodicity_bounds : pair of floats or "fixed", default=(1e-5, 1e5)

    See Also
    --------
    mathlearn.kernels.RBF
        The non-periodic squared exponential.
    sklearn.gaussian_process.kernels.ExpSineSquared
        scikit-learn's equivalent.

    Notes
    -----
    Positive semi-definite for one input feature, where it is the Gaussian kernel of the
    warped input ``u(x) = (cos(2 pi x / p), sin(2 pi x / p))``
    (closure under a map, Oxford "Advanced Topics in Statistical Machine Learning" §3.2,
    Lemma 11): ``||u(x) - u(y)||^2 = 4 sin^2(pi (x - y) / p)``. With
    ``a = pi ||x - y|| / p``: ``dK/dlog l = 4 K sin^2(a) / l^2`` and
    ``dK/dlog p = 2 K a sin(2a) / l^2``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import ExpSineSquared
    >>> k = ExpSineSquared(length_scale=1.0, periodicity=2.0)
    >>> float(k(np.zeros((1, 1)), np.full((1, 1), 4.0))[0, 0])  # two whole periods apart
    1.0
    """

    _specs = (_Spec("length_scale"), _Spec("periodicity"))

    def __init__(
        self,
        length_scale: float = 1.0,
        periodicity: float = 1.0,
        length_scale_bounds=(1e-5, 1e5),
        periodicity_bounds=(1e-5, 1e5),
    ):
        self.length_scale = length_scale
        self.periodicity = periodicity
        self.length_scale_bounds = length_scale_bounds
        self.periodicity_bounds = periodicity_bounds

    def is_stationary(self) -> bool:
        return True

    def _eval(self, X, Y, eval_gradient):
        Zx, Zy, f2, _, zmax = _centre_and_scale(X, Y, 1.0)
        d, _ = _sqdist(Zx, Zy, False, zmax)  # sin^2(pi sqrt(q) / p) is smooth in q at 0
        d *= f2
        np.sqrt(d, out=d)
        arg = d
        arg *= np.pi / float(self.periodicity)
        s = np.sin(arg)
        s2 = s * s
        with np.errstate(over="ignore", divide="ignore"):
            c = 2.0 / np.float64(self.length_scale) ** 2
        n_theta = self.n_dims
        if not np.isfinite(c):
            # l -> 0: K -> [sin = 0], every derivative -> 0
            K = (s2 == 0.0).astype(float)
            G = np.zeros((n_theta, X.shape[0], X.shape[0])) if eval_gradient else None
            return K, G
        K = s2 * -c
        np.exp(K, out=K)
        if not eval_gradient:
            return K, None
        free = [sp.name for sp in self._free_specs()]
        G = _grad_buffer(n_theta, X.shape[0])
        i = 0
        if "length_scale" in free:
            np.multiply(s2, 2.0 * c, out=G[i])
            G[i] *= K
            i += 1
        if "periodicity" in free:
            g = G[i]
            np.multiply(arg, 2.0, out=g)
            np.sin(g, out=g)
            g *= arg
            g *= c * K
        return K, G

    def _diag(self, X):
        return np.ones(X.shape[0])
