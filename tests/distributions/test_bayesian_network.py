"""Discrete Bayesian networks: the factorisation of the Imperial notes (§1.3, eqs. 1.57-1.59)
against joint tables, their conditionals and ancestral sampling."""

import numpy as np
import pytest

from mathlearn.distributions import BayesianNetwork, ProbabilityTable

PARENTS = {"x1": [], "x5": [], "x2": ["x5"], "x3": ["x1", "x2"], "x4": ["x2"]}
CARD = {"x1": 2, "x5": 3, "x2": 2, "x3": 4, "x4": 2}


def _network(rng):
    cpts = {
        x: rng.dirichlet(np.ones(CARD[x]), size=tuple(CARD[p] for p in pa))
        for x, pa in PARENTS.items()
    }
    return BayesianNetwork(PARENTS, cpts), cpts


def test_worked_example_factorisation_and_joint(rng):
    net, cpts = _network(rng)
    assert net.factorisation() == "p(x1) p(x5) p(x2 | x5) p(x3 | x1, x2) p(x4 | x2)"
    assert net.order == ("x1", "x5", "x2", "x3", "x4")
    joint = net.joint()
    assert joint.names == net.order
    assert joint.probs.sum() == pytest.approx(1.0, abs=1e-14)
    # Every factor is recovered as a conditional of the joint (the graph's semantics).
    np.testing.assert_allclose(joint.marginal(["x1"]).probs, cpts["x1"], rtol=1e-12)
    np.testing.assert_allclose(joint.marginal(["x5"]).probs, cpts["x5"], rtol=1e-12)
    # conditional returns target first, then the givens; our tables put parents first.
    np.testing.assert_allclose(joint.conditional("x2", "x5").T, cpts["x2"], rtol=1e-12)
    c3 = joint.conditional("x3", ["x1", "x2"])
    np.testing.assert_allclose(np.moveaxis(c3, 0, -1), cpts["x3"], rtol=1e-12)
    # Missing edges are independences: x1 and x5 are independent; x4 _|_ x1 | x2.
    m15 = joint.marginal(["x1", "x5"]).probs
    np.testing.assert_allclose(m15, np.outer(cpts["x1"], cpts["x5"]), rtol=1e-12)
    p412 = joint.conditional("x4", ["x1", "x2"])
    np.testing.assert_allclose(p412[:, 0, :], p412[:, 1, :], rtol=1e-12)
    # log_prob of one assignment is the sum of the log factors, and equals the joint's entry.
    a = {"x1": 1, "x5": 2, "x2": 0, "x3": 3, "x4": 1}
    expected = (
        np.log(cpts["x1"][1]) + np.log(cpts["x5"][2]) + np.log(cpts["x2"][2, 0])
        + np.log(cpts["x3"][1, 0, 3]) + np.log(cpts["x4"][0, 1])
    )  # fmt: skip
    assert net.log_prob(a) == pytest.approx(expected, rel=1e-14)
    assert np.exp(net.log_prob(a)) == pytest.approx(joint.probs[1, 2, 0, 3, 1], rel=1e-12)


def test_chain_rule_rebuilds_any_joint(rng):
    # eq. 1.57: p(a, b, c) = p(c | a, b) p(b | a) p(a): the fully connected graph represents
    # every joint exactly.
    P = rng.dirichlet(np.ones(24)).reshape(2, 3, 4)
    table = ProbabilityTable(P, names=("a", "b", "c"))
    cpts = {
        "a": table.marginal("a").probs,
        "b": table.conditional("b", "a").T,
        "c": np.moveaxis(table.conditional("c", ["a", "b"]), 0, -1),
    }
    net = BayesianNetwork({"a": [], "b": ["a"], "c": ["a", "b"]}, cpts)
    np.testing.assert_allclose(net.joint().probs, P, rtol=1e-12)


def test_ancestral_sampling_frequencies(rng):
    net, _ = _network(rng)
    n = 40_000
    draws = net.sample(n, random_state=0)
    joint = net.joint()
    for x in ("x3", "x4"):
        freq = np.bincount(draws[x], minlength=CARD[x]) / n
        p = joint.marginal([x]).probs
        # binomial standard error of each frequency: sqrt(p (1 - p) / n); 5 of them.
        np.testing.assert_array_less(np.abs(freq - p), 5 * np.sqrt(p * (1 - p) / n) + 1e-12)
    pair = np.zeros((CARD["x2"], CARD["x4"]))
    np.add.at(pair, (draws["x2"], draws["x4"]), 1.0)
    p24 = joint.marginal(["x2", "x4"]).probs
    np.testing.assert_array_less(np.abs(pair / n - p24), 5 * np.sqrt(p24 * (1 - p24) / n))


def test_bad_input(rng):
    _, cpts = _network(rng)
    with pytest.raises(ValueError, match="cycle"):
        BayesianNetwork({"a": ["b"], "b": ["a"]}, {"a": np.eye(2), "b": np.eye(2)})
    with pytest.raises(ValueError, match="unknown"):
        BayesianNetwork({"a": ["z"]}, {"a": np.eye(2)})
    bad = dict(cpts)
    bad["x2"] = cpts["x2"][:2]
    with pytest.raises(ValueError, match="parent 'x5'"):
        BayesianNetwork(PARENTS, bad)
    bad = dict(cpts)
    bad["x1"] = np.array([0.5, 0.6])
    with pytest.raises(ValueError, match="sum to one"):
        BayesianNetwork(PARENTS, bad)
    with pytest.raises(ValueError, match="one table per variable"):
        BayesianNetwork(PARENTS, {"x1": cpts["x1"]})
    net = BayesianNetwork(PARENTS, cpts)
    with pytest.raises(ValueError, match="lacks"):
        net.log_prob({"x1": 0})
