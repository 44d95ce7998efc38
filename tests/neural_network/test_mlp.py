"""MLPClassifier and MLPRegressor.

References: scikit-learn's MLPs on the same data (accuracy and R^2 no worse, within the
sampling error of the test set), the linear special case (no hidden layer, L-BFGS) against
least squares and mathlearn's LogisticRegression at tight tolerances, partial_fit equal to
fit epoch by epoch, the MC-dropout formula recomputed by hand, and bad input.
"""

import tracemalloc
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_regression
from sklearn.model_selection import train_test_split

from mathlearn.exceptions import ConvergenceWarning
from mathlearn.linear_model import LogisticRegression
from mathlearn.neural_network import MLPClassifier, MLPRegressor
from mathlearn.nn import TrainingDivergedError


def _quiet(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X, y)


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return train_test_split(X / 16.0, y, test_size=0.3, random_state=0, stratify=y)


def test_classifier_no_worse_than_scikit_learn(digits):
    from sklearn.neural_network import MLPClassifier as SkMLP

    Xtr, Xte, ytr, yte = digits
    kw = dict(hidden_layer_sizes=(32,), max_iter=30, learning_rate_init=0.01, random_state=0)
    ours = _quiet(MLPClassifier(**kw), Xtr, ytr).score(Xte, yte)
    ref = _quiet(SkMLP(**kw), Xtr, ytr).score(Xte, yte)
    # Two accuracies on the same 540 test images: each has a sampling sd of
    # sqrt(p (1 - p) / 540) ~ 0.01 at p ~ 0.95; 3 sd.
    sd = np.sqrt(ref * (1 - ref) / len(yte))
    assert ours >= ref - 3 * sd, (ours, ref)
    assert ours > 0.9


def test_regressor_no_worse_than_scikit_learn():
    from sklearn.neural_network import MLPRegressor as SkMLP

    X, y = make_regression(n_samples=400, n_features=5, noise=5.0, random_state=0)
    y = y / y.std()
    Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
    kw = dict(hidden_layer_sizes=(32,), max_iter=100, learning_rate_init=0.01, random_state=0)
    ours = _quiet(MLPRegressor(**kw), Xtr, ytr).score(Xte, yte)
    ref = _quiet(SkMLP(**kw), Xtr, ytr).score(Xte, yte)
    # The noise (sd 5 before scaling, about 0.05 after) caps R^2 near 0.997; both reach it
    # up to optimisation error, so 0.01 is a generous margin.
    assert ours >= ref - 0.01, (ours, ref)


def test_no_hidden_layer_lbfgs_is_least_squares():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.3 + 0.1 * rng.standard_normal(50)
    reg = MLPRegressor((), solver="lbfgs", alpha=0.0, tol=1e-8, max_iter=500).fit(X, y)
    A = np.hstack([X, np.ones((50, 1))])
    beta = np.linalg.lstsq(A, y, rcond=None)[0]
    # The Hessian of (1/2n) ||A beta - y||^2 is A^T A / n, smallest eigenvalue ~ 0.5 here, so
    # a gradient below tol = 1e-8 puts the weights within about 2e-8 of the minimiser.
    np.testing.assert_allclose(reg.coefs_[0].ravel(), beta[:3], atol=5e-8)
    np.testing.assert_allclose(reg.intercepts_[0], beta[3:], atol=5e-8)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_no_hidden_layer_lbfgs_is_logistic_regression(n_classes):
    """mean log-loss + alpha ||W||^2 / (2n) is LogisticRegression's C sum + ||W||^2 / 2
    divided by C n, with C = 1 / alpha."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((90, 2))
    y = rng.integers(0, n_classes, 90)
    X += 0.8 * y[:, None]
    alpha = 0.5
    mlp = MLPClassifier((), solver="lbfgs", alpha=alpha, tol=1e-8, max_iter=1000).fit(X, y)
    lr = LogisticRegression(C=1 / alpha, tol=1e-8, max_iter=1000).fit(X, y)
    # Both stop with gradients below 1e-8 (per sample); the Hessian's smallest eigenvalue is
    # at least alpha / n ~ 5e-3, so the weights agree to ~ 4e-6 and the probabilities
    # (Lipschitz 1/4 in the logits, |x| < 5) to ~ 1e-5.
    np.testing.assert_allclose(mlp.predict_proba(X), lr.predict_proba(X), atol=1e-5)


def test_partial_fit_equals_fit_epoch_by_epoch(digits):
    Xtr, _, ytr, _ = digits
    kw = dict(hidden_layer_sizes=(16,), random_state=3, learning_rate_init=0.01)
    full = _quiet(MLPClassifier(max_iter=3, **kw), Xtr, ytr)
    inc = MLPClassifier(**kw)
    for _ in range(3):
        inc.partial_fit(Xtr, ytr, classes=np.arange(10))
    np.testing.assert_allclose(inc.loss_curve_, full.loss_curve_, rtol=1e-6)
    for a, b in zip(inc.coefs_, full.coefs_, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="not among the classes"):
        inc.partial_fit(Xtr[:5], np.array([0, 1, 2, 3, 11]))
    with pytest.raises(ValueError, match="classes must be given"):
        MLPClassifier().partial_fit(Xtr, ytr)
    with pytest.raises(AttributeError, match="lbfgs"):
        MLPClassifier(solver="lbfgs").partial_fit(Xtr, ytr, classes=np.arange(10))


def test_early_stopping_records_validation_scores(digits):
    Xtr, _, ytr, _ = digits
    clf = MLPClassifier(
        (16,),
        early_stopping=True,
        n_iter_no_change=3,
        max_iter=200,
        learning_rate_init=0.02,
        random_state=0,
    ).fit(Xtr, ytr)
    scores = clf.validation_scores_
    assert len(scores) == clf.n_iter_ == len(clf.loss_curve_) < 200
    assert clf.best_validation_score_ == max(scores)
    assert clf.history_["val_score"] == scores and clf.history_["loss"] == clf.loss_curve_
    # The weights kept are the best epoch's: their validation accuracy is the best score.
    assert clf.best_validation_score_ > 0.9


@pytest.mark.parametrize(
    "params",
    [
        dict(solver="sgd", learning_rate_init=0.1),
        dict(solver="sgd", learning_rate_init=0.1, nesterovs_momentum=False),
        dict(solver="sgd", learning_rate_init=0.5, momentum=0.0, learning_rate="invscaling"),
        dict(solver="sgd", learning_rate_init=0.1, learning_rate="adaptive"),
        dict(solver="rprop", learning_rate_init=0.01),
        dict(solver="lbfgs"),
        dict(activation="tanh", learning_rate_init=0.02),
        dict(activation="leaky_relu", learning_rate_init=0.02),
        dict(activation="gelu", learning_rate_init=0.02),
        dict(activation="logistic", learning_rate_init=0.05),
    ],
)
def test_solvers_and_activations_separate_blobs(params):
    rng = np.random.default_rng(0)
    centres = np.array([[0, 0], [3, 3], [0, 4]])
    y = np.repeat([0, 1, 2], 30)
    X = centres[y] + 0.4 * rng.standard_normal((90, 2))
    # Blobs 3 apart with sd 0.4: separable with margin ~ 7 sd; training accuracy must be 1.
    clf = _quiet(MLPClassifier((8,), max_iter=150, random_state=0, **params), X, y)
    assert clf.score(X, y) == 1.0
    assert clf.loss_curve_[-1] < clf.loss_curve_[0]


def test_mc_dropout_matches_the_formula():
    rng = np.random.default_rng(0)
    X = np.linspace(-2, 2, 80)[:, None]
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(80)
    reg = _quiet(
        MLPRegressor(
            (32,),
            dropout=0.2,
            n_mc_samples=50,
            tau=25.0,
            learning_rate_init=0.01,
            max_iter=100,
            random_state=1,
            activation="tanh",
        ),
        X,
        y,
    )
    mean, std = reg.predict(X[:5], return_std=True)
    # Recompute: T passes with dropout on, from the generator of random_state.
    from mathlearn.utils.validation import check_random_state

    net = reg.module_
    net.set_random_state(check_random_state(1)).train()
    draws = np.stack([net(X[:5]).astype(np.float64).ravel() for _ in range(50)])
    net.eval()
    np.testing.assert_allclose(mean, draws.mean(0), rtol=1e-12)
    np.testing.assert_allclose(std, np.sqrt(draws.var(0) + 1 / 25.0), rtol=1e-12)
    assert np.all(std > 0.2)  # at least sqrt(1 / tau)
    # Deterministic prediction: the weight-scaled network (dropout off).
    np.testing.assert_allclose(reg.predict(X[:5]), net(X[:5]).ravel(), rtol=1e-12)
    with pytest.raises(ValueError, match="dropout > 0"):
        _quiet(MLPRegressor((4,), max_iter=2), X, y).predict(X, return_std=True)
    # tau=None: 1/tau is the mean squared training residual.
    reg2 = _quiet(MLPRegressor((8,), dropout=0.1, max_iter=20, random_state=0), X, y)
    np.testing.assert_allclose(
        reg2.noise_variance_, np.mean((reg2.predict(X) - y) ** 2), rtol=1e-6
    )


def test_multi_output_regression_and_shapes():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    Y = np.column_stack([X[:, 0], X[:, 1] - X[:, 2]])
    reg = MLPRegressor((), solver="lbfgs", alpha=0.0, tol=1e-10).fit(X, Y)
    assert reg.predict(X).shape == (60, 2) and reg.n_outputs_ == 2
    np.testing.assert_allclose(reg.predict(X), Y, atol=1e-7)
    assert reg.coefs_[0].shape == (3, 2)


def test_bad_input():
    X = np.random.default_rng(0).standard_normal((20, 2))
    y = np.arange(20) % 2
    Xnan = X.copy()
    Xnan[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        MLPClassifier().fit(Xnan, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        MLPClassifier().fit(X, np.zeros(20))
    with pytest.raises(ValueError, match="float32"):
        MLPClassifier().fit(X * 1e35, y)
    with pytest.raises(ValueError, match="cannot resolve"):
        MLPClassifier().fit(X + 1e8, y)
    with pytest.raises(ValueError, match="hidden_layer_sizes"):
        MLPClassifier((3, 0)).fit(X, y)
    clf = _quiet(MLPClassifier((4,), max_iter=5), X, y)
    with pytest.raises(ValueError, match="far outside"):
        clf.predict(X * 1e40)
    with pytest.raises(ValueError, match="2 features"):
        clf.predict(np.ones((2, 3)))


def test_diverging_training_stops_with_a_clear_error():
    X, y = make_regression(n_samples=100, n_features=4, random_state=0)
    reg = MLPRegressor(
        (16,), solver="sgd", learning_rate_init=1e3, momentum=0.0, max_iter=50, random_state=0
    )
    with pytest.raises(TrainingDivergedError, match="learning rate"):
        reg.fit(X, y)
    assert all(np.all(np.isfinite(v)) for v in reg.module_.parameters().values())


def test_reproducible_with_random_state(digits):
    Xtr, _, ytr, _ = digits
    a = _quiet(MLPClassifier((8,), max_iter=3, random_state=5), Xtr, ytr)
    b = _quiet(MLPClassifier((8,), max_iter=3, random_state=5), Xtr, ytr)
    assert a.loss_curve_ == b.loss_curve_
    np.testing.assert_array_equal(a.predict_proba(Xtr), b.predict_proba(Xtr))
    assert a.coefs_[0].dtype == np.float32


def test_float32_resolution_check_names_the_column():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 3))
    y = (X[:, 0] > 0).astype(int)
    # A column at 1e4 +- 1: float32 rounds it by at most half an ulp (2^-11 / 2 ~ 4.9e-4),
    # below 1e-3 of its spread: accepted (it is near enough to the limit to be checked
    # exactly rather than screened out by its range).
    Xa = X.copy()
    Xa[:, 1] += 1e4
    _quiet(MLPClassifier((4,), max_iter=2, random_state=0), Xa, y)
    # At 1e6 +- 0.01 the rounding (up to 2^-5 ~ 0.031) swamps the spread: refused, by name.
    Xb = X.copy()
    Xb[:, 2] = 0.01 * Xb[:, 2] + 1e6
    with pytest.raises(ValueError, match=r"feature 2 varies by 0\.0"):
        MLPClassifier().fit(Xb, y)


@pytest.mark.parametrize("early_stopping", [False, True])
@pytest.mark.parametrize("Est", [MLPClassifier, MLPRegressor])
def test_fit_makes_no_float32_copy_of_X(Est, early_stopping):
    # The network computes in float32, but the training casts one minibatch at a time and
    # early stopping reads its training rows from X in place: the fit's peak NumPy memory
    # stays well under one float32 copy of X (it was 1.1 copies, 2.3 with early stopping).
    rng = np.random.default_rng(0)
    n, d = 20_000, 50
    X = rng.standard_normal((n, d))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) if Est is MLPClassifier else X[:, 0] - X[:, 1]
    est = Est((8,), max_iter=1, random_state=0, early_stopping=early_stopping)
    tracemalloc.start()
    _quiet(est, X, y)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 0.5 * n * d * 4


@pytest.mark.parametrize("params", [{}, {"activation": "tanh"}, {"dropout": 0.3}])
def test_prediction_is_the_network_applied_to_the_rows(params):
    # The evaluation pass applies ReLU in place; it must give the bits of the layers
    # applied one after the other (float64, the weights promoted), and the MC-dropout
    # noise variance the mean squared residual of that pass.
    rng = np.random.default_rng(1)
    X = rng.standard_normal((700, 6))
    y = np.sin(X[:, 0]) + X[:, 1] ** 2
    reg = _quiet(MLPRegressor((40, 30), max_iter=5, random_state=0, **params), X, y)
    ref = np.asarray(reg.module_.eval()(X)).ravel()
    np.testing.assert_array_equal(reg.predict(X), ref)
    np.testing.assert_allclose(reg.noise_variance_, np.mean((ref - y) ** 2), rtol=1e-12)


def test_float32_rounded_copy_by_blocks():
    from mathlearn.neural_network._multilayer_perceptron import _float32_rounded

    rng = np.random.default_rng(2)
    X = rng.standard_normal((100, 3_000)) * 1e3  # several blocks of rows
    ref = X.astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(_float32_rounded(X), ref)
    rows = rng.permutation(100)[:37]
    np.testing.assert_array_equal(_float32_rounded(X, rows), ref[rows])


def test_float32_input_is_read_in_place_with_the_float64_results():
    rng = np.random.default_rng(3)
    n, d = 20_000, 50
    X = rng.standard_normal((n, d)).astype(np.float32)
    y = X[:, 0] - X[:, 1] ** 2
    kw = dict(hidden_layer_sizes=(8,), max_iter=2, random_state=0)
    tracemalloc.start()
    a = _quiet(MLPRegressor(**kw), X, y)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 0.25 * n * d * 4
    b = _quiet(MLPRegressor(**kw), X.astype(np.float64), y)
    assert a.loss_curve_ == b.loss_curve_
    for u, v in zip(a.coefs_ + a.intercepts_, b.coefs_ + b.intercepts_, strict=True):
        np.testing.assert_array_equal(u, v)
    assert a.noise_variance_ == b.noise_variance_
