import numpy as np
import pytest
import scipy.linalg as sla

from mathlearn.exceptions import ConvergenceWarning
from mathlearn.utils.linalg import gram_schmidt_qr, qr_eigh

# The worked example of Imperial "Mathematics for Inference and Machine Learning" §2.1.2.1, eqs.
# 2.18-2.19 (corrected: ||q~_2|| = 1/sqrt(2) and Q[2, 2] = +1/sqrt(3); the notes print other
# values).
A_TV01 = np.array([[1.0, 1.0, 0.0], [1.0, 2.0, 1.0], [-2.0, -3.0, 1.0]])
s2, s3, s6 = np.sqrt(2), np.sqrt(3), np.sqrt(6)
Q_TV01 = np.array([[1 / s6, -1 / s2, 1 / s3], [1 / s6, 1 / s2, 1 / s3], [-2 / s6, 0.0, 1 / s3]])
R_TV01 = np.array([[s6, 9 / s6, -1 / s6], [0.0, 1 / s2, 1 / s2], [0.0, 0.0, 2 / s3]])


@pytest.mark.parametrize("modified", [False, True])
@pytest.mark.parametrize("reorthogonalize", [False, True])
def test_worked_example_tv01(modified, reorthogonalize):
    Q, R = gram_schmidt_qr(A_TV01, modified=modified, reorthogonalize=reorthogonalize)
    np.testing.assert_allclose(Q, Q_TV01, atol=1e-14)
    np.testing.assert_allclose(R, R_TV01, atol=1e-14)
    # |det A| = |prod r_ii| (Imperial "Mathematics for Inference and Machine Learning" §2.1.2).
    assert abs(np.linalg.det(A_TV01)) == pytest.approx(np.prod(np.diag(R)))


def test_matches_householder_qr(rng):
    A = rng.normal(size=(12, 5))
    Q, R = gram_schmidt_qr(A)
    Qh, Rh = sla.qr(A, mode="economic")
    signs = np.sign(np.diag(Rh))  # the positive-diagonal factorisation is unique
    np.testing.assert_allclose(Q, Qh * signs, atol=1e-12)
    np.testing.assert_allclose(R, Rh * signs[:, None], atol=1e-12)
    np.testing.assert_allclose(Q @ R, A, atol=1e-12)


def test_loss_of_orthogonality_and_its_cures():
    # A Hilbert matrix (cond ~ 1e13): classical Gram-Schmidt loses orthogonality, modified
    # loses less, reorthogonalised is orthogonal to machine precision.
    A = sla.hilbert(10)

    def loss(Q):
        return np.linalg.norm(Q.T @ Q - np.eye(10))

    cgs = loss(gram_schmidt_qr(A, modified=False)[0])
    mgs = loss(gram_schmidt_qr(A, modified=True)[0])
    cgs2 = loss(gram_schmidt_qr(A, modified=False, reorthogonalize=True)[0])
    assert cgs > 1e-2
    assert mgs < cgs
    assert cgs2 < 1e-12


def test_gram_schmidt_bad_input():
    with pytest.raises(ValueError, match="rank deficient"):
        gram_schmidt_qr(np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0]]))
    with pytest.raises(ValueError, match="rows"):
        gram_schmidt_qr(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        gram_schmidt_qr(np.array([[np.nan], [1.0]]))


def test_qr_iteration_well_separated_spectrum(rng):
    # Imperial "Mathematics for Inference and Machine Learning" §2.1.2 (QR algorithm): a 3 x 3
    # matrix with spectrum {5, 3, 1} converges in 100 unshifted iterations.
    Qr = sla.qr(rng.normal(size=(3, 3)))[0]
    A = Qr @ np.diag([5.0, 3.0, 1.0]) @ Qr.T
    w, V, _ = qr_eigh(A, shift=None, max_iter=100, tol=1e-10)
    np.testing.assert_allclose(w, [5.0, 3.0, 1.0], atol=1e-9)
    np.testing.assert_allclose(A @ V, V * w, atol=1e-8)


def test_qr_iteration_unshifted_is_slow_as_the_notes_say(rng):
    # Imperial "Mathematics for Inference and Machine Learning" §2.1.2 (QR algorithm): randn(100,
    # 100), B = A A^T, 100 unshifted iterations leave a visible error.
    A = rng.normal(size=(100, 100))
    B = A @ A.T
    with pytest.warns(ConvergenceWarning):
        w, _, n_iter = qr_eigh(B, shift=None, max_iter=100)
    exact = np.linalg.eigvalsh(B)[::-1]
    assert n_iter == 100
    assert 1e-6 < np.max(np.abs(w - exact) / exact) < 1.0


def test_qr_iteration_shifted_matches_eigh(rng):
    A = rng.normal(size=(40, 40))
    B = A @ A.T
    w, V, n_iter = qr_eigh(B)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(B)[::-1], rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(V.T @ V, np.eye(40), atol=1e-10)
    np.testing.assert_allclose(B @ V, V * w, atol=1e-8 * np.abs(w).max())
    assert n_iter < 5 * 40  # a few steps per eigenvalue with Wilkinson shifts and deflation


def test_qr_iteration_bad_input():
    with pytest.raises(ValueError, match="symmetric"):
        qr_eigh(np.array([[1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="square"):
        qr_eigh(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        qr_eigh(np.array([[np.nan]]))
    with pytest.raises(ValueError, match="shift"):
        qr_eigh(np.eye(2), shift="rayleigh")


def test_qr_iteration_deflates_only_a_decoupled_row():
    # The last row's neighbour A[2, 1] is zero but A[2, 0] couples it to the first row, so
    # A[2, 2] = 3 is not an eigenvalue: eigenvalues are 2 and 2 +- sqrt(2).
    A = np.array([[1.0, 0.0, 1.0], [0.0, 2.0, 0.0], [1.0, 0.0, 3.0]])
    w, V, _ = qr_eigh(A)
    np.testing.assert_allclose(w, [2 + np.sqrt(2), 2.0, 2 - np.sqrt(2)], rtol=1e-12)
    np.testing.assert_allclose(A @ V, V * w, atol=1e-12)
