"""Losses: the notes' values, derivatives against finite differences, ERM against references."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from mathlearn.exceptions import ConvergenceWarning
from mathlearn.losses import (
    AbsoluteLoss,
    EmpiricalRisk,
    EpsilonInsensitiveLoss,
    ExponentialLoss,
    HingeLoss,
    LogisticLoss,
    PinballLoss,
    SquaredLoss,
    ZeroOneLoss,
    get_loss,
    minimize_empirical_risk,
)

LOSSES = [
    ZeroOneLoss(),
    HingeLoss(),
    ExponentialLoss(),
    LogisticLoss(),
    LogisticLoss(normalized=True),
    SquaredLoss(),
    AbsoluteLoss(),
    PinballLoss(0.3),
    EpsilonInsensitiveLoss(0.4),
]
KINKS = {HingeLoss: [1.0], ZeroOneLoss: [0.0], AbsoluteLoss: [0.0], PinballLoss: [0.0],
         EpsilonInsensitiveLoss: [-0.4, 0.4]}  # fmt: skip


def test_notes_values_at_margin_half():
    t = 0.5
    assert HingeLoss()(t) == 0.5
    assert ExponentialLoss()(t) == pytest.approx(0.606531, abs=5e-7)
    assert LogisticLoss()(t) == pytest.approx(0.474077, abs=5e-7)
    assert LogisticLoss(normalized=True)(t) == pytest.approx(0.683949, abs=5e-7)
    np.testing.assert_allclose(PinballLoss(0.25)([1.0, -1.0]), [0.5, 1.5], rtol=1e-15)


def test_logistic_over_log2_bounds_zero_one():
    t = np.linspace(-5, 5, 1001)
    assert np.all(LogisticLoss(normalized=True)(t) >= ZeroOneLoss()(t) - 1e-15)
    assert LogisticLoss(normalized=True)(0.0) == pytest.approx(1.0, rel=1e-15)
    # every convex margin loss here upper-bounds the 0/1 loss
    for loss in (HingeLoss(), ExponentialLoss()):
        assert np.all(loss(t) >= ZeroOneLoss()(t))


def test_pinball_half_is_absolute():
    r = np.linspace(-3, 3, 61)
    np.testing.assert_array_equal(PinballLoss(0.5)(r), AbsoluteLoss()(r))


@pytest.mark.parametrize("loss", LOSSES, ids=repr)
def test_derivatives_match_finite_differences(loss):
    u = np.linspace(-3, 3, 97) + 0.013  # avoid landing on a kink
    kinks = np.array(KINKS.get(type(loss), []))
    if kinks.size:
        u = u[np.min(np.abs(u[:, None] - kinks[None, :]), axis=1) > 1e-3]
    h = 1e-6
    fd1 = (loss(u + h) - loss(u - h)) / (2 * h)
    # central differences: O(h^2 f''') + O(eps |f| / h)
    np.testing.assert_allclose(loss.derivative(u), fd1, rtol=1e-7, atol=1e-8)
    fd2 = (loss.derivative(u + h) - loss.derivative(u - h)) / (2 * h)
    np.testing.assert_allclose(loss.second_derivative(u), fd2, rtol=1e-6, atol=1e-7)
    if loss.convex:
        assert np.all(loss.second_derivative(u) >= 0)


@pytest.mark.parametrize("loss", LOSSES, ids=repr)
def test_subgradient_at_kinks(loss):
    # the derivative at a kink lies between the one-sided derivatives
    for k in KINKS.get(type(loss), []):
        h = 1e-7
        left = (loss(k) - loss(k - h)) / h
        right = (loss(k + h) - loss(k)) / h
        d = loss.derivative(k)
        assert min(left, right) - 1e-6 <= d <= max(left, right) + 1e-6


def test_logistic_stable_for_large_margins():
    t = np.array([-1000.0, 1000.0])
    np.testing.assert_allclose(LogisticLoss()(t), [1000.0, 0.0], atol=1e-300)
    np.testing.assert_allclose(LogisticLoss().derivative(t), [-1.0, 0.0], atol=1e-300)
    np.testing.assert_array_equal(LogisticLoss().second_derivative(t), [0.0, 0.0])


@pytest.mark.parametrize("loss", ["logistic", "exponential", "squared", "hinge", "pinball"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_erm_gradient_and_hessian(loss, fit_intercept, rng):
    X = rng.normal(size=(40, 3))
    y = (
        np.sign(rng.normal(size=40))
        if loss in ("logistic", "exponential", "hinge")
        else rng.normal(size=40)
    )
    R = EmpiricalRisk(loss, X, y, alpha=0.7, fit_intercept=fit_intercept)
    p = rng.normal(size=R.n_params) * 0.3
    h = 1e-6
    E = np.eye(R.n_params)
    fd = np.array([(R.value(p + h * e) - R.value(p - h * e)) / (2 * h) for e in E])
    np.testing.assert_allclose(R.gradient(p), fd, rtol=1e-6, atol=1e-8)
    if R.loss.smooth:
        H = R.hessian(p)
        fdH = np.array([(R.gradient(p + h * e) - R.gradient(p - h * e)) / (2 * h) for e in E])
        np.testing.assert_allclose(H, fdH, rtol=1e-6, atol=1e-8)
        assert np.linalg.eigvalsh(H).min() >= 0  # convex risk
    else:
        with pytest.raises(ValueError, match="second derivative"):
            R.hessian(p)


def test_logistic_erm_matches_sklearn(rng):
    # (1/n)[sum log(1 + e^-y f) + lambda ||w||^2] has the argmin of the peer's
    # (1/2)||w||^2 + C sum log(1 + e^-y f) with C = 1 / (2 lambda)
    X = rng.normal(size=(200, 4))
    y = np.where(X @ [1.0, -2.0, 0.5, 0.0] + 0.3 * rng.normal(size=200) > 0, 1.0, -1.0)
    lam = 0.8
    res = minimize_empirical_risk("logistic", X, y, alpha=lam)
    peer = LogisticRegression(C=1 / (2 * lam), tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(res.coef, peer.coef_[0], rtol=1e-6)
    assert res.intercept == pytest.approx(peer.intercept_[0], rel=1e-6, abs=1e-8)


def test_squared_erm_is_ridge(rng):
    # unpenalised offset: centre, then w = (X^T X + lambda I)^-1 X^T y (notes eq. 1.27)
    X = rng.normal(size=(50, 3)) + 4.0
    y = X @ [1.0, 2.0, -1.0] + 3.0 + rng.normal(size=50)
    lam = 2.5
    Xc, yc = X - X.mean(0), y - y.mean()
    w = np.linalg.solve(Xc.T @ Xc + lam * np.eye(3), Xc.T @ yc)
    res = minimize_empirical_risk("squared", X, y, alpha=lam)
    np.testing.assert_allclose(res.coef, w, rtol=1e-10)
    assert res.intercept == pytest.approx(y.mean() - X.mean(0) @ w, rel=1e-10)


def test_bad_inputs(rng):
    X = rng.normal(size=(10, 2))
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        EmpiricalRisk("logistic", X, np.arange(10.0))
    with pytest.raises(ValueError, match="NaN"):
        EmpiricalRisk("squared", X, np.full(10, np.nan))
    with pytest.raises(ValueError, match="one entry per row"):
        EmpiricalRisk("squared", X, np.ones(9))
    with pytest.raises(ValueError, match="alpha"):
        EmpiricalRisk("squared", X, np.ones(10), alpha=-1.0)
    with pytest.raises(ValueError, match="'alpha' parameter of minimize_empirical_risk"):
        minimize_empirical_risk("squared", X, np.ones(10), alpha=-1.0)
    with pytest.raises(ValueError, match="not smooth"):
        minimize_empirical_risk("hinge", X, np.sign(X[:, 0]))
    with pytest.raises(ValueError, match="tau"):
        PinballLoss(1.0)
    with pytest.raises(ValueError, match="epsilon"):
        EpsilonInsensitiveLoss(-0.1)
    with pytest.raises(ValueError, match="one of"):
        get_loss("huber")
    with pytest.raises(ValueError, match="NaN"):
        HingeLoss()(np.nan)
    with pytest.raises(ValueError, match="complex"):
        SquaredLoss()(1j)


def test_separable_without_penalty_warns():
    X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    y = np.array([-1.0, -1.0, 1.0, 1.0])
    with pytest.warns(ConvergenceWarning):
        minimize_empirical_risk("logistic", X, y, alpha=0.0, max_iter=20)
