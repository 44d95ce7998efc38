"""Rosenblatt's perceptron, trained by its stochastic-gradient rule on the perceptron criterion."""

from __future__ import annotations

import ctypes
import warnings
from numbers import Integral, Real

import numpy as np

from ..base import BaseClassifier, _fit_context, check_is_fitted
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval
from ..utils.validation import check_random_state, validate_data
from ._sgd import _compiled_sgd

__all__ = ["Perceptron"]


# First block of margins computed together after a mistake; it doubles while no mistake
# turns up, so an epoch costs O(N + (mistakes) _MIN_BLOCK) margin evaluations.
_MIN_BLOCK = 64


def perceptron_epochs(margin_of, update, n, *, max_iter, order_of):
    """Run perceptron epochs until one makes no mistake; return (epochs, converged).

    ``margin_of(idx)`` gives ``t_n f(x_n)`` for the samples ``idx`` under the current
    weights, ``update(n)`` applies the update for a mistake on sample ``n``, and
    ``order_of(epoch)`` gives the visiting order of an epoch. Within an epoch the margins of
    the next block of samples are computed together, the first mistake among them is
    updated, and the scan resumes after it with a block of ``_MIN_BLOCK`` samples (doubled
    after each block without a mistake); so the visits and updates are exactly those of the
    one-sample-at-a-time rule, and an epoch costs one pass plus at most a block per mistake
    (not a pass over the rest of the epoch).
    """
    for epoch in range(max_iter):
        order = order_of(epoch)
        pos, mistakes, block = 0, 0, _MIN_BLOCK
        while pos < n:
            rest = order[pos : pos + block]
            wrong = np.flatnonzero(margin_of(rest) <= 0)
            if wrong.size == 0:
                pos += rest.shape[0]
                block *= 2
                continue
            k = pos + int(wrong[0])
            update(int(order[k]))
            mistakes += 1
            pos, block = k + 1, _MIN_BLOCK
        if mistakes == 0:
            return epoch + 1, True
    return max_iter, False


class Perceptron(BaseClassifier):
    """The perceptron: update ``w <- w + eta t_n phi(x_n)`` whenever ``t_n w^T phi(x_n) <= 0``.

    Parameters
    ----------
    fit_intercept : bool, default=True
        Append the constant feature ``phi_0 = 1`` (its weight is the intercept, updated by
        the same rule).
    max_iter : int, default=1000
        Maximum number of epochs (passes over the data).
    shuffle : bool, default=False
        Visit the samples in a new random order each epoch (the notes' stochastic version);
        ``False`` visits them in order ``0, ..., N - 1`` (cyclic).
    eta0 : float, default=1.0
        Learning rate ``eta``. Starting from ``w = 0`` the fitted classifier does not depend
        on it (every weight is a multiple of ``eta``).
    random_state : int, Generator, RandomState or None
        Source of the visiting orders when ``shuffle=True``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        One weight vector for two classes (positive: ``classes_[1]``), one per class
        (one-vs-rest) otherwise.
    intercept_ : ndarray of shape (1,) or (n_classes,)
    n_iter_ : int
        Epochs run (the largest over the one-vs-rest problems).
    converged_ : bool
        Whether an epoch without mistakes was reached (for every problem).

    Notes
    -----
    The model is ``y(x) = f(w^T phi(x))`` with ``f(a) = +1`` for ``a >= 0`` and ``-1``
    otherwise, and ``t in {-1, +1}``. The perceptron criterion ``E_P(w) = -sum_{n in M} w^T
    phi(x_n) t_n`` over the misclassified set ``M`` is minimised by stochastic gradient
    descent, one sample at a time (PRML §4.1.7). The misclassification test is
    ``t_n w^T phi(x_n) <= 0``: the notes print ``w^T phi(x_n) < 0`` without ``t_n``, which
    from ``w = 0`` never updates at all (corrected here; tested). On linearly separable data the
    rule stops after finitely many updates (the perceptron convergence theorem); otherwise
    it cycles, and ``fit`` warns after ``max_iter`` epochs.

    Complexity: an epoch costs ``O(N D)`` (one margin and at most one update per sample),
    so ``O(K E N D)`` for ``E`` epochs and ``K`` one-vs-rest problems (``K = 1`` for two
    classes); memory ``O(N + K D)`` beyond ``X`` (the targets and visiting order of one
    problem, the weights). The epochs run in the compiled helper ``mathlearn._ext._sgd``
    (without it, in NumPy, margins computed by blocks).

    See Also
    --------
    mathlearn.svm.KernelPerceptron : the same rule in the dual, with a kernel.
    sklearn.linear_model.Perceptron : the same rule through scikit-learn's SGD machinery.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[2, 1], [1, 3], [3, 2], [0, 1], [2, 3], [1, 0]], dtype=float)
    >>> t = np.array([1, -1, 1, -1, -1, 1])
    >>> clf = Perceptron().fit(X, t)
    >>> clf.intercept_, clf.coef_
    (array([0.]), array([[ 4., -3.]]))
    """

    # The checks' random data are not linearly separable: the warning is the right outcome.
    _common_test_convergence_warning_expected = True
    _common_test_params = {"max_iter": 20}

    _parameter_constraints = {
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "eta0": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        fit_intercept: bool = True,
        max_iter: int = 1000,
        shuffle: bool = False,
        eta0: float = 1.0,
        random_state=None,
    ):
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.eta0 = eta0
        self.random_state = random_state

    @_fit_context
    def fit(self, X, y):
        """Run the perceptron rule until an epoch makes no mistake (or ``max_iter`` epochs).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64, order="C")
        y_idx = self._encode_labels(y)
        n, d = X.shape
        # Without a temporary of N numbers where the largest magnitude settles it.
        amax = max(abs(float(X.max())), abs(float(X.min()))) if X.size else 0.0
        sq = np.zeros(1)
        if amax > np.sqrt(np.finfo(np.float64).max / (d + 2)):
            with np.errstate(over="ignore"):
                sq = np.einsum("ij,ij->i", X, X)
        if not np.all(np.isfinite(sq)):
            raise ValueError(
                "Perceptron: the squared norms of the samples overflow float64 (largest |x| = "
                f"{np.max(np.abs(X)):.3g}), and so would the scores w^T phi(x); rescale the "
                "features."
            )
        rng = check_random_state(self.random_state)
        n_classes = len(self.classes_)
        # the positive class of each problem: classes_[1] for two classes, else one-vs-rest
        positives = [1] if n_classes == 2 else list(range(n_classes))
        # column 0 of W is the intercept (the weight of phi_0 = 1), the others the weights
        W = np.zeros((len(positives), d + 1))

        def order_of(epoch):
            return rng.permutation(n) if self.shuffle else None

        lib = _compiled_sgd()
        y_idx = np.ascontiguousarray(y_idx, dtype=np.int64)
        epochs, converged = 0, True
        for k, positive in enumerate(positives):
            if lib is not None:
                e, ok = self._epochs_compiled(lib, X, y_idx, positive, W[k], order_of)
            else:
                t = np.where(y_idx == positive, 1.0, -1.0)
                e, ok = self._epochs_numpy(X, t, W[k], order_of)
            epochs, converged = max(epochs, e), converged and ok
        if not converged:
            warnings.warn(
                f"the perceptron made mistakes in every one of max_iter={self.max_iter} "
                "epochs: the classes are not linearly separable in these features (or need "
                "more epochs).",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.coef_ = W[:, 1:]
        self.intercept_ = W[:, 0].copy()
        self.n_iter_ = epochs
        self.converged_ = converged
        return self

    def _epochs_compiled(self, lib, X, y_idx, positive, w_full, order_of):
        """Epochs of the compiled helper (``mathlearn._ext._sgd``), in place on ``w_full``,
        for the problem ``classes_[positive]`` against the rest."""
        n, d = X.shape
        w = np.zeros(d)
        b = ctypes.c_double(0.0)
        eta, fi = float(self.eta0), bool(self.fit_intercept)
        epochs, ok = self.max_iter, False
        for epoch in range(self.max_iter):
            order = order_of(epoch)
            if order is not None:
                order = np.ascontiguousarray(order, dtype=np.int64)
            mistakes = lib.sgd_perceptron_epoch(
                n, d, X.ctypes.data, y_idx.ctypes.data, positive,
                None if order is None else order.ctypes.data, w.ctypes.data,
                ctypes.addressof(b), eta, fi,
            )  # fmt: skip
            if mistakes == 0:
                epochs, ok = epoch + 1, True
                break
        w_full[0], w_full[1:] = b.value, w
        return epochs, ok

    def _epochs_numpy(self, X, t, w_full, order_of):
        """The same epochs in NumPy (the route where the helper was not built)."""
        n = X.shape[0]
        Phi = np.hstack([np.ones((n, 1)), X]) if self.fit_intercept else X
        w = w_full if self.fit_intercept else w_full[1:]

        def margin_of(idx):
            return t[idx] * (Phi[idx] @ w)

        def update(m):
            w[:] += self.eta0 * t[m] * Phi[m]

        def order_or_range(epoch):
            order = order_of(epoch)
            return np.arange(n) if order is None else order

        return perceptron_epochs(
            margin_of, update, n, max_iter=self.max_iter, order_of=order_or_range
        )

    def decision_function(self, X):
        """``w^T phi(x)``: shape (n_samples,) for two classes, else (n_samples, n_classes)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        scores = X @ self.coef_.T + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """``f(w^T phi(x))``: ``classes_[1]`` where the score is >= 0 (two classes), else the
        class with the largest one-vs-rest score."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores >= 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def _has_predict_proba(self) -> bool:
        return False  # the perceptron has no probabilistic reading
