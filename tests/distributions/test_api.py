"""The shared vocabulary: every public distribution is an immutable value object (not an
estimator) with logpdf/sample(size, rng)/entropy, reproducible through rng, and picklable."""

import copy
import pickle

import numpy as np
import pytest
from sklearn.base import BaseEstimator

import mathlearn.distributions as D

INSTANCES = [
    D.Uniform(0, 2),
    D.Normal(1.0, 2.0),
    D.Beta(2, 3),
    D.Gamma(2.0, 3.0),
    D.Exponential(2.0),
    D.Laplace(0, 1),
    D.StudentT(4.0),
    D.ChiSquared(3),
    D.Bernoulli(0.3),
    D.Binomial(5, 0.4),
    D.BetaBinomial(5, 1.0, 2.0),
    D.Categorical([0.2, 0.8]),
    D.Multinomial(3, [0.2, 0.8]),
    D.Dirichlet([1.0, 2.0]),
    D.DirichletMultinomial(3, [1.0, 2.0]),
    D.MultivariateNormal([0.0, 1.0], [[1.0, 0.2], [0.2, 1.0]]),
    D.MultivariateStudentT(5.0, [0.0, 1.0], np.eye(2)),
    D.Wishart(3.0, np.eye(2)),
    D.NormalGamma(0.0, 1.0, 2.0, 1.0),
    D.Empirical([0.0, 1.0, 2.0]),
    D.ProbabilityTable([[0.1, 0.2], [0.3, 0.4]]),
]


def test_every_exported_class_is_not_an_estimator_and_is_covered_here():
    classes = [getattr(D, n) for n in D.__all__ if isinstance(getattr(D, n), type)]
    for cls in classes:
        assert not issubclass(cls, BaseEstimator), cls
    covered = {type(d) for d in INSTANCES}
    models = {c for c in classes if issubclass(c, D.ConjugateModel)}
    # NormalWishart samples a (mean, matrix) pair, and BayesianNetwork (a graph of tables
    # whose samples are a dict per variable) is not a single distribution object; both have
    # their own tests.
    assert set(classes) - covered - models == {D.NormalWishart, D.BayesianNetwork}


@pytest.mark.parametrize("dist", INSTANCES, ids=lambda d: type(d).__name__)
def test_value_object_contract(dist):
    a = dist.sample(5, rng=3)
    b = dist.sample(5, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    assert len(a) == 5
    if not isinstance(dist, D.Empirical):
        lp = dist.logpdf(a[0]) if not isinstance(dist, D.ProbabilityTable) else dist.logpmf(a[0])
        assert np.all(np.isfinite(lp))
    if hasattr(dist, "entropy") and not isinstance(dist, D.Empirical):
        assert np.isfinite(dist.entropy())
    with pytest.raises(AttributeError, match="immutable"):
        dist.anything = 1
    clone = pickle.loads(pickle.dumps(dist))
    assert repr(clone) == repr(dist)
    assert repr(copy.deepcopy(dist)) == repr(dist)
