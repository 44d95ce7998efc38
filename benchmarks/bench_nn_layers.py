"""Network layers: Conv2d, LSTM, GRU and RNN forward + backward against PyTorch on the CPU.

Cases (the issue's targets, ratio ours/peer <= 1.5):

- ``conv2d`` forward + backward (gradients with respect to the input and the weights), batch
  64, 3 -> 32 channels, 32 x 32 images, 3 x 3 kernels, padding 1, float32;
- ``lstm`` forward + backward (all weights and the input), hidden 128, sequence 50, batch 64,
  32 input features, float32; ``gru`` and ``rnn`` (Elman, tanh) at the same size;

plus a small size of each (first-call-like overheads dominate there). Both sides use the same
number of threads: PyTorch is set to the thread count of NumPy's BLAS (threadpoolctl), and a
second set of rows pins both to one thread. Values and gradients are checked to agree before
timing. PyTorch is not a dependency: without it the benchmark says so and skips.

Run: ``python benchmarks/run.py nn_layers`` (or ``python benchmarks/bench_nn_layers.py``).
"""

from __future__ import annotations

import numpy as np

from _harness import compare
from mathlearn import autodiff as ad


def _blas_threads() -> int:
    from threadpoolctl import threadpool_info

    counts = [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]
    return max(counts) if counts else 1


def _blas_kernels() -> str:
    """The kernel family each loaded BLAS picked for this processor (OpenBLAS's core type):
    on a processor with AVX-512 an AVX2 family halves the products' speed, which PyTorch's
    own kernels do not share."""
    from threadpoolctl import threadpool_info

    names = {
        i.get("architecture") or "?" for i in threadpool_info() if i.get("user_api") == "blas"
    }
    return ", ".join(sorted(names))


def _conv_case(torch, batch, c_in, c_out, size, label):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, c_in, size, size)).astype(np.float32)
    w = (rng.standard_normal((c_out, c_in, 3, 3)) / np.sqrt(9 * c_in)).astype(np.float32)
    seed = rng.standard_normal((batch, c_out, size, size)).astype(np.float32)

    def loss(p):
        return ad.sum(ad.conv2d(p["x"], p["w"], padding=1) * seed)

    vg = ad.grad(loss)
    params = {"x": x, "w": w}
    tx = torch.from_numpy(x.copy()).requires_grad_(True)
    tw = torch.from_numpy(w.copy()).requires_grad_(True)
    tseed = torch.from_numpy(seed)

    def peer():
        tx.grad = tw.grad = None
        y = torch.nn.functional.conv2d(tx, tw, padding=1)
        (y * tseed).sum().backward()

    g = vg(params)
    peer()
    assert g["w"].dtype == np.float32
    np.testing.assert_allclose(g["w"], tw.grad.numpy(), rtol=1e-3, atol=1e-2)
    np.testing.assert_allclose(g["x"], tx.grad.numpy(), rtol=1e-3, atol=1e-3)
    compare(
        f"conv2d fwd+bwd, batch {batch}, {c_in}->{c_out}, {size}x{size}, 3x3, float32, {label}",
        lambda: vg(params),
        peer,
        repeats=10,
        target=1.5,
    )


_GATES = {"lstm": 4, "gru": 3, "rnn": 1}


def _recurrent_case(torch, kind, batch, seq, n_in, hidden, label):
    rng = np.random.default_rng(1)
    s = 1 / np.sqrt(hidden)
    gates = _GATES[kind]
    x = rng.standard_normal((batch, seq, n_in)).astype(np.float32)
    p = {
        "x": x,
        "w_ih": rng.uniform(-s, s, (gates * hidden, n_in)).astype(np.float32),
        "w_hh": rng.uniform(-s, s, (gates * hidden, hidden)).astype(np.float32),
        "b": rng.uniform(-s, s, gates * hidden).astype(np.float32),
        "b_hh": rng.uniform(-s, s, gates * hidden).astype(np.float32),
    }
    seed = rng.standard_normal((batch, seq, hidden)).astype(np.float32)

    def loss(q):
        if kind == "lstm":
            out = ad.lstm(q["x"], q["w_ih"], q["w_hh"], q["b"])[0]
        elif kind == "gru":
            out = ad.gru(q["x"], q["w_ih"], q["w_hh"], q["b"], q["b_hh"])[0]
        else:
            out = ad.rnn(q["x"], q["w_ih"], q["w_hh"], q["b"])[0]
        return ad.sum(out * seed)

    vg = ad.grad(loss)
    mod = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}[kind](
        n_in, hidden, batch_first=True
    )
    with torch.no_grad():
        mod.weight_ih_l0.copy_(torch.from_numpy(p["w_ih"]))
        mod.weight_hh_l0.copy_(torch.from_numpy(p["w_hh"]))
        mod.bias_ih_l0.copy_(torch.from_numpy(p["b"]))
        if kind == "gru":
            mod.bias_hh_l0.copy_(torch.from_numpy(p["b_hh"]))
        else:
            mod.bias_hh_l0.zero_()
    tx = torch.from_numpy(x.copy()).requires_grad_(True)
    tseed = torch.from_numpy(seed)

    def peer():
        mod.zero_grad()
        tx.grad = None
        out, _ = mod(tx)
        (out * tseed).sum().backward()

    g = vg(p)
    peer()
    ref = mod.weight_hh_l0.grad.numpy()
    np.testing.assert_allclose(g["w_hh"], ref, rtol=1e-3, atol=1e-3 * np.abs(ref).max())
    compare(
        f"{kind} fwd+bwd, batch {batch}, seq {seq}, {n_in}->{hidden}, float32, {label}",
        lambda: vg(p),
        peer,
        repeats=10,
        target=1.5,
    )


def _run(torch, threads: int, label: str) -> None:
    torch.set_num_threads(threads)
    _conv_case(torch, 8, 3, 8, 16, label)
    _conv_case(torch, 64, 3, 32, 32, label)
    _recurrent_case(torch, "lstm", 8, 10, 16, 32, label)
    for kind in ("lstm", "gru", "rnn"):
        _recurrent_case(torch, kind, 64, 50, 32, 128, label)


def main() -> None:
    try:
        import torch
    except ImportError:
        print("| conv2d / lstm | skipped: PyTorch is not installed (not a dependency) |")
        return
    from threadpoolctl import threadpool_limits

    threads = _blas_threads()
    print(
        f"(NumPy BLAS threads = torch threads = {threads}; torch {torch.__version__}, "
        f"CPU capability {torch.backends.cpu.get_cpu_capability()}; BLAS kernels "
        f"{_blas_kernels()})"
    )
    _run(torch, threads, f"{threads} threads")
    with threadpool_limits(limits=1, user_api="blas"):
        _run(torch, 1, "1 thread")


if __name__ == "__main__":
    main()
