"""SGD MF, PMF (MAP and Gibbs), truncated SVD and content-based models against independent
references: hand-written update loops, scipy.optimize on the same objective, dense SVD and
dense ridge solves."""

import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp

from mathlearn.datasets import make_low_rank_ratings
from mathlearn.exceptions import ConvergenceWarning
from mathlearn.recommender import (
    ALS,
    BayesianProbabilisticMatrixFactorization,
    ContentBased,
    ProbabilisticMatrixFactorization,
    Ratings,
    SGDMatrixFactorization,
    TruncatedSVDRecommender,
    rmse,
)


def _small(seed=0, **kw):
    kw = {"rank": 2, "noise": 0.3, **kw}
    return make_low_rank_ratings(25, 15, 180, random_state=seed, **kw)


def test_sgd_batch_one_is_the_notes_update_rule():
    r = _small()
    lr, lam, k = 0.01, 0.05, 3
    m = SGDMatrixFactorization(k, learning_rate=lr, regularization=lam, max_iter=2,
                               batch_size=1, shuffle=False, random_state=7).fit(r)  # fmt: skip
    rng = np.random.default_rng(7)
    P = 0.1 * rng.standard_normal((r.shape[0], k))
    Q = 0.1 * rng.standard_normal((r.shape[1], k))
    bu, bi, mu = np.zeros(r.shape[0]), np.zeros(r.shape[1]), r.values.mean()
    for _ in range(2):
        for u, i, y in zip(r.users, r.items, r.values, strict=False):
            e = y - mu - bu[u] - bi[i] - P[u] @ Q[i]
            bu[u] += lr * (e - lam * bu[u])
            bi[i] += lr * (e - lam * bi[i])
            P[u], Q[i] = (
                (1 - lr * lam) * P[u] + lr * e * Q[i],
                (1 - lr * lam) * Q[i] + lr * e * P[u],
            )
    np.testing.assert_allclose(m.user_factors_, P, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(m.item_factors_, Q, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(m.user_bias_, bu, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("biases", [True, False])
@pytest.mark.parametrize("batch_size", [1, 8])
def test_sgd_objective_is_the_documented_sum_at_the_fitted_factors(biases, batch_size):
    # objective_[-1] against the formula evaluated directly (math.fsum, correctly rounded):
    # the helper adds ~180 squares one after another, so its relative error is below
    # 180 eps (a few 1e-14) plus the dot products' own rounding.
    import math

    r = _small(2)
    lam = 0.05
    m = SGDMatrixFactorization(5, regularization=lam, max_iter=3, biases=biases,
                               batch_size=batch_size, random_state=1).fit(r)  # fmt: skip
    P, Q, bu, bi = m.user_factors_, m.item_factors_, m.user_bias_, m.item_bias_
    e = r.values - m.offset_ - bu[r.users] - bi[r.items] - np.sum(P[r.users] * Q[r.items], 1)
    n_u, n_i = (
        np.bincount(r.users, minlength=r.shape[0]),
        np.bincount(r.items, minlength=r.shape[1]),
    )
    pen = math.fsum(n_u * (np.sum(P**2, 1) + bu**2)) + math.fsum(n_i * (np.sum(Q**2, 1) + bi**2))
    expected = math.fsum(e**2) + lam * pen
    assert m.objective_[-1] == pytest.approx(expected, rel=1e-12)
    assert len(m.objective_) == 3


def test_sgd_minibatch_reaches_the_als_objective():
    r = _small(1)
    lam = 0.05
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        als = ALS(2, regularization=lam, regularization_weighting="count", max_iter=300,
                  tol=1e-12, random_state=0).fit(r)  # fmt: skip
    sgd = SGDMatrixFactorization(2, learning_rate=0.02, regularization=lam, max_iter=200,
                                 batch_size=16, random_state=0).fit(r)  # fmt: skip
    # SGD with a constant step hovers near a minimum: within 1% of ALS's objective.
    assert sgd.objective_[-1] <= 1.01 * als.objective_[-1]


def _pmf_objective(theta, r, n_u, n_i, k, lam_u, lam_i, mu):
    P = theta[: n_u * k].reshape(n_u, k)
    Q = theta[n_u * k :].reshape(n_i, k)
    e = r.values - mu - np.sum(P[r.users] * Q[r.items], axis=1)
    f = e @ e + lam_u * np.sum(P**2) + lam_i * np.sum(Q**2)
    gP = np.zeros_like(P)
    gQ = np.zeros_like(Q)
    np.add.at(gP, r.users, -2 * e[:, None] * Q[r.items])
    np.add.at(gQ, r.items, -2 * e[:, None] * P[r.users])
    return f, np.r_[(gP + 2 * lam_u * P).ravel(), (gQ + 2 * lam_i * Q).ravel()]


def test_pmf_map_is_a_minimum_of_the_posterior():
    r = _small(2, bias_std=0.0)
    s2, su, si, k = 0.09, 0.5, 2.0, 2
    m = ProbabilisticMatrixFactorization(k, noise_variance=s2, user_prior_variance=su,
                                         item_prior_variance=si, max_iter=2000, tol=1e-14,
                                         random_state=0)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m.fit(r)
    n_u, n_i = r.shape
    args = (r, n_u, n_i, k, s2 / su, s2 / si, m.offset_)
    theta = np.r_[m.user_factors_.ravel(), m.item_factors_.ravel()]
    f, g = _pmf_objective(theta, *args)
    assert m.objective_[-1] == pytest.approx(f / (2 * s2), rel=1e-12)
    # Stationary: the gradient (derived independently above) vanishes...
    assert np.linalg.norm(g) < 1e-5 * np.linalg.norm(theta) * (1 + f)
    # ...and L-BFGS on the same objective, started there, finds nothing lower.
    res = scipy.optimize.minimize(_pmf_objective, theta, args=args, jac=True, method="L-BFGS-B",
                                  options={"ftol": 1e-15, "gtol": 1e-12})  # fmt: skip
    assert res.fun >= f * (1 - 1e-9)
    # From a random start L-BFGS reaches a point with the same objective (rank-invariant
    # predictions up to the local minimum reached).
    rng = np.random.default_rng(1)
    opts = {"ftol": 1e-15, "gtol": 1e-10, "maxiter": 20000}
    start = 0.1 * rng.standard_normal(theta.size)
    res2 = scipy.optimize.minimize(
        _pmf_objective, start, args=args, jac=True, method="L-BFGS-B", options=opts
    )
    assert res2.fun == pytest.approx(f, rel=1e-5)


def test_bpmf_matches_the_exact_posterior_in_a_conjugate_case():
    # With the item factors pinned by a huge prior precision on one side it is not
    # conjugate; instead check the Gibbs chain on rank 1 against the MAP and that the
    # predictive std shrinks with more ratings.
    r = make_low_rank_ratings(40, 30, 700, rank=1, noise=0.3, bias_std=0.0, random_state=3)
    m = BayesianProbabilisticMatrixFactorization(1, noise_variance=0.09, n_samples=50,
                                                 burn_in=20, random_state=0).fit(r)  # fmt: skip
    pmf = ProbabilisticMatrixFactorization(1, noise_variance=0.09, max_iter=5000, tol=1e-10,
                                           random_state=0)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        pmf.fit(r)
    u = np.repeat(np.arange(40), 30)
    i = np.tile(np.arange(30), 40)
    mean, std = m.predict(u, i, return_std=True)
    # Posterior mean and MAP agree within the posterior spread.
    assert np.median(np.abs(mean - pmf.predict(u, i)) / (std - 0.3 + 1e-12)) < 1.0
    assert np.all(std >= np.sqrt(0.09))
    _, std_new = m.predict(["new"], [0], return_std=True)
    assert std_new[0] == pytest.approx(np.sqrt(0.09 + 1.0))


@pytest.mark.parametrize("hyperpriors", [False, True])
def test_bpmf_user_draws_follow_the_gaussian_full_conditional(hyperpriors):
    # Draw s of the users is from N(m_s, Lambda_s^-1) given the items of draw s - 1 and the
    # user prior (mu_U, Lambda_U) of draw s - 1, with the closed form written out here:
    # Lambda_s = Lambda_U + tau sum_i q_i q_i^T, m_s = Lambda_s^-1 (tau sum_i r_ui q_i +
    # Lambda_U mu_U). Standardised, z = L_s^T (p - m_s) with Lambda_s = L_s L_s^T, every
    # coordinate of every user and draw is an independent standard normal.
    r = _small(4, bias_std=0.0)
    tau = 4.0
    m = BayesianProbabilisticMatrixFactorization(2, noise_variance=1 / tau,
                                                 hyperpriors=hyperpriors, n_samples=150,
                                                 burn_in=0, random_state=0).fit(r)  # fmt: skip
    t = r.values - m.offset_
    zs = []
    for s in range(1, 150):
        Q, P = m.item_samples_[s - 1], m.user_samples_[s]
        mu0, Lam0 = m.user_prior_mean_samples_[s - 1], m.user_prior_precision_samples_[s - 1]
        for u in range(r.shape[0]):
            sel = r.users == u
            Qu = Q[r.items[sel]]
            Lam = Lam0 + tau * Qu.T @ Qu
            mean = np.linalg.solve(Lam, tau * Qu.T @ t[sel] + Lam0 @ mu0)
            zs.append(np.linalg.cholesky(Lam).T @ (P[u] - mean))
    z = np.array(zs)
    n = z.shape[0]
    # Mean 0 (standard error 1 / sqrt(n)), covariance I (entry standard errors sqrt(2 / n)
    # on the diagonal, sqrt(1 / n) off it): five standard errors.
    assert np.all(np.abs(z.mean(0)) < 5 / np.sqrt(n))
    C = z.T @ z / n
    assert np.all(np.abs(np.diag(C) - 1) < 5 * np.sqrt(2 / n))
    assert abs(C[0, 1]) < 5 / np.sqrt(n)
    if not hyperpriors:
        np.testing.assert_array_equal(m.user_prior_precision_samples_[0], np.eye(2))


def test_bpmf_hyperprior_conditional_is_the_normal_wishart_update():
    # The closed form of Salakhutdinov and Mnih's eq. (14) for N user vectors with
    # mu_0 = 0, beta_0 = 2, nu_0 = k, W_0 = I / (k sigma_u^2), against the conjugate update
    # the sampler draws from.
    from mathlearn.distributions import NormalWishartModel

    rng = np.random.default_rng(0)
    k, var = 3, 0.5
    U = 1.5 + rng.standard_normal((40, k)) @ np.diag([1.0, 0.3, 2.0])
    N = U.shape[0]
    W0 = np.eye(k) / (k * var)
    ubar = U.mean(0)
    S = (U - ubar).T @ (U - ubar) / N
    beta_n, nu_n = 2.0 + N, k + N
    mu_n = (2.0 * np.zeros(k) + N * ubar) / (2.0 + N)
    Wn_inv = np.linalg.inv(W0) + N * S + 2.0 * N / (2.0 + N) * np.outer(ubar, ubar)
    mean, beta, nu, W = NormalWishartModel(np.zeros(k), 2.0, float(k), W0).posterior(U).params
    np.testing.assert_allclose(mean, mu_n, rtol=1e-13)
    assert beta == beta_n and nu == nu_n
    np.testing.assert_allclose(W, np.linalg.inv(Wn_inv), rtol=1e-11)


def test_bpmf_hyperprior_draws_have_the_normal_wishart_moments():
    # Draw s of (mu_U, Lambda_U) is from the Normal-Wishart conditional given the users of
    # draw s: E Lambda = nu* W*, Var Lambda_ab = nu* (W*_ab^2 + W*_aa W*_bb), and
    # R^T (mu - mu*) ~ N(0, I) with beta* Lambda = R R^T. Averages over the draws against
    # these moments, tolerance five Monte Carlo standard errors.
    from mathlearn.distributions import NormalWishartModel

    r = make_low_rank_ratings(30, 20, 300, rank=2, noise=0.3, random_state=5)
    k, S = 2, 200
    m = BayesianProbabilisticMatrixFactorization(k, noise_variance=0.09, user_prior_variance=0.5,
                                                 n_samples=S, burn_in=0,
                                                 random_state=1).fit(r)  # fmt: skip
    dev, var, zs = np.zeros((k, k)), np.zeros((k, k)), []
    for s in range(S):
        post = NormalWishartModel(np.zeros(k), 2.0, float(k), np.eye(k) / (k * 0.5)).posterior(
            m.user_samples_[s]
        )
        mu_n, beta_n, nu_n, W_n = post.params
        Lam = m.user_prior_precision_samples_[s]
        dev += Lam - nu_n * W_n
        var += nu_n * (W_n**2 + np.outer(np.diag(W_n), np.diag(W_n)))
        R = np.linalg.cholesky(beta_n * Lam)
        zs.append(R.T @ (m.user_prior_mean_samples_[s] - mu_n))
    assert np.all(np.abs(dev) < 5 * np.sqrt(var))
    z = np.array(zs)
    assert np.all(np.abs(z.mean(0)) < 5 / np.sqrt(S))
    assert np.all(np.abs(z.var(0) - 1) < 5 * np.sqrt(2 / S))


def test_bpmf_hyperpriors_predict_no_worse_than_the_fixed_prior():
    # Factors of scale 2 (variance 4 per coordinate's product), prior variances left at 1:
    # the hyperpriors learn the scale. Held-out RMSE within one standard error of the
    # fixed-prior fit's, or better.
    r = make_low_rank_ratings(80, 60, 2400, rank=3, noise=0.3, bias_std=0.0, random_state=6)
    r = Ratings(r.users, r.items, 2.0 * r.values, r.user_ids, r.item_ids)
    rng = np.random.default_rng(0)
    test = rng.uniform(size=r.nnz) < 0.15
    train = r.subset(~test)
    kw = {"noise_variance": 0.36, "n_samples": 40, "burn_in": 20, "random_state": 0}
    errs = {}
    for hyper in (False, True):
        m = BayesianProbabilisticMatrixFactorization(3, hyperpriors=hyper, **kw).fit(train)
        errs[hyper] = r.values[test] - m.predict(r.users[test], r.items[test])
    rmse_fixed = np.sqrt(np.mean(errs[False] ** 2))
    se = np.std(errs[False] ** 2) / np.sqrt(test.sum()) / (2 * rmse_fixed)
    assert np.sqrt(np.mean(errs[True] ** 2)) <= rmse_fixed + se


def test_truncated_svd_is_eckart_young_on_full_data():
    rng = np.random.default_rng(0)
    Y = rng.standard_normal((12, 9))
    r = Ratings.from_sparse(sp.csr_array(Y))
    m = TruncatedSVDRecommender(3, center=False, random_state=0).fit(r)
    U, s, Vt = np.linalg.svd(Y)
    best = (U[:, :3] * s[:3]) @ Vt[:3]
    u, i = np.nonzero(np.ones_like(Y))
    np.testing.assert_allclose(m.predict(u, i), best[u, i], atol=1e-10)
    np.testing.assert_allclose(m.singular_values_, s[:3], rtol=1e-10)
    with pytest.raises(ValueError, match="below min"):
        TruncatedSVDRecommender(9).fit(r)


def test_truncated_svd_centred_beats_baseline_on_low_rank_data():
    r = make_low_rank_ratings(200, 100, 12000, rank=2, noise=0.2, random_state=5)
    m = TruncatedSVDRecommender(2, random_state=0).fit(r)
    assert rmse(r.values, m.predict(r.users, r.items)) < np.std(r.values)


def test_content_based_is_the_per_user_ridge():
    rng = np.random.default_rng(6)
    r = _small(6)
    F = rng.standard_normal((r.shape[1], 3))
    lam = 0.7
    m = ContentBased(regularization=lam, center=False).fit(r, item_features=F)
    for u in range(r.shape[0]):
        sel = r.users == u
        A, y = F[r.items[sel]], r.values[sel]
        np.testing.assert_allclose(
            m.user_factors_[u], np.linalg.solve(A.T @ A + lam * np.eye(3), A.T @ y), rtol=1e-10
        )
    G = rng.standard_normal((r.shape[0], 2))
    m2 = ContentBased(regularization=lam).fit(r, user_features=G)
    i = 3
    sel = r.items == i
    A, y = G[r.users[sel]], r.values[sel] - r.values.mean()
    np.testing.assert_allclose(
        m2.item_factors_[i], np.linalg.solve(A.T @ A + lam * np.eye(2), A.T @ y), rtol=1e-10
    )
    with pytest.raises(ValueError, match="exactly one"):
        ContentBased().fit(r)
    with pytest.raises(ValueError, match="NaN"):
        ContentBased().fit(r, item_features=np.full((r.shape[1], 2), np.nan))
    with pytest.raises(ValueError, match="one row per id"):
        ContentBased().fit(r, item_features=np.ones((2, 2)))


def test_surprise_svd_no_better_than_sgd_on_the_same_data():
    surprise = pytest.importorskip("surprise")
    import pandas as pd

    r, truth = make_low_rank_ratings(100, 60, 3000, rank=2, noise=0.3, random_state=8,
                                     return_truth=True)  # fmt: skip
    df = pd.DataFrame({"user": r.users, "item": r.items, "rating": r.values})
    data = surprise.Dataset.load_from_df(df, surprise.Reader(rating_scale=(-50, 50)))
    # Past the saddle at the small initialisation (both start at N(0, 0.1^2)): 120 epochs.
    theirs = surprise.SVD(n_factors=2, n_epochs=120, lr_all=0.01, random_state=0).fit(
        data.build_full_trainset()
    )
    ours = SGDMatrixFactorization(2, learning_rate=0.01, max_iter=120, batch_size=64,
                                  random_state=0).fit(r)  # fmt: skip
    u = np.repeat(np.arange(100), 60)[::3]
    i = np.tile(np.arange(60), 100)[::3]
    est = np.array([theirs.predict(a, b).est for a, b in zip(u, i, strict=False)])
    assert rmse(truth(u, i), ours.predict(u, i)) <= 1.05 * rmse(truth(u, i), est)
