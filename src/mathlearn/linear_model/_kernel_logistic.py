r"""Kernel logistic regression: penalised logistic regression in the RKHS of a kernel.

The objective is :class:`LogisticRegression`'s with ``w`` replaced by a function ``f`` of the
reproducing kernel Hilbert space ``H`` of a kernel ``k``:

.. math::

    \min_{f \in H,\, b}\; C \sum_i s_i\, \ell(y_i, f(x_i) + b) + \tfrac12 \|f\|_H^2 .

By the representer theorem ``f = Σ_j a_j k(x_j, ·)`` and ``‖f‖²_H = aᵀ K a``, so the
problem is finite: ``C Σ_i s_i ℓ_i(K a + b) + ½ aᵀ K a`` over the dual coefficients ``a``.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from scipy.linalg import eigh
from scipy.special import expit

from ..base import BaseClassifier, _fit_context, check_is_fitted
from ..exceptions import ConvergenceWarning
from ..kernels import KERNEL_NAMES, Kernel
from ..kernels._get_kernel import build_kernel
from ..utils._param_validation import Interval, StrOptions
from ..utils.linalg import cho_solve, cholesky
from ..utils.validation import all_finite, check_sample_weight, check_symmetric_psd, validate_data
from ._logistic import _BinaryObjective, _lbfgs, _MultinomialObjective, _newton

__all__ = ["KernelLogisticRegression"]


def _binary_value(eta, y, sw):
    return float(sw @ (np.logaddexp(0.0, eta) - y * eta))


def _newton_w_half(K, y, sw, alpha, fit_intercept, *, tol, max_iter):
    r"""Newton's method on the latent values in the ``W^{1/2}`` form.

    Minimises ``Ψ(α, b) = Σ ŝ_i ℓ(y_i, η_i) + ½ αᵀ K̃ α`` with ``f = K̃ α``,
    ``η = f + b`` and ``K̃ = K / alpha``. Each step is the weighted kernel ridge regression
    on the working response ``z = η - W^{-1} g`` (``g = ŝ (p - y)``, ``W = diag(ŝ p (1 -
    p))``): ``α⁺ = (K̃ + W^{-1})^{-1} (z - b⁺ 1)`` with the generalised-least-squares
    intercept ``b⁺ = 1ᵀ M z / 1ᵀ M 1``, ``M = (K̃ + W^{-1})^{-1}``. ``W^{-1}`` is never
    formed: ``M W^{-1} v = (I + W K̃)^{-1} v = v - W^{1/2} B^{-1} W^{1/2} K̃ v`` with
    ``B = I + W^{1/2} K̃ W^{1/2}`` (eigenvalues >= 1, a well-conditioned Cholesky).
    """
    n = K.shape[0]
    Kt = K / alpha
    a = np.zeros(n)
    b = 0.0
    f = np.zeros(n)
    n_iter = 0
    converged = False
    unresolved = None  # the point before a full step taken below F's rounding
    while True:
        eta = f + b
        p = expit(eta)
        g = sw * (p - y)
        r = g + a
        grad_norm = float(np.sqrt(max(r @ (K @ r), 0.0)))
        grad_b = float(g.sum()) if fit_intercept else 0.0
        if unresolved is not None:
            if not max(grad_norm, abs(grad_b)) < unresolved[3]:
                a, f, b = unresolved[:3]  # the step did not lower the gradient either
                break
            unresolved = None
        if grad_norm <= tol and abs(grad_b) <= tol:
            converged = True
            break
        if n_iter >= max_iter:
            break
        w = sw * p * (1.0 - p)
        sq = np.sqrt(w)
        B = Kt * sq[:, None]
        B *= sq[None, :]
        B.flat[:: n + 1] += 1.0
        L = cholesky(B, jitter="auto", warn=False, name="I + W^1/2 K W^1/2")

        def solve(v, sq=sq, L=L):
            return v - sq * cho_solve(L, sq * (Kt @ v))

        Mz = solve(w * eta - g)
        if fit_intercept:
            M1 = solve(w)
            den = float(M1.sum())
            b_new = float(Mz.sum()) / den if den > 0 else b
            a_new = Mz - b_new * M1
        else:
            b_new = 0.0
            a_new = Mz
        da, db = a_new - a, b_new - b
        df = Kt @ da
        psi = _binary_value(eta, y, sw) + 0.5 * float(a @ f)
        slope = float(g @ (df + db) + a @ df)
        if -slope <= 16 * np.finfo(float).eps * max(abs(psi), 1.0):
            # The decrease a Newton step can make is below the rounding of Ψ: Armijo's
            # test would compare rounding noise (as in ``_logistic._newton``). The full
            # step is taken, and kept if it lowers the gradient at the next iteration.
            unresolved = (a, f, b, max(grad_norm, abs(grad_b)))
            a, f, b = a + da, f + df, b + db
            n_iter += 1
            continue
        t = 1.0
        for _ in range(50):
            a_t, f_t = a + t * da, f + t * df
            psi_t = _binary_value(f_t + b + t * db, y, sw) + 0.5 * float(a_t @ f_t)
            if psi_t <= psi + 1e-4 * t * min(slope, 0.0):
                break
            t *= 0.5
        else:
            break
        a, f, b = a + t * da, f + t * df, b + t * db
        n_iter += 1
    return a, b, n_iter, converged


def _kernel_features(K):
    """``Φ = V Λ^{1/2}`` from ``K = V Λ Vᵀ`` (eigenvalues above rounding), so ``Φ Φᵀ = K``."""
    lam, V = eigh(K)
    keep = lam > K.shape[0] * np.finfo(float).eps * max(float(lam[-1]), 0.0)
    if not np.any(keep):
        raise ValueError("the kernel matrix is zero: every function has zero RKHS norm.")
    if lam[0] < -1e3 * K.shape[0] * np.finfo(float).eps * max(float(lam[-1]), 1e-300):
        raise ValueError(
            f"the kernel matrix is not positive semi-definite (smallest eigenvalue "
            f"{lam[0]:.3g}); kernel logistic regression needs a positive definite kernel."
        )
    V, root = V[:, keep], np.sqrt(lam[keep])
    return V * root, V / root


class KernelLogisticRegression(BaseClassifier):
    r"""Kernel logistic regression: L2-penalised logistic regression in a kernel's RKHS.

    Parameters
    ----------
    C : float, default=1.0
        Inverse penalty strength, as in :class:`LogisticRegression`: the objective is
        ``C Σ_i s_i ℓ_i + ½ ‖f‖²_H`` (the notes' ``2λ`` is ``1 / C``).
    kernel : str or Kernel, default="rbf"
        A name of :data:`mathlearn.kernels.KERNEL_NAMES`, a kernel object of
        :mod:`mathlearn.kernels` (copied, never mutated), or ``"precomputed"``: ``X`` is
        then the Gram matrix ``K`` of shape (n_samples, n_samples) in ``fit`` (checked to be
        symmetric positive semi-definite) and the cross-kernel ``k(x_query, x_train)`` of
        shape (n_queries, n_samples) in ``predict`` and friends.
    gamma : float or None, default=None
        ``"rbf"``: ``k = exp(-gamma ||x - y||^2)``; ``"poly"``/``"sigmoid"``: the scale of
        ``xᵀy``. ``None``: ``1 / n_features`` (scikit-learn's rule).
    degree : float, default=3
        Degree of the ``"poly"`` kernel.
    coef0 : float, default=1
        Offset of the ``"poly"`` and ``"sigmoid"`` kernels.
    kernel_params : dict or None, default=None
        Further hyperparameters of the kernel.
    fit_intercept : bool, default=True
        Add an unpenalised intercept ``b`` (one per class for more than two classes).
    solver : {"newton", "lbfgs"}, default="newton"
        ``"newton"``: Newton's method, quadratic convergence. Two classes: the kernelised
        Newton (IRLS) iteration on the latent values in the ``W^{1/2}`` form, ``O(N^3)`` per
        step. More classes: Newton with the full block Hessian of the multinomial objective
        in the coordinates ``u`` below (the multinomial block Hessian of
        :class:`LogisticRegression` on the features ``V Λ^{1/2}``), ``O(N (K r)^2 + (K r)^3)``
        per step with ``r <= N`` the numerical rank of ``K``.
        ``"lbfgs"``: L-BFGS on the dual coefficients in the coordinates ``a = V Λ^{-1/2} u``
        of the eigendecomposition ``K = V Λ Vᵀ``, where the penalty is ``½‖u‖²`` (the
        problem becomes linear logistic regression on the features ``V Λ^{1/2}``).
    tol : float, default=1e-6
        Stop when the RKHS norm of the gradient of the objective divided by ``Σ_i s_i`` (the
        Euclidean norm of the gradient in feature space) is at most ``tol`` (binary Newton),
        or its largest coordinate in the coordinates ``u`` (L-BFGS, multinomial Newton).
    max_iter : int, default=100
        Newton steps or L-BFGS iterations.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    dual_coef_ : ndarray of shape (n_samples,) or (n_classes, n_samples)
        Representer weights ``a``: ``f(x) = Σ_j a_j k(x_j, x)`` (one row per class for more
        than two classes).
    intercept_ : ndarray of shape (1,) or (n_classes,)
    X_fit_ : ndarray of shape (n_samples, n_features)
        Training inputs (the Gram matrix with ``kernel="precomputed"``).
    kernel_ : Kernel or None
        The kernel used (``None`` with ``kernel="precomputed"``).
    n_iter_ : int
        Newton steps or L-BFGS iterations.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when ``X`` has string feature names.

    See Also
    --------
    LogisticRegression : The same objective with the linear kernel and explicit weights.
    mathlearn.gaussian_process.GaussianProcessClassifier : The Bayesian view: the mode of
        the Laplace approximation with prior covariance ``C K`` is this estimator's ``f``.

    Notes
    -----
    Newton on ``β`` with the Woodbury identities gives an iteration on the latent values at
    the training points (Stuttgart "Introduction to Machine Learning", §5 Kernelization,
    slide 5:8 and exercise 7.3):

    .. math::

        f_X \leftarrow K (K + 2\lambda W^{-1})^{-1} [f_X - W^{-1}(p_X - y)], \qquad
        f_Z = \kappa^\top (K + 2\lambda W^{-1})^{-1} [f_X - W^{-1}(p_X - y)],

    with ``W = diag(p(1 - p))`` and ``κ_{ij} = k(x_i, z_j)``. ``W^{-1}`` is unbounded when a
    probability saturates, so the iteration is written with ``W^{1/2}`` (GPML Algorithm
    3.1): ``(K + 2λ W^{-1})^{-1} = W^{1/2} (W^{1/2} K W^{1/2} + 2λ I)^{-1} W^{1/2}``. The
    unpenalised intercept is the generalised-least-squares mean of the working response at
    each step. At the optimum ``a = C s ⊙ (y - p)`` (the representer theorem for this loss),
    and the mode equals the Laplace mode of a Gaussian process classifier with prior
    covariance ``C K`` (PRML §6.4.5-6.4.6). With the linear kernel ``f(x) = xᵀ w`` with ``w =
    Xᵀ a``: the estimator equals :class:`LogisticRegression` with the same ``C``.

    More than two classes: the softmax loss of :class:`LogisticRegression` with one function
    ``f_k = Σ_j a_kj k(x_j, ·)`` per class and the penalty ``½ Σ_k ‖f_k‖²_H``. In the
    coordinates ``u_k = Λ^{1/2} Vᵀ a_k`` of ``K = V Λ Vᵀ`` the latent values are ``Φ u_k``
    with ``Φ = V Λ^{1/2}`` and the penalty is ``½ Σ_k ‖u_k‖²``: Newton's method then uses the
    multinomial block Hessian ``Σ_i s_i (diag(p_i) - p_i p_iᵀ) ⊗ φ_i φ_iᵀ + I/C`` (Stuttgart
    slide 3:17 with the features ``φ_i``), the same Hessian as the ``W^{1/2}`` form in latent
    space (GPML Algorithm 3.3) written in the basis of ``K``'s range.

    Sample weights ``s_i`` multiply the loss terms. Cost: ``O(N^2 D)`` for the Gram matrix
    and ``O(N^3)`` per Newton step (once for the eigendecomposition with L-BFGS).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linear_model import KernelLogisticRegression
    >>> X = np.array([[-2.0], [-1.0], [1.0], [2.0]]); y = np.array([0, 1, 1, 0])
    >>> clf = KernelLogisticRegression(C=10.0, kernel="rbf", gamma=1.0).fit(X, y)
    >>> clf.predict(np.array([[-3.0], [0.0], [3.0]])).tolist()
    [0, 1, 0]
    >>> clf.predict_proba(X)[:, 1].round(3)
    array([0.208, 0.792, 0.792, 0.208])
    """

    _parameter_constraints: ClassVar[dict] = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "kernel": [StrOptions(set(KERNEL_NAMES) | {"precomputed"}), Kernel],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "degree": [Interval(Real, 0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "kernel_params": [dict, None],
        "fit_intercept": ["boolean"],
        "solver": [StrOptions({"newton", "lbfgs"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
    }

    _common_test_params: ClassVar[dict] = {"max_iter": 1000}

    def __init__(
        self,
        C: float = 1.0,
        *,
        kernel: str | Kernel = "rbf",
        gamma: float | None = None,
        degree: float = 3,
        coef0: float = 1,
        kernel_params: dict | None = None,
        fit_intercept: bool = True,
        solver: str = "newton",
        tol: float = 1e-6,
        max_iter: int = 100,
    ):
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = isinstance(self.kernel, str) and self.kernel == "precomputed"
        return tags

    def _gram(self, X, Y=None):
        if self.kernel_ is None:  # precomputed: X is already k(X, X_fit_)
            return X
        with np.errstate(over="ignore", invalid="ignore"):
            K = self.kernel_(X, Y)
        if not all_finite(K):
            raise ValueError("the kernel matrix is not finite (overflow): rescale X.")
        return K

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit the penalised maximum-likelihood function.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels (numbers or strings).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights ``s_i``; a zero weight removes the sample.

        Returns
        -------
        self : KernelLogisticRegression

        Raises
        ------
        ValueError
            NaN/inf in ``X``, one class, classes with zero total weight, a kernel matrix that
            overflows or is not positive semi-definite.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        y_idx = self._encode_labels(y)
        sw = check_sample_weight(sample_weight, X)
        n_classes = len(self.classes_)
        totals = np.bincount(y_idx, weights=sw, minlength=n_classes)
        if np.any(totals <= 0):
            empty = [self.classes_[k] for k in np.flatnonzero(totals <= 0)]
            raise ValueError(f"the classes {empty} have zero total sample weight.")
        self.kernel_ = build_kernel(
            self.kernel, self.gamma, self.degree, self.coef0, self.kernel_params, X.shape[1]
        )
        if self.kernel_ is None:
            K = check_symmetric_psd(X, "the precomputed kernel matrix", strict=False)
        else:
            K = self._gram(X)
        S = float(sw.sum())
        sw_hat = sw / S
        alpha = 1.0 / (self.C * S)
        if n_classes == 2 and self.solver == "newton":
            a, b, n_iter, converged = _newton_w_half(
                K,
                (y_idx == 1).astype(float),
                sw_hat,
                alpha,
                self.fit_intercept,
                tol=self.tol,
                max_iter=self.max_iter,
            )
            self.dual_coef_ = a / alpha
            self.intercept_ = np.array([b])
        else:
            Phi, back = _kernel_features(K)
            if n_classes == 2:
                obj = _BinaryObjective(
                    Phi, (y_idx == 1).astype(float), sw_hat, alpha, self.fit_intercept
                )
            else:
                obj = _MultinomialObjective(
                    Phi, y_idx, sw_hat, alpha, self.fit_intercept, n_classes, identify=False
                )
            if self.solver == "newton":
                # Multinomial Newton with the block Hessian (identification term ½(Σ b_k)²
                # for the intercepts; the RKHS penalty fixes Σ_k u_k = 0).
                obj = _MultinomialObjective(
                    Phi, y_idx, sw_hat, alpha, self.fit_intercept, n_classes, identify=True
                )
                solve = _newton
            else:
                solve = _lbfgs
            theta, n_iter, converged = solve(
                obj, np.zeros(obj.n_params()), tol=self.tol, max_iter=self.max_iter
            )
            r = Phi.shape[1]
            if n_classes == 2:
                self.dual_coef_ = back @ theta[:r]
                self.intercept_ = np.array([theta[r] if self.fit_intercept else 0.0])
            else:
                T = theta.reshape(n_classes, obj.Dp)
                T = T - T.mean(axis=0)
                self.dual_coef_ = T[:, :r] @ back.T
                self.intercept_ = T[:, r].copy() if self.fit_intercept else np.zeros(n_classes)
        if not converged:
            warnings.warn(
                f"kernel logistic regression stopped after {n_iter} iterations with the "
                f"gradient above tol = {self.tol:g}; increase max_iter or tol.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.n_iter_ = int(n_iter)
        self.X_fit_ = X.copy()
        return self

    def _latent(self, X):
        return self._gram(X, self.X_fit_) @ np.atleast_2d(self.dual_coef_).T + self.intercept_

    def _joint_log_likelihood(self, X):
        Z = self._latent(X)
        if Z.shape[1] == 1:
            return np.hstack([np.zeros_like(Z), Z])
        return Z

    def decision_function(self, X):
        """Latent scores: ``f(x) + b`` (shape (n,)) for two classes, else one per class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self)
        Z = self._latent(self._validate_X_predict(X))
        return Z[:, 0] if Z.shape[1] == 1 else Z
