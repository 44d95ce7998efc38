"""GaussianProcessClassifier against the Oxford notes' example, scikit-learn, finite
differences and the notes' properties."""

import numpy as np
import pytest
import sklearn.gaussian_process as skgp
import sklearn.gaussian_process.kernels as skk
from scipy.special import expit, ndtr

from mathlearn.exceptions import InvalidParameterError
from mathlearn.gaussian_process import GaussianProcessClassifier
from mathlearn.kernels import RBF, ConstantKernel

SIX = 5.01e-7
X4 = np.array([[-1.0], [0.0], [1.0], [2.0]])
Y4 = np.array([-1, -1, 1, 1])


def _fixed():
    return ConstantKernel(4.0, "fixed") * RBF(1.0, "fixed")


def _blobs(rng, n=40):
    X = np.vstack([rng.normal(-1, 1, size=(n // 2, 2)), rng.normal(1, 1, size=(n // 2, 2))])
    y = np.repeat([0, 1], n // 2)
    return X, y


def test_oxford_d14():
    gpc = GaussianProcessClassifier(_fixed(), optimizer=None, tol=1e-14).fit(X4, Y4)
    np.testing.assert_allclose(gpc.f_, [-1.366709, -0.853134, 0.853134, 1.366709], atol=SIX)
    m, v = gpc.predict_latent(np.array([[0.5], [5.0]]))
    np.testing.assert_allclose(m, [0.0, 0.009424], atol=SIX)
    np.testing.assert_allclose(v, [1.746723, 3.999796], atol=SIX)
    # At the mode K^{-1} f = grad log p(y | f): check K grad = f.
    K = _fixed()(X4)
    t = (Y4 + 1) / 2
    np.testing.assert_allclose(K @ (t - expit(gpc.f_)), gpc.f_, rtol=1e-10)


def test_stable_newton_matches_naive_newton():
    K = _fixed()(X4)
    y = Y4.astype(float)
    f = np.zeros(4)
    for _ in range(30):  # the textbook step (K^{-1} + D)^{-1} (D f + g), small and well posed
        pi = expit(f)
        D = np.diag(pi * (1 - pi))
        g = (y + 1) / 2 - pi
        f = np.linalg.solve(np.linalg.inv(K) + D, D @ f + g)
    gpc = GaussianProcessClassifier(_fixed(), optimizer=None, tol=1e-14).fit(X4, Y4)
    np.testing.assert_allclose(gpc.f_, f, rtol=1e-10)


def test_property_t22_t23_t27(rng):
    X, y = _blobs(rng)
    k = ConstantKernel(2.0, "fixed") * RBF(0.8, "fixed")
    gpc = GaussianProcessClassifier(k, optimizer=None).fit(X, y)
    K = k(X)
    pi = expit(gpc.f_)
    D = pi * (1 - pi)
    # Oxford "Advanced Topics in Statistical Machine Learning" §9.5: eig(B) in [1, 1 + n max K / 4]
    # for the logistic link.
    B = np.eye(len(X)) + np.sqrt(D)[:, None] * K * np.sqrt(D)[None, :]
    ev = np.linalg.eigvalsh(B)
    n = len(X)
    assert ev.min() >= 1 - 1e-12 and ev.max() <= 1 + n * K.max() / 4 + 1e-12
    # Oxford "Advanced Topics in Statistical Machine Learning" §9.4: (K^{-1} + D)^{-1} = K - K (K +
    # D^{-1})^{-1} K
    lhs = np.linalg.inv(np.linalg.inv(K + 1e-12 * 0) + np.diag(D))
    rhs = K - K @ np.linalg.solve(K + np.diag(1 / D), K)
    np.testing.assert_allclose(lhs, rhs, atol=1e-8 * np.abs(K).max())
    # Oxford "Advanced Topics in Statistical Machine Learning" §9.4: Laplace predictive variance >=
    # plug-in variance k** - k*^T K^{-1} k*.
    Xs = rng.normal(size=(15, 2)) * 2
    _, var = gpc.predict_latent(Xs)
    Ks = k(Xs, X)
    plug = k.diag(Xs) - np.einsum("ij,ji->i", Ks, np.linalg.solve(K, Ks.T))
    assert np.all(var >= plug - 1e-10)


def test_lml_gradient_and_probabilities_match_sklearn(rng):
    X, y = _blobs(rng, n=30)
    ours = GaussianProcessClassifier(ConstantKernel(1.5) * RBF([0.8, 1.2]), optimizer=None)
    ours.fit(X, y)
    peer = skgp.GaussianProcessClassifier(
        skk.ConstantKernel(1.5) * skk.RBF([0.8, 1.2]), optimizer=None
    ).fit(X, y)
    theta = ours.kernel_.theta
    assert ours.log_marginal_likelihood_value_ == pytest.approx(
        peer.log_marginal_likelihood_value_, rel=1e-8
    )
    _, grad_p = peer.log_marginal_likelihood(theta, eval_gradient=True)
    K, dK = ours.kernel_(X, eval_gradient=True)
    from mathlearn.gaussian_process._laplace import (
        LogisticLikelihood,
        laplace_lml_gradient,
        laplace_mode,
    )

    state = laplace_mode(K, np.where(y == 1, 1.0, -1.0), LogisticLikelihood(), tol=1e-14)
    grad = laplace_lml_gradient(K, np.moveaxis(dK, -1, 0), state)
    np.testing.assert_allclose(grad, grad_p, rtol=1e-6, atol=1e-9)
    Xs = rng.normal(size=(10, 2)) * 1.5
    m, v = ours.predict_latent(Xs)
    mp, vp = peer.latent_mean_and_variance(Xs)
    np.testing.assert_allclose(m, mp, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(v, vp, rtol=1e-7, atol=1e-10)
    # Probabilities: ours by quadrature is the exact integral to ~1e-12; scikit-learn's
    # five-erf approximation of the logistic is accurate to about 1e-3.
    ours.set_params(proba_method="quadrature")
    np.testing.assert_allclose(ours.predict_proba(Xs), peer.predict_proba(Xs), atol=2e-3)


def test_lml_gradient_finite_differences_probit(rng):
    from mathlearn.gaussian_process._laplace import (
        ProbitLikelihood,
        laplace_lml_gradient,
        laplace_mode,
    )

    X, y = _blobs(rng, n=24)
    y_pm = np.where(y == 1, 1.0, -1.0)
    k = ConstantKernel(2.0) * RBF([0.7, 1.3])
    theta = k.theta

    def lml(t):
        kk = k.clone_with_theta(t)
        return laplace_mode(kk(X), y_pm, ProbitLikelihood(), tol=1e-15)["lml"]

    K, dK = k(X, eval_gradient=True)
    state = laplace_mode(K, y_pm, ProbitLikelihood(), tol=1e-15)
    grad = laplace_lml_gradient(K, np.moveaxis(dK, -1, 0), state)
    h = 1e-5
    fd = np.array([(lml(theta + h * e) - lml(theta - h * e)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(grad, fd, atol=1e-7 * (1 + abs(state["lml"])))


def test_probit_likelihood_probabilities(rng):
    X, y = _blobs(rng, n=30)
    gpc = GaussianProcessClassifier(
        ConstantKernel(1.0, "fixed") * RBF(1.0, "fixed"), likelihood="probit", optimizer=None
    ).fit(X, y)
    Xs = rng.normal(size=(8, 2))
    m, v = gpc.predict_latent(Xs)
    # For the probit link the probit formula is the exact integral.
    np.testing.assert_allclose(gpc.predict_proba(Xs)[:, 1], ndtr(m / np.sqrt(1 + v)), rtol=1e-12)
    gpc.set_params(proba_method="quadrature")
    np.testing.assert_allclose(gpc.predict_proba(Xs)[:, 1], ndtr(m / np.sqrt(1 + v)), atol=1e-10)
    gpc.set_params(proba_method="mc", n_mc=20000, random_state=0)
    p = gpc.predict_proba(Xs)[:, 1]
    # MC standard error <= 0.5 / sqrt(n): five of them.
    np.testing.assert_array_less(np.abs(p - ndtr(m / np.sqrt(1 + v))), 5 * 0.5 / np.sqrt(20000))


def test_hyperparameters_no_worse_than_sklearn(rng):
    X, y = _blobs(rng, n=40)
    ours = GaussianProcessClassifier(ConstantKernel(1.0) * RBF(1.0), n_restarts=2, random_state=0)
    ours.fit(X, y)
    peer = skgp.GaussianProcessClassifier(
        skk.ConstantKernel(1.0) * skk.RBF(1.0), n_restarts_optimizer=2, random_state=0
    ).fit(X, y)
    assert ours.log_marginal_likelihood_value_ >= peer.log_marginal_likelihood_value_ - 1e-6


def test_one_vs_rest_three_classes(rng):
    X = np.vstack([rng.normal(c, 0.7, size=(12, 2)) for c in (-2, 0, 2)])
    y = np.repeat(["a", "b", "c"], 12)
    k = ConstantKernel(2.0, "fixed") * RBF(1.0, "fixed")
    gpc = GaussianProcessClassifier(k, optimizer=None).fit(X, y)
    P = gpc.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    assert np.mean(gpc.predict(X) == y) > 0.9
    m, v = gpc.predict_latent(X[:3])
    assert m.shape == v.shape == (3, 3)
    # Each column is the binary model of that class against the rest.
    for c, label in enumerate("abc"):
        b = GaussianProcessClassifier(k, optimizer=None).fit(X, y == label)
        np.testing.assert_allclose(m[:, c], b.predict_latent(X[:3])[0], rtol=1e-10)


def test_bad_input(rng):
    X, y = _blobs(rng, n=10)
    with pytest.raises(ValueError, match="at least 2 classes"):
        GaussianProcessClassifier().fit(X, np.zeros(10))
    with pytest.raises(ValueError, match="nothing to optimise"):
        GaussianProcessClassifier(_fixed()).fit(X, y)
    with pytest.raises(ValueError, match="low < high"):
        GaussianProcessClassifier(RBF(1.0, (1.0, 1.0))).fit(X, y)
    with pytest.raises(InvalidParameterError, match="likelihood"):
        GaussianProcessClassifier(likelihood="cauchit").fit(X, y)
    Xn = X.copy()
    Xn[0, 0] = np.inf
    with pytest.raises(ValueError, match=r"infinity|NaN"):
        GaussianProcessClassifier().fit(Xn, y)
