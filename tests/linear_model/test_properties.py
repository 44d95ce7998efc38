"""Property tests over random problems (hypothesis, few examples)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from mathlearn.linear_model import BayesianLinearRegression, LinearRegression, Ridge


@settings(max_examples=15)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(2, 25),
    m=st.integers(1, 6),
    cuts=st.lists(st.integers(1, 24), max_size=4),
)
def test_sequential_posterior_equals_batch_for_any_split(seed, n, m, cuts):
    # PRML §3.3.1: any split of the data into batches gives the batch posterior
    rng = np.random.default_rng(seed)
    Phi = rng.normal(size=(n, m))
    t = rng.normal(size=n)
    kw = dict(
        prior_precision=float(rng.uniform(0.1, 5)), noise_precision=float(rng.uniform(0.5, 20))
    )
    batch = BayesianLinearRegression(fit_intercept=False, **kw).fit(Phi, t)
    seq = BayesianLinearRegression(fit_intercept=False, **kw)
    for chunk in np.split(np.arange(n), sorted({c for c in cuts if c < n})):
        seq.partial_fit(Phi[chunk], t[chunk])
    np.testing.assert_allclose(seq.coef_, batch.coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(seq.coef_cov_, batch.coef_cov_, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(seq.log_evidence_, batch.log_evidence_, rtol=1e-9)


@settings(max_examples=15)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(3, 40), m=st.integers(1, 8))
def test_map_mean_is_ridge_and_residual_orthogonality(seed, n, m):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m)) * rng.uniform(0.1, 10, size=m)
    y = rng.normal(size=n)
    alpha, beta = float(rng.uniform(0.1, 3)), float(rng.uniform(0.5, 5))
    blr = BayesianLinearRegression(
        fit_intercept=False, prior_precision=alpha, noise_precision=beta
    ).fit(X, y)
    ridge = Ridge(alpha=alpha / beta, fit_intercept=False).fit(X, y)  # PRML §3.3.1
    np.testing.assert_allclose(blr.coef_, ridge.coef_, rtol=1e-8, atol=1e-10)
    if n > m:
        # least squares: the residual is orthogonal to every column (normal equations)
        lr = LinearRegression().fit(X, y)
        r = y - lr.predict(X)
        A = np.hstack([X, np.ones((n, 1))])
        assert np.max(np.abs(A.T @ r)) <= 1e-10 * np.linalg.norm(A) * max(np.linalg.norm(y), 1)
