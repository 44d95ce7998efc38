"""The screenshot directory of the browser checks, named at the end of the pytest run."""

import os
from pathlib import Path

import pytest

_SHOTS = pytest.StashKey[set]()


@pytest.fixture(scope="module")
def shots(tmp_path_factory, pytestconfig) -> Path:
    """Where screenshots go: ``$MATHLEARN_SCREENSHOTS``, else a temporary directory."""
    env = os.environ.get("MATHLEARN_SCREENSHOTS")
    d = Path(env) if env else tmp_path_factory.mktemp("screenshots")
    d.mkdir(parents=True, exist_ok=True)
    pytestconfig.stash.setdefault(_SHOTS, set()).add(str(d))
    return d


def pytest_terminal_summary(terminalreporter, config):
    for d in sorted(config.stash.get(_SHOTS, set())):
        names = sorted(p.name for p in Path(d).glob("*.png"))
        if names:
            terminalreporter.write_line(f"browser screenshots ({len(names)}) in {d}:")
            for name in names:
                terminalreporter.write_line(f"  {name}")
