"""The Dask paths on a distributed cluster: two worker processes on the loopback interface
with memory limits, a worker killed in the middle of a fit, and the threaded scheduler.

Every block's work is a pure function of its inputs and the blocks' results are combined
in a fixed order, so the scheduler (threads, processes, a cluster) and a retried task change
nothing: the answers equal those of the NumPy fit on the same data as in the other tests.
"""

import os
import signal

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

from sklearn.base import clone  # noqa: E402

from mathlearn.cluster import KMeans  # noqa: E402
from mathlearn.decomposition import PCA, LatentDirichletAllocation  # noqa: E402
from mathlearn.exceptions import ConvergenceWarning  # noqa: E402
from mathlearn.linear_model import BayesianLinearRegression, LinearRegression, Ridge  # noqa: E402
from mathlearn.mixture import BernoulliMixture, GaussianMixture  # noqa: E402
from mathlearn.naive_bayes import GaussianNB, MultinomialNB  # noqa: E402

RTOL = 1e-10


# Few blocks and starts near the optimum: each pass over the blocks is a round trip to the
# scheduler, so the tests keep the number of passes small.
CENTRES = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 7.0]])


def _blobs(seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([c + rng.normal(size=(300, 2)) for c in CENTRES])
    return X[rng.permutation(len(X))]


def _vander(seed=7, n=120, degree=12):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-9, -3, n)
    return np.vander(x, degree + 1, increasing=True), np.cos(x) + 0.01 * rng.normal(size=n)


def test_fits_on_a_local_cluster_equal_numpy(client):
    Phi, y = _vander()
    ref = LinearRegression(fit_intercept=False).fit(Phi, y)
    m = LinearRegression(fit_intercept=False).fit(
        da.from_array(Phi, chunks=(30, Phi.shape[1])), da.from_array(y, chunks=30)
    )
    np.testing.assert_allclose(m.coef_, ref.coef_, rtol=RTOL)
    X = _blobs()
    Xd = da.from_array(X, chunks=(250, 2))
    pca_ref, pca = PCA(2, svd_solver="full").fit(X), PCA(2, svd_solver="full").fit(Xd)
    np.testing.assert_allclose(pca.explained_variance_, pca_ref.explained_variance_, rtol=RTOL)
    init = CENTRES + 0.5
    km_ref = KMeans(3, init=init, n_init=1).fit(X)
    km = KMeans(3, init=init, n_init=1).fit(Xd)
    np.testing.assert_array_equal(km.labels_.compute(), km_ref.labels_)
    assert km.inertia_ == pytest.approx(km_ref.inertia_, rel=RTOL)
    params = dict(
        n_components=3,
        init_params="random_from_data",
        means_init=CENTRES,
        random_state=0,
        tol=1e-2,
    )
    gm_ref, gm = GaussianMixture(**params).fit(X), GaussianMixture(**params).fit(Xd)
    assert gm.n_iter_ == gm_ref.n_iter_
    assert gm.lower_bound_ == pytest.approx(gm_ref.lower_bound_, rel=RTOL)
    # the predictions are lazy and run on the workers too
    np.testing.assert_array_equal(gm.predict(Xd).compute(), gm_ref.predict(X))


def test_more_fits_on_a_local_cluster_equal_numpy(client):
    X = _blobs(4)
    y = X @ [1.0, -2.0] + 0.1 * np.random.default_rng(0).normal(size=len(X))
    Xd, yd = da.from_array(X, chunks=(450, 2)), da.from_array(y, chunks=450)
    for est in (Ridge(alpha=2.0), BayesianLinearRegression()):
        ref, m = est.fit(X, y), type(est)(**est.get_params()).fit(Xd, yd)
        np.testing.assert_allclose(m.coef_, ref.coef_, rtol=RTOL)
    labels = (X[:, 0] > 3).astype(int) + (X[:, 1] > 3.5)
    nb_ref, nb = GaussianNB().fit(X, labels), GaussianNB().fit(Xd, da.from_array(labels, 450))
    np.testing.assert_allclose(nb.theta_, nb_ref.theta_, rtol=RTOL)
    C = np.abs(np.round(X)).astype(float)
    mn_ref = MultinomialNB().fit(C, labels)
    mn = MultinomialNB().fit(da.from_array(C, chunks=(450, 2)), da.from_array(labels, 450))
    np.testing.assert_allclose(mn.feature_log_prob_, mn_ref.feature_log_prob_, rtol=RTOL)
    B = (X > 2.0).astype(float)
    params = dict(n_components=2, init_params="random", random_state=0, tol=1e-2)
    bm_ref = BernoulliMixture(**params).fit(B)
    bm = BernoulliMixture(**params).fit(da.from_array(B, chunks=(450, 2)))
    assert bm.n_iter_ == bm_ref.n_iter_
    np.testing.assert_allclose(bm.means_, bm_ref.means_, rtol=RTOL)


def test_lda_on_a_local_cluster_equals_numpy(client):
    # three sweeps of batch CAVI, the E-step of each block on a worker; the tolerance is
    # that of tests/dask/test_lda.py (summation order across documents only)
    rng = np.random.default_rng(5)
    beta = rng.dirichlet(np.full(30, 0.05), size=3)
    X = np.stack([rng.multinomial(25, t @ beta) for t in rng.dirichlet([0.2] * 3, 200)])
    params = dict(n_components=3, max_iter=3, tol=0.0, random_state=0)
    with pytest.warns(ConvergenceWarning):
        ref = LatentDirichletAllocation(**params).fit(X)
    Xd = da.from_array(X.astype(float), chunks=(60, 30))
    with pytest.warns(ConvergenceWarning):
        m = LatentDirichletAllocation(**params).fit(Xd)
    np.testing.assert_allclose(m.components_, ref.components_, rtol=RTOL)
    np.testing.assert_allclose(m.elbo_history_, ref.elbo_history_, rtol=RTOL)
    np.testing.assert_allclose(m.transform(Xd).compute(), m.transform(X), rtol=1e-13)


def _killing_copy(counter, kill_at):
    """A block function that kills the worker running it the ``kill_at``-th time any block
    is computed (counted in a file shared by the workers); the retry then goes through."""

    def copy(B):
        fd = os.open(counter, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, b"x")
        os.close(fd)
        if os.path.getsize(counter) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return B.copy()

    return copy


def _kill_case(which, counter):
    """(reference fit, Dask fit on a killing copy, attributes to compare) for one estimator.

    ``kill_at`` is past the first pass over the blocks (the validation and first statistics),
    so the worker dies while the fit is under way and later passes reuse or recompute the lost
    results through the graph."""
    if which == "kmeans":
        X, init = _blobs(1), CENTRES + 1.0
        # 6 blocks: the frame's two passes read them 12 times, then Lloyd's passes
        Xd = da.from_array(X, chunks=(150, 2)).map_blocks(_killing_copy(counter, 16))
        ref, m = KMeans(3, init=init, n_init=1).fit(X), KMeans(3, init=init, n_init=1).fit(Xd)
        return ref, m, ["inertia_", "cluster_centers_", "n_iter_"], 16
    if which == "least_squares":
        # refinement keeps the residual on the workers between steps: a lost block of it is
        # recomputed from the graph
        Phi, y = _vander(3)
        Xd = da.from_array(Phi, chunks=(30, Phi.shape[1])).map_blocks(_killing_copy(counter, 14))
        ref = LinearRegression(fit_intercept=False).fit(Phi, y)
        m = LinearRegression(fit_intercept=False).fit(Xd, da.from_array(y, chunks=30))
        assert m.n_iter_ == ref.n_iter_ > 0
        return ref, m, ["coef_"], 14
    X = _blobs(3)
    Xd = da.from_array(X, chunks=(150, 2)).map_blocks(_killing_copy(counter, 8))
    if which in ("ridge", "bayesian_ridge"):
        y = X @ [1.0, -2.0] + 0.1 * np.random.default_rng(1).normal(size=len(X))
        est = Ridge(alpha=2.0) if which == "ridge" else BayesianLinearRegression()
        yd = da.from_array(y, chunks=150)
        return est.fit(X, y), clone(est).fit(Xd, yd), ["coef_", "intercept_"], 8
    if which == "pca":
        return PCA(2).fit(X), PCA(2).fit(Xd), ["components_", "explained_variance_"], 8
    if which == "gaussian_mixture":
        params = dict(
            n_components=3,
            init_params="random_from_data",
            means_init=CENTRES,
            random_state=0,
            tol=1e-3,
        )
        ref, m = GaussianMixture(**params).fit(X), GaussianMixture(**params).fit(Xd)
        assert m.n_iter_ == ref.n_iter_ > 1
        return ref, m, ["means_", "covariances_", "lower_bound_"], 8
    if which == "bernoulli_mixture":
        B = (X > 2.0).astype(float)
        Bd = da.from_array(B, chunks=(150, 2)).map_blocks(_killing_copy(counter, 8))
        params = dict(n_components=2, init_params="random", random_state=0, tol=1e-6)
        ref, m = BernoulliMixture(**params).fit(B), BernoulliMixture(**params).fit(Bd)
        assert m.n_iter_ == ref.n_iter_ > 1
        return ref, m, ["means_", "weights_"], 8
    if which == "naive_bayes":
        labels = (X[:, 0] > 3).astype(int) + (X[:, 1] > 3.5)
        ld = da.from_array(labels, chunks=150)
        return GaussianNB().fit(X, labels), GaussianNB().fit(Xd, ld), ["theta_", "var_"], 8
    assert which == "lda"
    rng = np.random.default_rng(5)
    beta = rng.dirichlet(np.full(30, 0.05), size=3)
    C = np.stack([rng.multinomial(25, t @ beta) for t in rng.dirichlet([0.2] * 3, 180)])
    Cd = da.from_array(C.astype(float), chunks=(30, 30)).map_blocks(_killing_copy(counter, 8))
    params = dict(n_components=3, max_iter=3, tol=0.0, random_state=0)
    with pytest.warns(ConvergenceWarning):
        ref = LatentDirichletAllocation(**params).fit(C)
    with pytest.warns(ConvergenceWarning):
        m = LatentDirichletAllocation(**params).fit(Cd)
    return ref, m, ["components_"], 8


@pytest.mark.parametrize(
    "which",
    [
        "kmeans",
        "least_squares",
        "ridge",
        "bayesian_ridge",
        "pca",
        "gaussian_mixture",
        "bernoulli_mixture",
        "naive_bayes",
        "lda",
    ],
)
def test_worker_killed_mid_fit_gives_the_same_answer(client, tmp_path, which):
    counter = str(tmp_path / "calls")
    ref, m, attributes, kill_at = _kill_case(which, counter)
    for name in attributes:
        np.testing.assert_allclose(getattr(m, name), getattr(ref, name), rtol=RTOL, atol=0)
    if which == "kmeans":
        np.testing.assert_array_equal(m.labels_.compute(), ref.labels_)
    # the kill happened, in the middle of the fit (blocks were computed after it)
    assert os.path.getsize(counter) > kill_at


def test_threaded_scheduler_without_a_client():
    X = _blobs(2)
    ref = KMeans(3, init=X[:3], n_init=1).fit(X)
    with dask.config.set(scheduler="threads"):
        m = KMeans(3, init=X[:3], n_init=1).fit(da.from_array(X, chunks=(200, 2)))
    np.testing.assert_array_equal(m.labels_.compute(scheduler="threads"), ref.labels_)
    assert m.inertia_ == pytest.approx(ref.inertia_, rel=RTOL)
