"""Integer and categorical dimensions (rounding / one-hot inside the surrogate) and batch
proposals (Kriging believer, constant liar) of the Bayesian optimiser."""

import numpy as np
import pytest

from mathlearn.bayes_opt import BayesianOptimizer, Categorical, Integer, Real, minimize

FAST = {"n_candidates": 128, "n_starts": 2}


def test_kernel_inputs_round_and_one_hot():
    opt = BayesianOptimizer([Real(-1.0, 1.0), Integer(2, 5), Categorical(["a", "b", "c"])])
    space = opt.space
    assert space.n_search == 5
    U = np.array(
        [[0.25, 0.0, 0.1, 0.7, 0.2], [1.0, 0.99, 0.5, 0.5, 0.9], [0.5, 0.26, 0.3, 0.2, 0.1]]
    )
    # Integer(2, 5): four equal bins of [0, 1] -> values 2..5, rescaled to [0, 1].
    Z = space.to_kernel(U)
    np.testing.assert_array_equal(Z[:, 0], U[:, 0])
    np.testing.assert_array_equal(Z[:, 1], [0.0, 1.0, 1 / 3])
    np.testing.assert_array_equal(Z[:, 2:], [[0, 1, 0], [0, 0, 1], [1, 0, 0]])
    assert space.decode(U) == [[-0.5, 2, "b"], [1.0, 5, "c"], [0.0, 3, "a"]]
    # Encoding a point gives search coordinates whose kernel input is the point's own code.
    pts = [[0.2, 4, "c"], [-1.0, 2, "a"]]
    back = space.decode(space.encode(pts))
    assert [r[1:] for r in back] == [r[1:] for r in pts]
    # The real coordinate goes through (x - low) / (high - low) and back: a few ulps.
    np.testing.assert_allclose([r[0] for r in back], [0.2, -1.0], rtol=0, atol=4e-16)
    with pytest.raises(ValueError, match="not an integer"):
        space.encode([[0.0, 2.5, "a"]])
    with pytest.raises(ValueError, match="not a category"):
        space.encode([[0.0, 2, "d"]])
    with pytest.raises(ValueError, match="outside"):
        space.encode([[3.0, 2, "a"]])


def test_bad_dimensions():
    with pytest.raises(ValueError, match="low < high"):
        Integer(3, 3)
    with pytest.raises(ValueError, match="integers"):
        Integer(0.5, 3)
    with pytest.raises(ValueError, match="two distinct"):
        Categorical(["a", "a"])
    with pytest.raises(ValueError, match="low < high"):
        Real(1.0, 0.0)
    with pytest.raises(ValueError, match="dimension"):
        BayesianOptimizer([object()])
    with pytest.raises(ValueError, match="batch_strategy"):
        BayesianOptimizer([(0.0, 1.0)], batch_strategy="random")
    with pytest.raises(ValueError, match="n_points"):
        BayesianOptimizer([(0.0, 1.0)]).ask(n_points=0)


def test_surrogate_sees_only_rounded_points():
    # After fitting, the acquisition is constant over search points that round alike.
    opt = BayesianOptimizer([Integer(0, 9), Real(0.0, 1.0)], n_initial=4, random_state=0, **FAST)
    for _ in range(6):
        x = opt.ask()
        opt.tell(x, (x[0] - 6) ** 2 + x[1])
    gp = opt.surrogate_
    u1, u2 = np.array([[0.61, 0.3]]), np.array([[0.69, 0.3]])  # both in the bin of 6
    m1, s1 = gp.predict(opt.space.to_kernel(u1), return_std=True)
    m2, s2 = gp.predict(opt.space.to_kernel(u2), return_std=True)
    assert m1[0] == m2[0] and s1[0] == s2[0]


def test_mixed_space_finds_the_minimum():
    cost = {"slow": 1.0, "fast": 0.0, "medium": 0.5}

    def f(x):
        return (x[0] - 6) ** 2 / 10 + (x[1] - 0.3) ** 2 + cost[x[2]]

    res = minimize(
        f,
        [Integer(0, 10), Real(0.0, 1.0), Categorical(["slow", "fast", "medium"])],
        n_calls=16,
        n_initial=6,
        random_state=1,
        **FAST,
    )
    for x in res.x_iters:
        assert isinstance(x[0], int) and 0 <= x[0] <= 10
        assert 0.0 <= x[1] <= 1.0 and x[2] in cost
    assert res.x[0] == 6 and res.x[2] == "fast"
    # The integer dimensions are never proposed twice at a point already evaluated.
    assert len({(a, round(b, 12), c) for a, b, c in res.x_iters}) == len(res.x_iters)


def _bowl(x):
    return float((x[0] - 0.8) ** 2 + (x[1] - 0.15) ** 2)


@pytest.mark.parametrize("strategy", ["kriging_believer", "cl_min", "cl_max"])
def test_batches_are_distinct_and_beat_random_search(strategy):
    # A smooth bowl with its minimum (0) off-centre. For 14 uniform draws,
    # P(min f > t) = (1 - A(t))^14 with A(t) <= pi t the area where f <= t, so the expected
    # best random value is at least the integral of (1 - pi t)^14, 1 / (15 pi) = 0.0212.
    # The median over seeds of the batched optimiser's best must beat it.
    best = []
    for seed in range(3):
        opt = BayesianOptimizer(
            [(0.0, 1.0), (0.0, 1.0)],
            n_initial=5,
            batch_strategy=strategy,
            random_state=seed,
            **FAST,
        )
        first = opt.ask(n_points=5)  # the Sobol design, as one batch
        opt.tell(first, [_bowl(x) for x in first])
        for _ in range(3):
            batch = opt.ask(n_points=3)
            assert batch.shape == (3, 2)
            # Distinct points (a fantasy shrinks the variance where it was placed).
            gaps = [np.linalg.norm(batch[i] - batch[j]) for i in range(3) for j in range(i)]
            assert min(gaps) > 1e-3
            assert np.all((batch >= 0) & (batch <= 1))
            opt.tell(batch, [_bowl(x) for x in batch])
        assert len(opt.y) == 14
        best.append(opt.best()[1])
    assert np.median(best) < 1 / (15 * np.pi)


def test_batch_during_design_and_kriging_believer_fantasy_is_the_mean():
    opt = BayesianOptimizer([(0.0, 1.0)], n_initial=3, random_state=0, **FAST)
    xs = opt.ask(n_points=2)  # two of the three design points
    opt.tell(xs, [float(np.sin(6 * x[0])) for x in xs])
    xs = opt.ask(n_points=3)  # the last design point, then two model-based ones
    assert xs.shape == (3, 1) and len({round(float(x[0]), 12) for x in xs}) == 3
    gp = opt.surrogate_
    _, y = opt._with_fantasies(gp, opt._U, opt.y, [np.array([0.37])])
    np.testing.assert_allclose(y[-1], gp.predict(np.array([[0.37]]))[0], rtol=1e-12)
