"""Model selection and assessment.

Bayesian model selection by the marginal likelihood (Imperial "Mathematics for Inference and
Machine Learning" §2), the test loss with its standard error, k-fold cross-validation with the
unbiased variance of the fold losses and the one-standard-error rule, the
train/validation/test protocol, and bias-variance analysis (the ridge closed forms and a Monte
Carlo decomposition for any regressor).
"""

from ._assessment import (
    CVLoss,
    CVPath,
    LossEstimate,
    cross_validate_loss,
    cross_validation_path,
    loss_estimate,
    train_validation_test_split,
)
from ._bias_variance import (
    BiasVariance,
    EstimatorError,
    bias_variance_decomposition,
    ridge_estimator_error,
)
from ._evidence import BayesianModelSelection

__all__ = [
    "BayesianModelSelection",
    "BiasVariance",
    "CVLoss",
    "CVPath",
    "EstimatorError",
    "LossEstimate",
    "bias_variance_decomposition",
    "cross_validate_loss",
    "cross_validation_path",
    "loss_estimate",
    "ridge_estimator_error",
    "train_validation_test_split",
]
