"""lstm, gru and rnn primitives: forward against a plain NumPy loop over the cell equations,
backpropagation through time against central finite differences (float64), masks against
running each truncated sequence alone, and forward + gradients against PyTorch's modules on
the same weights where PyTorch is installed.

The float32 routes, and the split over threads (the tests at the end of this file).

In float32 the pointwise part of every step runs in the compiled kernels of
``mathlearn._ext._rnn`` (NumPy when they are not built or ``MATHLEARN_DISABLE_EXT`` is set),
and a large enough batch is split by rows between as many threads as BLAS may use (the
work thresholds are set to 0 here, so that 40 small sequences are split). References:

- the kernels' tanh against double-precision ``np.tanh`` on a dense grid: its error
  analysis (Taylor remainders below 5e-9 and 1e-10, a handful of float32 roundings) bounds
  it by a few units in the last place; the test asks for 3 ulp;
- outputs and gradients of both float32 routes against the float64 computation (half the
  sequences padded, one and two threads): every step commits a few float32 roundings
  (eps = 1.2e-7) and the recurrences here do not amplify them (weights scaled by
  1/sqrt(H), gate derivatives at most 1), so over T = 12 steps the error stays below
  T x 10 eps x (the largest entry) ~ 1.5e-5 of the largest entry;
- in float64, a batch split between two threads against the plain loop over the cell
  equations (the same rounding as one thread, up to the order of BLAS sums: 1e-13).
"""

import ctypes
import os
import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from mathlearn import _ext
from mathlearn import autodiff as ad
from mathlearn.autodiff import _nn_primitives


@pytest.fixture
def split_small_batches(monkeypatch):
    """Split batches of 40 small sequences between threads (as large ones are)."""
    monkeypatch.setattr(_nn_primitives, "_MIN_STEP_WORK", 0)


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


needs_kernels = pytest.mark.skipif(
    _ext.load("_rnn") is None, reason="mathlearn._ext._rnn is not built"
)


@needs_kernels
def test_compiled_tanh_within_3_ulp():
    lib = _ext.load("_rnn")
    f = lib.rnn_tanh_f32
    f.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
    f.restype = None
    ramp = np.geomspace(1e-30, 60.0, 400_001)
    x = np.concatenate([np.linspace(-12, 12, 400_001), ramp, -ramp, [0.0, 1e4, -1e4]])
    x = x.astype(np.float32)
    out = np.empty_like(x)
    f(x.size, x.ctypes.data, out.ctypes.data)
    ref = np.tanh(x.astype(np.float64))
    ulp = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    assert np.max(np.abs(out - ref) / ulp) <= 3.0
    assert np.all(np.abs(out) <= 1.0)
    assert np.array_equal(np.sign(out), np.sign(x))


def _loss(kind, x, seeds, mask=None):
    def f(q):
        outs = _call(kind, x, q, mask)
        return sum(ad.sum(o * s) for o, s in zip(outs, seeds[: len(outs)], strict=True))

    return f


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("kind", KINDS)
def test_float32_routes_match_float64(rng, kind, compiled, monkeypatch, split_small_batches):
    if compiled and _ext.load("_rnn") is None:
        pytest.skip("mathlearn._ext._rnn is not built")
    if not compiled:
        monkeypatch.setenv("MATHLEARN_DISABLE_EXT", "1")
    n, t, d, hidden = 40, 12, 5, 16
    p = _params(kind, rng, n=n, d=d, hidden=hidden)
    p = {k: v / np.sqrt(hidden) if k.startswith("w_") else v for k, v in p.items()}
    x = rng.standard_normal((n, t, d))
    seeds = [rng.standard_normal((n, t, hidden))] + [rng.standard_normal((n, hidden))] * 2
    # Every other sequence is padded after a random length (the masked steps carry the state).
    lengths = np.where(np.arange(n) % 2 == 0, t, rng.integers(1, t + 1, n))
    mask = (np.arange(t) < lengths[:, None]).astype(float)
    ref_out = _call(kind, x, p, mask)
    ref_grad = ad.grad(_loss(kind, x, seeds, mask))({**p, "x": x})
    p32 = {k: v.astype(np.float32) for k, v in p.items()}
    x32 = x.astype(np.float32)
    s32 = [s.astype(np.float32) for s in seeds]
    for threads in (1, 2):
        with threadpool_limits(limits=threads, user_api="blas"):
            out = _call(kind, x32, p32, mask)
            grad = ad.grad(_loss(kind, x32, s32, mask))({**p32, "x": x32})
        for o, r in zip(out, ref_out, strict=True):
            assert o.dtype == np.float32
            np.testing.assert_allclose(o, r, rtol=0, atol=1.5e-5 * np.abs(r).max())
        for key, r in ref_grad.items():
            assert grad[key].dtype == np.float32
            np.testing.assert_allclose(grad[key], r, rtol=0, atol=1.5e-5 * np.abs(r).max())


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_split_batch_matches_the_cell_equations(rng, kind, masked, split_small_batches):
    n, t = 40, 6
    p = _params(kind, rng, n=n)
    x = rng.standard_normal((n, t, 4))
    lengths = rng.integers(1, t + 1, n) if masked else np.full(n, t)
    mask = (np.arange(t) < lengths[:, None]).astype(float)
    seeds = [rng.standard_normal((n, t, 3))] + [rng.standard_normal((n, 3))] * 2
    with threadpool_limits(limits=2, user_api="blas"):
        out = _call(kind, x, p, mask if masked else None)
        grad = ad.grad(
            lambda q: sum(
                ad.sum(o * s)
                for o, s in zip(_call(kind, x, q, mask if masked else None), seeds, strict=False)
            )
        )(p)
    with threadpool_limits(limits=1, user_api="blas"):
        grad_1 = ad.grad(
            lambda q: sum(
                ad.sum(o * s)
                for o, s in zip(_call(kind, x, q, mask if masked else None), seeds, strict=False)
            )
        )(p)
    for i in range(n):
        q = {k: (v[i : i + 1] if k in ("h0", "c0") else v) for k, v in p.items()}
        ref = _loop(kind, q, x[i : i + 1, : lengths[i]])
        np.testing.assert_allclose(out[0][i, : lengths[i]], ref[0][0], rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(out[1][i], ref[1][0], rtol=1e-13, atol=1e-14)
        if kind == "lstm":
            np.testing.assert_allclose(out[2][i], ref[2][0], rtol=1e-13, atol=1e-14)
    for key in grad:
        np.testing.assert_allclose(grad[key], grad_1[key], rtol=1e-12, atol=1e-13)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_split_batch_works_in_a_forked_child(rng, split_small_batches):
    # The pool threads of the parent do not exist in a forked child, which must start its own
    # (a child reusing the parent's pool would wait for ever).
    import multiprocessing

    x = rng.standard_normal((40, 5, 3))
    w, u, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 2)), np.zeros(2)
    with threadpool_limits(limits=2, user_api="blas"):
        expected = ad.rnn(x, w, u, b)[1]
    with warnings.catch_warnings():
        # Python >= 3.12 warns that forking a multi-threaded process may deadlock.
        warnings.simplefilter("ignore", DeprecationWarning)
        with multiprocessing.get_context("fork").Pool(1) as pool:
            got = pool.apply_async(_rnn_two_threads, (x, w, u, b)).get(timeout=120)
    np.testing.assert_array_equal(got, expected)


def _rnn_two_threads(x, w, u, b):
    with threadpool_limits(limits=2, user_api="blas"):
        return ad.rnn(x, w, u, b)[1]


def test_compiled_route_is_taken_where_built():
    # The float32 tests above compare the compiled route only if it is really taken: it needs
    # the kernels and SciPy's exported sgemm.
    if _ext.load("_rnn") is None:
        pytest.skip("mathlearn._ext._rnn is not built")
    assert _nn_primitives._compiled(np.dtype(np.float32)) is not None
    assert _nn_primitives._compiled(np.dtype(np.float64)) is None


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", KINDS)
def test_interleaved_graphs_keep_their_own_arrays(rng, kind, dtype, split_small_batches):
    # The large arrays are reused from call to call: a forward pass's saved arrays must stay
    # its own while its graph lives, whatever other passes run in between.
    n, t = 40, 6
    p = {k: v.astype(dtype) for k, v in _params(kind, rng, n=n).items()}
    xs = [rng.standard_normal((n, t, 4)).astype(dtype) for _ in range(2)]
    seeds = [rng.standard_normal((n, t, 3)).astype(dtype) for _ in range(2)]

    def loss(x, s):
        return lambda q: ad.sum(_call(kind, x, q)[0] * s)

    alone = [ad.value_and_grad(loss(x, s))(p) for x, s in zip(xs, seeds, strict=True)]
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for threads in (1, 2):
        with threadpool_limits(limits=threads, user_api="blas"):
            leaves = [{k: ad.Tensor(v, requires_grad=True) for k, v in p.items()} for _ in xs]
            values = [loss(x, s)(q) for x, s, q in zip(xs, seeds, leaves, strict=True)]
            # Both graphs alive; backward in the reverse order of the forward passes.
            grads = [ad.backward(v) for v in reversed(values)][::-1]
        for (value, ref), v, q, g in zip(alone, values, leaves, grads, strict=True):
            np.testing.assert_allclose(v.value, value, rtol=tol)
            for k in ref:
                got = g[id(q[k])][1]
                np.testing.assert_allclose(got, ref[k], rtol=0, atol=tol * np.abs(ref[k]).max())


def test_workspace_reuses_buffers_within_its_limit():
    ws = _nn_primitives._Workspace(limit=1000)
    a = ws.take((10, 20), np.float32)  # 800 bytes
    ws.give([a])
    b = ws.take((20, 10), np.float32)
    assert b.base is a.base  # the same buffer, reshaped
    ws.give([b, np.empty(50)])  # an array not taken here is ignored
    c = ws.take((25,), np.float64)  # 200 bytes: a new buffer
    ws.give([c])  # 800 + 200 bytes kept
    d = ws.take((100,), np.float64)  # 800 bytes: the first one again
    assert d.base is a.base
    ws.give([d])
    e = ws.take((2, 1000), np.uint8)  # more than the limit: never kept
    ws.give([e])
    assert ws._bytes == 1000
    f = ws.take((300,), np.float32)  # 1200 bytes, also over the limit
    ws.give([f])
    assert ws._bytes == 1000
    g = ws.take((25,), np.float32)  # 100 bytes: given back, it evicts the oldest (c)
    ws.give([g])
    assert ws._bytes == 900
    assert ws.take((50,), np.float32).base is not c.base
    assert ws.take((200,), np.float32).base is a.base


def test_saved_arrays_go_back_when_the_graph_is_dropped(rng):
    ws = _nn_primitives._WORKSPACE
    p = {k: v.astype(np.float32) for k, v in _params("lstm", rng, n=8).items()}
    x = rng.standard_normal((8, 5, 4)).astype(np.float32)
    ad.grad(lambda q: ad.sum(_call("lstm", x, q)[0]))(p)
    kept = ws._bytes
    q = {k: ad.Tensor(v, requires_grad=True) for k, v in p.items()}
    out = _call("lstm", x, q)[0]  # saved arrays taken from the workspace, held by the graph
    assert ws._bytes < kept
    del out, q
    assert ws._bytes == kept


def test_bad_biases_and_states_raise(rng):
    p = _params("lstm", rng)
    x = np.zeros((3, 5, 4))
    with pytest.raises(ValueError, match=r"lstm: b must have shape \(12,\)"):
        ad.lstm(x, p["w_ih"], p["w_hh"], p["b"][:-1])
    with pytest.raises(ValueError, match=r"h0 must have shape \(N, H\) = \(3, 3\)"):
        ad.lstm(x, p["w_ih"], p["w_hh"], p["b"], h0=np.zeros(3))
    with pytest.raises(ValueError, match=r"c0 must have shape"):
        ad.lstm(x, p["w_ih"], p["w_hh"], p["b"], c0=np.zeros((2, 3)))
    q = _params("gru", rng)
    with pytest.raises(ValueError, match=r"gru: b_hh must have shape \(9,\)"):
        ad.gru(x, q["w_ih"], q["w_hh"], q["b"], q["b_hh"][None])
    r = _params("rnn", rng)
    with pytest.raises(ValueError, match=r"rnn: b must have shape \(3,\)"):
        ad.rnn(x, r["w_ih"], r["w_hh"], np.zeros(4))
    with pytest.raises(ValueError, match=r"H >= 1"):
        ad.lstm(x, np.zeros((0, 4)), np.zeros((0, 0)), np.zeros(0))
    for empty in [(0, 5, 4), (3, 0, 4)]:
        with pytest.raises(ValueError, match="at least one sequence, one step"):
            ad.rnn(np.zeros(empty), r["w_ih"], r["w_hh"], r["b"])
