"""The batched SPD solve and cholesky's reported jitter."""

import numpy as np
import pytest
import scipy.linalg as sla

from mathlearn.utils.linalg import cholesky, solve_psd_batched

EPS = np.finfo(float).eps


def _spd_stack(rng, batch, n):
    A = rng.standard_normal((*batch, n, n))
    return A @ np.swapaxes(A, -1, -2) + n * np.eye(n)


@pytest.mark.parametrize("rhs", ["vector", "matrix"])
def test_matches_one_solve_per_member(rng, rhs):
    A = _spd_stack(rng, (3, 2), 5)
    B = rng.standard_normal((3, 2, 5) if rhs == "vector" else (3, 2, 5, 4))
    X = solve_psd_batched(A, B)
    assert X.shape == B.shape
    for i in range(3):
        for j in range(2):
            ref = sla.solve(A[i, j], B[i, j], assume_a="pos")
            # Backward-stable solves of a system with condition kappa agree to ~kappa eps.
            kappa = np.linalg.cond(A[i, j])
            np.testing.assert_allclose(
                X[i, j], ref, rtol=0, atol=50 * kappa * EPS * np.abs(ref).max()
            )
            # And the residual is small relative to ||A|| ||x||.
            res = A[i, j] @ X[i, j] - B[i, j]
            assert (
                np.abs(res).max() <= 50 * 5 * EPS * np.abs(A[i, j]).max() * np.abs(X[i, j]).max()
            )


def test_shared_matrix_broadcasts(rng):
    A = _spd_stack(rng, (), 4)
    B = rng.standard_normal((6, 4))
    X = solve_psd_batched(A[None], B)
    np.testing.assert_allclose(X, sla.solve(A, B.T, assume_a="pos").T, rtol=1e-12)


def test_reads_the_lower_triangle_only(rng):
    A = _spd_stack(rng, (2,), 3)
    garbage = A + np.triu(np.full((3, 3), 1e3), 1)
    B = rng.standard_normal((2, 3))
    np.testing.assert_allclose(solve_psd_batched(garbage, B), solve_psd_batched(A, B), rtol=1e-12)


def test_bad_members_are_named(rng):
    A = _spd_stack(rng, (3,), 2)
    A[2] = [[1.0, 2.0], [2.0, 1.0]]
    with pytest.raises(np.linalg.LinAlgError, match=r"cov\[2\] is not positive definite"):
        solve_psd_batched(A, np.ones((3, 2)), name="cov")
    with pytest.raises(ValueError, match="NaN or infinity"):
        solve_psd_batched(np.full((1, 2, 2), np.nan), np.ones((1, 2)))
    with pytest.raises(ValueError, match="shape"):
        solve_psd_batched(A, np.ones(2))
    with pytest.raises(ValueError, match="square"):
        solve_psd_batched(np.ones((2, 2, 3)), np.ones((2, 2)))


def test_cholesky_reports_its_jitter():
    A = np.array([[1.0, 1.0], [1.0, 1.0]])  # singular PSD
    L, jitter = cholesky(A, jitter=1e-8, growth=2.0, warn=False, return_jitter=True)
    assert jitter >= 1e-8
    np.testing.assert_allclose(L @ L.T, A + jitter * np.eye(2), rtol=1e-14)
    L0, j0 = cholesky(np.eye(2), return_jitter=True)
    assert j0 == 0.0 and np.array_equal(L0, np.eye(2))
    with pytest.raises(ValueError, match="growth"):
        cholesky(A, growth=1.0)
