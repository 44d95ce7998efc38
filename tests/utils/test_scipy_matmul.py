"""The product on SciPy's BLAS (``utils._threads.scipy_matmul``) against NumPy's matmul.

Two OpenBLAS builds may round a product differently (other kernels, other summation order),
so the comparison uses the standard bound for a computed product,
``|fl(AB) - AB| <= gamma_k |A| |B|`` with ``gamma_k = k u / (1 - k u)`` (Higham, *Accuracy and
Stability of Numerical Algorithms*, 2nd ed., section 3.5), applied to each of the two
results: their difference is at most ``2 gamma_k |A| |B|``.
"""

import numpy as np
import pytest

from mathlearn.utils._threads import faulted_empty, matmul_beside_scipy, scipy_matmul


def _layouts(M):
    yield M  # C order
    yield np.asfortranarray(M)
    wide = np.zeros((M.shape[0], 2 * M.shape[1]), dtype=M.dtype)
    wide[:, ::2] = M
    yield wide[:, ::2]  # neither order: strided columns


def _check(C, A, B):
    dtype = np.result_type(A, B)
    k = A.shape[1]
    u = np.finfo(dtype).eps / 2
    gamma = k * u / (1 - k * u)
    bound = 2 * gamma * (np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64))
    assert C.dtype == dtype and C.shape == (A.shape[0], B.shape[1])
    assert np.all(np.abs(C.astype(np.float64) - (A @ B).astype(np.float64)) <= bound)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_layout_gives_numpys_product_to_rounding(dtype):
    rng = np.random.default_rng(0)
    A0 = rng.normal(size=(7, 5)).astype(dtype)
    B0 = rng.normal(size=(5, 4)).astype(dtype)
    for A in _layouts(A0):
        for B in _layouts(B0):
            C = scipy_matmul(A, B)
            _check(C, A, B)
            assert C.flags.c_contiguous
            out = np.empty((7, 4), dtype=dtype)
            assert scipy_matmul(A, B, out=out) is out
            _check(out, A, B)
    # transposed views (the randomised range finder's X^T Q and Q^T X^T)
    _check(scipy_matmul(B0.T, A0.T), B0.T, A0.T)


def test_mixed_types_follow_numpy():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(6, 3)).astype(np.float32)
    B = rng.normal(size=(3, 2))
    _check(scipy_matmul(A, B), A, B)  # float64, as NumPy's result
    ints = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(scipy_matmul(ints, ints.T), ints @ ints.T)


def test_empty_operands_and_a_bad_out():
    np.testing.assert_array_equal(scipy_matmul(np.ones((0, 3)), np.ones((3, 2))), np.ones((0, 2)))
    np.testing.assert_array_equal(scipy_matmul(np.ones((2, 0)), np.ones((0, 3))), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="C-contiguous"):
        scipy_matmul(np.ones((2, 3)), np.ones((3, 2)), out=np.empty((2, 2), order="F")[:, :1])


def test_the_product_beside_scipy_follows_the_thread_count(monkeypatch):
    import mathlearn.utils._threads as threads

    A, B = np.ones((3, 2)), np.ones((2, 4))
    monkeypatch.setattr(threads, "blas_threads", lambda: 1)
    mm = matmul_beside_scipy()
    assert mm is not scipy_matmul
    np.testing.assert_array_equal(mm(A, B), A @ B)
    monkeypatch.setattr(threads, "blas_threads", lambda: 2)
    assert matmul_beside_scipy() is scipy_matmul


@pytest.mark.parametrize("shape", [(0,), (3, 5), (1000, 1000), (7, 600, 3)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_faulted_empty_is_a_writable_array_of_the_shape(shape, dtype):
    out = faulted_empty(shape, dtype)
    assert out.shape == shape and out.dtype == dtype and out.flags.c_contiguous
    out[...] = 1.5  # writable, and every entry is ours to set
    assert np.all(out == 1.5)


def test_gram_into_a_faulted_buffer_is_numpys_symmetric_product():
    # The same product NumPy forms without ``out`` (its symmetric routine for X X^T): the
    # distance expansion relies on X X^T being exactly symmetric.
    X = np.random.default_rng(0).standard_normal((700, 9))
    D = np.matmul(X, X.T, out=faulted_empty((700, 700)))
    np.testing.assert_array_equal(D, np.matmul(X, X.T))
    np.testing.assert_array_equal(D, D.T)
