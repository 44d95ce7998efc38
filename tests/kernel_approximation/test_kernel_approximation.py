"""Nyström and random Fourier features: exact reproduction, the peer, derived error bounds."""

import numpy as np
import pytest
from sklearn.kernel_approximation import Nystroem as SkNystroem

from mathlearn.kernel_approximation import Nystroem, RandomFourierFeatures
from mathlearn.kernels import RBF, Matern

EPS = np.finfo(float).eps


def _data(n=60, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def _gram_bound(K):
    """Rounding of ``K U Lambda^{-1} U^T K`` through a backward-stable eigensolver:
    ``||Phi Phi^T - K|| <~ c n eps kappa(K) ||K||`` (the inverse square root amplifies the
    eigensolver's ``eps ||K||`` backward error by at most ``kappa``)."""
    w = np.linalg.eigvalsh(K)
    return 10 * K.shape[0] * EPS * (w[-1] / w[0]) * w[-1]


def test_all_points_as_landmarks_reproduce_the_gram_matrix():
    X = _data()
    for kernel, params in [("rbf", dict(gamma=0.5)), (Matern(1.0, nu=1.5), {})]:
        ny = Nystroem(kernel, n_components=len(X), random_state=0, **params).fit(X)
        Phi = ny.transform(X)
        K = ny.kernel_(X)
        assert ny.rank_ == len(X)
        assert np.linalg.norm(Phi @ Phi.T - K, 2) <= _gram_bound(K)


def test_subset_of_landmarks_is_kxz_kzz_inverse_kzx():
    X, Xt = _data(), _data(20, seed=1)
    ny = Nystroem("rbf", gamma=0.3, n_components=15, random_state=2).fit(X)
    Z = X[ny.component_indices_]
    np.testing.assert_array_equal(ny.components_, Z)
    kernel = RBF(np.sqrt(0.5 / 0.3))
    Kzz, Ktz = kernel(Z), kernel(Xt, Z)
    direct = Ktz @ np.linalg.solve(Kzz, Ktz.T)
    Phi = ny.transform(Xt)
    bound = _gram_bound(Kzz) * np.linalg.norm(Ktz, 2) ** 2 / np.linalg.eigvalsh(Kzz)[0]
    assert np.linalg.norm(Phi @ Phi.T - direct, 2) <= bound


def test_transform_in_blocks_equals_one_kernel_matrix():
    # transform evaluates k(X, Z) a block of rows at a time. A row of the features depends
    # on its own row of X only, but a few rows and a block may take different evaluation
    # routes of the kernel (direct differences or the expanded form) and of the product, so
    # they agree to rounding: each entry sum_j K_ij N_jl, with K_ij = exp(-gamma d^2)
    # accurate to about (gamma d^2 + 2) * 4 eps relative (d^2 <= 60 here, so under 110 eps)
    # and a 50-term sum (50 eps), is off by at most ~200 eps (|K| |N|)_il.
    from mathlearn.kernel_approximation import _nystroem

    X = _data(3000, 4, seed=5)
    ny = Nystroem("rbf", gamma=0.4, n_components=50, random_state=1).fit(X[:500])
    step = _nystroem._BLOCK // 50
    assert step < len(X) - 1  # several blocks, the last one partial
    blocked = ny.transform(X)
    rows = np.r_[0, step - 1, step, len(X) - 1]
    assert (((X[rows, None, :] - ny.components_[None]) ** 2).sum(-1)).max() <= 60
    K = ny.kernel_(X[rows], ny.components_)
    one = K @ ny.normalization_
    bound = 200 * EPS * (np.abs(K) @ np.abs(ny.normalization_))
    assert np.all(np.abs(blocked[rows] - one) <= bound)


def test_same_gram_as_sklearn_nystroem_on_the_same_landmarks():
    """Fitting both on the landmarks alone (all of them landmarks) fixes the same ``Z``; the
    features may differ by a rotation, so compare ``Phi Phi^T`` on other points."""
    Z, X = _data(25, seed=3), _data(40, seed=4)
    ours = Nystroem("rbf", gamma=0.4, n_components=25, random_state=0).fit(Z)
    peer = SkNystroem(kernel="rbf", gamma=0.4, n_components=25, random_state=0).fit(Z)
    P, Q = ours.transform(X), peer.transform(X)
    Kzz = ours.kernel_(Z)
    bound = (
        _gram_bound(Kzz) * np.linalg.norm(ours.kernel_(X, Z), 2) ** 2 / np.linalg.eigvalsh(Kzz)[0]
    )
    assert np.linalg.norm(P @ P.T - Q @ Q.T, 2) <= bound


def test_coinciding_landmarks_use_the_pseudo_inverse():
    X = _data(10)
    X = np.vstack([X, X[:4]])  # repeated rows: K_zz is singular
    ny = Nystroem("rbf", gamma=0.5, n_components=len(X), random_state=0).fit(X)
    assert ny.rank_ == 10
    Phi = ny.transform(X)
    assert np.all(np.isfinite(Phi))
    K = ny.kernel_(X)
    K_pinv = K @ np.linalg.pinv(K, rcond=1e-10, hermitian=True) @ K
    np.testing.assert_allclose(Phi @ Phi.T, K_pinv, rtol=0, atol=1e-8)
    np.testing.assert_allclose(Phi @ Phi.T, K, rtol=0, atol=1e-8)


def test_nystroem_bad_inputs():
    X = _data(10)
    with pytest.raises(ValueError, match="n_components must be <= n_samples"):
        Nystroem(n_components=11).fit(X)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Nystroem(n_components=5).fit(Xn)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        Nystroem("sigmoid", gamma=1.0, coef0=-1.0, n_components=10).fit(X)
    ny = Nystroem(n_components=5, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        ny.transform(X[:, :2])
    kernel = RBF(1.0)
    Nystroem(kernel, n_components=5, kernel_params={"length_scale": 3.0}).fit(X)
    assert kernel.length_scale == 1.0


def _pairs(K):
    return K[np.triu_indices(K.shape[0], 1)]


def test_random_features_gram_error_obeys_hoeffding_and_the_exact_variance():
    """Entry (i, j) of ``Phi Phi^T`` is a mean of m independent ``cos(w^T (x_i - x_j))`` in
    [-1, 1] with mean ``k_ij`` and variance ``v_ij = ((1 + k_ij^4) / 2 - k_ij^2) / m``.

    * Hoeffding and a union bound over the P pairs: ``max |error| <= sqrt(2 log(2 P / d) / m)``
      with probability ``1 - d``, ``d = 1e-6``: the O(1 / sqrt(m)) rate.
    * The mean squared error over pairs has expectation ``mean(v)``; for large m,
      ``m * MSE`` is a mean of squares of a Gaussian vector with covariance
      ``C_pq = (k(d_p - d_q) + k(d_p + d_q)) / 2 - k_p k_q``, whose standard deviation is
      ``sqrt(2 mean(C^2))``: it must lie within 6 of them of ``m mean(v)``.
    """
    X = _data(30, d=2, seed=5)
    ls = 1.3
    k = RBF(ls)
    K = k(X)
    iu = np.triu_indices(len(X), 1)
    D = X[iu[0]] - X[iu[1]]
    kp = _pairs(K)
    P = kp.size
    sq = lambda A: np.exp(-0.5 * np.sum(A**2, axis=-1) / ls**2)  # noqa: E731
    C = 0.5 * (sq(D[:, None] - D[None, :]) + sq(D[:, None] + D[None, :])) - np.outer(kp, kp)
    sd = np.sqrt(2 * np.mean(C**2))
    mean_var = np.mean((1 + kp**4) / 2 - kp**2)
    for m in (100, 400, 1600):
        rff = RandomFourierFeatures(m, length_scale=ls, random_state=m).fit(X)
        Phi = rff.transform(X)
        assert Phi.shape == (30, 2 * m)
        err = _pairs(Phi @ Phi.T) - kp
        np.testing.assert_allclose(np.diag(Phi @ Phi.T), 1.0, rtol=0, atol=1e2 * EPS)
        assert np.max(np.abs(err)) <= np.sqrt(2 * np.log(2 * P / 1e-6) / m)
        assert abs(m * np.mean(err**2) - mean_var) <= 6 * sd


def test_random_frequencies_have_the_spectral_measure_of_the_rbf():
    """``w ~ N(0, l^{-2} I)``: the mean of ``w^2 l^2`` over k entries is 1 +- 6 sqrt(2 / k)."""
    rff = RandomFourierFeatures(5000, length_scale=0.4, random_state=0).fit(np.zeros((1, 3)))
    W = rff.random_weights_
    assert W.shape == (3, 5000)
    assert abs(np.mean((W * 0.4) ** 2) - 1) <= 6 * np.sqrt(2 / W.size)
    assert abs(np.mean(W * 0.4)) <= 6 / np.sqrt(W.size)


def test_random_features_bad_inputs_and_reproducibility():
    X = _data(10)
    a = RandomFourierFeatures(20, random_state=3).fit(X).transform(X)
    b = RandomFourierFeatures(20, random_state=3).fit(X).transform(X)
    np.testing.assert_array_equal(a, b)
    Xn = X.copy()
    Xn[1, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        RandomFourierFeatures().fit(Xn)
    with pytest.raises(ValueError, match="features"):
        RandomFourierFeatures().fit(X).transform(X[:, :1])
    names = RandomFourierFeatures(2).fit(X).get_feature_names_out()
    assert list(names) == [f"randomfourierfeatures{i}" for i in range(4)]
