import numpy as np
import pytest
from scipy.optimize import nnls
from sklearn.decomposition import NMF as SkNMF

from mathlearn.decomposition import NMF
from mathlearn.exceptions import ConvergenceWarning


@pytest.fixture
def nmf_data(rng):
    W = rng.uniform(size=(60, 3))
    H = rng.uniform(size=(3, 12))
    X = W @ H + 0.05 * rng.uniform(size=(60, 12))
    W0 = rng.uniform(0.1, 1.0, size=(60, 3))
    H0 = rng.uniform(0.1, 1.0, size=(3, 12))
    return X, W0, H0


def _nnls_reference(X, H):
    """argmin_{W >= 0} ||X - W H||_F by scipy's NNLS on the D x k form, row by row."""
    return np.array([nnls(H.T, x)[0] for x in X])


@pytest.mark.parametrize("beta_loss", ["frobenius", "kullback-leibler"])
def test_same_iterates_as_sklearn_mu(nmf_data, beta_loss):
    X, W0, H0 = nmf_data
    ours = NMF(3, beta_loss=beta_loss, init="custom", solver="mu", max_iter=2000, tol=1e-4)
    ref = SkNMF(3, beta_loss=beta_loss, init="custom", solver="mu", max_iter=2000, tol=1e-4)
    W = ours.fit_transform(X, W=W0.copy(), H=H0.copy())
    Wr = ref.fit_transform(X, W=W0.copy(), H=H0.copy())
    assert ours.n_iter_ == ref.n_iter_
    np.testing.assert_allclose(ours.components_, ref.components_, rtol=1e-8, atol=1e-12)
    if beta_loss == "kullback-leibler":
        np.testing.assert_allclose(W, Wr, rtol=1e-8, atol=1e-12)
        assert ours.reconstruction_err_ == pytest.approx(ref.reconstruction_err_, rel=1e-10)
    else:
        # The loop's last objective is scikit-learn's (same iterates); the returned W is the
        # exact minimiser for the final H, which can only be lower.
        H = ours.components_
        assert ours.loss_curve_[-1] == pytest.approx(_objective(X, Wr, H, beta_loss), rel=1e-9)
        np.testing.assert_allclose(W, _nnls_reference(X, H), rtol=1e-7, atol=1e-10)
        assert _objective(X, W, H, beta_loss) <= ours.loss_curve_[-1]
        assert ours.reconstruction_err_ == pytest.approx(
            np.sqrt(2 * _objective(X, W, H, beta_loss)), rel=1e-10
        )
        assert ours.reconstruction_err_ <= ref.reconstruction_err_ * (1 + 1e-12)


def _objective(X, W, H, beta_loss):
    WH = W @ H
    if beta_loss == "frobenius":
        return 0.5 * np.sum((X - WH) ** 2)
    return np.sum(X * np.log(X / WH) - X + WH)


def test_frobenius_objective_non_increasing(nmf_data):
    X, W0, H0 = nmf_data
    m = NMF(3, init="custom", solver="mu", max_iter=150, tol=0)
    W = m.fit_transform(X, W=W0, H=H0)
    loss = np.array(m.loss_curve_)
    assert len(loss) == 150
    assert np.all(np.diff(loss) <= 1e-12 * loss[0])
    assert np.all(W >= 0) and np.all(m.components_ >= 0)
    # The recorded objective is the objective of the loop's iterates (scikit-learn's, computed
    # here directly); the exact final W step lowers it further.
    Wr = SkNMF(3, init="custom", solver="mu", max_iter=150, tol=0).fit_transform(X, W=W0, H=H0)
    assert loss[-1] == pytest.approx(_objective(X, Wr, m.components_, "frobenius"), rel=1e-9)
    assert _objective(X, W, m.components_, "frobenius") <= loss[-1]


@pytest.mark.parametrize("beta_loss", ["frobenius", "kullback-leibler"])
def test_objective_non_increasing_every_iteration(nmf_data, beta_loss):
    # Refit from the same start for 1, 2, ... iterations and evaluate the objective directly.
    X, W0, H0 = nmf_data
    values = []
    for t in range(1, 31):
        m = NMF(3, beta_loss=beta_loss, init="custom", solver="mu", max_iter=t, tol=0)
        m.fit_transform(X, W=W0, H=H0)
        # The loop's W after t iterations is scikit-learn's (same iterates); for Frobenius
        # ours returns the exact minimiser for the final H instead.
        ref = SkNMF(3, beta_loss=beta_loss, init="custom", solver="mu", max_iter=t, tol=0)
        Wr = ref.fit_transform(X, W=W0, H=H0)
        values.append(_objective(X, Wr, m.components_, beta_loss))
        assert m.loss_curve_[-1] == pytest.approx(values[-1], rel=1e-9)
    assert np.all(np.diff(values) <= 1e-12 * values[0])
    assert values[-1] < 0.5 * values[0]


def test_kl_loss_curve_at_checks(nmf_data):
    X, W0, H0 = nmf_data
    m = NMF(3, beta_loss="kullback-leibler", init="custom", solver="mu", max_iter=35, tol=1e-12)
    with pytest.warns(ConvergenceWarning):
        m.fit_transform(X, W=W0, H=H0)
    assert len(m.loss_curve_) == 4  # iterations 10, 20, 30 and the last
    assert np.all(np.diff(m.loss_curve_) <= 0)


def test_transform_equals_fit_transform_frobenius(nmf_data):
    # Frobenius: both solve min_{W >= 0} ||X - W H|| exactly for the fitted H, whatever the
    # tolerance of the alternating loop (the common checks' contract).
    X = nmf_data[0]
    m = NMF(3, max_iter=30, tol=0, random_state=0)
    W = m.fit_transform(X)
    np.testing.assert_allclose(m.transform(X), W, rtol=1e-12, atol=1e-14)
    Xt = X[:7] * 1.5
    np.testing.assert_allclose(m.transform(Xt), _nnls_reference(Xt, m.components_), atol=1e-10)
    np.testing.assert_allclose(m.inverse_transform(W), W @ m.components_)
    W32 = NMF(3, max_iter=30, tol=0, random_state=0).fit(X.astype(np.float32))
    assert W32.transform(X.astype(np.float32)).dtype == np.float32


def test_transform_converges_to_fit_transform_kl():
    # KL: transform re-solves W by multiplicative updates, so it agrees to the tolerance.
    X = np.abs(np.random.default_rng(0).normal(size=(30, 3))) + 0.1
    m = NMF(
        2, beta_loss="kullback-leibler", solver="mu", max_iter=20_000, tol=1e-10, random_state=0
    )
    W = m.fit_transform(X)
    np.testing.assert_allclose(m.transform(X), W, atol=1e-3)


@pytest.mark.parametrize("init", ["random", "nndsvd", "nndsvda"])
def test_inits(nmf_data, init):
    X = nmf_data[0]
    m = NMF(3, init=init, solver="mu", random_state=0, max_iter=2000, tol=1e-4)
    W = m.fit_transform(X)
    assert np.all(W >= 0) and np.all(m.components_ >= 0)
    # Three exact parts plus 5% noise: the relative residual is small. Plain NNDSVD leaves
    # exact zeros, which multiplicative updates cannot move, so it may stop higher.
    bound = 0.1 if init == "nndsvd" else 0.05
    assert m.reconstruction_err_ / np.linalg.norm(X) < bound


def test_convergence_warning(nmf_data):
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        NMF(3, max_iter=5, random_state=0).fit(nmf_data[0])


def test_bad_input(nmf_data):
    X = nmf_data[0]
    with pytest.raises(ValueError, match="Negative values"):
        NMF(2).fit(X - 1.0)
    with pytest.raises(ValueError, match="NaN"):
        NMF(2).fit(np.array([[np.nan, 1.0], [1.0, 2.0]]))
    with pytest.raises(ValueError, match="beta_loss"):
        NMF(2, beta_loss="itakura").fit(X)
    with pytest.raises(ValueError, match="solver='mu'"):
        NMF(2, beta_loss="kullback-leibler").fit(X)
    with pytest.raises(ValueError, match="init='custom' needs"):
        NMF(2, init="custom").fit(X)
    with pytest.raises(ValueError, match="all zeros"):
        NMF(2).fit(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="n_components"):
        NMF(0).fit(X)


def test_transform_is_exact_nnls_for_many_parts(rng):
    # The compiled active-set solver against scipy's NNLS on the D x k form: many parts and
    # many rows, so the active sets change often.
    H = rng.uniform(size=(8, 30))
    X = rng.uniform(size=(200, 30))
    m = NMF(8, init="random", max_iter=20, tol=0, random_state=0).fit(X)
    m.components_ = H
    W = m.transform(X)
    np.testing.assert_allclose(W, _nnls_reference(X, H), rtol=1e-9, atol=1e-12)
    assert np.all(W >= 0)


@pytest.mark.parametrize("kind", ["dead", "duplicated"])
def test_transform_with_singular_parts_uses_the_direct_form(nmf_data, kind):
    # H H^T singular: the normal equations are ill-posed, the D x k problem is not. W is not
    # unique then, but W H (the projection of each row onto the cone of the parts) is.
    X, _, H0 = nmf_data
    extra = np.zeros((1, 12)) if kind == "dead" else H0[:1]
    H = np.vstack([H0, extra])
    m = NMF(4, init="random", max_iter=20, tol=0, random_state=0).fit(X)
    m.components_ = H
    W = m.transform(X)
    ref = _nnls_reference(X, H)
    np.testing.assert_allclose(W @ H, ref @ H, rtol=1e-9, atol=1e-10)
    assert np.all(W >= 0)


@pytest.mark.parametrize("compiled", [True, False])
def test_same_iterates_as_sklearn_cd(nmf_data, monkeypatch, compiled):
    # The default solver is scikit-learn's coordinate descent (HALS, no shuffling): the same
    # updates in the same order, so the same iterates to rounding and the same stopping
    # iteration (the rule: projected-gradient sum relative to the first iteration's), by the
    # compiled sweep and by the NumPy route.
    if not compiled:
        monkeypatch.setenv("MATHLEARN_DISABLE_EXT", "1")
    X, W0, H0 = nmf_data
    ours = NMF(3, init="custom", max_iter=400, tol=1e-3)
    ref = SkNMF(3, init="custom", solver="cd", max_iter=400, tol=1e-3)
    W = ours.fit_transform(X, W=W0.copy(), H=H0.copy())
    Wr = ref.fit_transform(X, W=W0.copy(), H=H0.copy())
    assert ours.n_iter_ == ref.n_iter_ < 400
    # HALS is a contraction near the solution: rounding differences stay at ~1e-15 relative.
    np.testing.assert_allclose(ours.components_, ref.components_, rtol=1e-9, atol=1e-12)
    H = ours.components_
    assert ours.loss_curve_[-1] == pytest.approx(_objective(X, Wr, H, "frobenius"), rel=1e-9)
    # Exact block coordinate minimisation: the objective never increases.
    loss = np.array(ours.loss_curve_)
    assert np.all(np.diff(loss) <= 1e-12 * loss[0])
    # The returned W is the exact NNLS minimiser for the final H (warm-started active set).
    np.testing.assert_allclose(W, _nnls_reference(X, H), rtol=1e-7, atol=1e-10)
    assert _objective(X, W, H, "frobenius") <= ours.loss_curve_[-1]


def test_w_half_split_between_threads(nmf_data, monkeypatch):
    # Each row of W is updated from that row alone: the W half of an iteration split by rows
    # (forced here: 3 parts on any machine) differs from one pass only in the order of the
    # additions forming W^T W and X^T W, so it gives the same stopping iteration and, HALS
    # being a contraction near the solution, the same factors to ~1e-15 relative, as
    # scikit-learn's one-thread sweeps (the tolerances leave room for that rounding to be
    # carried through 400 slowly contracting iterations). The returned W is the exact NNLS
    # solve for those parts, whose change is at most cond(H) (3 to 5 for these data) times
    # theirs.
    import os

    import mathlearn.decomposition._nmf as nmf_module
    import mathlearn.utils._threads as threads

    if nmf_module._compiled_sweep() is None:
        pytest.skip("the compiled sweep was not built")
    X, W0, H0 = nmf_data
    kw = {"init": "custom", "max_iter": 400, "tol": 1e-3}
    one = NMF(3, **kw)
    W_one = one.fit_transform(X, W=W0.copy(), H=H0.copy())
    calls = []
    run_parts = threads.run_parts
    monkeypatch.setattr(threads, "_PARALLEL_WORK", 0)
    monkeypatch.setattr(threads, "_MIN_PART_ROWS", 4)
    monkeypatch.setattr(threads, "blas_threads", lambda: 3)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr(
        nmf_module, "run_parts", lambda parts, fn: (calls.append(parts), run_parts(parts, fn))
    )
    split = NMF(3, **kw)
    W_split = split.fit_transform(X, W=W0.copy(), H=H0.copy())
    assert len(calls) == split.n_iter_ == one.n_iter_ < 400
    assert all(parts == [0, 1, 2] for parts in calls)
    np.testing.assert_allclose(split.components_, one.components_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(W_split, W_one, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(split.loss_curve_, one.loss_curve_, rtol=1e-10)
    ref = SkNMF(3, solver="cd", **kw).fit(X, W=W0.copy(), H=H0.copy())
    np.testing.assert_allclose(split.components_, ref.components_, rtol=1e-9, atol=1e-12)


def test_warm_started_nnls_equals_cold(rng):
    from mathlearn.decomposition._nmf import _nnls_weights

    H = rng.uniform(size=(6, 25))
    X = rng.uniform(size=(300, 25))
    cold = _nnls_weights(X, H)
    # Starting points with wrong supports (extra and missing positive entries).
    W0 = np.where(rng.uniform(size=cold.shape) < 0.5, rng.uniform(size=cold.shape), 0.0)
    warm = _nnls_weights(X, H, W0)
    np.testing.assert_allclose(warm, cold, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(cold, _nnls_reference(X, H), rtol=1e-9, atol=1e-12)
