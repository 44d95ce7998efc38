"""Directed graphical models over discrete variables: the joint as a product of conditionals.

Imperial "Mathematics for Inference and Machine Learning" §1.3 (directed graphical models):
a directed acyclic graph with one node per variable and an edge from each conditioning
variable to the conditioned one encodes the factorisation

    p(x_1, ..., x_K) = prod_k p(x_k | pa_k)

(eq. 1.59), ``pa_k`` the parents of ``x_k``; for example (eq. 1.58)
``p(x_1) p(x_5) p(x_2 | x_5) p(x_3 | x_1, x_2) p(x_4 | x_2)``. Every joint distribution has
such a factorisation for any ordering of its variables (the chain rule, eq. 1.57:
``p(a, b, c) = p(c | a, b) p(b | a) p(a)``, the fully connected graph); missing edges are
conditional independences. Sampling in a topological order (ancestral sampling) draws each
variable given its already-drawn parents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..utils.validation import check_random_state
from ._table import ProbabilityTable

__all__ = ["BayesianNetwork"]


class BayesianNetwork:
    """A discrete Bayesian network: a DAG with a conditional probability table per node.

    Parameters
    ----------
    parents : mapping of str to sequence of str
        ``parents[x]`` lists the parents of ``x`` (empty for a root); every variable is a
        key. The graph must be acyclic.
    cpts : mapping of str to array-like
        ``cpts[x]`` has one axis per parent, in the order of ``parents[x]``, then one axis
        for ``x``: ``cpts[x][u_1, ..., u_m, v] = p(x = v | pa = u)``, each slice over the last
        axis summing to one.

    Attributes
    ----------
    parents : dict of str to tuple of str
        The graph.
    order : tuple of str
        A topological order of the variables (parents before children; ties kept in the
        order of ``parents``).
    cardinalities : dict of str to int
        Number of states of each variable.

    See Also
    --------
    ProbabilityTable : the joint as a table, with marginals and conditionals.

    Examples
    --------
    The five-variable network of the Imperial notes (eq. 1.58):

    >>> import numpy as np
    >>> from mathlearn.distributions import BayesianNetwork
    >>> pa = {"x1": [], "x5": [], "x2": ["x5"], "x3": ["x1", "x2"], "x4": ["x2"]}
    >>> rng = np.random.default_rng(0)
    >>> cpt = lambda k: rng.dirichlet(np.ones(2), size=(2,) * k)
    >>> net = BayesianNetwork(pa, {x: cpt(len(p)) for x, p in pa.items()})
    >>> net.factorisation()
    'p(x1) p(x5) p(x2 | x5) p(x3 | x1, x2) p(x4 | x2)'
    >>> round(float(net.joint().probs.sum()), 12)
    1.0
    """

    def __init__(self, parents: Mapping[str, Sequence[str]], cpts: Mapping[str, ArrayLike]):
        self.parents = {str(x): tuple(str(p) for p in pa) for x, pa in parents.items()}
        names = set(self.parents)
        for x, pa in self.parents.items():
            unknown = [p for p in pa if p not in names]
            if unknown:
                raise ValueError(f"the parents of {x!r} include unknown variables {unknown}.")
            if len(set(pa)) != len(pa) or x in pa:
                raise ValueError(f"the parents of {x!r} repeat a variable or include {x!r}.")
        if set(map(str, cpts)) != names:
            raise ValueError(
                f"cpts must have exactly one table per variable {sorted(names)}; got "
                f"{sorted(map(str, cpts))}."
            )
        self.order = self._topological_order()
        self._cpts: dict[str, np.ndarray] = {}
        self.cardinalities: dict[str, int] = {}
        for x in self.order:
            table = np.asarray(cpts[x], dtype=float)
            pa = self.parents[x]
            if table.ndim != len(pa) + 1:
                raise ValueError(
                    f"cpts[{x!r}] must have {len(pa) + 1} axes (one per parent, then {x!r}); "
                    f"got shape {table.shape}."
                )
            for axis, p in enumerate(pa):
                if table.shape[axis] != self.cardinalities[p]:
                    raise ValueError(
                        f"cpts[{x!r}] axis {axis} is parent {p!r} with "
                        f"{self.cardinalities[p]} states; got {table.shape[axis]}."
                    )
            if not np.all(np.isfinite(table)) or np.any(table < 0):
                raise ValueError(f"cpts[{x!r}] must be finite and non-negative.")
            sums = table.sum(axis=-1)
            if not np.allclose(sums, 1.0, rtol=0, atol=1e-10):
                raise ValueError(
                    f"every distribution cpts[{x!r}][u, :] must sum to one; sums range over "
                    f"[{sums.min():.6g}, {sums.max():.6g}]."
                )
            self._cpts[x] = table
            self.cardinalities[x] = table.shape[-1]

    def _topological_order(self) -> tuple[str, ...]:
        remaining = dict(self.parents)
        order: list[str] = []
        placed: set[str] = set()
        while remaining:
            ready = [x for x, pa in remaining.items() if all(p in placed for p in pa)]
            if not ready:
                raise ValueError(
                    f"the graph has a directed cycle among {sorted(remaining)}: a Bayesian "
                    "network must be acyclic."
                )
            for x in ready:
                order.append(x)
                placed.add(x)
                del remaining[x]
        return tuple(order)

    def cpt(self, variable: str) -> np.ndarray:
        """The conditional table ``p(variable | parents)`` (parents' axes first).

        Parameters
        ----------
        variable : str
            A variable of the network.

        Returns
        -------
        ndarray
        """
        return self._cpts[variable].copy()

    def factorisation(self) -> str:
        """The factorisation ``prod_k p(x_k | pa_k)`` as text, in topological order.

        Returns
        -------
        str
        """
        terms = [
            f"p({x} | {', '.join(pa)})" if pa else f"p({x})"
            for x, pa in ((x, self.parents[x]) for x in self.order)
        ]
        return " ".join(terms)

    def joint(self) -> ProbabilityTable:
        """The joint distribution ``prod_k p(x_k | pa_k)`` as a table (axes in ``order``).

        Its size is the product of the cardinalities: meant for small networks.

        Returns
        -------
        ProbabilityTable
        """
        shape = tuple(self.cardinalities[x] for x in self.order)
        if int(np.prod(shape, dtype=float)) > 10**7:
            raise ValueError(
                f"the joint table would have {np.prod(shape, dtype=float):.3g} cells."
            )
        axis = {x: i for i, x in enumerate(self.order)}
        p = np.ones(shape)
        for x in self.order:
            vars_ = (*self.parents[x], x)
            table = self._cpts[x]
            # Move the table's axes into the joint's axis order and broadcast.
            perm = np.argsort([axis[v] for v in vars_])
            t = np.transpose(table, perm)
            expand = [1] * len(shape)
            for v in vars_:
                expand[axis[v]] = self.cardinalities[v]
            p = p * t.reshape(expand)
        return ProbabilityTable(p, names=self.order)

    def log_prob(self, assignment: Mapping[str, int]) -> float:
        """``log p(x) = sum_k log p(x_k | pa_k)`` of one full assignment.

        Parameters
        ----------
        assignment : mapping of str to int
            A state for every variable.

        Returns
        -------
        float
            ``-inf`` for an assignment of probability zero.
        """
        missing = [x for x in self.order if x not in assignment]
        if missing:
            raise ValueError(f"the assignment lacks the variables {missing}.")
        total = 0.0
        with np.errstate(divide="ignore"):
            for x in self.order:
                idx = tuple(int(assignment[v]) for v in (*self.parents[x], x))
                total += float(np.log(self._cpts[x][idx]))
        return total

    def sample(self, n_samples: int = 1, random_state=None) -> dict[str, np.ndarray]:
        """Ancestral sampling: each variable drawn given its already-drawn parents.

        Parameters
        ----------
        n_samples : int, default=1
            Number of joint draws.
        random_state : int, Generator or None
            Seed.

        Returns
        -------
        dict of str to ndarray of shape (n_samples,)
            The states of every variable.
        """
        rng = check_random_state(random_state)
        out: dict[str, np.ndarray] = {}
        for x in self.order:
            table = self._cpts[x]
            rows = (
                table[tuple(out[p] for p in self.parents[x])]
                if self.parents[x]
                else (np.broadcast_to(table, (n_samples, table.shape[-1])))
            )
            cdf = np.cumsum(rows, axis=-1)
            u = rng.random(n_samples)[:, None] * cdf[:, -1:]
            out[x] = np.minimum((u >= cdf).sum(axis=-1), table.shape[-1] - 1)
        return out
