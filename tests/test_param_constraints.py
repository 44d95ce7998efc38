"""Every public estimator declares its hyperparameters' constraints, and fit enforces them.

Every estimator declares ``_parameter_constraints``; the declared names must be exactly the
constructor's, and each
parameter set to a value that satisfies none of its constraints (an object of an unrelated
type; a number just outside an interval; NaN; a string that is not an option) must make
``fit`` raise :class:`~mathlearn.exceptions.InvalidParameterError` naming the parameter and
the estimator, before any data is looked at.
"""

from numbers import Integral

import numpy as np
import pytest

from mathlearn.base import clone
from mathlearn.exceptions import InvalidParameterError
from mathlearn.utils import all_estimators
from mathlearn.utils._param_validation import Interval, Options, make_constraint

ESTIMATORS = [cls for _, cls in all_estimators()]


def _declares(cls):
    return bool(getattr(cls, "_parameter_constraints", {}))


def _invalid_candidates(constraints):
    """Values that may violate a constraint list; the test keeps those that violate all."""
    yield type("BadType", (), {})()
    for c in constraints:
        c = make_constraint(c)
        if isinstance(c, Interval):
            step = 1 if c.type is Integral else 1e-3 * max(1.0, abs(c.left or c.right or 1))
            if c.left is not None:
                yield c.left - step
                yield c.left
            if c.right is not None:
                yield c.right + step
                yield c.right
            yield np.nan
            yield np.inf
            yield True
        if isinstance(c, Options):
            yield "not-an-option" if c.type is str else object()


def _data():
    rng = np.random.default_rng(0)
    return rng.uniform(size=(20, 5)), rng.integers(0, 2, size=20)


@pytest.mark.parametrize("Est", [c for c in ESTIMATORS if _declares(c)], ids=lambda c: c.__name__)
def test_constraints_name_every_parameter(Est):
    est = Est(**getattr(Est, "_common_test_params", {}))
    assert set(Est._parameter_constraints) == set(est.get_params(deep=False))


@pytest.mark.parametrize("Est", [c for c in ESTIMATORS if _declares(c)], ids=lambda c: c.__name__)
def test_invalid_parameters_raise_before_fitting(Est):
    X, y = _data()
    base = Est(**getattr(Est, "_common_test_params", {}))
    for name, entry in Est._parameter_constraints.items():
        if entry == "no_validation":
            continue
        objs = [make_constraint(c) for c in entry]
        for value in _invalid_candidates(entry):
            if any(c.is_satisfied_by(value) for c in objs):
                continue
            est = clone(base).set_params(**{name: value})
            for method in ("fit", "partial_fit", "fit_transform", "fit_predict"):
                if not hasattr(est, method):
                    continue
                with pytest.raises(
                    InvalidParameterError, match=rf"The '{name}' parameter of {Est.__name__}"
                ):
                    getattr(est, method)(X, y)


def test_every_public_estimator_declares_its_constraints():
    missing = [cls.__name__ for cls in ESTIMATORS if not _declares(cls)]
    assert not missing, f"estimators without _parameter_constraints: {missing}"
