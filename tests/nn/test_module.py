"""The Module base: named parameters, functional calls, modes, state dicts."""

import numpy as np
import pytest

from mathlearn import autodiff as ad
from mathlearn import nn, optim


def _net(dtype=np.float64):
    return nn.Sequential(
        nn.Linear(3, 4, dtype=dtype, random_state=0),
        nn.Tanh(),
        nn.Dropout(0.5),
        nn.Linear(4, 2, dtype=dtype, random_state=1),
    )


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = _net()
        self.register_parameter("scale", np.array([2.0]))
        self.register_buffer("calls", np.array(0))

    def forward(self, x):
        self._buffers["calls"] = self.calls + 1
        return self.scale * self.body(x)


def test_dotted_names_and_dict_pytree():
    m = Block()
    names = list(m.parameters())
    assert names == ["scale", "body.0.weight", "body.0.bias", "body.3.weight", "body.3.bias"]
    assert m.n_parameters() == 1 + 12 + 4 + 8 + 2
    assert dict(m.named_buffers()) == {"calls": 0}
    # optim updates the dict as it is.
    params = m.parameters()
    opt = optim.sgd(0.1)
    grads = ad.tree_map(np.ones_like, params)
    updates, _ = opt.update(grads, opt.init(params))
    m.load_parameters(optim.apply_updates(params, updates))
    np.testing.assert_allclose(m.scale, [1.9])


def test_functional_call_gradient_and_restore():
    m = Block().eval()
    X = np.random.default_rng(0).standard_normal((5, 3))
    before = {k: v.copy() for k, v in m.parameters().items()}

    def loss(p):
        return ad.sum(nn.functional_call(m, p, X) ** 2)

    res = ad.check_grad(loss, m.parameters())
    assert res.ok, str(res)
    for k, v in m.parameters().items():
        assert type(v) is np.ndarray
        np.testing.assert_array_equal(v, before[k])

    # Restored even when the forward pass fails.
    with pytest.raises(ValueError, match="3 features"):
        nn.functional_call(m, {"scale": np.array([5.0])}, np.zeros((2, 7)))
    np.testing.assert_array_equal(m.scale, [2.0])
    with pytest.raises(KeyError, match="unknown"):
        nn.functional_call(m, {"nope": np.zeros(1)}, X)


def test_load_parameters_checks_names_and_shapes():
    m = _net()
    p = m.parameters()
    with pytest.raises(ValueError, match="shape"):
        m.load_parameters({**p, "0.weight": np.zeros((3, 4))})
    with pytest.raises(KeyError, match="missing"):
        m.load_parameters({"0.weight": p["0.weight"]})
    m.load_parameters({"0.bias": np.ones(4)}, strict=False)
    np.testing.assert_array_equal(m[0].bias, np.ones(4))


def test_state_dict_round_trip_copies():
    a, b = nn.Sequential(nn.Linear(2, 3, random_state=0), nn.BatchNorm1d(3)), None
    a(np.random.default_rng(1).standard_normal((6, 2)).astype(np.float32))
    state = a.state_dict()
    assert set(state) == {
        "0.weight",
        "0.bias",
        "1.weight",
        "1.bias",
        "1.running_mean",
        "1.running_var",
        "1.num_batches_tracked",
    }
    b = nn.Sequential(nn.Linear(2, 3, random_state=5), nn.BatchNorm1d(3))
    b.load_state_dict(state)
    state["0.weight"][:] = 0  # a copy: the modules do not share memory with it
    X = np.ones((2, 2), dtype=np.float32)
    np.testing.assert_array_equal(a.eval()(X), b.eval()(X))
    assert not np.all(b[0].weight == 0)
    with pytest.raises(KeyError):
        b.load_state_dict({})


def test_modes_and_random_state_reach_every_submodule():
    m = Block()
    assert all(s.training for s in m.modules())
    m.eval()
    assert not any(s.training for s in m.modules())
    m.train()
    rng = np.random.default_rng(3)
    m.set_random_state(rng)
    assert all(s._rng is rng for s in m.modules())
    # Same seed, same dropout masks: reproducible.
    X = np.ones((4, 3))
    y1 = Block().set_random_state(np.random.default_rng(7))(X)
    y2 = Block().set_random_state(np.random.default_rng(7))(X)
    np.testing.assert_array_equal(y1, y2)


def test_astype_and_float32_default():
    m = nn.Sequential(nn.Linear(3, 2, random_state=0), nn.BatchNorm1d(2))
    assert all(v.dtype == np.float32 for v in m.parameters().values())
    g = ad.grad(lambda p: ad.sum(nn.functional_call(m, p, np.ones((3, 3), np.float32))))(
        m.parameters()
    )
    assert all(v.dtype == np.float32 for v in g.values())
    m.astype(np.float64)
    assert all(v.dtype == np.float64 for v in m.parameters().values())
    assert m[1].running_var.dtype == np.float64


def test_subclass_must_call_super_init():
    class Bad(nn.Module):
        def __init__(self):
            self.layer = nn.Linear(1, 1)

    with pytest.raises(RuntimeError, match="super"):
        Bad()
    with pytest.raises(NotImplementedError):
        nn.Module()(1.0)
    with pytest.raises(ValueError, match="dots"):
        nn.Module().register_parameter("a.b", np.zeros(1))


def test_sequential_container():
    net = _net()
    assert len(net) == 4 and isinstance(net[1], nn.Tanh)
    assert [type(x).__name__ for x in net] == ["Linear", "Tanh", "Dropout", "Linear"]
    with pytest.raises(TypeError):
        nn.Sequential(np.tanh)
    assert "Linear(3, 4" in repr(net)
    # Reassigning a submodule attribute to a non-module removes it from the tree.
    b = Block()
    b.body = None
    assert list(b.parameters()) == ["scale"]
