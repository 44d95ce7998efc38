"""Autodiff: forward + backward of a 784-256-256-10 tanh MLP on a batch of 256.

Peer: PyTorch on the CPU (autograd), when it is installed. PyTorch is NOT a dependency of
mathlearn; without it this benchmark says so and skips. Both sides use the same number of
threads: PyTorch is set (``torch.set_num_threads``) to the thread count of NumPy's BLAS as
reported by threadpoolctl, and the figure is printed; a second set of rows pins both to one
thread (steadier on a busy machine). The loss is the mean softmax cross-entropy; the two
losses are checked to agree before timing, and float32 is checked to stay float32.

Run: ``python benchmarks/run.py autodiff`` (or ``python benchmarks/bench_autodiff.py``).
"""

from __future__ import annotations

import itertools

import numpy as np

from _harness import compare
from mathlearn import autodiff as ad

SIZES = (784, 256, 256, 10)
BATCH = 256


def _blas_threads() -> int:
    from threadpoolctl import threadpool_info

    counts = [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]
    return max(counts) if counts else 1


def _problem(dtype, seed=0):
    rng = np.random.default_rng(seed)
    params = {}
    for k, (m, n) in enumerate(itertools.pairwise(SIZES)):
        params[f"W{k}"] = (rng.standard_normal((m, n)) / np.sqrt(m)).astype(dtype)
        params[f"b{k}"] = np.zeros(n, dtype=dtype)
    X = rng.standard_normal((BATCH, SIZES[0])).astype(dtype)
    labels = rng.integers(0, SIZES[-1], size=BATCH)
    Y = np.eye(SIZES[-1], dtype=dtype)[labels]
    return params, X, Y, labels


def _ours(params, X, Y):
    n_layers = len(SIZES) - 1

    def loss(p):
        h = X
        for k in range(n_layers):
            z = h @ p[f"W{k}"] + p[f"b{k}"]
            h = ad.tanh(z) if k < n_layers - 1 else z
        return -ad.sum(Y * ad.log_softmax(h, axis=1)) / BATCH

    vg = ad.value_and_grad(loss)
    return lambda: vg(params)


def _torch(torch, params, X, labels):
    n_layers = len(SIZES) - 1
    tp = {k: torch.from_numpy(v.copy()).requires_grad_(True) for k, v in params.items()}
    tX = torch.from_numpy(X)
    tlabels = torch.from_numpy(labels)

    def run():
        for v in tp.values():
            v.grad = None
        h = tX
        for k in range(n_layers):
            z = h @ tp[f"W{k}"] + tp[f"b{k}"]
            h = torch.tanh(z) if k < n_layers - 1 else z
        loss = torch.nn.functional.cross_entropy(h, tlabels)
        loss.backward()
        return loss

    run.params = tp  # for the gradient comparison before timing
    return run


def main() -> None:
    try:
        import torch
    except ImportError:
        print(
            "| mlp 784-256-256-10 fwd+bwd | skipped: PyTorch is not installed (not a dependency) |"
        )
        return
    from threadpoolctl import threadpool_limits

    threads = _blas_threads()
    print(f"(NumPy BLAS threads = torch threads = {threads}; torch {torch.__version__})")
    _run(torch, threads, f"{threads} threads")
    with threadpool_limits(limits=1, user_api="blas"):
        _run(torch, 1, "1 thread")


def _run(torch, threads: int, label: str) -> None:
    torch.set_num_threads(threads)
    for dtype in (np.float32, np.float64):
        params, X, Y, labels = _problem(dtype)
        ours = _ours(params, X, Y)
        peer = _torch(torch, params, X, labels)
        # Same loss and gradients on both sides before timing.
        value, g = ours()
        tloss = peer()
        assert g["W0"].dtype == dtype, "float32 must stay float32 through the graph"
        np.testing.assert_allclose(value, tloss.item(), rtol=1e-4)
        tol = 1e-3 if dtype == np.float32 else 1e-9
        for k, gk in g.items():
            ref = peer.params[k].grad.numpy()
            np.testing.assert_allclose(gk, ref, rtol=tol, atol=tol * np.abs(ref).max())
        compare(
            f"mlp 784-256-256-10 fwd+bwd, batch {BATCH}, {np.dtype(dtype).name}, {label}",
            ours,
            peer,
            repeats=20,
            target=1.5,
        )


if __name__ == "__main__":
    main()
