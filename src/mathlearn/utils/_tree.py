"""Parameter trees: an array, or a dict / list / tuple nesting arrays.

Optimisers and the functional autodiff API accept a model's parameters either as one array
or as a dict of arrays (``{"W1": ..., "b1": ...}``). These helpers flatten such a tree into
its leaves and rebuild it, so that the algorithms themselves only ever see lists of arrays;
:func:`tree_ravel` goes one step further and concatenates the leaves into one vector (for
SciPy's optimisers and finite differences). Dict keys are visited in sorted order, so two
dicts with the same keys flatten alike; trees combined leafwise must have the same structure
(the same dict keys, the same lengths), otherwise a ``ValueError`` says where they differ.

``mathlearn.autodiff`` re-exports ``tree_flatten``, ``tree_unflatten``, ``tree_map`` and
``tree_vdot``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_ravel",
    "tree_unflatten",
    "tree_vdot",
]


def tree_flatten(tree: Any) -> tuple[list, Any]:
    """Leaves of ``tree`` (depth first, dict keys sorted) and a definition to rebuild it.

    Parameters
    ----------
    tree : array, scalar, or dict / list / tuple of trees
        The parameters.

    Returns
    -------
    leaves : list
        The arrays (or scalars) at the leaves, depth first, dict keys in sorted order.
    treedef : object
        The structure, for :func:`tree_unflatten`.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.autodiff import tree_flatten
    >>> leaves, treedef = tree_flatten({"b": np.ones(2), "a": [1.0, 2.0]})
    >>> leaves
    [1.0, 2.0, array([1., 1.])]
    """
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


def tree_leaves(tree: Any) -> list:
    """The leaves of ``tree`` in :func:`tree_flatten`'s order.

    Parameters
    ----------
    tree : array or dict / list / tuple of arrays
        The parameters.

    Returns
    -------
    list
        The leaves.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils._tree import tree_leaves
    >>> tree_leaves({"w": np.zeros(1), "b": 3.0})
    [3.0, array([0.])]
    """
    return tree_flatten(tree)[0]


def tree_unflatten(treedef: Any, leaves: list) -> Any:
    """Inverse of :func:`tree_flatten`.

    Parameters
    ----------
    treedef : object
        The structure returned by :func:`tree_flatten`.
    leaves : list
        New leaves, as many and in the same order as the flattened ones.

    Returns
    -------
    tree
        ``leaves`` arranged in ``treedef``'s structure.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.autodiff import tree_flatten, tree_unflatten
    >>> leaves, treedef = tree_flatten({"a": np.zeros(1), "b": np.zeros(2)})
    >>> tree_unflatten(treedef, [np.ones(1), np.ones(2)])
    {'a': array([1.]), 'b': array([1., 1.])}
    """
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


def _describe(treedef: Any) -> str:
    if treedef is None:
        return "a leaf"
    kind, keys, defs = treedef
    if kind == "dict":
        return f"a dict with keys {keys}"
    return f"a {kind} of length {len(defs)}"


def _check_same_structure(a: Any, b: Any, where: str = "the tree") -> None:
    """Raise ``ValueError`` unless the tree definitions ``a`` and ``b`` match.

    Lists and tuples of the same length are interchangeable; dicts must have the same keys
    (pairing the leaves of two dicts by position when their keys differ would silently add a
    weight to a bias).
    """
    if a is None and b is None:
        return
    if a is None or b is None:
        raise ValueError(
            f"trees of different structures: {where} is {_describe(a)} in one and "
            f"{_describe(b)} in the other."
        )
    kind_a, keys_a, defs_a = a
    kind_b, keys_b, defs_b = b
    if (kind_a == "dict") != (kind_b == "dict") or len(defs_a) != len(defs_b):
        raise ValueError(
            f"trees of different structures: {where} is {_describe(a)} in one and "
            f"{_describe(b)} in the other."
        )
    if kind_a == "dict" and keys_a != keys_b:
        only_a = sorted(set(keys_a) - set(keys_b), key=repr)
        only_b = sorted(set(keys_b) - set(keys_a), key=repr)
        raise ValueError(
            f"trees of different structures: {where} is a dict with keys {keys_a} in one and "
            f"{keys_b} in the other (only in the first: {only_a}; only in the second: "
            f"{only_b})."
        )
    labels = keys_a if kind_a == "dict" else range(len(defs_a))
    for label, (da, _), (db, _) in zip(labels, defs_a, defs_b, strict=True):
        _check_same_structure(da, db, f"{where}[{label!r}]")


def tree_map(fn: Callable, tree: Any, *rest: Any) -> Any:
    """Apply ``fn`` leafwise to ``tree`` and trees of the same structure ``rest``.

    Parameters
    ----------
    fn : callable
        ``fn(leaf, *other_leaves) -> new leaf``.
    tree : array or dict / list / tuple of arrays
        The tree whose structure the result takes.
    *rest : trees
        Trees of the same structure as ``tree`` (same dict keys, same lengths).

    Returns
    -------
    tree
        ``fn`` applied to the matching leaves.

    Raises
    ------
    ValueError
        If a tree of ``rest`` differs in structure from ``tree`` (for example a dict with
        other keys).

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.autodiff import tree_map
    >>> tree_map(lambda p, g: p - 0.5 * g, {"w": np.ones(2)}, {"w": np.array([2.0, 4.0])})
    {'w': array([ 0., -1.])}
    """
    if type(tree) is np.ndarray and all(type(r) is np.ndarray for r in rest):
        return fn(tree, *rest)  # single arrays (a flat parameter vector): one leaf each
    if type(tree) is dict and all(type(r) is dict and r.keys() == tree.keys() for r in rest):
        # Fast path for the common flat dict of arrays (a network's parameters): no
        # flattening needed when no value is itself a container.
        if not any(isinstance(v, dict | list | tuple) for v in tree.values()) and not any(
            isinstance(v, dict | list | tuple) for r in rest for v in r.values()
        ):
            return {k: fn(tree[k], *(r[k] for r in rest)) for k in sorted(tree)}
    leaves, treedef = tree_flatten(tree)
    others = []
    for r in rest:
        r_leaves, r_def = tree_flatten(r)
        _check_same_structure(treedef, r_def)
        others.append(r_leaves)
    return tree_unflatten(treedef, [fn(*xs) for xs in zip(leaves, *others, strict=True)])


def tree_vdot(a: Any, b: Any) -> float:
    """``sum_i <a_i, b_i>`` over matching leaves: the inner product of two trees.

    Parameters
    ----------
    a, b : trees of arrays
        Of the same structure.

    Returns
    -------
    float
        The sum of the leafwise inner products.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.autodiff import tree_vdot
    >>> tree_vdot({"a": np.array([1.0, 2.0]), "b": 3.0}, {"a": np.ones(2), "b": 2.0})
    9.0
    """
    la, da = tree_flatten(a)
    lb, db = tree_flatten(b)
    _check_same_structure(da, db)
    return float(sum(np.vdot(np.asarray(x), np.asarray(y)) for x, y in zip(la, lb, strict=True)))


def tree_ravel(tree: Any, dtype: Any = np.float64) -> tuple[np.ndarray, Callable[[Any], Any]]:
    """Concatenate the leaves of ``tree`` into one vector, with the function that undoes it.

    Parameters
    ----------
    tree : array or dict / list / tuple of arrays
        The parameters.
    dtype : numpy dtype, default=numpy.float64
        Type of the flat vector.

    Returns
    -------
    flat : ndarray of shape (n_total,)
        All the entries, leaf after leaf (in :func:`tree_flatten`'s order), each leaf in C
        order.
    unravel : callable
        ``unravel(v)`` rebuilds a tree of ``tree``'s structure and leaf shapes from a vector
        ``v`` of ``n_total`` entries.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.utils._tree import tree_ravel
    >>> flat, unravel = tree_ravel({"W": np.ones((2, 2)), "b": np.zeros(1)})
    >>> flat
    array([1., 1., 1., 1., 0.])
    >>> unravel(np.arange(5.0))
    {'W': array([[0., 1.],
           [2., 3.]]), 'b': array([4.])}
    """
    leaves, treedef = tree_flatten(tree)
    arrays = [np.asarray(leaf, dtype=dtype) for leaf in leaves]
    shapes = [a.shape for a in arrays]
    sizes = [a.size for a in arrays]
    flat = np.concatenate([a.ravel() for a in arrays]) if arrays else np.zeros(0, dtype=dtype)
    total = int(sum(sizes))

    def unravel(v: Any) -> Any:
        v = np.asarray(v)
        if v.shape != (total,):
            raise ValueError(f"expected a vector of {total} entries; got shape {v.shape}.")
        out, start = [], 0
        for shape, n in zip(shapes, sizes, strict=True):
            out.append(v[start : start + n].reshape(shape))
            start += n
        return tree_unflatten(treedef, out)

    return flat, unravel
