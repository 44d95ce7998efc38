"""Kernels of the inner product ``x^T y``: linear, dot product, polynomial, exponential, sigmoid.

Oxford "Advanced Topics in Statistical Machine Learning" §3.3 (linear, polynomial with
integer degree and ``c >= 0`` (Lemma 13), exponential ``exp<x, x'>``); Imperial "Mathematics
for Inference and Machine Learning" (kernel PCA kernels, including the sigmoid); Stuttgart
"Introduction to Machine Learning" §5 (polynomial, linear with bias ``1 + x^T y``).
Each Gram matrix is one matrix product; nothing of shape ``(N, M, D)`` is formed.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..utils.validation import all_finite
from ._base import Kernel, _check_real, _grad_buffer, _Spec

__all__ = ["DotProduct", "Exponential", "Linear", "Polynomial", "Sigmoid"]


def _dot(X, Y):
    return X @ (X if Y is None else Y).T


def _row_sq(X):
    return np.einsum("ij,ij->i", X, X)


class Linear(Kernel):
    """Linear kernel ``k(x, y) = x^T y``.

    Kernel PCA with this kernel is ordinary PCA (PRML §12.3; Oxford "Advanced Topics in
    Statistical Machine Learning" §3.5). No hyperparameters; see :class:`DotProduct` for
    ``sigma_0^2 + x^T y``.

    See Also
    --------
    mathlearn.kernels.DotProduct
        With an offset.
    mathlearn.kernels.Polynomial
        Powers of the inner product.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import Linear
    >>> Linear()(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))
    array([[11.]])
    """

    def _eval(self, X, Y, eval_gradient):
        K = _dot(X, Y)
        return K, (_grad_buffer(0, X.shape[0]) if eval_gradient else None)

    def _diag(self, X):
        return _row_sq(X)


class DotProduct(Kernel):
    """Dot-product kernel with offset ``k(x, y) = sigma_0^2 + x^T y``.

    ``sigma_0 = 1`` is the "linear with bias" kernel ``1 + x^T y`` of Stuttgart "Introduction
    to Machine Learning", Exercise 7.1 (kernel ridge regression with it is ridge regression on
    the features ``(1, x)``); ``DotProduct(...) ** 2`` is its quadratic kernel.

    Parameters
    ----------
    sigma_0 : float, default=1.0
        ``sigma_0 > 0``; ``dK/dlog sigma_0 = 2 sigma_0^2``.
    sigma_0_bounds : pair of floats or "fixed", default=(1e-5, 1e5)

    See Also
    --------
    mathlearn.kernels.Linear
        Without the offset.
    mathlearn.kernels.Polynomial
        Powers of the inner product.
    sklearn.gaussian_process.kernels.DotProduct
        scikit-learn's equivalent.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import DotProduct
    >>> DotProduct(2.0)(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))  # 4 + 11
    array([[15.]])
    """

    _specs = (_Spec("sigma_0"),)

    def __init__(self, sigma_0: float = 1.0, sigma_0_bounds=(1e-5, 1e5)):
        self.sigma_0 = sigma_0
        self.sigma_0_bounds = sigma_0_bounds

    def _eval(self, X, Y, eval_gradient):
        s2 = float(self.sigma_0) ** 2
        K = _dot(X, Y)
        K += s2
        if not eval_gradient:
            return K, None
        G = _grad_buffer(self.n_dims, X.shape[0])
        G[:] = 2.0 * s2
        return K, G

    def _diag(self, X):
        return _row_sq(X) + float(self.sigma_0) ** 2


class Polynomial(Kernel):
    """Polynomial kernel ``k(x, y) = (gamma x^T y + coef0)^degree``.

    With ``gamma = 1`` this is the notes' ``(x^T y + c)^m``; it is positive semi-definite for
    a whole ``degree >= 0``, ``gamma > 0`` and ``coef0 >= 0`` (Oxford "Advanced Topics in
    Statistical Machine Learning" §3.3, Lemma 13). The degree-2 case with ``coef0 = 1`` is the
    inner product of an explicit quadratic feature map.

    The hyperparameters are declared fixed (``theta`` is empty): ``coef0`` may be 0 or
    negative and ``degree`` is a whole number, so they have no log-space form; tune them by
    grid search (``kernel__degree``), or build a learnable polynomial kernel as
    ``(ConstantKernel() * DotProduct()) ** degree``.

    Parameters
    ----------
    degree : int, default=3
    gamma : float, default=1.0
    coef0 : float, default=1.0

    See Also
    --------
    mathlearn.kernels.Linear
        Degree one without offset.
    mathlearn.kernels.DotProduct
        The offset inner product.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import Polynomial
    >>> Polynomial(degree=2)(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))  # (11 + 1)^2
    array([[144.]])
    """

    _specs = (
        _Spec("degree", learnable=False),
        _Spec("gamma", learnable=False),
        _Spec("coef0", learnable=False),
    )

    def __init__(self, degree: int = 3, gamma: float = 1.0, coef0: float = 1.0):
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0

    def _check(self):
        # A fractional power of a negative gamma x^T y + coef0 would be NaN.
        deg = self.degree
        if (
            not isinstance(deg, numbers.Real)
            or isinstance(deg, bool)
            or not (np.isfinite(deg) and deg >= 0 and float(deg).is_integer())
        ):
            raise ValueError(f"degree must be a non-negative whole number; got {deg!r}.")
        _check_real(self.gamma, "gamma")
        _check_real(self.coef0, "coef0")

    def _eval(self, X, Y, eval_gradient):
        K = _dot(X, Y)
        K *= float(self.gamma)
        K += float(self.coef0)
        K = K**self.degree
        if not all_finite(K):
            raise ValueError(
                "the polynomial kernel overflowed (|gamma x^T y + coef0|^degree > 1e308); "
                "rescale X or lower gamma/degree."
            )
        return K, (_grad_buffer(0, X.shape[0]) if eval_gradient else None)

    def _diag(self, X):
        return (float(self.gamma) * _row_sq(X) + float(self.coef0)) ** self.degree


class Exponential(Kernel):
    """Exponential (inner-product) kernel ``k(x, y) = exp(gamma x^T y)``.

    The limit of the truncated Taylor kernels ``sum_(r <= m) (gamma x^T y)^r / r!`` (Oxford
    "Advanced Topics in Statistical Machine Learning" §3.3); positive semi-definite for
    ``gamma > 0``. Not the "exponential" stationary kernel ``exp(-||x - y|| / l)``: that is
    ``Matern(nu=0.5)`` or ``GammaExponential(gamma=1)``.

    Parameters
    ----------
    gamma : float, default=1.0
        ``gamma > 0``; ``dK/dlog gamma = gamma x^T y K``.
    gamma_bounds : pair of floats or "fixed", default=(1e-5, 1e5)

    See Also
    --------
    mathlearn.kernels.Linear
        The inner product it exponentiates.
    mathlearn.kernels.RBF
        Its normalised, stationary form.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import Exponential
    >>> float(Exponential()(np.array([[1.0, 1.0]]), np.array([[0.5, 0.0]]))[0, 0])  # e^0.5
    1.6487212707001282
    """

    _specs = (_Spec("gamma"),)

    def __init__(self, gamma: float = 1.0, gamma_bounds=(1e-5, 1e5)):
        self.gamma = gamma
        self.gamma_bounds = gamma_bounds

    def _eval(self, X, Y, eval_gradient):
        A = _dot(X, Y)
        A *= float(self.gamma)
        with np.errstate(over="ignore"):
            K = np.exp(A)
        if not all_finite(K):
            raise ValueError(
                "the exponential kernel overflowed (gamma x^T y > 709); rescale X or lower gamma."
            )
        if not eval_gradient:
            return K, None
        G = _grad_buffer(self.n_dims, X.shape[0])
        if self.n_dims:
            np.multiply(A, K, out=G[0])
        return K, G

    def _diag(self, X):
        with np.errstate(over="ignore"):
            d = np.exp(float(self.gamma) * _row_sq(X))
        if not np.all(np.isfinite(d)):
            raise ValueError("the exponential kernel overflowed (gamma x^T x > 709).")
        return d


class Sigmoid(Kernel):
    """Hyperbolic-tangent kernel ``k(x, y) = tanh(gamma x^T y + coef0)``.

    **Not positive semi-definite** in general (Imperial "Mathematics for Inference and Machine
    Learning", kernel PCA); kernel PCA with it keeps only the positive eigenvalues of the
    centred Gram matrix. Its hyperparameters are fixed (``theta`` is empty), as ``gamma`` and
    ``coef0`` may have any sign.

    Parameters
    ----------
    gamma : float, default=1.0
    coef0 : float, default=0.0

    See Also
    --------
    mathlearn.kernels.Polynomial
        A PSD inner-product kernel.
    mathlearn.kernels.Kernel
        The base class.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import Sigmoid
    >>> float(Sigmoid(gamma=0.5)(np.array([[1.0]]), np.array([[2.0]]))[0, 0])  # tanh(1)
    0.7615941559557649
    """

    _specs = (_Spec("gamma", learnable=False), _Spec("coef0", learnable=False))

    def __init__(self, gamma: float = 1.0, coef0: float = 0.0):
        self.gamma = gamma
        self.coef0 = coef0

    def _check(self):
        _check_real(self.gamma, "gamma")
        _check_real(self.coef0, "coef0")

    def _eval(self, X, Y, eval_gradient):
        K = _dot(X, Y)
        K *= float(self.gamma)
        K += float(self.coef0)
        np.tanh(K, out=K)
        return K, (_grad_buffer(0, X.shape[0]) if eval_gradient else None)

    def _diag(self, X):
        return np.tanh(float(self.gamma) * _row_sq(X) + float(self.coef0))
