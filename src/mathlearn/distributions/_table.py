"""Discrete probability tables: joint, marginal, conditional and Bayes' rule.

The exercises of Stuttgart "Introduction to Machine Learning" (appendix A, slides 9:12–9:18;
exercise sheet 11.1) and PRML §1.2 work with small
tables of discrete random variables. A ``ProbabilityTable`` is a joint distribution stored as
an array with one named axis per variable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from ..utils.validation import check_random_state
from ._base import Distribution, _frozen_array, _size_tuple

__all__ = ["ProbabilityTable", "bayes_rule"]


def bayes_rule(prior: Any, likelihood: ArrayLike, *, log: bool = False) -> np.ndarray:
    r"""Posterior over hypotheses from a prior and the likelihood of the observed data.

    :math:`p(h|D) = p(D|h)p(h) / \sum_{h'} p(D|h')p(h')` (PRML §1.2; Stuttgart "Introduction to
    Machine Learning" slide 9:13), computed in log space with log-sum-exp so that tiny likelihoods
    do not underflow.

    Parameters
    ----------
    prior : array-like of shape (K,)
        Prior probabilities of the ``K`` hypotheses (summing to one).
    likelihood : array-like of shape (K,)
        ``p(D | h)`` for each hypothesis (or ``log p(D | h)`` with ``log=True``). Zero
        likelihood is allowed; all zeros is an error (the data are impossible).
    log : bool, default=False
        Whether ``likelihood`` is given as log-likelihoods.

    Returns
    -------
    posterior : ndarray of shape (K,)

    Examples
    --------
    >>> from mathlearn.distributions import bayes_rule
    >>> # worked example of Stuttgart slide 9:14: P(B=1 | D=0) with P(D=1|B=1)=0.4,
    >>> # P(D=1|B=0)=0.01, P(B=1)=0.15
    >>> round(float(bayes_rule([0.85, 0.15], [0.99, 0.6])[1]), 7)
    0.0966184
    """
    prior = np.asarray(prior, dtype=float)
    if prior.ndim != 1 or np.any(prior < 0) or not np.isclose(prior.sum(), 1.0):
        raise ValueError("prior must be a 1-D probability vector summing to one.")
    lik = np.asarray(likelihood, dtype=float)
    if lik.shape != prior.shape:
        raise ValueError(f"likelihood must have shape {prior.shape}; got {lik.shape}.")
    if np.any(np.isnan(lik)):
        raise ValueError("likelihood contains NaN.")
    with np.errstate(divide="ignore"):
        loglik = lik if log else np.log(lik)
        if not log and np.any(lik < 0):
            raise ValueError("likelihoods must be non-negative.")
        joint = loglik + np.log(prior)
    if np.all(np.isneginf(joint)):
        raise ValueError("the data have zero probability under every hypothesis.")
    return np.exp(joint - logsumexp(joint))


class ProbabilityTable(Distribution):
    """Joint distribution of discrete random variables, stored as a named table.

    Parameters
    ----------
    probs : array-like of shape (n_1, ..., n_k)
        ``probs[i_1, ..., i_k] = P(X_1 = i_1, ..., X_k = i_k)``; non-negative and summing to
        one.
    names : sequence of str, optional
        One name per axis; defaults to ``"X0", "X1", ...``.

    Attributes
    ----------
    probs : ndarray
    names : tuple of str

    See Also
    --------
    mathlearn.distributions.BayesianNetwork
        A joint table factorised along a DAG.
    mathlearn.distributions.bayes_rule
        Bayes' rule on arrays.

    Notes
    -----
    Marginal :math:`P(X_1) = \\sum_{X_{2:n}} P(X_{1:n})`, conditional
    :math:`P(X_1|X_{2:n}) = P(X_{1:n}) / P(X_{2:n})`, Bayes
    :math:`P(X|Y) = P(Y|X)P(X)/P(Y)` (Stuttgart "Introduction to Machine Learning" slides
    9:12–9:13; PRML §1.2).

    Examples
    --------
    >>> from mathlearn.distributions import ProbabilityTable
    >>> t = ProbabilityTable.from_conditional([0.85, 0.15], [[0.99, 0.01], [0.6, 0.4]],
    ...                                       names=("B", "D"))
    >>> round(float(t.condition(D=0).probs[1]), 7)
    0.0966184
    """

    def __init__(self, probs, names: Sequence[str] | None = None):
        p = np.asarray(probs, dtype=float)
        if p.ndim == 0 or p.size == 0:
            raise ValueError("probs must be a non-empty table with at least one axis.")
        if not np.all(np.isfinite(p)) or np.any(p < 0):
            raise ValueError("probs must be finite and non-negative.")
        if not np.isclose(p.sum(), 1.0, rtol=0, atol=1e-8):
            raise ValueError(f"probs must sum to one; they sum to {p.sum():.6g}.")
        if names is None:
            names = tuple(f"X{i}" for i in range(p.ndim))
        names = tuple(str(n) for n in names)
        if len(names) != p.ndim or len(set(names)) != len(names):
            raise ValueError(f"need {p.ndim} distinct names; got {names}.")
        self._set(_p=_frozen_array(p / p.sum()), _names=names)

    @classmethod
    def from_conditional(cls, prior, conditional, names=None) -> ProbabilityTable:
        """Joint ``P(X, Y) = P(X) P(Y | X)`` from ``prior[x]`` and ``conditional[x, y...]``.

        Each row ``conditional[x]`` must sum to one (it is a distribution over ``Y``).
        """
        prior = np.asarray(prior, dtype=float)
        cond = np.asarray(conditional, dtype=float)
        if prior.ndim != 1 or cond.shape[0] != prior.shape[0]:
            raise ValueError("conditional must have the prior's length on its first axis.")
        sums = cond.reshape(cond.shape[0], -1).sum(-1)
        if not np.allclose(sums, 1.0, atol=1e-8):
            raise ValueError(f"each conditional P(Y | X=x) must sum to one; sums are {sums}.")
        joint = prior.reshape((-1,) + (1,) * (cond.ndim - 1)) * cond
        return cls(joint, names)

    def _params(self):
        return {"probs": self._p, "names": self._names}

    @property
    def probs(self) -> np.ndarray:
        return self._p

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    @property
    def shape(self) -> tuple[int, ...]:
        return self._p.shape

    def _axes(self, names) -> list[int]:
        if isinstance(names, str):
            names = [names]
        out = []
        for n in names:
            if n not in self._names:
                raise KeyError(f"unknown variable {n!r}; the table has {self._names}.")
            out.append(self._names.index(n))
        return out

    def marginal(self, names) -> ProbabilityTable:
        """Marginal table of the variables ``names`` (in that order), summing out the rest."""
        keep = self._axes(names)
        drop = tuple(i for i in range(self._p.ndim) if i not in keep)
        p = self._p.sum(axis=drop)
        # p has the kept axes in table order; reorder to the requested order.
        order = np.argsort(np.argsort(keep))
        p = np.transpose(p, order)
        return ProbabilityTable(p, [self._names[i] for i in keep])

    def condition(self, evidence: dict | None = None, **kw) -> ProbabilityTable:
        """Table of the other variables given observed values, e.g. ``t.condition(D=0)``.

        Raises ``ValueError`` if the evidence has probability zero.
        """
        evidence = dict(evidence or {}, **kw)
        if not evidence:
            return self
        idx: list[Any] = [slice(None)] * self._p.ndim
        for name, value in evidence.items():
            (ax,) = self._axes([name])
            if not isinstance(value, int | np.integer):
                raise ValueError(f"{name} must be given an integer value; got {value!r}.")
            if not 0 <= int(value) < self._p.shape[ax]:
                raise ValueError(f"{name}={value} is out of range [0, {self._p.shape[ax]}).")
            idx[ax] = int(value)
        sub = self._p[tuple(idx)]
        z = sub.sum()
        if z <= 0:
            raise ValueError(f"the evidence {evidence} has probability zero.")
        rest = [n for n in self._names if n not in evidence]
        if not rest:
            raise ValueError("cannot condition on every variable.")
        return ProbabilityTable(sub / z, rest)

    def conditional(self, target, given) -> np.ndarray:
        """Conditional probability array ``P(target | given)``.

        Returns an array with the ``target`` axes first and then the ``given`` axes, so that
        ``out[t..., g...] = P(target=t | given=g)`` sums to one over the target axes.
        Entries for givens of probability zero are NaN-free zeros.
        """
        target = [target] if isinstance(target, str) else list(target)
        given = [given] if isinstance(given, str) else list(given)
        joint = self.marginal(target + given).probs
        pg = self.marginal(given).probs
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(pg > 0, joint / pg, 0.0)
        return out

    def pmf(self, index) -> float:
        return float(self._p[tuple(index)])

    def logpmf(self, index) -> float:
        with np.errstate(divide="ignore"):
            return float(np.log(self._p[tuple(index)]))

    logpdf = logpmf
    pdf = pmf

    def entropy(self) -> float:
        """Joint Shannon entropy in nats."""
        from ._information import entropy

        return float(entropy(self._p.ravel()))

    def mutual_information(self, a, b) -> float:
        """Mutual information ``I(a; b)`` between two (groups of) variables, in nats."""
        from ._information import mutual_information

        a = [a] if isinstance(a, str) else list(a)
        b = [b] if isinstance(b, str) else list(b)
        p = self.marginal(a + b).probs
        na = int(np.prod([self._p.shape[i] for i in self._axes(a)]))
        return mutual_information(p.reshape(na, -1))

    def sample(self, size=None, rng=None) -> np.ndarray:
        """Joint samples: integer array of shape ``size + (n_variables,)``."""
        rng = check_random_state(rng, name="rng")
        size = _size_tuple(size)
        flat = rng.choice(self._p.size, size=size, p=self._p.ravel())
        return np.stack(np.unravel_index(flat, self._p.shape), axis=-1)
