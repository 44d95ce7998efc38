import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.linear_model import Ridge as SkRidge
from sklearn.pipeline import make_pipeline

from mathlearn.datasets import make_sinusoidal, make_sinusoidal_imperial
from mathlearn.linear_model import BayesianLinearRegression
from mathlearn.model_selection import BayesianModelSelection
from mathlearn.preprocessing import GaussianBasis, PolynomialBasis


def test_evidence_curve_matches_closed_form():
    X, y = make_sinusoidal(20, random_state=0)
    alpha, beta = 0.5, 1 / 0.3**2
    pipe = make_pipeline(
        PolynomialBasis(),
        BayesianLinearRegression(fit_intercept=False, prior_precision=alpha, noise_precision=beta),
    )
    degrees = list(range(8))
    sel = BayesianModelSelection(pipe, {"polynomialbasis__degree": degrees}).fit(X, y)
    for d, log_ev in zip(degrees, sel.log_evidences_, strict=True):
        Phi = PolynomialBasis(degree=d).fit_transform(X)
        # Imperial "Mathematics for Inference and Machine Learning" eq. 1.207
        cov = np.eye(20) / beta + Phi @ Phi.T / alpha
        assert log_ev == pytest.approx(multivariate_normal(np.zeros(20), cov).logpdf(y), rel=1e-10)
    assert sel.best_index_ == int(np.argmax(sel.log_evidences_))
    assert sel.model_posterior_.sum() == pytest.approx(1.0)
    # model averaging (eq. 1.200): ln p(D) = ln sum_k p(M_k) p(D | M_k), uniform p(M_k)
    total = np.log(np.mean(np.exp(sel.log_evidences_)))
    assert sel.model_averaged_log_evidence_ == pytest.approx(total, rel=1e-12)
    # posterior odds under a uniform prior are the Bayes factors (eq. 1.198–1.199)
    i, j = 3, 1
    assert sel.model_posterior_[i] / sel.model_posterior_[j] == pytest.approx(
        np.exp(sel.log_evidences_[i] - sel.log_evidences_[j]), rel=1e-9
    )


def test_occam_razor_on_sinusoid():
    # low degrees cannot fit sin(2 pi x); the evidence peaks at a moderate degree
    X, y = make_sinusoidal(60, noise=0.2, random_state=1)
    pipe = make_pipeline(PolynomialBasis(), BayesianLinearRegression(fit_intercept=False))
    sel = BayesianModelSelection(pipe, {"polynomialbasis__degree": list(range(10))}).fit(X, y)
    assert 3 <= sel.best_params_["polynomialbasis__degree"] <= 9
    assert sel.log_evidences_[0] < sel.log_evidences_[sel.best_index_] - 10
    best = sel.best_estimator_
    np.testing.assert_allclose(sel.predict(X), best.predict(X))
    mean, std = sel.predict(X, return_std=True)
    assert std.shape == mean.shape


def test_gaussian_width_selection_and_prior():
    X, y = make_sinusoidal_imperial(40, random_state=2)
    pipe = make_pipeline(
        GaussianBasis(n_centres=12, include_bias=True),
        BayesianLinearRegression(fit_intercept=False),
    )
    widths = [0.05, 0.3, 1.0, 3.0]
    sel = BayesianModelSelection(pipe, {"gaussianbasis__width": widths}).fit(X, y)
    assert sel.best_params_["gaussianbasis__width"] in (0.3, 1.0, 3.0)
    # a prior that rules out the evidence winner moves the MAP model
    prior = np.full(4, 1 / 3)
    prior[sel.best_index_] = 0.0
    sel2 = BayesianModelSelection(pipe, {"gaussianbasis__width": widths}, model_prior=prior).fit(
        X, y
    )
    assert sel2.best_index_ != sel.best_index_
    assert sel2.model_posterior_[sel.best_index_] == 0.0
    total = np.log(np.sum(prior * np.exp(sel2.log_evidences_)))
    assert sel2.model_averaged_log_evidence_ == pytest.approx(total, rel=1e-12)


def test_bad_input():
    X, y = make_sinusoidal(10, random_state=0)
    with pytest.raises(TypeError, match="log_evidence_"):
        BayesianModelSelection(SkRidge(), {"alpha": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="model_prior"):
        BayesianModelSelection(
            BayesianLinearRegression(fit_intercept=False),
            {"prior_precision": [1.0, 2.0]},
            model_prior=[0.5],
        ).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        BayesianModelSelection().fit(np.array([[np.nan]] * 3), np.ones(3))
