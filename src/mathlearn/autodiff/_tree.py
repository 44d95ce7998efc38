"""Parameter trees, kept under this name for compatibility: they live in ``mathlearn.utils``.

The optimisers use the same helpers without depending on automatic differentiation, so the
code is in :mod:`mathlearn.utils._tree`; ``mathlearn.autodiff`` re-exports it.
"""

from ..utils._tree import tree_flatten, tree_map, tree_ravel, tree_unflatten, tree_vdot

__all__ = ["tree_flatten", "tree_map", "tree_ravel", "tree_unflatten", "tree_vdot"]
