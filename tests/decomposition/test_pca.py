import tracemalloc

import numpy as np
import pytest
import scipy.linalg as sla
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import multivariate_normal
from sklearn.decomposition import PCA as SkPCA
from sklearn.model_selection import GridSearchCV

from mathlearn.decomposition import PCA

X_SIX = np.array([[2, 1], [0, 3], [-2, -1], [0, -3], [1, 1], [-1, -1]], dtype=float)


def assert_same_up_to_sign(A, B, **kw):
    """Columns of A and B equal up to one sign per column."""
    signs = np.sign(np.sum(A * B, axis=0))
    signs[signs == 0] = 1
    np.testing.assert_allclose(A * signs, B, **kw)


def max_principal_angle(A, B):
    """Largest principal angle between the row spaces of A and B."""
    Qa = sla.orth(A.T)
    Qb = sla.orth(B.T)
    return float(np.max(sla.subspace_angles(Qa, Qb)))


@pytest.fixture
def low_rank(rng):
    Z = rng.normal(size=(120, 5)) * [5, 4, 3, 2, 1.5]
    return Z @ rng.normal(size=(5, 30)) + 0.1 * rng.normal(size=(120, 30))


def test_worked_example_t17():
    # Derived example for PRML §12.1: S = [[5/3, 1], [1, 11/3]] (1/N), eigenvalues 8/3 +- sqrt(2).
    n = len(X_SIX)
    pca = PCA(n_components=2, svd_solver="full").fit(X_SIX)
    np.testing.assert_allclose(
        pca.explained_variance_ * (n - 1) / n, [8 / 3 + np.sqrt(2), 8 / 3 - np.sqrt(2)]
    )
    np.testing.assert_allclose(np.abs(pca.components_[0]), [0.382683432365, 0.923879532511])
    pca1 = PCA(n_components=1).fit(X_SIX)
    coef = [1.689246397241, 2.771638597534, -1.689246397241, -2.771638597534,
            1.306562964876, -1.306562964876]  # fmt: skip
    z = pca1.transform(X_SIX)[:, 0]
    assert_same_up_to_sign(z[:, None], np.array(coef)[:, None], rtol=1e-10)
    # Distortion = mean reconstruction error = the discarded eigenvalue (1/N scaling).
    assert pca1.reconstruction_error(X_SIX) == pytest.approx(1.2524531042935714, rel=1e-10)


def test_worked_example_spec003():
    # Imperial "Mathematics for Machine Learning" lectures 7-8: centred points (2,0), (-2,0),
    # (0,1), (0,-1); S = diag(2, 0.5) with the 1/N scaling, PC 1 = e_1, and the M = 1
    # reconstruction loss is 0.5.
    X = np.array([[2.0, 0.0], [-2.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    for solver in ("full", "gram", "covariance"):
        pca = PCA(n_components=1, svd_solver=solver).fit(X)
        np.testing.assert_allclose(pca.explained_variance_ * 3 / 4, [2.0], rtol=1e-12)
        np.testing.assert_allclose(pca.components_, [[1.0, 0.0]], atol=1e-12)
        assert pca.reconstruction_error(X) == pytest.approx(0.5, rel=1e-12)


def test_worked_example_t18_gram_route():
    # Derived example for PRML §12.1.4: N = 3 < D = 5; non-zero eigenvalues of X^T X / N and X X^T
    # / N.
    X = np.array([[1, 2, 0, 1, 3], [0, 1, 1, 2, 0], [2, 0, 1, 0, 1]], dtype=float)
    pca = PCA(n_components=2).fit(X)
    assert pca.solver_ == "gram"
    np.testing.assert_allclose(pca.explained_variance_ * 2 / 3, [2.182861256785, 1.594916520993])
    v1 = [0.193056507179, 0.351918007078, -0.298964173778, -0.193056507179, 0.843938688035]
    np.testing.assert_allclose(np.abs(pca.components_[0]), np.abs(v1), atol=1e-10)


@pytest.mark.parametrize("solver", ["full", "gram", "covariance", "randomized"])
def test_matches_sklearn(low_rank, solver):
    X = low_rank
    ours = PCA(n_components=5, svd_solver=solver, random_state=0).fit(X)
    ref = SkPCA(n_components=5, svd_solver="full").fit(X)
    tol = 1e-6 if solver == "randomized" else 1e-10
    np.testing.assert_allclose(ours.explained_variance_, ref.explained_variance_, rtol=tol)
    np.testing.assert_allclose(
        ours.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=tol
    )
    np.testing.assert_allclose(ours.singular_values_, ref.singular_values_, rtol=tol)
    assert ours.noise_variance_ == pytest.approx(ref.noise_variance_, rel=1e-6)
    assert max_principal_angle(ours.components_, ref.components_) < 1e-6
    assert_same_up_to_sign(ours.transform(X), ref.transform(X), rtol=1e-5, atol=1e-8)
    Z = ours.transform(X)
    np.testing.assert_allclose(ours.inverse_transform(Z), ref.inverse_transform(ref.transform(X)))
    np.testing.assert_allclose(ours.fit_transform(X), Z, atol=1e-8)


def test_randomized_approximates_exact_subspace(rng):
    X = rng.normal(size=(400, 60)) @ np.diag(np.r_[[5.0, 4.0, 3.0], np.linspace(1, 0.1, 57)])
    exact = PCA(n_components=3, svd_solver="full").fit(X)
    approx = PCA(n_components=3, svd_solver="randomized", random_state=0).fit(X)
    assert max_principal_angle(exact.components_, approx.components_) < 1e-3
    np.testing.assert_allclose(approx.explained_variance_, exact.explained_variance_, rtol=1e-4)


def test_gram_route_never_forms_dxd(rng):
    # The faces case of the notes (D = 77 760, N = 165) in miniature: D = 20 000, N = 30.
    n, d = 30, 20_000
    X = rng.normal(size=(n, d))
    tracemalloc.start()
    gram = PCA(n_components=10).fit(X)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert gram.solver_ == "gram"
    assert peak < 10 * n * d * 8  # a D x D matrix would be 3.2 GB
    # nor an N x D centred copy: the Gram matrix and the axes are formed by column blocks
    assert peak < n * d * 8
    full = PCA(n_components=10, svd_solver="full").fit(X)
    np.testing.assert_allclose(gram.explained_variance_, full.explained_variance_, rtol=1e-9)
    np.testing.assert_allclose(
        np.abs(gram.components_ @ full.components_.T), np.eye(10), atol=1e-8
    )
    assert gram.noise_variance_ == pytest.approx(full.noise_variance_, rel=1e-9)


def test_gram_route_falls_back_beyond_rank(rng):
    X = rng.normal(size=(6, 20))
    pca = PCA(svd_solver="gram").fit(X)  # 6 components, rank after centring is 5
    assert pca.solver_ == "full"
    np.testing.assert_allclose(pca.components_ @ pca.components_.T, np.eye(6), atol=1e-10)


def test_variance_fraction(low_rank):
    ours = PCA(n_components=0.9, svd_solver="full").fit(low_rank)
    ref = SkPCA(n_components=0.9, svd_solver="full").fit(low_rank)
    assert ours.n_components_ == ref.n_components_
    assert ours.explained_variance_ratio_.sum() >= 0.9


def test_whitening(low_rank):
    X = low_rank
    pca = PCA(n_components=4, whiten=True).fit(X)
    Z = pca.transform(X)
    np.testing.assert_allclose(np.cov(Z.T), np.eye(4), atol=1e-10)
    ref = SkPCA(n_components=4, whiten=True, svd_solver="full").fit(X)
    assert_same_up_to_sign(Z, ref.transform(X), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(pca.fit_transform(X), Z, atol=1e-10)
    np.testing.assert_allclose(
        pca.inverse_transform(Z), SkPCA(4).fit(X).inverse_transform(SkPCA(4).fit_transform(X))
    )


def test_reconstruction_error_is_discarded_variance(low_rank):
    X = low_rank
    n = len(X)
    full = PCA(svd_solver="full").fit(X)
    ev_n = full.explained_variance_ * (n - 1) / n
    for k in (1, 3, 10):
        assert full.reconstruction_error(X, n_components=k) == pytest.approx(
            ev_n[k:].sum(), rel=1e-9
        )
    # Eckart-Young: no other rank-k projection does better (random orthonormal basis).
    Q = np.linalg.qr(np.random.default_rng(1).normal(size=(X.shape[1], 3)))[0]
    Xc = X - X.mean(0)
    R = Xc - Xc @ Q @ Q.T
    assert np.mean(np.sum(R**2, axis=1)) > full.reconstruction_error(X, n_components=3)


def test_deterministic_signs(low_rank, rng):
    a = PCA(n_components=3).fit(low_rank).components_
    b = PCA(n_components=3).fit(low_rank[rng.permutation(len(low_rank))]).components_
    np.testing.assert_allclose(a, b, atol=1e-10)
    rows = np.arange(3)
    assert np.all(a[rows, np.argmax(np.abs(a), axis=1)] > 0)


def test_float32_preserved(low_rank):
    pca = PCA(n_components=2).fit(low_rank.astype(np.float32))
    assert pca.components_.dtype == np.float32
    assert pca.transform(low_rank.astype(np.float32)).dtype == np.float32
    Z = pca.transform(low_rank.astype(np.float32))
    assert pca.inverse_transform(Z).dtype == np.float32


def test_constant_features():
    X = np.c_[np.arange(10.0), np.full(10, 3.0), np.arange(10.0) ** 2]
    pca = PCA().fit(X)
    assert np.all(np.isfinite(pca.explained_variance_ratio_))
    assert pca.explained_variance_[-1] == pytest.approx(0.0, abs=1e-10)
    with pytest.raises(ValueError, match="zero variance"):
        PCA(whiten=True).fit(X)
    const = PCA().fit(np.ones((5, 3)))
    np.testing.assert_array_equal(const.explained_variance_ratio_, 0.0)


@pytest.mark.parametrize("k", [0, 4, -1, 1.5, "two"])
def test_bad_n_components(k):
    with pytest.raises(ValueError, match="n_components"):
        PCA(n_components=k).fit(np.random.default_rng(0).normal(size=(10, 3)))


def test_bad_input():
    with pytest.raises(ValueError, match="NaN"):
        PCA().fit(np.array([[1.0, np.nan], [2.0, 3.0]]))
    with pytest.raises(ValueError, match="1 sample"):
        PCA().fit(np.array([[1.0, 2.0]]))
    with pytest.raises(ValueError, match="svd_solver"):
        PCA(svd_solver="magic").fit(np.ones((4, 2)))
    with pytest.raises(ValueError, match="integer n_components"):
        PCA(n_components=0.5, svd_solver="randomized").fit(np.eye(4))
    pca = PCA(n_components=2).fit(np.random.default_rng(0).normal(size=(10, 3)))
    with pytest.raises(ValueError, match="features"):
        pca.transform(np.ones((2, 4)))
    with pytest.raises(ValueError, match="inverse_transform expects"):
        pca.inverse_transform(np.ones((2, 3)))


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(3, 25),
    d=st.integers(2, 25),
    seed=st.integers(0, 2**16),
)
def test_solvers_agree_property(n, d, seed):
    # Imperial "Mathematics for Inference and Machine Learning" §2.1.4: PCA by eigendecomposition,
    # by SVD and by the Gram trick agree up to sign, and whitened training features are the right
    # singular vectors scaled by sqrt(N - 1).
    X = np.random.default_rng(seed).normal(size=(n, d))
    k = min(n - 1, d)
    ref = PCA(n_components=k, svd_solver="full").fit(X)
    for solver in ("gram", "covariance"):
        other = PCA(n_components=k, svd_solver=solver).fit(X)
        np.testing.assert_allclose(
            other.explained_variance_, ref.explained_variance_, rtol=1e-6, atol=1e-10
        )
        np.testing.assert_allclose(other.components_, ref.components_, atol=1e-5)
    Z = PCA(n_components=k, whiten=True).fit_transform(X)
    Xc = X - X.mean(0)
    U = np.linalg.svd(Xc, full_matrices=False)[0][:, :k]
    assert_same_up_to_sign(Z / np.sqrt(n - 1), U, atol=1e-6)


@pytest.mark.parametrize("k", [2, 5, 30])
def test_ppca_score_matches_sklearn(low_rank, rng, k):
    # scikit-learn's PCA.score: the likelihood of the PPCA model (PRML §12.2) with
    # sigma^2 = noise_variance_; also against scipy's Gaussian density of get_covariance().
    X = low_rank
    Xt = rng.normal(size=(15, 30)) * 2
    ours = PCA(n_components=k, svd_solver="full").fit(X)
    ref = SkPCA(n_components=k, svd_solver="full").fit(X)
    np.testing.assert_allclose(ours.get_covariance(), ref.get_covariance(), atol=1e-12)
    np.testing.assert_allclose(ours.score_samples(Xt), ref.score_samples(Xt), rtol=1e-10)
    assert ours.score(Xt) == pytest.approx(ref.score(Xt), rel=1e-10)
    direct = multivariate_normal(ours.mean_, ours.get_covariance()).logpdf(Xt)
    np.testing.assert_allclose(ours.score_samples(Xt), direct, rtol=1e-9)


def test_ppca_score_gram_route_and_model_selection(rng):
    X = rng.normal(size=(12, 50))
    ours = PCA(n_components=4).fit(X)
    assert ours.solver_ == "gram"
    ref = SkPCA(n_components=4, svd_solver="full").fit(X)
    np.testing.assert_allclose(ours.score_samples(X), ref.score_samples(X), rtol=1e-9)
    with pytest.raises(ValueError, match="degenerate"):
        PCA().fit(X).score(X)  # 12 components, rank 11 after centring: sigma^2 = 0
    # GridSearchCV needs no scoring argument: it uses this likelihood (scikit-learn's
    # probabilistic-PCA model selection).
    Z = rng.normal(size=(200, 3)) @ rng.normal(size=(3, 10)) + 0.3 * rng.normal(size=(200, 10))
    search = GridSearchCV(PCA(), {"n_components": [1, 2, 3, 6]}, cv=3).fit(Z)
    ref_search = GridSearchCV(SkPCA(), {"n_components": [1, 2, 3, 6]}, cv=3).fit(Z)
    assert search.best_params_ == ref_search.best_params_ == {"n_components": 3}


@pytest.mark.parametrize("shape", [(3000, 40), (40, 3000)])
@pytest.mark.parametrize("n_iter", [1, 4, 20])
def test_randomized_power_iterations_resolve_a_gapped_spectrum(rng, n_iter, shape):
    # X = U diag(s) V^T with a gap after the third singular value, about 10^-2. The range
    # finder's error after q power passes is of order (s_14 / s_3)^(2q+1) (Halko, Martinsson
    # & Tropp 2011, Cor. 10.10, with k + p = 13 samples; s_14 ~ 0.024), about 3e-8 for q = 1, so
    # the LU-normalised passes must give the exact top singular values and axes to rounding,
    # however many passes (a badly scaled basis would lose digits as q grows). Wide data
    # (N < D) take the transposed route, X^T = V S U^T, with the same guarantee.
    n, d = shape
    r = min(n, d)
    U, _ = np.linalg.qr(rng.normal(size=(n, r)))
    V, _ = np.linalg.qr(rng.normal(size=(d, r)))
    s = np.r_[[10.0, 9.0, 8.0], np.geomspace(0.08, 1e-3, r - 3)]
    X = (U * s) @ V.T
    X -= X.mean(axis=0)  # PCA centres; take the exact spectrum of the centred data
    s_ref = np.linalg.svd(X, compute_uv=False)[:3]
    ref_axes = np.linalg.svd(X, full_matrices=False)[2][:3]
    pca = PCA(n_components=3, svd_solver="randomized", iterated_power=n_iter, random_state=0)
    pca.fit(X)
    np.testing.assert_allclose(pca.singular_values_, s_ref, rtol=1e-8 if n_iter == 1 else 1e-12)
    assert max_principal_angle(pca.components_, ref_axes) < (1e-6 if n_iter == 1 else 1e-10)


def test_auto_route_on_wide_data_by_cost(rng):
    # 400 x 3 000, k = 5: the Gram route costs about N^2 D + 10 N^3 = 1.1e9 operations, the
    # randomised one 2 (2*7 + 2) N D (k + p) = 5.8e8, so "auto" takes the randomised route;
    # with a gap of 10^2 after the fifth singular value it agrees with the exact
    # decomposition to rounding (error ~ 0.01^15, see the gapped-spectrum test above).
    n, d = 400, 3000
    U, _ = np.linalg.qr(rng.normal(size=(n, n)))
    V, _ = np.linalg.qr(rng.normal(size=(d, n)))
    s = np.r_[[50.0, 40.0, 30.0, 20.0, 10.0], np.geomspace(0.1, 0.01, n - 5)]
    X = (U * s) @ V.T
    auto = PCA(n_components=5, random_state=0).fit(X)
    assert auto.solver_ == "randomized"
    gram = PCA(n_components=5, svd_solver="gram").fit(X)
    np.testing.assert_allclose(auto.explained_variance_, gram.explained_variance_, rtol=1e-10)
    assert max_principal_angle(auto.components_, gram.components_) < 1e-8
    # Few samples: the Gram matrix is the cheaper route.
    assert PCA(n_components=5).fit(X[:60]).solver_ == "gram"


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_covariance_route_refuses_non_finite_data(bad):
    # the covariance route checks finiteness through its column sums of squares
    X = np.random.default_rng(0).normal(size=(200, 3))
    X[117, 1] = bad
    with pytest.raises(ValueError, match="NaN" if np.isnan(bad) else "infinity"):
        PCA(2, svd_solver="covariance").fit(X)
    with pytest.raises(ValueError, match="NaN" if np.isnan(bad) else "infinity"):
        PCA(2).fit(X)  # auto: N >= 10 D takes the covariance route


@pytest.mark.parametrize("e", [-1000, -481, -241, -240, -239, 0, 239, 240, 241, 300, 1020])
def test_covariance_route_works_in_the_units_unit_of_chooses(e):
    # the range test on the sums of squares must take unit 1 only where unit_of does
    from mathlearn.utils._rowscale import unit_of

    rng = np.random.default_rng(1)
    X = rng.uniform(0.5, 1.0, size=(300, 4)) * np.array([1.0, 2.0**-30, 0.5, 2.0**-700])
    X[:, 0] *= rng.choice([-1.0, 1.0], 300)
    X = X * 2.0**e
    pca = PCA(2, svd_solver="covariance").fit(X)
    assert pca._unit == unit_of(X)
    ref = PCA(2, svd_solver="full").fit(X)
    np.testing.assert_allclose(
        np.abs(pca.components_[0]), np.abs(ref.components_[0]), rtol=1e-10, atol=1e-12
    )


@pytest.mark.parametrize("k", [4, 0.95, None])
def test_full_solver_on_wide_data_against_a_known_decomposition(rng, k):
    # Wide data (N < D): the full solver factorises X_c^T = Q R and takes the SVD of R (the
    # right vectors as Q U_R, Q never formed). Data with a known SVD after centring:
    # X = 1 m^T + U diag(s) V^T, U's columns orthonormal and orthogonal to the ones vector.
    # Centring data of size ~300 perturbs X_c by E with ||E||_2 <= ||E||_F <= sqrt(N D) eps
    # 300 ~ 1.5e-12, the factorisations add a few N eps s_1: singular values within ||E||
    # plus that (Weyl), axes within that over the gap (>= 1 here; Wedin).
    n, d, r = 12, 40, 6
    ones = np.ones((n, 1)) / np.sqrt(n)
    A = rng.normal(size=(n, r))
    A -= ones @ (ones.T @ A)
    U = np.linalg.qr(A)[0]
    V = np.linalg.qr(rng.normal(size=(d, r)))[0]
    s = np.array([8.0, 7.0, 6.0, 5.0, 4.0, 3.0])
    X = rng.normal(size=d) * 100 + (U * s) @ V.T
    tol = 1e-11
    fit = PCA(k, svd_solver="full").fit(X)
    kept = {4: 4, 0.95: 5, None: n}[k]  # 0.95: cumulative s^2 / 199 first reaches it at 5
    assert fit.n_components_ == kept
    s_all = np.r_[s, np.zeros(n - r)]
    np.testing.assert_allclose(fit.singular_values_, s_all[:kept], rtol=0, atol=tol)
    axes = min(kept, r)  # beyond the rank the axes are any basis of the null space
    assert_same_up_to_sign(fit.components_[:axes].T, V[:, :axes], rtol=0, atol=tol)
    np.testing.assert_allclose(fit.components_ @ fit.components_.T, np.eye(kept), atol=tol)
    # fit_transform's projections from the same factorisation: U diag(s), and the same as
    # transform's
    Z = PCA(k, svd_solver="full").fit_transform(X)
    assert_same_up_to_sign(Z[:, :axes], U[:, :axes] * s[:axes], rtol=0, atol=tol)
    np.testing.assert_allclose(Z, fit.transform(X), rtol=0, atol=tol)
