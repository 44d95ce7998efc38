"""Worked examples of the notes following Bishop's PRML not tested elsewhere.

§4.2-§4.3 (eq. 4.59, 4.62): the logistic sigmoid and the softmax at the values the notes'
example uses, including a softmax whose inputs would overflow a naive exp; and the properties
the notes state without a test elsewhere: the distance to a hyperplane (§4.1.1), termination
of the perceptron on separable data (§4.1.7), the projection residual of PCA (§12.1.2) and the
PPCA posterior as a linear-Gaussian posterior (§12.2.1).
"""

import numpy as np
import pytest

from mathlearn import autodiff as ad
from mathlearn.decomposition import PCA, ProbabilisticPCA
from mathlearn.distributions import MultivariateNormal, linear_gaussian_posterior
from mathlearn.linear_model import Perceptron
from mathlearn.utils.extmath import log_softmax, sigmoid, softmax

SOFTMAX_123 = [0.09003057317038046, 0.24472847105479767, 0.6652409557748219]


def test_sigmoid_values_and_derivative():
    # sigma(0) = 1/2, sigma'(0) = sigma(0)(1 - sigma(0)) = 1/4, sigma(2) = 1 / (1 + e^-2).
    assert sigmoid(0.0) == 0.5
    assert float(ad.grad(ad.sigmoid)(np.array(0.0))) == pytest.approx(0.25, rel=1e-15)
    assert sigmoid(2.0) == pytest.approx(0.8807970779778823, rel=1e-15)


@pytest.mark.parametrize("shift", [0.0, 999.0, -1e4])
def test_softmax_values_are_shift_invariant_without_overflow(shift):
    # softmax([1, 2, 3]) = e^k / (e + e^2 + e^3); softmax([1000, 1001, 1002]) is the same.
    z = np.array([1.0, 2.0, 3.0]) + shift
    p = softmax(z)
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p, SOFTMAX_123, rtol=1e-13)
    np.testing.assert_allclose(np.exp(log_softmax(z)), SOFTMAX_123, rtol=1e-13)


def test_distance_to_the_decision_hyperplane(rng):
    # §4.1.1 (eq. 4.7): the signed distance of x to y(x) = w^T x + b = 0 is y(x) / ||w||; the
    # foot of the perpendicular x - y(x) w / ||w||^2 lies on the hyperplane.
    X = np.vstack([rng.normal(-2, 1, (20, 2)), rng.normal(2, 1, (20, 2))])
    t = np.repeat([0, 1], 20)
    clf = Perceptron(random_state=0).fit(X, t)
    w, b = clf.coef_[0], clf.intercept_[0]
    y = clf.decision_function(X)
    np.testing.assert_allclose(y, X @ w + b, rtol=1e-12, atol=1e-12)
    foot = X - (y / (w @ w))[:, None] * w
    np.testing.assert_allclose(foot @ w + b, 0.0, atol=1e-12 * np.abs(y).max())
    np.testing.assert_allclose(
        np.linalg.norm(X - foot, axis=1), np.abs(y) / np.linalg.norm(w), rtol=1e-12
    )


def test_perceptron_terminates_on_separable_data(rng):
    # §4.1.7: on linearly separable data the perceptron stops after finitely many epochs with
    # every training point classified correctly (the convergence theorem).
    X = rng.standard_normal((60, 2))
    t = (X @ [1.0, -2.0] + 0.3 > 0).astype(int)
    margin = np.abs(X @ [1.0, -2.0] + 0.3) / np.sqrt(5)
    keep = margin > 0.1  # a positive margin guarantees termination
    clf = Perceptron(max_iter=1000, random_state=0).fit(X[keep], t[keep])
    assert clf.n_iter_ < 1000
    np.testing.assert_array_equal(clf.predict(X[keep]), t[keep])


def test_projection_residual_identity(rng):
    # §12.1.2 (eq. 12.10-12.12): for a unit vector v, ||x - (v^T x) v||^2 = ||x||^2 - (v^T x)^2;
    # with v a principal direction this is the distortion that PCA minimises.
    X = rng.standard_normal((50, 4)) @ rng.standard_normal((4, 4))
    pca = PCA(n_components=1).fit(X)
    v = pca.components_[0]
    Xc = X - pca.mean_
    proj = Xc @ v
    np.testing.assert_allclose(
        np.sum((Xc - np.outer(proj, v)) ** 2, axis=1),
        np.sum(Xc**2, axis=1) - proj**2,
        rtol=1e-10,
        atol=1e-12,
    )
    recon = pca.inverse_transform(pca.transform(X))
    np.testing.assert_allclose(recon - pca.mean_, np.outer(proj, v), atol=1e-12)


def test_ppca_posterior_is_the_linear_gaussian_posterior(rng):
    # §12.2.1 (eq. 12.42) against §2.3.3 (eq. 2.116-2.117): with prior N(0, I), x = W z + mu
    # + noise N(0, sigma^2 I), the posterior of z given x is the generic linear-Gaussian one.
    X = rng.standard_normal((80, 5)) @ rng.standard_normal((5, 5)) + 3.0
    ppca = ProbabilisticPCA(n_components=2).fit(X)
    W = ppca.components_.T
    sigma2 = ppca.noise_variance_
    mean, cov = ppca.posterior(X[:3])
    for i in range(3):
        post = linear_gaussian_posterior(
            MultivariateNormal(np.zeros(2), np.eye(2)), W, sigma2 * np.eye(5), X[i], b=ppca.mean_
        )
        np.testing.assert_allclose(mean[i], post.mean, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(cov, post.cov, rtol=1e-9, atol=1e-12)
