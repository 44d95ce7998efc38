"""Kernel support vector machines: C-SVC, nu-SVC, epsilon-SVR and nu-SVR, solved by SMO."""

from __future__ import annotations

from itertools import combinations
from numbers import Real

import numpy as np
from sklearn.utils.metaestimators import available_if

from ..base import BaseClassifier, RegressorMixin, _fit_context
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import check_random_state, check_sample_weight
from ._base import _BaseKernelSVM, _SignedGram
from ._platt import couple_pairwise, platt_sigmoid, sigmoid_probability
from ._smo import offset_from_kkt, solve_dual

__all__ = ["SVC", "SVR", "NuSVC", "NuSVR"]


def _check_weighted_classes(estimator, weight, y_idx):
    """At least two classes must keep a positive total weight (box bound)."""
    totals = np.bincount(y_idx, weights=weight, minlength=len(estimator.classes_))
    if np.count_nonzero(totals > 0) < 2:
        raise ValueError(
            f"{type(estimator).__name__} needs samples of at least 2 classes with non-zero "
            "sample_weight (times class_weight); only one class has any weight."
        )


_WEIGHTS_XFAIL = (
    "sample_weight multiplies a sample's box bound, which in exact arithmetic is the same "
    "machine as repeating the sample; the solver stops at a KKT gap of tol = 1e-3, so the "
    "two fits differ at that level (tests/svm check the equivalence at tol = 1e-10)"
)


def _ovr_from_ovo(decision, n_classes):
    """One-vs-rest scores from the pairwise ones: votes plus a tie-breaking confidence.

    For the pair ``(a, b)``, a positive value is a vote for ``a``. Each class gets its number
    of votes plus ``s / (3 (|s| + 1))``, where ``s`` is the sum of its pairwise decision values
    (signed towards it); the second term lies in ``(-1/3, 1/3)``, so it only breaks ties
    between classes with equal votes. scikit-learn uses the same transformation.
    """
    votes = np.zeros((decision.shape[0], n_classes))
    conf = np.zeros_like(votes)
    for k, (a, b) in enumerate(combinations(range(n_classes), 2)):
        d = decision[:, k]
        votes[:, a] += d > 0
        votes[:, b] += d <= 0
        conf[:, a] += d
        conf[:, b] -= d
    return votes + conf / (3.0 * (np.abs(conf) + 1.0))


class _BaseSVC(BaseClassifier, _BaseKernelSVM):
    """One-vs-one kernel classifier; subclasses say how a binary dual is set up."""

    def _class_weights(self, y_idx):
        cw = self.class_weight
        n_classes = len(self.classes_)
        if cw is None:
            return np.ones(n_classes)
        if cw == "balanced":
            counts = np.bincount(y_idx, minlength=n_classes)
            return len(y_idx) / (n_classes * counts)
        weights = np.ones(n_classes)
        for label, w in cw.items():
            where = np.flatnonzero(self.classes_ == label)
            if where.size == 0:
                raise ValueError(f"class_weight names the label {label!r}, not in y.")
            weights[where[0]] = w
        return weights

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Solve the dual of every pair of classes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples) when
            ``kernel="precomputed"``
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Multiplies each sample's box bound ``C`` (its weight in the hinge loss).

        Returns
        -------
        self
        """
        X, y = self._validate_train(X, y)
        y_idx = self._encode_labels(y)
        sw = check_sample_weight(sample_weight, X)
        bound = self._box(sw * self._class_weights(y_idx)[y_idx])
        _check_weighted_classes(self, bound, y_idx)
        gram, kdiag = self._training_gram(X)
        n_classes = len(self.classes_)
        self._rho_list = []
        pairs = list(combinations(range(n_classes), 2))
        pair_coef, pair_rho, self.n_iter_ = [], [], np.zeros(len(pairs), dtype=int)
        prob_a, prob_b = [], []
        rng = check_random_state(self.random_state)
        for k, (a, b) in enumerate(pairs):
            members = np.flatnonzero((y_idx == a) | (y_idx == b))
            sign = np.where(y_idx[members] == a, 1.0, -1.0)
            sub = gram if members.size == X.shape[0] else gram.restricted(members)
            coef, rho, result = self._solve_binary(
                sub, kdiag[members], sign, bound[members], (a, b)
            )
            self._warn_not_converged(result)
            self.n_iter_[k] = result.n_iter
            full = np.zeros(X.shape[0])
            full[members] = coef
            pair_coef.append(full)
            pair_rho.append(rho)
            if self.probability:
                f = self._held_out_decisions(
                    sub, kdiag[members], sign, bound[members], (a, b), rng
                )
                A, B = platt_sigmoid(f, sign > 0)
                prob_a.append(A)
                prob_b.append(B)
        if self.probability:
            self.probA_, self.probB_ = np.array(prob_a), np.array(prob_b)
        # the solver's data (its copy of X or Gram matrix, the last problem's arrays) go
        # before the support vectors are gathered
        del gram, sub, result, coef, full, sign, members, kdiag, bound, sw
        coef_all = np.array(pair_coef)
        del pair_coef
        self._store(X, y_idx, pairs, coef_all, np.array(pair_rho))
        return self

    def _store(self, X, y_idx, pairs, coef, rho):
        """Support set and libsvm's layout of the dual coefficients and intercepts."""
        n_classes = len(self.classes_)
        is_sv = np.zeros(X.shape[0], dtype=bool)
        for k in range(len(pairs)):
            is_sv |= coef[k] != 0
        # support vectors grouped by class, in order within each (libsvm's layout)
        support = np.flatnonzero(is_sv)
        support = support[np.argsort(y_idx[support], kind="stable")]
        self.support_ = support.astype(np.int32)
        self.n_support_ = np.array(
            [np.sum(is_sv & (y_idx == c)) for c in range(n_classes)], dtype=np.int32
        )
        self.support_vectors_ = X[support] if self.kernel != "precomputed" else np.empty((0, 0))
        dual = np.zeros((n_classes - 1, support.size))
        sv_class = y_idx[support]
        for k, (a, b) in enumerate(pairs):
            # SVs of class a store their coefficient of the pair (a, b) in row b - 1, those
            # of class b in row a.
            cols_a = np.flatnonzero(sv_class == a)
            cols_b = np.flatnonzero(sv_class == b)
            dual[b - 1, cols_a] = coef[k, support[cols_a]]
            dual[a, cols_b] = coef[k, support[cols_b]]
        self._pairs = pairs
        self._pair_coef = coef[:, support]
        self._pair_intercept = -rho
        if n_classes == 2:
            # scikit-learn's public convention: a positive decision value means classes_[1].
            self.dual_coef_ = np.negative(dual, out=dual)
            self.intercept_ = rho.copy()
        else:
            self.dual_coef_ = dual
            self.intercept_ = -rho
        self.fit_status_ = 0

    def _held_out_decisions(self, gram, kdiag, sign, upper, pair, rng, n_folds=5):
        """Decision values of each point from a machine trained without it (5-fold CV)."""
        n = sign.shape[0]
        fold = np.empty(n, dtype=int)
        fold[rng.permutation(n)] = np.arange(n) % n_folds
        f = np.empty(n)
        for k in range(n_folds):
            test = np.flatnonzero(fold == k)
            train = np.flatnonzero(fold != k)
            if test.size == 0:
                continue
            s_train = sign[train]
            if np.all(s_train > 0) or np.all(s_train < 0):
                f[test] = s_train[0]  # one class left to learn from: a constant vote
                continue
            coef, rho, _ = self._solve_binary(
                gram.restricted(train), kdiag[train], s_train, upper[train], pair
            )
            f[test] = gram.block(test, train) @ coef - rho
        return f

    def _ovo_decision(self, X):
        K = self._kernel_to_support(X)
        return K @ self._pair_coef.T + self._pair_intercept

    def decision_function(self, X):
        """Signed distances to the separating surfaces.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) for two classes (positive favours
            ``classes_[1]``), (n_samples, n_classes) with ``decision_function_shape="ovr"``,
            or (n_samples, n_classes (n_classes - 1) / 2) with ``"ovo"``.
        """
        dec = self._ovo_decision(X)
        if len(self.classes_) == 2:
            return -dec[:, 0]
        if self.decision_function_shape == "ovr":
            return _ovr_from_ovo(dec, len(self.classes_))
        return dec

    def predict(self, X):
        """Class by one-vs-one voting (ties to the smaller class index).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        dec = self._ovo_decision(X)
        n_classes = len(self.classes_)
        if n_classes == 2:
            return self.classes_[(dec[:, 0] <= 0).astype(int)]
        if self.break_ties and self.decision_function_shape == "ovr":
            return self.classes_[np.argmax(_ovr_from_ovo(dec, n_classes), axis=1)]
        votes = np.zeros((dec.shape[0], n_classes), dtype=int)
        for k, (a, b) in enumerate(self._pairs):
            votes[:, a] += dec[:, k] > 0
            votes[:, b] += dec[:, k] <= 0
        return self.classes_[np.argmax(votes, axis=1)]

    def _has_predict_proba(self) -> bool:
        return bool(self.probability)

    @available_if(lambda self: self._has_predict_proba())
    def predict_proba(self, X):
        """Class probabilities by Platt scaling and pairwise coupling (``probability=True``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            For two classes, Platt's sigmoid of the decision value; otherwise the pairwise
            sigmoids coupled by Wu, Lin and Weng's second method. As with libsvm, the most
            probable class can differ from ``predict``'s vote near the boundary.
        """
        dec = self._ovo_decision(X)
        K = len(self.classes_)
        r_pairs = sigmoid_probability(dec, self.probA_, self.probB_)  # P(a | a or b)
        if K == 2:
            return np.column_stack([r_pairs[:, 0], 1.0 - r_pairs[:, 0]])
        r = np.full((dec.shape[0], K, K), 0.5)
        for k, (a, b) in enumerate(self._pairs):
            r[:, a, b] = r_pairs[:, k]
            r[:, b, a] = 1.0 - r_pairs[:, k]
        return couple_pairwise(r)

    @available_if(lambda self: self._has_predict_proba())
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags


class SVC(_BaseSVC):
    """C-support vector classification, the soft-margin SVM solved in its dual.

    Parameters
    ----------
    C : float, default=1.0
        Box bound of the dual, the weight of the hinge loss (``C = 1 / (2 lambda)`` for the
        regularised-ERM form). ``C -> inf`` is the hard margin.
    kernel : {"rbf", "linear", "poly", "sigmoid", "precomputed"}, callable or kernel object
    degree : int, default=3
    gamma : {"scale", "auto"} or float, default="scale"
        ``"scale"``: ``1 / (n_features X.var())``, scikit-learn's default.
    coef0 : float, default=0.0
    tol : float, default=1e-3
        Stopping tolerance on the KKT gap (libsvm's ``eps``).
    shrinking : bool, default=True
        Accepted for compatibility; the solver keeps the full gradient up to date.
    cache_size : float, default=200
        Kernel cache budget in MB.
    class_weight : dict, "balanced" or None
        Multiplies ``C`` per class.
    max_iter : int, default=-1
        Iteration cap per pair of classes (-1: none).
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
    break_ties : bool, default=False
        With ``"ovr"``, predict by the ovr scores rather than the votes.
    fit_intercept : bool, default=True
        ``False`` drops the offset ``b``: the kernel SVM of the Oxford notes §3.5, whose dual
        has the box ``0 <= alpha <= C`` and no equality constraint.
    probability : bool, default=False
        Fit Platt's sigmoid on 5-fold cross-validated decision values (five more dual solves
        per pair of classes) so that :meth:`predict_proba` exists.
    random_state : int, Generator, RandomState or None
        The folds of that cross-validation.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    support_ : ndarray of shape (n_SV,)
        Indices of the support vectors, grouped by class.
    support_vectors_ : ndarray of shape (n_SV, n_features)
    n_support_ : ndarray of shape (n_classes,)
    dual_coef_ : ndarray of shape (n_classes - 1, n_SV)
        ``y_i alpha_i`` in libsvm's one-vs-one layout.
    intercept_ : ndarray of shape (n_classes (n_classes - 1) / 2,)
    n_iter_ : ndarray of shape (n_pairs,)

    Notes
    -----
    The primal ``min 1/2 ||w||^2 + C sum_i xi_i`` subject to ``y_i (w^T phi(x_i) + b) >=
    1 - xi_i`` and ``xi_i >= 0`` has the dual ``max sum_i alpha_i - 1/2 sum_ij alpha_i
    alpha_j y_i y_j k(x_i, x_j)`` over ``0 <= alpha_i <= C``, ``sum_i y_i alpha_i = 0``
    (Oxford "Advanced Topics in Statistical Machine Learning" §2.2.2; Imperial "Mathematics for
    Inference and Machine Learning" §3.1; PRML §7.1.1). The decision function is ``f(x) =
    sum_i y_i alpha_i k(x_i, x) + b``; ``b`` is averaged over the margin support vectors
    (``0 < alpha_i < C``), or, when there are none, taken at the midpoint of the interval the
    KKT conditions allow (errata to the notes, which give only the averaging rule). The dual
    is solved by SMO with second-order working-set selection (``mathlearn.svm._smo``; its
    iterations run in compiled C, built at install time, for the built-in and precomputed
    kernels). Multi-class problems are split one-vs-one.

    Time: ``O(n_iter N D)`` for the kernel columns the iterations ask for, at worst, fewer
    with the cache; an RBF Gram matrix of at most 16 MB is evaluated whole, ``O(N^2 D)`` in
    one BLAS product, from 128 features on. Memory ``O(N + cache)`` (the solver's kernel
    cache, ``cache_size`` MB at most, is allocated in C). The cache stores its columns in
    single precision, as libsvm does, where a rounding bound shows that this moves the KKT
    gap by less than ``tol / 10`` (with ``C = 1`` and the default ``tol``, up to about
    58 000 dual variables); otherwise in double precision.

    See Also
    --------
    sklearn.svm.SVC : libsvm's implementation of the same dual.
    NuSVC : the same machine parameterised by the fraction of support vectors.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.svm import SVC
    >>> X = np.array([[1.0, 1.0], [2.0, 2.0], [0.0, 0.0], [-1.0, 0.0]])
    >>> clf = SVC(kernel="linear", C=1e6).fit(X, [1, 1, -1, -1])
    >>> clf.dual_coef_ @ clf.support_vectors_, clf.intercept_   # w = (1, 1), b = -1
    (array([[1., 1.]]), array([-1.]))
    """

    _expected_failed_checks = {"check_sample_weight_equivalence_on_dense_data": _WEIGHTS_XFAIL}

    _parameter_constraints = {
        **_BaseKernelSVM._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
        "break_ties": ["boolean"],
        "fit_intercept": ["boolean"],
        "probability": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        C: float = 1.0,
        kernel="rbf",
        degree: int = 3,
        gamma="scale",
        coef0: float = 0.0,
        tol: float = 1e-3,
        shrinking: bool = True,
        cache_size: float = 200,
        class_weight=None,
        max_iter: int = -1,
        decision_function_shape: str = "ovr",
        break_ties: bool = False,
        fit_intercept: bool = True,
        probability: bool = False,
        random_state=None,
    ):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.fit_intercept = fit_intercept
        self.probability = probability
        self.random_state = random_state

    def _box(self, weights):
        return self.C * weights

    def _solve_binary(self, gram, kdiag, sign, upper, pair):
        n = sign.shape[0]
        if not self.fit_intercept:
            # The offset-free kernel SVM: the box alone (no y^T a = 0), Q = diag(y) K diag(y).
            result = solve_dual(
                _SignedGram(gram, sign),
                kdiag,
                np.ones(n),
                np.arange(n),
                -np.ones(n),
                upper,
                equality="none",
                tol=self.tol,
                max_iter=None if self.max_iter == -1 else self.max_iter,
                cache_size=self.cache_size,
            )
            return sign * result.alpha, 0.0, result
        result = solve_dual(
            gram,
            kdiag,
            sign,
            np.arange(n),
            -np.ones(n),
            upper,
            equality="single",
            tol=self.tol,
            max_iter=None if self.max_iter == -1 else self.max_iter,
            cache_size=self.cache_size,
            shrinking=self.shrinking,
        )
        rho = offset_from_kkt(result, sign, upper)
        return sign * result.alpha, rho, result


class NuSVC(_BaseSVC):
    """nu-support vector classification: ``nu`` bounds the fractions of errors and of SVs.

    Parameters
    ----------
    nu : float in (0, 1], default=0.5
        An upper bound on the fraction of margin errors and a lower bound on the fraction of
        support vectors.
    kernel, degree, gamma, coef0, tol, shrinking, cache_size
        As in :class:`SVC`.
    class_weight, max_iter, decision_function_shape, break_ties
        As in :class:`SVC`.
    fit_intercept : bool, default=True
        ``False`` fits the offset-free nu-SVM of the Oxford notes §2.2.3: ``min 1/2 a^T Q a``
        over ``0 <= a_i <= 1/n`` with ``sum a = nu``; the decision function is then
        ``sum_i y_i a_i k(x_i, x)`` (not rescaled) and ``rho_`` holds the margin ``rho``.
    probability, random_state
        As in :class:`SVC`.

    Attributes
    ----------
    classes_, support_, support_vectors_, n_support_, dual_coef_, intercept_, n_iter_
        As in :class:`SVC`.
    rho_ : ndarray of shape (n_pairs,) or None
        With ``fit_intercept=False``, the margin ``rho = y_i f(x_i)`` of the margin support
        vectors for each pair; ``None`` otherwise.

    Notes
    -----
    The dual (Schölkopf et al. 2000, with the offset) is ``min 1/2 a^T Q a`` over
    ``0 <= a_i <= 1``, ``sum_{y_i = +1} a_i = sum_{y_i = -1} a_i = nu n / 2``, the form libsvm
    solves; two equality multipliers ``r_+`` and ``r_-`` come out of the KKT conditions, and
    the machine equals a C-SVC with ``C = 1 / r``, ``r = (r_+ + r_-) / 2``, after dividing
    ``a`` and ``rho = (r_+ - r_-) / 2`` by ``r``. The Oxford notes §2.2.3 state the
    offset-free version, whose property ``|N(a)| / n <= nu <= (|N(a)| + |M(a)|) / n``
    (margin errors ``N``, margin support vectors ``M``) holds here too (tested). A ``nu``
    larger than ``2 min(n_+, n_-) / n`` is infeasible and raises.

    Complexity as for :class:`SVC`. The start of the iterations puts dual mass on a fraction
    ``nu`` of the points, so its gradient costs ``O(nu N^2 D)``, evaluated by matrix
    products over blocks of kernel rows (512 KiB each) rather than column by column (except
    in the smallest problems, about ``nu N^2 (D + 16) <= 2^18``, where the solver's own
    column loop is as fast and needs no block).

    See Also
    --------
    SVC : the same machine parameterised by ``C``.
    sklearn.svm.NuSVC : libsvm's implementation.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.svm import NuSVC
    >>> X = np.array([[0.0], [1.0], [3.0], [4.0]])
    >>> NuSVC(nu=0.5, kernel="linear").fit(X, [0, 0, 1, 1]).predict([[0.5], [3.5]])
    array([0, 1])
    """

    _expected_failed_checks = {
        "check_sample_weight_equivalence_on_dense_data": (
            "nu is a fraction of the total weight, and repeating a sample changes the number "
            "of box constraints it takes part in, so weights and repetitions are different "
            "problems for the nu-SVM"
        ),
        "check_class_weight_classifiers": (
            "the check's extreme class weights (1e-4 against 1) leave no feasible nu: the "
            "constraint sum_{y=+1} a = sum_{y=-1} a = nu W / 2 cannot be met, which fit reports"
        ),
    }

    _parameter_constraints = {
        **_BaseKernelSVM._parameter_constraints,
        "nu": [Interval(Real, 0.0, 1.0, closed="right")],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
        "break_ties": ["boolean"],
        "fit_intercept": ["boolean"],
        "probability": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        nu: float = 0.5,
        kernel="rbf",
        degree: int = 3,
        gamma="scale",
        coef0: float = 0.0,
        tol: float = 1e-3,
        shrinking: bool = True,
        cache_size: float = 200,
        class_weight=None,
        max_iter: int = -1,
        decision_function_shape: str = "ovr",
        break_ties: bool = False,
        fit_intercept: bool = True,
        probability: bool = False,
        random_state=None,
    ):
        self.nu = nu
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.fit_intercept = fit_intercept
        self.probability = probability
        self.random_state = random_state

    def _box(self, weights):
        return weights

    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Solve the nu-SVM dual of every pair of classes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples) when
            ``kernel="precomputed"``
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Multiplies each sample's box bound.

        Returns
        -------
        self
        """
        super().fit.__wrapped__(self, X, y, sample_weight)
        self.rho_ = np.array(self._rho_list) if self._rho_list else None
        return self

    def _solve_binary(self, gram, kdiag, sign, upper, pair):
        n = sign.shape[0]
        if not self.fit_intercept:
            return self._solve_without_offset(gram, kdiag, sign, upper / n)
        pos, neg = sign > 0, sign < 0
        # Each class carries nu W / 2 of the dual mass, W the total weight (n without
        # weights); feasible while that fits under each class's box bounds.
        total = upper.sum()
        target = self.nu * total / 2.0
        if target > upper[pos].sum() * (1 + 1e-12) or target > upper[neg].sum() * (1 + 1e-12):
            a, b = (self.classes_[c] for c in pair)
            raise ValueError(
                f"nu={self.nu} is infeasible for the classes {a!r} and {b!r}: it must be at "
                f"most 2 min(W_a, W_b) / W = "
                f"{2 * min(upper[pos].sum(), upper[neg].sum()) / total:.4g} (W: the total "
                "sample weight of each class)."
            )
        alpha0 = np.zeros(n)
        for group in (pos, neg):
            remaining = target
            for t in np.flatnonzero(group):
                alpha0[t] = min(upper[t], remaining)
                remaining -= alpha0[t]
        result = solve_dual(
            gram,
            kdiag,
            sign,
            np.arange(n),
            np.zeros(n),
            upper,
            alpha0=alpha0,
            equality="per_sign",
            tol=self.tol,
            max_iter=None if self.max_iter == -1 else self.max_iter,
            cache_size=self.cache_size,
            shrinking=self.shrinking,
        )
        ones = np.ones(n)
        r_pos = offset_from_kkt(result, ones, upper, mask=pos)
        r_neg = offset_from_kkt(result, ones, upper, mask=neg)
        r = 0.5 * (r_pos + r_neg)
        rho = 0.5 * (r_pos - r_neg)
        if not r > 0:
            raise ValueError(
                f"nu={self.nu} leaves no margin (r = {r:.3g} <= 0): the classes overlap "
                "completely for this kernel; lower nu."
            )
        return sign * result.alpha / r, rho / r, result

    def _solve_without_offset(self, gram, kdiag, sign, upper):
        """The Oxford notes' nu-SVM: ``min 1/2 a^T Q a``, ``0 <= a <= 1/n``, ``sum a = nu``."""
        n = sign.shape[0]
        if self.nu > upper.sum() * (1 + 1e-12):
            raise ValueError(
                f"nu={self.nu} is infeasible: it must be at most the sum of the box bounds "
                f"{upper.sum():.4g} (the mean sample weight)."
            )
        alpha0 = np.zeros(n)
        remaining = self.nu
        for t in range(n):
            alpha0[t] = min(upper[t], remaining)
            remaining -= alpha0[t]
        result = solve_dual(
            _SignedGram(gram, sign),
            kdiag,
            np.ones(n),
            np.arange(n),
            np.zeros(n),
            upper,
            alpha0=alpha0,
            equality="single",
            tol=self.tol,
            max_iter=None if self.max_iter == -1 else self.max_iter,
            cache_size=self.cache_size,
            shrinking=self.shrinking,
        )
        # Margin support vectors have y_i f(x_i) = G_i = rho.
        self._rho_list.append(offset_from_kkt(result, np.ones(n), upper))
        return sign * result.alpha, 0.0, result


class _BaseSVR(RegressorMixin, _BaseKernelSVM):
    @_fit_context
    def fit(self, X, y, sample_weight=None):
        """Solve the dual over ``(alpha, alpha*)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Multiplies each sample's box bound ``C``.

        Returns
        -------
        self
        """
        X, y = self._validate_train(X, y, y_numeric=True)
        sw = check_sample_weight(sample_weight, X)
        gram, kdiag = self._training_gram(X)
        n = X.shape[0]
        upper = np.concatenate([self.C * sw, self.C * sw])
        sign = np.concatenate([np.ones(n), -np.ones(n)])
        coef, rho, result = self._solve(gram, kdiag, sign, upper, y)
        self._warn_not_converged(result)
        self.n_iter_ = result.n_iter
        # the solver's data (its copy of X or Gram matrix, the 2 N variables' arrays) go
        # before the support vectors are gathered
        del gram, result, sign, upper, kdiag, sw
        support = np.flatnonzero(coef != 0)
        self.support_ = support.astype(np.int32)
        self.support_vectors_ = X[support] if self.kernel != "precomputed" else np.empty((0, 0))
        self.dual_coef_ = coef[support][None, :]
        self.intercept_ = np.array([-rho])
        self.n_support_ = np.array([support.size], dtype=np.int32)
        self.fit_status_ = 0
        return self

    def predict(self, X):
        """``f(x) = sum_i (alpha_i - alpha*_i) k(x_i, x) + b``, shape (n_samples,)."""
        K = self._kernel_to_support(X)
        return K @ self.dual_coef_[0] + self.intercept_[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags


class SVR(_BaseSVR):
    """epsilon-support vector regression: errors inside a tube of half-width ``epsilon`` are free.

    Parameters
    ----------
    C : float, default=1.0
    epsilon : float, default=0.1
        Half-width of the insensitive tube.
    kernel, degree, gamma, coef0, tol, shrinking, cache_size, max_iter
        As in :class:`SVC`.

    Attributes
    ----------
    support_ : ndarray of shape (n_SV,)
    support_vectors_ : ndarray of shape (n_SV, n_features)
    dual_coef_ : ndarray of shape (1, n_SV)
        ``alpha_i - alpha*_i``.
    intercept_ : ndarray of shape (1,)
    n_iter_ : int

    Notes
    -----
    The primal ``min 1/2 ||w||^2 + C sum (xi_i + xi*_i)`` subject to ``f(x_i) - y_i <= eps +
    xi_i`` and ``y_i - f(x_i) <= eps + xi*_i`` has the dual ``min 1/2 (a - a*)^T K (a - a*) +
    eps sum (a + a*) - y^T (a - a*)`` over ``0 <= a, a* <= C``, ``sum (a - a*) = 0``
    (Imperial "Mathematics for Inference and Machine Learning" §3.2.2, with the libsvm sign
    convention ``f(x) = sum_i (a_i - a*_i) k(x_i, x) + b``; the notes leave ``b`` out, and it
    comes from the KKT conditions of the free variables, averaged, or the midpoint of the KKT
    interval when none is free).

    Complexity: ``2 N`` dual variables over the ``N`` points' kernel columns; time
    ``O(n_iter N D)`` for the columns asked for at worst (an RBF Gram matrix of at most
    16 MB is evaluated whole from 128 features on, ``O(N^2 D)``); memory ``O(N + cache)``.

    See Also
    --------
    sklearn.svm.SVR : libsvm's implementation.
    NuSVR : the tube width chosen by the fraction of support vectors.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.svm import SVR
    >>> X = np.arange(5.0)[:, None]
    >>> SVR(kernel="linear", C=100.0, epsilon=0.0).fit(X, 2 * X[:, 0] + 1).predict([[10.0]])
    array([21.])
    """

    _expected_failed_checks = {"check_sample_weight_equivalence_on_dense_data": _WEIGHTS_XFAIL}

    _parameter_constraints = {
        **_BaseKernelSVM._parameter_constraints,
        "C": [Interval(Real, 0, None, closed="neither")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        kernel="rbf",
        degree: int = 3,
        gamma="scale",
        coef0: float = 0.0,
        tol: float = 1e-3,
        C: float = 1.0,
        epsilon: float = 0.1,
        shrinking: bool = True,
        cache_size: float = 200,
        max_iter: int = -1,
    ):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.C = C
        self.epsilon = epsilon
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.max_iter = max_iter

    def _solve(self, gram, kdiag, sign, upper, y):
        n = y.shape[0]
        p = np.concatenate([self.epsilon - y, self.epsilon + y])
        result = solve_dual(
            gram,
            kdiag,
            sign,
            np.concatenate([np.arange(n), np.arange(n)]),
            p,
            upper,
            equality="single",
            tol=self.tol,
            max_iter=None if self.max_iter == -1 else self.max_iter,
            cache_size=self.cache_size,
            shrinking=self.shrinking,
        )
        rho = offset_from_kkt(result, sign, upper)
        return result.alpha[:n] - result.alpha[n:], rho, result


class NuSVR(_BaseSVR):
    """nu-support vector regression: the tube width is learned, ``nu`` fixes the SV fraction.

    Parameters
    ----------
    nu : float in (0, 1], default=0.5
    C : float, default=1.0
    kernel, degree, gamma, coef0, tol, shrinking, cache_size, max_iter
        As in :class:`SVC`.

    Attributes
    ----------
    support_, support_vectors_, dual_coef_, intercept_, n_iter_
        As in :class:`SVR`.
    epsilon_ : float
        The tube half-width found.

    Notes
    -----
    The dual (Schölkopf et al. 2000) is ``min 1/2 (a - a*)^T K (a - a*) - y^T (a - a*)`` over
    ``0 <= a, a* <= C`` with ``sum a = sum a* = C nu n / 2``; the two equality multipliers
    give the offset and the tube width ``epsilon``.

    Complexity as for :class:`SVR`: ``2 N`` dual variables over the ``N`` points' kernel
    columns; time ``O(n_iter N D)`` for the columns asked for at worst (an RBF Gram matrix of at
    most 16 MB is evaluated whole from 128 features on, ``O(N^2 D)``); memory
    ``O(N + cache)``. The start (``a_i = a*_i`` at the box bound on about ``nu N / 2``
    points) cancels in ``K (a - a*)`` and costs the compiled solver no kernel evaluation.
    Prediction of ``M`` points costs ``O(M n_SV D)`` for ``n_SV`` support vectors.

    See Also
    --------
    SVR : the tube width given.
    sklearn.svm.NuSVR : libsvm's implementation.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.svm import NuSVR
    >>> X = np.arange(6.0)[:, None]
    >>> NuSVR(kernel="linear", C=10.0).fit(X, X[:, 0]).predict([[2.5]]).round(6)
    array([2.5])
    """

    _expected_failed_checks = {
        "check_sample_weight_equivalence_on_dense_data": (
            "nu is a fraction of the number of box constraints, which repeating a sample "
            "changes and weighting it does not"
        )
    }

    _parameter_constraints = {
        **_BaseKernelSVM._parameter_constraints,
        "nu": [Interval(Real, 0.0, 1.0, closed="right")],
        "C": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        *,
        nu: float = 0.5,
        C: float = 1.0,
        kernel="rbf",
        degree: int = 3,
        gamma="scale",
        coef0: float = 0.0,
        shrinking: bool = True,
        tol: float = 1e-3,
        cache_size: float = 200,
        max_iter: int = -1,
    ):
        self.nu = nu
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.tol = tol
        self.cache_size = cache_size
        self.max_iter = max_iter

    def _solve(self, gram, kdiag, sign, upper, y):
        n = y.shape[0]
        remaining = self.C * self.nu * n / 2.0
        alpha0 = np.zeros(2 * n)
        for t in range(n):
            alpha0[t] = alpha0[t + n] = min(remaining, upper[t])
            remaining -= alpha0[t]
        result = solve_dual(
            gram,
            kdiag,
            sign,
            np.concatenate([np.arange(n), np.arange(n)]),
            np.concatenate([-y, y]),
            upper,
            alpha0=alpha0,
            equality="per_sign",
            tol=self.tol,
            max_iter=None if self.max_iter == -1 else self.max_iter,
            cache_size=self.cache_size,
            shrinking=self.shrinking,
        )
        ones = np.ones(2 * n)
        pos = sign > 0
        r_pos = offset_from_kkt(result, ones, upper, mask=pos)
        r_neg = offset_from_kkt(result, ones, upper, mask=~pos)
        self.epsilon_ = -0.5 * (r_pos + r_neg)
        rho = 0.5 * (r_pos - r_neg)
        return result.alpha[:n] - result.alpha[n:], rho, result
