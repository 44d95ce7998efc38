"""Categorical, multinomial, Dirichlet families; discrete tables, Bayes' rule and the
information quantities, with the worked examples of Stuttgart "Introduction to Machine Learning"
(slides 9:14-9:18, exercise sheet 11.1)."""

import numpy as np
import pytest
import scipy.stats as st

from mathlearn.distributions import (
    Categorical,
    Dirichlet,
    DirichletMultinomial,
    Multinomial,
    ProbabilityTable,
    bayes_rule,
    cross_entropy,
    entropy,
    mutual_information,
)


def test_categorical_pmf_entropy_sampling():
    p = np.array([0.2, 0.5, 0.3])
    c = Categorical(p)
    np.testing.assert_allclose(c.pmf([0, 1, 2]), p)
    assert c.logpmf(3) == -np.inf
    assert c.entropy() == pytest.approx(st.entropy(p))
    n = 20_000
    x = c.sample(n, rng=0)
    freq = np.bincount(x, minlength=3) / n
    assert np.all(np.abs(freq - c.mean) < 5 * np.sqrt(c.var / n))
    # Batched probabilities broadcast against the values.
    cb = Categorical([[0.5, 0.5], [0.9, 0.1]])
    np.testing.assert_allclose(cb.pmf([1, 1]), [0.5, 0.1])
    assert cb.sample(4, rng=0).shape == (4, 2)
    assert Categorical.fit([0, 0, 2, 1], n_categories=4).probs.tolist() == [0.5, 0.25, 0.25, 0]


def test_multinomial_against_scipy():
    m = Multinomial(6, [0.2, 0.3, 0.5])
    ref = st.multinomial(6, [0.2, 0.3, 0.5])
    for x in ([1, 2, 3], [6, 0, 0], [0, 0, 6]):
        assert m.logpmf(x) == pytest.approx(ref.logpmf(x), rel=1e-12)
    assert m.logpmf([1, 1, 1]) == -np.inf
    np.testing.assert_allclose(m.cov, ref.cov())
    assert m.entropy() == pytest.approx(ref.entropy())
    n = 20_000
    X = m.sample(n, rng=1)
    assert np.all(np.abs(X.mean(0) - m.mean) < 5 * np.sqrt(m.var / n))


def test_dirichlet_against_scipy_and_moments():
    alpha = np.array([1.5, 2.0, 4.0])
    d, ref = Dirichlet(alpha), st.dirichlet(alpha)
    x = np.array([0.2, 0.3, 0.5])
    assert d.logpdf(x) == pytest.approx(ref.logpdf(x), rel=1e-12)
    assert d.logpdf([0.5, 0.6, -0.1]) == -np.inf
    assert d.entropy() == pytest.approx(ref.entropy(), rel=1e-12)
    np.testing.assert_allclose(d.mean, ref.mean())
    np.testing.assert_allclose(d.var, ref.var())
    np.testing.assert_allclose(d.cov, ref.cov())
    np.testing.assert_allclose(d.mode, (alpha - 1) / (alpha.sum() - 3))
    n = 20_000
    X = d.sample(n, rng=2)
    np.testing.assert_allclose(X.sum(1), 1.0)
    assert np.all(np.abs(X.mean(0) - d.mean) < 5 * np.sqrt(d.var / n))
    dm = DirichletMultinomial(5, alpha)
    ref_dm = st.dirichlet_multinomial(alpha, 5)
    assert dm.logpmf([1, 1, 3]) == pytest.approx(ref_dm.logpmf([1, 1, 3]), rel=1e-12)
    np.testing.assert_allclose(dm.mean, ref_dm.mean())
    np.testing.assert_allclose(dm.var, ref_dm.var())


@pytest.mark.parametrize(
    ("ctor", "message"),
    [
        (lambda: Categorical([0.5, 0.6]), "sum to one"),
        (lambda: Categorical([1.2, -0.2]), r"\[0, 1\]"),
        (lambda: Multinomial(3, [0.3, 0.3]), "sum to one"),
        (lambda: Multinomial(2.5, [0.5, 0.5]), "integer"),
        (lambda: Multinomial([2, 3], [0.5, 0.5]), "n must be a scalar"),
        (lambda: DirichletMultinomial(np.nan, [1.0, 1.0]), "n must be finite"),
        (lambda: Dirichlet([1.0, 0.0]), "> 0"),
        (lambda: Dirichlet([1.0]), "two categories"),
        (lambda: ProbabilityTable([[0.5, 0.6], [0.0, 0.0]]), "sum to one"),
        (lambda: ProbabilityTable([0.5, -0.5, 1.0]), "non-negative"),
        (
            lambda: ProbabilityTable.from_conditional([0.5, 0.5], [[0.5, 0.4], [0.5, 0.5]]),
            "sum to one",
        ),
    ],
)
def test_bad_parameters(ctor, message):
    with pytest.raises(ValueError, match=message):
        ctor()


def test_bayes_rule_on_table_spec_004_t7():
    # P(D=1|B=1) = 0.4, P(D=1|B=0) = 0.01, P(B=1) = 0.15: P(B=1 | D=0) = 0.0966183...
    exact = 0.6 * 0.15 / (0.6 * 0.15 + 0.99 * 0.85)
    assert bayes_rule([0.85, 0.15], [0.99, 0.6])[1] == pytest.approx(exact, rel=1e-12)
    t = ProbabilityTable.from_conditional([0.85, 0.15], [[0.99, 0.01], [0.6, 0.4]], ("B", "D"))
    assert t.condition(D=0).probs[1] == pytest.approx(exact, rel=1e-12)
    # The conditional P(B | D) from the table: columns sum to one.
    cond = t.conditional("B", "D")
    np.testing.assert_allclose(cond.sum(0), 1.0)
    assert cond[1, 0] == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize(
    ("flips", "expected_ratio"),
    [("HHTHT", np.inf), ("HHHHH", 31.21875), ("HHHHHHHHHH", 0.9755859375)],
)
def test_coin_hypotheses_spec_004_t8_t10(flips, expected_ratio):
    # H=1: fair coin (prior 999/1000); H=2: always heads (prior 1/1000).
    heads = flips.count("H")
    n = len(flips)
    lik = np.array([0.5**n, 1.0 if heads == n else 0.0])
    post = bayes_rule([0.999, 0.001], lik)
    ratio = post[0] / post[1] if post[1] > 0 else np.inf
    assert ratio == pytest.approx(expected_ratio, rel=1e-12)


def test_sum_of_three_dice_exercise_11_1():
    die = np.full(6, 1 / 6)
    joint = np.einsum("i,j,k->ijk", die, die, die)
    # P(D1, S) by summing the joint over the dice values that give each sum s = 3..18.
    table = np.zeros((6, 16))
    for i in range(6):
        for j in range(6):
            for k in range(6):
                table[i, i + j + k] += joint[i, j, k]
    t = ProbabilityTable(table, names=("D1", "S"))
    given_one = t.condition(D1=0).probs  # D1 = 1 (index 0): S = 3..13 possible
    np.testing.assert_allclose(given_one[:11], np.array([1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1]) / 36)
    np.testing.assert_allclose(given_one[11:], 0.0)
    np.testing.assert_allclose(t.marginal("D1").probs, die)


def test_table_marginal_condition_and_sampling(rng):
    p = rng.random((2, 3, 4))
    p /= p.sum()
    t = ProbabilityTable(p, names=("A", "B", "C"))
    np.testing.assert_allclose(t.marginal(["C", "A"]).probs, p.sum(1).T)
    np.testing.assert_allclose(t.condition(B=2).probs, p[:, 2, :] / p[:, 2, :].sum())
    np.testing.assert_allclose(t.conditional("A", ["B", "C"]), p / p.sum(0, keepdims=True))
    # Product rule: P(A, B, C) = P(A | B, C) P(B, C).
    np.testing.assert_allclose(t.conditional("A", ["B", "C"]) * p.sum(0), p)
    n = 20_000
    X = t.sample(n, rng=3)
    freq = np.bincount(np.ravel_multi_index(X.T, p.shape), minlength=p.size) / n
    assert np.all(np.abs(freq - p.ravel()) < 5 * np.sqrt(p.ravel() * (1 - p.ravel()) / n))
    with pytest.raises(KeyError, match="unknown variable"):
        t.marginal("Z")
    with pytest.raises(ValueError, match="out of range"):
        t.condition(A=5)
    # A fractional value is not silently truncated to a category.
    with pytest.raises(ValueError, match="integer value"):
        t.condition(A=0.5)
    np.testing.assert_allclose(t.condition(A=np.int64(1)).probs, p[1] / p[1].sum())
    zero = ProbabilityTable([[0.5, 0.0], [0.5, 0.0]])
    with pytest.raises(ValueError, match="probability zero"):
        zero.condition(X1=1)


def test_entropy_cross_entropy_mutual_information(rng):
    p = np.array([0.1, 0.2, 0.7])
    q = np.array([0.3, 0.3, 0.4])
    assert entropy(p) == pytest.approx(-np.sum(p * np.log(p)))
    assert entropy([1.0, 0.0]) == 0.0
    # Gibbs' inequality: H(p, q) >= H(p), with the gap KL(p || q) (Stuttgart
    # "Introduction to Machine Learning" slides 9:42-9:43).
    assert cross_entropy(p, q) == pytest.approx(entropy(p) + st.entropy(p, q))
    assert cross_entropy([0.5, 0.5], [1.0, 0.0]) == np.inf
    joint = rng.random((3, 4))
    joint /= joint.sum()
    px, py = joint.sum(1), joint.sum(0)
    mi = mutual_information(joint)
    # I(X;Y) = H(X) + H(Y) - H(X,Y) = KL(p(x,y) || p(x)p(y)).
    assert mi == pytest.approx(entropy(px) + entropy(py) - entropy(joint.ravel()))
    assert mi == pytest.approx(st.entropy(joint.ravel(), np.outer(px, py).ravel()))
    assert mutual_information(np.outer(px, py)) == pytest.approx(0.0, abs=1e-15)
    t = ProbabilityTable(joint, ("X", "Y"))
    assert t.mutual_information("X", "Y") == pytest.approx(mi)
    assert t.entropy() == pytest.approx(entropy(joint.ravel()))
    with pytest.raises(ValueError, match="sum to one"):
        entropy([0.5, 0.4])
    with pytest.raises(ValueError, match="same number of categories"):
        cross_entropy([0.5, 0.5], [0.2, 0.3, 0.5])
