"""``get_kernel``: one way for every kernel estimator to turn a name or object into a kernel."""

from __future__ import annotations

import numpy as np

from ._base import ConstantKernel, Kernel, WhiteKernel, _check_real
from ._dot_product import DotProduct, Exponential, Linear, Polynomial, Sigmoid
from ._periodic import ExpSineSquared
from ._stationary import RBF, GammaExponential, Matern, RationalQuadratic

__all__ = ["KERNEL_NAMES", "get_kernel"]

_CLASSES = {
    "linear": Linear,
    "dot_product": DotProduct,
    "poly": Polynomial,
    "polynomial": Polynomial,
    "sigmoid": Sigmoid,
    "exponential": Exponential,
    "rbf": RBF,
    "matern": Matern,
    "rational_quadratic": RationalQuadratic,
    "periodic": ExpSineSquared,
    "exp_sine_squared": ExpSineSquared,
    "gamma_exponential": GammaExponential,
    "constant": ConstantKernel,
    "white": WhiteKernel,
}

#: The names ``get_kernel`` accepts.
KERNEL_NAMES = tuple(sorted(_CLASSES))


def _clone(kernel: Kernel) -> Kernel:
    new = type(kernel)(**kernel.get_params(deep=False))
    new._clone_children()
    return new


def get_kernel(kernel: str | Kernel, **params) -> Kernel:
    """A kernel object from a name (with its hyperparameters) or a copy of a kernel object.

    Parameters
    ----------
    kernel : str or Kernel
        A name in ``KERNEL_NAMES`` or a :class:`Kernel` (copied, never mutated; ``params``
        are then set on the copy, nested names such as ``k1__length_scale`` included).
    **params
        Constructor arguments of the named kernel. ``"rbf"`` also takes scikit-learn's
        ``gamma`` (``exp(-gamma ||x - y||^2)``, i.e. ``length_scale = 1 / sqrt(2 gamma)``).

    Returns
    -------
    Kernel

    Raises
    ------
    ValueError
        Unknown name, unknown parameter, or (for ``"rbf"``) ``gamma`` not finite and > 0.

    Examples
    --------
    >>> from mathlearn.kernels import get_kernel
    >>> get_kernel("rbf", gamma=0.5)
    RBF(length_scale=1.0, length_scale_bounds=(1e-05, 100000.0))
    >>> get_kernel("poly", degree=2, coef0=0.0)
    Polynomial(degree=2, gamma=1.0, coef0=0.0)
    """
    if isinstance(kernel, Kernel):
        out = _clone(kernel)
        if params:
            out.set_params(**params)
        return out
    if not isinstance(kernel, str) or kernel not in _CLASSES:
        raise ValueError(
            f"kernel must be a mathlearn.kernels.Kernel or one of {KERNEL_NAMES}; got {kernel!r}."
        )
    cls = _CLASSES[kernel]
    if cls is RBF and "gamma" in params:
        if "length_scale" in params:
            raise ValueError("give either gamma or length_scale for the rbf kernel, not both.")
        gamma = params.pop("gamma")
        try:
            gamma = _check_real(gamma, "gamma", positive=True)
        except ValueError:
            raise ValueError(f"gamma must be > 0 for the rbf kernel; got {gamma}.") from None
        params["length_scale"] = float(np.sqrt(0.5 / np.float64(gamma)))
    out = cls()
    out.set_params(**params)
    return out


# Named kernels that take scikit-learn's ``gamma`` / ``degree`` / ``coef0`` (with
# ``gamma=None`` meaning ``1 / n_features``, as scikit-learn's pairwise kernels do).
_GAMMA_DEFAULTS_TO_INV_FEATURES = {"rbf", "poly", "polynomial", "sigmoid"}


def build_kernel(kernel, gamma, degree, coef0, kernel_params, n_features) -> Kernel | None:
    """A kernel object from scikit-learn-style arguments (``None`` for ``"precomputed"``).

    Shared by the kernel estimators that take ``kernel``, ``gamma``, ``degree``, ``coef0``
    and ``kernel_params`` as scikit-learn's ``KernelRidge`` and ``Nystroem`` do: ``gamma``
    is ``exp(-gamma ||x - y||^2)`` for ``"rbf"`` and the scale of ``x^T y`` for ``"poly"`` and
    ``"sigmoid"`` (``None``: ``1 / n_features``); ``degree`` and ``coef0`` go to the
    polynomial and sigmoid kernels; ``kernel_params`` go to the kernel as they are (any
    name of :func:`mathlearn.kernels.get_kernel`, or a kernel object's own parameters).
    """
    params = dict(kernel_params or {})
    if isinstance(kernel, Kernel):
        return get_kernel(kernel, **params)
    if kernel == "precomputed":
        return None
    if kernel in _GAMMA_DEFAULTS_TO_INV_FEATURES:
        params.setdefault("gamma", 1.0 / n_features if gamma is None else float(gamma))
    elif kernel == "exponential" and gamma is not None:
        params.setdefault("gamma", float(gamma))
    if kernel in ("poly", "polynomial"):
        params.setdefault("degree", degree)
        params.setdefault("coef0", coef0)
    elif kernel == "sigmoid":
        params.setdefault("coef0", coef0)
    return get_kernel(kernel, **params)
