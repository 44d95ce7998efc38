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


def test_bpmf_conditional_is_the_gaussian_full_conditional():
    # One Gibbs draw of the users given fixed items, many times: sample mean and covariance
    # of p_u equal the closed-form conditional N(Lambda^-1 tau Q^T r, Lambda^-1).
    from mathlearn.recommender._base import sample_rows
    from mathlearn.recommender._factor import Pattern

    r = _small(4, bias_std=0.0)
    pat = Pattern(r)
    rng = np.random.default_rng(0)
    Q = rng.standard_normal((r.shape[1], 2))
    tau, prec = 4.0, 2.0
    one = pat.R[[0]]
    draws = np.stack([sample_rows(one, one.data, Q, tau, prec, rng)[0] for _ in range(2000)])
    idx = pat.R.indices[pat.R.indptr[0] : pat.R.indptr[1]]
    y = pat.R.data[pat.R.indptr[0] : pat.R.indptr[1]]
    Lam = prec * np.eye(2) + tau * Q[idx].T @ Q[idx]
    cov = np.linalg.inv(Lam)
    mean = cov @ (tau * Q[idx].T @ y)
    se = np.sqrt(np.diag(cov) / 2000)
    assert np.all(np.abs(draws.mean(0) - mean) < 5 * se)
    np.testing.assert_allclose(np.cov(draws.T), cov, rtol=0.15, atol=0.02 * np.abs(cov).max())


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


def test_compiled_sgd_route_matches_the_python_loop(monkeypatch):
    import mathlearn.recommender._sgd as sgd_module

    r = _small(9)
    kw = {"learning_rate": 0.01, "regularization": 0.05, "max_iter": 3, "random_state": 2}
    loop = SGDMatrixFactorization(3, **kw).fit(r)
    monkeypatch.setattr(sgd_module, "_COMPILED_WORK", 1)
    compiled = SGDMatrixFactorization(3, **kw).fit(r)
    # Same updates in the same order; only the summation order of the k-term dot product
    # may differ (BLAS against a plain loop).
    np.testing.assert_allclose(compiled.user_factors_, loop.user_factors_, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(compiled.item_bias_, loop.item_bias_, rtol=1e-10, atol=1e-13)
