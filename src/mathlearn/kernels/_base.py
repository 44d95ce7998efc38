"""Kernel base class, hyperparameter declaration, and the kernel algebra ``+``, ``*``, ``**``.

A kernel declares its hyperparameters once, as a class-level tuple of :class:`_Spec`. Values
are stored verbatim by ``__init__`` (so ``sklearn.base.clone`` works); the free ones, in log
space, form ``theta``; a hyperparameter whose ``<name>_bounds`` is ``"fixed"`` (or which the
class declares as always fixed, e.g. a polynomial degree) is left out of ``theta``.

Closure of positive semi-definite kernels under sums, positive scaling, products and powers
with a positive integer exponent: Oxford "Advanced Topics in Statistical Machine Learning"
§3.2 (Lemmas 10-12); Stuttgart "Introduction to Machine Learning", Exercise 7.2.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from typing import NamedTuple

import numpy as np

__all__ = [
    "ConstantKernel",
    "Exponentiation",
    "Hyperparameter",
    "Kernel",
    "Product",
    "Sum",
    "WhiteKernel",
]


class Hyperparameter(NamedTuple):
    """Description of one hyperparameter of a kernel (as listed by ``kernel.hyperparameters``).

    Parameters
    ----------
    name : str
        The constructor parameter it describes.
    value_type : str
        ``"numeric"``.
    bounds : ndarray of shape (n_elements, 2) or "fixed"
        Bounds in the original (not log) space.
    n_elements : int, default=1
        1, or the number of features for an ARD length-scale vector.
    fixed : bool, default=False
        ``True`` if the hyperparameter is not part of ``theta``.

    See Also
    --------
    mathlearn.kernels.Kernel
        Lists its hyperparameters as these records.

    Examples
    --------
    >>> from mathlearn.kernels import RBF
    >>> [h.name for h in RBF(1.0).hyperparameters]
    ['length_scale']
    >>> RBF(1.0, length_scale_bounds="fixed").hyperparameters[0].fixed
    True
    """

    name: str
    value_type: str
    bounds: object
    n_elements: int = 1
    fixed: bool = False


class _Spec(NamedTuple):
    """Class-level declaration of a hyperparameter.

    ``learnable``: has a ``<name>_bounds`` constructor argument and may enter ``theta`` (the
    value must then be > 0, since ``theta`` is its logarithm). ``vector``: may be an array (one
    entry per input feature, ARD).
    """

    name: str
    learnable: bool = True
    vector: bool = False


def _as_2d(X, name: str) -> np.ndarray:
    if np.iscomplexobj(X):
        raise ValueError(f"{name} is complex; kernels take real inputs.")
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a real numeric array: {exc}") from None
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got shape {X.shape}.")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return X


def _check_real(value, name: str, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        if isinstance(value, numbers.Complex):
            raise ValueError(f"{name} must be real; got {value!r}.")
        raise ValueError(f"{name} must be a real number; got {value!r}.")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value}.")
    if positive and not value > 0:
        raise ValueError(f"{name} must be > 0; got {value}.")
    return value


def _check_positive_array(value, name: str) -> np.ndarray:
    """A scalar or 1-D vector of finite positive reals (ARD length scales)."""
    if np.iscomplexobj(value):
        raise ValueError(f"{name} must be real; got {value!r}.")
    if np.ndim(value) == 0:
        return np.asarray(_check_real(value, name, positive=True))
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number or vector; got {value!r}.") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a scalar or a non-empty 1-D vector; got {value!r}.")
    # every entry finite and > 0 (a NaN makes the minimum NaN, which is not > 0)
    if not (arr.min() > 0 and np.isfinite(arr.max())):
        raise ValueError(f"{name} must be finite and > 0; got {value!r}.")
    return arr


def _values_equal(a, b) -> bool:
    if isinstance(a, Kernel) or isinstance(b, Kernel):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except (TypeError, ValueError):  # pragma: no cover - exotic values
        return a is b


def _hashable(v):
    if isinstance(v, Kernel):
        return v
    if isinstance(v, str) or np.ndim(v) == 0:
        return v
    return tuple(np.asarray(v).ravel().tolist())


@functools.cache
def _init_param_names(cls) -> tuple[str, ...]:
    # Cached per class: kernels are evaluated inside optimisation loops, and building the
    # signature each call cost more than a small Gram matrix.
    init = cls.__init__
    if init is object.__init__:
        return ()
    sig = inspect.signature(init)
    return tuple(
        p.name
        for p in sig.parameters.values()
        if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    )


class Kernel:
    """Base class of the kernels: a function ``k(x, y)`` evaluated on batches of inputs.

    Calling a kernel, ``k(X, Y=None, eval_gradient=False)``, returns the ``(N, M)`` Gram
    matrix ``K[i, j] = k(X[i], Y[j])`` (``Y=None`` means ``Y = X``) and, when
    ``eval_gradient=True`` (only with ``Y=None``), also ``dK / d theta`` of shape
    ``(N, N, n_theta)``, the derivative with respect to the log of each free hyperparameter.

    Subclasses declare ``_specs`` (their hyperparameters), store the constructor arguments
    verbatim, and implement ``_eval(X, Y, eval_gradient)`` (validated inputs; the gradient
    comes back as an ``(n_theta, N, N)`` array), ``_diag(X)`` and ``_check()``.

    See Also
    --------
    mathlearn.kernels.RBF
        A stationary kernel.
    mathlearn.kernels.Sum
        Kernel algebra.
    sklearn.gaussian_process.kernels.Kernel
        scikit-learn's equivalent.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import RBF, WhiteKernel
    >>> k = 2.0 * RBF([1.0, 3.0], length_scale_bounds=(0.1, 10.0)) + WhiteKernel(0.1)
    >>> np.round(np.exp(k.theta), 6)  # constant, two length scales, noise level
    array([2. , 1. , 3. , 0.1])
    >>> k.bounds.shape
    (4, 2)
    >>> K, dK = k(np.eye(2), eval_gradient=True)
    >>> dK.shape
    (2, 2, 4)
    >>> k.clone_with_theta(np.zeros(4)).get_params()["k1__k2__length_scale"]
    array([1., 1.])
    """

    _specs: tuple[_Spec, ...] = ()

    @classmethod
    def _param_names_from_init(cls) -> list[str]:
        return list(_init_param_names(cls))

    def get_params(self, deep: bool = True) -> dict:
        """Constructor arguments as a dict; with ``deep``, nested ones as ``k1__name``."""
        out = {}
        for name in self._param_names_from_init():
            value = getattr(self, name)
            out[name] = value
            if deep and isinstance(value, Kernel):
                for sub, v in value.get_params(deep=True).items():
                    out[f"{name}__{sub}"] = v
        return out

    def set_params(self, **params) -> Kernel:
        """Set constructor arguments (nested as ``k1__length_scale``); unknown names raise."""
        valid = self._param_names_from_init()
        nested: dict[str, dict] = {}
        for key, value in params.items():
            name, sep, sub = key.partition("__")
            if name not in valid:
                raise ValueError(
                    f"{type(self).__name__} has no hyperparameter {name!r}; "
                    f"valid names are {sorted(valid)}."
                )
            if sep:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
        for name, sub_params in nested.items():
            child = getattr(self, name)
            if not isinstance(child, Kernel):
                raise ValueError(f"{name!r} of {type(self).__name__} is not a kernel.")
            child.set_params(**sub_params)
        return self

    def clone_with_theta(self, theta) -> Kernel:
        """A copy of this kernel with the free hyperparameters set from ``theta`` (log)."""
        new = type(self)(**self.get_params(deep=False))
        new._clone_children()
        new.theta = theta
        return new

    def _clone_children(self) -> None:
        for name in self._param_names_from_init():
            v = getattr(self, name)
            if isinstance(v, Kernel):
                c = type(v)(**v.get_params(deep=False))
                c._clone_children()
                setattr(self, name, c)

    def _spec_value(self, spec: _Spec):
        value = getattr(self, spec.name)
        if spec.vector:
            return _check_positive_array(value, spec.name)
        return value

    def _is_fixed(self, spec: _Spec) -> bool:
        if not spec.learnable:
            return True
        b = getattr(self, f"{spec.name}_bounds")
        return isinstance(b, str) and b == "fixed"

    def _n_elements(self, spec: _Spec) -> int:
        if spec.vector:
            return int(np.size(getattr(self, spec.name)))
        return 1

    def _spec_bounds(self, spec: _Spec) -> np.ndarray:
        n = self._n_elements(spec)
        b = getattr(self, f"{spec.name}_bounds")
        if np.iscomplexobj(b):
            raise ValueError(f"{spec.name}_bounds must be real; got {b!r}.")
        try:
            b = np.asarray(b, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(
                f"{spec.name}_bounds must be a pair (low, high) or 'fixed'; got {b!r}."
            ) from None
        if b.shape == (2,):
            b = np.tile(b, (n, 1))
        if b.shape != (n, 2):
            raise ValueError(
                f"{spec.name}_bounds must be a pair (low, high), an array of shape ({n}, 2) "
                f"or 'fixed'; got shape {b.shape}."
            )
        if not (np.all(np.isfinite(b)) and np.all(b[:, 0] > 0) and np.all(b[:, 0] <= b[:, 1])):
            raise ValueError(
                f"{spec.name}_bounds must satisfy 0 < low <= high < inf; got {b.tolist()}."
            )
        return b

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        """The declared hyperparameters, in ``theta`` order (free ones), fixed ones included."""
        out = []
        for spec in self._specs:
            fixed = self._is_fixed(spec)
            bounds = "fixed" if fixed else self._spec_bounds(spec)
            out.append(Hyperparameter(spec.name, "numeric", bounds, self._n_elements(spec), fixed))
        return out

    def _free_specs(self) -> list[_Spec]:
        return [s for s in self._specs if not self._is_fixed(s)]

    @property
    def theta(self) -> np.ndarray:
        """Log of the free hyperparameters, flattened (ARD vectors expand), shape (n_theta,)."""
        parts = []
        for spec in self._free_specs():
            value = getattr(self, spec.name)
            arr = (
                _check_positive_array(value, spec.name)
                if spec.vector
                else np.asarray(_check_real(value, spec.name, positive=True))
            )
            parts.append(np.log(np.ravel(arr)))
        return np.concatenate(parts) if parts else np.empty(0)

    @theta.setter
    def theta(self, theta) -> None:
        theta = np.asarray(theta, dtype=float).ravel()
        i = 0
        for spec in self._free_specs():
            n = self._n_elements(spec)
            if i + n > theta.size:
                raise ValueError(f"theta has {theta.size} entries; {self.n_dims} expected.")
            vals = np.exp(theta[i : i + n])
            if spec.vector and np.ndim(getattr(self, spec.name)) > 0:
                setattr(self, spec.name, vals)
            else:
                setattr(self, spec.name, float(vals[0]))
            i += n
        if i != theta.size:
            raise ValueError(f"theta has {theta.size} entries; {i} expected.")

    @property
    def bounds(self) -> np.ndarray:
        """Log-space bounds of ``theta``, shape (n_theta, 2)."""
        parts = [np.log(self._spec_bounds(s)) for s in self._free_specs()]
        return np.vstack(parts) if parts else np.empty((0, 2))

    @property
    def n_dims(self) -> int:
        """Number of free hyperparameters (length of ``theta``)."""
        return int(sum(self._n_elements(s) for s in self._free_specs()))

    @property
    def requires_vector_input(self) -> bool:
        """Whether inputs are feature vectors (always, for these kernels)."""
        return True

    def is_stationary(self) -> bool:
        """Whether ``k(x, y)`` depends on ``x - y`` only."""
        return False

    def _check(self) -> None:
        """Validate the hyperparameter values (called before every evaluation)."""
        for spec in self._specs:
            value = getattr(self, spec.name)
            if spec.vector:
                _check_positive_array(value, spec.name)
            elif spec.learnable:
                _check_real(value, spec.name, positive=True)
            if not self._is_fixed(spec):
                self._check_bounds(spec)

    def _check_bounds(self, spec: _Spec) -> None:
        """Validate ``<name>_bounds``: a pair of finite reals ``0 < low <= high`` is checked
        directly (the common case, before every evaluation); anything else as
        :meth:`_spec_bounds` reads it."""
        b = getattr(self, f"{spec.name}_bounds")
        if (
            isinstance(b, (tuple, list))
            and len(b) == 2
            and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in b)
        ):
            lo, hi = float(b[0]), float(b[1])
            if math.isfinite(lo) and math.isfinite(hi) and 0 < lo <= hi:
                return
        self._spec_bounds(spec)

    def _check_ard(self, X: np.ndarray) -> None:
        for spec in self._specs:
            if spec.vector:
                n = np.size(getattr(self, spec.name))
                if np.ndim(getattr(self, spec.name)) > 0 and n != X.shape[1]:
                    raise ValueError(
                        f"{spec.name} has {n} entries but X has {X.shape[1]} features."
                    )
        for name in self._param_names_from_init():
            v = getattr(self, name)
            if isinstance(v, Kernel):
                v._check_ard(X)

    def __call__(self, X, Y=None, eval_gradient: bool = False):
        """Gram matrix ``K[i, j] = k(X[i], Y[j])`` of shape ``(len(X), len(Y))``.

        Parameters
        ----------
        X : array-like of shape (N, D)
        Y : array-like of shape (M, D), optional
            ``None`` means ``Y = X``.
        eval_gradient : bool, default=False
            Also return ``dK/dtheta`` of shape (N, N, n_theta) (only with ``Y=None``).

        Returns
        -------
        K : ndarray of shape (N, M)
        K_gradient : ndarray of shape (N, N, n_theta)
            Only with ``eval_gradient=True``; a view of an ``(n_theta, N, N)`` buffer, so
            ``K_gradient[..., j]`` is one contiguous matrix.
        """
        X = _as_2d(X, "X")
        if Y is not None:
            if eval_gradient:
                raise ValueError("eval_gradient can only be used with Y=None.")
            Y = _as_2d(Y, "Y")
            if Y.shape[1] != X.shape[1]:
                raise ValueError(
                    f"X and Y must have the same number of features; got {X.shape[1]} "
                    f"and {Y.shape[1]}."
                )
        self._check_all()
        self._check_ard(X)
        if eval_gradient:
            K, G = self._eval(X, None, True)
            return K, np.moveaxis(G, 0, -1)
        return self._eval(X, Y, False)[0]

    def _check_all(self) -> None:
        self._check()

    def diag(self, X) -> np.ndarray:
        """``k(x_i, x_i)`` for each row, without forming the Gram matrix; shape (N,)."""
        X = _as_2d(X, "X")
        self._check_all()
        self._check_ard(X)
        return self._diag(X)

    def _eval(self, X, Y, eval_gradient):  # pragma: no cover - abstract
        raise NotImplementedError

    def _diag(self, X):  # pragma: no cover - abstract
        raise NotImplementedError

    def __add__(self, other) -> Kernel:
        return Sum(self, other if isinstance(other, Kernel) else ConstantKernel(other))

    def __radd__(self, other) -> Kernel:
        return Sum(other if isinstance(other, Kernel) else ConstantKernel(other), self)

    def __mul__(self, other) -> Kernel:
        return Product(self, other if isinstance(other, Kernel) else ConstantKernel(other))

    def __rmul__(self, other) -> Kernel:
        return Product(other if isinstance(other, Kernel) else ConstantKernel(other), self)

    def __pow__(self, exponent) -> Kernel:
        return Exponentiation(self, exponent)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params(deep=False).items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        if type(self) is not type(other):
            return False
        a, b = self.get_params(deep=False), other.get_params(deep=False)
        return a.keys() == b.keys() and all(_values_equal(a[k], b[k]) for k in a)

    def __hash__(self) -> int:
        items = self.get_params(deep=False).items()
        return hash((type(self).__name__, tuple(sorted((k, _hashable(v)) for k, v in items))))


def _grad_buffer(n_theta: int, n: int) -> np.ndarray:
    return np.empty((n_theta, n, n))


class ConstantKernel(Kernel):
    """Constant kernel ``k(x, y) = c``; ``c * k`` scales a kernel (``c > 0`` keeps it PSD).

    Parameters
    ----------
    constant_value : float, default=1.0
        ``c > 0``.
    constant_value_bounds : pair of floats or "fixed", default=(1e-5, 1e5)

    See Also
    --------
    mathlearn.kernels.WhiteKernel
        A constant on the diagonal only.
    sklearn.gaussian_process.kernels.ConstantKernel
        scikit-learn's equivalent.

    Notes
    -----
    The offset trick ``k + 1`` and positive scaling ``alpha k`` (Oxford "Advanced Topics in
    Statistical Machine Learning" §3.2, Lemma 10). ``dK/dlog c = K``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import ConstantKernel
    >>> ConstantKernel(2.0)(np.zeros((2, 1)))
    array([[2., 2.],
           [2., 2.]])
    """

    _specs = (_Spec("constant_value"),)

    def __init__(self, constant_value: float = 1.0, constant_value_bounds=(1e-5, 1e5)):
        self.constant_value = constant_value
        self.constant_value_bounds = constant_value_bounds

    def is_stationary(self) -> bool:
        return True

    def _eval(self, X, Y, eval_gradient):
        m = X.shape[0] if Y is None else Y.shape[0]
        K = np.full((X.shape[0], m), float(self.constant_value))
        if not eval_gradient:
            return K, None
        G = _grad_buffer(self.n_dims, X.shape[0])
        if self.n_dims:
            G[0] = K
        return K, G

    def _diag(self, X):
        return np.full(X.shape[0], float(self.constant_value))


class WhiteKernel(Kernel):
    """White-noise kernel ``k(x_i, x_j) = sigma^2 [i == j]`` on one set of inputs.

    ``k(X)`` is ``noise_level * I``; ``k(X, Y)`` between two sets is zero (the noise of two
    different draws is independent), as in Gaussian-process regression's noise term.

    Parameters
    ----------
    noise_level : float, default=1.0
        ``sigma^2 > 0``.
    noise_level_bounds : pair of floats or "fixed", default=(1e-5, 1e5)

    See Also
    --------
    mathlearn.kernels.ConstantKernel
        A constant everywhere.
    sklearn.gaussian_process.kernels.WhiteKernel
        scikit-learn's equivalent.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import WhiteKernel
    >>> WhiteKernel(0.5)(np.zeros((2, 1)))
    array([[0.5, 0. ],
           [0. , 0.5]])
    """

    _specs = (_Spec("noise_level"),)

    def __init__(self, noise_level: float = 1.0, noise_level_bounds=(1e-5, 1e5)):
        self.noise_level = noise_level
        self.noise_level_bounds = noise_level_bounds

    def is_stationary(self) -> bool:
        return True

    def _eval(self, X, Y, eval_gradient):
        if Y is not None:
            return np.zeros((X.shape[0], Y.shape[0])), None
        K = float(self.noise_level) * np.eye(X.shape[0])
        if not eval_gradient:
            return K, None
        G = _grad_buffer(self.n_dims, X.shape[0])
        if self.n_dims:
            G[0] = K
        return K, G

    def _diag(self, X):
        return np.full(X.shape[0], float(self.noise_level))


class _Composite(Kernel):
    def _children(self) -> list[Kernel]:
        return [getattr(self, n) for n in self._param_names_from_init() if n.startswith("k")]

    def _check_all(self) -> None:
        for name in self._param_names_from_init():
            v = getattr(self, name)
            if name.startswith("k") and not isinstance(v, Kernel):
                raise ValueError(f"{name} must be a mathlearn kernel; got {v!r}.")
        self._check()
        for child in self._children():
            child._check_all()

    @property
    def hyperparameters(self) -> list[Hyperparameter]:
        out = []
        for name in self._param_names_from_init():
            v = getattr(self, name)
            if isinstance(v, Kernel):
                out.extend(h._replace(name=f"{name}__{h.name}") for h in v.hyperparameters)
        return out

    @property
    def theta(self) -> np.ndarray:
        return np.concatenate([c.theta for c in self._children()])

    @theta.setter
    def theta(self, theta) -> None:
        theta = np.asarray(theta, dtype=float).ravel()
        if theta.size != self.n_dims:
            raise ValueError(f"theta has {theta.size} entries; {self.n_dims} expected.")
        i = 0
        for c in self._children():
            c.theta = theta[i : i + c.n_dims]
            i += c.n_dims

    @property
    def bounds(self) -> np.ndarray:
        return np.vstack([c.bounds for c in self._children()])

    @property
    def n_dims(self) -> int:
        return sum(c.n_dims for c in self._children())

    def is_stationary(self) -> bool:
        return all(c.is_stationary() for c in self._children())


class Sum(_Composite):
    """Sum ``k1(x, y) + k2(x, y)`` of two kernels (``k1 + k2``); PSD if both are.

    ``theta`` is ``k1``'s followed by ``k2``'s; nested parameters are ``k1__<name>``.

    Parameters
    ----------
    k1, k2 : Kernel
        The two summands.

    See Also
    --------
    mathlearn.kernels.Product
        The product of two kernels.
    mathlearn.kernels.Exponentiation
        A power of a kernel.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import RBF, WhiteKernel
    >>> k = RBF(1.0) + WhiteKernel(0.1)
    >>> k.get_params()["k1__length_scale"]
    1.0
    >>> k(np.zeros((1, 2)))
    array([[1.1]])
    """

    def __init__(self, k1: Kernel, k2: Kernel):
        self.k1 = k1
        self.k2 = k2

    def _eval(self, X, Y, eval_gradient):
        K1, G1 = self.k1._eval(X, Y, eval_gradient)
        K2, G2 = self.k2._eval(X, Y, eval_gradient)
        K1 = K1 + K2
        if not eval_gradient:
            return K1, None
        return K1, np.concatenate([G1, G2], axis=0)

    def _diag(self, X):
        return self.k1._diag(X) + self.k2._diag(X)


class Product(_Composite):
    """Product ``k1(x, y) k2(x, y)`` of two kernels (``k1 * k2``); PSD if both are.

    ``c * k`` with a number ``c`` is ``Product(ConstantKernel(c), k)``.

    Parameters
    ----------
    k1, k2 : Kernel
        The two factors.

    See Also
    --------
    mathlearn.kernels.Sum
        The sum of two kernels.
    mathlearn.kernels.Exponentiation
        A power of a kernel.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import Linear
    >>> (2.0 * Linear())(np.array([[1.0, 2.0]]))
    array([[10.]])
    """

    def __init__(self, k1: Kernel, k2: Kernel):
        self.k1 = k1
        self.k2 = k2

    def _eval(self, X, Y, eval_gradient):
        if type(self.k1) is ConstantKernel or type(self.k2) is ConstantKernel:
            return self._eval_scaled(X, Y, eval_gradient)
        K1, G1 = self.k1._eval(X, Y, eval_gradient)
        K2, G2 = self.k2._eval(X, Y, eval_gradient)
        K = K1 * K2
        if not eval_gradient:
            return K, None
        n1 = G1.shape[0]
        G = _grad_buffer(n1 + G2.shape[0], X.shape[0])
        np.multiply(G1, K2, out=G[:n1])
        np.multiply(G2, K1, out=G[n1:])
        return K, G

    def _eval_scaled(self, X, Y, eval_gradient):
        """``c * k``: the same products as the general case with the constant factor as a
        scalar (no ``N x M`` matrix of ``c``, no broadcast reads of it); ``dK/dlog c = K``."""
        const_first = type(self.k1) is ConstantKernel
        const, other = (self.k1, self.k2) if const_first else (self.k2, self.k1)
        c = float(const.constant_value)
        K, G_other = other._eval(X, Y, eval_gradient)
        K *= c
        if not eval_gradient:
            return K, None
        n_c, n_o = const.n_dims, G_other.shape[0]
        G = _grad_buffer(n_c + n_o, X.shape[0])
        G_c, G_o = (G[:n_c], G[n_c:]) if const_first else (G[n_o:], G[:n_o])
        if n_c:
            G_c[0] = K
        np.multiply(G_other, c, out=G_o)
        return K, G

    def _diag(self, X):
        return self.k1._diag(X) * self.k2._diag(X)


class Exponentiation(_Composite):
    """Power ``k(x, y) ** exponent`` of a kernel (``k ** p``).

    A positive-integer power of a PSD kernel is PSD (repeated products); other exponents are
    allowed but need not keep the kernel PSD.

    Parameters
    ----------
    kernel : Kernel
    exponent : float

    See Also
    --------
    mathlearn.kernels.Product
        The product of two kernels.
    mathlearn.kernels.Sum
        The sum of two kernels.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import DotProduct
    >>> (DotProduct(sigma_0=1.0) ** 2)(np.array([[1.0, 2.0]]))  # (1 + 5)^2
    array([[36.]])
    """

    def __init__(self, kernel: Kernel, exponent: float):
        self.kernel = kernel
        self.exponent = exponent

    def _children(self) -> list[Kernel]:
        return [self.kernel]

    def _check_all(self) -> None:
        if not isinstance(self.kernel, Kernel):
            raise ValueError(f"kernel must be a mathlearn kernel; got {self.kernel!r}.")
        _check_real(self.exponent, "exponent")
        self.kernel._check_all()

    def _eval(self, X, Y, eval_gradient):
        p = float(self.exponent)
        K0, G0 = self.kernel._eval(X, Y, eval_gradient)
        K = K0**p
        if not eval_gradient:
            return K, None
        # d(K^p) = p K^(p-1) dK
        return K, G0 * (p * K0 ** (p - 1.0))

    def _diag(self, X):
        return self.kernel._diag(X) ** float(self.exponent)
