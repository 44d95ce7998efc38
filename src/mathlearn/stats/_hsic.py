"""Hilbert-Schmidt independence criterion: biased and unbiased HSIC, permutation test."""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral

import numpy as np

from ..kernels import KERNEL_NAMES, Kernel
from ..utils._param_validation import Interval, StrOptions, validate_params
from ..utils.validation import check_random_state
from ._common import as_samples, gram, permutation_pvalue, resolve_kernel

__all__ = ["HSICTestResult", "hsic", "hsic_test"]

_KERNEL = [Kernel, StrOptions(set(KERNEL_NAMES)), None]


def _paired(X, Y, unbiased):
    need = 4 if unbiased else 2
    X, Y = as_samples(X, "X", need), as_samples(Y, "Y", need)
    if X.shape[0] != Y.shape[0]:
        raise ValueError(
            f"X and Y must be paired (same number of samples); got {X.shape[0]} and {Y.shape[0]}."
        )
    return X, Y


def _centre(K):
    """``H K H`` with ``H = I - 11^T / m``: subtract row and column means, add the grand mean."""
    r = K.mean(axis=0)
    return K - r[None, :] - r[:, None] + r.mean()


class _Statistic:
    """HSIC of ``(K, L[perm][:, perm])`` for any permutation, with the invariants precomputed.

    Biased (V-statistic): ``tr(K H L H) / m^2 = sum_ij (HKH)_ij L_ij / m^2``. Unbiased
    (Song et al. 2012), with ``K~, L~`` the Gram matrices with zero diagonals:
    ``[tr(K~ L~) + (1^T K~ 1)(1^T L~ 1) / ((m-1)(m-2)) - 2/(m-2) 1^T K~ L~ 1] / (m (m-3))``;
    only ``tr(K~ L~_pi)`` and ``(K~ 1)^T (L~ 1)_pi`` change under a permutation.
    """

    def __init__(self, K, L, unbiased):
        self.m = m = K.shape[0]
        self.unbiased = unbiased
        if unbiased:
            self.K = K.copy()
            np.fill_diagonal(self.K, 0.0)
            self.L = L.copy()
            np.fill_diagonal(self.L, 0.0)
            self.rK, self.rL = self.K.sum(axis=1), self.L.sum(axis=1)
            self.const = self.rK.sum() * self.rL.sum() / ((m - 1) * (m - 2))
        else:
            self.K, self.L = _centre(K), L

    def __call__(self, perm=None):
        L = self.L if perm is None else self.L[np.ix_(perm, perm)]
        t = float(np.einsum("ij,ij->", self.K, L))
        m = self.m
        if not self.unbiased:
            return t / m**2
        rL = self.rL if perm is None else self.rL[perm]
        return (t + self.const - 2.0 / (m - 2) * float(self.rK @ rL)) / (m * (m - 3))


def _setup(X, Y, kernel_x, kernel_y, unbiased):
    X, Y = _paired(X, Y, unbiased)
    kx, ky = resolve_kernel(kernel_x, X), resolve_kernel(kernel_y, Y)
    return kx, ky, _Statistic(gram(kx, X), gram(ky, Y), unbiased)


@validate_params(
    {
        "X": ["array-like"],
        "Y": ["array-like"],
        "kernel_x": _KERNEL,
        "kernel_y": _KERNEL,
        "unbiased": ["boolean"],
    }
)
def hsic(
    X,
    Y,
    *,
    kernel_x: Kernel | str | None = None,
    kernel_y: Kernel | str | None = None,
    unbiased: bool = False,
) -> float:
    r"""Hilbert-Schmidt independence criterion of paired samples.

    Parameters
    ----------
    X : array-like of shape (m, n_features_x) or (m,)
    Y : array-like of shape (m, n_features_y) or (m,)
        Paired with ``X`` row by row.
    kernel_x, kernel_y : Kernel, str or None, default=None
        Kernels on each variable; ``None``: the RBF kernel with the :func:`median_heuristic`
        length scale of that variable's sample.
    unbiased : bool, default=False
        ``False``: the notes' biased V-statistic ``tr(KHLH) / m^2``; ``True``: the unbiased
        U-statistic of Song et al. (2012), which needs ``m >= 4``.

    Returns
    -------
    float

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning", §3.7 (Definition 14, eq. 3.10):
    HSIC is the squared MMD between ``P_XY`` and ``P_X P_Y`` under the product kernel, i.e.
    ``||C_XY||_HS^2``; with ``H = I - 11^T / m``

    .. math::

        \widehat{\mathrm{HSIC}}_b = \frac{1}{m^2}\Big(\mathrm{tr}(KL) - \frac{2}{m}
        \mathbf 1^\top KL\mathbf 1 + \frac{1}{m^2}\mathbf 1^\top K\mathbf 1\,
        \mathbf 1^\top L\mathbf 1\Big) = \frac{1}{m^2}\mathrm{tr}(KHLH),

    computed as ``sum_ij (HKH)_ij L_ij / m^2`` in ``O(m^2)``.

    Examples
    --------
    >>> from mathlearn.kernels import RBF
    >>> from mathlearn.stats import hsic
    >>> a = [0.0, 1.0, 2.0, 3.0]
    >>> round(hsic(a, [0.0, 1.0, 4.0, 9.0], kernel_x=RBF(1.0), kernel_y=RBF(1.0)), 6)
    0.128856
    """
    return _setup(X, Y, kernel_x, kernel_y, unbiased)[2]()


@dataclass(frozen=True)
class HSICTestResult:
    """Result of :func:`hsic_test`, in the style of ``scipy.stats``' test results.

    Attributes
    ----------
    statistic : float
        The HSIC estimate (biased or unbiased, as asked).
    pvalue : float
        Permutation p-value ``(1 + #{null >= statistic}) / (1 + n_permutations)``.
    null_distribution : ndarray of shape (n_permutations,)
        The statistic with the rows of ``Y`` randomly permuted (pairing broken).
    kernel_x, kernel_y : Kernel
        The kernels used.

    See Also
    --------
    mathlearn.stats.hsic_test
        The function that returns it.

    Examples
    --------
    >>> from mathlearn.kernels import RBF
    >>> from mathlearn.stats import hsic_test
    >>> a = [0.0, 1.0, 2.0, 3.0]
    >>> res = hsic_test(a, [0.0, 1.0, 4.0, 9.0], kernel_x=RBF(1.0), kernel_y=RBF(1.0),
    ...                 n_permutations=9, random_state=0)
    >>> round(res.statistic, 6), res.null_distribution.shape
    (0.128856, (9,))
    """

    statistic: float
    pvalue: float
    null_distribution: np.ndarray = field(repr=False)
    kernel_x: Kernel
    kernel_y: Kernel


@validate_params(
    {
        "X": ["array-like"],
        "Y": ["array-like"],
        "kernel_x": _KERNEL,
        "kernel_y": _KERNEL,
        "n_permutations": [Interval(Integral, 1, None, closed="left")],
        "unbiased": ["boolean"],
        "random_state": ["random_state"],
    }
)
def hsic_test(
    X,
    Y,
    *,
    kernel_x: Kernel | str | None = None,
    kernel_y: Kernel | str | None = None,
    n_permutations: int = 1000,
    unbiased: bool = False,
    random_state=None,
) -> HSICTestResult:
    """Kernel test of independence of paired ``X`` and ``Y`` by HSIC and a permutation null.

    Parameters
    ----------
    X : array-like of shape (m, n_features_x) or (m,)
    Y : array-like of shape (m, n_features_y) or (m,)
        Paired with ``X`` row by row.
    kernel_x, kernel_y : Kernel, str or None, default=None
        ``None``: RBF with the :func:`median_heuristic` length scale of each sample.
        Characteristic kernels on both make the test consistent against any dependence.
    n_permutations : int, default=1000
    unbiased : bool, default=False
        Test with the notes' biased statistic, or the unbiased one (``m >= 4``).
    random_state : int, Generator, RandomState or None, default=None

    Returns
    -------
    HSICTestResult

    See Also
    --------
    hsic : The statistic alone.
    mmd_test : The kernel two-sample test.
    scipy.stats.permutation_test : The generic permutation test.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning", §3.7 (HSIC, eq. 3.10). The notes
    give no null distribution: under ``H0: X independent of Y`` the pairing is arbitrary, so
    permuting the rows of ``Y`` (i.e. ``L -> L[pi][:, pi]``) samples the null; ``(HKH)`` is
    formed once, and each permutation costs ``O(m^2)``: ``O(m^2 (D + B))`` in all, ``O(m^2)``
    memory. ``p = (1 + #{null >= observed}) /
    (1 + B)`` is a valid p-value.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.stats import hsic_test
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=60)
    >>> hsic_test(x, x**2 + 0.1 * rng.normal(size=60), n_permutations=199,
    ...           random_state=0).pvalue  # dependent, though uncorrelated
    0.005
    """
    kx, ky, stat = _setup(X, Y, kernel_x, kernel_y, unbiased)
    observed = stat()
    rng = check_random_state(random_state)
    null = np.array([stat(rng.permutation(stat.m)) for _ in range(n_permutations)])
    return HSICTestResult(
        statistic=observed,
        pvalue=permutation_pvalue(observed, null),
        null_distribution=null,
        kernel_x=kx,
        kernel_y=ky,
    )
