"""Losses: values against plain NumPy formulas, the notes' output gradients against autodiff,
stability for extreme logits, bad targets, and PyTorch's losses where installed."""

import numpy as np
import pytest
from scipy import special

from mathlearn import autodiff as ad
from mathlearn import nn

RNG = np.random.default_rng(0)
F = RNG.standard_normal((6, 4))
LABELS = np.array([0, 3, 1, 1, 2, 3])
PM = np.array([1.0, -1.0, -1.0, 1.0, 1.0, -1.0])


def _cases():
    f1 = F[:, :1] * 2.0
    return [
        ("squared", nn.mse_loss, F, RNG.standard_normal((6, 4))),
        ("cross_entropy", nn.cross_entropy, F, LABELS),
        ("binary_cross_entropy", nn.binary_cross_entropy_with_logits, f1, (PM[:, None] > 0) * 1.0),
        ("hinge", nn.hinge_loss, f1, PM),
        ("hinge", nn.hinge_loss, F, LABELS),
    ]


@pytest.mark.parametrize("name, fn, f, t", _cases())
def test_output_gradient_matches_autodiff(name, fn, f, t):
    """The notes' closed-form dl/df (Stuttgart §4 'Losses') equals the autodiff gradient."""
    g = ad.grad(lambda z: fn(z, t, reduction="sum"))(f)
    np.testing.assert_allclose(nn.output_gradient(name, f, t), g, rtol=1e-12, atol=1e-15)
    res = ad.check_grad(lambda z: fn(z, t), f, rtol=1e-6)
    assert res.ok, str(res)


def test_values_against_numpy_formulas():
    n = F.shape[0]
    ce = np.mean(special.logsumexp(F, axis=1) - F[np.arange(n), LABELS])
    np.testing.assert_allclose(float(nn.cross_entropy(F, LABELS)), ce, rtol=1e-14)
    soft = np.eye(4)[LABELS]
    np.testing.assert_allclose(float(nn.cross_entropy(F, soft)), ce, rtol=1e-14)
    np.testing.assert_allclose(
        nn.cross_entropy(F, LABELS, reduction="none"),
        special.logsumexp(F, axis=1) - F[np.arange(n), LABELS],
        rtol=1e-14,
    )
    y01 = (PM > 0) * 1.0
    p = special.expit(F[:, 0])
    bce = -np.mean(y01 * np.log(p) + (1 - y01) * np.log1p(-p))
    np.testing.assert_allclose(float(nn.binary_cross_entropy_with_logits(F[:, 0], y01)), bce)
    T = F[::-1]
    np.testing.assert_allclose(float(nn.mse_loss(F, T)), np.mean(np.sum((F - T) ** 2, 1)))
    np.testing.assert_allclose(float(nn.mse_loss(F, T, reduction="sum")), np.sum((F - T) ** 2))
    hinge = np.mean(np.maximum(0, 1 - PM * F[:, 0]))
    np.testing.assert_allclose(float(nn.hinge_loss(F[:, 0], PM)), hinge)
    true = F[np.arange(n), LABELS][:, None]
    m = np.maximum(0, 1 - true + F)
    m[np.arange(n), LABELS] = 0
    np.testing.assert_allclose(float(nn.hinge_loss(F, LABELS)), m.sum(1).mean())


def test_extreme_logits_stay_finite():
    big = np.array([[1e4, -1e4, 0.0]])
    v, g = ad.value_and_grad(lambda z: nn.cross_entropy(z, np.array([1])))(big)
    assert float(v) == pytest.approx(2e4) and np.all(np.isfinite(g))
    np.testing.assert_allclose(g, [[1.0, -1.0, 0.0]])
    v, g = ad.value_and_grad(lambda z: nn.binary_cross_entropy_with_logits(z, [0.0, 1.0]))(
        np.array([800.0, -800.0])
    )
    assert float(v) == pytest.approx(800.0) and np.allclose(g, [0.5, -0.5])
    z32 = big.astype(np.float32)
    assert nn.cross_entropy(z32, np.array([0])).dtype == np.float32


def test_bad_targets():
    with pytest.raises(ValueError, match=r"0 \.\. 3"):
        nn.cross_entropy(F, np.array([0, 1, 2, 3, 4, 0]))
    with pytest.raises(ValueError, match="integers"):
        nn.cross_entropy(F, np.full(6, 0.5))
    with pytest.raises(ValueError, match="shape"):
        nn.cross_entropy(F[0], LABELS)
    with pytest.raises(ValueError, match=r"-1 or \+1"):
        nn.hinge_loss(F[:, 0], np.array([0, 1, 0, 1, 0, 1]))
    with pytest.raises(ValueError, match="shape"):
        nn.mse_loss(F, np.zeros(5))
    from mathlearn.exceptions import InvalidParameterError

    with pytest.raises(InvalidParameterError):
        nn.mse_loss(F, F, reduction="avg")


def test_against_pytorch_losses():
    torch = pytest.importorskip("torch")
    tf = torch.from_numpy(F)
    tl = torch.from_numpy(LABELS)
    np.testing.assert_allclose(
        float(nn.cross_entropy(F, LABELS)), float(torch.nn.functional.cross_entropy(tf, tl))
    )
    y01 = (PM > 0) * 1.0
    np.testing.assert_allclose(
        float(nn.binary_cross_entropy_with_logits(F[:, 0], y01)),
        float(
            torch.nn.functional.binary_cross_entropy_with_logits(tf[:, 0], torch.from_numpy(y01))
        ),
    )
    # PyTorch's multi-class margin loss is the notes' one-vs-all hinge divided by the number of
    # classes.
    np.testing.assert_allclose(
        float(nn.hinge_loss(F, LABELS)) / 4, float(torch.nn.functional.multi_margin_loss(tf, tl))
    )


def test_cross_entropy_gradient_on_repeated_and_interleaved_sweeps():
    """The VJP reuses the softmax its forward pass formed; a second sweep over the same graph,
    or a sweep after another forward pass, recomputes it: every route gives softmax - onehot."""
    p = special.softmax(F, axis=1)
    p[np.arange(len(F)), LABELS] -= 1.0
    expected = p / len(F)
    x = ad.Tensor(F, requires_grad=True)
    loss = nn.cross_entropy(x, LABELS)
    nn.cross_entropy(F[::-1].copy(), LABELS)  # another forward pass in between
    first = ad.backward(loss)[id(x)][1]
    second = ad.backward(loss)[id(x)][1]
    fresh = ad.grad(lambda z: nn.cross_entropy(z, LABELS))(F)
    for g in (first, second, fresh):
        np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-15)
