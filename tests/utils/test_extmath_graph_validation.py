import mpmath
import numpy as np
import pytest
import scipy.sparse as sp

from mathlearn.utils.extmath import log_sigmoid, sigmoid, softplus, squared_distances
from mathlearn.utils.graph import kneighbors, knn_graph, laplacian, rbf_affinity
from mathlearn.utils.validation import (
    check_positive,
    check_probability_vector,
    check_random_state,
    check_symmetric,
    check_symmetric_psd,
)


@pytest.mark.parametrize("x", [-800.0, -30.0, -1e-3, 0.0, 2.5, 40.0, 800.0])
def test_sigmoid_softplus_stable_against_mpmath(x):
    mp_sig = 1 / (1 + mpmath.exp(-mpmath.mpf(x)))
    assert sigmoid(x) == pytest.approx(float(mp_sig), rel=1e-14, abs=0)
    assert softplus(x) == pytest.approx(float(mpmath.log1p(mpmath.exp(x))), rel=1e-14)
    assert log_sigmoid(x) == pytest.approx(float(mpmath.log(mp_sig)), rel=1e-14)


def test_squared_distances_matches_direct(rng):
    X = rng.standard_normal((7, 3))
    Y = rng.standard_normal((4, 3))
    direct = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(squared_distances(X, Y), direct, rtol=1e-12, atol=1e-12)
    D = squared_distances(X)
    assert np.all(np.diag(D) == 0) and np.all(D >= 0)
    # Far from the origin the expansion cancels; the result must still be non-negative.
    Z = 1e8 + rng.standard_normal((5, 2)) * 1e-4
    assert np.all(squared_distances(Z) >= 0)


def test_kneighbors_brute_force(rng):
    X = rng.standard_normal((50, 2))
    dist, ind = kneighbors(X, 3, chunk_size=7)
    full = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    np.fill_diagonal(full, np.inf)
    np.testing.assert_array_equal(ind, np.argsort(full, axis=1)[:, :3])
    np.testing.assert_allclose(dist, np.sort(full, axis=1)[:, :3], rtol=1e-10)
    with pytest.raises(ValueError, match="n_neighbors"):
        kneighbors(X, 50)


@pytest.mark.parametrize("sparse", [False, True])
def test_laplacians_identities(rng, sparse):
    X = rng.standard_normal((12, 2))
    W = rbf_affinity(X, gamma=0.5)
    Win = sp.csr_matrix(W) if sparse else W
    dense = (lambda M: M.toarray()) if sparse else (lambda M: M)
    L, d = laplacian(Win)
    L = dense(L)
    np.testing.assert_allclose(L @ np.ones(12), 0, atol=1e-12)  # constant vector in null space
    f = rng.standard_normal(12)
    quad = 0.5 * np.sum(W * (f[:, None] - f[None, :]) ** 2)
    assert f @ L @ f == pytest.approx(quad, rel=1e-10)
    Ls = dense(laplacian(Win, "symmetric")[0])
    Lrw = dense(laplacian(Win, "random_walk")[0])
    np.testing.assert_allclose(Ls, np.diag(d**-0.5) @ L @ np.diag(d**-0.5), atol=1e-12)
    np.testing.assert_allclose(Lrw, np.diag(1 / d) @ L, atol=1e-12)


@pytest.mark.parametrize("kind", ["unnormalized", "symmetric", "random_walk"])
@pytest.mark.parametrize("dense", [False, True])
def test_dense_laplacian_is_the_textbook_expression_bit_for_bit(rng, kind, dense):
    # A dense W's Laplacian is written into one array (Fortran-ordered with dense=True, for
    # the eigensolver to factorise in place): every entry, signed zeros included, is what
    # the expressions below round to (one rounding per operation in the same order).
    W = rng.random((30, 30))
    W = W + W.T
    W[3, 7] = W[7, 3] = 0.0
    d = W.sum(axis=1)
    s = 1.0 / np.sqrt(d)
    expected = {
        "unnormalized": np.diag(d) - W,
        "symmetric": np.eye(30) - s[:, None] * W * s[None, :],
        "random_walk": np.eye(30) - W / d[:, None],
    }[kind]
    L, degree = laplacian(W, kind, dense=dense)
    np.testing.assert_array_equal(L, expected)
    np.testing.assert_array_equal(np.signbit(L), np.signbit(expected))
    np.testing.assert_array_equal(degree, d)
    assert L.flags.f_contiguous == dense


def test_knn_graph_symmetric_and_laplacian_errors(rng):
    X = rng.standard_normal((20, 2))
    G = knn_graph(X, 3)
    assert (G != G.T).nnz == 0
    assert G.diagonal().sum() == 0
    W = np.zeros((3, 3))
    W[0, 1] = W[1, 0] = 1.0
    with pytest.raises(ValueError, match="isolated"):
        laplacian(W, "symmetric")
    with pytest.raises(ValueError, match="negative"):
        laplacian(-np.ones((2, 2)))


@pytest.mark.parametrize("mutual", [False, True])
def test_knn_graph_arrays_hold_exactly_its_entries(rng, mutual):
    # The union (or intersection) of the k-NN relation and its transpose, and nothing more:
    # no buffer sized for both directions' entries kept behind the arrays.
    X = rng.standard_normal((200, 2))
    G = knn_graph(X, 20, mutual=mutual)
    for a in (G.data, G.indices):
        assert a.base is None and a.shape[0] == G.nnz
    _, ind = kneighbors(X, 20)
    A = np.zeros((200, 200), dtype=bool)
    A[np.repeat(np.arange(200), 20), ind.ravel()] = True
    expected = (A & A.T) if mutual else (A | A.T)
    np.testing.assert_array_equal(G.toarray() != 0, expected)


def test_semidefinite_threshold_is_relative_to_the_diagonal():
    # A rank-deficient Gram matrix computed in floating point has eigenvalues of order
    # -n eps max|K_ii| where exact arithmetic gives 0: accepted at any scale. An eigenvalue of
    # -1e-6 max|K_ii| is far beyond rounding (tau = 10 rtol max|K_ii| = 1e-9 max|K_ii|): refused.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    for scale in (1e-150, 1.0, 1e150):
        K = scale * (X @ X.T)
        check_symmetric_psd(K, strict=False)
        Q, _ = np.linalg.qr(rng.standard_normal((40, 40)))
        w = np.linspace(0.0, 1.0, 40) * scale
        w[0] = -1e-6 * np.max(w)
        A = (Q * w) @ Q.T
        A = 0.5 * (A + A.T)
        with pytest.raises(ValueError, match="semi-definite"):
            check_symmetric_psd(A, strict=False)


def test_check_symmetric_scale_free(rng):
    # The tolerance is relative to max|A|: rounding-sized asymmetry passes at any scale, an
    # asymmetry of 1e-6 max|A| does not; indefinite matrices pass (definiteness unchecked).
    X = rng.standard_normal((30, 4))
    for scale in (1e-300, 1.0, 1e300):
        K = (X @ X.T) * scale
        K -= 2.0 * np.diag(np.diag(K))  # indefinite
        K[np.triu_indices(30, 1)] *= 1 + 8 * np.finfo(float).eps
        assert check_symmetric(K, "K") is not None
        K[0, 3] += 1e-6 * np.max(np.abs(K))
        with pytest.raises(ValueError, match="K is not symmetric"):
            check_symmetric(K, "K")
    with pytest.raises(ValueError, match="square"):
        check_symmetric(np.ones((2, 3)))
    with pytest.raises(ValueError, match="empty"):
        check_symmetric(np.ones((0, 0)))
    with pytest.raises(ValueError, match="NaN"):
        check_symmetric(np.array([[1.0, np.inf], [np.inf, 1.0]]))


def test_validation_messages():
    with pytest.raises(ValueError, match="not positive definite"):
        check_symmetric_psd(np.diag([1.0, -2.0]), "covariance")
    with pytest.raises(ValueError, match="not symmetric"):
        check_symmetric_psd(np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="semi-definite"):
        check_symmetric_psd(np.diag([1.0, -2.0]), strict=False)
    check_symmetric_psd(np.diag([1.0, 0.0]), strict=False)
    with pytest.raises(ValueError, match="sum to 1"):
        check_probability_vector([0.2, 0.2])
    with pytest.raises(ValueError, match="> 0"):
        check_positive(0.0, "noise_precision")
    with pytest.raises(ValueError, match="finite"):
        check_positive(float("nan"), "alpha")
    g = check_random_state(np.random.RandomState(0))
    assert isinstance(g, np.random.Generator)
    with pytest.raises(ValueError, match="random_state"):
        check_random_state("seed")


def test_check_int_and_check_bool():
    from mathlearn.utils.validation import check_bool, check_int

    assert check_int(np.int64(3), "n") == 3
    for bad in (0, 2.5, True, "3"):
        with pytest.raises(ValueError, match="n must be an integer >= 1"):
            check_int(bad, "n")
    assert check_bool(np.True_, "flag") is True
    with pytest.raises(TypeError, match="flag must be a bool"):
        check_bool(1, "flag")


def test_check_random_state_from_an_int_is_default_rng():
    # The seed sequence formed once per seed gives default_rng's stream, and spawning from
    # one generator does not change another's children.
    for seed in (0, 7, 2**32 - 1):
        np.testing.assert_array_equal(
            check_random_state(seed).random(5), np.random.default_rng(seed).random(5)
        )
    first = check_random_state(9).spawn(2)[1].random(3)
    again = check_random_state(9).spawn(2)[1].random(3)
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first, np.random.default_rng(9).spawn(2)[1].random(3))
    np.testing.assert_array_equal(check_random_state(np.int64(9)).random(2),
                                  np.random.default_rng(9).random(2))  # fmt: skip


@pytest.mark.parametrize("shape", [(37, 5), (300, 20), (1 << 10, 1 << 10)])
def test_sum_of_squares_against_fsum(rng, shape):
    # Both routes (einsum below 2^20 entries, BLAS ddot from 2^20) against the correctly
    # rounded sum of the rounded squares. A sum of n products in any order, with or without
    # fused multiply-adds, errs by at most gamma_n ~ n u times the sum of the exact squares
    # (u = eps / 2, Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., §3.1),
    # and rounding the squares first moves the reference by at most u times it: within
    # n eps times the reference for n >= 2.
    import math

    from mathlearn.utils.extmath import sum_of_squares

    X = rng.standard_normal(shape) * 1e3
    exact = math.fsum((X * X).ravel().tolist())
    got = sum_of_squares(X)
    assert abs(got - exact) <= X.size * np.finfo(float).eps * exact
    # a non-contiguous view gives the sum of its own entries
    view = X[:, ::2]
    exact_view = math.fsum((view * view).ravel().tolist())
    assert abs(sum_of_squares(view) - exact_view) <= view.size * np.finfo(float).eps * exact_view
