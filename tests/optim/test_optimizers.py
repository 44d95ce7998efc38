"""First-order optimisers: closed-form recurrences, reference recurrences, convergence.

Stated tolerances: on convex quadratics every optimiser reaches the minimiser to 1e-6 in the
parameters (the adaptive-learning-rate methods Adam/Nadam/RMSProp with a decaying step, to
1e-4); on the Rosenbrock function from (-1.2, 1), to 1e-4 (1e-8 for Newton and L-BFGS in
test_loops.py).
"""

import numpy as np
import pytest

from mathlearn import autodiff as ad
from mathlearn import optim
from mathlearn.exceptions import ConvergenceWarning

# The worked least-squares example (derived for Imperial "Mathematics for Machine Learning" lecture
# 5): X, y, sigma^2 = 1.
X_LS = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
Y_LS = np.array([1.0, 2.0, 2.0])
THETA_STAR = np.array([7 / 6, 1 / 2])


def ls_fun_and_grad(theta):
    r = Y_LS - X_LS @ theta
    return 0.5 * r @ r, -X_LS.T @ r


def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def rosenbrock_fun_and_grad(x):
    g = np.array([-2 * (1 - x[0]) - 400 * x[0] * (x[1] - x[0] ** 2), 200 * (x[1] - x[0] ** 2)])
    return rosenbrock(x), g


def test_rosenbrock_gradient_is_right():
    assert ad.check_grad(
        rosenbrock, np.array([-1.2, 1.0]), grad=lambda x: rosenbrock_fun_and_grad(x)[1]
    )


def test_worked_example_constants():
    lam = np.linalg.eigvalsh(X_LS.T @ X_LS)
    np.testing.assert_allclose(lam, [4 - np.sqrt(10), 4 + np.sqrt(10)])
    np.testing.assert_allclose(np.linalg.lstsq(X_LS, Y_LS, rcond=None)[0], THETA_STAR)
    assert 2 / lam[-1] == pytest.approx(0.2792408, abs=1e-7)
    assert lam[-1] / lam[0] == pytest.approx(8.5497035, abs=1e-7)


def _iterates(opt, fun_and_grad, x0, n):
    x, state = np.array(x0, dtype=float), opt.init(x0)
    xs = [x]
    for _ in range(n):
        _, g = fun_and_grad(x)
        u, state = opt.update(g, state, x)
        x = optim.apply_updates(x, u)
        xs.append(x)
    return np.array(xs)


@pytest.mark.parametrize("gamma", [0.05, 0.2, 0.27])
def test_gd_follows_closed_form_recurrence(gamma):
    # theta_t = (I - gamma/sigma^2 X^T X)^t (theta_0 - theta*) + theta*  (Imperial
    # "Mathematics for Machine Learning" lecture 5).
    theta0 = np.array([-1.0, 2.0])
    xs = _iterates(optim.sgd(gamma), ls_fun_and_grad, theta0, 60)
    A = np.eye(2) - gamma * X_LS.T @ X_LS
    for t in range(61):
        expected = np.linalg.matrix_power(A, t) @ (theta0 - THETA_STAR) + THETA_STAR
        np.testing.assert_allclose(xs[t], expected, rtol=1e-12, atol=1e-13)
    # Per eigendirection: theta_t - theta* = sum_d alpha_d (1 - gamma lambda_d)^t q_d (lecture 5).
    lam, Q = np.linalg.eigh(X_LS.T @ X_LS)
    alpha = Q.T @ (theta0 - THETA_STAR)
    for t in (10, 60):
        np.testing.assert_allclose(
            Q.T @ (xs[t] - THETA_STAR), alpha * (1 - gamma * lam) ** t, rtol=1e-10, atol=1e-14
        )


def test_gd_step_size_bound():
    # Converges iff gamma < 2 sigma^2 / lambda_max(X^T X) = 0.2792408 (lecture 5).
    res = optim.minimize(ls_fun_and_grad, np.zeros(2), optim.sgd(0.99 * 0.2792408), max_iter=3000)
    np.testing.assert_allclose(res.x, THETA_STAR, atol=1e-6)
    with pytest.warns(ConvergenceWarning):
        res = optim.minimize(
            ls_fun_and_grad, np.zeros(2), optim.sgd(1.01 * 0.2792408), max_iter=3000
        )
    assert not res.success
    # A start with no component on the diverging direction still converges (lecture 5).
    _, Q = np.linalg.eigh(X_LS.T @ X_LS)
    x0 = THETA_STAR + Q[:, 0]
    res = optim.minimize(ls_fun_and_grad, x0, optim.sgd(1.01 * 0.2792408), max_iter=200, tol=1e-9)
    assert res.success


def test_heavy_ball_matches_notes_recurrence(rng):
    # theta_{t+1} = theta_t - gamma grad L(theta_t) + alpha (theta_t - theta_{t-1}).
    gamma, alpha = 0.1, 0.7
    xs = _iterates(optim.momentum(gamma, alpha), ls_fun_and_grad, np.zeros(2), 30)
    prev, cur = np.zeros(2), np.zeros(2)
    for t in range(30):
        nxt = cur - gamma * ls_fun_and_grad(cur)[1] + alpha * (cur - prev)
        prev, cur = cur, nxt
        np.testing.assert_allclose(xs[t + 1], cur, rtol=1e-12, atol=1e-14)


def test_nesterov_matches_lookahead_recurrence():
    # Stuttgart "Introduction to Machine Learning" slide 4:17 with Sutskever et al.'s look-ahead
    # beta + alpha Delta: Delta <- alpha Delta - gamma grad L(beta + alpha Delta); beta <- beta +
    # Delta. Our iterates are the look-ahead points beta_t + alpha Delta_t.
    gamma, alpha = 0.1, 0.8
    xs = _iterates(optim.nesterov(gamma, alpha), ls_fun_and_grad, np.zeros(2), 30)
    beta, delta = np.zeros(2), np.zeros(2)
    for t in range(30):
        delta = alpha * delta - gamma * ls_fun_and_grad(beta + alpha * delta)[1]
        beta = beta + delta
        np.testing.assert_allclose(xs[t + 1], beta + alpha * delta, rtol=1e-12, atol=1e-14)


def _reference_adaptive(name, grads, lr, b1=0.85, b2=0.99, eps=1e-8, decay=0.8):
    """Updates written out from the papers' formulas, one coordinate vector at a time."""
    m = np.zeros_like(grads[0])
    v = np.zeros_like(grads[0])
    out = []
    for t, g in enumerate(grads, start=1):
        if name == "adagrad":  # Duchi et al. (2011)
            v = v + g**2
            out.append(-lr * g / (np.sqrt(v) + eps))
        elif name == "rmsprop":  # Tieleman and Hinton (2012)
            v = decay * v + (1 - decay) * g**2
            out.append(-lr * g / (np.sqrt(v) + eps))
        else:  # Kingma and Ba (2015), Algorithm 1; Dozat (2016) for Nadam
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g**2
            m_hat, v_hat = m / (1 - b1**t), v / (1 - b2**t)
            if name == "nadam":
                m_hat = b1 * m_hat + (1 - b1) * g / (1 - b1**t)
            out.append(-lr * m_hat / (np.sqrt(v_hat) + eps))
    return out


@pytest.mark.parametrize("name", ["adagrad", "rmsprop", "adam", "nadam"])
def test_adaptive_methods_match_reference_recurrences(name, rng):
    grads = [rng.standard_normal(4) * s for s in np.linspace(0.1, 3, 12)]
    make = {
        "adagrad": lambda: optim.adagrad(0.3),
        "rmsprop": lambda: optim.rmsprop(0.3, decay=0.8),
        "adam": lambda: optim.adam(0.3, b1=0.85, b2=0.99),
        "nadam": lambda: optim.nadam(0.3, b1=0.85, b2=0.99),
    }[name]
    opt = make()
    state = opt.init(np.zeros(4))
    expected = _reference_adaptive(name, grads, 0.3)
    for g, e in zip(grads, expected, strict=True):
        u, state = opt.update(g, state, None)
        np.testing.assert_allclose(u, e, rtol=1e-12)


def test_adam_first_step_is_sign_of_gradient():
    # Derived from Stuttgart "Introduction to Machine Learning" slide 4:18: at t = 1, m_hat = g and
    # the step is -alpha sign(g).
    opt = optim.adam()
    u, _ = opt.update(np.array([0.5, -2.0]), opt.init(np.zeros(2)))
    np.testing.assert_allclose(u, [-0.001, 0.001], rtol=1e-6)


def _quadratic(rng, n=5, cond=10.0):
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    H = Q @ np.diag(np.geomspace(1, cond, n)) @ Q.T
    b = rng.standard_normal(n)
    x_star = np.linalg.solve(H, b)
    return (lambda x: (0.5 * x @ H @ x - b @ x, H @ x - b)), x_star


OPTIMISERS = {
    "sgd": (lambda: optim.sgd(0.15), 1e-6),
    "momentum": (lambda: optim.momentum(0.05, 0.8), 1e-6),
    "nesterov": (lambda: optim.nesterov(0.05, 0.8), 1e-6),
    "adagrad": (lambda: optim.adagrad(1.0), 1e-6),
    "adaptive_step": (lambda: optim.adaptive_step(0.01), 1e-6),
    "line_search": (lambda: optim.backtracking_line_search(), 1e-6),
    "rmsprop": (lambda: optim.rmsprop(optim.exponential_decay(0.05, 0.995)), 1e-4),
    "adam": (lambda: optim.adam(optim.exponential_decay(0.1, 0.995)), 1e-4),
    "nadam": (lambda: optim.nadam(optim.exponential_decay(0.1, 0.995)), 1e-4),
    "clipped_sgd": (lambda: optim.chain(optim.clip_by_global_norm(1.0), optim.sgd(0.15)), 1e-6),
}


@pytest.mark.parametrize("name", sorted(OPTIMISERS))
def test_reaches_minimiser_of_convex_quadratic(name, rng):
    # Stopping rule from the mathematics, not from one machine's rounding. With Hessian
    # eigenvalues in [lam_min, lam_max] = [1, 10], x - x* = H^{-1} g, so
    #     ||x - x*||_inf <= ||x - x*||_2 <= ||g||_2 / lam_min,
    # and stopping at ||g|| <= atol * lam_min guarantees the stated tolerance atol.
    #
    # A tighter gradient tolerance is not attainable by every rule: adaptive_step (accept iff
    # f decreased) and the Armijo line search decide by comparing computed values of f, which
    # carry a rounding error delta_f ~ n eps (|x^T H x| / 2 + |b^T x|) ~ 1e-15 here. All the
    # progress left is f - f* >= ||g||^2 / (2 lam_max), so once ||g|| < sqrt(2 lam_max
    # delta_f) ~ 1.5e-7 the comparisons are decided by rounding (which differs between BLAS
    # kernels, so between CPUs) and the rule stalls: the former gradient tolerance 1e-8 failed
    # on AMD EPYC. At ||g|| = 1e-6, f - f* >= 5e-14, some 50 times delta_f.
    #
    # Iteration budget: plain gradient descent contracts the gradient by
    # rho = max |1 - gamma lam| = 0.85 (gamma = 0.15) per step, so ||g_t|| <= rho^t ||b||
    # reaches 1e-6 by t = log(1e-6 / ||b||) / log(rho) ~ 90 (||b|| ~ 1.3; momentum and Nesterov
    # with (0.05, 0.8) have complex roots for every lam in [1, 10], modulus <= sqrt(0.8) ~ 0.89,
    # ~ 130 steps). The RMSProp/Adam/Nadam steps are normalised, so near x* they move each
    # coordinate by about the learning rate lr_t = lr_0 0.995^t, and ||g|| <= lam_max sqrt(n)
    # lr_t <= atol lam_min holds from t = log(atol lam_min / (lam_max sqrt(n) lr_0)) / log(0.995)
    # ~ 1900 on (lr_0 = 0.05, atol = 1e-4). max_iter = 5000 exceeds all of these.
    fg, x_star = _quadratic(rng)
    lam_min = 1.0  # the smallest eigenvalue _quadratic gives H
    make, atol = OPTIMISERS[name]
    res = optim.minimize(fg, np.zeros(5), make(), max_iter=5000, tol=atol * lam_min)
    assert res.success
    np.testing.assert_allclose(res.x, x_star, atol=atol)


ROSENBROCK = {
    "sgd": lambda: optim.sgd(1.5e-3),
    "momentum": lambda: optim.momentum(1e-3, 0.9),
    "nesterov": lambda: optim.nesterov(1e-3, 0.9),
    "adagrad": lambda: optim.adagrad(1.0),
    "rmsprop": lambda: optim.rmsprop(optim.exponential_decay(0.01, 0.9995)),
    "adam": lambda: optim.adam(optim.exponential_decay(0.02, 0.9995)),
    "nadam": lambda: optim.nadam(optim.exponential_decay(0.05, 0.9995)),
    "adaptive_step": lambda: optim.adaptive_step(1e-3),
    "line_search": lambda: optim.backtracking_line_search(),
    "clipped_momentum": lambda: optim.chain(
        optim.clip_by_global_norm(1.0), optim.momentum(1e-3, 0.9)
    ),
}


@pytest.mark.parametrize("name", sorted(ROSENBROCK))
def test_reaches_minimiser_of_rosenbrock(name):
    # Stop at ||grad|| <= 1e-5: with Hessian eigenvalues up to ~1000 at (1, 1) that is within
    # ~1e-5 of the minimiser along the steep direction; the stated tolerance is 1e-4.
    res = optim.minimize(
        rosenbrock_fun_and_grad,
        np.array([-1.2, 1.0]),
        ROSENBROCK[name](),
        max_iter=30000,
        tol=1e-5,
    )
    np.testing.assert_allclose(res.x, [1.0, 1.0], atol=1e-4)


def test_works_on_dicts_of_arrays(rng):
    # Leafwise optimisers give the same iterates on {"a": ..., "B": ...} as on the flat vector.
    H = np.diag(np.arange(1.0, 7.0))
    b = rng.standard_normal(6)

    def flat_fg(x):
        return 0.5 * x @ H @ x - b @ x, H @ x - b

    def dict_fg(p):
        x = np.concatenate([p["a"], p["B"].ravel()])
        f, g = flat_fg(x)
        return f, {"a": g[:2], "B": g[2:].reshape(2, 2)}

    for make in (lambda: optim.adam(0.05), lambda: optim.nesterov(0.05), optim.adaptive_step):
        with pytest.warns(ConvergenceWarning):
            r_flat = optim.minimize(flat_fg, np.zeros(6), make(), max_iter=50, tol=0)
        with pytest.warns(ConvergenceWarning):
            r_dict = optim.minimize(
                dict_fg, {"a": np.zeros(2), "B": np.zeros((2, 2))}, make(), max_iter=50, tol=0
            )
        assert set(r_dict.x) == {"a", "B"} and r_dict.x["B"].shape == (2, 2)
        np.testing.assert_allclose(
            np.concatenate([r_dict.x["a"], r_dict.x["B"].ravel()]), r_flat.x, rtol=1e-12
        )


def test_float32_parameters_stay_float32():
    fg = ad.value_and_grad(lambda p: ad.sum((p["w"] - 1) ** 2))
    with pytest.warns(ConvergenceWarning):
        res = optim.minimize(
            fg, {"w": np.zeros(3, np.float32)}, optim.adam(0.1), max_iter=5, tol=0
        )
    assert res.x["w"].dtype == np.float32


def test_schedules():
    assert optim.constant_schedule(0.3)(100) == 0.3
    ed = optim.exponential_decay(1.0, 0.5, transition_steps=2)
    assert [ed(t) for t in (0, 2, 4)] == [1.0, 0.5, 0.25]
    rm = optim.robbins_monro(1.0, t0=10.0)
    assert rm(0) == 1.0 and rm(10) == pytest.approx(0.5)
    # Robbins-Monro: sum gamma diverges, sum gamma^2 converges (partial sums as a check).
    t = np.arange(10**6)
    gammas = rm(t)
    np.testing.assert_allclose(gammas, 1.0 / (1 + t / 10.0), rtol=1e-15)
    assert gammas.sum() > 100 and (gammas**2).sum() < 11
    with pytest.raises(ValueError, match="Robbins-Monro"):
        optim.robbins_monro(1.0, power=0.5)
    with pytest.raises(ValueError, match="decay_rate"):
        optim.exponential_decay(1.0, 1.5)
    # A scheduled sgd uses gamma_t at update t.
    opt = optim.sgd(optim.exponential_decay(1.0, 0.5))
    state = opt.init(np.zeros(1))
    steps = []
    for _ in range(3):
        u, state = opt.update(np.ones(1), state)
        steps.append(-u[0])
    assert steps == [1.0, 0.5, 0.25]


def test_clipping_and_chain():
    g = {"a": np.array([3.0]), "b": np.array([4.0])}
    opt = optim.clip_by_global_norm(1.0)
    u, _ = opt.update(g, opt.init(g))
    assert optim.global_norm(u) == pytest.approx(1.0)
    np.testing.assert_allclose(u["a"], [0.6])
    small = {"a": np.array([0.3]), "b": np.array([0.4])}
    assert opt.update(small, ())[0] is small
    u, _ = optim.clip(0.5).update(np.array([-2.0, 0.1, 3.0]), ())
    np.testing.assert_array_equal(u, [-0.5, 0.1, 0.5])
    opt = optim.chain(optim.clip(1.0), optim.scale(-0.1))
    u, state = opt.update(np.array([5.0, -0.5]), opt.init(np.zeros(2)))
    np.testing.assert_allclose(u, [-0.1, 0.05])
    assert state == ((), ())


def test_adaptive_step_undoes_and_shrinks():
    # f(x) = x^2 from x = 1 with a far too large first step: the step is rejected and undone.
    fg = lambda x: (float(x @ x), 2 * x)  # noqa: E731
    opt = optim.adaptive_step(initial_step=5.0, grow=1.5, shrink=0.1)
    x = np.array([1.0])
    state = opt.init(x)
    f, g = fg(x)
    u, state = opt.update(g, state, x, value=f)  # first step: x = 1 - 5*2 = -9
    x1 = x + u
    np.testing.assert_allclose(x1, [-9.0])
    f1, g1 = fg(x1)
    u, state = opt.update(g1, state, x1, value=f1)  # f went up: back to 1, step 0.5
    x2 = x1 + u
    np.testing.assert_allclose(x2, [1.0 - 0.5 * 2.0])
    assert state.n_rejected == 1
    f2, g2 = fg(x2)
    u, state = opt.update(g2, state, x2, value=f2)  # accepted: grow to 0.75
    assert state.step == pytest.approx(0.75)
    # Over many steps: the same trial points as the rule written as a plain loop (Imperial
    # "Mathematics for Inference and Machine Learning" §1.6.1: try x - step g(x); keep it and grow
    # the step if f decreased, else shrink it).
    with pytest.warns(ConvergenceWarning):
        res = optim.minimize(
            rosenbrock_fun_and_grad,
            np.array([-1.2, 1.0]),
            optim.adaptive_step(0.1),
            max_iter=300,
        )
    x, step, trials, decided = np.array([-1.2, 1.0]), 0.1, [], []
    fx, gx = rosenbrock_fun_and_grad(x)
    trials.append(fx)
    for _ in range(300):
        trial = x - step * gx
        ft, gt = rosenbrock_fun_and_grad(trial)
        trials.append(ft)
        rejected = ft > fx
        if rejected:
            step = step * 0.5
        else:
            x, fx, gx, step = trial, ft, gt, step * 1.2
        decided.append((rejected, fx))  # and fx is the value of the point kept
    np.testing.assert_allclose(res.history, trials, rtol=1e-12)
    # The optimiser judges a trial at the next update: after 300 updates, 299 were judged.
    n_rejected = sum(r for r, _ in decided[:299])
    assert res.state.n_rejected == n_rejected > 0
    assert res.state.anchor_value == pytest.approx(decided[298][1], rel=1e-12)


def test_line_search_satisfies_armijo():
    c = 1e-4
    opt = optim.backtracking_line_search(initial_step=1.0, shrink=0.5, c=c)
    x = np.array([-1.2, 1.0])
    state = opt.init(x)
    for _ in range(20):
        f, g = rosenbrock_fun_and_grad(x)
        u, state = opt.update(g, state, x, value=f, value_fn=rosenbrock)
        step = state.step
        np.testing.assert_allclose(u, -step * g)
        assert rosenbrock(x + u) <= f - c * step * g @ g
        if step < 1.0:  # the previous (twice larger) trial failed the test
            assert rosenbrock(x - 2 * step * g) > f - c * 2 * step * g @ g
        x = x + u


def test_value_needing_optimisers_say_what_is_missing():
    for opt in (optim.adaptive_step(), optim.backtracking_line_search()):
        with pytest.raises(ValueError, match="value"):
            opt.update(np.ones(2), opt.init(np.zeros(2)), np.zeros(2))


@pytest.mark.parametrize(
    "make",
    [
        lambda: optim.sgd(-1.0),
        lambda: optim.momentum(0.1, momentum=1.0),
        lambda: optim.nesterov(0.1, momentum=-0.1),
        lambda: optim.adam(b1=1.0),
        lambda: optim.rmsprop(0.1, decay=1.5),
        lambda: optim.adaptive_step(grow=0.9),
        lambda: optim.adaptive_step(shrink=1.0),
        lambda: optim.backtracking_line_search(shrink=2.0),
        lambda: optim.clip(0.0),
        lambda: optim.clip_by_global_norm(-1.0),
        lambda: optim.clip(np.nan),
        lambda: optim.clip_by_global_norm(np.nan),
        lambda: optim.adam(eps=-1e-8),
        lambda: optim.nadam(eps=np.nan),
        lambda: optim.rmsprop(0.1, eps=-1.0),
        lambda: optim.adagrad(0.1, eps=-1.0),
        lambda: optim.exponential_decay(1.0, 0.5, transition_steps=0),
    ],
)
def test_bad_hyperparameters(make):
    with pytest.raises(ValueError):
        make()
