"""Support vector machines solved in their duals by sequential minimal optimisation.

``SVC`` and ``NuSVC`` (classification, one-vs-one for several classes), ``SVR`` and ``NuSVR``
(regression). The solver (``mathlearn.svm._smo``) handles a box plus at most one equality
constraint, with second-order working-set selection and a kernel-column cache.
"""

from ._classes import SVC, SVR, NuSVC, NuSVR

__all__ = ["SVC", "SVR", "NuSVC", "NuSVR"]
