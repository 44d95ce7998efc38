"""The kernel perceptron: the perceptron rule in the dual, ``f(x) = sum_n a_n t_n k(x_n, x)``."""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np

from ..base import BaseClassifier, _fit_context, check_is_fitted
from ..exceptions import ConvergenceWarning
from ..kernels import Kernel, get_kernel
from ..linear_model._perceptron import perceptron_epochs
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import all_finite, check_random_state, validate_data

__all__ = ["KernelPerceptron"]


class KernelPerceptron(BaseClassifier):
    """The perceptron with a kernel: count the mistakes ``a_n`` made on each training point.

    Parameters
    ----------
    kernel : str or Kernel, default="linear"
        A name accepted by :func:`mathlearn.kernels.get_kernel` or a kernel object.
    kernel_params : dict or None
        Hyperparameters of a named kernel (e.g. ``{"gamma": 0.5}`` for ``"rbf"``).
    fit_intercept : bool, default=True
        Add the constant 1 to the kernel (the dual of the feature ``phi_0 = 1``), so the
        offset is learned by the same rule.
    max_iter : int, default=1000
        Maximum number of epochs.
    shuffle : bool, default=False
        A new random visiting order each epoch; ``False`` visits the points in order.
    random_state : int, Generator, RandomState or None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    dual_coef_ : ndarray of shape (n_problems, n_samples)
        ``a_n t_n`` for each (one-vs-rest) problem; ``a_n`` is the number of updates made on
        sample ``n``.
    X_fit_ : ndarray of shape (n_samples, n_features)
    kernel_ : Kernel
    n_iter_ : int
    converged_ : bool

    Notes
    -----
    Starting from ``w = 0``, every update adds ``t_n phi(x_n)`` (PRML §4.1.7), so
    ``w = sum_n a_n t_n phi(x_n)`` with ``a_n`` the update count of sample ``n``, and the
    score ``w^T phi(x) = sum_n a_n t_n k(x_n, x)`` needs only the kernel (PRML §6.1). The test
    ``t_n f(x_n) <= 0`` and the visiting order are the primal perceptron's, so with the kernel
    ``k(x, x') = x^T x'`` plus the offset it makes exactly the same updates as
    :class:`mathlearn.linear_model.Perceptron` (tested). Training uses the ``N x N`` Gram
    matrix.

    Complexity (``N`` samples, ``D`` features, ``C`` one-vs-rest problems, ``C = 1`` for two
    classes, ``E`` epochs): the Gram matrix costs ``O(N^2 D)`` time, once; an epoch costs
    ``O(N^2)``, a row of the Gram matrix times the coefficients for each sample visited
    (margins by blocks, plus at most one block of 64 rows after each mistake), so training
    costs ``O(N^2 D + C E N^2)``. Memory: the ``N x N`` Gram matrix (and ``N x N``
    temporaries while it is formed) and the ``C x N`` coefficients; ``X_fit_`` is kept.
    Prediction of ``M`` samples: ``O(M N (D + C))`` time and an ``M x N`` kernel matrix.

    See Also
    --------
    mathlearn.linear_model.Perceptron : the primal rule.
    SVC : the maximum-margin kernel classifier.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.svm import KernelPerceptron
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    >>> y = np.array([0, 0, 1, 1])   # XOR: not linearly separable
    >>> KernelPerceptron(kernel="rbf", kernel_params={"gamma": 2.0}).fit(X, y).predict(X)
    array([0, 0, 1, 1])
    """

    # The checks' random data are not linearly separable: the warning is the right outcome.
    _common_test_convergence_warning_expected = True
    _common_test_params = {"max_iter": 20}

    _parameter_constraints = {
        "kernel": [
            StrOptions(
                {
                    "linear",
                    "poly",
                    "rbf",
                    "sigmoid",
                    "matern",
                    "exponential",
                    "rational_quadratic",
                    "dot_product",
                }
            ),
            Kernel,
        ],
        "kernel_params": [dict, None],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        kernel="linear",
        kernel_params=None,
        fit_intercept: bool = True,
        max_iter: int = 1000,
        shuffle: bool = False,
        random_state=None,
    ):
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state

    def _gram(self, X, Y=None):
        K = self.kernel_(X, Y)
        return K + 1.0 if self.fit_intercept else K

    @_fit_context
    def fit(self, X, y):
        """Run the dual perceptron rule until an epoch makes no mistake.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        y_idx = self._encode_labels(y)
        self.kernel_ = get_kernel(self.kernel, **(self.kernel_params or {}))
        n = X.shape[0]
        with np.errstate(over="ignore", invalid="ignore"):
            K = self._gram(X)
        if not all_finite(K):
            raise ValueError(
                "KernelPerceptron: the kernel matrix of these data overflows float64 (largest "
                f"|x| = {np.max(np.abs(X)):.3g}); rescale the features."
            )
        rng = check_random_state(self.random_state)
        n_classes = len(self.classes_)
        targets = (
            [np.where(y_idx == 1, 1.0, -1.0)]
            if n_classes == 2
            else [np.where(y_idx == c, 1.0, -1.0) for c in range(n_classes)]
        )
        coef = np.zeros((len(targets), n))
        epochs, converged = 0, True
        for k, t in enumerate(targets):
            c = coef[k]

            def margin_of(idx, c=c, t=t):
                return t[idx] * (K[idx] @ c)

            def update(m, c=c, t=t):
                c[m] += t[m]

            def order_of(epoch):
                return rng.permutation(n) if self.shuffle else np.arange(n)

            e, ok = perceptron_epochs(
                margin_of, update, n, max_iter=self.max_iter, order_of=order_of
            )
            epochs, converged = max(epochs, e), converged and ok
        if not converged:
            warnings.warn(
                f"the kernel perceptron made mistakes in every one of max_iter="
                f"{self.max_iter} epochs: the classes are not separable with this kernel.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.dual_coef_ = coef
        self.X_fit_ = X
        self.n_iter_ = epochs
        self.converged_ = converged
        return self

    def decision_function(self, X):
        """``sum_n a_n t_n k(x_n, x)``: (n_samples,) for two classes, else (n_samples, C)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        scores = self._gram(X, self.X_fit_) @ self.dual_coef_.T
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """``classes_[1]`` where the score is >= 0 (two classes), else the top score's class."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores >= 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def _has_predict_proba(self) -> bool:
        return False
