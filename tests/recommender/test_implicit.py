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


def _fit(r, dtype, **kw):
    params = dict(n_components=3, regularization=0.3, alpha=2.0, max_iter=8, random_state=0)
    return ImplicitALS(**{**params, **kw}, dtype=dtype).fit(r)


def test_float32_sweeps_follow_the_double_ones():
    # The single-precision sweeps (compiled) against the double-precision ones from the same
    # start (the float64 draw rounded once). Each row's CG is a few dozen operations on
    # numbers of one scale, each rounded to float32 (eps 6e-8); the per-row systems here
    # have condition numbers of a few units (regularization 0.3 against Gram entries of the
    # same order), so one sweep moves the factors by about 1e-6 of their size. Over 8 sweeps
    # the alternation contracts, not amplifies, those differences: 1e-4 of the largest
    # factor bounds them with a wide margin, and the objectives (sums of positive terms)
    # agree to 1e-5.
    from mathlearn import _ext

    if _ext.load("_als32") is None:
        pytest.skip("_als32 not built (a source tree without `setup.py build_ext --inplace`)")
    r, _, _ = _interactions(4)
    m64 = _fit(r, np.float64)
    m32 = _fit(r, np.float32)
    assert m32.user_factors_.dtype == m32.item_factors_.dtype == np.float32
    for a, b in ((m32.user_factors_, m64.user_factors_), (m32.item_factors_, m64.item_factors_)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-4 * np.abs(b).max())
    np.testing.assert_allclose(m32.objective_, m64.objective_, rtol=1e-5)
    # k = 3 CG steps solve each 3-dimensional system exactly up to rounding: the float32
    # sweeps follow the exact (Cholesky) ones too, and the objective never rises by more
    # than rounding.
    exact = _fit(r, np.float64, solver="cholesky")
    np.testing.assert_allclose(m32.user_factors_, exact.user_factors_, rtol=0,
                               atol=1e-4 * np.abs(exact.user_factors_).max())  # fmt: skip
    h = np.array(m32.objective_)
    assert np.all(np.diff(h) <= 1e-5 * h[:-1])
    # predictions are float64 from the float32 factors
    p = m32.predict([0, 1], [0, 1])
    assert p.dtype == np.float64
    np.testing.assert_allclose(p, m64.predict([0, 1], [0, 1]), rtol=0, atol=1e-4)
    # the string form of the dtype names the same thing
    np.testing.assert_array_equal(_fit(r, "float32").user_factors_, m32.user_factors_)


def test_float32_without_the_compiled_sweeps_rounds_the_double_fit(monkeypatch):
    from mathlearn.recommender import _implicit

    r, _, _ = _interactions(5)
    m64 = _fit(r, np.float64)
    monkeypatch.setattr(_implicit, "_compiled_sweeps32", lambda: None)
    m32 = _fit(r, np.float32)
    np.testing.assert_array_equal(m32.user_factors_, m64.user_factors_.astype(np.float32))
    np.testing.assert_array_equal(m32.item_factors_, m64.item_factors_.astype(np.float32))
    assert m32.objective_ == m64.objective_
    # solver="cholesky" always runs in double precision
    c32 = _fit(r, np.float32, solver="cholesky")
    c64 = _fit(r, np.float64, solver="cholesky")
    np.testing.assert_array_equal(c32.item_factors_, c64.item_factors_.astype(np.float32))


@pytest.mark.parametrize("top, alpha", [(1e38, 40.0), (3e38, 1.0)])
def test_float32_overflow_is_refused(top, alpha):
    from mathlearn import _ext

    if _ext.load("_als32") is None:
        pytest.skip("_als32 not built")
    # alpha r beyond float32's range is refused before the sweeps; a weight just inside
    # it (3e38) overflows the residual's squared norm in the first row: refused after.
    r = Ratings.from_triples([0, 0, 1, 2], [0, 1, 1, 2], [1.0, top, 2.0, 1.0])
    with pytest.raises(ValueError, match=r"dtype=np\.float64"):
        ImplicitALS(2, alpha=alpha, max_iter=2, dtype=np.float32, random_state=0).fit(r)
    # double precision answers (finite factors)
    m = ImplicitALS(2, alpha=alpha, max_iter=2, random_state=0).fit(r)
    assert np.isfinite(m.user_factors_).all()


@pytest.mark.parametrize("n, k", [(7, 3), (1000, 64), (50_000, 8)])
def test_float32_start_is_the_double_start_rounded(n, k):
    # The float32 factors are drawn in blocks (no float64 array of their size): the same
    # numbers as one float64 draw from the same generator, each rounded once.
    from mathlearn.recommender._implicit import _normal_rows

    got = _normal_rows(np.random.default_rng(1), n, k, 0.01, np.float32)
    want = (0.01 * np.random.default_rng(1).standard_normal((n, k))).astype(np.float32)
    np.testing.assert_array_equal(got, want)
