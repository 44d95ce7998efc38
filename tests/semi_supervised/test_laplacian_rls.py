"""LapRLS: reduces to KRR (the notes' check), optimality of its objective, semi-supervised gain."""

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.neighbors import kneighbors_graph

from mathlearn.kernel_ridge import KernelRidge
from mathlearn.kernels import RBF
from mathlearn.semi_supervised import LaplacianRLS

EPS = np.finfo(float).eps


def _data(n=30, u=20, seed=0):
    rng = np.random.default_rng(seed)
    X, Xu = rng.normal(size=(n, 2)), rng.normal(size=(u, 2))
    return X, np.sin(X[:, 0]) + 0.1 * rng.normal(size=n), Xu, rng.normal(size=(10, 2))


def _bound(A, *scales):
    """Backward-stable LU / Cholesky solves agree to ``c N kappa(A) eps`` relative."""
    return 10 * A.shape[0] * np.linalg.cond(A) * EPS * np.prod(scales)


@pytest.mark.parametrize("with_unlabeled", [False, True])
def test_reduces_to_kernel_ridge_when_eta_is_zero(with_unlabeled):
    """Notes' check: u = 0, eta = 0 gives (K + lambda I)^{-1} y; with u > 0 and eta = 0 the
    unlabelled weights solve lambda alpha_u = 0, so the function is still KRR's."""
    X, y, Xu, Xt = _data()
    lap = LaplacianRLS(alpha=0.3, intrinsic_alpha=0.0, gamma=0.5)
    lap.fit(X, y, X_unlabeled=Xu if with_unlabeled else None)
    krr = KernelRidge(alpha=0.3, kernel="rbf", gamma=0.5).fit(X, y)
    K = krr.kernel_(X)
    A = K + 0.3 * np.eye(len(X))
    Ks = krr.kernel_(Xt, X)
    scale = np.linalg.norm(Ks, 2) * np.linalg.norm(krr.dual_coef_)
    assert np.linalg.norm(lap.predict(Xt) - krr.predict(Xt)) <= _bound(A, scale)
    if with_unlabeled:
        assert np.max(np.abs(lap.dual_coef_[len(X) :])) <= _bound(A, np.linalg.norm(y))


def test_solution_is_stationary_for_the_notes_objective():
    """Gradient in alpha of ||y - J K a||^2 + lambda a^T K a + eta a^T K L K a, with the
    k-NN graph built by scikit-learn ("or"-symmetrised), vanishes at the fitted weights."""
    X, y, Xu, _ = _data()
    lam, eta, k = 0.2, 0.5, 5
    lap = LaplacianRLS(alpha=lam, intrinsic_alpha=eta, gamma=0.5, n_neighbors=k)
    lap.fit(X, y, X_unlabeled=Xu)
    Z = np.vstack([X, Xu])
    W = kneighbors_graph(Z, k, mode="connectivity").toarray()
    W = np.maximum(W, W.T)
    L = np.diag(W.sum(axis=1)) - W
    K = RBF(1.0)(Z)
    n, N = len(X), len(Z)
    J = np.eye(n, N)
    a = lap.dual_coef_
    grad = -2 * K @ J.T @ (y - J @ K @ a) + 2 * lam * K @ a + 2 * eta * K @ L @ K @ a
    A = J.T @ J @ K + lam * np.eye(N) + eta * L @ K
    scale = 2 * np.linalg.norm(K, 2) * np.linalg.norm(A, 2) * np.linalg.norm(a)
    assert np.linalg.norm(grad) <= _bound(A, scale)
    # The symmetric-normalised Laplacian: the same check with I - D^{-1/2} W D^{-1/2}.
    sym = LaplacianRLS(alpha=lam, intrinsic_alpha=eta, gamma=0.5, n_neighbors=k,
                       laplacian="symmetric").fit(X, y, X_unlabeled=Xu)  # fmt: skip
    s = 1 / np.sqrt(W.sum(axis=1))
    Ls = np.eye(N) - s[:, None] * W * s[None, :]
    a = sym.dual_coef_
    grad = -2 * K @ J.T @ (y - J @ K @ a) + 2 * lam * K @ a + 2 * eta * K @ Ls @ K @ a
    A = J.T @ J @ K + lam * np.eye(N) + eta * Ls @ K
    assert np.linalg.norm(grad) <= _bound(A, 2 * np.linalg.norm(K, 2) * np.linalg.norm(A, 2)
                                          * np.linalg.norm(a))  # fmt: skip


def test_unlabelled_points_carry_labels_along_the_moons():
    """Two moons, two labels per moon: the graph term spreads each label along its moon
    (every unlabelled point classified by the sign), where KRR alone cannot."""
    X, c = make_moons(200, noise=0.05, random_state=0)
    y = 2.0 * c - 1
    lab = np.r_[np.flatnonzero(c == 0)[:2], np.flatnonzero(c == 1)[:2]]
    unl = np.setdiff1d(np.arange(200), lab)
    lap = LaplacianRLS(alpha=1e-3, intrinsic_alpha=1.0, gamma=2.0, n_neighbors=8)
    lap.fit(X[lab], y[lab], X_unlabeled=X[unl])
    assert np.all(np.sign(lap.predict(X[unl])) == y[unl])
    krr = KernelRidge(alpha=1e-3, kernel="rbf", gamma=2.0).fit(X[lab], y[lab])
    assert np.mean(np.sign(krr.predict(X[unl])) == y[unl]) < 0.9


def test_multi_output_and_rbf_graph():
    X, y, Xu, Xt = _data()
    Y = np.column_stack([y, -2 * y])
    m = LaplacianRLS(graph="rbf", graph_gamma=0.5).fit(X, Y, X_unlabeled=Xu)
    one = LaplacianRLS(graph="rbf", graph_gamma=0.5).fit(X, y, X_unlabeled=Xu)
    assert m.predict(Xt).shape == (10, 2)
    np.testing.assert_allclose(m.predict(Xt)[:, 1], -2 * one.predict(Xt), rtol=1e-10, atol=1e-12)


def test_bad_inputs():
    X, y, Xu, _ = _data()
    bad = Xu.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        LaplacianRLS().fit(X, y, X_unlabeled=bad)
    with pytest.raises(ValueError, match="X_unlabeled has 1 features"):
        LaplacianRLS().fit(X, y, X_unlabeled=Xu[:, :1])
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        LaplacianRLS().fit(X, y[:-1])
    with pytest.raises(ValueError, match="overflow"):
        LaplacianRLS(kernel="linear").fit(X * 1e200, y)
