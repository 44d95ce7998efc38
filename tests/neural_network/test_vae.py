"""VariationalAutoencoder and its KL term.

References: the notes' test vector for the diagonal KL (Oxford "Advanced Topics in
Statistical Machine Learning", §8.5: mu = (1, 0), sigma^2 = (1, 0.5) -> 0.596574), the
general Gaussian KL of mathlearn.distributions, a Monte Carlo estimate with its standard
error, and the linear-Gaussian model, where log p(x) and the exact posterior are known in
closed form: with the exact posterior as encoder every importance weight equals p(x), so the
ELBO and every IWAE bound equal log p(x); with any other encoder
ELBO = L_1 <= L_k <= L_k' <= log p(x) for k <= k' (in expectation; tested with tolerances
from the Monte Carlo standard errors)."""

import warnings

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from mathlearn.distributions import MultivariateNormal, kl_divergence
from mathlearn.exceptions import ConvergenceWarning
from mathlearn.neural_network import VariationalAutoencoder, diagonal_gaussian_kl


def test_kl_matches_the_notes_test_vector():
    value = diagonal_gaussian_kl(np.array([1.0, 0.0]), np.array([1.0, 0.5]))
    # 0.5 * (1 + 0 + 1 + 0.5 - log 0.5 - 2) = 0.25 + 0.5 log 2 = 0.5965735902799727
    np.testing.assert_allclose(value, 0.25 + 0.5 * np.log(2.0), rtol=1e-15)
    assert round(float(value), 6) == 0.596574


def test_kl_matches_the_general_gaussian_kl_and_monte_carlo(rng):
    mean = rng.standard_normal((4, 3))
    var = rng.uniform(0.2, 3.0, (4, 3))
    ours = diagonal_gaussian_kl(mean, var)
    for i in range(4):
        ref = kl_divergence(
            MultivariateNormal(mean[i], np.diag(var[i])),
            MultivariateNormal(np.zeros(3), np.eye(3)),
        )
        np.testing.assert_allclose(ours[i], ref, rtol=1e-12)
    # KL = E_q[log q(z) - log p(z)], estimated from 200 000 draws: within 5 standard errors.
    z = mean[0] + np.sqrt(var[0]) * rng.standard_normal((200_000, 3))
    log_ratio = multivariate_normal(mean[0], np.diag(var[0])).logpdf(z) - multivariate_normal(
        np.zeros(3), np.eye(3)
    ).logpdf(z)
    se = log_ratio.std() / np.sqrt(len(z))
    assert abs(log_ratio.mean() - ours[0]) < 5 * se
    with pytest.raises(ValueError, match="positive"):
        diagonal_gaussian_kl(np.zeros(2), np.array([1.0, 0.0]))


def _linear_vae(rng, d=4, dz=2):
    """A fitted linear-Gaussian VAE (identity activation, no hidden layer) on toy data."""
    X = rng.standard_normal((40, d)) * 2.0 + 5.0
    vae = VariationalAutoencoder(
        n_components=dz, hidden_layer_sizes=(), activation="identity", max_iter=2, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        vae.fit(X)
    return vae, X


def _set_model(vae, rng, exact_posterior, d=4, dz=2):
    """Decoder x_std = W z + b + noise with orthogonal columns of W (so the posterior
    covariance is diagonal); encoder = the exact posterior, or a perturbation of it.
    Returns log p(x) as a function of x (original units)."""
    q, _ = np.linalg.qr(rng.standard_normal((d, dz)))
    W = q * np.array([1.5, 0.7])
    b = rng.standard_normal(d) * 0.3
    s2 = 0.4
    S = np.linalg.inv(np.eye(dz) + W.T @ W / s2)  # diagonal since W^T W is
    enc_w = np.zeros((2 * dz, d))
    enc_b = np.zeros(2 * dz)
    enc_w[:dz] = S @ W.T / s2
    enc_b[:dz] = -S @ W.T @ b / s2
    enc_b[dz:] = np.log(np.diag(S))
    if not exact_posterior:
        enc_w[:dz] *= 0.6
        enc_b[dz:] += 0.8
    net = vae.network_
    new = {
        "encoder.0.weight": enc_w,
        "encoder.0.bias": enc_b,
        "decoder.0.weight": W,
        "decoder.0.bias": b,
        "log_noise_var": np.array([np.log(s2)]),
    }
    net.load_parameters({k: v.astype(np.float32) for k, v in new.items()})
    # log p(x) of the model as stored (float32-rounded parameters), in the original units.
    p = {k: np.asarray(v, np.float64) for k, v in net.parameters().items()}
    Wr, br = p["decoder.0.weight"], p["decoder.0.bias"]
    cov_std = Wr @ Wr.T + np.exp(p["log_noise_var"][0]) * np.eye(d)
    mean = vae.mean_[0] + vae.scale_ * br
    return multivariate_normal(mean, vae.scale_**2 * cov_std).logpdf


def test_exact_posterior_makes_every_bound_equal_log_evidence(rng):
    vae, X = _linear_vae(rng)
    log_px = _set_model(vae, rng, exact_posterior=True)(X)
    # q = p(z | x) up to float32 rounding of the encoder (relative 6e-8): the gap is
    # KL(q || posterior) = O(6e-8^2), and every log weight log p(x, z) - log q(z | x) equals
    # log p(x) whatever z, to rounding (~1e-7 relative): every IWAE estimate is exact.
    for k in (1, 7, 50):
        np.testing.assert_allclose(vae.iwae_bound(X, k, random_state=k), log_px, atol=1e-5)
    # The closed-form-KL ELBO estimate varies with the draw; its mean is log p(x) (the gap
    # is the KL above): within 5 standard errors over 400 draws.
    draws = np.array([vae.elbo(X, random_state=r) for r in range(400)])
    se = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - log_px) < 5 * se)


def test_iwae_tightens_with_k_and_stays_below_log_evidence(rng):
    vae, X = _linear_vae(rng)
    log_px = _set_model(vae, rng, exact_posterior=False)(X)
    reps = 100
    means, ses = {}, {}
    for k in (1, 4, 32):
        # Independent replications of the per-datum bound estimate, averaged over the data.
        draws = np.array(
            [vae.iwae_bound(X, k, random_state=1000 * k + r).mean() for r in range(reps)]
        )
        means[k], ses[k] = draws.mean(), draws.std(ddof=1) / np.sqrt(reps)
    elbo_draws = np.array([vae.elbo(X, random_state=r).mean() for r in range(reps)])
    elbo, elbo_se = elbo_draws.mean(), elbo_draws.std(ddof=1) / np.sqrt(reps)
    target = log_px.mean()
    # L_1 is the ELBO (closed-form KL and sampled KL agree in expectation).
    assert abs(means[1] - elbo) < 5 * np.hypot(ses[1], elbo_se)
    # Non-decreasing in k, strictly here (the encoder is off), and below log p(x).
    assert means[4] - means[1] > 5 * np.hypot(ses[4], ses[1])
    assert means[32] - means[4] > 5 * np.hypot(ses[32], ses[4])
    assert means[32] < target + 5 * ses[32]
    assert elbo < target


def test_training_improves_the_bound_and_api(rng):
    z = rng.standard_normal((150, 1))
    X = z @ np.array([[1.0, -2.0, 0.5]]) + 0.1 * rng.standard_normal((150, 3))
    vae = VariationalAutoencoder(
        n_components=1, hidden_layer_sizes=(8,), max_iter=60, batch_size=50, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        vae.fit(X)
    assert vae.loss_curve_[-1] < vae.loss_curve_[0]
    assert vae.transform(X).shape == (150, 1)
    assert vae.sample(4, random_state=0).shape == (4, 3)
    np.testing.assert_array_equal(vae.sample(4, random_state=0), vae.sample(4, random_state=0))
    assert vae.noise_std_ > 0
    # The ELBO of a fitted model is a lower bound on the IWAE bound with many samples.
    assert (
        vae.elbo(X, n_samples=20, random_state=0).mean()
        <= vae.iwae_bound(X, 200, random_state=0).mean()
    )


def test_bad_input(rng):
    X = rng.uniform(size=(20, 3))
    bad = X.copy()
    bad[2, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        VariationalAutoencoder(max_iter=1).fit(bad)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        VariationalAutoencoder(likelihood="bernoulli", max_iter=1).fit(X * 3)
    vae = VariationalAutoencoder(likelihood="bernoulli", hidden_layer_sizes=(4,), max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        vae.fit(X)
    assert np.all((vae.sample(3, random_state=0) > 0) & (vae.sample(3, random_state=0) < 1))
    with pytest.raises(ValueError, match="latent points of shape"):
        vae.inverse_transform(np.zeros((2, 5)))
    with pytest.raises(ValueError, match="k must be positive"):
        vae.iwae_bound(X, 0)
