import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.decomposition import PCA as SkPCA

from mathlearn.decomposition import PCA, ProbabilisticPCA
from mathlearn.exceptions import ConvergenceWarning

X_PPCA = np.array(
    [[1, 0, 0], [0, 1, 0], [0, 0, 1], [-1, 0, 0], [0, -1, 0], [0, 0, -1], [2, 2, 0], [-2, -2, 0]],
    dtype=float,
)


@pytest.fixture
def ppca_data(rng):
    W = rng.normal(size=(6, 2)) * 2
    Z = rng.normal(size=(200, 2))
    return Z @ W.T + 0.5 * rng.normal(size=(200, 6)) + rng.normal(size=6)


def test_worked_example_t19():
    # Derived example for PRML §12.2: sigma^2 = 0.25, W = +-[1, 1, 0], C = S, log-likelihood
    # -26.2078907728.
    m = ProbabilisticPCA(n_components=1).fit(X_PPCA)
    assert m.noise_variance_ == pytest.approx(0.25)
    np.testing.assert_allclose(m.components_, [[1.0, 1.0, 0.0]], atol=1e-12)
    S = X_PPCA.T @ X_PPCA / len(X_PPCA)
    np.testing.assert_allclose(m.get_covariance(), S, atol=1e-12)
    assert m.score(X_PPCA) * len(X_PPCA) == pytest.approx(-26.207890772818335, rel=1e-12)
    mean, cov = m.posterior(np.array([[1.0, 1.0, 0.0]]))
    assert mean[0, 0] == pytest.approx(2 / 2.25)
    assert cov[0, 0] == pytest.approx(1 / 9)
    np.testing.assert_allclose(m.inverse_transform(mean), [[8 / 9, 8 / 9, 0.0]])


def test_score_matches_sklearn_pca_score(ppca_data, rng):
    # scikit-learn's PCA.score is the PPCA likelihood with the 1/(N-1) covariance; the ML
    # (1/N) model fitted to sqrt(N/(N-1)) X (centred) has exactly that covariance.
    X = ppca_data - ppca_data.mean(0)
    n = len(X)
    ref = SkPCA(n_components=2).fit(X)
    ours = ProbabilisticPCA(n_components=2).fit(X * np.sqrt(n / (n - 1)))
    Xt = rng.normal(size=(20, 6)) * 3
    assert ours.score(Xt) == pytest.approx(ref.score(Xt), rel=1e-10)
    np.testing.assert_allclose(ours.score_samples(Xt), ref.score_samples(Xt), rtol=1e-10)
    np.testing.assert_allclose(ours.get_covariance(), ref.get_covariance(), rtol=1e-10)


def test_score_samples_vs_scipy(ppca_data):
    m = ProbabilisticPCA(n_components=2).fit(ppca_data)
    ref = multivariate_normal(m.mean_, m.get_covariance()).logpdf(ppca_data)
    np.testing.assert_allclose(m.score_samples(ppca_data), ref, rtol=1e-10)
    assert m.lower_bound_ == pytest.approx(ref.mean())


def test_closed_form_is_local_maximum(ppca_data, rng):
    m = ProbabilisticPCA(n_components=2).fit(ppca_data)
    best = m.score(ppca_data)
    W0, s0 = m.components_.copy(), m.noise_variance_
    for _ in range(5):
        m.components_ = W0 + 1e-3 * rng.normal(size=W0.shape)
        m.noise_variance_ = s0 * (1 + 1e-3 * rng.normal())
        assert m.score(ppca_data) < best


def test_gram_route_d_greater_than_n(rng):
    X = rng.normal(size=(10, 30))
    m = ProbabilisticPCA(n_components=3).fit(X)
    ref = multivariate_normal(m.mean_, m.get_covariance()).logpdf(X)
    np.testing.assert_allclose(m.score_samples(X), ref, rtol=1e-9)
    # sigma^2 averages the 27 discarded eigenvalues, 21 of which are zero.
    lam = np.linalg.eigvalsh(np.cov(X.T, bias=True))[::-1]
    assert m.noise_variance_ == pytest.approx(lam[3:].sum() / 27, rel=1e-9)


def test_em_converges_to_closed_form(ppca_data):
    cf = ProbabilisticPCA(n_components=2).fit(ppca_data)
    em = ProbabilisticPCA(
        n_components=2, method="em", init="random", tol=1e-10, random_state=0
    ).fit(ppca_data)
    W_cf, W_em = cf.components_.T, em.components_.T
    np.testing.assert_allclose(W_em @ W_em.T, W_cf @ W_cf.T, rtol=1e-3, atol=1e-3)
    assert em.noise_variance_ == pytest.approx(cf.noise_variance_, rel=1e-4)
    assert em.score(ppca_data) == pytest.approx(cf.score(ppca_data), abs=1e-8)
    assert np.all(np.diff(em.lower_bound_history_) >= -1e-12)


def test_em_pca_start_on_complete_data_is_the_maximum(ppca_data):
    cf = ProbabilisticPCA(n_components=2).fit(ppca_data)
    em = ProbabilisticPCA(n_components=2, method="em").fit(ppca_data)
    assert em.n_iter_ <= 3
    np.testing.assert_allclose(em.get_covariance(), cf.get_covariance(), rtol=1e-8)


@pytest.mark.parametrize("init", ["pca", "random"])
def test_em_with_missing_values(ppca_data, rng, init):
    X = ppca_data.copy()
    mask = rng.random(X.shape) < 0.15
    X[mask] = np.nan
    m = ProbabilisticPCA(n_components=2, method="em", init=init, tol=1e-9, random_state=0).fit(X)
    hist = np.array(m.lower_bound_history_)
    assert np.all(np.diff(hist) >= -1e-10)  # EM never decreases the observed likelihood
    # score with NaN marginalises the missing coordinates: check against scipy per row.
    C = m.get_covariance()
    direct = [
        multivariate_normal(m.mean_[~np.isnan(x)], C[np.ix_(~np.isnan(x), ~np.isnan(x))]).logpdf(
            x[~np.isnan(x)]
        )
        for x in X
    ]
    np.testing.assert_allclose(m.score_samples(X), direct, rtol=1e-9)
    assert m.score(X) == pytest.approx(hist[-1], abs=1e-9)
    # A stationary point: small perturbations of (W, mu, sigma^2) do not increase it.
    best = m.score(X)
    W0, mu0, s0 = m.components_.copy(), m.mean_.copy(), m.noise_variance_
    for _ in range(5):
        m.components_ = W0 + 1e-3 * rng.normal(size=W0.shape)
        m.mean_ = mu0 + 1e-3 * rng.normal(size=mu0.shape)
        m.noise_variance_ = s0 * (1 + 1e-3 * rng.normal())
        assert m.score(X) <= best + 1e-9
    # The fit is close to the complete-data ML solution.
    cf = ProbabilisticPCA(n_components=2).fit(ppca_data)
    rel = np.linalg.norm(C - cf.get_covariance()) / np.linalg.norm(cf.get_covariance())
    assert rel < 0.2


def test_sigma_to_zero_recovers_whitened_pca(rng):
    n = 300
    X = rng.normal(size=(n, 2)) @ rng.normal(size=(2, 5)) + 1e-5 * rng.normal(size=(n, 5))
    m = ProbabilisticPCA(n_components=2).fit(X)
    pca = PCA(n_components=2, whiten=True).fit(X)
    # Lambda_N^{-1/2} U^T (x - mu) with the 1/N eigenvalues (Imperial
    # "Mathematics for Inference and Machine Learning" §2.2.1.1).
    np.testing.assert_allclose(m.transform(X), pca.transform(X) * np.sqrt(n / (n - 1)), atol=1e-6)


def test_sample_covariance(ppca_data):
    m = ProbabilisticPCA(n_components=2).fit(ppca_data)
    S = m.sample(40_000, random_state=0)
    C = m.get_covariance()
    assert np.abs(np.cov(S.T) - C).max() < 0.05 * np.abs(C).max()
    np.testing.assert_allclose(S.mean(0), m.mean_, atol=0.1)


def test_em_convergence_warning(ppca_data):
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        ProbabilisticPCA(
            n_components=2, method="em", init="random", max_iter=2, random_state=0
        ).fit(ppca_data)


def test_bad_input(ppca_data):
    X = ppca_data.copy()
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="method='em'"):
        ProbabilisticPCA(n_components=2).fit(X)
    with pytest.raises(ValueError, match="n_components"):
        ProbabilisticPCA(n_components=6).fit(ppca_data)
    with pytest.raises(ValueError, match="at least 2 samples"):
        ProbabilisticPCA(n_components=1).fit(ppca_data[:1])
    with pytest.raises(ValueError, match="subspace of dimension 2"):
        ProbabilisticPCA(n_components=2).fit(np.c_[ppca_data[:, :2], ppca_data[:, :2] * 2])
    with pytest.raises(ValueError, match=r"subspace of dimension 1 .*rank >= 2"):
        ProbabilisticPCA(n_components=3).fit(np.outer(ppca_data[:, 0], np.arange(1.0, 6.0)))
    with pytest.raises(ValueError, match="constant"):
        ProbabilisticPCA(n_components=1).fit(np.ones((5, 3)))
    Y = ppca_data.copy()
    Y[:, 3] = np.nan
    with pytest.raises(ValueError, match="every sample"):
        ProbabilisticPCA(n_components=2, method="em").fit(Y)
    with pytest.raises(ValueError, match=r"infinity|inf"):
        Z = ppca_data.copy()
        Z[1, 1] = np.inf
        ProbabilisticPCA(n_components=2, method="em").fit(Z)
    with pytest.raises(ValueError, match="method"):
        ProbabilisticPCA(method="vb").fit(ppca_data)
    with pytest.raises(ValueError, match="init"):
        ProbabilisticPCA(method="em", init="kmeans").fit(ppca_data)
    fitted = ProbabilisticPCA(n_components=2).fit(ppca_data)
    for n in (0, -1, 2.5):
        with pytest.raises(ValueError, match="n_samples"):
            fitted.sample(n)
