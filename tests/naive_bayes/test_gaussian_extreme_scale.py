"""GaussianNB on data of extreme magnitude and on query rows far outside the data."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from mathlearn.naive_bayes import GaussianNB


def _data():
    return make_blobs(n_samples=60, n_features=3, centers=3, random_state=0)


@pytest.mark.parametrize("e", [997, -997])
def test_fit_on_power_of_two_scaled_data_is_the_same_classifier(e):
    X, y = _data()
    c = 2.0**e
    ref = GaussianNB().fit(X, y)
    got = GaussianNB().fit(X * c, y)
    # Multiplying by a power of two is exact and the fit runs in units of a power of two,
    # so the means are the reference's times c bit for bit.
    np.testing.assert_array_equal(got.theta_, ref.theta_ * c)
    np.testing.assert_array_equal(got.predict(X * c), ref.predict(X))
    # The log joints (|.| ~ 1e2) differ by a class-independent constant and rounding of a
    # few ulps of 1e2, so the posteriors agree to ~1e-13.
    np.testing.assert_allclose(got.predict_proba(X * c), ref.predict_proba(X), atol=1e-12)
    # Variances scale as c^2 = 2^(+-1994): not a float64, and reading them says so.
    with pytest.raises(ValueError, match=r"var_ .*float64 range"):
        got.var_


@pytest.mark.parametrize("scale", [1e150, 1e300])
def test_far_query_rows_give_the_limit_posterior(scale):
    X, y = _data()
    nb = GaussianNB().fit(X, y)
    Xq = X[:5] * scale
    proba = nb.predict_proba(Xq)
    assert np.all(np.isfinite(proba))
    # As x = t u, t -> inf, log p(k | x) ~ -t^2/2 sum_j u_j^2 / var_kj: the posterior tends to
    # one-hot on the class minimising sum_j u_j^2 / var_kj (the gaps are ~1e298 or more).
    q = np.stack([np.sum(X[:5] ** 2 / v, axis=1) for v in nb.var_], axis=1)
    np.testing.assert_array_equal(proba, np.eye(3)[np.argmin(q, axis=1)])
    np.testing.assert_array_equal(nb.predict(Xq), nb.classes_[np.argmin(q, axis=1)])
    if scale == 1e150:
        # Log posteriors ~ -1e300 are still floats.
        logp = nb.predict_log_proba(Xq)
        assert np.all(np.isfinite(logp)) and np.all(logp <= 0)
    else:
        # At 1e300 the log posteriors (~ -1e600) and log joints are not floats: say so.
        with pytest.raises(ValueError, match="log posterior"):
            nb.predict_log_proba(Xq)
        with pytest.raises(ValueError, match="log joint likelihood"):
            nb.predict_joint_log_proba(Xq)
