"""Every experiment of the report runs for any seed, not only for the default one.

Seeds 1 and 3 once broke the k-means panel (Lloyd's algorithm converged in fewer iterations
than there were panels); two even and two odd seeds run every experiment in the registry.
Each experiment takes about half a second to three seconds, so the whole grid costs about a
minute of CPU time, spread by pytest-xdist over the workers.
"""

import pytest

from mathlearn.report import Context, registry

EXPERIMENTS = {
    name: exp
    for name, exp in registry().items()
    if exp.func.__module__.startswith("mathlearn.report.experiments.")
}
SEEDS = (0, 1, 2, 3)


def test_every_family_has_experiments():
    sections = {exp.section for exp in EXPERIMENTS.values()}
    assert {"Regression", "Probability", "Optimisation", "Feature extraction", "Clustering"} <= (
        sections
    )


# Matplotlib warns when the search for the best legend place takes more than a second of wall
# time: a message about this machine's load, not about the experiment; everything else warned
# is an error.
@pytest.mark.filterwarnings('ignore:Creating legend with loc="best" can be slow:UserWarning')
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(EXPERIMENTS))
def test_experiment_runs_for_seed(name, seed, tmp_path):
    ctx = Context(name, tmp_path, seed)
    EXPERIMENTS[name].func(ctx)
    assert ctx.blocks  # it wrote something into the report
    for fig in (tmp_path / "figures").iterdir():
        assert fig.stat().st_size > 0
