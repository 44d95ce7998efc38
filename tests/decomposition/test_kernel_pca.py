import numpy as np
import pytest
from sklearn.datasets import make_circles
from sklearn.decomposition import KernelPCA as SkKernelPCA

from mathlearn.decomposition import PCA, KernelPCA
from mathlearn.kernels import RBF, Polynomial

X_SIX = np.array([[2, 1], [0, 3], [-2, -1], [0, -3], [1, 1], [-1, -1]], dtype=float)


def assert_same_up_to_sign(A, B, **kw):
    signs = np.sign(np.sum(A * B, axis=0))
    signs[signs == 0] = 1
    np.testing.assert_allclose(A * signs, B, **kw)


def test_worked_example_t20():
    # Derived example for PRML §12.3: RBF with sigma = 1, eigenvalues of the centred Gram matrix.
    X = np.array([[0, 0], [1, 0], [0, 1], [1, 1], [3, 3]], dtype=float)
    kpca = KernelPCA(kernel="rbf", gamma=0.5).fit(X)
    np.testing.assert_allclose(
        kpca.eigenvalues_, [1.307847002148, 0.632120558829, 0.631924663848, 0.154776795867]
    )
    # The eigenvectors are orthogonal to 1: the Gram matrix was centred.
    np.testing.assert_allclose(kpca.eigenvectors_.sum(axis=0), 0.0, atol=1e-12)


def test_linear_kernel_is_pca():
    # Derived example for PRML §12.3: eigenvalues of K~/N and the projection of x = (1, 2),
    # +-2.230442497387.
    n = len(X_SIX)
    kpca = KernelPCA(n_components=2, kernel="linear").fit(X_SIX)
    np.testing.assert_allclose(kpca.eigenvalues_ / n, [4.08088022904, 1.252453104294])
    assert abs(kpca.transform([[1.0, 2.0]])[0, 0]) == pytest.approx(2.230442497387)
    pca = PCA(n_components=2).fit(X_SIX)
    assert_same_up_to_sign(kpca.transform(X_SIX), pca.transform(X_SIX), atol=1e-12)
    assert_same_up_to_sign(kpca.fit_transform(X_SIX), pca.transform(X_SIX), atol=1e-12)


def test_normalisation_of_dual_coefficients(rng):
    # a_i^T K~ a_i = 1 (unit-norm feature-space eigenvector; PRML §12.3; Oxford
    # "Advanced Topics in Statistical Machine Learning" §3.6).
    X = rng.normal(size=(30, 3))
    kpca = KernelPCA(n_components=4, kernel="rbf", gamma=0.3).fit(X)
    K = RBF(np.sqrt(0.5 / 0.3))(X)
    H = np.eye(30) - 1 / 30
    Kc = H @ K @ H
    A = kpca.dual_coef_
    np.testing.assert_allclose(A.T @ Kc @ A, np.eye(4), atol=1e-10)


@pytest.mark.parametrize(
    ("kernel", "params"),
    [
        ("rbf", {"gamma": 0.2}),
        ("poly", {"gamma": 0.5, "degree": 3, "coef0": 1.0}),
        ("sigmoid", {"gamma": 0.05, "coef0": 0.1}),
        ("linear", {}),
    ],
)
@pytest.mark.parametrize("solver", ["dense", "arpack"])
def test_matches_sklearn(rng, kernel, params, solver):
    X, Xt = rng.normal(size=(80, 4)), rng.normal(size=(10, 4))
    ours = KernelPCA(n_components=3, kernel=kernel, eigen_solver=solver, random_state=0, **params)
    ref = SkKernelPCA(n_components=3, kernel=kernel, eigen_solver="dense", **params)
    Z = ours.fit_transform(X)
    Zr = ref.fit_transform(X)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-8)
    assert_same_up_to_sign(Z, Zr, rtol=1e-6, atol=1e-8)
    assert_same_up_to_sign(ours.transform(Xt), ref.transform(Xt), rtol=1e-6, atol=1e-8)


def test_kernel_object_equals_string(rng):
    X = rng.normal(size=(40, 3))
    a = KernelPCA(n_components=2, kernel=RBF(length_scale=2.0)).fit_transform(X)
    b = KernelPCA(n_components=2, kernel="rbf", gamma=1 / 8).fit_transform(X)
    np.testing.assert_allclose(a, b, atol=1e-12)
    k = Polynomial(degree=2)
    kpca = KernelPCA(n_components=2, kernel=k).fit(X)
    assert kpca.kernel_ is not k and kpca.kernel_ == k  # cloned, not mutated


def test_precomputed(rng):
    X = rng.normal(size=(30, 3))
    K = RBF(1.0)(X)
    a = KernelPCA(n_components=2, kernel="precomputed").fit(K)
    b = KernelPCA(n_components=2, kernel="rbf", gamma=0.5).fit(X)
    np.testing.assert_allclose(a.transform(K[:5]), b.transform(X[:5]), atol=1e-12)


def test_circles_and_pre_image():
    X, y = make_circles(n_samples=200, factor=0.3, noise=0.05, random_state=0)
    kw = {"n_components": 2, "kernel": "rbf", "gamma": 5.0, "alpha": 0.1}
    ours = KernelPCA(fit_inverse_transform=True, **kw).fit(X)
    ref = SkKernelPCA(fit_inverse_transform=True, **kw).fit(X)
    Z = ours.transform(X)
    # A threshold on the first kernel principal component separates the two circles, which
    # no linear projection of X can do.
    z0 = Z[:, 0]
    accuracy = max(max(np.mean((z0 > t) == y), np.mean((z0 < t) == y)) for t in z0)
    assert accuracy == 1.0
    # Pre-images: the same kernel ridge map as scikit-learn, up to the component signs.
    signs = np.sign(np.sum(Z * ref.transform(X), axis=0))
    np.testing.assert_allclose(
        ours.inverse_transform(Z), ref.inverse_transform(Z * signs), rtol=1e-6, atol=1e-8
    )
    err = np.mean(np.sum((ours.inverse_transform(Z) - X) ** 2, axis=1))
    assert err < np.mean(np.sum((X - X.mean(0)) ** 2, axis=1))


def test_remove_zero_eig(rng):
    X = rng.normal(size=(5, 2))
    kpca = KernelPCA(n_components=5, kernel="linear", remove_zero_eig=True).fit(X)
    assert kpca.n_components_ == 2
    kept = KernelPCA(n_components=5, kernel="linear", eigen_solver="dense").fit(X)
    assert kept.n_components_ == 5
    assert np.all(np.isfinite(kept.transform(X)))


def test_bad_input(rng):
    X = rng.normal(size=(10, 2))
    with pytest.raises(ValueError, match="n_components"):
        KernelPCA(n_components=11).fit(X)
    with pytest.raises(ValueError, match="NaN"):
        KernelPCA().fit(np.array([[np.nan, 1.0], [1.0, 2.0]]))
    with pytest.raises(ValueError, match="at least 2 samples"):
        KernelPCA().fit(X[:1])
    with pytest.raises(ValueError, match="kernel must be"):
        KernelPCA(kernel="cosine").fit(X)
    with pytest.raises(ValueError, match="square"):
        KernelPCA(kernel="precomputed").fit(X)
    # Both eigen routes read one triangle, so a matrix that is not symmetric would be
    # silently replaced by its lower half: refused instead, naming the asymmetry.
    K = RBF(1.0)(rng.normal(size=(12, 2)))
    K[0, 5] += 0.1
    for solver in ("dense", "arpack"):
        with pytest.raises(ValueError, match="precomputed kernel matrix is not symmetric"):
            KernelPCA(n_components=2, kernel="precomputed", eigen_solver=solver).fit(K)


def test_precomputed_rounding_asymmetry_accepted(rng):
    # X X^T formed by a product that does not mirror one triangle differs from its transpose
    # by rounding only (a few eps per term): that is a symmetric kernel, and it gives the
    # linear kernel's components.
    X = rng.normal(size=(40, 7)) * 1e3
    K = X @ X.T
    K = K + np.triu(K, 1) * 4 * np.finfo(float).eps  # rounding-sized asymmetry
    a = KernelPCA(n_components=3, kernel="precomputed").fit(K)
    b = KernelPCA(n_components=3, kernel="linear").fit(X)
    np.testing.assert_allclose(a.eigenvalues_, b.eigenvalues_, rtol=1e-10)
    with pytest.raises(ValueError, match="fit_inverse_transform"):
        KernelPCA(n_components=2).fit(X).inverse_transform(np.ones((1, 2)))
    with pytest.raises(ValueError, match="coincide"):
        KernelPCA(kernel="rbf").fit(np.ones((4, 2)))
    with pytest.raises(ValueError, match="gamma"):
        KernelPCA(kernel="rbf", gamma=-1.0).fit(X)
    with pytest.raises(ValueError, match="alpha"):
        KernelPCA(kernel="rbf", fit_inverse_transform=True, alpha=-1.0).fit(X)
