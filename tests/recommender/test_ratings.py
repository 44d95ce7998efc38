"""The ratings container, its splits, and the metrics against hand computations."""

import math
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from mathlearn.datasets import make_low_rank_ratings
from mathlearn.recommender import (
    ALS,
    Ratings,
    leave_k_out_split,
    mae,
    map_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    rmse,
    temporal_split,
    train_test_split,
)


def test_triples_any_hashable_ids_users_by_items():
    r = Ratings.from_triples([("a", 1), "bob", ("a", 1)], [3.5, None, 3.5], [1.0, 2.0, 3.0],
                             duplicates="sum")  # fmt: skip
    assert r.shape == (2, 2)
    assert r.nnz == 2
    assert r.to_csr().toarray().sum() == 6.0


def test_duplicates():
    with pytest.raises(ValueError, match="Duplicate rating for user 1 and item 'a'"):
        Ratings.from_triples([1, 1], ["a", "a"], [2.0, 4.0])
    assert Ratings.from_triples([1, 1], ["a", "a"], [2.0, 4.0], duplicates="mean").values[0] == 3
    assert Ratings.from_triples([1, 1], ["a", "a"], [2.0, 4.0], duplicates="last").values[0] == 4
    r = Ratings.from_triples([1, 1], ["a", "a"], [2.0, 4.0], [5, 9], duplicates="sum")
    assert r.values[0] == 6 and r.timestamps[0] == 9


@pytest.mark.parametrize("ids", ["dense", "sparse", "negative", "unsigned"])
@pytest.mark.parametrize("duplicates", ["error", "mean", "sum", "last"])
def test_integer_array_ids_as_python_lists(ids, duplicates):
    # Integer arrays of ids take a vectorised route (a table of the values present, or
    # numpy.unique); the same ids as Python lists take the general one (a dictionary of the
    # sorted distinct ids). Both must give the same container, repeated pairs included.
    gen = np.random.default_rng(3)
    u = gen.integers(0, 40, 500)
    i = gen.integers(0, 25, 500)
    if ids == "sparse":
        u, i = u * 10**12 + 7, i * 10**9
    elif ids == "negative":
        u, i = u - 20, -i
    elif ids == "unsigned":
        u, i = u.astype(np.uint32), i.astype(np.uint8)
    if duplicates == "error":
        _, first = np.unique(u.astype(np.int64) * 10**6 + i, return_index=True)
        u, i = u[first], i[first]
    v = gen.standard_normal(u.size)
    t = gen.integers(0, 10**6, u.size)
    fast = Ratings.from_triples(u, i, v, t, duplicates=duplicates)
    slow = Ratings.from_triples(u.tolist(), i.tolist(), v.tolist(), t.tolist(),
                                duplicates=duplicates)  # fmt: skip
    for name in ("users", "items", "values", "timestamps"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name))
    assert fast.user_ids.tolist() == slow.user_ids.tolist() == sorted(set(u.tolist()))
    assert fast.item_ids.tolist() == slow.item_ids.tolist() == sorted(set(i.tolist()))
    assert fast.user_index == slow.user_index and fast.item_index == slow.item_index
    # the container is in user-major order: by user, then item
    key = fast.users * fast.shape[1] + fast.items
    assert np.all(np.diff(key) > 0)


def test_indices_are_32_bit_and_checked(monkeypatch):
    from mathlearn.recommender import _ratings

    # Ids of any width map to 32-bit row and column indices (4 bytes a rating each).
    r = Ratings.from_triples(np.array([5, 3, 5]), np.array([2**40, 7, 7]), [1.0, 2.0, 3.0])
    assert r.users.dtype == r.items.dtype == np.int32
    assert r.users.tolist() == [0, 1, 1] and r.items.tolist() == [0, 0, 1]
    assert r.values.tolist() == [2.0, 3.0, 1.0]  # (3, 7), (5, 7), (5, 2**40)
    # 32-bit indices given to the constructor are kept as they are; wider ones are checked
    # against the id maps, then narrowed.
    u = np.array([0, 1], dtype=np.int32)
    assert Ratings(u, u, [1.0, 2.0], np.arange(2), np.arange(2)).users is u
    with pytest.raises(ValueError, match="outside its id map"):
        Ratings(np.array([0, 2**32]), np.array([0, 1]), [1.0, 2.0], np.arange(2), np.arange(2))
    with pytest.raises(ValueError, match="outside its id map"):
        Ratings(np.array([-1, 0]), np.array([0, 1]), [1.0, 2.0], np.arange(2), np.arange(2))
    # More users or items than 32-bit indices reach: refused, naming the limit (the limit
    # lowered here, since 2**31 ids do not fit in a test).
    monkeypatch.setattr(_ratings, "_INDEX_MAX", 2)
    with pytest.raises(ValueError, match="32-bit row and column indices"):
        Ratings.from_triples([0, 1, 2, 3], [0, 0, 0, 0], np.ones(4))


def test_integer_array_duplicate_named():
    with pytest.raises(ValueError, match="Duplicate rating for user 5 and item 9"):
        Ratings.from_triples(np.array([3, 5, 5]), np.array([9, 9, 9]), np.ones(3))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_ratings_rejected(bad):
    with pytest.raises(ValueError, match="NaN or infinity"):
        Ratings.from_triples([0, 1], [0, 0], [1.0, bad])


def test_bad_shapes_and_types():
    with pytest.raises(ValueError, match="different lengths"):
        Ratings.from_triples([0, 1], [0], [1.0, 2.0])
    with pytest.raises(ValueError, match="entries for 2"):
        Ratings.from_triples([0, 1], [0, 1], [1.0])
    with pytest.raises(TypeError, match="ambiguous"):
        ALS().fit(np.ones((3, 3)))
    with pytest.raises(ValueError, match="user ids"):
        Ratings.from_sparse(sp.csr_array(np.eye(2)), user_ids=[1])


def test_empty_matrix_is_an_error():
    empty = Ratings.from_sparse(sp.csr_array((3, 4)))
    assert empty.nnz == 0
    with pytest.raises(ValueError, match="empty"):
        ALS().fit(empty)


def test_sparse_and_dataframe_agree():
    pd = pytest.importorskip("pandas")
    M = sp.csr_array(np.array([[0.0, 3.0, 0.0], [1.0, 0.0, 2.0]]))
    a = Ratings.from_sparse(M, user_ids=["u", "v"], item_ids=["x", "y", "z"])
    df = pd.DataFrame({"user": ["v", "u", "v"], "item": ["x", "y", "z"], "rating": [1, 3, 2.0]})
    b = Ratings.from_dataframe(df)
    assert (a.to_csr() != b.to_csr()).nnz == 0
    assert a.user_ids.tolist() == b.user_ids.tolist()


def test_splits_partition_and_keep_id_maps():
    r = make_low_rank_ratings(60, 40, 800, rank=2, random_state=0)
    train, test = train_test_split(r, 0.25, random_state=1)
    assert train.nnz + test.nnz == r.nnz and test.nnz == 200
    assert train.shape == test.shape == r.shape
    both = sp.csr_array(train.to_csr() != 0).multiply(test.to_csr() != 0)
    assert both.nnz == 0
    tr, te = leave_k_out_split(r, k=2, random_state=0)
    counts = np.bincount(te.users, minlength=r.shape[0])
    full = np.bincount(r.users, minlength=r.shape[0])
    np.testing.assert_array_equal(counts, np.where(full >= 3, 2, 0))
    ts = Ratings(r.users, r.items, r.values, r.user_ids, r.item_ids, np.arange(r.nnz)[::-1])
    tr, te = temporal_split(ts, 0.1)
    assert te.timestamps.min() > tr.timestamps.max()
    with pytest.raises(ValueError, match="timestamps"):
        temporal_split(r)


def test_metrics_by_hand():
    assert rmse([1, 2, 3], [1, 2, 5]) == pytest.approx(math.sqrt(4 / 3))
    assert mae([1, 2, 3], [2, 2, 5]) == pytest.approx(1.0)
    rec = [["a", "b", "c", "d"], ["x", "y"], ["p"]]
    rel = [{"b", "d", "q"}, {"z"}, set()]  # the third user has nothing relevant: skipped
    assert precision_at_k(rec, rel, k=4) == pytest.approx((2 / 4 + 0) / 2)
    assert recall_at_k(rec, rel, k=4) == pytest.approx((2 / 3 + 0) / 2)
    assert map_at_k(rec, rel, k=4) == pytest.approx(((1 / 2 + 2 / 4) / 3 + 0) / 2)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at_k(rec, rel, k=4) == pytest.approx((dcg / idcg + 0) / 2)
    with pytest.raises(ValueError, match="No user has a relevant"):
        precision_at_k([["a"]], [set()], k=1)
    with pytest.raises(ValueError, match="NaN"):
        rmse([1.0], [np.nan])


def test_no_dense_users_by_items_matrix():
    # 20 000 x 10 000 dense would take 1.6 GB; the whole fit + predictions stay far below.
    r = make_low_rank_ratings(20_000, 10_000, 200_000, rank=4, random_state=0)
    tracemalloc.start()
    model = ALS(n_components=8, max_iter=1, tol=0.0, random_state=0).fit(r)
    model.predict(np.arange(1000), np.arange(1000))
    model.recommend(0, n=10)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 0.05 * 20_000 * 10_000 * 8
