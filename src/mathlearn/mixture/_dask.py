"""The EM mixtures on Dask arrays: per-block sufficient statistics through the EM driver.

The driver :func:`~mathlearn.mixture.em` only calls ``e_step(X)`` and ``m_step(X, posterior)``
(the :class:`~mathlearn.mixture.EMModel` protocol) and passes ``X`` through untouched, so a
Dask fit is another model for the same driver: :class:`_BlockEM`. Its E-step is one pass over
the row blocks; each block computes its responsibilities under the current parameters and
returns only what the M-step needs from them, sums over its rows (``N_k``, ``sum_n r_nk x_n``
and the second moments, :meth:`GaussianMixture._suff_stats`), together with its part of
the log-likelihood. Those sums are the "posterior" handed to the M-step, which maximises from
them (``_maximize_stats``) exactly as the NumPy M-step does from the ``(N, K)``
responsibilities. No ``(N, K)`` array is ever formed, and the bound the driver checks for
monotonicity is the same mean log-likelihood.
"""

from __future__ import annotations

import warnings

import dask.array as da
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
from ..utils.validation import check_random_state
from ._em import em

__all__ = ["mixture_fit_dask", "mixture_predict_dask"]


def _add_stats(a, b):
    return tuple(u + v for u, v in zip(a, b, strict=True))


class _BlockEM:
    """The :class:`~mathlearn.mixture.EMModel` of a mixture on Dask working-frame data."""

    def __init__(self, mixture, sample_weight=None):
        self.mixture = mixture
        self.sample_weight = sample_weight

    def e_step(self, X):
        m = self.mixture
        ref = m._stats_reference()

        def block(Xb, wb=None):
            log_norm, log_resp = m._log_norm_and_resp(Xb)
            resp = np.exp(log_resp)
            if wb is not None:
                resp *= wb[:, None]
                return float(wb @ log_norm), float(wb.sum()), m._suff_stats(Xb, resp, ref)
            return float(log_norm.sum()), float(Xb.shape[0]), m._suff_stats(Xb, resp, ref)

        def combine(a, b):
            return a[0] + b[0], a[1] + b[1], _add_stats(a[2], b[2])

        args = (X,) if self.sample_weight is None else (X, self.sample_weight)
        total, count, stats = _reduce(block, combine, *args)
        return total / count + m._log_prior() / count, (stats, ref)

    def m_step(self, X, posterior):
        stats, ref = posterior
        self.mixture._maximize_stats(stats, ref)


def _check_X(est, X, reset):
    from ._bernoulli_mixture import BernoulliMixture

    X = check_dask_input(est, X, reset=reset)
    if isinstance(est, BernoulliMixture):
        if est.binarize is not None:
            return (X > est.binarize).astype(np.float64), X
        ok = block_sums(lambda B: bool(np.all((B == 0) | (B == 1))), X)
        if not ok:
            raise ValueError(
                "BernoulliMixture with binarize=None needs binary data: every entry must be "
                "0 or 1."
            )
    return X, X


def _set_frame(est, X):
    """The Gaussian mixture's working frame (``_set_frame``) from block sums."""
    from ._gaussian_mixture import GaussianMixture, _exponent

    def stats(B):
        with np.errstate(over="ignore", invalid="ignore"):
            return float(np.max(np.abs(B), initial=0.0)), bool(np.isfinite(B).all())

    amax, finite = _reduce(stats, lambda a, b: (max(a[0], b[0]), a[1] and b[1]), X)
    raise_if_not_finite(finite)
    if not isinstance(est, GaussianMixture):
        return
    e = _exponent(amax)
    n = X.shape[0]
    if e > 200 or (e < -200 and est.reg_covar == 0):
        s = float(np.ldexp(1.0, e - 1))
        c = block_sums(lambda B: (B / s).sum(axis=0), X) / n * s
    else:
        s = 1.0
        c = block_sums(lambda B: B.sum(axis=0), X) / n
    est._frame_offset = c
    est._frame_scale = s


def _initial_estimate(est, Xw, rng, sw):
    """A callable giving the initial parameters of ``init_params``, computed by blocks.

    ``"random_from_data"`` draws the same rows as the NumPy path (the same generator calls),
    so it starts from the same parameters; ``"k-means++"`` uses the k-means‖ seeds,
    ``"kmeans"`` a k-means fitted on Dask, ``"random"`` per-block generators: all valid
    starts, but not the NumPy path's draws.
    """
    k = est.n_components
    n = Xw.shape[0]
    init = est.init_params

    def from_rows(rows, w):
        # One-hot responsibilities on K rows: the other rows contribute nothing.
        resp = np.diag(np.ones(k) if w is None else w)
        ref = rows
        return est._params_from_stats(est._suff_stats(rows, resp, ref), ref)

    if init == "random_from_data":
        w_all = None if sw is None else sw.compute()
        p = None if w_all is None else w_all / w_all.sum()
        idx = rng.choice(n, k, replace=False, p=p)
        order = np.argsort(idx)
        rows = np.empty((k, Xw.shape[1]))
        rows[order] = np.asarray(Xw[idx[order]].compute())
        return lambda: from_rows(rows, None if w_all is None else w_all[idx])
    if init == "k-means++":
        from ..cluster._dask import _kmeans_parallel

        rows = _kmeans_parallel(Xw, k, rng, sw)
        return lambda: from_rows(rows, None)
    if init == "kmeans":
        from ..cluster import KMeans

        labels = KMeans(k, n_init=1, random_state=rng).fit(Xw, sample_weight=sw).labels_

        def resp_of(B, lab, wb=None):
            R = np.zeros((B.shape[0], k))
            R[np.arange(B.shape[0]), lab] = 1.0
            return R if wb is None else R * wb[:, None]

        aligned = (labels,) if sw is None else (labels, sw)
    else:  # "random"
        seeds = rng.integers(2**63, size=len(Xw.chunks[0]))
        seed_arr = da.from_array(
            np.repeat(seeds, Xw.chunks[0]).astype(np.uint64), chunks=(Xw.chunks[0],)
        )

        def resp_of(B, seed, wb=None):
            R = np.random.default_rng(int(seed[0])).uniform(size=(B.shape[0], k))
            R /= R.sum(axis=1, keepdims=True)
            return R if wb is None else R * wb[:, None]

        aligned = (seed_arr,) if sw is None else (seed_arr, sw)

    # Second moments about the data mean (0 in the working frame) for the first estimate.
    ref = np.zeros((k, Xw.shape[1]))

    def block(B, *a):
        return est._suff_stats(B, resp_of(B, *a), ref)

    def estimate():
        return est._params_from_stats(block_sums(block, Xw, *aligned), ref)

    return estimate


def mixture_fit_dask(est, X, sample_weight):
    """``fit_predict`` of a mixture on Dask ``X``: fits ``est``, returns lazy labels."""
    X, X_user = _check_X(est, X, reset=True)
    sw = dask_sample_weight(sample_weight, X)
    if sw is None:
        n_eff = X.shape[0]
    else:
        n_eff = int(dask.compute((sw > 0).sum())[0])
    if n_eff < est.n_components:
        raise ValueError(
            f"n_samples={n_eff} should be >= n_components={est.n_components}: a "
            "mixture cannot have more components than points"
            + ("" if sample_weight is None else " (of non-zero weight)")
            + "."
        )
    rng = check_random_state(est.random_state)
    _set_frame(est, X)
    Xw = est._to_working(X)
    model = _BlockEM(est, sw)
    best, best_params = None, None
    for _ in range(est.n_init):
        estimate = None
        needs = est.init_params != "random" or type(est).__name__ != "BernoulliMixture"
        if needs:
            estimate = _initial_estimate(est, Xw, rng, sw)
        est._initialize(Xw, rng, None, estimate=estimate)
        result = em(model, Xw, max_iter=est.max_iter, tol=est.tol)
        if best is None or result.lower_bound > best.lower_bound:
            best, best_params = result, est._get_parameters()
    est._set_parameters(best_params)
    est.converged_ = best.converged
    est.n_iter_ = best.n_iter
    jac = est._log_jacobian()
    est.lower_bound_ = best.lower_bound - jac
    est.lower_bounds_ = best.lower_bounds - jac
    if not est.converged_:
        warnings.warn(
            f"EM did not converge in max_iter={est.max_iter} iterations (last change of "
            "the bound above tol); increase max_iter or tol, or check the initialisation.",
            ConvergenceWarning,
            stacklevel=3,
        )
    est._after_fit(Xw)
    return mixture_predict_dask(est, X_user, what="labels", checked=X)


def mixture_predict_dask(est, X, *, what: str, checked=None):
    """Lazy ``predict`` / ``predict_proba`` / ``score_samples`` of Dask ``X``."""
    if checked is None:
        checked, _ = _check_X(est, X, reset=False)
    Xw = est._to_working(checked)
    if what == "labels":
        return map_row_blocks(
            lambda B: est._log_norm_and_resp(B)[1].argmax(axis=1),
            Xw,
            out_cols=None,
            dtype=np.intp,
        )
    if what == "proba":
        return map_row_blocks(
            lambda B: np.exp(est._log_norm_and_resp(B)[1]), Xw, out_cols=est.n_components
        )
    jac = est._log_jacobian()
    return map_row_blocks(lambda B: est._log_norm_and_resp(B)[0] - jac, Xw, out_cols=None)
