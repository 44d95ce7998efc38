"""Semi-supervised learning: methods that use unlabelled inputs as well as labelled ones."""

from ._laplacian_rls import LaplacianRLS

__all__ = ["LaplacianRLS"]
