"""mathlearn: machine-learning methods implemented from the mathematics of the lecture notes.

Each family of methods lives in its own subpackage, named as scikit-learn names it
(``mathlearn.linear_model``, ``mathlearn.decomposition``, ...). Every estimator follows
scikit-learn's estimator contract; probabilistic models also return posterior objects.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
