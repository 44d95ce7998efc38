"""Tests of the Laplace approximation against exact and numerically integrated references."""

import math
import warnings

import numpy as np
import pytest
from scipy import integrate, optimize, stats
from scipy.special import expit, log_expit

from mathlearn import autodiff as ad
from mathlearn.exceptions import InvalidParameterError
from mathlearn.inference import laplace_approximation


def _gaussian_model(seed=0):
    """Prior N(m0, S0) on theta in R^3, y = A theta + N(0, s2 I) with five observations."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((5, 3))
    m0 = np.array([0.5, -1.0, 2.0])
    B = rng.standard_normal((3, 3))
    S0 = B @ B.T + np.eye(3)
    s2 = 0.3
    y = rng.standard_normal(5)
    return A, m0, S0, s2, y


@pytest.mark.parametrize("derivatives", ["autodiff", "given"])
@pytest.mark.parametrize("method", ["newton", "lbfgs"])
def test_conjugate_gaussian_is_exact(derivatives, method):
    # log p(theta, y) is quadratic: the Laplace approximation is the exact posterior and its
    # evidence the exact marginal likelihood N(y | A m0, s2 I + A S0 A^T) (PRML eq. 2.113-2.117).
    A, m0, S0, s2, y = _gaussian_model()
    P0 = np.linalg.inv(S0)  # reference only
    c = -0.5 * np.linalg.slogdet(2 * np.pi * S0)[1] - 0.5 * len(y) * math.log(2 * np.pi * s2)

    def log_joint(t):
        r = t - m0
        e = y - A @ t
        return c - 0.5 * ad.sum(r * (P0 @ r)) - 0.5 * ad.sum(e * e) / s2

    grad = hess = None
    if derivatives == "given":

        def grad(t):
            return -P0 @ (t - m0) + A.T @ (y - A @ t) / s2

        def hess(t):
            return -P0 - A.T @ A / s2

    res = laplace_approximation(log_joint, np.zeros(3), grad, hess, method=method, tol=1e-11)
    P = P0 + A.T @ A / s2
    mean = np.linalg.solve(P, P0 @ m0 + A.T @ y / s2)
    cov = np.linalg.inv(P)
    evidence = stats.multivariate_normal(A @ m0, s2 * np.eye(5) + A @ S0 @ A.T).logpdf(y)
    assert res.converged
    # Conditioning of P is modest (cond < 1e3): rounding and the 1e-11 gradient tolerance
    # leave errors far below 1e-8.
    np.testing.assert_allclose(res.mode, mean, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(res.posterior.mean, mean, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(res.posterior.cov, cov, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(res.hessian, P, rtol=1e-12)
    assert res.log_evidence == pytest.approx(evidence, abs=1e-10)


# One-weight logistic model with a N(0, v0) prior; the likelihood is raised to the power k
# (the data replicated k times), so the posterior concentrates as k grows.
_X1 = np.array([0.5, -1.2, 2.0, 0.3, -0.7, 1.1])
_Y1 = np.array([1.0, -1.0, 1.0, -1.0, 1.0, 1.0])
_V0 = 2.0


def _lj1(w, k):
    return (
        k * np.sum(log_expit(_Y1 * w * _X1)) - 0.5 * w * w / _V0 - 0.5 * math.log(2 * np.pi * _V0)
    )


def _lj1_ad(k):
    return lambda w: (
        k * ad.sum(-ad.softplus(-_Y1 * w[0] * _X1))
        - 0.5 * w[0] * w[0] / _V0
        - 0.5 * math.log(2 * np.pi * _V0)
    )


def _laplace1_reference(k):
    """Mode by bracketing the derivative, curvature by hand: the Laplace formula on its own."""

    def d1(w):
        return k * np.sum(_Y1 * _X1 * expit(-_Y1 * w * _X1)) - w / _V0

    w_hat = optimize.brentq(d1, -50, 50, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    s = expit(_Y1 * w_hat * _X1)
    h = k * np.sum(_X1**2 * s * (1 - s)) + 1 / _V0
    return w_hat, h, _lj1(w_hat, k) + 0.5 * math.log(2 * np.pi) - 0.5 * math.log(h)


def _evidence1_quad(k, w_hat, h):
    sd = 1 / math.sqrt(h)
    ref = _lj1(w_hat, k)
    val, _ = integrate.quad(
        lambda w: math.exp(_lj1(w, k) - ref),
        w_hat - 40 * sd,
        w_hat + 40 * sd,
        points=[w_hat],
        epsabs=0,
        epsrel=1e-13,
        limit=200,
    )
    return ref + math.log(val)


@pytest.mark.parametrize("k", [1, 10, 100])
def test_1d_matches_independent_laplace_formula(k):
    w_hat, h, laplace = _laplace1_reference(k)
    res = laplace_approximation(_lj1_ad(k), 0.0, tol=1e-12)
    assert res.mode[0] == pytest.approx(w_hat, rel=1e-10, abs=1e-12)
    assert res.posterior.var[0] == pytest.approx(1 / h, rel=1e-10)
    # Both modes are exact to ~1e-15 relative; what is left is rounding in sums of O(k)
    # terms.
    assert res.log_evidence == pytest.approx(laplace, abs=1e-11 * k)


def test_1d_laplace_error_shrinks_like_one_over_n():
    # log p(D) - Laplace = c / k + O(1 / k^2) for k-fold replicated data (the next term of
    # the Laplace expansion, PRML §4.4): going from k = 10 to k = 100 divides the error by
    # about 10; the band [5, 20] leaves room for the O(1/k) correction to that ratio.
    errs = {}
    for k in (1, 10, 100):
        res = laplace_approximation(_lj1_ad(k), 0.0, tol=1e-12)
        w_hat, h, _ = _laplace1_reference(k)
        errs[k] = _evidence1_quad(k, w_hat, h) - res.log_evidence
    assert abs(errs[1]) > abs(errs[10]) > abs(errs[100]) > 0
    assert 5 < errs[10] / errs[100] < 20
    # The numerical integral resolves the error: quad's relative tolerance 1e-13 is far below
    # the smallest error.
    assert abs(errs[100]) > 1e-8


_X2 = np.array([[1.0, 0.5], [1.0, -1.2], [1.0, 2.0], [1.0, 0.3], [1.0, -0.7], [1.0, 1.1]])
_Y2 = np.array([1.0, -1.0, 1.0, -1.0, -1.0, 1.0])


def _lj2(w, k):
    return k * np.sum(log_expit(_Y2 * (_X2 @ w))) - 0.5 * w @ w / _V0 - math.log(2 * np.pi * _V0)


def _laplace2_reference(k):
    def neg(w):
        return -_lj2(w, k)

    def neg_grad(w):
        return -(k * _X2.T @ (_Y2 * expit(-_Y2 * (_X2 @ w))) - w / _V0)

    opt = optimize.minimize(neg, np.zeros(2), jac=neg_grad, method="BFGS", options={"gtol": 1e-12})
    w_hat = opt.x

    def hess(w):
        s = expit(_X2 @ w)
        return k * (_X2.T * (s * (1 - s))) @ _X2 + np.eye(2) / _V0

    # BFGS stalls near gradient 1e-9 in floating point; hand-written Newton steps finish the
    # job (the log det H term of the evidence is first order in the mode error).
    for _ in range(3):
        w_hat = w_hat - np.linalg.solve(hess(w_hat), neg_grad(w_hat))
    H = hess(w_hat)
    return w_hat, H, _lj2(w_hat, k) + math.log(2 * np.pi) - 0.5 * np.linalg.slogdet(H)[1]


def _evidence2_dblquad(k, w_hat, H):
    sd = np.sqrt(np.diag(np.linalg.inv(H)))
    ref = _lj2(w_hat, k)
    val, _ = integrate.dblquad(
        lambda b, a: math.exp(_lj2(np.array([a, b]), k) - ref),
        w_hat[0] - 14 * sd[0],
        w_hat[0] + 14 * sd[0],
        w_hat[1] - 14 * sd[1],
        w_hat[1] + 14 * sd[1],
        epsabs=0,
        epsrel=1e-10,
    )
    return ref + math.log(val)


def test_2d_against_numerical_integral():
    errs = {}
    for k in (1, 10):

        def lj(w, k=k):
            return (
                k * ad.sum(-ad.softplus(-_Y2 * (_X2 @ w)))
                - 0.5 * ad.sum(w * w) / _V0
                - math.log(2 * np.pi * _V0)
            )

        # Rounding puts a floor of ~1e-14 k on the gradient norm; 1e-9 is above it.
        res = laplace_approximation(lj, np.zeros(2), tol=1e-9)
        w_hat, H, laplace = _laplace2_reference(k)
        np.testing.assert_allclose(res.mode, w_hat, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(res.hessian, H, rtol=1e-8)
        assert res.log_evidence == pytest.approx(laplace, abs=1e-10 * k)
        errs[k] = _evidence2_dblquad(k, w_hat, H) - res.log_evidence
    # O(1/k): a tenfold concentration divides the error by about ten.
    assert abs(errs[1]) > abs(errs[10]) > 1e-7
    assert 5 < errs[1] / errs[10] < 20


def test_lbfgs_for_large_dimension_agrees_with_newton():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((100, 205))
    y = np.where(rng.random(100) < 0.5, -1.0, 1.0)

    def lj(w):
        return float(np.sum(log_expit(y * (X @ w))) - 0.5 * w @ w)

    def grad(w):
        return X.T @ (y * expit(-y * (X @ w))) - w

    def hess(w):
        s = expit(X @ w)
        return -(X.T * (s * (1 - s))) @ X - np.eye(w.size)

    auto = laplace_approximation(lj, np.zeros(205), grad, hess, tol=1e-10)  # d > 200: L-BFGS
    newt = laplace_approximation(lj, np.zeros(205), grad, hess, method="newton", tol=1e-10)
    # Both stop at gradient 1e-10 and the Hessian's smallest eigenvalue is >= 1 (the prior),
    # so the modes differ by at most ~1e-10 per entry.
    np.testing.assert_allclose(auto.mode, newt.mode, atol=1e-9)
    assert auto.log_evidence == pytest.approx(newt.log_evidence, abs=1e-9)


def test_not_a_maximum_raises():
    # log_joint = +||t||^2/2 has a stationary point at 0 that is a minimum.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="not a strict maximum"):
            laplace_approximation(
                lambda t: 0.5 * ad.sum(t * t), np.zeros(2), method="newton", max_iter=1
            )


def test_bad_inputs():
    with pytest.raises(ValueError, match="NaN"):
        laplace_approximation(lambda t: -ad.sum(t * t), np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match="1-D"):
        laplace_approximation(lambda t: -ad.sum(t * t), np.zeros((2, 2)))
    with pytest.raises(InvalidParameterError, match="method"):
        laplace_approximation(lambda t: -ad.sum(t * t), np.zeros(2), method="bfgs")
