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


@pytest.mark.parametrize("n_classes", [2, 3])
def test_same_updates_as_scikit_learn_for_fixed_epochs(n_classes):
    # The same rule (update when t_n w^T phi_n <= 0, eta 1, from w = 0, samples in order;
    # one-vs-rest for more classes) for 7 epochs on data that are not separable: scikit-
    # learn's Perceptron with its stopping rule off makes the same updates. Margins are
    # summed in another order, which can only matter for a margin within rounding of 0.
    from sklearn.linear_model import Perceptron as SkPerceptron

    rng = np.random.default_rng(0)
    Xr = rng.standard_normal((500, 5))
    yr = (Xr @ rng.standard_normal(5) > 0).astype(int)
    yr[rng.random(500) < 0.05] ^= 1
    if n_classes == 3:
        yr = np.where(Xr[:, 0] > 0.8, 2, yr)
    with pytest.warns(ConvergenceWarning):
        ours = Perceptron(max_iter=7).fit(Xr, yr)
    ref = SkPerceptron(max_iter=7, tol=None, shuffle=False).fit(Xr, yr)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-12, atol=1e-12)


def test_compiled_epochs_equal_the_numpy_route(monkeypatch):
    from mathlearn import _ext

    if _ext.load("_sgd") is None:
        pytest.skip("needs the compiled mathlearn._ext._sgd")
    rng = np.random.default_rng(1)
    Xr = rng.standard_normal((400, 4))
    yr = rng.integers(0, 3, 400)
    kw = dict(max_iter=5, shuffle=True, random_state=2, eta0=0.5)
    with pytest.warns(ConvergenceWarning):
        compiled = Perceptron(**kw).fit(Xr, yr)
    monkeypatch.setenv("MATHLEARN_DISABLE_EXT", "1")
    with pytest.warns(ConvergenceWarning):
        numpy_route = Perceptron(**kw).fit(Xr, yr)
    np.testing.assert_allclose(compiled.coef_, numpy_route.coef_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(compiled.intercept_, numpy_route.intercept_, atol=1e-12)
    assert compiled.n_iter_ == numpy_route.n_iter_
