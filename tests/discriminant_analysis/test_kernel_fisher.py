"""Kernel Fisher discriminant: closed forms, the generalised eigenproblem, linear-kernel LDA."""

import numpy as np
import pytest
import scipy.linalg as sla

from mathlearn.discriminant_analysis import FisherLDA, KernelFisherDiscriminant
from mathlearn.kernels import RBF

EPS = np.finfo(float).eps


def _blobs(sizes=(30, 25), d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(n, d)) + 1.5 * c for c, n in enumerate(sizes)])
    return X, np.repeat(np.arange(len(sizes)), sizes)


def _scatter(K, y, reg):
    C = y.max() + 1
    m = K.mean(axis=1)
    M = np.zeros_like(K)
    Nw = np.zeros_like(K)
    for c in range(C):
        Kc = K[:, y == c]
        mc = Kc.mean(axis=1)
        M += Kc.shape[1] * np.outer(mc - m, mc - m)
        H = np.eye(Kc.shape[1]) - 1.0 / Kc.shape[1]
        Nw += Kc @ H @ Kc.T
    return M, Nw + reg * np.trace(Nw) / len(K) * np.eye(len(K))


def _sin_angle(u, v):
    u, v = u / np.linalg.norm(u), v / np.linalg.norm(v)
    return np.linalg.norm(u - (u @ v) * v)


def test_two_classes_is_the_closed_form_direction():
    """a ∝ (N_w + mu I)^{-1} (m_1 - m_0), Mika et al.'s two-class solution."""
    X, y = _blobs()
    kfd = KernelFisherDiscriminant(kernel=RBF(1.5), reg=1e-2).fit(X, y)
    K = RBF(1.5)(X)
    _, Nw = _scatter(K, y, 1e-2)
    a = np.linalg.solve(Nw, K[:, y == 1].mean(axis=1) - K[:, y == 0].mean(axis=1))
    assert _sin_angle(kfd.dual_coef_[:, 0], a) <= 10 * len(X) * np.linalg.cond(Nw) * EPS


def test_multiclass_solves_the_generalised_eigenproblem():
    X, y = _blobs((20, 15, 25, 18), d=4, seed=1)
    kfd = KernelFisherDiscriminant(kernel="rbf", gamma=0.2, reg=1e-2).fit(X, y)
    assert kfd.n_components_ == 3
    M, Nw = _scatter(kfd.kernel_(X), y, 1e-2)
    w = sla.eigh(M, Nw, eigvals_only=True)[::-1][:3]  # an independent LAPACK solver
    kappa = np.linalg.cond(Nw)
    np.testing.assert_allclose(kfd.eigenvalues_, w, rtol=10 * len(X) * kappa * EPS)
    A = kfd.dual_coef_
    np.testing.assert_allclose(A.T @ Nw @ A, np.eye(3), rtol=0, atol=10 * len(X) * kappa * EPS)
    resid = M @ A - Nw @ A * kfd.eigenvalues_
    assert np.linalg.norm(resid) <= 10 * len(X) * kappa * EPS * np.linalg.norm(M) * np.linalg.norm(
        A
    )
    assert KernelFisherDiscriminant(1, kernel="rbf", gamma=0.2).fit(X, y).transform(X).shape == (
        78,
        1,
    )


def test_linear_kernel_gives_fisher_lda_direction():
    """With k(x, y) = x^T y, w = X^T a is Fisher's S_w^{-1}(mu_1 - mu_0) up to scale: the
    push-through identity makes the regulariser enter as (X^T X S_w + mu I)^{-1}, whose
    effect on the direction is O(mu / lambda_min(X^T X S_w)) with mu ~ reg tr(N_w) / N."""
    X, y = _blobs()
    kfd = KernelFisherDiscriminant(kernel="linear", reg=1e-10).fit(X, y)
    w = X.T @ kfd.dual_coef_[:, 0]
    Sw = sum((X[y == c] - X[y == c].mean(0)).T @ (X[y == c] - X[y == c].mean(0)) for c in (0, 1))
    v = np.linalg.solve(Sw, X[y == 1].mean(0) - X[y == 0].mean(0))
    G = X.T @ X @ Sw
    bound = 1e-10 * np.trace(X @ Sw @ X.T) / len(X) / np.linalg.eigvals(G).real.min()
    bound += 10 * len(X) * np.linalg.cond(G) * EPS
    assert _sin_angle(w, v) <= bound


def test_separates_what_a_linear_discriminant_cannot():
    t = np.linspace(0, 2 * np.pi, 40, endpoint=False)
    ring = np.c_[np.cos(t), np.sin(t)]
    rng = np.random.default_rng(2)
    X = np.vstack([ring, 3 * ring]) + 0.1 * rng.normal(size=(80, 2))
    y = np.repeat([0, 1], 40)
    assert KernelFisherDiscriminant(kernel="rbf", gamma=0.5).fit(X, y).score(X, y) == 1.0
    assert FisherLDA().fit(X, y).score(X, y) < 0.7


def test_bad_inputs():
    X, y = _blobs()
    with pytest.raises(ValueError, match="at least 2 classes"):
        KernelFisherDiscriminant().fit(X, np.zeros(len(X)))
    with pytest.raises(ValueError, match="n_classes - 1 = 1"):
        KernelFisherDiscriminant(n_components=2).fit(X, y)
    Xb = X.copy()
    Xb[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KernelFisherDiscriminant().fit(Xb, y)
    with pytest.raises(ValueError, match="overflow"):
        KernelFisherDiscriminant(kernel="linear").fit(X * 1e200, y)
