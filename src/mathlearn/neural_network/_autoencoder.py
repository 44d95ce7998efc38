"""Autoencoder: a network trained to reproduce its input through a bottleneck."""

from __future__ import annotations

import warnings
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .. import autodiff as ad
from .. import nn, optim
from ..base import BaseEstimator, _fit_context
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import validate_data
from ._network_base import (
    TRAINING_CONSTRAINTS,
    center_scale,
    make_rng,
    predict_batches,
    standardize,
    train_network,
)

__all__ = ["Autoencoder"]

_ACTIVATIONS = {"identity": nn.Identity, "tanh": nn.Tanh, "relu": nn.ReLU, "sigmoid": nn.Sigmoid}


def mlp(sizes, activation: str, rng, dtype) -> nn.Sequential:
    """Dense layers ``sizes[0] -> ... -> sizes[-1]``, ``activation`` between, linear output."""
    layers: list[nn.Module] = []
    for k in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[k], sizes[k + 1], dtype=dtype, random_state=rng))
        if k < len(sizes) - 2 and activation != "identity":
            layers.append(_ACTIVATIONS[activation]())
    return nn.Sequential(*layers)


def check_sizes(sizes, name: str) -> list[int]:
    if not all(isinstance(s, Integral) and int(s) >= 1 for s in sizes):
        raise ValueError(f"{name} must hold positive integers; got {sizes!r}.")
    return [int(s) for s in sizes]


class _AutoencoderNet(nn.Module):
    def __init__(self, encoder: nn.Module, decoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, x):
        return self.decoder(self.encoder(x))


class Autoencoder(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Autoencoder: an encoder to ``n_components`` codes and a decoder back, trained to
    reproduce the input.

    Parameters
    ----------
    n_components : int, default=2
        Width of the bottleneck (the code).
    hidden_layer_sizes : tuple of int, default=()
        Widths of the encoder's hidden layers; the decoder mirrors them. With ``()`` and
        ``activation="identity"`` the autoencoder is linear.
    activation : {"identity", "tanh", "relu", "sigmoid"}, default="tanh"
        Nonlinearity of the hidden layers (the code and output layers are linear).
    solver : {"adam", "lbfgs"}, default="adam"
        ``"adam"``: minibatch Adam in float32. ``"lbfgs"``: full-batch L-BFGS in float64,
        to tight convergence (``tol`` on the largest gradient entry).
    learning_rate : float, default=1e-2
        Adam's step size.
    max_iter : int, default=200
        Maximum number of epochs (Adam) or iterations (L-BFGS).
    batch_size : int, default=64
        Minibatch size (Adam).
    alpha : float, default=0.0
        Weight decay ``(alpha / 2) ||W||^2`` per sample on every weight matrix.
    early_stopping : bool, default=False
        Hold out ``validation_fraction`` of the data and stop when its reconstruction error
        has not improved by ``tol`` for ``n_iter_no_change`` epochs (Adam).
    validation_fraction : float, default=0.1
        Share of the data held out for early stopping.
    n_iter_no_change : int, default=10
        Patience, in epochs.
    tol : float, default=1e-4
        Adam: least decrease of the loss that counts as progress; L-BFGS: gradient tolerance.
    random_state : int, Generator, RandomState or None, default=None
        Source of the initial weights and the shuffling.

    Attributes
    ----------
    encoder_ : mathlearn.nn.Sequential
        Standardised inputs to codes.
    decoder_ : mathlearn.nn.Sequential
        Codes to standardised reconstructions.
    mean_ : ndarray of shape (1, n_features)
        Mean subtracted from the inputs.
    scale_ : float
        One standard deviation dividing all centred inputs (a single number keeps the
        geometry, so the linear case is exactly PCA's problem).
    unexplained_variance_ratio_ : float
        Mean squared reconstruction error on the training data divided by the total
        variance, ``sum_n ||x_n - x'_n||^2 / sum_n ||x_n - mean||^2`` (for the linear
        autoencoder at its optimum: ``1 - sum`` of PCA's ``explained_variance_ratio_``).
    history_ : dict of lists
        ``"loss"`` per epoch (Adam) or per iteration (L-BFGS).
    loss_curve_ : list of float
        Same as ``history_["loss"]``.
    n_iter_ : int
        Epochs (Adam) or iterations (L-BFGS) run.
    n_features_in_ : int
        Number of input features.

    Notes
    -----
    The network is trained on ``min sum_i ||y(x_i) - x_i||^2`` with a bottleneck hidden
    layer (Stuttgart "Introduction to Machine Learning", §6.1, autoencoders). A linear
    autoencoder's optimal decoder spans the same subspace as the first ``n_components``
    principal components, so PCA is the optimal linear autoencoder (ibid.; the weights are
    determined only up to an invertible ``n_components x n_components`` map, the subspace
    is unique when the eigenvalues are distinct).

    Complexity (``N`` samples, ``D`` features, ``k = n_components``, hidden widths
    ``h_1, ..., h_L``, ``P = D h_1 + h_1 h_2 + ... + h_L k`` weights in the encoder and as
    many in the decoder, ``B = batch_size``): an Adam epoch costs ``O(N P)`` time (forward and
    backward pass of every sample, one ``O(P)`` Adam update per minibatch), so ``O(E N P)``
    for ``E`` epochs; an L-BFGS iteration costs ``O(N P)`` per loss-and-gradient evaluation of
    the full batch. Memory beyond ``X``: its standardised ``N x D`` copy, ``O(P)`` for the
    weights and Adam's two moments, and the activations of one minibatch,
    ``O(B (D + h_1 + ... + h_L + k))``; L-BFGS holds those of all ``N`` samples and 10
    correction pairs of length ``2 P`` instead. ``transform`` and ``inverse_transform`` cost
    ``O(M P)`` for ``M`` samples (in batches of 1 024).

    See Also
    --------
    mathlearn.decomposition.PCA : The optimal linear autoencoder in closed form.
    VariationalAutoencoder : The probabilistic version.

    Examples
    --------
    >>> import numpy as np
    >>> from mathlearn.neural_network import Autoencoder
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((100, 2)) @ rng.standard_normal((2, 5))
    >>> ae = Autoencoder(n_components=2, activation="identity", solver="lbfgs",
    ...                  tol=1e-8, random_state=0).fit(X)
    >>> bool(ae.unexplained_variance_ratio_ < 1e-8)  # rank-2 data: reconstructed exactly
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "hidden_layer_sizes": [tuple, list],
        "activation": [StrOptions(set(_ACTIVATIONS))],
        "solver": [StrOptions({"adam", "lbfgs"})],
        **TRAINING_CONSTRAINTS,
    }
    _common_test_params = {"max_iter": 20}
    _common_test_convergence_warning_expected = True

    def __init__(
        self,
        *,
        n_components: int = 2,
        hidden_layer_sizes: tuple[int, ...] = (),
        activation: str = "tanh",
        solver: str = "adam",
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
        self.solver = solver
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.alpha = alpha
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.random_state = random_state

    @_fit_context
    def fit(self, X: Any, y: Any = None) -> Autoencoder:
        """Train the encoder and decoder to reproduce ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored.

        Returns
        -------
        self : Autoencoder
            The fitted autoencoder.
        """
        X = validate_data(self, X, dtype=np.float64)
        hidden = check_sizes(self.hidden_layer_sizes, "hidden_layer_sizes")
        self.mean_, self.scale_ = center_scale(X, (0,))
        dtype = np.float64 if self.solver == "lbfgs" else np.float32
        Z = standardize(X, self.mean_, self.scale_, dtype)
        rng = make_rng(self.random_state)
        d, k = X.shape[1], int(self.n_components)
        self.encoder_ = mlp([d, *hidden, k], self.activation, rng, dtype)
        self.decoder_ = mlp([k, *reversed(hidden), d], self.activation, rng, dtype)
        net = _AutoencoderNet(self.encoder_, self.decoder_)
        loss = _reconstruction_loss
        if self.solver == "lbfgs":
            self._fit_lbfgs(net, Z)
        else:
            train_network(self, net, loss, Z, None, rng=rng)
        # In standardised units (the ratio is scale-free; squares of 1e300 data overflow).
        Zs = standardize(X, self.mean_, self.scale_, np.float64)
        recon = predict_batches(self.decoder_, predict_batches(self.encoder_, Zs))
        total = float(np.sum(Zs**2))
        residual = float(np.sum((Zs - recon) ** 2))
        self.unexplained_variance_ratio_ = residual / total if total > 0 else 0.0
        self._n_features_out = k
        return self

    def _fit_lbfgs(self, net: nn.Module, Z: np.ndarray) -> None:
        history: list[float] = []
        n = len(Z)
        decayed = [k for k in net.parameters() if k.endswith("weight")]

        def objective(p):
            value = _reconstruction_loss(nn.functional_call(net, p, Z), Z)
            if self.alpha > 0:
                value = value + 0.5 * self.alpha / n * sum(ad.sum(p[k] * p[k]) for k in decayed)
            return value

        vg = ad.value_and_grad(objective)

        def fun_and_grad(p):
            value, g = vg(p)
            history.append(float(value))
            return float(value), g

        with warnings.catch_warnings():
            # Its own warning is replaced by the estimator's below.
            warnings.simplefilter("ignore", ConvergenceWarning)
            result = optim.lbfgs(
                fun_and_grad, net.parameters(), max_iter=self.max_iter, tol=self.tol
            )
        net.load_parameters(result.x)
        net.eval()
        self.history_ = {"loss": history}
        self.loss_curve_ = list(history)
        self.n_iter_ = int(result.nit)
        if not result.success:
            warnings.warn(
                f"Autoencoder: L-BFGS stopped after {self.n_iter_} iterations before the "
                f"gradient fell below tol={self.tol}; increase max_iter.",
                ConvergenceWarning,
                stacklevel=3,
            )

    def transform(self, X: Any) -> np.ndarray:
        """Codes of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Data.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            The bottleneck activations.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return predict_batches(self.encoder_, standardize(X, self.mean_, self.scale_, np.float64))

    def inverse_transform(self, X: Any) -> np.ndarray:
        """Reconstructions from codes, in the original units.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Codes.

        Returns
        -------
        ndarray of shape (n_samples, n_features_in_)
            The decoder's outputs.
        """
        check_is_fitted(self)
        Z = np.asarray(X, dtype=np.float64)
        if Z.ndim != 2 or Z.shape[1] != self.n_components:
            raise ValueError(
                f"inverse_transform expects codes of shape (n_samples, {self.n_components}); "
                f"got {Z.shape}."
            )
        if not np.all(np.isfinite(Z)):
            raise ValueError("the codes contain NaN or infinity.")
        return predict_batches(self.decoder_, Z) * self.scale_ + self.mean_


def _reconstruction_loss(output, target):
    """``(1/N) sum_n ||x_n - x'_n||^2`` (per sample, summed over features)."""
    diff = output - target
    return ad.sum(diff * diff) / np.shape(target)[0]
