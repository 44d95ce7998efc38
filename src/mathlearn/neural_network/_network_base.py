"""Shared machinery of the convolutional, recurrent and autoencoder estimators.

Inputs are centred and divided by one scale learned in ``fit`` (means per channel or per
feature, one standard deviation for all entries), so that data far from the origin or at
extreme scales (1e-300, 1e300) reach the network with unit scale; a single scale (not one per
feature) keeps the geometry of the data, which the autoencoder's PCA equivalence needs.
Training is :class:`mathlearn.nn.Trainer` with Adam, minibatches, weight decay ``alpha``,
optional early stopping on a validation split, and the plateau rule of scikit-learn's MLPs
(stop when the training loss has not decreased by ``tol`` for ``n_iter_no_change`` epochs;
a :class:`~mathlearn.exceptions.ConvergenceWarning` when ``max_iter`` epochs end first).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np

from .. import nn, optim
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval
from ..utils.validation import check_random_state

__all__: list[str] = []

TRAINING_CONSTRAINTS: dict = {
    "learning_rate": [Interval(Real, 0, None, closed="neither")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "batch_size": [Interval(Integral, 1, None, closed="left")],
    "alpha": [Interval(Real, 0, None, closed="left")],
    "early_stopping": ["boolean"],
    "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
    "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "random_state": ["random_state"],
}

TRAINING_PARAMS_DOC = """learning_rate : float, default=1e-2
        Adam's step size.
    max_iter : int, default=100
        Maximum number of epochs.
    batch_size : int, default=64
        Minibatch size (capped at the number of samples).
    alpha : float, default=1e-4
        Weight decay: ``(alpha / 2) ||W||^2`` on every weight matrix and filter bank.
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
        Source of the initial weights, the shuffling and the validation split."""


def center_scale(X: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, float]:
    """Means over ``axes`` (kept for broadcasting) and one scale for the centred data."""
    mean = X.mean(axis=axes, keepdims=True)
    centred = X - mean
    # The scale of the centred entries, computed without overflow for data near 1e300.
    peak = float(np.max(np.abs(centred))) if centred.size else 0.0
    if not np.isfinite(peak):
        raise ValueError("X is too large to centre in float64 (its range overflows).")
    if peak == 0.0:
        return mean, 1.0
    scale = peak * float(np.sqrt(np.mean((centred / peak) ** 2)))
    return mean, scale if scale > 0 else 1.0


def standardize(X: np.ndarray, mean: np.ndarray, scale: float, dtype) -> np.ndarray:
    out = (X - mean) / scale
    # Entries beyond the float32 range would become inf: far outside the training data.
    if dtype == np.float32 and np.any(np.abs(out) > 1e30):
        raise ValueError(
            "X lies more than 1e30 training standard deviations from the training data."
        )
    return out.astype(dtype)


def train_network(
    est: Any,
    module: nn.Module,
    loss,
    X: np.ndarray,
    y: np.ndarray | None,
    *,
    rng: np.random.Generator,
    score=None,
) -> nn.Trainer:
    """Fit ``module`` with the estimator's training parameters; sets ``history_`` etc."""
    n = len(X)
    validation = None
    Xt, yt = X, y
    if est.early_stopping:
        n_val = max(1, round(est.validation_fraction * n))
        if n - n_val < 1:
            raise ValueError(
                f"early_stopping needs at least 2 samples to hold out a validation set; got {n}."
            )
        order = rng.permutation(n)
        val, tr = order[:n_val], order[n_val:]
        Xt, validation = X[tr], (X[val], X[val] if y is None else y[val])
        yt = None if y is None else y[tr]
    trainer = nn.Trainer(
        module,
        loss,
        optim.adam(est.learning_rate),
        batch_size=min(int(est.batch_size), len(Xt)),
        weight_decay=est.alpha,
        random_state=rng,
    )
    trainer._decay_per_sample = True
    history = trainer.fit(
        Xt,
        yt,
        epochs=est.max_iter,
        validation_data=validation,
        early_stopping=est.early_stopping,
        n_iter_no_change=est.n_iter_no_change,
        tol=est.tol,
        score=score,
        stop_on_plateau=not est.early_stopping,
    )
    module.eval()
    est.history_ = {k: list(v) for k, v in history.items()}
    est.loss_curve_ = list(history["loss"])
    est.n_iter_ = len(history["loss"])
    if not trainer.stopped_early_:
        warnings.warn(
            f"{type(est).__name__}: training stopped after max_iter={est.max_iter} epochs "
            "while the loss was still decreasing; increase max_iter.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return trainer


def make_rng(random_state) -> np.random.Generator:
    return check_random_state(random_state)


def predict_batches(module: nn.Module, X: np.ndarray, batch: int = 1024, **kwargs) -> np.ndarray:
    """The module's output on ``X`` in evaluation mode, in batches, without a graph.

    The float32 weights are evaluated in float64, so that a sample's output does not depend
    on which other samples share its batch (float32 matrix products round differently for
    different batch sizes, by about 1e-7).
    """
    from .. import autodiff as ad

    module.eval()
    params = {k: np.asarray(v, dtype=np.float64) for k, v in module.parameters().items()}
    X = np.asarray(X, dtype=np.float64)
    outs = []
    with ad.no_grad():
        for start in range(0, len(X), batch):
            kw = {k: v[start : start + batch] for k, v in kwargs.items() if v is not None}
            outs.append(
                np.asarray(nn.functional_call(module, params, X[start : start + batch], **kw))
            )
    return np.concatenate(outs, axis=0)
