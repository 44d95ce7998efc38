"""Model assessment: the test loss with its standard error, and K-fold cross-validation.

Imperial "Mathematics for Machine Learning" (generalisation, model selection) and Stuttgart
"Introduction to Machine Learning" §2 (k-fold cross-validation, slide 2:17):

* The **generalisation loss** ``L = E_{p(x, y)}[l(f(x), y)]`` is estimated on a test set that
  no decision has used by ``L_hat = (1/N) sum_n l_n``. It is unbiased, with variance
  ``V[l] / N``, so its standard error is ``sqrt(s^2 / N)`` with ``s^2`` the sample variance of
  the per-point losses. Chebyshev's inequality (in its corrected form
  ``P(|X - E X| >= k sigma) <= 1 / k^2``) gives an interval valid for any loss distribution;
  the normal interval is the usual large-``N`` one. Choosing a model by its test loss biases
  that loss downwards: select on validation data (the train/validation/test protocol).
* **k-fold cross-validation** partitions the data into ``k`` near-equal folds ``D_i``, fits on
  ``D \\ D_i`` and records the per-point loss ``l_i`` on ``D_i``; it reports the mean
  ``l_hat = (1/k) sum_i l_i`` and the unbiased variance of the fold losses
  ``(1/(k-1)) [sum_i l_i^2 - k l_hat^2]``. That formula subtracts two nearly equal numbers when
  the losses vary little around a large mean (all digits can cancel); it is evaluated here in
  the equivalent two-pass form ``(1/(k-1)) sum_i (l_i - l_hat)^2``, accurate to rounding.
  ``std_error = sqrt(variance / k)`` treats the folds as independent, which they are not quite
  (the training sets overlap): it is the customary, slightly optimistic, error bar.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from sklearn.base import is_classifier
from sklearn.model_selection import KFold, StratifiedKFold, train_test_split

from ..base import clone
from ..utils._param_validation import HasMethods, Interval, StrOptions, validate_params
from ..utils.validation import check_random_state

__all__ = [
    "CVLoss",
    "CVPath",
    "LossEstimate",
    "cross_validate_loss",
    "cross_validation_path",
    "loss_estimate",
    "train_validation_test_split",
]

_LOSSES = {"squared", "absolute", "zero_one", "log_loss"}


def _pointwise(loss, estimator, X, y) -> np.ndarray:
    """Per-point losses of a fitted estimator on ``(X, y)``."""
    if callable(loss):
        out = np.asarray(loss(y, estimator.predict(X)), dtype=float)
        if out.shape != (len(y),):
            raise ValueError(
                f"a loss callable must return one loss per sample, shape ({len(y)},); got "
                f"{out.shape}."
            )
    elif loss == "log_loss":
        proba = estimator.predict_proba(X)
        cols = np.searchsorted(estimator.classes_, y)
        p = proba[np.arange(len(y)), cols]
        with np.errstate(divide="ignore"):
            out = -np.log(p)
    else:
        pred = estimator.predict(X)
        if loss == "zero_one":
            out = (pred != y).astype(float)
        else:
            r = np.asarray(pred, dtype=float) - np.asarray(y, dtype=float)
            out = r * r if loss == "squared" else np.abs(r)
            if out.ndim > 1:
                out = out.mean(axis=1)
    if not np.all(np.isfinite(out)):
        raise ValueError(
            "the losses are not all finite (a probability of 0 for the true class under "
            "log_loss, or predictions that overflow)."
        )
    return out


@dataclass
class LossEstimate:
    """A loss estimated by the mean over ``n`` independent points, with its standard error.

    Attributes
    ----------
    mean : float
        ``L_hat = (1/n) sum_i l_i``.
    variance : float
        Sample variance ``s^2`` of the per-point losses (``ddof = 1``; 0 for one point).
    std_error : float
        ``sqrt(s^2 / n)``.
    n : int
        Number of points.
    losses : ndarray of shape (n,)
        The per-point losses.

    See Also
    --------
    mathlearn.model_selection.loss_estimate
        The function that returns it.

    Examples
    --------
    Returned by :func:`loss_estimate`; here squared losses 1, 2, 3 and 4:

    >>> import numpy as np
    >>> from sklearn.dummy import DummyRegressor
    >>> from mathlearn.model_selection import loss_estimate
    >>> y = np.sqrt([1.0, 2.0, 3.0, 4.0]); X = np.zeros((4, 1))
    >>> zero = DummyRegressor(strategy="constant", constant=0.0).fit(X, y)
    >>> est = loss_estimate(zero, X, y)
    >>> round(est.mean, 12), round(est.std_error, 6)
    (2.5, 0.645497)
    >>> [round(v, 6) for v in est.interval(0.75)]              # Chebyshev: mean -+ 2 SE
    [1.209006, 3.790994]
    """

    mean: float
    variance: float
    std_error: float
    n: int
    losses: np.ndarray = field(repr=False)

    def interval(self, confidence: float = 0.95, method: str = "chebyshev") -> tuple[float, float]:
        """An interval for the generalisation loss.

        Parameters
        ----------
        confidence : float, default=0.95
            ``1 - delta``, in (0, 1).
        method : {"chebyshev", "normal"}, default="chebyshev"
            ``"chebyshev"``: ``L_hat -+ k SE`` with ``k = 1 / sqrt(delta)``, valid for any loss
            distribution (``P(|L_hat - L| >= k SE) <= 1/k^2``, with ``SE`` the true standard
            error; conservative). ``"normal"``: ``k`` the normal quantile, valid as ``n``
            grows (central limit theorem).

        Returns
        -------
        (float, float)
        """
        if not 0 < confidence < 1:
            raise ValueError(f"confidence must be in (0, 1); got {confidence}.")
        delta = 1.0 - confidence
        if method == "chebyshev":
            k = 1.0 / np.sqrt(delta)
        elif method == "normal":
            from scipy.stats import norm

            k = float(norm.ppf(1.0 - delta / 2.0))
        else:
            raise ValueError(f"method must be 'chebyshev' or 'normal'; got {method!r}.")
        return float(self.mean - k * self.std_error), float(self.mean + k * self.std_error)


def _estimate(losses: np.ndarray) -> LossEstimate:
    n = losses.shape[0]
    mean = float(np.mean(losses))
    var = float(np.sum((losses - mean) ** 2) / (n - 1)) if n > 1 else 0.0
    return LossEstimate(mean, var, float(np.sqrt(var / n)), n, losses)


@validate_params(
    {
        "estimator": [HasMethods(["predict"])],
        "X": ["array-like"],
        "y": ["array-like"],
        "loss": [StrOptions(_LOSSES), callable],
    }
)
def loss_estimate(estimator, X, y, *, loss: str | Callable = "squared") -> LossEstimate:
    """The loss of a fitted estimator on held-out data, with its standard error.

    Parameters
    ----------
    estimator : fitted estimator
        Has ``predict`` (and ``predict_proba`` for ``loss="log_loss"``).
    X : array-like of shape (n_samples, n_features)
        Test inputs that no choice of the model has used.
    y : array-like of shape (n_samples,)
        Test targets.
    loss : {"squared", "absolute", "zero_one", "log_loss"} or callable, default="squared"
        Per-point loss; a callable ``loss(y_true, y_pred)`` returns one loss per sample.

    Returns
    -------
    LossEstimate

    See Also
    --------
    cross_validate_loss

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linear_model import LinearRegression
    >>> from mathlearn.model_selection import loss_estimate
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); y = X @ [1.0, -2.0] + rng.normal(size=200)
    >>> model = LinearRegression().fit(X[:100], y[:100])
    >>> est = loss_estimate(model, X[100:], y[100:])
    >>> bool(abs(est.mean - 1.0) < 4 * est.std_error + 0.1)   # noise variance 1
    True
    """
    y = np.asarray(y)
    if len(y) == 0:
        raise ValueError("loss_estimate needs at least one test point.")
    return _estimate(_pointwise(loss, estimator, X, y))


@dataclass
class CVLoss:
    """k-fold cross-validation losses.

    Attributes
    ----------
    fold_losses : ndarray of shape (k,)
        ``l_i``: the mean per-point loss on fold ``i`` of the model fitted without it.
    fold_sizes : ndarray of shape (k,)
        ``|D_i|``.
    mean : float
        ``l_hat = (1/k) sum_i l_i``.
    variance : float
        Unbiased variance of the fold losses, ``(1/(k-1)) sum_i (l_i - l_hat)^2``.
    std_error : float
        ``sqrt(variance / k)``.

    See Also
    --------
    mathlearn.model_selection.cross_validate_loss
        The function that returns it.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linear_model import Ridge
    >>> from mathlearn.model_selection import cross_validate_loss
    >>> X = np.arange(20.0).reshape(10, 2); y = X[:, 0] - X[:, 1]
    >>> res = cross_validate_loss(Ridge(alpha=1e-8), X, y, cv=2, shuffle=False)
    >>> res.fold_sizes.tolist(), bool(res.mean < 1e-6)
    ([5, 5], True)
    """

    fold_losses: np.ndarray
    fold_sizes: np.ndarray
    mean: float
    variance: float
    std_error: float


def _splitter(cv, estimator, shuffle, random_state):
    if not isinstance(cv, Integral):
        return cv
    seed = None
    if shuffle:
        seed = int(check_random_state(random_state).integers(2**31 - 1))
    cls = StratifiedKFold if is_classifier(estimator) else KFold
    return cls(n_splits=int(cv), shuffle=shuffle, random_state=seed)


_CV_PARAMS = {
    "estimator": [HasMethods(["fit", "predict"])],
    "X": ["array-like"],
    "y": ["array-like"],
    "cv": [Interval(Integral, 2, None, closed="left"), HasMethods(["split"])],
    "loss": [StrOptions(_LOSSES), callable],
    "shuffle": ["boolean"],
    "random_state": ["random_state"],
}


@validate_params(_CV_PARAMS)
def cross_validate_loss(
    estimator,
    X,
    y,
    *,
    cv: int | object = 5,
    loss: str | Callable = "squared",
    shuffle: bool = True,
    random_state=None,
) -> CVLoss:
    """k-fold cross-validation: the mean fold loss and the unbiased variance of the fold losses.

    Parameters
    ----------
    estimator : estimator
        Cloned and fitted once per fold.
    X : array-like of shape (n_samples, n_features)
        Inputs.
    y : array-like of shape (n_samples,)
        Targets.
    cv : int or splitter, default=5
        Number of folds ``k`` (``KFold``, or ``StratifiedKFold`` for a classifier), or any
        scikit-learn splitter.
    loss : {"squared", "absolute", "zero_one", "log_loss"} or callable, default="squared"
        Per-point loss; the fold loss is its mean over the fold.
    shuffle : bool, default=True
        Shuffle before partitioning (an integer ``cv`` only).
    random_state : int, Generator or None
        Seed of the shuffle.

    Returns
    -------
    CVLoss

    See Also
    --------
    cross_validation_path, loss_estimate

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linear_model import Ridge
    >>> from mathlearn.model_selection import cross_validate_loss
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 3)); y = X @ [1.0, 0.0, -1.0] + 0.1 * rng.normal(size=60)
    >>> res = cross_validate_loss(Ridge(alpha=1e-3), X, y, cv=5, random_state=0)
    >>> res.fold_losses.shape, bool(res.mean < 0.05)
    ((5,), True)
    """
    y = np.asarray(y)
    X = X if hasattr(X, "iloc") else np.asarray(X)
    if len(y) != len(X):
        raise ValueError(f"X and y have different numbers of samples: {len(X)} and {len(y)}.")
    splitter = _splitter(cv, estimator, shuffle, random_state)
    losses, sizes = [], []
    take = (lambda A, idx: A.iloc[idx]) if hasattr(X, "iloc") else (lambda A, idx: A[idx])
    for train, test in splitter.split(X, y):
        model = clone(estimator).fit(take(X, train), y[train])
        losses.append(float(np.mean(_pointwise(loss, model, take(X, test), y[test]))))
        sizes.append(len(test))
    fold = np.asarray(losses)
    k = fold.shape[0]
    if k < 2:
        raise ValueError("cross-validation needs at least 2 folds.")
    mean = float(np.mean(fold))
    var = float(np.sum((fold - mean) ** 2) / (k - 1))
    return CVLoss(fold, np.asarray(sizes), mean, var, float(np.sqrt(var / k)))


@dataclass
class CVPath:
    """Cross-validation losses along the values of one hyperparameter, and the choice.

    Attributes
    ----------
    param_name : str
        The hyperparameter.
    param_values : list
        Its values, in the order given.
    means : ndarray of shape (n_values,)
        Mean fold loss per value.
    std_errors : ndarray of shape (n_values,)
        Its standard error per value.
    results : list of CVLoss
        The full cross-validation result per value.
    best_index : int
        Index of the chosen value.
    best_value : object
        The chosen value.
    rule : str
        ``"min"`` or ``"one_standard_error"``.

    See Also
    --------
    mathlearn.model_selection.cross_validation_path
        The function that returns it.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linear_model import Ridge
    >>> from mathlearn.model_selection import cross_validation_path
    >>> rng = np.random.default_rng(1)
    >>> X = rng.normal(size=(30, 2)); y = X[:, 0] + 0.1 * rng.normal(size=30)
    >>> path = cross_validation_path(Ridge(), "alpha", [1e-3, 1e3], X, y, random_state=0)
    >>> path.best_value, path.means.shape
    (0.001, (2,))
    """

    param_name: str
    param_values: list
    means: np.ndarray
    std_errors: np.ndarray
    results: list
    best_index: int
    best_value: object
    rule: str


@validate_params(
    {
        **_CV_PARAMS,
        "param_name": [str],
        "param_values": ["array-like"],
        "rule": [StrOptions({"min", "one_standard_error"})],
        "simpler": [StrOptions({"larger", "smaller"})],
    }
)
def cross_validation_path(
    estimator,
    param_name: str,
    param_values,
    X,
    y,
    *,
    cv: int | object = 5,
    loss: str | Callable = "squared",
    rule: str = "min",
    simpler: str = "larger",
    shuffle: bool = True,
    random_state=None,
) -> CVPath:
    """Choose a hyperparameter by k-fold cross-validation, optionally by the one-SE rule.

    Every value is assessed on the same folds. ``rule="min"`` picks the smallest mean loss
    (Stuttgart notes, slide 2:17: choose lambda minimising the CV loss); ``"one_standard_error"``
    picks the simplest model whose mean loss is within one standard error of that minimum
    (Hastie, Tibshirani and Friedman, *The Elements of Statistical Learning*, §7.10).

    Parameters
    ----------
    estimator : estimator
        The model; ``param_name`` is set on clones of it.
    param_name : str
        A parameter of ``estimator`` (nested names such as ``"ridge__alpha"`` work).
    param_values : array-like
        Values to assess.
    X : array-like of shape (n_samples, n_features)
        Inputs.
    y : array-like of shape (n_samples,)
        Targets.
    cv : int or splitter, default=5
        As in :func:`cross_validate_loss`.
    loss : str or callable, default="squared"
        As in :func:`cross_validate_loss`.
    rule : {"min", "one_standard_error"}, default="min"
        How to choose.
    simpler : {"larger", "smaller"}, default="larger"
        Which end of the values is the simpler model (larger for a penalty such as
        ``alpha``; smaller for a depth or a polynomial degree). Used by the one-SE rule.
    shuffle : bool, default=True
        Shuffle before partitioning (an integer ``cv`` only).
    random_state : int, Generator or None
        Seed of the shuffle (one partition for all values).

    Returns
    -------
    CVPath

    See Also
    --------
    cross_validate_loss

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.linear_model import Ridge
    >>> from mathlearn.model_selection import cross_validation_path
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 10)); y = X[:, 0] + 0.5 * rng.normal(size=40)
    >>> path = cross_validation_path(Ridge(), "alpha", [1e-3, 1.0, 10.0, 1e4], X, y,
    ...                              random_state=0)
    >>> path.best_value in (1.0, 10.0)
    True
    """
    values = list(param_values)
    if not values:
        raise ValueError("param_values is empty.")
    splitter = _splitter(cv, estimator, shuffle, random_state)
    y_arr = np.asarray(y)
    # One partition for every value: materialise the folds once.
    folds = list(splitter.split(X if hasattr(X, "iloc") else np.asarray(X), y_arr))

    class _Fixed:
        def split(self, X, y=None, groups=None):
            return iter(folds)

    results = [
        cross_validate_loss(
            clone(estimator).set_params(**{param_name: v}), X, y, cv=_Fixed(), loss=loss
        )
        for v in values
    ]
    means = np.array([r.mean for r in results])
    ses = np.array([r.std_error for r in results])
    best = int(np.argmin(means))
    if rule == "one_standard_error":
        threshold = means[best] + ses[best]
        ok = np.flatnonzero(means <= threshold)
        order = np.argsort(np.asarray(values, dtype=float), kind="stable")
        ranked = [i for i in order if i in set(ok)]
        best = int(ranked[-1] if simpler == "larger" else ranked[0])
    return CVPath(param_name, values, means, ses, results, best, values[best], rule)


@validate_params(
    {
        "validation_size": [Interval(Real, 0, 1, closed="neither")],
        "test_size": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
        "stratify": ["array-like", None],
    }
)
def train_validation_test_split(
    *arrays, validation_size: float = 0.2, test_size: float = 0.2, random_state=None, stratify=None
) -> list:
    """Split arrays into training, validation and test parts (the three-way protocol).

    Fit on the training part, choose models and hyperparameters on the validation part, and
    report the loss on the test part once, at the end: only then is the test loss an unbiased
    estimate of the generalisation loss (Imperial "Mathematics for Machine Learning").

    Parameters
    ----------
    *arrays : array-like
        Arrays with the same first dimension.
    validation_size : float, default=0.2
        Fraction of the samples for validation.
    test_size : float, default=0.2
        Fraction of the samples for testing; ``validation_size + test_size < 1``.
    random_state : int, Generator or None
        Seed of the shuffle.
    stratify : array-like, optional
        Class labels to keep the class proportions in every part.

    Returns
    -------
    list
        ``[a_train, a_val, a_test]`` for each array, in order.

    See Also
    --------
    loss_estimate

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.model_selection import train_validation_test_split
    >>> X, y = np.arange(20).reshape(10, 2), np.arange(10)
    >>> X_tr, X_va, X_te, y_tr, y_va, y_te = train_validation_test_split(X, y, random_state=0)
    >>> len(y_tr), len(y_va), len(y_te)
    (6, 2, 2)
    """
    if not arrays:
        raise ValueError("train_validation_test_split needs at least one array.")
    if validation_size + test_size >= 1:
        raise ValueError(
            f"validation_size + test_size must be < 1; got {validation_size} + {test_size}."
        )
    seed = int(check_random_state(random_state).integers(2**31 - 1))
    first = train_test_split(*arrays, test_size=test_size, random_state=seed, stratify=stratify)
    rest, tests = first[0::2], first[1::2]
    strat_rest = None
    if stratify is not None:
        strat_rest = train_test_split(
            np.asarray(stratify), test_size=test_size, random_state=seed, stratify=stratify
        )[0]
    n_val = max(1, round(validation_size * (len(rest[0]) + len(tests[0]))))
    if n_val >= len(rest[0]):
        raise ValueError(
            f"no samples left for training: {len(rest[0]) + len(tests[0])} samples with "
            f"validation_size={validation_size} and test_size={test_size}."
        )
    second = train_test_split(
        *rest,
        test_size=n_val,
        random_state=seed + 1,
        stratify=strat_rest,
    )
    out = []
    for i, te in enumerate(tests):
        out += [second[2 * i], second[2 * i + 1], te]
    return out
