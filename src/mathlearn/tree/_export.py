"""Text rendering of a fitted tree."""

from __future__ import annotations

import numpy as np

from ..base import check_is_fitted

__all__ = ["export_text"]


def export_text(
    decision_tree, *, feature_names=None, max_depth: int = 10, decimals: int = 2
) -> str:
    """The rules of a fitted tree, one line per branch, indented by depth.

    Parameters
    ----------
    decision_tree : DecisionTreeClassifier or DecisionTreeRegressor
        A fitted tree.
    feature_names : sequence of str, default=None
        Names of the features; ``feature_0``, ``feature_1``, ... when omitted.
    max_depth : int, default=10
        Deeper branches are summarised as ``truncated branch of depth k``.
    decimals : int, default=2
        Digits shown for thresholds and regression values.

    Returns
    -------
    report : str

    See Also
    --------
    DecisionTreeClassifier, DecisionTreeRegressor

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.tree import DecisionTreeClassifier, export_text
    >>> clf = DecisionTreeClassifier().fit([[1.0], [2.0], [3.0]], ["a", "a", "b"])
    >>> print(export_text(clf, feature_names=["x"]))
    |--- x <= 2.50
    |   |--- class: a
    |--- x >  2.50
    |   |--- class: b
    <BLANKLINE>
    """
    check_is_fitted(decision_tree)
    tree = decision_tree.tree_
    n_features = decision_tree.n_features_in_
    if feature_names is None:
        feature_names = [f"feature_{j}" for j in range(n_features)]
    elif len(feature_names) != n_features:
        raise ValueError(
            f"feature_names has {len(feature_names)} names for {n_features} features."
        )
    if max_depth < 0:
        raise ValueError(f"max_depth must be >= 0; got {max_depth}.")
    classes = getattr(decision_tree, "classes_", None)
    lines = []

    def leaf(node, indent):
        if classes is not None:
            label = classes[int(np.argmax(tree.value[node]))]
            lines.append(f"{indent}|--- class: {label}")
        else:
            lines.append(f"{indent}|--- value: [{tree.value[node, 0]:.{decimals}f}]")

    def subtree_depth(node):
        if tree.children_left[node] == -1:
            return 0
        return 1 + max(
            subtree_depth(tree.children_left[node]), subtree_depth(tree.children_right[node])
        )

    stack: list[tuple[int, int, str | None]] = [(0, 0, None)]
    while stack:
        node, depth, header = stack.pop()
        indent = "|   " * depth
        if header is not None:
            lines.append(header)
        if tree.children_left[node] == -1:
            leaf(node, indent)
            continue
        if depth > max_depth:
            lines.append(f"{indent}|--- truncated branch of depth {subtree_depth(node)}")
            continue
        name = feature_names[tree.feature[node]]
        t = f"{tree.threshold[node]:.{decimals}f}"
        stack.append((tree.children_right[node], depth + 1, f"{indent}|--- {name} >  {t}"))
        stack.append((tree.children_left[node], depth + 1, f"{indent}|--- {name} <= {t}"))
    return "\n".join(lines) + "\n"
