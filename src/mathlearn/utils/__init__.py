"""Shared numerical building blocks: validation, linear algebra, extended maths, graphs.

The public modules are ``mathlearn.utils.validation``, ``mathlearn.utils.linalg``,
``mathlearn.utils.extmath`` and ``mathlearn.utils.graph``; ``all_estimators`` lists every
public estimator of the library.
"""

from ._discovery import all_estimators

__all__ = ["all_estimators"]
