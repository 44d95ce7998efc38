"""LeastSquaresClassifier and one_hot against the PRML notes' properties and scikit-learn."""

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import RidgeClassifier

from mathlearn.linear_model import LeastSquaresClassifier, one_hot


def test_one_hot():
    # PRML §4.1.3.
    np.testing.assert_array_equal(one_hot([0, 1], 2), [[1, 0], [0, 1]])
    np.testing.assert_array_equal(one_hot(np.array([2, 0])), [[0, 0, 1], [1, 0, 0]])
    with pytest.raises(ValueError, match="below n_classes"):
        one_hot([0, 3], 2)
    with pytest.raises(ValueError, match="non-negative integer"):
        one_hot([0.5, 1.0])


@pytest.mark.parametrize("n_classes", [2, 3])
def test_pseudo_inverse_solution_and_rows_sum_to_one(n_classes):
    X, y = make_classification(
        60, 4, n_informative=3, n_redundant=0, n_classes=n_classes, random_state=0
    )
    clf = LeastSquaresClassifier().fit(X, y)
    Xt = np.hstack([np.ones((60, 1)), X])
    W = np.linalg.pinv(Xt) @ one_hot(y)  # PRML eq. 4.17: W̃ = pinv(X̃) T
    np.testing.assert_allclose(clf.intercept_, W[0], atol=1e-12)
    np.testing.assert_allclose(clf.coef_, W[1:].T, atol=1e-12)
    Xq = np.random.default_rng(1).standard_normal((10, 4)) * 5
    outputs = Xq @ clf.coef_.T + clf.intercept_
    np.testing.assert_allclose(outputs.sum(axis=1), 1.0, atol=1e-12)
    # scikit-learn's RidgeClassifier with alpha = 0 codes the targets as ±1 = 2T - 1: the
    # same least-squares fit up to that affine map, so the same decisions.
    ref = RidgeClassifier(alpha=0.0, solver="svd").fit(X, y)
    np.testing.assert_array_equal(clf.predict(Xq), ref.predict(Xq))
    assert not hasattr(clf, "predict_proba")


def test_bad_inputs_and_string_labels():
    X, y = make_classification(30, 3, n_informative=2, n_redundant=0, random_state=1)
    with pytest.raises(ValueError, match="at least 2 classes"):
        LeastSquaresClassifier().fit(X, np.zeros(30))
    Xn = X.copy()
    Xn[2, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        LeastSquaresClassifier().fit(Xn, y)
    names = np.array(["a", "b"])[y]
    np.testing.assert_array_equal(
        LeastSquaresClassifier().fit(X, names).predict(X),
        np.array(["a", "b"])[LeastSquaresClassifier().fit(X, y).predict(X)],
    )
