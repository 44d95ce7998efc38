"""Multi-class strategies from binary classifiers: one-vs-rest and one-vs-one."""

from ._one_vs_one import OneVsOneClassifier
from ._one_vs_rest import OneVsRestClassifier

__all__ = ["OneVsOneClassifier", "OneVsRestClassifier"]
