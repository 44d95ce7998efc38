"""Generators for the synthetic data the notes use, and the notes' small tables.

Every generator takes ``random_state`` and returns NumPy arrays (the ratings generators a
:class:`mathlearn.recommender.Ratings`); nothing is downloaded.
"""

from ._ratings import load_toy_ratings, make_low_rank_ratings
from ._synthetic import make_sinusoidal, make_sinusoidal_imperial

__all__ = [
    "load_toy_ratings",
    "make_low_rank_ratings",
    "make_sinusoidal",
    "make_sinusoidal_imperial",
]
