"""AIC and BIC of every likelihood-based estimator, through the shared mixin.

References: the log-likelihood of each model written out in the test from the fitted
parameters (scipy.stats densities), the closed form of OLS, parameter counts by hand, and
statsmodels (OLS, Logit, MNLogit) and scikit-learn's GaussianMixture where installed.
"""

import numpy as np
import pytest
from scipy import stats
from sklearn.mixture import GaussianMixture as SkGaussianMixture

from mathlearn.base import InformationCriterionMixin
from mathlearn.decomposition import PCA, FactorAnalysis, ProbabilisticPCA
from mathlearn.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)
from mathlearn.linear_model import LinearRegression, LogisticRegression
from mathlearn.mixture import BernoulliMixture, GaussianMixture
from mathlearn.naive_bayes import BernoulliNB, GaussianNB, MultinomialNB


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((80, 3))
    y = X @ np.array([1.0, 2.0, -1.0]) + 1.0 + 0.5 * rng.standard_normal(80)
    labels = np.digitize(X[:, 0] + 0.8 * rng.standard_normal(80), [-0.5, 0.5])
    return X, y, labels


def _ic(loglik, m, n):
    return -2 * loglik + 2 * m, -2 * loglik + m * np.log(n)


def test_ols_closed_form(data):
    X, y, _ = data
    n, d = X.shape
    model = LinearRegression().fit(X, y)
    A = np.hstack([X, np.ones((n, 1))])
    rss = np.sum((y - A @ np.linalg.lstsq(A, y, rcond=None)[0]) ** 2)
    # p = d + 1 coefficients and sigma^2.
    aic = n * np.log(2 * np.pi * rss / n) + n + 2 * (d + 2)
    bic = n * np.log(2 * np.pi * rss / n) + n + (d + 2) * np.log(n)
    # The log-likelihood is O(n) with cancellation-free terms: relative rounding ~1e-14.
    assert model.aic(X, y) == pytest.approx(aic, rel=1e-12)
    assert model.bic(X, y) == pytest.approx(bic, rel=1e-12)
    assert model.n_parameters_ == d + 2
    assert LinearRegression(fit_intercept=False).fit(X, y).n_parameters_ == d + 1


def test_ols_rank_deficient_counts_rank(data):
    X, y, _ = data
    Xd = np.hstack([X, X[:, :1] * 2.0])
    assert LinearRegression().fit(Xd, y).n_parameters_ == X.shape[1] + 2


def test_ols_statsmodels(data):
    sm = pytest.importorskip("statsmodels.api")
    X, y, _ = data
    ref = sm.OLS(y, sm.add_constant(X)).fit()
    model = LinearRegression().fit(X, y)
    # statsmodels does not count sigma^2 among the parameters.
    assert model.aic(X, y) == pytest.approx(ref.aic + 2, rel=1e-12)
    assert model.bic(X, y) == pytest.approx(ref.bic + np.log(X.shape[0]), rel=1e-12)


def test_ols_new_data_uses_fitted_variance(data):
    X, y, _ = data
    model = LinearRegression().fit(X[:50], y[:50])
    r = y[50:] - model.predict(X[50:])
    loglik = np.sum(stats.norm.logpdf(r, scale=np.sqrt(model.noise_variance_)))
    assert model.aic(X[50:], y[50:]) == pytest.approx(
        -2 * loglik + 2 * model.n_parameters_, rel=1e-12
    )


def test_ols_extreme_scale(data):
    X, y, _ = data
    n = X.shape[0]
    small = LinearRegression().fit(X, y)
    for s in (1e-150, 1e150):
        big = LinearRegression().fit(X, y * s)
        # Scaling y by s multiplies the density by s^-n: AIC shifts by 2 n ln s.
        assert big.aic(X, y * s) == pytest.approx(small.aic(X, y) + 2 * n * np.log(s), rel=1e-12)


def test_ols_interpolation_raises():
    X = np.array([[0.0], [1.0]])
    with pytest.raises(ValueError, match="interpolates"):
        LinearRegression().fit(X, [1.0, 2.0]).aic(X, [1.0, 2.0])


def test_supervised_needs_y(data):
    X, y, labels = data
    with pytest.raises(ValueError, match="need the targets y"):
        LinearRegression().fit(X, y).aic(X)
    with pytest.raises(ValueError, match="need the labels y"):
        GaussianNB().fit(X, labels).bic(X)
    with pytest.raises(ValueError, match="not seen in fit"):
        LinearDiscriminantAnalysis().fit(X, labels).aic(X, labels + 7)


def _logistic_loglik(clf, X, labels):
    Z = X @ clf.coef_.T + clf.intercept_
    if Z.shape[1] == 1:
        Z = np.hstack([np.zeros_like(Z), Z])
    idx = np.searchsorted(clf.classes_, labels)
    logp = Z - np.log(np.exp(Z).sum(axis=1, keepdims=True))
    return logp[np.arange(len(idx)), idx].sum()


@pytest.mark.parametrize("n_classes", [2, 3])
def test_logistic_closed_form(data, n_classes):
    X, _, labels = data
    labels = labels if n_classes == 3 else (labels > 0).astype(int)
    clf = LogisticRegression(penalty=None, solver="newton", tol=1e-10).fit(X, labels)
    m = (n_classes - 1) * (X.shape[1] + 1)
    assert clf.n_parameters_ == m
    aic, bic = _ic(_logistic_loglik(clf, X, labels), m, X.shape[0])
    assert clf.aic(X, labels) == pytest.approx(aic, rel=1e-12)
    assert clf.bic(X, labels) == pytest.approx(bic, rel=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_logistic_statsmodels(data, n_classes):
    sm = pytest.importorskip("statsmodels.api")
    X, _, labels = data
    labels = labels if n_classes == 3 else (labels > 0).astype(int)
    clf = LogisticRegression(penalty=None, solver="newton", tol=1e-10).fit(X, labels)
    model = sm.Logit if n_classes == 2 else sm.MNLogit
    ref = model(labels, sm.add_constant(X)).fit(disp=0, method="newton", tol=1e-12)
    # Both at the maximum: the log-likelihood differs by O(gradient^2 / curvature) ~ 1e-20.
    assert clf.aic(X, labels) == pytest.approx(ref.aic, rel=1e-9)
    assert clf.bic(X, labels) == pytest.approx(ref.bic, rel=1e-9)


def test_logistic_penalised_refuses(data):
    X, _, labels = data
    with pytest.raises(ValueError, match="maximum-likelihood fit only"):
        LogisticRegression(C=1.0).fit(X, labels).aic(X, labels)
    unpenalised = LogisticRegression(C=np.inf, solver="newton", tol=1e-10).fit(X, labels)
    assert np.isfinite(unpenalised.aic(X, labels))


def test_gaussian_nb(data):
    X, _, labels = data
    clf = GaussianNB(var_smoothing=0.0).fit(X, labels)
    K, d = 3, X.shape[1]
    loglik = sum(
        np.log(np.mean(labels == k))
        + stats.norm.logpdf(X[i], clf.theta_[k], np.sqrt(clf.var_[k])).sum()
        for i, k in enumerate(labels)
    )
    assert clf.n_parameters_ == 2 * K * d + K - 1
    aic, bic = _ic(loglik, 2 * K * d + K - 1, len(labels))
    assert clf.aic(X, labels) == pytest.approx(aic, rel=1e-12)
    assert clf.bic(X, labels) == pytest.approx(bic, rel=1e-12)
    fixed = GaussianNB(class_prior=[0.2, 0.3, 0.5]).fit(X, labels)
    assert fixed.n_parameters_ == 2 * K * d


def test_bernoulli_nb(data):
    X, _, labels = data
    clf = BernoulliNB(alpha=0.0).fit(X, labels)
    B = (X > 0).astype(int)
    phi = np.exp(clf.feature_log_prob_)
    loglik = sum(
        np.log(np.mean(labels == k)) + stats.bernoulli.logpmf(B[i], phi[k]).sum()
        for i, k in enumerate(labels)
    )
    assert clf.n_parameters_ == 3 * X.shape[1] + 2
    assert clf.aic(X, labels) == pytest.approx(-2 * loglik + 2 * clf.n_parameters_, rel=1e-12)


def test_multinomial_nb_counts_likelihood():
    rng = np.random.default_rng(0)
    labels = np.repeat([0, 1], 20)
    theta = np.array([[0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4]])
    X = np.vstack([rng.multinomial(12, theta[k]) for k in labels]).astype(float)
    clf = MultinomialNB(alpha=1.0).fit(X, labels)
    th = np.exp(clf.feature_log_prob_)
    loglik = sum(
        np.log(0.5) + stats.multinomial.logpmf(X[i], X[i].sum(), th[k])
        for i, k in enumerate(labels)
    )
    assert clf.n_parameters_ == 2 * 3 + 1
    assert clf.bic(X, labels) == pytest.approx(
        -2 * loglik + clf.n_parameters_ * np.log(40), rel=1e-12
    )


@pytest.mark.parametrize("qda", [False, True])
def test_discriminant_analysis(data, qda):
    X, _, labels = data
    K, d = 3, X.shape[1]
    clf = (QuadraticDiscriminantAnalysis() if qda else LinearDiscriminantAnalysis()).fit(X, labels)
    covs = clf.covariance_ if qda else [clf.covariance_] * K
    loglik = sum(
        np.log(clf.priors_[k]) + stats.multivariate_normal.logpdf(X[i], clf.means_[k], covs[k])
        for i, k in enumerate(labels)
    )
    m = K - 1 + K * d + (K if qda else 1) * d * (d + 1) // 2
    assert clf.n_parameters_ == m
    aic, bic = _ic(loglik, m, len(labels))
    assert clf.aic(X, labels) == pytest.approx(aic, rel=1e-12)
    assert clf.bic(X, labels) == pytest.approx(bic, rel=1e-12)


def test_discriminant_analysis_far_from_origin(data):
    X, _, labels = data
    n, d = X.shape
    ref = QuadraticDiscriminantAnalysis().fit(X, labels).aic(X, labels)
    s = 2.0**600
    clf = QuadraticDiscriminantAnalysis().fit(X * s, labels)
    # The density of s x is s^-d that of x.
    assert clf.aic(X * s, labels) == pytest.approx(ref + 2 * n * d * np.log(s), rel=1e-12)


@pytest.mark.parametrize("cls", [ProbabilisticPCA, FactorAnalysis])
def test_latent_gaussian_models(cls):
    rng = np.random.default_rng(1)
    D, q, n = 5, 2, 120
    X = rng.standard_normal((n, q)) @ rng.standard_normal((q, D)) + 0.3 * rng.standard_normal(
        (n, D)
    )
    model = cls(n_components=q).fit(X)
    loglik = stats.multivariate_normal.logpdf(X, model.mean_, model.get_covariance()).sum()
    # W up to a q x q rotation, mu, and sigma^2 (PPCA) or Psi (FA): 10 - 1 + 5 + 1 or + 5.
    m = {ProbabilisticPCA: 15, FactorAnalysis: 19}[cls]
    assert model.n_parameters_ == m
    aic, bic = _ic(loglik, m, n)
    assert model.aic(X) == pytest.approx(aic, rel=1e-10)
    assert model.bic(X) == pytest.approx(bic, rel=1e-10)


@pytest.mark.parametrize("q", [2, 5])
def test_pca_likelihood_matches_sklearn(q):
    from sklearn.decomposition import PCA as SkPCA

    rng = np.random.default_rng(4)
    D, n = 5, 100
    X = rng.standard_normal((n, D)) @ rng.standard_normal((D, D))
    ours = PCA(n_components=q).fit(X)
    ref = SkPCA(n_components=q).fit(X)
    # PPCA reading of PCA: W up to rotation, mu, and sigma^2 only when components are dropped.
    m = D * q - q * (q - 1) // 2 + D + int(q < D)
    assert ours.n_parameters_ == m
    aic, bic = _ic(n * ref.score(X), m, n)
    assert ours.aic(X) == pytest.approx(aic, rel=1e-10)
    assert ours.bic(X) == pytest.approx(bic, rel=1e-10)


@pytest.mark.parametrize("covariance_type", ["full", "diag", "tied", "spherical"])
def test_gaussian_mixture_counts_and_sklearn(covariance_type):
    rng = np.random.default_rng(2)
    X = np.vstack([rng.standard_normal((60, 3)) + c for c in ([0, 0, 0], [4, 4, 0])])
    K, D = 2, 3
    kw = dict(covariance_type=covariance_type, tol=1e-12, max_iter=500, random_state=0)
    ours = GaussianMixture(K, **kw).fit(X)
    m = {
        "full": K * (D + D * (D + 1) // 2) + K - 1,
        "diag": K * 2 * D + K - 1,
        "tied": K * D + D * (D + 1) // 2 + K - 1,
        "spherical": K * (D + 1) + K - 1,
    }[covariance_type]
    assert ours.n_parameters_ == m
    ref = SkGaussianMixture(K, **kw).fit(X)
    # Two well-separated clusters: both EMs converge to the same maximum to ~1e-13.
    assert ours.aic(X) == pytest.approx(ref.aic(X), rel=1e-10)
    assert ours.bic(X) == pytest.approx(ref.bic(X), rel=1e-10)


def test_bernoulli_mixture_counts():
    rng = np.random.default_rng(0)
    X = (rng.random((50, 4)) < 0.5).astype(float)
    bm = BernoulliMixture(3, random_state=0).fit(X)
    assert bm.n_parameters_ == 3 * 4 + 2
    assert bm.aic(X) == pytest.approx(-2 * bm.score_samples(X).sum() + 28, rel=1e-12)


def test_mixin_is_shared():
    for cls in (
        GaussianMixture,
        BernoulliMixture,
        LinearRegression,
        LogisticRegression,
        GaussianNB,
        BernoulliNB,
        MultinomialNB,
        LinearDiscriminantAnalysis,
        QuadraticDiscriminantAnalysis,
        ProbabilisticPCA,
        FactorAnalysis,
        PCA,
    ):
        assert issubclass(cls, InformationCriterionMixin)
        assert cls.aic is InformationCriterionMixin.aic


def test_not_fitted():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        LinearRegression().aic(np.zeros((2, 1)), np.zeros(2))
    assert not hasattr(GaussianNB(), "n_parameters_")
