"""The compiled recurrences give bit-identical results in every build of ``_rnn.c``.

``_rnn.c`` is compiled in ISO C mode, which turns off contraction into fused multiply-adds,
and writes the order of every floating-point operation of its pointwise passes in its source;
the vector width (SSE2's 4 floats, AVX2's 8, AVX-512's 16) only changes how many entries one
instruction handles. So the optimised baseline x86-64 build, an AVX2 build, an AVX-512 build
and the installed library (GCC's ``target_clones``: the widest the processor has) must round
alike, bit for bit, given the same BLAS for the per-step products. Each version is compiled
here with ``-DML_NO_CLONES``; a version is run only where the processor has its instructions.
Needs GCC on x86-64 Linux and the C source.
"""

import ctypes

import numpy as np
import pytest

from mathlearn import _ext

from .._c_builds import compile_builds, cpu_flags, skip_unless_buildable

pytestmark = skip_unless_buildable(
    "_rnn", also=_ext.blas_pointer("sgemm") is not None, needs="BLAS's sgemm"
)


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    flags = {"baseline": ["-O3"]}
    cpu = cpu_flags()
    if "avx2" in cpu:
        flags["avx2"] = ["-O3", "-mavx2"]
    if "avx512f" in cpu:
        flags["avx512f"] = ["-O3", "-mavx512f"]
    return compile_builds("_rnn", flags, tmp_path_factory.mktemp("rnn_builds"))


def _run_all(lib, seed):
    """Every exported kernel on one random problem (masked), their outputs in a list."""
    rng = np.random.default_rng(seed)
    I, P = ctypes.c_int64, ctypes.c_void_p
    gemm = P(_ext.blas_pointer("sgemm"))
    t, n, h = 6, 5, 19  # 19: every vector width leaves a remainder loop
    mask = np.ones((t, n), np.float32)
    mask[3:, 1] = 0
    mask[1:, 4] = 0
    outs = []

    def ptr(a):
        return P(a.ctypes.data)

    x = np.concatenate([np.linspace(-12, 12, 4001), rng.standard_normal(200) * 0.01])
    x = x.astype(np.float32)
    y = np.empty_like(x)
    lib.rnn_tanh_f32(I(x.size), ptr(x), ptr(y))
    outs.append(y)
    for kind, g in (("lstm", 4), ("gru", 3), ("elman", 1)):
        whh_t = (rng.standard_normal((h, g * h)) * 0.3).astype(np.float32)
        w_hh = np.ascontiguousarray(whh_t.T)
        b = rng.standard_normal(g * h).astype(np.float32)
        b2 = rng.standard_normal(g * h).astype(np.float32)
        hs = np.zeros((t + 1, n, h), np.float32)
        hs[0] = rng.standard_normal((n, h))
        dy = rng.standard_normal((t + 2, n, h)).astype(np.float32)
        dh = dy[t].copy()
        if kind == "lstm":
            gates = rng.standard_normal((t, n, g * h)).astype(np.float32)
            cs = np.zeros_like(hs)
            cs[0] = rng.standard_normal((n, h))
            tcs = np.zeros((t, n, h), np.float32)
            lib.rnn_lstm_forward_seq_f32(
                I(t), I(n), I(h), gemm, ptr(whh_t), ptr(b), ptr(gates), ptr(hs), ptr(cs),
                ptr(tcs), ptr(mask),
            )  # fmt: skip
            dc, da = dy[t + 1].copy(), np.zeros((t, n, g * h), np.float32)
            lib.rnn_lstm_backward_seq_f32(
                I(t), I(n), I(h), gemm, ptr(w_hh), ptr(gates), ptr(cs), ptr(tcs), ptr(dy),
                I(n * h), ptr(mask), ptr(dh), ptr(dc), ptr(da),
            )  # fmt: skip
            # Masked rows leave gates and tanh(c) of their padded steps unwritten.
            live = mask.astype(bool)
            outs += [gates[live], tcs[live], hs, cs, da, dh, dc]
        elif kind == "gru":
            gates = rng.standard_normal((t, n, g * h)).astype(np.float32)
            hhn = np.zeros((t, n, h), np.float32)
            work = np.empty((n, g * h), np.float32)
            lib.rnn_gru_forward_seq_f32(
                I(t), I(n), I(h), gemm, ptr(whh_t), ptr(b), ptr(b2), ptr(gates), ptr(hhn),
                ptr(hs), ptr(mask), ptr(work),
            )  # fmt: skip
            dxa = np.zeros((t, n, g * h), np.float32)
            dha = np.zeros_like(dxa)
            lib.rnn_gru_backward_seq_f32(
                I(t), I(n), I(h), gemm, ptr(w_hh), ptr(gates), ptr(hhn), ptr(hs), ptr(dy),
                I(n * h), ptr(mask), ptr(dh), ptr(dxa), ptr(dha),
            )  # fmt: skip
            live = mask.astype(bool)
            outs += [gates[live], hhn[live], hs, dxa, dha, dh]
        else:
            hs[1:] = rng.standard_normal((t, n, h))
            lib.rnn_elman_forward_seq_f32(
                I(t), I(n), I(h), gemm, ptr(whh_t), ptr(b), ptr(hs), ptr(mask)
            )
            da = np.zeros((t, n, h), np.float32)
            lib.rnn_elman_backward_seq_f32(
                I(t), I(n), I(h), gemm, ptr(w_hh), ptr(hs), ptr(dy), I(n * h), ptr(mask),
                ptr(dh), ptr(da),
            )  # fmt: skip
            outs += [hs, da, dh]
    return outs


def test_every_build_rounds_alike(builds):
    for lib in builds.values():
        for name in ("lstm", "gru", "elman"):
            for way in ("forward", "backward"):
                getattr(lib, f"rnn_{name}_{way}_seq_f32").restype = None
        lib.rnn_tanh_f32.restype = None
    reference = _run_all(builds["baseline"], 0)
    assert all(np.all(np.isfinite(a)) for a in reference)
    for name, lib in builds.items():
        got = _run_all(lib, 0)
        for a, b in zip(got, reference, strict=True):
            np.testing.assert_array_equal(a, b, err_msg=name)
