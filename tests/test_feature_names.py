"""Every public transformer names its outputs and honours ``set_output(transform="pandas")``.

Transformers are discovered like the common checks (``all_estimators``), so a new one is
covered automatically.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris

from mathlearn.exceptions import ConvergenceWarning
from mathlearn.utils import all_estimators

TRANSFORMERS = [
    cls for _, cls in all_estimators() if hasattr(cls, "transform") and hasattr(cls, "fit")
]


def _fit_transform_pair(cls):
    X, y = load_iris(return_X_y=True)
    params = dict(getattr(cls, "_common_test_params", {}))
    if "random_state" in cls().get_params():
        params["random_state"] = 0
    est = cls(**params)
    if est.__sklearn_tags__().input_tags.categorical:
        X = np.round(X)  # estimators of counts (the topic model) take integer-valued data
    Xdf = pd.DataFrame(X, columns=["sepal_l", "sepal_w", "petal_l", "petal_w"])
    return est, Xdf, y


@pytest.mark.parametrize("cls", TRANSFORMERS, ids=lambda c: c.__name__)
def test_feature_names_match_transform_output(cls):
    est, Xdf, y = _fit_transform_pair(cls)
    with warnings.catch_warnings():
        # The common-test settings stop iterative fits early on purpose; estimators that warn
        # then say so, as for the scikit-learn common checks.
        if getattr(cls, "_common_test_convergence_warning_expected", False):
            warnings.simplefilter("ignore", ConvergenceWarning)
        Z, names, out = _outputs(est, Xdf, y)
    assert names.shape == (Z.shape[1],)
    assert len(set(names)) == len(names)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(names)
    np.testing.assert_allclose(out.to_numpy(), Z, rtol=1e-7, atol=1e-9)


def _outputs(est, Xdf, y):
    with np.errstate(all="ignore"):
        Z = est.fit(Xdf, y).transform(Xdf)
    Z = Z[0] if isinstance(Z, tuple) else Z
    names = est.get_feature_names_out()
    out = clone(est).set_output(transform="pandas").fit(Xdf, y).transform(Xdf)
    out = out[0] if isinstance(out, tuple) else out
    return Z, names, out
