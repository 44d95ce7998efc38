import tracemalloc

import numpy as np
import pytest
from sklearn.datasets import load_iris, make_blobs
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

from mathlearn.discriminant_analysis import FisherLDA, scatter_matrices

C1 = np.array([[4, 1], [2, 4], [2, 3], [3, 6], [4, 4]], dtype=float)
C2 = np.array([[9, 10], [6, 8], [9, 5], [8, 7], [10, 8]], dtype=float)
X_TV02 = np.r_[C1, C2]
Y_TV02 = np.array([0] * 5 + [1] * 5)


def unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def test_worked_example_tv02():
    # The worked example of Imperial "Mathematics for Inference and Machine Learning" §2.1.5.1
    # (the 1/N_c class covariances).
    Sw, Sb = scatter_matrices(X_TV02, Y_TV02, scatter="normalized")
    np.testing.assert_allclose(Sw, [[2.64, -0.44], [-0.44, 5.28]], atol=1e-12)
    # The notes' two-class S_b = (mu1 - mu2)(mu1 - mu2)^T is twice the multi-class form.
    np.testing.assert_allclose(2 * Sb, [[29.16, 21.6], [21.6, 16.0]], atol=1e-12)
    lda = FisherLDA(scatter="normalized").fit(X_TV02, Y_TV02)
    np.testing.assert_allclose(lda.means_, [[3.0, 3.6], [8.4, 7.6]])
    assert 2 * lda.eigenvalues_[0] == pytest.approx(15.65685, abs=1e-5)
    w = unit(lda.scalings_[:, 0])
    np.testing.assert_allclose(np.abs(w), [0.919559, 0.392951], atol=1e-6)
    # Closed form w ~ S_w^{-1} (mu1 - mu2) = [-2.202305, -0.941101].
    w_direct = np.linalg.solve(Sw, lda.means_[0] - lda.means_[1])
    np.testing.assert_allclose(w_direct, [-2.202305, -0.941101], atol=1e-6)
    assert abs(w @ unit(w_direct)) == pytest.approx(1.0)
    # The pooled convention gives the same direction when classes have equal sizes.
    pooled = FisherLDA().fit(X_TV02, Y_TV02)
    assert abs(unit(pooled.scalings_[:, 0]) @ w) == pytest.approx(1.0)
    np.testing.assert_array_equal(pooled.predict(X_TV02), Y_TV02)


def test_total_scatter_decomposes(rng):
    X = rng.normal(size=(40, 3))
    y = rng.integers(0, 3, 40)
    Sw, Sb = scatter_matrices(X, y)
    Xc = X - X.mean(0)
    np.testing.assert_allclose(Sw + Sb, Xc.T @ Xc, atol=1e-10)


@pytest.mark.parametrize("solver", ["eigen", "simultaneous", "pca"])
def test_matches_sklearn_lda(solver):
    X, y = load_iris(return_X_y=True)
    ours = FisherLDA(solver=solver).fit(X, y)
    ref = LinearDiscriminantAnalysis(solver="svd").fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-10)
    Z, Zr = ours.transform(X), ref.transform(X)
    signs = np.sign(np.sum(Z * Zr, axis=0))
    np.testing.assert_allclose(Z * signs, Zr, atol=1e-10)
    np.testing.assert_allclose(
        ours.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=1e-10
    )
    assert ours.score(X, y) == pytest.approx(ref.score(X, y))
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-8, atol=1e-8)


def test_priors_and_two_class_decision_function(rng):
    X, y = make_blobs(n_samples=80, centers=2, n_features=3, random_state=0, cluster_std=3.0)
    ours = FisherLDA(priors=[0.3, 0.7]).fit(X, y)
    ref = LinearDiscriminantAnalysis(priors=[0.3, 0.7]).fit(X, y)
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=1e-9)
    np.testing.assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X), atol=1e-9)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-9)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-9)
    np.testing.assert_allclose(X @ ours.coef_[0] + ours.intercept_[0], ours.decision_function(X))


def test_simultaneous_diagonalisation_when_d_exceeds_n(rng):
    # D = 50 > N = 30: S_w is singular (rank N - C = 27; the notes print N - (C + 1)), Algorithm 2
    # applies.
    means = rng.normal(size=(3, 50)) * 3
    y = np.repeat([0, 1, 2], 10)
    X = means[y] + rng.normal(size=(30, 50))
    lda = FisherLDA().fit(X, y)
    assert lda.solver_ == "simultaneous"
    Sw, Sb = scatter_matrices(X, y)
    assert np.linalg.matrix_rank(Sw) == 27
    W = lda.scalings_
    np.testing.assert_allclose(W.T @ Sw @ W / 30, np.eye(2), atol=1e-8)
    B = W.T @ Sb @ W
    np.testing.assert_allclose(B, np.diag(np.diag(B)), atol=1e-8 * np.abs(B).max())
    assert lda.score(X, y) == 1.0
    with pytest.raises(ValueError, match="singular"):
        FisherLDA(solver="eigen").fit(X, y)
    pca_lda = FisherLDA(solver="pca").fit(X, y)
    assert pca_lda.score(X, y) == 1.0


def test_simultaneous_equals_eigen_when_sw_regular(rng):
    X, y = make_blobs(n_samples=90, centers=4, n_features=5, random_state=1)
    a = FisherLDA(solver="eigen").fit(X, y)
    b = FisherLDA(solver="simultaneous").fit(X, y)
    np.testing.assert_allclose(a.eigenvalues_, b.eigenvalues_, rtol=1e-9)
    np.testing.assert_allclose(np.abs(a.scalings_), np.abs(b.scalings_), rtol=1e-7, atol=1e-10)


def test_n_components_and_labels():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    lda = FisherLDA(n_components=1).fit(X, names)
    assert lda.transform(X).shape == (150, 1)
    assert set(lda.predict(X)) <= set(names)


def test_bad_input(rng):
    X = rng.normal(size=(20, 3))
    with pytest.raises(ValueError, match="1 class"):
        FisherLDA().fit(X, np.zeros(20))
    with pytest.raises(ValueError, match="n_components"):
        FisherLDA(n_components=2).fit(X, np.arange(20) % 2)
    with pytest.raises(ValueError, match="continuous"):
        FisherLDA().fit(X, rng.normal(size=20))
    with pytest.raises(ValueError, match="NaN"):
        Xn = X.copy()
        Xn[0, 0] = np.nan
        FisherLDA().fit(Xn, np.arange(20) % 2)
    with pytest.raises(ValueError, match="infinity"):
        Xi = X.copy()
        Xi[0, 0] = np.inf
        FisherLDA().fit(Xi, np.arange(20) % 2)
    with pytest.raises(ValueError, match="features"):
        FisherLDA().fit(X, np.arange(20) % 2).predict(X[:, :2])
    with pytest.raises(ValueError, match="NaN"):
        scatter_matrices(Xn, np.arange(20) % 2)
    with pytest.raises(ValueError, match="inconsistent"):
        scatter_matrices(X, np.arange(19) % 2)
    with pytest.raises(ValueError, match="more samples than classes"):
        FisherLDA().fit(X[:2], [0, 1])
    with pytest.raises(ValueError, match="priors"):
        FisherLDA(priors=[0.5, 0.6]).fit(X, np.arange(20) % 2)
    with pytest.raises(ValueError, match="solver"):
        FisherLDA(solver="svd").fit(X, np.arange(20) % 2)
    # A constant feature makes S_w singular: auto falls back to simultaneous diagonalisation.
    Xc = np.c_[X, np.ones(20)]
    lda = FisherLDA().fit(Xc, np.arange(20) % 2)
    assert lda.solver_ == "simultaneous"
    assert np.all(np.isfinite(lda.predict_proba(Xc)))


def test_d_much_larger_than_n_never_forms_dxd(rng):
    # The faces case in miniature: D = 5 000 >> N = 30, where a D x D scatter is 200 MB.
    n, d = 30, 5_000
    y = np.repeat([0, 1, 2], 10)
    X = 3 * rng.normal(size=(3, d))[y] + rng.normal(size=(n, d))
    tracemalloc.start()
    lda = FisherLDA().fit(X, y)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert lda.solver_ == "simultaneous"
    assert peak < 10 * n * d * 8
    # Algorithm 2 through the factors S_w = A^T A and S_b = B^T B (no D x D in the test
    # either): W^T S_w W / N = I and W^T S_b W diagonal.
    means = np.array([X[y == c].mean(0) for c in range(3)])
    A = X - means[y]
    B = np.sqrt(10.0) * (means - X.mean(0))
    AW, BW = A @ lda.scalings_, B @ lda.scalings_
    np.testing.assert_allclose(AW.T @ AW / n, np.eye(2), atol=1e-8)
    Sb_w = BW.T @ BW
    np.testing.assert_allclose(Sb_w, np.diag(np.diag(Sb_w)), atol=1e-8 * np.abs(Sb_w).max())
    with pytest.raises(ValueError, match="singular"):
        FisherLDA(solver="eigen").fit(X, y)
