"""EM mixtures and naive Bayes on Dask arrays equal their NumPy fits on the same data.

Mixtures from the same initialisation: the EM driver runs the same iterations (the per-block
sufficient statistics are the sums the NumPy M-step forms), so the bounds agree to rounding
at every iteration, the iteration counts and partitions are the same. Naive Bayes: counts
are exact; class moments merged across blocks agree to rounding.
"""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from mathlearn.mixture import BernoulliMixture, GaussianMixture  # noqa: E402
from mathlearn.naive_bayes import BernoulliNB, GaussianNB, MultinomialNB  # noqa: E402

RTOL = 1e-10


def _gmm_data(seed=0):
    rng = np.random.default_rng(seed)
    C = np.array([[0.0, 0.0], [6.0, 1.0], [1.0, 7.0]])
    parts = [c + rng.normal(size=(200, 2)) @ rng.normal(size=(2, 2)) for c in C]
    X = np.vstack(parts) + 10.0
    rng.shuffle(X)
    return X, rng.uniform(0.2, 2.0, len(X))


@pytest.mark.parametrize(
    ("covariance_type", "weighted"),
    [("full", False), ("tied", True), ("diag", False), ("spherical", True)],
)
def test_gaussian_mixture_same_start_same_run(covariance_type, weighted):
    X, sw = _gmm_data()
    w = sw if weighted else None
    params = dict(
        n_components=3,
        covariance_type=covariance_type,
        init_params="random_from_data",
        random_state=1,
        max_iter=500,
        tol=1e-6,
    )
    ref = GaussianMixture(**params)
    labels_ref = ref.fit_predict(X, sample_weight=w)
    Xd = da.from_array(X, chunks=(160, 2))
    m = GaussianMixture(**params)
    labels = m.fit_predict(Xd, sample_weight=w)
    assert isinstance(labels, da.Array)
    np.testing.assert_array_equal(labels.compute(), labels_ref)
    assert m.n_iter_ == ref.n_iter_
    # the first bounds are those of a start whose covariances are reg_covar: ~1e6 in size
    np.testing.assert_allclose(m.lower_bounds_, ref.lower_bounds_, rtol=1e-9)
    assert m.lower_bound_ == pytest.approx(ref.lower_bound_, rel=RTOL)
    np.testing.assert_allclose(m.means_, ref.means_, rtol=RTOL)
    np.testing.assert_allclose(m.covariances_, ref.covariances_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(m.weights_, ref.weights_, rtol=1e-9)
    np.testing.assert_allclose(m.score_samples(Xd).compute(), ref.score_samples(X), rtol=RTOL)
    np.testing.assert_allclose(
        m.predict_proba(Xd).compute(), ref.predict_proba(X), rtol=0, atol=1e-9
    )


def test_gaussian_mixture_kmeans_start_reaches_the_numpy_optimum():
    # A different (Dask) k-means start, the same well-separated optimum.
    X, _ = _gmm_data(3)
    ref = GaussianMixture(3, random_state=0, tol=1e-8).fit(X)
    m = GaussianMixture(3, random_state=0, tol=1e-8).fit(da.from_array(X, chunks=(160, 2)))
    assert m.lower_bound_ == pytest.approx(ref.lower_bound_, rel=1e-6)


@pytest.mark.parametrize("init_params", ["random", "random_from_data"])
def test_bernoulli_mixture_same_start_same_run(init_params):
    rng = np.random.default_rng(4)
    probs = np.repeat(rng.random((2, 6)), 300, axis=0)
    X = (rng.random((600, 6)) < probs).astype(float)
    params = dict(n_components=2, init_params=init_params, random_state=3, tol=1e-6, max_iter=300)
    ref = BernoulliMixture(**params).fit(X)
    m = BernoulliMixture(**params).fit(da.from_array(X, chunks=(150, 6)))
    assert m.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(m.lower_bounds_, ref.lower_bounds_, rtol=RTOL)
    np.testing.assert_allclose(m.means_, ref.means_, rtol=RTOL)
    np.testing.assert_allclose(m.weights_, ref.weights_, rtol=RTOL)


def _nb_data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(600, 4)) + np.repeat(rng.normal(size=(3, 4)) * 2, 200, axis=0)
    y = np.repeat(np.array(["a", "b", "c"]), 200)
    p = rng.permutation(600)
    return X[p], y[p], rng.uniform(0.0, 2.0, 600)


@pytest.mark.parametrize("weighted", [False, True])
def test_gaussian_nb_matches_numpy(weighted):
    X, y, sw = _nb_data()
    w = sw if weighted else None
    ref = GaussianNB().fit(X, y, sample_weight=w)
    Xd = da.from_array(X, chunks=(150, 4))
    m = GaussianNB().fit(Xd, da.from_array(y, chunks=150), sample_weight=w)
    np.testing.assert_array_equal(m.classes_, ref.classes_)
    np.testing.assert_allclose(m.class_count_, ref.class_count_, rtol=RTOL)
    np.testing.assert_allclose(m.theta_, ref.theta_, rtol=RTOL)
    np.testing.assert_allclose(m.var_, ref.var_, rtol=RTOL)
    # an independent reference: the class means and (biased) variances written out
    W = np.ones(len(y)) if w is None else w
    for k, c in enumerate(ref.classes_):
        Wk, Xk = W[y == c], X[y == c]
        mu = Wk @ Xk / Wk.sum()
        np.testing.assert_allclose(m.theta_[k], mu, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(
            m.var_[k] - m.epsilon_, Wk @ (Xk - mu) ** 2 / Wk.sum(), rtol=1e-10
        )
    pred = m.predict(Xd)
    assert isinstance(pred, da.Array)
    np.testing.assert_array_equal(pred.compute(), ref.predict(X))
    np.testing.assert_allclose(m.predict_proba(Xd).compute(), ref.predict_proba(X), atol=1e-12)


@pytest.mark.parametrize("estimator", [BernoulliNB(binarize=1.5), MultinomialNB()])
def test_discrete_nb_counts_match_numpy(estimator):
    X, y, sw = _nb_data(1)
    C = np.random.default_rng(2).poisson(2.0, size=X.shape).astype(float)
    ref = type(estimator)(**estimator.get_params()).fit(C, y, sample_weight=sw)
    Cd = da.from_array(C, chunks=(150, 4))
    m = type(estimator)(**estimator.get_params()).fit(
        Cd, da.from_array(y, chunks=150), sample_weight=sw
    )
    np.testing.assert_allclose(m.class_count_, ref.class_count_, rtol=1e-14)
    np.testing.assert_allclose(m.feature_count_, ref.feature_count_, rtol=1e-14)
    np.testing.assert_allclose(m.feature_log_prob_, ref.feature_log_prob_, rtol=1e-13)
    np.testing.assert_array_equal(m.predict(Cd).compute(), ref.predict(C))
