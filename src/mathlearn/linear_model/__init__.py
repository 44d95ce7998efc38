"""Linear models: least squares, ridge (MAP), lasso and Bayesian linear regression.

Spec 000 §2.D–2.G, 001 M10–M17, 004 §2.1.
"""

from ._bayes import BayesianLinearRegression
from ._bayes_logistic import BayesianLogisticRegression
from ._coordinate_descent import ElasticNet, Lasso, lasso_path
from ._kernel_logistic import KernelLogisticRegression
from ._least_squares_classifier import LeastSquaresClassifier, one_hot
from ._linear_regression import LinearRegression
from ._logistic import LogisticRegression
from ._perceptron import Perceptron
from ._ridge import Ridge
from ._sgd import SGDRegressor
from ._variational import VariationalLinearRegression

__all__ = [
    "BayesianLinearRegression",
    "BayesianLogisticRegression",
    "ElasticNet",
    "KernelLogisticRegression",
    "Lasso",
    "LeastSquaresClassifier",
    "LinearRegression",
    "LogisticRegression",
    "Perceptron",
    "Ridge",
    "SGDRegressor",
    "VariationalLinearRegression",
    "lasso_path",
    "one_hot",
]
