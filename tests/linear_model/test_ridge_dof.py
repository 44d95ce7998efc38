"""df(lambda) of ridge against the trace of the hat matrix formed directly."""

import numpy as np
import pytest

from mathlearn.linear_model import Ridge, ridge_degrees_of_freedom
from mathlearn.utils._param_validation import InvalidParameterError


def _trace_hat(X, lam, fit_intercept):
    Xc = X - X.mean(axis=0) if fit_intercept else X
    H = Xc @ np.linalg.solve(Xc.T @ Xc + lam * np.eye(X.shape[1]), Xc.T)
    return np.trace(H) + (1.0 if fit_intercept else 0.0)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_equals_trace_of_hat_matrix(fit_intercept):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 6)) @ np.diag([5.0, 2.0, 1.0, 0.5, 0.1, 0.01])
    lams = np.array([1e-3, 0.1, 1.0, 10.0, 1e4])
    df = ridge_degrees_of_freedom(X, lams, fit_intercept=fit_intercept)
    ref = [_trace_hat(X, lam, fit_intercept) for lam in lams]
    np.testing.assert_allclose(df, ref, rtol=1e-10)
    assert np.all(np.diff(df) < 0)  # decreasing in lambda


def test_limits_and_the_fit_it_describes():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 4))
    X = np.column_stack([X, X[:, 0] + X[:, 1]])  # rank 4 after centring
    assert ridge_degrees_of_freedom(X, 0.0) == pytest.approx(5.0)  # rank + intercept
    assert ridge_degrees_of_freedom(X, 1e12) == pytest.approx(1.0, abs=1e-9)
    # tr H is the sum of d y_hat_i / d y_i: the ridge fit is linear in y.
    y = rng.standard_normal(30)
    model = Ridge(alpha=2.0).fit(X, y)
    jac = np.empty(30)
    for i in range(30):
        e = np.zeros(30)
        e[i] = 1.0
        jac[i] = Ridge(alpha=2.0).fit(X, y + e).predict(X)[i] - model.predict(X)[i]
    assert jac.sum() == pytest.approx(ridge_degrees_of_freedom(X, 2.0), rel=1e-9)


def test_scale_and_offset_invariance_and_bad_input():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((25, 3))
    ref = ridge_degrees_of_freedom(X, 0.7)
    s = 2.0**-400
    assert ridge_degrees_of_freedom(X * s, 0.7 * s * s) == pytest.approx(ref, rel=1e-12)
    assert ridge_degrees_of_freedom(X + 1e9, 0.7) == pytest.approx(ref, rel=1e-6)
    with pytest.raises((ValueError, InvalidParameterError)):
        ridge_degrees_of_freedom(X, -1.0)
    with pytest.raises(ValueError):
        ridge_degrees_of_freedom(np.full((3, 2), np.nan), 1.0)
