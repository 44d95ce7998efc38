"""One distributed cluster for every test of the Dask paths that needs one.

Two worker processes (one thread each) on the loopback interface, 1 GiB memory limit each,
logs silenced below ERROR, and a dashboard on a free port. Starting it costs seconds (two
processes each import NumPy, SciPy, scikit-learn and mathlearn), so the session shares it;
the fixture has both workers import mathlearn's estimator subpackages at once as it starts,
so that the first test does not pay for it. A worker killed by a test is restarted by its
nanny and imports them again when it is first given a task.
"""

import importlib
import logging

import pytest

PRELOAD = [
    "mathlearn.cluster",
    "mathlearn.decomposition",
    "mathlearn.linear_model",
    "mathlearn.mixture",
    "mathlearn.naive_bayes",
]


@pytest.fixture(scope="session")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        memory_limit="1GiB",
        dashboard_address=":0",  # a free port: never the default 8787 another cluster holds
        silence_logs=logging.ERROR,
    )
    c = distributed.Client(cluster)
    for name in PRELOAD:
        c.run(importlib.import_module, name)
    yield c
    c.close()
    cluster.close()
