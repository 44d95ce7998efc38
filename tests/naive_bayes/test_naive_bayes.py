"""Naive Bayes against scikit-learn's on the same data, the notes' Bayesian estimate, and
partial_fit against one fit."""

import numpy as np
import pytest
from sklearn import naive_bayes as sk

from mathlearn.exceptions import InvalidParameterError
from mathlearn.naive_bayes import BernoulliNB, GaussianNB, MultinomialNB

# Sums of a few hundred terms in log space: agreement to ~1e-13 absolute; 1e-12 leaves room.
ATOL = 1e-12


def _data(seed=0, n=300):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.standard_normal((n, 5)) + np.arange(5) + (y == 1)[:, None]
    counts = rng.poisson(1.0 + y[:, None] * np.linspace(0, 1, 8), (n, 8)).astype(float)
    sw = rng.uniform(0.1, 2.0, n)
    return X, counts, y, sw


@pytest.mark.parametrize("weighted", [False, True])
def test_gaussian_matches_sklearn(weighted):
    X, _, y, sw = _data()
    sw = sw if weighted else None
    # scikit-learn's epsilon uses the unweighted variance of X, ours the weighted one.
    vs = 0.0 if weighted else 1e-9
    ours = GaussianNB(var_smoothing=vs).fit(X, y, sample_weight=sw)
    ref = sk.GaussianNB(var_smoothing=vs).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.theta_, ref.theta_, rtol=1e-13)
    np.testing.assert_allclose(ours.var_, ref.var_, rtol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=ATOL)
    np.testing.assert_allclose(np.exp(ours.class_log_prior_), ref.class_prior_, rtol=1e-13)


@pytest.mark.parametrize("alpha", [1.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_discrete_match_sklearn(alpha, weighted):
    _, C, y, sw = _data(1)
    sw = sw if weighted else None
    ours = MultinomialNB(alpha=alpha).fit(C, y, sample_weight=sw)
    ref = sk.MultinomialNB(alpha=alpha).fit(C, y, sample_weight=sw)
    np.testing.assert_allclose(ours.feature_log_prob_, ref.feature_log_prob_, rtol=1e-13)
    np.testing.assert_allclose(ours.class_log_prior_, ref.class_log_prior_, rtol=1e-13)
    np.testing.assert_allclose(ours.predict_proba(C), ref.predict_proba(C), atol=ATOL)
    ours = BernoulliNB(alpha=alpha, binarize=1.0).fit(C, y, sample_weight=sw)
    ref = sk.BernoulliNB(alpha=alpha, binarize=1.0).fit(C, y, sample_weight=sw)
    np.testing.assert_allclose(ours.feature_log_prob_, ref.feature_log_prob_, rtol=1e-13)
    np.testing.assert_allclose(ours.predict_proba(C), ref.predict_proba(C), atol=ATOL)


def test_bernoulli_bayesian_predictive_is_the_notes_formula():
    # Oxford "Advanced Topics in Statistical Machine Learning" §7.2: p(y = k | x, D) ∝ (a_k +
    # n_k)/(Σa + n) Π_j ((α + n_kj)/(2α + n_k))^{x_j} ((α + n_k - n_kj)/(2α + n_k))^{1 - x_j}, here
    # with a Dirichlet(2) class prior and Beta(0.5, 0.5) feature priors; n_kj counted by hand.
    X = np.array([[1, 0, 1], [1, 1, 0], [0, 0, 1], [0, 1, 1], [1, 1, 1]])
    y = np.array([0, 0, 0, 1, 1])
    clf = BernoulliNB(alpha=0.5, binarize=None, class_prior_alpha=2.0).fit(X, y)
    n_k = np.array([3.0, 2.0])
    n_kj = np.array([[2.0, 1.0, 2.0], [1.0, 2.0, 2.0]])
    phi = (n_kj + 0.5) / (n_k[:, None] + 1.0)
    prior = (n_k + 2.0) / (5 + 4.0)
    x = np.array([0, 1, 0])
    joint = prior * np.prod(np.where(x == 1, phi, 1 - phi), axis=1)
    np.testing.assert_allclose(clf.predict_proba([x])[0], joint / joint.sum(), rtol=1e-14)


def test_maximum_likelihood_zero_count_pitfall():
    X = np.array([[1, 0], [1, 0], [0, 1], [0, 0]])
    y = np.array([0, 0, 1, 1])
    ml = BernoulliNB(alpha=0.0, binarize=None).fit(X, y)
    # Feature 1 never on in class 0: p(y = 0 | x = [0, 1]) = 0 exactly, not NaN.
    np.testing.assert_array_equal(ml.predict_proba([[0, 1]]), [[0.0, 1.0]])
    # x = [1, 1] is impossible under both classes: an error, not NaN.
    with pytest.raises(ValueError, match="probability zero under every class"):
        ml.predict_proba([[1, 1]])
    # The Bayesian estimate keeps every probability positive.
    bayes = BernoulliNB(alpha=1.0, binarize=None).fit(X, y)
    assert np.all(bayes.predict_proba([[1, 1]]) > 0)
    C = np.array([[2, 0, 1], [3, 0, 0], [0, 2, 1], [0, 1, 2]])
    mnb = MultinomialNB(alpha=0.0).fit(C, y)
    np.testing.assert_array_equal(mnb.predict_proba([[1, 0, 0]]), [[1.0, 0.0]])
    with pytest.raises(ValueError, match="every class"):
        mnb.predict([[1, 1, 0]])


@pytest.mark.parametrize("cls", [GaussianNB, MultinomialNB, BernoulliNB])
def test_partial_fit_equals_fit(cls):
    X, C, y, sw = _data(2)
    data = X if cls is GaussianNB else C
    full = cls().fit(data, y, sample_weight=sw)
    inc = cls()
    for chunk in np.array_split(np.arange(len(y)), 7):
        inc.partial_fit(data[chunk], y[chunk], classes=[0, 1, 2], sample_weight=sw[chunk])
    np.testing.assert_allclose(inc.predict_proba(data), full.predict_proba(data), atol=1e-12)
    np.testing.assert_allclose(inc.class_count_, full.class_count_, rtol=1e-13)


def test_gaussian_far_from_origin_and_scale():
    X, _, y, _ = _data(3)
    base = GaussianNB().fit(X, y).predict_proba(X)
    # Shifting by 1e6 loses ~1e6 * eps = 2e-10 in each coordinate; the log-densities move by
    # that over sigma ~ 1 times the standardised deviation: well below 1e-7.
    np.testing.assert_allclose(
        GaussianNB().fit(X + 1e6, y).predict_proba(X + 1e6), base, atol=1e-7
    )
    np.testing.assert_allclose(
        GaussianNB().fit(X * 1e-150, y).predict_proba(X * 1e-150), base, atol=1e-10
    )


def test_bad_inputs():
    X, C, y, _ = _data(4, n=30)
    for cls, data in ((GaussianNB, X), (MultinomialNB, C), (BernoulliNB, C)):
        with pytest.raises(ValueError, match="at least 2 classes"):
            cls().fit(data, np.zeros(30))
        names = np.array(["a", "b", "c"])[y]
        np.testing.assert_array_equal(
            cls().fit(data, names).predict(data),
            np.array(["a", "b", "c"])[cls().fit(data, y).predict(data)],
        )
        bad = data.copy()
        bad[0, 0] = np.nan
        with pytest.raises(ValueError, match="NaN"):
            cls().fit(bad, y)
        with pytest.raises(ValueError, match="non-zero"):
            cls().fit(data, y, sample_weight=np.zeros(30))
        with pytest.raises(ValueError, match="classes must be passed"):
            cls().partial_fit(data, y)
        est = cls().partial_fit(data, y, classes=[0, 1, 2])
        with pytest.raises(ValueError, match="not in classes"):
            est.partial_fit(data[:3], [0, 1, 5])
    with pytest.raises(ValueError, match="Negative values"):
        MultinomialNB().fit(-C, y)
    with pytest.raises(ValueError, match="only 0 and 1"):
        BernoulliNB(binarize=None).fit(C + 2, y)
    Xc = X.copy()
    Xc[y == 0, 1] = 3.0
    Xc[:, 1] = np.where(y == 0, 3.0, Xc[:, 1])
    GaussianNB().fit(Xc, y)  # constant within a class: var_smoothing copes
    with pytest.raises(ValueError, match="zero variance"):
        GaussianNB(var_smoothing=0.0).fit(Xc, y)
    with pytest.raises(InvalidParameterError, match="alpha"):
        MultinomialNB(alpha=-1.0).fit(C, y)


@pytest.mark.parametrize(("n", "d"), [(7, 3), (9000, 4), (40, 2500)])
def test_blocked_class_sums_equal_the_masked_sums(n, d):
    # blocks of rows in every shape: one block, several, a few rows per block
    from mathlearn.naive_bayes._gaussian import _class_sums

    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d)) + 100.0
    y = rng.integers(0, 3, n)
    y[:3] = np.arange(3)
    w = rng.uniform(0.5, 2.0, n)
    masks = [y == k for k in range(3)]
    means = np.array([X[m].mean(0) for m in masks])
    # sums of n terms of size ~100 (relative rounding n eps), squares of residuals ~1
    np.testing.assert_allclose(
        _class_sums(X, y, None, 3), [X[m].sum(0) for m in masks], rtol=1e-12
    )
    np.testing.assert_allclose(_class_sums(X, y, w, 3), [w[m] @ X[m] for m in masks], rtol=1e-12)
    sq = [((X[m] - means[k]) ** 2).sum(0) for k, m in enumerate(masks)]
    np.testing.assert_allclose(_class_sums(X, y, None, 3, center=means), sq, rtol=1e-11)
