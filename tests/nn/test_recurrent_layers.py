"""RNN, LSTM, GRU layers: batch-first shapes, ragged batches (lengths / mask / refusal),
gradients through functional_call against finite differences, and PyTorch's packed sequences
on the same weights where installed."""

import numpy as np
import pytest

from mathlearn import autodiff as ad
from mathlearn import nn

LAYERS = [nn.RNN, nn.LSTM, nn.GRU]


@pytest.mark.parametrize("layer", LAYERS)
def test_shapes_and_outputs(layer, rng):
    x = rng.standard_normal((4, 6, 3)).astype(np.float32)
    seq = layer(3, 5, random_state=0)
    last = layer(3, 5, output="last", random_state=0)
    out = seq(x)
    assert out.shape == (4, 6, 5) and out.dtype == np.float32
    np.testing.assert_array_equal(last(x), out[:, -1])


@pytest.mark.parametrize("layer", LAYERS)
def test_lengths_give_each_sequence_its_own_last_state(layer, rng):
    seqs = [rng.standard_normal((n, 2)) for n in (5, 2, 3)]
    batch, lengths = nn.pad_sequences(seqs)
    net = layer(2, 4, output="last", dtype=np.float64, random_state=0)
    h = net(batch, lengths=lengths)
    mask_h = net(batch, mask=np.arange(5) < lengths[:, None])
    np.testing.assert_array_equal(h, mask_h)
    for i, s in enumerate(seqs):
        np.testing.assert_allclose(h[i], net(s[None])[0], rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("layer", LAYERS)
def test_gradient_matches_finite_differences(layer, rng):
    net = layer(2, 3, dtype=np.float64, random_state=0)
    x = rng.standard_normal((3, 4, 2))
    lengths = np.array([4, 2, 3])
    seed = rng.standard_normal((3, 4, 3))
    res = ad.check_grad(
        lambda p: ad.sum(nn.functional_call(net, p, x, lengths=lengths) * seed), net.parameters()
    )
    assert res.ok, str(res)


def test_ragged_input_without_lengths_is_refused(rng):
    lstm = nn.LSTM(2, 3)
    ragged = [rng.standard_normal((4, 2)), rng.standard_normal((2, 2))]
    with pytest.raises(ValueError, match=r"different lengths.*pad_sequences"):
        lstm(ragged)
    with pytest.raises(ValueError, match=r"\(N, T, D\).*rank 2"):
        lstm(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="expects 2 features"):
        lstm(np.zeros((1, 4, 3)))
    batch, lengths = nn.pad_sequences(ragged)
    with pytest.raises(ValueError, match="not both"):
        lstm(batch, lengths=lengths, mask=np.ones((2, 4)))
    with pytest.raises(ValueError, match="lengths must lie in"):
        lstm(batch, lengths=np.array([5, 2]))
    with pytest.raises(ValueError, match="prefix"):
        lstm(batch, mask=np.array([[1, 0, 1, 0], [1, 1, 0, 0]]))
    with pytest.raises(ValueError, match="output must be"):
        nn.GRU(2, 3, output="all")


@pytest.mark.parametrize("layer", LAYERS)
def test_matches_torch_packed_sequences(layer, rng):
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    net = layer(3, 4, dtype=np.float64, random_state=0)
    tmod = {nn.RNN: torch.nn.RNN, nn.LSTM: torch.nn.LSTM, nn.GRU: torch.nn.GRU}[layer](
        3, 4, batch_first=True
    ).double()
    with torch.no_grad():
        tmod.weight_ih_l0.copy_(torch.from_numpy(net.weight_ih))
        tmod.weight_hh_l0.copy_(torch.from_numpy(net.weight_hh))
        tmod.bias_ih_l0.copy_(torch.from_numpy(net.bias))
        if layer is nn.GRU:
            tmod.bias_hh_l0.copy_(torch.from_numpy(net.bias_hh))
        else:
            tmod.bias_hh_l0.zero_()
    x = rng.standard_normal((3, 5, 3))
    lengths = np.array([5, 2, 4])
    packed = torch.nn.utils.rnn.pack_padded_sequence(
        torch.from_numpy(x), torch.from_numpy(lengths), batch_first=True, enforce_sorted=False
    )
    tout, tstate = tmod(packed)
    tout, _ = torch.nn.utils.rnn.pad_packed_sequence(tout, batch_first=True, total_length=5)
    th = tstate[0] if layer is nn.LSTM else tstate
    out, h, *_ = net.forward_with_state(x, lengths=lengths)
    np.testing.assert_allclose(out, tout.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(h, th[0].detach().numpy(), rtol=1e-12, atol=1e-14)
