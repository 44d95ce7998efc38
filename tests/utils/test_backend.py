"""The array-backend switch: NumPy input never imports Dask; Dask input is recognised."""

import subprocess
import sys

import numpy as np
import pytest

from mathlearn.utils._backend import is_dask


def test_numpy_path_imports_no_dask():
    code = (
        "import sys, numpy as np\n"
        "from mathlearn.linear_model import LinearRegression\n"
        "from mathlearn.cluster import KMeans\n"
        "X = np.random.default_rng(0).normal(size=(50, 3)); y = X.sum(axis=1)\n"
        "LinearRegression().fit(X, y).predict(X)\n"
        "KMeans(2, n_init=1, random_state=0).fit(X)\n"
        "assert not any(m == 'dask' or m.startswith('dask.') for m in sys.modules), 'dask'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_is_dask_recognises_collections_only():
    assert not is_dask(np.zeros((2, 2)))
    assert not is_dask([[1.0, 2.0]])
    da = pytest.importorskip("dask.array")
    assert is_dask(da.zeros((4, 2), chunks=2))
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    assert is_dask(dd.from_pandas(pd.DataFrame({"a": [1.0, 2.0]}), npartitions=1))
