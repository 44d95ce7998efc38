"""RecurrentClassifier / RecurrentRegressor: outputs against a NumPy loop over the LSTM/GRU
equations, padded batches with lengths against each sequence alone, a task with a known
solution, bad input."""

import warnings

import numpy as np
import pytest

from mathlearn.exceptions import ConvergenceWarning
from mathlearn.neural_network import RecurrentClassifier, RecurrentRegressor


def _fit(est, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(*args, **kwargs)


def _sig(a):
    return 1 / (1 + np.exp(-a))


def _numpy_forward(est, X):
    """Last LSTM / GRU state of standardised sequences, then the linear read-out."""
    p = {k: np.asarray(v, np.float64) for k, v in est.network_.parameters().items()}
    X = (X[:, :, None] if X.ndim == 2 else X - 0) - est.input_mean_
    X = X / est.input_scale_
    H = est.hidden_size
    h = np.zeros((len(X), H))
    c = np.zeros((len(X), H))
    for t in range(X.shape[1]):
        a = X[:, t] @ p["rnn.weight_ih"].T + p["rnn.bias"]
        if est.cell == "lstm":
            a = a + h @ p["rnn.weight_hh"].T
            i, f, g, o = (
                _sig(a[:, :H]),
                _sig(a[:, H : 2 * H]),
                np.tanh(a[:, 2 * H : 3 * H]),
                _sig(a[:, 3 * H :]),
            )
            c = f * c + i * g
            h = o * np.tanh(c)
        else:
            hh = h @ p["rnn.weight_hh"].T + p["rnn.bias_hh"]
            r, z = _sig(a[:, :H] + hh[:, :H]), _sig(a[:, H : 2 * H] + hh[:, H : 2 * H])
            n = np.tanh(a[:, 2 * H :] + r * hh[:, 2 * H :])
            h = (1 - z) * n + z * h
    return h @ p["head.weight"].T + p["head.bias"]


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_outputs_match_a_numpy_loop(rng, cell):
    X = rng.standard_normal((30, 5, 2)) + 3.0
    y = (X[:, -1, 0] > 3.0).astype(int)
    clf = _fit(RecurrentClassifier(cell=cell, hidden_size=4, max_iter=3, random_state=0), X, y)
    z = _numpy_forward(clf, X)
    p = np.exp(z - z.max(1, keepdims=True))
    np.testing.assert_allclose(clf.predict_proba(X), p / p.sum(1, keepdims=True), rtol=1e-10)
    y_real = X[:, :, 0].sum(axis=1)
    reg = _fit(RecurrentRegressor(cell=cell, hidden_size=4, max_iter=3, random_state=0), X, y_real)
    expected = _numpy_forward(reg, X)[:, 0] * reg.target_scale_ + reg.target_mean_
    np.testing.assert_allclose(reg.predict(X), expected, rtol=1e-10)


def test_padded_batch_with_lengths_equals_each_sequence_alone(rng):
    X = rng.standard_normal((40, 6))
    lengths = rng.integers(2, 7, size=40)
    y = np.array([X[i, : lengths[i]].sum() for i in range(40)])
    reg = _fit(
        RecurrentRegressor(hidden_size=6, max_iter=5, random_state=0), X, y, lengths=lengths
    )
    batch = reg.predict(X, lengths=lengths)
    for i in (0, 1, 2, 3):
        alone = reg.predict(X[i : i + 1, : lengths[i]].reshape(1, -1, 1))
        np.testing.assert_allclose(batch[i], alone[0], rtol=1e-12)


def test_learns_the_running_sum(rng):
    # y = sum of the sequence: a linear recurrence the LSTM represents easily.
    X = rng.standard_normal((300, 8))
    y = X.sum(axis=1)
    reg = _fit(
        RecurrentRegressor(hidden_size=16, max_iter=60, batch_size=32, random_state=0), X, y
    )
    Xt = rng.standard_normal((200, 8))
    # Noise-free target, R^2 of the best predictor = 1; 0.95 after 60 epochs for any seed.
    assert reg.score(Xt, Xt.sum(axis=1)) > 0.95


def test_bad_input(rng):
    clf = RecurrentClassifier(hidden_size=3, max_iter=2)
    with pytest.raises(ValueError, match=r"different lengths.*pad_sequences"):
        clf.fit([np.zeros((4, 2)), np.zeros((3, 2))], [0, 1])
    with pytest.raises(ValueError, match="rank 4"):
        clf.fit(np.zeros((4, 3, 2, 2)), [0, 1, 0, 1])
    X = rng.standard_normal((10, 4, 2))
    bad = X.copy()
    bad[3, 2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clf.fit(bad, np.arange(10) % 2)
    with pytest.raises(ValueError, match="lengths must lie"):
        clf.fit(X, np.arange(10) % 2, lengths=np.full(10, 5))
    _fit(clf, X, np.arange(10) % 2)
    with pytest.raises(ValueError, match="2 features per step"):
        clf.predict(np.zeros((3, 4, 3)))
