"""Stationary kernels ``k(x, y) = phi(q)`` of the scaled squared distance ``q``.

``q = sum_d (x_d - y_d)^2 / l_d^2`` (one length scale ``l``, or one per feature: automatic
relevance determination, ARD). The squared distances come from one matrix product
(:func:`mathlearn.utils.extmath.squared_distances`) on inputs that are first centred by a
common shift and scaled by a power of two, so data far from the origin and extreme length
scales (``1e-300``, ``1e300``) neither cancel catastrophically nor overflow; no ``(N, M, D)``
temporary is formed (the ARD gradient's ``(N, N, D)`` output is the only 3-D array).
Points of few features (see ``_direct_pays``) take direct differences ``(y_d - x_d) / l_d``
from a compiled loop instead (``mathlearn._ext._sqdist``): exact subtraction of near points
wherever they lie, and no passes over the result beyond the profile's.

The gradient with respect to ``log l_d`` is ``-2 phi'(q) q_d`` with
``q_d = (x_d - y_d)^2 / l_d^2``, so each kernel supplies ``phi`` and ``-2 phi'``.

Kernels: Oxford "Advanced Topics in Statistical Machine Learning" §3.3 (Gaussian RBF,
Matérn, rational quadratic; ARD in §9.3, eq. 9.11); Stuttgart "Introduction to Machine
Learning" §5 and §8 (squared exponential, gamma-exponential).
"""

from __future__ import annotations

import ctypes
import math

import numpy as np
from scipy.special import gammaln, kve

from .. import _ext
from ..utils._columns import column_means
from ..utils.extmath import expanded_squared_distances, squared_distances
from ._base import Kernel, _check_real, _grad_buffer, _Spec

__all__ = ["RBF", "GammaExponential", "Matern", "RationalQuadratic"]


def _centre_and_scale(X, Y, length_scale):
    """Centred, scaled copies ``Zx, Zy``, a factor ``f2``, ``risky`` and ``max |Z|``.

    ``q = f2 * ||zx - zy||^2``. First ``Z = (X - shift) / (t m)`` with ``t = l / min(l) >= 1``
    and ``m`` a power of two bounding ``|Z|`` by 1, so that ``f2 = (m / min(l))^2``; when
    ``q <= 4 D f2`` cannot overflow, ``sqrt(f2)`` is folded into ``Z`` (``f2 = 1``).
    Otherwise (``risky``, a length scale ~1e-150 of the data's spread) the caller guards
    ``0 * inf``.
    """
    ls = np.asarray(length_scale, dtype=float)
    n = X.shape[0] + (0 if Y is None else Y.shape[0])
    # the mean of all rows (any common point would do: distances do not depend on it);
    # column means in folded runs, as NumPy's reduction over rows is slow for few columns
    if X.shape[0] == 0 or X.shape[1] == 0:
        shift = np.zeros(X.shape[1])
    else:
        shift = column_means(X)
    if Y is not None and Y.shape[0]:
        shift = (X.shape[0] * shift + Y.shape[0] * column_means(Y)) / n
    a = float(ls.min())
    Zx = X - shift
    Zy = None if Y is None else Y - shift
    if ls.ndim:
        if float(ls.max()) / a < math.inf:  # (Python floats: inf on overflow, no warning)
            t = ls / a
        else:
            with np.errstate(over="ignore"):
                t = ls / a
        Zx /= t
        if Zy is not None:
            Zy /= t
    big = max(float(Zx.max(initial=0.0)), -float(Zx.min(initial=0.0)))  # max |Zx|
    if Zy is not None:
        big = max(big, float(Zy.max(initial=0.0)), -float(Zy.min(initial=0.0)))
    m = 1.0 if big == 0.0 else math.ldexp(1.0, math.frexp(big)[1])
    f = m / a  # Python floats: inf on overflow
    f2 = f * f
    risky = not (4.0 * X.shape[1] * f2 < 1e300)
    scale = 1.0 / m
    if not risky:
        scale *= f
        f2 = 1.0
    Zx *= scale
    if Zy is not None:
        Zy *= scale
    return Zx, Zy, f2, risky, big * scale


# Direct differences (``_sqdist.c``) for results of at most this many entries (512 kB), when
# their n m d multiply-adds (halved for X against itself) are at most
# _DIRECT_PER_ENTRY n m + _DIRECT_FIXED: the expansion costs a dozen NumPy calls (norms,
# the product, scaling, clipping, the near-pair scan; ~10 us) and about 1.5 ns an entry in
# passes over the result, the direct loop about 0.2 ns a multiply-add in its SSE2 build. On
# one core that build measured 0.15-0.65 of the expansion's time for d <= 10 and n <= 800,
# 0.7-0.95 at the rule's edge (d = 30, n = 50-100; d = 100, n = 20), and above 1 past it;
# the AVX2 build (where the processor has it) takes 0.65-0.75 of the SSE2 build's time.
_DIRECT_MAX_ENTRIES = 1 << 16
_DIRECT_PER_ENTRY = 6
_DIRECT_FIXED = 40_000
# Larger results: direct differences (both triangles, by blocks of rows) up to this many
# features, X with itself / against Y. The expansion's passes cost about 2.7 ns an entry
# (X with itself: the symmetric product's diagonal and mirror) or 1 ns (against Y), the
# direct loop about 0.12-0.16 ns a multiply-add (AVX2); measured on one core at n = 300 to
# 10 000: 0.3-0.6 of the expansion's time at d <= 10, 0.8 at d = 20 (itself), 1.0 at d = 20
# (against Y), above 1 at d = 40. The limits leave room for the SSE2 build.
_DIRECT_LARGE_D_SAME = 12
_DIRECT_LARGE_D_CROSS = 6
# Entries per block of rows of a large direct result (512 kB): the profile is applied to
# each block while it is in cache.
_DIRECT_BLOCK = 1 << 16


def _compiled_direct():
    """The compiled direct differences (``_sqdist.c``, ``sqdist_direct``), typed, or None."""
    lib = _ext.load("_sqdist")
    if lib is None:
        return None
    fn = lib.sqdist_direct
    if fn.argtypes is None:
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_int64] * 3 + [ctypes.c_void_p, ctypes.c_int64]
        fn.argtypes += [ctypes.c_void_p] * 2 + [ctypes.c_int, ctypes.c_void_p]
    return fn


def _direct_pays(n: int, m: int, d: int, same: bool) -> bool:
    """Whether direct differences are taken for an n x m result of d features."""
    if n * m > _DIRECT_MAX_ENTRIES:
        return d <= (_DIRECT_LARGE_D_SAME if same else _DIRECT_LARGE_D_CROSS)
    work = n * m * d // (2 if same else 1)
    return work <= _DIRECT_PER_ENTRY * n * m + _DIRECT_FIXED


def _direct_sqdist(fn, Zx, Zy, w=None, post=None):
    """``sum_c ((zy_jc - zx_ic) w_c)^2`` (``w`` None: all 1) by direct differences (see
    ``_sqdist.c``): no cancellation, an exact 0 diagonal and exact symmetry for ``Zy`` None.
    Small results in one call (X with itself: one triangle and its mirror); larger ones by
    blocks of rows (both triangles: the same numbers), ``post(block)`` (an in-place
    elementwise map, such as a kernel's profile) applied to each while it is in cache.
    Returns the matrix and whether an entry overflowed to infinity."""
    n, d = Zx.shape
    same = Zy is None
    m = n if same else Zy.shape[0]
    # the points by features (the transposes, contiguous), alive through the calls
    Xt = np.ascontiguousarray(Zx.T)
    Yt = Xt if same else np.ascontiguousarray(Zy.T)
    x = Xt.ctypes.data
    y = x if same else Yt.ctypes.data
    wp = None if w is None else w.ctypes.data
    out = np.empty((n, m))
    base = out.ctypes.data
    if n * m <= _DIRECT_MAX_ENTRIES:
        overflow = fn(n, m, d, x, n, y, wp, int(same), base)
        if post is not None:
            post(out)
        return out, bool(overflow)
    overflow = 0
    step = max(1, _DIRECT_BLOCK // m)
    for s in range(0, n, step):
        rows = min(step, n - s)
        overflow |= fn(rows, m, d, x + 8 * s, n, y, wp, 0, base + 8 * s * m)
        if post is not None:
            post(out[s : s + rows])
    return out, bool(overflow)


# The smallest normal float: a reciprocal length scale below it has lost precision.
_TINY = float(np.finfo(float).tiny)


def _scaled_direct_sqdist(X, Y, length_scale, post=None):
    """``q_ij = sum_c ((y_jc - x_ic) / l_c)^2`` by direct differences of the points as given
    (``w_c = 1 / l_c`` after each subtraction), or None where the compiled helper is missing
    or a ``1 / l_c`` is not a normal number. The differences need no centring (points near
    each other subtract exactly, wherever they lie) and the scaling no power-of-two factor:
    a sum beyond the largest float is infinity (the kernel's limit at infinite distance) and
    one below the smallest is 0 or subnormal (its limit at 0). Returns ``(q, overflow)``,
    ``q`` mapped by ``post`` where given (see :func:`_direct_sqdist`)."""
    fn = _compiled_direct()
    if fn is None:
        return None
    ls = np.asarray(length_scale, dtype=float)
    d = X.shape[1]
    if ls.ndim:
        lo, hi = float(ls.min()), float(ls.max())
    else:
        lo = hi = float(ls)
    # Python floats: inf on overflow, no warning
    if not (1.0 / hi >= _TINY and 1.0 / lo < math.inf):
        return None
    w = np.full(d, 1.0 / lo) if not ls.ndim else np.divide(1.0, ls)
    return _direct_sqdist(fn, X, Y, w, post)


def _sqdist(Zx, Zy, accurate, zmax=None, post=None):
    """``||zx_i - zy_j||^2`` by one matrix product, optionally with near pairs redone.

    ``Zx, Zy`` come from :func:`_centre_and_scale`, centred about a common point. Where
    their largest entry ``zmax`` is of moderate size (``2^-400 .. 2^400``: no square under-
    or overflows) they need none of the rescaling of :func:`squared_distances`, only its
    expansion with near pairs recomputed (``expanded_squared_distances``).

    The expanded form errs by about ``eps (||zx||^2 + ||zy||^2)``. Kernels with a
    ``sqrt(q)``-like term at 0 (Matérn with ``nu <= 1``, gamma-exponential with
    ``gamma < 2``) would turn that into a ``sqrt(eps)`` error, so for them (``accurate``) the
    pairs with ``q`` below ``1e-4`` of that scale are recomputed from the differences.

    ``post`` (an in-place elementwise map) is applied to each block of rows as it is
    finished, where the expansion is taken and ``accurate`` is false; the caller learns
    which from the second value returned (True: applied).

    Points of few features (:func:`_direct_pays`) take direct differences from the compiled
    helper instead, accurate for every pair (nothing to redo).
    """
    moderate = zmax is not None and 2.0**-400 <= zmax <= 2.0**400
    n, m, d = Zx.shape[0], Zx.shape[0] if Zy is None else Zy.shape[0], Zx.shape[1]
    if moderate and _direct_pays(n, m, d, Zy is None):
        fn = _compiled_direct()
        if fn is not None:
            return _direct_sqdist(fn, Zx, Zy)[0], False
    if moderate:
        if post is not None and not accurate:
            return expanded_squared_distances(Zx, Zy, post), True
        q = expanded_squared_distances(Zx, Zy)
    else:
        q = squared_distances(Zx, Zy)
    if not accurate:
        return q, False
    same = Zy is None
    Zy = Zx if same else Zy
    scale = 2.0 * max(
        float(np.einsum("ij,ij->i", Zx, Zx).max(initial=0.0)),
        float(np.einsum("ij,ij->i", Zy, Zy).max(initial=0.0)),
    )
    rows, cols = np.nonzero(q < 1e-4 * scale)
    if same:
        keep = rows != cols  # the diagonal is exactly zero already
        rows, cols = rows[keep], cols[keep]
    if rows.size:
        diff = Zx[rows] - Zy[cols]
        q[rows, cols] = np.einsum("ij,ij->i", diff, diff)
    return q, False


# Entries of the N x M result from which a kernel without a gradient applies its profile
# block by block (32 MiB of float64).
_FUSE_MIN_ENTRIES = 1 << 22


class _Stationary(Kernel):
    """Base of ``phi(q)`` kernels with a scalar or ARD ``length_scale``.

    Subclasses give ``_phi(q, cache)`` (``cache`` is ``None`` without a gradient, and ``q``
    may then be overwritten; otherwise a dict for values the gradient reuses),
    ``_minus_2_dphi(q, K, cache)`` and ``_extra_gradient(name, q, K, cache)``.
    """

    def is_stationary(self) -> bool:
        return True

    @property
    def anisotropic(self) -> bool:
        """Whether ``length_scale`` is a vector (one scale per feature, ARD)."""
        return np.ndim(self.length_scale) > 0 and np.size(self.length_scale) > 1

    def _needs_accurate_near(self) -> bool:
        return False

    def _phi(self, q, cache):  # pragma: no cover - abstract
        raise NotImplementedError

    def _minus_2_dphi(self, q, K, cache):  # pragma: no cover - abstract
        raise NotImplementedError

    def _extra_gradient(self, name, q, K, cache):  # pragma: no cover - abstract
        """``dK / dlog name`` for a hyperparameter other than the length scale."""
        raise NotImplementedError

    def _profile_in_place(self, block: np.ndarray) -> None:
        """``block <- phi(block)`` (squared distances to kernel values), in place."""
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            out = self._phi(block, None)
        if out is not block:
            block[...] = out

    def _eval(self, X, Y, eval_gradient):
        m = X.shape[0] if Y is None else Y.shape[0]
        direct = None
        if _direct_pays(X.shape[0], m, X.shape[1], Y is None):
            # Few features: direct differences of the points as given (no centred, scaled
            # copies), with or without a gradient, so that K is the same either way; without
            # one, the profile is applied to each block of rows while it is in cache.
            if not eval_gradient:
                direct = _scaled_direct_sqdist(X, Y, self.length_scale, self._profile_in_place)
                if direct is not None:
                    K, overflow = direct
                    if overflow:  # phi at infinite distance: 0 (never inf * 0)
                        np.nan_to_num(K, copy=False, nan=0.0)
                    return K, None
            else:
                direct = _scaled_direct_sqdist(X, Y, self.length_scale)
        # The per-feature terms of the ARD gradient come from the centred, scaled copies.
        Zx, Zy, f2, risky, zmax = _centre_and_scale(X, Y, self.length_scale)
        if direct is not None:
            q, overflow = direct
            rescale, guard = False, overflow  # q is at its own scale: no factor f2
        else:
            # Without a gradient, the profile phi is applied to each block of distances while
            # it is in cache: no further passes over the N x M array (which pays once that
            # array is far larger than the cache; below, one pass of each is cheaper).
            fused = (
                self._profile_in_place
                if not eval_gradient and not risky and X.shape[0] * m >= _FUSE_MIN_ENTRIES
                else None
            )
            q, done = _sqdist(Zx, Zy, self._needs_accurate_near(), zmax, fused)
            if done:
                return q, None
            rescale, guard = risky, risky
        cache = {} if eval_gradient else None
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            if rescale:
                zero = q == 0.0
                q *= f2
                q[zero] = 0.0
            K = self._phi(q, cache)
            if guard:
                np.nan_to_num(K, copy=False, nan=0.0)
            if not eval_gradient:
                return K, None
            n = X.shape[0]
            G = _grad_buffer(self.n_dims, n)
            i = 0
            for spec in self._free_specs():
                if spec.name != "length_scale":
                    G[i] = self._extra_gradient(spec.name, q, K, cache)
                    i += 1
                    continue
                W = self._minus_2_dphi(q, K, cache)
                if self.anisotropic:
                    if f2 != 1.0:
                        W *= f2
                    for d in range(X.shape[1]):
                        g = G[i + d]
                        np.subtract.outer(Zx[:, d], Zx[:, d], out=g)
                        np.square(g, out=g)
                        g *= W
                    i += X.shape[1]
                else:
                    np.multiply(W, q, out=G[i])
                    i += 1
            if risky:
                np.nan_to_num(G, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
        return K, G

    def _diag(self, X):
        return np.ones(X.shape[0])


class RBF(_Stationary):
    """Gaussian (squared-exponential) kernel ``k(x, y) = exp(-||x - y||^2 / (2 l^2))``.

    Parameters
    ----------
    length_scale : float or array-like of shape (n_features,), default=1.0
        ``l > 0``; a vector gives one scale per feature (ARD,
        ``exp(-sum_d (x_d - y_d)^2 / (2 l_d^2))``). The notes' form
        ``exp(-||x - y||^2 / r^2)`` (Imperial "Mathematics for Inference and Machine
        Learning", corrected sign) is ``l = r / sqrt(2)``; scikit-learn's ``gamma`` is
        ``1 / (2 l^2)``; the ARD form ``exp(-sum_j (x_j - x'_j)^2 / eta_j^2)`` of Oxford
        "Advanced Topics in Statistical Machine Learning" eq. (9.11) has no 1/2, so
        ``l_j = eta_j / sqrt(2)``.
    length_scale_bounds : pair of floats, array of shape (n_features, 2) or "fixed"
        Bounds of ``l`` for hyperparameter fitting; default (1e-5, 1e5).

    See Also
    --------
    mathlearn.kernels.Matern
        Rougher sample paths.
    mathlearn.kernels.RationalQuadratic
        A scale mixture of RBFs.
    sklearn.gaussian_process.kernels.RBF
        scikit-learn's equivalent.

    Notes
    -----
    ``phi(q) = exp(-q / 2)``; ``dK / dlog l_d = K (x_d - y_d)^2 / l_d^2``. The limit of the
    Matérn kernel as ``nu -> inf`` and of the rational quadratic as ``alpha -> inf`` (Oxford
    "Advanced Topics in Statistical Machine Learning" §3.3).

    Cost of ``k(X, Y)`` with N and M points of D features: ``O(N M D)`` time (one BLAS
    product, or direct differences in a compiled loop where D is small) and ``O(N M)``
    memory; with the gradient, ``O(N^2 D)`` of both.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import RBF
    >>> float(RBF(1.0)(np.zeros((1, 2)), np.ones((1, 2)))[0, 0])  # exp(-1)
    0.36787944117144233
    >>> K, dK = RBF([1.0, 2.0])(np.eye(2), eval_gradient=True)
    >>> dK.shape
    (2, 2, 2)
    """

    _specs = (_Spec("length_scale", vector=True),)

    def __init__(self, length_scale=1.0, length_scale_bounds=(1e-5, 1e5)):
        self.length_scale = length_scale
        self.length_scale_bounds = length_scale_bounds

    @property
    def gamma(self) -> float:
        """``1 / (2 l^2)``, the factor in ``exp(-gamma ||x - y||^2)`` (scalar ``l`` only)."""
        ls = _check_real(self.length_scale, "length_scale", positive=True)
        with np.errstate(over="ignore", divide="ignore", under="ignore"):
            return float(0.5 / np.float64(ls) ** 2)

    def _phi(self, q, cache):
        K = np.multiply(q, -0.5, out=q if cache is None else None)
        return np.exp(K, out=K)

    def _minus_2_dphi(self, q, K, cache):
        return K.copy() if self.anisotropic else K


_MATERN_CLOSED = (0.5, 1.5, 2.5)


class Matern(_Stationary):
    """Matérn kernel with smoothness ``nu``.

    ``k(r) = 2^(1-nu) / Gamma(nu) (sqrt(2 nu) r)^nu K_nu(sqrt(2 nu) r)``, ``r = ||x - y|| / l``
    (or the ARD-scaled distance), ``K_nu`` the modified Bessel function of the second kind,
    and ``k = 1`` at ``r = 0``.

    Parameters
    ----------
    length_scale : float or array-like of shape (n_features,), default=1.0
        ``l > 0`` (the notes' ``gamma``).
    length_scale_bounds : pair of floats, array or "fixed", default=(1e-5, 1e5)
    nu : float, default=1.5
        ``nu > 0``, not a hyperparameter of ``theta``. ``0.5, 1.5, 2.5`` use closed forms:
        ``e^-r``, ``(1 + sqrt3 r) e^(-sqrt3 r)``, ``(1 + sqrt5 r + 5 r^2 / 3) e^(-sqrt5 r)``;
        ``inf`` is the RBF kernel; other values use the Bessel form (in log space through
        the scaled ``kve``, so large ``nu`` does not overflow ``Gamma(nu)``).

    See Also
    --------
    mathlearn.kernels.RBF
        The nu -> infinity limit.
    mathlearn.kernels.GammaExponential
        Another roughness family.
    sklearn.gaussian_process.kernels.Matern
        scikit-learn's equivalent.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §3.3 (Matérn family; for
    ``nu = s + 1/2`` the RKHS holds ``s + 1`` times differentiable functions). With
    ``z = sqrt(2 nu) r``, ``d/dz [z^nu K_nu(z)] = -z^nu K_(nu-1)(z)`` gives
    ``-2 phi'(q) = 2 nu c z^(nu-1) K_(nu-1)(z)``, ``c = 2^(1-nu) / Gamma(nu)``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import Matern
    >>> round(float(Matern(nu=1.5)(np.zeros((1, 1)), np.ones((1, 1)))[0, 0]), 6)
    0.483358
    """

    _specs = (_Spec("length_scale", vector=True),)

    def __init__(self, length_scale=1.0, length_scale_bounds=(1e-5, 1e5), nu: float = 1.5):
        self.length_scale = length_scale
        self.length_scale_bounds = length_scale_bounds
        self.nu = nu

    def _check(self):
        super()._check()
        nu = self.nu
        if isinstance(nu, bool) or not isinstance(nu, (int, float, np.floating, np.integer)):
            raise ValueError(f"nu must be a positive number; got {nu!r}.")
        if np.isnan(nu) or not nu > 0:
            raise ValueError(f"nu must be > 0 (or inf); got {nu}.")

    def _needs_accurate_near(self) -> bool:
        return float(self.nu) <= 1.0

    def _phi(self, q, cache):
        nu = float(self.nu)
        if nu == np.inf:
            K = np.multiply(q, -0.5, out=q if cache is None else None)
            return np.exp(K, out=K)
        if nu in _MATERN_CLOSED:
            # a = sqrt(2 nu q), E = exp(-a)
            a = np.multiply(q, 2.0 * nu, out=q if cache is None else None)
            np.sqrt(a, out=a)
            E = np.negative(a)
            np.exp(E, out=E)
            if cache is not None:
                cache["a"], cache["E"] = a, E
            if nu == 0.5:
                return E
            if nu == 1.5:
                K = a + 1.0
            else:
                K = a * a
                K *= 1.0 / 3.0
                K += a
                K += 1.0
            K *= E
            return K
        z = np.sqrt(q)
        z *= np.sqrt(2.0 * nu)
        pos = (z > 0) & (z < np.inf)
        zp = z[pos]
        K = np.ones_like(z)
        K[z == np.inf] = 0.0
        logc = (1.0 - nu) * np.log(2.0) - gammaln(nu)
        K[pos] = np.exp(logc + nu * np.log(zp) + np.log(kve(nu, zp)) - zp)
        if not np.all(np.isfinite(K[pos])):
            raise ValueError(
                f"the Matern kernel with nu={nu} overflowed the Bessel function K_nu at "
                "small distances; use nu=np.inf (the RBF kernel) for very smooth kernels."
            )
        return K

    def _minus_2_dphi(self, q, K, cache):
        nu = float(self.nu)
        if nu == np.inf:
            return K.copy() if self.anisotropic else K
        if nu in _MATERN_CLOSED:
            a, E = cache["a"], cache["E"]
            if nu == 0.5:
                # e^-r / r, set to 0 at r = 0 where it multiplies q_d = 0
                W = np.zeros_like(a)
                np.divide(E, a, out=W, where=a > 0)
                return W
            if nu == 1.5:
                return np.multiply(E, 3.0, out=E)
            W = a + 1.0
            W *= E
            W *= 5.0 / 3.0
            return W
        r = np.sqrt(q)
        pos = r > 0
        z = np.sqrt(2.0 * nu) * r
        pos &= z < np.inf
        W = np.zeros_like(z)
        zp = z[pos]
        logc = np.log(2.0 * nu) + (1.0 - nu) * np.log(2.0) - gammaln(nu)
        W[pos] = np.exp(logc + (nu - 1.0) * np.log(zp) + np.log(kve(nu - 1.0, zp)) - zp)
        return W


class RationalQuadratic(_Stationary):
    """Rational quadratic kernel ``k(x, y) = (1 + ||x - y||^2 / (2 alpha l^2))^(-alpha)``.

    A scale mixture of RBF kernels; tends to the RBF kernel as ``alpha -> inf``.

    Parameters
    ----------
    length_scale : float or array-like of shape (n_features,), default=1.0
    alpha : float, default=1.0
        ``alpha > 0``.
    length_scale_bounds, alpha_bounds : pair of floats or "fixed", default=(1e-5, 1e5)

    See Also
    --------
    mathlearn.kernels.RBF
        The alpha -> infinity limit.
    sklearn.gaussian_process.kernels.RationalQuadratic
        scikit-learn's equivalent.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning" §3.3: the Gamma(shape
    ``alpha``, rate ``beta``) mixture of ``exp(-theta ||x - y||^2)`` is
    ``(1 + ||x - y||^2 / beta)^(-alpha)``; here ``beta = 2 alpha l^2``. With
    ``b = 1 + q / (2 alpha)``: ``dK/dlog l = K q / b`` and
    ``dK/dlog alpha = alpha K (-log b + (b - 1) / b)``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import RationalQuadratic
    >>> float(RationalQuadratic(1.0, alpha=1.0)(np.zeros((1, 1)), np.ones((1, 1)))[0, 0])
    0.6666666666666666
    """

    _specs = (_Spec("alpha"), _Spec("length_scale", vector=True))

    def __init__(
        self,
        length_scale=1.0,
        alpha: float = 1.0,
        length_scale_bounds=(1e-5, 1e5),
        alpha_bounds=(1e-5, 1e5),
    ):
        self.length_scale = length_scale
        self.alpha = alpha
        self.length_scale_bounds = length_scale_bounds
        self.alpha_bounds = alpha_bounds

    def _phi(self, q, cache):
        a = float(self.alpha)
        u = np.multiply(q, 0.5 / a, out=q if cache is None else None)
        L = np.log1p(u)
        if cache is not None:
            cache["u"], cache["L"] = u, L.copy()
        L *= -a
        return np.exp(L, out=L)

    def _minus_2_dphi(self, q, K, cache):
        # K / b with b = 1 + u; cache["b"] = 1 / b for the alpha gradient
        inv_b = cache["u"] + 1.0
        np.reciprocal(inv_b, out=inv_b)
        cache["inv_b"] = inv_b
        return K * inv_b

    def _extra_gradient(self, name, q, K, cache):
        # alpha K (u / b - log b)
        a = float(self.alpha)
        u, L = cache["u"], cache["L"]
        inv_b = cache.get("inv_b")
        if inv_b is None:
            inv_b = 1.0 / (u + 1.0)
        g = np.multiply(u, inv_b)
        g -= L
        g *= K
        g *= a
        return g


class GammaExponential(_Stationary):
    """Gamma-exponential kernel ``k(x, y) = exp(-(||x - y|| / l)^gamma)``, ``0 < gamma <= 2``.

    ``gamma = 2`` is the squared exponential with ``exp(-||x - y||^2 / l^2)`` (the RBF with
    length scale ``l / sqrt(2)``); ``gamma = 1`` is the exponential (Ornstein-Uhlenbeck)
    kernel, Matérn with ``nu = 1/2``.

    Parameters
    ----------
    length_scale : float or array-like of shape (n_features,), default=1.0
    gamma : float, default=1.0
        The exponent, ``0 < gamma <= 2`` (the kernel is not positive semi-definite beyond 2).
    length_scale_bounds : pair of floats or "fixed", default=(1e-5, 1e5)
    gamma_bounds : pair of floats or "fixed", default=(1e-5, 2.0)

    See Also
    --------
    mathlearn.kernels.RBF
        gamma = 2.
    mathlearn.kernels.Matern
        nu = 1/2 is gamma = 1.

    Notes
    -----
    Stuttgart "Introduction to Machine Learning" §8 (Gaussian processes, covariance
    functions) and Exercise 11.3. With ``u = q^(gamma/2)``: ``dK/dlog l = gamma u K`` and
    ``dK/dlog gamma = -(gamma / 2) u log(q) K``.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.kernels import GammaExponential
    >>> x, y = np.zeros((1, 1)), np.full((1, 1), 0.5)
    >>> float(GammaExponential(0.25, gamma=1.0)(x, y)[0, 0])  # exp(-2)
    0.1353352832366127
    """

    _specs = (_Spec("gamma"), _Spec("length_scale", vector=True))

    def __init__(
        self,
        length_scale=1.0,
        gamma: float = 1.0,
        length_scale_bounds=(1e-5, 1e5),
        gamma_bounds=(1e-5, 2.0),
    ):
        self.length_scale = length_scale
        self.gamma = gamma
        self.length_scale_bounds = length_scale_bounds
        self.gamma_bounds = gamma_bounds

    def _check(self):
        super()._check()
        if not float(self.gamma) <= 2.0:
            raise ValueError(
                f"gamma must be in (0, 2] (the kernel is not PSD beyond 2); got {self.gamma}."
            )

    def _needs_accurate_near(self) -> bool:
        return float(self.gamma) < 2.0

    def _phi(self, q, cache):
        K = q ** (0.5 * float(self.gamma))
        np.negative(K, out=K)
        return np.exp(K, out=K)

    def _minus_2_dphi(self, q, K, cache):
        g = float(self.gamma)
        W = np.zeros_like(q)
        pos = q > 0
        W[pos] = g * K[pos] * q[pos] ** (0.5 * g - 1.0)
        return W

    def _extra_gradient(self, name, q, K, cache):
        g = float(self.gamma)
        out = np.zeros_like(q)
        pos = q > 0
        qp = q[pos]
        out[pos] = -0.5 * g * qp ** (0.5 * g) * np.log(qp) * K[pos]
        return out
