"""Model selection by the marginal likelihood (Bayesian model selection, spec 000 §2.F)."""

from ._evidence import BayesianModelSelection

__all__ = ["BayesianModelSelection"]
