"""Bias and variance of estimators: the ridge closed forms and a Monte Carlo decomposition.

Imperial "Mathematics for Machine Learning" (bias-variance analysis of estimators, with the
corrections noted below). Data ``y = Phi theta_0 + eps``, ``eps ~ N(0, sigma^2 I)``, over a
fixed design ``Phi`` (N x D). For an estimator ``theta*(D)``:

* ``Error(theta*) = E[(theta* - theta_0)(theta* - theta_0)^T] = b b^T + V`` with bias
  ``b = E[theta*] - theta_0`` and covariance ``V`` (the notes print ``b b^T V``);
  ``error(theta*) = tr Error = ||b||^2 + tr V``; the expected prediction error at ``x`` is
  ``phi(x)^T Error phi(x) + sigma^2``, so ``Error_1 <= Error_2`` in the Loewner order implies a
  smaller prediction error everywhere.
* Least squares is unbiased with ``V(0) = sigma^2 (Phi^T Phi)^{-1}``.
* Ridge in the notes' parametrisation, ``theta_R = (sigma^2 lambda I + Phi^T Phi)^{-1} Phi^T y``
  with ``A = sigma^2 lambda I + Phi^T Phi``: ``E[theta_R] = A^{-1} Phi^T Phi theta_0``,
  ``b(lambda) = -sigma^2 lambda A^{-1} theta_0``, ``V(lambda) = sigma^2 A^{-1} Phi^T Phi A^{-1}``
  (the notes drop the final inverse). Ridge dominates least squares,
  ``Error(theta_R) <= Error(theta_L)``, for ``0 <= lambda <= 2 / ||theta_0||^2`` (Theobald
  1974).

For any regressor, :func:`bias_variance_decomposition` estimates the pointwise decomposition
``E[(y - f_D(x))^2] = (E_D f_D(x) - f(x))^2 + V_D[f_D(x)] + sigma^2`` by refitting on fresh
training sets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike

from ..base import clone
from ..utils._param_validation import HasMethods, Interval, validate_params
from ..utils.linalg import cho_solve, cholesky
from ..utils.validation import check_random_state

__all__ = [
    "BiasVariance",
    "EstimatorError",
    "bias_variance_decomposition",
    "ridge_estimator_error",
]


@dataclass
class EstimatorError:
    """Bias, covariance and mean squared error of a parameter estimator.

    Attributes
    ----------
    mean : ndarray of shape (D,)
        ``E[theta*]``.
    bias : ndarray of shape (D,)
        ``b = E[theta*] - theta_0``.
    covariance : ndarray of shape (D, D)
        ``V = Cov[theta*]``.
    error_matrix : ndarray of shape (D, D)
        ``Error = b b^T + V``.
    error : float
        ``tr Error = ||b||^2 + tr V``.

    See Also
    --------
    mathlearn.model_selection.ridge_estimator_error
        The function that returns it.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.model_selection import ridge_estimator_error
    >>> err = ridge_estimator_error(np.eye(2), np.array([1.0, 0.0]), 1.0, 0.0)
    >>> err.error, err.bias.tolist()        # least squares: unbiased, tr V = sigma^2 D
    (2.0, [0.0, 0.0])
    """

    mean: np.ndarray
    bias: np.ndarray
    covariance: np.ndarray
    error_matrix: np.ndarray
    error: float

    def prediction_error(self, phi: ArrayLike, noise_var: float) -> np.ndarray:
        """Expected squared prediction error ``phi^T Error phi + sigma^2`` at feature rows.

        Parameters
        ----------
        phi : array-like of shape (n, D)
            Feature vectors of the test inputs.
        noise_var : float
            ``sigma^2``.

        Returns
        -------
        ndarray of shape (n,)
        """
        phi = np.atleast_2d(np.asarray(phi, dtype=float))
        return np.einsum("ij,jk,ik->i", phi, self.error_matrix, phi) + noise_var


@validate_params(
    {
        "Phi": ["array-like"],
        "theta0": ["array-like"],
        "noise_var": [Interval(Real, 0, None, closed="neither")],
        "lam": [Interval(Real, 0, None, closed="left")],
    }
)
def ridge_estimator_error(Phi: ArrayLike, theta0: ArrayLike, noise_var: float, lam: float):
    """Closed-form bias, covariance and error of ridge (``lam = 0``: least squares).

    Parameters
    ----------
    Phi : array-like of shape (N, D)
        The fixed design (features); full column rank when ``lam = 0``.
    theta0 : array-like of shape (D,)
        The true parameters.
    noise_var : float
        ``sigma^2``.
    lam : float
        ``lambda >= 0`` in the notes' parametrisation (penalty ``sigma^2 lambda``).

    Returns
    -------
    EstimatorError

    See Also
    --------
    bias_variance_decomposition

    Examples
    --------
    Ridge dominates least squares for ``lambda <= 2 / ||theta_0||^2``:

    >>> import numpy as np
    >>> from mathlearn.model_selection import ridge_estimator_error
    >>> rng = np.random.default_rng(0)
    >>> Phi, theta0 = rng.normal(size=(20, 3)), np.array([1.0, -0.5, 0.25])
    >>> ols = ridge_estimator_error(Phi, theta0, 1.0, 0.0)
    >>> ridge = ridge_estimator_error(Phi, theta0, 1.0, 2 / (theta0 @ theta0))
    >>> bool(np.linalg.eigvalsh(ols.error_matrix - ridge.error_matrix).min() >= -1e-12)
    True
    """
    Phi = np.asarray(Phi, dtype=float)
    theta0 = np.asarray(theta0, dtype=float)
    if Phi.ndim != 2 or theta0.shape != (Phi.shape[1],):
        raise ValueError(f"Phi must be (N, D) and theta0 (D,); got {Phi.shape}, {theta0.shape}.")
    if not (np.all(np.isfinite(Phi)) and np.all(np.isfinite(theta0))):
        raise ValueError("Phi and theta0 must be finite.")
    G = Phi.T @ Phi
    A = G + noise_var * lam * np.eye(G.shape[0])
    try:
        L = cholesky(A, jitter=None, name="sigma^2 lambda I + Phi^T Phi")
    except np.linalg.LinAlgError:
        raise ValueError(
            "Phi^T Phi is singular and lam = 0: least squares is not unique (use lam > 0)."
        ) from None
    mean = cho_solve(L, G @ theta0)
    bias = mean - theta0  # = -sigma^2 lambda A^{-1} theta_0
    AiG = cho_solve(L, G)
    V = noise_var * cho_solve(L, AiG.T)  # sigma^2 A^{-1} G A^{-1}
    V = 0.5 * (V + V.T)
    E = np.outer(bias, bias) + V
    return EstimatorError(mean, bias, V, E, float(np.trace(E)))


@dataclass
class BiasVariance:
    """Monte Carlo bias-variance decomposition of a regressor's squared prediction error.

    Attributes
    ----------
    bias2 : ndarray of shape (n_test,)
        ``(mean_r f_r(x) - f(x))^2`` per test point.
    variance : ndarray of shape (n_test,)
        ``var_r f_r(x)`` (``ddof = 1``) per test point.
    noise_var : float
        ``sigma^2``.
    expected_error : ndarray of shape (n_test,)
        ``bias2 + variance + noise_var``.
    predictions : ndarray of shape (n_repeats, n_test)
        ``f_r(x)``, one row per training set.

    See Also
    --------
    mathlearn.model_selection.bias_variance_decomposition
        The function that returns it.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linear_model import Ridge
    >>> from mathlearn.model_selection import bias_variance_decomposition
    >>> X = np.linspace(0, 1, 10)[:, None]
    >>> bv = bias_variance_decomposition(Ridge(alpha=100.0), lambda g: (X, X[:, 0]), X,
    ...                                  X[:, 0], 0.0, n_repeats=3)
    >>> bool(bv.bias2.max() > 0), bool(np.allclose(bv.variance, 0))   # heavy penalty: biased
    (True, True)
    """

    bias2: np.ndarray
    variance: np.ndarray
    noise_var: float
    expected_error: np.ndarray
    predictions: np.ndarray


@validate_params(
    {
        "estimator": [HasMethods(["fit", "predict"])],
        "sample_training_set": [callable],
        "X_test": ["array-like"],
        "f_test": ["array-like"],
        "noise_var": [Interval(Real, 0, None, closed="left")],
        "n_repeats": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    }
)
def bias_variance_decomposition(
    estimator,
    sample_training_set: Callable,
    X_test: ArrayLike,
    f_test: ArrayLike,
    noise_var: float,
    *,
    n_repeats: int = 100,
    random_state=None,
) -> BiasVariance:
    """Estimate bias^2 and variance of a regressor by refitting on fresh training sets.

    Parameters
    ----------
    estimator : regressor
        Cloned and fitted ``n_repeats`` times.
    sample_training_set : callable
        ``rng -> (X, y)``: draws one training set from the data distribution with the
        :class:`numpy.random.Generator` it is given.
    X_test : array-like of shape (n_test, n_features)
        Test inputs.
    f_test : array-like of shape (n_test,)
        The noise-free regression function ``f(x) = E[y | x]`` there.
    noise_var : float
        ``sigma^2 = V[y | x]`` (added to the expected error).
    n_repeats : int, default=100
        Number of training sets.
    random_state : int, Generator or None
        Seed.

    Returns
    -------
    BiasVariance

    See Also
    --------
    ridge_estimator_error : the closed forms for (ridge) least squares.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linear_model import LinearRegression
    >>> from mathlearn.model_selection import bias_variance_decomposition
    >>> X = np.linspace(-1, 1, 20)[:, None]
    >>> draw = lambda rng: (X, 2 * X[:, 0] + rng.normal(size=20))
    >>> bv = bias_variance_decomposition(LinearRegression(), draw, X, 2 * X[:, 0], 1.0,
    ...                                  n_repeats=50, random_state=0)
    >>> bool(bv.bias2.mean() < 0.05)                  # least squares: unbiased
    True
    """
    rng = check_random_state(random_state)
    X_test = np.asarray(X_test)
    f_test = np.asarray(f_test, dtype=float)
    if f_test.shape != (X_test.shape[0],):
        raise ValueError(
            f"f_test must have one value per test row, ({X_test.shape[0]},); got {f_test.shape}."
        )
    preds = np.empty((n_repeats, f_test.shape[0]))
    for r in range(n_repeats):
        X, y = sample_training_set(rng)
        preds[r] = np.asarray(clone(estimator).fit(X, y).predict(X_test), dtype=float)
    if not np.all(np.isfinite(preds)):
        raise ValueError("the estimator's predictions are not all finite.")
    mean = preds.mean(axis=0)
    bias2 = (mean - f_test) ** 2
    var = preds.var(axis=0, ddof=1)
    return BiasVariance(bias2, var, float(noise_var), bias2 + var + noise_var, preds)
