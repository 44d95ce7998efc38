"""LDA and QDA on data of extreme magnitude and on query rows far outside the data."""

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from mathlearn.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)


def _data():
    return make_blobs(n_samples=60, n_features=3, centers=3, random_state=0)


@pytest.mark.parametrize("e", [997, -997])
@pytest.mark.parametrize("cls", [LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis])
def test_fit_on_power_of_two_scaled_data_is_the_same_classifier(cls, e):
    X, y = _data()
    c = 2.0**e
    ref = cls().fit(X, y)
    got = cls().fit(X * c, y)
    # Scaling by a power of two is exact, and the fit runs in units of a power of two.
    np.testing.assert_array_equal(got.means_, ref.means_ * c)
    np.testing.assert_array_equal(got.predict(X * c), ref.predict(X))
    # Log joints of size ~1e2 computed in other (power-of-two) units: a few ulps of 1e2 apart.
    np.testing.assert_allclose(got.predict_proba(X * c), ref.predict_proba(X), atol=1e-12)
    # The covariance scales as c^2 = 2^(+-1994): not a float64, and reading it says so.
    with pytest.raises(ValueError, match=r"covariance_ .*float64 range"):
        got.covariance_
    if cls is LinearDiscriminantAnalysis:
        # coef_ = Sigma^{-1} mu_k scales as 1/c (a float64 here); the condition number of
        # Sigma (~1e1) times a few ulps bounds the difference from the reference.
        np.testing.assert_allclose(got.coef_ * c, ref.coef_, rtol=1e-13)
        np.testing.assert_allclose(got.intercept_, ref.intercept_, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("scale", [1e150, 1e300])
def test_qda_far_query_rows_give_the_limit_posterior(scale):
    X, y = _data()
    qda = QuadraticDiscriminantAnalysis().fit(X, y)
    Xq = X[:5] * scale
    proba = qda.predict_proba(Xq)
    assert np.all(np.isfinite(proba))
    # As x = t u, t -> inf, the posterior tends to one-hot on the class minimising
    # u^T Sigma_k^{-1} u (the gaps in t^2 u^T Sigma_k^{-1} u are ~1e298 or more).
    q = np.stack(
        [np.einsum("ij,ij->i", X[:5], np.linalg.solve(C, X[:5].T).T) for C in qda.covariance_],
        axis=1,
    )
    np.testing.assert_array_equal(proba, np.eye(3)[np.argmin(q, axis=1)])
    np.testing.assert_array_equal(qda.predict(Xq), qda.classes_[np.argmin(q, axis=1)])
    if scale == 1e150:
        # Log posteriors ~ -1e300 are still floats.
        logp = qda.predict_log_proba(Xq)
        assert np.all(np.isfinite(logp)) and np.all(logp <= 0)
        np.testing.assert_array_equal(qda.decision_function(Xq), logp)
    else:
        # At 1e300 the log posteriors (~ -1e600) are not floats: say so.
        with pytest.raises(ValueError, match="log posterior"):
            qda.predict_log_proba(Xq)
        with pytest.raises(ValueError, match="log posterior"):
            qda.decision_function(Xq)
