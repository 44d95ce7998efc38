"""Support vector machines solved in their duals by sequential minimal optimisation.

``SVC`` and ``NuSVC`` (classification, one-vs-one for several classes), ``SVR`` and
``NuSVR`` (regression), and the kernel perceptron. The solver (``mathlearn.svm._smo``)
handles a box plus at most one equality constraint, with second-order working-set
selection, a kernel-column cache and shrinking.
"""

from ._classes import SVC, SVR, NuSVC, NuSVR
from ._linear import LinearSVC
from ._perceptron import KernelPerceptron

__all__ = ["SVC", "SVR", "KernelPerceptron", "LinearSVC", "NuSVC", "NuSVR"]
