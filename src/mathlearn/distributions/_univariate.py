"""Univariate distributions on ``scipy.stats``: parameters named as in the notes.

Every class validates its parameters at construction (a clear ``ValueError`` otherwise),
broadcasts them into a batch, and delegates densities and sampling to ``scipy.stats``.
Means, variances and entropies are those of scipy and agree with the closed forms of the
notes (Imperial "Mathematics for Inference and Machine Learning"
§1.2.3; Stuttgart "Introduction to Machine Learning" appendix A, slides 9:21 and 9:49).
"""

from __future__ import annotations

import numpy as np
import scipy.stats as st
from scipy.special import digamma

from ._scipy_backed import ScipyBacked, _out, check_param

__all__ = [
    "Bernoulli",
    "Beta",
    "BetaBinomial",
    "Binomial",
    "ChiSquared",
    "Exponential",
    "Gamma",
    "Laplace",
    "Normal",
    "StudentT",
    "Uniform",
]


class Uniform(ScipyBacked):
    """Continuous uniform distribution ``U[low, high]``.

    Parameters
    ----------
    low, high : float or array-like
        Bounds with ``low < high``; broadcast together.

    See Also
    --------
    mathlearn.distributions.Beta
        Beta(1, 1) is the uniform on [0, 1].
    scipy.stats.uniform
        SciPy's equivalent.

    Notes
    -----
    Density ``1 / (high - low)`` on ``[low, high]``, mean ``(low + high) / 2``, variance
    ``(high - low)^2 / 12`` (Imperial "Mathematics for Inference and Machine Learning" §1.2.3.1,
    eq. 1.25).

    Examples
    --------
    >>> from mathlearn.distributions import Uniform
    >>> Uniform(0.5, 1.0).pdf(0.75)
    2.0
    """

    def __init__(self, low=0.0, high=1.0):
        low = check_param(low, "low")
        high = check_param(high, "high")
        if np.any(high <= low):
            raise ValueError(f"high must be > low; got low={low}, high={high}.")
        self._init({"low": low, "high": high}, st.uniform(loc=low, scale=high - low))

    @property
    def low(self):
        return self._params()["low"]

    @property
    def high(self):
        return self._params()["high"]


class Normal(ScipyBacked):
    r"""Univariate normal distribution ``N(mean, var)``, parametrised by its variance.

    Parameters
    ----------
    mean : float or array-like, default=0
    var : float or array-like, default=1
        Variance :math:`\sigma^2 > 0` (not the standard deviation). The precision of the
        notes is ``1 / var``.

    See Also
    --------
    mathlearn.distributions.MultivariateNormal
        The multivariate case.
    mathlearn.distributions.NormalKnownVarianceModel
        Bayesian inference of its mean.
    scipy.stats.norm
        SciPy's equivalent (standard-deviation parametrisation).

    Notes
    -----
    :math:`N(x|\mu,\sigma^2) = (2\pi\sigma^2)^{-1/2}\exp(-(x-\mu)^2/(2\sigma^2))`
    (PRML §1.2.4).

    Examples
    --------
    >>> from mathlearn.distributions import Normal
    >>> round(Normal(1.0, 4.0).pdf(2.0), 10)
    0.1760326634
    """

    def __init__(self, mean=0.0, var=1.0):
        mean = check_param(mean, "mean")
        var = check_param(var, "var", low=0.0)
        self._init({"mean": mean, "var": var}, st.norm(loc=mean, scale=np.sqrt(var)))

    @property
    def mean(self):
        return self._params()["mean"]

    @property
    def var(self):
        # The stored variance itself, not scipy's scale**2 (which rounds).
        return self._params()["var"]

    @classmethod
    def fit(cls, x, *, unbiased: bool = False) -> Normal:
        r"""Maximum-likelihood fit to a sample ``x`` (1-D).

        :math:`\mu_{ML} = \bar x` and :math:`\sigma^2_{ML} = \frac1N\sum_n (x_n-\bar x)^2`,
        whose expectation is :math:`\frac{N-1}{N}\sigma^2`: the ML variance is biased
        low (PRML §1.2.4). ``unbiased=True`` returns the corrected
        :math:`\frac{N}{N-1}\sigma^2_{ML}` instead (which is no longer the ML estimate).
        """
        x = _check_sample(x, min_size=2 if unbiased else 1)
        # Moments of x / c with c = max|x| (then rescaled): no overflow near 1e308 and no
        # underflow of the squares near 1e-300.
        c = float(np.max(np.abs(x)))
        if c == 0.0:
            raise ValueError("all samples are equal: the ML variance is zero.")
        c = float(np.ldexp(1.0, int(np.frexp(c)[1]) - 1))  # a power of two: exact scaling
        xs = x / c
        mu_s = float(np.mean(xs))
        var_s = float(np.mean((xs - mu_s) ** 2))
        if unbiased:
            var_s *= x.size / (x.size - 1)
        mu = mu_s * c
        var = var_s * c * c
        if var_s <= 0:
            raise ValueError("all samples are equal: the ML variance is zero.")
        if not np.isfinite(var) or var == 0:
            raise ValueError(
                f"the ML variance ({var_s:.3g} * {c:.3g}^2) is outside the floating-point range."
            )
        return cls(mu, var)


class Beta(ScipyBacked):
    r"""Beta distribution ``Beta(a, b)`` on ``[0, 1]``.

    Parameters
    ----------
    a, b : float or array-like
        Positive shape parameters (the notes' :math:`\alpha, \beta`).

    See Also
    --------
    mathlearn.distributions.BetaBernoulliModel
        The Beta as the conjugate prior of a Bernoulli.
    mathlearn.distributions.Dirichlet
        The multivariate generalisation.
    scipy.stats.beta
        SciPy's equivalent.

    Notes
    -----
    :math:`p(\mu|a,b) = \frac{\Gamma(a+b)}{\Gamma(a)\Gamma(b)}\mu^{a-1}(1-\mu)^{b-1}`, mean
    :math:`a/(a+b)`, variance :math:`ab/((a+b)^2(a+b+1))` (Imperial "Mathematics
    for Inference and Machine Learning" §1.2.3.4, eq. 1.32–1.33).
    Conjugate prior of the Bernoulli and Binomial likelihoods.

    Examples
    --------
    >>> from mathlearn.distributions import Beta
    >>> Beta(2.0, 2.0).mean
    0.5
    """

    def __init__(self, a=1.0, b=1.0):
        a = check_param(a, "a", low=0.0)
        b = check_param(b, "b", low=0.0)
        self._init({"a": a, "b": b}, st.beta(a, b))

    @property
    def a(self):
        return self._params()["a"]

    @property
    def b(self):
        return self._params()["b"]

    @property
    def mode(self):
        """``(a - 1) / (a + b - 2)`` for ``a, b >= 1``, not both 1.

        Stuttgart "Introduction to Machine Learning" slide 9:22 states it for ``a, b > 1`` (an
        interior mode); the same formula gives the boundary mode 1 for ``b = 1 < a`` (and 0 for ``a
        = 1 < b``), so the MAP estimate under a uniform prior equals the ML estimate for any data.
        For ``a < 1`` or ``b < 1`` the density is unbounded at the boundary and for ``a = b = 1``
        flat.
        """
        a, b = self._p["a"], self._p["b"]
        if np.any((a < 1) | (b < 1) | ((a == 1) & (b == 1))):
            raise ValueError(
                "the Beta mode is unique and finite only for a >= 1 and b >= 1, not both 1."
            )
        return (a - 1) / (a + b - 2) if a.ndim else float((a - 1) / (a + b - 2))


class Gamma(ScipyBacked):
    r"""Gamma distribution in the **rate** parametrisation, ``Gamma(shape, rate)``.

    Parameters
    ----------
    shape : float or array-like
        Shape :math:`a > 0`.
    rate : float or array-like
        Rate :math:`b > 0` (inverse scale). scipy's ``scale`` is ``1 / rate``.

    See Also
    --------
    mathlearn.distributions.GammaPrecisionModel
        The Gamma as a conjugate prior on a precision.
    mathlearn.distributions.Wishart
        The matrix generalisation.
    scipy.stats.gamma
        SciPy's equivalent (scale parametrisation).

    Notes
    -----
    :math:`p(\tau|a,b) = \frac{b^a}{\Gamma(a)}\tau^{a-1}e^{-b\tau}`, mean :math:`a/b`,
    variance :math:`a/b^2` (Imperial "Mathematics for Inference and
    Machine Learning" §1.2.3.6, eq. 1.49–1.51). The notes call ``b`` a "scale"
    but use it as a rate; so does this class.
    ``Exponential(rate) = Gamma(1, rate)`` and ``ChiSquared(k) = Gamma(k/2, 1/2)``.

    Examples
    --------
    >>> from mathlearn.distributions import Gamma
    >>> Gamma(shape=2.0, rate=4.0).mean
    0.5
    """

    def __init__(self, shape=1.0, rate=1.0):
        shape = check_param(shape, "shape", low=0.0)
        rate = check_param(rate, "rate", low=0.0)
        self._init({"shape": shape, "rate": rate}, st.gamma(shape, scale=1.0 / rate))

    @property
    def shape(self):
        return self._params()["shape"]

    @property
    def rate(self):
        return self._params()["rate"]

    def expected_log(self):
        r"""``E[log tau] = psi(a) - log b``: the expected sufficient statistic of variational
        updates (PRML eq. B.30; Oxford "Advanced Topics in Statistical Machine Learning"
        §2.8). ``E[tau] = a / b`` is :attr:`mean`.

        Returns
        -------
        float or ndarray
            One value per batch element.

        Examples
        --------
        >>> from mathlearn.distributions import Gamma
        >>> round(Gamma(1.0, 1.0).expected_log(), 10)  # minus the Euler-Mascheroni constant
        -0.5772156649
        """
        return _out(digamma(self.shape) - np.log(self.rate))


class Exponential(ScipyBacked):
    r"""Exponential distribution with rate :math:`\lambda`: :math:`\lambda e^{-\lambda x}`.

    Parameters
    ----------
    rate : float or array-like
        Rate :math:`\lambda > 0`; the mean is ``1 / rate`` (Stuttgart "Introduction to Machine
        Learning" slide 9:49).

    See Also
    --------
    mathlearn.distributions.Gamma
        The family it belongs to (shape 1).
    scipy.stats.expon
        SciPy's equivalent.

    Notes
    -----
    Density :math:`[x \ge 0]\,\lambda e^{-\lambda x}`, mean :math:`1/\lambda`, variance
    :math:`1/\lambda^2`; ``Exponential(rate) = Gamma(1, rate)`` (Imperial "Mathematics for
    Inference and Machine Learning" §1.2.3.6, Remark 4).

    Examples
    --------
    >>> from mathlearn.distributions import Exponential
    >>> Exponential(2.0).mean
    0.5
    """

    def __init__(self, rate=1.0):
        rate = check_param(rate, "rate", low=0.0)
        self._init({"rate": rate}, st.expon(scale=1.0 / rate))

    @property
    def rate(self):
        return self._params()["rate"]

    @classmethod
    def fit(cls, x) -> Exponential:
        """Maximum-likelihood fit: ``rate = 1 / mean(x)``."""
        x = _check_sample(x)
        if np.any(x < 0):
            raise ValueError("Exponential samples must be non-negative.")
        c = float(np.max(x))
        if not c > 0:
            raise ValueError(
                "the maximum-likelihood rate 1 / mean(x) is infinite: every sample is 0."
            )
        # 1 / mean(x) = (1 / c) / mean(x / c): the mean of x / c cannot overflow; c is a
        # power of two, so the scaling is exact.
        c = float(np.ldexp(1.0, int(np.frexp(c)[1]) - 1))
        return cls(1.0 / c / float(np.mean(x / c)))


class Laplace(ScipyBacked):
    r"""Laplace distribution :math:`\frac{1}{2b}e^{-|x-\mu|/b}` (Stuttgart "Introduction to Machine
    Learning" slide 9:49).

    Parameters
    ----------
    loc : float or array-like, default=0
    scale : float or array-like, default=1
        :math:`b > 0`; the variance is :math:`2b^2`.

    See Also
    --------
    mathlearn.distributions.Normal
        The light-tailed counterpart.
    scipy.stats.laplace
        SciPy's equivalent.

    Notes
    -----
    Mean :math:`\mu`, variance :math:`2b^2`, entropy :math:`1 + \log 2b`. As a prior on
    regression weights it gives the lasso penalty.

    Examples
    --------
    >>> from mathlearn.distributions import Laplace
    >>> Laplace(0.0, 1.0).var
    2.0
    """

    def __init__(self, loc=0.0, scale=1.0):
        loc = check_param(loc, "loc")
        scale = check_param(scale, "scale", low=0.0)
        self._init({"loc": loc, "scale": scale}, st.laplace(loc=loc, scale=scale))

    @property
    def loc(self):
        return self._params()["loc"]

    @property
    def scale(self):
        return self._params()["scale"]


class StudentT(ScipyBacked):
    r"""Student's t distribution with ``df`` degrees of freedom, location and scale.

    Parameters
    ----------
    df : float or array-like
        Degrees of freedom :math:`\nu > 0`.
    loc : float or array-like, default=0
    scale : float or array-like, default=1
        Scale :math:`s > 0`; for :math:`\nu > 2` the variance is :math:`s^2\nu/(\nu-2)`.

    See Also
    --------
    mathlearn.distributions.Normal
        The infinite-df limit.
    mathlearn.distributions.MultivariateStudentT
        The multivariate case.
    scipy.stats.t
        SciPy's equivalent.

    Notes
    -----
    :math:`p(x) \propto [1 + ((x-\mu)/s)^2/\nu]^{-(\nu+1)/2}`, tending to the Gaussian as
    :math:`\nu\to\infty` (Stuttgart "Introduction to Machine Learning"
    slide 9:49). It is the posterior predictive of the
    Normal–Gamma model and the marginal of its mean.

    Examples
    --------
    >>> from mathlearn.distributions import StudentT
    >>> StudentT(df=5.0).var
    1.6666666666666667
    """

    def __init__(self, df, loc=0.0, scale=1.0):
        df = check_param(df, "df", low=0.0)
        loc = check_param(loc, "loc")
        scale = check_param(scale, "scale", low=0.0)
        self._init({"df": df, "loc": loc, "scale": scale}, st.t(df, loc=loc, scale=scale))

    @property
    def df(self):
        return self._params()["df"]

    @property
    def loc(self):
        return self._params()["loc"]

    @property
    def scale(self):
        return self._params()["scale"]


class ChiSquared(ScipyBacked):
    r"""Chi-squared distribution with ``df`` degrees of freedom, ``Gamma(df/2, rate=1/2)``.

    Parameters
    ----------
    df : float or array-like
        Degrees of freedom :math:`k > 0`.

    See Also
    --------
    mathlearn.distributions.Gamma
        The family it belongs to.
    scipy.stats.chi2
        SciPy's equivalent.

    Notes
    -----
    :math:`p(x) = \frac{x^{k/2-1}e^{-x/2}}{2^{k/2}\Gamma(k/2)}` for :math:`x \ge 0`, mean
    :math:`k`, variance :math:`2k` (Stuttgart "Introduction to Machine Learning"
    slide 9:49). The distribution of a sum of ``df``
    *squared* standard normal variables (Imperial "Mathematics for Inference and Machine Learning"
    §1.2.3.6; corrected: the notes omit "squared").

    Examples
    --------
    >>> from mathlearn.distributions import ChiSquared
    >>> ChiSquared(3).mean
    3.0
    """

    def __init__(self, df):
        df = check_param(df, "df", low=0.0)
        self._init({"df": df}, st.chi2(df))

    @property
    def df(self):
        return self._params()["df"]


class Bernoulli(ScipyBacked):
    r"""Bernoulli distribution :math:`p(x|\mu) = \mu^x (1-\mu)^{1-x}`, ``x`` in {0, 1}.

    Parameters
    ----------
    p : float or array-like
        Probability of a one, in ``[0, 1]`` (the notes' :math:`\mu`).

    See Also
    --------
    mathlearn.distributions.Binomial
        The number of successes in n Bernoulli trials.
    mathlearn.distributions.BetaBernoulliModel
        Bayesian inference of its parameter.
    scipy.stats.bernoulli
        SciPy's equivalent.

    Notes
    -----
    Mean :math:`\mu`, variance :math:`\mu(1-\mu)` (Imperial "Mathematics for Inference and Machine
    Learning" §1.2.3.2, eq. 1.26–1.28).

    Examples
    --------
    >>> from mathlearn.distributions import Bernoulli
    >>> Bernoulli(0.3).pdf(1)
    0.3
    """

    _discrete = True

    def __init__(self, p=0.5):
        p = check_param(p, "p", low=0.0, high=1.0, strict=False)
        self._init({"p": p}, st.bernoulli(p))

    @property
    def p(self):
        return self._params()["p"]

    def logpmf(self, x):
        """Log-probability of ``x`` (alias of ``logpdf``)."""
        return self.logpdf(x)

    def pmf(self, x):
        return self.pdf(x)

    @classmethod
    def fit(cls, x) -> Bernoulli:
        """Maximum-likelihood fit: the fraction of ones (Stuttgart "Introduction to Machine
        Learning" slide 9:21)."""
        x = _check_sample(x)
        if not np.all((x == 0) | (x == 1)):
            raise ValueError("Bernoulli samples must be 0 or 1.")
        return cls(float(np.mean(x)))


class Binomial(ScipyBacked):
    r"""Binomial distribution :math:`\binom{n}{m}\mu^m(1-\mu)^{n-m}`.

    Parameters
    ----------
    n : int or array-like
        Number of trials (non-negative integer).
    p : float or array-like
        Success probability in ``[0, 1]``.

    See Also
    --------
    mathlearn.distributions.Bernoulli
        One trial.
    mathlearn.distributions.Multinomial
        More than two outcomes.
    scipy.stats.binom
        SciPy's equivalent.

    Notes
    -----
    Mean :math:`n\mu`, variance :math:`n\mu(1-\mu)` (Imperial "Mathematics for Inference and
    Machine Learning" §1.2.3.3, eq. 1.29–1.31).

    Examples
    --------
    >>> from mathlearn.distributions import Binomial
    >>> Binomial(10, 0.5).mean
    5.0
    """

    _discrete = True

    def __init__(self, n, p=0.5):
        n = check_param(n, "n", low=0, strict=False, integer=True)
        p = check_param(p, "p", low=0.0, high=1.0, strict=False)
        self._init({"n": n, "p": p}, st.binom(n.astype(int), p))

    @property
    def n(self):
        """Number of trials (int, or an int array for a batch)."""
        n = self._p["n"].astype(int)
        return int(n) if n.ndim == 0 else n

    @property
    def p(self):
        return self._params()["p"]

    def logpmf(self, x):
        return self.logpdf(x)

    def pmf(self, x):
        return self.pdf(x)


class BetaBinomial(ScipyBacked):
    r"""Beta-binomial distribution: a Binomial count whose success probability is Beta.

    Parameters
    ----------
    n : int or array-like
        Number of trials.
    a, b : float or array-like
        Parameters of the Beta distribution of the success probability.

    See Also
    --------
    mathlearn.distributions.BetaBinomialModel
        The model whose posterior predictive it is.
    scipy.stats.betabinom
        SciPy's equivalent.

    Notes
    -----
    :math:`p(m) = \binom{n}{m} B(m + a, n - m + b) / B(a, b)`; the posterior predictive of
    the number of successes in ``n`` new trials under a Beta posterior.

    Examples
    --------
    >>> from mathlearn.distributions import BetaBinomial
    >>> BetaBinomial(2, 1.0, 1.0).pdf(1)
    0.3333333333333333
    """

    _discrete = True

    def __init__(self, n, a, b):
        n = check_param(n, "n", low=0, strict=False, integer=True)
        a = check_param(a, "a", low=0.0)
        b = check_param(b, "b", low=0.0)
        self._init({"n": n, "a": a, "b": b}, st.betabinom(n.astype(int), a, b))

    @property
    def n(self):
        """Number of trials (int, or an int array for a batch)."""
        n = self._p["n"].astype(int)
        return int(n) if n.ndim == 0 else n

    @property
    def a(self):
        return self._params()["a"]

    @property
    def b(self):
        return self._params()["b"]

    def logpmf(self, x):
        return self.logpdf(x)

    def pmf(self, x):
        return self.pdf(x)


def _check_sample(x, *, min_size: int = 1) -> np.ndarray:
    x = np.asarray(x, dtype=float).ravel()
    if x.size < min_size:
        raise ValueError(f"need at least {min_size} sample(s); got {x.size}.")
    if not np.all(np.isfinite(x)):
        raise ValueError("the sample contains NaN or infinity.")
    return x
