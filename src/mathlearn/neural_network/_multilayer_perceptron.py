"""Multilayer perceptrons for classification and regression, trained by backpropagation.

The network (PRML §5.1; Stuttgart "Introduction to Machine Learning" §4) is
``z_l = W_l x_{l-1} + b_l``, ``x_l = h(z_l)`` for the hidden layers and a linear output
``f(x) = z_L``; the output is read through the canonical link of the loss: softmax with the
cross-entropy for several classes, the logistic sigmoid with the binary cross-entropy for
two, the identity with the squared error for regression. With a canonical link the output
delta is ``delta_L = y - t`` (PRML §5.3, eq. 5.54), and backpropagation
(``delta_l = h'(z_l) W_{l+1}^T delta_{l+1}``) is the reverse sweep of
:mod:`mathlearn.autodiff` through :class:`mathlearn.nn.Sequential`.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from scipy import special
from sklearn.base import RegressorMixin
from sklearn.model_selection import train_test_split
from sklearn.utils.validation import check_is_fitted

from .. import autodiff as ad
from .. import nn, optim
from ..base import BaseClassifier, BaseEstimator, _fit_context
from ..exceptions import ConvergenceWarning
from ..nn._module import _bound
from ..nn._training import Trainer, TrainingDivergedError
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import check_random_state, validate_data

__all__ = ["MLPClassifier", "MLPRegressor"]

_ACTIVATIONS = {
    "identity": nn.Identity,
    "logistic": nn.Sigmoid,
    "tanh": nn.Tanh,
    "relu": nn.ReLU,
    "leaky_relu": nn.LeakyReLU,
    "gelu": nn.GELU,
}
_F32_MAX = float(np.finfo(np.float32).max)
_OVERFLOW_MESSAGE = (
    "the network's output overflowed for some rows of X: they lie far outside the range of "
    "the training data. Rescale them as the training data were."
)
# MLPRegressor's mean squared training residual is summed over groups of rows in which the
# widest layer holds about this many doubles (512 KiB)...
_RESIDUAL_BLOCK_DOUBLES = 1 << 16
# ... and each group's rows are run through the network in blocks whose widest activations
# hold at most this many doubles (128 KiB, under glibc's smallest threshold for serving an
# allocation by mmap: such blocks reuse memory already resident instead of mapping fresh
# pages). Float32 copies are also made a block of this size at a time.
_FORWARD_BLOCK_DOUBLES = 1 << 14


def _check_float32(X: np.ndarray, name: str = "X") -> None:
    """Refuse data that float32, which the network computes in, cannot carry.

    Entries beyond float32's range would become infinite. Data far from the origin relative
    to their spread (a column at ``1e8 +- 1``) would lose their variation to float32's
    rounding (relative ``6e-8``): that is refused too, with the advice to centre them. No
    float32 copy of ``X`` is made: the training casts one minibatch at a time (the same
    values as the rows of a whole float32 copy).
    """
    if X.size == 0:
        return
    hi, lo = X.max(axis=0), X.min(axis=0)
    big = float(max(hi.max(), -lo.min()))
    if big > 1e30:
        raise ValueError(
            f"{name} has entries of magnitude up to {big:.3g}; the network computes in float32 "
            f"(largest {_F32_MAX:.3g}) and its activations would overflow. Rescale the "
            "features (for example with StandardScaler)."
        )
    n = X.shape[0]
    if n > 1:
        # Only columns that can fail are checked exactly: rounding to float32 moves an entry
        # by at most |x| 2^-24 (plus 2^-150 below the normal range; 2^-23 here, a factor of
        # 2 to spare), and a column's standard deviation is at least its range / sqrt(2 n)
        # (its two extremes alone contribute that much to the variance).
        absmax = np.maximum(hi, -lo)
        width = hi - lo
        suspect = (width > 0) & (absmax * 2.0**-23 + 2.0**-149 > 1e-3 * width / np.sqrt(2.0 * n))
        cols = np.flatnonzero(suspect)
        if cols.size:
            Xc = X[:, cols]
            spread = Xc.std(axis=0)
            err = np.max(np.abs(Xc.astype(np.float32) - Xc), axis=0)
            lost = np.flatnonzero((spread > 0) & (err > 1e-3 * spread))
            if lost.size:
                i = int(lost[0])
                j = int(cols[i])
                raise ValueError(
                    f"{name}'s feature {j} varies by {spread[i]:.3g} around a value of "
                    f"{absmax[j]:.3g}: float32, which the network computes in, "
                    "cannot resolve that variation. Centre and scale the features (for "
                    "example with StandardScaler)."
                )


def _float32_rounded(X: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """``X`` (or its ``rows``) rounded to float32 and held in float64, a block at a time.

    The values the float32 network sees, for the float64 passes (L-BFGS, the validation
    score), without a float32 copy, or a gathered float64 copy, of the whole beside it.
    """
    n = X.shape[0] if rows is None else len(rows)
    out = np.empty((n, *X.shape[1:]), dtype=np.float64)
    step = max(1, _FORWARD_BLOCK_DOUBLES // max(1, int(np.prod(X.shape[1:]))))
    for a in range(0, n, step):
        part = X[a : a + step] if rows is None else X[rows[a : a + step]]
        out[a : a + step] = part.astype(np.float32)
    return out


class _BaseMLP(BaseEstimator):
    _parameter_constraints: ClassVar[dict] = {
        "hidden_layer_sizes": ["array-like", Interval(Integral, 1, None, closed="left")],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "solver": [StrOptions({"sgd", "adam", "lbfgs", "rprop"})],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "batch_size": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "learning_rate": [StrOptions({"constant", "invscaling", "adaptive"})],
        "learning_rate_init": [Interval(Real, 0, None, closed="neither")],
        "power_t": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "momentum": [Interval(Real, 0, 1, closed="both")],
        "nesterovs_momentum": ["boolean"],
        "early_stopping": ["boolean"],
        "validation_fraction": [Interval(Real, 0, 1, closed="left")],
        "beta_1": [Interval(Real, 0, 1, closed="left")],
        "beta_2": [Interval(Real, 0, 1, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "clip_norm": [None, Interval(Real, 0, None, closed="neither")],
    }

    # Small networks and few epochs keep the common checks fast; stopping on max_iter is
    # then expected.
    _common_test_params = {
        "hidden_layer_sizes": (10,),
        "max_iter": 50,
        "random_state": 0,
        "learning_rate_init": 0.01,
    }
    _common_test_convergence_warning_expected = True

    def __init__(
        self,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        solver="adam",
        alpha=1e-4,
        batch_size="auto",
        learning_rate="constant",
        learning_rate_init=1e-3,
        power_t=0.5,
        max_iter=200,
        shuffle=True,
        random_state=None,
        tol=1e-4,
        verbose=False,
        momentum=0.9,
        nesterovs_momentum=True,
        early_stopping=False,
        validation_fraction=0.1,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        n_iter_no_change=10,
        clip_norm=None,
    ):
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.solver = solver
        self.alpha = alpha
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.learning_rate_init = learning_rate_init
        self.power_t = power_t
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.tol = tol
        self.verbose = verbose
        self.momentum = momentum
        self.nesterovs_momentum = nesterovs_momentum
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.n_iter_no_change = n_iter_no_change
        self.clip_norm = clip_norm

    _rng: np.random.Generator
    loss_curve_: list[float]
    validation_scores_: list[float] | None

    @property
    def _dropout(self) -> float:
        return 0.0

    def _loss(self, out, target):  # pragma: no cover - abstract
        raise NotImplementedError

    def _prepare_targets(self, y, incremental):  # pragma: no cover - abstract
        raise NotImplementedError

    def _validation_score(self, X, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def _hidden_sizes(self) -> list[int]:
        sizes = np.atleast_1d(np.asarray(self.hidden_layer_sizes, dtype=float))
        # No hidden layer at all is allowed: the network is then a linear model.
        if sizes.ndim != 1 or np.any(sizes < 1) or np.any(sizes != np.round(sizes)):
            raise ValueError(
                f"hidden_layer_sizes must be positive integers; got {self.hidden_layer_sizes!r}."
            )
        return [int(s) for s in sizes]

    def _build(self, n_in: int, n_out: int, rng: np.random.Generator) -> nn.Sequential:
        sizes = [n_in, *self._hidden_sizes(), n_out]
        # Glorot-uniform weights and biases, bound sqrt(6 / (fan_in + fan_out)), with 2 in
        # place of 6 for the logistic activation (Glorot and Bengio, 2010), as scikit-learn.
        factor = 2.0 if self.activation == "logistic" else 6.0
        layers: list[nn.Module] = []
        for i in range(len(sizes) - 1):
            bound = np.sqrt(factor / (sizes[i] + sizes[i + 1]))

            def init(shape, random_state, dtype, bound=bound):
                return random_state.uniform(-bound, bound, size=shape).astype(dtype)

            layers.append(
                nn.Linear(
                    sizes[i], sizes[i + 1], weight_init=init, bias_init=init, random_state=rng
                )
            )
            if i < len(sizes) - 2:
                layers.append(_ACTIVATIONS[self.activation]())
                if self._dropout > 0:
                    layers.append(nn.Dropout(self._dropout))
        return nn.Sequential(*layers)

    def _optimizer(self, lr_holder: list[float]) -> optim.GradientTransformation:
        if self.solver == "adam":
            return optim.adam(
                lambda t: lr_holder[0], b1=self.beta_1, b2=self.beta_2, eps=self.epsilon
            )
        if self.solver == "rprop":
            return optim.rprop(step_init=self.learning_rate_init)
        if self.learning_rate == "invscaling":

            def schedule(t):
                return self.learning_rate_init / (t + 1.0) ** self.power_t
        else:

            def schedule(t):
                return lr_holder[0]

        if self.momentum == 0:
            return optim.sgd(schedule)
        if self.nesterovs_momentum:
            return optim.nesterov(schedule, momentum=min(self.momentum, 1 - 1e-12))
        return optim.momentum(schedule, momentum=min(self.momentum, 1 - 1e-12))

    def _batch_size(self, n: int) -> int:
        if self.solver == "rprop":
            return n  # Rprop is a full-batch method
        if self.batch_size == "auto":
            return min(200, n)
        if self.batch_size > n:
            warnings.warn(
                f"batch_size {self.batch_size} exceeds the {n} training samples; using {n}.",
                UserWarning,
                stacklevel=3,
            )
        return min(int(self.batch_size), n)

    def _forward(self, X: np.ndarray) -> np.ndarray:
        """Network output in evaluation mode.

        Predictions are computed in float64 (the float32 weights promoted): the result then
        does not depend, beyond float64 rounding, on how the rows are batched.
        """
        self.module_.eval()
        out = self._eval_pass(np.asarray(X, dtype=np.float64))
        if not np.all(np.isfinite(out)):
            raise ValueError(_OVERFLOW_MESSAGE)
        return out

    def _eval_pass(self, x: np.ndarray) -> np.ndarray:
        """The layers of the network (already in evaluation mode) applied to float64 ``x``.

        One by one, as the Sequential would apply them, except that a ReLU overwrites the
        activations a Linear has just made (``np.maximum`` in place: the same values)
        instead of holding a second array of them.
        """
        owned = False
        with np.errstate(over="ignore", invalid="ignore"):
            for layer in self.module_:
                if owned and type(layer) is nn.ReLU:
                    np.maximum(x, 0, out=x)
                    continue
                y = layer(x)
                owned = isinstance(layer, nn.Linear) or (owned and y is x)
                x = y
        return np.asarray(x)

    def _validate_X_predict(self, X):
        check_is_fitted(self, "module_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        big = float(np.max(np.abs(X))) if X.size else 0.0
        if big > 1e30:
            raise ValueError(
                f"X has entries of magnitude up to {big:.3g}, far outside any range the "
                "network can have been trained on; rescale them as the training data were."
            )
        return X

    def _fit(self, X, y, incremental: bool = False):
        first = not (incremental and hasattr(self, "module_"))
        # float32 data are kept as they are, anything else is made float64; either way no
        # float32 copy of X is made: the training casts each minibatch on its own.
        X, y = validate_data(
            self,
            X,
            y,
            dtype=[np.float64, np.float32],
            reset=first,
            multi_output=not self._is_classifier(),
        )
        _check_float32(X)
        target = self._prepare_targets(y, incremental=not first)
        rng = check_random_state(self.random_state) if first else self._rng
        if first:
            self.module_ = self._build(X.shape[1], self.n_outputs_, rng)
            self.n_layers_ = len(self._hidden_sizes()) + 2
            self.loss_curve_ = []
            self.t_ = 0
            self.n_iter_ = 0
            self._rng = rng
            self._opt_state = None
            self.best_loss_ = np.inf
            self._no_improvement_count = 0
            self._lr = [float(self.learning_rate_init)]
            self.validation_scores_ = [] if self.early_stopping and not incremental else None
            self.best_validation_score_ = (
                -np.inf if self.early_stopping and not incremental else None
            )
        if self.solver == "lbfgs":
            if incremental:
                raise AttributeError("partial_fit is not available for solver='lbfgs'.")
            self._fit_lbfgs(X, target)
        else:
            self._fit_stochastic(X, target, incremental)
        self._set_public_weights()
        return self

    def _fit_stochastic(self, X, target, incremental):
        early = self.early_stopping and not incremental
        X_val = y_val = rows = None
        n = len(X)
        if early:
            stratify = target if self._is_classifier() else None
            try:
                # The split depends only on the number of samples, the strata and the seed:
                # splitting the row numbers gives the rows that splitting the data would,
                # and the training rows are then read from X in place.
                rows, val_rows = train_test_split(
                    np.arange(n),
                    test_size=self.validation_fraction,
                    random_state=int(self._rng.integers(2**31 - 1)),
                    stratify=stratify,
                )
            except ValueError as exc:
                raise ValueError(
                    f"early_stopping: cannot hold out validation_fraction="
                    f"{self.validation_fraction} of {n} samples ({exc})."
                ) from None
            if len(val_rows) < 2:
                raise ValueError(
                    f"early_stopping: validation_fraction={self.validation_fraction} leaves "
                    f"{len(val_rows)} validation sample(s) out of {n}; at least 2 are needed."
                )
            X_val = _float32_rounded(X, val_rows)
            y_val = target[val_rows]
            n = len(rows)
        trainer = Trainer(
            self.module_,
            self._loss,
            self._optimizer(self._lr),
            batch_size=self._batch_size(n),
            shuffle=self.shuffle,
            weight_decay=self.alpha,
            clip_norm=self.clip_norm,
            random_state=self._rng,
            flat=True,
        )
        trainer._decay_per_sample = True  # scikit-learn's alpha: penalty alpha ||W||^2 / (2 B)
        if self._opt_state is not None:
            trainer.opt_state = self._opt_state
        n_epochs = 1 if incremental else self.max_iter
        best_params = None
        for _ in range(n_epochs):
            loss = trainer.run_epoch(X, target, rows=rows)
            self.n_iter_ += 1
            self.t_ += n
            self.loss_curve_.append(loss)
            if self.verbose:
                print(f"Iteration {self.n_iter_}, loss = {loss:.8f}")
            if incremental:
                break
            if early:
                score = self._validation_score(X_val, y_val)
                self.validation_scores_.append(score)
                if score < self.best_validation_score_ + self.tol:
                    self._no_improvement_count += 1
                else:
                    self._no_improvement_count = 0
                if score > self.best_validation_score_:
                    self.best_validation_score_ = score
                    best_params = {k: v.copy() for k, v in self.module_.parameters().items()}
            else:
                if loss > self.best_loss_ - self.tol:
                    self._no_improvement_count += 1
                else:
                    self._no_improvement_count = 0
            if loss < self.best_loss_:
                self.best_loss_ = loss
            if self._no_improvement_count > self.n_iter_no_change:
                if self.learning_rate == "adaptive" and self.solver == "sgd" and not early:
                    if self._lr[0] > 1e-6:
                        self._lr[0] /= 5.0
                        self._no_improvement_count = 0
                        continue
                break
        else:
            if not incremental:
                warnings.warn(
                    f"Stochastic optimizer: maximum iterations ({self.max_iter}) reached and "
                    "the optimization hasn't converged yet.",
                    ConvergenceWarning,
                    stacklevel=3,
                )
        if early and best_params is not None:
            self.module_.load_parameters(best_params)
        self._opt_state = trainer.opt_state
        self.loss_ = self.loss_curve_[-1]
        if not early:
            self.best_validation_score_ = None

    def _fit_lbfgs(self, X, target):
        # L-BFGS needs exact line searches: the network is trained (and kept) in float64.
        module = self.module_.astype(np.float64)
        X = _float32_rounded(X)
        if target.dtype.kind == "f":
            target = target.astype(np.float64)
        n = len(X)
        decayed = [k for k in module.parameters() if k.endswith("weight")]

        def objective(params):
            with _bound(module, params):
                out = module(X)
            loss = self._loss(out, target)
            for k in decayed:
                loss = loss + 0.5 * self.alpha / n * ad.sum(params[k] * params[k])
            return loss

        fun = ad.value_and_grad(objective)

        def fun_and_grad(params):
            with np.errstate(over="ignore", invalid="ignore"):
                value, g = fun(params)
            if not np.isfinite(value):
                raise TrainingDivergedError(
                    f"the L-BFGS objective became {float(value)}; rescale the features."
                )
            return value, g

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            res = optim.lbfgs(
                fun_and_grad, module.parameters(), max_iter=self.max_iter, tol=self.tol
            )
        module.load_parameters(res.x)
        if any(issubclass(w.category, ConvergenceWarning) for w in caught):
            warnings.warn(
                f"lbfgs did not converge in max_iter={self.max_iter} iterations: {res.message}",
                ConvergenceWarning,
                stacklevel=3,
            )
        self.n_iter_ = int(res.nit)
        self.loss_curve_ = [float(v) for v in res.history]
        self.loss_ = float(res.fun)
        self.best_loss_ = self.loss_
        self.t_ = n * self.n_iter_

    def _set_public_weights(self):
        linears = [m for m in self.module_ if isinstance(m, nn.Linear)]
        self.coefs_ = [np.ascontiguousarray(m.weight.T) for m in linears]
        self.intercepts_ = [m.bias.copy() for m in linears]
        self.history_ = {"loss": list(self.loss_curve_)}
        if self.validation_scores_ is not None:
            self.history_["val_score"] = list(self.validation_scores_)

    def _is_classifier(self) -> bool:
        return False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.random_state is None
        return tags


_PARAMS_DOC = """
    Parameters
    ----------
    hidden_layer_sizes : int or array-like of int, default=(100,)
        Sizes ``h_1, ..., h_{L-1}`` of the hidden layers.
    activation : {"relu", "tanh", "logistic", "identity", "leaky_relu", "gelu"}, default="relu"
        Hidden unit ``h``; ``leaky_relu`` has the notes' slope 0.01.
    solver : {"adam", "sgd", "lbfgs", "rprop"}, default="adam"
        ``"adam"`` and ``"sgd"`` (with momentum) train on minibatches; ``"lbfgs"`` is
        full-batch L-BFGS (:func:`mathlearn.optim.lbfgs`, in float64); ``"rprop"`` is
        full-batch iRprop- (:func:`mathlearn.optim.rprop`, first step
        ``learning_rate_init``).
    alpha : float, default=1e-4
        L2 penalty ``alpha ||W||^2 / (2 B)`` per batch of ``B`` samples on the weights (not
        the biases), scikit-learn's convention; its gradient adds ``alpha W / B``.
    batch_size : int or "auto", default="auto"
        ``min(200, n_samples)`` for ``"auto"``.
    learning_rate : {"constant", "invscaling", "adaptive"}, default="constant"
        Step schedule of ``sgd``: constant; ``eta_0 / (t + 1)^power_t`` with ``t`` the
        number of updates; or divided by 5 whenever the training loss stalls for
        ``n_iter_no_change`` epochs (training stops below ``1e-6``).
    learning_rate_init : float, default=1e-3
        ``eta_0``.
    power_t : float, default=0.5
        Exponent of ``invscaling``.
    max_iter : int, default=200
        Epochs (stochastic solvers) or iterations (``lbfgs``).
    shuffle : bool, default=True
        Reshuffle every epoch.
    random_state : int, Generator or None, default=None
        Initial weights, shuffling, the validation split and dropout masks.
    tol : float, default=1e-4
        Least improvement of the training loss (or validation score) that counts; for
        ``lbfgs`` the gradient tolerance.
    verbose : bool, default=False
        Print the loss after every epoch.
    momentum : float, default=0.9
        Momentum of ``sgd`` in ``[0, 1]``.
    nesterovs_momentum : bool, default=True
        Nesterov momentum for ``sgd``.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the data and stop when the validation score has
        not improved by ``tol`` for ``n_iter_no_change`` epochs; the best weights are kept.
    validation_fraction : float, default=0.1
        Held-out share for early stopping.
    beta_1, beta_2 : float, default=0.9, 0.999
        Adam's moment decay rates.
    epsilon : float, default=1e-8
        Adam's ``epsilon``.
    n_iter_no_change : int, default=10
        Patience, in epochs.
    clip_norm : float or None, default=None
        Clip each minibatch gradient to this global norm."""

_ATTRS_DOC = """
    loss_ : float
        Training loss of the last epoch (penalty included).
    best_loss_ : float
        Smallest training loss seen.
    loss_curve_ : list of float
        Training loss per epoch (per L-BFGS iteration for ``lbfgs``).
    validation_scores_ : list of float or None
        Validation score per epoch, with early stopping.
    best_validation_score_ : float or None
        Best validation score, with early stopping.
    history_ : dict of lists
        ``"loss"`` and, with early stopping, ``"val_score"`` per epoch.
    coefs_ : list of ndarray
        ``coefs_[i]`` of shape (h_i, h_{i+1}): ``W_{i+1}^T``.
    intercepts_ : list of ndarray
        ``intercepts_[i]`` of shape (h_{i+1},).
    module_ : mathlearn.nn.Sequential
        The trained network (float32; float64 after ``lbfgs``).
    n_iter_ : int
        Epochs run (iterations for ``lbfgs``).
    t_ : int
        Training samples seen.
    n_layers_ : int
        Layers, input and output included.
    n_outputs_ : int
        Output units.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` has string column names."""


class MLPClassifier(_BaseMLP, BaseClassifier):
    __doc__ = f"""Multilayer perceptron classifier trained by backpropagation.

    Two classes: one logistic output unit and the binary cross-entropy; more: a softmax
    output and the cross-entropy (PRML §5.2; Stuttgart §4). The network computes in float32.
    {_PARAMS_DOC}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    out_activation_ : str
        ``"logistic"`` or ``"softmax"``.{_ATTRS_DOC}

    See Also
    --------
    MLPRegressor : The same network for regression.
    mathlearn.nn.Sequential : The network it trains.

    Notes
    -----
    The loss minimised per minibatch ``B`` is ``(1/B) sum_n l(f(x_n), t_n) +
    alpha ||W||^2 / (2 B)``; with the canonical output link the output delta is
    ``p - t`` (PRML §5.3). Non-convex: different ``random_state`` give different local
    minima (PRML §5.2.1); train several and keep the best.

    Cost per epoch: a forward and a backward pass over the ``N`` samples, ``O(N W)`` with
    ``W`` the number of weights (``sum_l H_(l-1) H_l``, ``H_0 = D``, the last layer the
    classes), as matrix products on minibatches; memory ``O(W)`` for the weights and the
    optimiser's moments, ``O(B sum_l H_l)`` for one minibatch's activations, and ``O(N)``
    for the targets and the shuffled order. ``X`` is read in place (copied only when it is
    neither float64 nor float32): each minibatch is cast to float32 on its own, and early stopping
    keeps its validation rows (``N D`` times ``validation_fraction``), not a copy of the
    training rows. ``lbfgs`` trains on a float64 copy of ``X``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neural_network import MLPClassifier
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]] * 10, dtype=float)
    >>> y = np.array([0, 1, 1, 0] * 10)
    >>> clf = MLPClassifier((8,), activation="tanh", learning_rate_init=0.05, max_iter=300,
    ...                     random_state=0).fit(X, y)
    >>> clf.predict([[0, 0], [0, 1], [1, 0], [1, 1]])
    array([0, 1, 1, 0])
    """

    def _is_classifier(self) -> bool:
        return True

    def _prepare_targets(self, y, incremental):
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        if y.ndim != 1:
            raise ValueError(
                f"MLPClassifier takes one label per sample (y of shape (n_samples,)); got "
                f"{y.shape}."
            )
        if incremental:
            lookup = {c: i for i, c in enumerate(self.classes_.tolist())}
            unknown = sorted({v for v in y.tolist() if v not in lookup}, key=repr)
            if unknown:
                raise ValueError(
                    f"y contains labels {unknown} that are not among the classes "
                    f"{self.classes_.tolist()} given to the first partial_fit."
                )
            idx = np.array([lookup[v] for v in y.tolist()], dtype=np.intp)
        else:
            idx = self._encode_labels(y)
        K = len(self.classes_)
        self.n_outputs_ = 1 if K == 2 else K
        self.out_activation_ = "logistic" if K == 2 else "softmax"
        if K == 2:
            return idx.astype(np.float32)[:, None]
        return idx

    def _loss(self, out, target):
        if self.n_outputs_ == 1:
            return nn.binary_cross_entropy_with_logits(out, target)
        return nn._functional._cross_entropy_int(out, target)

    def _joint_log_likelihood(self, X):
        f = self._forward(X).astype(np.float64)
        if f.shape[1] == 1:
            return np.hstack([special.log_expit(-f), special.log_expit(f)])
        return f - special.logsumexp(f, axis=1, keepdims=True)

    def _validation_score(self, X, y):
        f = self._forward(X)
        pred = (f[:, 0] > 0).astype(int) if f.shape[1] == 1 else f.argmax(axis=1)
        truth = y[:, 0].astype(int) if np.ndim(y) == 2 else y
        return float(np.mean(pred == truth))

    @_fit_context
    def fit(self, X, y):
        """Train the network on ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : MLPClassifier
            The fitted classifier.
        """
        for attr in ("module_", "classes_"):
            if hasattr(self, attr):
                delattr(self, attr)
        return self._fit(X, y)

    @_fit_context
    def partial_fit(self, X, y, classes=None):
        """One epoch over ``(X, y)``, continuing from the current weights.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.
        y : array-like of shape (n_samples,)
            Labels, all among ``classes``.
        classes : array-like of shape (n_classes,), optional
            Every label that will appear; required on the first call.

        Returns
        -------
        self : MLPClassifier
            The updated classifier.
        """
        if self.solver == "lbfgs":
            raise AttributeError("partial_fit is not available for solver='lbfgs'.")
        if not hasattr(self, "module_"):
            if classes is None:
                raise ValueError("classes must be given to the first call of partial_fit.")
            self.classes_ = np.unique(np.asarray(classes))
            if len(self.classes_) < 2:
                raise ValueError("partial_fit needs at least 2 classes.")
            X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], reset=True)
            _check_float32(X)
            target = self._prepare_targets(y, incremental=True)
            rng = check_random_state(self.random_state)
            self.module_ = self._build(X.shape[1], self.n_outputs_, rng)
            self._rng = rng
            self.n_layers_ = len(self._hidden_sizes()) + 2
            self.loss_curve_ = []
            self.t_ = self.n_iter_ = 0
            self._opt_state = None
            self.best_loss_ = np.inf
            self._no_improvement_count = 0
            self._lr = [float(self.learning_rate_init)]
            self.validation_scores_ = self.best_validation_score_ = None
            self._fit_stochastic(X, target, incremental=True)
            self._set_public_weights()
            return self
        if classes is not None and not np.array_equal(np.unique(classes), self.classes_):
            raise ValueError(
                f"classes {np.unique(classes).tolist()} differ from those of the first call, "
                f"{self.classes_.tolist()}."
            )
        return self._fit(X, y, incremental=True)


class MLPRegressor(RegressorMixin, _BaseMLP):
    __doc__ = f"""Multilayer perceptron regressor, with MC-dropout predictive uncertainty.

    Identity output and the squared error ``(1/2) mean (f - t)^2`` (PRML §5.2, eq. 5.11 up
    to the factor ``1/N``). The network computes in float32.
    {_PARAMS_DOC}
    dropout : float, default=0.0
        Dropout probability ``p`` after every hidden activation, in ``[0, 1)``. With
        ``p > 0``, ``predict(X, return_std=True)`` gives MC-dropout predictive means and
        standard deviations.
    n_mc_samples : int, default=100
        ``T``, stochastic forward passes for MC dropout.
    tau : float or None, default=None
        Model precision ``tau`` of MC dropout; ``None`` estimates ``1 / tau`` by the mean
        squared training residual.

    Attributes
    ----------
    noise_variance_ : float
        ``1 / tau`` used by MC dropout.
    out_activation_ : str
        ``"identity"``.{_ATTRS_DOC}

    See Also
    --------
    MLPClassifier : The same network for classification.

    Notes
    -----
    MC dropout (Gal and Ghahramani, 2016; Stuttgart §8, "Bayesian neural networks"):
    keep dropout on at prediction time and average ``T`` stochastic passes ``f_t(x)``.
    Predictive mean ``(1/T) sum_t f_t(x)``; predictive variance
    ``1/tau + (1/T) sum_t f_t(x)^2 - mean^2``. Here ``tau`` is the model precision of Gal
    and Ghahramani, who relate it to the prior length scale ``l`` and weight decay
    ``lambda`` by ``tau = (1 - p) l^2 / (2 N lambda)`` (``p`` the drop probability); the
    notes print ``+ p l^2 / (2 n lambda)``, i.e. they add ``tau`` where its inverse belongs.
    By default ``1/tau`` is estimated from the training residuals instead of from ``l``.
    ``predict(X)`` without ``return_std`` is the deterministic weight-scaled network (the
    notes' "true averages"), which is what dropout at training time approximates.

    Cost per epoch as for :class:`MLPClassifier` with one output unit; MC dropout's
    prediction costs ``T`` forward passes.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neural_network import MLPRegressor
    >>> X = np.linspace(-1, 1, 40)[:, None]; y = 2 * X[:, 0] - 0.5
    >>> reg = MLPRegressor((), solver="lbfgs", random_state=0).fit(X, y)
    >>> np.round(reg.coefs_[0].ravel(), 4), np.round(reg.intercepts_[0], 4)
    (array([2.]), array([-0.5]))
    """

    _parameter_constraints: ClassVar[dict] = {
        **_BaseMLP._parameter_constraints,
        "dropout": [Interval(Real, 0, 1, closed="left")],
        "n_mc_samples": [Interval(Integral, 2, None, closed="left")],
        "tau": [None, Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        hidden_layer_sizes=(100,),
        activation="relu",
        *,
        solver="adam",
        alpha=1e-4,
        batch_size="auto",
        learning_rate="constant",
        learning_rate_init=1e-3,
        power_t=0.5,
        max_iter=200,
        shuffle=True,
        random_state=None,
        tol=1e-4,
        verbose=False,
        momentum=0.9,
        nesterovs_momentum=True,
        early_stopping=False,
        validation_fraction=0.1,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        n_iter_no_change=10,
        clip_norm=None,
        dropout=0.0,
        n_mc_samples=100,
        tau=None,
    ):
        super().__init__(
            hidden_layer_sizes,
            activation,
            solver=solver,
            alpha=alpha,
            batch_size=batch_size,
            learning_rate=learning_rate,
            learning_rate_init=learning_rate_init,
            power_t=power_t,
            max_iter=max_iter,
            shuffle=shuffle,
            random_state=random_state,
            tol=tol,
            verbose=verbose,
            momentum=momentum,
            nesterovs_momentum=nesterovs_momentum,
            early_stopping=early_stopping,
            validation_fraction=validation_fraction,
            beta_1=beta_1,
            beta_2=beta_2,
            epsilon=epsilon,
            n_iter_no_change=n_iter_no_change,
            clip_norm=clip_norm,
        )
        self.dropout = dropout
        self.n_mc_samples = n_mc_samples
        self.tau = tau

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    @property
    def _dropout(self) -> float:
        return float(self.dropout)

    def _prepare_targets(self, y, incremental):
        y = np.asarray(y, dtype=np.float64)
        self._y_1d = y.ndim == 1
        Y = y.reshape(len(y), -1)
        if not np.all(np.isfinite(Y)):
            raise ValueError("y contains NaN or infinity.")
        big = float(np.max(np.abs(Y))) if Y.size else 0.0
        if big > 1e30:
            raise ValueError(
                f"y has entries of magnitude up to {big:.3g}; the network computes in "
                "float32. Rescale the targets."
            )
        if incremental and Y.shape[1] != self.n_outputs_:
            raise ValueError(f"y has {Y.shape[1]} outputs; the network has {self.n_outputs_}.")
        self.n_outputs_ = Y.shape[1]
        self.out_activation_ = "identity"
        return Y.astype(np.float32)

    def _loss(self, out, target):
        d = out - target
        return 0.5 * ad.mean(d * d)

    def _validation_score(self, X, y):
        f = self._forward(X).astype(np.float64)
        y = np.asarray(y, dtype=np.float64)
        ss_res = np.sum((y - f) ** 2)
        ss_tot = np.sum((y - y.mean(axis=0)) ** 2)
        return float(1 - ss_res / ss_tot) if ss_tot > 0 else 0.0

    def _finish(self, X, Y):
        if self.tau is not None:
            self.noise_variance_ = 1.0 / float(self.tau)
            return
        # The mean squared training residual, a group of rows at a time: the forward pass
        # of all N rows at once held N x (widest layer) doubles, many times the training's
        # own memory. Each group's residuals are gathered from forward passes over smaller
        # blocks (a multiple of 8 rows: the BLAS kernels then give every row the bits it gets
        # in the whole group) and summed as one array, so that the sum keeps its order.
        width = max([X.shape[1], Y.shape[1], *self._hidden_sizes()])
        group = max(1, _RESIDUAL_BLOCK_DOUBLES // width)
        block = max(1, _FORWARD_BLOCK_DOUBLES // width)
        if block > 8:
            block -= block % 8
        r = np.empty((min(group, X.shape[0]), Y.shape[1]))
        ss = 0.0
        self.module_.eval()
        for a in range(0, X.shape[0], group):
            m = min(group, X.shape[0] - a)
            for b in range(0, m, block):
                c = min(b + block, m)
                f = self._eval_pass(np.asarray(X[a + b : a + c], dtype=np.float64))
                np.subtract(f, Y[a + b : a + c], out=r[b:c])
            rg = r[:m]
            if not np.all(np.isfinite(rg)):  # Y is finite: the output overflowed
                raise ValueError(_OVERFLOW_MESSAGE)
            ss += float(np.sum(rg * rg))
        self.noise_variance_ = ss / Y.size

    @_fit_context
    def fit(self, X, y):
        """Train the network on ``(X, y)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets.

        Returns
        -------
        self : MLPRegressor
            The fitted regressor.
        """
        if hasattr(self, "module_"):
            del self.module_
        self._fit(X, y)
        Xv = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        self._finish(Xv, np.asarray(y, dtype=np.float64).reshape(len(Xv), -1))
        return self

    @_fit_context
    def partial_fit(self, X, y):
        """One epoch over ``(X, y)``, continuing from the current weights.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Targets.

        Returns
        -------
        self : MLPRegressor
            The updated regressor.
        """
        if self.solver == "lbfgs":
            raise AttributeError("partial_fit is not available for solver='lbfgs'.")
        self._fit(X, y, incremental=True)
        Xv = validate_data(self, X, dtype=[np.float64, np.float32], reset=False)
        self._finish(Xv, np.asarray(y, dtype=np.float64).reshape(len(Xv), -1))
        return self

    def predict(self, X, return_std: bool = False):
        """Predictions; with ``return_std``, MC-dropout means and standard deviations.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Inputs.
        return_std : bool, default=False
            Also return the predictive standard deviation (needs ``dropout > 0``).

        Returns
        -------
        y_mean : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            Deterministic prediction, or the MC-dropout mean with ``return_std``.
        y_std : ndarray of the same shape
            Predictive standard deviation ``sqrt(1/tau + MC variance)``, with ``return_std``.
        """
        X = self._validate_X_predict(X)
        if not return_std:
            out = self._forward(X).astype(np.float64)
            return out.ravel() if self._y_1d else out
        if self.dropout == 0:
            raise ValueError(
                "return_std needs MC dropout: fit with dropout > 0 (a network without "
                "dropout has no predictive distribution here)."
            )
        module = self.module_
        rng = check_random_state(self.random_state)
        module.set_random_state(rng).train()
        try:
            draws = np.stack(
                [np.asarray(module(X), dtype=np.float64) for _ in range(self.n_mc_samples)]
            )
        finally:
            module.eval()
        if not np.all(np.isfinite(draws)):
            raise ValueError("the network's output overflowed for some rows of X.")
        mean = draws.mean(axis=0)
        var = draws.var(axis=0) + self.noise_variance_
        std = np.sqrt(var)
        if self._y_1d:
            return mean.ravel(), std.ravel()
        return mean, std
