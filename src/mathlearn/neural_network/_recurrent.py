"""Recurrent sequence classifier and regressor (LSTM, GRU or Elman RNN + linear read-out)."""

from __future__ import annotations

from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from .. import autodiff as ad
from .. import nn
from ..base import BaseClassifier, BaseEstimator, _fit_context
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import validate_data
from ._network_base import (
    TRAINING_CONSTRAINTS,
    center_scale,
    make_rng,
    predict_batches,
    train_network,
)

__all__ = ["RecurrentClassifier", "RecurrentRegressor"]

_CELLS = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}


class _SequenceNet(nn.Module):
    """Recurrent layer (last state) and a linear read-out. The input carries its mask as
    the last feature, so that minibatches keep each sequence's length."""

    def __init__(self, cell: str, n_in: int, hidden: int, n_out: int, rng) -> None:
        super().__init__()
        self.rnn = _CELLS[cell](n_in, hidden, output="last", random_state=rng)
        self.head = nn.Linear(hidden, n_out, random_state=rng)

    def forward(self, x):
        value = x.value if isinstance(x, ad.Tensor) else x
        mask = np.asarray(value[:, :, -1]) > 0.5
        features = x[:, :, :-1]
        return self.head(self.rnn(features, mask=None if mask.all() else mask))


def _ragged_error(X) -> None:
    if isinstance(X, list | tuple) and len(X) > 0 and hasattr(X[0], "__len__"):
        lengths = {len(s) for s in X}
        if len(lengths) > 1:
            raise ValueError(
                f"the sequences have different lengths {sorted(lengths)[:5]}: pad them "
                "(mathlearn.nn.pad_sequences) and pass lengths=..."
            )


class _RecurrentBase(BaseEstimator):
    _parameter_constraints: ClassVar[dict] = {
        "cell": [StrOptions(set(_CELLS))],
        "hidden_size": [Interval(Integral, 1, None, closed="left")],
        **TRAINING_CONSTRAINTS,
    }
    _common_test_convergence_warning_expected = True

    def __init__(
        self,
        *,
        cell: str = "lstm",
        hidden_size: int = 32,
        learning_rate: float = 1e-2,
        max_iter: int = 100,
        batch_size: int = 64,
        alpha: float = 1e-4,
        early_stopping: bool = False,
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 10,
        tol: float = 1e-4,
        random_state: Any = None,
    ) -> None:
        self.cell = cell
        self.hidden_size = hidden_size
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.alpha = alpha
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.random_state = random_state

    def _sequences(self, X, y=None, lengths=None, reset=False):
        """``(N, T, D + 1)`` standardised sequences with the mask as last feature."""
        _ragged_error(X)
        if reset:
            X, y = validate_data(
                self, X, y, dtype=np.float64, allow_nd=True, y_numeric=self._regression
            )
        elif np.asarray(X).ndim == 3:
            # Sequences of any length T are fine at prediction time; D is checked below.
            X = check_array(X, dtype=np.float64, allow_nd=True)
        else:
            X = validate_data(self, X, dtype=np.float64, allow_nd=True, reset=False)
        if X.ndim == 2:
            X = X[:, :, None]
        if X.ndim != 3:
            raise ValueError(
                f"{type(self).__name__} expects sequences of shape (N, T, D) or (N, T); got "
                f"an array of rank {X.ndim}."
            )
        n, t, d = X.shape
        if lengths is None:
            mask = np.ones((n, t), dtype=bool)
        else:
            lengths = np.asarray(lengths)
            if lengths.shape != (n,) or lengths.dtype.kind not in "iu":
                raise ValueError(f"lengths must be {n} integers; got shape {lengths.shape}.")
            if np.any(lengths < 1) or np.any(lengths > t):
                raise ValueError(f"lengths must lie in 1..{t}.")
            mask = np.arange(t) < lengths[:, None]
        if reset:
            self.n_step_features_ = d
            mean, self.input_scale_ = center_scale(X[mask], (0,))
            self.input_mean_ = mean[0]
        elif d != self.n_step_features_:
            raise ValueError(
                f"{type(self).__name__} was fitted on {self.n_step_features_} features per "
                f"step; got {d}."
            )
        Z = np.where(mask[:, :, None], (X - self.input_mean_) / self.input_scale_, 0.0)
        return np.concatenate([Z, mask[:, :, None].astype(np.float64)], axis=2), y

    def _build(self, n_out: int, rng) -> _SequenceNet:
        return _SequenceNet(self.cell, self.n_step_features_, int(self.hidden_size), n_out, rng)


class RecurrentClassifier(_RecurrentBase, BaseClassifier):
    """Sequence classifier: an LSTM, GRU or Elman RNN read by a linear softmax layer.

    Parameters
    ----------
    cell : {"lstm", "gru", "rnn"}, default="lstm"
        The recurrent layer.
    hidden_size : int, default=32
        Width ``H`` of its state.
    learning_rate : float, default=1e-2
        Adam's step size.
    max_iter : int, default=100
        Maximum number of epochs.
    batch_size : int, default=64
        Minibatch size (capped at the number of samples).
    alpha : float, default=1e-4
        Weight decay: ``(alpha / 2) ||W||^2`` on every weight matrix.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the data, stop when its loss has not improved
        by ``tol`` for ``n_iter_no_change`` epochs and keep the best weights.
    validation_fraction : float, default=0.1
        Share of the data held out for early stopping.
    n_iter_no_change : int, default=10
        Patience, in epochs.
    tol : float, default=1e-4
        Least decrease of the (training or validation) loss that counts as progress.
    random_state : int, Generator, RandomState or None, default=None
        Source of the initial weights, the shuffling and the validation split.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    network_ : mathlearn.nn.Module
        Recurrent layer (``network_.rnn``) and read-out (``network_.head``).
    input_mean_ : ndarray of shape (D,)
        Mean of the step features over the real steps.
    input_scale_ : float
        Their standard deviation (one for all features).
    n_step_features_ : int
        ``D``.
    history_ : dict of lists
        ``"loss"`` per epoch (and validation curves with early stopping).
    loss_curve_ : list of float
        Mean training loss per epoch.
    n_iter_ : int
        Epochs run.
    n_features_in_ : int
        ``X.shape[1]`` of the training input (the number of steps ``T``).

    Notes
    -----
    Sequences are ``(N, T, D)`` (batch first) or ``(N, T)`` for one feature per step; 3-D
    input may have another ``T`` at prediction time than in training (2-D input may not: its
    columns are read as features).
    Sequences of different lengths are padded at the end and described by ``lengths``
    (``fit(X, y, lengths=...)``, ``predict(X, lengths=...)``); the class is read from the
    state at each sequence's own last step. A list of sequences of different lengths is
    refused. The cells are those of :mod:`mathlearn.nn` (Stuttgart "Introduction to Machine
    Learning", §2.3, LSTM and GRU), trained by backpropagation through time on the softmax
    cross-entropy.

    Complexity (``N`` sequences of ``T`` steps of ``D`` features, ``H = hidden_size``, ``G``
    gate blocks, 4 for the LSTM, 3 for the GRU and 1 for the Elman RNN, ``K`` classes,
    ``B = batch_size``): an epoch costs ``O(N T G H (D + H) + N H K)`` time, the input and
    recurrent products of every step forward and backward through time, so ``E`` epochs cost
    ``E`` times that: linear in ``N`` and ``T``, quadratic in ``H``. Memory beyond ``X``: its
    standardised copies with the mask (float64 and float32, ``N T (D + 1)`` entries each),
    the ``O(G H (D + H) + H K)`` weights with Adam's two moments, and what
    backpropagation through time keeps of one minibatch, the states and gates of every step,
    ``O(B T G H)``. Prediction of ``M`` sequences: ``O(M T G H (D + H) + M H K)``, in batches of
    1 024.

    See Also
    --------
    RecurrentRegressor : The same network with a squared loss.
    mathlearn.nn.LSTM : The layer.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neural_network import RecurrentClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((40, 5)); y = (X[:, -1] > 0).astype(int)  # sign of the last step
    >>> clf = RecurrentClassifier(hidden_size=8, batch_size=10, tol=1e-2, random_state=0)
    >>> clf.fit(X, y).score(X, y)
    1.0
    """

    _regression = False
    # The common checks' blobs need training accuracy > 0.83: ten epochs give at least 0.90
    # over 30 seeds (binary, multiclass and float32 data).
    _common_test_params = {"max_iter": 10, "hidden_size": 8}

    @_fit_context
    def fit(self, X: Any, y: Any, lengths: Any = None) -> RecurrentClassifier:
        """Train on labelled sequences.

        Parameters
        ----------
        X : array-like of shape (n_samples, T, D) or (n_samples, T)
            Sequences, padded at the end when ``lengths`` is given.
        y : array-like of shape (n_samples,)
            Class labels.
        lengths : array-like of int of shape (n_samples,), optional
            Length of each sequence.

        Returns
        -------
        self : RecurrentClassifier
            The fitted classifier.
        """
        Z, y = self._sequences(X, y, lengths, reset=True)
        y_idx = self._encode_labels(y)
        rng = make_rng(self.random_state)
        self.network_ = self._build(len(self.classes_), rng)
        train_network(self, self.network_, nn.cross_entropy, Z.astype(np.float32), y_idx, rng=rng)
        return self

    def _validate_X_predict(self, X, lengths=None):
        check_is_fitted(self)
        return self._sequences(X, lengths=lengths)[0]

    def _joint_log_likelihood(self, Z):
        z = predict_batches(self.network_, Z)
        z = z - z.max(axis=1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=1, keepdims=True))

    def predict(self, X: Any, lengths: Any = None) -> np.ndarray:
        """Most probable class of each sequence.

        Parameters
        ----------
        X : array-like of shape (n_samples, T, D) or (n_samples, T)
            Sequences.
        lengths : array-like of int of shape (n_samples,), optional
            Length of each sequence.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels.
        """
        jll = self._joint_log_likelihood(self._validate_X_predict(X, lengths))
        return self.classes_[np.argmax(jll, axis=1)]

    def predict_log_proba(self, X: Any, lengths: Any = None) -> np.ndarray:
        """Log class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, T, D) or (n_samples, T)
            Sequences.
        lengths : array-like of int of shape (n_samples,), optional
            Length of each sequence.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            ``log p(c | sequence)``.
        """
        return self._joint_log_likelihood(self._validate_X_predict(X, lengths))

    def predict_proba(self, X: Any, lengths: Any = None) -> np.ndarray:
        """Class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, T, D) or (n_samples, T)
            Sequences.
        lengths : array-like of int of shape (n_samples,), optional
            Length of each sequence.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Rows sum to one.
        """
        return np.exp(self.predict_log_proba(X, lengths))

    def decision_function(self, X: Any, lengths: Any = None) -> np.ndarray:
        """Log-odds of ``classes_[1]`` for two classes; log probabilities otherwise.

        Parameters
        ----------
        X : array-like of shape (n_samples, T, D) or (n_samples, T)
            Sequences.
        lengths : array-like of int of shape (n_samples,), optional
            Length of each sequence.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            The scores.
        """
        jll = self.predict_log_proba(X, lengths)
        return jll[:, 1] - jll[:, 0] if jll.shape[1] == 2 else jll


class RecurrentRegressor(RegressorMixin, _RecurrentBase):
    """Sequence regressor: an LSTM, GRU or Elman RNN read by a linear layer.

    Parameters
    ----------
    cell : {"lstm", "gru", "rnn"}, default="lstm"
        The recurrent layer.
    hidden_size : int, default=32
        Width ``H`` of its state.
    learning_rate : float, default=1e-2
        Adam's step size.
    max_iter : int, default=100
        Maximum number of epochs.
    batch_size : int, default=64
        Minibatch size (capped at the number of samples).
    alpha : float, default=1e-4
        Weight decay: ``(alpha / 2) ||W||^2`` on every weight matrix.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the data, stop when its loss has not improved
        by ``tol`` for ``n_iter_no_change`` epochs and keep the best weights.
    validation_fraction : float, default=0.1
        Share of the data held out for early stopping.
    n_iter_no_change : int, default=10
        Patience, in epochs.
    tol : float, default=1e-4
        Least decrease of the (training or validation) loss that counts as progress.
    random_state : int, Generator, RandomState or None, default=None
        Source of the initial weights, the shuffling and the validation split.

    Attributes
    ----------
    network_ : mathlearn.nn.Module
        Recurrent layer (``network_.rnn``) and read-out (``network_.head``).
    input_mean_ : ndarray of shape (D,)
        Mean of the step features over the real steps.
    input_scale_ : float
        Their standard deviation (one for all features).
    target_mean_, target_scale_ : float
        Standardisation of ``y`` during training.
    n_step_features_ : int
        ``D``.
    history_ : dict of lists
        ``"loss"`` per epoch (and validation curves with early stopping).
    loss_curve_ : list of float
        Mean training loss per epoch (standardised target).
    n_iter_ : int
        Epochs run.
    n_features_in_ : int
        ``X.shape[1]`` of the training input (the number of steps ``T``).

    Notes
    -----
    As :class:`RecurrentClassifier`, with the squared loss on the standardised target.

    Complexity as for :class:`RecurrentClassifier` with one output: for ``N`` sequences of
    ``T`` steps of ``D`` features, ``H = hidden_size`` and ``G`` gate blocks (4, 3 or 1 for
    the LSTM, GRU or RNN), an epoch costs ``O(N T G H (D + H))`` time; memory ``O(N T D)`` for
    the standardised copies of ``X`` plus ``O(B T G H)`` kept for backpropagation through
    time on a minibatch of ``B = batch_size`` sequences. Prediction of ``M`` sequences:
    ``O(M T G H (D + H))``.

    See Also
    --------
    RecurrentClassifier : The classifier.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neural_network import RecurrentRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((80, 5)); y = X[:, -1] + 0.5 * X[:, -2]
    >>> reg = RecurrentRegressor(hidden_size=8, batch_size=16, max_iter=300, tol=1e-3,
    ...                          random_state=0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.9)
    True
    """

    _regression = True
    _common_test_params = {"max_iter": 5, "hidden_size": 4}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # Tabular rows read as sequences of one feature per step, a few epochs in the
        # common checks: the R^2 > 0.5 check on generic regression data is not this model's.
        tags.regressor_tags.poor_score = True
        return tags

    @_fit_context
    def fit(self, X: Any, y: Any, lengths: Any = None) -> RecurrentRegressor:
        """Train on sequences with real targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, T, D) or (n_samples, T)
            Sequences, padded at the end when ``lengths`` is given.
        y : array-like of shape (n_samples,)
            Targets.
        lengths : array-like of int of shape (n_samples,), optional
            Length of each sequence.

        Returns
        -------
        self : RecurrentRegressor
            The fitted regressor.
        """
        Z, y = self._sequences(X, y, lengths, reset=True)
        y = np.asarray(y, dtype=np.float64)
        mean, self.target_scale_ = center_scale(y[:, None], (0,))
        self.target_mean_ = float(mean[0, 0])
        t = ((y - self.target_mean_) / self.target_scale_)[:, None]
        rng = make_rng(self.random_state)
        self.network_ = self._build(1, rng)
        train_network(
            self, self.network_, nn.mse_loss, Z.astype(np.float32), t.astype(np.float32), rng=rng
        )
        return self

    def predict(self, X: Any, lengths: Any = None) -> np.ndarray:
        """Predicted targets.

        Parameters
        ----------
        X : array-like of shape (n_samples, T, D) or (n_samples, T)
            Sequences.
        lengths : array-like of int of shape (n_samples,), optional
            Length of each sequence.

        Returns
        -------
        ndarray of shape (n_samples,)
            The predictions.
        """
        check_is_fitted(self)
        Z, _ = self._sequences(X, lengths=lengths)
        out = predict_batches(self.network_, Z)[:, 0]
        return out * self.target_scale_ + self.target_mean_
