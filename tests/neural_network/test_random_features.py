"""Random-feature networks: the random body recomputed in NumPy from the notes' recipe, and the
output layer against scikit-learn's logistic and ridge regression on the same features."""

import numpy as np
import pytest

from mathlearn.neural_network import RandomFeatureClassifier, RandomFeatureRegressor


def _phi(est, X):
    """The random hidden layers in plain NumPy: relu(X W^T + b), layer after layer."""
    h = X
    for layer in est.body_:
        if hasattr(layer, "weight"):
            h = h @ layer.weight.T + layer.bias
        else:
            h = np.maximum(h, 0)
    return h


def test_body_follows_the_notes_initialisation():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 40))
    clf = RandomFeatureClassifier((2000, 300), random_state=0).fit(X, (X[:, 0] > 0).astype(int))
    W1, b1 = clf.body_[0].weight, clf.body_[0].bias
    W2 = clf.body_[2].weight
    # Var W_l = 1 / h_{l-1}: sample variances of 80 000 and 600 000 draws (relative sd
    # sqrt(2 / n) < 0.005); b ~ U(-1, 1) has variance 1/3.
    assert abs(W1.var() * 40 - 1) < 6 * np.sqrt(2 / W1.size)
    assert abs(W2.var() * 2000 - 1) < 6 * np.sqrt(2 / W2.size)
    assert b1.min() >= -1 and b1.max() <= 1 and abs(b1.var() * 3 - 1) < 0.1
    np.testing.assert_allclose(clf._features(X), _phi(clf, X), rtol=1e-12)


def test_classifier_head_is_logistic_regression_on_the_features():
    from sklearn.linear_model import LogisticRegression as SkLR

    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(150, 2))
    y = (X[:, 0] ** 2 + X[:, 1] ** 2 < 0.5).astype(int)
    clf = RandomFeatureClassifier((50,), C=10.0, random_state=0).fit(X, y)
    ref = SkLR(C=10.0, tol=1e-10, max_iter=10_000).fit(_phi(clf, X), y)
    # Both minimise the same strictly convex objective; Newton stops at gradient 1e-4 per
    # sample, so the probabilities agree to about 1e-4.
    np.testing.assert_allclose(
        clf.predict_proba(X)[:, 1], ref.predict_proba(_phi(clf, X))[:, 1], atol=1e-3
    )
    assert clf.score(X, y) > 0.9  # a circle is not linear in x, but is in the features


def test_regressor_head_is_ridge_on_the_features():
    from sklearn.linear_model import Ridge as SkRidge

    X = np.linspace(-2, 2, 80)[:, None]
    y = np.sin(2 * X[:, 0])
    reg = RandomFeatureRegressor((100,), alpha=1e-2, random_state=3).fit(X, y)
    ref = SkRidge(alpha=1e-2).fit(_phi(reg, X), y)
    np.testing.assert_allclose(reg.predict(X), ref.predict(_phi(reg, X)), rtol=1e-8, atol=1e-10)
    assert reg.score(X, y) > 0.99


def test_bad_input():
    X = np.random.default_rng(0).standard_normal((20, 2))
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match="Rescale"):
        RandomFeatureClassifier(random_state=0).fit(X * 1e306, y)
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        RandomFeatureRegressor(()).fit(X, y)
