"""Fisher's linear discriminant analysis: two-class and multi-class, three solvers."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar, NamedTuple

import numpy as np
import scipy.linalg as sla
from sklearn.utils import column_or_1d

from ..base import (
    BaseClassifier,
    ComponentNamesMixin,
    TransformerMixin,
    _fit_context,
    check_is_fitted,
)
from ..utils._columns import class_sums
from ..utils._param_validation import Interval, StrOptions
from ..utils._rowscale import centred_linear_map
from ..utils._threads import gram_beside_scipy, matmul_beside_scipy
from ..utils.linalg import cholesky
from ..utils.validation import check_array, validate_data

__all__ = ["FisherLDA", "scatter_matrices"]

_CONVENTIONS = ("pooled", "normalized")


def _class_means(X, y_idx, n_classes):
    """Class counts and means (``class_sums``: a BLAS product for few classes, in SciPy's
    BLAS where the eigensolvers that follow run; see ``fisher_directions``)."""
    counts = np.bincount(y_idx, minlength=n_classes).astype(float)
    return counts, class_sums(X, y_idx, n_classes, matmul_beside_scipy()) / counts[:, None]


def _within(R, counts, y_idx, convention):
    """``A`` with ``S_w = A^T A``, from the within-class residuals ``R = X - means[y]``."""
    if convention == "pooled":
        # Imperial MIML notes §2.2 (eqs. 2.64-2.65): S_w unnormalised, S_b weighted by N_c, so
        # that S_t = S_w + S_b.
        return R
    # Imperial MIML notes §2.1.5: S_w = sum_j S_j with S_j the 1/N_c class covariance.
    return R / np.sqrt(counts[y_idx])[:, None]


def _between(means, xbar, counts, convention):
    """``B`` with ``S_b = B^T B``."""
    if convention == "pooled":
        return np.sqrt(counts)[:, None] * (means - xbar)
    # normalized: S_b around the (unweighted) mean of the class means
    return means - means.mean(axis=0)


def _scatter_factors(X, y_idx, n_classes, convention):
    """``A``, ``B`` with ``S_w = A^T A`` and ``S_b = B^T B``, and the class means."""
    if convention not in _CONVENTIONS:
        raise ValueError(f"scatter must be one of {_CONVENTIONS}; got {convention!r}.")
    counts, means = _class_means(X, y_idx, n_classes)
    xbar = counts @ means / X.shape[0]
    A = _within(X - means[y_idx], counts, y_idx, convention)
    return A, _between(means, xbar, counts, convention), means, counts


def _rms(R: np.ndarray) -> np.ndarray:
    """Root mean square of each column, computed in units of its largest entry (no overflow
    or underflow of the squares for data of any finite scale)."""
    m = np.max(np.abs(R), axis=0)
    m = np.where(m > 0, m, 1.0)
    return m * np.sqrt(np.mean((R / m) ** 2, axis=0))


def scatter_matrices(X, y, *, scatter: str = "pooled") -> tuple[np.ndarray, np.ndarray]:
    """Within- and between-class scatter matrices ``(S_w, S_b)``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    scatter : {"pooled", "normalized"}, default="pooled"
        ``"pooled"`` (Imperial "Mathematics for Inference and Machine Learning" §2.2):
        ``S_w = sum_i (x_i - mu_{c_i})(x_i - mu_{c_i})^T`` and
        ``S_b = sum_j N_j (mu_j - m)(mu_j - m)^T``, so ``S_w + S_b = S_t``.
        ``"normalized"`` (the same notes, §2.1.5, the convention of their worked example):
        ``S_w = sum_j S_j`` with ``S_j`` the class covariance (``1/N_j``) and
        ``S_b = sum_j (mu_j - m_bar)(mu_j - m_bar)^T`` around the mean of the class means (for
        two classes this is ``(mu_1 - mu_2)(mu_1 - mu_2)^T / 2``).

    Returns
    -------
    S_w, S_b : ndarray of shape (n_features, n_features)

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.discriminant_analysis import scatter_matrices
    >>> X = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
    >>> S_w, S_b = scatter_matrices(X, [0, 0, 1, 1])  # the classes differ in x2 only
    >>> S_w, S_b
    (array([[4., 0.],
           [0., 0.]]), array([[0., 0.],
           [0., 4.]]))
    """
    X = check_array(X, dtype=np.float64)
    y = column_or_1d(y)
    if len(y) != len(X):
        raise ValueError(f"X and y have inconsistent lengths: {len(X)} and {len(y)}.")
    _, y_idx = np.unique(y, return_inverse=True)
    A, B, _, _ = _scatter_factors(X, y_idx.ravel(), int(y_idx.max()) + 1, scatter)
    return A.T @ A, B.T @ B


class FisherDirections(NamedTuple):
    """Result of :func:`fisher_directions`."""

    scalings: np.ndarray
    eigenvalues: np.ndarray
    explained_variance_ratio: np.ndarray
    solver: str
    means: np.ndarray
    xbar: np.ndarray


def fisher_directions(X, y_idx, C, k, *, solver="auto", scatter="pooled", tol=1e-10):
    """Fisher's discriminant directions, shared by :class:`FisherLDA` and
    :class:`LinearDiscriminantAnalysis` (one implementation of the projection).

    ``X`` is validated float64 data, ``y_idx`` class indices ``0 .. C - 1``, ``k`` the number
    of directions; ``solver``, ``scatter`` and ``tol`` as in :class:`FisherLDA`. Returns the
    directions scaled so that the projections have identity ML within-class covariance.
    """
    n, d = X.shape
    if scatter not in _CONVENTIONS:
        raise ValueError(f"scatter must be one of {_CONVENTIONS}; got {scatter!r}.")
    # Products beside SciPy's eigensolvers run in SciPy's BLAS (a switch between NumPy's and
    # SciPy's thread pools can stall; see utils._threads.scipy_matmul).
    mm, gram = matmul_beside_scipy(), gram_beside_scipy()
    counts, means = _class_means(X, y_idx, C)
    xbar = counts @ means / n  # the overall mean, from the class sums
    R = X - means[y_idx]  # within-class residuals (one N x D temporary)
    # Features in units of their within-class standard deviation (their total one for a
    # feature constant within every class; 1 for a constant feature): the criterion is
    # invariant under this rescaling, and S_w is then as well conditioned as the
    # correlations allow.
    Sw = None
    if scatter == "pooled" and solver in ("auto", "eigen") and d <= n - C:
        # One product gives S_w and the deviations (its diagonal / N). A diagonal entry is at
        # least the largest computed square of its column and at most N times the largest
        # possible one (rounding is monotone, every term >= 0), so one inside
        # (N 2^-480, 2^480) puts its column's largest entry in [2^-240, 2^240]: no square
        # overflows and what underflows is negligible. Rescaling the matrix on both sides
        # is rescaling the data before the product, to rounding (each entry's error bound
        # is invariant under it). Otherwise the deviations are taken in units of each
        # column's largest entry, and S_w from the rescaled data.
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            G = gram(R.T)  # checked below
        g = np.diag(G).copy()
        if np.all((g > n * 2.0**-480) & (g < 2.0**480)):
            sd = np.sqrt(g / n)
            Sw = G / sd[:, None] / sd
    if Sw is None:
        sd = _rms(R)
        if np.any(sd == 0):
            total_sd = _rms(X - xbar)
            sd = np.where(sd > 0, sd, np.where(total_sd > 0, total_sd, 1.0))
    B = _between(means / sd, xbar / sd, counts, scatter)
    A = None  # the rescaled within-class factor, formed where a route needs it

    def within():
        return _within(R / sd, counts, y_idx, scatter)

    if solver in ("auto", "eigen"):
        # rank(S_w) <= N - C (erratum 10): when D exceeds it S_w is singular, and the
        # D x D matrices are never formed (the faces case, D >> N).
        ok = d <= n - C
        if ok:
            if Sw is None:
                A = within()
                Sw = gram(A.T)
            Sb = gram(B.T)
            try:
                cholesky(Sw, jitter=None, name="S_w")
                cond = np.linalg.cond(Sw)
                ok = bool(np.isfinite(cond) and cond * tol * 1e-3 < 1.0)
            except np.linalg.LinAlgError:
                ok = False
        if not ok:
            if solver == "eigen":
                raise ValueError(
                    "the within-class scatter S_w is singular (n_features > n_samples - "
                    "n_classes, or constant/collinear features); use solver="
                    "'simultaneous' or 'pca'."
                )
            solver = "simultaneous"
        else:
            solver = "eigen"
    if solver == "eigen":
        w, W = sla.eigh(Sb, Sw, check_finite=False)
        w, W = w[::-1], W[:, ::-1]
    elif solver == "simultaneous":
        if A is None:
            A = within()
        U = _whiten_within(A, tol, Sw)
        BU = mm(B, U)
        w, Q = sla.eigh(gram(BU.T), check_finite=False)
        w, Q = w[::-1], Q[:, ::-1]
        W = mm(U, Q)
    else:
        if A is None:
            A = within()
        r = min(n - C, d)
        Xc = (X - xbar) / sd
        _, _, Vt = sla.svd(Xc, full_matrices=False, check_finite=False)
        P = Vt[:r].T
        AP, BP = mm(A, P), mm(B, P)
        Swr = gram(AP.T)
        try:
            w, Q = sla.eigh(gram(BP.T), Swr, check_finite=False)
        except np.linalg.LinAlgError:
            raise ValueError(
                "S_w is singular even after PCA to n_samples - n_classes dimensions "
                "(collinear data); use solver='simultaneous'."
            ) from None
        w, Q = w[::-1], Q[:, ::-1]
        W = mm(P, Q)
    if W.shape[1] < k:
        # The simultaneous route keeps the range of S_w only.
        raise ValueError(
            f"the within-class scatter has rank {W.shape[1]} < n_components={k} on these "
            "data (classes that are single points, or collinear features); lower "
            "n_components."
        )
    w = np.clip(w, 0.0, None)
    total = w[: C - 1].sum()
    W = W[:, :k]
    # Scale so that the ML estimate of the shared within-class covariance of the
    # projections is I (W^T S_w W = I holds before this for the pooled convention).
    AW = mm(R, W / sd[:, None])  # ((X - means[y]) / sd) @ W, without an N x D temporary
    norms = np.sqrt(np.einsum("ij,ij->j", AW, AW) / n)
    norms[norms == 0] = 1.0
    W = W / norms / sd[:, None]  # back to the original units
    idx = np.argmax(np.abs(W), axis=0)
    signs = np.sign(W[idx, np.arange(k)])
    signs[signs == 0] = 1.0
    return FisherDirections(
        W * signs, w[:k], w[:k] / total if total > 0 else np.zeros(k), solver, means, xbar
    )


def _whiten_within(A, tol, S=None):
    """``U`` with ``U^T A^T A U = I`` spanning the range of ``S_w = A^T A`` (``S``, when
    given, is ``A^T A`` already formed)."""
    n, d = A.shape
    mm, gram = matmul_beside_scipy(), gram_beside_scipy()  # (as in fisher_directions)
    if n < d:
        # Algorithm 2, steps 1-2: eigendecompose the N x N Gram of the within-class
        # centred data and set U = A^T V_w Lambda_w^{-1} (Lemma 1: Lambda^{-1} whitens).
        g, V = sla.eigh(gram(A), check_finite=False)
        keep = g > tol * max(g[-1], 0.0)
        if not keep.any():
            raise ValueError("the within-class scatter is zero (every class is one point).")
        return mm(A.T, V[:, keep]) / g[keep]
    g, V = sla.eigh(gram(A.T) if S is None else S, check_finite=False)
    keep = g > tol * max(g[-1], 0.0)
    if not keep.any():
        raise ValueError("the within-class scatter is zero (every class is one point).")
    return V[:, keep] / np.sqrt(g[keep])


class FisherLDA(ComponentNamesMixin, TransformerMixin, BaseClassifier):
    """Fisher's linear discriminant: projection maximising between- over within-class scatter.

    Parameters
    ----------
    n_components : int or None, default=None
        Number of discriminant directions, at most ``min(n_classes - 1, n_features)``
        (``None``: that maximum).
    solver : {"auto", "eigen", "simultaneous", "pca"}, default="auto"
        ``"eigen"``: the generalised symmetric eigenproblem ``S_b w = lambda S_w w``
        (``scipy.linalg.eigh(S_b, S_w)``, never inverting ``S_w``); needs ``S_w`` positive
        definite. ``"simultaneous"``: simultaneous diagonalisation (Imperial "Mathematics for
        Inference and Machine Learning" §2.2, Lemma 2 and Algorithm 2): whiten ``S_w`` on its
        range through the cheaper of the ``N x N`` Gram and ``D x D`` scatter, then diagonalise
        the whitened ``S_b``; works when ``D > N``.
        ``"pca"``: PCA to ``min(N - C, D)`` dimensions, then the eigenproblem there (the same
        notes, §2.2; they warn that information can be lost). ``"auto"``: ``"eigen"`` when
        ``S_w`` is positive definite, else ``"simultaneous"``; when ``D > N - C`` ``S_w``
        is singular by its rank, and ``"simultaneous"`` is chosen without forming any
        ``D x D`` matrix. When ``D >> N`` the class means can differ mostly in the null
        space of ``S_w``, which ``"simultaneous"`` (like scikit-learn's ``svd`` solver)
        discards; ``"pca"`` keeps the leading directions of the total scatter instead.
    scatter : {"pooled", "normalized"}, default="pooled"
        Scatter convention, see :func:`scatter_matrices`.
    priors : array-like of shape (n_classes,) or None, default=None
        Class priors of the classifier; ``None``: the class proportions.
    tol : float, default=1e-10
        Relative threshold in ``[0, 1)`` below which eigenvalues of ``S_w`` count as zero
        (``0``: only exact zeros). The eigenvalues are those of ``S_w`` for features
        rescaled to unit within-class variance (see Notes).

    Attributes
    ----------
    scalings_ : ndarray of shape (n_features, n_components_)
        Discriminant directions ``W``, scaled so that the projected data have identity shared
        within-class covariance (its maximum-likelihood estimate, ``W^T S_w W / N = I``, the
        scaling scikit-learn's ``LinearDiscriminantAnalysis`` uses) on the range of ``S_w``.
    eigenvalues_ : ndarray of shape (n_components_,)
        The generalised eigenvalues (Fisher ratios ``w^T S_b w / w^T S_w w``), decreasing.
    explained_variance_ratio_ : ndarray of shape (n_components_,)
        ``eigenvalues_ / sum`` of all non-zero eigenvalues.
    means_ : ndarray of shape (n_classes, n_features)
    xbar_ : ndarray of shape (n_features,)
        Overall mean; ``transform`` centres with it.
    classes_ : ndarray of shape (n_classes,)
    priors_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (n_classes, n_features), or (1, n_features) for two classes
        Weights of the linear class scores ``x @ coef_.T + intercept_``, which differ from
        the log-posteriors by a term shared by all classes (for two classes: the weights of
        the log-odds of ``classes_[1]``, as in scikit-learn).
    intercept_ : ndarray of shape (n_classes,), or (1,) for two classes
    solver_ : str
        The solver actually used.
    classifier_ : LinearDiscriminantAnalysis
        The classifier: linear discriminant analysis fitted to the projections.
    n_components_ : int
    n_features_in_ : int

    See Also
    --------
    mathlearn.discriminant_analysis.LinearDiscriminantAnalysis
        The Gaussian classifier sharing its projection.
    mathlearn.discriminant_analysis.scatter_matrices
        The within- and between-class scatter it contrasts.

    Notes
    -----
    Imperial "Mathematics for Inference and Machine Learning" §2.1.5-2.2. Two classes: maximise
    ``J(w) = (w^T S_b w) / (w^T S_w w)``, whose maximiser is ``w ~ S_w^{-1}(mu_1 - mu_2)``;
    ``C`` classes: ``max tr(W^T S_b W)`` s.t. ``W^T S_w W = I``, i.e. ``S_b W = S_w W Lambda``
    with at most ``C - 1`` non-zero eigenvalues. ``rank(S_w) = min(D, N - C)`` (erratum 10:
    the notes print ``N - (C + 1)``). Algorithm 2 writes ``S_w = X (I - M) X^T`` and
    ``S_b = X M X^T`` with ``M`` the block-averaging matrix; here ``S_w = A^T A``,
    ``S_b = B^T B`` with ``A`` the within-class-centred rows and ``B`` the weighted centred class
    means, and the whitening ``U`` satisfies ``U^T S_w U = I``.

    The criterion is invariant under a rescaling of the features, ``x -> D^{-1} x`` with
    ``D`` diagonal (``W -> D W``, the Fisher ratios unchanged), so the directions are
    computed for features in units of their within-class standard deviation and mapped back:
    a feature in units of ``1e8`` then costs no accuracy and no rank.

    Cost (``N`` samples, ``D`` features, ``C`` classes): ``O(N D min(C, 32))`` for the class
    sums, ``O(N D^2)`` for ``S_w`` (one product of the within-class residuals, which also
    gives the deviations), ``O(D^3)`` for the eigenproblem; memory one ``N x D`` array of
    residuals. For ``D > N - C`` (``"simultaneous"``) the ``N x N`` Gram matrix replaces
    ``S_w``: ``O(N^2 D + N^3)``.

    The classifier on top is :class:`LinearDiscriminantAnalysis` on the projections
    (``classifier_``; one implementation of the Gaussian classifier, not two), a Gaussian
    with a shared covariance in the projected space,
    ``log p(c | z) = -0.5 (z - nu_c)^T Sigma_z^{-1} (z - nu_c) + log pi_c + const``; with
    ``n_components = C - 1`` and the pooled convention it gives the same predictions and
    probabilities as full-dimensional linear discriminant analysis (the discarded directions
    do not separate the class means).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.discriminant_analysis import FisherLDA
    >>> X = np.array([[4, 1], [2, 4], [2, 3], [3, 6], [4, 4],
    ...               [9, 10], [6, 8], [9, 5], [8, 7], [10, 8]], dtype=float)
    >>> y = np.array([0] * 5 + [1] * 5)
    >>> lda = FisherLDA().fit(X, y)
    >>> w = lda.scalings_[:, 0] / np.linalg.norm(lda.scalings_[:, 0])
    >>> np.round(np.abs(w), 4)
    array([0.9196, 0.393 ])
    """

    _n_features_out_attr = "scalings_"
    _n_features_out_axis = 1

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "solver": [StrOptions({"auto", "eigen", "simultaneous", "pca"})],
        "scatter": [StrOptions(set(_CONVENTIONS))],
        "priors": ["array-like", None],
        "tol": [Interval(Real, 0, 1, closed="left")],
    }

    def __init__(
        self,
        n_components: int | None = None,
        *,
        solver: str = "auto",
        scatter: str = "pooled",
        priors=None,
        tol: float = 1e-10,
    ):
        self.n_components = n_components
        self.solver = solver
        self.scatter = scatter
        self.priors = priors
        self.tol = tol

    @_fit_context
    def fit(self, X, y):
        """Fit the discriminant directions and the classifier; returns self."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        y_idx = self._encode_labels(y)
        C = len(self.classes_)
        n, d = X.shape
        if n <= C:
            raise ValueError(
                f"FisherLDA needs more samples than classes; got {n} samples for {C} classes."
            )
        kmax = min(C - 1, d)
        k = kmax if self.n_components is None else int(self.n_components)
        if k > kmax:
            raise ValueError(
                f"n_components={self.n_components!r} must be an int in [1, min(n_classes - 1, "
                f"n_features)] = [1, {kmax}]."
            )
        counts = np.bincount(y_idx, minlength=C).astype(float)
        if self.priors is None:
            self.priors_ = counts / n
        else:
            pri = np.asarray(self.priors, dtype=float)
            if pri.shape != (C,) or np.any(pri <= 0) or not np.isclose(pri.sum(), 1.0):
                raise ValueError(f"priors must be {C} positive numbers summing to 1.")
            self.priors_ = pri
        fd = fisher_directions(
            X, y_idx, C, k, solver=self.solver, scatter=self.scatter, tol=self.tol
        )
        self.means_ = fd.means
        self.xbar_ = fd.xbar
        self.scalings_ = fd.scalings
        self.eigenvalues_ = fd.eigenvalues
        self.explained_variance_ratio_ = fd.explained_variance_ratio
        self.solver_ = fd.solver
        self.n_components_ = k
        # The classifier is linear discriminant analysis on the projections z = (x - xbar) W:
        # Gaussian class conditionals with a shared covariance in the projected space.
        from ._gaussian import LinearDiscriminantAnalysis

        Z = centred_linear_map(X, self.xbar_, lambda Xc: Xc @ self.scalings_, what="z")
        # Z (finite: checked by centred_linear_map) and the class indices are this fit's own,
        # and the priors were validated above: no second validation and label encoding.
        clf = LinearDiscriminantAnalysis(priors=self.priors_)
        clf.n_features_in_ = Z.shape[1]
        clf.classes_ = np.arange(C)
        self.classifier_ = clf._fit_encoded(Z, y_idx)
        # The class scores are linear in z once the quadratic term z^T Sigma_z^{-1} z, shared
        # by all classes, is dropped: coef_c = W Sigma_z^{-1} nu_c.
        P = self.classifier_._coef_all.T / self.classifier_._unit  # (k, C)
        self._score_weights = P
        self._score_offsets = self.classifier_._intercept_all
        coef = (self.scalings_ @ P).T
        intercept = self._score_offsets - coef @ self.xbar_
        if C == 2:
            coef, intercept = coef[1:] - coef[:1], intercept[1:] - intercept[:1]
        self.coef_, self.intercept_ = coef, intercept
        return self

    def transform(self, X):
        """Project onto the discriminant directions: ``(X - xbar_) @ scalings_``."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return centred_linear_map(
            X, self.xbar_, lambda Xc: Xc @ self.scalings_, what="the projection"
        )

    def _joint_log_likelihood(self, X):
        """``log pi_c + z^T Sigma_z^{-1} nu_c - nu_c^T Sigma_z^{-1} nu_c / 2`` (up to a term
        shared by the classes), ``z`` the projection of ``x``.

        Linear in ``z``; each row is computed in units of its largest entry and shifted by
        its largest class score before scaling back, so rows of any finite size give finite
        or ``-inf`` scores (a posterior of exactly 0), never NaN.
        """
        s = np.maximum(np.max(np.abs(X), axis=1), np.max(np.abs(self.xbar_)))
        s = np.where(s > 0, s, 1.0)[:, None]
        lin = ((X / s - self.xbar_ / s) @ self.scalings_) @ self._score_weights
        lin -= lin.max(axis=1, keepdims=True)
        with np.errstate(over="ignore"):
            lin *= s
        return lin + self._score_offsets
