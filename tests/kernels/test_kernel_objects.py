"""Kernel objects: PSD Gram matrices, log-space gradients, algebra, limits, the peer's kernels."""

import tracemalloc

import numpy as np
import pytest
import sklearn.gaussian_process.kernels as skk
from sklearn.base import clone

from mathlearn.decomposition import KernelPCA
from mathlearn.kernels import (
    KERNEL_NAMES,
    RBF,
    ConstantKernel,
    DotProduct,
    Exponential,
    Exponentiation,
    ExpSineSquared,
    GammaExponential,
    Kernel,
    Linear,
    Matern,
    Polynomial,
    Product,
    RationalQuadratic,
    Sigmoid,
    Sum,
    WhiteKernel,
    get_kernel,
)

EPS = np.finfo(float).eps


def _kernels():
    return [
        ConstantKernel(2.5),
        WhiteKernel(0.3),
        Linear(),
        DotProduct(0.7),
        Polynomial(degree=3, gamma=0.4, coef0=1.2),
        Exponential(0.2),
        RBF(1.3),
        RBF([0.8, 1.5, 2.0]),
        Matern(1.1, nu=0.5),
        Matern([0.9, 1.2, 1.7], nu=1.5),
        Matern(0.8, nu=2.5),
        Matern(1.4, nu=0.7),
        Matern([1.0, 0.6, 2.0], nu=3.3),
        Matern(1.2, nu=np.inf),
        RationalQuadratic(1.1, alpha=0.6),
        RationalQuadratic([0.7, 1.1, 1.6], alpha=2.0),
        GammaExponential(1.2, gamma=1.3),
        GammaExponential([0.9, 1.1, 1.5], gamma=0.8),
        ExpSineSquared(1.3, periodicity=2.2),
        ConstantKernel(1.7) * RBF([1.0, 2.0, 0.5]) + WhiteKernel(0.1),
        RBF(1.2) * ExpSineSquared(0.9, 1.7) + DotProduct(0.5) ** 2,
        RationalQuadratic(0.9, 1.5) + Matern(0.8, nu=2.5),
        3.0 * Matern(1.0, nu=1.5) + 0.5,
    ]


KERNELS = _kernels()
IDS = [repr(k)[:60] for k in KERNELS]


@pytest.fixture
def X(rng):
    return rng.normal(size=(25, 3))


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_gram_psd_symmetric_and_diag(kernel, X):
    if "ExpSineSquared" in repr(kernel):
        X = X[:, :1]  # PSD on one feature (the Euclidean-distance form is not, for several)
    K = kernel(X)
    assert K.shape == (25, 25)
    np.testing.assert_allclose(K, K.T, rtol=4 * EPS, atol=4 * EPS)
    lam = np.linalg.eigvalsh(K)
    # rounding in the Gram matrix perturbs eigenvalues by O(N eps ||K||)
    assert lam.min() >= -25 * 25 * EPS * max(np.abs(lam).max(), 1.0)
    np.testing.assert_allclose(kernel.diag(X), np.diag(K), rtol=1e-12, atol=1e-14)
    Y = X[:7] + 0.1
    if "White" not in repr(kernel):  # white noise is independent across two input sets
        np.testing.assert_allclose(kernel(X, X), K, rtol=1e-12, atol=1e-12)
    assert kernel(X, Y).shape == (25, 7)


def test_sigmoid_is_not_psd(rng):
    # documented: tanh(gamma x^T y + c) is not a positive semi-definite kernel in general
    X = rng.normal(size=(30, 2))
    assert np.linalg.eigvalsh(Sigmoid(gamma=1.0, coef0=1.0)(X)).min() < -1e-3


@pytest.mark.parametrize("kernel", [*KERNELS, Sigmoid(0.3, 0.2)], ids=[*IDS, "Sigmoid"])
def test_gradient_matches_finite_differences(kernel, X):
    K, dK = kernel(X, eval_gradient=True)
    theta = kernel.theta
    assert dK.shape == (25, 25, theta.size)
    np.testing.assert_array_equal(K, kernel(X))
    h = 1e-6
    for j in range(theta.size):
        tp, tm = theta.copy(), theta.copy()
        tp[j] += h
        tm[j] -= h
        fd = (kernel.clone_with_theta(tp)(X) - kernel.clone_with_theta(tm)(X)) / (2 * h)
        # central differences: O(h^2) truncation + O(eps / h) rounding on entries of order |K|
        scale = np.abs(K).max()
        np.testing.assert_allclose(dK[..., j], fd, rtol=1e-6, atol=1e-7 * scale)


@pytest.mark.parametrize("kernel", KERNELS, ids=IDS)
def test_theta_roundtrip_and_clone(kernel):
    theta = kernel.theta
    assert kernel.bounds.shape == (theta.size, 2)
    assert kernel.n_dims == theta.size
    new = kernel.clone_with_theta(theta + 0.1)
    np.testing.assert_allclose(new.theta, theta + 0.1)
    np.testing.assert_allclose(kernel.theta, theta)  # the original is untouched
    c = clone(kernel)
    assert c == kernel and c is not kernel
    assert sum(h.n_elements for h in kernel.hyperparameters if not h.fixed) == theta.size


def test_fixed_hyperparameters_leave_theta():
    k = RationalQuadratic(1.5, alpha=2.0, alpha_bounds="fixed")
    np.testing.assert_allclose(k.theta, [np.log(1.5)])
    assert [h.fixed for h in k.hyperparameters] == [True, False]  # alpha, length_scale
    X = np.random.default_rng(0).normal(size=(5, 2))
    assert k(X, eval_gradient=True)[1].shape == (5, 5, 1)
    assert Polynomial().n_dims == 0 and Sigmoid().theta.shape == (0,)
    np.testing.assert_allclose(
        RBF([1.0, 2.0], length_scale_bounds=[(1e-2, 1e2), (1, 10)]).bounds,
        np.log([[1e-2, 1e2], [1, 10]]),
    )


def test_nested_params_and_estimator_set_params():
    k = ConstantKernel(2.0) * RBF(1.0) + WhiteKernel(0.1)
    p = k.get_params()
    assert p["k1__k2__length_scale"] == 1.0 and p["k2__noise_level"] == 0.1
    k.set_params(k1__k2__length_scale=3.0)
    assert k.k1.k2.length_scale == 3.0
    kpca = KernelPCA(n_components=2, kernel=RBF(1.0) + WhiteKernel(0.1))
    kpca.set_params(kernel__k1__length_scale=2.5)
    assert kpca.kernel.k1.length_scale == 2.5
    assert "kernel__k1__length_scale" in kpca.get_params()
    c = clone(kpca)
    assert c.kernel == kpca.kernel and c.kernel is not kpca.kernel
    with pytest.raises(ValueError, match="no hyperparameter"):
        k.set_params(k3=1.0)


def test_algebra_identities(X):
    k1, k2 = RBF([1.0, 2.0, 0.5]), DotProduct(0.7)
    for combo, value in [
        (k1 + k2, k1(X) + k2(X)),
        (k1 * k2, k1(X) * k2(X)),
        (k2**3, k2(X) ** 3),
        (2.0 * k1, 2.0 * k1(X)),
        (k1 + 1.0, k1(X) + 1.0),
    ]:
        np.testing.assert_allclose(combo(X), value, rtol=1e-13)
    # k**2 and k*k: same values; the product's gradient has two copies of k's summed
    K2, G2 = (k1**2)(X, eval_gradient=True)
    KK, GK = (k1 * k1)(X, eval_gradient=True)
    np.testing.assert_allclose(K2, KK, rtol=1e-13)
    np.testing.assert_allclose(G2, GK[..., :3] + GK[..., 3:], rtol=1e-12, atol=1e-15)
    assert isinstance(k1 + k2, Sum) and isinstance(k1 * k2, Product)
    assert isinstance(k1**2, Exponentiation) and (2.0 * k1).k1 == ConstantKernel(2.0)
    assert (k1 + k2).theta.size == 4


def test_notes_values_at_unit_distance():
    # Oxford notes' worked values at r = ||x - x'|| = 1, gamma = 1
    x, y = np.zeros((1, 2)), np.array([[0.6, 0.8]])
    assert RBF(1.0)(x, y)[0, 0] == pytest.approx(0.606531, abs=5e-7)
    for nu, v in [(0.5, 0.367879), (1.5, 0.483358), (2.5, 0.523994), (50.0, 0.601980)]:
        assert Matern(1.0, nu=nu)(x, y)[0, 0] == pytest.approx(v, abs=5e-7)
    # RQ with alpha = 1, beta = 2 alpha gamma^2 = 2: (1 + 1/2)^-1
    assert RationalQuadratic(1.0, alpha=1.0)(x, y)[0, 0] == pytest.approx(2 / 3, rel=1e-15)
    # (x^T x' + 1)^2 = phi(x)^T phi(x') = 1.0 at x = (0.3, -1.2), x' = (2, 0.5)
    a, b = np.array([[0.3, -1.2]]), np.array([[2.0, 0.5]])
    assert Polynomial(2, gamma=1.0, coef0=1.0)(a, b)[0, 0] == pytest.approx(1.0, rel=1e-14)
    assert (DotProduct(1.0) ** 2)(a, b)[0, 0] == pytest.approx(1.0, rel=1e-14)
    # x^T x' + (x^T x')^2 = 2 at x = (1, 2), x' = (3, -1)
    a, b = np.array([[1.0, 2.0]]), np.array([[3.0, -1.0]])
    assert (Linear() + Linear() ** 2)(a, b)[0, 0] == 2.0


def test_matern_bessel_form_agrees_with_closed_forms(X):
    # the general form is continuous in nu: evaluate it next to each closed-form nu
    for nu in (0.5, 1.5, 2.5):
        K = Matern(1.3, nu=nu)(X)
        Kb, Gb = Matern(1.3, nu=nu * (1 + 1e-13))(X, eval_gradient=True)
        np.testing.assert_allclose(Kb, K, rtol=1e-11, atol=1e-13)
        G = Matern(1.3, nu=nu)(X, eval_gradient=True)[1]
        np.testing.assert_allclose(Gb, G, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(np.diag(Matern(1.0, nu=0.9)(X)), 1.0)


def test_limits_to_rbf(X):
    Krbf = RBF(1.1)(X)
    np.testing.assert_array_equal(Matern(1.1, nu=np.inf)(X), Krbf)
    errs = [np.abs(Matern(1.1, nu=nu)(X) - Krbf).max() for nu in (5.0, 20.0, 50.0)]
    # the Matern kernel approaches the RBF at rate O(1/nu): ratios 1/4 and 2/5
    assert errs[1] < 0.3 * errs[0] and errs[2] < 0.45 * errs[1]
    # RQ: -alpha log(1 + q / 2 alpha) = -q/2 + q^2 / (8 alpha) + O(alpha^-2)
    alpha = 1e6
    q = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / 1.1**2
    bound = Krbf * q**2 / (8 * alpha) * 1.01 + 1e-13
    assert np.all(np.abs(RationalQuadratic(1.1, alpha=alpha)(X) - Krbf) <= bound)
    # gamma-exponential with gamma = 2 is exp(-r^2 / l^2) = RBF(l / sqrt 2)
    np.testing.assert_allclose(
        GammaExponential(1.1, gamma=2.0)(X), RBF(1.1 / np.sqrt(2))(X), rtol=1e-13
    )
    np.testing.assert_allclose(
        GammaExponential(1.1, gamma=1.0)(X), Matern(1.1, nu=0.5)(X), rtol=1e-13
    )


PAIRS = [
    (RBF(1.3), skk.RBF(1.3)),
    (RBF([0.8, 1.5, 2.0]), skk.RBF([0.8, 1.5, 2.0])),
    (Matern(1.1, nu=0.5), skk.Matern(1.1, nu=0.5)),
    (Matern([0.9, 1.2, 1.7], nu=1.5), skk.Matern([0.9, 1.2, 1.7], nu=1.5)),
    (Matern(0.8, nu=2.5), skk.Matern(0.8, nu=2.5)),
    (Matern(1.2, nu=np.inf), skk.Matern(1.2, nu=np.inf)),
    (RationalQuadratic(1.1, alpha=0.6), skk.RationalQuadratic(1.1, alpha=0.6)),
    (ExpSineSquared(1.3, 2.2), skk.ExpSineSquared(1.3, 2.2)),
    (DotProduct(0.7), skk.DotProduct(0.7)),
    (ConstantKernel(2.5), skk.ConstantKernel(2.5)),
    (WhiteKernel(0.3), skk.WhiteKernel(0.3)),
    (
        ConstantKernel(1.7) * RBF([1.0, 2.0, 0.5]) + WhiteKernel(0.1),
        skk.ConstantKernel(1.7) * skk.RBF([1.0, 2.0, 0.5]) + skk.WhiteKernel(0.1),
    ),
    (
        DotProduct(0.5) ** 2 + RationalQuadratic(0.9, 1.5),
        skk.DotProduct(0.5) ** 2 + skk.RationalQuadratic(0.9, 1.5),
    ),
]


@pytest.mark.parametrize(("ours", "peer"), PAIRS, ids=[repr(p[1])[:50] for p in PAIRS])
def test_agrees_with_sklearn_kernels(ours, peer, X, rng):
    Y = rng.normal(size=(6, 3))
    np.testing.assert_allclose(ours(X, Y), peer(X, Y), rtol=1e-12, atol=1e-13)
    K, G = ours(X, eval_gradient=True)
    Kp, Gp = peer(X, eval_gradient=True)
    np.testing.assert_allclose(K, Kp, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(G, Gp, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.theta, peer.theta, rtol=1e-15)
    np.testing.assert_allclose(ours.bounds, peer.bounds, rtol=1e-15)
    np.testing.assert_allclose(ours.diag(X), peer.diag(X), rtol=1e-13)
    assert ours.is_stationary() == peer.is_stationary()


def test_get_kernel():
    assert get_kernel("rbf", gamma=0.5) == RBF(1.0)
    assert get_kernel("poly", degree=2) == Polynomial(degree=2)
    k = RBF(2.0) + WhiteKernel()
    g = get_kernel(k, k1__length_scale=3.0)
    assert g.k1.length_scale == 3.0 and k.k1.length_scale == 2.0  # a copy, never mutated
    for name in KERNEL_NAMES:
        assert isinstance(get_kernel(name), Kernel)
    with pytest.raises(ValueError, match="one of"):
        get_kernel("laplace")
    with pytest.raises(ValueError, match="no hyperparameter"):
        get_kernel("rbf", degree=3)
    for bad in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="gamma must be > 0"):
            get_kernel("rbf", gamma=bad)


def test_extreme_length_scales_and_far_data(rng):
    X = rng.normal(size=(12, 3))
    for kernel in (
        RBF(1e-300),
        Matern(1e-300, nu=1.5),
        RationalQuadratic(1e-300),
        GammaExponential(1e-300),
        Matern([1e-300, 1.0, 1.0], nu=0.7),
        ExpSineSquared(1e-300, 1.3),
    ):
        K, G = kernel(X, eval_gradient=True)
        np.testing.assert_array_equal(K, np.eye(12))  # the l -> 0 limit
        assert np.all(np.isfinite(G)) and np.all(G == 0)
    for kernel in (RBF(1e300), Matern(1e300, nu=2.5), RationalQuadratic(1e300)):
        np.testing.assert_array_equal(kernel(X), np.ones((12, 12)))
    # far from the origin: the centred computation keeps the peer's (difference-form) accuracy
    Xf = X + 1e8
    np.testing.assert_allclose(RBF([0.5, 1, 2])(Xf), skk.RBF([0.5, 1, 2])(Xf), atol=1e-12)
    Xh = X * 1e200
    np.testing.assert_allclose(RBF(1e200)(Xh), RBF(1.0)(X), rtol=1e-12)


@pytest.mark.parametrize(
    ("kernel", "match"),
    [
        (RBF(np.nan), "length_scale"),
        (RBF(np.inf), "length_scale"),
        (RBF(-1.0), "length_scale"),
        (RBF([1.0, -2.0, 1.0]), "length_scale"),
        (RBF([1.0, 2.0]), "2 entries but X has 3 features"),
        (RBF(1.0, length_scale_bounds=(2.0, 1.0)), "bounds"),
        (Matern(nu=-1.0), "nu"),
        (Matern(nu=np.nan), "nu"),
        (RationalQuadratic(alpha=0.0), "alpha"),
        (GammaExponential(gamma=2.5), "gamma"),
        (Polynomial(gamma=np.nan), "gamma"),
        (Polynomial(coef0=np.inf), "coef0"),
        (Sigmoid(gamma=np.inf), "gamma"),
        (Sigmoid(coef0=np.nan), "coef0"),
        (Exponential(gamma=1e5), "overflowed"),
        (Matern(nu=1e4), "overflowed"),
        (RBF(1.0 + 2.0j), "real"),
        (RBF() ** np.nan, "exponent"),
    ],
)
def test_bad_hyperparameters(kernel, match):
    X = np.random.default_rng(0).normal(size=(4, 3))
    with pytest.raises(ValueError, match=match):
        kernel(X)


def test_gamma_property_and_hash_at_extremes():
    assert RBF(1e-300).gamma == np.inf and RBF(1e300).gamma == 0.0
    assert RBF(2.0).gamma == 0.125
    assert hash(RBF([1.0, 2.0])) == hash(RBF(np.array([1.0, 2.0])))
    assert RBF([1.0, 2.0]) == RBF(np.array([1.0, 2.0])) != RBF([1.0, 3.0])
    assert len({RBF(1.0) + WhiteKernel(), RBF(1.0) + WhiteKernel()}) == 1


def test_bad_inputs():
    X = np.ones((3, 2))
    with pytest.raises(ValueError, match="complex"):
        RBF()(X + 1j)
    with pytest.raises(ValueError, match="complex"):
        Linear()(X, X + 0j)
    with pytest.raises(ValueError, match="Y=None"):
        RBF()(X, X, eval_gradient=True)
    with pytest.raises(ValueError, match="NaN"):
        Matern().diag(np.array([[np.inf, 1.0]]))
    with pytest.raises(ValueError, match="theta has"):
        RBF().clone_with_theta([0.0, 1.0])


def test_no_three_way_temporaries(rng):
    X, Y = rng.normal(size=(200, 300)), rng.normal(size=(150, 300))
    ls = rng.uniform(0.5, 2.0, size=300)
    for k in (RBF(ls), Matern(ls, nu=2.5), RationalQuadratic(ls)):
        tracemalloc.start()
        k(X, Y)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        # an (N, M, D) temporary would need 72 MB; the Gram route needs a few (N, M) arrays
        assert peak < 4e6
    X = rng.normal(size=(100, 40))
    tracemalloc.start()
    RBF(rng.uniform(0.5, 2.0, size=40))(X, eval_gradient=True)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 1.3 * 100 * 100 * 40 * 8  # the (N, N, D) output and (N, N) work arrays


@pytest.mark.parametrize(
    "kernel",
    [
        RBF(1.3),
        RBF([0.7, 2.0, 1.1]),
        Matern(0.9, nu=2.5),
        Matern([0.5, 1.0, 2.0], nu=1.5),
        RationalQuadratic(1.2, alpha=0.7),
    ],
    ids=repr,
)
def test_profile_applied_by_blocks_matches_whole_array(kernel, monkeypatch):
    """Without a gradient (and above a size, here lowered to 0) the profile phi is applied to
    each block of distances as it is formed; with one, to the whole array afterwards. The
    same elementwise operations on the same distances: equal to the last bits of the
    elementwise functions (4 eps)."""
    from mathlearn.kernels import _stationary

    monkeypatch.setattr(_stationary, "_FUSE_MIN_ENTRIES", 0)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(700, 3))  # several row blocks of the symmetric product
    Y = rng.normal(size=(900, 3)) + 0.5
    K_fused = kernel(X)
    K_whole, _ = kernel(X, eval_gradient=True)
    np.testing.assert_allclose(K_fused, K_whole, rtol=4 * np.finfo(float).eps, atol=0)
    assert np.all(np.diag(K_fused) == 1.0)
    # X against Y by the same map, against the profile of the distances computed directly
    ref = kernel(np.vstack([X, Y]))[: X.shape[0], X.shape[0] :]
    np.testing.assert_allclose(kernel(X, Y), ref, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("cross", [False, True], ids=["X with X", "X with Y"])
def test_direct_differences_route(monkeypatch, cross):
    """Small problems of few features take direct differences (``_sqdist.c``). Each squared
    distance is then within (d + 2) eps of the exact sum of squared differences of the
    centred, scaled points (a Fraction sum: d differences and d squares round once each,
    then d - 1 additions of positive terms); X with itself gives an exact 0 diagonal and
    exact symmetry. The expansion (the other route, taken without the helper) errs by
    about eps (||zx||^2 + ||zy||^2) absolute: both agree within 8 d eps of that scale."""
    from fractions import Fraction

    from mathlearn.kernels import _stationary

    fn = _stationary._compiled_direct()
    if fn is None:
        pytest.skip("_sqdist not built (a source tree without `setup.py build_ext --inplace`)")
    rng = np.random.default_rng(2)
    d = 5
    X = rng.normal(size=(40, d)) * rng.uniform(0.1, 10.0, size=d) + 3.0
    X[7] = X[3]  # a duplicate: exactly 0 apart
    Y = rng.normal(size=(25, d)) if cross else None
    ls = rng.uniform(0.5, 2.0, size=d)
    Zx, Zy, _, risky, zmax = _stationary._centre_and_scale(X, Y, ls)
    assert not risky
    q, done = _stationary._sqdist(Zx, Zy, False, zmax)
    assert not done
    Zy_ = Zx if Zy is None else Zy
    eps = np.finfo(float).eps
    for i in range(0, Zx.shape[0], 3):
        for j in range(Zy_.shape[0]):
            exact = sum((Fraction(float(a)) - Fraction(float(b))) ** 2
                        for a, b in zip(Zx[i], Zy_[j], strict=True))  # fmt: skip
            assert abs(Fraction(float(q[i, j])) - exact) <= (d + 2) * eps * exact
    if not cross:
        np.testing.assert_array_equal(q, q.T)
        assert np.all(np.diag(q) == 0.0) and q[7, 3] == 0.0
    # The route for large results (both triangles, by blocks of rows, the map applied to each
    # block), here forced on small ones: the same numbers, bit for bit.
    monkeypatch.setattr(_stationary, "_DIRECT_MAX_ENTRIES", 0)
    monkeypatch.setattr(_stationary, "_DIRECT_BLOCK", 3 * Zy_.shape[0])
    blocks = []
    q_blocks, _ = _stationary._direct_sqdist(fn, Zx, Zy, post=lambda b: blocks.append(b.shape))
    np.testing.assert_array_equal(q_blocks, q)
    assert len(blocks) == -(-Zx.shape[0] // 3) and blocks[0] == (3, Zy_.shape[0])
    monkeypatch.setattr(_stationary, "_compiled_direct", lambda: None)
    q_expanded, _ = _stationary._sqdist(Zx, Zy, False, zmax)
    scale = np.max(np.sum(Zx**2, axis=1)) + np.max(np.sum(Zy_**2, axis=1))
    np.testing.assert_allclose(q, q_expanded, rtol=0, atol=8 * d * eps * scale)


def test_direct_route_is_chosen_by_cost(monkeypatch):
    """Direct differences for few features (small results: a bound on the work against the
    expansion's passes; larger ones: at most 12 features for X with itself); the expansion
    (one BLAS product) otherwise."""
    from mathlearn.kernels import _stationary

    asked = []
    monkeypatch.setattr(_stationary, "_compiled_direct", lambda: asked.append(1))
    rng = np.random.default_rng(0)
    cases = (((100, 10), True), ((50, 100), False), ((300, 2), True), ((300, 20), False))
    for shape, direct in cases:
        Z = rng.normal(size=shape) / 10
        asked.clear()
        _stationary._sqdist(Z, None, False, float(np.abs(Z).max()))
        assert bool(asked) == direct, shape


def test_scaled_direct_differences_far_from_the_origin():
    """Without centring: the points as given, 1e8 from the origin with unit spread. Each
    difference of near coordinates is exact (Sterbenz), then one product by the rounded
    ``1 / l_c`` and one square: within (d + 4) eps of the exact sum of ((y - x) / l)^2
    (Fractions). A kernel's K is the same with and without a gradient, bit for bit. A
    distance past the largest float is infinite and flagged (K = 0 there, not NaN)."""
    from fractions import Fraction

    from mathlearn.kernels import _stationary

    if _stationary._compiled_direct() is None:
        pytest.skip("_sqdist not built (a source tree without `setup.py build_ext --inplace`)")
    rng = np.random.default_rng(4)
    d = 4
    X = rng.normal(size=(30, d)) + 1e8
    Y = rng.normal(size=(11, d)) - 3e8
    ls = rng.uniform(0.3, 3.0, size=d)
    eps = np.finfo(float).eps
    for other in (None, Y):
        q, overflow = _stationary._scaled_direct_sqdist(X, other, ls)
        assert not overflow
        B = X if other is None else other
        for i in range(0, X.shape[0], 4):
            for j in range(B.shape[0]):
                exact = sum(((Fraction(float(b)) - Fraction(float(a))) / Fraction(float(lc))) ** 2
                            for a, b, lc in zip(X[i], B[j], ls, strict=True))  # fmt: skip
                assert abs(Fraction(float(q[i, j])) - exact) <= (d + 4) * eps * exact
    for kernel in (RBF(ls), Matern(ls, nu=1.5), RationalQuadratic(1.3, alpha=0.8)):
        np.testing.assert_array_equal(kernel(X, eval_gradient=True)[0], kernel(X))
        np.testing.assert_allclose(kernel(X), kernel(X - 1e8), rtol=1e-12, atol=1e-300)
    far = np.array([[-1e200, 0.0], [1e200, 0.0], [1e200, 1.0]])
    q, overflow = _stationary._scaled_direct_sqdist(far, None, np.array([1e-150, 1.0]))
    assert overflow and np.isinf(q[0, 1]) and q[1, 2] == 1.0
    K = Matern([1e-150, 1.0], nu=1.5)(far)
    assert K[0, 1] == 0.0 and np.all(np.isfinite(K)) and np.all(np.diag(K) == 1.0)
    # a length scale whose reciprocal is not a normal number: the centred route instead
    assert _stationary._scaled_direct_sqdist(far, None, np.array([1e-310, 1.0])) is None
    assert _stationary._scaled_direct_sqdist(far, None, 1e308) is None  # 1/l subnormal
