"""k-means on Dask arrays: k-means‖ seeding and Lloyd's iterations by per-block sums.

Lloyd's step needs, for the current centres, the per-cluster sums and counts of the new
partition: each row block assigns its rows and returns its sums and counts, and the blocks'
results are added (a balanced tree, so the order is fixed by the chunking). The centres are
then updated in memory exactly as in :func:`._kmeans.lloyd`. The partition has not changed
exactly when the new centres equal the old ones (the same partition gives the same sums), so
the stopping rule of the NumPy loop (labels unchanged, or the centres' total squared shift
at most ``tol``) needs no labels kept between passes.

Seeding ("k-means++" on Dask): k-means‖ (Bahmani, Moseley, Vattani, Kumar & Vassilvitskii,
"Scalable k-means++", VLDB 2012). Starting from one point drawn uniformly, each of a few
rounds keeps every row independently with probability ``min(1, l d^2(x, C) / phi_C)``
(``l = 2K`` oversampling, ``phi_C`` the current cost), so a round is one pass and draws about
``l`` points; the ``O(l log phi)`` candidates are then weighted by the number of rows nearest
to each and reduced to ``K`` centres by the weighted k-means++ and Lloyd's iterations of the
in-memory code. Its seeding carries the same ``O(log K)`` guarantee as k-means++. The draws of
each block come from a generator seeded from ``random_state`` by block, so a fit is
reproducible for a given chunking.
"""

from __future__ import annotations

import warnings

import numpy as np

import dask

from ..exceptions import ConvergenceWarning
from ..linear_model._dask import _reduce
from ..utils._backend import (
    block_sums,
    check_dask_input,
    dask_sample_weight,
    map_row_blocks,
    raise_if_not_finite,
)
from ..utils.validation import check_array, check_random_state
from ._kmeans_common import (
    _kmeans_plusplus,
    _sq_dist_to_assigned,
    assign,
    check_n_clusters,
    weighted_cluster_sums,
)

__all__ = ["kmeans_fit_dask", "kmeans_predict_dask"]

#: Rounds of k-means‖ sampling (the paper finds 5 enough in practice).
_PARALLEL_ROUNDS = 5


class _DaskFrame:
    """:class:`._kmeans._Frame` from block statistics: ``(x / s - mean) / t``."""

    def __init__(self, s, mean, t):
        self.s, self.mean, self.t = s, mean, t

    def to_work(self, C):
        return (C / self.s - self.mean) / self.t

    def from_work(self, C):
        return (C * self.t + self.mean) * self.s

    def sq_scale(self) -> float:
        with np.errstate(over="ignore"):
            return np.float64(self.s * self.t) ** 2


def _p2(m: float) -> float:
    if not np.isfinite(m) or m == 0.0:
        return 1.0
    v = float(np.ldexp(1.0, int(np.frexp(m)[1]) - 1))
    return v if not 2.0**-400 <= v <= 2.0**400 else 1.0


def _stats(Xb, swb=None):
    w = np.ones(Xb.shape[0]) if swb is None else swb
    with np.errstate(over="ignore", invalid="ignore"):
        return (
            float(np.max(np.abs(Xb), initial=0.0)),
            bool(np.isfinite(Xb).all()),
            w @ Xb,
            float(w.sum()),
            np.min(Xb, axis=0, initial=np.inf),
            np.max(Xb, axis=0, initial=-np.inf),
        )


def _combine(a, b):
    return (
        max(a[0], b[0]),
        a[1] and b[1],
        a[2] + b[2],
        a[3] + b[3],
        np.minimum(a[4], b[4]),
        np.maximum(a[5], b[5]),
    )


def _frame(X, sw):
    """The working frame of the fit and the per-feature variances of the working data."""
    args = (X,) if sw is None else (X, sw)
    amax, finite, total, wsum, lo, hi = _reduce(_stats, _combine, *args)
    raise_if_not_finite(finite)
    with np.errstate(over="ignore", invalid="ignore"):
        spread = hi - lo
    if not np.all(np.isfinite(spread)):
        raise ValueError(
            "the range of X (max - min of a feature) exceeds the largest float (~1.8e308); "
            "rescale X."
        )
    s = _p2(amax)
    Xs = X / s if s != 1.0 else X
    if s != 1.0:
        total = _reduce(_stats, _combine, *((Xs,) if sw is None else (Xs, sw)))[2]
    mean = total / wsum if sw is not None else total / X.shape[0]
    if sw is not None:
        # the frame's centre is the plain mean, as in _Frame; the weighted one is for tol
        mean_plain = block_sums(lambda B: B.sum(axis=0), Xs) / X.shape[0]
        wmean = mean - mean_plain
        mean = mean_plain
    Xc = Xs - mean

    def second(B, wb=None):
        if wb is None:
            return (
                float(np.max(np.abs(B), initial=0.0)),
                B.sum(axis=0),
                np.einsum("ij,ij->j", B, B),
            )
        C = B - wmean
        return float(np.max(np.abs(B), initial=0.0)), wb @ C, wb @ (C * C)

    def comb2(a, b):
        return max(a[0], b[0]), a[1] + b[1], a[2] + b[2]

    cmax, c1, c2 = _reduce(second, comb2, *((Xc,) if sw is None else (Xc, sw)))
    t = _p2(cmax)
    Xw = Xc / t if t != 1.0 else Xc
    total_w = X.shape[0] if sw is None else wsum
    var = (c2 - c1 * c1 / total_w) / total_w / (t * t)
    return _DaskFrame(s, mean, t), Xw, var


def _lloyd_pass(Xw, centers, sw):
    """Per-cluster sums and counts of the partition by ``centers`` (one pass)."""
    k = centers.shape[0]

    def step(B, wb=None):
        if wb is None:
            _, _, sums, counts = assign(B, centers, accumulate=True, distances=False)
            return sums, counts
        labels = assign(B, centers, distances=False)[0]
        return weighted_cluster_sums(B, labels, wb, k)

    return block_sums(step, *((Xw,) if sw is None else (Xw, sw)))


def _relocate_empty_dask(Xw, centers_old, sums, counts, sw):
    """:func:`._kmeans._relocate_empty` over blocks: the points farthest from their centres
    (of non-zero weight) become the empty clusters' only members."""
    empty = np.flatnonzero(counts == 0)
    if empty.size == 0:
        return
    e = empty.size

    def far(B, wb=None):
        labels = assign(B, centers_old, distances=False)[0]
        dist = _sq_dist_to_assigned(B, centers_old, labels)
        if wb is not None:
            dist = np.where(wb == 0, 0.0, dist)
        top = np.argsort(-dist, kind="stable")[:e]
        w = np.ones(top.size) if wb is None else wb[top]
        return [
            (float(dist[i]), B[i].copy(), int(labels[i]), float(w[i])) for i in range(top.size)
        ]

    def merge(a, b):
        return sorted(a + b, key=lambda r: -r[0])[:e]

    best = _reduce(far, merge, *((Xw,) if sw is None else (Xw, sw)))
    for new_k, (dist, x, old_k, w) in zip(empty, best, strict=False):
        if not dist > 0:
            break
        sums[old_k] -= w * x
        counts[old_k] -= w
        sums[new_k] = w * x
        counts[new_k] = w


def _final_pass(Xw, centers, sw):
    """Inertia (from the differences) and cluster sizes under ``centers``."""
    k = centers.shape[0]

    def step(B, wb=None):
        labels = assign(B, centers, distances=False)[0]
        d2 = _sq_dist_to_assigned(B, centers, labels)
        w = np.ones(B.shape[0]) if wb is None else wb
        return float(d2 @ w), np.bincount(labels, weights=w, minlength=k)

    return block_sums(step, *((Xw,) if sw is None else (Xw, sw)))


def lloyd_dask(Xw, centers, *, max_iter, tol, sw=None):
    """:func:`._kmeans.lloyd` on Dask ``Xw``: ``centers, inertia, sizes, n_iter, converged``."""
    converged = False
    n_iter = 0
    for _ in range(max_iter):
        n_iter += 1
        sums, counts = _lloyd_pass(Xw, centers, sw)
        _relocate_empty_dask(Xw, centers, sums, counts, sw)
        filled = counts > 0
        new_centers = centers.copy()
        new_centers[filled] = sums[filled] / counts[filled, None]
        shift = float(((new_centers - centers) ** 2).sum())
        centers = new_centers
        if shift <= tol:
            converged = True
            break
    inert, sizes = _final_pass(Xw, centers, sw)
    return centers, inert, sizes, n_iter, converged


def _kmeans_parallel(Xw, k, rng, sw):
    """k-means‖ seeding: ``K`` centres from about ``2 K log(phi)`` sampled candidates."""
    n = Xw.shape[0]
    ell = 2.0 * k
    if sw is None:
        first = int(rng.integers(n))
    else:
        w = sw.compute()
        first = int(rng.choice(n, p=w / w.sum()))
    C = np.asarray(Xw[first : first + 1].compute())

    def cost(B, wb=None):
        labels = assign(B, C_now, distances=False)[0]
        d2 = _sq_dist_to_assigned(B, C_now, labels)
        return float(d2 @ (np.ones(B.shape[0]) if wb is None else wb))

    aligned = () if sw is None else (sw,)
    for _ in range(_PARALLEL_ROUNDS):
        C_now = C
        phi = block_sums(cost, Xw, *aligned)
        if not phi > 0:
            break
        seeds = rng.integers(2**63, size=len(Xw.chunks[0]))

        def sample(B, seed, wb=None, C_now=C_now, phi=phi):
            labels = assign(B, C_now, distances=False)[0]
            d2 = _sq_dist_to_assigned(B, C_now, labels)
            mass = d2 if wb is None else d2 * wb
            p = np.minimum(1.0, ell * mass / phi)
            keep = np.random.default_rng(int(seed)).random(B.shape[0]) < p
            return B[keep].copy()

        blocks = Xw.to_delayed(optimize_graph=False)[:, 0].tolist()
        wblocks = (
            [None] * len(blocks) if sw is None else sw.to_delayed(optimize_graph=False).tolist()
        )
        f = dask.delayed(sample, pure=True)
        picked = dask.compute(
            *[f(b, s, wb) for b, s, wb in zip(blocks, seeds, wblocks, strict=True)]
        )
        new = np.vstack([C, *picked])
        if new.shape[0] == C.shape[0]:
            break
        C = new
    # Weight each candidate by the (weighted) number of rows nearest to it.
    m = C.shape[0]

    def nearest_counts(B, wb=None):
        labels = assign(B, C, distances=False)[0]
        return np.bincount(labels, weights=None if wb is None else wb, minlength=m).astype(float)

    weights = block_sums(nearest_counts, Xw, *aligned)
    keep = weights > 0
    C, weights = C[keep], weights[keep]
    if C.shape[0] < k:
        # Too few distinct candidates (tiny or duplicated data): fill with drawn rows.
        extra = np.asarray(Xw[np.sort(rng.choice(n, k - C.shape[0], replace=False))].compute())
        C = np.vstack([C, extra])
        weights = np.append(weights, np.ones(extra.shape[0]))
    from ._kmeans import lloyd

    trials = 2 + int(np.log(k))
    centers = _kmeans_plusplus(C, k, rng, n_local_trials=trials, sample_weight=weights)[0]
    return lloyd(C, centers, max_iter=300, tol=0.0, sample_weight=weights)[2]


def kmeans_fit_dask(est, X, sample_weight):
    """``KMeans.fit`` on Dask ``X``: sets the fitted attributes (``labels_`` lazy)."""
    from ._kmeans import _n_init, _rescaled_inertia

    X_user = X
    X = check_dask_input(est, X)
    sw = dask_sample_weight(sample_weight, X)
    n = X.shape[0]
    check_n_clusters(est.n_clusters, n)
    rng = check_random_state(est.random_state)
    n_init = _n_init(est.n_init, est.init)
    frame, Xw, var = _frame(X, sw)
    tol = float(np.mean(var)) * est.tol if est.tol > 0 else 0.0
    k = est.n_clusters
    best = None
    for _ in range(n_init):
        init = est.init
        if isinstance(init, str):
            if init == "k-means++":
                centers = _kmeans_parallel(Xw, k, rng, sw)
            else:
                p = None
                if sw is not None:
                    w = sw.compute()
                    p = w / w.sum()
                idx = rng.choice(n, k, replace=False, p=p)
                order = np.argsort(idx)
                rows = np.asarray(Xw[idx[order]].compute())
                centers = np.empty_like(rows)
                centers[order] = rows
        else:
            centers = init(X_user, k, random_state=rng) if callable(init) else init
            what = "the centres returned by the init callable" if callable(init) else "init array"
            centers = check_array(centers, dtype=np.float64, copy=True, input_name="init")
            if centers.shape != (k, X.shape[1]):
                raise ValueError(
                    f"{what} has shape {centers.shape}; expected (n_clusters, n_features) = "
                    f"({k}, {X.shape[1]})."
                )
            centers = frame.to_work(centers)
        run = lloyd_dask(Xw, centers, max_iter=est.max_iter, tol=tol, sw=sw)
        if best is None or run[1] < best[1]:
            best = run
    centers, inert, sizes, n_iter, converged = best
    n_distinct = int(np.count_nonzero(sizes))
    if n_distinct < k:
        warnings.warn(
            f"Number of distinct clusters ({n_distinct}) found smaller than n_clusters "
            f"({k}): X has duplicate points; the empty clusters keep their centres.",
            ConvergenceWarning,
            stacklevel=3,
        )
    if not converged:
        warnings.warn(
            f"KMeans stopped at max_iter={est.max_iter} before the partition settled; "
            "increase max_iter.",
            ConvergenceWarning,
            stacklevel=3,
        )
    est.cluster_centers_ = frame.from_work(centers)
    work = centers.copy()
    est.labels_ = map_row_blocks(
        lambda B: assign(B, work, distances=False)[0], Xw, out_cols=None, dtype=np.intp
    )
    est.inertia_ = _rescaled_inertia(inert, frame, "KMeans")
    est.n_iter_ = n_iter
    return est


def kmeans_predict_dask(est, X, *, distances: bool):
    """Lazy labels (or distances to every centre) of Dask ``X``."""
    from ._kmeans import _distances, _nearest

    X = check_dask_input(est, X, reset=False)
    C = est.cluster_centers_
    if distances:
        return map_row_blocks(lambda B: _distances(B, C), X, out_cols=C.shape[0])
    return map_row_blocks(lambda B: _nearest(B, C), X, out_cols=None, dtype=np.intp)
