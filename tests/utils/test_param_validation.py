"""The declarative parameter validation: each constraint kind, messages, the fit hook."""

from numbers import Integral, Real

import numpy as np
import pytest

from mathlearn.base import BaseClassifier, BaseEstimator, _fit_context
from mathlearn.exceptions import InvalidParameterError
from mathlearn.utils._param_validation import (
    HasMethods,
    Hidden,
    Interval,
    Options,
    RealNotInt,
    StrOptions,
    make_constraint,
    validate_parameter_constraints,
    validate_params,
)


@pytest.mark.parametrize(
    ("interval", "inside", "outside"),
    [
        (Interval(Integral, 1, None, closed="left"), [1, 2, np.int64(7)], [0, -1, 1.5, True]),
        (Interval(Real, 0, 1, closed="neither"), [0.5, 1e-300], [0, 1, np.nan, np.inf, False]),
        (Interval(Real, 0, None, closed="left"), [0, 3, 1e300], [-1e-300, np.inf, np.nan]),
        (Interval(Real, None, None, closed="both"), [-1e300, 0.0], [np.nan, np.inf, "1"]),
        (Interval(RealNotInt, 0, 1, closed="right"), [0.5, 1.0, np.float32(0.2)], [1, 0.0]),
    ],
)
def test_interval_membership(interval, inside, outside):
    for val in inside:
        assert interval.is_satisfied_by(val), val
    for val in outside:
        assert not interval.is_satisfied_by(val), val


def test_interval_description():
    assert str(Interval(Integral, 1, None, closed="left")) == "an int in the range [1, inf)"
    assert str(Interval(Real, 0, 1, closed="both")) == "a float in the range [0, 1]"
    assert str(Interval(Real, None, 0, closed="right")) == "a float in the range (-inf, 0]"


def test_interval_rejects_bad_definitions():
    with pytest.raises(ValueError, match="below the left bound"):
        Interval(Real, 1, 0, closed="both")
    with pytest.raises(TypeError, match="bounds of an Integral"):
        Interval(Integral, 0.5, None, closed="left")
    with pytest.raises(ValueError, match="closed"):
        Interval(Real, 0, 1, closed="open")


class _Classifier(BaseClassifier):
    def fit(self, X, y):
        return self


def test_string_and_type_constraints():
    assert StrOptions({"a", "b"}).is_satisfied_by("a")
    assert not StrOptions({"a", "b"}).is_satisfied_by("c")
    assert not StrOptions({"a"}).is_satisfied_by(["a"])  # unhashable: no TypeError
    assert Options(Real, {0.5}).is_satisfied_by(0.5)
    assert HasMethods(["fit", "predict"]).is_satisfied_by(_Classifier())
    assert not HasMethods("transform").is_satisfied_by(_Classifier())
    rs = make_constraint("random_state")
    for ok in (None, 0, 2**32 - 1, np.random.default_rng(0), np.random.RandomState(0)):
        assert rs.is_satisfied_by(ok)
    for bad in (-1, 2**32, True, 1.5, "0"):
        assert not rs.is_satisfied_by(bad)
    assert make_constraint("boolean").is_satisfied_by(np.True_)
    assert not make_constraint("boolean").is_satisfied_by(1)
    assert make_constraint("array-like").is_satisfied_by([1, 2])
    assert not make_constraint("array-like").is_satisfied_by("ab")
    assert make_constraint(callable).is_satisfied_by(len)
    with pytest.raises(ValueError, match="Unknown constraint"):
        make_constraint("no such kind")


def test_message_lists_every_visible_form():
    constraints = {
        "solver": [StrOptions({"full", "auto"}), Interval(Integral, 1, 3, closed="both"), None],
        "hidden": [Hidden(StrOptions({"internal"})), Interval(Real, 0, None, closed="left")],
    }
    with pytest.raises(InvalidParameterError) as err:
        validate_parameter_constraints(constraints, {"solver": "bad"}, "Thing")
    assert str(err.value) == (
        "The 'solver' parameter of Thing must be a str among {'auto', 'full'}, an int in the "
        "range [1, 3] or None. Got 'bad' instead."
    )
    validate_parameter_constraints(constraints, {"hidden": "internal"}, "Thing")
    with pytest.raises(InvalidParameterError, match="must be a float in the range") as err:
        validate_parameter_constraints(constraints, {"hidden": -1.0}, "Thing")
    assert "internal" not in str(err.value)
    # an InvalidParameterError is both a ValueError and a TypeError
    assert isinstance(err.value, ValueError)
    assert isinstance(err.value, TypeError)


class _Toy(BaseEstimator):
    _parameter_constraints = {
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "anything": "no_validation",
    }

    def __init__(self, max_iter=10, tol=1e-3, anything=None):
        self.max_iter = max_iter
        self.tol = tol
        self.anything = anything

    @_fit_context
    def fit(self, X=None, y=None):
        self.fitted_ = True
        return self


@pytest.mark.parametrize(
    ("name", "value"),
    [("max_iter", 0), ("max_iter", "10"), ("max_iter", np.nan), ("tol", "abc"), ("tol", -1)],
)
def test_fit_context_validates_before_fit(name, value):
    est = _Toy(**{name: value})
    with pytest.raises(InvalidParameterError, match=rf"The '{name}' parameter of _Toy must be"):
        est.fit()
    assert not hasattr(est, "fitted_")


def test_fit_context_accepts_valid_and_unvalidated():
    assert _Toy(max_iter=np.int32(3), tol=0, anything=object()).fit().fitted_


def test_validate_params_on_functions():
    @validate_params({"k": [Interval(Integral, 0, None, closed="left")], "how": [str]})
    def f(x, k=1, *, how="a", **kwargs):
        return k

    assert f(None, 2, how="b", extra=1) == 2
    with pytest.raises(InvalidParameterError, match=r"The 'k' parameter of .*f must be"):
        f(None, -1)
    with pytest.raises(InvalidParameterError, match="'how'"):
        f(None, how=3)


class _Nearest(BaseClassifier):
    """Two 1-D Gaussians with unit variance: log p(x, c) = -(x - mu_c)^2 / 2 + log prior."""

    def fit(self, X, y):
        y_idx = self._encode_labels(y)
        X = np.asarray(X, dtype=float)
        self.n_features_in_ = X.shape[1]
        self.means_ = np.array([X[y_idx == c, 0].mean() for c in range(len(self.classes_))])
        return self

    def _joint_log_likelihood(self, X):
        return -0.5 * (X[:, :1] - self.means_[None, :]) ** 2


def test_base_classifier_from_joint_log_likelihood():
    X = np.array([[-1.0], [-2.0], [1.0], [2.0]])
    y = np.array(["a", "a", "b", "b"])
    clf = _Nearest().fit(X, y)
    Xq = np.array([[-0.5], [0.25], [800.0]])
    # posterior of "b": 1 / (1 + exp(-(x mu_b - x mu_a))) with mu = -1.5, 1.5 -> sigmoid(3x)
    expected = 1.0 / (1.0 + np.exp(-3.0 * Xq[:, 0]))
    np.testing.assert_allclose(clf.predict_proba(Xq)[:, 1], expected, rtol=1e-15)
    np.testing.assert_allclose(clf.decision_function(Xq), 3.0 * Xq[:, 0], rtol=1e-14)
    assert np.all(np.isfinite(clf.predict_log_proba(Xq)))  # far from the data: no overflow
    assert list(clf.predict(Xq)) == ["a", "b", "b"]
    with pytest.raises(ValueError, match="at least 2 classes; got 1 class"):
        _Nearest().fit(X, ["a"] * 4)


def test_check_sample_weight():
    from mathlearn.utils.validation import check_sample_weight

    X = np.zeros((3, 2))
    np.testing.assert_array_equal(check_sample_weight(2.0, X), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(check_sample_weight([1, 0, 2], X), [1.0, 0.0, 2.0])
    for bad, msg in [
        ([1.0, 2.0], "3 samples"),
        ([[1.0, 2.0, 3.0]], "1-D"),
        ([1.0, np.nan, 1.0], "NaN"),
        ([1.0, -1.0, 1.0], "non-negative"),
        ([0.0, 0.0, 0.0], "non-zero weight"),
    ]:
        with pytest.raises(ValueError, match=msg):
            check_sample_weight(bad, X)


def test_settings_that_passed_are_not_checked_again_and_bad_ones_always_fail():
    # Validation is a function of the values: plain settings (numbers, strings, None,
    # tuples of them) that passed are remembered per class; anything else, and any setting
    # not seen, is checked.
    from mathlearn.utils._param_validation import _Constraint

    calls = []

    class Counted(_Constraint):
        def is_satisfied_by(self, val):
            calls.append(val)
            return (type(val) is int and val >= 1) or type(val) is list

        def __str__(self):
            return "an int >= 1 or a list"

    class Model(BaseEstimator):
        _parameter_constraints = {"n": [Counted()]}

        def __init__(self, n=1):
            self.n = n

        @_fit_context
        def fit(self, X=None, y=None):
            return self

    Model(n=3).fit()
    Model(n=3).fit()
    assert calls == [3]
    with pytest.raises(InvalidParameterError, match="'n' parameter of Model"):
        Model(n=0).fit()
    with pytest.raises(InvalidParameterError):
        Model(n=0).fit()  # a failure is never remembered
    with pytest.raises(InvalidParameterError):
        Model(n=3.0).fit()  # 3.0 == 3, but the type is part of the setting
    with pytest.raises(InvalidParameterError):
        Model(n=True).fit()  # True == 1 likewise
    calls.clear()
    Model(n=[1]).fit()
    Model(n=[1]).fit()
    assert calls == [[1], [1]]  # objects (here a list) are checked every time


def test_constraint_lists_are_read_again_when_changed_in_place():
    # The constraint objects of a list are made once and reused; a list changed in place
    # (an item replaced or added) is read again, so the check follows the list as it is.
    constraints = {"n": [Interval(Integral, 1, None, closed="left")]}
    validate_parameter_constraints(constraints, {"n": 3}, "f")
    with pytest.raises(InvalidParameterError, match="'n' parameter of f"):
        validate_parameter_constraints(constraints, {"n": "a"}, "f")
    constraints["n"].append(StrOptions({"a"}))
    validate_parameter_constraints(constraints, {"n": "a"}, "f")
    constraints["n"][1] = StrOptions({"b"})
    with pytest.raises(InvalidParameterError, match="'n' parameter of f"):
        validate_parameter_constraints(constraints, {"n": "a"}, "f")
