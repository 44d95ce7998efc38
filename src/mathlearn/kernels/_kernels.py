"""Small kernel objects: Gram matrices of the linear, RBF, polynomial and sigmoid kernels.

Spec 000 §2.I (M59, erratum 11: the RBF kernel has a minus sign), spec 001 M35, spec 002 M20
and spec 004 §6.1 use these kernels for kernel PCA. Each kernel is a callable ``k(X, Y=None)``
returning the ``(N, M)`` Gram matrix ``K_ij = k(x_i, y_j)``; the work is one matrix product
(through :func:`mathlearn.utils.extmath.squared_distances` for the stationary RBF kernel), so
no ``(N, M, D)`` temporary is ever formed. Hyperparameters are plain attributes listed by
``get_params``, so the kernel algebra of a later issue (sums, products, log-space ``theta``)
can grow on these classes.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..utils.extmath import squared_distances

__all__ = ["RBF", "Kernel", "Linear", "Polynomial", "Sigmoid"]


def _as_2d(X, name: str) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got shape {X.shape}.")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return X


class Kernel:
    """Base class: a positive (semi-)definite function ``k(x, y)`` evaluated on batches.

    Subclasses list their hyperparameters in ``_param_names`` and implement ``_gram(X, Y)``.
    """

    _param_names: tuple[str, ...] = ()

    def get_params(self, deep: bool = True) -> dict:
        """Hyperparameters as a dict (the names are the constructor's arguments)."""
        return {name: getattr(self, name) for name in self._param_names}

    def set_params(self, **params) -> Kernel:
        """Set hyperparameters; unknown names raise ``ValueError``."""
        for name, value in params.items():
            if name not in self._param_names:
                raise ValueError(f"{type(self).__name__} has no hyperparameter {name!r}.")
            setattr(self, name, value)
        return self

    def __call__(self, X, Y=None) -> np.ndarray:
        """Gram matrix ``K[i, j] = k(X[i], Y[j])`` of shape ``(len(X), len(Y))``.

        ``Y=None`` means ``Y = X`` (and the result is exactly symmetric).
        """
        X = _as_2d(X, "X")
        if Y is not None:
            Y = _as_2d(Y, "Y")
            if Y.shape[1] != X.shape[1]:
                raise ValueError(
                    f"X and Y must have the same number of features; got {X.shape[1]} "
                    f"and {Y.shape[1]}."
                )
        return self._gram(X, Y)

    def diag(self, X) -> np.ndarray:
        """``k(x_i, x_i)`` for each row, without forming the Gram matrix."""
        X = _as_2d(X, "X")
        return np.array([self._gram(x[None, :], None)[0, 0] for x in X])

    def _gram(self, X, Y):  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and self.get_params() == other.get_params()

    def __hash__(self) -> int:
        return hash((type(self).__name__, tuple(sorted(self.get_params().items()))))


def _dot(X, Y):
    return X @ (X if Y is None else Y).T


class Linear(Kernel):
    """Linear kernel ``k(x, y) = x^T y``.

    Kernel PCA with this kernel is ordinary PCA (spec 001 T17, spec 002 D13).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import Linear
    >>> Linear()(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))
    array([[11.]])
    """

    def _gram(self, X, Y):
        return _dot(X, Y)

    def diag(self, X) -> np.ndarray:
        X = _as_2d(X, "X")
        return np.einsum("ij,ij->i", X, X)


class RBF(Kernel):
    """Gaussian (squared-exponential) kernel ``k(x, y) = exp(-||x - y||^2 / (2 l^2))``.

    Parameters
    ----------
    length_scale : float, default=1.0
        ``l > 0``. The notes' form ``exp(-||x - y||^2 / r^2)`` (spec 000 M59, erratum 11) is
        ``l = r / sqrt(2)``; scikit-learn's ``gamma`` is ``1 / (2 l^2)``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import RBF
    >>> float(RBF(1.0)(np.zeros((1, 2)), np.ones((1, 2)))[0, 0])  # exp(-1)
    0.36787944117144233
    """

    _param_names = ("length_scale",)

    def __init__(self, length_scale: float = 1.0):
        self.length_scale = length_scale

    @property
    def gamma(self) -> float:
        """``1 / (2 l^2)``, the factor in ``exp(-gamma ||x - y||^2)``."""
        return 0.5 / float(self.length_scale) ** 2

    def _gram(self, X, Y):
        if not float(self.length_scale) > 0:
            raise ValueError(f"length_scale must be > 0; got {self.length_scale}.")
        K = squared_distances(X, Y)
        K *= -self.gamma
        return np.exp(K, out=K)

    def diag(self, X) -> np.ndarray:
        return np.ones(_as_2d(X, "X").shape[0])


class Polynomial(Kernel):
    """Polynomial kernel ``k(x, y) = (gamma x^T y + coef0)^degree``.

    With ``gamma = 1`` this is the notes' ``(x^T y + b)^n`` (spec 000 M59); the degree-2 case
    with ``coef0 = 1`` is the inner product of the explicit 10-dimensional feature map on
    ``R^3`` (erratum 12).

    Parameters
    ----------
    degree : int, default=3
    gamma : float, default=1.0
    coef0 : float, default=1.0

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import Polynomial
    >>> Polynomial(degree=2)(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))  # (11 + 1)^2
    array([[144.]])
    """

    _param_names = ("degree", "gamma", "coef0")

    def __init__(self, degree: int = 3, gamma: float = 1.0, coef0: float = 1.0):
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0

    def _gram(self, X, Y):
        # A fractional power of a negative gamma x^T y + coef0 would be NaN.
        deg = self.degree
        if (
            not isinstance(deg, numbers.Real)
            or isinstance(deg, bool)
            or not (deg >= 0 and float(deg).is_integer())
        ):
            raise ValueError(f"degree must be a non-negative whole number; got {deg!r}.")
        K = _dot(X, Y)
        K *= self.gamma
        K += self.coef0
        return K**deg


class Sigmoid(Kernel):
    """Hyperbolic-tangent kernel ``k(x, y) = tanh(gamma x^T y + coef0)``.

    Not positive semi-definite in general (spec 000 §6.3); kernel PCA with it keeps only the
    positive eigenvalues of the centred Gram matrix.

    Parameters
    ----------
    gamma : float, default=1.0
    coef0 : float, default=0.0

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import Sigmoid
    >>> float(Sigmoid(gamma=0.5)(np.array([[1.0]]), np.array([[2.0]]))[0, 0])  # tanh(1)
    0.7615941559557649
    """

    _param_names = ("gamma", "coef0")

    def __init__(self, gamma: float = 1.0, coef0: float = 0.0):
        self.gamma = gamma
        self.coef0 = coef0

    def _gram(self, X, Y):
        K = _dot(X, Y)
        K *= self.gamma
        K += self.coef0
        return np.tanh(K, out=K)
