"""Radial Gaussian features, and per-feature sigmoidal, Fourier and piecewise features.

The Gaussian basis is radial in the input space. The other bases expand each input feature
on its own set of one-dimensional functions (Stuttgart "Introduction to Machine Learning" slides
2:6–2:10, "features"; PRML §3.1) and concatenate the expansions, optionally after a constant
column.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from scipy.special import expit

from ..base import BaseEstimator, TransformerMixin, _fit_context, check_is_fitted
from ..kernels import RBF
from ..utils._param_validation import Interval, StrOptions
from ..utils._rowscale import unit_of
from ..utils.extmath import squared_distances
from ..utils.validation import validate_data

_POSITIVE_INT = [Interval(Integral, 1, None, closed="left")]
_POSITIVE_REAL_OR_NONE = [Interval(Real, 0, None, closed="neither"), None]

__all__ = [
    "FourierBasis",
    "GaussianBasis",
    "PiecewiseConstantBasis",
    "PiecewiseLinearBasis",
    "SigmoidBasis",
]


def _grid(X, n, given, name):
    """Per-feature locations: the user's (array of shape (n,) or (n, D)) or an even grid."""
    d = X.shape[1]
    if given is not None:
        c = np.asarray(given, dtype=float)
        if c.ndim == 1:
            c = np.repeat(c[:, None], d, axis=1)
        if c.ndim != 2 or c.shape[1] != d or c.shape[0] < 1:
            raise ValueError(
                f"{name} must have shape (n,) or (n, {d}) for {d} input features; got {c.shape}."
            )
        if not np.all(np.isfinite(c)):
            raise ValueError(f"{name} contains NaN or infinity.")
        return c
    lo, hi = X.min(axis=0), X.max(axis=0)
    return np.linspace(lo, hi, n)  # (n, D): an even grid over each feature's training range


def _default_width(centres):
    """Spacing of an even grid of centres (1 where it is undefined)."""
    if centres.shape[0] < 2:
        return np.ones(centres.shape[1])
    w = np.abs(centres[1] - centres[0])
    return np.where(w > 0, w, 1.0)


class _PerFeatureBasis(TransformerMixin, BaseEstimator):
    """Shared machinery: validate, expand each feature, concatenate, optional bias column."""

    def _names(self, input_features):
        check_is_fitted(self)
        if input_features is None:
            input_features = [f"x{j}" for j in range(self.n_features_in_)]
        names = ["1"] if self.include_bias else []
        for j in range(self.n_features_in_):
            names.extend(f"{self._prefix}{k}({input_features[j]})" for k in range(self._n_per))
        return np.asarray(names, dtype=object)

    def get_feature_names_out(self, input_features=None):
        """Names such as ``gauss3(x0)``; ``1`` for the bias column."""
        return self._names(input_features)

    def transform(self, X):
        """Evaluate the basis: ``Phi`` of shape (n_samples, n_output_features_)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        blocks = [np.ones((X.shape[0], 1))] if self.include_bias else []
        blocks.extend(self._expand(X[:, j], j) for j in range(X.shape[1]))
        return np.hstack(blocks)

    def _finish_fit(self, n_per):
        self._n_per = n_per
        self.n_output_features_ = n_per * self.n_features_in_ + int(bool(self.include_bias))
        return self


class GaussianBasis(TransformerMixin, BaseEstimator):
    """Gaussian radial basis functions ``exp(-||x - c_j||^2 / (2 s^2))``.

    Parameters
    ----------
    n_centres : int, default=10
        Number of centres when ``centres`` is None: an even grid over the training range for
        one input feature; evenly spaced training points (in their order) for several.
    centres : array-like of shape (n_centres, n_features), "data" or None, default=None
        Explicit centres ``c_j`` (a 1-D array is read as centres of a single feature), or
        ``"data"``: every training input is a centre (Stuttgart "Introduction to Machine Learning"
        slide 2:9).
    width : float, default=None
        Width ``s``. Default: the spacing of the 1-D grid; otherwise the median distance
        from each centre to its nearest other centre (1 where undefined).
    include_bias : bool, default=False
        Prepend the constant feature ``phi_0 = 1``.

    Attributes
    ----------
    centres_ : ndarray of shape (n_centres, n_features_in_)
    width_ : float
    n_output_features_ : int

    See Also
    --------
    mathlearn.preprocessing.SigmoidBasis
        Sigmoid steps.
    mathlearn.kernels.RBF
        The same function as a kernel.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" slide 2:9 (RBF features ``b(x, c) = exp(-||x -
    c||^2 / 2)`` with a width parameter in the demos and the
    "all training inputs as centres plus bias" special case); PRML eq. 3.4.

    Complexity: with ``N`` samples, ``D`` features and ``M`` centres, ``fit`` costs ``O(N D)``
    to place the centres; the default width, when it is the median nearest-neighbour distance
    (several features, or given centres), adds ``O(M^2 D)`` time and ``O(M^2)`` memory (one
    ``M x M`` distance matrix), which is ``O(N^2 D)`` time and ``O(N^2)`` memory for
    ``centres="data"`` (``M = N``). The fitted state is the ``M x D`` centres. ``transform``
    of ``N`` points costs ``O(N M D)`` time and ``O(N M)`` memory (the output and the
    squared distances behind it).

    Examples
    --------
    >>> import numpy as np
    >>> Phi = GaussianBasis(n_centres=3).fit_transform(np.array([[0.0], [1.0]]))
    >>> Phi.shape
    (2, 3)
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_centres": _POSITIVE_INT,
        "centres": ["array-like", StrOptions({"data"}), None],
        "width": _POSITIVE_REAL_OR_NONE,
        "include_bias": ["boolean"],
    }

    def __init__(self, n_centres: int = 10, *, centres=None, width=None, include_bias=False):
        self.n_centres = n_centres
        self.centres = centres
        self.width = width
        self.include_bias = include_bias

    @_fit_context
    def fit(self, X, y=None):
        """Place the centres and choose the width.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        X = validate_data(self, X, dtype=np.float64)
        d = X.shape[1]
        if isinstance(self.centres, str):  # "data"
            c = X.copy()
        elif self.centres is not None or d == 1:
            c = _grid(X, self.n_centres, self.centres, "centres")
        else:
            k = min(self.n_centres, X.shape[0])
            c = X[np.linspace(0, X.shape[0] - 1, k).round().astype(int)].copy()
        self.centres_ = c
        if self.width is not None:
            self.width_ = float(self.width)
        elif d == 1 and self.centres is None:
            self.width_ = float(_default_width(c)[0])
        else:
            self.width_ = _nearest_neighbour_median(c)
        self.n_output_features_ = c.shape[0] + int(self.include_bias)
        return self

    def transform(self, X):
        """Evaluate the basis: ``Phi`` of shape (n_samples, n_output_features_)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        phi = RBF(length_scale=self.width_)(X, self.centres_)
        if self.include_bias:
            return np.hstack([np.ones((X.shape[0], 1)), phi])
        return phi

    def get_feature_names_out(self, input_features=None):
        """Names ``gauss0``, ``gauss1``, ...; ``1`` for the bias column."""
        check_is_fitted(self)
        names = ["1"] if self.include_bias else []
        names.extend(f"gauss{j}" for j in range(self.centres_.shape[0]))
        return np.asarray(names, dtype=object)


def _nearest_neighbour_median(c):
    if c.shape[0] < 2:
        return 1.0
    # Distances are equivariant: computed in units of a power of two (exact) so that squares
    # of centres of any magnitude neither overflow nor underflow.
    unit = unit_of(c)
    sq = squared_distances(c / unit)
    np.fill_diagonal(sq, np.inf)
    nn = np.sqrt(sq.min(axis=1))
    nn = nn[np.isfinite(nn) & (nn > 0)]
    return float(np.median(nn)) * unit if nn.size else 1.0


class SigmoidBasis(_PerFeatureBasis):
    """Logistic sigmoid basis functions ``sigma((x - c_j) / s)`` on each feature.

    Parameters
    ----------
    n_centres : int, default=10
    centres : array-like of shape (n_centres,) or (n_centres, n_features), default=None
    width : float, default=None
        Scale ``s``; default: the spacing between neighbouring centres.
    include_bias : bool, default=False

    Attributes
    ----------
    centres_ : ndarray of shape (n_centres, n_features_in_)
    width_ : ndarray of shape (n_features_in_,)
    n_output_features_ : int

    See Also
    --------
    mathlearn.preprocessing.GaussianBasis
        Local bumps.

    Notes
    -----
    PRML eq. 3.5, the sigmoidal basis of PRML §3.1; the
    logistic function is evaluated stably (``scipy.special.expit``).

    Complexity: with ``N`` samples, ``D`` features and ``C`` centres per feature, ``fit``
    costs ``O(N D)`` (each feature's training range) and keeps the ``C x D`` centres;
    ``transform`` costs ``O(N C D) = O(N M)`` time for the ``M = C D`` (plus bias) outputs,
    and ``O(N M)`` memory: the per-feature ``N x C`` blocks and their concatenation, about
    twice the output at the peak.

    Examples
    --------
    >>> import numpy as np
    >>> SigmoidBasis(centres=[0.0], width=1.0).fit_transform(np.array([[0.0]]))
    array([[0.5]])
    """

    _prefix = "sigmoid"
    _parameter_constraints: ClassVar[dict] = {
        "n_centres": _POSITIVE_INT,
        "centres": ["array-like", None],
        "width": _POSITIVE_REAL_OR_NONE,
        "include_bias": ["boolean"],
    }

    def __init__(self, n_centres: int = 10, *, centres=None, width=None, include_bias=False):
        self.n_centres = n_centres
        self.centres = centres
        self.width = width
        self.include_bias = include_bias

    @_fit_context
    def fit(self, X, y=None):
        """Place the centres and choose the scale.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        X = validate_data(self, X, dtype=np.float64)
        self.centres_ = _grid(X, self.n_centres, self.centres, "centres")
        if self.width is None:
            self.width_ = _default_width(self.centres_)
        else:
            self.width_ = np.full(X.shape[1], float(self.width))
        return self._finish_fit(self.centres_.shape[0])

    def _expand(self, x, j):
        return expit((x[:, None] - self.centres_[:, j][None, :]) / self.width_[j])


class FourierBasis(_PerFeatureBasis):
    """Fourier features ``cos(2 pi k x / P), sin(2 pi k x / P)``, ``k = 1..n_frequencies``.

    Parameters
    ----------
    n_frequencies : int, default=5
        Number of harmonics ``K`` per feature (``2K`` features per input feature).
    period : float, default=None
        Period ``P``; default: the training range of each feature.
    include_bias : bool, default=True
        Prepend the constant (zero-frequency) feature.

    Attributes
    ----------
    period_ : ndarray of shape (n_features_in_,)
    n_output_features_ : int

    See Also
    --------
    mathlearn.preprocessing.PolynomialBasis
        Monomial features.
    mathlearn.preprocessing.GaussianBasis
        Local bumps.

    Notes
    -----
    A truncated Fourier series ``f(x) = a_0 + sum_k a_k cos(2 pi k x / P) + b_k sin(...)``
    fitted as a linear-in-parameters model (Stuttgart "Introduction to Machine Learning" slide 2:6:
    any fixed feature map).

    Complexity: with ``N`` samples, ``D`` features and ``F`` frequencies, ``fit`` costs
    ``O(N D)`` (each feature's training range) and keeps ``D`` periods; ``transform`` costs
    ``O(N F D) = O(N M)`` time (one cosine and one sine per harmonic) for the ``M = 2 F D``
    (plus bias) outputs, and ``O(N M)`` memory: the per-feature ``N x 2F`` blocks and their
    concatenation, about twice the output at the peak.

    Examples
    --------
    >>> import numpy as np
    >>> FourierBasis(n_frequencies=1, period=4.0).fit_transform(np.array([[1.0]])).round(12)
    array([[1., 0., 1.]])
    """

    _prefix = "fourier"
    _parameter_constraints: ClassVar[dict] = {
        "n_frequencies": _POSITIVE_INT,
        "period": _POSITIVE_REAL_OR_NONE,
        "include_bias": ["boolean"],
    }

    def __init__(self, n_frequencies: int = 5, *, period=None, include_bias=True):
        self.n_frequencies = n_frequencies
        self.period = period
        self.include_bias = include_bias

    @_fit_context
    def fit(self, X, y=None):
        """Choose the period of each feature.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        X = validate_data(self, X, dtype=np.float64)
        k = self.n_frequencies
        if self.period is None:
            span = X.max(axis=0) - X.min(axis=0)
            self.period_ = np.where(span > 0, span, 1.0)
        else:
            self.period_ = np.full(X.shape[1], float(self.period))
        return self._finish_fit(2 * k)

    def _expand(self, x, j):
        k = np.arange(1, self._n_per // 2 + 1)
        arg = 2.0 * np.pi * x[:, None] * k[None, :] / self.period_[j]
        out = np.empty((x.shape[0], self._n_per))
        out[:, 0::2] = np.cos(arg)
        out[:, 1::2] = np.sin(arg)
        return out


class PiecewiseConstantBasis(_PerFeatureBasis):
    """Indicator features ``[xi_j < x <= xi_{j+1}]`` of the intervals between knots.

    The first interval extends to ``-inf`` and the last to ``+inf`` so that every input falls
    in exactly one interval; with ``n_knots`` knots there are ``n_knots + 1`` intervals.

    Parameters
    ----------
    n_knots : int, default=5
        Number of interior knots per feature, spread evenly over the training range.
    knots : array-like of shape (n_knots,) or (n_knots, n_features), default=None
        Explicit knots (sorted per feature).
    include_bias : bool, default=False
        Prepend a constant column (redundant with the indicators, which sum to one).

    Attributes
    ----------
    knots_ : ndarray of shape (n_knots, n_features_in_)
    n_output_features_ : int

    See Also
    --------
    mathlearn.preprocessing.PiecewiseLinearBasis
        Lines between the knots.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" slide 2:8, piece-wise constant features.

    Complexity: with ``N`` samples, ``D`` features and ``K`` knots per feature, ``fit`` costs
    ``O(N D + D K log K)`` (training ranges, sorting the knots) and keeps the ``K x D``
    knots; ``transform`` costs ``O(N D log K)`` for the binary searches plus ``O(N M)`` to
    write the ``M = D (K + 1)`` (plus bias) outputs, in ``O(N M)`` memory (the per-feature
    blocks and their concatenation).

    Examples
    --------
    >>> import numpy as np
    >>> PiecewiseConstantBasis(knots=[0.0]).fit_transform(np.array([[-1.0], [0.0], [2.0]]))
    array([[1., 0.],
           [1., 0.],
           [0., 1.]])
    """

    _prefix = "bin"
    _parameter_constraints: ClassVar[dict] = {
        "n_knots": _POSITIVE_INT,
        "knots": ["array-like", None],
        "include_bias": ["boolean"],
    }

    def __init__(self, n_knots: int = 5, *, knots=None, include_bias=False):
        self.n_knots = n_knots
        self.knots = knots
        self.include_bias = include_bias

    @_fit_context
    def fit(self, X, y=None):
        """Place the knots.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        X = validate_data(self, X, dtype=np.float64)
        self.knots_ = np.sort(_grid(X, self.n_knots + 2, self.knots, "knots"), axis=0)
        if self.knots is None:
            self.knots_ = self.knots_[1:-1]  # interior knots of an even grid
        return self._finish_fit(self.knots_.shape[0] + 1)

    def _expand(self, x, j):
        # searchsorted(side="left") gives the interval (xi_{j-1}, xi_j] containing x.
        idx = np.searchsorted(self.knots_[:, j], x, side="left")
        out = np.zeros((x.shape[0], self._n_per))
        out[np.arange(x.shape[0]), idx] = 1.0
        return out


class PiecewiseLinearBasis(_PerFeatureBasis):
    """Piece-wise linear features, continuous (hinges) or not (per-interval lines).

    ``continuous=True``: ``phi(x) = [x, [x - xi_1]_+, ..., [x - xi_K]_+]`` (the hinge basis
    of Stuttgart "Introduction to Machine Learning" slide 2:8), whose fits are continuous
    piece-wise linear functions. ``continuous=False``: ``phi_j(x) = (1, x) [xi_j < x <=
    xi_{j+1}]``, two features per interval, whose fits are independent lines on each interval.

    Parameters
    ----------
    n_knots : int, default=5
    knots : array-like of shape (n_knots,) or (n_knots, n_features), default=None
    continuous : bool, default=True
    include_bias : bool, default=True
        Prepend the constant column (needed for an offset in the continuous form).

    Attributes
    ----------
    knots_ : ndarray of shape (n_knots, n_features_in_)
    n_output_features_ : int

    See Also
    --------
    mathlearn.preprocessing.PiecewiseConstantBasis
        Constants between the knots.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" slides 2:8–2:9.

    Complexity: with ``N`` samples, ``D`` features and ``K`` knots per feature, ``fit`` costs
    ``O(N D + D K log K)`` (training ranges, sorting the knots) and keeps the ``K x D``
    knots. ``transform`` costs ``O(N M)`` time and memory for the ``M`` (plus bias) outputs:
    ``M = D (K + 1)`` hinges evaluated directly when ``continuous=True``; ``M = 2 D (K + 1)``
    written after ``O(N D log K)`` binary searches otherwise (the per-feature blocks and their
    concatenation held at the peak).

    Examples
    --------
    >>> import numpy as np
    >>> PiecewiseLinearBasis(knots=[0.0]).fit_transform(np.array([[-1.0], [2.0]]))
    array([[ 1., -1.,  0.],
           [ 1.,  2.,  2.]])
    """

    _prefix = "pwl"
    _parameter_constraints: ClassVar[dict] = {
        "n_knots": _POSITIVE_INT,
        "knots": ["array-like", None],
        "continuous": ["boolean"],
        "include_bias": ["boolean"],
    }

    def __init__(self, n_knots: int = 5, *, knots=None, continuous=True, include_bias=True):
        self.n_knots = n_knots
        self.knots = knots
        self.continuous = continuous
        self.include_bias = include_bias

    @_fit_context
    def fit(self, X, y=None):
        """Place the knots.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        X = validate_data(self, X, dtype=np.float64)
        self.knots_ = np.sort(_grid(X, self.n_knots + 2, self.knots, "knots"), axis=0)
        if self.knots is None:
            self.knots_ = self.knots_[1:-1]
        k = self.knots_.shape[0]
        return self._finish_fit(k + 1 if self.continuous else 2 * (k + 1))

    def _expand(self, x, j):
        xi = self.knots_[:, j]
        if self.continuous:
            return np.hstack([x[:, None], np.maximum(x[:, None] - xi[None, :], 0.0)])
        idx = np.searchsorted(xi, x, side="left")
        out = np.zeros((x.shape[0], self._n_per))
        rows = np.arange(x.shape[0])
        out[rows, 2 * idx] = 1.0
        out[rows, 2 * idx + 1] = x
        return out
