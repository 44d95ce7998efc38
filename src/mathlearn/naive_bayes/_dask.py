"""Naive Bayes on Dask arrays: the class counts and moments summed over row blocks.

The discrete models need ``n_k = sum_i s_i [y_i = k]`` and ``n_kj = sum_i s_i [y_i = k] x_ij``,
which add across blocks. The Gaussian model needs, per class, the (weighted) count, mean and
variance; each block computes them for its rows and the blocks' triples are merged by the
pairwise update of Chan, Golub & LeVeque (the ``_merge`` that ``partial_fit`` uses), which
does not cancel the way ``E[x^2] - E[x]^2`` would.
"""

from __future__ import annotations

import dask.array as da
import numpy as np

from ..linear_model._dask import _reduce
from ..utils._backend import check_dask_input, dask_sample_weight, map_row_blocks
from ..utils._rowscale import unit_of
from ..utils.extmath import logsumexp

__all__ = ["nb_fit_dask", "nb_predict_dask"]


def _prepare(est, X, y, sample_weight):
    X, y = check_dask_input(est, X, y, y_dtype=None)
    sw = dask_sample_weight(sample_weight, X)
    classes = np.unique(da.unique(y).compute())
    est._labels_to_index(classes, classes, True)
    if sw is None:
        sw = da.ones(X.shape[0], chunks=(X.chunks[0],))
    return X, y, sw


def nb_fit_dask(est, X, y, sample_weight):
    """``fit`` of a naive Bayes classifier on Dask ``X`` and ``y``."""
    from ._gaussian import GaussianNB

    unit_weights = sample_weight is None
    X, y, sw = _prepare(est, X, y, sample_weight)
    classes = est.classes_
    K, _d = len(classes), X.shape[1]
    if isinstance(est, GaussianNB):
        amax = _reduce(
            lambda B: float(np.max(np.abs(B), initial=0.0)) if np.isfinite(B).all() else np.inf,
            max,
            X,
        )
        if not np.isfinite(amax):
            raise ValueError("Input X contains NaN or infinity.")
        unit = unit_of(np.array([amax]))
        return _fit_gaussian(est, X, y, sw, unit, unit_weights)

    def counts(Xb, yb, wb):
        if not np.isfinite(Xb).all():
            raise ValueError("Input X contains NaN or infinity.")
        Xb = est._validated_features(Xb)
        idx = np.searchsorted(classes, yb)
        Y = np.zeros((Xb.shape[0], K))
        Y[np.arange(Xb.shape[0]), idx] = wb
        return Y.sum(axis=0), Y.T @ est._transform_counts(Xb)

    cc, fc = _reduce(counts, lambda a, b: (a[0] + b[0], a[1] + b[1]), X, y, sw)
    est.class_count_ = cc
    est.feature_count_ = fc
    est._update_feature_log_prob()
    est._update_class_log_prior()
    return est


def _moments(X, w, unit_weights):
    n = float(w.sum())
    if n == 0:
        return 0.0, np.zeros(X.shape[1]), np.zeros(X.shape[1])
    if unit_weights:
        return n, X.mean(axis=0), X.var(axis=0)
    mu = (w @ X) / n
    dev = X - mu
    return n, mu, (w @ (dev * dev)) / n


def _fit_gaussian(est, X, y, sw, unit, unit_weights):
    from ._gaussian import GaussianNB, _merge

    classes = est.classes_
    K, d = len(classes), X.shape[1]

    def block(Xb, yb, wb):
        Xb = Xb / unit if unit != 1.0 else Xb
        idx = np.searchsorted(classes, yb)
        n = np.zeros(K)
        mu = np.zeros((K, d))
        v = np.zeros((K, d))
        for k in np.unique(idx):
            mask = idx == k
            n[k], mu[k], v[k] = _moments(Xb[mask], wb[mask], unit_weights)
        return _moments(Xb, wb, unit_weights), (n, mu, v)

    def combine(a, b):
        (na, ma, va), ca = a
        (nb, mb, vb), cb = b
        tot = _merge(np.float64(na), ma, va, np.float64(nb), mb, vb)
        return tot, _merge(ca[0], ca[1], ca[2], cb[0], cb[1], cb[2])

    (n_all, mu_all, v_all), (n, mu, v) = _reduce(block, combine, X, y, sw)
    est._unit = unit
    est.class_count_ = np.asarray(n, dtype=float)
    est.theta_ = np.zeros((K, d))
    GaussianNB.theta_.fitted(est)[...] = mu
    est._raw_var = np.asarray(v, dtype=float)
    est._n_all, est._mu_all, est._v_all = float(n_all), mu_all, v_all
    est._finish_batch()
    return est


def nb_predict_dask(est, X, what: str):
    """Lazy ``predict`` / ``predict_proba`` / ``predict_log_proba`` of Dask ``X``."""
    X = check_dask_input(est, X, reset=False)
    classes = est.classes_
    if what == "labels":
        return map_row_blocks(
            lambda B: classes[np.argmax(est._joint_log_likelihood(B), axis=1)],
            X,
            out_cols=None,
            dtype=classes.dtype,
        )

    def log_post(B):
        jll = est._joint_log_likelihood(B)
        return jll - logsumexp(jll, axis=1, keepdims=True)

    if what == "log_proba":
        return map_row_blocks(log_post, X, out_cols=len(classes))
    return map_row_blocks(lambda B: np.exp(log_post(B)), X, out_cols=len(classes))
