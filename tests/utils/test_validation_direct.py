"""The direct route of ``check_array`` / ``validate_data`` against scikit-learn's functions.

For every input, ours and scikit-learn's must give the same outcome: the same values returned
(and ``X`` itself where the direct route answers), the same ``n_features_in_`` and
``feature_names_in_`` afterwards, or the same exception with the same message, or the same
warning.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.utils import check_array as sk_check_array
from sklearn.utils.validation import validate_data as sk_validate_data

from mathlearn.base import BaseEstimator
from mathlearn.utils.validation import all_finite, check_array, validate_data


class _Est(BaseEstimator):
    def __init__(self, a=1):
        self.a = a


def _outcome(fn, *args, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = ("ok", fn(*args, **kw))
        except Exception as exc:  # the comparison is the point: any exception, same message
            out = ("raised", type(exc), str(exc))
    return out, [(w.category, str(w.message)) for w in caught]


def _same(a, b):
    (ra, wa), (rb, wb) = a, b
    assert wa == wb
    assert ra[0] == rb[0]
    if ra[0] == "raised":
        assert ra[1:] == rb[1:]
        return
    va, vb = ra[1], rb[1]
    va, vb = (va, vb) if isinstance(va, tuple) else ((va,), (vb,))
    for x, y in zip(va, vb, strict=True):
        assert type(x) is type(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)


rng = np.random.default_rng(0)
X64 = rng.standard_normal((6, 3))
XF = np.asfortranarray(X64)
X32 = X64.astype(np.float32)
X_NAN = X64.copy()
X_NAN[2, 1] = np.nan
X_INF = X64.copy()
X_INF[0, 0] = -np.inf
X_HUGE = np.full((6, 3), 1e308)  # finite, but its sum overflows
Y = rng.standard_normal(6)
Y_NAN = Y.copy()
Y_NAN[3] = np.nan

X_CASES = {
    "float64": X64,
    "fortran": XF,
    "float32": X32,
    "nan": X_NAN,
    "inf": X_INF,
    "huge": X_HUGE,
    "strided": X64[::2],
    "one row": X64[:1],
    "empty rows": X64[:0],
    "no columns": X64[:, :0],
    "1-D": X64[:, 0],
    "3-D": X64.reshape(2, 3, 3),
    "ints": np.arange(12).reshape(4, 3),
    "list": X64.tolist(),
    "memmap-like subclass": X64.view(np.matrix),
}
PARAMS = [
    {},
    {"dtype": np.float64},
    {"dtype": [np.float64, np.float32]},
    {"dtype": np.float32},
    {"ensure_all_finite": False},
    {"ensure_all_finite": "allow-nan"},
    {"ensure_min_samples": 2},
    {"ensure_2d": False},
    {"order": "C"},
    {"copy": True},
]


@pytest.mark.parametrize("params", PARAMS, ids=str)
@pytest.mark.parametrize("name", X_CASES)
def test_check_array_as_sklearn(name, params):
    X = X_CASES[name]
    _same(_outcome(check_array, X, **params), _outcome(sk_check_array, X, **params))


def test_check_array_direct_route_returns_the_array():
    for X in (X64, XF, X32[:, :2], X64[::2]):
        assert check_array(X) is X
    assert check_array(X32, dtype=[np.float64, np.float32]) is X32
    column = X64[:, 0]
    assert check_array(column, ensure_2d=False) is column


Y_CASES = {
    "float": Y,
    "nan": Y_NAN,
    "ints": np.arange(6),
    "bools": np.arange(6) % 2 == 0,
    "strings": np.array(list("abcabc")),
    "objects": np.array([1.0, 2, 3, 4, 5, 6], dtype=object),
    "column": Y[:, None],
    "two columns": np.c_[Y, Y],
    "no columns": Y[:, None][:, :0],
    "short": Y[:5],
    "list": Y.tolist(),
    "none": None,
}


@pytest.mark.parametrize("params", [{}, {"y_numeric": True}, {"multi_output": True}], ids=str)
@pytest.mark.parametrize("yname", Y_CASES)
@pytest.mark.parametrize("xname", ["float64", "nan", "float32", "one row"])
def test_validate_data_fit_as_sklearn(xname, yname, params):
    X, y = X_CASES[xname], Y_CASES[yname]
    ours, theirs = _Est(), _Est()
    _same(
        _outcome(validate_data, ours, X, y, dtype=np.float64, **params),
        _outcome(sk_validate_data, theirs, X, y, dtype=np.float64, **params),
    )
    assert getattr(ours, "n_features_in_", None) == getattr(theirs, "n_features_in_", None)


def test_validate_data_direct_route_sets_and_checks():
    est = _Est()
    Xv, yv = validate_data(est, X64, Y, y_numeric=True)
    assert Xv is X64 and yv is Y and est.n_features_in_ == 3
    assert validate_data(est, X64, reset=False) is X64
    with pytest.raises(ValueError, match="X has 2 features, but _Est is expecting 3"):
        validate_data(est, X64[:, :2], reset=False)


def test_feature_names_as_sklearn():
    frame = pd.DataFrame(X64, columns=["a", "b", "c"])
    for reset_with in (X64, X32):
        ours, theirs = _Est(), _Est()
        validate_data(ours, frame)
        sk_validate_data(theirs, frame)
        assert list(ours.feature_names_in_) == ["a", "b", "c"]
        # predict-time ndarray after a DataFrame fit: the same warning
        _same(
            _outcome(validate_data, ours, X64, reset=False),
            _outcome(sk_validate_data, theirs, X64, reset=False),
        )
        # a new fit on an ndarray drops the names
        validate_data(ours, reset_with, dtype=[np.float64, np.float32])
        sk_validate_data(theirs, reset_with, dtype=[np.float64, np.float32])
        assert not hasattr(ours, "feature_names_in_")
        assert not hasattr(theirs, "feature_names_in_")


def test_param_names_read_once_per_class():
    class Sub(_Est):
        def __init__(self, a=1, b=2):
            super().__init__(a)
            self.b = b

    assert _Est()._get_param_names() == ["a"]
    assert Sub()._get_param_names() == ["a", "b"]
    assert Sub().get_params() == {"a": 1, "b": 2}
    assert _Est().get_params() == {"a": 1}


def _last_nan(a):
    a[-1, -1] = np.nan
    return a


@pytest.mark.parametrize(
    "a",
    [
        X64,
        X_NAN,
        X_INF,
        X_HUGE,  # the sum overflows: the entries are tested
        np.r_[X_HUGE.ravel(), np.inf],
        np.r_[X_HUGE.ravel(), -X_HUGE.ravel()],  # +-1e308 pairs: a finite sum could mislead
        np.array([np.inf, -np.inf]),  # the sum is NaN
        np.full((3000, 700), 1e305),  # the sum overflows; several blocks of rows
        _last_nan(np.full((3000, 700), 1e305)),  # ... and a NaN in the last block
        np.ones((0, 4)),
        np.float64(3.0),
        X64.reshape(2, 3, 3),
        np.arange(12).reshape(3, 4),
    ],
    ids=range(13),
)
def test_all_finite_as_numpy(a):
    assert all_finite(a) == bool(np.isfinite(a).all())
