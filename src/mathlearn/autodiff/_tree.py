"""Parameter trees: an array, or a dict / list / tuple nesting arrays.

Optimisers and the functional autodiff API accept a model's parameters either as one array
or as a dict of arrays (``{"W1": ..., "b1": ...}``). These helpers flatten such a tree into
its leaves and rebuild it, so that the algorithms themselves only ever see lists of arrays.
Dict keys are visited in sorted order, so two dicts with the same keys flatten alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["tree_flatten", "tree_map", "tree_unflatten", "tree_vdot"]


def tree_flatten(tree: Any) -> tuple[list, Any]:
    """Leaves of ``tree`` (depth first, dict keys sorted) and a definition to rebuild it."""
    if isinstance(tree, dict):
        keys = sorted(tree)
        leaves, defs = [], []
        for k in keys:
            sub, d = tree_flatten(tree[k])
            leaves += sub
            defs.append((d, len(sub)))
        return leaves, ("dict", keys, defs)
    if isinstance(tree, list | tuple):
        leaves, defs = [], []
        for item in tree:
            sub, d = tree_flatten(item)
            leaves += sub
            defs.append((d, len(sub)))
        return leaves, (type(tree).__name__, None, defs)
    return [tree], None


def tree_unflatten(treedef: Any, leaves: list) -> Any:
    """Inverse of :func:`tree_flatten`."""
    if treedef is None:
        return leaves[0]
    kind, keys, defs = treedef
    children, start = [], 0
    for d, n in defs:
        children.append(tree_unflatten(d, leaves[start : start + n]))
        start += n
    if kind == "dict":
        return dict(zip(keys, children, strict=True))
    return tuple(children) if kind == "tuple" else children


def tree_map(fn: Callable, tree: Any, *rest: Any) -> Any:
    """Apply ``fn`` leafwise to ``tree`` and trees of the same structure ``rest``."""
    leaves, treedef = tree_flatten(tree)
    others = [tree_flatten(r)[0] for r in rest]
    return tree_unflatten(treedef, [fn(*xs) for xs in zip(leaves, *others, strict=True)])


def tree_vdot(a: Any, b: Any) -> float:
    """``sum_i <a_i, b_i>`` over matching leaves: the inner product of two trees."""
    la, lb = tree_flatten(a)[0], tree_flatten(b)[0]
    return float(sum(np.vdot(np.asarray(x), np.asarray(y)) for x, y in zip(la, lb, strict=True)))
