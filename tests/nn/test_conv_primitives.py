"""conv2d, max_pool2d and avg_pool2d primitives: forward against a loop over the defining sum,
VJPs against central finite differences (float64), both against PyTorch where installed."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from mathlearn import autodiff as ad
from mathlearn.autodiff import _nn_primitives

GEOMETRIES = [
    dict(stride=1, padding=0, dilation=1),
    dict(stride=2, padding=1, dilation=1),
    dict(stride=(1, 2), padding=(2, 1), dilation=(2, 1)),
]


def _conv_loop(x, w, stride, padding, dilation):
    """``y[n,o,i,j] = sum_{c,a,b} w[o,c,a,b] x_pad[n,c,s i + d a, s j + d b]``, term by term."""
    (sh, sw), (ph, pw), (dh, dw) = (np.broadcast_to(v, 2) for v in (stride, padding, dilation))
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, _, h, wd = xp.shape
    o, _, kh, kw = w.shape
    ho = (h - dh * (kh - 1) - 1) // sh + 1
    wo = (wd - dw * (kw - 1) - 1) // sw + 1
    y = np.zeros((n, o, ho, wo))
    for i in range(ho):
        for j in range(wo):
            for a in range(kh):
                for b in range(kw):
                    patch = xp[:, :, sh * i + dh * a, sw * j + dw * b]  # (n, c)
                    y[:, :, i, j] += patch @ w[:, :, a, b].T
    return y


@pytest.mark.parametrize("geom", GEOMETRIES)
def test_conv2d_forward_matches_the_defining_sum(rng, geom):
    x = rng.standard_normal((2, 3, 7, 6))
    w = rng.standard_normal((4, 3, 3, 2))
    np.testing.assert_allclose(
        ad.conv2d(x, w, **geom), _conv_loop(x, w, **geom), rtol=1e-12, atol=1e-12
    )


@pytest.mark.parametrize("geom", GEOMETRIES)
def test_conv2d_vjp_matches_finite_differences(rng, geom):
    x = rng.standard_normal((2, 2, 6, 5))
    w = rng.standard_normal((3, 2, 2, 3))
    seed = rng.standard_normal(ad.conv2d(x, w, **geom).shape)
    res = ad.check_grad(
        lambda p: ad.sum(ad.conv2d(p["x"], p["w"], **geom) * seed), {"x": x, "w": w}
    )
    assert res.ok, str(res)


@pytest.mark.parametrize("geom", GEOMETRIES[1:])
def test_conv2d_batch_split_between_threads(rng, geom, monkeypatch):
    # With two BLAS threads (and the work threshold set to 0: these images are small) a
    # batch of 40 images is split in two blocks, one per thread;
    # the result must be that of the defining sum, the gradients those of one block (which
    # the finite-difference test covers), up to the order of BLAS sums.
    monkeypatch.setattr(_nn_primitives, "_MIN_CONV_WORK", 0)
    x = rng.standard_normal((40, 2, 6, 5))
    w = rng.standard_normal((3, 2, 2, 3))
    seed = rng.standard_normal(ad.conv2d(x, w, **geom).shape)

    def grads():
        return ad.grad(lambda p: ad.sum(ad.conv2d(p["x"], p["w"], **geom) * seed))(
            {"x": x, "w": w}
        )

    with threadpool_limits(limits=2, user_api="blas"):
        y = ad.conv2d(x, w, **geom)
        g2 = grads()
    with threadpool_limits(limits=1, user_api="blas"):
        g1 = grads()
    np.testing.assert_allclose(y, _conv_loop(x, w, **geom), rtol=1e-12, atol=1e-12)
    for key in ("x", "w"):
        np.testing.assert_allclose(g2[key], g1[key], rtol=1e-12, atol=1e-12)


def test_conv2d_keeps_float32(rng):
    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    w = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    g = ad.grad(lambda p: ad.sum(ad.conv2d(p["x"], p["w"], padding=1)))({"x": x, "w": w})
    assert ad.conv2d(x, w).dtype == np.float32
    assert g["x"].dtype == np.float32 and g["w"].dtype == np.float32


@pytest.mark.parametrize(
    "x_shape, w_shape, kwargs, match",
    [
        ((3, 5, 5), (2, 3, 3, 3), {}, "rank 3"),
        ((1, 2, 5, 5), (2, 3, 3, 3), {}, "2 channels"),
        ((1, 3, 2, 2), (2, 3, 3, 3), {}, "does not fit"),
        ((1, 3, 5, 5), (2, 3, 3, 3), {"stride": (1, 1, 1)}, "pair"),
    ],
)
def test_conv2d_bad_shapes_raise(x_shape, w_shape, kwargs, match):
    with pytest.raises(ValueError, match=match):
        ad.conv2d(np.zeros(x_shape), np.zeros(w_shape), **kwargs)


def _pool_loop(x, k, s, p, reduce, fill):
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])), constant_values=fill)
    ho = (xp.shape[2] - k[0]) // s[0] + 1
    wo = (xp.shape[3] - k[1]) // s[1] + 1
    y = np.empty((*x.shape[:2], ho, wo))
    for i in range(ho):
        for j in range(wo):
            win = xp[:, :, s[0] * i : s[0] * i + k[0], s[1] * j : s[1] * j + k[1]]
            y[:, :, i, j] = reduce(win, axis=(2, 3))
    return y


POOLS = [((2, 2), None, (0, 0)), ((3, 3), (2, 2), (1, 1)), ((2, 3), (1, 1), (1, 1))]


@pytest.mark.parametrize("kernel, stride, padding", POOLS)
@pytest.mark.parametrize(
    "pool, reduce, fill", [(ad.max_pool2d, np.max, -np.inf), (ad.avg_pool2d, np.mean, 0.0)]
)
def test_pool_forward_and_vjp(rng, pool, reduce, fill, kernel, stride, padding):
    x = rng.standard_normal((2, 2, 6, 7))
    y = pool(x, kernel, stride=stride, padding=padding)
    np.testing.assert_allclose(
        y, _pool_loop(x, kernel, stride or kernel, padding, reduce, fill), rtol=1e-14
    )
    seed = rng.standard_normal(y.shape)
    # Continuous random data has no ties, so the max is differentiable at x.
    res = ad.check_grad(
        lambda t: ad.sum(pool(t, kernel, stride=stride, padding=padding) * seed), x
    )
    assert res.ok, str(res)


def test_max_pool_ties_send_the_gradient_to_the_first_maximiser():
    x = np.ones((1, 1, 2, 2))
    g = ad.grad(lambda t: ad.sum(ad.max_pool2d(t, 2)))(x)
    np.testing.assert_array_equal(g[0, 0], [[1.0, 0.0], [0.0, 0.0]])


def test_pool_bad_input_raises():
    with pytest.raises(ValueError, match="rank 2"):
        ad.max_pool2d(np.zeros((4, 4)), 2)
    with pytest.raises(ValueError, match="half the kernel"):
        ad.avg_pool2d(np.zeros((1, 1, 4, 4)), 2, padding=2)
    with pytest.raises(ValueError, match="does not fit"):
        ad.max_pool2d(np.zeros((1, 1, 2, 2)), 3)


def test_second_order_is_refused(rng):
    w = rng.standard_normal((1, 1, 2, 2))
    with pytest.raises(NotImplementedError, match="first-order"):
        ad.hessian(lambda t: ad.sum(ad.conv2d(t, w) ** 2))(rng.standard_normal((1, 1, 3, 3)))


@pytest.mark.parametrize("geom", GEOMETRIES)
def test_conv2d_and_pools_match_torch(rng, geom):
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    F = torch.nn.functional
    x = rng.standard_normal((2, 3, 8, 7))
    w = rng.standard_normal((4, 3, 3, 2))
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    ty = F.conv2d(tx, tw, **geom)
    ty = F.max_pool2d(ty, 2, stride=1) + F.avg_pool2d(ty, 2, stride=1)
    seed = rng.standard_normal(ty.shape)
    (ty * torch.tensor(seed)).sum().backward()

    def f(p):
        y = ad.conv2d(p["x"], p["w"], **geom)
        y = ad.max_pool2d(y, 2, stride=1) + ad.avg_pool2d(y, 2, stride=1)
        return ad.sum(y * seed), y

    (_, y), g = (
        f({"x": x, "w": w}),
        ad.grad(lambda p: f(p)[0])({"x": x, "w": w}),
    )
    # Double precision, a few dozen terms per entry: agreement to ~1e-13 relative.
    np.testing.assert_allclose(y, ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g["x"], tx.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g["w"], tw.grad.numpy(), rtol=1e-12, atol=1e-11)
