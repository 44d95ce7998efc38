"""Batched MultivariateNormal (issue 3: "batch parameters that broadcast").

Every batched quantity is checked member by member against a single-distribution
MultivariateNormal and against ``scipy.stats.multivariate_normal`` built from that member's
parameters; sample moments are checked with tolerances derived from the sample size.
"""

import numpy as np
import pytest
import scipy.stats as st
from hypothesis import given
from hypothesis import strategies as hst
from hypothesis.extra.numpy import mutually_broadcastable_shapes

from mathlearn.distributions import MultivariateNormal
from mathlearn.exceptions import NumericalWarning


def random_spd(rng, batch, d):
    A = rng.normal(size=(*batch, d, d))
    return A @ np.swapaxes(A, -1, -2) + 0.5 * np.eye(d)


def reference(mean, cov, x):
    """Log-density, squared Mahalanobis distance and scipy's log-density, member by member."""
    batch = np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    shape = np.broadcast_shapes(x.shape[:-1], batch)
    d = mean.shape[-1]
    means = np.broadcast_to(mean, (*batch, d))
    covs = np.broadcast_to(cov, (*batch, d, d))
    xs = np.broadcast_to(x, (*shape, d))
    logp, maha2, logp_scipy = (np.empty(shape) for _ in range(3))
    singles = {}
    for idx in np.ndindex(*shape):
        # The batch member of point idx (size-1 batch axes broadcast).
        b = tuple(
            min(i, n - 1) for i, n in zip(idx[len(shape) - len(batch) :], batch, strict=True)
        )
        if b not in singles:
            singles[b] = (
                MultivariateNormal(means[b], covs[b]),
                st.multivariate_normal(means[b], covs[b]),
            )
        ours, theirs = singles[b]
        logp[idx] = ours.logpdf(xs[idx])
        maha2[idx] = ours.mahalanobis(xs[idx]) ** 2
        logp_scipy[idx] = theirs.logpdf(xs[idx])
    return logp, maha2, logp_scipy


# (mean shape, cov batch shape, leading shape of x) with d = 3.
CASES = [
    ((4, 3), (4,), (4,)),  # one parameter set per member, one point per member
    ((4, 3), (), (7, 1)),  # a batch of means sharing one covariance, 7 points each
    ((3,), (4,), (7, 4)),  # one mean, a batch of covariances
    ((2, 1, 3), (5,), ()),  # batch (2, 5) by broadcasting, one point for all
    ((5, 3), (2, 1), (6, 1, 1)),  # batch (2, 5), x adds a leading axis
    ((2, 1, 3), (1, 5), (2, 5)),
    ((3,), (4,), (2, 3, 4)),  # the covariance varies along the last of three axes
]


@pytest.mark.parametrize(("mean_shape", "cov_batch", "x_lead"), CASES)
@pytest.mark.parametrize("by", ["cov", "scale_tril"])
def test_densities_against_loop_and_scipy(rng, mean_shape, cov_batch, x_lead, by):
    d = mean_shape[-1]
    mean, cov = rng.normal(size=mean_shape), random_spd(rng, cov_batch, d)
    x = rng.normal(size=(*x_lead, d))
    if by == "cov":
        p = MultivariateNormal(mean, cov)
    else:
        p = MultivariateNormal(mean, scale_tril=np.linalg.cholesky(cov))
    batch = np.broadcast_shapes(mean_shape[:-1], cov_batch)
    assert p.batch_shape == batch and p.event_shape == (d,) and p.dim == d
    logp, maha2, logp_scipy = reference(mean, cov, x)
    out = p.logpdf(x)
    assert out.shape == np.broadcast_shapes(x_lead, batch)
    np.testing.assert_allclose(out, logp, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out, logp_scipy, rtol=1e-10)
    np.testing.assert_allclose(p.pdf(x), np.exp(logp_scipy), rtol=1e-10)
    np.testing.assert_allclose(p.mahalanobis(x) ** 2, maha2, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("mean_shape", "cov_batch", "x_lead"), CASES)
def test_parameters_and_entropy_per_member(rng, mean_shape, cov_batch, x_lead):
    d = mean_shape[-1]
    mean, cov = rng.normal(size=mean_shape), random_spd(rng, cov_batch, d)
    p = MultivariateNormal(mean, cov)
    batch = p.batch_shape
    means = np.broadcast_to(mean, (*batch, d))
    covs = np.broadcast_to(cov, (*batch, d, d))
    m, S, v, L, J, h = p.mean, p.cov, p.var, p.scale_tril, p.precision, p.entropy()
    assert m.shape == v.shape == (*batch, d)
    assert S.shape == J.shape == L.shape == (*batch, d, d)
    assert h.shape == batch
    for b in np.ndindex(*batch):
        single = MultivariateNormal(means[b], covs[b])
        np.testing.assert_array_equal(m[b], means[b])
        np.testing.assert_allclose(S[b], covs[b], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(v[b], np.diag(covs[b]), rtol=1e-12)
        np.testing.assert_allclose(L[b], single.scale_tril, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(J[b], single.precision, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(J[b] @ covs[b], np.eye(d), atol=1e-10)
        assert h[b] == pytest.approx(single.entropy(), rel=1e-13)
        assert h[b] == pytest.approx(st.multivariate_normal.entropy(cov=covs[b]), rel=1e-12)


@given(
    shapes=mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=3),
    d=hst.integers(1, 3),
    seed=hst.integers(0, 2**32 - 1),
)
def test_any_broadcastable_shapes_match_the_loop(shapes, d, seed):
    rng = np.random.default_rng(seed)
    mean_b, cov_b, x_b = shapes.input_shapes
    mean, cov = rng.normal(size=(*mean_b, d)), random_spd(rng, cov_b, d)
    x = rng.normal(size=(*x_b, d))
    p = MultivariateNormal(mean, cov)
    logp, maha2, _ = reference(mean, cov, x)
    assert p.logpdf(x).shape == shapes.result_shape
    np.testing.assert_allclose(p.logpdf(x), logp, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(p.mahalanobis(x) ** 2, maha2, rtol=1e-11, atol=1e-11)


def test_shared_parameter_is_stored_once(rng):
    # A batch of means with one covariance: the factor is one (d, d) array seen through a
    # zero-stride view, not a copy per member (and the converse for one mean).
    p = MultivariateNormal(rng.normal(size=(1000, 3)), random_spd(rng, (), 3))
    assert p.scale_tril.shape == (1000, 3, 3) and p.scale_tril.strides[0] == 0
    q = MultivariateNormal(np.zeros(3), random_spd(rng, (1000,), 3))
    assert q.mean.shape == (1000, 3) and q.mean.strides[0] == 0
    # Parameters stay immutable through the views.
    assert not p.scale_tril.flags.writeable and not q.mean.flags.writeable


def test_one_dimensional_batch_against_univariate_normal(rng):
    mu, sd = rng.normal(size=4), rng.uniform(0.5, 2.0, size=4)
    p = MultivariateNormal(mu[:, None], (sd**2)[:, None, None])
    x = rng.normal(size=(6, 4, 1))
    np.testing.assert_allclose(p.logpdf(x), st.norm(mu, sd).logpdf(x[..., 0]), rtol=1e-12)
    np.testing.assert_allclose(p.entropy(), st.norm(mu, sd).entropy(), rtol=1e-12)


def test_single_distribution_is_unchanged(rng):
    # No batch: batch_shape () and the same return types as before batching.
    S, m = random_spd(rng, (), 3), rng.normal(size=3)
    p = MultivariateNormal(m, S)
    assert p.batch_shape == () and p.event_shape == (3,)
    assert isinstance(p.entropy(), float)
    assert p.mean is p.mean and p.mean.shape == (3,)
    assert p.sample(rng=0).shape == (3,) and p.sample(5, rng=0).shape == (5, 3)
    # A batch of one member gives the single distribution's numbers.
    x = rng.normal(size=(4, 3))
    q = MultivariateNormal(m[None], S[None])
    np.testing.assert_allclose(q.logpdf(x[:, None]), p.logpdf(x)[:, None], rtol=1e-14)


@pytest.mark.parametrize(
    ("size", "expected"),
    [(None, (2, 4, 3)), (5, (5, 2, 4, 3)), ((5, 6), (5, 6, 2, 4, 3)), ((), (2, 4, 3))],
)
def test_sample_shapes(rng, size, expected):
    p = MultivariateNormal(rng.normal(size=(2, 1, 3)), random_spd(rng, (4,), 3))
    assert p.sample(size, rng=0).shape == expected


@pytest.mark.parametrize(
    ("mean_shape", "cov_batch"), [((3, 2), ()), ((2,), (3,)), ((2, 1, 2), (3,))]
)
def test_sample_moments_per_member(rng, mean_shape, cov_batch):
    p = MultivariateNormal(rng.normal(size=mean_shape), random_spd(rng, cov_batch, 2))
    n = 20_000
    X = p.sample(n, rng=np.random.default_rng(3))
    assert X.shape == (n, *p.batch_shape, 2)
    for b in np.ndindex(*p.batch_shape):
        Xb, S = X[(slice(None), *b)], p.cov[b]
        # Standard error of the sample mean sqrt(S_ii / n); of the sample covariance entry
        # (i, j) of a Gaussian sqrt((S_ii S_jj + S_ij^2) / n). 5 standard errors.
        assert np.all(np.abs(Xb.mean(0) - p.mean[b]) < 5 * np.sqrt(np.diag(S) / n))
        se = np.sqrt((np.outer(np.diag(S), np.diag(S)) + S**2) / n)
        assert np.all(np.abs(np.cov(Xb.T) - S) < 5 * se)
    # The members are independent: the cross-covariance between two members is ~0.
    flat = X.reshape(n, -1, 2)
    cross = np.cov(flat[:, 0, 0], flat[:, -1, 0])[0, 1]
    bound = np.sqrt(p.cov.reshape(-1, 2, 2)[0, 0, 0] * p.cov.reshape(-1, 2, 2)[-1, 0, 0] / n)
    assert abs(cross) < 5 * bound


def test_bad_parameters(rng):
    good = random_spd(rng, (3,), 2)
    with pytest.raises(ValueError, match="shape"):
        MultivariateNormal(np.zeros((3, 3)), good)  # d = 3 against 2 x 2 covariances
    with pytest.raises(ValueError, match="do not broadcast"):
        MultivariateNormal(np.zeros((4, 2)), good)
    with pytest.raises(ValueError, match="do not broadcast"):
        MultivariateNormal(np.zeros((4, 2)), scale_tril=np.linalg.cholesky(good))
    bad = good.copy()
    bad[1] = [[1.0, 2.0], [2.0, 1.0]]
    with pytest.raises(ValueError, match=r"cov\[1\] is not positive definite"):
        MultivariateNormal(np.zeros(2), bad)
    bad2 = np.broadcast_to(good, (2, 3, 2, 2)).copy()
    bad2[1, 2] = [[1.0, 0.0], [0.0, -1.0]]
    with pytest.raises(ValueError, match=r"cov\[1, 2\] is not positive definite"):
        MultivariateNormal(np.zeros(2), bad2)
    asym = good.copy()
    asym[2, 0, 1] += 1.0
    with pytest.raises(ValueError, match=r"cov\[2\] is not symmetric"):
        MultivariateNormal(np.zeros(2), asym)
    L = np.linalg.cholesky(good)
    L[2, 1, 1] = -1.0
    with pytest.raises(ValueError, match=r"strictly positive diagonal \(batch member \[2\]\)"):
        MultivariateNormal(np.zeros(2), scale_tril=L)
    mean = np.zeros((3, 2))
    mean[1, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        MultivariateNormal(mean, good)
    nan_cov = good.copy()
    nan_cov[0, 0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinity"):
        MultivariateNormal(np.zeros(2), nan_cov)
    with pytest.raises(ValueError, match="empty"):
        MultivariateNormal(np.zeros((0, 2)), np.eye(2))
    # The canonical-form constructors build a single distribution only.
    with pytest.raises(ValueError, match="1-D"):
        MultivariateNormal.from_precision(np.zeros((3, 2)), np.eye(2))
    with pytest.raises(ValueError, match="1-D"):
        MultivariateNormal.from_canonical(np.zeros((3, 2)), np.eye(2))


def test_jitter_names_the_member(rng):
    covs = random_spd(rng, (3,), 2)
    covs[1] = [[1.0, 1.0], [1.0, 1.0]]  # singular: positive semi-definite
    with pytest.warns(NumericalWarning, match=r"cov\[1\]"):
        p = MultivariateNormal(np.zeros(2), covs, jitter="auto")
    assert np.all(np.isfinite(p.logpdf(np.zeros(2))))


def test_bad_points(rng):
    p = MultivariateNormal(rng.normal(size=(4, 3)), random_spd(rng, (), 3))
    with pytest.raises(ValueError, match="last dimension"):
        p.logpdf(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="does not broadcast"):
        p.logpdf(np.zeros((5, 3)))
    with pytest.raises(ValueError, match="NaN"):
        p.logpdf(np.full((4, 3), np.nan))
    q = MultivariateNormal(np.zeros(3), random_spd(rng, (4,), 3))
    with pytest.raises(ValueError, match="does not broadcast"):
        q.mahalanobis(np.zeros((2, 3)))


def test_gaussian_algebra_rejects_batches(rng):
    p = MultivariateNormal(rng.normal(size=(4, 2)), np.eye(2))
    single = MultivariateNormal(np.zeros(2), np.eye(2))
    calls = [
        lambda: p.marginal([0]),
        lambda: p.condition([0], [1.0]),
        lambda: p.affine(np.eye(2)),
        lambda: p.add_independent(single),
        lambda: single.add_independent(p),
        lambda: p + np.ones(2),
        lambda: p.multiply(single),
        lambda: single.multiply(p),
        lambda: single * p,
        lambda: p.to_canonical(),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="batching is not supported"):
            call()
    assert "MultivariateNormal(mean=" in repr(p)
