import mpmath
import numpy as np
import pytest
import scipy.linalg as sla

from mathlearn.exceptions import NumericalWarning
from mathlearn.utils.linalg import cholesky, logdet_psd, lstsq, solve_psd


def _spd(rng, n):
    A = rng.standard_normal((n, n))
    return A @ A.T + n * np.eye(n)


def test_cholesky_reconstructs(rng):
    A = _spd(rng, 6)
    L = cholesky(A)
    np.testing.assert_allclose(L @ L.T, A, rtol=1e-13)
    assert np.allclose(L, np.tril(L))


def test_cholesky_jitter_warns_on_singular_psd(rng):
    v = rng.standard_normal((5, 2))
    A = v @ v.T  # rank 2: PSD but singular
    with pytest.warns(NumericalWarning, match="added"):
        L = cholesky(A)
    np.testing.assert_allclose(L @ L.T, A, atol=1e-6)


def test_cholesky_rejects_indefinite_and_bad_input():
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        cholesky(np.diag([1.0, -1.0]), warn=False)
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        cholesky(np.diag([1.0, 0.0]), jitter=None)
    with pytest.raises(ValueError, match="NaN"):
        cholesky(np.array([[np.nan]]))
    with pytest.raises(ValueError, match="square"):
        cholesky(np.ones((2, 3)))


def test_solve_psd_and_logdet_against_mpmath(rng):
    A = _spd(rng, 5)
    b = rng.standard_normal(5)
    x = solve_psd(A, b)
    Am = mpmath.matrix(A.tolist())
    xm = mpmath.lu_solve(Am, mpmath.matrix(b.tolist()))
    np.testing.assert_allclose(x, np.array(xm.tolist(), dtype=float).ravel(), rtol=1e-12)
    assert logdet_psd(A) == pytest.approx(float(mpmath.log(mpmath.det(Am))), rel=1e-12)


@pytest.mark.parametrize("method", ["qr", "svd"])
def test_lstsq_matches_scipy(rng, method):
    X = rng.standard_normal((30, 4))
    y = rng.standard_normal(30)
    coef, rank = lstsq(X, y, method=method)
    ref = sla.lstsq(X, y)[0]
    assert rank == 4
    np.testing.assert_allclose(coef, ref, rtol=1e-10)


def test_lstsq_rank_deficient_fits_the_data(rng):
    X = rng.standard_normal((20, 3))
    X = np.column_stack([X, X[:, 0] + X[:, 1]])
    y = rng.standard_normal(20)
    for method in ("qr", "svd"):
        coef, rank = lstsq(X, y, method=method)
        assert rank == 3
        # Both must reach the least-squares residual.
        ref = sla.lstsq(X, y)[0]
        np.testing.assert_allclose(X @ coef, X @ ref, atol=1e-10)


def test_cholesky_batched_and_cho_solve_batched(rng):
    from mathlearn.utils.linalg import cho_solve_batched, cholesky_batched

    A = rng.normal(size=(4, 5, 5))
    S = A @ A.transpose(0, 2, 1) + 5 * np.eye(5)
    L = cholesky_batched(S)
    np.testing.assert_allclose(L @ L.transpose(0, 2, 1), S, rtol=1e-13, atol=1e-13)
    assert np.all(np.triu(L, 1) == 0)
    B = rng.normal(size=(5, 3))
    X = cho_solve_batched(L, B)
    np.testing.assert_allclose(S @ X, np.broadcast_to(B, (4, 5, 3)), rtol=1e-12, atol=1e-12)
    X2 = cho_solve_batched(L, np.stack([B] * 4))
    np.testing.assert_allclose(X2, X, rtol=1e-14)
    S[2] = -np.eye(5)
    with pytest.raises(np.linalg.LinAlgError, match=r"stack\[2\] is not positive definite"):
        cholesky_batched(S, name="stack")
    with pytest.raises(ValueError, match="NaN"):
        cholesky_batched(np.full((1, 2, 2), np.nan))
    with pytest.raises(ValueError, match="square"):
        cholesky_batched(np.ones((2, 2, 3)))


@pytest.mark.parametrize("n", [1, 5, 256, 300, 700])
def test_symmetrize_in_place_is_the_expression_bit_for_bit(n):
    # Each mirrored pair is averaged once as 0.5 * (a_ij + a_ji); addition commutes in
    # floating point, so the tiles give exactly 0.5 * (A + A^T), at sizes below, equal to and
    # between multiples of the tile.
    from mathlearn.utils.linalg import symmetrize_in_place

    A = np.random.default_rng(n).normal(size=(n, n))
    expected = 0.5 * (A + A.T)
    assert symmetrize_in_place(A) is A
    np.testing.assert_array_equal(A, expected)
    np.testing.assert_array_equal(A, A.T)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cho_solve_is_scipys_solve_bit_for_bit(rng, dtype):
    """LAPACK's potrs called directly gives scipy.linalg.cho_solve's result exactly (it calls
    the same routine), for one and several right-hand sides, either memory order, in the
    factor's precision; empty right-hand sides and mismatched shapes are handled."""
    import scipy.linalg as sla

    from mathlearn.utils.linalg import cho_solve

    A = rng.standard_normal((12, 12))
    L = np.linalg.cholesky(A @ A.T + 12 * np.eye(12)).astype(dtype)
    for B in (rng.standard_normal(12), rng.standard_normal((12, 3))):
        for b in (B.astype(dtype), np.asfortranarray(B.astype(dtype))):
            x = cho_solve(L, b)
            assert x.dtype == dtype and x.shape == b.shape
            np.testing.assert_array_equal(x, sla.cho_solve((L, True), b, check_finite=False))
    assert cho_solve(L, np.empty((12, 0), dtype=dtype)).shape == (12, 0)
    assert cho_solve(np.empty((0, 0)), np.empty(0)).shape == (0,)
    with pytest.raises(ValueError, match="incompatible dimensions"):
        cho_solve(L, np.ones(11))
