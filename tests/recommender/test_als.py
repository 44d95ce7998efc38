"""Explicit ALS against dense least-squares solves of its own block problems."""

import warnings

import numpy as np
import pytest

from mathlearn.datasets import make_low_rank_ratings
from mathlearn.exceptions import ConvergenceWarning, InvalidParameterError
from mathlearn.recommender import ALS, Ratings, rmse


def _dense(r):
    Y = np.zeros(r.shape)
    M = np.zeros(r.shape, dtype=bool)
    Y[r.users, r.items] = r.values
    M[r.users, r.items] = True
    return Y, M


@pytest.mark.parametrize("weighting", ["count", "none"])
@pytest.mark.parametrize("biases", [True, False])
def test_item_step_is_the_dense_ridge_solution(weighting, biases):
    r = make_low_rank_ratings(30, 20, 300, rank=2, random_state=0)
    lam = 0.3
    m = ALS(n_components=3, regularization=lam, regularization_weighting=weighting,
            biases=biases, max_iter=4, tol=0.0, solver="cholesky",
            random_state=0).fit(r)  # fmt: skip
    Y, M = _dense(r)
    mu = m.offset_
    # The last half-sweep solved every item's ridge problem given the users: redo it with a
    # dense least-squares solve on the augmented system [A; sqrt(reg) I].
    for i in range(r.shape[1]):
        rows = np.flatnonzero(M[:, i])
        A = m.user_factors_[rows]
        t = Y[rows, i] - mu - m.user_bias_[rows]
        if biases:
            A = np.hstack([A, np.ones((rows.size, 1))])
        reg = lam * rows.size if weighting == "count" else lam
        aug = np.vstack([A, np.sqrt(reg) * np.eye(A.shape[1])])
        sol = np.linalg.lstsq(aug, np.r_[t, np.zeros(A.shape[1])], rcond=None)[0]
        got = np.r_[m.item_factors_[i], m.item_bias_[i]] if biases else m.item_factors_[i]
        np.testing.assert_allclose(got, sol, rtol=1e-9, atol=1e-11)


def test_objective_is_the_notes_objective_and_never_increases():
    r = make_low_rank_ratings(40, 30, 500, rank=2, random_state=1)
    lam = 0.5
    m = ALS(n_components=2, regularization=lam, regularization_weighting="none",
            biases=False, max_iter=15, tol=0.0, solver="cholesky",
            random_state=1).fit(r)  # fmt: skip
    hist = np.array(m.objective_)
    assert np.all(np.diff(hist) <= 1e-10 * hist[:-1])
    Y, M = _dense(r)
    P, Q = m.user_factors_, m.item_factors_
    eq67 = np.sum((M * (Y - P @ Q.T)) ** 2) + lam * np.sum(P**2) + lam * np.sum(Q**2)
    assert hist[-1] == pytest.approx(eq67, rel=1e-12)


def test_recovers_low_rank_signal_to_the_noise_floor():
    r, truth = make_low_rank_ratings(300, 200, 15000, rank=3, noise=0.3, random_state=2,
                                     return_truth=True)  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        m = ALS(n_components=3, regularization=0.02, max_iter=30, random_state=0).fit(r)
    u = np.repeat(np.arange(300), 200)
    i = np.tile(np.arange(200), 300)
    # error of the fitted mean function: well below the noise level 0.3
    assert rmse(truth(u, i), m.predict(u, i)) < 0.15


def test_unknown_user_gets_mean_plus_item_bias():
    r = make_low_rank_ratings(20, 10, 120, rank=2, random_state=3)
    m = ALS(n_components=2, max_iter=3, tol=0.0, random_state=0).fit(r)
    got = m.predict(["new", 0], [4, "new item"])
    np.testing.assert_allclose(got, [m.offset_ + m.item_bias_[4], m.offset_ + m.user_bias_[0]])


def test_not_converged_warns_and_params_validated():
    r = make_low_rank_ratings(20, 10, 120, rank=2, random_state=3)
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        ALS(n_components=2, max_iter=2, tol=1e-12, random_state=0).fit(r)
    with pytest.raises(InvalidParameterError, match="regularization"):
        ALS(regularization=0.0).fit(r)


def test_refit_is_deterministic_and_extreme_scales_refused():
    r = make_low_rank_ratings(20, 10, 120, rank=2, random_state=3)
    m = ALS(n_components=2, max_iter=3, tol=0.0, random_state=0)
    a = m.fit(r).predict(r.users, r.items)
    b = m.fit(r).predict(r.users, r.items)
    np.testing.assert_array_equal(a, b)
    big = Ratings(r.users, r.items, r.values * 1e150, r.user_ids, r.item_ids)
    with pytest.raises(ValueError, match="rescale the ratings"):
        m.fit(big)


def test_surprise_als_baseline_style_comparison():
    surprise = pytest.importorskip("surprise")
    import pandas as pd

    r, truth = make_low_rank_ratings(200, 100, 8000, rank=2, noise=0.3, random_state=4,
                                     return_truth=True)  # fmt: skip
    df = pd.DataFrame({"user": r.users, "item": r.items, "rating": r.values})
    ts = surprise.Dataset.load_from_df(df, surprise.Reader(rating_scale=(-20, 20)))
    svd = surprise.SVD(n_factors=2, n_epochs=60, random_state=0).fit(ts.build_full_trainset())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = ALS(n_components=2, regularization=0.01, max_iter=30, random_state=0).fit(r)
    u = np.repeat(np.arange(200), 100)
    i = np.tile(np.arange(100), 200)
    theirs = np.array([svd.predict(a, b).est for a, b in zip(u[::7], i[::7], strict=False)])
    # Both estimate the same mean function; ours is no further from the truth.
    assert rmse(truth(u[::7], i[::7]), ours.predict(u[::7], i[::7])) <= 1.05 * rmse(
        truth(u[::7], i[::7]), theirs
    )


def test_cg_solver_lowers_the_objective_and_solves_exactly_with_enough_steps():
    r = make_low_rank_ratings(40, 30, 500, rank=2, random_state=1)
    kw = {"n_components": 3, "regularization": 0.3, "max_iter": 4, "tol": 0.0, "random_state": 1}
    cg = ALS(solver="cg", cg_steps=2, **kw).fit(r)
    hist = np.array(cg.objective_)
    # Each row's CG iterates start at its current value: no half-sweep raises the objective.
    assert np.all(np.diff(hist) <= 1e-12 * hist[:-1])
    # A system of dimension k + 1 = 4 is solved by 4 CG steps in exact arithmetic; with 12,
    # the rounding left is that of the solve itself (the normal matrices' condition numbers
    # are below 10 here: errors near 1e-15), so the sweeps reproduce the exact (Cholesky) ones.
    exact = ALS(solver="cholesky", **kw).fit(r)
    full = ALS(solver="cg", cg_steps=12, **kw).fit(r)
    for name in ("user_factors_", "item_factors_", "user_bias_", "item_bias_"):
        np.testing.assert_allclose(getattr(full, name), getattr(exact, name), rtol=1e-9,
                                   atol=1e-11)  # fmt: skip
    np.testing.assert_allclose(full.objective_, exact.objective_, rtol=1e-12)
    with pytest.raises(InvalidParameterError):
        ALS(solver="lu").fit(r)
    with pytest.raises(InvalidParameterError):
        ALS(solver="cg", cg_steps=0).fit(r)


def _objective(m, r, lam):
    # The count-weighted objective with biases, computed directly from the fitted model.
    e = r.values - m.predict(r.users, r.items)
    n_u = np.bincount(r.users, minlength=r.shape[0])
    n_i = np.bincount(r.items, minlength=r.shape[1])
    pen_u = n_u @ (np.sum(m.user_factors_**2, axis=1) + m.user_bias_**2)
    pen_i = n_i @ (np.sum(m.item_factors_**2, axis=1) + m.item_bias_**2)
    return e @ e + lam * (pen_u + pen_i)


@pytest.mark.parametrize("cg_steps", [1, 3])
def test_default_cg_solver_never_raises_the_objective(cg_steps):
    # Each row's CG iterates, started from its current value x0, minimise the row's convex
    # quadratic over x0 + K_j(M, r0), a space that contains x0: no CG step can raise a row's
    # objective, so no half-sweep raises the total, exactly as with the exact solve (here
    # with 1 or 3 steps on 6-dimensional systems: the half-sweeps are not exact). The
    # recorded objective is followed through the CG steps (not recomputed); it must equal
    # the objective computed from the fitted factors up to rounding: each row's value
    # carries (steps + 1) updates, each in error by a few k * eps (k + 1 = 6 terms) times
    # the row's starting objective, which is within a small factor of its final one once
    # the fit has settled: about 1e-14 relative, 1e-10 leaves a wide margin.
    r = make_low_rank_ratings(60, 40, 900, rank=3, noise=0.3, random_state=5)
    lam = 0.1
    m = ALS(5, regularization=lam, cg_steps=cg_steps, max_iter=25, tol=0.0,
            random_state=2).fit(r)  # fmt: skip
    assert m.solver == "cg"
    hist = np.array(m.objective_)
    assert np.all(np.diff(hist) <= 1e-12 * hist[:-1])
    assert hist[-1] < hist[0]
    assert hist[-1] == pytest.approx(_objective(m, r, lam), rel=1e-10)


def test_cg_route_converges_to_the_exact_fixed_point():
    # A fixed point of the CG sweeps is one of the exact sweeps: a row whose CG start already
    # solves its system has zero residual, so CG leaves it there, and conversely a row left
    # unchanged by a CG step has zero residual. With 2 CG steps on 6-dimensional systems
    # every half-sweep is inexact, yet the iterates converge to the Cholesky fit's point.
    r = make_low_rank_ratings(40, 30, 500, rank=3, noise=0.3, random_state=1)
    lam = 0.3
    kw = {"n_components": 5, "regularization": lam, "max_iter": 100, "tol": 0.0,
          "random_state": 1}  # fmt: skip
    cg = ALS(solver="cg", cg_steps=2, **kw).fit(r)
    exact = ALS(solver="cholesky", **kw).fit(r)
    for hist in (np.array(cg.objective_), np.array(exact.objective_)):
        # Converged: the last ten sweeps moved the objective by rounding only.
        assert np.ptp(hist[-10:]) <= 1e-13 * hist[-1]
    # At the common fixed point the factors are fixed by the block systems, whose condition
    # numbers (below 1e3 here) amplify rounding: predictions of size ~1 agree to 1e-9.
    u, i = np.repeat(np.arange(40), 30), np.tile(np.arange(30), 40)
    np.testing.assert_allclose(cg.predict(u, i), exact.predict(u, i), rtol=0, atol=1e-9)
    assert cg.objective_[-1] == pytest.approx(exact.objective_[-1], rel=1e-12)
    # And the CG fit's item block is the dense ridge solution given its user block.
    Y, M = _dense(r)
    for j in range(r.shape[1]):
        rows = np.flatnonzero(M[:, j])
        A = np.hstack([cg.user_factors_[rows], np.ones((rows.size, 1))])
        t = Y[rows, j] - cg.offset_ - cg.user_bias_[rows]
        aug = np.vstack([A, np.sqrt(lam * rows.size) * np.eye(A.shape[1])])
        sol = np.linalg.lstsq(aug, np.r_[t, np.zeros(A.shape[1])], rcond=None)[0]
        np.testing.assert_allclose(np.r_[cg.item_factors_[j], cg.item_bias_[j]], sol,
                                   rtol=1e-9, atol=1e-11)  # fmt: skip
