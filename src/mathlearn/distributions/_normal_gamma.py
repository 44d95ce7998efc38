"""Normal–Gamma and Normal–Wishart distributions: joint priors over a Gaussian's mean and
precision."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from scipy.special import digamma, gammaln

from ..utils.validation import check_random_state
from ._base import Distribution, _frozen_array, _size_tuple
from ._mvn import _check_mean, _check_square, _factor_cov
from ._mvt import MultivariateStudentT
from ._scipy_backed import scalar_param
from ._univariate import Gamma, StudentT
from ._wishart import Wishart

__all__ = ["NormalGamma", "NormalWishart"]

_LOG_2PI = float(np.log(2 * np.pi))


class NormalGamma(Distribution):
    r"""Normal–Gamma distribution over a mean and a precision ``(mu, tau)``.

    :math:`p(\mu,\tau) = N(\mu | m, (\kappa\tau)^{-1})\,\mathrm{Gam}(\tau | a, b)` with the
    Gamma in the rate parametrisation.

    Parameters
    ----------
    mean : float
        :math:`m`, the location of :math:`\mu`.
    kappa : float
        :math:`\kappa > 0`, the precision of :math:`\mu` in units of :math:`\tau`
        (a pseudo-count of observations).
    shape, rate : float
        :math:`a, b > 0` of the Gamma on :math:`\tau`.

    See Also
    --------
    mathlearn.distributions.NormalGammaModel
        The Normal–Gamma as a conjugate prior.
    mathlearn.distributions.NormalWishart
        The multivariate case.

    Notes
    -----
    Conjugate prior of a univariate Gaussian with unknown mean and precision
    (Imperial "Mathematics for Inference and Machine Learning" §1.2.4, table 1.1,
    "Gaussian/inverse-Gamma" written for the precision; Stuttgart "Introduction to Machine
    Learning" slide 9:31). The marginal
    of :math:`\mu` is a Student t with :math:`2a` degrees of freedom, location :math:`m` and
    scale :math:`\sqrt{b/(a\kappa)}`.

    Examples
    --------
    >>> from mathlearn.distributions import NormalGamma
    >>> NormalGamma(0.0, 1.0, 2.0, 1.0).mean
    array([0., 2.])
    """

    def __init__(self, mean=0.0, kappa=1.0, shape=1.0, rate=1.0):
        self._set(
            _m=scalar_param(mean, "mean"),
            _kappa=scalar_param(kappa, "kappa", low=0.0),
            _a=scalar_param(shape, "shape", low=0.0),
            _b=scalar_param(rate, "rate", low=0.0),
        )

    def _params(self):
        return {"mean": self._m, "kappa": self._kappa, "shape": self._a, "rate": self._b}

    @property
    def params(self) -> tuple[float, float, float, float]:
        """``(mean, kappa, shape, rate)``."""
        return self._m, self._kappa, self._a, self._b

    @property
    def mean(self) -> np.ndarray:
        """``[E mu, E tau] = [m, a / b]``."""
        return np.array([self._m, self._a / self._b])

    @property
    def var(self) -> np.ndarray:
        """``[Var mu, Var tau] = [b / (kappa (a - 1)), a / b^2]`` (the first needs a > 1)."""
        vm = self._b / (self._kappa * (self._a - 1)) if self._a > 1 else np.inf
        return np.array([vm, self._a / self._b**2])

    @property
    def mode(self) -> np.ndarray:
        """Joint mode ``[m, (a - 1/2) / b]`` (needs a > 1/2)."""
        if self._a <= 0.5:
            raise ValueError("the joint mode needs shape > 1/2.")
        return np.array([self._m, (self._a - 0.5) / self._b])

    def marginal_mean(self) -> StudentT:
        """Marginal of ``mu``: Student t, ``2a`` dof, loc ``m``, scale ``sqrt(b/(a kappa))``."""
        return StudentT(2 * self._a, self._m, np.sqrt(self._b / (self._a * self._kappa)))

    def marginal_precision(self) -> Gamma:
        """Marginal of ``tau``: ``Gamma(shape=a, rate=b)``."""
        return Gamma(self._a, self._b)

    def expected_log_precision(self) -> float:
        """``E[log tau] = psi(a) - log b`` (``E[tau] = a / b`` is ``mean[1]``).

        Returns
        -------
        float

        Examples
        --------
        >>> from mathlearn.distributions import NormalGamma
        >>> round(NormalGamma(0.0, 1.0, 1.0, 1.0).expected_log_precision(), 10)
        -0.5772156649
        """
        return float(digamma(self._a) - np.log(self._b))

    def expected_quadratic(self, x):
        r"""``E[tau (x - mu)^2] = 1 / kappa + (a / b) (x - m)^2`` at points ``x``.

        With :meth:`expected_log_precision` the expected sufficient statistics of a
        Gaussian likelihood under ``q(mu, tau)`` (PRML §10.1.3, eq. 10.28 for the scalar
        case of eq. 10.64).

        Parameters
        ----------
        x : float or array-like

        Returns
        -------
        float or ndarray

        Examples
        --------
        >>> from mathlearn.distributions import NormalGamma
        >>> NormalGamma(0.0, 2.0, 3.0, 1.0).expected_quadratic(1.0)
        3.5
        """
        x = np.asarray(x, dtype=float)
        out = 1.0 / self._kappa + (self._a / self._b) * (x - self._m) ** 2
        return float(out) if out.ndim == 0 else out

    def expected_log_likelihood(self, x):
        r"""``E[log N(x | mu, 1/tau)] = (E[log tau] - log 2 pi - E[tau (x - mu)^2]) / 2``.

        Parameters
        ----------
        x : float or array-like

        Returns
        -------
        float or ndarray

        Examples
        --------
        >>> from mathlearn.distributions import NormalGamma
        >>> round(NormalGamma(0.0, 1.0, 1.0, 1.0).expected_log_likelihood(0.0), 6)
        -1.707546
        """
        out = 0.5 * (
            self.expected_log_precision() - _LOG_2PI - np.asarray(self.expected_quadratic(x))
        )
        return float(out) if np.ndim(out) == 0 else out

    def logpdf(self, mu, tau=None):
        """Log-density at ``(mu, tau)``; or pass one array with last axis ``[mu, tau]``."""
        if tau is None:
            x = np.asarray(mu, dtype=float)
            mu, tau = x[..., 0], x[..., 1]
        mu = np.asarray(mu, dtype=float)
        tau = np.asarray(tau, dtype=float)
        pos = tau > 0
        t = np.where(pos, tau, 1.0)
        out = (
            self._a * np.log(self._b)
            - gammaln(self._a)
            + (self._a - 0.5) * np.log(t)
            - self._b * t
            + 0.5 * np.log(self._kappa)
            - 0.5 * _LOG_2PI
            - 0.5 * self._kappa * t * (mu - self._m) ** 2
        )
        out = np.where(pos, out, -np.inf)
        return float(out) if out.ndim == 0 else out

    def pdf(self, mu, tau=None):
        return np.exp(self.logpdf(mu, tau))

    def entropy(self) -> float:
        """``H[Gamma(a, b)] + E_tau H[N(m, 1/(kappa tau))]``."""
        e_log_tau = digamma(self._a) - np.log(self._b)
        h_normal = 0.5 * (1 + _LOG_2PI) - 0.5 * (np.log(self._kappa) + e_log_tau)
        return float(self.marginal_precision().entropy() + h_normal)

    def sample(self, size=None, rng=None) -> np.ndarray:
        """Samples of shape ``size + (2,)`` holding ``[mu, tau]``."""
        rng = check_random_state(rng, name="rng")
        size = _size_tuple(size)
        tau = rng.gamma(self._a, 1.0 / self._b, size=size)
        mu = self._m + rng.standard_normal(size) / np.sqrt(self._kappa * tau)
        return np.stack([mu, tau], axis=-1)


class NormalWishart(Distribution):
    r"""Normal–Wishart distribution over a mean vector and a precision matrix.

    :math:`p(\mu,\Lambda) = N(\mu | m, (\kappa\Lambda)^{-1})\,W(\Lambda | W, \nu)`.

    Parameters
    ----------
    mean : array-like of shape (d,)
    kappa : float
        :math:`\kappa > 0`.
    df : float
        :math:`\nu > d - 1`.
    scale : array-like of shape (d, d)
        SPD scale matrix :math:`W` of the Wishart.

    See Also
    --------
    mathlearn.distributions.NormalWishartModel
        The Normal–Wishart as a conjugate prior.
    mathlearn.distributions.Wishart
        The precision's marginal.

    Notes
    -----
    Conjugate prior of a multivariate Gaussian with unknown mean and covariance (Imperial
    "Mathematics for Inference and Machine Learning" §1.2.4, Table 1.1, "Gaussian/inverse-Wishart"
    written for the precision; Stuttgart "Introduction to Machine Learning" slide 9:31
    "Gauss-Wishart"). The marginal of :math:`\mu` is a multivariate Student t with :math:`\nu - d +
    1` dof, location :math:`m` and shape :math:`W^{-1} / (\kappa(\nu - d + 1))`.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.distributions import NormalWishart
    >>> NormalWishart(np.zeros(2), 1.0, 3.0, np.eye(2)).mean[1]
    array([[3., 0.],
           [0., 3.]])
    """

    def __init__(self, mean, kappa, df, scale):
        m = _check_mean(mean)
        d = m.shape[0]
        W = _check_square(scale, d, "scale")
        L = _factor_cov(W, jitter=None, name="scale")
        kappa = scalar_param(kappa, "kappa", low=0.0)
        df = scalar_param(df, "df")
        if df <= d - 1:
            raise ValueError(f"df must be > d - 1 = {d - 1}; got {df}.")
        self._set(
            _m=_frozen_array(m),
            _kappa=kappa,
            _df=df,
            _W=_frozen_array(L @ L.T),
            _LW=_frozen_array(L),
        )

    def _params(self):
        return {"mean": self._m, "kappa": self._kappa, "df": self._df, "scale": self._W}

    @property
    def params(self):
        """``(mean, kappa, df, scale)``."""
        return self._m, self._kappa, self._df, self._W

    @property
    def dim(self) -> int:
        return int(self._m.shape[0])

    @property
    def mean(self) -> tuple[np.ndarray, np.ndarray]:
        """``(E mu, E Lambda) = (m, nu W)``."""
        return self._m, self._df * self._W

    def marginal_precision(self) -> Wishart:
        return Wishart(self._df, self._W)

    def expected_precision(self) -> np.ndarray:
        """``E[Lambda] = nu W`` (PRML eq. B.80).

        Returns
        -------
        ndarray of shape (d, d)

        Examples
        --------
        >>> import numpy as np
        >>> from mathlearn.distributions import NormalWishart
        >>> NormalWishart(np.zeros(2), 1.0, 3.0, np.eye(2)).expected_precision()
        array([[3., 0.],
               [0., 3.]])
        """
        return self._df * self._W

    def expected_logdet_precision(self) -> float:
        r"""``E[log |Lambda|] = sum_i psi((nu + 1 - i) / 2) + d log 2 + log |W|`` (PRML
        eq. 10.65).

        Returns
        -------
        float

        Examples
        --------
        >>> import numpy as np
        >>> from mathlearn.distributions import NormalWishart
        >>> round(NormalWishart(np.zeros(1), 1.0, 1.0, np.eye(1)).expected_logdet_precision(), 10)
        -1.2703628455
        """
        return self.marginal_precision().expected_logdet()

    def expected_quadratic(self, x) -> float | np.ndarray:
        r"""``E[(x - mu)^T Lambda (x - mu)] = d / kappa + nu (x - m)^T W (x - m)`` (PRML
        eq. 10.64), one value per row of ``x``.

        Parameters
        ----------
        x : array-like of shape (n, d) or (d,)

        Returns
        -------
        ndarray of shape (n,), or float for a single point

        Examples
        --------
        >>> import numpy as np
        >>> from mathlearn.distributions import NormalWishart
        >>> NormalWishart(np.zeros(2), 2.0, 3.0, np.eye(2)).expected_quadratic([1.0, 0.0])
        4.0
        """
        x = np.asarray(x, dtype=float)
        d = self.dim
        if x.shape[-1:] != (d,):
            raise ValueError(f"x must have last dimension {d}; got shape {x.shape}.")
        # (x - m)^T W (x - m) = |L^T (x - m)|^2 with W = L L^T.
        z = (x - self._m) @ self._LW
        out = d / self._kappa + self._df * np.sum(z * z, axis=-1)
        return float(out) if np.ndim(out) == 0 else out

    def expected_log_likelihood(self, x) -> float | np.ndarray:
        r"""``E[log N(x | mu, Lambda^-1)] = (E log|Lambda| - d log 2 pi - E[(x - mu)^T
        Lambda (x - mu)]) / 2`` (PRML eq. 10.46 with 10.64-10.65), per row of ``x``.

        Parameters
        ----------
        x : array-like of shape (n, d) or (d,)

        Returns
        -------
        ndarray of shape (n,), or float for a single point

        Examples
        --------
        >>> import numpy as np
        >>> from mathlearn.distributions import NormalWishart
        >>> nw = NormalWishart(np.zeros(1), 1.0, 1.0, np.eye(1))
        >>> round(nw.expected_log_likelihood([0.0]), 6)
        -2.05412
        """
        q = np.asarray(self.expected_quadratic(x))
        out = 0.5 * (self.expected_logdet_precision() - self.dim * _LOG_2PI - q)
        return float(out) if out.ndim == 0 else out

    def marginal_mean(self) -> MultivariateStudentT:
        d = self.dim
        dof = self._df - d + 1
        Winv = sla.cho_solve((self._LW, True), np.eye(d), check_finite=False)
        return MultivariateStudentT(dof, self._m, Winv / (self._kappa * dof))

    def logpdf(self, mu, Lambda):
        """Log-density at means ``mu`` (..., d) and precision matrices ``Lambda`` (..., d, d).

        The batch shapes broadcast. ``-inf`` where ``Lambda`` is symmetric but not positive
        definite (outside the support).
        """
        d = self.dim
        mu = np.asarray(mu, dtype=float)
        Lam = np.asarray(Lambda, dtype=float)
        if mu.ndim == 0 and d == 1:
            mu = mu.reshape(1)
        if mu.shape[-1:] != (d,):
            raise ValueError(f"mu must have last dimension {d}; got shape {mu.shape}.")
        if np.any(np.isnan(mu)):
            raise ValueError("mu contains NaN.")
        log_w = np.asarray(self.marginal_precision().logpdf(Lam))  # checks Lambda
        inside = np.isfinite(log_w)
        # log N(mu | m, (kappa Lambda)^-1)
        #   = d/2 log(kappa / 2 pi) + 1/2 log|Lambda| - kappa/2 (mu - m)^T Lambda (mu - m).
        Lam_in = np.where(inside[..., None, None], Lam, np.eye(d))
        logdet = np.linalg.slogdet(Lam_in)[1]
        dev = mu - self._m
        quad = np.einsum("...i,...ij,...j->...", dev, Lam_in, dev)
        log_n = (
            0.5 * d * (np.log(self._kappa) - _LOG_2PI) + 0.5 * logdet - 0.5 * self._kappa * quad
        )
        out = np.where(inside, log_n + np.where(inside, log_w, 0.0), -np.inf)
        return float(out) if out.ndim == 0 else out

    def pdf(self, mu, Lambda):
        return np.exp(self.logpdf(mu, Lambda))

    def entropy(self) -> float:
        d = self.dim
        e_logdet = (
            np.sum(digamma((self._df + 1 - np.arange(1, d + 1)) / 2))
            + d * np.log(2)
            + 2 * np.sum(np.log(np.diag(self._LW)))
        )
        h_normal = 0.5 * d * (1 + _LOG_2PI) - 0.5 * d * np.log(self._kappa) - 0.5 * e_logdet
        return float(self.marginal_precision().entropy() + h_normal)

    def sample(self, size=None, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """``(mu, Lambda)`` of shapes ``size + (d,)`` and ``size + (d, d)``."""
        rng = check_random_state(rng, name="rng")
        size = _size_tuple(size)
        Lams = self.marginal_precision().sample(size or 1, rng).reshape(-1, self.dim, self.dim)
        # mu = m + R^{-T} z with kappa Lambda = R R^T gives Cov mu = (kappa Lambda)^{-1};
        # all draws at once (batched Cholesky and solves).
        R = np.linalg.cholesky(self._kappa * Lams)
        z = rng.standard_normal((Lams.shape[0], self.dim, 1))
        mus = self._m + np.linalg.solve(np.swapaxes(R, -1, -2), z)[..., 0]
        return mus.reshape((*size, self.dim)), Lams.reshape((*size, self.dim, self.dim))
