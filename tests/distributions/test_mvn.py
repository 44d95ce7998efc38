"""MultivariateNormal and the Gaussian algebra: densities against scipy, identities on random
inputs (hypothesis), hand-computed examples of PRML §2.3 and the Stuttgart notes' exercise 11.2."""

import numpy as np
import pytest
import scipy.stats as st
from hypothesis import given
from hypothesis import strategies as hst

from mathlearn.distributions import (
    MultivariateNormal,
    Normal,
    linear_gaussian_joint,
    linear_gaussian_marginal,
    linear_gaussian_posterior,
)


def random_spd(rng, d):
    A = rng.normal(size=(d, d))
    return A @ A.T + 0.5 * np.eye(d)


def random_mvn(seed, d):
    rng = np.random.default_rng(seed)
    return MultivariateNormal(rng.normal(size=d), random_spd(rng, d)), rng


seeds = hst.integers(0, 2**32 - 1)
dims = hst.integers(2, 5)


def test_logpdf_entropy_against_scipy(rng):
    S, m = random_spd(rng, 4), rng.normal(size=4)
    p = MultivariateNormal(m, S)
    x = rng.normal(size=(3, 5, 4))
    np.testing.assert_allclose(p.logpdf(x), st.multivariate_normal(m, S).logpdf(x), rtol=1e-12)
    np.testing.assert_allclose(p.pdf(x[0, 0]), st.multivariate_normal(m, S).pdf(x[0, 0]))
    assert p.entropy() == pytest.approx(st.multivariate_normal(m, S).entropy(), rel=1e-12)
    np.testing.assert_allclose(p.cov, S, atol=1e-12)
    np.testing.assert_allclose(p.var, np.diag(S), atol=1e-12)
    np.testing.assert_allclose(p.scale_tril @ p.scale_tril.T, S, atol=1e-12)
    np.testing.assert_allclose(p.precision @ S, np.eye(4), atol=1e-10)
    # The same distribution built from its Cholesky factor.
    q = MultivariateNormal(m, scale_tril=np.linalg.cholesky(S))
    np.testing.assert_allclose(q.logpdf(x), p.logpdf(x), rtol=1e-12)


def test_worked_examples_spec_001_t3_t4_t5():
    # T3: Mahalanobis^2 = 2 and pdf = e^-1 / (2 pi sqrt 3).
    p = MultivariateNormal([0.0, 0.0], [[2.0, 1.0], [1.0, 2.0]])
    assert p.mahalanobis([1.0, -1.0]) ** 2 == pytest.approx(2.0, rel=1e-14)
    assert p.pdf([1.0, -1.0]) == pytest.approx(0.03380376099157291, rel=1e-13)
    # Derived example for PRML §2.3.1-2.3.2: conditional of x_a given x_b = 1: N(0.5, 1.5);
    # marginal N(0, 2); precision.
    c = p.condition([1], [1.0])
    assert c.mean[0] == pytest.approx(0.5) and c.cov[0, 0] == pytest.approx(1.5)
    assert p.marginal([0]).cov[0, 0] == pytest.approx(2.0)
    np.testing.assert_allclose(p.precision, [[2 / 3, -1 / 3], [-1 / 3, 2 / 3]], atol=1e-14)
    # Derived example for PRML §2.3.3: linear-Gaussian, mu = 1, Lambda = 2, A = 3, b = 1, L = 4
    # (precisions).
    prior = MultivariateNormal([1.0], [[1 / 2]])
    marg = linear_gaussian_marginal(prior, [[3.0]], 1 / 4, b=1.0)
    assert marg.mean[0] == pytest.approx(4.0) and marg.cov[0, 0] == pytest.approx(4.75)
    post = linear_gaussian_posterior(prior, [[3.0]], 1 / 4, y=[2.0], b=1.0)
    assert post.cov[0, 0] == pytest.approx(1 / 38, rel=1e-12)
    assert post.mean[0] == pytest.approx(14 / 38, rel=1e-12)


def test_sample_moments_within_standard_errors():
    p, _ = random_mvn(5, 3)
    n = 20_000
    X = p.sample(n, rng=np.random.default_rng(2))
    assert X.shape == (n, 3)
    S = p.cov
    assert np.all(np.abs(X.mean(0) - p.mean) < 5 * np.sqrt(np.diag(S) / n))
    # Var of the sample covariance entry (i, j) of a Gaussian: (S_ii S_jj + S_ij^2) / n.
    se = np.sqrt((np.outer(np.diag(S), np.diag(S)) + S**2) / n)
    assert np.all(np.abs(np.cov(X.T) - S) < 5 * se)
    assert p.sample(rng=0).shape == (3,)
    assert p.sample((2, 4), rng=0).shape == (2, 4, 3)


@given(seeds, dims)
def test_condition_matches_schur_complement_and_precision_form(seed, d):
    p, rng = random_mvn(seed, d)
    b = rng.choice(d, size=rng.integers(1, d), replace=False)
    a = np.setdiff1d(np.arange(d), b)
    xb = rng.normal(size=b.size)
    S, m = p.cov, p.mean
    c = p.condition(b, xb)
    Sab, Sbb = S[np.ix_(a, b)], S[np.ix_(b, b)]
    np.testing.assert_allclose(c.mean, m[a] + Sab @ np.linalg.solve(Sbb, xb - m[b]), atol=1e-8)
    np.testing.assert_allclose(
        c.cov, S[np.ix_(a, a)] - Sab @ np.linalg.solve(Sbb, Sab.T), atol=1e-8
    )
    # Precision (Lambda) form of PRML §2.3.1: Sigma_a|b = Lambda_aa^-1,
    # mu_a|b = mu_a - Lambda_aa^-1 Lambda_ab (x_b - mu_b).
    Lam = np.linalg.inv(S)
    Laa, Lab = Lam[np.ix_(a, a)], Lam[np.ix_(a, b)]
    np.testing.assert_allclose(c.cov, np.linalg.inv(Laa), atol=1e-8)
    np.testing.assert_allclose(c.mean, m[a] - np.linalg.solve(Laa, Lab @ (xb - m[b])), atol=1e-8)
    # p(x_a, x_b) = p(x_b) p(x_a | x_b) at a random point.
    x = rng.normal(size=d)
    x[b] = xb
    joint = p.logpdf(x)
    assert joint == pytest.approx(p.marginal(b).logpdf(xb) + c.logpdf(x[a]), abs=1e-8)


@given(seeds, dims)
def test_marginal_affine_sum_product(seed, d):
    p, rng = random_mvn(seed, d)
    idx = rng.permutation(d)[:2]
    mg = p.marginal(idx)
    np.testing.assert_allclose(mg.mean, p.mean[idx])
    np.testing.assert_allclose(mg.cov, p.cov[np.ix_(idx, idx)], atol=1e-10)
    # Affine map (Imperial "Mathematics for Inference and Machine Learning" eq. 1.17-1.18).
    A, b = rng.normal(size=(d - 1, d)), rng.normal(size=d - 1)
    y = p.affine(A, b)
    np.testing.assert_allclose(y.mean, A @ p.mean + b, atol=1e-10)
    np.testing.assert_allclose(y.cov, A @ p.cov @ A.T, atol=1e-8)
    # Transformation identity (Stuttgart "Introduction to Machine Learning" slide 9:35): for
    # invertible F, N(F x + f | a, A) = N(x | F^-1 (a - f), F^-1 A F^-T) / |det F|, i.e. the
    # density of y = F x + f at F x + f is that of x at x divided by |det F|.
    F, f = rng.normal(size=(d, d)) + 2 * np.eye(d), rng.normal(size=d)
    x = rng.normal(size=(3, d))
    lhs = p.affine(F, f).logpdf(x @ F.T + f)
    np.testing.assert_allclose(lhs, p.logpdf(x) - np.linalg.slogdet(F)[1], atol=1e-8)
    # Sum of independent Gaussians (1.48).
    q, _ = random_mvn(seed + 1, d)
    s = p + q
    np.testing.assert_allclose(s.mean, p.mean + q.mean, atol=1e-12)
    np.testing.assert_allclose(s.cov, p.cov + q.cov, atol=1e-8)
    # Product with normaliser (1.42-1.44): N(x|a,A) N(x|b,B) = N(a|b,A+B) N(x|c,C).
    r, log_z = p.multiply(q)
    x = rng.normal(size=d)
    assert p.logpdf(x) + q.logpdf(x) == pytest.approx(log_z + r.logpdf(x), abs=1e-8)
    Ai, Bi = np.linalg.inv(p.cov), np.linalg.inv(q.cov)
    C = np.linalg.inv(Ai + Bi)
    np.testing.assert_allclose(r.cov, C, atol=1e-8)
    np.testing.assert_allclose(r.mean, C @ (Ai @ p.mean + Bi @ q.mean), atol=1e-8)
    sym = MultivariateNormal(q.mean, p.cov + q.cov).logpdf(p.mean)
    assert log_z == pytest.approx(sym, abs=1e-10)


@given(seeds, dims)
def test_canonical_form_round_trip(seed, d):
    p, _ = random_mvn(seed, d)
    h, J = p.to_canonical()
    np.testing.assert_allclose(J, np.linalg.inv(p.cov), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(h, J @ p.mean, atol=1e-8)
    back = MultivariateNormal.from_canonical(h, J)
    np.testing.assert_allclose(back.mean, p.mean, atol=1e-8)
    np.testing.assert_allclose(back.cov, p.cov, atol=1e-8)
    # Canonical product (Stuttgart "Introduction to Machine Learning" slide 9:35): N[x|a,A]
    # N[x|b,B] is proportional to N[x|a+b, A+B].
    q, _ = random_mvn(seed + 7, d)
    h2, J2 = q.to_canonical()
    prod = MultivariateNormal.from_canonical(h + h2, J + J2)
    r, _ = p.multiply(q)
    np.testing.assert_allclose(prod.mean, r.mean, atol=1e-8)
    np.testing.assert_allclose(prod.cov, r.cov, atol=1e-8)
    np.testing.assert_allclose(MultivariateNormal.from_precision(p.mean, J).cov, p.cov, atol=1e-8)


@given(seeds, dims, hst.integers(1, 3))
def test_linear_gaussian_joint_and_posterior(seed, d, k):
    prior, rng = random_mvn(seed, d)
    A, b = rng.normal(size=(k, d)), rng.normal(size=k)
    R = random_spd(rng, k)
    joint = linear_gaussian_joint(prior, A, R, b)
    S0 = prior.cov
    expected = np.block([[S0, S0 @ A.T], [A @ S0, A @ S0 @ A.T + R]])
    np.testing.assert_allclose(joint.cov, expected, atol=1e-8)
    y = rng.normal(size=k)
    post = linear_gaussian_posterior(prior, A, R, y, b)
    # PRML eq. 2.116 (the notes print A mu for Lambda mu): Sigma = (Lambda + A^T L A)^-1, mean
    # Sigma (A^T L (y-b) + Lambda mu).
    Lam, L = np.linalg.inv(S0), np.linalg.inv(R)
    Sig = np.linalg.inv(Lam + A.T @ L @ A)
    np.testing.assert_allclose(post.cov, Sig, atol=1e-8)
    np.testing.assert_allclose(post.mean, Sig @ (A.T @ L @ (y - b) + Lam @ prior.mean), atol=1e-7)


def test_affine_moments_by_monte_carlo_tv28(rng):
    # Imperial "Mathematics for Inference and Machine Learning" §1.2.1.2: the affine-transformation
    # proof "left as an exercise".
    p = MultivariateNormal([1.0, -1.0], [[1.0, 0.3], [0.3, 0.5]])
    A, b = np.array([[2.0, 1.0], [0.0, 3.0], [1.0, -1.0]]), np.array([0.5, 0.0, -2.0])
    n = 20_000
    Y = p.sample(n, rng) @ A.T + b
    S = A @ p.cov @ A.T
    assert np.all(np.abs(Y.mean(0) - (A @ p.mean + b)) < 5 * np.sqrt(np.diag(S) / n))
    # The 3x2 map has rank 2: y has no density and affine() says so.
    with pytest.raises(ValueError, match="full row rank"):
        p.affine(A, b)


def test_product_of_gaussians_exercise_11_2_univariate():
    # 004 sheet 11.2 with the normaliser N(a | b, A + B) of 9:35.
    a, A, b, B = 1.0, 2.0, -0.5, 0.5
    r, log_z = MultivariateNormal([a], [[A]]).multiply(MultivariateNormal([b], [[B]]))
    C = 1 / (1 / A + 1 / B)
    assert r.cov[0, 0] == pytest.approx(C)
    assert r.mean[0] == pytest.approx(C * (a / A + b / B))
    assert log_z == pytest.approx(Normal(b, A + B).logpdf(a))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mean": [0.0, 0.0], "cov": [[1.0, 2.0], [2.0, 1.0]]}, "positive definite"),
        ({"mean": [0.0, 0.0], "cov": [[1.0, 0.5], [0.0, 1.0]]}, "symmetric"),
        ({"mean": [0.0, 0.0], "cov": [[1.0, 0.0], [0.0, -1.0]]}, "positive definite"),
        ({"mean": [0.0, np.nan], "cov": np.eye(2)}, "NaN"),
        ({"mean": [0.0, 0.0], "cov": np.eye(3)}, "shape"),
        ({"mean": [0.0, 0.0], "cov": [[np.inf, 0], [0, 1.0]]}, "NaN or infinity"),
        ({"mean": [0.0, 0.0], "scale_tril": [[1.0, 0.0], [1.0, -1.0]]}, "diagonal"),
        ({"mean": [0.0, 0.0]}, "exactly one"),
        ({"mean": np.zeros((2, 2)), "cov": np.eye(3)}, "shape"),
    ],
)
def test_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MultivariateNormal(**kwargs)


def test_bad_inputs_to_methods():
    p = MultivariateNormal(np.zeros(3), np.eye(3))
    with pytest.raises(ValueError, match="last dimension"):
        p.logpdf(np.zeros((4, 2)))
    # NaN is an error, as for the univariate families, not a silent NaN density.
    with pytest.raises(ValueError, match="NaN"):
        p.logpdf([0.0, np.nan, 1.0])
    with pytest.raises(ValueError, match="NaN"):
        p.mahalanobis(np.full((2, 3), np.nan))
    with pytest.raises(ValueError, match="distinct"):
        p.condition([0, 0], [1.0, 1.0])
    with pytest.raises(ValueError, match="every component"):
        p.condition([0, 1, 2], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="length"):
        p.condition([0], [1.0, 2.0])
    with pytest.raises(ValueError, match="distinct"):
        p.marginal([3])
    with pytest.raises(ValueError, match="dimensions differ"):
        p + MultivariateNormal([0.0], [[1.0]])
    # Offsets of the wrong length name the argument instead of a NumPy broadcast error.
    with pytest.raises(ValueError, match="b must be a scalar or a vector of length 3"):
        p.affine(np.eye(3), [1.0, 2.0])
    with pytest.raises(ValueError, match="shift"):
        p + np.array([1.0, 2.0])
    with pytest.raises(ValueError, match="b must be"):
        linear_gaussian_joint(p, np.eye(3), 1.0, b=np.zeros(2))
    with pytest.raises(ValueError, match="NaN"):
        p.affine(np.eye(3), [0.0, np.nan, 0.0])
    np.testing.assert_allclose((p + 1.5).mean, 1.5)
    with pytest.raises(TypeError, match="size"):
        p.sample(2.5, rng=0)
    with pytest.raises(AttributeError, match="immutable"):
        p.mean = np.ones(3)
    with pytest.raises(ValueError):
        p.mean[0] = 1.0  # read-only array


def test_near_singular_covariance_with_jitter_warns():
    from mathlearn.exceptions import NumericalWarning

    S = np.ones((2, 2))
    with pytest.raises(ValueError, match="positive definite"):
        MultivariateNormal([0.0, 0.0], S)
    with pytest.warns(NumericalWarning):
        p = MultivariateNormal([0.0, 0.0], S, jitter="auto")
    assert np.all(np.isfinite(p.logpdf(np.zeros((2, 2)))))


def test_ml_fit(rng):
    X = rng.normal(size=(40, 3)) @ np.array([[1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [0.0, 0.3, 2.0]])
    fit = MultivariateNormal.fit(X)
    np.testing.assert_allclose(fit.mean, X.mean(0))
    np.testing.assert_allclose(fit.cov, np.cov(X.T, bias=True), atol=1e-12)
    np.testing.assert_allclose(
        MultivariateNormal.fit(X, unbiased=True).cov, np.cov(X.T), atol=1e-12
    )
    # The ML estimate maximises the likelihood: perturbations lower it.
    base = fit.logpdf(X).sum()
    assert MultivariateNormal(fit.mean + 0.01, fit.cov).logpdf(X).sum() < base
    assert MultivariateNormal(fit.mean, 1.01 * fit.cov).logpdf(X).sum() < base
    with pytest.raises(ValueError, match="samples"):
        MultivariateNormal.fit(X[:3])
    with pytest.raises(ValueError, match="singular"):
        MultivariateNormal.fit(np.c_[X[:, :2], X[:, 0] + X[:, 1]])
