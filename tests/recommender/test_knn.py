"""User- and item-based CF against the notes' toy table and a NumPy re-implementation.

The toy ratings table of Oxford "Advanced Topics in Statistical Machine Learning" §6.1.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from mathlearn.datasets import load_toy_ratings
from mathlearn.recommender import ItemKNN, Ratings, UserKNN


def _sim(model, a, b):
    ua, ub = model._user_index[a], model._user_index[b]
    K = model.similarity_
    row = K.indices[K.indptr[ua] : K.indptr[ua + 1]]
    if ub not in row:
        return None
    return float(K[[ua], [ub]][0])


def test_d1_user_means_and_similarities():
    model = UserKNN().fit(load_toy_ratings())
    np.testing.assert_allclose(
        model.user_means_, [11 / 3, 11 / 3, 10 / 3, 1.0, 10 / 3], rtol=1e-15
    )
    assert _sim(model, "Alice", "Bob") == pytest.approx(1.0, abs=1e-15)
    assert _sim(model, "Alice", "Chuck") == pytest.approx(-44 / math.sqrt(4240), rel=1e-14)
    assert _sim(model, "Alice", "Chuck") == pytest.approx(-0.675725, abs=5e-7)
    assert _sim(model, "Alice", "Eve") == pytest.approx(1.0, abs=1e-15)
    assert _sim(model, "Bob", "Chuck") == pytest.approx(-1.0, abs=1e-15)
    assert _sim(model, "Bob", "Eve") == pytest.approx(-6 / math.sqrt(1008), rel=1e-14)
    assert _sim(model, "Chuck", "Eve") == pytest.approx(1.0, abs=1e-15)
    # Undefined: no co-rated movie (Alice-Dan) or 0/0 (Dan's deviation is 0).
    for other in ("Alice", "Bob", "Chuck", "Eve"):
        assert _sim(model, "Dan", other) is None
        assert _sim(model, other, "Dan") is None
    assert (model.similarity_ != model.similarity_.T).nnz == 0


@pytest.mark.parametrize(
    "k, expected", [(1, 2.0), (2, 19 / 6), (3, 2.872038), (4, 2.872038), (40, 2.872038)]
)
def test_d1_predictions(k, expected):
    # k = 1 ties Bob and Eve (kappa = 1); the documented tie-break takes the smaller index,
    # Bob: 11/3 + (2 - 11/3) = 2.
    model = UserKNN(n_neighbors=k).fit(load_toy_ratings())
    got = model.predict(["Alice"], ["Happy Gilmore"])[0]
    assert got == pytest.approx(expected, abs=5e-7 if k > 2 else 1e-14)


def _naive_user_knn(Y, mask, u, i, k, kind):
    """(6.9)-(6.10) written out densely with loops (small data only)."""
    n = Y.shape[0]
    means = np.array([Y[v, mask[v]].mean() for v in range(n)])
    col_means = np.array([Y[mask[:, j], j].mean() for j in range(Y.shape[1])])

    def dev(v):
        if kind == "pearson":
            return Y[v] - means[v]
        if kind == "adjusted_cosine":
            return Y[v] - col_means
        return Y[v]

    cands = []
    for v in range(n):
        if v == u or not mask[v, i]:
            continue
        co = mask[u] & mask[v]
        if not co.any():
            continue
        a, b = dev(u)[co], dev(v)[co]
        den = math.sqrt((a @ a) * (b @ b))
        if den == 0:
            continue
        cands.append((-(a @ b) / den, v))
    cands.sort()
    top = cands[:k]
    den = sum(abs(s) for s, _ in top)
    if den == 0:
        return means[u]
    return means[u] + sum(-s * (Y[v, i] - means[v]) for s, v in top) / den


@pytest.mark.parametrize("kind", ["pearson", "cosine", "adjusted_cosine"])
def test_user_knn_matches_naive(kind):
    rng = np.random.default_rng(3)
    Y = rng.integers(1, 6, size=(15, 12)).astype(float) + rng.uniform(0, 0.5, (15, 12))
    mask = rng.uniform(size=Y.shape) < 0.7  # few single-item overlaps (kappa = +-1 ties)
    u, i = np.nonzero(mask)
    r = Ratings.from_triples(u, i, Y[u, i])
    model = UserKNN(n_neighbors=3, similarity=kind).fit(r)
    qu, qi = np.nonzero(~mask)
    got = model.predict(qu, qi)
    want = [_naive_user_knn(Y, mask, a, b, 3, kind) for a, b in zip(qu, qi, strict=False)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_item_knn_is_user_knn_on_the_transpose():
    rng = np.random.default_rng(4)
    Y = rng.uniform(1, 5, size=(14, 11))
    mask = rng.uniform(size=Y.shape) < 0.5
    u, i = np.nonzero(mask)
    items = ItemKNN(n_neighbors=4).fit(Ratings.from_triples(u, i, Y[u, i]))
    users_t = UserKNN(n_neighbors=4).fit(Ratings.from_triples(i, u, Y[u, i]))
    qu, qi = np.nonzero(~mask)
    np.testing.assert_allclose(items.predict(qu, qi), users_t.predict(qi, qu), rtol=1e-12)


@pytest.mark.parametrize("model", [UserKNN, ItemKNN])
def test_similarity_attribute_formed_on_first_use(model):
    # The fit keeps the compiled route's arrays; similarity_ is the SciPy matrix of them,
    # equal to the function's result, with the indices sorted as its flag says, and it
    # survives pickling before or after it is first formed.
    import pickle

    from mathlearn.recommender import _knn

    with pytest.raises(AttributeError, match="similarity_"):
        model().similarity_
    rng = np.random.default_rng(5)
    u, i = rng.integers(0, 30, 400), rng.integers(0, 20, 400)
    r = Ratings.from_triples(u, i, rng.uniform(1, 5, 400), duplicates="last")
    fitted = model(similarity="cosine").fit(r)
    again = pickle.loads(pickle.dumps(fitted))
    rows = r.to_csr() if model is UserKNN else sp.csr_array(r.to_csr().T)
    expect, _ = _knn.similarity_matrix(rows, "cosine", 0.0)
    for S in (fitted.similarity_, again.similarity_, fitted.similarity_):
        assert isinstance(S, sp.csr_array)
        assert (S != expect).nnz == 0
        assert S.has_sorted_indices
        for a in range(S.shape[0]):
            assert np.all(np.diff(S.indices[S.indptr[a] : S.indptr[a + 1]]) > 0)
    assert fitted.similarity_ is fitted.similarity_
    np.testing.assert_array_equal(again.predict(u[:50], i[:50]), fitted.predict(u[:50], i[:50]))


def test_shrinkage_scales_by_support():
    r = load_toy_ratings()
    plain = UserKNN().fit(r).similarity_
    shrunk = UserKNN(shrinkage=2.0).fit(r).similarity_
    ab = (0, 2)  # Alice-Chuck: 2 co-rated movies
    assert shrunk[[ab[0]], [ab[1]]][0] == pytest.approx(plain[[ab[0]], [ab[1]]][0] * 2 / 4)


def test_recommend_and_similar_items():
    model = UserKNN(n_neighbors=2).fit(load_toy_ratings())
    items, scores = model.recommend("Alice", n=5)
    assert set(items) == {"Ex Machina", "Happy Gilmore"}  # the unseen ones
    assert np.all(np.diff(scores) <= 0)
    items_all, _ = model.recommend("Alice", n=5, exclude_seen=False)
    assert len(items_all) == 5
    sim_items, sims = (
        ItemKNN(similarity="cosine").fit(load_toy_ratings()).similar_items("The Matrix", n=10)
    )
    assert "The Matrix" not in sim_items
    assert np.all(np.diff(sims) <= 0)


def test_unknown_ids_fall_back():
    r = load_toy_ratings()
    model = UserKNN().fit(r)
    mean = r.values.mean()
    got = model.predict(["Zoe", "Alice", "Zoe"], ["Click", "Unknown film", "Nope"])
    click_offset = np.mean([1.0, 4.0]) - mean
    np.testing.assert_allclose(got, [mean + click_offset, 11 / 3, mean])


def test_surprise_knn_with_means_cosine():
    surprise = pytest.importorskip("surprise")
    import pandas as pd

    rng = np.random.default_rng(5)
    Y = rng.uniform(1, 5, size=(20, 15))
    mask = rng.uniform(size=Y.shape) < 0.5
    u, i = np.nonzero(mask)
    df = pd.DataFrame({"user": u, "item": i, "rating": Y[u, i]})
    data = surprise.Dataset.load_from_df(df, surprise.Reader(rating_scale=(1, 5)))
    trainset = data.build_full_trainset()
    for user_based, cls in ((True, UserKNN), (False, ItemKNN)):
        algo = surprise.KNNWithMeans(
            k=5, sim_options={"name": "cosine", "user_based": user_based}, verbose=False
        )
        algo.fit(trainset)
        ours = cls(n_neighbors=5, similarity="cosine").fit(Ratings.from_sparse(
            sp.csr_array((Y[u, i], (u, i)), shape=Y.shape)))  # fmt: skip
        qu, qi = np.nonzero(~mask)
        theirs = [algo.predict(a, b).est for a, b in zip(qu, qi, strict=False)]
        # surprise clips to the rating scale; our predictions lie inside it here
        np.testing.assert_allclose(ours.predict(qu, qi), theirs, rtol=1e-10)


@pytest.mark.parametrize("kind", ["pearson", "cosine", "adjusted_cosine"])
@pytest.mark.parametrize("shrinkage", [0.0, 2.5])
def test_pair_sum_routes_agree(monkeypatch, kind, shrinkage):
    """The similarities from BLAS products of dense column blocks, from sparse products and
    from the compiled pairs' loop have the same pattern (defined pairs: a co-observed column
    and a positive denominator) and agree to the rounding of sums of at most m products:
    |kappa| <= 1, so an absolute 4 m eps. The data have exact cancellations (integer
    ratings, cosine numerators summing to 0) and rows whose deviations are all zero (an
    undefined 0/0). The compiled loop's matrix is symmetric bit for bit (each pair's sums
    run over the same columns in the same order from either row)."""
    from mathlearn import _ext
    from mathlearn.recommender import _knn

    rng = np.random.default_rng(7)
    n, m = 25, 40
    Y = rng.integers(-2, 3, size=(n, m)).astype(float)
    Y[3] = 1.0  # constant row: Pearson deviations all zero
    mask = rng.uniform(size=Y.shape) < 0.3
    r, c = np.nonzero(mask)  # row-major: CSR order, zero ratings kept as entries
    indptr = np.r_[0, np.cumsum(np.bincount(r, minlength=n))]
    A = sp.csr_array((Y[r, c], c, indptr), shape=(n, m))
    compiled = _knn._compiled_similarities()
    got = {}
    for route in ("dense", "sparse", "compiled"):
        if route == "compiled" and compiled is None:
            continue
        monkeypatch.setattr(
            _knn,
            "_compiled_similarities",
            lambda route=route: compiled if route == "compiled" else None,
        )
        monkeypatch.setattr(
            _knn, "_dense_pays", lambda A, compiled=False, route=route: route == "dense"
        )
        got[route] = _knn.similarity_matrix(A, kind, shrinkage)[0]
    if compiled is None and _ext.find("_knn") is not None:
        pytest.fail("_knn is built but did not load")
    a = got["dense"]
    for b in got.values():
        np.testing.assert_array_equal(a.indptr, b.indptr)
        np.testing.assert_array_equal(a.indices, b.indices)
        np.testing.assert_allclose(a.data, b.data, rtol=0, atol=4 * m * np.finfo(float).eps)
    assert a.nnz > 100
    if "compiled" in got:
        K = got["compiled"].toarray()
        np.testing.assert_array_equal(K, K.T)


def test_compiled_pairs_from_either_order(monkeypatch):
    """The compiled route given the column-major order by the caller (as the estimators
    pass it) and formed from A itself: the same matrix, bit for bit; and rows or columns
    with no entry leave no trace."""
    from mathlearn.recommender import _knn

    if _knn._compiled_similarities() is None:
        pytest.skip("_knn not built (a source tree without `setup.py build_ext --inplace`)")
    monkeypatch.setattr(_knn, "_dense_pays", lambda A, compiled=False: False)
    rng = np.random.default_rng(3)
    Y = rng.normal(size=(30, 12))
    Y[rng.uniform(size=Y.shape) < 0.6] = 0.0
    Y[5] = 0.0  # an empty row
    Y[:, 7] = 0.0  # an empty column
    A = sp.csr_array(Y)
    for kind in ("pearson", "cosine", "adjusted_cosine"):
        own, means = _knn.similarity_matrix(A, kind, 1.0)
        given, _ = _knn.similarity_matrix(A, kind, 1.0, At=_knn._Rows.of(A.T))
        for name in ("indptr", "indices", "data"):
            np.testing.assert_array_equal(getattr(own, name), getattr(given, name))
        assert own.indptr[6] == own.indptr[5]
        assert not np.any(own.indices == 5)
        # each stored pair against its definition, from the dense matrix
        mask = Y != 0
        col_means = Y.sum(0) / np.maximum(mask.sum(0), 1)
        dev = {"pearson": Y - means[:, None], "cosine": Y, "adjusted_cosine": Y - col_means}
        dev = dev[kind]
        K = own.toarray()
        for a, b in zip(*own.nonzero(), strict=True):
            co = mask[a] & mask[b]
            num = dev[a, co] @ dev[b, co]
            den = np.sqrt((dev[a, co] ** 2).sum() * (dev[b, co] ** 2).sum())
            want = np.sign(num) if co.sum() == 1 else num / den
            want *= co.sum() / (co.sum() + 1.0)
            assert abs(K[a, b] - want) <= 8 * 12 * np.finfo(float).eps


def test_dense_route_is_chosen_by_cost():
    """Dense when the n^2 m multiply-adds are few against the sparse ones, and never past
    2 048 rows."""
    from mathlearn.recommender._knn import _dense_pays

    full = sp.csr_array(np.ones((50, 200)))
    assert _dense_pays(full)
    sparse_rows = sp.random_array((2000, 20000), density=1e-4, format="csr", random_state=0)
    assert not _dense_pays(sparse_rows)
    assert not _dense_pays(sp.csr_array(np.ones((2049, 3))))
    # Against the compiled loop, the fixed NumPy passes count too: a small half-full matrix
    # (11 x 20, the sweep's 100 ratings) goes dense against sparse products only.
    small = sp.csr_array(np.random.default_rng(0).uniform(size=(11, 20)) < 0.5, dtype=float)
    assert _dense_pays(small) and not _dense_pays(small, compiled=True)
    assert _dense_pays(full, compiled=True)
    assert not _dense_pays(sparse_rows, compiled=True)
