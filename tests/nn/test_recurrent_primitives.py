"""lstm, gru and rnn primitives: forward against a plain NumPy loop over the cell equations,
backpropagation through time against central finite differences (float64), masks against
running each truncated sequence alone, and forward + gradients against PyTorch's modules on
the same weights where PyTorch is installed."""

import numpy as np
import pytest

from mathlearn import autodiff as ad


def _sig(a):
    return 1 / (1 + np.exp(-a))


def _loop(kind, p, x):
    """The cell equations one step at a time (PyTorch's gate order and parametrisation)."""
    h = p["h0"].copy()
    c = p.get("c0")
    hidden = h.shape[1]
    outs = []
    for t in range(x.shape[1]):
        xt = x[:, t]
        if kind == "lstm":
            a = xt @ p["w_ih"].T + h @ p["w_hh"].T + p["b"]
            i, f = _sig(a[:, :hidden]), _sig(a[:, hidden : 2 * hidden])
            g, o = np.tanh(a[:, 2 * hidden : 3 * hidden]), _sig(a[:, 3 * hidden :])
            c = f * c + i * g
            h = o * np.tanh(c)
        elif kind == "gru":
            ai = xt @ p["w_ih"].T + p["b"]
            ah = h @ p["w_hh"].T + p["b_hh"]
            r = _sig(ai[:, :hidden] + ah[:, :hidden])
            z = _sig(ai[:, hidden : 2 * hidden] + ah[:, hidden : 2 * hidden])
            n = np.tanh(ai[:, 2 * hidden :] + r * ah[:, 2 * hidden :])
            h = (1 - z) * n + z * h
        else:
            h = np.tanh(xt @ p["w_ih"].T + h @ p["w_hh"].T + p["b"])
        outs.append(h)
    return np.stack(outs, axis=1), h, c


def _params(kind, rng, n=3, d=4, hidden=3):
    gates = {"lstm": 4, "gru": 3, "rnn": 1}[kind]
    p = {
        "w_ih": 0.5 * rng.standard_normal((gates * hidden, d)),
        "w_hh": 0.5 * rng.standard_normal((gates * hidden, hidden)),
        "b": rng.standard_normal(gates * hidden),
        "h0": rng.standard_normal((n, hidden)),
    }
    if kind == "lstm":
        p["c0"] = rng.standard_normal((n, hidden))
    if kind == "gru":
        p["b_hh"] = rng.standard_normal(gates * hidden)
    return p


def _call(kind, x, p, mask=None):
    if kind == "lstm":
        return ad.lstm(x, p["w_ih"], p["w_hh"], p["b"], h0=p["h0"], c0=p["c0"], mask=mask)
    if kind == "gru":
        return ad.gru(x, p["w_ih"], p["w_hh"], p["b"], p["b_hh"], h0=p["h0"], mask=mask)
    return ad.rnn(x, p["w_ih"], p["w_hh"], p["b"], h0=p["h0"], mask=mask)


KINDS = ["lstm", "gru", "rnn"]


@pytest.mark.parametrize("kind", KINDS)
def test_forward_matches_the_cell_equations(rng, kind):
    p = _params(kind, rng)
    x = rng.standard_normal((3, 5, 4))
    out = _call(kind, x, p)
    ref = _loop(kind, p, x)
    np.testing.assert_allclose(out[0], ref[0], rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(out[1], ref[1], rtol=1e-13, atol=1e-14)
    if kind == "lstm":
        np.testing.assert_allclose(out[2], ref[2], rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_bptt_matches_finite_differences(rng, kind, masked):
    p = _params(kind, rng)
    p["x"] = rng.standard_normal((3, 5, 4))
    mask = None
    if masked:
        mask = np.ones((3, 5))
        mask[1, 3:] = 0
        mask[2, 1:] = 0
    seeds = [
        rng.standard_normal((3, 5, 3)),
        rng.standard_normal((3, 3)),
        rng.standard_normal((3, 3)),
    ]

    def f(q):
        outs = _call(kind, q["x"], q, mask)
        return sum(ad.sum(o * s) for o, s in zip(outs, seeds[: len(outs)], strict=True))

    res = ad.check_grad(f, p)
    assert res.ok, str(res)


@pytest.mark.parametrize("kind", KINDS)
def test_mask_equals_running_each_sequence_alone(rng, kind):
    p = _params(kind, rng)
    x = rng.standard_normal((3, 6, 4))
    lengths = [6, 2, 4]
    mask = (np.arange(6) < np.array(lengths)[:, None]).astype(float)
    out = _call(kind, x, p, mask)
    for i, length in enumerate(lengths):
        q = {k: (v[i : i + 1] if k in ("h0", "c0") else v) for k, v in p.items()}
        alone = _call(kind, x[i : i + 1, :length], q)
        np.testing.assert_allclose(out[0][i, :length], alone[0][0], rtol=1e-13, atol=1e-14)
        np.testing.assert_array_equal(out[0][i, length:], 0.0)
        for final, ref in zip(out[1:], alone[1:], strict=True):
            np.testing.assert_allclose(final[i], ref[0], rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("kind", KINDS)
def test_float32_stays_float32(rng, kind):
    p = {k: v.astype(np.float32) for k, v in _params(kind, rng).items()}
    x = rng.standard_normal((3, 4, 4)).astype(np.float32)
    g = ad.grad(lambda q: ad.sum(_call(kind, x, q)[0]))(p)
    assert all(v.dtype == np.float32 for v in g.values())
    assert _call(kind, x, p)[0].dtype == np.float32


def test_bad_shapes_raise(rng):
    p = _params("lstm", rng)
    with pytest.raises(ValueError, match="rank 2"):
        ad.lstm(np.zeros((3, 4)), p["w_ih"], p["w_hh"], p["b"])
    with pytest.raises(ValueError, match="W_ih must have shape"):
        ad.lstm(np.zeros((3, 5, 2)), p["w_ih"], p["w_hh"], p["b"])
    with pytest.raises(ValueError, match="W_hh must have shape"):
        ad.gru(np.zeros((3, 5, 4)), np.zeros((9, 4)), np.zeros((9, 2)), np.zeros(9), np.zeros(9))
    with pytest.raises(ValueError, match="mask must have shape"):
        ad.rnn(
            np.zeros((3, 5, 4)),
            np.zeros((2, 4)),
            np.zeros((2, 2)),
            np.zeros(2),
            mask=np.ones((3, 4)),
        )


@pytest.mark.parametrize("kind", KINDS)
def test_matches_torch_modules(rng, kind):
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    p = _params(kind, rng)
    x = rng.standard_normal((3, 5, 4))
    module = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}[kind]
    mod = module(4, 3, batch_first=True).double()
    with torch.no_grad():
        mod.weight_ih_l0.copy_(torch.tensor(p["w_ih"]))
        mod.weight_hh_l0.copy_(torch.tensor(p["w_hh"]))
        mod.bias_ih_l0.copy_(torch.tensor(p["b"]))
        mod.bias_hh_l0.copy_(
            torch.tensor(p["b_hh"]) if kind == "gru" else torch.zeros(len(p["b"]))
        )
    tx = torch.tensor(x, requires_grad=True)
    h0 = torch.tensor(p["h0"])[None]
    if kind == "lstm":
        y, (hn, cn) = mod(tx, (h0, torch.tensor(p["c0"])[None]))
        touts = [y, hn[0], cn[0]]
    else:
        y, hn = mod(tx, h0)
        touts = [y, hn[0]]
    seeds = [rng.standard_normal(tuple(t.shape)) for t in touts]
    sum((t * torch.tensor(s)).sum() for t, s in zip(touts, seeds, strict=True)).backward()
    p["x"] = x
    outs = _call(kind, x, p)

    def f(q):
        return sum(ad.sum(o * s) for o, s in zip(_call(kind, q["x"], q), seeds, strict=True))

    g = ad.grad(f)(p)
    for o, t in zip(outs, touts, strict=True):
        np.testing.assert_allclose(o, t.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g["x"], tx.grad.numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(g["w_ih"], mod.weight_ih_l0.grad.numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(g["w_hh"], mod.weight_hh_l0.grad.numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(g["b"], mod.bias_ih_l0.grad.numpy(), rtol=1e-12, atol=1e-13)
    if kind == "gru":
        np.testing.assert_allclose(g["b_hh"], mod.bias_hh_l0.grad.numpy(), rtol=1e-12, atol=1e-13)
