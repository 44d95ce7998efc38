"""Implicit ALS against the closed-form per-user solve with dense confidence matrices."""

import numpy as np
import pytest
import scipy.sparse as sp

from mathlearn.recommender import ImplicitALS, Ratings, precision_at_k


def _interactions(seed=0, n_users=30, n_items=20, density=0.2):
    rng = np.random.default_rng(seed)
    mask = rng.uniform(size=(n_users, n_items)) < density
    counts = rng.integers(1, 5, size=(n_users, n_items))
    u, i = np.nonzero(mask)
    M = sp.csr_array((counts[u, i].astype(float), (u, i)), shape=mask.shape)
    return Ratings.from_sparse(M), mask, counts


def _dense_user_solve(Y, mask, counts, alpha, lam):
    X = np.empty((mask.shape[0], Y.shape[1]))
    for u in range(mask.shape[0]):
        c = 1.0 + alpha * counts[u] * mask[u]
        p = mask[u].astype(float)
        X[u] = np.linalg.solve(Y.T @ (c[:, None] * Y) + lam * np.eye(Y.shape[1]), Y.T @ (c * p))
    return X


def test_cholesky_solver_is_the_closed_form():
    r, mask, counts = _interactions()
    m = ImplicitALS(4, regularization=0.5, alpha=3.0, max_iter=3, solver="cholesky",
                    random_state=0).fit(r)  # fmt: skip
    # The last item step solved every item exactly given the users; check the users' step
    # from the fitted items is a fixed point within the ALS contraction (recompute it with
    # dense C^u and compare with one more exact step of the model's own solver).
    X = _dense_user_solve(m.item_factors_, mask, counts, 3.0, 0.5)
    Yt = _dense_user_solve(m.user_factors_, mask.T, counts.T, 3.0, 0.5)
    np.testing.assert_allclose(m.item_factors_, Yt, rtol=1e-9, atol=1e-12)
    m4 = ImplicitALS(4, regularization=0.5, alpha=3.0, max_iter=4, solver="cholesky",
                     random_state=0).fit(r)  # fmt: skip
    np.testing.assert_allclose(m4.user_factors_, X, rtol=1e-9, atol=1e-12)


def test_cg_converges_to_the_exact_solve_and_objective_decreases():
    r, _, _ = _interactions(1)
    exact = ImplicitALS(3, regularization=0.3, alpha=2.0, max_iter=8, solver="cholesky",
                        random_state=0).fit(r)  # fmt: skip
    cg = ImplicitALS(3, regularization=0.3, alpha=2.0, max_iter=8, solver="cg", cg_steps=3,
                     random_state=0).fit(r)  # fmt: skip
    # k = 3 CG steps solve a 3-dimensional SPD system exactly (up to rounding).
    np.testing.assert_allclose(cg.user_factors_, exact.user_factors_, rtol=1e-6, atol=1e-9)
    few = ImplicitALS(5, regularization=0.3, alpha=2.0, max_iter=10, cg_steps=1,
                      random_state=0).fit(r)  # fmt: skip
    h = np.array(few.objective_)
    assert np.all(np.diff(h) <= 1e-12 * h[:-1])


def test_objective_matches_dense_formula():
    r, mask, counts = _interactions(2)
    m = ImplicitALS(3, regularization=0.2, alpha=5.0, max_iter=2, random_state=0).fit(r)
    X, Y = m.user_factors_, m.item_factors_
    C = 1.0 + 5.0 * counts * mask
    dense = np.sum(C * (mask - X @ Y.T) ** 2) + 0.2 * (np.sum(X**2) + np.sum(Y**2))
    assert m.objective_[-1] == pytest.approx(dense, rel=1e-12)


def test_rejects_non_positive_values_and_unknown_user_gets_popularity():
    r = Ratings.from_triples([0, 1], [0, 1], [1.0, -2.0])
    with pytest.raises(ValueError, match="positive"):
        ImplicitALS().fit(r)
    r, mask, _ = _interactions(3)
    m = ImplicitALS(2, max_iter=2, random_state=0).fit(r)
    items, _ = m.recommend("stranger", n=3)
    popular = np.argsort(-mask.sum(0), kind="stable")[:3]
    assert items.tolist() == popular.tolist()


def test_implicit_package_precision_comparable():
    implicit = pytest.importorskip("implicit")
    from threadpoolctl import threadpool_limits

    from mathlearn.recommender import leave_k_out_split

    rng = np.random.default_rng(0)
    n_u, n_i, k = 300, 120, 4
    A = rng.standard_normal((n_u, k))
    B = rng.standard_normal((n_i, k))
    logits = A @ B.T - 2.5
    mask = rng.uniform(size=logits.shape) < 1 / (1 + np.exp(-logits))
    u, i = np.nonzero(mask)
    r = Ratings.from_triples(u, i, np.ones(u.size))
    train, test = leave_k_out_split(r, k=2, random_state=0)
    ours = ImplicitALS(8, regularization=0.1, alpha=10.0, max_iter=10, random_state=0).fit(train)
    M = sp.csr_matrix((10.0 * train.values, (train.users, train.items)), shape=r.shape)
    limit = threadpool_limits(1, "blas")
    theirs = implicit.cpu.als.AlternatingLeastSquares(
        factors=8, regularization=0.1, alpha=1.0, iterations=10, random_state=0,
        num_threads=1, calculate_training_loss=False,
    )  # fmt: skip
    try:
        theirs.fit(M, show_progress=False)
    finally:
        limit.restore_original_limits()
    rel = [set(test.items[test.users == a].tolist()) for a in range(n_u)]
    rec_ours = [ours.recommend(a, n=10)[0].tolist() for a in range(n_u)]
    ids, _ = theirs.recommend(np.arange(n_u), M[np.arange(n_u)], N=10)
    rec_theirs = [row.tolist() for row in ids]
    p_ours = precision_at_k(rec_ours, rel, 10)
    p_theirs = precision_at_k(rec_theirs, rel, 10)
    assert p_ours >= p_theirs - 0.02
