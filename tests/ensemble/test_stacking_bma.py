"""Stacking against scikit-learn's stacking of the same models on the same folds and a loop
written here; Bayesian model averaging against closed-form evidences and posteriors.

Stacking is deterministic given the folds, so both implementations compute the same
floating-point operations up to summation order: predictions agree to a few ulps of the
targets (1e-10 relative leaves a wide margin). The Bayesian linear regression evidence is
``N(y | 0, I / beta + X X^T / alpha)`` (PRML eq. 3.86 in its Gaussian form); computed here
with scipy's multivariate normal density, it agrees with the model's to the conditioning of
that covariance (below 1e3 here), so 1e-10 relative is ample.
"""

import numpy as np
import pytest
from scipy.special import softmax
from scipy.stats import multivariate_normal
from sklearn import ensemble as ske
from sklearn.datasets import load_diabetes, load_iris
from sklearn.model_selection import KFold, StratifiedKFold

from mathlearn.ensemble import BayesianModelAveraging, StackingClassifier, StackingRegressor
from mathlearn.linear_model import BayesianLinearRegression, LogisticRegression, Ridge
from mathlearn.model_selection import BayesianModelSelection
from mathlearn.naive_bayes import GaussianNB
from mathlearn.tree import DecisionTreeClassifier, DecisionTreeRegressor
from mathlearn.utils._param_validation import InvalidParameterError


def _reg_estimators():
    return [("ridge", Ridge(alpha=0.1)), ("tree", DecisionTreeRegressor(max_depth=3))]


def test_stacking_regressor_matches_sklearn_and_manual_loop():
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:200], y[:200]
    cv = KFold(4, shuffle=True, random_state=0)
    ours = StackingRegressor(_reg_estimators(), Ridge(alpha=0.5), cv=cv).fit(X, y)
    peer = ske.StackingRegressor(_reg_estimators(), final_estimator=Ridge(alpha=0.5), cv=cv)
    peer.fit(X, y)
    np.testing.assert_allclose(ours.predict(X), peer.predict(X), rtol=1e-10)
    # Out-of-fold features by hand, then the final ridge on them.
    Z = np.zeros((200, 2))
    for tr, te in cv.split(X):
        for j, (_, est) in enumerate(_reg_estimators()):
            Z[te, j] = est.fit(X[tr], y[tr]).predict(X[te])
    final = Ridge(alpha=0.5).fit(Z, y)
    np.testing.assert_allclose(ours.final_estimator_.coef_, final.coef_, rtol=1e-10)
    full = [est.fit(X, y).predict(X) for _, est in _reg_estimators()]
    np.testing.assert_allclose(ours.transform(X), np.column_stack(full), rtol=1e-12)


@pytest.mark.parametrize("binary", [False, True])
def test_stacking_classifier_matches_sklearn(binary):
    X, y = load_iris(return_X_y=True)
    if binary:
        X, y = X[50:], y[50:]
    est = [("nb", GaussianNB()), ("tree", DecisionTreeClassifier(max_depth=2))]
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    ours = StackingClassifier(est, LogisticRegression(), cv=cv).fit(X, y)
    peer = ske.StackingClassifier(est, final_estimator=LogisticRegression(), cv=cv).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), peer.predict_proba(X), rtol=1e-8)
    np.testing.assert_array_equal(ours.predict(X), peer.predict(X))
    # Two classes: one probability column per base model.
    assert ours.transform(X).shape[1] == (2 if binary else 6)


def test_stacking_bad_inputs():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="non-empty"):
        StackingClassifier([]).fit(X, y)
    with pytest.raises(ValueError, match="unique"):
        StackingClassifier([("a", GaussianNB()), ("a", GaussianNB())]).fit(X, y)
    with pytest.raises(InvalidParameterError):
        StackingRegressor(_reg_estimators(), cv=1).fit(X, y.astype(float))
    with pytest.raises(ValueError, match="at least 2 classes"):
        StackingClassifier([("nb", GaussianNB())]).fit(X, np.zeros(150))
    with pytest.raises(ValueError, match="smallest class"):
        StackingClassifier([("nb", GaussianNB())], cv=5).fit(X[:53], y[:53])


def _blr_reference(X, y, alphas, beta, Xq):
    """Evidences, posterior means and predictive variances of BLR with fixed precisions."""
    n, d = X.shape
    logev, means, variances = [], [], []
    for a in alphas:
        cov = np.eye(n) / beta + X @ X.T / a
        logev.append(multivariate_normal(np.zeros(n), cov).logpdf(y))
        A = a * np.eye(d) + beta * X.T @ X
        m = beta * np.linalg.solve(A, X.T @ y)
        means.append(Xq @ m)
        variances.append(1 / beta + np.einsum("ij,ji->i", Xq, np.linalg.solve(A, Xq.T)))
    return np.array(logev), np.array(means), np.array(variances)


def test_bma_against_closed_form():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((25, 3))
    y = X @ np.array([1.0, -0.5, 0.2]) + 0.3 * rng.standard_normal(25)
    alphas, beta = [0.01, 1.0, 30.0], 10.0
    Xq = rng.standard_normal((5, 3))
    model = BayesianLinearRegression(noise_precision=beta, fit_intercept=False)
    prior = np.array([0.5, 0.3, 0.2])
    bma = BayesianModelAveraging(model, {"prior_precision": alphas}, model_prior=prior)
    bma.fit(X, y)
    logev, mus, variances = _blr_reference(X, y, alphas, beta, Xq)
    np.testing.assert_allclose(bma.log_evidences_, logev, rtol=1e-10)
    post = softmax(logev + np.log(prior))
    np.testing.assert_allclose(bma.model_posterior_, post, rtol=1e-9)
    mean, std = bma.predict(Xq, return_std=True)
    ref_mean = post @ mus
    ref_var = post @ (variances + mus**2) - ref_mean**2
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-9)
    np.testing.assert_allclose(std, np.sqrt(ref_var), rtol=1e-8)
    np.testing.assert_allclose(bma.predict(Xq), ref_mean, rtol=1e-9)
    # The same posterior as model selection's, whose MAP model is one of the averaged ones.
    sel = BayesianModelSelection(model, {"prior_precision": alphas}, model_prior=prior)
    np.testing.assert_allclose(sel.fit(X, y).model_posterior_, bma.model_posterior_, rtol=1e-12)


def test_bma_bad_prior_and_far_evidences():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 2))
    y = X[:, 0] * 1e3
    model = BayesianLinearRegression(noise_precision=1.0, fit_intercept=False)
    grid = {"prior_precision": [1e-6, 1e6]}
    with pytest.raises(ValueError, match="model_prior"):
        BayesianModelAveraging(model, grid, model_prior=[0.9, 0.9]).fit(X, y)
    # Evidences thousands of nats apart: weights 1 and 0, no overflow.
    bma = BayesianModelAveraging(model, grid).fit(X, y)
    assert np.all(np.isfinite(bma.model_posterior_))
    assert bma.model_posterior_[0] == pytest.approx(1.0)


def test_stacking_sample_weight_matches_sklearn_and_manual_loop():
    """Weights reach every fold's fit, the refit and the final model, as in scikit-learn;
    integer weights on the final model equal repeating its rows."""
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:150], y[:150]
    w = np.random.default_rng(0).integers(0, 4, 150).astype(float)
    cv = KFold(3, shuffle=True, random_state=1)
    ours = StackingRegressor(_reg_estimators(), Ridge(alpha=0.5), cv=cv).fit(X, y, w)
    peer = ske.StackingRegressor(_reg_estimators(), final_estimator=Ridge(alpha=0.5), cv=cv)
    peer.fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.predict(X), peer.predict(X), rtol=1e-10)
    Z = np.zeros((150, 2))
    for tr, te in cv.split(X):
        for j, (_, est) in enumerate(_reg_estimators()):
            Z[te, j] = est.fit(X[tr], y[tr], sample_weight=w[tr]).predict(X[te])
    rep = np.repeat(np.arange(150), w.astype(int))
    final = Ridge(alpha=0.5).fit(Z[rep], y[rep])
    np.testing.assert_allclose(ours.final_estimator_.coef_, final.coef_, rtol=1e-10)
    # Unweighted fit differs (the weights matter).
    plain = StackingRegressor(_reg_estimators(), Ridge(alpha=0.5), cv=cv).fit(X, y)
    assert not np.allclose(plain.predict(X), ours.predict(X))


def test_stacking_classifier_sample_weight_matches_sklearn():
    X, y = load_iris(return_X_y=True)
    w = np.random.default_rng(1).uniform(0.2, 2.0, 150)
    est = [("nb", GaussianNB()), ("tree", DecisionTreeClassifier(max_depth=2))]
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    ours = StackingClassifier(est, LogisticRegression(), cv=cv).fit(X, y, sample_weight=w)
    peer = ske.StackingClassifier(est, final_estimator=LogisticRegression(), cv=cv)
    peer.fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.predict_proba(X), peer.predict_proba(X), rtol=1e-8)


def test_stacking_sample_weight_needs_support():
    from mathlearn.neighbors import KNeighborsRegressor

    X, y = load_diabetes(return_X_y=True)
    est = [("knn", KNeighborsRegressor(3)), ("ridge", Ridge())]
    with pytest.raises(ValueError, match=r"knn .*does not accept sample_weight"):
        StackingRegressor(est, cv=3).fit(X[:60], y[:60], sample_weight=np.ones(60))
    with pytest.raises(ValueError, match="sample_weight"):
        StackingRegressor(_reg_estimators(), cv=3).fit(X[:60], y[:60], np.ones(59))
