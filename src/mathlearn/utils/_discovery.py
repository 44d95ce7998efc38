"""Discovery of every public estimator, so common tests cannot forget a new one."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from sklearn.base import BaseEstimator

# Subpackages that hold no estimators, or whose import needs optional dependencies.
# ``recommender``: its models fit a users x items ``Ratings`` container, not the (X, y)
# contract of scikit-learn's checks (a row of X is not a sample); they keep scikit-learn's
# get_params / clone, and tests/recommender checks their parameter constraints and bad input.
_SKIP = {"report", "utils", "tests", "recommender"}


def all_estimators() -> list[tuple[str, type]]:
    """Return ``(name, class)`` for every public estimator class in mathlearn.

    An estimator is public when its subpackage lists it in ``__all__`` and it subclasses
    scikit-learn's ``BaseEstimator``. Abstract classes and names starting with ``_`` are left
    out. The list is sorted by name.

    Returns
    -------
    list of (str, type)
        The estimators, by name.

    Examples
    --------
    >>> from mathlearn.utils import all_estimators
    >>> dict(all_estimators())["PCA"].__module__
    'mathlearn.decomposition._pca'
    """
    import mathlearn

    found: dict[str, type] = {}
    for info in pkgutil.iter_modules(mathlearn.__path__):
        if info.name.startswith("_") or info.name in _SKIP or not info.ispkg:
            continue
        module = importlib.import_module(f"mathlearn.{info.name}")
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name, None)
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseEstimator)
                and not inspect.isabstract(obj)
                and not name.startswith("_")
            ):
                found[name] = obj
    return sorted(found.items())
