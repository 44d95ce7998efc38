r"""Logistic regression: binary and multinomial (softmax), L2 penalty, Newton/IRLS or L-BFGS.

The objective is scikit-learn's, so that a given ``C`` means the same in both libraries:

.. math::

    \min_{W, b}\; C \sum_i s_i\, \ell_i(W, b) + \tfrac12 \|W\|_F^2, \qquad
    \ell_i = \log \sum_k e^{w_k^\top x_i + b_k} - (w_{y_i}^\top x_i + b_{y_i})

(the negative log-likelihood of the softmax model ``p(y = k | x) ∝ exp(w_k^T x + b_k)``;
for two classes the single-vector form ``ℓ_i = log(1 + e^{z_i}) - y_i z_i`` with
``z_i = w^T x_i + b`` and ``y_i ∈ {0, 1}``), with the intercept unpenalised. It equals the
notes' ``L(β) = -Σ log p(y_i | x_i) + λ‖β‖²`` with ``λ = 1 / (2C)`` (Stuttgart
"Introduction to Machine Learning" §3.3, slides 3:14-3:22; PRML §4.3.2-4.3.4; Oxford
"Advanced Topics" eq. 1.28 with ``λ/n = 1/(2C)``). Internally the objective is divided by
``S = Σ s_i`` (the same minimiser), so that the gradient tolerance does not depend on ``n``.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.optimize import linprog
from scipy.special import expit

from .. import optim
from ..base import (
    BaseClassifier,
    InformationCriterionMixin,
    _class_indices,
    _fit_context,
    check_is_fitted,
)
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, StrOptions
from ..utils._threads import matmul_beside_scipy
from ..utils.linalg import cho_solve, cholesky
from ..utils.validation import check_sample_weight, validate_data

__all__ = ["LogisticRegression"]

# Sums over samples of products of two features must stay far below the largest float64
# (1.8e308) for the Hessian and for L-BFGS's curvature pairs.
_MAX_NORM_X = 1e100


_EPS = np.finfo(float).eps


class _BinaryObjective:
    """``F(θ) = Σ ŝ_i [softplus(z_i) - y_i z_i] + α/2 ‖w‖²`` with ``θ = (w, b)``.

    One evaluation reads ``X`` from memory once: ``z = X w + b``, the loss terms,
    ``r = ŝ (σ(z) - y)`` and ``Xᵀ r`` are computed block by block of rows that stay in cache
    between the two products, with two scratch vectors of one block's length; only the
    scores ``z`` are kept at full length. The scores of the last ``θ`` are kept: Newton's
    line search evaluates the accepted point, which the gradient and the Hessian then reuse
    without another product with ``X``.
    """

    def __init__(self, X, y, sw, alpha, fit_intercept):
        # y: 0/1 labels (float or bool); sw: the weights ŝ_i, or one number for all samples
        self.X, self.y, self.sw, self.alpha = X, y, sw, alpha
        self.fit_intercept = fit_intercept
        self.D = X.shape[1]
        n = X.shape[0]
        self._z = np.empty(n)  # scores at self._theta
        self._theta = None
        # Rows per block of the fused evaluation: about 1 MB of X; one block's scratch.
        self._block = max(256, (1 << 17) // max(self.D, 1))
        self._e = np.empty(min(n, self._block))
        self._t = np.empty(min(n, self._block))

    def n_params(self):
        return self.D + int(self.fit_intercept)

    def scores(self, theta):
        """``z = X w + b`` (cached for the last ``θ``; do not modify)."""
        if self._theta is not None and np.array_equal(theta, self._theta):
            return self._z
        z = np.dot(self.X, theta[: self.D], out=self._z)
        if self.fit_intercept:
            z += theta[self.D]
        self._theta = np.array(theta, dtype=float)
        return z

    def _blocks(self):
        """``(lo, hi)`` of each block of rows."""
        n, step = self.X.shape[0], self._block
        return ((lo, min(lo + step, n)) for lo in range(0, n, step))

    def _loss_terms(self, zb, lo, hi):
        # softplus(z) - y z = log1p(e^{-|z|}) + max((1 - 2y) z, 0): a sum of non-negative
        # terms (no cancellation between large sums). (1 - 2y) z is formed as z - 2 (y z),
        # exact for y in {0, 1}, so that no array of signs is kept. Returns the block's
        # sum, weighted by ŝ_i where the weights are an array (else unweighted).
        e, t = self._e[: hi - lo], self._t[: hi - lo]
        np.abs(zb, out=e)
        np.negative(e, out=e)
        np.exp(e, out=e)
        np.log1p(e, out=e)
        np.multiply(self.y[lo:hi], zb, out=t)
        t *= -2.0
        t += zb
        np.maximum(t, 0.0, out=t)
        t += e
        return float(t.sum()) if np.ndim(self.sw) == 0 else float(self.sw[lo:hi] @ t)

    def _loss(self, z):
        total = sum(self._loss_terms(z[lo:hi], lo, hi) for lo, hi in self._blocks())
        return float(self.sw * total) if np.ndim(self.sw) == 0 else total

    def value(self, theta):
        w = theta[: self.D]
        return self._loss(self.scores(theta)) + 0.5 * self.alpha * float(w @ w)

    def value_grad(self, theta):
        D, X = self.D, self.X
        w = theta[:D]
        b = theta[D] if self.fit_intercept else 0.0
        g = np.zeros(self.n_params())
        gw = g[:D]
        # z = X w + b (or the kept scores), the loss and g = Xᵀ r over blocks of rows that
        # fit in a core's cache, so that X is read from memory once per evaluation.
        cached = self._theta is not None and np.array_equal(theta, self._theta)
        z = self._z
        tmp = None  # the blocks after the first add their product through it
        loss = r_sum = 0.0
        scalar_sw = np.ndim(self.sw) == 0
        for lo, hi in self._blocks():
            Xb = X[lo:hi]
            zb = z[lo:hi]
            if not cached:
                np.dot(Xb, w, out=zb)
                zb += b
            loss += self._loss_terms(zb, lo, hi)
            rb = expit(zb, out=self._t[: hi - lo])
            rb -= self.y[lo:hi]
            rb *= self.sw if scalar_sw else self.sw[lo:hi]  # r = ŝ (σ(z) - y)
            if lo == 0:
                np.dot(rb, Xb, out=gw)
            else:
                if tmp is None:
                    tmp = np.empty(D)
                np.dot(rb, Xb, out=tmp)
                gw += tmp
            r_sum += float(rb.sum())
        if not cached:
            self._theta = np.array(theta, dtype=float)
        gw += self.alpha * w
        if self.fit_intercept:
            g[D] = r_sum
        f = (float(self.sw * loss) if scalar_sw else loss) + 0.5 * self.alpha * float(w @ w)
        return f, g, None

    def hessian(self, theta, p=None):
        p = expit(self.scores(theta))
        # IRLS weights d_i = ŝ_i p_i (1 - p_i): H = X^T diag(d) X + α I (Stuttgart slide 3:19).
        d = self.sw * p * (1.0 - p)
        D = self.D
        H = np.empty((self.n_params(), self.n_params()))
        # One (n, D) buffer for the whole solve: a fresh 80 MB array per Newton step costs
        # more in page faults than the product itself.
        if getattr(self, "_buf", None) is None:
            self._buf = np.empty_like(self.X, order="C")
        Xd = np.multiply(self.X, np.sqrt(d)[:, None], out=self._buf)
        # X^T diag(d) X: NumPy computes ``Aᵀ A`` by a symmetric rank-k update (half the flops
        # of a general product), measured 1.3-2x faster than SciPy's dsyrk wrapper here.
        H[:D, :D] = Xd.T @ Xd
        H[np.diag_indices(D)] += self.alpha
        if self.fit_intercept:
            c = self.X.T @ d
            H[:D, D] = c
            H[D, :D] = c
            H[D, D] = d.sum()
        return H


class _MultinomialObjective:
    """``F(θ) = Σ ŝ_i [logsumexp(Z_i) - Z_{i y_i}] + α/2 ‖W‖²`` with ``θ = vec(W, b)``.

    The softmax is invariant to adding one vector to every ``w_k`` (or one number to every
    ``b_k``); unpenalised directions of that kind make the Hessian singular. The terms
    ``½ (Σ_k b_k)²`` (with an intercept) and, without a penalty, ``½ ‖Σ_k w_k‖²`` leave the
    loss unchanged and pick the symmetric solution ``Σ_k b_k = 0`` (``Σ_k w_k = 0``), which
    is also the one scikit-learn returns; with ``α > 0`` the penalty already forces
    ``Σ_k w_k = 0`` at the optimum.

    The scores are held as ``Zᵀ = W Xᵀ + b`` of shape ``(K, n)``: the reductions over
    classes (max, sum) then run along contiguous rows of length ``n`` instead of along rows
    of length ``K``. One evaluation: one product ``W Xᵀ`` into the one ``(K, n)`` buffer,
    the exponentials ``exp(Z - m)`` in place, one product ``R X`` with ``R`` formed in place
    as well; besides that buffer only four length-``n`` vectors are kept. The softmax parts
    of the last ``θ`` are reused while the buffer still holds them (a line search's accepted
    point, the Hessian after ``value``).
    """

    def __init__(self, X, y, sw, alpha, fit_intercept, n_classes, identify=True):
        # y: class indices; sw: the weights ŝ_i, or one number for all samples
        self.X, self.sw, self.alpha = X, sw, alpha
        self.identify = identify
        self.fit_intercept = fit_intercept
        self.K = n_classes
        self.D = X.shape[1]
        self.Dp = self.D + int(fit_intercept)
        n = X.shape[0]
        # Position of (y_i, i) in the raveled (K, n) score array.
        self._yflat = y * n + np.arange(n)
        self._P = np.empty((n_classes, n))  # Z - m, then exp(Z - m), then R
        self._s = np.empty(n)  # m, then s = Σ_k exp(Z_k - m)
        self._zy = np.empty(n)  # Z_{y_i} - m
        self._u = np.empty(n)  # work buffer
        self._theta = None  # the θ whose softmax parts the buffers hold
        # the two products on SciPy's BLAS where BLAS threads: the solvers' own vector work
        # runs on SciPy's thread pool, and a switch between pools can stall (scipy_matmul)
        self._matmul = matmul_beside_scipy()

    def n_params(self):
        return self.K * self.Dp

    def _unpack(self, theta):
        T = theta.reshape(self.K, self.Dp)
        return T[:, : self.D], (T[:, self.D] if self.fit_intercept else None)

    def _extra(self, W, b):
        f = 0.0
        if not self.identify:
            return f
        if b is not None:
            f += 0.5 * float(b.sum()) ** 2
        if self.alpha == 0.0:
            s = W.sum(axis=0)
            f += 0.5 * float(s @ s)
        return f

    def _log_softmax_parts(self, theta):
        """``P = exp(Z - m)``, ``s = Σ_k P`` and ``Z_{y_i} - m`` in the buffers.

        A caller that overwrites ``P`` sets ``_theta`` to None.
        """
        if self._theta is not None and np.array_equal(theta, self._theta):
            return self._P, self._s, self._zy
        W, b = self._unpack(theta)
        P = self._matmul(W, self.X.T, out=self._P)
        if b is not None:
            P += b[:, None]
        m = np.max(P, axis=0, out=self._s)
        P -= m
        z_y = np.take(P.ravel(), self._yflat, out=self._zy)
        np.exp(P, out=P)
        s = np.sum(P, axis=0, out=self._s)
        self._theta = np.array(theta, dtype=float)
        return P, s, z_y

    def _nll(self, s, z_y):
        # Σ ŝ_i (log s_i - (Z_{y_i} - m_i)), the per-sample terms formed first
        u = np.log(s, out=self._u)
        u -= z_y
        return _weighted_sum(self.sw, u)

    def value(self, theta):
        W, b = self._unpack(theta)
        _, s, z_y = self._log_softmax_parts(theta)
        nll = self._nll(s, z_y)
        return nll + 0.5 * self.alpha * float(np.sum(W * W)) + self._extra(W, b)

    def value_grad(self, theta):
        W, b = self._unpack(theta)
        P, s, z_y = self._log_softmax_parts(theta)
        nll = self._nll(s, z_y)
        f = nll + 0.5 * self.alpha * float(np.sum(W * W)) + self._extra(W, b)
        # R = ŝ (P / s - Y): one scaling pass, then ŝ_i off the true class.
        R = P
        self._theta = None
        R *= np.divide(self.sw, s, out=self._u)
        Rf = R.reshape(-1)
        Rf[self._yflat] -= self.sw
        G = np.empty((self.K, self.Dp))
        if self.fit_intercept:
            G[:, : self.D] = self._matmul(R, self.X)
        else:
            self._matmul(R, self.X, out=G)
        G[:, : self.D] += self.alpha * W
        if self.alpha == 0.0 and self.identify:
            G[:, : self.D] += W.sum(axis=0)
        if b is not None:
            G[:, self.D] = R.sum(axis=1) + (b.sum() if self.identify else 0.0)
        return f, G.ravel(), None

    def hessian(self, theta, P=None):
        P, s, _ = self._log_softmax_parts(theta)
        self._theta = None
        P /= s  # (K, n) probabilities
        # H = Σ_i ŝ_i (diag(p_i) - p_i p_iᵀ) ⊗ x̃_i x̃_iᵀ with x̃ = (x, 1): block (k, l) is
        # Σ_i ŝ_i p_ik (δ_kl - p_il) x̃_i x̃_iᵀ (Stuttgart "Introduction to Machine Learning"
        # slide 3:17, the block Hessian of multi-class logistic regression). Assembled as the
        # block diagonal Σ_k X̃ᵀ diag(ŝ p_k) X̃ minus Mᵀ M with M the (n, K·(d+1)) matrix of
        # rows √ŝ_i (p_i ⊗ x̃_i): one symmetric rank-n update on K·(d+1) columns instead of
        # K(K+1)/2 separate weighted Gram products. Mᵀ is built row block by row block from
        # a contiguous copy of Xᵀ, in chunks of samples of at most ~16 MB.
        K, D, Dp = self.K, self.D, self.Dp
        X, sw = self.X, self.sw
        n = X.shape[0]
        KD = K * Dp
        if getattr(self, "_XT", None) is None:
            self._XT = np.ascontiguousarray(X.T)
        H = np.zeros((KD, KD))
        step = max(1, min(n, (1 << 21) // KD))
        Q = P * np.sqrt(sw)  # (K, n): √ŝ_i p_ik
        MT = np.empty((KD, step))
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            m = hi - lo
            for k in range(K):
                np.multiply(self._XT[:, lo:hi], Q[k, lo:hi], out=MT[k * Dp : k * Dp + D, :m])
                if self.fit_intercept:
                    MT[k * Dp + D, :m] = Q[k, lo:hi]
            Mc = MT if m == step else np.ascontiguousarray(MT[:, :m])
            H -= Mc @ Mc.T
        XdT = np.empty_like(self._XT)
        for k in range(K):
            dk = sw * P[k]
            blk = H[k * Dp : (k + 1) * Dp, k * Dp : (k + 1) * Dp]
            np.multiply(self._XT, np.sqrt(dk), out=XdT)
            blk[:D, :D] += XdT @ XdT.T
            if self.fit_intercept:
                c = self._XT @ dk
                blk[:D, D] += c
                blk[D, :D] += c
                blk[D, D] += dk.sum()
        # The penalty α on the weights' diagonal; the identification terms add 1 to every
        # (k, l) pair of one coordinate: Σ_k b_k (with an intercept) and, without a penalty,
        # each feature's Σ_k w_k. Flat indices of those entries, built once per fit.
        if getattr(self, "_penalty_idx", None) is None:
            k = np.arange(K)
            w_rows = (k[:, None] * Dp + np.arange(D)).ravel()  # (K D,) weight coordinates
            self._penalty_idx = w_rows * (KD + 1)
            pairs = []
            if self.alpha == 0.0:
                a = np.arange(D)
                pairs.append(
                    ((k[:, None, None] * Dp + a) * KD + k[None, :, None] * Dp + a).ravel()
                )
            if self.fit_intercept:
                pairs.append(((k[:, None] * Dp + D) * KD + k[None, :] * Dp + D).ravel())
            self._ident_idx = np.concatenate(pairs) if pairs else np.empty(0, dtype=int)
        Hf = H.reshape(-1)
        if self.alpha > 0:
            Hf[self._penalty_idx] += self.alpha
        Hf[self._ident_idx] += 1.0
        return H


def _weighted_sum(sw, v) -> float:
    """``Σ_i ŝ_i v_i``, with ``sw`` the weights or one number for every sample."""
    return float(sw * v.sum()) if np.ndim(sw) == 0 else float(sw @ v)


def _newton(obj, theta, *, tol, max_iter):
    """Damped Newton (IRLS) with Armijo backtracking; stops when ``max |∇F| <= tol``."""
    f, g, P = obj.value_grad(theta)
    n_iter = 0
    converged = False
    while True:
        if not np.isfinite(f):
            raise ValueError(
                "the logistic objective became non-finite; the features are too large in "
                "magnitude (rescale X)."
            )
        if np.max(np.abs(g)) <= tol:
            converged = True
            break
        if n_iter >= max_iter:
            break
        H = obj.hessian(theta, P)
        # The Hessian is positive definite with a penalty (or without one on non-separable
        # data); near separation it becomes numerically singular, and the jitter that the
        # Cholesky helper adds turns the step into a damped one.
        L = cholesky(H, jitter="auto", warn=False, max_tries=12, name="the Hessian")
        step = -cho_solve(L, g)
        slope = float(g @ step)
        if -slope <= 16 * _EPS * max(abs(f), 1.0):
            # The decrease a Newton step can make, -slope / 2 = g^T H^{-1} g / 2, is below
            # the rounding of F itself (from |g| of about sqrt(eps |F| lambda_min(H)) on,
            # far above the gradient's own rounding floor): Armijo's test would compare
            # rounding noise and halve the step to nothing. There the full step is taken
            # when it lowers the gradient, which the stopping test measures and which a
            # Newton step near the minimiser reduces quadratically.
            f_new, g_new, P_new = obj.value_grad(theta + step)
            if not np.max(np.abs(g_new)) < np.max(np.abs(g)):
                break  # neither F nor the gradient can be lowered: the rounding floor
            theta, f, g, P = theta + step, f_new, g_new, P_new
            n_iter += 1
            continue
        t = 1.0
        for _ in range(50):
            f_new = obj.value(theta + t * step)
            if f_new <= f + 1e-4 * t * slope:
                break
            t *= 0.5
        else:
            # No decrease is representable any more: the gradient is at the rounding floor.
            break
        theta = theta + t * step
        f, g, P = obj.value_grad(theta)
        n_iter += 1
    return theta, n_iter, converged


def _lbfgs(obj, theta, *, tol, max_iter):
    """L-BFGS-B through :func:`mathlearn.optim.lbfgs` until ``max |∇F| <= tol``.

    The relative-decrease test is set to a few machine epsilons (SciPy's default, 2.2e-9,
    stops well before a tight gradient tolerance), so the gradient test decides.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = optim.lbfgs(
            lambda t: obj.value_grad(t)[:2],
            theta,
            max_iter=max_iter,
            tol=tol,
            ftol=64 * np.finfo(float).eps,
        )
    if not np.isfinite(res.fun):
        raise ValueError(
            "the logistic objective became non-finite; the features are too large in "
            "magnitude (rescale X)."
        )
    converged = np.max(np.abs(res.jac)) <= tol
    return np.asarray(res.x), int(res.nit), bool(converged)


def _is_separable(X, y_idx, n_classes, fit_intercept) -> bool:
    """Whether some linear scores classify every sample correctly with a margin.

    Feasibility of the linear programme ``(w_{y_i} - w_k)^T x̃_i >= 1`` for all ``i`` and
    ``k != y_i`` (``x̃ = (x, 1)`` with an intercept): then the likelihood increases without
    bound along ``t W`` as ``t → ∞`` and no maximum-likelihood estimate exists.
    """
    n = X.shape[0]
    Xt = np.hstack([X, np.ones((n, 1))]) if fit_intercept else X
    dp = Xt.shape[1]
    if n_classes == 2:
        s = np.where(y_idx == 1, 1.0, -1.0)
        A = -(s[:, None] * Xt)
        b = -np.ones(n)
        nvar = dp
    else:
        rows = []
        for k in range(n_classes):
            mask = y_idx != k
            Xi, yi = Xt[mask], y_idx[mask]
            block = np.zeros((Xi.shape[0], n_classes * dp))
            # -(w_{y_i} - w_k)^T x_i <= -1
            for c in range(n_classes):
                sel = yi == c
                block[sel, c * dp : (c + 1) * dp] = -Xi[sel]
            block[:, k * dp : (k + 1) * dp] = Xi
            rows.append(block)
        A = np.vstack(rows)
        b = -np.ones(A.shape[0])
        nvar = n_classes * dp
    res = linprog(np.zeros(nvar), A_ub=A, b_ub=b, bounds=[(None, None)] * nvar, method="highs")
    return res.status == 0


class LogisticRegression(InformationCriterionMixin, BaseClassifier):
    r"""Logistic regression, binary or multinomial (softmax), with an L2 penalty.

    Parameters
    ----------
    penalty : {"l2"} or None, default="l2"
        ``None`` fits the maximum-likelihood estimate (``C`` is then ignored).
    C : float, default=1.0
        Inverse penalty strength, scikit-learn's: the objective is
        ``C Σ_i s_i ℓ_i + ½‖W‖²``; the notes' ``λ`` in ``-Σ log p + λ‖β‖²`` is ``1/(2C)``.
        ``C = inf`` is the same as ``penalty=None``.
    fit_intercept : bool, default=True
        Add an unpenalised intercept per class.
    solver : {"lbfgs", "newton"}, default="lbfgs"
        ``"lbfgs"`` (the default): L-BFGS-B through :func:`mathlearn.optim.lbfgs`; each
        iteration costs one loss-and-gradient evaluation, ``O(n K d)`` (one pass over
        ``X`` for two classes, two otherwise), so it is the fast choice for large ``n``
        or many classes. ``"newton"``: Newton's method (iteratively reweighted least
        squares) with the full (block) Hessian and a backtracking line search, solved by
        Cholesky; quadratic convergence (5-8 steps to ``tol = 1e-6``), but each step forms
        the Hessian, ``O(n (K d)^2)``, and factors it, ``O((K d)^3)``: for 10 classes the
        Hessian is 100 times the work of a gradient per step, hence L-BFGS as the default.
    tol : float, default=1e-4
        Stop when the largest entry of the gradient of the objective divided by
        ``Σ_i s_i`` is at most ``tol``.
    max_iter : int, default=100
    class_weight : dict, "balanced" or None, default=None
        Multiplies each sample's weight by the weight of its class; ``"balanced"`` uses
        ``S / (K S_k)`` with ``S_k`` the total sample weight of class ``k``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        One row (the log-odds of ``classes_[1]``) for two classes, one per class otherwise.
    intercept_ : ndarray of shape (1,) or (n_classes,)
    n_iter_ : ndarray of shape (1,)
        Iterations of the solver.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when ``X`` has string feature names.

    Notes
    -----
    Model and objective: see the module docstring. Gradient and Hessian (Stuttgart
    "Introduction to Machine Learning" slides 3:17 and 3:19, PRML eq. 4.96-4.97 and 4.110): with
    ``P`` the predicted probabilities and ``Y`` the one-hot targets,

    .. math::

        \nabla_{w_k} = C \sum_i s_i (p_{ik} - y_{ik}) x_i + w_k, \qquad
        \nabla^2_{w_k w_l} = C \sum_i s_i\, p_{ik}(\delta_{kl} - p_{il})\, x_i x_i^\top
        + \delta_{kl} I .

    Separable data (Stuttgart "Introduction to Machine Learning" §3.3; Oxford
    "Advanced Topics in Statistical Machine Learning" §1.2.3): on linearly separable data without a
    penalty the likelihood has no maximiser — it increases without bound along ``t w`` — and the
    Hessian tends to zero. With ``penalty=None`` a linear programme detects separability and a
    ``ConvergenceWarning`` says so; the solver then stops where the gradient falls below
    ``tol`` (large but finite weights, probabilities near 0 and 1).

    Information criteria: ``aic(X, y)`` and ``bic(X, y)`` use the conditional log-likelihood
    ``Σ_i ln p(y_i | x_i)`` and ``M = (K - 1)(d + 1)`` parameters (``d + 1`` for two classes;
    without the ``+ 1`` when ``fit_intercept=False``): the softmax's ``K`` weight vectors are
    determined only up to a common shift. They are defined for the maximum-likelihood fit
    only (``penalty=None`` or ``C=inf``) and raise otherwise: an L2 penalty shrinks the
    weights, so the fit's log-likelihood is not the maximum and ``M`` overstates the
    effective number of parameters; choose ``C`` by cross-validation instead.

    Complexity (``n`` samples, ``d`` features, ``K`` classes): L-BFGS costs ``O(n d)`` per
    loss-and-gradient evaluation for two classes and ``O(n K d)`` for more, times the
    iterations (at most ``max_iter``); its memory beyond ``X`` is three length-``n``
    vectors for two classes, one ``(K, n)`` buffer and four length-``n`` vectors for more,
    and the ``O(K d)`` curvature pairs. Newton adds ``O(n (K d)^2 + (K d)^3)`` time and
    ``O((K d)^2 + n d)`` memory per step (the Hessian and a weighted copy of ``X``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 1, 0, 1])
    >>> clf = LogisticRegression(penalty=None, solver="newton", tol=1e-10).fit(X, y)
    >>> np.round([clf.intercept_[0], clf.coef_[0, 0]], 8)
    array([-1.36227639,  0.90818426])

    See Also
    --------
    mathlearn.linear_model.BayesianLogisticRegression : the Laplace posterior over ``w``.
    """

    _parameter_constraints = {
        "penalty": [StrOptions({"l2"}), None],
        "C": [Interval(Real, 0, np.inf, closed="right")],
        "fit_intercept": ["boolean"],
        "solver": [StrOptions({"lbfgs", "newton"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    # Unscaled iris (check_non_transformer_estimators_n_iter) needs ~110 L-BFGS iterations,
    # more than the default 100 (scikit-learn's own estimator warns there too).
    _common_test_params = {"max_iter": 1000}

    def __init__(
        self,
        penalty: str | None = "l2",
        *,
        C: float = 1.0,
        fit_intercept: bool = True,
        solver: str = "lbfgs",
        tol: float = 1e-4,
        max_iter: int = 100,
        class_weight: dict | str | None = None,
    ):
        self.penalty = penalty
        self.C = C
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.class_weight = class_weight

    def _sample_weights(self, y_idx, sample_weight, X):
        sw = check_sample_weight(sample_weight, X).copy()
        K = len(self.classes_)
        if self.class_weight is not None:
            if self.class_weight == "balanced":
                totals = np.bincount(y_idx, weights=sw, minlength=K)
                cw = np.where(totals > 0, sw.sum() / (K * np.where(totals > 0, totals, 1)), 0)
            else:
                cw = np.ones(K)
                lookup = {
                    c.item() if hasattr(c, "item") else c: i for i, c in enumerate(self.classes_)
                }
                for label, weight in self.class_weight.items():
                    if label not in lookup:
                        raise ValueError(
                            f"class_weight names the label {label!r}, which is not among the "
                            f"classes {list(self.classes_)}."
                        )
                    if not (np.isfinite(weight) and weight >= 0):
                        raise ValueError(
                            f"class_weight[{label!r}] must be a finite non-negative number; "
                            f"got {weight!r}."
                        )
                    cw[lookup[label]] = weight
            sw = sw * cw[y_idx]
        totals = np.bincount(y_idx, weights=sw, minlength=K)
        if np.any(totals <= 0):
            empty = [self.classes_[k] for k in np.flatnonzero(totals <= 0)]
            raise ValueError(
                f"the classes {empty} have zero total sample weight: with an unpenalised "
                "intercept their log-odds would be driven to -inf. Remove them from y or "
                "give them weight."
            )
        return sw

    def _alpha(self, S):
        if self.penalty is None or np.isinf(self.C):
            return 0.0
        return 1.0 / (self.C * S)

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit the penalised maximum-likelihood estimate.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels (numbers or strings).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights ``s_i``; a zero weight removes the sample.

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        # ‖X‖_F² bounds every sum over samples of a product of two features (Cauchy-Schwarz):
        # one pass over X (it is +inf once entries pass ~1e154). einsum, not a BLAS dot: from
        # 10 000 entries OpenBLAS's dot wakes NumPy's thread pool, and on a machine with as
        # many cores as threads that stalls for a scheduler tick or two (4-8 ms) while the
        # pool of SciPy's own OpenBLAS, busy in the previous fit's L-BFGS-B, still spins.
        with np.errstate(over="ignore"):
            norm = math.sqrt(float(np.einsum("ij,ij->", X, X))) if X.size else 0.0
        if not norm <= _MAX_NORM_X:
            raise ValueError(
                f"X has a Frobenius norm of {norm:.3g}; the Hessian's sums of products of "
                f"features overflow float64 beyond about {_MAX_NORM_X:g}. Rescale X (for "
                "example with StandardScaler)."
            )
        y_idx = self._encode_labels(y)
        if sample_weight is None and self.class_weight is None:
            # equal weights: ŝ_i = 1 / n is one number, not an array of them
            sw, S = None, float(X.shape[0])
            sw_hat = 1.0 / S
        else:
            sw = self._sample_weights(y_idx, sample_weight, X)
            S = float(sw.sum())
            sw_hat = sw / S
        alpha = self._alpha(S)
        K = len(self.classes_)
        d = X.shape[1]
        separable = False
        if alpha == 0.0:
            if sw is None:
                separable = _is_separable(X, y_idx, K, self.fit_intercept)
            else:
                keep = sw > 0
                separable = _is_separable(X[keep], y_idx[keep], K, self.fit_intercept)
            if separable:
                warnings.warn(
                    "the training data are linearly separable: without a penalty the "
                    "likelihood has no maximum (it grows without bound as the weights "
                    "scale up), so the weights returned are where the gradient fell below "
                    "tol and are arbitrary in size. Use penalty='l2' with a finite C.",
                    ConvergenceWarning,
                    stacklevel=2,
                )
        del sw  # the objective holds sw_hat
        if K == 2:
            y_pos = y_idx == 1  # 0/1 labels as booleans (an eighth of the memory of floats)
            del y_idx
            obj = _BinaryObjective(X, y_pos, sw_hat, alpha, self.fit_intercept)
        else:
            # L-BFGS needs no identifiability terms: started from zero, its iterates are
            # combinations of gradients, which keep Σ_k b_k = 0 (and Σ_k w_k = 0).
            obj = _MultinomialObjective(
                X, y_idx, sw_hat, alpha, self.fit_intercept, K, identify=self.solver == "newton"
            )
            del y_idx
        theta0 = np.zeros(obj.n_params())
        solve = _newton if self.solver == "newton" else _lbfgs
        theta, n_iter, converged = solve(obj, theta0, tol=self.tol, max_iter=self.max_iter)
        if not converged and not separable:
            warnings.warn(
                f"{self.solver} stopped after {n_iter} iterations with the gradient above "
                f"tol = {self.tol:g} (max_iter reached, or the line search could not make "
                "progress at this tolerance).",
                ConvergenceWarning,
                stacklevel=2,
            )
        if K == 2:
            self.coef_ = theta[:d].reshape(1, d).copy()
            self.intercept_ = np.array([theta[d] if self.fit_intercept else 0.0])
        else:
            T = theta.reshape(K, obj.Dp)
            T = T - T.mean(axis=0)  # the symmetric solution; rounding may have drifted it
            self.coef_ = T[:, :d].copy()
            self.intercept_ = T[:, d].copy() if self.fit_intercept else np.zeros(K)
        self.n_iter_ = np.array([n_iter])
        return self

    def _joint_log_likelihood(self, X):
        Z = X @ self.coef_.T + self.intercept_
        if Z.shape[1] == 1:
            return np.hstack([np.zeros_like(Z), Z])
        return Z

    def _total_log_likelihood(self, X, y=None) -> float:
        check_is_fitted(self)
        if not (self.penalty is None or np.isinf(self.C)):
            raise ValueError(
                "aic / bic are defined for the maximum-likelihood fit only (penalty=None or "
                f"C=inf); this fit has an L2 penalty with C={self.C!r}, whose log-likelihood is "
                "not the maximum. Refit with penalty=None, or choose C by cross-validation."
            )
        idx = _class_indices(self, y)
        logp = self.predict_log_proba(X)
        if logp.shape[0] != idx.shape[0]:
            raise ValueError(f"X has {logp.shape[0]} rows but y has {idx.shape[0]} labels.")
        return float(logp[np.arange(idx.shape[0]), idx].sum())

    def _n_parameters(self) -> int:
        K = len(self.classes_)
        return (K - 1) * (self.coef_.shape[1] + int(self.fit_intercept))

    def decision_function(self, X):
        """Linear scores: ``x^T w + b`` (shape (n,)) for two classes, else ``X W^T + b``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        Z = self._validate_X_predict(X) @ self.coef_.T + self.intercept_
        return Z[:, 0] if Z.shape[1] == 1 else Z
