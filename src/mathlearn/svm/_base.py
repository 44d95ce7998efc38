"""What the kernel SVMs share: the kernel, the fitted support set, decision values."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ..base import BaseEstimator, check_is_fitted
from ..exceptions import ConvergenceWarning
from ..kernels import Kernel, get_kernel
from ..kernels._get_kernel import build_kernel
from ..utils._param_validation import Interval, StrOptions
from ..utils.extmath import squared_distances
from ..utils.validation import all_finite, check_symmetric_psd, validate_data
from ._smo import KernelSpec


def check_finite_products(X, what: str, column: float | None = None) -> None:
    """Refuse data whose inner products ``x^T x`` overflow float64 (a clear error, not inf),
    with ``column`` appended to every row where given (the constant column of the linear
    SVM's intercept, which its primal solver does not form).

    Linear, polynomial and sigmoid kernels, the linear SVM and the perceptron are not
    invariant to the scale of the features (their ``C``, ``coef0`` and margins are in the
    data's units), so data whose squared norms leave float64 cannot be fitted by rescaling.
    """
    extra = 0.0 if column is None else column * column  # (inf, not an error, on overflow)
    with np.errstate(over="ignore", invalid="ignore"):
        sq = np.einsum("ij,ij->i", X, X) + extra
    if not np.all(np.isfinite(sq)):
        largest = max(float(np.max(np.abs(X))), 0.0 if column is None else abs(column))
        raise ValueError(
            f"{what}: the squared norms of the samples overflow float64 (largest |x| = "
            f"{largest:.3g}); rescale the features."
        )


def _gamma_value(gamma, X) -> float:
    """``gamma="scale"``: ``1 / (D var(X))``; ``"auto"``: ``1 / D``; a number as it is."""
    if gamma == "scale":
        with np.errstate(over="ignore", invalid="ignore"):
            var = float(X.var()) if X.size else 0.0
        if not np.isfinite(var):
            raise ValueError(
                "gamma='scale' needs the variance of X, which overflows float64 on these data "
                f"(largest |x| = {np.max(np.abs(X)):.3g}); rescale the features."
            )
        return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    if gamma == "auto":
        return 1.0 / X.shape[1]
    return float(gamma)


# The largest RBF Gram matrix evaluated whole (see _BaseKernelSVM): beyond a few MB the
# SMO steps' reads of it leave the processor's caches, and on a loaded machine the matrix
# (72 MB at N = 3 000) took 1.2-2x the time of the column route.
_WHOLE_GRAM_MAX_BYTES = 16 * 2**20


class _BaseKernelSVM(BaseEstimator):
    """Kernel handling and the support-set bookkeeping of SVC, NuSVC, SVR and NuSVR.

    The decision function of a fitted binary problem is ``f(x) = sum_s c_s k(x_s, x) + b``
    over the support vectors ``x_s`` with dual coefficients ``c_s`` (``y_s alpha_s`` for
    classification, ``alpha_s - alpha*_s`` for regression) and intercept ``b = -rho``.
    """

    _parameter_constraints = {
        "kernel": [
            StrOptions({"linear", "poly", "rbf", "sigmoid", "precomputed"}),
            callable,
            Kernel,
        ],
        "degree": [Interval(Integral, 0, None, closed="left")],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "shrinking": ["boolean"],
        "cache_size": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, -1, None, closed="left")],
    }

    # From this many features on, an RBF Gram matrix that fits in the kernel cache is
    # evaluated whole, by one matrix product, before the SMO iterations: a kernel column then
    # costs the solver a copy instead of N dot products of length D. The solver touches
    # most columns (every support vector's, and more), and the product runs several times
    # faster per entry than the solver's dot products; with few features the N^2
    # exponentials dominate both routes, and evaluating only the columns asked for wins
    # where many are never asked for. Measured for C-SVC and epsilon-SVR at N = 1 000: the
    # whole matrix is 1.5-2x slower at D = 50, even at D = 100, 1.5-3.5x faster from
    # D = 300 (2.5x at 200 x 2 000). NuSVC overrides it.
    _whole_gram_min_features = 128

    def _kernel_function(self, X):
        """``(k(A, B), diag(A))`` for the estimator's kernel on training data ``X``."""
        kernel = self.kernel
        if kernel == "precomputed":
            return None, None
        if isinstance(kernel, str):
            gamma = _gamma_value(self.gamma, X)
            obj = build_kernel(kernel, gamma, self.degree, self.coef0, None, X.shape[1])
            self._gamma = gamma
            return obj, obj.diag
        if isinstance(kernel, Kernel):
            obj = get_kernel(kernel)
            return obj, obj.diag

        def callable_kernel(A, B):
            K = np.asarray(kernel(A, B), dtype=float)
            if K.shape != (A.shape[0], B.shape[0]):
                raise ValueError(
                    f"the kernel callable returned shape {K.shape}; expected "
                    f"{(A.shape[0], B.shape[0])}."
                )
            if not all_finite(K):
                raise ValueError("the kernel callable returned NaN or infinity.")
            return K

        return callable_kernel, lambda A: np.array(
            [callable_kernel(a[None], a[None])[0, 0] for a in A]
        )

    def _validate_train(self, X, y, **kw):
        if self.kernel == "precomputed":
            X, y = validate_data(self, X, y, dtype=np.float64, **kw)
            if X.shape[0] != X.shape[1]:
                raise ValueError(
                    f"a precomputed kernel must be square (n_samples, n_samples); got {X.shape}."
                )
            X = check_symmetric_psd(X, "the precomputed kernel matrix", strict=False, rtol=1e-8)
            return X, y
        return validate_data(self, X, y, dtype=np.float64, **kw)

    def _training_gram(self, X):
        """The training Gram matrix as a :class:`_Gram` (entries on demand), and ``diag K``."""
        if self.kernel == "precomputed":
            gram = _Gram(lambda rows, cols: X[np.ix_(rows, cols)], KernelSpec("precomputed", X))
            return gram, np.diag(X).copy()
        if self.kernel == "rbf":
            return self._rbf_gram(X), np.ones(X.shape[0])
        k, diag = self._kernel_function(X)
        spec = None
        if self.kernel in ("linear", "poly", "sigmoid") and self.degree <= 2**30:
            # Built-in kernels the compiled solver evaluates itself (the same formulas).
            spec = KernelSpec(self.kernel, X, None, self._gamma, self.coef0, self.degree)
        self._kernel_obj = k
        with np.errstate(over="ignore", invalid="ignore"):
            kdiag = np.asarray(diag(X), dtype=float)
        if not np.all(np.isfinite(kdiag)):
            raise ValueError(
                f"the kernel values k(x, x) overflow float64 on these data (largest |x| = "
                f"{np.max(np.abs(X)):.3g}); rescale the features, or use kernel='rbf', which "
                "is evaluated in rescaled units."
            )
        return _Gram(lambda rows, cols: k(X[rows], X[cols]), spec), kdiag

    def _rbf_gram(self, X):
        """The RBF Gram matrix in units where the data are of order one.

        ``exp(-gamma ||x - y||^2)`` is unchanged by ``x -> s x`` with ``gamma -> gamma /
        s^2``; with ``s`` the power of two that brings ``max |x|`` to about 1 (exact) where
        ``max |x|`` is beyond ``2^{+-240}``, data of any magnitude (1e-300 to 1e300) are
        handled without overflow. ``gamma="scale"`` is itself invariant; a fixed ``gamma`` is
        carried over as ``gamma / s^2``.
        """
        amax = max(float(X.max()), -float(X.min())) if X.size else 1.0
        _, e = np.frexp(amax)
        # data of moderate size are used in their own units (squares and their sums stay far
        # inside float64), which lets _RBFGram use them without a copy
        s = 1.0 if 2.0**-240 <= amax <= 2.0**240 else float(np.ldexp(1.0, -int(e)))
        if self.gamma == "scale":
            gram = _RBFGram(X, 1.0, s, amax)
            gamma_s = gram.gamma = _scale_gamma(gram)
        else:
            with np.errstate(over="ignore", under="ignore"):
                gamma_s = _gamma_value(self.gamma, X) / s / s
            if not (0 < gamma_s < np.inf):
                raise ValueError(
                    f"gamma={self.gamma!r} times the squared distances of these data (of "
                    f"order {amax:.3g}^2) is not representable in float64: the "
                    "kernel would be constant or the identity; rescale the features or use "
                    "gamma='scale'."
                )
            gram = _RBFGram(X, gamma_s, s, amax)
        self._gamma = _gamma_value(self.gamma, X) if self.gamma != "scale" else gamma_s * s * s
        # (rows used uncentred: a zero shift, kept as a number rather than D zeros)
        self._rbf_units = (s, gram.shift if gram.col_means is None else 0.0)
        self._kernel_obj = get_kernel("rbf", gamma=gamma_s)
        n, d = X.shape
        budget = min(self.cache_size * 2**20, _WHOLE_GRAM_MAX_BYTES)
        if d >= self._whole_gram_min_features and n * n * 8 <= budget:
            gram.materialise()
        return gram

    def _kernel_to_support(self, X):
        """``K(X, support_vectors_)`` at prediction time, shape (n_samples, n_SV)."""
        check_is_fitted(self)
        if self.kernel == "precomputed":
            X = validate_data(self, X, dtype=np.float64, reset=False)
            return X[:, self.support_]
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.kernel == "rbf":
            # In the training units: scaled by s and centred (accurate far from the origin).
            s, shift = self._rbf_units
            with np.errstate(over="ignore"):
                return self._kernel_obj(X * s - shift, self.support_vectors_ * s - shift)
        return self._kernel_obj(X, self.support_vectors_)

    def _warn_not_converged(self, result):
        if not result.converged:
            import warnings

            warnings.warn(
                f"the SMO solver stopped after max_iter={self.max_iter} iterations with a KKT "
                f"gap of {result.gap:.3g} > tol={self.tol}; the solution is approximate. "
                "Increase max_iter, or scale the data.",
                ConvergenceWarning,
                stacklevel=3,
            )


def _scale_gamma(gram) -> float:
    """``gamma="scale"``, ``1 / (D var)`` over every entry of the data of ``gram``, from its
    centred rows: the variance of all entries is the mean squared deviation from the column
    means (the row norms of the centred copy, already formed) plus the variance of the
    column means (the law of total variance), so no pass over the data is needed."""
    n, d = gram.Xc.shape
    if n == 0 or d == 0:
        return 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        var = float(gram.norms.sum()) / (n * d) + float(gram.shift.var())
        if gram.col_means is not None:
            # rows used uncentred (column means c, shift 0): mean(x^2) - (mean of all x)^2
            var = float(gram.norms.sum()) / (n * d) - float(gram.col_means.mean()) ** 2
    if not np.isfinite(var):
        raise ValueError(
            "gamma='scale' needs the variance of X, which overflows float64 on these data; "
            "rescale the features."
        )
    return 1.0 / (d * var) if var > 0 else 1.0


class _Gram:
    """Entries of a Gram matrix on demand: blocks, and columns over a fixed set of rows.

    ``c_spec`` describes the kernel to the compiled solver when it is a built-in one (None:
    the solver calls ``block``).
    """

    def __init__(self, block, c_spec: KernelSpec | None = None):
        if block is not None:  # (a subclass with a block method passes None: no cycle)
            self.block = block
        self.c_spec = c_spec

    def columns_over(self, rows):
        """A function ``point -> K[rows, point]`` (the solver's active rows change rarely)."""
        return lambda point: self.block(rows, np.array([point]))[:, 0]

    def restricted(self, members):
        """The Gram matrix of the points ``members``."""
        spec = None if self.c_spec is None else self.c_spec.restricted(members)
        return _Gram(lambda rows, cols: self.block(members[rows], members[cols]), spec)


class _RBFGram(_Gram):
    """The RBF Gram matrix ``exp(-gamma ||x_r - x_c||^2)``, a column at a time.

    The same kernel as ``mathlearn.kernels.RBF`` (whose ``__call__`` the predictions use),
    evaluated the way the solver consumes it: the data are centred once (the kernel is
    shift-invariant, and centring keeps ``||x||^2 + ||y||^2 - 2 x^T y`` accurate far from the
    origin), the rows of the active variables and their norms are gathered once per active
    set, and a column then costs one matrix-vector product. Going through ``__call__`` for
    every column would re-centre and re-validate all ``N`` rows at each SMO step.
    """

    def __init__(self, X, gamma, scale=1.0, amax=None):
        """The Gram matrix of ``X * scale`` (``scale`` a power of two, ``amax = max |X|``)."""
        n = X.shape[0]
        self.col_means = None  # the column means of the rows used, where not centred
        m = norms = None
        if scale == 1.0 and X.size and X.flags.c_contiguous and amax is not None:
            # The expansion |x|^2 + |y|^2 - 2 x^T y rounds with an error of a few eps
            # (|x|^2 + |y|^2): rows whose mean is at most their spread (|m|^2 <= the mean
            # squared deviation, i.e. 2 |m|^2 <= the mean |x|^2) lose at most a factor 2 in
            # that bound uncentred, and are used as they are, without a copy.
            m = X.mean(axis=0)
            norms = np.einsum("ij,ij->i", X, X)
        if norms is not None and 2.0 * float(m @ m) <= float(norms.mean()):
            self.Xc, self.norms, self.col_means = X, norms, m
            self.shift = np.zeros(X.shape[1])
        elif amax is not None and amax * n < 2.0**1000:
            # (X - m) s = X s - m s exactly (s a power of two), and m s is the mean of X s:
            # the centred, scaled copy in one allocation, the same numbers as scaling first
            m = X.mean(axis=0) if m is None else m
            self.Xc = np.subtract(X, m)
            if scale != 1.0:
                self.Xc *= scale
            self.shift = m * scale
        else:  # column sums of X itself could overflow
            Xs = X * scale
            self.shift = Xs.mean(axis=0)
            self.Xc = Xs - self.shift
        if self.col_means is None:
            self.norms = np.einsum("ij,ij->i", self.Xc, self.Xc)
        self._gamma = gamma
        # block is a method here: storing the bound method would make a reference cycle, and
        # the copy of X would outlive the fit until the cyclic collector ran
        super().__init__(None, KernelSpec("rbf", self.Xc, self.norms, gamma))

    @property
    def gamma(self):
        return self._gamma

    @gamma.setter
    def gamma(self, value):
        self._gamma = value
        self.c_spec = KernelSpec("rbf", self.Xc, self.norms, value)

    def materialise(self):
        """Evaluate the whole Gram matrix at once (one BLAS product) for the solver."""
        D = squared_distances(self.Xc, self.Xc, X_norm_sq=self.norms, Y_norm_sq=self.norms)
        D *= -self.gamma
        self.c_spec = KernelSpec("precomputed", np.exp(D, out=D))

    def block(self, rows, cols):
        D = squared_distances(
            self.Xc[rows], self.Xc[cols], X_norm_sq=self.norms[rows], Y_norm_sq=self.norms[cols]
        )
        D *= -self.gamma
        return np.exp(D, out=D)

    def columns_over(self, rows):
        Xr = np.ascontiguousarray(self.Xc[rows])
        nr = self.norms[rows]
        scale = -self.gamma

        def column(point):
            col = Xr @ self.Xc[point]
            col *= -2.0
            col += nr
            col += self.norms[point]
            np.maximum(col, 0.0, out=col)
            col *= scale
            return np.exp(col, out=col)

        return column

    def restricted(self, members):
        sub = _RBFGram.__new__(_RBFGram)
        sub.Xc, sub.norms, sub._gamma = self.Xc[members], self.norms[members], self.gamma
        if self.c_spec is not None and self.c_spec.kind == "precomputed":
            spec = self.c_spec.restricted(members)  # the evaluated matrix's block
        else:
            spec = KernelSpec("rbf", sub.Xc, sub.norms, sub.gamma)
        _Gram.__init__(sub, None, spec)
        return sub


class _SignedGram(_Gram):
    """``y_r y_c K_rc``: the Gram matrix with the labels folded in.

    The offset-free machines have a box (and possibly ``sum a = nu``) but no ``y^T a``
    equality, so the solver's equality signs are all +1 and the labels go into ``Q``.
    """

    def __init__(self, gram, y):
        self._inner, self._y = gram, y
        super().__init__(lambda rows, cols: y[rows, None] * y[None, cols] * gram.block(rows, cols))

    def columns_over(self, rows):
        inner = self._inner.columns_over(rows)
        y_rows = self._y[rows]
        return lambda point: (self._y[point] * y_rows) * inner(point)
