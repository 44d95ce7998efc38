"""MMD and HSIC: the notes' values, direct O(n^2) formulas, permutation calibration, power."""

import itertools

import numpy as np
import pytest
from scipy.stats import binom

from mathlearn.exceptions import InvalidParameterError
from mathlearn.kernels import RBF, Matern
from mathlearn.stats import hsic, hsic_test, median_heuristic, mmd2, mmd_test

EPS = np.finfo(float).eps


def _k(kernel, a, b):
    return float(kernel(np.atleast_2d(a), np.atleast_2d(b))[0, 0])


def _mmd2_loops(X, Y, kernel, unbiased):
    n, m = len(X), len(Y)
    sxx = sum(_k(kernel, X[i], X[j]) for i in range(n) for j in range(n) if i != j or not unbiased)
    syy = sum(_k(kernel, Y[i], Y[j]) for i in range(m) for j in range(m) if i != j or not unbiased)
    sxy = sum(_k(kernel, X[i], Y[j]) for i in range(n) for j in range(m))
    if unbiased:
        return sxx / (n * (n - 1)) + syy / (m * (m - 1)) - 2 * sxy / (n * m)
    return sxx / n**2 + syy / m**2 - 2 * sxy / (n * m)


def test_notes_values_d11_d12():
    """Oxford notes: MMD^2_u = -0.454138 (RBF, unit length scale) and HSIC = 0.128856."""
    assert mmd2([0.0, 1.0, 2.0], [0.5, 3.0], kernel=RBF(1.0)) == pytest.approx(-0.454138, abs=5e-7)
    a = np.arange(4.0)
    assert hsic(a, a**2, kernel_x=RBF(1.0), kernel_y=RBF(1.0)) == pytest.approx(0.128856, abs=5e-7)


def test_mmd2_against_direct_double_sums():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(7, 2)), rng.normal(0.5, size=(5, 2))
    kernel = Matern(0.9, nu=1.5)
    for unbiased in (True, False):
        # Sums of <= 144 terms in [0, 1]: rounding <= 144 eps each side.
        assert mmd2(X, Y, kernel=kernel, unbiased=unbiased) == pytest.approx(
            _mmd2_loops(X, Y, kernel, unbiased), abs=1e3 * EPS
        )
    res = mmd_test(X, Y, kernel=kernel, n_permutations=10, random_state=0)
    assert res.mmd2_unbiased == pytest.approx(_mmd2_loops(X, Y, kernel, True), abs=1e3 * EPS)
    assert res.mmd2_biased == pytest.approx(_mmd2_loops(X, Y, kernel, False), abs=1e3 * EPS)
    assert res.statistic == res.mmd2_unbiased
    biased = mmd_test(X, Y, kernel=kernel, n_permutations=10, unbiased=False, random_state=0)
    assert biased.statistic == biased.mmd2_biased


def test_null_distribution_consists_of_relabelled_statistics():
    """Every null value is the statistic of some relabelling (all 20 for n = m = 3)."""
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(3, 1)), rng.normal(size=(3, 1))
    Z = np.vstack([X, Y])
    kernel = RBF(1.0)
    for unbiased in (True, False):
        exact = np.array([
            _mmd2_loops(Z[list(c)], Z[[i for i in range(6) if i not in c]], kernel, unbiased)
            for c in itertools.combinations(range(6), 3)
        ])  # fmt: skip
        res = mmd_test(X, Y, kernel=kernel, n_permutations=200, unbiased=unbiased, random_state=2)
        gap = np.abs(res.null_distribution[:, None] - exact[None, :]).min(axis=1)
        assert gap.max() <= 1e2 * EPS
        # 200 draws from 20 equally likely relabellings reach every one of them.
        assert len(np.unique(np.round(res.null_distribution, 12))) == len(
            np.unique(np.round(exact, 12))
        )


def test_hsic_three_term_form_and_direct_formulas():
    """(3.10): tr(KL) - 2/m 1'KL1 + (1'K1)(1'L1)/m^2, over m^2; and Song et al.'s HSIC_u."""
    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(9, 2)), rng.normal(size=(9, 1))
    kx, ky = RBF(1.2), Matern(0.7, nu=2.5)
    K, L = kx(X), ky(Y)
    m, one = 9, np.ones(9)
    three = np.trace(K @ L) - 2 / m * one @ K @ L @ one + (one @ K @ one) * (one @ L @ one) / m**2
    H = np.eye(m) - 1 / m
    assert hsic(X, Y, kernel_x=kx, kernel_y=ky) == pytest.approx(three / m**2, abs=1e3 * EPS)
    assert three / m**2 == pytest.approx(np.trace(K @ H @ L @ H) / m**2, abs=1e3 * EPS)
    K0, L0 = K - np.diag(np.diag(K)), L - np.diag(np.diag(L))
    u = (np.trace(K0 @ L0) + (one @ K0 @ one) * (one @ L0 @ one) / ((m - 1) * (m - 2))
         - 2 / (m - 2) * one @ K0 @ L0 @ one) / (m * (m - 3))  # fmt: skip
    assert hsic(X, Y, kernel_x=kx, kernel_y=ky, unbiased=True) == pytest.approx(u, abs=1e3 * EPS)
    res = hsic_test(X, Y, kernel_x=kx, kernel_y=ky, n_permutations=20, unbiased=True)
    assert res.statistic == pytest.approx(u, abs=1e3 * EPS)
    # The null permutes the pairing: statistic of (X, Y[pi]).
    res = hsic_test(X, Y, kernel_x=kx, kernel_y=ky, n_permutations=5, random_state=4)
    perms = [np.random.default_rng(4).permutation(m)]
    assert res.null_distribution[0] == pytest.approx(
        hsic(X, Y[perms[0]], kernel_x=kx, kernel_y=ky), abs=1e3 * EPS
    )


def _binomial_band(R, q):
    """Counts of ``p <= q`` among R exact-uniform permutation p-values: Binomial(R, q)."""
    return binom.ppf(1e-6, R, q), binom.isf(1e-6, R, q)


def test_permutation_pvalues_are_uniform_under_the_null():
    """Under H0 the observed statistic's rank among B + 1 exchangeable ones is uniform, so
    ``P(p <= k / (B + 1)) = k / (B + 1)`` exactly (continuous data: no ties); the counts over
    R independent data sets are binomial, checked at the 1e-6 quantiles."""
    rng = np.random.default_rng(5)
    R, B = 200, 49
    p_mmd = np.array([
        mmd_test(rng.normal(size=(15, 2)), rng.normal(size=(12, 2)), n_permutations=B,
                 random_state=rng).pvalue
        for _ in range(R)
    ])  # fmt: skip
    p_hsic = np.array([
        hsic_test(rng.normal(size=20), rng.normal(size=(20, 2)), n_permutations=B,
                  random_state=rng, unbiased=bool(r % 2)).pvalue
        for r in range(R)
    ])  # fmt: skip
    for p in (p_mmd, p_hsic):
        assert np.all((p > 0) & (p <= 1))
        for q in (0.1, 0.5):
            lo, hi = _binomial_band(R, q)
            assert lo <= np.count_nonzero(p <= q + 1e-12) <= hi


def test_power_against_alternatives():
    """A mean shift of 1.5 standard deviations (n = m = 40: the t-test's non-centrality is
    1.5 sqrt(20) = 6.7, power 1 - 1e-7 at level 0.05) and y = x^2 + 0.3 noise (m = 50, a
    dependence as strong); with power above 0.99, 20 data sets give at least 19 rejections
    with probability > 0.98."""
    rng = np.random.default_rng(6)
    rej_mmd = rej_hsic = 0
    for _ in range(20):
        res = mmd_test(rng.normal(size=40), rng.normal(1.5, size=40), n_permutations=99,
                       random_state=rng)  # fmt: skip
        rej_mmd += res.pvalue <= 0.05
        x = rng.normal(size=50)
        res = hsic_test(x, x**2 + 0.3 * rng.normal(size=50), n_permutations=99, random_state=rng)
        rej_hsic += res.pvalue <= 0.05
    assert rej_mmd >= 19 and rej_hsic >= 19


def test_witness_function_and_its_norm():
    rng = np.random.default_rng(7)
    X, Y = rng.normal(size=(30, 1)), rng.laplace(size=(25, 1)) + 0.5
    kernel = RBF(0.8)
    res = mmd_test(X, Y, kernel=kernel, n_permutations=10, random_state=0)
    T = np.linspace(-3, 3, 7)[:, None]
    direct = [np.mean([_k(kernel, x, t) for x in X]) - np.mean([_k(kernel, y, t) for y in Y])
              for t in T]  # fmt: skip
    np.testing.assert_allclose(res.witness(T), direct, rtol=0, atol=1e2 * EPS)
    # Unit-norm witness f = (mu_X - mu_Y) / ||mu_X - mu_Y||: its mean difference is the MMD.
    f_x, f_y = res.witness(X, normalize=True), res.witness(Y, normalize=True)
    assert f_x.mean() - f_y.mean() == pytest.approx(np.sqrt(res.mmd2_biased), rel=1e-10)
    assert res.witness(np.zeros(1))[0] == pytest.approx(res.witness(np.zeros((1, 1)))[0])


def test_median_heuristic_is_the_default_kernel():
    rng = np.random.default_rng(8)
    X, Y = rng.normal(size=(12, 3)), rng.normal(size=(9, 3))
    Z = np.vstack([X, Y])
    d = [np.linalg.norm(Z[i] - Z[j]) for i in range(21) for j in range(i + 1, 21)]
    assert median_heuristic(X, Y) == pytest.approx(np.median(d), rel=1e-14)
    res = mmd_test(X, Y, n_permutations=5, random_state=0)
    assert res.kernel.length_scale == pytest.approx(np.median(d), rel=1e-14)
    assert res.mmd2_unbiased == pytest.approx(mmd2(X, Y, kernel=RBF(np.median(d))), abs=1e2 * EPS)
    # More than half the pairs tied at 0: the positive distances set the scale.
    assert median_heuristic([0.0, 0.0, 0.0, 0.0, 2.0]) == 2.0
    ht = hsic_test(X, X**2, n_permutations=5, random_state=0)
    assert ht.kernel_x.length_scale == pytest.approx(median_heuristic(X), rel=1e-14)


def test_bad_inputs_raise_clearly():
    X = np.random.default_rng(9).normal(size=(10, 2))
    with pytest.raises(ValueError, match=r"NaN|infinity"):
        mmd_test(np.vstack([X, [np.nan, 0.0]]), X)
    with pytest.raises(ValueError, match="features"):
        mmd_test(X, X[:, :1])
    with pytest.raises(ValueError, match="at least 2 samples"):
        mmd2(X[:1], X)
    with pytest.raises(ValueError, match="paired"):
        hsic_test(X, X[:5])
    with pytest.raises(ValueError, match="at least 4 samples"):
        hsic(X[:3], X[:3], unbiased=True)
    with pytest.raises(ValueError, match="coincide"):
        mmd_test(np.zeros((3, 2)), np.zeros((4, 2)))
    with pytest.raises(InvalidParameterError, match="n_permutations"):
        mmd_test(X, X, n_permutations=0)
    with pytest.raises(InvalidParameterError, match="kernel"):
        mmd_test(X, X, kernel="no-such-kernel")
    with pytest.raises(ValueError, match="overflow"):
        mmd2(X * 1e200, X, kernel="linear")
