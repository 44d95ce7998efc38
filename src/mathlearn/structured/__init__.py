"""Structured output: the linear-chain conditional random field (Stuttgart "Introduction to
Machine Learning" §2.2)."""

from ._crf import LinearChainCRF

__all__ = ["LinearChainCRF"]
