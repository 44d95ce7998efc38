import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

os.environ.setdefault("MPLBACKEND", "Agg")

# A fixed hypothesis seed on CI (derandomize) and a small example budget keep the suite fast
# and reproducible; locally the default profile explores more.
settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture
def rng():
    """A seeded generator, so every test is reproducible."""
    return np.random.default_rng(0)
