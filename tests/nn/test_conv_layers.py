"""Conv2d, MaxPool2d, AvgPool2d layers: the bias and the parameter dict on top of the tested
primitives, gradients through functional_call against finite differences, PyTorch's layers on
the same weights where installed, and bad input."""

import numpy as np
import pytest

from mathlearn import autodiff as ad
from mathlearn import nn


def test_conv_layer_is_the_primitive_plus_bias(rng):
    conv = nn.Conv2d(2, 3, (3, 2), stride=2, padding=1, dtype=np.float64, random_state=0)
    conv.bias = rng.standard_normal(3)
    x = rng.standard_normal((4, 2, 7, 6))
    expected = ad.conv2d(x, conv.weight, stride=2, padding=1) + conv.bias[:, None, None]
    np.testing.assert_allclose(conv(x), expected, rtol=1e-14)
    assert conv.weight.shape == (3, 2, 3, 2)
    assert sorted(conv.parameters()) == ["bias", "weight"]


def test_small_cnn_gradient_matches_finite_differences(rng):
    net = nn.Sequential(
        nn.Conv2d(1, 2, 3, padding=1, dtype=np.float64, random_state=0),
        nn.Tanh(),
        nn.MaxPool2d(2),
        nn.Conv2d(2, 2, 2, dtype=np.float64, random_state=1),
        nn.AvgPool2d(2, stride=1),
        nn.Flatten(),
    )
    x = rng.standard_normal((3, 1, 6, 6))
    seed = rng.standard_normal(net(x).shape)
    res = ad.check_grad(lambda p: ad.sum(nn.functional_call(net, p, x) * seed), net.parameters())
    assert res.ok, str(res)


def test_layers_refuse_images_of_the_wrong_rank():
    with pytest.raises(ValueError, match=r"\(N, C, H, W\).*rank 2"):
        nn.Conv2d(1, 2, 3)(np.zeros((8, 8), dtype=np.float32))
    with pytest.raises(ValueError, match="expects 1 input channels; got 3"):
        nn.Conv2d(1, 2, 3)(np.zeros((2, 3, 8, 8), dtype=np.float32))
    with pytest.raises(ValueError, match="rank 3"):
        nn.MaxPool2d(2)(np.zeros((2, 8, 8)))
    with pytest.raises(ValueError, match="positive"):
        nn.Conv2d(0, 2, 3)


def test_conv_layers_match_torch(rng):
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    conv = nn.Conv2d(3, 4, 3, stride=(1, 2), padding=1, dilation=(2, 1), random_state=0)
    conv.bias = rng.standard_normal(4).astype(np.float32)
    tconv = torch.nn.Conv2d(3, 4, 3, stride=(1, 2), padding=1, dilation=(2, 1))
    with torch.no_grad():
        tconv.weight.copy_(torch.from_numpy(conv.weight))
        tconv.bias.copy_(torch.from_numpy(conv.bias))
    x = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    y = nn.MaxPool2d(2, stride=1)(conv(x))
    ty = torch.nn.MaxPool2d(2, stride=1)(tconv(torch.from_numpy(x)))
    # float32, 27-term sums of O(1) numbers: a few units of float32 rounding (2^-23 ~ 1e-7).
    np.testing.assert_allclose(y, ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    ty.sum().backward()
    g = ad.grad(lambda p: ad.sum(nn.MaxPool2d(2, stride=1)(nn.functional_call(conv, p, x))))(
        conv.parameters()
    )
    np.testing.assert_allclose(g["weight"], tconv.weight.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(g["bias"], tconv.bias.grad.numpy(), rtol=1e-5, atol=1e-4)
