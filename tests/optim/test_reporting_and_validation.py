"""Optimisers report success only when their stopping rule holds, and reject bad arguments."""

import warnings

import numpy as np
import pytest

from mathlearn import autodiff as ad
from mathlearn import optim
from mathlearn.exceptions import ConvergenceWarning, InvalidParameterError


def rosenbrock(x):
    return ad.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


@pytest.mark.parametrize("tol", [1e-6, 1e-10])
def test_lbfgs_honours_the_gradient_tolerance(tol):
    # SciPy's relative-decrease rule alone stops this problem with a gradient of 7e-5.
    res = optim.lbfgs(ad.value_and_grad(rosenbrock), np.array([-1.2, 1.0, 0.5, -0.3]), tol=tol)
    assert res.success
    g = ad.grad(rosenbrock)(res.x)
    assert np.abs(g).max() <= tol and res.projected_grad_norm <= tol
    # The minimiser is (1, ..., 1); the Hessian there has smallest eigenvalue 0.49, so near
    # it ||x - 1|| <= ||g|| / 0.49 <= 2 max|g| / 0.49 (4-D), about 4 tol.
    np.testing.assert_allclose(res.x, 1.0, atol=10 * tol)


def test_lbfgs_projected_gradient_with_bounds():
    fg = ad.value_and_grad(lambda x: ad.sum((x - 2.0) ** 2))
    res = optim.lbfgs(fg, np.zeros(3), bounds=(0.0, 1.0), tol=1e-12)
    # At the active bound the raw gradient is -2 but the projected gradient is 0.
    assert res.success and res.projected_grad_norm == 0.0
    np.testing.assert_array_equal(res.x, 1.0)


def test_no_success_with_a_nan_objective():
    fg = lambda x: (float("nan"), np.zeros_like(x))  # noqa: E731
    with pytest.warns(ConvergenceWarning, match="not finite"):
        res = optim.lbfgs(fg, np.ones(2))
    assert not res.success
    with pytest.warns(ConvergenceWarning, match="non-finite"):
        res = optim.projected_gradient(fg, np.ones(2), optim.project_box(0.0, 2.0))
    assert not res.success


def test_projected_gradient_backs_off_a_nan_region():
    # f = -log(x) + x on x >= 0 region: steps into x < 0 give NaN and must be shrunk.
    def fg(x):
        with np.errstate(invalid="ignore"):
            return float(np.sum(-np.log(x) + x)), -1.0 / x + 1.0

    res = optim.projected_gradient(fg, np.array([0.1]), optim.project_box(-1.0, 5.0))
    assert res.success
    np.testing.assert_allclose(res.x, 1.0, atol=1e-7)


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: optim.sgd("abc"), "learning_rate"),
        (lambda: optim.sgd(np.nan), "learning_rate"),
        (lambda: optim.momentum(0.1, momentum="0.9"), "momentum"),
        (lambda: optim.adam(b1=1.0), "b1"),
        (lambda: optim.adam(b2=np.nan), "b2"),
        (lambda: optim.rmsprop(0.1, decay=-0.1), "decay"),
        (lambda: optim.adagrad(-1.0), "learning_rate"),
        (lambda: optim.adaptive_step(grow=1.0), "grow"),
        (lambda: optim.backtracking_line_search(max_backtracks=2.5), "max_backtracks"),
        (lambda: optim.exponential_decay("1", 0.5), "init_value"),
        (lambda: optim.clip_by_global_norm(True), "max_norm"),
        (lambda: optim.lbfgs(rosenbrock, np.zeros(2), tol="abc"), "tol"),
        (lambda: optim.lbfgs(rosenbrock, np.zeros(2), memory=0), "memory"),
        (lambda: optim.newton(rosenbrock, np.zeros(2), max_iter=1.5), "max_iter"),
        (lambda: optim.newton(rosenbrock, np.zeros(2), shrink=1.0), "shrink"),
        (lambda: optim.minimize(rosenbrock, np.zeros(2), optim.sgd(0.1), tol=np.nan), "tol"),
        (lambda: optim.minimize(rosenbrock, np.zeros(2), "adam"), "optimizer"),
        (
            lambda: optim.minimize_stochastic(
                rosenbrock, np.zeros(2), 10, optim.sgd(0.1), random_state=-1
            ),
            "random_state",
        ),
        (
            lambda: optim.projected_gradient(rosenbrock, np.zeros(2), np.abs, step="big"),
            "step",
        ),
        (lambda: optim.norm_constrained_least_squares(np.eye(2), np.ones(2), "1"), "radius_sq"),
    ],
)
def test_hyperparameters_are_validated_by_name(make, name):
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter"):
        make()


def test_newton_regularises_an_indefinite_hessian():
    # f = x^4/4 - x^2/2 + y^2: at (0.1, 1) the Hessian diag(3x^2 - 1, 2) is indefinite, so the
    # direction comes from H + tau I with the smallest tried tau that is positive definite.
    def fun(v):
        return v[0] ** 4 / 4 - v[0] ** 2 / 2 + v[1] ** 2

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = optim.newton(fun, np.array([0.1, 1.0]))
    assert res.success and res.n_regularised >= 1
    np.testing.assert_allclose(np.abs(res.x), [1.0, 0.0], atol=1e-8)
