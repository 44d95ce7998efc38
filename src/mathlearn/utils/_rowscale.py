"""Row-scaled evaluation of linear maps, for inputs near the float64 overflow threshold."""

from __future__ import annotations

import numpy as np

# Below this size (float32 included: 1e30 < 3.4e38) a difference and the products of a
# linear map with moderate coefficients do not overflow, and no rescaling is needed.
_SAFE = 1e30

# Magnitudes whose squares (and sums of squares over many rows) stay comfortably inside
# float64: data within this range are used as given, so ordinary data take exactly the
# arithmetic they always did.
_SAFE_LOW, _SAFE_HIGH = 2.0**-240, 2.0**240


def pow2_scale(amax):
    """Powers of two ``2^-e`` with ``amax * 2^-e`` in ``[0.5, 1)``; 1 where ``amax`` is 0.

    Computed from the binary exponent (``frexp``), so it neither overflows nor underflows
    for any finite ``amax``, and multiplying by it is exact.
    """
    _, e = np.frexp(np.asarray(amax, dtype=np.float64))
    return np.ldexp(1.0, -e)


def unit_of(X: np.ndarray) -> float:
    """A power of two ``c`` for fitting a scale-equivariant method to ``X / c``.

    1.0 when the largest magnitude of ``X`` lies in ``[2^-240, 2^240]`` (squares and their
    sums are then safely inside float64, and ordinary data keep their exact arithmetic);
    otherwise ``c`` with ``max |X| / c`` in ``[0.5, 1)`` (NaN entries, missing values,
    are skipped). Dividing by ``c`` is exact, so a
    method fitted to ``X / c`` and mapped back (lengths times ``c``, variances times
    ``c^2``) gives the answer for ``X`` itself.
    """
    X = np.asarray(X)
    # Two reductions without temporaries; only data with NaN (missing values) take the
    # masked pass, which skips them.
    amax = max(abs(float(np.max(X, initial=0.0))), abs(float(np.min(X, initial=0.0))))
    if np.isnan(amax):
        amax = float(np.max(np.abs(X), where=~np.isnan(X), initial=0.0))
    if amax == 0.0 or _SAFE_LOW <= amax <= _SAFE_HIGH:
        return 1.0
    return float(1.0 / pow2_scale(amax))


def check_log_density(logp: np.ndarray, X: np.ndarray, *, what: str = "the log-density"):
    """``logp`` if every entry is finite, else a ``ValueError`` naming the first bad row.

    A row ``~1e154`` standard deviations or more from the fitted model has a log-density
    below ``-1.8e308``, which no float64 holds; ``-inf`` would be a silent wrong answer.
    """
    logp = np.asarray(logp)
    bad = ~np.isfinite(logp)
    if np.any(bad):
        i = int(np.argwhere(bad)[0][0])  # the row, for 1-d and 2-d logp alike
        size = float(np.max(np.abs(X[i]))) if np.size(X[i]) else 0.0
        raise ValueError(
            f"{what} of row {i} of X (entries up to {size:.3g}) is below the float64 range "
            "(~-1.8e308): the row lies too far from the fitted model for its log-density to "
            "be a float."
        )
    return logp


def centred_linear_map(X: np.ndarray, mean: np.ndarray, f, *, what: str = "the result"):
    """``f(X - mean)`` for a map ``f`` that is linear in each row, safe near overflow.

    Rows of large entries are divided by ``s_i = max(max_j |x_ij|, max_j |mean_j|)`` before
    the subtraction and ``f``, and the result multiplied back by ``s_i``: exact by linearity, and
    neither ``x - mean`` nor the products inside ``f`` overflow for rows of size up to the
    float64 maximum. When the result itself is beyond the float64 range, a ``ValueError``
    says so instead of returning ``inf`` or NaN.
    """
    X = np.asarray(X)
    mean = np.asarray(mean, dtype=X.dtype)
    big = max(np.max(np.abs(X)) if X.size else 0, np.max(np.abs(mean)) if mean.size else 0)
    # Overflow is detected below, from the result.
    with np.errstate(over="ignore", invalid="ignore"):
        if big <= _SAFE:
            Z = f(X - mean)
            s = np.full((X.shape[0], 1), big)
        else:
            s = np.max(np.abs(X), axis=1) if X.shape[1] else np.zeros(X.shape[0], X.dtype)
            s = np.maximum(s, np.max(np.abs(mean)) if mean.size else 0)
            s = np.where(s > 0, s, 1).astype(X.dtype, copy=False)[:, None]
            Z = f(X / s - mean / s) * s
    if not np.all(np.isfinite(Z)):
        rows = np.flatnonzero(~np.all(np.isfinite(Z), axis=1))
        raise ValueError(
            f"{what} of row {rows[0]} of X (entries up to {float(s[rows[0], 0]):.3g}) exceeds "
            f"the {np.dtype(Z.dtype).name} range."
        )
    return Z


class InUnits:
    """A fitted attribute kept in the units of a fit to ``X / unit``, read in the data's.

    Estimators that fit data of extreme magnitude in units of a power of two ``unit`` (see
    :func:`unit_of`, stored as ``self._unit``) declare their scale-carrying attributes as
    ``explained_variance_ = InUnits(2)``: assignment stores the value in the fit's units,
    and reading returns it times ``unit ** power``. A value that is not a float64 in the
    data's units (a variance of 1e600) raises a ``ValueError`` saying so, rather than
    reading as ``inf`` or 0; the estimator's own computations use :meth:`fitted`, which
    never over- or underflows.
    """

    def __init__(self, power: int):
        self.power = power

    def __set_name__(self, owner, name):
        self.name = name
        self.store = f"_{name}in_fit_units"

    def fitted(self, obj):
        try:
            return obj.__dict__[self.store]
        except KeyError:
            raise AttributeError(
                f"'{type(obj).__name__}' object has no attribute '{self.name}'"
            ) from None

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        value = self.fitted(obj)
        unit = getattr(obj, "_unit", 1.0)
        if unit == 1.0:
            return value
        mapped = value
        with np.errstate(over="ignore", under="ignore"):
            for _ in range(abs(self.power)):
                mapped = mapped * unit if self.power > 0 else mapped / unit
        tiny = np.finfo(np.float64).tiny
        if not np.all(np.isfinite(mapped)) or np.any(
            (np.abs(mapped) < tiny) & (np.asarray(value) != 0)
        ):
            raise ValueError(
                f"{self.name} of data of magnitude ~{unit:.1e} is outside the float64 range "
                f"(it scales as the data to the power {self.power}); rescale X to read it. "
                f"The rest of the fit is computed in units of {unit:.1e} and holds."
            )
        return type(value)(mapped) if np.isscalar(value) else mapped

    def __set__(self, obj, value):
        obj.__dict__[self.store] = value


def gaussian_scores(X, means, sq_mahalanobis, const):
    """Gaussian log joints ``const_k - ½ q_ik`` with ``q_ik`` the squared Mahalanobis distance.

    ``sq_mahalanobis(k, D)`` returns ``q`` for the deviations ``D`` (rows) from class ``k``;
    it is homogeneous of degree 2 in ``D``. Rows of entries beyond ``1e30`` are divided by a
    power of two ``s_i`` first (exact) and ``q = s_i² q'``, so no deviation overflows.
    Returns ``(jll, rel)``: ``jll`` the log joints (``-inf`` where ``q`` is beyond the float64
    range), and ``rel``, equal to ``jll`` up to a constant per row, always finite: where
    ``jll`` is not, ``rel_ik = const_k - ½ s_i² (q'_ik - min_m q'_im)``. The class nearest in
    Mahalanobis distance keeps a finite score, and the posterior takes its limit (one-hot on
    the nearest classes) as the others' gaps exceed the float64 range.
    """
    X = np.asarray(X, dtype=np.float64)
    means = np.asarray(means, dtype=np.float64)
    amax = np.max(np.abs(X), axis=1) if X.shape[1] else np.zeros(X.shape[0])
    amax = np.maximum(amax, np.max(np.abs(means)) if means.size else 0.0)
    s = np.where(amax > _SAFE, 1.0 / pow2_scale(amax), 1.0)
    Xs, K = X / s[:, None], means.shape[0]
    Q = np.empty((X.shape[0], K))
    with np.errstate(over="ignore", invalid="ignore"):
        for k in range(K):
            Q[:, k] = sq_mahalanobis(k, Xs - means[k] / s[:, None])
    if not np.all(np.isfinite(Q)):
        i = int(np.flatnonzero(~np.all(np.isfinite(Q), axis=1))[0])
        raise ValueError(
            f"the squared Mahalanobis distance of row {i} of X to the fitted class means "
            "exceeds the float64 range (a fitted variance is tiny next to the row's size)."
        )
    with np.errstate(over="ignore", invalid="ignore"):
        jll = const - 0.5 * ((Q * s[:, None]) * s[:, None])
        rel = jll.copy()
        live = np.isfinite(const)  # classes with a score at all (a class never seen: -inf)
        bad = ~np.all(np.isfinite(jll[:, live]), axis=1)
        if np.any(bad) and np.any(live):
            qmin = Q[bad][:, live].min(axis=1, keepdims=True)
            D = np.maximum(Q[bad] - qmin, 0.0)
            sb = s[bad][:, None]
            T = np.where(D == 0, 0.0, (D * sb) * sb)
            rel[bad] = const - 0.5 * T
    return jll, rel
