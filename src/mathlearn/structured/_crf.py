r"""Linear-chain conditional random field.

For a sequence ``x_1..x_T`` with labels ``y_1..y_T ∈ {1..K}`` the discriminative function
(Stuttgart "Introduction to Machine Learning" §2.2, slides on CRFs and structured output)

.. math::

    f(x, y) = \sum_t \big(w_{y_t}^\top x_t + b_{y_t}\big) + \sum_{t \ge 2} A_{y_{t-1} y_t},
    \qquad p(y \mid x) = \frac{e^{f(x, y)}}{Z(x)}, \quad Z(x) = \sum_{y'} e^{f(x, y')},

has ``log Z`` by the forward recursion in log space,
``α_1(k) = u_1(k)``, ``α_t(k) = u_t(k) + logsumexp_j(α_{t-1}(j) + A_{jk})`` with the unary
scores ``u_t(k) = w_k^T x_t + b_k``, and the backward one
``β_T = 0``, ``β_t(j) = logsumexp_k(A_{jk} + u_{t+1}(k) + β_{t+1}(k))``. The node and edge
marginals ``p(y_t = k | x) = exp(α_t(k) + β_t(k) - log Z)`` and
``p(y_{t-1} = j, y_t = k | x) = exp(α_{t-1}(j) + A_{jk} + u_t(k) + β_t(k) - log Z)`` give the
gradient of the negative log-likelihood as expected minus observed feature counts,
``∂/∂w_k = Σ_t (p(y_t = k) - [y_t = k]) x_t`` and ``∂/∂A_jk = Σ_t (p(y_{t-1} = j, y_t = k)
- [y_{t-1} = j, y_t = k])``. Decoding is Viterbi (max-product in log space).

Without transitions the model is multinomial logistic regression at every position (the
notes' Exercise 4.4: logistic regression as a special case of a CRF).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils.metaestimators import available_if

from .. import optim
from ..base import BaseClassifier, _fit_context, check_is_fitted
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval
from ..utils.validation import validate_data

__all__ = ["LinearChainCRF"]


def _check_lengths(lengths, n):
    if lengths is None:
        return np.array([n])
    lengths = np.asarray(lengths)
    if lengths.ndim != 1 or not np.issubdtype(lengths.dtype, np.integer) or np.any(lengths < 1):
        raise ValueError("lengths must be a 1-D array of positive integers.")
    if lengths.sum() != n:
        raise ValueError(f"lengths sum to {int(lengths.sum())}, but X has {n} rows.")
    return lengths


def _lse(Z, axis):
    """``log Σ exp`` along ``axis`` (a plain NumPy reduction: called once per time step)."""
    m = np.max(Z, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(Z - m), axis=axis))


def _forward_backward(U, A):
    """Log-space forward/backward for a batch of chains of one length.

    ``U`` has shape (n_chains, T, K); returns ``(log Z, alpha, beta)`` of shapes (n_chains,),
    (n_chains, T, K), (n_chains, T, K). The chains advance together, one vectorised step per
    position, so the Python loop runs ``T`` times whatever the number of chains.
    """
    S, T, K = U.shape
    alpha = np.empty((S, T, K))
    beta = np.zeros((S, T, K))
    alpha[:, 0] = U[:, 0]
    for t in range(1, T):
        alpha[:, t] = U[:, t] + _lse(alpha[:, t - 1, :, None] + A, axis=1)
    for t in range(T - 2, -1, -1):
        beta[:, t] = _lse(A + (U[:, t + 1] + beta[:, t + 1])[:, None, :], axis=2)
    return _lse(alpha[:, -1], axis=1), alpha, beta


def _chains_by_length(lengths):
    """``(T, rows)`` per distinct length: ``rows`` (n_chains, T) indexes the stacked rows."""
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    for T in np.unique(lengths):
        first = starts[lengths == T]
        yield int(T), first[:, None] + np.arange(T)


def _viterbi(U, A):
    T, K = U.shape
    delta = U[0].copy()
    back = np.zeros((T, K), dtype=np.intp)
    for t in range(1, T):
        scores = delta[:, None] + A
        back[t] = np.argmax(scores, axis=0)
        delta = U[t] + scores[back[t], np.arange(K)]
    path = np.empty(T, dtype=np.intp)
    path[-1] = int(np.argmax(delta))
    for t in range(T - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path


class LinearChainCRF(BaseClassifier):
    r"""Linear-chain CRF with linear unary scores and a transition matrix; L-BFGS training.

    ``X`` stacks the positions of all sequences row by row and ``lengths`` gives the length of
    each sequence (``None``: one sequence), as in hidden-Markov-model libraries.

    Parameters
    ----------
    alpha : float, default=1.0
        L2 penalty ``½ alpha (‖W‖² + ‖A‖²)`` (biases unpenalised) added to the summed
        negative log-likelihood.
    transitions : bool, default=True
        Learn the transition scores ``A``; ``False`` fixes ``A = 0`` (independent positions:
        multinomial logistic regression).
    max_iter : int, default=200
    tol : float, default=1e-4
        L-BFGS gradient tolerance on the objective divided by the number of positions.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes, n_features)
        Unary weights ``w_k``.
    intercept_ : ndarray of shape (n_classes,)
    transitions_ : ndarray of shape (n_classes, n_classes)
        ``A[j, k]``: score of label ``k`` following label ``j``.
    n_iter_ : int
    n_features_in_ : int

    See Also
    --------
    mathlearn.linear_model.LogisticRegression
        The chain of length one (per-position classification).

    Notes
    -----
    See the module docstring. ``predict`` decodes each sequence by Viterbi (the jointly most
    probable labelling), ``predict_marginals`` gives ``p(y_t = k | x)``; there is no
    ``predict_proba``, since the most probable sequence need not take the most probable label
    at every position.

    Complexity (``N`` positions in all, ``D`` features, ``K`` labels): each L-BFGS evaluation
    of the objective and its gradient costs ``O(N D K)`` for the unary scores and their
    gradient and ``O(N K^2)`` for the forward and backward recursions and the pair marginals,
    at most ``max_iter`` iterations (a few evaluations each). The chains of one length
    advance together, so the Python loop takes one vectorised step per position of each
    distinct length, whatever the number of chains. Memory beyond ``X``: ``O(N K)`` for the
    unary scores, ``alpha``, ``beta`` and the node marginals, the pair marginals of the chains
    of one length at a time (``O(N K^2)`` at worst), and 10 L-BFGS correction pairs of
    ``K D + K + K^2`` parameters. ``predict`` costs ``O(N D K + N K^2)`` (Viterbi, one sequence
    at a time), ``predict_marginals`` and ``log_partition`` as one evaluation.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0], [1.0], [-1.0], [-1.0], [1.0], [-1.0]]); y = [0, 0, 1, 1, 0, 1]
    >>> LinearChainCRF(alpha=0.1).fit(X, y, lengths=[4, 2]).predict(X, lengths=[4, 2])
    array([0, 0, 1, 1, 0, 1])
    """

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "transitions": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
    }

    # Predictions decode whole sequences: reordering or subsetting the rows of one chain
    # changes the chain, and so the labels (by design).
    _expected_failed_checks = {
        "check_methods_sample_order_invariance": "rows form one sequence; order matters",
        "check_methods_subset_invariance": "rows form one sequence; a subset is another chain",
    }

    def __init__(
        self,
        *,
        alpha: float = 1.0,
        transitions: bool = True,
        max_iter: int = 200,
        tol: float = 1e-4,
    ):
        self.alpha = alpha
        self.transitions = transitions
        self.max_iter = max_iter
        self.tol = tol

    def _unpack(self, theta, K, d):
        W = theta[: K * d].reshape(K, d)
        b = theta[K * d : K * d + K]
        A = theta[K * d + K :].reshape(K, K) if self.transitions else np.zeros((K, K))
        return W, b, A

    def _nll_grad(self, theta, X, y, lengths, K):
        """Summed negative log-likelihood + penalty and its gradient."""
        d = X.shape[1]
        W, b, A = self._unpack(theta, K, d)
        U = X @ W.T + b
        f = 0.0
        P = np.empty_like(U)  # node marginals
        gA = np.zeros((K, K))
        for T, rows in _chains_by_length(lengths):
            Us, ys = U[rows], y[rows]
            logZ, al, be = _forward_backward(Us, A)
            f += float(logZ.sum() - np.take_along_axis(Us, ys[..., None], axis=2).sum())
            f -= float(A[ys[:, :-1], ys[:, 1:]].sum())
            P[rows] = np.exp(al + be - logZ[:, None, None])
            if self.transitions and T > 1:
                pair = np.exp(
                    al[:, :-1, :, None]
                    + A
                    + (Us[:, 1:] + be[:, 1:])[:, :, None, :]
                    - logZ[:, None, None, None]
                )
                gA += pair.sum(axis=(0, 1))
                np.add.at(gA, (ys[:, :-1].ravel(), ys[:, 1:].ravel()), -1.0)
        R = P.copy()
        R[np.arange(len(y)), y] -= 1.0
        gW = R.T @ X + self.alpha * W
        gb = R.sum(axis=0)
        f += 0.5 * self.alpha * (np.sum(W * W) + np.sum(A * A))
        parts = [gW.ravel(), gb]
        if self.transitions:
            parts.append((gA + self.alpha * A).ravel())
        return f, np.concatenate(parts)

    @_fit_context
    def fit(self, X, y, lengths=None):
        """Maximise the penalised conditional log-likelihood by L-BFGS.

        Parameters
        ----------
        X : array-like of shape (n_positions, n_features)
        y : array-like of shape (n_positions,)
        lengths : array-like of int, optional
            Sequence lengths, summing to ``n_positions``.

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        y_idx = self._encode_labels(y)
        lengths = _check_lengths(lengths, X.shape[0])
        K, d = len(self.classes_), X.shape[1]
        n = X.shape[0]
        theta0 = np.zeros(K * d + K + (K * K if self.transitions else 0))

        def fun(theta):
            f, g = self._nll_grad(theta, X, y_idx, lengths, K)
            return f / n, g / n

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = optim.lbfgs(
                fun, theta0, max_iter=self.max_iter, tol=self.tol, ftol=64 * np.finfo(float).eps
            )
        if not np.max(np.abs(res.jac)) <= self.tol:
            warnings.warn(
                f"L-BFGS stopped after {res.nit} iterations with the gradient above "
                f"tol = {self.tol:g}.",
                ConvergenceWarning,
                stacklevel=2,
            )
        W, b, A = self._unpack(np.asarray(res.x), K, d)
        self.coef_, self.intercept_, self.transitions_ = W.copy(), b.copy(), A.copy()
        self.n_iter_ = int(res.nit)
        return self

    def _unary(self, X):
        return X @ self.coef_.T + self.intercept_

    def _joint_log_likelihood(self, X):  # per-position unary scores (no transitions)
        return self._unary(X)

    def predict(self, X, lengths=None):
        """Viterbi decoding of each sequence.

        Parameters
        ----------
        X : array-like of shape (n_positions, n_features)
        lengths : array-like of int, optional

        Returns
        -------
        y : ndarray of shape (n_positions,)
        """
        check_is_fitted(self)
        X = self._validate_X_predict(X)
        lengths = _check_lengths(lengths, X.shape[0])
        U = self._unary(X)
        out, start = np.empty(X.shape[0], dtype=np.intp), 0
        for T in lengths:
            out[start : start + T] = _viterbi(U[start : start + T], self.transitions_)
            start += T
        return self.classes_[out]

    def predict_marginals(self, X, lengths=None):
        """Node marginals ``p(y_t = k | x)``, shape (n_positions, n_classes)."""
        check_is_fitted(self)
        X = self._validate_X_predict(X)
        lengths = _check_lengths(lengths, X.shape[0])
        U = self._unary(X)
        P = np.empty_like(U)
        for _, rows in _chains_by_length(lengths):
            logZ, al, be = _forward_backward(U[rows], self.transitions_)
            P[rows] = np.exp(al + be - logZ[:, None, None])
        return P

    def log_partition(self, X, lengths=None) -> np.ndarray:
        """``log Z(x)`` of each sequence, shape (n_sequences,)."""
        check_is_fitted(self)
        X = self._validate_X_predict(X)
        lengths = _check_lengths(lengths, X.shape[0])
        U = self._unary(X)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        out = np.empty(len(lengths))
        for _, rows in _chains_by_length(lengths):
            out[np.isin(starts, rows[:, 0])] = _forward_backward(U[rows], self.transitions_)[0]
        return out

    def score_sequence(self, X, y) -> float:
        """``f(x, y)`` of one labelled sequence (labels from ``classes_``)."""
        check_is_fitted(self)
        X = self._validate_X_predict(X)
        idx = np.searchsorted(self.classes_, np.asarray(y))
        U = self._unary(X)
        return float(
            U[np.arange(len(idx)), idx].sum() + self.transitions_[idx[:-1], idx[1:]].sum()
        )

    def _has_predict_proba(self) -> bool:
        return False  # see predict_marginals

    decision_function = available_if(lambda self: False)(BaseClassifier.decision_function)
