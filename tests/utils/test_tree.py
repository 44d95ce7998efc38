import subprocess
import sys

import numpy as np
import pytest

from mathlearn import autodiff, optim
from mathlearn.utils._tree import tree_flatten, tree_map, tree_ravel, tree_unflatten, tree_vdot


def test_autodiff_reexports_the_utils_helpers():
    assert autodiff.tree_map is tree_map
    assert autodiff.tree_flatten is tree_flatten
    assert autodiff.tree_unflatten is tree_unflatten
    assert autodiff.tree_vdot is tree_vdot


def test_optim_does_not_import_autodiff():
    code = "import sys, mathlearn.optim; print('mathlearn.autodiff' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_tree_ravel_round_trip():
    tree = {"W": np.arange(6.0).reshape(2, 3), "b": [np.array(7.0), (np.ones(2),)]}
    flat, unravel = tree_ravel(tree)
    np.testing.assert_array_equal(flat, [0, 1, 2, 3, 4, 5, 7, 1, 1])
    back = unravel(flat)
    np.testing.assert_array_equal(back["W"], tree["W"])
    assert back["b"][0].shape == () and isinstance(back["b"][1], tuple)
    with pytest.raises(ValueError, match="9 entries"):
        unravel(np.zeros(8))


@pytest.mark.parametrize(
    "other, match",
    [
        ({"w": np.ones(2), "c": np.ones(1)}, r"only in the first: \['b'\]"),
        ({"w": np.ones(2)}, "keys"),
        ([np.ones(2), np.ones(1)], "dict"),
        ({"w": np.ones(2), "b": [np.ones(1), np.ones(1)]}, r"\['b'\]"),
    ],
)
def test_trees_of_other_structures_are_not_paired_by_position(other, match):
    params = {"w": np.zeros(2), "b": np.zeros(1)}
    with pytest.raises(ValueError, match=match):
        tree_map(np.add, params, other)
    with pytest.raises(ValueError, match=match):
        optim.apply_updates(params, other)
    with pytest.raises(ValueError, match=match):
        tree_vdot(params, other)


def test_tree_map_same_keys_any_insertion_order():
    a = {"w": np.array([1.0]), "b": np.array([2.0])}
    b = {"b": np.array([10.0]), "w": np.array([20.0])}
    out = optim.apply_updates(a, b)
    assert out == {"b": np.array([12.0]), "w": np.array([21.0])}
    assert tree_vdot(a, b) == 40.0
