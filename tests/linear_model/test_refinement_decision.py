"""LinearRegression refines its QR solution only where the conditioning calls for it.

The plain Householder QR solution is kept when Wedin's a priori bound on its forward error,
``eps kappa (2 ||z|| + (kappa + 1) ||r|| / ||X D||)`` for the equilibrated coefficients ``z``,
is below ``2^-48`` of the largest coefficient; otherwise Björck's refinement with
doubled-precision residuals runs. Either way the coefficients must agree with the exact
least-squares solution of the float64 data (mpmath at 80 digits).
"""

import mpmath
import numpy as np
import pytest

from mathlearn.linear_model import LinearRegression

SKIP_TOL = 2.0**-48


def _mp_lstsq(A, y):
    with mpmath.workdps(80):
        M = mpmath.matrix(A.tolist())
        b = mpmath.matrix(y.tolist())
        sol = mpmath.lu_solve(M.T * M, M.T * b)
        return np.array([float(v) for v in sol])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_well_conditioned_design_is_not_refined_and_is_accurate(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 4))
    y = X @ np.array([1.0, -2.0, 0.5, 3.0]) + 0.7 + 1e-3 * rng.normal(size=120)
    model = LinearRegression().fit(X, y)
    assert model.n_iter_ == 0
    ref = _mp_lstsq(np.hstack([X, np.ones((120, 1))]), y)
    coef = np.append(model.coef_, model.intercept_)
    # the decision's own guarantee: error below 2^-48 of the largest coefficient
    assert np.max(np.abs(coef - ref)) <= SKIP_TOL * np.max(np.abs(ref))


def test_noise_dominated_response_is_refined():
    # ||r|| >> ||X w||: the kappa^2 ||r|| term of the bound calls for refinement
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 3)) + 5.0
    y = rng.normal(size=80)
    model = LinearRegression().fit(X, y)
    assert model.n_iter_ >= 1
    ref = _mp_lstsq(np.hstack([X, np.ones((80, 1))]), y)
    coef = np.append(model.coef_, model.intercept_)
    assert np.max(np.abs(coef - ref)) <= 8 * np.finfo(float).eps * np.max(np.abs(ref))


def test_ill_conditioned_design_is_refined():
    rng = np.random.default_rng(0)
    x = rng.uniform(-9, -3, 50)
    Phi = np.vander(x, 11, increasing=True)
    y = np.sin(x) + 0.1 * rng.normal(size=50)
    model = LinearRegression(fit_intercept=False).fit(Phi, y)
    assert model.n_iter_ >= 1
    ref = _mp_lstsq(Phi, y)
    assert np.all(np.abs(model.coef_ - ref) <= 1e-7 * np.abs(ref))


def test_noisy_well_conditioned_design_uses_the_two_norm_bound():
    # Gaussian 500 x 10 design, noise of a sixth of the signal: LAPACK's 1-norm estimate of
    # kappa (about 3) puts the bound just above 2^-48, the singular values of R (kappa_2
    # about 2.3) just below; no refinement, and the QR solution meets the bound's guarantee.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((500, 10))
    y = X @ rng.standard_normal(10) + 0.5 * rng.standard_normal(500)
    model = LinearRegression().fit(X, y)
    ref = _mp_lstsq(np.hstack([X, np.ones((500, 1))]), y)
    coef = np.append(model.coef_, model.intercept_)
    assert np.max(np.abs(coef - ref)) <= SKIP_TOL * np.max(np.abs(ref))
    assert model.n_iter_ == 0
