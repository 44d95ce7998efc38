"""The product on SciPy's BLAS (``utils._threads.scipy_matmul``) against NumPy's matmul.

Two OpenBLAS builds may round a product differently (other kernels, other summation order),
so the comparison uses the standard bound for a computed product,
``|fl(AB) - AB| <= gamma_k |A| |B|`` with ``gamma_k = k u / (1 - k u)`` (Higham, *Accuracy and
Stability of Numerical Algorithms*, 2nd ed., section 3.5), applied to each of the two
results: their difference is at most ``2 gamma_k |A| |B|``.
"""

import numpy as np
import pytest

from mathlearn.utils._columns import class_sums
from mathlearn.utils._threads import (
    faulted_empty,
    gram_beside_scipy,
    matmul_beside_scipy,
    mirror_lower,
    scipy_gram,
    scipy_matmul,
)
from mathlearn.utils.linalg import symmetric_operator


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


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_matrix_times_a_vector_is_numpys_to_rounding(dtype):
    rng = np.random.default_rng(2)
    A0, v = rng.normal(size=(6, 4)).astype(dtype), rng.normal(size=4).astype(dtype)
    for A in _layouts(A0):
        c = scipy_matmul(A, v)
        assert c.shape == (6,) and c.dtype == dtype
        _check(c[:, None], A, v[:, None])


@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 130])
def test_mirror_lower_copies_the_lower_triangle_exactly(n):
    L = np.tril(np.random.default_rng(n).normal(size=(n, n)))
    G = mirror_lower(L.copy())
    np.testing.assert_array_equal(np.tril(G), L)
    np.testing.assert_array_equal(G, G.T)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (70, 9), (40, 130)])
@pytest.mark.parametrize("smallest", [0, 1 << 16])
def test_the_gram_on_scipys_blas_is_numpys_to_rounding_and_exactly_symmetric(
    dtype, shape, smallest, monkeypatch
):
    # smallest=0: every shape through SciPy's syrk; the default: the small ones through NumPy
    import mathlearn.utils._threads as threads

    monkeypatch.setattr(threads, "_SMALL_PRODUCT", smallest)
    A0 = np.random.default_rng(3).normal(size=shape).astype(dtype)
    for A in _layouts(A0):
        G = scipy_gram(A)
        assert G.flags.c_contiguous
        np.testing.assert_array_equal(G, G.T)
        _check(G, A, A.T)
        out = faulted_empty((shape[0], shape[0]), dtype)
        assert scipy_gram(A, out=out) is out
        np.testing.assert_array_equal(out, G)
    assert scipy_gram(np.ones((0, 3))).shape == (0, 0)
    with pytest.raises(ValueError, match=r"C-contiguous|mismatch"):
        scipy_gram(A0, out=np.empty((shape[0] + 1, shape[0]), dtype))


def test_the_gram_beside_scipy_follows_the_thread_count(monkeypatch):
    import mathlearn.utils._threads as threads

    A = np.random.default_rng(4).normal(size=(6, 3))
    monkeypatch.setattr(threads, "blas_threads", lambda: 1)
    np.testing.assert_array_equal(gram_beside_scipy()(A), A @ A.T)
    monkeypatch.setattr(threads, "blas_threads", lambda: 2)
    assert gram_beside_scipy() is scipy_gram


def test_symmetric_operator_is_the_matrix_to_rounding():
    # symv reads one triangle: for an exactly symmetric matrix, the product's error bound is
    # that of any computed product (gamma_N |A| |v|, for each of the two results).
    rng = np.random.default_rng(5)
    M = rng.normal(size=(50, 50))
    A = M + M.T
    V = rng.normal(size=(50, 3))
    for layout in (A, np.asfortranarray(A)):
        op = symmetric_operator(layout)
        assert op.shape == (50, 50)
        _check((op @ V[:, 0])[:, None], A, V[:, :1])
        _check(op @ V, A, V)
    with pytest.raises(ValueError, match="square float64"):
        symmetric_operator(np.ones((2, 3)))


def test_class_sums_through_the_scipy_product_agree_with_numpys():
    rng = np.random.default_rng(6)
    X, labels = rng.normal(size=(300, 7)), rng.integers(0, 3, 300)
    ref = np.stack([X[labels == c].sum(axis=0) for c in range(3)])
    u = np.finfo(float).eps / 2
    bound = (
        2 * 300 * u / (1 - 300 * u) * np.stack([np.abs(X[labels == c]).sum(0) for c in range(3)])
    )
    for mm in (np.matmul, scipy_matmul):
        assert np.all(np.abs(class_sums(X, labels, 3, mm) - ref) <= bound)
