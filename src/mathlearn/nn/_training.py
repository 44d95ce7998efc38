"""The training loop: minibatches, weight decay, clipping, validation, early stopping.

One step on a minibatch ``B`` (Stuttgart "Introduction to Machine Learning" §4,
"Optimizers"; PRML §5.2.4): the loss ``L(beta, B)`` and its gradient by one reverse sweep
(:func:`mathlearn.autodiff.value_and_grad` through :func:`functional_call`), then

- weight decay: ``g_W <- g_W + lambda W`` on the weights (names ending in ``weight``),
  which is the gradient of the penalty ``(lambda / 2) ||W||^2`` (the notes add ``lambda W``
  to the unregularised gradient; their printed penalty ``lambda W^2`` would give
  ``2 lambda W``);
- optional clipping of the gradient's global norm;
- the optimiser's update (any :mod:`mathlearn.optim` transformation; Adam by default).

With ``flat=True`` every parameter is a view into one contiguous buffer (the weights first,
then the rest), the gradient is gathered into one vector of the same layout, and the
optimiser, the weight decay, the clipping norm and the finiteness check each act on that
one vector: a step then costs a handful of array operations instead of a handful per
parameter. The arithmetic per entry is the same as in the per-parameter form, so the
parameters follow the same path; it suits optimisers that act entrywise or through the
global norm (all of :mod:`mathlearn.optim`'s first-order methods: ``sgd``, ``momentum``,
``nesterov``, ``adam``, ``nadam``, ``adagrad``, ``rmsprop``, ``rprop``,
``clip_by_global_norm``, ``scale``), not a preconditioner that expects the parameter tree.

A step whose loss or new parameters are not finite is refused: the parameters keep their
last finite values and :class:`TrainingDivergedError` says what happened and what to try.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import autodiff as ad
from .. import optim
from ..utils.validation import check_random_state
from ._module import Module

__all__ = ["Trainer", "TrainingDivergedError", "fit_module"]


class TrainingDivergedError(FloatingPointError, ValueError):
    """Training produced a non-finite loss or parameters; the last finite ones are kept.

    A ``FloatingPointError`` and a ``ValueError`` (the settings or data do not suit the
    problem).

    See Also
    --------
    mathlearn.nn.Trainer
        The training loop that raises it.

    Examples
    --------
    >>> from mathlearn.nn import TrainingDivergedError
    >>> issubclass(TrainingDivergedError, FloatingPointError)
    True
    """


def _check_finite_data(X: Any, name: str) -> None:
    arr = np.asarray(X)
    if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr.reshape(arr.shape[0], -1)))[0][0]
        raise ValueError(
            f"{name} contains NaN or infinity (first in sample {bad}); training on it would "
            "turn every weight into NaN."
        )


class Trainer:
    """Minibatch training of a :class:`Module` with a :mod:`mathlearn.optim` optimiser.

    Parameters
    ----------
    module : Module
        The network; its parameters are updated in place.
    loss : callable
        ``loss(output, target) -> scalar`` written with autodiff operations (for example
        :func:`cross_entropy`).
    optimizer : GradientTransformation, optional
        Default ``optim.adam(1e-3)``. Schedules are given to the optimiser
        (``optim.adam(optim.exponential_decay(1e-2, 0.99))``).
    batch_size : int or None, default=32
        Minibatch size; ``None`` uses the whole training set per step (full batch, as Rprop
        needs).
    shuffle : bool, default=True
        Reshuffle the samples every epoch.
    weight_decay : float, default=0.0
        ``lambda`` of the penalty ``(lambda / 2) ||W||^2`` on every parameter whose name ends
        in ``weight``.
    clip_norm : float or None, default=None
        Rescale each gradient to at most this global norm.
    callbacks : sequence of callables, default=()
        ``callback(epoch, history, module)`` after every epoch; returning ``True`` stops.
    progress : bool, default=False
        Show a progress bar over the epochs (tqdm).
    random_state : int, Generator or None, default=None
        Source of the shuffling and of dropout masks (given to the module).
    flat : bool, default=False
        Keep the parameters as views into one buffer and run the optimiser on it as one
        vector (see the module notes). Needs every parameter in one floating dtype.

    Attributes
    ----------
    history : dict of lists
        ``"loss"`` (mean training loss per epoch, penalty included), ``"val_loss"`` and
        ``"val_score"`` when validation data are given.
    opt_state : object
        The optimiser's state (kept between calls, so training can resume); with
        ``flat=True`` it is the state of the one flat vector.
    n_steps : int
        Updates made so far.

    See Also
    --------
    mathlearn.nn.fit_module
        The one-call form.
    mathlearn.optim
        The optimisers it drives.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn, optim
    >>> X = np.linspace(-1, 1, 64)[:, None]; y = 3 * X - 1
    >>> net = nn.Linear(1, 1, random_state=0)
    >>> trainer = nn.Trainer(net, nn.mse_loss, optim.adam(0.05), batch_size=16, random_state=0)
    >>> history = trainer.fit(X, y, epochs=200)
    >>> np.round(net.weight, 2), np.round(net.bias, 2)
    (array([[3.]], dtype=float32), array([-1.], dtype=float32))
    """

    def __init__(
        self,
        module: Module,
        loss: Callable[[Any, Any], Any],
        optimizer: optim.GradientTransformation | None = None,
        *,
        batch_size: int | None = 32,
        shuffle: bool = True,
        weight_decay: float = 0.0,
        clip_norm: float | None = None,
        callbacks: Sequence[Callable] = (),
        progress: bool = False,
        random_state: Any = None,
        flat: bool = False,
    ) -> None:
        if not isinstance(module, Module):
            raise TypeError(f"module must be a nn.Module; got {type(module).__name__}.")
        if batch_size is not None and int(batch_size) < 1:
            raise ValueError(f"batch_size must be positive or None; got {batch_size}.")
        if weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0; got {weight_decay}.")
        if clip_norm is not None and not clip_norm > 0:
            raise ValueError(f"clip_norm must be positive; got {clip_norm}.")
        self.module = module
        self.loss = loss
        self.optimizer = optimizer if optimizer is not None else optim.adam(1e-3)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.weight_decay = float(weight_decay)
        # Divide the decay by the batch size (scikit-learn's alpha convention), set by the
        # MLP estimators.
        self._decay_per_sample = False
        self.clip_norm = clip_norm
        self.callbacks = tuple(callbacks)
        self.progress = progress
        self.rng = check_random_state(random_state)
        module.set_random_state(self.rng)
        self.history: dict[str, list[float]] = {"loss": []}
        self.n_steps = 0
        self._decayed = [k for k in module.parameters() if k.split(".")[-1] == "weight"]

        # Where each dotted name lives, found once (the tree does not change while training).
        self._owners = {k: module._owner(k) for k in module.parameters()}
        owners = self._owners
        self.flat = bool(flat)
        if self.flat:
            self._init_flat()
            self.opt_state = self.optimizer.init(self._flat)
        else:
            self.opt_state = self.optimizer.init(module.parameters())

        def objective(params, xb, yb):
            saved = {k: m._parameters[leaf] for k, (m, leaf) in owners.items()}
            try:
                for k, (m, leaf) in owners.items():
                    m._parameters[leaf] = params[k]
                out = module(xb)
            finally:
                for k, (m, leaf) in owners.items():
                    m._parameters[leaf] = saved[k]
            return loss(out, yb)

        self._value_and_grad = ad.value_and_grad(objective)

    def _dtype(self):
        for v in self.module.parameters().values():
            return np.asarray(v).dtype
        return np.dtype(np.float64)

    def step(self, xb: Any, yb: Any) -> float:
        """One update on the minibatch ``(xb, yb)``; returns its loss (penalty included).

        Parameters
        ----------
        xb : ndarray
            Inputs of the batch.
        yb : ndarray
            Targets of the batch.

        Returns
        -------
        float
            The loss before the update.
        """
        if self.flat:
            return self._flat_step(xb, yb)
        module = self.module
        params = module.parameters()
        # Overflow is detected below and reported as a divergence, not as NumPy warnings.
        with np.errstate(over="ignore", invalid="ignore"):
            value, grads = self._value_and_grad(params, xb, yb)
        value = float(value)
        if self.weight_decay > 0:
            lam = self.weight_decay / (len(xb) if self._decay_per_sample else 1.0)
            penalty = 0.0
            for k in self._decayed:
                w = params[k]
                grads[k] = grads[k] + lam * w
                penalty += float(np.vdot(w, w))
            value += 0.5 * lam * penalty
        if not np.isfinite(value):
            raise TrainingDivergedError(
                f"the training loss became {value} at update {self.n_steps + 1}; the weights "
                "keep their last finite values. Lower the learning rate, scale the inputs, "
                "or clip the gradient norm (clip_norm)."
            )
        if self.clip_norm is not None:
            norm = optim.global_norm(grads)
            if norm > self.clip_norm:
                grads = {k: g * (self.clip_norm / norm) for k, g in grads.items()}
        with np.errstate(over="ignore", invalid="ignore"):
            updates, new_state = self.optimizer.update(grads, self.opt_state, params)
            new = {k: np.asarray(params[k] + updates[k], dtype=params[k].dtype) for k in params}
        for k, v in new.items():
            if not np.all(np.isfinite(v)):
                raise TrainingDivergedError(
                    f"update {self.n_steps + 1} would make parameter {k!r} non-finite "
                    f"(loss {value:.3g}); the weights keep their last finite values. Lower "
                    "the learning rate or clip the gradient norm (clip_norm)."
                )
        self.opt_state = new_state
        for name, v in new.items():
            m, leaf = self._owners[name]
            m._parameters[leaf] = v
        self.n_steps += 1
        return value

    def _init_flat(self) -> None:
        """Copy the parameters into one buffer (weights first) and make them views of it."""
        params = self.module.parameters()
        dtypes = {np.asarray(v).dtype for v in params.values()}
        if len(dtypes) != 1 or next(iter(dtypes)).kind != "f":
            raise ValueError(
                "flat=True needs every parameter in one floating dtype; got "
                f"{sorted(str(d) for d in dtypes)}."
            )
        decayed = set(self._decayed)
        names = [k for k in params if k in decayed] + [k for k in params if k not in decayed]
        self._names = names
        self._shapes = [np.shape(params[k]) for k in names]
        bounds = np.cumsum([0] + [int(np.size(params[k])) for k in names])
        self._slices = [(int(a), int(b)) for a, b in itertools.pairwise(bounds)]
        # The decayed weights occupy flat[:n_decayed].
        self._n_decayed = int(bounds[len(decayed)])
        self._owner_list = [self._owners[k] for k in names]
        flat = np.empty(int(bounds[-1]), dtype=next(iter(dtypes)))
        for k, (a, b) in zip(names, self._slices, strict=True):
            flat[a:b] = np.ravel(params[k])
        self._bind_flat(flat)

    def _bind_flat(self, flat: np.ndarray) -> None:
        self._flat = flat
        self._views = [
            flat[a:b].reshape(s) for (a, b), s in zip(self._slices, self._shapes, strict=True)
        ]
        for (m, leaf), v in zip(self._owner_list, self._views, strict=True):
            m._parameters[leaf] = v

    def _sync_flat(self) -> None:
        """Take in parameters replaced since the last step (``load_parameters``)."""
        for (m, leaf), v in zip(self._owner_list, self._views, strict=True):
            if m._parameters[leaf] is not v:
                break
        else:
            return
        params = self.module.parameters()
        flat = np.empty_like(self._flat)
        for k, (a, b), s in zip(self._names, self._slices, self._shapes, strict=True):
            if np.shape(params[k]) != s:
                raise ValueError(
                    f"parameter {k!r} changed shape from {s} to {np.shape(params[k])}."
                )
            flat[a:b] = np.ravel(params[k])
        self._bind_flat(flat)

    def _flat_step(self, xb: Any, yb: Any) -> float:
        self._sync_flat()
        # Overflow is detected below and reported as a divergence, not as NumPy warnings.
        with np.errstate(over="ignore", invalid="ignore"):
            return self._flat_step_body(xb, yb)

    def _flat_step_body(self, xb: Any, yb: Any) -> float:
        module, flat = self.module, self._flat
        leaves = [ad.Tensor(v, requires_grad=True) for v in self._views]
        try:
            for (m, leaf), t in zip(self._owner_list, leaves, strict=True):
                m._parameters[leaf] = t
            out = self.loss(module(xb), yb)
            found = ad.backward(out) if isinstance(out, ad.Tensor) and out.requires_grad else {}
        finally:
            for (m, leaf), v in zip(self._owner_list, self._views, strict=True):
                m._parameters[leaf] = v
        value_arr = np.asarray(out.value if isinstance(out, ad.Tensor) else out)
        if value_arr.size != 1:
            raise ValueError(f"the loss must be a scalar; got shape {value_arr.shape}.")
        value = float(value_arr.reshape(()))
        parts = []
        for t in leaves:
            g = found.get(id(t))
            parts.append(np.zeros(t.value.size, flat.dtype) if g is None else np.ravel(g[1]))
        grad = np.concatenate(parts, dtype=flat.dtype, casting="same_kind")
        nw = self._n_decayed
        if self.weight_decay > 0 and nw:
            lam = self.weight_decay / (len(xb) if self._decay_per_sample else 1.0)
            w = flat[:nw]
            grad[:nw] += lam * w
            value += 0.5 * lam * float(np.dot(w, w))
        if not np.isfinite(value):
            raise TrainingDivergedError(
                f"the training loss became {value} at update {self.n_steps + 1}; the weights "
                "keep their last finite values. Lower the learning rate, scale the inputs, "
                "or clip the gradient norm (clip_norm)."
            )
        if self.clip_norm is not None:
            norm = float(np.sqrt(np.dot(grad, grad)))
            if norm > self.clip_norm:
                grad *= self.clip_norm / norm
        updates, new_state = self.optimizer.update(grad, self.opt_state, flat)
        new = np.add(flat, updates, dtype=flat.dtype, casting="same_kind")
        if not np.isfinite(new).all():
            bad = int(np.flatnonzero(~np.isfinite(new))[0])
            k = next(
                k for k, (a, b) in zip(self._names, self._slices, strict=True) if a <= bad < b
            )
            raise TrainingDivergedError(
                f"update {self.n_steps + 1} would make parameter {k!r} non-finite "
                f"(loss {value:.3g}); the weights keep their last finite values. Lower "
                "the learning rate or clip the gradient norm (clip_norm)."
            )
        self.opt_state = new_state
        self._bind_flat(new)
        self.n_steps += 1
        return value

    def run_epoch(self, X: Any, y: Any = None, *, rows: Any = None) -> float:
        """One pass over ``(X, y)`` in minibatches; returns the mean loss per sample.

        Parameters
        ----------
        X : ndarray of shape (n_samples, ...)
            Inputs. Floating inputs of another dtype than the network's are cast one
            minibatch at a time (a float64 ``X`` for a float32 network needs no float32
            copy; the batches hold the same values as the rows of one).
        y : ndarray or None
            Targets; ``None`` trains on ``loss(output, X)`` (autoencoders). Floating
            targets are cast to the network's dtype the same way.
        rows : ndarray of int, optional
            Train on these rows of ``X`` and ``y`` only, in this order before shuffling:
            the same batches as on ``X[rows]`` and ``y[rows]``, without those copies.

        Returns
        -------
        float
            The batch losses averaged with weights the batch sizes.
        """
        n = len(X) if rows is None else len(rows)
        bs = n if self.batch_size is None else min(int(self.batch_size), n)
        order = self.rng.permutation(n) if self.shuffle else np.arange(n)
        if rows is not None:
            order = np.asarray(rows)[order]
        dtype = self._dtype()
        cast_x = np.asarray(X).dtype.kind == "f" and np.asarray(X).dtype != dtype
        cast_y = y is not None and np.asarray(y).dtype.kind == "f" and np.asarray(y).dtype != dtype
        self.module.train()
        total = 0.0
        for start in range(0, n, bs):
            idx = order[start : start + bs]
            xb = np.take(X, idx, axis=0)
            if cast_x:
                xb = xb.astype(dtype)
            if y is None:
                yb = xb
            else:
                yb = np.take(y, idx, axis=0)
                if cast_y:
                    yb = yb.astype(dtype)
            total += self.step(xb, yb) * len(idx)
        return total / n

    def evaluate(self, X: Any, y: Any = None) -> float:
        """The loss on ``(X, y)`` in evaluation mode, without updating anything.

        Parameters
        ----------
        X : ndarray
            Inputs.
        y : ndarray or None
            Targets (``None``: ``X``).

        Returns
        -------
        float
            The loss (no penalty).
        """
        was = self.module.training
        self.module.eval()
        try:
            with ad.no_grad():
                return float(self.loss(self.module(X), X if y is None else y))
        finally:
            self.module.train(was)

    def fit(
        self,
        X: Any,
        y: Any = None,
        *,
        epochs: int = 10,
        validation_data: tuple[Any, Any] | None = None,
        early_stopping: bool = False,
        n_iter_no_change: int = 10,
        tol: float = 1e-4,
        score: Callable[[Module, Any, Any], float] | None = None,
        stop_on_plateau: bool = False,
    ) -> dict[str, list[float]]:
        """Train for up to ``epochs`` passes; returns :attr:`history`.

        Parameters
        ----------
        X : array-like of shape (n_samples, ...)
            Inputs; converted to the network's dtype. NaN or infinity is an error.
        y : array-like or None
            Targets.
        epochs : int, default=10
            Maximum number of passes.
        validation_data : (X_val, y_val), optional
            Evaluated after every epoch into ``history["val_loss"]`` (and ``"val_score"``
            with ``score``).
        early_stopping : bool, default=False
            Stop when the validation score (or, without ``score``, minus the validation
            loss) has not improved by ``tol`` for ``n_iter_no_change`` epochs, and restore
            the best parameters seen. Needs ``validation_data``.
        n_iter_no_change : int, default=10
            Patience, in epochs.
        tol : float, default=1e-4
            Least improvement that counts.
        score : callable, optional
            ``score(module, X_val, y_val) -> float``, higher is better (for example the
            accuracy).
        stop_on_plateau : bool, default=False
            Without early stopping: stop when the training loss has not decreased by
            ``tol`` for ``n_iter_no_change`` epochs (scikit-learn's MLP rule).

        Returns
        -------
        dict of lists
            The history.
        """
        dtype = self._dtype()
        _check_finite_data(X, "X")
        X = np.asarray(X, dtype=dtype)
        if y is not None:
            _check_finite_data(y, "y")
            y = np.asarray(y)
            if y.dtype.kind == "f":
                y = y.astype(dtype)
            if len(y) != len(X):
                raise ValueError(f"X has {len(X)} samples but y has {len(y)}.")
        if len(X) == 0:
            raise ValueError("training needs at least one sample; got 0.")
        if early_stopping and validation_data is None:
            raise ValueError("early_stopping needs validation_data.")
        if validation_data is not None:
            Xv, yv = validation_data
            Xv = np.asarray(Xv, dtype=dtype)
            yv = np.asarray(yv)
            if yv.dtype.kind == "f":
                yv = yv.astype(dtype)
            self.history.setdefault("val_loss", [])
            if score is not None:
                self.history.setdefault("val_score", [])
        best, best_state, stall = -np.inf, None, 0
        epoch_iter: Any = range(int(epochs))
        bar = None
        if self.progress:
            try:
                from tqdm.auto import tqdm
            except ImportError as exc:
                raise ImportError(
                    "progress=True needs tqdm (pip install tqdm, or mathlearn[report])."
                ) from exc

            bar = epoch_iter = tqdm(epoch_iter, desc="training", unit="epoch")
        self.stopped_early_ = False
        for epoch in epoch_iter:
            loss_value = self.run_epoch(X, y)
            self.history["loss"].append(loss_value)
            monitored = -loss_value
            if validation_data is not None:
                vloss = self.evaluate(Xv, yv)
                self.history["val_loss"].append(vloss)
                monitored = -vloss
                if score is not None:
                    was = self.module.training
                    self.module.eval()
                    try:
                        s = float(score(self.module, Xv, yv))
                    finally:
                        self.module.train(was)
                    self.history["val_score"].append(s)
                    monitored = s
            if bar is not None:
                bar.set_postfix(loss=f"{loss_value:.4g}")
            if early_stopping or stop_on_plateau:
                if monitored > best + tol:
                    stall = 0
                else:
                    stall += 1
                if monitored > best:
                    best = monitored
                    if early_stopping:
                        best_state = {k: v.copy() for k, v in self.module.parameters().items()}
                if stall >= n_iter_no_change:
                    self.stopped_early_ = True
                    break
            if any(cb(epoch, self.history, self.module) for cb in self.callbacks):
                self.stopped_early_ = True
                break
        if bar is not None:
            bar.close()
        if early_stopping and best_state is not None:
            self.module.load_parameters(best_state)
        return self.history


def fit_module(
    module: Module,
    loss: Callable[[Any, Any], Any],
    X: Any,
    y: Any = None,
    *,
    optimizer: optim.GradientTransformation | None = None,
    epochs: int = 10,
    batch_size: int | None = 32,
    validation_fraction: float | None = None,
    early_stopping: bool = False,
    n_iter_no_change: int = 10,
    tol: float = 1e-4,
    weight_decay: float = 0.0,
    clip_norm: float | None = None,
    callbacks: Sequence[Callable] = (),
    progress: bool = False,
    random_state: Any = None,
) -> dict[str, list[float]]:
    """Train ``module`` on ``(X, y)``: :class:`Trainer` with an optional validation split.

    Parameters
    ----------
    module : Module
        The network (updated in place).
    loss : callable
        ``loss(output, target) -> scalar``.
    X : array-like of shape (n_samples, ...)
        Inputs.
    y : array-like or None, default=None
        Targets (``None``: the inputs, as for an autoencoder).
    optimizer : GradientTransformation, optional
        Default Adam with step 1e-3.
    epochs : int, default=10
        Maximum number of passes over the data.
    batch_size : int or None, default=32
        Minibatch size (``None``: full batch).
    validation_fraction : float, optional
        Hold out this random fraction of the samples as validation data.
    early_stopping : bool, default=False
        Stop on the validation loss (see :meth:`Trainer.fit`); needs
        ``validation_fraction``.
    n_iter_no_change : int, default=10
        Patience in epochs.
    tol : float, default=1e-4
        Least improvement that counts.
    weight_decay : float, default=0.0
        ``lambda`` of ``(lambda / 2) ||W||^2``.
    clip_norm : float, optional
        Largest gradient norm let through.
    callbacks : sequence of callables, default=()
        ``callback(epoch, history, module)``; ``True`` stops.
    progress : bool, default=False
        Show a progress bar.
    random_state : int, Generator or None, default=None
        Shuffling, the validation split and dropout.

    Returns
    -------
    dict of lists
        ``"loss"`` per epoch, and ``"val_loss"`` with a validation split.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn import nn, optim
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=float); y = np.array([0, 1, 1, 0])
    >>> net = nn.Sequential(nn.Linear(2, 8, random_state=0), nn.Tanh(), nn.Linear(8, 2))
    >>> h = nn.fit_module(net, nn.cross_entropy, X, y, optimizer=optim.adam(0.05),
    ...                   epochs=300, batch_size=None, random_state=0)
    >>> net.eval()(X.astype(np.float32)).argmax(axis=1)
    array([0, 1, 1, 0])
    """
    rng = check_random_state(random_state)
    X = np.asarray(X)
    validation = None
    if validation_fraction is not None:
        if not 0 < validation_fraction < 1:
            raise ValueError(f"validation_fraction must be in (0, 1); got {validation_fraction}.")
        n_val = round(validation_fraction * len(X))
        if n_val < 1 or n_val >= len(X):
            raise ValueError(
                f"validation_fraction={validation_fraction} leaves no validation or no "
                f"training samples out of {len(X)}."
            )
        perm = rng.permutation(len(X))
        val, tr = perm[:n_val], perm[n_val:]
        yy = X if y is None else np.asarray(y)
        validation = (X[val], yy[val])
        X, y = X[tr], (None if y is None else yy[tr])
    trainer = Trainer(
        module,
        loss,
        optimizer,
        batch_size=batch_size,
        weight_decay=weight_decay,
        clip_norm=clip_norm,
        callbacks=callbacks,
        progress=progress,
        random_state=rng,
    )
    return trainer.fit(
        X,
        y,
        epochs=epochs,
        validation_data=validation,
        early_stopping=early_stopping,
        n_iter_no_change=n_iter_no_change,
        tol=tol,
    )
