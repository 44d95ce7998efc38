"""Every experiment of the report runs for any seed, not only for the default one.

Seeds 1 and 3 once broke the k-means panel (Lloyd's algorithm converged in fewer iterations
than there were panels); an odd and an even seed other than the default run every experiment
in the registry (the default seed 0 runs in CI's end-to-end ``mathlearn report``). Each
experiment takes about half a second to a few seconds, so the grid costs one to two minutes of
CPU time, spread by pytest-xdist over the workers. Each run also checks its figures as a
reader sees them (see mathlearn.report._style).
"""

import pytest

from mathlearn.report import Context, registry

EXPERIMENTS = {
    name: exp
    for name, exp in registry().items()
    if exp.func.__module__.startswith("mathlearn.report.experiments.")
}
SEEDS = (1, 2)


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
    EXPERIMENTS[name].run(ctx)
    assert ctx.blocks  # it wrote something into the report
    for fig in (tmp_path / "figures").iterdir():
        assert fig.read_bytes().startswith(b"<?xml")
    # Every figure reads as the report shows it (mathlearn.report._style.audit): labelled
    # axes, legends of readable size that cover no data. The check runs on the figures this
    # test draws anyway, so it costs nothing extra.
    assert ctx.figure_issues == []
