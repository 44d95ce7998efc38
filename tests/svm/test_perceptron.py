"""The perceptron and the kernel perceptron: the PRML notes' hand-traced run, duality, XOR."""

import numpy as np
import pytest

from mathlearn.exceptions import ConvergenceWarning
from mathlearn.linear_model import Perceptron
from mathlearn.svm import KernelPerceptron

X = np.array([[2, 1], [1, 3], [3, 2], [0, 1], [2, 3], [1, 0]], dtype=float)
T = np.array([1, -1, 1, -1, -1, 1])


def test_prml_notes_trace():
    """Cyclic order, eta = 1, w0 = 0: six updates ending at w = [0, 4, -3]."""
    clf = Perceptron(eta0=1.0).fit(X, T)
    assert clf.intercept_[0] == 0.0
    np.testing.assert_array_equal(clf.coef_, [[4.0, -3.0]])
    np.testing.assert_array_equal(T * clf.decision_function(X), [5, 5, 6, 3, 1, 4])
    assert clf.n_iter_ == 3  # epoch 0 (five updates), epoch 1 (one), epoch 2 (clean)


def test_literal_rule_of_the_notes_never_updates():
    """The notes' test ``w^T phi < 0`` (no t_n) is never true at w = 0: no update at all."""
    w = np.zeros(3)
    Phi = np.hstack([np.ones((6, 1)), X])
    updates = 0
    for _ in range(3):
        for n in range(6):
            if Phi[n] @ w < 0:
                w += T[n] * Phi[n]
                updates += 1
    assert updates == 0
    # The corrected rule (t_n w^T phi <= 0) does update, as the fitted model shows.
    assert np.any(Perceptron().fit(X, T).coef_ != 0)


def test_eta_only_scales_the_weights():
    a = Perceptron(eta0=1.0).fit(X, T)
    b = Perceptron(eta0=0.25).fit(X, T)
    np.testing.assert_allclose(b.coef_, 0.25 * a.coef_)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_kernel_perceptron_with_linear_kernel_is_the_perceptron():
    """w = sum_n a_n t_n phi(x_n): the dual makes exactly the primal's updates."""
    primal = Perceptron().fit(X, T)
    dual = KernelPerceptron(kernel="linear").fit(X, T)
    w = dual.dual_coef_[0] @ X
    b = dual.dual_coef_[0].sum()
    np.testing.assert_allclose(w, primal.coef_[0], atol=1e-12)
    assert b == pytest.approx(primal.intercept_[0], abs=1e-12)
    assert dual.n_iter_ == primal.n_iter_


def test_kernel_perceptron_separates_xor_and_shuffles_reproducibly():
    Xx = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    yx = np.array([0, 0, 1, 1])
    with pytest.warns(ConvergenceWarning, match="not linearly separable"):
        Perceptron(max_iter=50).fit(Xx, yx)
    m1 = KernelPerceptron(
        kernel="rbf", kernel_params={"gamma": 2.0}, shuffle=True, random_state=3
    ).fit(Xx, yx)
    m2 = KernelPerceptron(
        kernel="rbf", kernel_params={"gamma": 2.0}, shuffle=True, random_state=3
    ).fit(Xx, yx)
    np.testing.assert_array_equal(m1.predict(Xx), yx)
    np.testing.assert_array_equal(m1.dual_coef_, m2.dual_coef_)


def test_multiclass_one_vs_rest():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    y = np.repeat([0, 1, 2], 20)
    Xm = centres[y] + rng.standard_normal((60, 2))
    for clf in (Perceptron(), KernelPerceptron()):
        clf.fit(Xm, y)
        assert clf.converged_
        np.testing.assert_array_equal(clf.predict(Xm), y)
    assert not hasattr(Perceptron(), "predict_proba")
