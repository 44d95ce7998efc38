"""Variational autoencoder with the reparameterisation trick and the IWAE bound."""

from __future__ import annotations

from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .. import autodiff as ad
from .. import nn
from ..autodiff import Tensor
from ..base import BaseEstimator, _fit_context
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import check_random_state, validate_data
from ._autoencoder import _ACTIVATIONS, check_sizes, mlp
from ._network_base import (
    TRAINING_CONSTRAINTS,
    center_scale,
    make_rng,
    predict_batches,
    standardize,
    train_network,
)

__all__ = ["VariationalAutoencoder", "diagonal_gaussian_kl"]

_LOG_2PI = float(np.log(2 * np.pi))


def diagonal_gaussian_kl(mean: Any, var: Any) -> Any:
    """``KL(N(mean, diag(var)) || N(0, I))`` for each row, in closed form.

    ``KL = (1/2) sum_j [mean_j^2 + var_j - log var_j - 1]``.

    Parameters
    ----------
    mean : array-like or Tensor of shape (..., d)
        Means of the Gaussians.
    var : array-like or Tensor of shape (..., d)
        Their variances (positive).

    Returns
    -------
    ndarray or Tensor of shape (...)
        The divergences in nats (a Tensor, differentiable, when an input is one).

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning", §8.5 (variational
    autoencoders): with the encoder ``q(z | x) = N(mu, Sigma)`` and the prior ``N(0, I)``,
    ``KL = (1/2) [mu^T mu + tr Sigma - log det Sigma - d]``; for a diagonal ``Sigma`` the sum
    above.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neural_network import diagonal_gaussian_kl
    >>> round(float(diagonal_gaussian_kl(np.array([1.0, 0.0]), np.array([1.0, 0.5]))), 6)
    0.596574
    """
    if not isinstance(mean, Tensor):
        mean = np.asarray(mean, dtype=float)
    if not isinstance(var, Tensor):
        var = np.asarray(var, dtype=float)
        if np.any(var <= 0):
            raise ValueError("the variances must be positive.")
    return 0.5 * ad.sum(mean * mean + var - ad.log(var) - 1.0, axis=-1)


class _VAENet(nn.Module):
    """Encoder to ``(mu, log var)``, decoder to the likelihood's parameters."""

    def __init__(self, encoder, decoder, n_latent: int, likelihood: str, dtype) -> None:
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.n_latent = n_latent
        self.likelihood = likelihood
        self.n_importance_samples = 1
        if likelihood == "gaussian":
            self.register_parameter("log_noise_var", np.zeros(1, dtype=dtype))

    def encode(self, x):
        h = self.encoder(x)
        k = self.n_latent
        return h[:, :k], h[:, k:]

    def log_likelihood(self, x, out):
        """``log p(x | z)`` per sample; ``out`` has ``x``'s shape with leading sample axes."""
        if self.likelihood == "bernoulli":
            # x log s(l) + (1 - x) log(1 - s(l)) = x l - softplus(l).
            return ad.sum(x * out - ad.softplus(out), axis=-1)
        d = np.shape(x)[-1]
        lv = self.log_noise_var
        diff = x - out
        return -0.5 * (d * (_LOG_2PI + lv[0]) + ad.sum(diff * diff, axis=-1) * ad.exp(-lv[0]))

    def elbo(self, x, eps):
        """Single-draw ELBO with the closed-form KL; ``eps`` of shape (N, d_z)."""
        mu, logvar = self.encode(x)
        z = mu + ad.exp(0.5 * logvar) * eps
        return self.log_likelihood(x, self.decoder(z)) - diagonal_gaussian_kl(mu, ad.exp(logvar))

    def iwae(self, x, eps):
        """``log (1/k) sum_j p(x, z_j) / q(z_j | x)``; ``eps`` of shape (k, N, d_z)."""
        mu, logvar = self.encode(x)
        k, n, dz = np.shape(eps)
        z = mu + ad.exp(0.5 * logvar) * eps
        out = ad.reshape(self.decoder(ad.reshape(z, (k * n, dz))), (k, n, -1))
        log_prior = -0.5 * ad.sum(z * z, axis=-1)
        log_q = -0.5 * ad.sum(eps * eps + logvar, axis=-1)
        log_w = self.log_likelihood(x, out) + log_prior - log_q
        return ad.logsumexp(log_w, axis=0) - float(np.log(k))

    def forward(self, x, eps=None, kind=None):
        if eps is not None:
            return self.elbo(x, eps) if kind == "elbo" else self.iwae(x, eps)
        rng = self._rng if self._rng is not None else np.random.default_rng()
        dtype = np.asarray(x.value if isinstance(x, Tensor) else x).dtype
        n = np.shape(x.value if isinstance(x, Tensor) else x)[0]
        k = self.n_importance_samples
        if k == 1:
            eps = rng.standard_normal((n, self.n_latent)).astype(dtype)
            return -self.elbo(x, eps)
        eps = rng.standard_normal((k, n, self.n_latent)).astype(dtype)
        return -self.iwae(x, eps)


def _mean_loss(out, target):
    return ad.mean(out)


class VariationalAutoencoder(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Variational autoencoder (Gaussian encoder, Gaussian or Bernoulli decoder).

    Parameters
    ----------
    n_components : int, default=2
        Dimension ``d_z`` of the latent space.
    hidden_layer_sizes : tuple of int, default=(64,)
        Widths of the encoder's hidden layers; the decoder mirrors them.
    activation : {"identity", "tanh", "relu", "sigmoid"}, default="tanh"
        Nonlinearity of the hidden layers.
    likelihood : {"gaussian", "bernoulli"}, default="gaussian"
        ``p(x | z)``: ``N(x; f(z), sigma^2 I)`` with ``sigma^2`` learned (on the
        standardised data), or independent Bernoullis with logits ``f(z)`` (data in
        ``[0, 1]``, used as they are).
    n_importance_samples : int, default=1
        ``k``: 1 trains on the ELBO (one reparameterised draw per sample and the
        closed-form KL); ``k > 1`` trains on the IWAE bound with ``k`` draws.
    learning_rate : float, default=1e-2
        Adam's step size.
    max_iter : int, default=200
        Maximum number of epochs.
    batch_size : int, default=64
        Minibatch size.
    alpha : float, default=0.0
        Weight decay ``(alpha / 2) ||W||^2`` per sample on every weight matrix.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the data and stop when its bound has not
        improved by ``tol`` for ``n_iter_no_change`` epochs.
    validation_fraction : float, default=0.1
        Share of the data held out for early stopping.
    n_iter_no_change : int, default=10
        Patience, in epochs.
    tol : float, default=1e-4
        Least improvement of the objective that counts as progress.
    random_state : int, Generator, RandomState or None, default=None
        Source of the initial weights, the shuffling and the reparameterisation noise.

    Attributes
    ----------
    encoder_ : mathlearn.nn.Sequential
        Standardised ``x`` to ``(mu, log sigma^2)`` (``2 n_components`` outputs).
    decoder_ : mathlearn.nn.Sequential
        ``z`` to the decoder's mean (Gaussian, standardised units) or logits (Bernoulli).
    noise_std_ : float
        ``sigma`` of the Gaussian decoder in the original units (Gaussian only).
    mean_ : ndarray of shape (1, n_features)
        Subtracted from the inputs (zeros for Bernoulli).
    scale_ : float
        Divides the centred inputs (1 for Bernoulli).
    history_ : dict of lists
        ``"loss"``: minus the training bound per epoch (per sample, standardised units).
    loss_curve_ : list of float
        Same as ``history_["loss"]``.
    n_iter_ : int
        Epochs run.
    n_features_in_ : int
        Number of input features.

    Notes
    -----
    Oxford "Advanced Topics in Statistical Machine Learning", §8.5. The encoder is
    ``q_phi(z | x) = N(mu_phi(x), diag sigma_phi^2(x))`` (it outputs ``mu`` and
    ``log sigma^2``, so the variances stay positive), the prior ``N(0, I)``, and
    ``ELBO = E_q log p_theta(x | z) - KL(q_phi(z | x) || p(z))`` with the closed-form KL
    of :func:`diagonal_gaussian_kl`. Reparameterisation: ``z = mu + sigma * eps``,
    ``eps ~ N(0, I)``, gives unbiased gradients in ``theta`` and ``phi`` jointly.
    The IWAE bound (ibid., eq. 8.9 with the unbiased estimator
    ``p^ = (1/k) sum_j p(x, z_j) / q(z_j | x)``) is
    ``L_k = E log (1/k) sum_j w_j``, computed with log-sum-exp; ``L_1 = ELBO <= L_k <=
    L_{k+1} <= log p(x)``. Inputs are centred and divided by one standard deviation for the
    Gaussian likelihood; :meth:`elbo` and :meth:`iwae_bound` report densities in the
    original units.

    Complexity (``N`` samples, ``D`` features, ``d_z = n_components``, hidden widths
    ``h_1, ..., h_L``, ``P = D h_1 + h_1 h_2 + ... + h_L d_z``, the order of the number of
    weights of the encoder (``2 d_z`` outputs) and of the decoder, ``k = n_importance_samples``,
    ``B = batch_size``): an epoch costs ``O(N (1 + k) P)`` time, one encoder pass and ``k``
    decoder passes per sample, forward and backward, so ``E`` epochs cost ``E`` times that.
    Memory beyond ``X``: its standardised float32 copy (``N x D``), ``O(P)`` for the weights
    and Adam's two moments, and the activations of one minibatch,
    ``O(k B (D + h_1 + ... + h_L + d_z))``. ``transform`` and ``inverse_transform`` of ``M``
    samples cost ``O(M P)``; ``elbo`` and ``iwae_bound`` with ``S`` draws cost ``O(S M P)``,
    and ``iwae_bound`` holds ``O(S M (D + h_1 + ... + h_L))`` activations (all ``M`` samples
    at once).

    See Also
    --------
    Autoencoder : The deterministic version.
    diagonal_gaussian_kl : The KL term.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neural_network import VariationalAutoencoder
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((100, 1)) @ np.array([[1.0, 2.0, -1.0]])
    >>> X += 0.1 * rng.standard_normal((100, 3))
    >>> vae = VariationalAutoencoder(n_components=1, hidden_layer_sizes=(8,), batch_size=50,
    ...                              tol=0.05, random_state=0).fit(X)
    >>> vae.transform(X).shape, vae.sample(5, random_state=0).shape
    ((100, 1), (5, 3))
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "hidden_layer_sizes": [tuple, list],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "likelihood": [StrOptions({"gaussian", "bernoulli"})],
        "n_importance_samples": [Interval(Integral, 1, None, closed="left")],
        **TRAINING_CONSTRAINTS,
    }
    _common_test_params = {"max_iter": 10, "hidden_layer_sizes": (8,)}
    _common_test_convergence_warning_expected = True

    def __init__(
        self,
        *,
        n_components: int = 2,
        hidden_layer_sizes: tuple[int, ...] = (64,),
        activation: str = "tanh",
        likelihood: str = "gaussian",
        n_importance_samples: int = 1,
        learning_rate: float = 1e-2,
        max_iter: int = 200,
        batch_size: int = 64,
        alpha: float = 0.0,
        early_stopping: bool = False,
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 10,
        tol: float = 1e-4,
        random_state: Any = None,
    ) -> None:
        self.n_components = n_components
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.likelihood = likelihood
        self.n_importance_samples = n_importance_samples
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.alpha = alpha
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.random_state = random_state

    def _standardize(self, X):
        if self.likelihood == "bernoulli" and (np.any(X < 0) or np.any(X > 1)):
            raise ValueError(
                "the Bernoulli likelihood needs data in [0, 1]; rescale X (for images, divide "
                "by the largest intensity) or use likelihood='gaussian'."
            )
        return standardize(X, self.mean_, self.scale_, np.float64)

    @_fit_context
    def fit(self, X: Any, y: Any = None) -> VariationalAutoencoder:
        """Maximise the ELBO (or the IWAE bound) over the encoder and decoder.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.

        Returns
        -------
        self : VariationalAutoencoder
            The fitted model.
        """
        X = validate_data(self, X, dtype=np.float64)
        hidden = check_sizes(self.hidden_layer_sizes, "hidden_layer_sizes")
        if self.likelihood == "gaussian":
            self.mean_, self.scale_ = center_scale(X, (0,))
        else:
            self.mean_, self.scale_ = np.zeros((1, X.shape[1])), 1.0
        Z = self._standardize(X).astype(np.float32)
        rng = make_rng(self.random_state)
        d, k = X.shape[1], int(self.n_components)
        self.encoder_ = mlp([d, *hidden, 2 * k], self.activation, rng, np.float32)
        self.decoder_ = mlp([k, *reversed(hidden), d], self.activation, rng, np.float32)
        self.network_ = _VAENet(self.encoder_, self.decoder_, k, self.likelihood, np.float32)
        self.network_.n_importance_samples = int(self.n_importance_samples)
        train_network(self, self.network_, _mean_loss, Z, None, rng=rng)
        if self.likelihood == "gaussian":
            lv = float(self.network_.log_noise_var[0])
            self.noise_std_ = float(np.exp(0.5 * lv)) * self.scale_
        self._n_features_out = k
        return self

    def _params64(self):
        return {k: np.asarray(v, np.float64) for k, v in self.network_.parameters().items()}

    def transform(self, X: Any) -> np.ndarray:
        """Posterior means ``mu_phi(x)`` (the codes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            The encoder's means.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return predict_batches(self.encoder_, self._standardize(X))[:, : self.n_components]

    def inverse_transform(self, X: Any) -> np.ndarray:
        """Decoder means ``E[x | z]`` in the original units (probabilities for Bernoulli).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Latent points.

        Returns
        -------
        ndarray of shape (n_samples, n_features_in_)
            The decoded means.
        """
        check_is_fitted(self)
        Z = np.asarray(X, dtype=np.float64)
        if Z.ndim != 2 or Z.shape[1] != self.n_components:
            raise ValueError(
                f"inverse_transform expects latent points of shape (n_samples, "
                f"{self.n_components}); got {Z.shape}."
            )
        if not np.all(np.isfinite(Z)):
            raise ValueError("the latent points contain NaN or infinity.")
        out = predict_batches(self.decoder_, Z)
        if self.likelihood == "bernoulli":
            return 1.0 / (1.0 + np.exp(-out))
        return out * self.scale_ + self.mean_

    def sample(self, n_samples: int = 1, random_state: Any = None) -> np.ndarray:
        """Generate: ``z ~ N(0, I)`` decoded to ``E[x | z]``.

        Parameters
        ----------
        n_samples : int, default=1
            Number of draws.
        random_state : int, Generator, RandomState or None, default=None
            Source of the latent draws.

        Returns
        -------
        ndarray of shape (n_samples, n_features_in_)
            Decoder means of the prior draws (the mean images, without decoder noise).
        """
        check_is_fitted(self)
        if int(n_samples) < 1:
            raise ValueError(f"n_samples must be positive; got {n_samples}.")
        rng = check_random_state(random_state)
        return self.inverse_transform(rng.standard_normal((int(n_samples), self.n_components)))

    def _bound(self, X, k, random_state, kind):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Z = self._standardize(X)
        rng = check_random_state(random_state)
        net = self.network_
        params = self._params64()
        with ad.no_grad():
            if kind == "elbo":
                draws = [
                    nn.functional_call(net, params, Z, eps=rng.standard_normal(shape), kind="elbo")
                    for shape in [(len(Z), self.n_components)] * k
                ]
                value = np.mean(draws, axis=0)
            else:
                eps = rng.standard_normal((k, len(Z), self.n_components))
                value = np.asarray(nn.functional_call(net, params, Z, eps=eps, kind="iwae"))
        # Densities of the standardised data -> original units: p(x) = p(z) / scale^d.
        return value - X.shape[1] * np.log(self.scale_)

    def elbo(self, X: Any, n_samples: int = 1, random_state: Any = None) -> np.ndarray:
        """Monte Carlo ELBO of each sample (closed-form KL, ``n_samples`` draws averaged).

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
            Data.
        n_samples : int, default=1
            Draws of ``z`` averaged in the reconstruction term.
        random_state : int, Generator, RandomState or None, default=None
            Source of the draws.

        Returns
        -------
        ndarray of shape (n_samples_X,)
            Lower bounds on ``log p(x)`` (nats, original units).
        """
        return self._bound(X, int(n_samples), random_state, "elbo")

    def iwae_bound(self, X: Any, k: int = 10, random_state: Any = None) -> np.ndarray:
        """One draw of the IWAE estimate ``log (1/k) sum_j p(x, z_j) / q(z_j | x)``.

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
            Data.
        k : int, default=10
            Number of importance samples.
        random_state : int, Generator, RandomState or None, default=None
            Source of the draws.

        Returns
        -------
        ndarray of shape (n_samples_X,)
            Its expectation is the bound ``L_k`` (nats, original units), non-decreasing in
            ``k`` and at most ``log p(x)``.
        """
        if int(k) < 1:
            raise ValueError(f"k must be positive; got {k}.")
        return self._bound(X, int(k), random_state, "iwae")
