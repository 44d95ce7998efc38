"""The training loop and Rprop: known solutions (XOR, a linear teacher, the ridge solution of
weight decay), clipping, early stopping, divergence and bad data, reproducibility."""

import numpy as np
import pytest

from mathlearn import autodiff as ad
from mathlearn import nn, optim


def test_xor_is_learned():
    X = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=float)
    y = np.array([0, 1, 1, 0])
    net = nn.Sequential(nn.Linear(2, 8, random_state=0), nn.Tanh(), nn.Linear(8, 2))
    h = nn.fit_module(
        net,
        nn.cross_entropy,
        X,
        y,
        optimizer=optim.adam(0.05),
        epochs=400,
        batch_size=None,
        random_state=0,
    )
    assert h["loss"][-1] < 0.01 < h["loss"][0]
    np.testing.assert_array_equal(net.eval()(X.astype(np.float32)).argmax(1), y)


def _teacher(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    w, b = np.array([1.5, -2.0, 0.5]), 0.7
    return X, X @ w + b, w, b


def test_linear_teacher_recovered_by_sgd_and_rprop():
    X, y, w, b = _teacher()
    for opt, bs in [(optim.sgd(0.1), 10), (optim.rprop(), None)]:
        net = nn.Linear(3, 1, dtype=np.float64, random_state=1)
        nn.fit_module(
            net,
            nn.mse_loss,
            X,
            y[:, None],
            optimizer=opt,
            epochs=400,
            batch_size=bs,
            random_state=0,
        )
        # Noise-free teacher: the global minimum is the teacher itself (loss 0).
        np.testing.assert_allclose(net.weight[0], w, atol=1e-6)
        np.testing.assert_allclose(net.bias, [b], atol=1e-6)


def test_weight_decay_converges_to_the_ridge_solution():
    X, y, _, _ = _teacher(40, seed=2)
    y = y + np.random.default_rng(3).standard_normal(40)
    lam, n = 0.3, len(X)
    # Stationary point of (1/n) ||X w + b - y||^2 + (lam / 2) ||w||^2 (bias not decayed).
    A = np.zeros((4, 4))
    A[:3, :3] = 2 / n * X.T @ X + lam * np.eye(3)
    A[:3, 3] = A[3, :3] = 2 / n * X.sum(0)
    A[3, 3] = 2.0
    rhs = np.concatenate([2 / n * X.T @ y, [2 / n * y.sum()]])
    sol = np.linalg.solve(A, rhs)
    net = nn.Linear(3, 1, dtype=np.float64, random_state=0)
    trainer = nn.Trainer(net, nn.mse_loss, optim.sgd(0.2), batch_size=None, weight_decay=lam)
    trainer.fit(X, y[:, None], epochs=500)
    np.testing.assert_allclose(net.weight[0], sol[:3], atol=1e-8)
    np.testing.assert_allclose(net.bias, sol[3:], atol=1e-8)
    # The reported loss includes the penalty.
    final = float(nn.mse_loss(net(X), y[:, None])) + 0.5 * lam * np.sum(net.weight**2)
    assert trainer.history["loss"][-1] == pytest.approx(final, rel=1e-8)


@pytest.mark.parametrize("flat", [False, True])
def test_trainer_follows_a_learning_rate_schedule(flat):
    # optim's schedules drive the Trainer's steps: full-batch SGD with exponential decay
    # against the update w <- w - gamma_t grad, grad of mean ||X w^T + b - y||^2 written out.
    X, y, _, _ = _teacher(30, seed=4)
    net = nn.Linear(3, 1, dtype=np.float64, random_state=0)
    W, b = net.weight.copy(), net.bias.copy()
    schedule = optim.exponential_decay(0.2, 0.5, transition_steps=1)
    trainer = nn.Trainer(net, nn.mse_loss, optim.sgd(schedule), batch_size=None, flat=flat)
    trainer.fit(X, y[:, None], epochs=4)
    for t in range(4):
        r = X @ W.T + b - y[:, None]
        gW, gb = 2 / len(X) * r.T @ X, 2 / len(X) * r.sum(0)
        W, b = W - 0.2 * 0.5**t * gW, b - 0.2 * 0.5**t * gb
    np.testing.assert_allclose(net.weight, W, rtol=1e-12)
    np.testing.assert_allclose(net.bias, b, rtol=1e-12)


def test_gradient_clipping_bounds_the_step():
    X, y, _, _ = _teacher()
    net = nn.Linear(3, 1, dtype=np.float64, random_state=0)
    before = np.concatenate([net.weight.ravel(), net.bias])
    trainer = nn.Trainer(net, nn.mse_loss, optim.sgd(1.0), batch_size=None, clip_norm=0.5)
    trainer.step(X, 100 * y[:, None])
    after = np.concatenate([net.weight.ravel(), net.bias])
    assert np.linalg.norm(after - before) == pytest.approx(0.5, rel=1e-12)


def test_divergence_stops_with_finite_weights():
    X, y, _, _ = _teacher()
    net = nn.Sequential(nn.Linear(3, 5, random_state=0), nn.ReLU(), nn.Linear(5, 1))
    with pytest.raises(nn.TrainingDivergedError, match="learning rate"):
        nn.fit_module(
            net,
            nn.mse_loss,
            1e3 * X,
            y[:, None],
            optimizer=optim.sgd(10.0),
            epochs=50,
            random_state=0,
        )
    assert all(np.all(np.isfinite(v)) for v in net.parameters().values())


def test_nan_in_data_is_an_error():
    X, y, _, _ = _teacher()
    X[17, 1] = np.nan
    net = nn.Linear(3, 1)
    with pytest.raises(ValueError, match="sample 17"):
        nn.fit_module(net, nn.mse_loss, X, y[:, None])
    with pytest.raises(ValueError, match="y contains NaN"):
        nn.fit_module(net, nn.mse_loss, np.ones((3, 3)), np.array([[1.0], [np.inf], [0.0]]))
    with pytest.raises(ValueError, match="samples"):
        nn.fit_module(net, nn.mse_loss, np.ones((3, 3)), np.ones((2, 1)))
    with pytest.raises(ValueError, match="validation_data"):
        nn.Trainer(net, nn.mse_loss).fit(np.ones((3, 3)), np.ones((3, 1)), early_stopping=True)


def test_early_stopping_restores_the_best_parameters():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 5))
    y = (X[:, 0] > 0).astype(int)
    net = nn.Sequential(nn.Linear(5, 64, random_state=0), nn.ReLU(), nn.Linear(64, 2))
    seen = {}

    def record(epoch, history, module):
        seen[epoch] = {k: v.copy() for k, v in module.parameters().items()}

    h = nn.fit_module(
        net,
        nn.cross_entropy,
        X,
        y,
        optimizer=optim.adam(0.05),
        epochs=200,
        validation_fraction=0.25,
        early_stopping=True,
        n_iter_no_change=5,
        tol=0.0,
        callbacks=[record],
        random_state=0,
    )
    n_epochs = len(h["loss"])
    assert len(h["val_loss"]) == n_epochs < 200
    best = int(np.argmin(h["val_loss"]))
    assert n_epochs == best + 1 + 5  # patience 5 after the best epoch
    for k, v in net.parameters().items():
        np.testing.assert_array_equal(v, seen[best][k])


def test_callback_stops_and_reproducibility():
    X, y, _, _ = _teacher()

    def run():
        net = nn.Sequential(nn.Linear(3, 4, random_state=0), nn.Dropout(0.2), nn.Linear(4, 1))
        net[2].load_parameters({"weight": np.ones((1, 4)), "bias": np.zeros(1)})
        h = nn.fit_module(
            net,
            nn.mse_loss,
            X,
            y[:, None],
            epochs=50,
            random_state=3,
            callbacks=[lambda e, h, m: e == 4],
        )
        return net, h

    (a, ha), (b, hb) = run(), run()
    assert len(ha["loss"]) == 5
    assert ha == hb
    for k in a.parameters():
        np.testing.assert_array_equal(a.parameters()[k], b.parameters()[k])


def test_progress_bar(capsys):
    X, y, _, _ = _teacher(8)
    nn.fit_module(
        nn.Linear(3, 1), nn.mse_loss, X, y[:, None], epochs=2, progress=True, random_state=0
    )
    assert "training" in capsys.readouterr().err


def test_progress_bar_without_tqdm_names_the_package(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    X, y, _, _ = _teacher(8)
    with pytest.raises(ImportError, match="progress=True needs tqdm"):
        nn.fit_module(nn.Linear(3, 1), nn.mse_loss, X, y[:, None], epochs=2, progress=True)


def test_rprop_rule_against_plain_numpy():
    """iRprop-: sign-based steps, grown by 1.2 on a kept sign, halved on a flip (and no move
    that step), against a loop written here from the update rule."""
    A = np.diag([1.0, 30.0, 0.2])
    f = ad.value_and_grad(lambda x: 0.5 * ad.sum(x * (A @ x)))
    x = np.array([3.0, -2.0, 1.0])
    opt = optim.rprop(step_init=0.5, step_max=2.0)
    state = opt.init(x)
    xr, delta, gprev = x.copy(), np.full(3, 0.5), np.zeros(3)
    for _ in range(80):
        _, g = f(x)
        u, state = opt.update(g, state)
        x = x + u
        gr = A @ xr
        s = gr * gprev
        delta = np.where(
            s > 0,
            np.minimum(1.2 * delta, 2.0),
            np.where(s < 0, np.maximum(0.5 * delta, 1e-6), delta),
        )
        gr = np.where(s < 0, 0.0, gr)
        xr = xr - np.sign(gr) * delta
        gprev = gr
        np.testing.assert_array_equal(x, xr)
    assert np.abs(x).max() < 1e-3
    with pytest.raises(ValueError):
        optim.rprop(step_min=1.0, step_max=0.5)


def test_rprop_against_pytorch():
    torch = pytest.importorskip("torch")
    A = np.array([[2.0, 0.5], [0.5, 1.0]])
    f = ad.value_and_grad(lambda x: 0.5 * ad.sum(x * (A @ x)) + ad.sum(ad.sin(x)))
    x = np.array([1.0, -3.0])
    opt = optim.rprop()
    state = opt.init(x)
    tx = torch.tensor(x.copy(), requires_grad=True)
    topt = torch.optim.Rprop([tx])
    tA = torch.from_numpy(A)
    for _ in range(30):
        _, g = f(x)
        u, state = opt.update(g, state)
        x = x + u
        topt.zero_grad()
        (0.5 * tx @ tA @ tx + torch.sin(tx).sum()).backward()
        topt.step()
        np.testing.assert_allclose(x, tx.detach().numpy(), rtol=1e-12, atol=1e-14)


def _small_net(dtype=np.float64):
    return nn.Sequential(
        nn.Linear(3, 6, dtype=dtype, random_state=0),
        nn.Tanh(),
        nn.Linear(6, 2, dtype=dtype, random_state=1),
    )


@pytest.mark.parametrize("clip_norm", [None, 0.5])
def test_flat_trainer_follows_the_per_parameter_path(clip_norm):
    # flat=True runs the same arithmetic entry by entry on one buffer: the same parameters
    # after several epochs of Adam with weight decay. Without clipping every entry takes
    # the same operations (equal to the last bit); with it, the global norm is summed in
    # another order (relative rounding ~1e-16 per step), hence the tolerance.
    X, y, _, _ = _teacher(50, seed=4)
    target = np.stack([y, -y], axis=1)
    runs = []
    for flat in (False, True):
        net = _small_net()
        trainer = nn.Trainer(
            net,
            nn.mse_loss,
            optim.adam(0.05),
            batch_size=16,
            weight_decay=0.1,
            clip_norm=clip_norm,
            random_state=3,
            flat=flat,
        )
        history = trainer.fit(X, target, epochs=4)
        runs.append((net.parameters(), history["loss"]))
    (p_tree, loss_tree), (p_flat, loss_flat) = runs
    for k in p_tree:
        assert p_flat[k].shape == p_tree[k].shape
        if clip_norm is None:
            np.testing.assert_array_equal(p_flat[k], p_tree[k])
        else:
            np.testing.assert_allclose(p_flat[k], p_tree[k], rtol=1e-12, atol=1e-14)
    # The penalty's squared norm is summed in one piece instead of per weight matrix.
    np.testing.assert_allclose(loss_flat, loss_tree, rtol=1e-13)


def test_flat_adam_matches_the_formula_per_parameter():
    # Three full-batch steps of Adam on the squared error of a linear model, with weight
    # decay on the weight only, against the update rule written out here per parameter.
    X, y, _, _ = _teacher(30, seed=5)
    net = nn.Linear(3, 1, dtype=np.float64, random_state=2)
    W, b = net.weight.copy(), net.bias.copy()
    lam, lr, b1, b2, eps = 0.2, 0.1, 0.9, 0.999, 1e-8
    trainer = nn.Trainer(
        net,
        nn.mse_loss,
        optim.adam(lr, b1=b1, b2=b2, eps=eps),
        batch_size=None,
        shuffle=False,
        weight_decay=lam,
        flat=True,
    )
    state = {"W": [np.zeros_like(W), np.zeros_like(W)], "b": [np.zeros_like(b), np.zeros_like(b)]}
    n = len(X)
    for t in range(1, 4):
        loss = trainer.step(X, y[:, None])
        r = X @ W[0] + b[0] - y  # mse_loss = (1/n) sum r^2
        assert loss == pytest.approx(np.mean(r**2) + 0.5 * lam * np.sum(W**2), rel=1e-13)
        grads = {"W": (2 / n * r @ X)[None, :] + lam * W, "b": np.array([2 / n * r.sum()])}
        new = {}
        for k, p in (("W", W), ("b", b)):
            m, v = state[k]
            m[:] = b1 * m + (1 - b1) * grads[k]
            v[:] = b2 * v + (1 - b2) * grads[k] ** 2
            m_hat, v_hat = m / (1 - b1**t), v / (1 - b2**t)
            new[k] = p - lr * m_hat / (np.sqrt(v_hat) + eps)
        W, b = new["W"], new["b"]
        np.testing.assert_allclose(net.weight, W, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(net.bias, b, rtol=1e-12, atol=1e-15)


def test_flat_trainer_takes_in_replaced_parameters_and_keeps_handed_out_arrays():
    X, y, _, _ = _teacher(20, seed=6)
    net = _small_net()
    trainer = nn.Trainer(net, nn.mse_loss, optim.sgd(0.1), batch_size=None, flat=True)
    trainer.step(X, np.stack([y, y], axis=1))
    before = net.parameters()
    kept = {k: v.copy() for k, v in before.items()}
    zero = {k: np.zeros_like(v) for k, v in before.items()}
    net.load_parameters(zero)
    trainer.step(X, np.stack([y, y], axis=1))
    # The step started from the loaded zeros: one gradient step from there.
    Y = np.stack([y, y], axis=1)
    g = ad.grad(lambda p: nn.mse_loss(nn.functional_call(net, p, X), Y))(zero)
    for k, v in net.parameters().items():
        np.testing.assert_allclose(v, -0.1 * g[k], rtol=1e-12, atol=1e-15)
        # Arrays handed out earlier are never written into.
        np.testing.assert_array_equal(before[k], kept[k])


def test_flat_trainer_needs_one_floating_dtype():
    net = nn.Sequential(
        nn.Linear(2, 2, dtype=np.float32, random_state=0),
        nn.Linear(2, 1, dtype=np.float64, random_state=0),
    )
    with pytest.raises(ValueError, match="one floating dtype"):
        nn.Trainer(net, nn.mse_loss, flat=True)


def test_flat_trainer_divergence_names_the_parameter():
    X, y, _, _ = _teacher()
    net = nn.Sequential(nn.Linear(3, 5, random_state=0), nn.ReLU(), nn.Linear(5, 1))
    trainer = nn.Trainer(net, nn.mse_loss, optim.sgd(1e36), batch_size=None, flat=True)
    with pytest.raises(nn.TrainingDivergedError, match=r"parameter '\d\.(weight|bias)'"):
        for _ in range(5):
            trainer.step((1e3 * X).astype(np.float32), y[:, None].astype(np.float32))
    assert all(np.all(np.isfinite(v)) for v in net.parameters().values())


@pytest.mark.parametrize("flat", [False, True])
def test_run_epoch_on_rows_and_float64_data_follows_the_copies(flat):
    # The MLPs hand run_epoch their float64 X (and, with early stopping, the training row
    # numbers) instead of a float32 copy of the training rows: the batches, and so the
    # whole training path, must be those of the copies.
    rng = np.random.default_rng(3)
    X = rng.standard_normal((83, 5))
    y = np.tanh(X[:, :2] @ np.array([1.5, -2.0]))[:, None] + 0.1 * rng.standard_normal((83, 1))
    rows = rng.permutation(83)[:61]

    def trained(data, **kw):
        net = nn.Sequential(
            nn.Linear(5, 7, random_state=1, dtype=np.float32),
            nn.ReLU(),
            nn.Linear(7, 1, random_state=2, dtype=np.float32),
        )
        tr = nn.Trainer(
            net, nn.mse_loss, optim.adam(0.01), batch_size=16, random_state=4, flat=flat
        )
        losses = [tr.run_epoch(*data, **kw) for _ in range(3)]
        return losses, net.parameters()

    ref_loss, ref = trained((X[rows].astype(np.float32), y[rows].astype(np.float32)))
    loss, got = trained((X, y), rows=rows)
    assert loss == ref_loss
    for k in ref:
        assert got[k].dtype == np.float32
        np.testing.assert_array_equal(got[k], ref[k])
    # The whole of X, cast per batch, against its float32 copy.
    ref_loss, ref = trained((X.astype(np.float32), y.astype(np.float32)))
    loss, got = trained((X, y))
    assert loss == ref_loss
    for k in ref:
        np.testing.assert_array_equal(got[k], ref[k])
