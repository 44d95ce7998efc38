"""What the common estimator tests check, for the recommenders (which the scikit-learn
checks skip: they fit a users x items Ratings container, not (X, y))."""

import inspect
import warnings

import numpy as np
import pytest

import mathlearn.recommender as rec
from mathlearn.base import clone
from mathlearn.datasets import make_low_rank_ratings
from mathlearn.exceptions import ConvergenceWarning, InvalidParameterError
from mathlearn.utils._param_validation import Interval, Options, make_constraint

MODELS = [
    getattr(rec, name)
    for name in rec.__all__
    if inspect.isclass(getattr(rec, name)) and hasattr(getattr(rec, name), "fit")
]
FAST = {
    "ALS": {"n_components": 2, "max_iter": 3, "tol": 0.0},
    "SGDMatrixFactorization": {"n_components": 2, "max_iter": 2},
    "ProbabilisticMatrixFactorization": {"n_components": 2, "max_iter": 3, "tol": 0.0},
    "BayesianProbabilisticMatrixFactorization": {"n_components": 2, "n_samples": 3, "burn_in": 1},
    "ImplicitALS": {"n_components": 2, "max_iter": 2},
    "TruncatedSVDRecommender": {"n_components": 2},
    "CoClustering": {"n_user_clusters": 2, "n_item_clusters": 2, "max_iter": 3},
    "SpectralCoClustering": {"n_clusters": 2, "n_init": 2},
}


def _fit(model, r):
    kw = {}
    if type(model).__name__ == "ContentBased":
        kw["item_features"] = np.random.default_rng(0).standard_normal((r.shape[1], 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(r, **kw)


def _data(positive=False):
    r = make_low_rank_ratings(30, 20, 200, rank=2, random_state=0)
    if positive:
        r.values = np.abs(r.values) + 0.1
    return r


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_constraints_cover_init_and_are_enforced(cls):
    params = set(inspect.signature(cls.__init__).parameters) - {"self"}
    assert set(cls._parameter_constraints) == params
    r = _data(cls.__name__ in {"ImplicitALS", "SpectralCoClustering"})
    for name, constraints in cls._parameter_constraints.items():
        bad = [type("BadType", (), {})()]
        for c in map(make_constraint, constraints):
            if isinstance(c, Interval) and c.left is not None:
                bad.append(c.left - 1)
            if isinstance(c, Options) and c.type is str:
                bad.append("not-an-option")
        for value in bad:
            model = cls(**FAST.get(cls.__name__, {}))
            if any(make_constraint(c).is_satisfied_by(value) for c in constraints):
                continue
            model.set_params(**{name: value})
            with pytest.raises(InvalidParameterError, match=name):
                _fit(model, r)


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_api_clone_refit_and_outputs(cls):
    r = _data(cls.__name__ in {"ImplicitALS", "SpectralCoClustering"})
    model = cls(**FAST.get(cls.__name__, {}))
    if "random_state" in model.get_params():
        model.set_params(random_state=0)
    a = _fit(clone(model), r).predict(r.users[:20], r.items[:20])
    b = _fit(clone(model), r).predict(r.users[:20], r.items[:20])
    np.testing.assert_array_equal(a, b)
    assert np.all(np.isfinite(a))
    fitted = _fit(model, r)
    unknown = fitted.predict(["nobody", 0], [0, "nothing"])
    assert np.all(np.isfinite(unknown))
    items, scores = fitted.recommend(0, n=5)
    assert len(items) == 5 and np.all(np.diff(scores) <= 0)
    seen = set(r.items[r.users == 0].tolist())
    assert not seen & set(items.tolist())
    sim_items, _ = fitted.similar_items(0, n=3)
    assert 0 not in sim_items.tolist()
    with pytest.raises(KeyError, match="Unknown item"):
        fitted.similar_items("nothing")
    with pytest.raises(ValueError, match="different lengths"):
        fitted.predict([0, 1], [0])
    with pytest.raises(ValueError, match="empty"):
        _fit(clone(model), rec.Ratings.from_triples([], [], []))


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_not_fitted(cls):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        cls().predict([0], [0])


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("scale, shift", [(1e300, 0.0), (1e150, 0.0), (1e-300, 0.0), (1.0, 1e10)])
def test_extreme_scales_answer_or_refuse(cls, scale, shift):
    base = _data(positive=True)
    r = rec.Ratings(base.users, base.items, base.values * scale + shift, base.user_ids,
                    base.item_ids)  # fmt: skip
    model = cls(**FAST.get(cls.__name__, {}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if scale != 1.0:
            with pytest.raises(ValueError, match="rescale the ratings"):
                _fit(model, r)
            return
        pred = _fit(model, r).predict(base.users, base.items)
    assert np.all(np.isfinite(pred))
    if cls.__name__ != "ImplicitALS":  # preferences, not ratings
        # Far from the origin the models still work on the deviations: predictions are near
        # the data, not pulled to 0.
        assert np.max(np.abs(pred - r.values)) < 1e-6 * 1e10
