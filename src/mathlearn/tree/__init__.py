"""Classification and regression trees.

CART (Stuttgart "Introduction to Machine Learning" §2.6): ``DecisionTreeClassifier`` and
``DecisionTreeRegressor`` grown by best splits found with sorted prefix sums, stored as flat
arrays, with minimal cost-complexity pruning; ``export_text`` renders the rules.
"""

from ._classes import DecisionTreeClassifier, DecisionTreeRegressor
from ._export import export_text

__all__ = ["DecisionTreeClassifier", "DecisionTreeRegressor", "export_text"]
