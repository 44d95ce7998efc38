"""Polynomial basis functions for linear-in-the-parameters models."""

from __future__ import annotations

from itertools import combinations_with_replacement
from numbers import Integral
from typing import ClassVar

import numpy as np

from ..base import BaseEstimator, TransformerMixin, _fit_context, check_is_fitted
from ..utils._param_validation import Interval
from ..utils.validation import validate_data

__all__ = ["PolynomialBasis"]


class PolynomialBasis(TransformerMixin, BaseEstimator):
    """All monomials of the input features up to a given degree.

    For a scalar input this is the polynomial basis of the notes,
    ``phi(x) = [1, x, x^2, ..., x^degree]``; for ``D`` inputs it is every monomial
    ``x_1^{k_1} ... x_D^{k_D}`` with ``k_1 + ... + k_D <= degree``, each unordered product once
    (the quadratic and cubic feature maps of Stuttgart "Introduction to Machine Learning" slide
    2:7).

    Parameters
    ----------
    degree : int, default=3
        Highest total degree ``K``.
    include_bias : bool, default=True
        Include the constant feature ``phi_0 = 1``.

    Attributes
    ----------
    n_features_in_ : int
        Number of input features ``D``.
    powers_ : ndarray of shape (n_output_features, n_features_in_)
        Exponent of each input feature in each output monomial.
    n_output_features_ : int
        Number of basis functions ``M``.

    See Also
    --------
    mathlearn.preprocessing.FourierBasis
        Periodic features.
    sklearn.preprocessing.PolynomialFeatures
        scikit-learn's equivalent.

    Notes
    -----
    Design matrix ``Phi_{nj} = phi_j(x_n)`` (Imperial
    "Mathematics for Inference and Machine Learning" §1.5.1.3, eq. 1.160–1.162; PRML §3.1;
    Stuttgart "Introduction to Machine Learning" slides 2:6–2:10). Raw monomials are badly
    conditioned for large degree or inputs far from zero; ``LinearRegression`` in this library
    refines its solution so that it stays accurate on such designs.

    Complexity: for ``N`` samples, ``D`` features and degree ``K`` there are
    ``M = (D + K)! / (D! K!)`` monomials (one fewer without the bias). ``fit`` costs
    ``O(N D)`` to validate ``X`` and ``O(M D)`` time and memory for the ``M x D`` exponent
    table ``powers_`` (built by a Python loop over the monomials). ``transform`` costs
    ``O(N M min(K, D) + M D)`` time, each column being a product of at most ``min(K, D)``
    powers (``O(N M)`` for one feature), and ``O(N M)`` memory for the output.

    Examples
    --------
    >>> import numpy as np
    >>> PolynomialBasis(degree=2).fit_transform(np.array([[2.0]]))
    array([[1., 2., 4.]])
    """

    _parameter_constraints: ClassVar[dict] = {
        "degree": [Interval(Integral, 0, None, closed="left")],
        "include_bias": ["boolean"],
    }

    def __init__(self, degree: int = 3, *, include_bias: bool = True):
        self.degree = degree
        self.include_bias = include_bias

    @_fit_context
    def fit(self, X, y=None):
        """Record the number of input features and the monomial exponents.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        X = validate_data(self, X, dtype=np.float64)
        degree = int(self.degree)
        start = 0 if self.include_bias else 1
        d = X.shape[1]
        powers = []
        for k in range(start, degree + 1):
            for combo in combinations_with_replacement(range(d), k):
                p = np.zeros(d, dtype=int)
                for j in combo:
                    p[j] += 1
                powers.append(p)
        if not powers:
            raise ValueError("degree=0 with include_bias=False gives no features.")
        self.powers_ = np.array(powers, dtype=int)
        self.n_output_features_ = self.powers_.shape[0]
        return self

    def transform(self, X):
        """Evaluate the monomials: ``Phi`` of shape (n_samples, n_output_features_)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        # Monomials of large entries overflow (x^2 of 1e200); that is detected from the result.
        with np.errstate(over="ignore", invalid="ignore"):
            if X.shape[1] == 1:
                # Scalar input: successive products, column k is x^k as the notes write it.
                x = X[:, 0]
                out = np.empty((X.shape[0], self.n_output_features_))
                for col, p in enumerate(self.powers_[:, 0]):
                    out[:, col] = x**p
            else:
                out = np.ones((X.shape[0], self.n_output_features_))
                for col, p in enumerate(self.powers_):
                    for j in np.flatnonzero(p):
                        out[:, col] *= X[:, j] ** p[j]
        if not np.all(np.isfinite(out)):
            row, col = np.argwhere(~np.isfinite(out))[0]
            raise ValueError(
                f"the polynomial feature {self.get_feature_names_out()[col]!r} of row {row} of "
                f"X (entries up to {np.max(np.abs(X[row])):.3g}) overflows float64 "
                f"(degree={self.degree}); rescale X, e.g. with a StandardScaler first."
            )
        return out

    def get_feature_names_out(self, input_features=None):
        """Names such as ``1``, ``x0``, ``x0^2``, ``x0 x1``."""
        check_is_fitted(self)
        if input_features is None:
            input_features = [f"x{j}" for j in range(self.n_features_in_)]
        names = []
        for p in self.powers_:
            terms = [
                (f"{input_features[j]}^{p[j]}" if p[j] > 1 else str(input_features[j]))
                for j in np.flatnonzero(p)
            ]
            names.append(" ".join(terms) if terms else "1")
        return np.asarray(names, dtype=object)
