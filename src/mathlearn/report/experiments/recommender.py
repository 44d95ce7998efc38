"""Collaborative filtering: the notes' toy table, ALS and its objective, rank and
regularisation against the noise floor, explicit against implicit feedback, and the Bayesian
PMF predictive uncertainty."""

from __future__ import annotations

import warnings

import numpy as np

from mathlearn.datasets import load_toy_ratings, make_low_rank_ratings
from mathlearn.exceptions import ConvergenceWarning
from mathlearn.recommender import (
    ALS,
    BayesianProbabilisticMatrixFactorization,
    ImplicitALS,
    ItemKNN,
    Ratings,
    SGDMatrixFactorization,
    UserKNN,
    leave_k_out_split,
    precision_at_k,
    rmse,
    train_test_split,
)
from mathlearn.report import experiment

SECTION = "Collaborative filtering"
_NOTES = "Oxford 'Advanced Topics in Statistical Machine Learning'"


@experiment(
    "recommender-toy-table",
    title="User-based CF on the notes' toy ratings table",
    section=SECTION,
    description=(
        "The five users and five movies of the notes' table. Pearson similarities (6.9) are "
        "taken over the co-rated movies, with each user's mean over all the movies they "
        "rated; a pair with no co-rated movie, or with a zero deviation (Dan rated one "
        "movie, so his deviation from his own mean is 0), has no similarity and never enters "
        "a neighbourhood. The prediction (6.10) for Alice and Happy Gilmore uses the k most "
        "similar users who rated it: Bob (1), Eve (1) and Chuck (-0.676). For k = 1, Bob and "
        "Eve tie; the tie goes to the smaller index (Bob), a choice the notes leave open - "
        "Eve would give 4.333. The exact values are the fractions in the last column."
    ),
    source=f"{_NOTES} §6.1 (the table), §6.5 (6.9)-(6.10)",
)
def toy_table(ctx):
    r = load_toy_ratings()
    model = UserKNN().fit(r)
    names = r.user_ids.tolist()
    K = model.similarity_
    rows = []
    for a in range(5):
        row = [names[a], f"{model.user_means_[a]:.6f}"]
        for b in range(5):
            idx = K.indices[K.indptr[a] : K.indptr[a + 1]]
            row.append(f"{K[[a], [b]][0]:+.6f}" if b in idx else ("-" if a != b else ""))
        rows.append(row)
    ctx.table(["user", "mean", *names], rows, "User means and Pearson similarities.")
    exact = {1: "2 (Bob)", 2: "19/6 = 3.166667", 3: "2.872038 (derived by eqs. 6.9-6.10)"}
    preds = [
        [k, float(UserKNN(n_neighbors=k).fit(r).predict(["Alice"], ["Happy Gilmore"])[0]),
         exact[k]]
        for k in (1, 2, 3)
    ]  # fmt: skip
    ctx.table(["k", "prediction (ours)", "by hand"], preds, "Alice, Happy Gilmore.")


@experiment(
    "recommender-als-objective",
    title="ALS objective per sweep, and SGD's per epoch",
    section=SECTION,
    description=(
        "A synthetic rank-3 ratings matrix (200 users, 150 items, 6 000 ratings, noise 0.5). "
        "ALS alternates ridge solves for the users (6.1) and the items (6.2), exact "
        "(Cholesky) or by three conjugate-gradient steps started from the current factors "
        "(the default); with either, the regularised objective (6.7) can only go down, and "
        "does so fast, the CG sweeps about as fast as the exact ones. With the "
        "regularisation weighted by counts, SGD descends the same objective one rating at a "
        "time (updates (6.3)-(6.4), with biases): it takes many more passes, though each pass "
        "is cheaper."
    ),
    source=f"{_NOTES} §6.2-6.3, (6.1)-(6.4), (6.7)",
)
def als_objective(ctx):
    import matplotlib.pyplot as plt

    r = make_low_rank_ratings(200, 150, 6000, rank=3, noise=0.5, random_state=ctx.rng)
    seed = int(ctx.rng.integers(2**31))
    als = ALS(3, regularization=0.05, max_iter=20, tol=0.0, solver="cholesky",
              random_state=seed).fit(r)  # fmt: skip
    als_cg = ALS(3, regularization=0.05, max_iter=20, tol=0.0, random_state=seed).fit(r)
    sgd = SGDMatrixFactorization(3, regularization=0.05, learning_rate=0.015, max_iter=40,
                                 batch_size=128, random_state=ctx.rng).fit(r)  # fmt: skip
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.semilogy(np.arange(1, 21), als.objective_, "o-", label="ALS, Cholesky (per sweep)")
    ax.semilogy(np.arange(1, 21), als_cg.objective_, "s--", label="ALS, 3 CG steps (per sweep)")
    ax.semilogy(np.arange(1, 41), sgd.objective_, "-", label="SGD (per epoch)")
    ax.set_xlabel("sweep / epoch")
    ax.set_ylabel("objective (count-weighted regularisation)")
    ax.legend()
    ctx.figure(fig, "The ALS objective never increases, with either solver.")
    diffs = np.r_[np.diff(als.objective_), np.diff(als_cg.objective_)]
    ctx.table(
        ["quantity", "value"],
        [
            ["ALS (Cholesky) objective after 1 / 5 / 20 sweeps",
             f"{als.objective_[0]:.1f} / {als.objective_[4]:.1f} / {als.objective_[-1]:.1f}"],
            ["ALS (CG) objective after 1 / 5 / 20 sweeps",
             f"{als_cg.objective_[0]:.1f} / {als_cg.objective_[4]:.1f} / "
             f"{als_cg.objective_[-1]:.1f}"],
            ["largest increase between sweeps (both)", f"{max(diffs.max(), 0.0):.3g}"],
            ["SGD objective after 40 epochs", f"{sgd.objective_[-1]:.1f}"],
        ],
    )  # fmt: skip


@experiment(
    "recommender-rank-regularisation",
    title="Test RMSE against rank and regularisation, with the noise floor",
    section=SECTION,
    description=(
        "Ratings from a rank-3 model with biases plus Gaussian noise of standard deviation "
        "0.5: no predictor can beat an RMSE of 0.5 on fresh ratings. ALS with count-weighted "
        "regularisation is fitted on 80% of the ratings and scored on the rest, for ranks 1 "
        "to 8 and three regularisation strengths. Too small a rank underfits; with little "
        "regularisation a large rank overfits; the largest lambda shrinks the factors to 0 "
        "altogether (only the biases are left, and the curve is flat); in between, the "
        "true rank does best, still above the floor, since each user's factors are "
        "estimated from about 24 ratings. scikit-surprise's SVD (SGD, "
        "its default 20 epochs, learning rate and regularisation) at rank 3 is shown when "
        "it is installed."
    ),
    source=f"{_NOTES} §6.3-6.4 (low-rank factorisation, regularisation as a prior)",
)
def rank_regularisation(ctx):
    import matplotlib.pyplot as plt

    r = make_low_rank_ratings(200, 120, 6000, rank=3, noise=0.5, random_state=ctx.rng)
    train, test = train_test_split(r, 0.2, random_state=ctx.rng)
    ranks = [1, 2, 3, 5, 8]
    lams = [0.001, 0.03, 0.3]
    table = []
    fig, ax = plt.subplots(figsize=(7, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for lam in lams:
            errs = []
            for k in ranks:
                m = ALS(k, regularization=lam, max_iter=10, random_state=0).fit(train)
                errs.append(rmse(test.values, m.predict(test.users, test.items)))
            ax.plot(ranks, errs, "o-", label=f"lambda = {lam:g}")
            table.append([f"{lam:g}"] + [f"{e:.3f}" for e in errs])
    ax.axhline(0.5, color="k", ls=":", label="noise floor")
    ax.set_xlabel("rank")
    ax.set_ylabel("test RMSE")
    ax.set_ylim(0.45, None)
    ax.legend()
    ctx.figure(fig, "Test RMSE of ALS; the dotted line is the noise standard deviation.")
    ctx.table(["lambda"] + [f"k = {k}" for k in ranks], table, "Test RMSE (noise floor 0.5).")
    try:
        import pandas as pd
        import surprise
    except ImportError:
        return
    df = pd.DataFrame({"u": train.users, "i": train.items, "r": train.values})
    data = surprise.Dataset.load_from_df(df, surprise.Reader(rating_scale=(-20, 20)))
    svd = surprise.SVD(n_factors=3, random_state=0).fit(data.build_full_trainset())
    est = np.array([svd.predict(a, b).est for a, b in zip(test.users, test.items, strict=True)])
    ctx.text(
        f"scikit-surprise SVD, rank 3, default settings: test RMSE {rmse(test.values, est):.3f}."
    )


def _interactions(rng, n_users=300, n_items=150, rank=4):
    """Users see items they like more often (exposure depends on affinity)."""
    A = rng.standard_normal((n_users, rank)) / rank**0.25
    B = rng.standard_normal((n_items, rank)) / rank**0.25
    aff = A @ B.T
    p = 1.0 / (1.0 + np.exp(-(2.0 * aff - 3.0)))
    mask = rng.uniform(size=aff.shape) < p
    u, i = np.nonzero(mask)
    rating = np.clip(np.round(3.0 + aff[u, i] + 0.5 * rng.standard_normal(u.size)), 1, 5)
    ids_u = np.arange(n_users).astype(object)
    ids_i = np.arange(n_items).astype(object)
    return Ratings(u, i, rating, ids_u, ids_i)


@experiment(
    "recommender-explicit-vs-implicit",
    title="Explicit against implicit ALS on the same interactions",
    section=SECTION,
    description=(
        "Users rate the items they chose to watch, and they choose the items they like "
        "more often (the exposure depends on the affinity, not missing at random). Two "
        "interactions per user are held out; a recommender should rank them in its top "
        "10. Explicit ALS models the ratings on the observed pairs only, so it knows nothing "
        "about which items get watched; implicit ALS (confidence weights, Hu-Koren-Volinsky) "
        "models every pair, watched or not, and ranks far better by precision@10. Item-based "
        "CF and the popularity ranking are shown for reference."
    ),
    source=(
        f"{_NOTES} §6.1-6.2; Hu, Koren and Volinsky, 'Collaborative filtering for implicit "
        "feedback datasets' (ICDM 2008)"
    ),
)
def explicit_vs_implicit(ctx):
    import matplotlib.pyplot as plt

    r = _interactions(ctx.rng)
    train, test = leave_k_out_split(r, k=2, min_train=2, random_state=ctx.rng)
    relevant = [set(test.items[test.users == u].tolist()) for u in range(r.shape[0])]
    binary = Ratings(train.users, train.items, np.ones(train.nnz), train.user_ids, train.item_ids)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        models = {
            "explicit ALS": ALS(8, regularization=0.05, max_iter=15, random_state=0).fit(train),
            "implicit ALS": ImplicitALS(8, regularization=0.1, alpha=10.0, max_iter=10,
                                        random_state=0).fit(binary),
            "ItemKNN (cosine)": ItemKNN(20, similarity="cosine").fit(train),
        }  # fmt: skip
    users = [u for u in range(r.shape[0]) if relevant[u]]
    rows, bars = [], []
    for name, m in models.items():
        recs = [m.recommend(u, n=10)[0].tolist() for u in users]
        p = precision_at_k(recs, [relevant[u] for u in users], 10)
        rows.append([name, f"{p:.3f}"])
        bars.append(p)
    counts = np.bincount(train.items, minlength=r.shape[1])
    pop = []
    for u in users:
        seen = set(train.items[train.users == u].tolist())
        pop.append([i for i in np.argsort(-counts, kind="stable") if i not in seen][:10])
    p_pop = precision_at_k(pop, [relevant[u] for u in users], 10)
    rows.append(["popularity", f"{p_pop:.3f}"])
    bars.append(p_pop)
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.barh([row[0] for row in rows], bars)
    ax.set(xlabel="precision@10 on held-out interactions", ylabel="method")
    ctx.figure(
        fig,
        "Ranking held-out interactions. Compare each model's bar with the popularity "
        "baseline's: a recommender earns its keep only by beating it.",
    )
    ctx.table(["model", "precision@10"], rows)


@experiment(
    "recommender-bpmf-uncertainty",
    title="Bayesian PMF: predictive standard deviation against a user's number of ratings",
    section=SECTION,
    description=(
        "Users with a heavy-tailed number of ratings (1 to about 100) on a rank-2 matrix with "
        "noise 0.3. Gibbs sampling of the factors' posterior gives, for each prediction, a "
        "standard deviation combining the noise and the spread of p_u^T q_i over the "
        "posterior. It falls with the number of ratings the user has, towards the noise "
        "level: a user with one rating is barely located in the latent space. The MAP "
        "estimate (PMF) has no such error bar."
    ),
    source=(
        f"{_NOTES} §6.4; Salakhutdinov and Mnih, 'Bayesian probabilistic matrix factorization "
        "using Markov chain Monte Carlo' (ICML 2008)"
    ),
)
def bpmf_uncertainty(ctx):
    import matplotlib.pyplot as plt

    rng = ctx.rng
    n_users, n_items, k = 120, 80, 2
    P = rng.standard_normal((n_users, k)) / k**0.25
    Q = rng.standard_normal((n_items, k)) / k**0.25
    counts = np.minimum(rng.geometric(0.06, size=n_users), n_items)
    u = np.repeat(np.arange(n_users), counts)
    i = np.concatenate([rng.choice(n_items, c, replace=False) for c in counts])
    y = np.einsum("nk,nk->n", P[u], Q[i]) + 0.3 * rng.standard_normal(u.size)
    r = Ratings(u, i, y, np.arange(n_users).astype(object), np.arange(n_items).astype(object))
    m = BayesianProbabilisticMatrixFactorization(
        k, noise_variance=0.09, user_prior_variance=1.0, item_prior_variance=1.0,
        n_samples=60, burn_in=20, center=False, random_state=rng,
    ).fit(r)  # fmt: skip
    uu = np.repeat(np.arange(n_users), n_items)
    ii = np.tile(np.arange(n_items), n_users)
    _, std = m.predict(uu, ii, return_std=True)
    per_user = std.reshape(n_users, n_items).mean(axis=1)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.semilogx(counts, per_user, "o", alpha=0.6)
    ax.axhline(0.3, color="k", ls=":", label="noise sd 0.3")
    ax.set_xlabel("number of ratings of the user")
    ax.set_ylabel("mean predictive sd over items")
    ax.legend()
    ctx.figure(fig, "Predictive standard deviation per user.")
    bins = [(1, 2), (3, 9), (10, 29), (30, n_items)]
    rows = []
    for lo, hi in bins:
        sel = (counts >= lo) & (counts <= hi)
        if sel.any():
            rows.append([f"{lo}-{hi}", int(sel.sum()), f"{per_user[sel].mean():.3f}"])
    ctx.table(["ratings per user", "users", "mean predictive sd"], rows)
