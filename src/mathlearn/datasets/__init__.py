"""Generators for the synthetic data the notes use.

Every generator takes ``random_state`` and returns NumPy arrays; nothing is downloaded.
"""

from ._synthetic import make_sinusoidal, make_sinusoidal_imperial

__all__ = ["make_sinusoidal", "make_sinusoidal_imperial"]
