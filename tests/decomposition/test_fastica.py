import tracemalloc

import numpy as np
import pytest
from sklearn.decomposition import FastICA as SkFastICA

from mathlearn.decomposition import FastICA
from mathlearn.exceptions import ConvergenceWarning


@pytest.fixture
def mixture(rng):
    t = np.linspace(0, 8, 2000)
    S = np.c_[np.sin(3 * t), np.sign(np.sin(2 * t)), rng.laplace(size=t.size)]
    A = np.array([[1.0, 0.5, 1.5], [0.5, 2.0, 1.0], [1.5, 1.0, 2.0]])
    return S, S @ A.T


def abs_corr(A, B):
    k = A.shape[1]
    return np.abs(np.corrcoef(A.T, B.T)[:k, k:])


def assert_permutation(C, tol):
    # Each estimated source matches exactly one reference source (|corr| ~ 1).
    assert np.all(np.sort(C.max(axis=1)) > 1 - tol)
    assert sorted(np.argmax(C, axis=1)) == list(range(C.shape[0]))


@pytest.mark.parametrize("algorithm", ["parallel", "deflation"])
@pytest.mark.parametrize("fun", ["logcosh", "exp", "cube"])
def test_recovers_sources_like_sklearn(mixture, algorithm, fun):
    S, X = mixture
    ours = FastICA(algorithm=algorithm, fun=fun, random_state=0, max_iter=1000)
    Z = ours.fit_transform(X)
    ref = SkFastICA(algorithm=algorithm, fun=fun, whiten="unit-variance", random_state=0,
                    max_iter=1000).fit_transform(X)  # fmt: skip
    assert_permutation(abs_corr(Z, S), 1e-2)
    assert_permutation(abs_corr(Z, ref), 5e-3)  # both stop at tol=1e-4 of the fixed point
    np.testing.assert_allclose(Z.std(axis=0), 1.0, rtol=1e-10)


def test_same_iterates_as_sklearn_with_same_start(mixture, rng):
    _, X = mixture
    w0 = rng.normal(size=(3, 3))
    ours = FastICA(w_init=w0, tol=1e-10, max_iter=1000).fit(X)
    ref = SkFastICA(w_init=w0, tol=1e-10, max_iter=1000, whiten="unit-variance").fit(X)
    C = abs_corr(ours.transform(X), ref.transform(X))
    np.testing.assert_allclose(np.sort(C.max(axis=1)), 1.0, atol=1e-8)


def test_mixing_and_inverse_transform(mixture):
    _, X = mixture
    ica = FastICA(random_state=0).fit(X)
    np.testing.assert_allclose(ica.inverse_transform(ica.transform(X)), X, atol=1e-8)
    np.testing.assert_allclose(ica.components_ @ ica.mixing_, np.eye(3), atol=1e-10)
    Xc = X - X.mean(0)
    K = ica.whitening_
    np.testing.assert_allclose(K @ (Xc.T @ Xc / len(X)) @ K.T, np.eye(3), atol=1e-10)


def test_fewer_components(mixture):
    _, X = mixture
    Z = FastICA(n_components=2, random_state=0).fit_transform(X)
    assert Z.shape == (2000, 2)


def test_convergence_warning(mixture):
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        FastICA(max_iter=1, random_state=0).fit(mixture[1])


def test_bad_input(mixture):
    _, X = mixture
    with pytest.raises(ValueError, match="n_components"):
        FastICA(n_components=4).fit(X)
    with pytest.raises(ValueError, match="w_init"):
        FastICA(w_init=np.eye(2)).fit(X)
    with pytest.raises(ValueError, match="NaN"):
        FastICA().fit(np.array([[np.nan, 1.0], [1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="collinear"):
        FastICA().fit(np.c_[X[:, 0], X[:, 0]])
    with pytest.raises(ValueError, match="fun"):
        FastICA(fun="tanh").fit(X)
    with pytest.raises(ValueError, match="at least 2 samples"):
        FastICA(n_components=1).fit(X[:1])
    with pytest.raises(ValueError, match="already white"):
        FastICA(n_components=2, whiten=False).fit(X)


def test_prewhitened_input(mixture):
    S, X = mixture
    ica = FastICA(random_state=0).fit(X)
    Xw = (X - X.mean(0)) @ ica.whitening_.T  # white: identity covariance
    Z = FastICA(whiten=False, random_state=0).fit_transform(Xw)
    assert_permutation(abs_corr(Z, S), 1e-2)


def test_d_larger_than_n_whitens_through_the_gram_matrix(mixture, rng):
    # 300 samples of the three sources seen through D = 4 000 sensors: the whitening comes
    # from the N x N Gram matrix, never a D x D covariance (which would be 128 MB).
    S, _ = mixture
    S = S[::7][:300]
    X = S @ rng.normal(size=(3, 4000))
    n, d = X.shape
    tracemalloc.start()
    ica = FastICA(n_components=3, random_state=0, max_iter=1000).fit(X)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 10 * n * d * 8
    Xc = X - X.mean(0)
    K = ica.whitening_
    np.testing.assert_allclose((K @ Xc.T) @ (Xc @ K.T) / n, np.eye(3), atol=1e-8)
    assert_permutation(abs_corr(ica.transform(X), S), 1e-2)
    with pytest.raises(ValueError, match="collinear"):
        FastICA(n_components=4).fit(X)


def test_wide_gram_route_of_the_spectrum_matches_the_svd(rng):
    # centred_spectrum(rows=k) on wide data takes the N x N Gram matrix: its eigenvalues are
    # those of the covariance, each to about (N + D) eps w_1 (forming G, then eigh), and each
    # row of V^T is u_i^T X_c / sqrt(N w_i), within about (N + D) eps w_1 / gap_i of the
    # singular vector (Davis-Kahan), gap_i the distance from w_i to its neighbours.
    from mathlearn.decomposition._base import centred_spectrum, right_singular

    n, d, k = 60, 500, 5
    X = rng.normal(size=(n, d)) * np.linspace(1.0, 3.0, d)
    Xc = X - X.mean(axis=0)
    w, Vt = centred_spectrum(Xc, lambda w: w[k - 1], rows=k)
    s, Vt_ref = right_singular(Xc)
    w_ref = s**2 / n
    assert w.shape == (n,) and Vt.shape == (k, d)
    eps = np.finfo(float).eps
    np.testing.assert_allclose(w, w_ref, rtol=0, atol=10 * (n + d) * eps * w_ref[0])
    gaps = np.minimum(np.abs(w_ref[:k] - w_ref[1 : k + 1]), np.r_[np.inf, np.diff(-w_ref[:k])])
    signs = np.sign(np.sum(Vt * Vt_ref[:k], axis=1))
    angle = np.linalg.norm(Vt * signs[:, None] - Vt_ref[:k], axis=1)  # ~ sin of the angle
    assert np.all(angle <= 10 * (n + d) * eps * w_ref[0] / gaps)
    np.testing.assert_allclose(
        Vt @ Vt.T, np.eye(k), atol=10 * (n + d) * eps * w_ref[0] / w_ref[k - 1]
    )
    # a needed eigenvalue below w_1 / 1e4 sends it to the SVD: the rows then are all of V^T
    X[:, :] = rng.normal(size=(n, 1)) * rng.normal(size=(1, d)) * 1e3 + rng.normal(size=(n, d))
    Xc = X - X.mean(axis=0)
    w, Vt = centred_spectrum(Xc, lambda w: w[k - 1], rows=k)
    assert Vt.shape == (n, d)
