"""Non-linear embeddings: classical ``MDS``, ``Isomap`` and ``SpectralEmbedding``.

Spec 004 §6.1 (slides 6:22-6:29), spec 002 §2.4 (graph Laplacians).
"""

from ._isomap import Isomap
from ._mds import MDS
from ._spectral_embedding import SpectralEmbedding

__all__ = ["MDS", "Isomap", "SpectralEmbedding"]
