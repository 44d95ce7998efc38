"""Recommenders against scikit-surprise and implicit on the same data, one process.

* Explicit feedback: synthetic ratings ``3.5 + b_u + c_i + p_u^T q_i + noise`` (rank 32,
  noise sd 0.5, so the best possible test RMSE is 0.5). The issue's size is 50 000 users x
  10 000 items x 5 M ratings; here 10x fewer ratings at the same ratings per user and item
  (5 000 users x 1 000 items x 500 000 ratings; ``--full`` for the issue's size). Time per
  epoch of ALS (a sweep: all users, then all items) and of plain SGD against
  scikit-surprise's SVD (SGD, same rank, same learning rate and regularisation), then the
  test RMSE of each after a full fit on 90% of the ratings. Both ALS and SGD are timed with
  their defaults, which evaluate the objective after every sweep / epoch (surprise
  computes none). ALS is timed with both solvers: 3
  warm-started conjugate-gradient steps per row (the default) and the exact per-row
  Cholesky solve (``solver="cholesky"``); SGD with its default visiting order (users in a
  random order, each user's ratings in a random order) and with a uniformly random order
  (``shuffle="full"``). The test RMSE is set against the noise sd and against an oracle that
  knows the true item factors and biases and fits only each user's factors and bias, by
  the same count-weighted ridge, and against the minimum-mean-square-error predictor that
  knows the item side and the generating prior (each user's posterior mean): no method
  beats the latter in expectation, so it is the floor the data allow at this many
  ratings per user.
* Implicit feedback: ImplicitALS (conjugate gradient, 3 steps) against implicit's CPU
  AlternatingLeastSquares (conjugate gradient, 3 steps), rank 64, 15 iterations, both on
  one thread, the same confidences 1 + alpha r; precision@10 on two held-out interactions
  per user, over three data sets (3 000 users x 1 500 items; with ``--full`` also the
  timing at 10 000 x 4 000).
* ItemKNN: fit + top-10 recommendations for every user, against scikit-surprise's
  KNNWithMeans (item-based, cosine, k = 40), whose "recommend" is a prediction for every
  unseen (user, item) pair.
* ``--memory``: peak traced memory of building a 100 000 x 50 000 matrix with 5 M ratings and
  one ALS sweep (rank 8), against the 40 GB a dense matrix would take.

BLAS is limited to one thread throughout (threadpoolctl), so all libraries run on one core.
ALS and ImplicitALS take their compiled routes (``mathlearn._ext._als``) when the package was
installed (``pip install -e .``, or ``python setup.py build_ext --inplace`` in a source
tree); otherwise their NumPy routes.
Run: ``python benchmarks/run.py recommender`` (or ``python benchmarks/bench_recommender.py
[knn] [implicit] [explicit] [--full] [--memory]``).
"""

from __future__ import annotations

import sys
import time
import tracemalloc
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from _harness import compare
from _sweep_cases import Case
from mathlearn.datasets import make_low_rank_ratings
from mathlearn.exceptions import ConvergenceWarning
from mathlearn.recommender import (
    ALS,
    ImplicitALS,
    ItemKNN,
    Ratings,
    SGDMatrixFactorization,
    leave_k_out_split,
    precision_at_k,
    rmse,
    train_test_split,
)

warnings.simplefilter("ignore", ConvergenceWarning)


def _surprise_trainset(r):
    import pandas as pd
    import surprise

    df = pd.DataFrame({"u": r.users, "i": r.items, "r": r.values})
    data = surprise.Dataset.load_from_df(df, surprise.Reader(rating_scale=(-100, 100)))
    return data.build_full_trainset()


def bench_explicit(full=False):
    import surprise

    n_u, n_i, nnz = (50_000, 10_000, 5_000_000) if full else (5_000, 1_000, 500_000)
    r, truth = make_low_rank_ratings(n_u, n_i, nnz, rank=32, noise=0.5, random_state=0,
                                     return_truth=True)  # fmt: skip
    train, test = train_test_split(r, 0.1, random_state=0)
    ts = _surprise_trainset(train)
    lr, reg, epochs = 0.005, 0.02, 3
    size = f"{n_u} x {n_i}, {train.nnz} ratings, rank 32"

    def peer():
        return surprise.SVD(
            n_factors=32, n_epochs=epochs, lr_all=lr, reg_all=reg, random_state=0
        ).fit(ts)

    t_cg = compare(
        f"ALS (default: 3 CG steps), {epochs} sweeps vs surprise SVD, {epochs} epochs ({size})",
        lambda: ALS(32, regularization=reg, max_iter=epochs, tol=0.0, random_state=0).fit(train),
        peer, repeats=1, target=1.0,
    )  # fmt: skip
    t_als = compare(
        f"ALS solver='cholesky', {epochs} sweeps vs surprise SVD, {epochs} epochs ({size})",
        lambda: ALS(32, regularization=reg, max_iter=epochs, tol=0.0, solver="cholesky",
                    random_state=0).fit(train),
        peer, repeats=1, target=1.0,
    )  # fmt: skip

    def sgd(shuffle, max_iter=epochs, monitor=True):
        model = SGDMatrixFactorization(32, learning_rate=lr, regularization=reg,
                                       max_iter=max_iter, shuffle=shuffle,
                                       monitor_objective=monitor, random_state=0)  # fmt: skip
        return model.fit(train)

    t_sgd = compare(
        f"SGD MF (default order: users), {epochs} epochs vs surprise SVD, {epochs} epochs "
        f"({size})",
        lambda: sgd("auto"), peer, repeats=1, target=1.0,
    )  # fmt: skip
    compare(
        f"SGD MF shuffle='full', {epochs} epochs vs surprise SVD, {epochs} epochs ({size})",
        lambda: sgd("full"), peer, repeats=1, target=1.0,
    )  # fmt: skip
    floor = _oracle_rmse(truth, train, test, reg)
    # Accuracy after full fits (not timed by the harness).
    fits = {
        "ALS, default (20 sweeps of 3 CG steps, lambda 0.02, count-weighted)": lambda: ALS(
            32, regularization=reg, max_iter=20, tol=0.0, random_state=0).fit(train),
        "ALS solver='cholesky' (20 sweeps)": lambda: ALS(
            32, regularization=reg, max_iter=20, tol=0.0, solver="cholesky",
            random_state=0).fit(train),
        "SGD MF, default order (20 epochs)": lambda: sgd("auto", 20, True),
        "SGD MF shuffle='full' (20 epochs)": lambda: sgd("full", 20, True),
    }  # fmt: skip
    print("\n| model | test RMSE | RMSE / noise sd (0.5) | RMSE / oracle | fit time (s) |\n"
          "| --- | --- | --- | --- | --- |")  # fmt: skip

    def row(name, e, dt):
        print(f"| {name} | {e:.4f} | {e / 0.5:.3f} | {e / floor:.3f} | {dt:.1f} |", flush=True)

    for name, fit in fits.items():
        t0 = time.perf_counter()
        m = fit()
        dt = time.perf_counter() - t0
        row(name, rmse(test.values, m.predict(test.users, test.items)), dt)
    t0 = time.perf_counter()
    svd = surprise.SVD(n_factors=32, n_epochs=20, lr_all=lr, reg_all=reg, random_state=0).fit(ts)
    dt = time.perf_counter() - t0
    est = np.array([svd.predict(a, b).est for a, b in zip(test.users, test.items, strict=True)])
    row("surprise SVD (20 epochs)", rmse(test.values, est), dt)
    row("oracle: true item factors and biases, each user's by the same ridge", floor, 0.0)
    row("MMSE oracle: true item side, each user's posterior mean under the true prior",
        _mmse_oracle_rmse(truth, train, test), 0.0)  # fmt: skip
    per_user = train.nnz / n_u
    print(f"\nratings per user {per_user:.0f}; least squares with the item side known leaves "
          f"about 0.5 sqrt(1 + 33 / n_u) = {0.5 * np.sqrt(1 + 33 / per_user):.3f}",
          flush=True)  # fmt: skip
    return t_als, t_cg, t_sgd


def _oracle_rmse(truth, train, test, reg):
    """Test RMSE of the predictor that knows the generating model's item factors q_i, item
    biases c_i and mean, and estimates each user's [p_u, b_u] by ridge regression on rows
    [q_i, 1] with targets r_ui - mean - c_i and penalty reg * n_u (ALS's count-weighted
    regularisation): the estimation error that no method avoids at this many ratings per
    user. The true parameters are read from the closure of ``truth``
    (:func:`mathlearn.datasets.make_low_rank_ratings`)."""
    cells = dict(zip(truth.__code__.co_freevars,
                     (c.cell_contents for c in truth.__closure__), strict=True))  # fmt: skip
    Q, bi, mean = cells["Q"], cells["bi"], cells["mean"]
    n_users, k = train.shape[0], Q.shape[1] + 1
    order = np.argsort(train.users, kind="stable")
    u, i, r = train.users[order], train.items[order], train.values[order]
    bounds = np.r_[0, np.cumsum(np.bincount(u, minlength=n_users))]
    W = np.zeros((n_users, k))
    for a in range(n_users):
        lo, hi = bounds[a], bounds[a + 1]
        X = np.hstack([Q[i[lo:hi]], np.ones((hi - lo, 1))])
        G = X.T @ X + reg * (hi - lo) * np.eye(k)
        W[a] = np.linalg.solve(G, X.T @ (r[lo:hi] - mean - bi[i[lo:hi]]))
    tu, ti = test.users, test.items
    pred = mean + bi[ti] + W[tu, -1] + np.einsum("nk,nk->n", W[tu, :-1], Q[ti])
    return rmse(test.values, pred)


def _mmse_oracle_rmse(truth, train, test, noise=0.5, bias_std=0.3):
    """Test RMSE of the posterior mean of each user's [p_u, b_u] given the generating model's
    item factors, item biases and mean, under the generating prior (p_u ~ N(0, I /
    sqrt(rank)), b_u ~ N(0, bias_std^2)) and noise: the minimum mean-square-error predictor
    for a model that knows the whole item side. No method that sees only the ratings can
    beat it in expectation (knowing more cannot raise the Bayes risk), so its RMSE is a
    floor for every model here, the noise sd being unreachable."""
    cells = dict(zip(truth.__code__.co_freevars,
                     (c.cell_contents for c in truth.__closure__), strict=True))  # fmt: skip
    Q, bi, mean = cells["Q"], cells["bi"], cells["mean"]
    n_users, rank = train.shape[0], Q.shape[1]
    prior_precision = noise**2 * np.diag(np.r_[np.full(rank, np.sqrt(rank)), 1 / bias_std**2])
    order = np.argsort(train.users, kind="stable")
    u, i, r = train.users[order], train.items[order], train.values[order]
    bounds = np.r_[0, np.cumsum(np.bincount(u, minlength=n_users))]
    W = np.zeros((n_users, rank + 1))
    for a in range(n_users):
        lo, hi = bounds[a], bounds[a + 1]
        X = np.hstack([Q[i[lo:hi]], np.ones((hi - lo, 1))])
        W[a] = np.linalg.solve(X.T @ X + prior_precision, X.T @ (r[lo:hi] - mean - bi[i[lo:hi]]))
    tu, ti = test.users, test.items
    pred = mean + bi[ti] + W[tu, -1] + np.einsum("nk,nk->n", W[tu, :-1], Q[ti])
    return rmse(test.values, pred)


def _implicit_data(n_users=3_000, n_items=1_500, rank=16, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n_users, rank)) / rank**0.25
    B = rng.standard_normal((n_items, rank)) / rank**0.25
    rows, cols = [], []
    for s in range(0, n_users, 500):
        p = 1.0 / (1.0 + np.exp(-(2.0 * A[s : s + 500] @ B.T - 5.0)))
        u, i = np.nonzero(rng.uniform(size=p.shape) < p)
        rows.append(u + s)
        cols.append(i)
    u, i = np.concatenate(rows), np.concatenate(cols)
    ids_u, ids_i = np.arange(n_users).astype(object), np.arange(n_items).astype(object)
    return Ratings(u, i, np.ones(u.size), ids_u, ids_i)


def bench_implicit(full=False):
    import scipy.sparse as sp
    from implicit.cpu.als import AlternatingLeastSquares

    alpha, lam = 10.0, 0.1

    def fits(seed, n_users=3_000, n_items=1_500):
        r = _implicit_data(n_users, n_items, seed=seed)
        train, test = leave_k_out_split(r, k=2, min_train=2, random_state=seed)
        # implicit's confidence is the stored value itself: store 1 + alpha r, Hu, Koren and
        # Volinsky's c_ui, which ours forms from alpha.
        M = sp.csr_matrix((1.0 + alpha * train.values, (train.users, train.items)),
                          shape=r.shape)  # fmt: skip

        def ours():
            return ImplicitALS(64, regularization=lam, alpha=alpha, max_iter=15, cg_steps=3,
                               random_state=seed).fit(train)  # fmt: skip

        def peer():
            m = AlternatingLeastSquares(factors=64, regularization=lam, alpha=1.0,
                                        iterations=15, use_cg=True, num_threads=1,
                                        random_state=seed,
                                        calculate_training_loss=False)  # fmt: skip
            m.fit(M, show_progress=False)
            return m

        return r, train, test, M, ours, peer

    r, train, _, _, ours, peer = fits(0)
    compare(
        f"ImplicitALS rank 64, 15 it. ({r.shape[0]} x {r.shape[1]}, {train.nnz} interactions)",
        ours, peer, repeats=3, target=1.5,
    )  # fmt: skip
    if full:
        r, train, _, _, ours, peer = fits(0, 10_000, 4_000)
        compare(
            f"ImplicitALS rank 64, 15 it. ({r.shape[0]} x {r.shape[1]}, {train.nnz} "
            "interactions)",
            ours, peer, repeats=1, target=1.5,
        )  # fmt: skip
    # Precision@10 on two held-out interactions per user, for three data sets and splits
    # (one split's difference is within its standard error, about 0.0008).
    p_a, p_b = [], []
    for seed in range(3):
        r, train, test, M, ours, peer = fits(seed)
        a, b = ours(), peer()
        users = np.unique(test.users)
        rel = [set(test.items[test.users == u].tolist()) for u in users]
        p_a.append(precision_at_k([a.recommend(u, n=10)[0].tolist() for u in users], rel, 10))
        ids, _ = b.recommend(users, M[users], N=10)
        p_b.append(precision_at_k([x.tolist() for x in ids], rel, 10))
        print(f"precision@10, data seed {seed}: ours {p_a[-1]:.4f}, implicit {p_b[-1]:.4f}",
              flush=True)  # fmt: skip
    print(f"mean over 3: ours {np.mean(p_a):.4f}, implicit {np.mean(p_b):.4f}", flush=True)


def bench_item_knn():
    import surprise

    r = make_low_rank_ratings(600, 300, 18_000, rank=4, noise=0.5, random_state=1)
    ts = _surprise_trainset(r)
    seen = [set(r.items[r.users == u].tolist()) for u in range(r.shape[0])]

    def ours():
        m = ItemKNN(40, similarity="cosine").fit(r)
        return [m.recommend(u, n=10) for u in range(r.shape[0])]

    def peer():
        algo = surprise.KNNWithMeans(k=40, sim_options={"name": "cosine", "user_based": False},
                                     verbose=False).fit(ts)  # fmt: skip
        out = []
        for u in range(r.shape[0]):
            inner = ts.to_inner_uid(u)
            scores = []
            for i in range(r.shape[1]):
                if i not in seen[u]:
                    est = algo.estimate(inner, ts.to_inner_iid(i))
                    scores.append((est[0] if isinstance(est, tuple) else est, i))
            out.append(sorted(scores, reverse=True)[:10])
        return out

    compare(
        f"ItemKNN fit + top-10 for all users ({r.shape[0]} x {r.shape[1]}, {r.nnz} ratings)",
        ours, peer, repeats=1, target=1.0,
    )  # fmt: skip


def bench_memory():
    tracemalloc.start()
    r = make_low_rank_ratings(100_000, 50_000, 5_000_000, rank=8, random_state=0)
    ALS(8, max_iter=1, tol=0.0, random_state=0).fit(r)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    dense = 100_000 * 50_000 * 8
    print(f"\npeak traced memory, 100 000 x 50 000 with 5 M ratings, data + one ALS sweep: "
          f"{peak / 2**20:.0f} MiB ({peak / dense:.4f} of the dense matrix's "
          f"{dense / 2**30:.0f} GiB)", flush=True)  # fmt: skip


def main(large=True, full=False, memory=False, only=("knn", "implicit", "explicit")):
    with threadpool_limits(1):
        if "knn" in only:
            bench_item_knn()
        if "implicit" in only:
            bench_implicit(full)
        if "explicit" in only:
            bench_explicit(full)
        if memory:
            bench_memory()


# The size sweep (``sweep.py``): N is the number of ratings (interactions), D the rank. Users
# and items grow with N at the proportions (100 ratings a user, 500 an item) once N
# reaches 1e5; below, 20 users or more and enough items that the matrix is at most half
# full. Both sides fit all the ratings with the same rank, regularisation and number of
# sweeps / epochs; the peer's own data structure (surprise's trainset, implicit's CSR
# matrix) is built outside the timed fit, as ours is (``Ratings``).


def _sweep_shape(n):
    n_users = max(n // 100, 20)
    return n_users, max(n // 500, 2 * n // n_users + 1)


def _sweep_explicit(n, d):
    n_users, n_items = _sweep_shape(n)
    r = make_low_rank_ratings(n_users, n_items, n, rank=d, noise=0.5, random_state=0)
    return r, _surprise_trainset(r), d


def _sweep_implicit(n, d):
    import scipy.sparse as sp

    n_users, n_items = _sweep_shape(n)
    rng = np.random.default_rng(0)
    cells = rng.choice(n_users * n_items, n, replace=False)
    u, i = np.divmod(cells, n_items)
    ids_u, ids_i = np.arange(n_users).astype(object), np.arange(n_items).astype(object)
    r = Ratings(u, i, np.ones(n), ids_u, ids_i)
    # implicit's confidence is the stored value: 1 + alpha r, which ours forms from alpha.
    M = sp.csr_matrix((np.full(n, 1.0 + 10.0), (u, i)), shape=r.shape)
    return r, M, d


def _svd(d):
    import surprise

    return surprise.SVD(n_factors=d, n_epochs=3, lr_all=0.005, reg_all=0.02, random_state=0)


def _knn_with_means(d):
    import surprise

    options = {"name": "cosine", "user_based": False}
    return surprise.KNNWithMeans(k=40, sim_options=options, verbose=False)


def _surprise_svd(r, ts, d):
    return lambda: _svd(d).fit(ts)


def _implicit_fit(M, d, dtype=np.float32):
    from implicit.cpu.als import AlternatingLeastSquares

    m = AlternatingLeastSquares(factors=d, regularization=0.1, alpha=1.0, iterations=15,
                                use_cg=True, num_threads=1, random_state=0,
                                calculate_training_loss=False, dtype=dtype)  # fmt: skip
    m.fit(M, show_progress=False)
    return m


def _implicit_als(dtype):
    return lambda r, M, d: lambda: _implicit_fit(M, d, dtype)


def _surprise_item_knn(r, ts, d):
    return lambda: _knn_with_means(d).fit(ts)


# The memory column's calls (see _sweep_cases.Case): each side builds its own training
# container from the same raw triples (integer ids), then fits. surprise's trainset, built once
# outside its timed fit, holds both rating orders, which our fit builds from the container.


def _triples(r):
    return r.users.copy(), r.items.copy(), r.values.copy()


def _ours_from_triples(model):
    """``model(d)`` fitted on a Ratings container built from the raw triples."""

    def make(r, _peer_data, d):
        u, i, v = _triples(r)
        return lambda: model(d).fit(Ratings.from_triples(u, i, v))

    return make


def _surprise_from_triples(algo):
    """``algo(d)`` fitted on a trainset built from the raw triples."""

    def make(r, _ts, d):
        import pandas as pd
        import surprise

        u, i, v = _triples(r)
        df = pd.DataFrame({"u": u, "i": i, "r": v})
        reader = surprise.Reader(rating_scale=(-100, 100))
        return lambda: algo(d).fit(surprise.Dataset.load_from_df(df, reader).build_full_trainset())

    return make


def _implicit_from_triples(dtype):
    """implicit's ALS (factors of ``dtype``) fitted on its CSR matrix built from the raw
    triples (the stored value is its confidence, 1 + alpha r)."""

    def make(r, M, d):
        import scipy.sparse as sp

        u, i, v = _triples(r)
        return lambda: _implicit_fit(
            sp.csr_matrix((1.0 + 10.0 * v, (u, i)), shape=M.shape), d, dtype
        )

    return make


def _als(d):
    return ALS(d, regularization=0.02, max_iter=3, tol=0.0, random_state=0)


def _sgd(d):
    return SGDMatrixFactorization(
        d, learning_rate=0.005, regularization=0.02, max_iter=3, random_state=0
    )


def _implicit_ours(dtype):
    return lambda d: ImplicitALS(d, regularization=0.1, alpha=10.0, max_iter=15, cg_steps=3,
                                 dtype=dtype, random_state=0)  # fmt: skip


def _item_knn(d):
    return ItemKNN(40, similarity="cosine")


def _ours(model):
    return lambda r, _peer_data, d: lambda: model(d).fit(r)


SWEEP_CASES = [
    Case(
        "recommenders",
        "ALS 3 sweeps (default CG) vs surprise SVD 3 epochs",
        _sweep_explicit,
        _ours(_als),
        _surprise_svd,
        d=32,
        wide=None,
        memory_ours=_ours_from_triples(_als),
        memory_peer=_surprise_from_triples(_svd),
    ),
    Case(
        "recommenders",
        "SGDMatrixFactorization 3 epochs vs surprise SVD 3 epochs",
        _sweep_explicit,
        _ours(_sgd),
        _surprise_svd,
        d=32,
        wide=None,
        memory_ours=_ours_from_triples(_sgd),
        memory_peer=_surprise_from_triples(_svd),
    ),
    # Each precision against the peer at the same precision (implicit's default is float32).
    *(
        Case(
            "recommenders",
            f"ImplicitALS {name}, 15 iterations (3 CG steps) vs implicit ALS {name}",
            _sweep_implicit,
            _ours(_implicit_ours(dtype)),
            _implicit_als(dtype),
            d=64,
            wide=None,
            memory_ours=_ours_from_triples(_implicit_ours(dtype)),
            memory_peer=_implicit_from_triples(dtype),
        )
        for name, dtype in (("float32", np.float32), ("float64", np.float64))
    ),
    Case(
        "recommenders",
        "ItemKNN fit (cosine, k = 40) vs surprise KNNWithMeans fit",
        _sweep_explicit,
        _ours(_item_knn),
        _surprise_item_knn,
        d=8,
        wide=None,
        memory_ours=_ours_from_triples(_item_knn),
        memory_peer=_surprise_from_triples(_knn_with_means),
    ),
]


if __name__ == "__main__":
    from _harness import HEADER, machine

    print(f"machine: {machine()}\n\n{HEADER}")
    parts = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(full="--full" in sys.argv, memory="--memory" in sys.argv,
         only=parts or ("knn", "implicit", "explicit"))  # fmt: skip
