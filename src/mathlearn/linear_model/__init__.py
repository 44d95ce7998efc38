"""Linear models: least squares, ridge (MAP), lasso and Bayesian linear regression.

Imperial "Mathematics for Inference and Machine Learning" §1.5–1.8; PRML ch. 3;
Stuttgart "Introduction to Machine Learning" ch. 2.
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
from ._ridge_dof import ridge_degrees_of_freedom
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
    "ridge_degrees_of_freedom",
]
