"""scikit-learn's common estimator checks, run over every public estimator.

Estimators are discovered from the subpackages' ``__all__`` (``mathlearn.utils.all_estimators``),
so a new estimator is checked without anyone remembering to list it here. A class may set
``_common_test_params`` (constructor arguments that keep the checks fast, e.g. a small
``max_iter``) and ``_expected_failed_checks`` (check name -> reason) for checks whose
assumptions do not hold for it; each such entry must say why. An estimator whose
``ConvergenceWarning`` is the expected outcome on the checks' random data (the perceptron on
data that are not linearly separable) sets ``_common_test_convergence_warning_expected =
True``; the warning is then let through instead of failing the check.
"""

import warnings

from sklearn.utils.estimator_checks import parametrize_with_checks

from mathlearn.exceptions import ConvergenceWarning
from mathlearn.utils import all_estimators

ESTIMATORS = [cls(**getattr(cls, "_common_test_params", {})) for _, cls in all_estimators()]


def _expected_failed(estimator):
    return dict(getattr(type(estimator), "_expected_failed_checks", {}))


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed)
def test_sklearn_contract(estimator, check):
    with warnings.catch_warnings():
        if getattr(type(estimator), "_common_test_convergence_warning_expected", False):
            warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_discovery_finds_public_estimators():
    names = [name for name, _ in all_estimators()]
    assert names == sorted(set(names))
    for name, cls in all_estimators():
        assert cls.__module__.startswith("mathlearn."), name
        assert cls.__doc__, f"{name} has no docstring"
