"""Layers and activations: the PRML-notes MLP test vector, symmetry, VJPs, train/eval modes.

References: the worked example of PRML §5.1-5.3 in the notes (every number given), central
finite differences in float64 for every VJP, closed forms (batch normalisation statistics,
dropout's expectation), and PyTorch on the same weights where it is installed.
"""

import numpy as np
import pytest

from mathlearn import autodiff as ad
from mathlearn import nn

RTOL = 1e-6  # central differences, eps 1e-6: O(eps^2) truncation, O(1e-16/eps) round-off


def _t16_net():
    # D = 2, M = 2 tanh hidden units, K = 1 linear output; column 0 of each W is the bias.
    W1 = np.array([[0.1, 0.2, -0.3], [0.0, -0.4, 0.5]])
    W2 = np.array([[0.3, -0.2, 0.6]])
    net = nn.Sequential(
        nn.Linear(2, 2, dtype=np.float64), nn.Tanh(), nn.Linear(2, 1, dtype=np.float64)
    )
    net.load_parameters(
        {"0.weight": W1[:, 1:], "0.bias": W1[:, 0], "2.weight": W2[:, 1:], "2.bias": W2[:, 0]}
    )
    return net


def test_t16_forward_backward_and_one_sgd_step():
    """Hand-computed example (PRML §5.3).

    Forward values, deltas, gradients, sign flip, loss after one step.
    """
    net = _t16_net()
    x, t = np.array([[0.5, -1.0]]), np.array([[1.0]])

    def E(p):  # E_n = 1/2 (y - t)^2
        return 0.5 * nn.mse_loss(nn.functional_call(net, p, x), t, reduction="sum")

    a1 = nn.functional_call(net[0], {}, x)
    np.testing.assert_allclose(a1, [[0.5, -0.7]], rtol=1e-14)
    np.testing.assert_allclose(np.tanh(a1), [[0.46211715726, -0.604367777117]], rtol=1e-11)
    y = net(x)
    np.testing.assert_allclose(y, [[-0.155044097722]], rtol=1e-11)
    np.testing.assert_allclose(float(E(net.parameters())), 0.6670634338415611, rtol=1e-14)

    g = ad.grad(E)(net.parameters())
    # delta_k = y - t is the output bias gradient; delta_j the hidden bias gradients.
    np.testing.assert_allclose(g["2.bias"], [-1.155044097722], rtol=1e-11)
    np.testing.assert_allclose(g["0.bias"], [0.181676362426, -0.4398913302], rtol=1e-10)
    np.testing.assert_allclose(g["2.weight"], [[-0.533765694949, 0.698071433813]], rtol=1e-11)
    np.testing.assert_allclose(
        g["0.weight"],
        [[0.090838181213, -0.181676362426], [-0.2199456651, 0.4398913302]],
        rtol=1e-10,
    )
    # delta_k is also the closed-form output gradient of 1/2 (y - t)^2.
    np.testing.assert_allclose(0.5 * nn.output_gradient("squared", y, t), [[-1.155044097722]])

    # Sign flip of every hidden unit: W1 -> -W1 and W2[:, 1:] -> -W2[:, 1:], same output.
    p = net.parameters()
    flipped = {**p, "0.weight": -p["0.weight"], "0.bias": -p["0.bias"], "2.weight": -p["2.weight"]}
    np.testing.assert_allclose(nn.functional_call(net, flipped, x), y, rtol=1e-14)

    # One SGD step with eta = 0.1 on both layers.
    stepped = {k: p[k] - 0.1 * g[k] for k in p}
    np.testing.assert_allclose(float(E(stepped)), 0.4348501893139209, rtol=1e-13)


@pytest.mark.parametrize("unit", [0, 1, 2])
def test_p19_tanh_sign_flip_of_one_unit(unit):
    """PRML §5.1.1: negating one tanh unit's input weights and bias and its outgoing weights (not
    the output bias) leaves the network function unchanged."""
    rng = np.random.default_rng(unit)
    net = nn.Sequential(
        nn.Linear(4, 3, dtype=np.float64, bias_init="uniform", random_state=rng),
        nn.Tanh(),
        nn.Linear(3, 2, dtype=np.float64, bias_init="uniform", random_state=rng),
    )
    X = rng.standard_normal((10, 4))
    p = net.parameters()
    q = {k: v.copy() for k, v in p.items()}
    q["0.weight"][unit] *= -1
    q["0.bias"][unit] *= -1
    q["2.weight"][:, unit] *= -1
    np.testing.assert_allclose(nn.functional_call(net, q, X), net(X), rtol=1e-14, atol=1e-15)
    # Flipping the output bias too would change it: the notes' sum from j = 0 is a slip.
    q["2.bias"] *= -1
    assert not np.allclose(nn.functional_call(net, q, X), net(X))


@pytest.mark.parametrize(
    "act", [nn.Tanh(), nn.ReLU(), nn.LeakyReLU(0.1), nn.Sigmoid(), nn.GELU(), nn.Identity()]
)
def test_p20_backprop_equals_finite_differences(act):
    """PRML §5.3: the gradient of a deep MLP with respect to every weight, against central
    differences (float64)."""
    rng = np.random.default_rng(1)
    net = nn.Sequential(
        nn.Linear(3, 5, dtype=np.float64, bias_init="uniform", random_state=rng),
        act,
        nn.Linear(5, 4, dtype=np.float64, bias_init="uniform", random_state=rng),
        act,
        nn.Linear(4, 3, dtype=np.float64, random_state=rng),
    )
    X = rng.standard_normal((7, 3)) + 0.05  # keeps ReLU inputs off 0 (a kink)
    y = rng.integers(0, 3, 7)
    res = ad.check_grad(
        lambda p: nn.cross_entropy(nn.functional_call(net, p, X), y), net.parameters(), rtol=RTOL
    )
    assert res.ok, str(res)


def test_linear_vjp_batched_inputs():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4))
    W = rng.standard_normal((5, 4))
    b = rng.standard_normal(5)
    c = rng.standard_normal((2, 3, 5))
    for arg in range(3):

        def f(v, arg=arg):
            args = [x, W, b]
            args[arg] = v
            return ad.sum(c * nn.linear(*args))

        res = ad.check_grad(f, [x, W, b][arg], rtol=RTOL)
        assert res.ok, str(res)

    # Differentiable twice (the VJP is written with autodiff operations): the Hessian times
    # a direction against central differences of the gradient.
    def f(w):
        return ad.sum(ad.tanh(nn.linear(x[0], ad.reshape(w, (5, 4)))))

    w0, v = W.ravel(), rng.standard_normal(20)
    H = ad.hessian(f)(w0)
    eps = 1e-5
    fd = (ad.grad(f)(w0 + eps * v) - ad.grad(f)(w0 - eps * v)) / (2 * eps)
    np.testing.assert_allclose(H @ v, fd, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ["leaky_relu", "gelu", "erf"])
def test_new_primitives_vjp(name):
    fn = getattr(ad, name)
    x = np.linspace(-3.1, 2.9, 13)
    res = ad.check_grad(lambda t: ad.sum(ad.sin(fn(t))), x, rtol=RTOL)
    assert res.ok, str(res)
    assert fn(x.astype(np.float32)).dtype == np.float32


def test_gelu_second_derivative_closed_form():
    from scipy.stats import norm

    x = np.linspace(-3, 3, 9)
    H = ad.hessian(lambda t: ad.sum(ad.gelu(t)))(x)
    # d^2/dx^2 x Phi(x) = 2 phi(x) - x^2 phi(x)
    np.testing.assert_allclose(np.diag(H), (2 - x**2) * norm.pdf(x), rtol=1e-12, atol=1e-15)


def test_batchnorm_train_and_eval():
    rng = np.random.default_rng(3)
    X = rng.normal(5.0, 3.0, size=(16, 4))
    bn = nn.BatchNorm1d(4, momentum=0.25, dtype=np.float64)
    bn.load_parameters({"weight": np.array([1.0, 2.0, 0.5, 1.0]), "bias": np.arange(4.0)})
    y = bn(X)
    xhat = (X - X.mean(0)) / np.sqrt(X.var(0) + 1e-5)
    np.testing.assert_allclose(y, xhat * bn.weight + bn.bias, rtol=1e-12)
    np.testing.assert_allclose(bn.running_mean, 0.25 * X.mean(0), rtol=1e-12)
    np.testing.assert_allclose(bn.running_var, 0.75 + 0.25 * X.var(0, ddof=1), rtol=1e-12)
    bn.eval()
    np.testing.assert_allclose(
        bn(X),
        (X - bn.running_mean) / np.sqrt(bn.running_var + 1e-5) * bn.weight + bn.bias,
        rtol=1e-12,
    )
    # The training-mode gradient goes through the batch statistics.
    bn.train()
    c = rng.standard_normal(X.shape)
    res = ad.check_grad(lambda t: ad.sum(c * bn(t)), X, rtol=RTOL)
    assert res.ok, str(res)
    res = ad.check_grad(
        lambda p: ad.sum(c * nn.functional_call(bn, p, X)), bn.parameters(), rtol=RTOL
    )
    assert res.ok, str(res)
    with pytest.raises(ValueError, match="batch of one"):
        bn(X[:1])
    with pytest.raises(ValueError, match="channels"):
        bn(X[:, :3])
    # 3-axis input (N, C, L): statistics over N and L.
    Z = rng.standard_normal((4, 4, 5))
    out = nn.BatchNorm1d(4, affine=False, dtype=np.float64)(Z)
    np.testing.assert_allclose(out.mean(axis=(0, 2)), 0, atol=1e-12)
    np.testing.assert_allclose(
        out.var(axis=(0, 2)), Z.var(axis=(0, 2)) / (Z.var(axis=(0, 2)) + 1e-5)
    )


def test_dropout_train_and_eval():
    rng = np.random.default_rng(4)
    d = nn.Dropout(0.3).set_random_state(rng)
    n = 200_000
    y = d(np.ones(n))
    kept = y != 0
    # Each entry is kept with probability 0.7 (binomial: sd sqrt(n p (1-p)) = 205): 6 sd.
    assert abs(kept.sum() - 0.7 * n) < 6 * np.sqrt(n * 0.3 * 0.7)
    np.testing.assert_allclose(y[kept], 1 / 0.7)
    # The gradient is the same mask, scaled.
    d.set_random_state(np.random.default_rng(5))
    g = ad.grad(lambda t: ad.sum(d(t)))(np.ones(50))
    d.set_random_state(np.random.default_rng(5))
    np.testing.assert_array_equal(g, d(np.ones(50)))
    x = rng.standard_normal(5)
    np.testing.assert_array_equal(d.eval()(x), x)
    with pytest.raises(ValueError):
        nn.Dropout(1.0)


def test_flatten_embedding():
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(nn.Flatten()(x), x.reshape(2, 12))
    res = ad.check_grad(lambda t: ad.sum(nn.Flatten()(t) ** 2), x)
    assert res.ok
    emb = nn.Embedding(5, 2, dtype=np.float64, random_state=0)
    ids = np.array([[0, 3], [3, 3]])
    np.testing.assert_array_equal(emb(ids), emb.weight[ids])
    g = ad.grad(lambda p: ad.sum(nn.functional_call(emb, p, ids)))(emb.parameters())["weight"]
    np.testing.assert_array_equal(g[:, 0], [1, 0, 0, 3, 0])  # repeated ids add up
    with pytest.raises(IndexError):
        emb(np.array([5]))
    with pytest.raises(TypeError):
        emb(np.array([0.0]))


def test_initialisers_variance():
    shape = (400, 250)
    # Sample variance of 1e5 normal draws: relative sd sqrt(2 / 1e5) = 0.0045; 6 sd.
    tol = 6 * np.sqrt(2 / 1e5)
    cases = {
        "fan_in_normal": 1 / 250,
        "glorot_normal": 2 / 650,
        "glorot_uniform": 2 / 650,
        "he_normal": 2 / 250,
        "he_uniform": 2 / 250,
    }
    for name, var in cases.items():
        W = nn.get_initializer(name)(shape, 0, np.float64)
        assert abs(W.var() / var - 1) < tol, name
    with pytest.raises(ValueError):
        nn.get_initializer("nope")
    with pytest.raises(ValueError):
        nn.fan_in_normal((3,))
    # Convolution kernels: fan_in includes the receptive field.
    W = nn.he_normal((64, 8, 5, 5), random_state=1, dtype=np.float64)
    assert abs(W.var() / (2 / 200) - 1) < 6 * np.sqrt(2 / W.size)


def test_against_pytorch_same_weights():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(6)
    X = rng.standard_normal((8, 5))
    y = rng.integers(0, 3, 8)
    net = nn.Sequential(
        nn.Linear(5, 6, dtype=np.float64, random_state=0),
        nn.BatchNorm1d(6, dtype=np.float64),
        nn.GELU(),
        nn.Linear(6, 4, dtype=np.float64, random_state=1),
        nn.LeakyReLU(0.05),
        nn.Linear(4, 3, dtype=np.float64, random_state=2),
    )
    tnet = torch.nn.Sequential(
        torch.nn.Linear(5, 6),
        torch.nn.BatchNorm1d(6),
        torch.nn.GELU(),
        torch.nn.Linear(6, 4),
        torch.nn.LeakyReLU(0.05),
        torch.nn.Linear(4, 3),
    ).double()
    with torch.no_grad():
        for k, v in net.parameters().items():
            tnet.get_parameter(k).copy_(torch.from_numpy(v))
    g = ad.grad(lambda p: nn.cross_entropy(nn.functional_call(net, p, X), y))(net.parameters())
    loss = torch.nn.functional.cross_entropy(tnet(torch.from_numpy(X)), torch.from_numpy(y))
    loss.backward()
    for k, v in g.items():
        np.testing.assert_allclose(v, tnet.get_parameter(k).grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(net[1].running_var, tnet[1].running_var.numpy(), rtol=1e-12)
    net.eval()
    tnet.eval()
    np.testing.assert_allclose(net(X), tnet(torch.from_numpy(X)).detach().numpy(), rtol=1e-10)


def test_batchnorm2d_train_and_eval():
    """Images: statistics per channel over (N, H, W), against the closed form; the gradient
    through the batch statistics against central differences; PyTorch where installed."""
    rng = np.random.default_rng(7)
    X = rng.normal(2.0, 3.0, size=(3, 2, 4, 5))
    bn = nn.BatchNorm2d(2, momentum=0.5, dtype=np.float64)
    bn.load_parameters({"weight": np.array([1.5, -0.5]), "bias": np.array([0.25, 1.0])})
    y = bn(X)
    mean = X.mean(axis=(0, 2, 3), keepdims=True)
    var = X.var(axis=(0, 2, 3), keepdims=True)
    gamma, beta = bn.weight[None, :, None, None], bn.bias[None, :, None, None]
    np.testing.assert_allclose(y, (X - mean) / np.sqrt(var + 1e-5) * gamma + beta, rtol=1e-12)
    count = 3 * 4 * 5
    np.testing.assert_allclose(bn.running_mean, 0.5 * mean.ravel(), rtol=1e-12)
    np.testing.assert_allclose(
        bn.running_var, 0.5 + 0.5 * var.ravel() * count / (count - 1), rtol=1e-12
    )
    c = rng.standard_normal(X.shape)
    res = ad.check_grad(lambda t: ad.sum(c * bn(t)), X, rtol=RTOL)
    assert res.ok, str(res)
    bn.eval()
    rm = bn.running_mean[None, :, None, None]
    rv = bn.running_var[None, :, None, None]
    np.testing.assert_allclose(bn(X), (X - rm) / np.sqrt(rv + 1e-5) * gamma + beta, rtol=1e-12)
    with pytest.raises(ValueError, match="4 axes with 2 channels"):
        bn(X[:, :, 0])
    torch = pytest.importorskip("torch")
    tbn = torch.nn.BatchNorm2d(2, momentum=0.5).double()
    ours = nn.BatchNorm2d(2, momentum=0.5, dtype=np.float64)
    with torch.no_grad():
        tbn.weight.copy_(torch.tensor([1.5, -0.5]))
        tbn.bias.copy_(torch.tensor([0.25, 1.0]))
    ours.load_parameters({"weight": np.array([1.5, -0.5]), "bias": np.array([0.25, 1.0])})
    tx = torch.tensor(X, requires_grad=True)
    (tbn(tx) * torch.from_numpy(c)).sum().backward()
    g = ad.grad(lambda t: ad.sum(c * ours(t)))(X)
    np.testing.assert_allclose(g, tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.running_var, tbn.running_var.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.running_mean, tbn.running_mean.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "name", ["ReLU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Flatten", "Dropout"]
)
def test_parameterless_layers_match_torch(name):
    """Values and input gradients against PyTorch's modules (Dropout: evaluation mode, where
    it is the identity)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 3, 5)) * 3.0
    c = rng.standard_normal(x.shape if name != "Flatten" else (4, 15))
    ours = getattr(nn, name)() if name != "Dropout" else nn.Dropout(0.4).eval()
    theirs = getattr(torch.nn, name)(**({"dim": -1} if "Softmax" in name else {}))
    if name == "Dropout":
        theirs = torch.nn.Dropout(0.4).eval()
    tx = torch.tensor(x, requires_grad=True)
    ty = theirs(tx)
    (ty * torch.from_numpy(c)).sum().backward()
    np.testing.assert_allclose(ours(x), ty.detach().numpy(), rtol=1e-13, atol=1e-15)
    g = ad.grad(lambda t: ad.sum(c * ours(t)))(x)
    np.testing.assert_allclose(g, tx.grad.numpy(), rtol=1e-12, atol=1e-14)


def test_embedding_matches_torch():
    torch = pytest.importorskip("torch")
    emb = nn.Embedding(6, 3, dtype=np.float64, random_state=0)
    temb = torch.nn.Embedding(6, 3).double()
    with torch.no_grad():
        temb.weight.copy_(torch.from_numpy(emb.weight))
    ids = np.array([[0, 5, 5], [2, 0, 1]])
    c = np.random.default_rng(9).standard_normal((2, 3, 3))
    (temb(torch.from_numpy(ids)) * torch.from_numpy(c)).sum().backward()
    g = ad.grad(lambda p: ad.sum(c * nn.functional_call(emb, p, ids)))(emb.parameters())
    np.testing.assert_allclose(g["weight"], temb.weight.grad.numpy(), rtol=1e-14)
